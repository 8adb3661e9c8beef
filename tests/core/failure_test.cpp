// Completion, failure, poisoning and the fail-fast run.
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "fake_driver.hpp"

namespace dirsched::testing {
namespace {

using V = std::vector<std::string>;
FakeDriver platform() {
  return FakeDriver(Builder().chip(0).chip(1).chip(2).chip(3).sub(2));
}

TEST(Poisoning, FailedProducerPoisonsItsConsumerInsteadOfEnqueuingIt) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  d.fail("a");
  d.single("a", 0, {FakeDriver::out(x)});
  d.single("b", 1, {FakeDriver::in(x)});
  d.run();
  EXPECT_EQ(d.state("a"), TaskState::kFailed);
  EXPECT_EQ(d.state("b"), TaskState::kPoisoned);
  EXPECT_EQ(d.dispatches(), (V{"a@0"}));
  EXPECT_EQ(d.recorder().find("b")->cause, "a");
  for (const std::string& l : d.trace().lines) EXPECT_NE(l.rfind("ready b", 0), 0u) << l;
}

TEST(Poisoning, PoisonSpreadsTransitively) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x"), y = d.buffer("y"), z = d.buffer("z");
  d.fail("a");
  d.single("a", 0, {FakeDriver::out(x)});
  d.single("b", 1, {FakeDriver::in(x), FakeDriver::out(y)});
  d.single("c", 2, {FakeDriver::in(y), FakeDriver::out(z)});
  d.sub("d", {FakeDriver::in(z)});
  d.run();
  EXPECT_EQ(d.state("b"), TaskState::kPoisoned);
  EXPECT_EQ(d.state("c"), TaskState::kPoisoned);
  EXPECT_EQ(d.state("d"), TaskState::kPoisoned);
  EXPECT_EQ(d.recorder().find("b")->cause, "a");
  EXPECT_EQ(d.recorder().find("c")->cause, "b");
  EXPECT_EQ(d.core().non_terminal_tasks(), 0u);
}

TEST(Poisoning, UnrelatedTasksStillRun) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  d.fail("a");
  d.single("a", 0, {FakeDriver::out(x)});
  d.single("b", 1, {FakeDriver::in(x)});
  d.single("c", 1);
  d.run();
  EXPECT_EQ(d.state("c"), TaskState::kCompleted);
}

TEST(Poisoning, UnderFailFastASubmitAfterTheFailureRaisesInsteadOfPoisoning) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  d.fail("a");
  d.single("a", 0, {FakeDriver::out(x)});
  d.run();
  SubmitResult r = d.single("late", 1, {FakeDriver::in(x)});
  EXPECT_FALSE(r.accepted());
  EXPECT_EQ(r.rejection->code, ErrorCode::kRunFailed);
  EXPECT_EQ(d.state("late"), TaskState::kNotSubmitted);
}

// Fail-fast makes every submit after a failure raise, so the submit-time poison rule is only
// reachable with fail-fast off (Options::fail_fast = false, a what-if switch of the core).
FakeDriver no_fail_fast() {
  Scheduler::Options o;
  o.fail_fast = false;
  return FakeDriver(Builder().chip(0).chip(1).chip(2).chip(3).sub(2), o);
}

TEST(Poisoning, ConsumerOfAFailedProducerIsPoisonedAtSubmit) {
  FakeDriver d = no_fail_fast();
  BufferId x = d.buffer("x");
  d.fail("a");
  d.single("a", 0, {FakeDriver::out(x)});
  d.run();
  SubmitResult r = d.single("late", 1, {FakeDriver::in(x)});
  EXPECT_TRUE(r.accepted());
  EXPECT_EQ(d.state("late"), TaskState::kPoisoned);
  EXPECT_EQ(d.recorder().find("late")->cause, "a");
  EXPECT_EQ(d.dispatches(), (V{"a@0"}));
  EXPECT_EQ(d.core().worker_queue_length(1), 0u);
}

TEST(Poisoning, ConsumerOfAPoisonedProducerIsPoisonedAtSubmit) {
  FakeDriver d = no_fail_fast();
  BufferId x = d.buffer("x"), y = d.buffer("y");
  d.fail("a");
  d.single("a", 0, {FakeDriver::out(x)});
  d.single("b", 1, {FakeDriver::in(x), FakeDriver::out(y)});
  d.run();
  ASSERT_EQ(d.state("b"), TaskState::kPoisoned);
  d.sub("late", {FakeDriver::in(y)});
  EXPECT_EQ(d.state("late"), TaskState::kPoisoned);
  EXPECT_EQ(d.core().sub_queue_length(), 0u);
}

TEST(Poisoning, PoisonedAtSubmitTaskStillPoisonsItsOwnConsumers) {
  FakeDriver d = no_fail_fast();
  BufferId x = d.buffer("x"), y = d.buffer("y");
  d.fail("a");
  d.single("a", 0, {FakeDriver::out(x)});
  d.run();
  d.single("b", 1, {FakeDriver::in(x), FakeDriver::out(y)});
  d.single("c", 2, {FakeDriver::in(y)});
  EXPECT_EQ(d.state("c"), TaskState::kPoisoned);
  EXPECT_EQ(d.recorder().find("c")->cause, "b");
}

