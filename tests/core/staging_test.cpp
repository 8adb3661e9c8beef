// The ladder switch staging (#1583), core part, on the fake driver: NEXT_LEVEL workers have frames 1
// (default) or 2 (local kinds only); the preparable run is the second run of the run FIFO when the first
// is active and the second's callback returned without raising; the staging pass (every iteration,
// after activation, before the group pass) stages at most one single of it, on the first worker in
// registration order with two frames, a free second frame and a READY single of that run at the head of
// its FIFO, unless the run has a READY group; a staged member holds the worker's second frame only; it
// is activated in the first iteration in which its run is active (event activate, before the staging
// pass); busy_poll counts a staged member as running. Off (and inert without whole_run_fifo), nothing
// changes. Every FakeDriver test runs the invariant checker, whose staging rules are tested at the end
// on crafted event streams. Driver timing (prepare_s, prepare_overlap) is not part of the core.
#include <gtest/gtest.h>

#include <functional>
#include <list>

#include "fake_driver.hpp"

namespace dirsched::testing {
namespace {

using V = std::vector<std::string>;

// whole_run_fifo + staging, and edge_triggered_wake so that a callback's end is a wake (as under
// `current`): the iteration after r2's callback returns runs the staging pass.
const std::initializer_list<Switch> kStage = {Switch::kWholeRunFifo, Switch::kStaging,
                                              Switch::kEdgeTriggeredWake};

V lines_of(const FakeDriver& d, const std::string& kind) {
  V out;
  for (const std::string& l : d.trace().lines)
    if (l.rfind(kind + " ", 0) == 0) out.push_back(l);
  return out;
}

double at(const FakeDriver& d, const std::string& line) {
  const auto& lines = d.trace().lines;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i] == line) return d.trace().events[i].t;
  return -1;
}

std::size_t index_of_line(const FakeDriver& d, const std::string& line) {
  const auto& lines = d.trace().lines;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i] == line) return i;
  return lines.size();
}

// r1: `a` (2 s) on worker 1, callback returns. r2: its callback submits `second` (default: c on 0),
// then returns.
void two_runs(FakeDriver& d, const std::function<void()>& second = {}) {
  const RunId r1 = d.core().add_run("r1");
  const RunId r2 = d.core().add_run("r2");
  d.duration("a", 2);
  d.core().begin_run(r1);
  d.single("a", 1);
  d.end_run();
  d.core().begin_run(r2);
  if (second)
    second();
  else
    d.single("c", 0);
  d.end_run();
}

TEST(Staging, WithoutEdgeTriggeredWakeTheCallbackEndThatMakesARunPreparableIterates) {
  // The seed's loop: a callback's end is an op, followed by the scheduler's iterations (the replay and
  // this driver ask for them when the end made its run the preparable one).
  FakeDriver d(Builder().chip(0, 2).chip(1, 2), with({Switch::kWholeRunFifo, Switch::kStaging}));
  two_runs(d);
  EXPECT_EQ(d.dispatches(), (V{"a@1", "c@0 staged"}));
}

TEST(Staging, TheNextRunsSingleIsStagedAndActivatedWhenItsRunIsActive) {
  FakeDriver d(Builder().chip(0, 2).chip(1, 2), with(kStage));
  two_runs(d);
  EXPECT_EQ(d.dispatches(), (V{"a@1", "c@0 staged"}));
  EXPECT_EQ(lines_of(d, "dispatch"), (V{"dispatch a[0]@1", "dispatch c[0]@0 prepare_only"}));
  EXPECT_EQ(at(d, "dispatch c[0]@0 prepare_only"), 0.0);
  const TaskId c = d.core().staged_on(0);
  ASSERT_TRUE(c.valid());
  EXPECT_EQ(d.core().name(c), "c");
  EXPECT_EQ(d.core().staged_members(), 1u);
  EXPECT_EQ(d.core().state(c), TaskState::kReady);  // staged, not running
  EXPECT_EQ(d.state("c"), TaskState::kReady);        // the recorder starts it at its activation
  EXPECT_EQ(d.core().running_members(), 1u);
  EXPECT_EQ(d.core().parked_length(d.core().run_of(c)), 0u);  // it left its run's part of the queue
  EXPECT_NE(d.core().dump().find("staged=c"), std::string::npos);
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"a@1", "c@0 staged", "c@0 activated"}));
  EXPECT_EQ(at(d, "activate c[0]@0"), 2.0);  // at the promotion, a's end
  EXPECT_EQ(at(d, "member_end c[0]@0 success"), 3.0);
  EXPECT_EQ(d.state("c"), TaskState::kCompleted);
  EXPECT_EQ(d.core().staged_members(), 0u);
  // The activation keeps its staging's dispatch order.
  std::uint64_t staged_seq = 0, activated_seq = 1;
  for (std::size_t i = 0; i < d.trace().lines.size(); ++i) {
    if (d.trace().lines[i] == "dispatch c[0]@0 prepare_only") staged_seq = d.trace().events[i].dispatch_seq;
    if (d.trace().lines[i] == "activate c[0]@0") activated_seq = d.trace().events[i].dispatch_seq;
  }
  EXPECT_EQ(staged_seq, activated_seq);
}

