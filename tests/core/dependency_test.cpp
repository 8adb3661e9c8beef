// Tag-driven dependency inference and routing on READY.
#include <gtest/gtest.h>

#include "fake_driver.hpp"

namespace dirsched::testing {
namespace {

using V = std::vector<std::string>;
FakeDriver platform() {
  return FakeDriver(Builder().chip(0).chip(1).chip(2).chip(3).sub(2));
}

TEST(Dependencies, InputWaitsForTheLastOutputProducer) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  d.single("a", 0, {FakeDriver::out(x)});
  d.single("b", 1, {FakeDriver::in(x)});
  EXPECT_EQ(d.state("b"), TaskState::kPending);
  EXPECT_EQ(d.core().worker_queue_length(1), 0u);  // PENDING tasks are in no queue
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"a@0", "b@1"}));
  EXPECT_DOUBLE_EQ(d.recorder().find("b")->start, 1.0);
}

TEST(Dependencies, OutputDoesNotWaitForEarlierWriters) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  d.single("a", 0, {FakeDriver::out(x)});
  d.single("b", 1, {FakeDriver::out(x)});
  EXPECT_EQ(d.dispatches(), (V{"a@0", "b@1"}));
}

TEST(Dependencies, InoutLooksUpThenBecomesProducer) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  d.single("a", 0, {FakeDriver::out(x)});
  d.single("b", 1, {FakeDriver::inout(x)});
  d.single("c", 2, {FakeDriver::in(x)});
  EXPECT_EQ(d.trace().lines.back(), "pending c");
  d.step();
  EXPECT_EQ(d.dispatches(), (V{"a@0", "b@1"}));
  d.step();
  EXPECT_EQ(d.dispatches(), (V{"a@0", "b@1", "c@2"}));
}

TEST(Dependencies, OutputExistingBecomesProducerWithoutWaiting) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  d.single("a", 0, {FakeDriver::out(x)});
  d.single("b", 1, {{x, Tag::kOutputExisting}});
  d.single("c", 2, {FakeDriver::in(x)});
  EXPECT_EQ(d.dispatches(), (V{"a@0", "b@1"}));
  d.advance_to(1.0);
  EXPECT_EQ(d.dispatches(), (V{"a@0", "b@1", "c@2"}));
}

TEST(Dependencies, NoDepNeitherWaitsNorProduces) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  d.single("a", 0, {FakeDriver::out(x)});
  d.single("b", 1, {{x, Tag::kNoDep}});
  d.single("c", 2, {FakeDriver::in(x)});
  EXPECT_EQ(d.dispatches(), (V{"a@0", "b@1"}));
  EXPECT_EQ(d.trace().lines.back(), "pending c");
  d.run();
  EXPECT_EQ(d.recorder().find("c")->producers, (V{"a"}));
}

TEST(Dependencies, CompletedProducerIsNotALiveProducer) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  d.single("a", 0, {FakeDriver::out(x)});
  d.run();
  d.single("b", 1, {FakeDriver::in(x)});
  EXPECT_EQ(d.trace().lines.back(), "dispatch b[0]@1");
  EXPECT_EQ(d.state("b"), TaskState::kRunning);
}

TEST(Dependencies, TaskWaitsForEveryLiveProducer) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x"), y = d.buffer("y");
  d.duration("a", 1);
  d.duration("b", 3);
  d.single("a", 0, {FakeDriver::out(x)});
  d.single("b", 1, {FakeDriver::out(y)});
  d.single("c", 2, {FakeDriver::in(x), FakeDriver::in(y)});
  d.advance_to(2.0);
  EXPECT_EQ(d.state("c"), TaskState::kPending);
  d.run();
  EXPECT_DOUBLE_EQ(d.recorder().find("c")->start, 3.0);
  EXPECT_EQ(d.recorder().find("c")->producers, (V{"a", "b"}));
}

