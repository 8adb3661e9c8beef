// The invariant checker fires on crafted bad event streams, one per rule, and stays quiet on the
// real core (every FakeDriver test runs with it attached).
#include "dirsched/invariants.hpp"

#include <gtest/gtest.h>

#include <list>

namespace dirsched {
namespace {

Registry registry() {
  Registry r;
  r.add_next_level(WorkerId(0), WorkerKind::kLocalChip);
  r.add_next_level(WorkerId(1), WorkerKind::kLocalChip);
  r.add_next_level(WorkerId(2), WorkerKind::kLocalChip);
  r.set_sub_workers(2);
  return r;
}

// Feeds hand-made events to a checker. Lists stay alive in std::list so pointers remain valid.
class Feed {
 public:
  explicit Feed(Switches policy = {}) : reg_(registry()), checker_(reg_, policy) {
    checker_.set_dump([] { return std::string("(dump)"); });
  }
  InvariantChecker& checker() { return checker_; }

  void submit(std::uint32_t id, TaskKind kind, std::vector<std::int64_t> workers, std::uint32_t members = 1,
              std::vector<Dependency> deps = {}) {
    submit_from(kind, id, kind, std::move(workers), members, std::move(deps));
  }
  // A submit whose op (`op`) and scheduling kind (`kind`) may differ, as for a one-member group.
  void submit_from(TaskKind op, std::uint32_t id, TaskKind kind, std::vector<std::int64_t> workers,
                   std::uint32_t members = 1, std::vector<Dependency> deps = {}) {
    Event e = at(EventKind::kSubmit, id, kind);
    e.op_kind = op;
    auto& ws = workers_.emplace_back();
    for (std::int64_t w : workers) ws.push_back(WorkerId(w));
    e.workers = &ws;
    e.deps = &deps_.emplace_back(std::move(deps));
    e.member_count = members;
    kinds_[id] = kind;
    checker_.on_event(e);
  }
  void ready(std::uint32_t id, QueueKind q, std::int64_t worker = 0) {
    Event e = at(EventKind::kReady, id);
    e.queue = q;
    e.queue_worker = WorkerId(worker);
    checker_.on_event(e);
  }
  void launch(std::uint32_t id) { checker_.on_event(at(EventKind::kGroupLaunched, id)); }
  void dispatch(std::uint32_t id, std::uint32_t member, std::int64_t worker) {
    Event e = at(EventKind::kDispatch, id);
    e.member = member;
    e.target.worker = WorkerId(worker);
    checker_.on_event(e);
  }
  void dispatch_sub(std::uint32_t id, std::uint32_t member, std::uint32_t sub) {
    Event e = at(EventKind::kDispatch, id);
    e.member = member;
    e.target.sub = true;
    e.target.sub_index = sub;
    checker_.on_event(e);
  }
  // `batch_start`: the first end of the ends one iteration applies (Event::batch_start).
  void end(std::uint32_t id, std::uint32_t member, std::int64_t worker, bool batch_start = false) {
    Event e = at(EventKind::kMemberEnd, id);
    e.member = member;
    e.target.worker = WorkerId(worker);
    e.batch_start = batch_start;
    checker_.on_event(e);
  }
  void end_sub(std::uint32_t id, std::uint32_t member, std::uint32_t sub, bool batch_start = false) {
    Event e = at(EventKind::kMemberEnd, id);
    e.member = member;
    e.target.sub = true;
    e.target.sub_index = sub;
    e.batch_start = batch_start;
    checker_.on_event(e);
  }
  void complete(std::uint32_t id) { checker_.on_event(at(EventKind::kComplete, id)); }
  void poison(std::uint32_t id) { checker_.on_event(at(EventKind::kPoison, id)); }
  void cancel(std::uint32_t id) { checker_.on_event(at(EventKind::kCancel, id)); }
  // The run of the events that follow (default: none named, one run for the whole feed).
  void in_run(std::uint32_t run) { run_ = RunId(run); }
  // Events that follow are emitted while a between_passes batch lands (Event::between_passes).
  void landing(bool on) { landing_ = on; }
  void blocked(std::uint32_t id) { checker_.on_event(at(EventKind::kGroupBlocked, id)); }
  void raise() {  // the current run's callback raised
    Event e(EventKind::kRunRaise);
    e.run = run_;
    checker_.on_event(e);
  }
  void run_end(std::uint32_t run) {  // run `run` turned terminal
    Event e(EventKind::kRunEnd);
    e.run = RunId(run);
    e.name = names_.emplace_back("r" + std::to_string(run));
    checker_.on_event(e);
  }

