// Runs: per-run first error, per-run tensor map, per-run outcome, raise (docs/contract.md, "Runs").
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_driver.hpp"

namespace dirsched::testing {
namespace {

FakeDriver platform() {
  return FakeDriver(Builder().chip(0).chip(1).chip(2).chip(3).sub(2));
}
bool has_line(const FakeDriver& d, const std::string& line) {
  const auto& l = d.trace().lines;
  return std::find(l.begin(), l.end(), line) != l.end();
}
std::size_t count_kind(const FakeDriver& d, EventKind k) {
  return static_cast<std::size_t>(std::count_if(d.trace().events.begin(), d.trace().events.end(),
                                                [&](const Event& e) { return e.kind == k; }));
}

TEST(Runs, FailFastReadsOnlyTheSubmittingRunsError) {
  FakeDriver d = platform();
  const RunId r1 = d.core().add_run("r1"), r2 = d.core().add_run("r2");
  d.fail("a");
  d.core().begin_run(r1);
  d.single("a", 0);
  d.core().end_run();
  d.run();
  ASSERT_TRUE(d.core().run_info(r1).error.has_value());
  d.core().begin_run(r2);
  const SubmitResult b = d.single("b", 1);
  d.core().end_run();
  d.run();
  EXPECT_TRUE(b.accepted());  // r1's failure does not raise in r2
  EXPECT_EQ(d.state("b"), TaskState::kCompleted);
  EXPECT_TRUE(d.core().run_info(r1).terminal);
  EXPECT_TRUE(d.core().run_info(r2).terminal);
  EXPECT_FALSE(d.core().run_info(r2).error.has_value());
}

TEST(Runs, ALookupNeverFindsAnotherRunsProducer) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  const RunId r1 = d.core().add_run("r1"), r2 = d.core().add_run("r2");
  d.fail("a");
  d.duration("a", 5);
  d.core().begin_run(r1);
  d.single("a", 0, {FakeDriver::out(x)});
  d.core().end_run();
  // r2 opens while a still runs (a driver that overlaps runs; the core does not order them).
  d.core().begin_run(r2);
  d.single("b", 1, {FakeDriver::in(x)});
  d.core().end_run();
  d.run();
  EXPECT_EQ(d.state("a"), TaskState::kFailed);
  EXPECT_EQ(d.state("b"), TaskState::kCompleted);  // no edge to r1's a: neither waited nor poisoned
  EXPECT_EQ(d.dispatches(), (std::vector<std::string>{"a@0", "b@1"}));
  EXPECT_FALSE(has_line(d, "pending b"));
}

// A task's run is not stored with it: each run's tasks are one span of ids (a run's callback is open
// once, and no other is open meanwhile). Forty runs, begun in an order unlike their declaration,
// each submit 0 to 3 tasks; every task must read back its own run, through the events and run_of,
// and each run's live count must reach 0 at its end. With run_of answering the last span for every
// task, or a span not opened after an empty run, this fails.
TEST(Runs, EachTaskKeepsItsRunWhenRunsBeginOutOfOrder) {
  FakeDriver d = platform();
  std::vector<RunId> runs;
  for (int r = 0; r < 40; ++r) runs.push_back(d.core().add_run("r" + std::to_string(r)));
  std::vector<std::pair<TaskId, RunId>> expect;
  for (int k = 0; k < 40; ++k) {
    const RunId run = runs[static_cast<std::size_t>((k * 17) % 40)];  // 17 is prime to 40: each once
    d.core().begin_run(run);
    for (int t = 0; t < k % 4; ++t) {
      const SubmitResult s = d.single("k" + std::to_string(k) + "t" + std::to_string(t), t % 4);
      ASSERT_TRUE(s.accepted());
      expect.emplace_back(s.task, run);
    }
    d.core().end_run();
  }
  for (const auto& [task, run] : expect) EXPECT_EQ(d.core().run_of(task), run) << task.index();
  d.run();
  for (const Event& e : d.trace().events)
    if (e.kind == EventKind::kDispatch || e.kind == EventKind::kComplete) {
      const auto it = std::find_if(expect.begin(), expect.end(), [&](const auto& p) { return p.first == e.task; });
      ASSERT_NE(it, expect.end());
      EXPECT_EQ(e.run, it->second) << e.task.index();
    }
  for (const RunId r : runs) EXPECT_TRUE(d.core().run_info(r).terminal) << r.index();
}

TEST(Runs, RaiseFailsTheRunAndEndsItWhenItsTasksAreTerminal) {
  FakeDriver d = platform();
  const RunId r1 = d.core().add_run("r1");
  d.core().begin_run(r1);
  d.single("a", 0);
  d.core().raise_run("bad shape");
  d.core().not_submitted("b", r1, true);
  d.core().end_run();
  EXPECT_FALSE(d.core().run_info(r1).terminal);  // a still runs
  EXPECT_EQ(count_kind(d, EventKind::kRunRaise), 1u);
  EXPECT_EQ(count_kind(d, EventKind::kRunEnd), 0u);
  d.run();
  const RunInfo& info = d.core().run_info(r1);
  EXPECT_TRUE(info.terminal);
  EXPECT_TRUE(info.raised);
  EXPECT_EQ(info.error->message, "bad shape");
  EXPECT_EQ(d.state("a"), TaskState::kCompleted);
  ASSERT_EQ(count_kind(d, EventKind::kRunEnd), 1u);
  EXPECT_TRUE(d.trace().events.back().run_failed);
  EXPECT_EQ(d.recorder().find("b")->message, "callback_raised");
}

TEST(Runs, AMemberFailureFailsOnlyItsRun) {
  FakeDriver d = platform();
  const RunId r1 = d.core().add_run("r1"), r2 = d.core().add_run("r2");
  d.core().begin_run(r1);
  d.single("a", 0);
  d.core().end_run();
  d.run();
  d.fail("b");
  d.core().begin_run(r2);
  d.single("b", 0);
  d.core().end_run();
  d.run();
  EXPECT_FALSE(d.core().run_info(r1).error.has_value());
  EXPECT_TRUE(d.core().run_info(r2).error.has_value());
  std::vector<bool> failed;
  for (const Event& e : d.trace().events)
    if (e.kind == EventKind::kRunEnd) failed.push_back(e.run_failed);
  EXPECT_EQ(failed, (std::vector<bool>{false, true}));
}

TEST(Runs, AnEmptyRunEndsAtItsCallbacksEnd) {
  FakeDriver d = platform();
  const RunId r = d.core().add_run("r");
  d.core().begin_run(r);
  EXPECT_FALSE(d.core().run_terminal(r));
  d.core().end_run();
  EXPECT_TRUE(d.core().run_terminal(r));
}

TEST(Runs, TheImplicitRunEmitsNoRunEvent) {
  FakeDriver d = platform();
  d.fail("a");
  d.single("a", 0);
  d.run();
  d.core().raise_run("late");
  EXPECT_EQ(count_kind(d, EventKind::kRunRaise) + count_kind(d, EventKind::kRunEnd), 0u);
  EXPECT_EQ(d.core().run_error()->task, TaskId(0u));  // the member failure stays the first error
}

TEST(Runs, MisuseIsACoreError) {
  FakeDriver d = platform();
  const RunId r = d.core().add_run("r");
  EXPECT_THROW(d.single("a", 0), CoreError);  // no callback open
  EXPECT_THROW(d.core().end_run(), CoreError);
  d.core().begin_run(r);
  EXPECT_THROW(d.core().begin_run(r), CoreError);
  d.core().end_run();
  EXPECT_THROW(d.core().begin_run(r), CoreError);  // begun before
}

}  // namespace
}  // namespace dirsched::testing
