#include "dirsched/containers.hpp"
#include "dirsched/huge_pages.hpp"
#include "dirsched/registry.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace dirsched {
namespace {

TEST(FifoQueue, KeepsOrderAcrossGrowthAndWrapAround) {
  Fifo<int> f;
  int next_in = 0, next_out = 0;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < round % 7 + 1; ++i) f.push_back(next_in++);
    for (int i = 0; i < round % 5 && !f.empty(); ++i) {
      EXPECT_EQ(f.front(), next_out++);
      f.pop_front();
    }
  }
  while (!f.empty()) {
    EXPECT_EQ(f.front(), next_out++);
    f.pop_front();
  }
  EXPECT_EQ(next_in, next_out);
}

TEST(FifoQueue, EraseIfKeepsTheOthersInOrderAcrossTheWrap) {
  Fifo<int> f;
  for (int i = 0; i < 6; ++i) f.push_back(i);
  for (int i = 0; i < 5; ++i) f.pop_front();  // the head near the end of the ring
  for (int i = 6; i < 12; ++i) f.push_back(i);  // 5..11, wrapping
  f.erase_if([](int v) { return v % 2 == 0; });
  std::vector<int> out;
  for (std::size_t i = 0; i < f.size(); ++i) out.push_back(f.at(i));
  EXPECT_EQ(out, (std::vector<int>{5, 7, 9, 11}));
  f.push_back(12);
  f.pop_front();
  EXPECT_EQ(f.front(), 7);
  EXPECT_EQ(f.size(), 4u);
  f.erase_if([](int) { return true; });
  EXPECT_TRUE(f.empty());
}

// Past Fifo::kChunk elements a Fifo is held in chunks: against std::deque through pushes and pops that
// cross many chunk boundaries and empty it, erase_if and copies; a drained long FIFO gives its chunks
// back (it holds at most the head chunk and one spare). The numbers pushed are scrambled, so no chunk
// is a stride run.
TEST(FifoQueue, LongFifosMatchADequeAndGiveTheirChunksBack) {
  constexpr std::size_t k = Fifo<int>::kChunk;
  Fifo<std::uint32_t> f;
  std::deque<std::uint32_t> model;
  std::mt19937_64 rng(11);
  struct Scrambled {  // 0, 1, 2, ... through a bijection of 32-bit numbers, compared as such
    std::uint32_t n = 0;
    operator std::uint32_t() const { return (n * 2654435761u) ^ (n >> 3); }
    Scrambled operator++(int) { return {n++}; }
  } next;
  auto same = [&](const Fifo<std::uint32_t>& q) {
    ASSERT_EQ(q.size(), model.size());
    for (std::size_t i = 0; i < model.size(); i += 1 + rng() % 7) ASSERT_EQ(q.at(i), model[i]) << i;
    if (!model.empty()) {
      ASSERT_EQ(q.front(), model.front());
    }
  };
  for (int round = 0; round < 300; ++round) {
    const std::size_t pushes = rng() % (5 * k), pops = rng() % (5 * k);
    for (std::size_t i = 0; i < pushes; ++i) f.push_back(next), model.push_back(next++);
    same(f);
    for (std::size_t i = 0; i < pops && !model.empty(); ++i) f.pop_front(), model.pop_front();
    same(f);
    if (round % 50 == 49) {
      f.erase_if([](std::uint32_t v) { return v % 3 == 0; });
      model.erase(std::remove_if(model.begin(), model.end(), [](std::uint32_t v) { return v % 3 == 0; }), model.end());
      same(f);
      const Fifo<std::uint32_t> copy = f;
      same(copy);
    }
  }
  for (std::size_t i = 0; i < 20 * k; ++i) f.push_back(next), model.push_back(next++);
  EXPECT_GE(f.held(), f.size());
  while (f.size() > 1) f.pop_front(), model.pop_front();
  same(f);
  EXPECT_LE(f.held(), 2 * k);  // the head chunk and the spare
  // Drained exactly at a chunk boundary, then used again; moved.
  Fifo<std::uint32_t> g;
  for (std::uint32_t i = 0; i < 3 * k; ++i) g.push_back(i);
  for (std::size_t i = 0; i < 3 * k; ++i) g.pop_front();
  EXPECT_TRUE(g.empty());
  EXPECT_LE(g.held(), 2 * k);
  g.push_back(7);
  g.push_back(8);
  Fifo<std::uint32_t> moved = std::move(g);
  ASSERT_EQ(moved.size(), 2u);
  EXPECT_EQ(moved.front(), 7u);
  moved.pop_front();
  EXPECT_EQ(moved.front(), 8u);
  EXPECT_EQ(moved.at(0), 8u);
}