 private:
  Event at(EventKind k, std::uint32_t id, std::optional<TaskKind> kind = std::nullopt) {
    Event e(k);
    e.task = TaskId(id);
    e.task_kind = kind ? *kind : kinds_[id];
    e.name = names_.emplace_back("t" + std::to_string(id));
    e.run = run_;
    e.between_passes = landing_;
    return e;
  }
  Registry reg_;
  InvariantChecker checker_;
  std::list<std::vector<WorkerId>> workers_;
  std::list<std::vector<Dependency>> deps_;
  std::list<std::string> names_;
  std::map<std::uint32_t, TaskKind> kinds_;
  RunId run_;
  bool landing_ = false;
};

std::string rule_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvariantViolation& v) {
    EXPECT_EQ(v.violation.dump, "(dump)");
    return v.violation.rule;
  }
  return "(none)";
}

TEST(Invariants, AcceptACorrectStream) {
  Feed f;
  f.submit(0, TaskKind::kSingle, {1});
  f.ready(0, QueueKind::kWorker, 1);
  f.dispatch(0, 0, 1);
  f.end(0, 0, 1);
  f.complete(0);
  f.submit(1, TaskKind::kGroup, {2, 0}, 2);
  f.ready(1, QueueKind::kGroup);
  f.launch(1);
  f.dispatch(1, 0, 2);
  f.dispatch(1, 1, 0);
  f.end(1, 1, 0);
  f.end(1, 0, 2);
  f.complete(1);
  EXPECT_NO_THROW(f.checker().finish({}));
}

TEST(Invariants, SingleRoutedToAnotherWorkersFifoFires) {
  Feed f;
  f.submit(0, TaskKind::kSingle, {1});
  EXPECT_EQ(rule_of([&] { f.ready(0, QueueKind::kWorker, 2); }), "queue_matches_kind");
}

TEST(Invariants, GroupOutsideTheGroupFifoFires) {
  Feed f;
  f.submit(0, TaskKind::kGroup, {0, 1}, 2);
  EXPECT_EQ(rule_of([&] { f.ready(0, QueueKind::kSub); }), "queue_matches_kind");
}

TEST(Invariants, OneMemberGroupScheduledAsAGroupFires) {
  Feed f;
  EXPECT_EQ(rule_of([&] { f.submit_from(TaskKind::kGroup, 0, TaskKind::kGroup, {1}, 1); }),
            "one_member_group_is_single");
  Feed g;
  EXPECT_EQ(rule_of([&] { g.submit_from(TaskKind::kSubGroup, 0, TaskKind::kSubGroup, {}, 1); }),
            "one_member_group_is_single");
}

TEST(Invariants, OneMemberGroupRoutedToTheGroupFifoFires) {
  Feed f;
  f.submit_from(TaskKind::kGroup, 0, TaskKind::kSingle, {2}, 1);
  EXPECT_EQ(rule_of([&] { f.ready(0, QueueKind::kGroup); }), "queue_matches_kind");
}

