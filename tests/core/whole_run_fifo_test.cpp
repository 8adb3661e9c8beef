// The ladder switch whole_run_fifo (#1541, with #1460's handles and #1540's leases), on the fake driver:
// runs are admitted up to pipeline_depth (1 or 2) admitted and not terminal; the active run is the oldest
// of them and only its tasks are dispatched (each queue is one FIFO per run); when it turns terminal the
// next run is promoted and the next iteration sees all its READY tasks at once (group pass first); a run
// whose callback returned normally turns terminal only while active, a raised one as soon as its tasks
// are final; reservations, stall episodes and the SUB repeat count concern the active run only. Every
// test runs the invariant checker (FakeDriver), whose rules only_active_run_dispatches and
// returned_run_ends_active watch the same runs.
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_driver.hpp"

namespace dirsched::testing {
namespace {

using V = std::vector<std::string>;

Scheduler::Options with(std::initializer_list<Switch> on, std::uint32_t depth = 2) {
  Scheduler::Options o;
  for (Switch s : on) o.switches.set(s, true);
  o.pipeline_depth = depth;
  return o;
}

// The time of the first event line that starts with `prefix`, or -1.
double at(const FakeDriver& d, const std::string& prefix) {
  const auto& lines = d.trace().lines;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].rfind(prefix, 0) == 0) return d.trace().events[i].t;
  return -1;
}

V lines_of(const FakeDriver& d, const std::string& kind) {
  V out;
  for (const std::string& l : d.trace().lines)
    if (l.rfind(kind + " ", 0) == 0) out.push_back(l);
  return out;
}

// r1: a (2 s) on worker 0, callback returns. r2: b on idle worker 1, callback returns.
void two_runs(FakeDriver& d, RunId& r1, RunId& r2) {
  r1 = d.core().add_run("r1");
  r2 = d.core().add_run("r2");
  d.duration("a", 2);
  d.core().begin_run(r1);
  d.single("a", 0);
  d.end_run();
  d.core().begin_run(r2);
  d.single("b", 1);
  d.end_run();
}

TEST(WholeRunFifo, OnlyTheActiveRunDispatchesTheNextWaitsForPromotion) {
  FakeDriver d(Builder().chip(0).chip(1), with({Switch::kWholeRunFifo}));
  RunId r1, r2;
  two_runs(d, r1, r2);
  EXPECT_EQ(d.core().active_run(), r1);
  EXPECT_EQ(d.state("b"), TaskState::kReady);  // routed as usual (same ready event), waiting in its run's part
  EXPECT_EQ(lines_of(d, "ready"), (V{"ready a worker:0", "ready b worker:1"}));
  EXPECT_EQ(d.core().worker_queue_length(1), 0u);  // the passes see only the active run's entries
  EXPECT_EQ(d.core().parked_length(r2), 1u);
  EXPECT_FALSE(d.core().run_terminal(r2));
  EXPECT_EQ(d.dispatches(), (V{"a@0"}));
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"a@0", "b@1"}));
  EXPECT_EQ(at(d, "dispatch b"), 2.0);  // promoted when a completed and r1 turned terminal
  EXPECT_EQ(at(d, "run_end r1"), 2.0);
  EXPECT_EQ(at(d, "run_end r2"), 3.0);
  EXPECT_FALSE(d.core().active_run().valid());
  EXPECT_EQ(d.core().parked_length(r2), 0u);
}

TEST(WholeRunFifo, OffTheCoreDoesNotOrderRuns) {
  FakeDriver d(Builder().chip(0).chip(1));
  RunId r1, r2;
  two_runs(d, r1, r2);
  EXPECT_EQ(d.dispatches(), (V{"a@0", "b@1"}));  // b at once: a driver that must not overlap runs waits
  EXPECT_EQ(at(d, "dispatch b"), 0.0);
  EXPECT_FALSE(d.core().active_run().valid());
  EXPECT_TRUE(d.core().can_admit());
}

