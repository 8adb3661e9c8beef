// Small containers for the hot path: a ring-buffer FIFO, a chunked queue and a two-level bitset.
//
// Fifo<T> never scans: push at the tail, look at and pop the head, in O(1) amortised. It starts with
// no allocation, so thousands of idle workers cost a few words each.
//
// ChunkedQueue<T> is a deque for a window of per-task records (push at the back, drop from the front,
// index from the front) in chunks of 2 MiB: std::deque's 512-byte blocks cost a malloc per ten records,
// and a million records at once were 3% of a run in malloc alone. A queue holding more than a chunk's
// worth asks for huge pages for its new chunks (huge_pages.hpp), and one emptied chunk is kept for the
// next push. Elements are built at the push and destroyed at the pop, so a small queue has only the
// pages it touched resident.
//
// IndexSet keeps a set of small integers with O(1) insert and erase and an ordered "next member at or
// after i" that skips 4096 empty indices per summary word, so the singles pass touches only workers
// that are idle and have queued work, whatever the number of workers.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "dirsched/huge_pages.hpp"

namespace dirsched {

template <typename T>
class Fifo {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  const T& front() const { return buf_[head_]; }
  void pop_front() {
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
  }
  void push_back(const T& value) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & (buf_.size() - 1)] = value;
    ++size_;
  }
  // Removes every element for which `drop` is true, keeping the others in order. O(size): for rare
  // removals from the middle (a run's cancellation), never on the hot path.
  template <typename Pred>
  void erase_if(Pred drop) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < size_; ++i) {
      const T value = at(i);
      if (!drop(value)) buf_[(head_ + kept++) & (buf_.size() - 1)] = value;
    }
    size_ = kept;
  }
  // i-th element from the head, for dumps and observers; not used by scheduling decisions.
  const T& at(std::size_t i) const { return buf_[(head_ + i) & (buf_.size() - 1)]; }

 private:
  void grow() {
    std::vector<T> bigger(buf_.empty() ? 4 : buf_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = at(i);
    buf_.swap(bigger);
    head_ = 0;
  }
  std::vector<T> buf_;  // capacity is a power of two
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

template <typename T>
class ChunkedQueue {
 public:
  static constexpr std::size_t kPerChunk = sizeof(T) >= kHugePage ? 1 : kHugePage / sizeof(T);
  // Whole huge pages (kPerChunk * sizeof(T) may fall a few bytes short of one).
  static constexpr std::size_t kChunkBytes = whole_huge_pages(kPerChunk * sizeof(T));

  ChunkedQueue() = default;
  ChunkedQueue(const ChunkedQueue&) = delete;
  ChunkedQueue& operator=(const ChunkedQueue&) = delete;
  ChunkedQueue(ChunkedQueue&& o) noexcept
      : chunks_(std::move(o.chunks_)),
        spare_(std::move(o.spare_)),
        head_(std::exchange(o.head_, 0)),
        size_(std::exchange(o.size_, 0)) {}
  ChunkedQueue& operator=(ChunkedQueue&& o) noexcept {
    if (this != &o) {
      clear();
      chunks_ = std::move(o.chunks_);
      spare_ = std::move(o.spare_);
      head_ = std::exchange(o.head_, 0);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ~ChunkedQueue() { clear(); }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) {
    const std::size_t j = head_ + i;
    return chunks_[j / kPerChunk].get()[j % kPerChunk];
  }
  const T& operator[](std::size_t i) const { return const_cast<ChunkedQueue*>(this)->operator[](i); }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }
  // A value-initialised element at the back.
  T& emplace_back() {
    if (head_ + size_ == chunks_.size() * kPerChunk) {
      // A queue holding more than a chunk's worth is a big one: its new chunks ask for huge pages (a
      // sliding window that only crosses into a new chunk does not).
      chunks_.push_back(spare_ ? std::move(spare_) : new_chunk(size_ >= kPerChunk));
    }
    const std::size_t j = head_ + size_;
    T* x = ::new (chunks_[j / kPerChunk].get() + j % kPerChunk) T{};
    ++size_;
    return *x;
  }
  void push_back(T value) { emplace_back() = std::move(value); }
  void pop_front() {
    front().~T();  // what it held goes now
    --size_;
    if (++head_ == kPerChunk) {
      spare_ = std::move(chunks_.front());
      chunks_.pop_front();
      head_ = 0;
    }
  }
  void clear() {
    if constexpr (std::is_trivially_destructible_v<T>) {
      if (!chunks_.empty() && !spare_) spare_ = std::move(chunks_.back());
      chunks_.clear();
      head_ = size_ = 0;
    } else {
      while (size_ != 0) pop_front();
    }
  }

 private:
  struct FreeChunk {
    void operator()(T* p) const noexcept { huge_free(p, kChunkBytes); }
  };
  using Chunk = std::unique_ptr<T, FreeChunk>;
  static Chunk new_chunk(bool advise) { return Chunk(static_cast<T*>(huge_alloc(kChunkBytes, advise))); }

  std::deque<Chunk> chunks_;
  Chunk spare_;
  std::size_t head_ = 0;  // the front's place in chunks_.front()
  std::size_t size_ = 0;
};

class IndexSet {
 public:
  static constexpr std::uint32_t kNone = 0xffffffffu;

  explicit IndexSet(std::uint32_t capacity = 0) { resize(capacity); }
  void resize(std::uint32_t capacity) {
    words_.assign((capacity + 63) / 64, 0);
    summary_.assign((words_.size() + 63) / 64, 0);
    count_ = 0;
  }
  bool contains(std::uint32_t i) const { return (words_[i >> 6] >> (i & 63)) & 1u; }
  std::uint32_t size() const { return count_; }
  void insert(std::uint32_t i) {
    std::uint64_t& w = words_[i >> 6];
    const std::uint64_t bit = std::uint64_t{1} << (i & 63);
    if (w & bit) return;
    w |= bit;
    summary_[i >> 12] |= std::uint64_t{1} << ((i >> 6) & 63);
    ++count_;
  }
  void erase(std::uint32_t i) {
    std::uint64_t& w = words_[i >> 6];
    const std::uint64_t bit = std::uint64_t{1} << (i & 63);
    if (!(w & bit)) return;
    w &= ~bit;
    if (w == 0) summary_[i >> 12] &= ~(std::uint64_t{1} << ((i >> 6) & 63));
    --count_;
  }
  // Smallest member >= i, or kNone.
  std::uint32_t next(std::uint32_t i) const {
    std::uint32_t word = i >> 6;
    if (word >= words_.size()) return kNone;
    std::uint64_t bits = words_[word] & (~std::uint64_t{0} << (i & 63));
    if (bits) return (word << 6) | static_cast<std::uint32_t>(__builtin_ctzll(bits));
    // Find the next non-empty word through the summary.
    std::uint32_t s = (word + 1) >> 6;
    if (s >= summary_.size()) return kNone;
    std::uint64_t sbits =
        summary_[s] & (((word + 1) & 63) ? (~std::uint64_t{0} << ((word + 1) & 63)) : ~std::uint64_t{0});
    while (true) {
      if (sbits) {
        const std::uint32_t w = (s << 6) | static_cast<std::uint32_t>(__builtin_ctzll(sbits));
        return (w << 6) | static_cast<std::uint32_t>(__builtin_ctzll(words_[w]));
      }
      if (++s >= summary_.size()) return kNone;
      sbits = summary_[s];
    }
  }
  std::uint32_t first() const { return next(0); }

 private:
  std::vector<std::uint64_t> words_;
  std::vector<std::uint64_t> summary_;  // bit w set when words_[w] != 0
  std::uint32_t count_ = 0;
};

}  // namespace dirsched