// A chunk whose elements are a constant stride apart (modulo 2^32) holds no elements; one that breaks
// its run, at any place (its third or last element: its second sets the stride), is written out. Against
// std::deque: runs up, down, of stride 0 and across 2^32, each broken at a few places or not at all;
// TaskIds the same way. Computing a run's element with another stride, or writing the run out one
// element short, fails the comparison; writing every chunk out fails the held() checks.
TEST(FifoQueue, StrideRunsHoldNoElementsAndBreakAnywhere) {
  constexpr std::size_t k = Fifo<std::uint32_t>::kChunk;
  Fifo<std::uint32_t> f;
  std::deque<std::uint32_t> model;
  const auto same = [&] {
    ASSERT_EQ(f.size(), model.size());
    for (std::size_t i = 0; i < model.size(); ++i) ASSERT_EQ(f.at(i), model[i]) << i;
  };
  const std::uint32_t strides[] = {4096, 1, 0, 0xffffffffu, 0x80000001u};
  std::uint32_t v = 0xfffff000u;
  for (int r = 0; r < 40; ++r) {
    const std::uint32_t stride = strides[r % 5];
    const std::size_t breaks_at = r % 4 == 0 ? 1 : r % 4 == 1 ? 2 : r % 4 == 2 ? k - 1 : k;  // k: none
    for (std::size_t i = 0; i < k; ++i) {
      const std::uint32_t x = i == breaks_at ? v + 17 : v;
      f.push_back(x), model.push_back(x);
      v += stride;
    }
  }
  same();
  // 10 of the 40 chunks are unbroken runs and hold nothing.
  EXPECT_EQ(f.held(), 30 * k);
  for (std::size_t i = 0; i < 13 * k + 5; ++i) f.pop_front(), model.pop_front();
  same();
  // Pushed onto after pops: the back chunk, a run, goes on (and breaks) where it left off.
  for (std::size_t i = 0; i < k / 2; ++i) {
    const std::uint32_t x = i == k / 4 ? 1 : v;
    f.push_back(x), model.push_back(x);
    v += 4096;
  }
  same();
  const Fifo<std::uint32_t> copy = f;
  const std::deque<std::uint32_t> copied = model;
  f.erase_if([](std::uint32_t x) { return x % 2 == 0; });
  model.erase(std::remove_if(model.begin(), model.end(), [](std::uint32_t x) { return x % 2 == 0; }), model.end());
  same();
  ASSERT_EQ(copy.size(), copied.size());
  for (std::size_t i = 0; i < copied.size(); ++i) ASSERT_EQ(copy.at(i), copied[i]) << i;
  // TaskIds: one worker's FIFO of a trace that submits to 4,096 workers in turn is all runs.
  Fifo<TaskId> ids;
  for (std::uint32_t i = 0; i < 10 * k; ++i) ids.push_back(TaskId(7 + 4096 * i));
  EXPECT_EQ(ids.held(), 0u);
  for (std::uint32_t i = 0; i < 10 * k; ++i) {
    ASSERT_EQ(ids.front(), TaskId(7 + 4096 * i));
    ids.pop_front();
  }
}