// Rule: a staged member holds the worker's second frame only; the worker stays idle for the passes.
TEST(Staging, AStagedMemberLeavesItsWorkerIdleForTheActiveRun) {
  FakeDriver d(Builder().chip(0, 2).chip(1, 2), with(kStage));
  const RunId r1 = d.core().add_run("r1");
  const RunId r2 = d.core().add_run("r2");
  const BufferId x = d.buffer("x");
  d.core().begin_run(r1);
  d.single("a", 1, {FakeDriver::out(x)});  // 1 s
  d.single("e", 0, {FakeDriver::in(x)});   // PENDING on a
  d.end_run();
  d.core().begin_run(r2);
  d.single("c", 0);
  d.end_run();
  EXPECT_EQ(d.dispatches(), (V{"a@1", "c@0 staged"}));
  EXPECT_FALSE(d.core().worker_busy(0));  // staged on an idle worker: still idle
  d.run();
  // e (the active run) takes worker 0 while c is staged there; c starts when r1 ended.
  EXPECT_EQ(d.dispatches(), (V{"a@1", "c@0 staged", "e@0", "c@0 activated"}));
  EXPECT_EQ(at(d, "dispatch e[0]@0"), 1.0);
  EXPECT_EQ(at(d, "activate c[0]@0"), 2.0);
}

// Rule: the activation comes first in the first iteration in which its run is active (before the
// staging pass and the passes), and its worker is busy from then: a single of the run queued behind it
// on that worker waits for its end.
TEST(Staging, ActivationComesFirstInThePromotedRunsFirstIterationAndMakesTheWorkerBusy) {
  FakeDriver d(Builder().chip(0, 2).chip(1, 2), with(kStage));
  two_runs(d, [&] {
    d.single("c", 0);
    d.single("c2", 0);
    d.single("b", 1);
  });
  EXPECT_EQ(d.dispatches(), (V{"a@1", "c@0 staged"}));
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"a@1", "c@0 staged", "c@0 activated", "b@1", "c2@0"}));
  EXPECT_EQ(at(d, "activate c[0]@0"), 2.0);
  EXPECT_EQ(at(d, "dispatch b[0]@1"), 2.0);
  EXPECT_EQ(at(d, "dispatch c2[0]@0"), 3.0);
  EXPECT_LT(index_of_line(d, "activate c[0]@0"), index_of_line(d, "dispatch b[0]@1"));
}

// Rule: never on a one-frame worker; the walk takes the first worker (registration order) with two
// frames and a READY single of the run at the head of its FIFO.
TEST(Staging, OnlyATwoFrameWorkerStagesTheFirstInRegistrationOrder) {
  {
    FakeDriver d(Builder().chip(0).chip(1, 2).chip(2, 2), with(kStage));
    two_runs(d, [&] {
      d.single("c", 0);  // worker 0 has one frame
      d.single("e", 2);
      d.single("b", 1);  // READY after e, but worker 1 comes first
      d.single("b2", 1);
    });
    EXPECT_EQ(d.dispatches(), (V{"a@1", "b@1 staged"}));
    d.run();
    EXPECT_EQ(d.state("b2"), TaskState::kCompleted);
  }
  {
    FakeDriver d(Builder().chip(0).chip(1), with(kStage));  // no two-frame worker: inert
    two_runs(d);
    EXPECT_EQ(d.dispatches(), (V{"a@1"}));
    EXPECT_EQ(d.core().staged_members(), 0u);
    d.run();
    EXPECT_EQ(d.dispatches(), (V{"a@1", "c@0"}));
  }
}