TEST(Invariants, OneMemberGroupOnItsWorkersFifoIsAccepted) {
  Feed f;
  f.submit_from(TaskKind::kGroup, 0, TaskKind::kSingle, {2}, 1);
  f.ready(0, QueueKind::kWorker, 2);
  f.dispatch(0, 0, 2);
  f.end(0, 0, 2);
  f.complete(0);
  f.submit_from(TaskKind::kSubGroup, 1, TaskKind::kSub, {}, 1);
  f.ready(1, QueueKind::kSub);
  EXPECT_NO_THROW(f.dispatch_sub(1, 0, 0));
}

TEST(Invariants, DependencyOnItselfFires) {
  Feed f;
  f.submit(0, TaskKind::kSingle, {0});
  EXPECT_EQ(rule_of([&] {
              f.submit(1, TaskKind::kSingle, {1}, 1, {{TaskId(1u), BufferId(0u)}});
            }),
            "no_self_dependency");
}

TEST(Invariants, SubTaskWithATargetFires) {
  Feed f;
  EXPECT_EQ(rule_of([&] { f.submit(0, TaskKind::kSub, {1}); }), "sub_has_no_target");
}

TEST(Invariants, SecondRouteFires) {
  Feed f;
  f.submit(0, TaskKind::kSingle, {1});
  f.ready(0, QueueKind::kWorker, 1);
  EXPECT_EQ(rule_of([&] { f.ready(0, QueueKind::kWorker, 1); }), "routed_once");
}

TEST(Invariants, DispatchBeforeTheProducerCompletedFires) {
  Feed f;
  f.submit(0, TaskKind::kSingle, {0});
  f.ready(0, QueueKind::kWorker, 0);
  f.dispatch(0, 0, 0);
  f.submit(1, TaskKind::kSingle, {1}, 1, {{TaskId(0u), BufferId(0u)}});
  f.ready(1, QueueKind::kWorker, 1);  // wrongly released early
  EXPECT_EQ(rule_of([&] { f.dispatch(1, 0, 1); }), "producers_completed");
}

TEST(Invariants, SecondMemberOnABusyWorkerFires) {
  Feed f;
  f.submit(0, TaskKind::kSingle, {1});
  f.submit(1, TaskKind::kSingle, {1});
  f.ready(0, QueueKind::kWorker, 1);
  f.ready(1, QueueKind::kWorker, 1);
  f.dispatch(0, 0, 1);
  EXPECT_EQ(rule_of([&] { f.dispatch(1, 0, 1); }), "one_member_per_worker");
}

TEST(Invariants, GroupLaunchedOnABusyTargetFires) {
  Feed f;
  f.submit(0, TaskKind::kSingle, {1});
  f.ready(0, QueueKind::kWorker, 1);
  f.dispatch(0, 0, 1);
  f.submit(1, TaskKind::kGroup, {0, 1}, 2);
  f.ready(1, QueueKind::kGroup);
  EXPECT_EQ(rule_of([&] { f.launch(1); }), "group_targets_idle");
}

TEST(Invariants, GroupMembersNotAllDispatchedAtLaunchFires) {
  Feed f;
  f.submit(0, TaskKind::kGroup, {0, 1}, 2);
  f.ready(0, QueueKind::kGroup);
  f.launch(0);
  f.dispatch(0, 0, 0);
  EXPECT_EQ(rule_of([&] { f.end(0, 0, 0); }), "group_all_at_once");
}

TEST(Invariants, GroupMemberSentToTheWrongWorkerFires) {
  Feed f;
  f.submit(0, TaskKind::kGroup, {0, 1}, 2);
  f.ready(0, QueueKind::kGroup);
  f.launch(0);
  EXPECT_EQ(rule_of([&] { f.dispatch(0, 0, 1); }), "group_all_at_once");
}

TEST(Invariants, GroupCompletingBeforeAllMembersEndedFires) {
  Feed f;
  f.submit(0, TaskKind::kGroup, {0, 1}, 2);
  f.ready(0, QueueKind::kGroup);
  f.launch(0);
  f.dispatch(0, 0, 0);
  f.dispatch(0, 1, 1);
  f.end(0, 0, 0);
  EXPECT_EQ(rule_of([&] { f.complete(0); }), "terminal_once");
}

