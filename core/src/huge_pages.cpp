#include "dirsched/huge_pages.hpp"

#include <cstdint>
#include <new>

#if DIRSCHED_HUGE_PAGES_MAPPED
#include <sys/mman.h>
#endif

namespace dirsched {

#if DIRSCHED_HUGE_PAGES_MAPPED

namespace {
bool is_huge(std::size_t bytes) { return bytes >= kHugePage; }
}  // namespace

void* huge_alloc(std::size_t bytes, bool advise) {
  if (!is_huge(bytes)) return ::operator new(bytes);
  if (bytes > static_cast<std::size_t>(-1) / 2 - kHugePage) throw std::bad_alloc();
  // Straight from the kernel, and straight back at huge_free: malloc would take the 2 MiB alignment
  // from a block twice the size, and a freed block could never serve the next aligned request.
  const std::size_t size = whole_huge_pages(bytes);
  void* at = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (at == MAP_FAILED) throw std::bad_alloc();
  // Keep the aligned `size` bytes inside the mapping; give back what lies before and after them.
  const auto base = reinterpret_cast<std::uintptr_t>(at);
  const std::uintptr_t aligned = whole_huge_pages(base);
  if (aligned != base) munmap(at, aligned - base);
  const std::size_t tail = base + size + kHugePage - (aligned + size);
  if (tail != 0) munmap(reinterpret_cast<void*>(aligned + size), tail);
  void* p = reinterpret_cast<void*>(aligned);
#ifdef MADV_HUGEPAGE
  if (advise) (void)madvise(p, size, MADV_HUGEPAGE);  // advice: a refusal leaves ordinary pages
#else
  (void)advise;
#endif
  return p;
}

void huge_free(void* p, std::size_t bytes) noexcept {
  if (!p) return;
  if (is_huge(bytes)) {
    munmap(p, whole_huge_pages(bytes));
  } else {
    ::operator delete(p);
  }
}

#else  // no mmap, or AddressSanitizer (which sees into malloc's memory only): ordinary memory

void* huge_alloc(std::size_t bytes, bool advise) {
  (void)advise;
  return ::operator new(bytes);
}

void huge_free(void* p, std::size_t bytes) noexcept {
  (void)bytes;
  ::operator delete(p);
}

#endif

}  // namespace dirsched