// Rule: at most one task per run is ever staged, even when later iterations run before promotion.
TEST(Staging, AtMostOneTaskOfARunIsStaged) {
  FakeDriver d(Builder().chip(0, 2).chip(1, 2).chip(2, 2), with(kStage));
  const RunId r1 = d.core().add_run("r1");
  const RunId r2 = d.core().add_run("r2");
  d.duration("a", 3);
  d.core().begin_run(r1);
  d.single("a", 1);
  d.single("a2", 2);  // 1 s: its end at t=1 is an iteration before the promotion at t=3
  d.end_run();
  d.core().begin_run(r2);
  d.single("c", 0);
  d.single("e", 2);
  d.end_run();
  d.advance_to(2);
  EXPECT_EQ(d.dispatches(), (V{"a@1", "a2@2", "c@0 staged"}));
  EXPECT_EQ(d.core().staged_members(), 1u);
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"a@1", "a2@2", "c@0 staged", "c@0 activated", "e@2"}));
}

// Rule: a preparable run with a READY group stages nothing (its group pass comes first at promotion).
TEST(Staging, AReadyGroupOfThePreparableRunStagesNothing) {
  FakeDriver d(Builder().chip(0, 2).chip(1, 2).chip(2), with(kStage));
  two_runs(d, [&] {
    d.single("c", 0);
    d.group("g", {2, 0});
  });
  EXPECT_EQ(d.dispatches(), (V{"a@1"}));
  EXPECT_EQ(d.core().staged_members(), 0u);
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"a@1", "g[0]@2", "g[1]@0", "c@0"}));
}

// Rule: the preparable run's callback has returned without raising: nothing is staged while it is open,
// nor for a run that raised.
TEST(Staging, OnlyARunWhoseCallbackReturnedIsPreparable) {
  FakeDriver d(Builder().chip(0, 2).chip(1, 2), with(kStage));
  const RunId r1 = d.core().add_run("r1");
  const RunId r2 = d.core().add_run("r2");
  d.duration("a", 2);
  d.core().begin_run(r1);
  d.single("a", 1);
  d.end_run();
  d.core().begin_run(r2);
  d.single("c", 0);  // READY: a wake, one iteration; r2's callback is open
  EXPECT_FALSE(d.core().preparable_run().valid());
  EXPECT_EQ(d.dispatches(), (V{"a@1"}));
  d.end_run();
  EXPECT_EQ(d.core().preparable_run(), r2);
  EXPECT_EQ(d.dispatches(), (V{"a@1", "c@0 staged"}));

  FakeDriver raised(Builder().chip(0, 2).chip(1, 2), with(kStage));  // run_cancellation off: c stays READY
  const RunId q1 = raised.core().add_run("r1");
  const RunId q2 = raised.core().add_run("r2");
  raised.duration("a", 2);
  raised.core().begin_run(q1);
  raised.single("a", 1);
  raised.end_run();
  raised.core().begin_run(q2);
  raised.single("c", 0);
  raised.raise_and_end("boom");
  EXPECT_FALSE(raised.core().preparable_run().valid());
  EXPECT_EQ(raised.dispatches(), (V{"a@1"}));
  raised.run();
  EXPECT_EQ(raised.dispatches(), (V{"a@1", "c@0"}));
}

// frames: 1 or 2, and 2 for local kinds only.
TEST(Staging, FramesAreOneOrTwoAndALocalKindHasTwo) {
  Registry r;
  EXPECT_NO_THROW(r.add_next_level(WorkerId(0), WorkerKind::kLocalChip, 2));
  EXPECT_NO_THROW(r.add_next_level(WorkerId(1), WorkerKind::kLocalWorker, 2));
  EXPECT_NO_THROW(r.add_next_level(WorkerId(2), WorkerKind::kRemote, 1));
  EXPECT_THROW(r.add_next_level(WorkerId(3), WorkerKind::kRemote, 2), RegistryError);
  EXPECT_THROW(r.add_next_level(WorkerId(4), WorkerKind::kLocalChip, 0), RegistryError);
  EXPECT_THROW(r.add_next_level(WorkerId(5), WorkerKind::kLocalChip, 3), RegistryError);
  EXPECT_EQ(r.next_level_count(), 3u);  // a refused worker is not registered
  EXPECT_EQ(r.worker_at(0).frames, 2u);
  EXPECT_EQ(r.worker_at(2).frames, 1u);
  Registry d;
  d.add_next_level(WorkerId(0), WorkerKind::kLocalChip);
  EXPECT_EQ(d.worker_at(0).frames, 1u);  // the default
}

// A remote worker (one frame) never stages, even when its single heads the run.
TEST(Staging, NeverOnARemoteWorker) {
  FakeDriver d(Builder().remote(5).chip(0, 2).chip(1, 2), with(kStage));
  two_runs(d, [&] {
    d.single("rc", 5, {}, d.rpc());
    d.single("c", 0);
  });
  EXPECT_EQ(d.dispatches(), (V{"a@1", "c@0 staged"}));
}