TEST(Invariants, CompletingTwiceFires) {
  Feed f;
  f.submit(0, TaskKind::kSingle, {0});
  f.ready(0, QueueKind::kWorker, 0);
  f.dispatch(0, 0, 0);
  f.end(0, 0, 0);
  f.complete(0);
  EXPECT_EQ(rule_of([&] { f.complete(0); }), "terminal_once");
}

TEST(Invariants, DispatchingAPoisonedTaskFires) {
  Feed f;
  f.submit(0, TaskKind::kSingle, {0});
  f.poison(0);
  EXPECT_EQ(rule_of([&] { f.dispatch(0, 0, 0); }), "dispatch_only_ready");
}

TEST(Invariants, DispatchingAPendingTaskFires) {
  Feed f;
  f.submit(0, TaskKind::kSingle, {0});
  EXPECT_EQ(rule_of([&] { f.dispatch(0, 0, 0); }), "dispatch_only_ready");
}

TEST(Invariants, SingleTakingATargetOfALaunchableGroupHeadFires) {
  Feed f;
  f.submit(0, TaskKind::kGroup, {0, 1}, 2);
  f.ready(0, QueueKind::kGroup);
  f.submit(1, TaskKind::kSingle, {0});
  f.ready(1, QueueKind::kWorker, 0);
  EXPECT_EQ(rule_of([&] { f.dispatch(1, 0, 0); }), "head_keeps_targets");
}

TEST(Invariants, SingleMayTakeTheIdleTargetOfABlockedHead) {
  Feed f;
  f.submit(0, TaskKind::kSingle, {1});
  f.ready(0, QueueKind::kWorker, 1);
  f.dispatch(0, 0, 1);
  f.submit(1, TaskKind::kGroup, {0, 1}, 2);
  f.ready(1, QueueKind::kGroup);
  f.submit(2, TaskKind::kSingle, {0});
  f.ready(2, QueueKind::kWorker, 0);
  EXPECT_NO_THROW(f.dispatch(2, 0, 0));
}

// A group g (0, 1) and a single s on `single_on` land between the passes of an iteration whose group
// pass left the group FIFO empty.
void late_group_and_single(Feed& f, std::int64_t single_on) {
  f.landing(true);
  f.submit(0, TaskKind::kGroup, {0, 1}, 2);
  f.ready(0, QueueKind::kGroup);
  f.submit(1, TaskKind::kSingle, {single_on});
  f.ready(1, QueueKind::kWorker, single_on);
  f.landing(false);
}

TEST(Invariants, ASingleDispatchedBeforeTheLateGroupsPassFiresUnderGroupBarrier) {
  Switches barrier;
  barrier.set(Switch::kGroupBarrier, true);
  Feed f(barrier);
  late_group_and_single(f, 2);  // not even a target of g: the barrier stops the whole singles pass
  EXPECT_EQ(rule_of([&] { f.dispatch(1, 0, 2); }), "barrier_held");
}

TEST(Invariants, ASingleAfterTheLateGroupWasLookedAtPassesUnderGroupBarrier) {
  Switches barrier;
  barrier.set(Switch::kGroupBarrier, true);
  Feed f(barrier);
  late_group_and_single(f, 2);
  f.blocked(0);  // the group pass looked at g (say a target was busy)
  EXPECT_NO_THROW(f.dispatch(1, 0, 2));
}

TEST(Invariants, SwitchOffASingleMayTakeALateGroupsTarget) {
  for (bool reservation : {false, true}) {
    Switches s;
    s.set(Switch::kGroupReservation, reservation);
    Feed f(s);
    late_group_and_single(f, 0);
    EXPECT_NO_THROW(f.dispatch(1, 0, 0)) << reservation;
  }
  // The same stream without the between_passes mark: a group pass looked at g first, so it fires.
  Feed f;
  f.submit(0, TaskKind::kGroup, {0, 1}, 2);
  f.ready(0, QueueKind::kGroup);
  f.submit(1, TaskKind::kSingle, {0});
  f.ready(1, QueueKind::kWorker, 0);
  EXPECT_EQ(rule_of([&] { f.dispatch(1, 0, 0); }), "head_keeps_targets");
}

