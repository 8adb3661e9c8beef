// Small containers for the hot path: a ring-buffer FIFO, a chunked queue and a two-level bitset.
//
// Fifo<T> never scans: push at the tail, look at and pop the head, in O(1) amortised. It starts with
// no allocation, so thousands of idle workers cost a few words each; a long one is held in chunks that
// go as it drains, and a chunk whose ids are a constant stride apart (a trace that submits to its
// workers in turn: worker w's FIFO holds w, w + 4,096, ...) holds its first id and stride, not its ids.
//
// ChunkedQueue<T> is a deque for a window of per-task records (push at the back, drop from the front,
// index from the front) in chunks of 2 MiB: std::deque's 512-byte blocks cost a malloc per ten records,
// and a million records at once were 3% of a run in malloc alone. A queue holding more than a chunk's
// worth asks for huge pages for its new chunks (huge_pages.hpp), and one emptied chunk is kept for the
// next push. Elements are built at the push and destroyed at the pop, so a small queue has only the
// pages it touched resident.
//
// KeyedPool<T> maps 64-bit keys to elements kept in a pool. Once the pool has grown to the most
// elements ever held at once, an insert allocates nothing; an element never moves while it is held (a
// reference stays valid until its erase; after it, the reference sees T{} and, once the slot is used
// again, a later key's element); a lookup walks one probe run of an open-addressing index (linear
// probing, erase by backward shift, at most half full, so runs are short). It holds the SimGrid
// driver's members in flight, one per dispatch, instead of a std::map node allocated and freed per
// dispatch and a pointer chase per lookup (the 1M trace-file run: 0.91x the user time).
//
// SlotPool<T> holds elements by a 32-bit number: take() stores one and gives its number (a freed one
// first, so a pool whose use comes and goes stays as large as its most at once), give() frees it.
// Elements live in fixed chunks, so one never moves while held and a number is two shifts from it.
// The Recorder's and the wait attribution's records of the tasks that are more than queued.
//
// SparsePages<T> holds a T per index, most of them T{}, in pages of 1,024 made when one of their
// elements is first written: an index whose page was never written reads T{} and costs nothing. Pages
// wholly below a floor go. The core's rarely used per-task fields (a task's consumers, the buffers it
// last wrote): a trace without buffers holds no page.
//
// IndexSet keeps a set of small integers with O(1) insert and erase and an ordered "next member at or
// after i" that skips 4096 empty indices per summary word, so the singles pass touches only workers
// that are idle and have queued work, whatever the number of workers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dirsched/error.hpp"
#include "dirsched/huge_pages.hpp"