// PlaceQueue against std::deque. A full chunk behind the back one is folded when all it holds from
// the head on is one place, and unfolded when a place in it is changed; reading never unfolds. The
// front chunk folds too when what was popped from it differed. Breaking the fold's test (all the
// chunk, or none of it) or the unfold's fill fails here.
TEST(PlaceQueueFolds, MatchesADequeAndHoldsUniformChunksAsOnePlace) {
  constexpr std::size_t k = PlaceQueue::kPerChunk;
  PlaceQueue q;
  std::deque<std::uint32_t> model;
  std::mt19937_64 rng(5);
  auto same = [&] {
    ASSERT_EQ(q.size(), model.size());
    for (std::size_t i = 0; i < model.size(); i += 1 + rng() % 997) ASSERT_EQ(q.get(i), model[i]) << i;
    if (!model.empty()) {
      ASSERT_EQ(q.front(), model.front());
      ASSERT_EQ(q.get(model.size() - 1), model.back());
    }
  };
  auto push = [&](std::uint32_t v) { q.push_back(v), model.push_back(v); };
  // The front chunk: 10 different places popped, then one place to its end.
  for (std::uint32_t i = 0; i < 10; ++i) push(1000 + i);
  for (int i = 0; i < 10; ++i) q.pop_front(), model.pop_front();
  while (model.size() < k - 10) push(7);
  same();
  // Two more chunks of 7, one of mixed places, and a start of the back one.
  for (std::size_t i = 0; i < 2 * k; ++i) push(7);
  for (std::size_t i = 0; i < k; ++i) push(i % 3 == 0 ? 8 : 7);
  for (std::size_t i = 0; i < 5; ++i) push(9);
  same();
  EXPECT_EQ(q.unfolded(), 2u);  // the mixed chunk and the back one
  // Changing a place unfolds its chunk (filled with the place it held); reading does not.
  (void)q.get(k + 3);
  EXPECT_EQ(q.unfolded(), 2u);
  q.at(k + 3) = 42;
  model[k + 3] = 42;
  EXPECT_EQ(q.unfolded(), 3u);
  same();
  // Pops across folded and unfolded chunks, then a refill; a chunk of 7 with one 42 stays unfolded.
  for (std::size_t i = 0; i < k + 100; ++i) q.pop_front(), model.pop_front();
  same();
  for (std::size_t i = 0; i < 2 * k; ++i) push(11);
  same();
  while (!model.empty()) q.pop_front(), model.pop_front();
  EXPECT_TRUE(q.empty());
  for (std::uint32_t i = 0; i < 3; ++i) push(i);
  same();
}

// ChunkedQueue against std::deque: pushes and pops in runs that cross many chunk boundaries (and empty
// it), indexing from the front in between. 512-byte elements keep a 2 MiB chunk to 4,096 of them.
TEST(ChunkedQueueWindow, MatchesADequeAcrossChunks) {
  using Wide = std::array<std::uint64_t, 64>;
  ChunkedQueue<Wide> q;
  std::deque<std::uint64_t> model;
  std::mt19937_64 rng(7);
  std::uint64_t next = 0;
  const std::size_t per = ChunkedQueue<Wide>::kPerChunk;
  ASSERT_EQ(per, 4096u);
  for (int round = 0; round < 200; ++round) {
    const std::size_t pushes = rng() % (3 * per), pops = rng() % (3 * per);
    for (std::size_t i = 0; i < pushes; ++i) {
      Wide w{};
      w[0] = w[63] = next;
      q.push_back(w);
      model.push_back(next++);
    }
    for (std::size_t i = 0; i < pops && !model.empty(); ++i) {
      ASSERT_EQ(q.front()[0], model.front());
      q.pop_front();
      model.pop_front();
    }
    ASSERT_EQ(q.size(), model.size());
    ASSERT_EQ(q.empty(), model.empty());
    if (!model.empty()) {
      ASSERT_EQ(q.back()[63], model.back());
      for (int k = 0; k < 20; ++k) {
        const std::size_t i = rng() % model.size();
        ASSERT_EQ(q[i][0], model[i]);
        ASSERT_EQ(q[i][63], model[i]);
      }
    }
  }
}

