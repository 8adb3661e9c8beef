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

// A task's consumers and the buffers it last wrote are held apart, in pages of 1,024 tasks made when
// one of their tasks first has one: a trace without buffers holds none (its entry is 16 bytes), one
// with buffers holds what it uses, and reclamation gives the pages back. Writing them for every task
// fails the first check; keeping the pages past reclamation fails the last.
TEST(Reclaim, OnlyTasksWithBuffersHoldColdPages) {
  FakeDriver d(Builder().chip(0).chip(1));
  d.core().set_reclaim(true);
  d.recorder().set_keep_records(false);
  for (int i = 0; i < 5000; ++i) d.single("s" + std::to_string(i), i % 2);
  EXPECT_EQ(d.core().cold_pages(), 0u);
  d.run();
  EXPECT_EQ(d.core().cold_pages(), 0u);
  const BufferId x = d.buffer("x");
  for (int i = 0; i < 4000; ++i) d.single("w" + std::to_string(i), i % 2, {FakeDriver::inout(x)});
  EXPECT_GE(d.core().cold_pages(), 3u);  // tasks 5,000 to 8,999: pages 4 to 8
  d.run();
  EXPECT_EQ(d.recorder().state_counts().at(TaskState::kCompleted), 9000u);
  EXPECT_LE(d.core().cold_pages(), 1u);  // at most the page of the first task not reclaimed
  EXPECT_EQ(d.core().name(TaskId(8999u)), "w3999");
}

// Only a group keeps slots in the core's slot table (a one-member task keeps its slot in its entry), so
// the slot table's reclaim floor is the end of the last reclaimed group's slots. A group submitted after
// thousands of reclaimed singles and groups, and one queued behind it, still read their own slots (a
// floor one entry too far names a held group's slot as reclaimed, and the core aborts).
TEST(Reclaim, GroupsAmongReclaimedSinglesKeepTheirSlots) {
  FakeDriver d(Builder().chip(0).chip(1).chip(2).sub(2));
  d.core().set_reclaim(true);
  d.recorder().set_keep_records(false);
  for (int i = 0; i < 3000; ++i) {
    d.group("g" + std::to_string(i), {0, 1});
    d.single("s" + std::to_string(i), 2);
    d.sub_group("u" + std::to_string(i), 2);
  }
  d.run();
  // Up to the last group whose stall episode was tracked (the core keeps that one), then compacted.
  EXPECT_GE(d.core().reclaimed_before(), 5000u);
  EXPECT_LT(d.core().held_tasks(), 4100u);
  d.duration("late", 5);
  const TaskId late = d.group("late", {0, 1}).task;
  const TaskId next = d.group("next", {1, 2}).task;  // blocked behind late on chip 1
  const TaskId sub = d.sub_group("sub", 2).task;
  EXPECT_EQ(d.core().members(late), 2u);
  EXPECT_EQ(d.core().members(next), 2u);
  EXPECT_EQ(d.core().state(late), TaskState::kRunning);
  EXPECT_EQ(d.core().state(next), TaskState::kReady);
  EXPECT_EQ(d.core().target(next, 1), WorkerId(2));
  EXPECT_EQ(d.core().state(sub), TaskState::kRunning);
  EXPECT_NE(d.core().dump().find("late group RUNNING ended=0/2 live_producers=0 consumers=[] members=[0R,1R,]"),
            std::string::npos)
      << d.core().dump();
  d.run();
  EXPECT_EQ(d.recorder().state_counts().at(TaskState::kCompleted), 9000u + 3u);
  EXPECT_EQ(d.dispatches().back(), "next[1]@2");
}

}  // namespace
}  // namespace dirsched::testing