namespace dirsched {

template <typename T>
class Fifo {
 public:
  // Up to kChunk elements a Fifo is one ring buffer, a power of two in size, grown by doubling. Past
  // that it is a ring of chunks of kChunk elements, each given back once its last element is popped:
  // 4,096 worker FIFOs of 2,441 tasks each (10M at t = 0) held 64 MiB of rings doubled to 4,096,
  // still all held when most of the tasks had run. A chunk is a stride run (its first element's key and
  // the stride, no elements) until an element breaks the run: then its elements are written out.
  // Elements are TaskIds or unsigned numbers (key(): 32 bits, the stride modulo 2^32).
  static constexpr std::size_t kChunk = 256;

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T front() const { return at(0); }
  void pop_front() {
    --size_;
    if (chunks_.empty()) {
      head_ = (head_ + 1) & (ring_.size() - 1);
    } else if (++head_ == kChunk) {  // the head chunk is used up: it goes
      std::vector<T>& done = chunks_[first_].items;
      if (spare_.empty()) spare_.swap(done);
      std::vector<T>().swap(done);
      first_ = (first_ + 1) & (chunks_.size() - 1);
      head_ = 0;
    }
  }
  void push_back(const T& value) {
    if (chunks_.empty()) {
      if (size_ == ring_.size()) {
        if (size_ < kChunk) {
          grow_ring();
        } else {
          to_chunks();
          return push_back(value);
        }
      }
      ring_[(head_ + size_) & (ring_.size() - 1)] = value;
    } else {
      const std::size_t p = head_ + size_;
      if (p % kChunk == 0) new_chunk(p / kChunk);
      put(chunks_[(first_ + p / kChunk) & (chunks_.size() - 1)], p % kChunk, value);
    }
    ++size_;
  }
  // Removes every element for which `drop` is true, keeping the others in order. O(size): for rare
  // removals from the middle (a run's cancellation), never on the hot path.
  template <typename Pred>
  void erase_if(Pred drop) {
    Fifo kept;
    for (std::size_t i = 0; i < size_; ++i)
      if (!drop(at(i))) kept.push_back(at(i));
    *this = std::move(kept);
  }
  // Elements it has room for now (its ring, its chunks written out, and the spare): a stride run has none.
  std::size_t held() const {
    std::size_t n = ring_.size() + spare_.size();
    for (const Chunk& c : chunks_) n += c.items.size();
    return n;
  }
  // i-th element from the head, for dumps and observers; not used by scheduling decisions.
  T at(std::size_t i) const {
    if (chunks_.empty()) return ring_[(head_ + i) & (ring_.size() - 1)];
    const std::size_t p = head_ + i;
    const Chunk& c = chunks_[(first_ + p / kChunk) & (chunks_.size() - 1)];
    return c.items.empty() ? c.element(p % kChunk) : c.items[p % kChunk];
  }

