// The ladder switch run_cancellation (#1541): at the instant a run's callback raises, every task of
// that run that is PENDING or READY ends CANCELLED (one cancel event each, in submit order, cause = the
// run's error), leaves its queue and never runs; running members run to their end. Off: nothing is
// cancelled. Under both, a member failure after the callback returned cancels nothing.
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_driver.hpp"

namespace dirsched::testing {
namespace {

using V = std::vector<std::string>;


V lines_of(const FakeDriver& d, const std::string& kind) {
  V out;
  for (const std::string& l : d.trace().lines)
    if (l.rfind(kind + " ", 0) == 0) out.push_back(l);
  return out;
}

// One run whose callback has, when it raises: a running on worker 0, b READY behind it, c PENDING on
// a, the group g READY and blocked (worker 0 busy), s1 running on the SUB worker and s2 READY behind it.
RunId every_state(FakeDriver& d) {
  BufferId x = d.buffer("x");
  const RunId r = d.core().add_run("r");
  d.duration("a", 2);
  d.duration("s1", 2);
  d.core().begin_run(r);
  d.single("a", 0, {FakeDriver::out(x)});
  d.single("b", 0);
  d.single("c", 1, {FakeDriver::in(x)});
  d.group("g", {0, 2});
  d.sub("s1");
  d.sub("s2");
  EXPECT_EQ(d.state("b"), TaskState::kReady);
  EXPECT_EQ(d.state("c"), TaskState::kPending);
  EXPECT_EQ(d.state("g"), TaskState::kReady);
  EXPECT_EQ(d.state("s2"), TaskState::kReady);
  EXPECT_EQ(d.core().worker_queue_length(0), 1u);
  EXPECT_EQ(d.core().group_queue_length(), 1u);
  EXPECT_EQ(d.core().sub_queue_length(), 1u);
  return r;
}

TEST(RunCancellation, ARaiseCancelsEveryPendingAndReadyTaskOfItsRunInSubmitOrder) {
  FakeDriver d(Builder().chip(0).chip(1).chip(2).sub(1), with({Switch::kRunCancellation}));
  const RunId r = every_state(d);
  EXPECT_EQ(d.raise("bad shape"), 4u);
  EXPECT_EQ(lines_of(d, "cancel"), (V{"cancel b cause=bad shape", "cancel c cause=bad shape", "cancel g cause=bad shape",
                                      "cancel s2 cause=bad shape"}));
  for (const char* t : {"b", "c", "g", "s2"}) EXPECT_EQ(d.state(t), TaskState::kCancelled) << t;
  EXPECT_EQ(d.core().state(TaskId(0u)), TaskState::kRunning);  // a runs to its end
  // They left their queues: nothing is left for a pass to skip.
  EXPECT_EQ(d.core().worker_queue_length(0), 0u);
  EXPECT_EQ(d.core().group_queue_length(), 0u);
  EXPECT_EQ(d.core().sub_queue_length(), 0u);
  d.core().end_run();
  EXPECT_FALSE(d.core().run_terminal(r));  // a and s1 still run
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"a@0", "s1@sub0"}));
  EXPECT_EQ(d.state("a"), TaskState::kCompleted);
  EXPECT_EQ(d.state("s1"), TaskState::kCompleted);
  EXPECT_EQ(d.state("c"), TaskState::kCancelled);  // a's completion released nothing
  EXPECT_TRUE(d.core().run_terminal(r));
  EXPECT_EQ(d.core().run_info(r).error->message, "bad shape");
  EXPECT_EQ(d.core().non_terminal_tasks(), 0u);
}

TEST(RunCancellation, OffTheRaisedRunsTasksRunAsBefore) {
  FakeDriver d(Builder().chip(0).chip(1).chip(2).sub(1));
  const RunId r = every_state(d);
  EXPECT_EQ(d.raise("bad shape"), 0u);
  EXPECT_TRUE(lines_of(d, "cancel").empty());
  d.core().end_run();
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"a@0", "s1@sub0", "g[0]@0", "g[1]@2", "c@1", "s2@sub0", "b@0"}));
  for (const char* t : {"a", "b", "c", "g", "s1", "s2"}) EXPECT_EQ(d.state(t), TaskState::kCompleted) << t;
  EXPECT_TRUE(d.core().run_terminal(r));
}

TEST(RunCancellation, ARunningGroupRunsToItsEndAndItsFailurePoisonsNothingCancelled) {
  FakeDriver d(Builder().chip(0).chip(1), with({Switch::kRunCancellation}));
  BufferId x = d.buffer("x");
  const RunId r = d.core().add_run("r");
  d.fail("g", 1);
  d.core().begin_run(r);
  d.group("g", {0, 1}, {{FakeDriver::out(x)}, {}});  // launches at once: all members running
  d.single("c", 0, {FakeDriver::in(x)});               // PENDING on g
  EXPECT_EQ(d.raise("bad shape"), 1u);
  EXPECT_EQ(lines_of(d, "cancel"), (V{"cancel c cause=bad shape"}));
  d.core().end_run();
  d.run();
  EXPECT_EQ(d.state("g"), TaskState::kFailed);  // both members ran to their end and were applied
  EXPECT_EQ(lines_of(d, "member_end").size(), 2u);
  EXPECT_EQ(d.state("c"), TaskState::kCancelled);
  EXPECT_TRUE(lines_of(d, "poison").empty());
  EXPECT_EQ(d.core().run_info(r).error->message, "bad shape");  // the raise came first
  EXPECT_TRUE(d.core().run_terminal(r));
}

