// The wait attribution's memory follows the tasks started, not the tasks queued or ended
// (waits.hpp): a task only queued holds no Live, and the critical-path chains are trimmed to what an
// output can read. Both must change no output: the causes, the longest waits and the critical path
// read the same with and without them.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "dirsched/waits.hpp"
#include "fake_driver.hpp"

namespace dirsched {
namespace {

using testing::Builder;
using testing::FakeDriver;

std::vector<std::string> path_text(const WaitAttribution& w) {
  std::vector<std::string> out;
  for (const CriticalStep& s : w.critical_path())
    out.push_back(s.task + " " + std::to_string(s.start_s) + "-" + std::to_string(s.end_s) + " " +
                  start_reason_name(s.reason) + " after " + s.after);
  return out;
}

TEST(WaitMemory, AQueuedTaskHoldsNoLive) {
  FakeDriver d(Builder{}.chip(0).chip(1).chip(2).chip(3));
  WaitAttribution waits(d.core());
  d.observe(&waits);
  std::vector<SubmitRequest> ops;
  for (int i = 0; i < 400; ++i) ops.push_back(d.single_request("t" + std::to_string(i), i % 4));
  d.batch(ops);  // all READY at t = 0; the first four dispatched
  EXPECT_EQ(waits.live_tasks(), 400u);
  EXPECT_EQ(waits.pooled_lives(), 4u);  // the running ones
  d.run();
  EXPECT_EQ(waits.live_tasks(), 0u);
  EXPECT_EQ(waits.pooled_lives(), 0u);
  EXPECT_EQ(waits.inexact(), 0u);
  EXPECT_EQ(waits.started(), 400u);
  // The last task on each worker waited for the 99 before it: 99 s of fifo, 99 ahead of it.
  const std::optional<TaskWaits> last = waits.peek(TaskId(396u));  // t396, the last on chip 0
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->s[static_cast<std::size_t>(WaitCause::kFifo)], 99.0);
  EXPECT_EQ(last->behind, 99u);
}

// A run observed twice: untrimmed (kTrimFloor is far above its nodes) and trimmed every 16 new nodes.
struct Twice {
  FakeDriver d;
  WaitAttribution whole, trimmed;
  explicit Twice(Builder b) : d(std::move(b)), whole(d.core()), trimmed(d.core()) {
    trimmed.set_trim_period(16);
    d.observe(&whole);
    d.observe(&trimmed);
  }
  void expect_same_path() {
    EXPECT_EQ(path_text(trimmed), path_text(whole));
    EXPECT_EQ(trimmed.critical_path_steps(), whole.critical_path_steps());
    EXPECT_EQ(trimmed.totals(), whole.totals());
  }
};

TEST(WaitMemory, TrimmedChainsKeepTheCriticalPathsLastSteps) {
  Twice run(Builder{}.chip(0));
  for (int i = 0; i < 3000; ++i) run.d.single("t" + std::to_string(i), 0);
  run.d.run();
  EXPECT_EQ(run.whole.critical_path_steps(), 3000u);
  EXPECT_EQ(run.whole.critical_path().size(), WaitAttribution::kPathKept);
  EXPECT_EQ(run.whole.critical_path().front().after, "t1999");
  run.expect_same_path();
  EXPECT_GE(run.whole.peak_nodes(), 3000u);  // every task's node: each holds its predecessor
  EXPECT_LE(run.trimmed.peak_nodes(), WaitAttribution::kPathKept + 1 + 16 + 2);
}

TEST(WaitMemory, TrimmedChainsKeepWhatTheFirstListedStepWaitedFor) {
  // The task that ends last is running while later tasks start (and trim): its chain is trimmed as a
  // root's, and the path still names what its first listed step waited for.
  Twice run(Builder{}.chip(0).chip(1));
  for (int i = 0; i < 2000; ++i) run.d.single("t" + std::to_string(i), 0);
  run.d.duration("t1999", 100);
  run.d.advance_to(1999.5);  // t1999 runs from 1999 to 2099
  for (int i = 0; i < 100; ++i) {
    run.d.duration("u" + std::to_string(i), 0.5);
    run.d.single("u" + std::to_string(i), 1);
  }
  run.d.run();
  ASSERT_EQ(run.whole.critical_path().back().task, "t1999");
  EXPECT_EQ(run.whole.critical_path().front().after, "t999");
  run.expect_same_path();
}

TEST(WaitMemory, TrimmedChainsThroughGroupsReadTheSame) {
  // Groups between singles: steps after a group FIFO head, a last busy target, a launch.
  for (unsigned seed = 1; seed <= 2; ++seed) {
    Twice run(Builder{}.chip(0).chip(1).chip(2));
    std::mt19937 rng(seed);
    for (int i = 0; i < 4000; ++i) {
      const std::string name = "t" + std::to_string(i);
      run.d.duration(name, std::uniform_int_distribution<int>(1, 3)(rng) * 0.5);
      const auto first = static_cast<std::int64_t>(rng() % 3);
      if (rng() % 4 == 0)
        run.d.group(name, {first, (first + 1) % 3});
      else
        run.d.single(name, first);
    }
    run.d.run();
    SCOPED_TRACE("seed " + std::to_string(seed));
    EXPECT_GT(run.whole.critical_path_steps(), WaitAttribution::kPathKept);
    EXPECT_LT(run.trimmed.nodes_held(), run.whole.critical_path_steps());
    const std::vector<CriticalStep> path = run.whole.critical_path();
    EXPECT_TRUE(std::any_of(path.begin(), path.end(), [](const CriticalStep& c) {
      return c.reason == StartReason::kTarget || c.reason == StartReason::kGroupHead;
    }));
    run.expect_same_path();
  }
}

TEST(WaitMemory, TrimmedChainsOfARandomDagReadTheSame) {
  // Branching chains: consumers of one producer, SUB tasks, 0 s members that end in their instant,
  // several workers. Long enough that the chains pass kPathKept.
  for (unsigned seed = 1; seed <= 4; ++seed) {
    Twice run(Builder{}.chip(0).chip(1).chip(2).sub(2));
    std::mt19937 rng(seed);
    std::vector<BufferId> made;
    for (int i = 0; i < 6000; ++i) {
      const std::string name = "t" + std::to_string(i);
      run.d.duration(name, std::uniform_int_distribution<int>(0, 2)(rng) * 0.5);
      std::vector<Arg> args;
      if (!made.empty() && rng() % 3 != 0) {
        const std::size_t back = std::min<std::size_t>(made.size(), 1 + rng() % 4);
        args.push_back(FakeDriver::in(made[made.size() - back]));
      }
      const BufferId out = run.d.buffer("b" + std::to_string(i));
      args.push_back(FakeDriver::out(out));
      made.push_back(out);
      if (rng() % 5 == 0)
        run.d.sub(name, args);
      else
        run.d.single(name, static_cast<std::int64_t>(rng() % 3), args);
      if (rng() % 4 == 0) run.d.step();
    }
    run.d.run();
    SCOPED_TRACE("seed " + std::to_string(seed));
    EXPECT_GT(run.whole.critical_path_steps(), WaitAttribution::kPathKept);
    // At the end the makespan's whole chain is held untrimmed; trimmed, what the roots of the last
    // trimming could reach (kPathKept + 1 nodes each, branches shared).
    EXPECT_GE(run.whole.nodes_held(), run.whole.critical_path_steps());
    EXPECT_LT(run.trimmed.nodes_held(), run.whole.critical_path_steps());
    run.expect_same_path();
  }
}

}  // namespace
}  // namespace dirsched
