#include "dirsched/containers.hpp"
#include "dirsched/registry.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <random>
#include <set>
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

// ChunkedQueue against std::deque: pushes and pops in runs that cross many chunk boundaries (and empty
// it), indexing from the front in between.
TEST(ChunkedQueueWindow, MatchesADequeAcrossChunks) {
  ChunkedQueue<std::uint64_t> q;
  std::deque<std::uint64_t> model;
  std::mt19937_64 rng(7);
  std::uint64_t next = 0;
  const std::size_t per = ChunkedQueue<std::uint64_t>::kPerChunk;
  for (int round = 0; round < 200; ++round) {
    const std::size_t pushes = rng() % (3 * per), pops = rng() % (3 * per);
    for (std::size_t i = 0; i < pushes; ++i) {
      q.push_back(next);
      model.push_back(next++);
    }
    for (std::size_t i = 0; i < pops && !model.empty(); ++i) {
      ASSERT_EQ(q.front(), model.front());
      q.pop_front();
      model.pop_front();
    }
    ASSERT_EQ(q.size(), model.size());
    ASSERT_EQ(q.empty(), model.empty());
    if (!model.empty()) {
      ASSERT_EQ(q.back(), model.back());
      for (int k = 0; k < 20; ++k) {
        const std::size_t i = rng() % model.size();
        ASSERT_EQ(q[i], model[i]);
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

}  // namespace
}  // namespace dirsched