TEST(Dependencies, ReadingTwoBuffersOfOneProducerCountsItOnce) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x"), y = d.buffer("y");
  d.single("a", 0, {FakeDriver::out(x), FakeDriver::out(y)});
  d.single("b", 1, {FakeDriver::in(x), FakeDriver::in(y)});
  d.run();
  EXPECT_EQ(d.state("b"), TaskState::kCompleted);
  EXPECT_EQ(d.recorder().find("b")->producers, (V{"a"}));
}

TEST(Dependencies, ATaskNeverDependsOnItself) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  d.single("a", 0, {FakeDriver::in(x), FakeDriver::out(x)});
  EXPECT_EQ(d.dispatches(), (V{"a@0"}));
}

TEST(Dependencies, GroupMembersNeverDependOnEachOther) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  d.group("g", {0, 1}, {{FakeDriver::out(x)}, {FakeDriver::in(x)}});
  EXPECT_EQ(d.dispatches(), (V{"g[0]@0", "g[1]@1"}));
}

// The walk: args in order, member by member, against one tensor map updated as it goes.

TEST(Dependencies, OutputThenInputOfOneBufferInOneTaskWaitsForNoEarlierWriter) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  d.duration("w", 5);
  d.single("w", 0, {FakeDriver::out(x)});
  // [OUTPUT x, INPUT x]: the INPUT finds this task itself, which the walk ignores.
  d.single("a", 1, {FakeDriver::out(x), FakeDriver::in(x)});
  EXPECT_EQ(d.dispatches(), (V{"w@0", "a@1"}));
  EXPECT_EQ(d.core().dump().find("live_producers=1"), std::string::npos);
}

TEST(Dependencies, InputThenOutputOfOneBufferInOneTaskWaitsForTheEarlierWriter) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  d.duration("w", 5);
  d.single("w", 0, {FakeDriver::out(x)});
  d.single("a", 1, {FakeDriver::in(x), FakeDriver::out(x)});
  EXPECT_EQ(d.trace().lines.back(), "pending a");
  d.run();
  EXPECT_EQ(d.recorder().find("a")->producers, (V{"w"}));
  EXPECT_DOUBLE_EQ(d.recorder().find("a")->start, 5.0);
}

TEST(Dependencies, GroupMemberReadingWhatAnEarlierMemberWroteWaitsForNoEarlierWriter) {
  FakeDriver d = platform();
  BufferId y = d.buffer("y");
  d.duration("w", 5);
  d.single("w", 0, {FakeDriver::out(y)});
  // Member 0 writes y, member 1 reads and writes it: member 1's lookup finds the group itself.
  d.group("g", {1, 2}, {{FakeDriver::out(y)}, {FakeDriver::inout(y)}});
  EXPECT_EQ(d.dispatches(), (V{"w@0", "g[0]@1", "g[1]@2"}));
  // The group is y's producer now: a later reader waits for it, not for w.
  d.single("c", 3, {FakeDriver::in(y)});
  d.run();
  EXPECT_EQ(d.recorder().find("c")->producers, (V{"g"}));
  EXPECT_DOUBLE_EQ(d.recorder().find("c")->start, 1.0);
}

TEST(Dependencies, GroupMemberWritingAfterAnEarlierMemberReadStillWaitsForTheEarlierWriter) {
  FakeDriver d = platform();
  BufferId y = d.buffer("y");
  d.duration("w", 5);
  d.single("w", 0, {FakeDriver::out(y)});
  d.group("g", {1, 2}, {{FakeDriver::inout(y)}, {FakeDriver::out(y)}});
  EXPECT_EQ(d.trace().lines.back(), "pending g");
  d.run();
  EXPECT_EQ(d.recorder().find("g")->producers, (V{"w"}));
  EXPECT_DOUBLE_EQ(d.recorder().find("g")->start, 5.0);
}