 private:
  static std::uint32_t key(const T& v) {
    if constexpr (std::is_integral_v<T>)
      return static_cast<std::uint32_t>(v);
    else
      return v.index();
  }
  struct Chunk {
    std::vector<T> items;  // kChunk elements, or none while a stride run
    std::uint32_t first = 0, stride = 0;  // a run's element o has the key first + o * stride
    T element(std::size_t o) const { return T(first + static_cast<std::uint32_t>(o) * stride); }
  };
  // Element o of chunk c (o: the chunk's elements so far).
  void put(Chunk& c, std::size_t o, const T& value) {
    if (!c.items.empty()) {
      c.items[o] = value;
    } else if (o == 0) {
      c.first = key(value);
    } else if (o == 1) {
      c.stride = key(value) - c.first;
    } else if (key(value) != c.first + static_cast<std::uint32_t>(o) * c.stride) {  // the run breaks
      if (!spare_.empty())
        c.items.swap(spare_);
      else
        c.items.resize(kChunk);
      for (std::size_t j = 0; j < o; ++j) c.items[j] = c.element(j);
      c.items[o] = value;
    }
  }
  void grow_ring() {
    std::vector<T> bigger(ring_.empty() ? 4 : ring_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = at(i);
    ring_.swap(bigger);
    head_ = 0;
  }
  // The full ring of kChunk elements becomes the first chunk.
  void to_chunks() {
    Chunk first;
    for (std::size_t i = 0; i < size_; ++i) put(first, i, at(i));
    std::vector<T>().swap(ring_);
    chunks_.resize(4);
    chunks_[0] = std::move(first);
    first_ = head_ = 0;
  }
  // Chunk k from the head chunk begins at the back: its place in the ring of chunks, grown by doubling.
  // It starts as a stride run.
  void new_chunk(std::size_t k) {
    if (k == chunks_.size()) {
      std::vector<Chunk> bigger(chunks_.size() * 2);
      for (std::size_t j = 0; j < k; ++j) bigger[j] = std::move(chunks_[(first_ + j) & (chunks_.size() - 1)]);
      chunks_.swap(bigger);
      first_ = 0;
    }
    chunks_[(first_ + k) & (chunks_.size() - 1)] = Chunk{};
  }
  std::vector<T> ring_;          // up to kChunk elements: a power of two in size
  std::vector<Chunk> chunks_;    // past that: a ring of chunks (a power of two in size)
  std::vector<T> spare_;         // one chunk's elements given back, for the next written out
  std::size_t first_ = 0;        // the head chunk's place in chunks_
  std::size_t head_ = 0;         // the head's place in ring_, or in the head chunk
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

// A queue of 4-byte places (Place, below) by position, in chunks of a huge page. A chunk behind the
// back one whose places are all the same is held as that place alone (folded when the back moves past
// it): every task of a trace submitted at one instant and READY there costs nothing while it waits
// (10M at t = 0: 38 MiB in each observer). get() reads a place; at() gives it to change, unfolding its
// chunk first.
class PlaceQueue {
 public:
  static constexpr std::size_t kPerChunk = kHugePage / sizeof(std::uint32_t);

  PlaceQueue() = default;
  PlaceQueue(const PlaceQueue&) = delete;
  PlaceQueue& operator=(const PlaceQueue&) = delete;
  PlaceQueue(PlaceQueue&& o) noexcept
      : chunks_(std::move(o.chunks_)),
        spare_(std::move(o.spare_)),
        head_(std::exchange(o.head_, 0)),
        size_(std::exchange(o.size_, 0)) {}
  PlaceQueue& operator=(PlaceQueue&& o) noexcept {
    if (this != &o) {
      chunks_ = std::move(o.chunks_);
      spare_ = std::move(o.spare_);
      head_ = std::exchange(o.head_, 0);
      size_ = std::exchange(o.size_, 0);
      o.chunks_.clear();
    }
    return *this;
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  std::uint32_t get(std::size_t i) const {
    const std::size_t j = head_ + i;
    const Chunk& c = chunks_[j / kPerChunk];
    return c.data ? c.data.get()[j % kPerChunk] : c.value;
  }
  std::uint32_t front() const { return get(0); }
  std::uint32_t& at(std::size_t i) {
    const std::size_t j = head_ + i;
    Chunk& c = chunks_[j / kPerChunk];
    if (!c.data) unfold(c);
    return c.data.get()[j % kPerChunk];
  }
  void push_back(std::uint32_t place) {
    if (head_ + size_ == chunks_.size() * kPerChunk) {
      if (!chunks_.empty()) fold(chunks_.size() - 1);
      chunks_.push_back({take_chunk(), 0});
    }
    const std::size_t j = head_ + size_;
    chunks_.back().data.get()[j % kPerChunk] = place;
    ++size_;
  }
  void pop_front() {
    --size_;
    if (++head_ == kPerChunk) {
      if (chunks_.front().data && !spare_) spare_ = std::move(chunks_.front().data);
      chunks_.pop_front();
      head_ = 0;
    }
  }
  // Chunks held as memory (not folded), for tests.
  std::size_t unfolded() const {
    std::size_t n = 0;
    for (const Chunk& c : chunks_) n += c.data != nullptr;
    return n;
  }

 private:
  struct FreeChunk {
    void operator()(std::uint32_t* p) const noexcept { huge_free(p, kHugePage); }
  };
  struct Chunk {
    std::unique_ptr<std::uint32_t, FreeChunk> data;  // null: every place is `value`
    std::uint32_t value;
  };
  std::unique_ptr<std::uint32_t, FreeChunk> take_chunk() {
    if (spare_) return std::move(spare_);
    return std::unique_ptr<std::uint32_t, FreeChunk>(static_cast<std::uint32_t*>(huge_alloc(kHugePage, size_ >= kPerChunk)));
  }
  // Chunk k (full) as one place when all it holds from the head on is the same.
  void fold(std::size_t k) {
    Chunk& c = chunks_[k];
    const std::uint32_t* p = c.data.get();
    const std::size_t from = k == 0 ? head_ : 0;
    if (!std::all_of(p + from, p + kPerChunk, [&](std::uint32_t x) { return x == p[from]; })) return;
    c.value = p[from];
    if (!spare_) spare_ = std::move(c.data);
    c.data.reset();
  }
  void unfold(Chunk& c) {
    c.data = take_chunk();
    std::fill(c.data.get(), c.data.get() + kPerChunk, c.value);
  }
  std::deque<Chunk> chunks_;
  std::unique_ptr<std::uint32_t, FreeChunk> spare_;  // one chunk given back, for the next
  std::size_t head_ = 0;                             // the front's place in chunks_.front()
  std::size_t size_ = 0;
};

// The distinct instants a run's records name, in the order they were first named, each by a 4-byte
// number: a record holds its four times in 16 bytes, not 32, and times that many records share (every
// submit of a trace at t = 0) are kept once. A time equal to the last one named gets its number again.
// The front is forgotten once no record names it (forget_before): a record's times are all named at or
// after its first one, and later records' after that, so the oldest record's first number bounds
// every number still named. Numbers run modulo 2^30 - 1, so a number fits in 30 bits (a 4-byte place
// holds one with two flag bits) and kNone is never one; what is held must stay under that many
// instants (8 GiB of them).
class InstantTable {
 public:
  static constexpr std::uint32_t kNone = 0xffffffffu;  // no time: read back as -1
  static constexpr std::uint64_t kModulus = (std::uint64_t{1} << 30) - 1;  // numbers are below it
  // How many instants a table holds before record_left() forgets those no record names (a few KiB).
  static constexpr std::size_t kForgetAt = 1024;

  InstantTable() = default;
  // Counts as if `forgotten` instants had been named and forgotten (tests: numbers that wrap).
  explicit InstantTable(std::uint64_t forgotten) : front_(static_cast<std::uint32_t>(forgotten % kModulus)) {}
  std::uint32_t name(double t) {
    // The same bits, not ==: -0.0 reads back as -0.0, never as a 0.0 named before it.
    if (!times_.empty() && std::memcmp(&last_, &t, sizeof t) == 0) return last_number_;
    if (times_.size() + 1 >= kModulus) too_many();
    times_.push_back(t);
    last_ = t;
    last_number_ = advance(front_, times_.size() - 1);
    return last_number_;
  }
  double time(std::uint32_t n) const {
    if (n == kNone) return -1;
    if (n == last_number_ && !times_.empty()) return last_;
    return times_[offset(n)];
  }
  // Instants before number n are named by no record any more.
  void forget_before(std::uint32_t n) {
    if (n == kNone) return;
    const std::size_t k = offset(n);
    for (std::size_t i = 0; i < k; ++i) times_.pop_front();
    front_ = n;
  }
  // No record names any instant (the last record left).
  void forget_all() {
    front_ = advance(front_, times_.size());
    times_.clear();
  }
  // A record left: `oldest` is the first time of the oldest record still held (kNone: it has none and
  // bounds nothing), std::nullopt when none is held. Forgets what no record names, but only once
  // kForgetAt instants are held: after every record, a trace of one task at a time would empty the
  // table for each.
  void record_left(std::optional<std::uint32_t> oldest) {
    if (times_.size() < kForgetAt) return;
    if (oldest)
      forget_before(*oldest);
    else
      forget_all();
  }
  std::size_t held() const { return times_.size(); }

 private:
  // Core bugs (a number no record could name, a window of kModulus instants): out of line, so that
  // name() and time() inline.
  [[noreturn]] static void not_held(std::uint32_t n);
  [[noreturn]] static void too_many();
  static std::uint32_t advance(std::uint32_t n, std::size_t by) {
    return static_cast<std::uint32_t>((n + static_cast<std::uint64_t>(by)) % kModulus);
  }
  std::size_t offset(std::uint32_t n) const {
    const std::uint64_t k = n >= front_ ? n - front_ : n + kModulus - front_;
    if (k >= times_.size()) not_held(n);
    return static_cast<std::size_t>(k);
  }
  ChunkedQueue<double> times_;
  std::uint32_t front_ = 0;        // the number of times_.front() (or of the next instant, when empty)
  std::uint32_t last_number_ = 0;  // and of times_.back(), which is last_
  double last_ = 0;
};

template <typename T>
class KeyedPool {
 public:
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Holds `value` under `key`, which must not be held; returns it in the pool.
  T& insert(std::uint64_t key, T value) {
    if (2 * (size_ + 1) > index_.size()) rehash(index_.empty() ? 16 : 2 * index_.size());
    std::size_t i = home(key);
    while (index_[i].slot != kFree) {  // first, so that a refused insert takes no slot
      if (index_[i].key == key)
        throw InternalError("KeyedPool: key " + std::to_string(key) + " inserted twice");
      i = (i + 1) & mask();
    }
    std::uint32_t slot;
    if (free_.empty()) {
      if (pool_.size() >= kFree) throw InternalError("KeyedPool: more than 2^32 - 1 elements held");
      slot = static_cast<std::uint32_t>(pool_.size());
      pool_.push_back(std::move(value));
    } else {
      slot = free_.back();
      pool_[slot] = std::move(value);
      free_.pop_back();
    }
    index_[i] = {key, slot};
    ++size_;
    return pool_[slot];
  }
  // The element held under `key`, or nullptr.
  T* find(std::uint64_t key) {
    const std::size_t i = place(key);
    return i == kNowhere ? nullptr : &pool_[index_[i].slot];
  }
  bool contains(std::uint64_t key) const { return place(key) != kNowhere; }
  // The element held under `key`, which must be held.
  T& at(std::uint64_t key) {
    T* x = find(key);
    if (!x) throw InternalError("KeyedPool: key " + std::to_string(key) + " is not held");
    return *x;
  }
  // Lets the element held under `key` go (what it holds is released now: it is reset to T{}).
  void erase(std::uint64_t key) {
    std::size_t i = place(key);
    if (i == kNowhere) throw InternalError("KeyedPool: erase of key " + std::to_string(key) + ", not held");
    const std::uint32_t slot = index_[i].slot;
    pool_[slot] = T{};
    free_.push_back(slot);
    --size_;
    // Backward shift: an entry further along the probe run moves into the hole when the hole lies
    // between its home and its place (cyclically), so no probe ever stops short of it.
    for (std::size_t j = (i + 1) & mask(); index_[j].slot != kFree; j = (j + 1) & mask()) {
      const std::size_t h = home(index_[j].key);
      if (((j - h) & mask()) >= ((j - i) & mask())) {
        index_[i] = index_[j];
        i = j;
      }
    }
    index_[i].slot = kFree;
  }
  // The keys held, ascending.
  std::vector<std::uint64_t> keys() const {
    std::vector<std::uint64_t> out;
    out.reserve(size_);
    for (const Entry& e : index_)
      if (e.slot != kFree) out.push_back(e.key);
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  static constexpr std::uint32_t kFree = 0xffffffffu;
  static constexpr std::size_t kNowhere = ~std::size_t{0};
  struct Entry {
    std::uint64_t key = 0;
    std::uint32_t slot = kFree;
  };
  std::size_t mask() const { return index_.size() - 1; }
  // Fibonacci hashing: consecutive keys (dispatch numbers) spread over the whole index.
  std::size_t home(std::uint64_t key) const { return (key * 0x9E3779B97F4A7C15ull) >> shift_; }
  std::size_t place(std::uint64_t key) const {
    if (index_.empty()) return kNowhere;
    for (std::size_t i = home(key);; i = (i + 1) & mask()) {
      if (index_[i].slot == kFree) return kNowhere;
      if (index_[i].key == key) return i;
    }
  }
  void rehash(std::size_t capacity) {  // capacity: a power of two
    std::vector<Entry> old(capacity);
    old.swap(index_);
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(capacity));
    for (const Entry& e : old) {
      if (e.slot == kFree) continue;
      std::size_t i = home(e.key);
      while (index_[i].slot != kFree) i = (i + 1) & mask();
      index_[i] = e;
    }
  }

  std::deque<T> pool_;  // a deque: growing it moves no element
  std::vector<std::uint32_t> free_;
  std::vector<Entry> index_;  // a power of two in size, at most half full
  unsigned shift_ = 64;
  std::size_t size_ = 0;
};

template <typename T>
class SlotPool {
 public:
  T& operator[](std::uint32_t k) { return chunks_[k >> kShift][k & (kChunk - 1)]; }
  const T& operator[](std::uint32_t k) const { return chunks_[k >> kShift][k & (kChunk - 1)]; }
  std::uint32_t take(T&& value) {
    std::uint32_t k;
    if (!free_.empty()) {
      k = free_.back();
      free_.pop_back();
    } else {
      if (size_ == chunks_.size() * kChunk) chunks_.push_back(std::make_unique<T[]>(kChunk));
      k = static_cast<std::uint32_t>(size_++);
    }
    (*this)[k] = std::move(value);
    return k;
  }
  void give(std::uint32_t k) {
    (*this)[k] = T{};
    free_.push_back(k);
  }
  std::size_t held() const { return size_ - free_.size(); }

 private:
  static constexpr std::uint32_t kShift = 10, kChunk = std::uint32_t{1} << kShift;
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::vector<std::uint32_t> free_;
  std::size_t size_ = 0;
};

// A task's 4-byte place in an observer's window (the Recorder's records, the wait attribution's live
// tasks). A task only queued is its place alone: kQueued, kReady if READY at its submit, and its
// submit instant (an InstantTable number: 30 bits); the observer reads its kind, worker and run from
// the core. Any other place names an entry of the observer's SlotPool, as its number + 1 (0 is left
// for "no place").
struct Place {
  static constexpr std::uint32_t kQueued = std::uint32_t{1} << 31;
  static constexpr std::uint32_t kReady = std::uint32_t{1} << 30;
  static constexpr std::uint32_t kInstant = kReady - 1;
  static_assert(InstantTable::kModulus <= kInstant + 1, "a place holds an instant's number");
  static bool queued(std::uint32_t p) { return (p & kQueued) != 0; }
  static bool ready(std::uint32_t p) { return (p & kReady) != 0; }
  static std::uint32_t submit(std::uint32_t p) { return p & kInstant; }
  static std::uint32_t of_queued(std::uint32_t submit, bool ready) { return kQueued | (ready ? kReady : 0) | submit; }
  static std::uint32_t pool(std::uint32_t p) { return p - 1; }
  static std::uint32_t of_pool(std::uint32_t k) {
    if (k + 1 >= kQueued) throw InternalError("more than 2^31 - 1 task records pooled at once");
    return k + 1;
  }
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

template <typename T>
class SparsePages {
 public:
  static constexpr unsigned kShift = 10;
  static constexpr std::size_t kPage = std::size_t{1} << kShift;

  T get(std::size_t i) const {
    const std::size_t p = i >> kShift;
    if (p < base_ || p - base_ >= pages_.size()) return T{};
    const std::vector<T>& page = pages_[p - base_];
    return page.empty() ? T{} : page[i & (kPage - 1)];
  }
  T& ref(std::size_t i) {  // makes its page
    const std::size_t p = i >> kShift;
    if (p < base_) throw InternalError("SparsePages: index below the floor");
    if (p - base_ >= pages_.size()) pages_.resize(p - base_ + 1);
    std::vector<T>& page = pages_[p - base_];
    if (page.empty()) page.assign(kPage, T{});
    return page[i & (kPage - 1)];
  }
  // The indices below i are never read again: the pages wholly below it go.
  void drop_before(std::size_t i) {
    while (base_ < (i >> kShift)) {
      if (pages_.empty()) {
        base_ = i >> kShift;
        return;
      }
      pages_.pop_front();
      ++base_;
    }
  }
  std::size_t pages_held() const {
    std::size_t n = 0;
    for (const std::vector<T>& page : pages_) n += !page.empty();
    return n;
  }

 private:
  std::deque<std::vector<T>> pages_;  // page base_ + k at k; an empty one was never written
  std::size_t base_ = 0;
};

}  // namespace dirsched