TEST(Invariants, SingleOnAnIdleTargetOfTheBlockedHeadFiresUnderHeadReservation) {
  Feed f(*preset("head_reservation"));
  f.submit(0, TaskKind::kSingle, {1});
  f.ready(0, QueueKind::kWorker, 1);
  f.dispatch(0, 0, 1);
  f.submit(1, TaskKind::kGroup, {0, 1}, 2);
  f.ready(1, QueueKind::kGroup);
  f.submit(2, TaskKind::kSingle, {0});
  f.ready(2, QueueKind::kWorker, 0);
  EXPECT_EQ(rule_of([&] { f.dispatch(2, 0, 0); }), "reservation_held");
}

TEST(Invariants, SingleOutsideTheBlockedHeadsTargetsPassesUnderHeadReservation) {
  Feed f(*preset("head_reservation"));
  f.submit(0, TaskKind::kSingle, {1});
  f.ready(0, QueueKind::kWorker, 1);
  f.dispatch(0, 0, 1);
  f.submit(1, TaskKind::kGroup, {0, 1}, 2);
  f.ready(1, QueueKind::kGroup);
  f.submit(2, TaskKind::kSingle, {2});
  f.ready(2, QueueKind::kWorker, 2);
  EXPECT_NO_THROW(f.dispatch(2, 0, 2));
}

TEST(Invariants, ReadyWorkLeftOnAnIdleWorkerAtTheEndFires) {
  Feed f;
  f.submit(0, TaskKind::kSingle, {2});
  f.ready(0, QueueKind::kWorker, 2);
  EXPECT_EQ(rule_of([&] { f.checker().finish({{"t0", TaskState::kReady, "why"}}); }), "ready_work_left");
}

TEST(Invariants, NonTerminalTaskNotReportedStuckFires) {
  Feed f;
  f.submit(0, TaskKind::kSingle, {0});
  f.submit(1, TaskKind::kSingle, {1}, 1, {{TaskId(0u), BufferId(0u)}});
  EXPECT_EQ(rule_of([&] { f.checker().finish({{"t0", TaskState::kPending, "x"}}); }), "end_state");
}

TEST(Invariants, SubGroupTooLargeForThePoolIsStuckNotAViolation) {
  Feed f;
  f.submit(0, TaskKind::kSubGroup, {}, 3);
  f.ready(0, QueueKind::kSub);
  EXPECT_NO_THROW(f.checker().finish({{"t0", TaskState::kReady, "needs 3 SUB workers, the pool has 2"}}));
}

// edge_triggered_wake: SUB work behind an entry too large for the idle pool waits for a wake that may
// never come: stuck, not READY work left. Without the switch, or without such an entry, it still fires.
TEST(Invariants, SubWorkBehindATooLargeSubEntryWaitsForAWakeUnderEdgeTriggeredWake) {
  const auto feed = [](Feed& f, bool big) {
    f.submit(0, TaskKind::kSubGroup, {}, big ? 3 : 2);
    f.ready(0, QueueKind::kSub);
    f.submit(1, TaskKind::kSub, {});
    f.ready(1, QueueKind::kSub);
  };
  const std::vector<Stuck> stuck = {{"t0", TaskState::kReady, "needs 3 SUB workers, the pool has 2"},
                                    {"t1", TaskState::kReady, "READY in the SUB FIFO, never dispatched"}};
  Feed edge(Switches{}.set(Switch::kEdgeTriggeredWake, true));
  feed(edge, true);
  EXPECT_NO_THROW(edge.checker().finish(stuck));
  Feed seed;
  feed(seed, true);
  EXPECT_EQ(rule_of([&] { seed.checker().finish(stuck); }), "ready_work_left");
  Feed fits(Switches{}.set(Switch::kEdgeTriggeredWake, true));
  feed(fits, false);  // a group of 2 fits the idle pool: nothing it holds up
  EXPECT_EQ(rule_of([&] { fits.checker().finish(stuck); }), "ready_work_left");
}