// busy_poll: "running or staged". Nothing runs (r1 holds a SUB group larger than the pool), c is
// staged: with edge_triggered_wake and busy_poll the loop keeps the seed's repeats.
TEST(Staging, BusyPollCountsAStagedMemberAsRunning) {
  for (bool staging : {true, false}) {
    Scheduler::Options o = with({Switch::kWholeRunFifo, Switch::kEdgeTriggeredWake, Switch::kBusyPoll});
    o.switches.set(Switch::kStaging, staging);
    FakeDriver d(Builder().chip(0, 2).sub(2), o);
    const RunId r1 = d.core().add_run("r1");
    const RunId r2 = d.core().add_run("r2");
    d.core().begin_run(r1);
    d.sub_group("G", 3);  // never fits: r1 never ends, nothing runs
    d.end_run();
    d.core().begin_run(r2);
    d.single("c", 0);
    d.end_run();
    EXPECT_EQ(d.core().running_members(), 0u);
    EXPECT_EQ(d.core().staged_members(), staging ? 1u : 0u);
    EXPECT_FALSE(d.core().wake_pending());
    EXPECT_EQ(d.core().loop_continues(0), staging) << "staging " << staging;
  }
}

// Off (the default, and whole_run_fifo alone), two-frame workers change nothing; on without
// whole_run_fifo it is inert: the same dispatches, events and state as without the switch.
TEST(Staging, OffOrInertChangesNothing) {
  const auto play = [](FakeDriver& d) {
    two_runs(d, [&] {
      d.single("c", 0);
      d.single("b", 1);
    });
    d.run();
  };
  for (const Scheduler::Options& base :
       {Scheduler::Options{}, with({Switch::kWholeRunFifo}), with({Switch::kWholeRunFifo, Switch::kEdgeTriggeredWake})}) {
    FakeDriver one(Builder().chip(0).chip(1), base);
    FakeDriver two(Builder().chip(0, 2).chip(1, 2), base);
    play(one);
    play(two);
    EXPECT_EQ(two.dispatches(), one.dispatches());
    EXPECT_EQ(two.trace().lines, one.trace().lines);
    EXPECT_EQ(two.core().dump(), one.core().dump());
    EXPECT_EQ(two.core().staged_members(), 0u);
  }
  Scheduler::Options inert = with({Switch::kStaging, Switch::kEdgeTriggeredWake});  // no whole_run_fifo
  FakeDriver on(Builder().chip(0, 2).chip(1, 2), inert);
  FakeDriver off(Builder().chip(0, 2).chip(1, 2), with({Switch::kEdgeTriggeredWake}));
  play(on);
  play(off);
  EXPECT_EQ(on.trace().lines, off.trace().lines);
  EXPECT_EQ(on.core().dump(), off.core().dump());
  EXPECT_FALSE(on.core().preparable_run().valid());
}

// ---------------------------------------------------------------------------------------------
// The checker's staging rules, on crafted event streams.

class Feed {
 public:
  explicit Feed(bool staging = true) : reg_(make_registry()), checker_(reg_, switches(staging)) {}
  static Registry make_registry() {
    Registry r;
    r.add_next_level(WorkerId(0), WorkerKind::kLocalChip, 2);
    r.add_next_level(WorkerId(1), WorkerKind::kLocalChip, 1);
    r.add_next_level(WorkerId(2), WorkerKind::kRemote, 1);
    r.add_next_level(WorkerId(3), WorkerKind::kLocalWorker, 2);
    return r;
  }
  static Switches switches(bool staging) {
    Switches s;
    s.set(Switch::kWholeRunFifo, true);
    s.set(Switch::kStaging, staging);
    return s;
  }
  // A task of `run`, READY on its queue.
  void ready_task(std::uint32_t id, std::uint32_t run, TaskKind kind, std::vector<std::int64_t> workers) {
    Event s = at(EventKind::kSubmit, id, run, kind);
    auto& ws = workers_.emplace_back();
    for (std::int64_t w : workers) ws.push_back(WorkerId(w));
    s.workers = &ws;
    s.op_kind = kind;
    s.member_count = static_cast<std::uint32_t>(workers.size());
    checker_.on_event(s);
    Event r = at(EventKind::kReady, id, run, kind);
    r.queue = kind == TaskKind::kGroup ? QueueKind::kGroup : QueueKind::kWorker;
    r.queue_worker = WorkerId(workers.at(0));
    checker_.on_event(r);
  }
  void stage(std::uint32_t id, std::uint32_t run, std::int64_t worker) {
    Event e = at(EventKind::kDispatch, id, run);
    e.target.worker = WorkerId(worker);
    e.prepare_only = true;
    checker_.on_event(e);
  }
  void activate(std::uint32_t id, std::uint32_t run, std::int64_t worker) {
    Event e = at(EventKind::kActivate, id, run);
    e.target.worker = WorkerId(worker);
    checker_.on_event(e);
  }
  void dispatch(std::uint32_t id, std::uint32_t run, std::int64_t worker) {
    Event e = at(EventKind::kDispatch, id, run);
    e.target.worker = WorkerId(worker);
    checker_.on_event(e);
  }
  void run_end(std::uint32_t run) {
    Event e(EventKind::kRunEnd);
    e.run = RunId(run);
    e.name = names_.emplace_back("r" + std::to_string(run));
    checker_.on_event(e);
  }

