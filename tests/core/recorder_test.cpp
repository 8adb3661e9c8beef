// The Recorder observer: times, busy time, queue waits and the group starvation measures.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include "fake_driver.hpp"

namespace dirsched::testing {
namespace {

using V = std::vector<std::string>;

TEST(Starvation, SinglesThatKeepATargetBusyOvertakeAWaitingGroup) {
  FakeDriver d(Builder().chip(0).chip(1));
  d.duration("s0", 2);
  d.single("s0", 1);     // chip 1 busy until 2
  d.group("g", {0, 1});  // READY at 0, blocked by chip 1
  d.single("a", 0);      // overtakes on chip 0 (0..1)
  d.advance_to(1.0);
  d.single("b", 0);  // chip 0 again (1..2)
  d.run();
  const std::optional<TaskRecord> g = d.recorder().find("g");
  EXPECT_EQ(g->overtaken_by, (V{"a", "b"}));
  EXPECT_DOUBLE_EQ(g->ready, 0.0);
  EXPECT_DOUBLE_EQ(g->start, 2.0);
}

TEST(RecorderPlaces, AQueuedTaskHoldsAPlaceThatReadsBackAsItsRecord) {
  // 400 singles and SUB tasks READY at t = 0 and 10 waiting for a producer, on 4 chips and 2 SUB
  // workers, after a rejected op (a second span of record numbers): only the running ones hold a record.
  FakeDriver d(Builder().chip(0).chip(1).chip(2).chip(3).sub(2));
  d.recorder().set_keep_records(false);  // kept, a waiting task's record keeps its producers
  std::vector<TaskRecord> retired;
  d.recorder().set_on_retire([&](const TaskRecord& r) { retired.push_back(r); });
  EXPECT_FALSE(d.single("bad", 99).accepted());
  const BufferId x = d.buffer("x");
  std::vector<SubmitRequest> ops;
  for (int i = 0; i < 400; ++i) {
    const std::string name = "t" + std::to_string(i);
    if (i % 10 == 9) {
      SubmitRequest r;
      r.kind = TaskKind::kSub;
      r.name = name;
      r.callable = d.py();
      r.args = {{}};
      ops.push_back(r);
    } else {
      ops.push_back(d.single_request(name, i % 4, i == 0 ? std::vector<Arg>{FakeDriver::out(x)} : std::vector<Arg>{}));
    }
  }
  for (int i = 0; i < 10; ++i) ops.push_back(d.single_request("c" + std::to_string(i), i % 4, {FakeDriver::in(x)}));
  d.batch(ops);
  EXPECT_EQ(d.recorder().held_records(), 410u);  // the rejection's has retired
  // The running ones (4 chips, 2 SUB workers), and nothing queued.
  EXPECT_EQ(d.recorder().pooled_records(), 6u);
  const std::optional<TaskRecord> t5 = d.recorder().find("t5");
  ASSERT_TRUE(t5.has_value());
  EXPECT_EQ(t5->state, TaskState::kReady);
  EXPECT_EQ(t5->submit, 0);
  EXPECT_EQ(t5->ready, 0);
  EXPECT_EQ(t5->start, -1);
  EXPECT_EQ(t5->workers, std::vector<WorkerId>{WorkerId(1)});
  EXPECT_EQ(t5->task, TaskId(5u));
  ASSERT_EQ(t5->members.size(), 1u);
  EXPECT_EQ(t5->members[0].start, -1);
  const std::optional<TaskRecord> s = d.recorder().find("t39");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->kind, TaskKind::kSub);
  EXPECT_EQ(s->state, TaskState::kReady);
  EXPECT_TRUE(s->workers.empty());
  const std::optional<TaskRecord> c = d.recorder().find("c3");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->state, TaskState::kPending);
  EXPECT_EQ(c->ready, -1);
  EXPECT_EQ(c->workers, std::vector<WorkerId>{WorkerId(3)});
  d.run();
  d.recorder().finish();
  EXPECT_EQ(d.recorder().state_counts().at(TaskState::kCompleted), 410u);
  ASSERT_EQ(retired.size(), 411u);
  const TaskRecord& done = retired[6];  // t5: after the rejection
  EXPECT_EQ(done.name, "t5");
  EXPECT_EQ(done.state, TaskState::kCompleted);
  EXPECT_EQ(done.start, 1);
  EXPECT_EQ(done.end, 2);
  EXPECT_EQ(done.workers, std::vector<WorkerId>{WorkerId(1)});
  EXPECT_EQ(d.recorder().pooled_records(), 0u);
}

