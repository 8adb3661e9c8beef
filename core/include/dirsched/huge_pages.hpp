// Memory for the big per-task tables, in transparent huge pages where the kernel gives them on request.
//
// A run that holds a million tasks at once (every submit at t = 0) touches a few hundred MiB of tables
// that grow as it goes, and the kernel maps each 4 KiB page at its first touch: in a 1M-task trace replay
// on this machine those page faults were 15% of the run. Debian's kernels hand out 2 MiB pages only to
// memory that asked for them (transparent_hugepage "madvise"), so the tables that grow that large ask:
// huge_alloc() aligns an allocation of at least 2 MiB to 2 MiB and advises MADV_HUGEPAGE on it. It is
// advice: where the kernel says no (THP "never", no huge page free) the memory is ordinary memory, and
// no result depends on it.
//
// Under AddressSanitizer, and where there is no mmap, huge_alloc is ordinary operator new: the
// sanitizer checks bounds and leaks only in memory that malloc gave.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define DIRSCHED_HUGE_PAGES_MAPPED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DIRSCHED_HUGE_PAGES_MAPPED 0
#endif
#endif
#if !defined(DIRSCHED_HUGE_PAGES_MAPPED)
#if defined(__has_include)
#if __has_include(<sys/mman.h>)
#define DIRSCHED_HUGE_PAGES_MAPPED 1
#endif
#endif
#endif
#if !defined(DIRSCHED_HUGE_PAGES_MAPPED)
#define DIRSCHED_HUGE_PAGES_MAPPED 0
#endif

namespace dirsched {

inline constexpr std::size_t kHugePage = std::size_t{2} << 20;
// `bytes` rounded up to whole huge pages (an address: up to the next 2 MiB boundary).
constexpr std::size_t whole_huge_pages(std::size_t bytes) {
  return (bytes + kHugePage - 1) / kHugePage * kHugePage;
}
// Whether huge_alloc maps big allocations itself (and advises them), or hands every one to operator new.
inline constexpr bool kHugePagesMapped = DIRSCHED_HUGE_PAGES_MAPPED != 0;

// At least `bytes` of uninitialised memory, aligned to 16 bytes; from 2 MiB on, aligned to 2 MiB,
// rounded up to whole 2 MiB pages and advised as huge when `advise`. Throws std::bad_alloc.
void* huge_alloc(std::size_t bytes, bool advise = true);
// Frees what huge_alloc(bytes, ...) returned; `bytes` must be the same.
void huge_free(void* p, std::size_t bytes) noexcept;

// A std::allocator for vectors that can grow to millions of entries (the core's task table).
template <typename T>
struct HugePageAllocator {
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "operator new serves below 2 MiB");
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)
  T* allocate(std::size_t n) { return static_cast<T*>(huge_alloc(n * sizeof(T))); }  // n <= max_size()
  void deallocate(T* p, std::size_t n) noexcept { huge_free(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const HugePageAllocator<U>&) const noexcept {
    return false;
  }
};

}  // namespace dirsched
