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

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

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
// Grows what huge_alloc(old_bytes, advise) returned to new_bytes (> old_bytes), keeping its first
// old_bytes; the result is what huge_alloc(new_bytes, advise) would be, for huge_free(new_bytes).
// When both sizes are mapped, the kernel moves the pages (mremap) to a 2 MiB boundary: nothing is
// copied, and the old and the new table are never resident together. Otherwise it allocates anew,
// copies and frees. Throws std::bad_alloc (and then `p` is as it was).
void* huge_grow(void* p, std::size_t old_bytes, std::size_t new_bytes, bool advise = true);
// Gives back to the kernel the huge pages that lie wholly within bytes [from, to) of what
// huge_alloc(bytes, ...) returned, when it mapped it (they read as zeros when next touched); otherwise
// nothing.
void huge_release(void* p, std::size_t bytes, std::size_t from, std::size_t to) noexcept;
// Throws std::bad_alloc: a table asked for more bytes than a size_t holds.
[[noreturn]] void huge_too_big();

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

// A std::vector for the tables that grow to millions of entries (the core's tasks, slots, consumer
// edges and name bytes): trivially copyable elements, grown by doubling through huge_grow. A
// std::vector that doubles copies its whole table and holds the old and the new during the copy:
// 10M pushes of a 44-byte entry peaked at 708 MiB and took 0.33 s that way, 422 MiB and 0.14 s here
// (2026-12-06). Only push at the back, read by index and drop from the front are offered; what is
// dropped, or only promised never to be read again (release_front), gives its huge pages back.
template <typename T>
class HugeVector {
  static_assert(std::is_trivially_copyable_v<T>, "moved by the kernel or by memcpy");
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "operator new serves below 2 MiB");

 public:
  HugeVector() = default;
  HugeVector(const HugeVector& other) { append(other.data_, other.size_); }  // the explorers copy cores
  HugeVector(HugeVector&& other) noexcept { swap(other); }
  HugeVector& operator=(HugeVector other) noexcept {
    swap(other);
    return *this;
  }
  ~HugeVector() { huge_free(data_, capacity_ * sizeof(T)); }
  void swap(HugeVector& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
    std::swap(released_, other.released_);
  }

  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t capacity() const { return capacity_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

  void reserve(std::size_t n) {
    if (n > capacity_) grow_to(n);
  }
  void push_back(T x) {  // by value: `x` may be an entry, which a growth moves
    if (size_ == capacity_) grow_to(size_ + 1);
    data_[size_++] = x;
  }
  // [first, first + n) must not be this vector's own entries.
  void append(const T* first, std::size_t n) {
    if (n > capacity_ - size_) grow_to(size_ + n);
    if (n != 0) std::memcpy(static_cast<void*>(data_ + size_), first, n * sizeof(T));
    size_ += n;
  }
  // Drops the first n (<= size()) entries; the rest move to the front, and the huge pages they leave
  // go back to the kernel (a table that held every task of a trace at t = 0 shrinks as they end).
  // When the rest is no larger than what is dropped (the source and its new place do not overlap) it
  // is copied a huge page at a time, each source page given back once copied: the copy never holds
  // two copies of the rest (the front pages it writes may have been given back by release_front).
  void erase_front(std::size_t n) {
    if (n == 0) return;
    auto* bytes = reinterpret_cast<char*>(data_);
    const std::size_t held = capacity_ * sizeof(T), from = n * sizeof(T), rest = (size_ - n) * sizeof(T);
    if (from >= rest) {
      for (std::size_t done = 0; done < rest;) {
        const std::size_t step = std::min(kHugePage, rest - done);
        std::memcpy(bytes + done, bytes + from + done, step);
        done += step;
        huge_release(data_, held, from, from + done);
      }
    } else {
      std::memmove(bytes, bytes + from, rest);
    }
    huge_release(data_, held, rest, whole_huge_pages(size_ * sizeof(T)));  // what the rest left
    size_ -= n;
    released_ = 0;
  }
  // The entries before n will not be read again (until erase_front() moves others there): the whole
  // huge pages under them go back to the kernel now, without moving anything.
  void release_front(std::size_t n) {
    const std::size_t bytes = n * sizeof(T) / kHugePage * kHugePage;
    if (bytes <= released_) return;
    huge_release(data_, capacity_ * sizeof(T), released_, bytes);
    released_ = bytes;
  }

 private:
  void grow_to(std::size_t at_least) {
    const std::size_t capacity = std::max(at_least, capacity_ == 0 ? std::size_t{16} : capacity_ * 2);
    if (capacity > static_cast<std::size_t>(-1) / 2 / sizeof(T)) huge_too_big();
    void* grown = data_ ? huge_grow(data_, capacity_ * sizeof(T), capacity * sizeof(T))
                        : huge_alloc(capacity * sizeof(T));
    if (grown != data_) released_ = 0;  // a copy brought the given-back front back (a move did not: no matter)
    data_ = static_cast<T*>(grown);
    capacity_ = capacity;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0, capacity_ = 0;
  std::size_t released_ = 0;  // bytes at the front given back by release_front()
};

}  // namespace dirsched