// A record's TaskId is its number less its span's offset, and back: an event for a TaskId the Recorder
// never saw submitted (one that lands on a rejected op's record, or past the last) or for one retired is
// an internal error, not a wrong record changed. The events are fed by hand; the core holds tasks 0 to 4
// (a queued record's kind, worker and run are read from the core).
TEST(RecorderPlaces, AnEventForATaskNeverRecordedOrRetiredIsAnInternalError) {
  Registry reg;
  reg.add_next_level(WorkerId(0), WorkerKind::kLocalChip);
  const CallableId chip = reg.add_callable({"chip", Namespace::kLocalChip, std::nullopt});
  Scheduler core(reg);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(core.submit_next_level("x", chip, {}, WorkerId(0)).accepted());
  Recorder rec(core);
  rec.set_keep_records(false);
  const std::vector<WorkerId> chip0{WorkerId(0)};
  const Rejection refused{ErrorCode::kMissingWorker, "no worker 9"};
  auto event = [&](EventKind kind, std::optional<std::uint32_t> task, double t = 0) {
    Event e(kind);
    e.t = t;
    e.name = "x";
    e.member_count = 1;
    if (task) e.task = TaskId(*task);
    if (kind == EventKind::kSubmit) e.workers = &chip0;
    if (kind == EventKind::kReject) e.rejection = &refused;
    return e;
  };
  rec.on_event(event(EventKind::kSubmit, 0));  // record 0: task 0
  rec.on_event(event(EventKind::kReject, std::nullopt));  // record 1: no task
  rec.on_event(event(EventKind::kSubmit, 2));  // record 2: task 2 (task 1 never seen)
  rec.on_event(event(EventKind::kSubmit, 4));  // record 3: task 4, a new span
  EXPECT_THROW(rec.on_event(event(EventKind::kReady, 1)), InternalError);  // lands on the rejection
  EXPECT_THROW(rec.on_event(event(EventKind::kReady, 3)), InternalError);  // before task 4's span
  EXPECT_THROW(rec.on_event(event(EventKind::kReady, 5)), InternalError);  // past the last
  EXPECT_THROW(rec.on_event(event(EventKind::kSubmit, 4)), InternalError);  // a second submit
  rec.on_event(event(EventKind::kReady, 4));
  rec.on_event(event(EventKind::kPoison, 0, 1));  // record 0 retires, then the rejection
  EXPECT_THROW(rec.on_event(event(EventKind::kReady, 0)), InternalError);
  EXPECT_EQ(rec.record_count(), 4u);  // the second submit made none
  EXPECT_EQ(rec.held_records(), 2u);  // tasks 2 and 4 (their names are the core's: not read here)
  const std::map<TaskState, std::size_t> states = rec.state_counts();
  EXPECT_EQ(states.at(TaskState::kPending), 1u);
  EXPECT_EQ(states.at(TaskState::kReady), 1u);
  EXPECT_EQ(states.at(TaskState::kPoisoned), 1u);
  EXPECT_EQ(states.at(TaskState::kRejected), 1u);
}

TEST(RecorderFind, FindsTasksRecordedAfterAnEarlierLookupAndNothingElse) {
  FakeDriver d(Builder().chip(0).chip(1));
  d.single("m", 0);
  d.run();
  ASSERT_TRUE(d.recorder().find("m").has_value());  // builds the name index
  d.single("b", 1);                            // recorded after the index was built
  d.single("z", 0);
  d.run();
  ASSERT_TRUE(d.recorder().find("b").has_value());
  EXPECT_EQ(d.recorder().find("b")->name, "b");
  EXPECT_EQ(d.recorder().find("z")->name, "z");
  EXPECT_EQ(d.recorder().find("m")->name, "m");
  EXPECT_FALSE(d.recorder().find("a").has_value());
  EXPECT_FALSE(d.recorder().find("n").has_value());
}

TEST(Starvation, IdleTargetTimeCountsOnlyWhileSomeTargetIsIdle) {
  FakeDriver d(Builder().chip(0).chip(1));
  d.duration("s1", 4);
  d.duration("a", 1);
  d.single("s1", 1);  // chip 1 busy 0..4
  d.group("g", {0, 1});
  d.single("a", 0);  // chip 0 busy 0..1, then idle 1..4 while g waits
  d.run();
  const std::optional<TaskRecord> g = d.recorder().find("g");
  EXPECT_DOUBLE_EQ(g->start, 4.0);
  EXPECT_DOUBLE_EQ(g->idle_target_s, 3.0);
}

TEST(Starvation, GroupThatLaunchesAtOnceHasNoWaitAndNoOvertakes) {
  FakeDriver d(Builder().chip(0).chip(1));
  d.group("g", {0, 1});
  d.run();
  const std::optional<TaskRecord> g = d.recorder().find("g");
  EXPECT_DOUBLE_EQ(g->idle_target_s, 0.0);
  EXPECT_TRUE(g->overtaken_by.empty());
}