// A popped element is reset at once (what it held goes), and emplace_back gives a fresh element even in
// a reused chunk.
TEST(ChunkedQueueWindow, PopReleasesAndEmplaceGivesAFreshElement) {
  ChunkedQueue<std::shared_ptr<int>> q;
  const std::size_t per = ChunkedQueue<std::shared_ptr<int>>::kPerChunk;
  auto held = std::make_shared<int>(1);
  for (std::size_t i = 0; i < 2 * per + 3; ++i) q.push_back(held);
  EXPECT_EQ(held.use_count(), static_cast<long>(2 * per + 4));
  for (std::size_t i = 0; i < 2 * per; ++i) q.pop_front();  // two chunks emptied: one kept as spare
  EXPECT_EQ(held.use_count(), 4);
  for (std::size_t i = 0; i < 2 * per; ++i) EXPECT_EQ(q.emplace_back(), nullptr);
  EXPECT_EQ(q.size(), 2 * per + 3);
  EXPECT_EQ(q[0], held);
}

// Elements live from emplace_back to pop_front: what the queue still holds goes when it is destroyed,
// and a move hands the elements over (the moved-from queue is empty and holds nothing).
TEST(ChunkedQueueWindow, DestructionAndMoveReleaseWhatIsHeld) {
  auto held = std::make_shared<int>(1);
  const std::size_t per = ChunkedQueue<std::shared_ptr<int>>::kPerChunk;
  {
    ChunkedQueue<std::shared_ptr<int>> q;
    for (std::size_t i = 0; i < per + 5; ++i) q.push_back(held);
    for (std::size_t i = 0; i < 3; ++i) q.pop_front();
    ChunkedQueue<std::shared_ptr<int>> moved(std::move(q));
    EXPECT_TRUE(q.empty());  // NOLINT(bugprone-use-after-move): a moved-from queue is empty
    EXPECT_EQ(moved.size(), per + 2);
    EXPECT_EQ(held.use_count(), static_cast<long>(per + 3));
    ChunkedQueue<std::shared_ptr<int>> other;
    other.push_back(held);
    other = std::move(moved);  // what `other` held goes
    EXPECT_EQ(held.use_count(), static_cast<long>(per + 3));
    EXPECT_EQ(other[per + 1], held);
  }
  EXPECT_EQ(held.use_count(), 1);
}

// KeyedPool against std::map under random inserts, lookups and erases: keys clustered (as dispatch
// numbers are, most held for a short while) and far apart, so that probe runs wrap around the index and
// erases shift entries back across its end.
TEST(KeyedPoolMap, MatchesAStdMapUnderRandomUse) {
  std::mt19937_64 rng(7);
  KeyedPool<std::uint64_t> pool;
  std::map<std::uint64_t, std::uint64_t> model;
  std::uint64_t next = 0;
  for (int step = 0; step < 200000; ++step) {
    // Phases of 20,000 steps, growing (about 10,000 keys more held at the end of one) and shrinking,
    // so that the index is rehashed and its probe runs grow long as well as short.
    const bool growing = (step / 20000) % 2 == 0;
    const unsigned op = rng() % 8;
    if (op < (growing ? 5u : 1u) || model.empty()) {
      // A new key: the next dispatch number, or now and then a far one.
      const std::uint64_t key = rng() % 16 == 0 ? rng() : next++;
      if (model.count(key)) continue;
      const std::uint64_t value = rng();
      EXPECT_EQ(pool.insert(key, value), value);
      model[key] = value;
    } else if (op < 6) {  // erase a held key, usually an old one
      auto it = model.begin();
      std::advance(it, static_cast<long>(rng() % std::min<std::size_t>(model.size(), 40)));
      pool.erase(it->first);
      model.erase(it);
    } else {  // look up a key held or not
      const std::uint64_t key = rng() % 2 ? next - 1 - rng() % 64 : rng();
      const auto it = model.find(key);
      std::uint64_t* got = pool.find(key);
      ASSERT_EQ(got != nullptr, it != model.end()) << "key " << key << " at step " << step;
      if (got) {
        EXPECT_EQ(*got, it->second);
      }
      EXPECT_EQ(pool.contains(key), it != model.end());
    }
    ASSERT_EQ(pool.size(), model.size());
  }
  std::vector<std::uint64_t> keys;
  for (const auto& [k, v] : model) {
    keys.push_back(k);
    EXPECT_EQ(pool.at(k), v);
  }
  EXPECT_EQ(pool.keys(), keys);  // ascending
  for (std::uint64_t k : keys) pool.erase(k);
  EXPECT_TRUE(pool.empty());
  EXPECT_TRUE(pool.keys().empty());
}

