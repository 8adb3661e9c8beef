// The two policies (seed, head_reservation) and the stall reports, driven step by step on virtual
// time. Every FakeDriver runs the InvariantChecker for its policy, so a single dispatched on a
// reserved worker would also throw.
#include <gtest/gtest.h>

#include "fake_driver.hpp"

namespace dirsched::testing {
namespace {

using V = std::vector<std::string>;

// The two presets these tests drive; the core sees only their switches (switches.hpp).
enum class Policy { kSeed, kHeadReservation };

Scheduler::Options options(Policy policy, double stall_report_s = 5) {
  Scheduler::Options o;
  o.switches = *preset(policy == Policy::kSeed ? "seed" : "head_reservation");
  o.stall_report_s = stall_report_s;
  return o;
}

FakeDriver chips(std::vector<std::int64_t> ids, Scheduler::Options o) {
  Builder b;
  for (std::int64_t id : ids) b.chip(id);
  return FakeDriver(std::move(b), o);
}

// The stall events of a run, as "kind task@t busy=.. idle_queued=.." lines plus waited_s.
struct StallLine {
  std::string line;
  double t;
  double waited_s;
};
std::vector<StallLine> stalls(const FakeDriver& d) {
  std::vector<StallLine> out;
  for (std::size_t i = 0; i < d.trace().events.size(); ++i) {
    const Event& e = d.trace().events[i];
    if (e.kind == EventKind::kGroupStall || e.kind == EventKind::kReservationStall)
      out.push_back({d.trace().lines[i], e.t, e.waited_s});
  }
  return out;
}

TEST(HeadReservation, ReservedIdleWorkerGetsNoSingle) {
  FakeDriver d = chips({0, 1}, options(Policy::kHeadReservation));
  d.duration("busy", 5);
  d.single("busy", 1);
  d.group("g", {0, 1});
  d.single("s", 0);  // chip 0 is idle, but the blocked head g holds it
  EXPECT_EQ(d.dispatches(), (V{"busy@1"}));
  EXPECT_TRUE(d.core().reserved(0));
  EXPECT_TRUE(d.core().reserved(1));
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"busy@1", "g[0]@0", "g[1]@1", "s@0"}));
  EXPECT_DOUBLE_EQ(d.recorder().find("g")->start, 5.0);
  EXPECT_TRUE(d.recorder().find("g")->overtaken_by.empty());
}

TEST(HeadReservation, SeedLetsTheSameSingleOvertake) {
  FakeDriver d = chips({0, 1}, options(Policy::kSeed));
  d.duration("busy", 5);
  d.single("busy", 1);
  d.group("g", {0, 1});
  d.single("s", 0);
  EXPECT_EQ(d.dispatches(), (V{"busy@1", "s@0"}));
  EXPECT_FALSE(d.core().reserved(0));
}

TEST(HeadReservation, WorkersOutsideTheHeadsTargetsAreServed) {
  FakeDriver d = chips({0, 1, 2}, options(Policy::kHeadReservation));
  d.duration("busy", 5);
  d.single("busy", 1);
  d.group("g", {0, 1});
  d.single("s", 2);
  EXPECT_EQ(d.dispatches(), (V{"busy@1", "s@2"}));
  EXPECT_FALSE(d.core().reserved(2));
}

TEST(HeadReservation, GroupBehindTheHeadReservesNothing) {
  FakeDriver d = chips({0, 1, 2, 3}, options(Policy::kHeadReservation));
  d.duration("busy", 5);
  d.single("busy", 1);
  d.group("g1", {0, 1});
  d.duration("x", 2);
  d.single("x", 3);
  d.group("g2", {2, 3});  // behind the blocked head g1: not examined, holds nothing
  d.single("s2", 2);
  EXPECT_EQ(d.dispatches(), (V{"busy@1", "x@3", "s2@2"}));
  EXPECT_FALSE(d.core().reserved(2));
  EXPECT_FALSE(d.core().reserved(3));
}