TEST(RecorderStats, BusyTimeAndQueueWaitsPerWorker) {
  FakeDriver d(Builder().chip(3).chip(5).sub(1));
  d.duration("a", 2);
  d.single("a", 3);
  d.single("b", 3);  // waits 2 s in FIFO[3]
  d.sub("u");
  d.run();
  EXPECT_DOUBLE_EQ(d.recorder().next_level_busy()[0], 3.0);
  EXPECT_DOUBLE_EQ(d.recorder().next_level_busy()[1], 0.0);
  EXPECT_DOUBLE_EQ(d.recorder().sub_busy()[0], 1.0);
  auto waits = d.recorder().queue_waits();
  ASSERT_EQ(waits.count("worker:3"), 1u);
  EXPECT_EQ(waits["worker:3"].count, 2u);
  EXPECT_DOUBLE_EQ(waits["worker:3"].max, 2.0);
  EXPECT_DOUBLE_EQ(waits["worker:3"].p50, 0.0);
  EXPECT_EQ(waits.count("sub"), 1u);
  EXPECT_DOUBLE_EQ(d.recorder().last_transition(), 3.0);
}

// Retirement: a record leaves once it and every record before it are finished, in record order; a
// group's record stays for the summary; the counts, the ready waits and the groups read the same
// whether records are kept or not.
TEST(RecorderRetire, FinishedTasksLeaveInRecordOrderAndTheLiveCountDropsBackAfterADrain) {
  for (const bool keep : {false, true}) {
    SCOPED_TRACE(keep ? "keep_records" : "retire");
    FakeDriver d(Builder().chip(0).chip(1));
    std::vector<std::string> retired;
    d.recorder().set_keep_records(keep);
    d.recorder().set_on_retire([&](const TaskRecord& r) { retired.push_back(r.name); });
    d.duration("slow", 3);
    d.single("slow", 0);   // 0..3
    d.single("a", 1);      // 0..1
    d.single("b", 1);      // 1..2
    d.group("g", {0, 1});  // 3..4
    d.advance_to(2.5);
    // a and b are done, but slow, recorded before them, is not: nothing has retired yet.
    EXPECT_TRUE(retired.empty());
    EXPECT_EQ(d.recorder().live_records(), 4u);
    d.run();
    EXPECT_EQ(retired, (V{"slow", "a", "b", "g"}));
    EXPECT_EQ(d.recorder().live_records(), 0u);
    EXPECT_EQ(d.recorder().record_count(), 4u);
    EXPECT_EQ(d.recorder().tasks().size(), keep ? 4u : 0u);  // the drained records are gone
    ASSERT_EQ(d.recorder().groups().size(), 1u);
    EXPECT_EQ(d.recorder().groups()[0].name, "g");
    EXPECT_EQ(d.recorder().groups()[0].overtaken_by, (V{"b"}));
    EXPECT_EQ(d.recorder().state_counts().at(TaskState::kCompleted), 4u);
    WaitSketch singles, groups;
    d.recorder().ready_waits(4, singles, groups);
    EXPECT_EQ(singles.count(), 3u);
    EXPECT_EQ(singles.stats().max, 1);
    EXPECT_EQ(singles.stats().p50, 0);
    EXPECT_EQ(groups.count(), 1u);
    EXPECT_EQ(groups.stats().max, 3);
    // A later submit after the drain: one live record again, then none.
    d.single("late", 0);
    EXPECT_EQ(d.recorder().live_records(), 1u);
    d.run();
    EXPECT_EQ(d.recorder().live_records(), 0u);
    EXPECT_EQ(d.recorder().tasks().size(), keep ? 5u : 0u);
  }
}

// The compact record keeps a rejected or never-submitted op's name in a side arena whose front is cut
// once the names of dropped records fill half of it: names and messages read after the cut are the
// ones recorded.
TEST(RecorderRecords, RejectedOpsKeepTheirNamesAndMessagesAfterTheSideArenaIsCut) {
  FakeDriver d(Builder().chip(0));
  d.recorder().set_keep_records(false);
  std::vector<std::string> names, messages;
  d.recorder().set_on_retire([&](const TaskRecord& r) {
    names.push_back(r.name);
    messages.push_back(r.message);
    if (r.state == TaskState::kRejected) {
      EXPECT_EQ(r.code, ErrorCode::kWorkerNotRegistered) << r.name;
    }
  });
  d.duration("slow", 10);
  d.single("slow", 0);  // live until 10: every rejection below waits behind it
  V want = {"slow"};
  for (int i = 0; i < 3000; ++i) {
    const std::string name = "rejected-op-" + std::to_string(i);
    d.single(name, 9);  // no worker 9: rejected
    want.push_back(name);
  }
  EXPECT_EQ(d.recorder().live_records(), 3001u);
  d.run();  // slow completes: all 3001 records retire (and are dropped) in one go
  EXPECT_EQ(names, want);
  for (std::size_t i = 1; i < names.size(); ++i) {
    ASSERT_EQ(messages[i], "task '" + names[i] + "': worker id 9 names no NEXT_LEVEL worker") << i;
  }
  EXPECT_EQ(d.recorder().live_records(), 0u);
  // After the cut, new side names still read back.
  d.single("again", 9);
  EXPECT_EQ(names.back(), "again");
}