TEST(KeyedPoolMap, ElementsStayPutAndEraseReleasesWhatTheyHold) {
  auto held = std::make_shared<int>(1);
  KeyedPool<std::shared_ptr<int>> pool;
  std::shared_ptr<int>& first = pool.insert(10, held);
  for (std::uint64_t k = 11; k < 5000; ++k) pool.insert(k, held);  // the pool and its index grow
  EXPECT_EQ(&first, pool.find(10));                                 // the first element did not move
  EXPECT_EQ(held.use_count(), 5000 - 10 + 1);
  const std::shared_ptr<int>* last_erased = pool.find(4998);
  for (std::uint64_t k = 10; k < 5000; k += 2) pool.erase(k);
  EXPECT_EQ(held.use_count(), 2495 + 1);  // 4,990 held, every other one erased
  EXPECT_EQ(pool.find(10), nullptr);
  EXPECT_EQ(&pool.insert(10, nullptr), last_erased);  // a freed slot is used again: the pool does not grow
  EXPECT_EQ(pool.size(), 2496u);
}

// A refused insert changes nothing: no slot taken, the value not kept.
TEST(KeyedPoolMap, MisuseIsAnInternalErrorAndChangesNothing) {
  auto held = std::make_shared<int>(1);
  KeyedPool<std::shared_ptr<int>> pool;
  EXPECT_THROW(pool.at(3), InternalError);
  EXPECT_THROW(pool.erase(3), InternalError);
  pool.insert(3, held);
  const std::shared_ptr<int>* freed = &pool.insert(4, nullptr);
  pool.erase(4);
  EXPECT_THROW(pool.insert(3, held), InternalError);
  EXPECT_EQ(held.use_count(), 2);  // held here and under key 3 only
  EXPECT_EQ(pool.size(), 1u);
  EXPECT_EQ(pool.at(3), held);
  EXPECT_EQ(&pool.insert(5, nullptr), freed);  // the slot key 4 freed was not taken by the refused insert
}

// huge_alloc: from 2 MiB on, whole 2 MiB pages at a 2 MiB boundary, advised as huge or not, as asked
// (a kernel with transparent huge pages marks an advised mapping "hg" in /proc/self/smaps whether or not
// it has a huge page to give; one without them refuses the advice); below 2 MiB, ordinary memory. Under
// AddressSanitizer every allocation is ordinary memory, so that the sanitizer sees it.
std::string vm_flags_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2 && line.find('-') < 17)
      inside = lo <= at && at < hi;
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

TEST(HugePages, BigAllocationsAreAlignedWholePagesAdvisedAsAsked) {
  const bool kernel_has_thp = std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").good();
  for (const bool advise : {true, false}) {
    const std::size_t bytes = 3 * kHugePage + 1;
    auto* p = static_cast<unsigned char*>(huge_alloc(bytes, advise));
    if (kHugePagesMapped) {
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % kHugePage, 0u);
      std::memset(p, 0xab, 4 * kHugePage);  // rounded up to whole pages: all four are ours
      const std::string flags = vm_flags_of(p + 4 * kHugePage - 1);
      ASSERT_FALSE(flags.empty());
      EXPECT_EQ(flags.find(" hg") != std::string::npos, advise && kernel_has_thp) << flags;
    } else {
      std::memset(p, 0xab, bytes);  // the sanitizer checks these bounds
    }
    huge_free(p, bytes);
  }
  void* small = huge_alloc(100);
  std::memset(small, 1, 100);
  huge_free(small, 100);
  std::vector<int, HugePageAllocator<int>> v(kHugePage, 7);  // 8 MiB through the allocator
  if (kHugePagesMapped) {
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % kHugePage, 0u);
  }
  EXPECT_EQ(v[kHugePage - 1], 7);
}