TEST(WholeRunFifo, APromotedRunsGroupsLaunchBeforeItsSingles) {
  // r2 submits s on worker 1, then the group g on {1, 2}; both wait. At the promotion the group pass
  // runs before any single is placed, as after a batch: g launches and s waits behind it.
  FakeDriver d(Builder().chip(0).chip(1).chip(2), with({Switch::kWholeRunFifo}));
  const RunId r1 = d.core().add_run("r1"), r2 = d.core().add_run("r2");
  d.duration("a", 2);
  d.core().begin_run(r1);
  d.single("a", 0);
  d.end_run();
  d.core().begin_run(r2);
  d.single("s", 1);
  d.group("g", {1, 2});
  d.end_run();
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"a@0", "g[0]@1", "g[1]@2", "s@1"}));
  EXPECT_EQ(at(d, "dispatch g"), 2.0);
  EXPECT_EQ(at(d, "dispatch s"), 3.0);
  EXPECT_TRUE(d.core().run_terminal(r2));
}

TEST(WholeRunFifo, WithoutTheSwitchTheSameRunsPlaceTheSingleFirst) {
  FakeDriver d(Builder().chip(0).chip(1).chip(2));
  const RunId r1 = d.core().add_run("r1"), r2 = d.core().add_run("r2");
  d.duration("a", 2);
  d.core().begin_run(r1);
  d.single("a", 0);
  d.end_run();
  d.core().begin_run(r2);
  d.single("s", 1);
  d.group("g", {1, 2});
  d.end_run();
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"a@0", "s@1", "g[0]@1", "g[1]@2"}));
}

TEST(WholeRunFifo, AReturnedRunTurnsTerminalOnlyWhileActive) {
  // r2's callback returns with nothing submitted: it waits for its turn, then ends at once.
  FakeDriver d(Builder().chip(0), with({Switch::kWholeRunFifo}));
  const RunId r1 = d.core().add_run("r1"), r2 = d.core().add_run("r2");
  d.duration("a", 2);
  d.core().begin_run(r1);
  d.single("a", 0);
  d.end_run();
  d.core().begin_run(r2);
  d.end_run();
  EXPECT_TRUE(d.core().run_info(r2).callback_ended);
  EXPECT_FALSE(d.core().run_terminal(r2));
  EXPECT_FALSE(d.core().can_admit());  // two admitted and not terminal
  d.run();
  EXPECT_EQ(lines_of(d, "run_end"), (V{"run_end r1", "run_end r2"}));
  EXPECT_EQ(at(d, "run_end r2"), 2.0);
  EXPECT_TRUE(d.core().can_admit());
}

TEST(WholeRunFifo, AnEmptyActiveRunEndsAtItsCallbacksEndAndPromotesTheNext) {
  // r1 is active and still building when r2... cannot begin (one callback at a time). So: r1 returns
  // empty while it is active: it ends at once, and a later run is active from its begin.
  FakeDriver d(Builder().chip(0), with({Switch::kWholeRunFifo}));
  const RunId r1 = d.core().add_run("r1"), r2 = d.core().add_run("r2");
  d.core().begin_run(r1);
  d.end_run();
  EXPECT_TRUE(d.core().run_terminal(r1));
  EXPECT_FALSE(d.core().active_run().valid());
  d.core().begin_run(r2);
  EXPECT_EQ(d.core().active_run(), r2);
  d.single("b", 0);
  EXPECT_EQ(d.dispatches(), (V{"b@0"}));  // the active run dispatches while its callback is open
  d.end_run();
  d.run();
  EXPECT_TRUE(d.core().run_terminal(r2));
}

TEST(WholeRunFifo, ARaisedSuccessorLeavesTheFifoAtOnceWithRunCancellation) {
  FakeDriver d(Builder().chip(0).chip(1), with({Switch::kWholeRunFifo, Switch::kRunCancellation}));
  const RunId r1 = d.core().add_run("r1"), r2 = d.core().add_run("r2");
  d.duration("a", 2);
  d.core().begin_run(r1);
  d.single("a", 0);
  d.end_run();
  d.core().begin_run(r2);
  d.single("b", 1);
  EXPECT_EQ(d.raise_and_end("bad"), 1u);
  EXPECT_EQ(d.state("b"), TaskState::kCancelled);
  EXPECT_TRUE(d.core().run_terminal(r2));  // never active: its tasks are final, it raised
  EXPECT_EQ(d.core().parked_length(r2), 0u);
  EXPECT_EQ(d.core().active_run(), r1);
  EXPECT_TRUE(d.core().can_admit());  // its admission slot is free again
  EXPECT_EQ(lines_of(d, "run_end"), (V{"run_end r2"}));
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"a@0"}));
  EXPECT_EQ(lines_of(d, "run_end"), (V{"run_end r2", "run_end r1"}));
}