TEST(Poisoning, AFailedProducerOutweighsALiveOneAtSubmit) {
  FakeDriver d = no_fail_fast();
  BufferId x = d.buffer("x"), y = d.buffer("y");
  d.fail("a");
  d.single("a", 0, {FakeDriver::out(x)});
  d.run();
  d.duration("live", 5);
  d.single("live", 1, {FakeDriver::out(y)});
  d.single("c", 2, {FakeDriver::in(y), FakeDriver::in(x)});
  EXPECT_EQ(d.state("c"), TaskState::kPoisoned);
}

TEST(GroupFailure, GroupWaitsForRunningSiblingsBeforeFailing) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  d.fail("g", 0);
  d.durations("g", {1, 4});
  d.group("g", {0, 1}, {{FakeDriver::out(x)}, {}});
  d.single("c", 2, {FakeDriver::in(x)});
  d.step();  // member 0 failed at 1
  EXPECT_EQ(d.state("g"), TaskState::kRunning);
  EXPECT_EQ(d.state("c"), TaskState::kPending);
  d.run();
  EXPECT_EQ(d.state("g"), TaskState::kFailed);
  EXPECT_DOUBLE_EQ(d.recorder().find("g")->end, 4.0);
  EXPECT_EQ(d.state("c"), TaskState::kPoisoned);
  EXPECT_DOUBLE_EQ(d.recorder().find("c")->end, 4.0);
}

TEST(GroupFailure, FirstMemberFailureInCompletionOrderIsTheGroupsFailure) {
  FakeDriver d = platform();
  d.fail("g", 0);
  d.fail("g", 2);
  d.durations("g", {3, 1, 2});
  d.group("g", {0, 1, 2});
  d.run();
  const Event* fail = nullptr;
  for (const Event& e : d.trace().events)
    if (e.kind == EventKind::kFail) fail = &e;
  ASSERT_NE(fail, nullptr);
  EXPECT_EQ(fail->member, 2u);  // member 2 failed at 2, before member 0 at 3
  EXPECT_EQ(d.core().run_error()->member, 2u);
}

TEST(GroupFailure, SiblingsOfAFailedMemberRunToTheEnd) {
  FakeDriver d = platform();
  d.fail("g", 1);
  d.durations("g", {5, 1});
  d.group("g", {0, 1});
  d.run();
  const std::optional<TaskRecord> g = d.recorder().find("g");
  EXPECT_DOUBLE_EQ(g->members[0].end, 5.0);
  EXPECT_EQ(g->members[0].outcome, Outcome::kSuccess);
  EXPECT_EQ(g->members[1].outcome, Outcome::kFailure);
}

TEST(GroupFailure, GroupCompletesOnlyAfterEveryMember) {
  FakeDriver d = platform();
  d.durations("g", {1, 2, 3});
  d.group("g", {0, 1, 2});
  d.step();
  d.step();
  EXPECT_EQ(d.state("g"), TaskState::kRunning);
  d.step();
  EXPECT_EQ(d.state("g"), TaskState::kCompleted);
  std::size_t completes = 0;
  for (const Event& e : d.trace().events) completes += e.kind == EventKind::kComplete;
  EXPECT_EQ(completes, 1u);
}

TEST(FailFast, FirstFailureBecomesTheRunErrorWhenItsCompletionIsApplied) {
  FakeDriver d = platform();
  d.fail("a");
  d.duration("a", 2);
  d.single("a", 0);
  EXPECT_FALSE(d.core().run_error().has_value());
  d.step();
  ASSERT_TRUE(d.core().run_error().has_value());
  EXPECT_EQ(d.core().name(d.core().run_error()->task), "a");
}

TEST(FailFast, NextSubmitRaisesAndIsNotSubmitted) {
  FakeDriver d = platform();
  d.fail("a");
  d.single("a", 0);
  d.single("b", 1);
  d.step();
  SubmitResult r = d.single("c", 2);
  EXPECT_FALSE(r.accepted());
  EXPECT_EQ(r.rejection->code, ErrorCode::kRunFailed);
  EXPECT_EQ(d.state("c"), TaskState::kNotSubmitted);
  EXPECT_EQ(d.core().task_count(), 2u);
}

