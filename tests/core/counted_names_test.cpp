// Names that count up (Scheduler::hold_name): a task named as the previous task's prefix with its
// number plus one holds no text; its name is read from its run's base. Every name reads back exactly,
// in name(), in the events and in dump(), whichever way the count breaks, and through reclamation.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "fake_driver.hpp"

namespace dirsched::testing {
namespace {

// Names that count, and names that break the count in each way hold_name tests: another prefix, a
// leading zero, a number that does not follow (the same, falling, skipping), no number, no prefix, a
// 19-digit number and the 20-digit one after it, digits inside the prefix.
std::vector<std::string> awkward_names() {
  std::vector<std::string> names;
  for (int i = 0; i < 3000; ++i) names.push_back("t" + std::to_string(i));
  for (const char* n : {"u3000", "t3001", "t3002", "t03003", "t3003", "t3004", "t3004", "t3003", "t3005",
                        "t3007", "t3008", "x", "x1", "1", "2", "3", "9999999999999999998",
                        "9999999999999999999", "10000000000000000000", "a1b2", "a1b3", "a1b4", "a2b5",
                        "", "0", "1", "t", "t0", "t1", "t1"})
    names.emplace_back(n);
  return names;
}

TEST(CountedNames, EveryNameReadsBackAndACountedOneHoldsNoText) {
  FakeDriver d(Builder().chip(0).chip(1));
  d.duration("t10", 5000);  // chip 0 waits: chip 1's tasks, of every run, end first
  const std::vector<std::string> names = awkward_names();
  std::vector<TaskId> ids;
  for (std::size_t i = 0; i < names.size(); ++i) ids.push_back(d.single(names[i], static_cast<std::int64_t>(i % 2)).task);
  for (std::size_t i = 0; i < names.size(); ++i) ASSERT_EQ(d.core().name(ids[i]), names[i]) << i;
  // t0 in full; t1..t2999 and the later runs' counted tasks hold nothing (their names in full: 13,888
  // bytes for t1..t2999 alone).
  std::size_t full = 0;
  for (const std::string& n : names) full += n.size();
  EXPECT_LT(d.core().name_bytes(), 200u) << "of " << full;
  // The events carry the same names: each task's submit line, in order.
  std::vector<std::string> submits;
  for (const std::string& line : d.trace().lines)
    if (line.rfind("submit ", 0) == 0) submits.push_back(line.substr(7));
  EXPECT_EQ(submits, names);
  d.run();
  EXPECT_EQ(d.dispatches().size(), names.size());
  std::vector<std::string> dispatched;
  for (const std::string& dispatch : d.dispatches()) dispatched.push_back(dispatch.substr(0, dispatch.rfind('@')));
  std::sort(dispatched.begin(), dispatched.end());
  EXPECT_NE(d.core().dump().find("  t2999 single COMPLETED"), std::string::npos);
  // Every event's name, in any order of tasks (a dispatch, an end: the runs read back out of turn).
  std::vector<std::string> ends;
  for (const std::string& line : d.trace().lines)
    if (line.rfind("complete ", 0) == 0) ends.push_back(line.substr(9));
  std::vector<std::string> sorted_ends = ends, sorted_names = names;
  std::sort(sorted_ends.begin(), sorted_ends.end());
  std::sort(sorted_names.begin(), sorted_names.end());
  EXPECT_EQ(sorted_ends, sorted_names);
  EXPECT_EQ(dispatched, sorted_names);
  EXPECT_NE(ends, names);  // two chips: not in submit order
  // A copy of the core (explorers copy it) reads the same names.
  const Scheduler copy = d.core();
  EXPECT_EQ(copy.dump(), d.core().dump());
  EXPECT_EQ(copy.name(ids[2999]), "t2999");
}

// A count past 19 digits stops: 10^19 has 20 and is written in full, as is the one after it.
TEST(CountedNames, ACountStopsPastNineteenDigits) {
  FakeDriver d(Builder().chip(0));
  for (const char* n : {"9999999999999999998", "9999999999999999999", "10000000000000000000", "10000000000000000001"})
    d.single(n, 0);
  EXPECT_EQ(d.core().name_bytes(), 19u + 20u + 20u);
  EXPECT_EQ(d.core().name(TaskId(3u)), "10000000000000000001");
}

// A run's base keeps its text while a task of its run is held, though the base itself is reclaimed;
// a name after a reclaimed task does not count from it (its text may be gone). The prefix is longer
// than a compaction's least front (4,096 bytes), so a base whose text went with the base, or a count
// from a task gone, reads its names from other text.
TEST(CountedNames, ARunOutlivesItsBaseThroughReclamation) {
  FakeDriver d(Builder().chip(0).chip(1));
  d.core().set_reclaim(true);
  d.recorder().set_keep_records(false);
  const std::string p(5000, 'p');
  const auto name = [&](int i) { return p + std::to_string(i); };
  d.duration(name(9000), 1000);  // on chip 0 from t = 4,500: holds the window from it on
  for (int i = 0; i < 12000; ++i) d.single(name(i), i % 2);
  d.advance_to(5000);
  EXPECT_EQ(d.core().reclaimed_before(), 9000u);
  EXPECT_LT(d.core().held_tasks(), 7000u);  // compacted past the base
  EXPECT_EQ(d.core().name(TaskId(9000u)), name(9000));
  EXPECT_EQ(d.core().name(TaskId(11999u)), name(11999));
  for (int i = 12000; i < 12010; ++i) d.single(name(i), i % 2);
  EXPECT_EQ(d.core().name(TaskId(12009u)), name(12009));
  EXPECT_EQ(d.core().name_bytes(), p.size() + 1);  // the base's text only
  d.run();
  d.batch({});  // an iteration: it reclaims what the last one ended
  // Nothing is held, and no text: the next name is written in full, and the one after counts from it.
  EXPECT_EQ(d.core().reclaimed_before(), 12010u);
  EXPECT_EQ(d.core().name_bytes(), 0u);
  const TaskId next = d.single(name(12010), 0).task;
  const TaskId after = d.single(name(12011), 1).task;
  EXPECT_EQ(d.core().name(next), name(12010));
  EXPECT_EQ(d.core().name(after), name(12011));
  EXPECT_EQ(d.core().name_bytes(), p.size() + 5);
  d.run();
  EXPECT_EQ(d.recorder().state_counts().at(TaskState::kCompleted), 12012u);
}

}  // namespace
}  // namespace dirsched::testing