TEST(WholeRunFifo, ARaisedSuccessorWithoutCancellationRunsItsTasksWhenPromoted) {
  FakeDriver d(Builder().chip(0).chip(1), with({Switch::kWholeRunFifo}));
  const RunId r1 = d.core().add_run("r1"), r2 = d.core().add_run("r2");
  d.duration("a", 2);
  d.core().begin_run(r1);
  d.single("a", 0);
  d.end_run();
  d.core().begin_run(r2);
  d.single("b", 1);
  EXPECT_EQ(d.raise_and_end("bad"), 0u);
  EXPECT_FALSE(d.core().run_terminal(r2));  // b is READY, not final
  d.run();
  EXPECT_EQ(at(d, "dispatch b"), 2.0);
  EXPECT_EQ(lines_of(d, "run_end"), (V{"run_end r1", "run_end r2"}));
  EXPECT_TRUE(d.core().run_info(r2).error.has_value());
}

TEST(WholeRunFifo, ARaisedActiveRunEndsWhenItsRunningMembersEndThenPromotes) {
  FakeDriver d(Builder().chip(0).chip(1), with({Switch::kWholeRunFifo, Switch::kRunCancellation}));
  const RunId r1 = d.core().add_run("r1"), r2 = d.core().add_run("r2");
  d.duration("a", 2);
  d.core().begin_run(r1);
  d.single("a", 0);
  d.single("c", 0);  // READY behind a: cancelled by the raise
  EXPECT_EQ(d.raise_and_end("bad"), 1u);
  EXPECT_FALSE(d.core().run_terminal(r1));  // a still runs
  d.core().begin_run(r2);
  d.single("b", 1);
  d.end_run();
  EXPECT_EQ(d.dispatches(), (V{"a@0"}));
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"a@0", "b@1"}));
  EXPECT_EQ(at(d, "dispatch b"), 2.0);
}

TEST(WholeRunFifo, AdmissionStopsAtPipelineDepth) {
  {
    FakeDriver d(Builder().chip(0), with({Switch::kWholeRunFifo}, 1));
    const RunId r1 = d.core().add_run("r1"), r2 = d.core().add_run("r2");
    d.core().begin_run(r1);
    d.single("a", 0);
    d.end_run();
    EXPECT_FALSE(d.core().can_admit());
    try {
      d.core().begin_run(r2);
      ADD_FAILURE() << "a second run was admitted at pipeline_depth 1";
    } catch (const CoreError& e) {
      EXPECT_EQ(e.code(), CoreErrorCode::kRunOrder);
      EXPECT_NE(std::string(e.what()).find("pipeline_depth 1"), std::string::npos) << e.what();
    }
    d.run();
    EXPECT_TRUE(d.core().can_admit());
    d.core().begin_run(r2);
  }
  {
    FakeDriver d(Builder().chip(0), with({Switch::kWholeRunFifo}, 2));
    const RunId r1 = d.core().add_run("r1"), r2 = d.core().add_run("r2"), r3 = d.core().add_run("r3");
    for (RunId r : {r1, r2}) {
      d.core().begin_run(r);
      d.single("t" + std::to_string(r.index()), 0);
      d.end_run();
    }
    EXPECT_FALSE(d.core().can_admit());
    EXPECT_THROW(d.core().begin_run(r3), CoreError);
    d.step();  // t0 ends: r1 terminal, r2 active (t1 dispatched), one slot free
    EXPECT_EQ(d.core().active_run(), r2);
    EXPECT_TRUE(d.core().can_admit());
    d.core().begin_run(r3);
  }
}

