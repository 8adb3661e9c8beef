// The ladder switch mpi_group_lane (#1624), the drivers' sans-IO helper MpiLanes: each MPI group executes
// one request at a time, in dispatch order; a group task on exactly the group's ranks is one request whose
// members start together and all end with the slowest; every other member on a rank is a request of its
// own; a member on a worker of no MPI group is no request. The tasks come from the fake driver (so the
// core knows their kinds and targets); the dispatches are handed to MpiLanes by hand.
#include "dirsched/mpi_lanes.hpp"

#include <gtest/gtest.h>

#include "fake_driver.hpp"

namespace dirsched::testing {
namespace {

using Seqs = std::vector<std::uint64_t>;

Builder ranks_10_11_and_12() {
  Builder b;
  b.remote(10).remote(11).remote(12);
  b.registry.add_mpi_group("m", {WorkerId(10), WorkerId(11)});
  return b;
}

Dispatch to(TaskId task, std::uint32_t member, std::int64_t worker, std::uint64_t seq) {
  Target t;
  t.worker = WorkerId(worker);
  return Dispatch{task, member, t, seq};
}

MemberEnd ended(const Dispatch& d, Outcome o = Outcome::kSuccess) { return {d.seq, d.task, d.member, o}; }

Seqs seqs_of(const std::vector<MemberEnd>& ends) {
  Seqs out;
  for (const MemberEnd& e : ends) out.push_back(e.seq);
  return out;
}

TEST(MpiLanes, AWholeGroupIsOneRequestThatEndsWithItsSlowestMember) {
  FakeDriver d(ranks_10_11_and_12());
  const TaskId g = d.group("g", {11, 10}, {}, d.rpc()).task;  // exactly m's ranks, in any order
  const TaskId s = d.single("s", 11, {}, d.rpc()).task;
  MpiLanes lanes(d.core().registry(), true);
  ASSERT_TRUE(lanes.enabled());
  const Dispatch g0 = to(g, 0, 11, 1), g1 = to(g, 1, 10, 2), s0 = to(s, 0, 11, 3);
  EXPECT_TRUE(lanes.dispatched(d.core(), g0));
  EXPECT_TRUE(lanes.dispatched(d.core(), g1));   // joins its request: both start together
  EXPECT_FALSE(lanes.dispatched(d.core(), s0));  // a request of its own, behind g
  EXPECT_EQ(lanes.held(), 1u);
  std::vector<MemberEnd> report;
  Seqs start;
  lanes.finished(ended(g1), report, start);  // the faster member: held until the slower one ends
  EXPECT_TRUE(report.empty());
  EXPECT_TRUE(start.empty());
  lanes.finished(ended(g0, Outcome::kFailure), report, start);
  EXPECT_EQ(seqs_of(report), (Seqs{2, 1}));  // both ends now, each with its own outcome
  EXPECT_EQ(report[1].outcome, Outcome::kFailure);
  EXPECT_EQ(start, (Seqs{3}));  // the lane frees: s starts
  report.clear();
  start.clear();
  lanes.finished(ended(s0), report, start);
  EXPECT_EQ(seqs_of(report), (Seqs{3}));
  EXPECT_EQ(lanes.held(), 0u);
}

TEST(MpiLanes, SinglesOnTwoRanksOfOneGroupRunOneAfterAnotherInDispatchOrder) {
  FakeDriver d(ranks_10_11_and_12());
  const TaskId a = d.single("a", 11, {}, d.rpc()).task, b = d.single("b", 10, {}, d.rpc()).task, c = d.single("c", 12, {}, d.rpc()).task;
  MpiLanes lanes(d.core().registry(), true);
  const Dispatch a0 = to(a, 0, 11, 1), b0 = to(b, 0, 10, 2), c0 = to(c, 0, 12, 3);
  EXPECT_TRUE(lanes.dispatched(d.core(), a0));
  EXPECT_FALSE(lanes.dispatched(d.core(), b0));  // the lane is m's, not a rank's
  EXPECT_TRUE(lanes.dispatched(d.core(), c0));   // 12 is in no MPI group: no lane
  std::vector<MemberEnd> report;
  Seqs start;
  lanes.finished(ended(c0), report, start);
  EXPECT_EQ(seqs_of(report), (Seqs{3}));
  EXPECT_TRUE(start.empty());
  lanes.finished(ended(a0), report, start);
  EXPECT_EQ(seqs_of(report), (Seqs{3, 1}));
  EXPECT_EQ(start, (Seqs{2}));
}

TEST(MpiLanes, EveryMemberOfASupersetGroupOnARankIsARequestOfItsOwn) {
  FakeDriver d(ranks_10_11_and_12());
  const TaskId g = d.group("g", {10, 11, 12}, {}, d.rpc()).task;
  MpiLanes lanes(d.core().registry(), true);
  const Dispatch g0 = to(g, 0, 10, 1), g1 = to(g, 1, 11, 2), g2 = to(g, 2, 12, 3);
  EXPECT_TRUE(lanes.dispatched(d.core(), g0));
  EXPECT_FALSE(lanes.dispatched(d.core(), g1));  // same lane, its own request: waits for g[0]
  EXPECT_TRUE(lanes.dispatched(d.core(), g2));
  std::vector<MemberEnd> report;
  Seqs start;
  lanes.finished(ended(g0), report, start);
  EXPECT_EQ(seqs_of(report), (Seqs{1}));  // reported at once: not a whole request
  EXPECT_EQ(start, (Seqs{2}));
}

TEST(MpiLanes, OffOrWithoutMpiGroupsNothingIsHeld) {
  FakeDriver d(ranks_10_11_and_12());
  EXPECT_FALSE(MpiLanes(d.core().registry(), false).enabled());
  Builder plain;
  plain.remote(10).remote(11);
  FakeDriver e(std::move(plain));
  EXPECT_FALSE(MpiLanes(e.core().registry(), true).enabled());
}

TEST(MpiLanes, ALostMemberLeavesItsLaneHeldOrRunning) {
  FakeDriver d(ranks_10_11_and_12());
  const TaskId g = d.group("g", {10, 11}, {}, d.rpc()).task;
  const TaskId a = d.single("a", 10, {}, d.rpc()).task, b = d.single("b", 11, {}, d.rpc()).task;
  MpiLanes lanes(d.core().registry(), true);
  const Dispatch g0 = to(g, 0, 10, 1), g1 = to(g, 1, 11, 2), a0 = to(a, 0, 10, 3), b0 = to(b, 0, 11, 4);
  lanes.dispatched(d.core(), g0);
  lanes.dispatched(d.core(), g1);
  EXPECT_FALSE(lanes.dispatched(d.core(), a0));
  EXPECT_FALSE(lanes.dispatched(d.core(), b0));
  std::vector<MemberEnd> report;
  Seqs start;
  lanes.lost(3, report, start);  // a, held: it never runs, nothing frees
  EXPECT_TRUE(report.empty() && start.empty());
  EXPECT_EQ(lanes.held(), 1u);
  lanes.finished(ended(g0), report, start);  // g[0] done; g[1] lost while running: g's request ends
  EXPECT_TRUE(report.empty());
  lanes.lost(2, report, start);
  EXPECT_EQ(seqs_of(report), (Seqs{1}));
  EXPECT_EQ(start, (Seqs{4}));  // b, not a (lost)
}

TEST(MpiLanes, AMemberItsLaneDidNotStartCannotEnd) {
  FakeDriver d(ranks_10_11_and_12());
  const TaskId a = d.single("a", 10, {}, d.rpc()).task, b = d.single("b", 11, {}, d.rpc()).task;
  MpiLanes lanes(d.core().registry(), true);
  lanes.dispatched(d.core(), to(a, 0, 10, 1));
  const Dispatch b0 = to(b, 0, 11, 2);
  lanes.dispatched(d.core(), b0);
  std::vector<MemberEnd> report;
  Seqs start;
  EXPECT_THROW(lanes.finished(ended(b0), report, start), CoreError);
}

}  // namespace
}  // namespace dirsched::testing
