// Slot reclamation (Scheduler::set_reclaim): a task's slot goes once it and every earlier task are
// terminal; a later submit that finds it as a buffer's last producer still sees its final state and
// name; nothing names a reclaimed slot again (the core aborts if it does: Window's floor).
#include <gtest/gtest.h>

#include "fake_driver.hpp"

namespace dirsched::testing {
namespace {

TEST(Reclaim, EndedTasksLeaveTheCoreAndTheirBuffersStillResolve) {
  Scheduler::Options o;
  o.fail_fast = false;
  FakeDriver d(Builder().chip(0).chip(1), o);
  d.core().set_reclaim(true);
  d.recorder().set_keep_records(false);
  const BufferId x = d.buffer("x"), y = d.buffer("y");
  const TaskId w = d.single("w", 0, {FakeDriver::out(x)}).task;
  d.fail("f");
  const TaskId f = d.single("f", 1, {FakeDriver::out(y)}).task;
  // A consumer that stays PENDING behind a slow producer keeps everything from it on.
  d.duration("slow", 50);
  const BufferId z = d.buffer("z");
  d.run();
  for (int i = 0; i < 6000; ++i) d.single("s" + std::to_string(i), i % 2);
  d.run();
  EXPECT_GE(d.core().reclaimed_before(), 5990u);  // up to the last iteration's ends
  EXPECT_LT(d.core().held_tasks(), 4200u);  // compacted
  // The last writers keep their names and final states for a later submit.
  EXPECT_EQ(d.core().name(w), "w");
  EXPECT_EQ(d.core().name(f), "f");
  EXPECT_THROW((void)d.core().state(w), CoreError);
  const TaskId r1 = d.single("r1", 0, {FakeDriver::in(x)}).task;  // its producer completed: READY at once
  const TaskId r2 = d.single("r2", 1, {FakeDriver::in(y)}).task;  // its producer failed: poisoned at submit
  EXPECT_NE(d.core().state(r1), TaskState::kPending);
  EXPECT_EQ(d.core().state(r2), TaskState::kPoisoned);
  // A newer producer of x releases w: its name goes too, once the submit has named it.
  const TaskId w2 = d.single("w2", 0, {FakeDriver::inout(x)}).task;
  EXPECT_NE(d.core().state(w2), TaskState::kPending);
  EXPECT_THROW((void)d.core().name(w), CoreError);
  EXPECT_EQ(d.core().name(f), "f");
  // A PENDING consumer holds the window at its producer; the producer's consumers are released later.
  const TaskId slow = d.single("slow", 0, {FakeDriver::out(z)}).task;
  const TaskId c = d.single("c", 1, {FakeDriver::in(z)}).task;
  for (int i = 0; i < 5000; ++i) d.single("t" + std::to_string(i), 1);
  d.advance_to(d.now() + 1);
  EXPECT_LE(d.core().reclaimed_before(), slow.index());
  EXPECT_EQ(d.core().state(c), TaskState::kPending);
  d.run();
  EXPECT_EQ(d.recorder().state_counts().at(TaskState::kCompleted), 6000u + 5000u + 5u);
  EXPECT_GE(d.core().reclaimed_before(), c.index());
  EXPECT_TRUE(d.core().stuck().empty());
}

}  // namespace
}  // namespace dirsched::testing
