// The ladder switch registration_order_completions (#1754), on the fake driver: the member ends due at
// one instant are applied in the order of the worker that ran each member, NEXT_LEVEL workers in
// registration order, then SUB workers by index; not in dispatch order. Each end frees its worker at
// its position; a group completes (and releases or poisons its consumers) at the position of its last
// member to end; its failure is its first failing member in that order; a completing task releases its
// consumers in submit order; a member failure becomes the run's error at its position. Each test runs
// the rule with the switch off too (dispatch order), so that it shows a difference, and the invariant
// checker (FakeDriver) watches every stream: with the switch on its rule
// completions_in_registration_order checks the order of each batch of ends.
#include <gtest/gtest.h>

#include "fake_driver.hpp"

namespace dirsched::testing {
namespace {

using V = std::vector<std::string>;

Scheduler::Options with_switch(bool on) {
  Scheduler::Options o;
  o.switches.set(Switch::kRegistrationOrderCompletions, on);
  return o;
}

// The event lines of these kinds, in order.
V lines_of(const FakeDriver& d, std::initializer_list<std::string> kinds) {
  V out;
  for (const std::string& l : d.trace().lines)
    for (const std::string& k : kinds)
      if (l.rfind(k + " ", 0) == 0) out.push_back(l);
  return out;
}

// Workers registered 5, 1, 3 (registration order is not id order), and 7 for the consumers. p, q, r
// are dispatched in that order (on 3, 1, 5) and end together at 1 s; each writes a buffer that its
// consumers on worker 7 read. p has two consumers, submitted cp2 before cp1.
void three_producers(FakeDriver& d) {
  const BufferId x = d.buffer("x"), y = d.buffer("y"), z = d.buffer("z");
  d.single("p", 3, {FakeDriver::out(x)});
  d.single("q", 1, {FakeDriver::out(y)});
  d.single("r", 5, {FakeDriver::out(z)});
  d.single("cp2", 7, {FakeDriver::in(x)});
  d.single("cq", 7, {FakeDriver::in(y)});
  d.single("cr", 7, {FakeDriver::in(z)});
  d.single("cp1", 7, {FakeDriver::in(x)});
  d.run();
}

TEST(RegistrationOrder, OneInstantsEndsApplyInRegistrationOrderNotDispatchOrder) {
  FakeDriver d(Builder().chip(5).chip(1).chip(3).chip(7), with_switch(true));
  three_producers(d);
  // Worker 5 was registered first, then 1, then 3: r, q, p, whatever order they were dispatched in.
  EXPECT_EQ(lines_of(d, {"member_end", "complete", "ready"}),
            (V{"ready p worker:3", "ready q worker:1", "ready r worker:5",  //
               "member_end r[0]@5 success", "complete r", "ready cr worker:7",  //
               "member_end q[0]@1 success", "complete q", "ready cq worker:7",  //
               "member_end p[0]@3 success", "complete p", "ready cp2 worker:7", "ready cp1 worker:7",
               "member_end cr[0]@7 success", "complete cr", "member_end cq[0]@7 success", "complete cq",
               "member_end cp2[0]@7 success", "complete cp2", "member_end cp1[0]@7 success", "complete cp1"}));
  // So worker 7's FIFO holds them in that order; p still releases its consumers in submit order.
  EXPECT_EQ(d.dispatches(), (V{"p@3", "q@1", "r@5", "cr@7", "cq@7", "cp2@7", "cp1@7"}));
}

TEST(RegistrationOrder, OffTheSameInstantAppliesInDispatchOrder) {
  FakeDriver d(Builder().chip(5).chip(1).chip(3).chip(7), with_switch(false));
  three_producers(d);
  EXPECT_EQ(lines_of(d, {"member_end"}).front(), "member_end p[0]@3 success");
  EXPECT_EQ(d.dispatches(), (V{"p@3", "q@1", "r@5", "cp2@7", "cp1@7", "cq@7", "cr@7"}));
}

// SUB workers come after every NEXT_LEVEL worker, by index: s1 (sub1) is dispatched at 0 s, s2 (sub0)
// and n (worker 0) at 1 s, all three end at 3 s; their consumers wait on worker 1.
void sub_and_next_level(FakeDriver& d) {
  const BufferId a = d.buffer("a"), b = d.buffer("b"), c = d.buffer("c");
  d.duration("s1", 3);
  d.duration("s2", 2);
  d.duration("n", 2);
  d.sub("s0");
  d.sub("s1", {FakeDriver::out(a)});
  d.advance_to(1);  // s0 ends: sub0 is idle again
  d.sub("s2", {FakeDriver::out(b)});
  d.single("n", 0, {FakeDriver::out(c)});
  d.single("c1", 1, {FakeDriver::in(a)});
  d.single("c2", 1, {FakeDriver::in(b)});
  d.single("cn", 1, {FakeDriver::in(c)});
  d.run();
}

TEST(RegistrationOrder, SubWorkersComeAfterNextLevelWorkersByIndex) {
  FakeDriver d(Builder().chip(0).chip(1).sub(2), with_switch(true));
  sub_and_next_level(d);
  EXPECT_EQ(d.dispatches(), (V{"s0@sub0", "s1@sub1", "s2@sub0", "n@0", "cn@1", "c2@1", "c1@1"}));
  V ends = lines_of(d, {"member_end"});
  ASSERT_GE(ends.size(), 4u);
  EXPECT_EQ((V{ends[1], ends[2], ends[3]}),
            (V{"member_end n[0]@0 success", "member_end s2[0]@sub0 success", "member_end s1[0]@sub1 success"}));
}

TEST(RegistrationOrder, OffSubEndsKeepTheirDispatchOrder) {
  FakeDriver d(Builder().chip(0).chip(1).sub(2), with_switch(false));
  sub_and_next_level(d);
  EXPECT_EQ(d.dispatches(), (V{"s0@sub0", "s1@sub1", "s2@sub0", "n@0", "c1@1", "c2@1", "cn@1"}));
}

// g on [2, 0] (launched first: g[0]@2, g[1]@0) and p on 1 end together; their consumers wait on 3.
void group_and_single(FakeDriver& d, bool fail_group) {
  const BufferId w = d.buffer("w"), x = d.buffer("x");
  if (fail_group) {
    d.fail("g", 0);
    d.fail("g", 1);
  }
  d.group("g", {2, 0}, {{FakeDriver::out(w)}, {}});
  d.single("p", 1, {FakeDriver::out(x)});
  d.single("cg", 3, {FakeDriver::in(w)});
  d.single("cp", 3, {FakeDriver::in(x)});
  d.run();
}

TEST(RegistrationOrder, AGroupCompletesAtThePositionOfItsLastMemberToEnd) {
  FakeDriver d(Builder().chip(0).chip(1).chip(2).chip(3), with_switch(true));
  group_and_single(d, false);
  // g[1] ends first (worker 0) but g completes only at g[0]'s position (worker 2), after p (worker 1).
  EXPECT_EQ(lines_of(d, {"member_end", "complete", "ready"}),
            (V{"ready g group", "ready p worker:1",  //
               "member_end g[1]@0 success",          //
               "member_end p[0]@1 success", "complete p", "ready cp worker:3",  //
               "member_end g[0]@2 success", "complete g", "ready cg worker:3",  //
               "member_end cp[0]@3 success", "complete cp", "member_end cg[0]@3 success", "complete cg"}));
  EXPECT_EQ(d.dispatches(), (V{"g[0]@2", "g[1]@0", "p@1", "cp@3", "cg@3"}));
}

TEST(RegistrationOrder, OffAGroupCompletesAtItsLastMemberInDispatchOrder) {
  FakeDriver d(Builder().chip(0).chip(1).chip(2).chip(3), with_switch(false));
  group_and_single(d, false);
  EXPECT_EQ(d.dispatches(), (V{"g[0]@2", "g[1]@0", "p@1", "cg@3", "cp@3"}));
}

TEST(RegistrationOrder, AGroupsFailureIsItsFirstFailingMemberInThisOrder) {
  for (const bool on : {true, false}) {
    SCOPED_TRACE(on ? "on" : "off");
    FakeDriver d(Builder().chip(0).chip(1).chip(2).chip(3), with_switch(on));
    group_and_single(d, true);
    // On: g[1] (worker 0) fails first, so g's failure is member 1; off: g[0], dispatched first.
    const std::uint32_t first = on ? 1 : 0;
    std::size_t fails = 0;
    for (std::size_t i = 0; i < d.trace().lines.size(); ++i)
      if (d.trace().lines[i] == "fail g") {
        ++fails;
        EXPECT_EQ(d.trace().events[i].member, first);
      }
    EXPECT_EQ(fails, 1u);
    ASSERT_TRUE(d.core().run_error().has_value());
    EXPECT_EQ(d.core().run_error()->member, first);
    EXPECT_EQ(d.core().run_error()->message, "task 'g' member " + std::to_string(first) + " failed");
    // g fails at the position of its last member to end: after p completed (on), before it (off).
    const V order = lines_of(d, {"complete", "fail", "poison"});
    EXPECT_EQ(order, on ? (V{"complete p", "fail g", "poison cg", "complete cp"})
                        : (V{"fail g", "poison cg", "complete p", "complete cp"}));
    EXPECT_EQ(d.state("cg"), TaskState::kPoisoned);
  }
}

// a on worker 1 is dispatched before b on worker 0; both fail at 1 s, and c (worker 2) completes then.
TEST(RegistrationOrder, AMemberFailureBecomesTheRunsErrorAtItsPosition) {
  for (const bool on : {true, false}) {
    SCOPED_TRACE(on ? "on" : "off");
    FakeDriver d(Builder().chip(0).chip(1).chip(2), with_switch(on));
    d.fail("a");
    d.fail("b");
    d.single("a", 1);
    d.single("b", 0);
    d.single("c", 2);
    d.step();
    const std::string first = on ? "b" : "a";
    ASSERT_TRUE(d.core().run_error().has_value());
    EXPECT_EQ(d.core().run_error()->message, "task '" + first + "' member 0 failed");
    EXPECT_EQ(lines_of(d, {"fail"}), on ? (V{"fail b", "fail a"}) : (V{"fail a", "fail b"}));
    // Fail-fast raises the run's error: a later submit is not submitted, naming that task.
    const SubmitResult late = d.single("late", 2);
    ASSERT_FALSE(late.accepted());
    EXPECT_NE(late.rejection->message.find("task '" + first + "' member 0 failed"), std::string::npos)
        << late.rejection->message;
  }
}

// Members of zero duration end at once; those of one iteration are one batch, ordered the same way
// (the fake driver hands them to report_instant as the SimGrid and event drivers do).
TEST(RegistrationOrder, EndsThatComeDueAtOnceFollowTheSwitchToo) {
  for (const bool on : {true, false}) {
    SCOPED_TRACE(on ? "on" : "off");
    FakeDriver d(Builder().chip(0).chip(1), with_switch(on));
    d.duration("g", 0);
    d.fail("g", 0);
    d.fail("g", 1);
    d.group("g", {1, 0});
    EXPECT_EQ(lines_of(d, {"member_end"}),
              on ? (V{"member_end g[1]@0 failure", "member_end g[0]@1 failure"})
                 : (V{"member_end g[0]@1 failure", "member_end g[1]@0 failure"}));
    ASSERT_TRUE(d.core().run_error().has_value());
    EXPECT_EQ(d.core().run_error()->member, on ? 1u : 0u);
  }
}

// The order is the core's one decision: report_instant() takes a batch in any order.
TEST(RegistrationOrder, ReportInstantOrdersWhateverOrderTheDriverHoldsThemIn) {
  Registry reg;
  reg.add_next_level(WorkerId(4), WorkerKind::kLocalChip);
  reg.add_next_level(WorkerId(2), WorkerKind::kLocalChip);
  reg.set_sub_workers(1);
  const CallableId k = reg.add_callable({"k", Namespace::kLocalChip, std::nullopt});
  const CallableId py = reg.add_callable({"py", Namespace::kLocalPython, std::nullopt});
  EventTrace trace;
  Scheduler core(std::move(reg), with_switch(true), &trace);
  core.submit_sub("s", py, {});
  core.submit_next_level("a", k, {}, WorkerId(2));
  core.submit_next_level("b", k, {}, WorkerId(4));
  const std::vector<Dispatch> ds = core.iterate();
  ASSERT_EQ(ds.size(), 3u);  // b@4 and a@2 by the singles pass, then s@sub0
  std::vector<MemberEnd> ends;
  for (const Dispatch& d : ds) ends.push_back({d.seq, d.task, d.member, Outcome::kSuccess});
  std::swap(ends[0], ends[2]);  // s, a, b: SUB first
  core.report_instant(ends);
  EXPECT_TRUE(ends.empty());
  core.iterate();
  V got;
  for (const std::string& l : trace.lines)
    if (l.rfind("member_end ", 0) == 0) got.push_back(l);
  // Worker 4 was registered first, then 2; SUB last.
  EXPECT_EQ(got, (V{"member_end b[0]@4 success", "member_end a[0]@2 success", "member_end s[0]@sub0 success"}));
}

}  // namespace
}  // namespace dirsched::testing