// After the run's first failure, every valid submit is not submitted with the run's error: the
// message is kept once, shared, and a rejection between them keeps its own.
TEST(RecorderRecords, NotSubmittedOpsShareTheRunErrorAndARejectionBetweenKeepsItsOwn) {
  FakeDriver d(Builder().chip(0).chip(1));
  d.recorder().set_keep_records(false);
  std::vector<std::pair<std::string, std::string>> seen;
  d.recorder().set_on_retire([&](const TaskRecord& r) { seen.emplace_back(r.name, r.message); });
  d.duration("slow", 10);
  d.single("slow", 1);
  d.fail("a");
  d.single("a", 0);
  d.advance_to(2);  // a failed at 1: the run's error
  d.single("n0", 0);
  d.single("bad", 9);
  d.single("n1", 0);
  d.single("n2", 0);
  d.run();
  const std::string err = "task 'a' member 0 failed";
  EXPECT_EQ(seen, (std::vector<std::pair<std::string, std::string>>{
                      {"slow", ""},
                      {"a", ""},
                      {"n0", err},
                      {"bad", "task 'bad': worker id 9 names no NEXT_LEVEL worker"},
                      {"n1", err},
                      {"n2", err}}));
}

// The inline form of a single holds its member's start and end as the task's own: a member that
// ends at another instant than its task, or runs elsewhere than it was submitted to, moves to the
// side record with its own times and target. The core never does either, so the events are fed by hand.
TEST(RecorderRecords, ASingleWhoseMemberDoesNotMatchItsTaskKeepsTheMembersOwnTimesAndTarget) {
  Registry reg;
  reg.add_next_level(WorkerId(0), WorkerKind::kLocalChip);
  reg.add_next_level(WorkerId(7), WorkerKind::kLocalChip);
  const CallableId chip = reg.add_callable({"chip", Namespace::kLocalChip, std::nullopt});
  Scheduler core(reg);  // holds the names
  const TaskId a = core.submit_next_level("a", chip, {}, WorkerId(0)).task;
  const TaskId b = core.submit_next_level("b", chip, {}, WorkerId(0)).task;
  const TaskId c = core.submit_next_level("c", chip, {}, WorkerId(7)).task;
  Recorder rec(core);
  const std::vector<WorkerId> on0 = {WorkerId(0)}, on7 = {WorkerId(7)};
  auto event = [&](EventKind kind, TaskId task, double t, std::int64_t worker = 0) {
    Event e(kind);
    e.task = task;
    const std::string name = core.name(task);  // a copy: it must outlive the event
    e.name = name;
    e.member_count = 1;
    e.t = t;
    e.workers = task == c ? &on7 : &on0;
    e.target.worker = WorkerId(worker);
    rec.on_event(e);
  };
  for (TaskId t : {a, b, c}) {
    event(EventKind::kSubmit, t, 0);
    event(EventKind::kReady, t, 0);
  }
  event(EventKind::kDispatch, a, 1);
  event(EventKind::kMemberEnd, a, 2);
  event(EventKind::kComplete, a, 3);
  event(EventKind::kDispatch, b, 1, 7);  // not the worker it was submitted to
  event(EventKind::kMemberEnd, b, 2, 7);
  event(EventKind::kComplete, b, 2);
  event(EventKind::kDispatch, c, 1, 7);  // the usual case: member and task end together
  event(EventKind::kMemberEnd, c, 2, 7);
  event(EventKind::kComplete, c, 2);
  const std::optional<TaskRecord> ra = rec.find("a"), rb = rec.find("b"), rc = rec.find("c");
  ASSERT_TRUE(ra && rb && rc);
  ASSERT_EQ(ra->members.size(), 1u);
  EXPECT_DOUBLE_EQ(ra->members[0].start, 1.0);
  EXPECT_DOUBLE_EQ(ra->members[0].end, 2.0);
  EXPECT_DOUBLE_EQ(ra->end, 3.0);
  ASSERT_EQ(rb->members.size(), 1u);
  EXPECT_EQ(rb->workers, (std::vector<WorkerId>{WorkerId(0)}));
  EXPECT_EQ(rb->members[0].target.worker, WorkerId(7));
  EXPECT_DOUBLE_EQ(rb->members[0].end, 2.0);
  ASSERT_EQ(rc->members.size(), 1u);
  EXPECT_EQ(rc->workers, (std::vector<WorkerId>{WorkerId(7)}));
  EXPECT_EQ(rc->members[0].target.worker, WorkerId(7));
  EXPECT_DOUBLE_EQ(rc->members[0].start, 1.0);
  EXPECT_DOUBLE_EQ(rc->members[0].end, 2.0);
  EXPECT_DOUBLE_EQ(rc->end, 2.0);
  EXPECT_DOUBLE_EQ(rec.next_level_busy()[0], 1.0);  // a on worker 0
  EXPECT_DOUBLE_EQ(rec.next_level_busy()[1], 2.0);  // b and c on worker 7
}