TEST(RunCancellation, AMemberFailureAfterTheCallbackReturnedCancelsNothing) {
  FakeDriver d(Builder().chip(0), with({Switch::kRunCancellation}));
  const RunId r = d.core().add_run("r");
  d.fail("a");
  d.core().begin_run(r);
  d.single("a", 0);
  d.single("b", 0);  // READY behind a
  d.core().end_run();
  d.run();
  EXPECT_EQ(d.state("a"), TaskState::kFailed);
  EXPECT_EQ(d.state("b"), TaskState::kCompleted);
  EXPECT_TRUE(lines_of(d, "cancel").empty());
  // Nor in a core without declared runs, whose one callback never returns.
  FakeDriver i(Builder().chip(0), with({Switch::kRunCancellation}));
  i.fail("a");
  i.single("a", 0);
  i.single("b", 0);
  i.run();
  EXPECT_EQ(i.state("b"), TaskState::kCompleted);
  EXPECT_TRUE(lines_of(i, "cancel").empty());
}

TEST(RunCancellation, TheImplicitRunIsCancelledToo) {
  FakeDriver d(Builder().chip(0), with({Switch::kRunCancellation}));
  d.duration("a", 3);
  d.single("a", 0);
  d.single("b", 0);
  EXPECT_EQ(d.raise("orchestration failed"), 1u);
  EXPECT_EQ(lines_of(d, "cancel"), (V{"cancel b cause=orchestration failed"}));
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"a@0"}));
}

TEST(RunCancellation, ACancelledBlockedGroupHeadReservesNothingAnyMore) {
  // head_reservation: r1's group g is the blocked head and holds worker 1, where r2's y is READY. The
  // raise cancels g, and the scheduler iterates at once: y runs now, not when a ends.
  for (bool cancellation : {true, false}) {
    FakeDriver d(Builder().chip(0).chip(1).chip(2),
                 cancellation ? with({Switch::kGroupReservation, Switch::kRunCancellation})
                              : with({Switch::kGroupReservation}));
    BufferId x = d.buffer("x");
    const RunId r2 = d.core().add_run("r2"), r1 = d.core().add_run("r1");
    d.core().begin_run(r2);
    d.single("p", 2, {FakeDriver::out(x)});
    d.single("y", 1, {FakeDriver::in(x)});  // PENDING until p ends at 1
    d.core().end_run();
    d.duration("a", 5);
    d.core().begin_run(r1);
    d.single("a", 0);
    d.group("g", {0, 1});  // blocked: worker 0 runs a
    d.advance_to(1);
    EXPECT_EQ(d.state("y"), TaskState::kReady);  // reserved by g
    d.raise("bad shape");
    d.core().end_run();
    if (cancellation) {
      EXPECT_EQ(d.state("g"), TaskState::kCancelled);
      EXPECT_EQ(d.dispatches(), (V{"p@2", "a@0", "y@1"}));
    } else {
      EXPECT_EQ(d.state("y"), TaskState::kReady);
      EXPECT_EQ(d.dispatches(), (V{"p@2", "a@0"}));
    }
    d.run();
    EXPECT_TRUE(d.core().run_terminal(r1));
    EXPECT_TRUE(d.core().run_terminal(r2));
  }
}

TEST(RunCancellation, OnlyTheRaisingRunIsCancelled) {
  FakeDriver d(Builder().chip(0).chip(1), with({Switch::kRunCancellation}));
  const RunId r1 = d.core().add_run("r1"), r2 = d.core().add_run("r2");
  d.duration("a", 3);
  d.core().begin_run(r1);
  d.single("a", 0);
  d.single("b", 0);  // READY behind a, in r1
  d.core().end_run();
  d.core().begin_run(r2);
  d.single("c", 0);  // READY behind b, in r2
  EXPECT_EQ(d.raise("bad shape"), 1u);  // c only: b, READY too, is r1's
  d.core().end_run();
  d.run();
  EXPECT_EQ(d.state("b"), TaskState::kCompleted);
  EXPECT_EQ(d.state("c"), TaskState::kCancelled);
  EXPECT_EQ(lines_of(d, "cancel"), (V{"cancel c cause=bad shape"}));
  EXPECT_FALSE(d.core().run_info(r1).error.has_value());
  EXPECT_TRUE(d.core().run_terminal(r2));
}

}  // namespace
}  // namespace dirsched::testing
