// The Recorder observer: times, busy time, queue waits and the group starvation measures.
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_driver.hpp"

namespace dirsched::testing {
namespace {

using V = std::vector<std::string>;

TEST(Starvation, SinglesThatKeepATargetBusyOvertakeAWaitingGroup) {
  FakeDriver d(Builder().chip(0).chip(1));
  d.duration("s0", 2);
  d.single("s0", 1);     // chip 1 busy until 2
  d.group("g", {0, 1});  // READY at 0, blocked by chip 1
  d.single("a", 0);      // overtakes on chip 0 (0..1)
  d.advance_to(1.0);
  d.single("b", 0);  // chip 0 again (1..2)
  d.run();
  const TaskRecord* g = d.recorder().find("g");
  EXPECT_EQ(g->overtaken_by, (V{"a", "b"}));
  EXPECT_DOUBLE_EQ(g->ready, 0.0);
  EXPECT_DOUBLE_EQ(g->start, 2.0);
}

TEST(RecorderFind, FindsTasksRecordedAfterAnEarlierLookupAndNothingElse) {
  FakeDriver d(Builder().chip(0).chip(1));
  d.single("m", 0);
  d.run();
  ASSERT_NE(d.recorder().find("m"), nullptr);  // builds the name index
  d.single("b", 1);                            // recorded after the index was built
  d.single("z", 0);
  d.run();
  ASSERT_NE(d.recorder().find("b"), nullptr);
  EXPECT_EQ(d.recorder().find("b")->name, "b");
  EXPECT_EQ(d.recorder().find("z")->name, "z");
  EXPECT_EQ(d.recorder().find("m")->name, "m");
  EXPECT_EQ(d.recorder().find("a"), nullptr);
  EXPECT_EQ(d.recorder().find("n"), nullptr);
}

TEST(Starvation, IdleTargetTimeCountsOnlyWhileSomeTargetIsIdle) {
  FakeDriver d(Builder().chip(0).chip(1));
  d.duration("s1", 4);
  d.duration("a", 1);
  d.single("s1", 1);  // chip 1 busy 0..4
  d.group("g", {0, 1});
  d.single("a", 0);  // chip 0 busy 0..1, then idle 1..4 while g waits
  d.run();
  const TaskRecord* g = d.recorder().find("g");
  EXPECT_DOUBLE_EQ(g->start, 4.0);
  EXPECT_DOUBLE_EQ(g->idle_target_s, 3.0);
}

TEST(Starvation, GroupThatLaunchesAtOnceHasNoWaitAndNoOvertakes) {
  FakeDriver d(Builder().chip(0).chip(1));
  d.group("g", {0, 1});
  d.run();
  const TaskRecord* g = d.recorder().find("g");
  EXPECT_DOUBLE_EQ(g->idle_target_s, 0.0);
  EXPECT_TRUE(g->overtaken_by.empty());
}

TEST(RecorderStats, BusyTimeAndQueueWaitsPerWorker) {
  FakeDriver d(Builder().chip(3).chip(5).sub(1));
  d.duration("a", 2);
  d.single("a", 3);
  d.single("b", 3);  // waits 2 s in FIFO[3]
  d.sub("u");
  d.run();
  EXPECT_DOUBLE_EQ(d.recorder().next_level_busy()[0], 3.0);
  EXPECT_DOUBLE_EQ(d.recorder().next_level_busy()[1], 0.0);
  EXPECT_DOUBLE_EQ(d.recorder().sub_busy()[0], 1.0);
  auto waits = d.recorder().queue_waits();
  ASSERT_EQ(waits.count("worker:3"), 1u);
  EXPECT_EQ(waits["worker:3"].count, 2u);
  EXPECT_DOUBLE_EQ(waits["worker:3"].max, 2.0);
  EXPECT_DOUBLE_EQ(waits["worker:3"].p50, 0.0);
  EXPECT_EQ(waits.count("sub"), 1u);
  EXPECT_DOUBLE_EQ(d.recorder().last_transition(), 3.0);
}

// Retirement: a record leaves once it and every record before it are finished, in record order; a
// group's record stays for the summary; the counts, the ready waits and the groups read the same
// whether records are kept or not.
TEST(RecorderRetire, FinishedTasksLeaveInRecordOrderAndTheLiveCountDropsBackAfterADrain) {
  for (const bool keep : {false, true}) {
    SCOPED_TRACE(keep ? "keep_records" : "retire");
    FakeDriver d(Builder().chip(0).chip(1));
    std::vector<std::string> retired;
    d.recorder().set_keep_records(keep);
    d.recorder().set_on_retire([&](const TaskRecord& r) { retired.push_back(r.name); });
    d.duration("slow", 3);
    d.single("slow", 0);   // 0..3
    d.single("a", 1);      // 0..1
    d.single("b", 1);      // 1..2
    d.group("g", {0, 1});  // 3..4
    d.advance_to(2.5);
    // a and b are done, but slow, recorded before them, is not: nothing has retired yet.
    EXPECT_TRUE(retired.empty());
    EXPECT_EQ(d.recorder().live_records(), 4u);
    d.run();
    EXPECT_EQ(retired, (V{"slow", "a", "b", "g"}));
    EXPECT_EQ(d.recorder().live_records(), 0u);
    EXPECT_EQ(d.recorder().record_count(), 4u);
    EXPECT_EQ(d.recorder().tasks().size(), keep ? 4u : 0u);  // the drained records are gone
    ASSERT_EQ(d.recorder().groups().size(), 1u);
    EXPECT_EQ(d.recorder().groups()[0]->name, "g");
    EXPECT_EQ(d.recorder().groups()[0]->overtaken_by, (V{"b"}));
    EXPECT_EQ(d.recorder().state_counts().at(TaskState::kCompleted), 4u);
    std::vector<double> singles, groups;
    d.recorder().ready_waits(4, singles, groups);
    std::sort(singles.begin(), singles.end());
    EXPECT_EQ(singles, (std::vector<double>{0, 0, 1}));
    EXPECT_EQ(groups, (std::vector<double>{3}));
    // A later submit after the drain: one live record again, then none.
    d.single("late", 0);
    EXPECT_EQ(d.recorder().live_records(), 1u);
    d.run();
    EXPECT_EQ(d.recorder().live_records(), 0u);
    EXPECT_EQ(d.recorder().tasks().size(), keep ? 5u : 0u);
  }
}

}  // namespace
}  // namespace dirsched::testing