// A HugeVector that drops most of its front gives the huge pages its entries leave back to the kernel
// (a core that held a whole trace at t = 0 shrinks as the tasks end); what it keeps is intact. Ordinary
// memory (below 2 MiB, or an AddressSanitizer build, where huge_alloc is operator new) stays resident:
// there only the entries are checked.
TEST(HugePages, ErasingTheFrontGivesTheLeftPagesBack) {
  auto value = [](std::uint64_t i) { return i * 0x9e3779b97f4a7c15u; };
  auto none_resident = [](const void* at, std::size_t bytes) {
    std::vector<unsigned char> resident(bytes / 4096);
    if (mincore(const_cast<void*>(at), bytes, resident.data()) != 0) return std::string("mincore failed");
    for (std::size_t i = 0; i < resident.size(); ++i)
      if (resident[i] & 1) return "page " + std::to_string(i) + " resident";
    return std::string();
  };
  HugeVector<std::uint64_t> v;
  const std::size_t n = 8 * kHugePage / sizeof(std::uint64_t);  // 16 MiB, every page touched
  for (std::size_t i = 0; i < n; ++i) v.push_back(value(i));
  // Promised never to be read again: the first 3 MiB of entries. Their first 2 MiB page goes back.
  v.release_front(3 * kHugePage / 2 / sizeof(std::uint64_t));
  if (kHugePagesMapped) {
    EXPECT_EQ(none_resident(v.data(), kHugePage), "");
  }
  for (std::size_t i = kHugePage / sizeof(std::uint64_t); i < n; ++i) ASSERT_EQ(v[i], value(i)) << i;
  const std::size_t keep = kHugePage / sizeof(std::uint64_t) + 3;  // 2 MiB and 24 bytes
  v.erase_front(n - keep);
  ASSERT_EQ(v.size(), keep);
  for (std::size_t i = 0; i < keep; ++i) ASSERT_EQ(v[i], value(n - keep + i)) << i;
  // From the third 2 MiB page on (the second holds the last 24 bytes kept) nothing is resident.
  if (kHugePagesMapped) {
    EXPECT_EQ(none_resident(reinterpret_cast<char*>(v.data()) + 2 * kHugePage, 6 * kHugePage), "");
  }
  for (std::size_t i = 0; i < n; ++i) v.push_back(value(i));  // the given-back pages serve again
  ASSERT_EQ(v.size(), keep + n);
  EXPECT_EQ(v[keep - 1], value(n - 1));
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(v[keep + i], value(i)) << i;
}