// A group still waiting when finish() retires it leaves nothing behind that a later dispatch on one
// of its targets would touch. Only ASan sees the freed side record being written; the events are fed
// by hand, since a live core would keep reporting the retired group as blocked.
TEST(RecorderRetire, AGroupRetiredWhileWaitingLeavesNothingALaterDispatchTouches) {
  Registry reg;
  reg.add_next_level(WorkerId(0), WorkerKind::kLocalChip);
  reg.add_next_level(WorkerId(1), WorkerKind::kLocalChip);
  const CallableId chip = reg.add_callable({"chip", Namespace::kLocalChip, std::nullopt});
  Scheduler core(reg);
  const TaskId g = core.submit_next_level_group("g", chip, {{}, {}}, {WorkerId(0), WorkerId(1)}).task;
  const TaskId x = core.submit_next_level("x", chip, {}, WorkerId(0)).task;
  Recorder rec(core);
  rec.set_keep_records(false);
  const std::vector<WorkerId> both = {WorkerId(0), WorkerId(1)}, on0 = {WorkerId(0)};
  auto event = [&](EventKind kind, TaskId task) {
    Event e(kind);
    e.task = task;
    const std::string name = core.name(task);  // a copy: it must outlive the event
    e.name = name;
    e.task_kind = task == g ? TaskKind::kGroup : TaskKind::kSingle;
    e.member_count = task == g ? 2 : 1;
    e.workers = task == g ? &both : &on0;
    rec.on_event(e);
  };
  event(EventKind::kSubmit, g);
  event(EventKind::kReady, g);  // waits on workers 0 and 1
  rec.finish();
  ASSERT_EQ(rec.groups().size(), 1u);
  event(EventKind::kSubmit, x);
  event(EventKind::kReady, x);
  event(EventKind::kDispatch, x);  // on worker 0: a waiting g would count an overtake
  EXPECT_TRUE(rec.groups()[0].overtaken_by.empty());
  EXPECT_EQ(rec.live_records(), 1u);
}

// The singles dispatched on one of `targets` among d.dispatches()[from, to), in dispatch order (a
// group's member dispatch is "name[m]@worker" and is left out).
V singles_on(const FakeDriver& d, std::size_t from, std::size_t to, const std::vector<std::string>& targets) {
  V out;
  for (std::size_t k = from; k < to; ++k) {
    const std::string& s = d.dispatches()[k];
    const std::size_t at = s.find('@');
    if (s.find('[') != std::string::npos) continue;
    if (std::find(targets.begin(), targets.end(), s.substr(at + 1)) != targets.end()) out.push_back(s.substr(0, at));
  }
  return out;
}

std::size_t first_dispatch_of(const FakeDriver& d, const std::string& prefix) {
  for (std::size_t k = 0; k < d.dispatches().size(); ++k)
    if (d.dispatches()[k].rfind(prefix, 0) == 0) return k;
  return d.dispatches().size();
}

// A group on three chips: every single on one of them overtakes it once, in dispatch order across the
// chips; a single on another chip does not. Its idle-target time counts while at least one target is
// idle (chips 0 and 1 from 2, chip 1 from 3), not per idle target.
TEST(Starvation, AGroupOnSeveralTargetsCountsEachOfTheirSinglesOnceInDispatchOrder) {
  FakeDriver d(Builder().chip(0).chip(1).chip(2).chip(3));
  d.duration("s2", 5);
  d.duration("b", 2);
  d.single("s2", 2);        // chip 2 busy 0..5: g waits
  d.group("g", {0, 1, 2});  // READY at 0
  d.single("a", 0);         // 0..1
  d.single("b", 1);         // 0..2
  d.single("other", 3);     // not a target
  d.advance_to(1.0);
  d.single("d", 1);  // queued behind b: 2..3
  d.single("c", 0);  // 1..2
  d.run();
  const std::optional<TaskRecord> g = d.recorder().find("g");
  EXPECT_EQ(g->overtaken_by, (V{"a", "b", "c", "d"}));
  EXPECT_EQ(g->overtakes, 4u);
  EXPECT_DOUBLE_EQ(g->start, 5.0);
  EXPECT_DOUBLE_EQ(g->idle_target_s, 3.0);
  EXPECT_EQ(d.recorder().group_totals(d.now()).overtakes_max, 4u);
}