TEST(HeadReservation, ReservationEndsWhenTheGroupLaunches) {
  FakeDriver d = chips({0, 1}, options(Policy::kHeadReservation));
  d.duration("busy", 5);
  d.single("busy", 1);
  d.durations("g", {1, 3});
  d.group("g", {0, 1});
  d.advance_to(5);  // busy ends at 5 and g launches; chip 0 frees at 6, chip 1 at 8
  EXPECT_EQ(d.dispatches(), (V{"busy@1", "g[0]@0", "g[1]@1"}));
  EXPECT_FALSE(d.core().reserved(0));
  d.advance_to(5.5);
  d.single("s", 0);
  d.advance_to(6);
  EXPECT_EQ(d.dispatches(), (V{"busy@1", "g[0]@0", "g[1]@1", "s@0"}));
  EXPECT_DOUBLE_EQ(d.recorder().find("s")->start, 6.0);
}

TEST(HeadReservation, NextHeadReservesOnceTheFirstLaunches) {
  FakeDriver d = chips({0, 1, 2}, options(Policy::kHeadReservation));
  d.duration("busy", 5);
  d.single("busy", 1);
  d.group("g1", {0, 1});
  d.durations("g1", {1, 4});
  d.group("g2", {1, 2});  // behind g1 until 5, then the blocked head (chip 1 busy until 9)
  d.single("s2", 2);      // served before 5: g2 reserved nothing then
  d.advance_to(5);
  EXPECT_TRUE(d.core().reserved(2));
  EXPECT_FALSE(d.core().reserved(0));
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"busy@1", "s2@2", "g1[0]@0", "g1[1]@1", "g2[0]@1", "g2[1]@2"}));
}

TEST(StallReport, ReservationStallAtExactlyEpisodeStartPlusStallReport) {
  FakeDriver d = chips({0, 1}, options(Policy::kHeadReservation, 5));
  d.duration("busy", 20);
  d.single("busy", 1);
  d.group("g", {0, 1});
  EXPECT_EQ(d.core().next_stall_deadline(), std::nullopt);  // chip 0 idle but nothing queued on it
  d.advance_to(1.25);
  d.single("s", 0);  // now a reserved target is idle with queued work: the episode opens at 1.25
  ASSERT_TRUE(d.core().next_stall_deadline().has_value());
  EXPECT_DOUBLE_EQ(*d.core().next_stall_deadline(), 6.25);
  d.run();
  const auto st = stalls(d);
  ASSERT_EQ(st.size(), 1u);  // once per episode, though the episode lasts until 20
  EXPECT_EQ(st[0].line, "reservation_stall g busy=1, idle_queued=0,");
  EXPECT_EQ(st[0].t, 6.25);
  EXPECT_EQ(st[0].waited_s, 6.25);  // g has been the blocked head since 0
}

TEST(StallReport, ReportIsEmittedWhenTheDriverTimeReachesTheDeadline) {
  FakeDriver d = chips({0, 1}, options(Policy::kHeadReservation, 5));
  d.duration("busy", 20);
  d.single("busy", 1);
  d.group("g", {0, 1});
  d.single("s", 0);
  d.core().set_time(4.999);
  EXPECT_TRUE(stalls(d).empty());
  d.core().set_time(5);
  ASSERT_EQ(stalls(d).size(), 1u);
  EXPECT_EQ(stalls(d)[0].t, 5.0);
  EXPECT_EQ(d.core().next_stall_deadline(), std::nullopt);
}

TEST(StallReport, EpisodeShorterThanStallReportIsNotReported) {
  FakeDriver d = chips({0, 1}, options(Policy::kHeadReservation, 5));
  d.duration("busy", 4.5);
  d.single("busy", 1);
  d.group("g", {0, 1});
  d.single("s", 0);
  d.run();
  EXPECT_TRUE(stalls(d).empty());
}

