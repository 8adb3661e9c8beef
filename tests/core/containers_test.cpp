#include "dirsched/containers.hpp"

#include <gtest/gtest.h>

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