// More singles than kSummaryListCap overtake a group on two chips: all are counted, the first
// kSummaryListCap are named in dispatch order (the logs are cut by then: each chip runs more than twice
// kSummaryListCap singles). A group READY later on one of those chips names only the singles after it.
TEST(Starvation, OvertakenByHoldsTheFirstSinglesUpToTheCapAndOvertakesCountsThemAll) {
  FakeDriver d(Builder().chip(0).chip(1).chip(2));
  const std::size_t on0 = 2 * kSummaryListCap + 100, on1 = 2 * kSummaryListCap + 600;
  d.duration("s2", static_cast<double>(on1 + 400));
  d.single("s2", 2);
  d.group("g", {0, 1, 2});
  const std::size_t g_ready = d.dispatches().size();
  std::vector<SubmitRequest> singles;
  for (std::size_t i = 0; i < on1; ++i) {
    if (i < on0) singles.push_back(d.single_request("x" + std::to_string(i), 0));
    singles.push_back(d.single_request("y" + std::to_string(i), 1));
  }
  d.batch(singles);
  d.advance_to(static_cast<double>(on0 - 600));
  const std::size_t k_ready = d.dispatches().size();
  d.group("k", {0, 2});  // still collecting when chip 0's log is cut: its names are kept
  d.advance_to(static_cast<double>(on1 - 100));
  const std::size_t h_ready = d.dispatches().size();
  d.group("h", {1, 2});  // after g and k in the group queue
  d.run();
  const std::optional<TaskRecord> g = d.recorder().find("g"), h = d.recorder().find("h");
  const V g_singles = singles_on(d, g_ready, first_dispatch_of(d, "g["), {"0", "1"});
  ASSERT_EQ(g_singles.size(), on0 + on1);
  EXPECT_EQ(g->overtakes, on0 + on1);
  ASSERT_EQ(g->overtaken_by.size(), kSummaryListCap);
  EXPECT_EQ(g->overtaken_by, V(g_singles.begin(), g_singles.begin() + kSummaryListCap));
  EXPECT_EQ(g->overtaken_by[1], "y0");  // chip 1's first single, between chip 0's first two
  const V h_singles = singles_on(d, h_ready, first_dispatch_of(d, "h["), {"1", "2"});
  EXPECT_EQ(h->overtakes, h_singles.size());
  EXPECT_EQ(h->overtaken_by, h_singles);
  EXPECT_GT(h_singles.size(), 90u);
  const std::optional<TaskRecord> k = d.recorder().find("k");
  const V k_singles = singles_on(d, k_ready, first_dispatch_of(d, "k["), {"0", "2"});
  EXPECT_EQ(k->overtakes, k_singles.size());
  EXPECT_EQ(k->overtaken_by, k_singles);
  EXPECT_GT(k_singles.size(), 500u);
}

// The Recorder fed by hand, for instants the core does not make on its own.
struct Feed {
  explicit Feed(std::uint32_t chips) {
    for (std::uint32_t i = 0; i < chips; ++i) reg.add_next_level(WorkerId(i), WorkerKind::kLocalChip);
    chip = reg.add_callable({"chip", Namespace::kLocalChip, std::nullopt});
    core = std::make_unique<Scheduler>(reg);
    rec = std::make_unique<Recorder>(*core);
  }
  TaskId group(const std::string& name, std::vector<std::int64_t> on) {
    std::vector<WorkerId> ids;
    for (std::int64_t w : on) ids.emplace_back(w);
    const TaskId t = core->submit_next_level_group(name, chip, std::vector<std::vector<Arg>>(on.size()), ids).task;
    workers[t.index()] = ids;
    return t;
  }
  TaskId single(const std::string& name, std::int64_t on) {
    const TaskId t = core->submit_next_level(name, chip, {}, WorkerId(on)).task;
    workers[t.index()] = {WorkerId(on)};
    return t;
  }
  void event(EventKind kind, TaskId task, double t, std::int64_t worker = 0, std::uint32_t member = 0) {
    const std::vector<WorkerId>& on = workers.at(task.index());
    Event e(kind);
    e.t = t;
    e.task = task;
    const std::string name = core->name(task);  // a copy: it must outlive the event
    e.name = name;
    e.task_kind = on.size() > 1 ? TaskKind::kGroup : TaskKind::kSingle;
    e.member_count = static_cast<std::uint32_t>(on.size());
    e.workers = &on;
    e.member = member;
    e.target.worker = WorkerId(worker);
    rec->on_event(e);
  }
  void submit_ready(TaskId task, double t) {
    event(EventKind::kSubmit, task, t);
    event(EventKind::kReady, task, t);
  }
  Registry reg;
  CallableId chip;
  std::unique_ptr<Scheduler> core;
  std::unique_ptr<Recorder> rec;
  std::map<std::uint32_t, std::vector<WorkerId>> workers;
};

// A group READY at an instant where one target is idle only for that instant (its member ended, the
// next single starts at the same time) has every target busy from then on: no idle-target time until
// chip 1 ends its single at 3; then idle-target time until its launch at 6.
TEST(Starvation, AGroupReadyWhileATargetIsIdleForAnInstantOnlyIsNotIdleFromThen) {
  Feed f(2);
  const TaskId g = f.group("g", {0, 1}), p = f.single("p", 0), q = f.single("q", 0), s = f.single("s", 1);
  for (TaskId t : {g, p, q, s}) f.event(EventKind::kSubmit, t, 0);
  for (TaskId t : {p, q, s}) f.event(EventKind::kReady, t, 0);
  f.event(EventKind::kDispatch, s, 0, 1);
  f.event(EventKind::kDispatch, p, 0, 0);
  f.event(EventKind::kMemberEnd, p, 1, 0);  // chip 0 idle...
  f.event(EventKind::kReady, g, 1);         // ...as g becomes READY...
  f.event(EventKind::kDispatch, q, 1, 0);   // ...and busy again
  f.event(EventKind::kMemberEnd, s, 3, 1);  // chip 1 idle from 3
  EXPECT_DOUBLE_EQ(f.rec->find("g")->idle_target_s, 0.0);
  EXPECT_EQ(f.rec->find("g")->overtaken_by, (V{"q"}));  // read while it waits
  f.event(EventKind::kMemberEnd, q, 4, 0);
  EXPECT_DOUBLE_EQ(f.rec->find("g")->idle_target_s, 1.0);  // up to the last transition, at 4
  f.event(EventKind::kGroupLaunched, g, 6);  // held back (say, behind another group): no target changed
  const std::optional<TaskRecord> r = f.rec->find("g");
  EXPECT_DOUBLE_EQ(r->idle_target_s, 3.0);  // the last term, 4..6, closed by the launch
  EXPECT_EQ(r->overtakes, 1u);
}