// HugeVector grows by huge_grow: its entries kept across every growth (ordinary memory below 2 MiB,
// then whole huge pages), at a 2 MiB boundary once mapped, advised; erase_front keeps the rest in
// order. huge_grow moves a mapping the kernel cannot grow in place (another mapping right after it) to
// a 2 MiB boundary, contents kept and advised.
TEST(HugePages, HugeVectorKeepsItsEntriesAcrossGrowth) {
  const bool kernel_has_thp = std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").good();
  auto value = [](std::uint64_t i) { return i * 2654435761u; };
  HugeVector<std::uint64_t> v;
  const std::size_t n = 3 * kHugePage / sizeof(std::uint64_t) + 5;  // four growths past 2 MiB
  for (std::size_t i = 0; i < n; ++i) {
    v.push_back(value(i));
    if (kHugePagesMapped && v.capacity() * sizeof(std::uint64_t) >= kHugePage) {
      ASSERT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % kHugePage, 0u) << i;
    }
  }
  ASSERT_EQ(v.size(), n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(v[i], value(i)) << i;
  if (kHugePagesMapped && kernel_has_thp) {
    const std::string flags = vm_flags_of(v.data() + n - 1);
    EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
  }
  v.erase_front(7);
  ASSERT_EQ(v.size(), n - 7);
  EXPECT_EQ(v[0], value(7));
  EXPECT_EQ(*(v.end() - 1), value(n - 1));
  HugeVector<char> text;
  text.append("abc", 3);
  text.append("", 0);
  text.append("de", 2);
  EXPECT_EQ(std::string(text.begin(), text.end()), "abcde");
  HugeVector<std::uint64_t> copy(v);  // the explorers copy whole cores
  v[0] = 1;
  ASSERT_EQ(copy.size(), v.size());
  EXPECT_EQ(copy[0], value(7));
  EXPECT_EQ(copy[v.size() - 1], value(n - 1));
  HugeVector<char> moved(std::move(text));
  text = moved;
  EXPECT_EQ(std::string(text.begin(), text.end()), "abcde");
  EXPECT_EQ(std::string(moved.begin(), moved.end()), "abcde");

  if (!kHugePagesMapped) return;  // below: the mapped path only (the other is new, memcpy, delete)
  auto* p = static_cast<unsigned char*>(huge_alloc(kHugePage));
  for (std::size_t i = 0; i < kHugePage; ++i) p[i] = static_cast<unsigned char>(i * 7);
  // A page of another mapping right after p: the kernel cannot grow p where it is.
  void* blocker = mmap(p + kHugePage, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  ASSERT_EQ(blocker, static_cast<void*>(p + kHugePage));
  auto* q = static_cast<unsigned char*>(huge_grow(p, kHugePage, 3 * kHugePage));
  EXPECT_NE(q, p);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(q) % kHugePage, 0u);
  for (std::size_t i = 0; i < kHugePage; ++i) ASSERT_EQ(q[i], static_cast<unsigned char>(i * 7)) << i;
  std::memset(q + kHugePage, 0xcd, 2 * kHugePage);  // the grown part is ours
  if (kernel_has_thp) {
    const std::string flags = vm_flags_of(q + 3 * kHugePage - 1);
    EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
  }
  huge_free(q, 3 * kHugePage);
  munmap(blocker, 4096);
}

// Registry::index_of: ids below the dense bound looked up by table, the others by hash, both agreeing
// with registration order; an id never registered is none either way.
TEST(RegistryLookup, DenseAndSparseIdsByRegistrationIndex) {
  Registry reg;
  const std::int64_t ids[] = {5, 0, 65535, 65536, 1000000, 3, 1LL << 40};
  for (std::int64_t id : ids) reg.add_next_level(WorkerId(id), WorkerKind::kLocalChip);
  for (std::uint32_t i = 0; i < std::size(ids); ++i) {
    ASSERT_EQ(reg.index_of(WorkerId(ids[i])), i) << ids[i];
    EXPECT_EQ(reg.worker_at(i).id, WorkerId(ids[i]));
  }
  for (std::int64_t id : {1LL, 4LL, 6LL, 65534LL, 65537LL, 999999LL, -1LL})
    EXPECT_EQ(reg.index_of(WorkerId(id)), std::nullopt) << id;
}

TEST(IndexSetOrder, NextFindsTheSmallestMemberAtOrAfter) {
  IndexSet s(10000);
  std::set<std::uint32_t> model;
  for (std::uint32_t i : {0u, 63u, 64u, 4095u, 4096u, 4097u, 9999u, 5000u}) {
    s.insert(i);
    model.insert(i);
  }
  s.erase(64);
  model.erase(64);
  for (std::uint32_t from = 0; from < 10000; from += 37) {
    auto it = model.lower_bound(from);
    EXPECT_EQ(s.next(from), it == model.end() ? IndexSet::kNone : *it) << from;
  }
  EXPECT_EQ(s.size(), model.size());
}

TEST(IndexSetOrder, IteratesInIncreasingOrder) {
  IndexSet s(300);
  for (std::uint32_t i = 2; i < 300; i += 3) s.insert(i);
  std::uint32_t prev = 0;
  std::size_t seen = 0;
  for (std::uint32_t i = s.first(); i != IndexSet::kNone; i = s.next(i + 1)) {
    EXPECT_GT(i, prev);
    prev = i;
    ++seen;
  }
  EXPECT_EQ(seen, s.size());
}