 private:
  Event at(EventKind k, std::uint32_t id, std::uint32_t run, TaskKind kind = TaskKind::kSingle) {
    Event e(k);
    e.task = TaskId(id);
    e.task_kind = kind;
    e.name = names_.emplace_back("t" + std::to_string(id));
    e.run = RunId(run);
    e.member_count = 1;
    return e;
  }
  Registry reg_;
  InvariantChecker checker_;
  std::list<std::vector<WorkerId>> workers_;
  std::list<std::string> names_;
};

std::string rule_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvariantViolation& v) {
    return v.violation.rule;
  }
  return "(none)";
}

TEST(StagingInvariants, AcceptAStagingAndItsActivation) {
  Feed f;
  f.ready_task(0, 0, TaskKind::kSingle, {1});
  f.dispatch(0, 0, 1);
  f.ready_task(1, 1, TaskKind::kSingle, {0});
  EXPECT_EQ(rule_of([&] { f.stage(1, 1, 0); }), "(none)");
  f.run_end(0);
  EXPECT_EQ(rule_of([&] { f.activate(1, 1, 0); }), "(none)");
}

TEST(StagingInvariants, EachRuleFires) {
  {
    Feed f(false);
    f.ready_task(0, 1, TaskKind::kSingle, {0});
    EXPECT_EQ(rule_of([&] { f.stage(0, 1, 0); }), "staged_only_with_switch");
  }
  {
    Feed f;
    f.ready_task(0, 1, TaskKind::kGroup, {0, 3});
    EXPECT_EQ(rule_of([&] { f.stage(0, 1, 0); }), "staged_single");
  }
  {
    Feed f;
    f.ready_task(0, 1, TaskKind::kSingle, {2});
    EXPECT_EQ(rule_of([&] { f.stage(0, 1, 2); }), "staged_not_remote");
  }
  {
    Feed f;
    f.ready_task(0, 1, TaskKind::kSingle, {1});
    EXPECT_EQ(rule_of([&] { f.stage(0, 1, 1); }), "staged_two_frames");
  }
  {
    Feed f;
    f.ready_task(0, 1, TaskKind::kSingle, {0});
    f.ready_task(1, 1, TaskKind::kSingle, {3});
    f.stage(0, 1, 0);
    EXPECT_EQ(rule_of([&] { f.stage(1, 1, 3); }), "one_staged_per_run");
  }
  {
    Feed f;
    f.ready_task(0, 1, TaskKind::kSingle, {0});
    f.ready_task(1, 2, TaskKind::kSingle, {0});
    f.stage(0, 1, 0);
    EXPECT_EQ(rule_of([&] { f.stage(1, 2, 0); }), "staged_frame_free");
  }
  {
    Feed f;
    f.ready_task(0, 0, TaskKind::kSingle, {0});
    EXPECT_EQ(rule_of([&] { f.stage(0, 0, 0); }), "staged_next_run");
  }
  {
    Feed f;  // an activation of a task never staged
    f.ready_task(0, 0, TaskKind::kSingle, {0});
    EXPECT_EQ(rule_of([&] { f.activate(0, 0, 0); }), "activate_only_staged");
  }
  {
    Feed f;  // a staged task dispatched without its activation
    f.ready_task(0, 1, TaskKind::kSingle, {0});
    f.stage(0, 1, 0);
    f.run_end(0);
    EXPECT_EQ(rule_of([&] { f.dispatch(0, 1, 0); }), "activate_only_staged");
  }
  {
    Feed f;  // activated before its run is active
    f.ready_task(0, 1, TaskKind::kSingle, {0});
    f.stage(0, 1, 0);
    EXPECT_EQ(rule_of([&] { f.activate(0, 1, 0); }), "only_active_run_dispatches");
  }
}

}  // namespace
}  // namespace dirsched::testing
