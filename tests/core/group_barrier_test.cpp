// The ladder switch group_barrier (#1754) and the between_passes batch it reacts to, on the fake
// driver. A between_passes batch lands inside the next iteration, after its group pass and before its
// singles pass (Scheduler::land_between_passes). With group_barrier on, in an iteration whose group pass
// ended without a blocked head, the singles pass sends the first READY single it pops back to the tail
// of its worker's FIFO when the group FIFO holds a READY group, stops, and the iteration runs the group
// pass again, then the singles pass. Every test runs the invariant checker (FakeDriver), whose rule
// barrier_held watches the same thing.
#include <gtest/gtest.h>

#include "fake_driver.hpp"

namespace dirsched::testing {
namespace {

using V = std::vector<std::string>;


// The index of the first event line equal to `line`, or -1.
long line_at(const FakeDriver& d, const std::string& line) {
  const auto& lines = d.trace().lines;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i] == line) return static_cast<long>(i);
  return -1;
}

// A batch of a single on 0 and a group on [0, 1], landing between the passes on idle workers.
V late_group(Scheduler::Options options) {
  FakeDriver d(Builder().chip(0).chip(1), options);
  d.between_passes({d.single_request("s", 0), d.group_request("g", {0, 1})});
  d.run();
  EXPECT_EQ(d.state("s"), TaskState::kCompleted);
  EXPECT_EQ(d.state("g"), TaskState::kCompleted);
  return d.dispatches();
}

TEST(GroupBarrier, SwitchOffTheSingleTakesTheLateGroupsTarget) {
  // seed and head_reservation: the singles pass places s on 0; g launches when s ended.
  EXPECT_EQ(late_group({}), (V{"s@0", "g[0]@0", "g[1]@1"}));
  EXPECT_EQ(late_group(with({Switch::kGroupReservation})), (V{"s@0", "g[0]@0", "g[1]@1"}));
}

TEST(GroupBarrier, SwitchOnTheLateGroupGoesFirst) {
  EXPECT_EQ(late_group(with({Switch::kGroupBarrier})), (V{"g[0]@0", "g[1]@1", "s@0"}));
  EXPECT_EQ(late_group(with({Switch::kGroupReservation, Switch::kGroupBarrier})), (V{"g[0]@0", "g[1]@1", "s@0"}));
}

TEST(GroupBarrier, TheLateGroupLaunchesInTheLandingIteration) {
  // The barrier's group pass runs inside the iteration that landed the batch: g and the single on
  // worker 2 (no target of g) are both placed there, then one idle iteration ends the instant.
  FakeDriver d(Builder().chip(0).chip(1).chip(2), with({Switch::kGroupBarrier}));
  const std::size_t before = d.iterations();
  d.between_passes({d.single_request("s", 2), d.group_request("g", {0, 1})});
  EXPECT_EQ(d.dispatches(), (V{"g[0]@0", "g[1]@1", "s@2"}));
  EXPECT_EQ(d.iterations() - before, 2u);
  // Off: s is placed in the landing iteration, g in the next one.
  FakeDriver off(Builder().chip(0).chip(1).chip(2));
  off.between_passes({off.single_request("s", 2), off.group_request("g", {0, 1})});
  EXPECT_EQ(off.dispatches(), (V{"s@2", "g[0]@0", "g[1]@1"}));
  EXPECT_EQ(off.iterations(), 3u);
}

TEST(GroupBarrier, TheSinglePoppedGoesBackToTheTailOfItsWorkersFifo) {
  // a and b queue on worker 0, g needs 1 and 2. The barrier pops a, sends it behind b, the group pass
  // launches g, and the singles pass places b: b overtakes a.
  FakeDriver d(Builder().chip(0).chip(1).chip(2), with({Switch::kGroupBarrier}));
  d.between_passes({d.single_request("a", 0), d.single_request("b", 0), d.group_request("g", {1, 2})});
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"g[0]@1", "g[1]@2", "b@0", "a@0"}));
  FakeDriver off(Builder().chip(0).chip(1).chip(2));
  off.between_passes({off.single_request("a", 0), off.single_request("b", 0), off.group_request("g", {1, 2})});
  off.run();
  EXPECT_EQ(off.dispatches(), (V{"a@0", "g[0]@1", "g[1]@2", "b@0"}));
}

TEST(GroupBarrier, ABlockedLateGroupLetsTheSecondSinglesPassPlaceSingles) {
  // x runs on 0. The late g needs 0 and 1: the barrier's group pass finds it blocked, so the singles
  // pass runs again without the check and places s on 2 in the same iteration (seed: no reservation;
  // group_blocked comes first). Off, s is placed first and g is looked at in the next iteration.
  FakeDriver d(Builder().chip(0).chip(1).chip(2), with({Switch::kGroupBarrier}));
  d.duration("x", 5);
  d.single("x", 0);
  d.between_passes({d.single_request("s", 2), d.group_request("g", {0, 1})});
  EXPECT_EQ(d.dispatches(), (V{"x@0", "s@2"}));
  EXPECT_LT(line_at(d, "group_blocked g busy=0,"), line_at(d, "dispatch s[0]@2"));
  FakeDriver off(Builder().chip(0).chip(1).chip(2));
  off.duration("x", 5);
  off.single("x", 0);
  off.between_passes({off.single_request("s", 2), off.group_request("g", {0, 1})});
  EXPECT_EQ(off.dispatches(), (V{"x@0", "s@2"}));
  EXPECT_GT(line_at(off, "group_blocked g busy=0,"), line_at(off, "dispatch s[0]@2"));
}