TEST(StallReport, OpensOnlyWhenAReservedTargetIsIdleWithQueuedWork) {
  // g is the blocked head from 0, but chip 0 is busy until 3: the episode starts at 3, not 0.
  FakeDriver d = chips({0, 1}, options(Policy::kHeadReservation, 5));
  d.duration("x", 3);
  d.single("x", 0);
  d.duration("busy", 20);
  d.single("busy", 1);
  d.group("g", {0, 1});
  d.single("s", 0);
  EXPECT_EQ(d.core().next_stall_deadline(), std::nullopt);
  d.run();
  const auto st = stalls(d);
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].t, 8.0);
  EXPECT_EQ(st[0].waited_s, 8.0);
}

TEST(StallReport, HeadChangeStartsANewEpisode) {
  // g1 is the blocked head 0..5 with chip 0 idle and queued (reported at 2). At 5 busy and s2 end
  // together: g1 launches, g2 becomes the blocked head (chip 1 runs g1[1] until 9) and reserves
  // chip 2, just freed with t2 queued behind s2. The condition holds across the change, yet the
  // head changed: a new episode from 5, reported at 7.
  FakeDriver d = chips({0, 1, 2}, options(Policy::kHeadReservation, 2));
  d.duration("busy", 5);
  d.single("busy", 1);
  d.durations("g1", {1, 4});
  d.group("g1", {0, 1});
  d.single("s0", 0);
  d.group("g2", {1, 2});
  d.advance_to(4);
  d.single("s2", 2);  // served at once (g2 is not the head yet), ends at 5
  d.advance_to(4.5);
  d.single("t2", 2);  // queued behind s2
  d.run();
  const auto st = stalls(d);
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0].line, "reservation_stall g1 busy=1, idle_queued=0,");
  EXPECT_EQ(st[0].t, 2.0);
  EXPECT_EQ(st[1].line, "reservation_stall g2 busy=1, idle_queued=2,");
  EXPECT_EQ(st[1].t, 7.0);
  EXPECT_EQ(st[1].waited_s, 2.0);
}

TEST(StallReport, GroupStallUnderSeedOncePerBlockedHead) {
  FakeDriver d = chips({0, 1, 2}, options(Policy::kSeed, 2));
  d.duration("busy", 3);
  d.single("busy", 1);
  d.durations("g1", {1, 4});
  d.group("g1", {0, 1});  // blocked 0..3: reported at 2
  d.group("g2", {1, 2});  // the blocked head 3..7: reported at 5
  d.run();
  const auto st = stalls(d);
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0].line, "group_stall g1 busy=1,");
  EXPECT_EQ(st[0].t, 2.0);
  EXPECT_EQ(st[0].waited_s, 2.0);
  EXPECT_EQ(st[1].line, "group_stall g2 busy=1,");
  EXPECT_EQ(st[1].t, 5.0);
  EXPECT_EQ(st[1].waited_s, 2.0);
}

TEST(StallReport, SeedReportsABlockedHeadEvenWithNothingQueued) {
  FakeDriver d = chips({0, 1}, options(Policy::kSeed, 5));
  d.duration("busy", 6);
  d.single("busy", 1);
  d.group("g", {0, 1});
  d.run();
  ASSERT_EQ(stalls(d).size(), 1u);
  EXPECT_EQ(stalls(d)[0].t, 5.0);
}

TEST(StallReport, ReportChangesNoDecision) {
  // The same trace with a stall report every 0.5 s or never (stall_report_s beyond the run)
  // dispatches the same members at the same times.
  auto trace = [](double stall) {
    FakeDriver d = chips({0, 1, 2}, options(Policy::kHeadReservation, stall));
    d.duration("busy", 5);
    d.single("busy", 1);
    d.group("g", {0, 1});
    d.single("s", 0);
    d.single("t", 2);
    d.run();
    return std::make_pair(d.dispatches(), d.recorder().find("s")->start);
  };
  EXPECT_EQ(trace(0.5), trace(1000));
}

}  // namespace
}  // namespace dirsched::testing
