#include "dirsched/huge_pages.hpp"

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <new>

#if DIRSCHED_HUGE_PAGES_MAPPED
#include <sys/mman.h>
#endif

namespace dirsched {

void huge_too_big() { throw std::bad_alloc(); }

namespace {
// Grows by a new allocation, a copy and a free, as std::vector does.
void* grow_by_copy(void* p, std::size_t old_bytes, std::size_t new_bytes, bool advise) {
  void* grown = huge_alloc(new_bytes, advise);
  std::memcpy(grown, p, old_bytes);
  huge_free(p, old_bytes);
  return grown;
}
}  // namespace

#if DIRSCHED_HUGE_PAGES_MAPPED

namespace {
bool is_huge(std::size_t bytes) { return bytes >= kHugePage; }

// `size` bytes (whole huge pages) at a 2 MiB boundary: a mapping one huge page larger, with what lies
// before and after the aligned part given back. Throws std::bad_alloc when the kernel refuses.
void* map_aligned(std::size_t size, int prot, int flags) {
  void* at = mmap(nullptr, size + kHugePage, prot, flags, -1, 0);
  if (at == MAP_FAILED) throw std::bad_alloc();
  const auto base = reinterpret_cast<std::uintptr_t>(at);
  const std::uintptr_t aligned = whole_huge_pages(base);
  if (aligned != base) munmap(at, aligned - base);
  const std::size_t tail = base + size + kHugePage - (aligned + size);
  if (tail != 0) munmap(reinterpret_cast<void*>(aligned + size), tail);
  return reinterpret_cast<void*>(aligned);
}

void advise_huge(void* p, std::size_t size, bool advise) {
#ifdef MADV_HUGEPAGE
  if (advise) (void)madvise(p, size, MADV_HUGEPAGE);  // advice: a refusal leaves ordinary pages
#else
  (void)p, (void)size, (void)advise;
#endif
}
}  // namespace

void* huge_alloc(std::size_t bytes, bool advise) {
  if (!is_huge(bytes)) return ::operator new(bytes);
  if (bytes > static_cast<std::size_t>(-1) / 2 - kHugePage) throw std::bad_alloc();
  // Straight from the kernel, and straight back at huge_free: malloc would take the 2 MiB alignment
  // from a block twice the size, and a freed block could never serve the next aligned request.
  const std::size_t size = whole_huge_pages(bytes);
  void* p = map_aligned(size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
  advise_huge(p, size, advise);
  return p;
}

void* huge_grow(void* p, std::size_t old_bytes, std::size_t new_bytes, bool advise) {
  if (!is_huge(old_bytes)) return grow_by_copy(p, old_bytes, new_bytes, advise);
  if (new_bytes > static_cast<std::size_t>(-1) / 2 - kHugePage) throw std::bad_alloc();
  const std::size_t old_size = whole_huge_pages(old_bytes), size = whole_huge_pages(new_bytes);
  if (size == old_size) return p;
  // In place when the addresses after it are free; else into an aligned place reserved first (a
  // mapping that moves to an address off the 2 MiB grid would have its huge pages split).
  if (mremap(p, old_size, size, 0) != MAP_FAILED) {
    advise_huge(static_cast<char*>(p) + old_size, size - old_size, advise);
    return p;
  }
  void* aligned = map_aligned(size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
  void* moved = mremap(p, old_size, size, MREMAP_MAYMOVE | MREMAP_FIXED, aligned);
  if (moved == MAP_FAILED) {  // the kernel would not move it
    munmap(aligned, size);
    return grow_by_copy(p, old_bytes, new_bytes, advise);
  }
  advise_huge(moved, size, advise);
  return moved;
}

void huge_release(void* p, std::size_t bytes, std::size_t from, std::size_t to) noexcept {
  if (!p || !is_huge(bytes)) return;
  const std::size_t begin = whole_huge_pages(from), end = std::min(to / kHugePage * kHugePage, whole_huge_pages(bytes));
  if (begin < end) (void)madvise(static_cast<char*>(p) + begin, end - begin, MADV_DONTNEED);  // advice
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

void* huge_grow(void* p, std::size_t old_bytes, std::size_t new_bytes, bool advise) {
  return grow_by_copy(p, old_bytes, new_bytes, advise);
}

void huge_release(void* p, std::size_t bytes, std::size_t from, std::size_t to) noexcept {
  (void)p, (void)bytes, (void)from, (void)to;  // ordinary memory stays with malloc
}

#endif

}  // namespace dirsched