// run_cancellation: cancel_only_on_raise, and a cancelled task never dispatches.
Switches cancellation() { return Switches{}.set(Switch::kRunCancellation, true); }

TEST(Invariants, AcceptCancellationsAfterARaise) {
  Feed f(cancellation());
  f.in_run(0);
  f.submit(0, TaskKind::kSingle, {1});
  f.ready(0, QueueKind::kWorker, 1);
  f.submit(1, TaskKind::kGroup, {0, 2}, 2);
  f.ready(1, QueueKind::kGroup);
  f.submit(2, TaskKind::kSingle, {1}, 1, {{TaskId(0u), BufferId(0u)}});
  f.raise();
  f.cancel(0);
  f.cancel(1);
  f.cancel(2);
  // The cancelled group left the group FIFO: a single (of the next run) may take its idle targets.
  f.in_run(1);
  f.submit(3, TaskKind::kSingle, {0});
  f.ready(3, QueueKind::kWorker, 0);
  EXPECT_NO_THROW(f.dispatch(3, 0, 0));
  f.end(3, 0, 0);
  f.complete(3);
  EXPECT_NO_THROW(f.checker().finish({}));
}

TEST(Invariants, CancelWithTheSwitchOffFires) {
  Feed f;
  f.submit(0, TaskKind::kSingle, {1});
  f.ready(0, QueueKind::kWorker, 1);
  f.raise();
  EXPECT_EQ(rule_of([&] { f.cancel(0); }), "cancel_only_on_raise");
}

TEST(Invariants, CancelWithoutARaiseFires) {
  Feed f(cancellation());
  f.submit(0, TaskKind::kSingle, {1});
  EXPECT_EQ(rule_of([&] { f.cancel(0); }), "cancel_only_on_raise");
}

TEST(Invariants, CancelOfARunningOrEndedTaskFires) {
  Feed f(cancellation());
  f.submit(0, TaskKind::kSingle, {1});
  f.ready(0, QueueKind::kWorker, 1);
  f.dispatch(0, 0, 1);
  f.raise();
  EXPECT_EQ(rule_of([&] { f.cancel(0); }), "cancel_only_on_raise");
  Feed g(cancellation());
  g.submit(0, TaskKind::kSingle, {1});
  g.poison(0);
  g.raise();
  EXPECT_EQ(rule_of([&] { g.cancel(0); }), "cancel_only_on_raise");
}

TEST(Invariants, ATaskLeftReadyAfterARaiseThatStartsFires) {
  Feed f(cancellation());
  f.submit(0, TaskKind::kSingle, {1});
  f.ready(0, QueueKind::kWorker, 1);
  f.raise();  // and 0 was not cancelled
  EXPECT_EQ(rule_of([&] { f.dispatch(0, 0, 1); }), "raised_run_starts_nothing");
  Feed off;  // without the switch the raised run's tasks run as before
  off.submit(0, TaskKind::kSingle, {1});
  off.ready(0, QueueKind::kWorker, 1);
  off.raise();
  EXPECT_NO_THROW(off.dispatch(0, 0, 1));
}

TEST(Invariants, DispatchOfACancelledTaskFires) {
  Feed f(cancellation());
  f.submit(0, TaskKind::kSingle, {1});
  f.ready(0, QueueKind::kWorker, 1);
  f.raise();
  f.cancel(0);
  EXPECT_EQ(rule_of([&] { f.dispatch(0, 0, 1); }), "dispatch_only_ready");
  Feed g(cancellation());
  g.submit(0, TaskKind::kGroup, {0, 1}, 2);
  g.ready(0, QueueKind::kGroup);
  g.raise();
  g.cancel(0);
  EXPECT_EQ(rule_of([&] { g.launch(0); }), "dispatch_only_ready");
}