TEST(GroupBarrier, WithReservationTheBlockedLateGroupHoldsItsIdleTarget) {
  // x runs on 0; the late g needs 0 and 1; s wants 1. head_reservation alone: s takes 1 (the batch
  // lands after the group pass, nothing was reserved). With the barrier: g's group pass reserves 0 and
  // 1, and s waits until g ran.
  auto order = [](Scheduler::Options o) {
    FakeDriver d(Builder().chip(0).chip(1), o);
    d.duration("x", 5);
    d.single("x", 0);
    d.between_passes({d.single_request("s", 1), d.group_request("g", {0, 1})});
    d.run();
    return d.dispatches();
  };
  EXPECT_EQ(order(with({Switch::kGroupReservation})), (V{"x@0", "s@1", "g[0]@0", "g[1]@1"}));
  EXPECT_EQ(order(with({Switch::kGroupReservation, Switch::kGroupBarrier})), (V{"x@0", "g[0]@0", "g[1]@1", "s@1"}));
}

TEST(GroupBarrier, NoCheckAfterAGroupPassWithABlockedHead) {
  // h is the blocked head (x runs on 0). A late g behind it and a single on 2: the landing iteration's
  // group pass ended with a blocked head, so the singles pass places s at once, switch on or off.
  for (bool on : {false, true}) {
    FakeDriver d(Builder().chip(0).chip(1).chip(2).chip(3), on ? with({Switch::kGroupBarrier}) : Scheduler::Options{});
    d.duration("x", 5);
    d.single("x", 0);
    d.group("h", {0, 1});
    d.between_passes({d.group_request("g", {1, 3}), d.single_request("s", 2)});
    EXPECT_EQ(d.dispatches(), (V{"x@0", "s@2"})) << "switch " << on;
    d.run();
    EXPECT_EQ(d.dispatches(), (V{"x@0", "s@2", "h[0]@0", "h[1]@1", "g[0]@1", "g[1]@3"})) << "switch " << on;
  }
}

TEST(GroupBarrier, AtomicInstantsNeverFireIt) {
  // Plain ops and a plain batch: the group FIFO is empty after a pass without a blocked head, so the
  // switch changes nothing (the same event stream, line for line).
  auto lines = [](Scheduler::Options o) {
    FakeDriver d(Builder().chip(0).chip(1).chip(2), o);
    d.single("a", 0);
    d.batch({d.single_request("s", 0), d.group_request("g", {0, 1}), d.single_request("t", 2)});
    d.group("h", {1, 2});
    d.single("u", 1);
    d.run();
    return d.trace().lines;
  };
  EXPECT_EQ(lines({}), lines(with({Switch::kGroupBarrier})));
  EXPECT_EQ(lines(with({Switch::kGroupReservation})), lines(with({Switch::kGroupReservation, Switch::kGroupBarrier})));
}

TEST(GroupBarrier, ALandedBatchIsAWakeEvenWhenItsIterationDispatchedNothing) {
  // Only a group lands: the landing iteration places nothing, and the next one (same instant)
  // launches it. Without the wake the instant would end with g READY on idle workers.
  FakeDriver d(Builder().chip(0).chip(1));
  d.between_passes({d.group_request("g", {0, 1})});
  EXPECT_EQ(d.dispatches(), (V{"g[0]@0", "g[1]@1"}));
  EXPECT_TRUE(d.core().landed_between_passes() == false);  // the last iteration (idle) landed nothing
}

TEST(GroupBarrier, EventsOfTheLandingAreMarked) {
  FakeDriver d(Builder().chip(0).chip(1));
  d.single("a", 1);
  d.between_passes({d.single_request("s", 0)});
  for (std::size_t i = 0; i < d.trace().lines.size(); ++i) {
    const std::string& l = d.trace().lines[i];
    const bool landed = l == "submit s" || l == "ready s worker:0";
    EXPECT_EQ(d.trace().events[i].between_passes, landed) << l;
  }
}

TEST(GroupBarrier, OneBatchAtATime) {
  FakeDriver d(Builder().chip(0).chip(1));
  d.core().land_between_passes([] {});
  try {
    d.core().land_between_passes([] {});
    FAIL() << "a second batch was taken";
  } catch (const CoreError& e) {
    EXPECT_EQ(e.code(), CoreErrorCode::kRunOrder);
  }
}

TEST(GroupBarrier, UnderEdgeTriggeredWakeAHandedBatchIsAWakeAndLands) {
  // edge_triggered_wake: the loop is parked (nothing ran, nothing woke it) when the batch is handed; the
  // batch is a wake, so the next iteration runs and lands it, and the group barrier reacts as without
  // the loop switch. Without that wake the batch would wait for an unrelated wake and nothing would run.
  for (const bool barrier : {false, true}) {
    Scheduler::Options o = with({Switch::kEdgeTriggeredWake});
    o.switches.set(Switch::kGroupBarrier, barrier);
    FakeDriver d(Builder().chip(0).chip(1), o);
    d.between_passes({d.single_request("s", 0), d.group_request("g", {0, 1})});
    d.run();
    EXPECT_EQ(d.state("s"), TaskState::kCompleted) << "barrier " << barrier;
    EXPECT_EQ(d.state("g"), TaskState::kCompleted) << "barrier " << barrier;
    EXPECT_EQ(d.dispatches(), barrier ? (V{"g[0]@0", "g[1]@1", "s@0"}) : (V{"s@0", "g[0]@0", "g[1]@1"}));
  }
}

}  // namespace
}  // namespace dirsched::testing
