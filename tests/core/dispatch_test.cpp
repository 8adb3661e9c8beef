// One scheduler iteration: group pass, singles pass, SUB pass, and the iterations of one instant.
#include <gtest/gtest.h>

#include "fake_driver.hpp"

namespace dirsched::testing {
namespace {

using V = std::vector<std::string>;
FakeDriver chips(std::vector<std::int64_t> ids, std::uint32_t subs = 0) {
  Builder b;
  for (std::int64_t id : ids) b.chip(id);
  b.sub(subs);
  return FakeDriver(std::move(b));
}

TEST(GroupDispatch, MemberIGoesToWorkersIByIdNotByIndex) {
  FakeDriver d = chips({40, 7, 1000, 3});
  d.group("g", {1000, 3, 40});
  EXPECT_EQ(d.dispatches(), (V{"g[0]@1000", "g[1]@3", "g[2]@40"}));
  EXPECT_EQ(d.core().target(TaskId(0u), 0).value(), 1000);
}

TEST(GroupDispatch, LaunchesOnlyWhenEveryTargetIsIdle) {
  FakeDriver d = chips({0, 1, 2});
  d.duration("busy", 2);
  d.single("busy", 1);
  d.group("g", {0, 1});
  EXPECT_EQ(d.state("g"), TaskState::kReady);
  d.step();
  EXPECT_EQ(d.dispatches(), (V{"busy@1", "g[0]@0", "g[1]@1"}));
  EXPECT_DOUBLE_EQ(d.recorder().find("g")->start, 2.0);
}

TEST(GroupDispatch, LaunchesAllMembersInOneIteration) {
  FakeDriver d = chips({0, 1, 2, 3});
  d.group("g", {3, 2, 1, 0});
  ASSERT_EQ(d.trace().events.size(), 7u);  // submit, ready, launched, 4 dispatches
  for (std::size_t i = 3; i < 7; ++i) EXPECT_EQ(d.trace().events[i].kind, EventKind::kDispatch);
  EXPECT_EQ(d.iterations(), 2u);  // one that launched, one that found nothing
}

TEST(GroupDispatch, BlockedGroupReservesNothing) {
  FakeDriver d = chips({0, 1});
  d.duration("busy", 5);
  d.single("busy", 1);
  d.group("g", {0, 1});
  // Chip 0 is idle and g waits for chip 1: a later single still takes chip 0.
  d.single("s", 0);
  EXPECT_EQ(d.dispatches(), (V{"busy@1", "s@0"}));
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"busy@1", "s@0", "g[0]@0", "g[1]@1"}));
}

TEST(GroupDispatch, LaunchableGroupIsTriedBeforeConflictingSingles) {
  FakeDriver d = chips({0, 1});
  // In one batch a single for chip 0 comes first, then a group on chips 0 and 1: the group wins.
  d.batch({d.single_request("s", 0), d.group_request("g", {0, 1})});
  EXPECT_EQ(d.dispatches(), (V{"g[0]@0", "g[1]@1"}));
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"g[0]@0", "g[1]@1", "s@0"}));
}

TEST(GroupDispatch, WorkerJustLaunchedOnGetsNoSingleInThatIteration) {
  FakeDriver d = chips({0, 1});
  d.duration("g", 0);
  d.duration("s", 0);
  d.batch({d.single_request("s", 0), d.group_request("g", {0, 1})});
  // g members are zero-length: they complete "at once", s runs in a later iteration of the instant.
  EXPECT_EQ(d.dispatches(), (V{"g[0]@0", "g[1]@1", "s@0"}));
  EXPECT_DOUBLE_EQ(d.recorder().find("s")->start, 0.0);
}

TEST(GroupDispatch, OnlyTheGroupHeadIsExamined) {
  FakeDriver d = chips({0, 1, 2, 3});
  d.duration("busy", 5);
  d.single("busy", 0);
  d.group("head", {0, 1});
  d.group("behind", {2, 3});  // launchable, but behind a blocked head
  EXPECT_EQ(d.dispatches(), (V{"busy@0"}));
  EXPECT_EQ(d.core().group_queue_length(), 2u);
  d.step();
  EXPECT_EQ(d.dispatches(), (V{"busy@0", "head[0]@0", "head[1]@1", "behind[0]@2", "behind[1]@3"}));
}