// whole_run_fifo: only_active_run_dispatches, returned_run_ends_active, and one group FIFO per run.
Switches fifo() { return Switches{}.set(Switch::kWholeRunFifo, true); }

// Run 0: t0 on worker 1. Run 1: t1 on worker 2 (idle), READY while run 0 is active.
void two_runs(Feed& f) {
  f.in_run(0);
  f.submit(0, TaskKind::kSingle, {1});
  f.ready(0, QueueKind::kWorker, 1);
  f.dispatch(0, 0, 1);
  f.in_run(1);
  f.submit(1, TaskKind::kSingle, {2});
  f.ready(1, QueueKind::kWorker, 2);
}

TEST(Invariants, AcceptTheNextRunDispatchingOnceTheActiveOneEnded) {
  Feed f(fifo());
  two_runs(f);
  f.end(0, 0, 1);
  f.complete(0);
  f.run_end(0);
  EXPECT_NO_THROW(f.dispatch(1, 0, 2));
  f.end(1, 0, 2);
  f.complete(1);
  EXPECT_NO_THROW(f.run_end(1));
  EXPECT_NO_THROW(f.checker().finish({}));
}

TEST(Invariants, ADispatchOfARunThatIsNotActiveFires) {
  Feed f(fifo());
  two_runs(f);
  EXPECT_EQ(rule_of([&] { f.dispatch(1, 0, 2); }), "only_active_run_dispatches");
  Feed off;  // without the switch the core does not order runs
  two_runs(off);
  EXPECT_NO_THROW(off.dispatch(1, 0, 2));
}

TEST(Invariants, AReturnedRunEndingWhileNotActiveFires) {
  Feed f(fifo());
  f.in_run(0);
  f.submit(0, TaskKind::kSingle, {1});
  f.ready(0, QueueKind::kWorker, 1);
  f.dispatch(0, 0, 1);
  f.in_run(1);  // an empty run whose callback returned: it waits for its turn
  EXPECT_EQ(rule_of([&] { f.run_end(1); }), "returned_run_ends_active");
  Feed raised(fifo());  // a raised one ends as soon as its tasks are final, active or not
  raised.in_run(0);
  raised.submit(0, TaskKind::kSingle, {1});
  raised.ready(0, QueueKind::kWorker, 1);
  raised.dispatch(0, 0, 1);
  raised.in_run(1);
  raised.raise();
  EXPECT_NO_THROW(raised.run_end(1));
  Feed off;
  off.in_run(0);
  off.submit(0, TaskKind::kSingle, {1});
  off.in_run(1);
  EXPECT_NO_THROW(off.run_end(1));
}

TEST(Invariants, EachRunHasItsOwnGroupFifoHead) {
  // Run 1's group turns READY first (it waits for its run); run 0's group, READY later, is run 0's head.
  auto feed = [](Feed& f) {
    f.in_run(0);
    f.submit(0, TaskKind::kSingle, {0});
    f.in_run(1);
    f.submit(1, TaskKind::kGroup, {1, 2}, 2);
    f.ready(1, QueueKind::kGroup);
    f.in_run(0);
    f.submit(2, TaskKind::kGroup, {1, 2}, 2);
    f.ready(2, QueueKind::kGroup);
    f.launch(2);
  };
  Feed f(fifo());
  EXPECT_NO_THROW(feed(f));
  Feed off;
  EXPECT_EQ(rule_of([&] { feed(off); }), "group_fifo_head");
}