TEST(Dependencies, AProducerFoundByTwoMembersCountsOnce) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x"), y = d.buffer("y");
  d.duration("a", 2);
  d.single("a", 0, {FakeDriver::out(x), FakeDriver::out(y)});
  d.group("g", {1, 2}, {{FakeDriver::in(x)}, {FakeDriver::in(y)}});
  EXPECT_NE(d.core().dump().find("g group PENDING ended=0/2 live_producers=1 "), std::string::npos)
      << d.core().dump();
  d.run();
  EXPECT_EQ(d.recorder().find("g")->producers, (V{"a"}));
  EXPECT_EQ(d.state("g"), TaskState::kCompleted);
}

TEST(Dependencies, GroupIsOneProducerThatCompletesAfterEveryMember) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  d.durations("g", {1, 3});
  d.group("g", {0, 1}, {{FakeDriver::out(x)}, {}});
  d.single("c", 2, {FakeDriver::in(x)});
  d.advance_to(2.0);
  EXPECT_EQ(d.state("g"), TaskState::kRunning);
  EXPECT_EQ(d.state("c"), TaskState::kPending);
  d.run();
  EXPECT_DOUBLE_EQ(d.recorder().find("c")->start, 3.0);
}

TEST(Routing, ConsumerIsRoutedByItsOwnTargetNotByItsProducer) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  d.duration("busy", 10);
  d.single("busy", 3);
  d.single("a", 0, {FakeDriver::out(x)});
  d.single("b", 3, {FakeDriver::in(x)});
  d.step();  // a completes at 1; b goes to FIFO[3], which is busy until 10
  EXPECT_EQ(d.core().worker_queue_length(3), 1u);
  EXPECT_EQ(d.core().worker_queue_length(0), 0u);
  EXPECT_EQ(d.trace().lines.back(), "ready b worker:3");
  d.run();
  EXPECT_EQ(d.dispatches().back(), "b@3");
}

TEST(Routing, ReleasedConsumersAreRoutedInSubmitOrder) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x");
  d.duration("busy", 5);
  d.single("busy", 2);
  d.single("a", 0, {FakeDriver::out(x)});
  d.single("c1", 2, {FakeDriver::in(x)});
  d.single("c2", 2, {FakeDriver::in(x)});
  d.single("c3", 2, {FakeDriver::in(x)});
  d.run();
  EXPECT_EQ(d.dispatches(), (V{"busy@2", "a@0", "c1@2", "c2@2", "c3@2"}));
}

TEST(Routing, EachKindGoesToItsOwnQueue) {
  FakeDriver d = platform();
  d.duration("b0", 5);
  d.duration("b1", 5);
  d.single("b0", 0);
  d.single("b1", 1);
  d.single("s", 0);
  d.group("g", {0, 1});
  d.sub("u");
  EXPECT_EQ(d.core().worker_queue_length(0), 1u);
  EXPECT_EQ(d.core().group_queue_length(), 1u);
  const auto& lines = d.trace().lines;
  EXPECT_NE(std::find(lines.begin(), lines.end(), "ready s worker:0"), lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "ready g group"), lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "ready u sub"), lines.end());
}

TEST(Routing, EveryTaskIsRoutedExactlyOnce) {
  FakeDriver d = platform();
  BufferId x = d.buffer("x"), y = d.buffer("y");
  d.single("a", 0, {FakeDriver::out(x)});
  d.single("b", 1, {FakeDriver::out(y)});
  d.group("g", {2, 3}, {{FakeDriver::in(x)}, {FakeDriver::in(y)}});
  d.sub("s", {FakeDriver::in(x), FakeDriver::in(y)});
  d.run();
  std::map<std::string, int> ready;
  for (const std::string& l : d.trace().lines)
    if (l.rfind("ready ", 0) == 0) ++ready[l.substr(6, l.find(' ', 6) - 6)];
  EXPECT_EQ(ready, (std::map<std::string, int>{{"a", 1}, {"b", 1}, {"g", 1}, {"s", 1}}));
}

}  // namespace
}  // namespace dirsched::testing
