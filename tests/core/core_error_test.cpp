// Driver misuse: every wrong call throws CoreError with its code and leaves the core as it was, so
// the run can go on; and the instant helper applies one instant's ends in dispatch order.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "dirsched/invariants.hpp"
#include "dirsched/scheduler.hpp"
#include "fake_driver.hpp"

namespace dirsched::testing {
namespace {

// A core on two chips and a SUB pool of one, with an invariant checker, driven by hand.
struct Hand {
  Hand() : core(make_registry()), checker(core.registry()) {
    chip = CallableId(0u);
    py = CallableId(1u);
    checker.set_dump([this] { return core.dump(); });
    observers.add(&checker);
    observers.add(&trace);
    core.set_observer(&observers);
  }
  static Registry make_registry() {
    Registry r;
    r.add_next_level(WorkerId(0), WorkerKind::kLocalChip);
    r.add_next_level(WorkerId(1), WorkerKind::kLocalChip);
    r.set_sub_workers(1);
    r.add_callable({"chip", Namespace::kLocalChip, std::nullopt});
    r.add_callable({"py", Namespace::kLocalPython, std::nullopt});
    return r;
  }
  // Submits and runs the instant; returns the dispatches it made.
  std::vector<Dispatch> settle() {
    std::vector<Dispatch> out;
    run_instant(core, [&](const std::vector<Dispatch>& ds) { out.insert(out.end(), ds.begin(), ds.end()); });
    return out;
  }
  Scheduler core;
  InvariantChecker checker;
  EventTrace trace;
  ObserverList observers;
  CallableId chip, py;
};

// Calls `misuse`, expects CoreError with `code`, and that nothing in the core changed.
template <typename F>
void expect_refused(Hand& h, CoreErrorCode code, F misuse) {
  const std::string before = h.core.dump();
  const std::size_t events = h.trace.lines.size();
  try {
    misuse();
    ADD_FAILURE() << "no CoreError thrown, expected " << to_string(code);
  } catch (const CoreError& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_FALSE(std::string(e.what()).empty());
  }
  EXPECT_EQ(h.core.dump(), before);
  EXPECT_EQ(h.trace.lines.size(), events) << "a refused call emitted an event";
}

TEST(CoreError, ReportOfATaskTheCoreNeverIssuedThrowsUnknownTask) {
  Hand h;
  h.core.submit_next_level("a", h.chip, {}, WorkerId(0));
  h.settle();
  expect_refused(h, CoreErrorCode::kUnknownTask, [&] { h.core.report(TaskId(), 0, Outcome::kSuccess); });
  expect_refused(h, CoreErrorCode::kUnknownTask, [&] { h.core.report(TaskId(7u), 0, Outcome::kSuccess); });
}

TEST(CoreError, ReportOfAMemberPastTheTasksMembersThrowsUnknownMember) {
  Hand h;
  const TaskId g = h.core.submit_next_level_group("g", h.chip, {{}, {}}, {WorkerId(0), WorkerId(1)}).task;
  h.settle();
  expect_refused(h, CoreErrorCode::kUnknownMember, [&] { h.core.report(g, 2, Outcome::kSuccess); });
}

TEST(CoreError, ReportOfAMemberNeverDispatchedThrowsNotRunning) {
  Hand h;
  h.core.submit_next_level("a", h.chip, {}, WorkerId(0));
  const TaskId b = h.core.submit_next_level("b", h.chip, {}, WorkerId(0)).task;
  h.settle();  // a runs on 0, b waits behind it
  ASSERT_EQ(h.core.state(b), TaskState::kReady);
  expect_refused(h, CoreErrorCode::kNotRunning, [&] { h.core.report(b, 0, Outcome::kSuccess); });
}

TEST(CoreError, ReportOfAMemberThatAlreadyEndedThrowsNotRunning) {
  Hand h;
  const TaskId a = h.core.submit_next_level("a", h.chip, {}, WorkerId(0)).task;
  h.settle();
  h.core.report(a, 0, Outcome::kSuccess);
  h.settle();
  ASSERT_EQ(h.core.state(a), TaskState::kCompleted);
  expect_refused(h, CoreErrorCode::kNotRunning, [&] { h.core.report(a, 0, Outcome::kSuccess); });
}

TEST(CoreError, SecondReportOfOneMemberBeforeItIsAppliedThrowsDoubleReport) {
  Hand h;
  const TaskId a = h.core.submit_next_level("a", h.chip, {}, WorkerId(0)).task;
  h.settle();
  h.core.report(a, 0, Outcome::kSuccess);
  expect_refused(h, CoreErrorCode::kDoubleReport, [&] { h.core.report(a, 0, Outcome::kFailure); });
  h.settle();
  // The first report stands: the task completed, the refused failure was never recorded.
  EXPECT_EQ(h.core.state(a), TaskState::kCompleted);
  EXPECT_FALSE(h.core.run_error().has_value());
}

TEST(CoreError, QueriesNamingUnknownThingsThrowWithTheirCodes) {
  Hand h;
  const TaskId s = h.core.submit_sub("s", h.py, {}).task;
  const TaskId a = h.core.submit_next_level("a", h.chip, {}, WorkerId(1)).task;
  h.settle();
  expect_refused(h, CoreErrorCode::kUnknownTask, [&] { (void)h.core.state(TaskId(9u)); });
  expect_refused(h, CoreErrorCode::kUnknownTask, [&] { (void)h.core.name(TaskId()); });
  expect_refused(h, CoreErrorCode::kNotNextLevel, [&] { (void)h.core.target(s, 0); });
  expect_refused(h, CoreErrorCode::kUnknownMember, [&] { (void)h.core.target(a, 1); });
  expect_refused(h, CoreErrorCode::kUnknownWorker, [&] { (void)h.core.worker_busy(2); });
  expect_refused(h, CoreErrorCode::kUnknownWorker, [&] { (void)h.core.worker_queue_length(5); });
  expect_refused(h, CoreErrorCode::kUnknownWorker, [&] { (void)h.core.sub_worker_busy(1); });
  expect_refused(h, CoreErrorCode::kUnknownBuffer, [&] { (void)h.core.buffer(BufferId(0u)); });
  EXPECT_EQ(h.core.target(a, 0), WorkerId(1));
}

TEST(CoreError, RunGoesOnToTheEndAfterEveryKindOfRefusedReport) {
  Hand h;
  const TaskId a = h.core.submit_next_level("a", h.chip, {}, WorkerId(0)).task;
  const TaskId b = h.core.submit_next_level("b", h.chip, {}, WorkerId(0)).task;
  h.settle();
  for (auto misuse : {std::make_pair(TaskId(5u), 0u), std::make_pair(a, 3u), std::make_pair(b, 0u)})
    EXPECT_THROW(h.core.report(misuse.first, misuse.second, Outcome::kSuccess), CoreError);
  h.core.report(a, 0, Outcome::kSuccess);
  EXPECT_THROW(h.core.report(a, 0, Outcome::kSuccess), CoreError);
  h.settle();
  h.core.report(b, 0, Outcome::kSuccess);
  h.settle();
  EXPECT_EQ(h.core.state(a), TaskState::kCompleted);
  EXPECT_EQ(h.core.state(b), TaskState::kCompleted);
  EXPECT_EQ(h.core.non_terminal_tasks(), 0u);
  EXPECT_NO_THROW(h.checker.finish(h.core.stuck()));
}

TEST(InstantHelper, AppliesTheEndsOfOneInstantInDispatchOrderWhateverOrderTheyArrive) {
  Hand h;
  const TaskId a = h.core.submit_next_level("a", h.chip, {}, WorkerId(0)).task;
  const TaskId b = h.core.submit_next_level("b", h.chip, {}, WorkerId(1)).task;
  const TaskId s = h.core.submit_sub("s", h.py, {}).task;
  const std::vector<Dispatch> ds = h.settle();
  ASSERT_EQ(ds.size(), 3u);
  std::map<TaskId, std::uint64_t> seq;
  for (const Dispatch& d : ds) seq[d.task] = d.seq;
  // Arrive in reverse dispatch order.
  std::vector<MemberEnd> ends = {{seq[s], s, 0, Outcome::kSuccess},
                                 {seq[b], b, 0, Outcome::kSuccess},
                                 {seq[a], a, 0, Outcome::kSuccess}};
  const std::size_t mark = h.trace.lines.size();
  EXPECT_GE(complete_instant(h.core, ends, [](const std::vector<Dispatch>&) {}), 1u);
  EXPECT_TRUE(ends.empty());
  std::vector<std::string> member_ends;
  for (std::size_t i = mark; i < h.trace.lines.size(); ++i)
    if (h.trace.lines[i].rfind("member_end", 0) == 0) member_ends.push_back(h.trace.lines[i]);
  EXPECT_EQ(member_ends, (std::vector<std::string>{"member_end a[0]@0 success", "member_end b[0]@1 success",
                                                   "member_end s[0]@sub0 success"}));
}

TEST(InstantHelper, AnInstantWithNoEndsRunsNoIteration) {
  Hand h;
  h.core.submit_next_level("a", h.chip, {}, WorkerId(0));
  h.settle();
  std::vector<MemberEnd> none;
  bool called = false;
  EXPECT_EQ(complete_instant(h.core, none, [&](const std::vector<Dispatch>&) { called = true; }), 0u);
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace dirsched::testing