TEST(Invariants, AReadyTaskOfARunThatNeverBecameActiveIsNoWorkLeft) {
  Feed f(fifo());
  two_runs(f);
  f.end(0, 0, 1);  // run 0's task ends but run 0 never ends (say its callback never returned)
  f.complete(0);
  EXPECT_NO_THROW(f.checker().finish({{"t1", TaskState::kReady, "READY in run 'r1', which never became the active run"}}));
  Feed off;
  two_runs(off);
  off.end(0, 0, 1);
  off.complete(0);
  EXPECT_EQ(rule_of([&] { off.checker().finish({{"t1", TaskState::kReady, "never dispatched"}}); }), "ready_work_left");
}

// registration_order_completions: singles on workers 2, 0, 1 and SUB tasks on sub1, sub0, dispatched
// in that order, all running. (The checker holds the feed's registry: fill a Feed in place.)
void five_running(Feed& f) {
  const std::int64_t workers[] = {2, 0, 1};
  for (std::uint32_t i = 0; i < 3; ++i) {
    f.submit(i, TaskKind::kSingle, {workers[i]});
    f.ready(i, QueueKind::kWorker, workers[i]);
    f.dispatch(i, 0, workers[i]);
  }
  for (std::uint32_t i = 3; i < 5; ++i) {
    f.submit(i, TaskKind::kSub, {});
    f.ready(i, QueueKind::kSub);
    f.dispatch_sub(i, 0, 4 - i);  // task 3 on sub1, task 4 on sub0
  }
}

Switches registration_order() { return Switches{}.set(Switch::kRegistrationOrderCompletions, true); }

TEST(Invariants, AcceptOneInstantsEndsInRegistrationOrderThenSubByIndex) {
  Feed f(registration_order());
  five_running(f);
  f.end(1, 0, 0, true);
  f.complete(1);
  f.end(2, 0, 1);
  f.complete(2);
  f.end(0, 0, 2);
  f.complete(0);
  f.end_sub(4, 0, 0);
  f.complete(4);
  f.end_sub(3, 0, 1);
  f.complete(3);
}

TEST(Invariants, AnEndOutOfRegistrationOrderInOneBatchFires) {
  {
    Feed f(registration_order());
    five_running(f);
    f.end(0, 0, 2, true);  // worker 2, then worker 0 in the same batch: dispatch order
    EXPECT_EQ(rule_of([&] { f.end(1, 0, 0); }), "completions_in_registration_order");
  }
  {
    Feed f(registration_order());
    five_running(f);
    f.end_sub(4, 0, 0, true);  // a SUB end before a NEXT_LEVEL one
    EXPECT_EQ(rule_of([&] { f.end(1, 0, 0); }), "completions_in_registration_order");
  }
  {
    Feed f(registration_order());
    five_running(f);
    f.end_sub(3, 0, 1, true);  // sub1 before sub0
    EXPECT_EQ(rule_of([&] { f.end_sub(4, 0, 0); }), "completions_in_registration_order");
  }
}

TEST(Invariants, ANewBatchAndTheSwitchOffMayStartAnywhere) {
  {
    Feed f(registration_order());
    five_running(f);
    f.end(0, 0, 2, true);
    EXPECT_EQ(rule_of([&] { f.end(1, 0, 0, true); }), "(none)");  // the next instant's (or iteration's) batch
  }
  {
    Feed f;
    five_running(f);
    f.end(0, 0, 2, true);
    f.end(1, 0, 0);
    f.end_sub(3, 0, 1);
    EXPECT_EQ(rule_of([&] { f.end_sub(4, 0, 0); }), "(none)");  // dispatch order: no such rule off
  }
}

TEST(Invariants, ViolationCarriesTheEventSeq) {
  Feed f;
  f.submit(0, TaskKind::kSingle, {1});
  f.ready(0, QueueKind::kWorker, 1);
  try {
    f.ready(0, QueueKind::kWorker, 1);
    FAIL();
  } catch (const InvariantViolation& v) {
    EXPECT_EQ(v.violation.seq, 2u);
  }
}

}  // namespace
}  // namespace dirsched