TEST(GroupDispatch, ConsecutiveLaunchableGroupsLaunchInOnePass) {
  FakeDriver d = chips({0, 1, 2, 3});
  d.batch({d.group_request("g1", {0, 1}), d.group_request("g2", {2, 3}), d.group_request("g3", {1, 2})});
  EXPECT_EQ(d.dispatches(), (V{"g1[0]@0", "g1[1]@1", "g2[0]@2", "g2[1]@3"}));
  // Both launched in the first iteration of the batch's instant.
  const auto& ev = d.trace().events;
  std::size_t launched = 0;
  for (const Event& e : ev) launched += e.kind == EventKind::kGroupLaunched;
  EXPECT_EQ(launched, 2u);
}

TEST(GroupDispatch, BlockedHeadStopsThePassAndLaterGroupsAreNotExamined) {
  FakeDriver d = chips({0, 1, 2, 3});
  d.batch({d.group_request("g1", {0, 1}), d.group_request("g2", {1, 2}), d.group_request("g3", {3, 2})});
  EXPECT_EQ(d.dispatches(), (V{"g1[0]@0", "g1[1]@1"}));
  d.step();
  EXPECT_EQ(d.dispatches_since(2), (V{"g2[0]@1", "g2[1]@2"}));
  d.step();
  EXPECT_EQ(d.dispatches_since(4), (V{"g3[0]@3", "g3[1]@2"}));
}

TEST(GroupDispatch, BlockedHeadIsReportedOncePerBusySet) {
  FakeDriver d = chips({0, 1, 2});
  d.duration("b1", 2);
  d.duration("b2", 3);
  d.single("b1", 1);
  d.single("b2", 2);
  d.group("g", {0, 1, 2});
  d.single("x", 0);
  d.run();
  V blocked;
  for (const std::string& l : d.trace().lines)
    if (l.rfind("group_blocked", 0) == 0) blocked.push_back(l);
  EXPECT_EQ(blocked, (V{"group_blocked g busy=1,2,", "group_blocked g busy=0,1,2,",
                        "group_blocked g busy=1,2,", "group_blocked g busy=2,"}));
}

// A group of one member is a single in every way; only its events say which op submitted it.

TEST(OneMemberGroup, GoesToTheFifoOfItsWorkerNeverToTheGroupFifo) {
  FakeDriver d = chips({0, 1, 2});
  d.duration("busy", 5);
  d.single("busy", 1);
  d.group("one", {1});
  EXPECT_EQ(d.trace().lines.back(), "ready one worker:1");
  EXPECT_EQ(d.core().group_queue_length(), 0u);
  EXPECT_EQ(d.core().worker_queue_length(1), 1u);
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"busy@1", "one@1"}));
}

TEST(OneMemberGroup, IsNotHeldBehindABlockedGroupHead) {
  FakeDriver d = chips({0, 1, 2, 3});
  d.duration("busy", 5);
  d.single("busy", 0);
  d.group("head", {0, 1});  // blocked on chip 0
  d.group("one", {2});      // a group would wait behind the head; a single runs now
  EXPECT_EQ(d.dispatches(), (V{"busy@0", "one@2"}));
  EXPECT_EQ(d.core().group_queue_length(), 1u);
}

TEST(OneMemberGroup, IsServedByTheSinglesPassAfterTheGroupPass) {
  FakeDriver d = chips({0, 1});
  // In one batch the one-member group comes first; the two-member group still launches first.
  SubmitRequest one = d.group_request("one", {0});
  d.batch({one, d.group_request("g", {0, 1})});
  EXPECT_EQ(d.dispatches(), (V{"g[0]@0", "g[1]@1"}));
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"g[0]@0", "g[1]@1", "one@0"}));
}

TEST(OneMemberGroup, WaitsBehindEarlierSinglesInItsWorkersFifo) {
  FakeDriver d = chips({0, 1});
  d.duration("busy", 2);
  d.single("busy", 0);
  d.single("s1", 0);
  d.group("one", {0});
  d.single("s2", 0);
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"busy@0", "s1@0", "one@0", "s2@0"}));
}