TEST(IndexSetOrder, EmptySetHasNoMembers) {
  IndexSet s(5000);
  EXPECT_EQ(s.first(), IndexSet::kNone);
  s.insert(4999);
  s.erase(4999);
  EXPECT_EQ(s.first(), IndexSet::kNone);
  EXPECT_EQ(s.size(), 0u);
}

// SparsePages: an index never written reads T{} and makes no page; a page goes once the floor passes
// it, and its indices read T{} again; a write below the floor is a bug.
TEST(SparsePages, PagesAreMadeByWritesAndGoBelowTheFloor) {
  SparsePages<std::uint32_t> p;
  constexpr std::size_t k = SparsePages<std::uint32_t>::kPage;
  EXPECT_EQ(p.get(5 * k + 3), 0u);
  EXPECT_EQ(p.pages_held(), 0u);
  p.ref(5 * k + 3) = 7;
  p.ref(2 * k) = 9;
  EXPECT_EQ(p.pages_held(), 2u);
  EXPECT_EQ(p.get(5 * k + 3), 7u);
  EXPECT_EQ(p.get(2 * k), 9u);
  EXPECT_EQ(p.get(3 * k), 0u);  // a page between, never written
  EXPECT_EQ(p.pages_held(), 2u);
  p.drop_before(5 * k + 1);  // page 5 holds index 5k+1: it stays
  EXPECT_EQ(p.pages_held(), 1u);
  EXPECT_EQ(p.get(2 * k), 0u);
  EXPECT_EQ(p.get(5 * k + 3), 7u);
  EXPECT_THROW(p.ref(4 * k), InternalError);
  p.drop_before(100 * k);
  EXPECT_EQ(p.pages_held(), 0u);
  EXPECT_EQ(p.get(5 * k + 3), 0u);
  p.ref(100 * k + 1) = 1;
  EXPECT_EQ(p.get(100 * k + 1), 1u);
  EXPECT_EQ(p.pages_held(), 1u);
}

// InstantTable: a time named again while it is the last gets its number; numbers read back their
// times across chunks, through forgetting, and where the count wraps past kModulus = 2^30 - 1 (a number
// fits in 30 bits, and kNone is never one); an instant forgotten or never named is an internal error,
// not a wrong time.
TEST(InstantTable, NamesReadBackAcrossForgettingAndTheWrap) {
  constexpr std::uint64_t m = InstantTable::kModulus;
  static_assert(m == (std::uint64_t{1} << 30) - 1);
  for (const std::uint64_t start : {std::uint64_t{0}, m - 5, std::uint64_t{3} * m - 1}) {
    InstantTable table(start);
    EXPECT_EQ(table.time(InstantTable::kNone), -1);
    std::vector<std::pair<std::uint32_t, double>> named;
    double t = 0;
    for (int i = 0; i < 300000; ++i) {
      if (i % 3) t += 0.25;  // every third time repeats the last
      const std::uint32_t n = table.name(t);
      ASSERT_LT(n, m);
      if (!named.empty() && named.back().second == t) {
        ASSERT_EQ(n, named.back().first);
      }
      named.emplace_back(n, t);
    }
    EXPECT_EQ(table.held(), 200001u);  // 0, then two new times in every three
    for (const auto& [n, time] : named) ASSERT_EQ(table.time(n), time);
    // Forget the first half: the rest still read back; the forgotten are refused.
    const std::size_t half = named.size() / 2;
    table.forget_before(named[half].first);
    for (std::size_t i = half; i < named.size(); ++i) ASSERT_EQ(table.time(named[i].first), named[i].second);
    if (named[0].first != named[half].first) {
      EXPECT_THROW((void)table.time(named[0].first), InternalError);
    }
    table.forget_before(InstantTable::kNone);  // bounds nothing
    EXPECT_EQ(table.time(named.back().first), named.back().second);
    const std::uint32_t next = table.name(t + 1);
    EXPECT_THROW((void)table.time(next == m - 1 ? 0 : next + 1), InternalError);  // not named yet
  }
}

}  // namespace
}  // namespace dirsched
