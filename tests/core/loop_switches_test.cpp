// The ladder switches edge_triggered_wake (#1612) and busy_poll (#1754): the loop rule
// (Scheduler::loop_continues, asked by run_instant before every iteration), on the fake driver.
// - both off, or busy_poll alone: iterations repeat until as many consecutive iterations as the SUB
//   FIFO holds entries (at least one) dispatched nothing;
// - edge_triggered_wake alone: exactly one iteration per wake (an end, a submit whose task turned READY,
//   a callback's end or raise, a promotion, wake()); a PENDING submit or a rejection wakes nothing;
// - both on: the seed's repeats, stopping after an iteration that ends with no member running.
// The setup that shows the difference: two SUB workers, a SUB group G of three (larger than the pool,
// it never fits) and a SUB single s behind it. Every test runs the invariant checker (FakeDriver).
#include <gtest/gtest.h>

#include "fake_driver.hpp"

namespace dirsched::testing {
namespace {

using V = std::vector<std::string>;

const std::initializer_list<Switch> kEdge = {Switch::kEdgeTriggeredWake};
const std::initializer_list<Switch> kBoth = {Switch::kEdgeTriggeredWake, Switch::kBusyPoll};

// G (three members, two SUB workers), then s: the submit of s is one op.
void g_then_s(FakeDriver& d) {
  d.sub_group("G", 3);
  d.sub("s");
}

TEST(LoopSwitches, BothOffTheRepeatsRunSubWorkBehindATooLargeGroup) {
  FakeDriver d(Builder().chip(0).sub(2));
  g_then_s(d);
  EXPECT_EQ(d.dispatches(), (V{"s@sub0"}));
}

TEST(LoopSwitches, BusyPollAloneIsTheSeedLoop) {
  FakeDriver seed(Builder().chip(0).sub(2));
  FakeDriver poll(Builder().chip(0).sub(2), with({Switch::kBusyPoll}));
  g_then_s(seed);
  g_then_s(poll);
  EXPECT_EQ(poll.dispatches(), (V{"s@sub0"}));
  EXPECT_EQ(poll.iterations(), seed.iterations());
  EXPECT_EQ(poll.core().dump(), seed.core().dump());
}

TEST(LoopSwitches, EdgeTriggeredWakeRunsOneIterationPerWakeSoSubWorkWaits) {
  FakeDriver d(Builder().chip(0).sub(2), with(kEdge));
  d.sub_group("G", 3);
  EXPECT_EQ(d.iterations(), 1u);
  d.sub("s");  // READY: a wake, one iteration: G goes back to the tail and ends the SUB pass
  EXPECT_EQ(d.iterations(), 2u);
  EXPECT_TRUE(d.dispatches().empty());
  EXPECT_EQ(d.state("s"), TaskState::kReady);
  d.single("a", 0);  // the next wake: its iteration places a, then s (G goes back again)
  EXPECT_EQ(d.iterations(), 3u);
  EXPECT_EQ(d.dispatches(), (V{"a@0", "s@sub0"}));
}

// A wake that never comes: s is stuck, and the reason names the entry that holds the SUB pass up and the
// parked loop (the seed's repeats dispatch it: BothOffTheRepeatsRunSubWorkBehindATooLargeGroup).
TEST(LoopSwitches, EdgeTriggeredWakeStuckSubWorkNamesTheEntryThatHoldsItUp) {
  FakeDriver d(Builder().chip(0).sub(2), with(kEdge));
  g_then_s(d);
  const std::vector<Stuck> stuck = d.core().stuck();
  ASSERT_EQ(stuck.size(), 2u);
  EXPECT_EQ(stuck[0].reason, "needs 3 SUB workers, the pool has 2");
  EXPECT_EQ(stuck[1].reason,
            "READY in the SUB FIFO, never dispatched: 'G' needs more SUB workers than the pool has and goes back "
            "to the tail each iteration, and the loop parked with no wake left (edge_triggered_wake)");
}

TEST(LoopSwitches, EdgeTriggeredWakeAPendingSubmitOrARejectionWakesNothing) {
  FakeDriver d(Builder().chip(0).chip(1).sub(2), with(kEdge));
  const BufferId x = d.buffer("x");
  d.single("a", 0, {FakeDriver::out(x)});  // runs 1 s
  g_then_s(d);
  const std::size_t before = d.iterations();
  d.single("b", 1, {FakeDriver::in(x)});  // PENDING on a
  EXPECT_EQ(d.state("b"), TaskState::kPending);
  EXPECT_FALSE(d.single("bad", 7).accepted());  // worker_not_registered
  EXPECT_EQ(d.iterations(), before);
  EXPECT_FALSE(d.core().wake_pending());
  EXPECT_EQ(d.dispatches(), (V{"a@0"}));
  d.run();  // a's end is a wake: its iteration releases b and places it, and s
  EXPECT_EQ(d.dispatches(), (V{"a@0", "b@1", "s@sub0"}));
}

TEST(LoopSwitches, EdgeTriggeredWakeACallbackEndOrRaiseIsAWake) {
  FakeDriver d(Builder().chip(0).sub(2), with(kEdge));
  const RunId r1 = d.core().add_run("r1"), r2 = d.core().add_run("r2");
  d.core().begin_run(r1);
  g_then_s(d);
  EXPECT_TRUE(d.dispatches().empty());
  const std::size_t before = d.iterations();
  d.end_run();  // a wake: one iteration places s
  EXPECT_EQ(d.iterations(), before + 1);
  EXPECT_EQ(d.dispatches(), (V{"s@sub0"}));
  d.run();
  d.core().begin_run(r2);
  d.sub("t");  // READY: one iteration, G (r1's) goes back to the tail first
  EXPECT_EQ(d.dispatches(), (V{"s@sub0"}));
  d.raise("boom");
  EXPECT_EQ(d.dispatches(), (V{"s@sub0", "t@sub0"}));
}

TEST(LoopSwitches, WithoutEdgeTriggeredWakeACallbackEndIteratesNothing) {
  FakeDriver d(Builder().chip(0).sub(2));
  const RunId r1 = d.core().add_run("r1");
  d.core().begin_run(r1);
  d.sub("s");
  const std::size_t before = d.iterations();
  d.end_run();
  EXPECT_EQ(d.iterations(), before);
  EXPECT_FALSE(d.core().loop_woken());
}

TEST(LoopSwitches, EdgeTriggeredWakeWakeHookRunsOneIteration) {
  FakeDriver d(Builder().chip(0).sub(2), with(kEdge));
  g_then_s(d);
  EXPECT_EQ(d.core().loop_continues(0), false);  // parked
  d.core().wake();
  EXPECT_TRUE(d.core().loop_woken());
  std::size_t n = run_instant(d.core(), [](const std::vector<Dispatch>&) {});
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(d.core().sub_queue_length(), 1u);  // s left with the one iteration (not carried out here)
}

TEST(LoopSwitches, EdgeTriggeredWakeAPendingWakeIsPartOfTheStateDumpAndEncoding) {
  // Two states that differ only in a pending wake have different futures (the next op iterates or not):
  // the explorer's hash of encode() and the checker's dump() must tell them apart.
  FakeDriver d(Builder().chip(0).sub(2), with(kEdge));
  g_then_s(d);
  std::vector<std::uint32_t> before, after;
  d.core().encode(before);
  const std::string dump_before = d.core().dump();
  d.core().wake();
  d.core().encode(after);
  EXPECT_NE(before, after);
  EXPECT_NE(dump_before.find("wake none"), std::string::npos) << dump_before;
  EXPECT_NE(d.core().dump().find("wake pending"), std::string::npos);
  // Without the switch the flag decides nothing and is not encoded.
  FakeDriver seed(Builder().chip(0).sub(2));
  g_then_s(seed);
  std::vector<std::uint32_t> a, b;
  seed.core().encode(a);
  seed.core().wake();
  seed.core().encode(b);
  EXPECT_EQ(a, b);
}

TEST(LoopSwitches, EdgeTriggeredWakeAPromotionInAnIterationIsTheSameWakeAsItsEnd) {
  // r1's last task ends at 1 s: the end wakes, and r2's promotion during that iteration's step 1 is
  // taken by the same iteration: one iteration for the instant.
  FakeDriver d(Builder().chip(0).chip(1), with({Switch::kEdgeTriggeredWake, Switch::kWholeRunFifo}));
  const RunId r1 = d.core().add_run("r1"), r2 = d.core().add_run("r2");
  d.core().begin_run(r1);
  d.single("a", 0);
  d.end_run();
  d.core().begin_run(r2);
  d.single("b", 1);
  d.end_run();
  const std::size_t before = d.iterations();
  ASSERT_TRUE(d.step());
  EXPECT_EQ(d.iterations(), before + 1);
  EXPECT_EQ(d.dispatches(), (V{"a@0", "b@1"}));
  EXPECT_FALSE(d.core().wake_pending());
}

TEST(LoopSwitches, BothOnNothingRunningParksLikeEdgeTriggeredWake) {
  FakeDriver d(Builder().chip(0).sub(2), with(kBoth));
  g_then_s(d);
  EXPECT_TRUE(d.dispatches().empty());
  EXPECT_EQ(d.iterations(), 2u);
}

TEST(LoopSwitches, BothOnAMemberRunningKeepsTheSeedRepeats) {
  FakeDriver d(Builder().chip(0).sub(2), with(kBoth));
  d.duration("a", 5);
  d.single("a", 0);
  g_then_s(d);
  EXPECT_EQ(d.dispatches(), (V{"a@0", "s@sub0"}));
}

TEST(LoopSwitches, BothOnANonWakingOpWhileAMemberRunsIterates) {
  // Settled (docs/versions.md): busy_poll's loop is not parked while a member runs, so a PENDING
  // submit is looked at as the seed's loop looks at it; edge_triggered_wake alone looks at nothing.
  for (bool poll : {true, false}) {
    FakeDriver d(Builder().chip(0).chip(1), poll ? with(kBoth) : with(kEdge));
    const BufferId x = d.buffer("x");
    d.single("a", 0, {FakeDriver::out(x)});
    const std::size_t before = d.iterations();
    d.single("b", 1, {FakeDriver::in(x)});
    EXPECT_EQ(d.iterations() - before, poll ? 1u : 0u) << "busy_poll " << poll;
  }
}

TEST(LoopSwitches, EdgeTriggeredWakeEveryIterationTakesTheWake) {
  // Zero-duration members report at once (carry_out): each report is a wake, the next iteration's.
  FakeDriver d(Builder().chip(0).sub(2), with(kEdge));
  const BufferId x = d.buffer("x");
  d.duration("a", 0);
  d.single("a", 0, {FakeDriver::out(x)});
  d.single("b", 0, {FakeDriver::in(x)});
  EXPECT_EQ(d.dispatches(), (V{"a@0", "b@0"}));
  EXPECT_FALSE(d.core().wake_pending());
}

}  // namespace
}  // namespace dirsched::testing