TEST(OneMemberGroup, EventsStillSayWhichOpSubmittedIt) {
  FakeDriver d = chips({0, 1});
  d.group("one", {1});
  d.run();
  std::size_t submits = 0;
  for (const Event& e : d.trace().events) {
    EXPECT_NE(e.kind, EventKind::kGroupLaunched);
    EXPECT_EQ(e.task_kind, TaskKind::kSingle);
    EXPECT_EQ(e.op_kind, TaskKind::kGroup);
    submits += e.kind == EventKind::kSubmit;
  }
  EXPECT_EQ(submits, 1u);
  EXPECT_EQ(d.core().kind(TaskId(0u)), TaskKind::kSingle);
  EXPECT_EQ(d.recorder().find("one")->kind, TaskKind::kSingle);
  EXPECT_EQ(d.state("one"), TaskState::kCompleted);
}

TEST(OneMemberGroup, SubGroupOfOneIsASubSingle) {
  FakeDriver d = chips({0}, 2);
  d.sub_group("sg", 1);
  EXPECT_EQ(d.core().kind(TaskId(0u)), TaskKind::kSub);
  EXPECT_EQ(d.trace().events.front().op_kind, TaskKind::kSubGroup);
  EXPECT_EQ(d.dispatches(), (V{"sg@sub0"}));
}

TEST(SinglesPass, DispatchesOneSinglePerIdleWorkerPerIteration) {
  FakeDriver d = chips({0, 1});
  Scheduler& core = d.core();
  core.submit(d.single_request("a1", 0));
  core.submit(d.single_request("a2", 0));
  core.submit(d.single_request("b1", 1));
  const auto& first = core.iterate();
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(core.name(first[0].task), "a1");
  EXPECT_EQ(core.name(first[1].task), "b1");
  const TaskId a1 = first[0].task;
  core.report(a1, 0, Outcome::kSuccess);
  const auto& second = core.iterate();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(core.name(second[0].task), "a2");
}

TEST(SinglesPass, VisitsWorkersInRegistrationOrder) {
  FakeDriver d = chips({9, 2, 5});
  d.batch({d.single_request("to5", 5), d.single_request("to2", 2), d.single_request("to9", 9)});
  EXPECT_EQ(d.dispatches(), (V{"to9@9", "to2@2", "to5@5"}));
}

TEST(SinglesPass, KeepsEachWorkerFifoInSubmitOrder) {
  FakeDriver d = chips({0});
  for (int i = 0; i < 5; ++i) d.single("t" + std::to_string(i), 0);
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"t0@0", "t1@0", "t2@0", "t3@0", "t4@0"}));
}

TEST(SinglesPass, NonContiguousIdsAreTargetsNotIndices) {
  FakeDriver d = chips({100, 3});
  d.single("a", 3);
  d.single("b", 100);
  EXPECT_EQ(d.dispatches(), (V{"a@3", "b@100"}));
}

TEST(SinglesPass, CostDoesNotGrowWithIdleWorkers) {
  // With 4096 idle workers and work on two of them, one iteration dispatches exactly those two;
  // the runnable set holds only workers with queued work.
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 4096; ++i) ids.push_back(i);
  FakeDriver d = chips(ids);
  d.batch({d.single_request("a", 4000), d.single_request("b", 17)});
  EXPECT_EQ(d.dispatches(), (V{"b@17", "a@4000"}));
}

TEST(SubPass, SingleTakesTheLowestIndexIdleSubWorker) {
  FakeDriver d = chips({}, 3);
  d.duration("u0", 5);
  d.sub("u0");
  d.sub("u1");
  d.step();  // u1 ends at 1
  d.sub("u2");
  EXPECT_EQ(d.dispatches(), (V{"u0@sub0", "u1@sub1", "u2@sub1"}));
}

TEST(SubPass, GroupTakesTheNLowestIndexIdleSubWorkers) {
  FakeDriver d = chips({}, 4);
  d.duration("u", 5);
  d.sub("u");
  d.sub_group("sg", 2);
  EXPECT_EQ(d.dispatches(), (V{"u@sub0", "sg[0]@sub1", "sg[1]@sub2"}));
}