TEST(WholeRunFifo, ReservationsAndStallsConcernTheActiveRunOnly) {
  // r1: p (1 s) on worker 2 writes x; y on worker 0 reads x; q (5 s) on worker 1. r2: the group g on
  // {0, 1}. At t=1 y turns READY on idle worker 0. g waits for its run, so it is no blocked head: it
  // reserves nothing and no stall is reported while it waits (stall_report_s 0.5).
  auto build = [](FakeDriver& d) {
    BufferId x = d.buffer("x");
    const RunId r1 = d.core().add_run("r1"), r2 = d.core().add_run("r2");
    d.duration("p", 1);
    d.duration("q", 5);
    d.core().begin_run(r1);
    d.single("p", 2, {FakeDriver::out(x)});
    d.single("y", 0, {FakeDriver::in(x)});
    d.single("q", 1);
    d.end_run();
    d.core().begin_run(r2);
    d.group("g", {0, 1});
    d.end_run();
    d.run();
  };
  Scheduler::Options on = with({Switch::kWholeRunFifo, Switch::kGroupReservation});
  on.stall_report_s = 0.5;
  FakeDriver d(Builder().chip(0).chip(1).chip(2), on);
  build(d);
  EXPECT_EQ(at(d, "dispatch y"), 1.0);
  EXPECT_EQ(at(d, "dispatch g"), 5.0);
  EXPECT_TRUE(lines_of(d, "group_blocked").empty());
  EXPECT_TRUE(lines_of(d, "reservation_stall").empty());
  // Without whole_run_fifo (the core does not order runs) g is the blocked head: it reserves worker 0
  // against y and a stall is reported.
  Scheduler::Options off = with({Switch::kGroupReservation});
  off.stall_report_s = 0.5;
  FakeDriver e(Builder().chip(0).chip(1).chip(2), off);
  build(e);
  EXPECT_EQ(at(e, "dispatch y"), 6.0);
  EXPECT_FALSE(lines_of(e, "reservation_stall").empty());
}

TEST(WholeRunFifo, TheSubRepeatCountAndQueuesAreTheActiveRunsOnly) {
  FakeDriver d(Builder().chip(0).sub(1), with({Switch::kWholeRunFifo}));
  const RunId r1 = d.core().add_run("r1"), r2 = d.core().add_run("r2");
  d.duration("s1", 2);
  d.core().begin_run(r1);
  d.sub("s1");
  d.end_run();
  d.core().begin_run(r2);
  d.sub("s2");
  d.sub("s3");
  d.end_run();
  EXPECT_EQ(d.core().sub_queue_length(), 0u);  // run_instant repeats for the active run's SUB entries
  EXPECT_EQ(d.core().parked_length(r2), 2u);
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"s1@sub0", "s2@sub0", "s3@sub0"}));
  EXPECT_EQ(at(d, "dispatch s2"), 2.0);
}

TEST(WholeRunFifo, TheDumpNamesTheRunFifoAndItsActiveRun) {
  FakeDriver d(Builder().chip(0).chip(1), with({Switch::kWholeRunFifo}));
  const RunId r1 = d.core().add_run("r1"), r2 = d.core().add_run("r2");
  d.core().begin_run(r1);
  d.single("a", 0);
  d.end_run();
  d.core().begin_run(r2);
  const std::string dump = d.core().dump();
  EXPECT_NE(dump.find("run_fifo=[r1(active),r2,]"), std::string::npos) << dump;
  d.end_run();
  d.run();
  EXPECT_NE(d.core().dump().find("run_fifo=[]"), std::string::npos) << d.core().dump();
}

TEST(WholeRunFifo, AParkedTaskIsReportedStuckWithItsRun) {
  FakeDriver d(Builder().chip(0).chip(1), with({Switch::kWholeRunFifo}));
  const RunId r1 = d.core().add_run("r1"), r2 = d.core().add_run("r2");
  d.core().begin_run(r1);
  d.single("a", 0);  // runs; the stuck report assumes nothing runs any more (a driver that stops)
  d.end_run();
  d.core().begin_run(r2);
  d.single("b", 1);
  d.end_run();
  bool found = false;
  for (const Stuck& s : d.core().stuck())
    if (s.task == "b") {
      found = true;
      EXPECT_EQ(s.reason, "READY in run 'r2', which never became the active run");
    }
  EXPECT_TRUE(found);
  EXPECT_NE(d.core().dump().find("parked r2=[b,]"), std::string::npos) << d.core().dump();
  d.run();
}

TEST(WholeRunFifo, EncodingsDifferWhenOnlyTheParkedTasksDiffer) {
  auto make = [](bool second) {
    auto d = std::make_unique<FakeDriver>(Builder().chip(0).chip(1), with({Switch::kWholeRunFifo}));
    const RunId r1 = d->core().add_run("r1"), r2 = d->core().add_run("r2");
    d->core().begin_run(r1);
    d->single("a", 0);
    d->end_run();
    d->core().begin_run(r2);
    d->single("b", second ? 1 : 0);
    d->end_run();
    std::vector<std::uint32_t> words;
    d->core().encode(words);
    return std::make_pair(words, d->core().dump());
  };
  const auto a = make(false), b = make(true);
  EXPECT_NE(a.first, b.first);
  EXPECT_NE(a.second, b.second);
}

}  // namespace
}  // namespace dirsched::testing
