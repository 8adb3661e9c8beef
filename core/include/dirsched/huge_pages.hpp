// Memory for the big per-task tables, in transparent huge pages where the kernel gives them on request.
//
// A run that holds a million tasks at once (every submit at t = 0) touches a few hundred MiB of tables
// that grow as it goes, and the kernel maps each 4 KiB page at its first touch: in a 1M-task trace replay
// on this machine those page faults were 15% of the run. Debian's kernels hand out 2 MiB pages only to
// memory that asked for them (transparent_hugepage "madvise"), so the tables that grow that large ask:
// huge_alloc() aligns an allocation of at least 2 MiB to 2 MiB and advises MADV_HUGEPAGE on it. It is
// advice: where the kernel says no (THP "never", no huge page free) the memory is ordinary memory, and
// no result depends on it.
#pragma once

#include <cstddef>

namespace dirsched {

inline constexpr std::size_t kHugePage = std::size_t{2} << 20;

// At least `bytes` of uninitialised memory, aligned to 16 bytes; from 2 MiB on, aligned to 2 MiB,
// rounded up to whole 2 MiB pages and advised as huge when `advise`. Throws std::bad_alloc.
void* huge_alloc(std::size_t bytes, bool advise = true);
// Frees what huge_alloc(bytes, ...) returned; `bytes` must be the same.
void huge_free(void* p, std::size_t bytes) noexcept;

// A std::allocator for vectors that can grow to millions of entries (the core's task table).
template <typename T>
struct HugePageAllocator {
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
};

}  // namespace dirsched