TEST(SubPass, EntryThatDoesNotFitGoesToTheTailAndTheRepeatLetsLaterEntriesRun) {
  FakeDriver d = chips({}, 2);
  d.duration("u0", 5);
  d.sub("u0");
  // Batch: a SUB group needing 2 workers (only 1 idle), then a single that fits.
  SubmitRequest g;
  g.kind = TaskKind::kSubGroup;
  g.name = "sg";
  g.callable = d.py();
  g.args.resize(2);
  SubmitRequest s;
  s.kind = TaskKind::kSub;
  s.name = "s";
  s.callable = d.py();
  s.args.resize(1);
  d.batch({g, s});
  // Iteration 1: sg does not fit, goes to the tail, pass stops. Iteration 2 (repeat rule): s runs.
  EXPECT_EQ(d.dispatches(), (V{"u0@sub0", "s@sub1"}));
  EXPECT_EQ(d.core().sub_queue_length(), 1u);
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"u0@sub0", "s@sub1", "sg[0]@sub0", "sg[1]@sub1"}));
}

TEST(SubPass, PassStopsAtTheFirstEntryThatDoesNotFit) {
  FakeDriver d = chips({}, 2);
  Scheduler& core = d.core();
  d.duration("u0", 5);
  d.sub("u0");
  SubmitRequest g;
  g.kind = TaskKind::kSubGroup;
  g.name = "sg";
  g.callable = d.py();
  g.args.resize(2);
  core.submit(g);
  SubmitRequest s = g;
  s.kind = TaskKind::kSub;
  s.name = "s";
  s.args.resize(1);
  core.submit(s);
  // A single iteration: sg is requeued and the pass stops before s.
  EXPECT_TRUE(core.iterate().empty());
  EXPECT_EQ(core.sub_queue_length(), 2u);
  const auto& next = core.iterate();  // s is now the head
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(core.name(next[0].task), "s");
}

TEST(SubPass, RepeatRuleRunsAsManyIdleIterationsAsTheSubFifoHolds) {
  FakeDriver d = chips({}, 1);
  d.duration("u0", 5);
  d.sub("u0");
  const std::size_t before = d.iterations();
  d.sub_group("g1", 2);
  d.sub_group("g2", 2);
  d.sub_group("g3", 2);
  // After g3 the SUB FIFO holds 3 entries that cannot fit: the instant runs 3 idle iterations.
  const std::size_t after_three = d.iterations();
  d.sub("fits_later");
  EXPECT_EQ(d.iterations() - after_three, 4u);  // 4 entries now, none fits (sub0 is busy)
  EXPECT_EQ(after_three - before, 1u + 2u + 3u);
}

TEST(SubPass, SubTasksNeverUseNextLevelWorkers) {
  FakeDriver d = chips({0, 1}, 1);
  d.sub("u0");
  d.sub("u1");
  EXPECT_EQ(d.dispatches(), (V{"u0@sub0"}));
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"u0@sub0", "u1@sub0"}));
}

TEST(Instant, CompletionsAtOneInstantApplyInDispatchOrder) {
  FakeDriver d = chips({0, 1, 2});
  BufferId x = d.buffer("x"), y = d.buffer("y");
  d.single("p1", 1, {FakeDriver::out(x)});
  d.single("p0", 0, {FakeDriver::out(y)});
  d.single("cy", 2, {FakeDriver::in(y)});
  d.single("cx", 2, {FakeDriver::in(x)});
  d.step();  // p1 and p0 end together at 1; p1 was dispatched first, so cx is routed first
  V ready;
  for (const std::string& l : d.trace().lines)
    if (l.rfind("ready c", 0) == 0) ready.push_back(l);
  EXPECT_EQ(ready, (V{"ready cx worker:2", "ready cy worker:2"}));
  EXPECT_EQ(d.dispatches().back(), "cx@2");
}

TEST(Instant, ZeroLengthDispatchCompletesInTheSameInstant) {
  FakeDriver d = chips({0});
  BufferId x = d.buffer("x");
  d.duration("a", 0);
  d.duration("b", 0);
  d.single("a", 0, {FakeDriver::out(x)});
  d.single("b", 0, {FakeDriver::in(x)});
  EXPECT_EQ(d.state("b"), TaskState::kCompleted);
  EXPECT_DOUBLE_EQ(d.recorder().find("b")->end, 0.0);
}

TEST(Instant, SchedulerSeesEachSubmitBeforeTheNext) {
  FakeDriver d = chips({0, 1});
  d.single("s", 0);  // dispatched before the group is submitted
  d.group("g", {0, 1});
  EXPECT_EQ(d.dispatches(), (V{"s@0"}));
}

}  // namespace
}  // namespace dirsched::testing