// A group that never launches keeps what it measured up to the run's last transition: finish() retires
// it with its overtakes (not the single on chip 2, not its target) and its idle-target time (some target
// idle from READY at 0 to the last transition at 5, then nothing more: no launch closes a term).
TEST(Starvation, AGroupThatNeverLaunchesKeepsItsMeasuresUpToTheLastTransition) {
  Feed f(3);
  const TaskId g = f.group("g", {0, 1}), a = f.single("a", 0), b = f.single("b", 1), c = f.single("c", 2);
  for (TaskId t : {g, a, b, c}) f.submit_ready(t, 0);
  f.event(EventKind::kDispatch, a, 0, 0);
  f.event(EventKind::kDispatch, c, 0, 2);
  f.event(EventKind::kMemberEnd, a, 2, 0);
  f.event(EventKind::kDispatch, b, 2, 1);
  f.event(EventKind::kMemberEnd, b, 5, 1);
  EXPECT_DOUBLE_EQ(f.rec->group_totals(9).idle_target_s, 5.0);
  f.rec->finish();
  ASSERT_EQ(f.rec->groups().size(), 1u);
  const TaskRecord r = f.rec->groups()[0];
  EXPECT_LT(r.start, 0.0);
  EXPECT_DOUBLE_EQ(r.idle_target_s, 5.0);
  EXPECT_EQ(r.overtakes, 2u);
  EXPECT_EQ(r.overtaken_by, (V{"a", "b"}));
  const Recorder::GroupTotals totals = f.rec->group_totals(9);
  EXPECT_DOUBLE_EQ(totals.idle_target_s, 5.0);
  EXPECT_EQ(totals.overtakes_max, 2u);
}

}  // namespace
}  // namespace dirsched::testing

