// The wait attribution's critical-path node table, driven by a core directly (the replay refuses an
// empty task name, the core does not): an empty name must be kept as one, even as the first name the
// table ever stores (no chunk of text exists yet). Without the guard in NodeTable::put() the empty
// name read the last chunk of an empty list: undefined behaviour that a Release build may survive, and
// that the AddressSanitizer stage of .ci/run stops.
#include <gtest/gtest.h>

#include <algorithm>

#include "dirsched/scheduler.hpp"
#include "dirsched/waits.hpp"

namespace dirsched {
namespace {

// One chip and one callable, the wait attribution observing; run() dispatches every task in turn, each
// taking 1 s.
struct OneChip {
  OneChip() : core(registry()), waits(core) { core.set_observer(&waits); }
  static Registry registry() {
    Registry reg;
    reg.add_next_level(WorkerId(0), WorkerKind::kLocalChip);
    reg.add_callable({"k", Namespace::kLocalChip, std::nullopt});
    return reg;
  }
  bool submit(const std::string& name) { return core.submit_next_level(name, CallableId(0u), {}, WorkerId(0)).accepted(); }
  void run(int tasks) {
    double t = 0;
    for (int step = 0; step < tasks; ++step) {
      const std::vector<Dispatch> ds = core.iterate();
      ASSERT_EQ(ds.size(), 1u);
      core.set_time(t += 1);
      core.report(ds[0].task, ds[0].member, Outcome::kSuccess);
    }
    core.iterate();
  }
  Scheduler core;
  WaitAttribution waits;
};

// The last kPathKept steps of a OneChip chain of `tasks` tasks named name(0), name(1), ...: each
// waited for the one before it on the chip and started at its index (1 s a task).
template <typename Name>
void expect_chain_tail(const WaitAttribution& waits, int tasks, Name name) {
  const std::vector<CriticalStep> path = waits.critical_path();
  ASSERT_EQ(path.size(), WaitAttribution::kPathKept);
  const int first = tasks - static_cast<int>(path.size());
  for (std::size_t j = 0; j < path.size(); ++j) {
    const int i = first + static_cast<int>(j);
    ASSERT_EQ(path[j].task, name(i)) << "step " << j;
    EXPECT_EQ(path[j].after, name(i - 1)) << "step " << j;
    EXPECT_EQ(path[j].reason, StartReason::kWorker) << "step " << j;
    EXPECT_EQ(path[j].start_s, i) << "step " << j;
  }
}

TEST(WaitNodeNames, AnEmptyNameFirstAndAfterOthers) {
  OneChip c;
  ASSERT_TRUE(c.submit(""));
  ASSERT_TRUE(c.submit("b"));
  c.run(2);
  const std::vector<CriticalStep> path = c.waits.critical_path();
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(path[0].task, "");
  EXPECT_EQ(path[1].task, "b");
  EXPECT_EQ(path[1].after, "");
  EXPECT_EQ(path[1].reason, StartReason::kWorker);
}

// Each node's record holds its start reason and its name's size in LEB128 (one byte below 128, two
// from 128, three from 16,384), and a record longer than half a chunk (32 KiB) gets a chunk of its own,
// just its size, so that every chunk is at least half used.
// Trimming every 64 nodes frees most of the chain; every name and reason of the kept path must read
// back as it was given. Breaking the size's encoding at a byte boundary fails here (placing a long
// record past a chunk's end, under the AddressSanitizer).
TEST(WaitNodeNames, NamesOfEverySizeReadBack) {
  OneChip c;
  c.waits.set_trim_period(64);
  constexpr std::size_t kSizes[] = {0, 1, 126, 127, 128, 129, 300, 16383, 16384, 32764, 32765, 40000, 70000};
  constexpr int kTasks = 5000;
  auto name = [&](int i) {
    const std::size_t size = kSizes[static_cast<std::size_t>(i) % std::size(kSizes)];
    std::string s(size, static_cast<char>('a' + i % 26));
    if (size > 0) s[0] = static_cast<char>('A' + i % 26);
    return s;
  };
  for (int i = 0; i < kTasks; ++i) ASSERT_TRUE(c.submit(name(i)));
  c.run(kTasks);
  expect_chain_tail(c.waits, kTasks, name);
  // The chain's nodes go in the order they came, so its chunks empty whole and go back, with no
  // compaction. What the chunks hold unused is the tails a record did not fit in: 16% of the text here
  // (18.7 MB for 16.2 MB of records). Records just past half a chunk given a chunk of 64 KiB, as shorter
  // ones are, would leave 28% unused (20.7 MB).
  const WaitAttribution::NameText text = c.waits.name_text();
  EXPECT_LE(text.held, text.live + text.live / 5);
  EXPECT_EQ(text.compactions, 0u);
}

// Runs a core to the end: every member dispatched runs duration(task, member) seconds, and the
// earliest end (ties: the first dispatched) is reported next.
template <typename Duration>
void drive(Scheduler& core, Duration duration) {
  std::vector<std::pair<double, Dispatch>> running;  // (end, dispatch)
  double now = 0;
  for (;;) {
    for (const Dispatch& d : core.iterate()) running.emplace_back(now + duration(d.task, d.member), d);
    if (running.empty()) return;
    auto next = std::min_element(running.begin(), running.end(),
                                 [](const auto& a, const auto& b) { return a.first < b.first; });
    now = next->first;
    core.set_time(now);
    core.report(next->second.task, next->second.member, Outcome::kSuccess);
    running.erase(next);
  }
}

// Two chips and one callable, the wait attribution observing and trimming every 64 nodes.
struct TwoChips {
  TwoChips() : core(registry()), waits(core) {
    waits.set_trim_period(64);
    core.set_observer(&waits);
  }
  static Registry registry() {
    Registry reg;
    reg.add_next_level(WorkerId(0), WorkerKind::kLocalChip);
    reg.add_next_level(WorkerId(1), WorkerKind::kLocalChip);
    reg.add_callable({"k", Namespace::kLocalChip, std::nullopt});
    return reg;
  }
  bool submit(const std::string& name, std::uint32_t chip) {
    return core.submit_next_level(name, CallableId(0u), {}, WorkerId(chip)).accepted();
  }
  Scheduler core;
  WaitAttribution waits;
};

// Two chains started side by side: chip 0 runs 4,000 tasks of 1 s, chip 1 runs 450 of 10 s. Chip 1's
// chain is never trimmed (fewer steps than kept), so each chunk keeps a record of it among chip 0's
// freed ones: the chunks never empty and the text must be compacted. Chip 1's chain, compacted every
// time and ending last, is the critical path and must read back whole. Breaking the compaction's copy
// fails here.
TEST(WaitNodeNames, PinnedChunksAreCompacted) {
  TwoChips c;
  Scheduler& core = c.core;
  WaitAttribution& waits = c.waits;
  constexpr int kFast = 4000, kSlow = 450;
  auto name = [](int chip, int i) { return "c" + std::to_string(chip) + "-" + std::to_string(i) + std::string(100 + 37 * (i % 9), 'x'); };
  for (int i = 0; i < kFast; ++i) ASSERT_TRUE(c.submit(name(0, i), 0));
  for (int i = 0; i < kSlow; ++i) ASSERT_TRUE(c.submit(name(1, i), 1));
  drive(core, [&](TaskId t, std::uint32_t) { return core.target_index(t) == 0 ? 1.0 : 10.0; });
  EXPECT_GT(waits.name_text().compactions, 0u);
  const std::vector<CriticalStep> path = waits.critical_path();
  ASSERT_EQ(path.size(), static_cast<std::size_t>(kSlow));
  for (int j = 0; j < kSlow; ++j) {
    ASSERT_EQ(path[static_cast<std::size_t>(j)].task, name(1, j)) << "step " << j;
    EXPECT_EQ(path[static_cast<std::size_t>(j)].after, j ? name(1, j - 1) : "") << "step " << j;
  }
}

// Names that count up are kept as their distance from their chunk's anchor: a chain of t0, t1, ...
// costs a few bytes a node. Every other kind of name must read back as it was: a leading zero
// (t007), a number past 19 digits, no prefix, a number falling (a distance below the anchor), a
// number just under 10^19, and other prefixes between them. Chip 1's slow chain pins the chunks, and
// every other fast name is 200 bytes in full, so the text is compacted again and again while the
// slow chain's last kPathKept nodes are made: each of them is decoded from one chunk and counted
// again against another, several times. Breaking the zigzag (a distance below the anchor), the
// prefix's test or the compaction's decoding (a name read against another chunk's anchor, or changed)
// fails here.
TEST(WaitNodeNames, CountedNamesReadBackThroughCompaction) {
  TwoChips c;
  Scheduler& core = c.core;
  WaitAttribution& waits = c.waits;
  constexpr int kFast = 30000, kSlow = 2400;  // the slow chain ends last (31,200 s)
  auto name = [](int chip, int i) -> std::string {
    if (chip == 0) return i % 2 ? "t" + std::to_string(i) : "fast-" + std::to_string(i) + std::string(200, 'x');
    switch (i % 8) {
      case 0: return "t00" + std::to_string(i);                 // a leading zero: as it is
      case 1: return "n" + std::to_string(9999999999999999999ull - static_cast<unsigned>(i));  // 19 digits, falling
      case 2: return "x18446744073709551615" + std::to_string(i % 10);  // 21 digits: as it is
      case 3: return std::to_string(1000000 - i);               // no prefix, falling
      case 4: return "t" + std::to_string(i);                   // the fast chain's prefix
      case 5: return "0";                                       // a zero alone counts
      case 6: return "t-" + std::to_string(i) + "a";            // no number at the end
      default: return "t" + std::to_string(100000000 - i);      // far below, then above the anchor
    }
  };
  for (int i = 0; i < kFast; ++i) ASSERT_TRUE(c.submit(name(0, i), 0));
  for (int i = 0; i < kSlow; ++i) ASSERT_TRUE(c.submit(name(1, i), 1));
  // The compactions while the path's nodes are made: from the start of its first step (13 s a step).
  const double path_from = 13.0 * (kSlow - static_cast<int>(WaitAttribution::kPathKept));
  std::size_t before_path = 0;
  drive(core, [&](TaskId t, std::uint32_t) {
    if (core.now() <= path_from) before_path = waits.name_text().compactions;
    return core.target_index(t) == 0 ? 1.0 : 13.0;
  });
  EXPECT_GE(waits.name_text().compactions, before_path + 3);
  const std::vector<CriticalStep> path = waits.critical_path();
  ASSERT_EQ(path.size(), WaitAttribution::kPathKept);
  const int first = kSlow - static_cast<int>(path.size());
  for (std::size_t j = 0; j < path.size(); ++j) {
    const int i = first + static_cast<int>(j);
    ASSERT_EQ(path[j].task, name(1, i)) << "step " << j;
    EXPECT_EQ(path[j].after, name(1, i - 1)) << "step " << j;
    EXPECT_EQ(path[j].start_s, 13.0 * i) << "step " << j;
  }
}

// The fast chain alone: its last kPathKept steps read back, and its records are counted (the flag
// byte and a distance of one or two bytes; the name "t4321" in full takes 7). Writing every name in
// full fails the bound.
TEST(WaitNodeNames, NamesThatCountUpTakeAFewBytes) {
  OneChip c;
  c.waits.set_trim_period(64);
  constexpr int kTasks = 20000;
  for (int i = 0; i < kTasks; ++i) ASSERT_TRUE(c.submit("t" + std::to_string(i)));
  c.run(kTasks);
  expect_chain_tail(c.waits, kTasks, [](int i) { return "t" + std::to_string(i); });
  const WaitAttribution::NameText text = c.waits.name_text();
  EXPECT_LE(text.live, 4 * c.waits.nodes_held()) << "nodes " << c.waits.nodes_held();
}

// A name is counted only when that is no longer than the name in full: after an anchor of 19 digits,
// t0 ... t1999 (all in its chunk) are each 10 bytes of distance counted, 2 to 5 in full. Counting them
// anyway (11-byte records) fails the bound.
TEST(WaitNodeNames, ACountedNameIsNeverLongerThanInFull) {
  OneChip c;
  c.waits.set_trim_period(64);
  ASSERT_TRUE(c.submit("t9999999999999999999"));
  constexpr int kTasks = 2000;
  for (int i = 0; i < kTasks; ++i) ASSERT_TRUE(c.submit("t" + std::to_string(i)));
  c.run(kTasks + 1);
  const std::vector<CriticalStep> path = c.waits.critical_path();
  ASSERT_EQ(path.size(), WaitAttribution::kPathKept);
  EXPECT_EQ(path.back().task, "t1999");
  EXPECT_EQ(path.front().after, "t" + std::to_string(kTasks - WaitAttribution::kPathKept - 1));
  const WaitAttribution::NameText text = c.waits.name_text();
  EXPECT_LE(text.live, 7 * c.waits.nodes_held()) << "nodes " << c.waits.nodes_held();
}

// A node's start is its predecessor's end only when that end was already set at the start: a single
// behind a group's member on chip 0 starts when that member ends (1 s), while the group, whose other
// member runs 3 s, ends at 3. The single (5 s) ends last: the path is g then s, s starting at 1.
// Reading every start from the predecessor's end fails here (3).
TEST(WaitNodeNames, AStartBeforeThePredecessorsEndIsKept) {
  TwoChips c;
  Scheduler& core = c.core;
  const TaskId g = core.submit_next_level_group("g", CallableId(0u), {{}, {}}, {WorkerId(0), WorkerId(1)}).task;
  ASSERT_TRUE(g.valid());
  ASSERT_TRUE(c.submit("s", 0));
  drive(core, [&](TaskId t, std::uint32_t member) { return t == g ? (member == 0 ? 1.0 : 3.0) : 5.0; });
  const std::vector<CriticalStep> path = c.waits.critical_path();
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(path[0].task, "g");
  EXPECT_EQ(path[0].start_s, 0);
  EXPECT_EQ(path[0].end_s, 3);
  EXPECT_EQ(path[1].task, "s");
  EXPECT_EQ(path[1].after, "g");
  EXPECT_EQ(path[1].reason, StartReason::kWorker);
  EXPECT_EQ(path[1].start_s, 1);
  EXPECT_EQ(path[1].end_s, 6);
}

}  // namespace
}  // namespace dirsched