TEST(FailFast, InvalidSubmitAfterTheFailureIsRejectedWithItsOwnCode) {
  FakeDriver d = platform();
  d.fail("a");
  d.single("a", 0);
  d.step();
  ASSERT_TRUE(d.core().run_error().has_value());
  // Validation comes before fail-fast: each invalid submit keeps its own code and the run goes on.
  SubmitResult negative = d.single("bad", -1);
  ASSERT_FALSE(negative.accepted());
  EXPECT_EQ(negative.rejection->code, ErrorCode::kWorkerNegative);
  EXPECT_EQ(d.state("bad"), TaskState::kRejected);
  SubmitResult unknown = d.single("bad2", 99);
  ASSERT_FALSE(unknown.accepted());
  EXPECT_EQ(unknown.rejection->code, ErrorCode::kWorkerNotRegistered);
  // Only a valid submit meets fail-fast.
  SubmitResult valid = d.single("c", 1);
  ASSERT_FALSE(valid.accepted());
  EXPECT_EQ(valid.rejection->code, ErrorCode::kRunFailed);
  EXPECT_EQ(d.state("c"), TaskState::kNotSubmitted);
  EXPECT_EQ(d.trace().lines.back(), "not_submitted c");
}

TEST(FailFast, LaterFailuresDoNotReplaceTheFirstError) {
  FakeDriver d = platform();
  d.fail("a");
  d.fail("b");
  d.duration("b", 2);
  d.single("a", 0);
  d.single("b", 1);
  d.run();
  EXPECT_EQ(d.core().name(d.core().run_error()->task), "a");
}

TEST(FailFast, TasksAlreadySubmittedStillReachATerminalState) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  d.fail("a");
  d.single("a", 0, {FakeDriver::out(x)});
  d.single("b", 1, {FakeDriver::in(x)});
  d.duration("c", 3);
  d.single("c", 2);
  d.step();
  d.core().not_submitted("later");
  d.run();
  EXPECT_EQ(d.state("b"), TaskState::kPoisoned);
  EXPECT_EQ(d.state("c"), TaskState::kCompleted);
  EXPECT_EQ(d.state("later"), TaskState::kNotSubmitted);
  EXPECT_EQ(d.core().non_terminal_tasks(), 0u);
}

TEST(Lifecycle, TransitionTableAllowsOnlyTheDocumentedMoves) {
  using S = TaskState;
  EXPECT_TRUE(transition_allowed(std::nullopt, S::kPending));
  EXPECT_TRUE(transition_allowed(std::nullopt, S::kReady));
  EXPECT_TRUE(transition_allowed(std::nullopt, S::kPoisoned));
  EXPECT_FALSE(transition_allowed(std::nullopt, S::kRunning));
  EXPECT_TRUE(transition_allowed(S::kPending, S::kReady));
  EXPECT_TRUE(transition_allowed(S::kPending, S::kPoisoned));
  EXPECT_FALSE(transition_allowed(S::kPending, S::kRunning));
  EXPECT_TRUE(transition_allowed(S::kReady, S::kRunning));
  EXPECT_FALSE(transition_allowed(S::kReady, S::kPoisoned));
  EXPECT_TRUE(transition_allowed(S::kRunning, S::kCompleted));
  EXPECT_TRUE(transition_allowed(S::kRunning, S::kFailed));
  EXPECT_FALSE(transition_allowed(S::kCompleted, S::kFailed));
  EXPECT_FALSE(transition_allowed(S::kPoisoned, S::kReady));
}

TEST(Lifecycle, WorkerIsBusyUntilItsCompletionIsApplied) {
  FakeDriver d = platform();
  Scheduler& core = d.core();
  core.submit(d.single_request("a", 0));
  core.submit(d.single_request("b", 0));
  const TaskId a = core.iterate().at(0).task;
  core.report(a, 0, Outcome::kSuccess);
  EXPECT_TRUE(core.worker_busy(0));  // reported, not yet applied
  const auto& next = core.iterate();
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(core.name(next[0].task), "b");
}

// Which member of a running group has failed is part of the core's state: two states that differ only
// in it have different futures (the group ends FAILED or COMPLETED, and a FAILED one names its first
// failing member), so the explorer's encode() and the checker's dump() tell them apart, also when an
// earlier failure already set the run's error.
TEST(GroupFailure, AFailedMemberOfARunningGroupIsPartOfTheEncodingAndTheDump) {
  auto to_two = [](FakeDriver& d, const std::vector<std::uint32_t>& failing) {
    d.fail("s", 0);
    d.duration("s", 1);
    for (std::uint32_t m : failing) d.fail("g", m);
    d.durations("g", {2, 2, 5});
    d.single("s", 3);
    d.group("g", {0, 1, 2});
    d.step();  // s failed at 1: the run's error is set
    d.step();  // g's members 0 and 1 ended at 2; member 2 runs until 5
    EXPECT_EQ(d.state("g"), TaskState::kRunning);
  };
  FakeDriver none = platform(), first = platform(), second = platform();
  to_two(none, {});
  to_two(first, {0});
  to_two(second, {1});
  std::vector<std::uint32_t> a, b, c;
  none.core().encode(a);
  first.core().encode(b);
  second.core().encode(c);
  EXPECT_NE(a, b);
  EXPECT_NE(b, c);
  EXPECT_NE(none.core().dump(), first.core().dump());
  EXPECT_NE(first.core().dump(), second.core().dump());
}

}  // namespace
}  // namespace dirsched::testing