namespace dirsched::testing {
namespace {

// The histogram past kExactWaits: count, max and mean exact (the mean to rounding), p50 and p95 within
// kWaitSketchError of the exact nearest-rank values; exact while not sketched.
TEST(WaitSketchTest, PercentilesOfTheHistogramAreWithinItsStatedError) {
  WaitSketch exact, sketched;
  sketched.sketch();
  std::uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 200000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const double v = i % 10 == 0 ? 0.0 : static_cast<double>(x % 1000000) * 1e-6 * (1 + i % 7);
    exact.add(v);
    sketched.add(v);
  }
  const WaitStats e = exact.stats(), s = sketched.stats();
  EXPECT_TRUE(e.exact);
  EXPECT_FALSE(s.exact);
  EXPECT_EQ(s.count, e.count);
  EXPECT_EQ(s.max, e.max);
  EXPECT_NEAR(s.mean, e.mean, 1e-9 * e.mean);
  EXPECT_LE(std::abs(s.p50 - e.p50), kWaitSketchError * e.p50) << s.p50 << " vs " << e.p50;
  EXPECT_LE(std::abs(s.p95 - e.p95), kWaitSketchError * e.p95) << s.p95 << " vs " << e.p95;
  // Merged into a list still exact, the histogram takes over; an exact one merges value by value.
  WaitSketch merged;
  merged.add(exact);
  EXPECT_EQ(merged.stats().p95, e.p95);
  merged.add(sketched);
  EXPECT_EQ(merged.count(), 2 * e.count);
  EXPECT_FALSE(merged.stats().exact);
  // Merging histograms adds bucket to bucket: the same percentiles as one histogram of every value.
  WaitSketch twice;
  twice.sketch();
  x = 88172645463325252ull;
  for (int i = 0; i < 200000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const double v = i % 10 == 0 ? 0.0 : static_cast<double>(x % 1000000) * 1e-6 * (1 + i % 7);
    twice.add(v);
    if (i % 3 == 0) twice.add(v);
  }
  WaitSketch thirds;  // the values added again, a third of them: a histogram merged into one
  thirds.sketch();
  x = 88172645463325252ull;
  for (int i = 0; i < 200000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    if (i % 3 == 0) thirds.add(i % 10 == 0 ? 0.0 : static_cast<double>(x % 1000000) * 1e-6 * (1 + i % 7));
  }
  WaitSketch joined;
  joined.add(sketched);
  joined.add(thirds);
  EXPECT_EQ(joined.count(), twice.count());
  EXPECT_EQ(joined.stats().p50, twice.stats().p50);
  EXPECT_EQ(joined.stats().p95, twice.stats().p95);
  EXPECT_EQ(joined.stats().max, twice.stats().max);
}

// A histogram entry counts to 2^32 - 1: a bucket of more values takes several entries. Doubling a
// histogram by merging it into a copy 34 times puts 3 * 2^34 values in one bucket and 2^34 in the
// next, and values added after them go to the last entry of their bucket, or to a new one when it
// is full. With one entry a bucket, counts past 2^32 - 1 would wrap and p50 and p95 would miss.
TEST(WaitSketchTest, ABucketPastFourBillionValuesKeepsCounting) {
  WaitSketch h;
  h.sketch();
  for (int i = 0; i < 3; ++i) h.add(1.0);
  h.add(2.0);
  for (int k = 0; k < 34; ++k) {
    const WaitSketch copy = h;
    h.add(copy);
  }
  h.add(1.0);
  h.add(0.5);
  const std::uint64_t quarter = std::uint64_t{1} << 34;
  EXPECT_EQ(h.count(), 4 * quarter + 2);
  // The same percentiles as a histogram of 0.5, three 1.0s and a 2.0.
  WaitSketch small;
  small.sketch();
  for (double v : {0.5, 1.0, 1.0, 1.0, 2.0}) small.add(v);
  const WaitStats s = h.stats(), e = small.stats();
  EXPECT_EQ(s.p50, e.p50);  // bucket 1.0
  EXPECT_EQ(s.p95, e.p95);  // bucket 2.0
  EXPECT_LT(e.p50, e.p95);
  // Merged both ways: 2^33 values of 0.5 under 2^34 of 1.0, as one 0.5 under two 1.0s.
  WaitSketch below;
  below.sketch();
  for (double v : {0.5, 1.0, 1.0}) below.add(v);
  for (int k = 0; k < 33; ++k) {
    WaitSketch copy;
    copy.add(below);
    below.add(copy);
  }
  below.add(2.0);  // so that p50 is not the max
  EXPECT_EQ(below.count(), 3 * (std::uint64_t{1} << 33) + 1);
  WaitSketch three;
  three.sketch();
  for (double v : {0.5, 1.0, 1.0, 2.0}) three.add(v);
  EXPECT_EQ(below.stats().p50, three.stats().p50);  // bucket 1.0
  EXPECT_LT(below.stats().p50, 2.0);
  EXPECT_GT(below.stats().p50, 0.75);
  // A value added to a full entry opens the next: 2^32 - 1 values of 1.0 (merged), one more added, and
  // 2^31 values of 2.0 put p50 in bucket 1.0.
  WaitSketch full, one, twos;
  full.sketch();
  one.sketch();
  twos.sketch();
  one.add(1.0);
  twos.add(2.0);
  for (int k = 0; k < 32; ++k) {
    full.add(one);  // 2^k more
    WaitSketch copy;
    copy.add(one);
    one.add(copy);
    if (k == 31) continue;
    WaitSketch copy2;
    copy2.add(twos);
    twos.add(copy2);
  }
  full.add(1.0);
  full.add(twos);
  EXPECT_EQ(full.count(), (std::uint64_t{1} << 32) + (std::uint64_t{1} << 31));
  EXPECT_EQ(full.stats().p50, e.p50);
}

// Past kSummaryListCap retired groups the Recorder keeps only the longest waits, longest first, and
// counts every group; stalls past the cap are counted, not kept.
TEST(RecorderCaps, KeepsTheLongestGroupWaitsAndCountsTheRest) {
  FakeDriver d(Builder().chip(0).chip(1));
  d.recorder().set_keep_records(false);
  const std::size_t n = kSummaryListCap + 50;
  // Group i waits READY behind a single of i % 7 + 1 seconds on chip 1.
  for (std::size_t i = 0; i < n; ++i) {
    const std::string s = "s" + std::to_string(i);
    d.duration(s, static_cast<double>(i % 7 + 1));
    d.single(s, 1);
    d.group("g" + std::to_string(i), {0, 1});
    d.run();
  }
  const std::vector<TaskRecord> groups = d.recorder().groups();
  EXPECT_TRUE(d.recorder().groups_capped());
  ASSERT_EQ(groups.size(), kSummaryListCap);
  for (std::size_t i = 1; i < groups.size(); ++i)
    EXPECT_GE(groups[i - 1].start - groups[i - 1].ready, groups[i].start - groups[i].ready);
  EXPECT_DOUBLE_EQ(groups.front().start - groups.front().ready, 7.0);
  const Recorder::GroupTotals t = d.recorder().group_totals(0);
  EXPECT_EQ(t.count, n);
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += static_cast<double>(i % 7 + 1);
  EXPECT_DOUBLE_EQ(t.ready_wait_s, sum);
}

}  // namespace
}  // namespace dirsched::testing
