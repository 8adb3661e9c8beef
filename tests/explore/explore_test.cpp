// dirsched explore on small scenarios whose interleavings can be counted by hand.
#include "dirsched/explore.hpp"

#include <gtest/gtest.h>

#include <pthread.h>

#include <set>

namespace dirsched {
namespace {

using nlohmann::json;

Scenario load(const std::string& trace, const std::string& extra_workers = "") {
  json doc = json::parse(
      R"({"name":"t","workers":{"next_level":[{"id":0,"kind":"local_chip"},{"id":1,"kind":"local_chip"})" +
      extra_workers + R"(],"sub":1},
    "callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":1},"p":{"namespace":"LOCAL_PYTHON","duration_s":1}},
    "buffers":{"x":{"bytes":0}},"trace":)" +
      trace + "}");
  return parse_scenario(doc, "t.json", ".");
}

TEST(Explore, TwoIndependentSinglesHaveOneOutcomeAndEveryOrderMerges) {
  Scenario s = load(R"([{"op":"submit_next_level","task":"a","callable":"k","worker":0},
                        {"op":"submit_next_level","task":"b","callable":"k","worker":1},{"op":"drain"}])");
  ExploreOptions full;
  full.por = false;
  auto r = explore(s, full);
  EXPECT_EQ(r["terminal_outcomes"], 1);
  EXPECT_FALSE(r["stopped_early"].get<bool>());
  EXPECT_TRUE(r["violations"].empty());
  // (op, a, b): 0--, 1R-, 2RR, 1C-, 2CR (reached twice, merged), 2RC, 2CC, 3CC after the drain.
  EXPECT_EQ(r["states"], 8);
}

TEST(ExplorePor, TwoIndependentSinglesNeedOneOrderOfTheirEnds) {
  Scenario s = load(R"([{"op":"submit_next_level","task":"a","callable":"k","worker":0},
                        {"op":"submit_next_level","task":"b","callable":"k","worker":1},{"op":"drain"}])");
  auto r = explore(s, {});
  EXPECT_TRUE(r["por"].get<bool>());
  EXPECT_EQ(r["terminal_outcomes"], 1);
  // a is local as soon as it runs (nothing reads its outputs, no group waits on chip 0), so only its
  // end is explored there: 0--, 1R-, 1C-, 2CR, 2CC, 3CC.
  EXPECT_EQ(r["states"], 6);
}

// The results POR must keep, without the witnesses (which may pick another equivalent order).
json essentials(const nlohmann::ordered_json& r) {
  json out;
  out["stopped_early"] = r["stopped_early"].get<bool>();
  out["terminal_outcomes"] = r["terminal_outcomes"].get<std::size_t>();
  out["outcomes"] = json::parse(r["outcomes"].dump());
  json stuck = json::array();
  for (const auto& st : r["stuck"])
    stuck.push_back(st["task"].get<std::string>() + " " + st["state"].get<std::string>() + " " +
                    st["reason"].get<std::string>());
  out["stuck"] = stuck;
  json rules = json::array();
  for (const auto& v : r["violations"]) rules.push_back(v["rule"].get<std::string>());
  out["violations"] = rules;
  json groups = json::object();
  for (auto it = r["groups"].begin(); it != r["groups"].end(); ++it)
    groups[it.key()] = {it.value()["max_overtakes"].get<int>(), it.value()["min_overtakes"].get<int>()};
  out["groups"] = groups;
  return out;
}

void expect_por_matches_full(const Scenario& s, bool failures) {
  ExploreOptions por, full;
  por.failures = full.failures = failures;
  full.por = false;
  const auto a = explore(s, por);
  const auto b = explore(s, full);
  ASSERT_FALSE(b["stopped_early"].get<bool>()) << s.name;
  EXPECT_EQ(essentials(a).dump(), essentials(b).dump()) << s.name << (failures ? " with failures" : "");
  EXPECT_LE(a["states"].get<std::size_t>(), b["states"].get<std::size_t>()) << s.name;
}

TEST(ExplorePor, KeepsOutcomesStuckViolationsAndOvertakesOfTheFullSearchOnRandomDags) {
  for (int seed = 1; seed <= 12; ++seed) {
    json doc =
        json::parse(R"({"name":"random-)" + std::to_string(seed) + R"(","seed":)" + std::to_string(seed) +
                    R"(,"generate":{"family":"random","tasks":7,"workers":3,"edges":1,
                               "group_fraction":0.35,"duration_s":1}})");
    const Scenario s = parse_scenario(doc, "r.json", ".");
    expect_por_matches_full(s, false);
    expect_por_matches_full(s, true);
  }
}

TEST(ExplorePor, KeepsResultsWithGroupsWaitingSubTasksDrainsAndStuckWork) {
  // Independent singles (a failure before the next submit unwinds it), a group that waits on a busy chip
  // while singles may overtake it, SUB work (one fits, one is stuck for want of workers), a drain in the
  // middle and a consumer of a group's output.
  const std::vector<std::string> traces = {
      R"([{"op":"submit_next_level","task":"a","callable":"k","worker":0},
          {"op":"submit_next_level","task":"b","callable":"k","worker":1},
          {"op":"submit_next_level","task":"c","callable":"k","worker":2},{"op":"drain"}])",
      R"([{"op":"submit_next_level","task":"s1","callable":"k","worker":1},
          {"op":"submit_next_level_group","task":"g","callable":"k","workers":[0,1],"args_list":[[],[{"buffer":"x","tag":"OUTPUT"}]]},
          {"op":"submit_next_level","task":"s0a","callable":"k","worker":0},
          {"op":"submit_next_level","task":"c","callable":"k","worker":2,"args":[{"buffer":"x","tag":"INPUT"}]},
          {"op":"submit_next_level","task":"s0b","callable":"k","worker":0},{"op":"drain"}])",
      R"([{"op":"submit_next_level","task":"a","callable":"k","worker":0},
          {"op":"submit_sub","task":"u","callable":"p"},
          {"op":"submit_next_level","task":"b","callable":"k","worker":1},{"op":"drain"},
          {"op":"submit_sub_group","task":"sg","callable":"p","args_list":[[],[]]},
          {"op":"submit_next_level","task":"d","callable":"k","worker":2},{"op":"drain"},
          {"op":"submit_next_level","task":"after","callable":"k","worker":0}])",
      R"([{"op":"submit_next_level","task":"p","callable":"k","worker":0,"args":[{"buffer":"x","tag":"OUTPUT"}]},
          {"op":"submit_next_level","task":"q","callable":"k","worker":1},
          {"op":"submit_next_level","task":"r","callable":"k","worker":2},
          {"op":"submit_next_level_group","task":"h","callable":"k","workers":[1,2],"args_list":[[{"buffer":"x","tag":"INPUT"}],[]]},
          {"op":"submit_next_level","task":"t","callable":"k","worker":2},{"op":"drain"}])"};
  for (const std::string& t : traces) {
    const Scenario s = load(t, R"(,{"id":2,"kind":"local_chip"})");
    expect_por_matches_full(s, false);
    expect_por_matches_full(s, true);
  }
}

TEST(ExplorePor, KeepsResultsWhenAnEndPromotesTheNextRunUnderWholeRunFifo) {
  // whole_run_fifo (L5): a's end ends r1 and promotes r2, whose parked tasks then dispatch group first
  // (g before s, an order no other path reaches), so a's end does not commute with r2's submits and the
  // reduction must explore both. (The quantities explore reports happen to agree here even without L5:
  // s ending before g's submit also gives 0 overtakes; this pins that they agree with L5, and that both
  // counts are reached.)
  json doc = json::parse(R"({"name":"promotion","scheduler":{"policy":"seed","switches":{"whole_run_fifo":true}},
    "workers":{"next_level":[{"id":0,"kind":"local_chip"},{"id":1,"kind":"local_chip"},{"id":2,"kind":"local_chip"}]},
    "callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":1}},
    "trace":[{"op":"run","run":"r1","ops":[{"op":"submit_next_level","task":"a","callable":"k","worker":0}]},
             {"op":"run","run":"r2","ops":[{"op":"submit_next_level","task":"s","callable":"k","worker":1},
               {"op":"submit_next_level_group","task":"g","callable":"k","workers":[1,2],"args_list":[[],[]]},
               {"op":"submit_next_level","task":"s2","callable":"k","worker":2}]},
             {"op":"drain"}]})");
  const Scenario s = parse_scenario(doc, "p.json", ".");
  ExploreOptions por;
  const auto r = explore(s, por);
  EXPECT_EQ(r["groups"]["g"]["min_overtakes"], 0) << r.dump();
  EXPECT_EQ(r["groups"]["g"]["max_overtakes"], 1) << r.dump();
  expect_por_matches_full(s, false);
}

TEST(ExplorePor, KeepsResultsUnderStagingAndTheMpiLane) {
  // staging (#1583): an end of the active run that does not end it changes nothing the staging pass reads
  // (the preparable run's own READY singles and frames); an end that ends it promotes, which L5 keeps.
  // mpi_group_lane changes only when a member starts and ends, which the explorer does not model: every
  // order of ends is explored (the lane's among them). Both searches must agree on the shipped files and
  // on a staging file with more concurrency (independent work in both runs, a group in the second).
  // fail-fast.json under current: an end that hands a worker its queued single races the fail-fast
  // raise that cancels it (L6).
  for (const char* name : {"ladder-staging.json", "ladder-mpi-group-lane.json", "fail-fast.json"}) {
    PolicyChoice current;
    current.policy = "current";
    const Scenario s = load_scenario(std::string(DIRSCHED_SOURCE_DIR "/scenarios/") + name, {}, TraceRead::kFull, current);
    expect_por_matches_full(s, false);
    expect_por_matches_full(s, true);
  }
  json doc = json::parse(R"({"name":"staging-por","scheduler":{"policy":"upto:1583"},
    "workers":{"next_level":[{"id":0,"kind":"local_chip","frames":2},{"id":1,"kind":"local_chip","frames":2},
                             {"id":2,"kind":"local_chip"}]},
    "callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":1}},
    "trace":[{"op":"run","run":"r1","ops":[{"op":"submit_next_level","task":"a","callable":"k","worker":0},
               {"op":"submit_next_level","task":"b","callable":"k","worker":2}]},
             {"op":"run","run":"r2","ops":[{"op":"submit_next_level","task":"c","callable":"k","worker":1},
               {"op":"submit_next_level_group","task":"g","callable":"k","workers":[0,2],"args_list":[[],[]]},
               {"op":"submit_next_level","task":"e","callable":"k","worker":0}]},
             {"op":"run","run":"r3","ops":[{"op":"submit_next_level","task":"f","callable":"k","worker":1}]},
             {"op":"drain"}]})");
  const Scenario s = parse_scenario(doc, "staging-por.json", ".");
  expect_por_matches_full(s, false);
  expect_por_matches_full(s, true);
}

TEST(ExplorePor, KeepsResultsWhenTheFilePinsFailures) {
  // Members the file marks `fail: true` fail on every path, with and without --failures: a failing
  // producer racing a later submit (fail-fast), a group whose first member fails while the other runs,
  // and a failing single beside independent work.
  const std::vector<std::string> traces = {
      R"([{"op":"submit_next_level","task":"a","callable":"k","worker":0,"fail":true,"args":[{"buffer":"x","tag":"OUTPUT"}]},
          {"op":"submit_next_level","task":"b","callable":"k","worker":1,"args":[{"buffer":"x","tag":"INPUT"}]},
          {"op":"submit_next_level","task":"c","callable":"k","worker":2},{"op":"drain"}])",
      R"([{"op":"submit_next_level_group","task":"g","callable":"k","workers":[0,1],"fail":[true,false],"args_list":[[{"buffer":"x","tag":"OUTPUT"}],[]]},
          {"op":"submit_next_level","task":"s","callable":"k","worker":2},
          {"op":"submit_next_level","task":"c","callable":"k","worker":2,"args":[{"buffer":"x","tag":"INPUT"}]},{"op":"drain"}])",
      R"([{"op":"submit_next_level","task":"p","callable":"k","worker":0},
          {"op":"submit_next_level","task":"q","callable":"k","worker":1,"fail":true},
          {"op":"submit_next_level","task":"r","callable":"k","worker":2,"fail":true},
          {"op":"submit_next_level","task":"t","callable":"k","worker":0},{"op":"drain"}])"};
  for (const std::string& t : traces) {
    const Scenario s = load(t, R"(,{"id":2,"kind":"local_chip"})");
    expect_por_matches_full(s, false);
    expect_por_matches_full(s, true);
  }
}

TEST(Explore, MemberTheFileMarksFailingFailsOnEveryPath) {
  // As in a run: c completes, a fails, and b (a's consumer) is POISONED or, when a fails before b's
  // submit, NOT_SUBMITTED.
  Scenario s = load(
      R"([{"op":"submit_next_level","task":"c","callable":"k","worker":1},
    {"op":"submit_next_level","task":"a","callable":"k","worker":0,"fail":true,"args":[{"buffer":"x","tag":"OUTPUT"}]},
    {"op":"submit_next_level","task":"b","callable":"k","worker":1,"args":[{"buffer":"x","tag":"INPUT"}]},{"op":"drain"}])");
  auto r = explore(s, {});
  EXPECT_EQ(r["terminal_outcomes"], 2);
  std::set<std::string> b_states;
  for (const auto& outcome : r["outcomes"]) {
    EXPECT_EQ(outcome["c"], "COMPLETED") << outcome.dump();
    EXPECT_EQ(outcome["a"], "FAILED") << outcome.dump();
    b_states.insert(outcome["b"].get<std::string>());
  }
  EXPECT_EQ(b_states, (std::set<std::string>{"NOT_SUBMITTED", "POISONED"}));
  // --failures adds c's failure, never a's success: c fails before a's submit (a and b NOT_SUBMITTED),
  // or a runs and fails with c COMPLETED or FAILED and b POISONED or NOT_SUBMITTED (4).
  ExploreOptions o;
  o.failures = true;
  r = explore(s, o);
  EXPECT_EQ(r["terminal_outcomes"], 5);
  for (const auto& outcome : r["outcomes"]) EXPECT_NE(outcome["a"], "COMPLETED") << outcome.dump();
}

TEST(ExplorePor, TwelveTaskScenarioKeepsItsResultsWithFewerStates) {
  const Scenario s = load_scenario(DIRSCHED_SOURCE_DIR "/scenarios/explore-twelve-tasks.json");
  ExploreOptions por, full;
  full.por = false;
  const auto a = explore(s, por), b = explore(s, full);
  EXPECT_EQ(essentials(a).dump(), essentials(b).dump());
  EXPECT_LT(a["states"].get<std::size_t>(), b["states"].get<std::size_t>());
}

TEST(Explore, GroupOvertakesRangeFromNoneToEverySingleBehindIt) {
  // g waits for chip 1 (busy with s1); s0a and s0b on chip 0 can overtake it only while it waits.
  Scenario s = load(R"([{"op":"submit_next_level","task":"s1","callable":"k","worker":1},
    {"op":"submit_next_level_group","task":"g","callable":"k","workers":[0,1],"args_list":[[],[]]},
    {"op":"submit_next_level","task":"s0a","callable":"k","worker":0},
    {"op":"submit_next_level","task":"s0b","callable":"k","worker":0},{"op":"drain"}])");
  auto r = explore(s, {});
  ASSERT_TRUE(r["groups"].contains("g"));
  EXPECT_EQ(r["groups"]["g"]["max_overtakes"], 2);
  EXPECT_EQ(r["groups"]["g"]["min_overtakes"], 0);
  const auto witness = r["groups"]["g"]["witness"];
  EXPECT_FALSE(witness.empty());
  EXPECT_EQ(witness.back(), "op trace[4]");  // the drain ends every path
}

TEST(Explore, GroupWithIdleTargetsIsNeverOvertaken) {
  Scenario s =
      load(R"([{"op":"submit_next_level_group","task":"g","callable":"k","workers":[0,1],"args_list":[[],[]]},
    {"op":"submit_next_level","task":"s","callable":"k","worker":0},{"op":"drain"}])");
  auto r = explore(s, {});
  EXPECT_EQ(r["groups"]["g"]["max_overtakes"], 0);
}

TEST(Explore, FailuresAddOutcomesAndPoisoning) {
  Scenario s = load(
      R"([{"op":"submit_next_level","task":"a","callable":"k","worker":0,"args":[{"buffer":"x","tag":"OUTPUT"}]},
    {"op":"submit_next_level","task":"b","callable":"k","worker":1,"args":[{"buffer":"x","tag":"INPUT"}]},{"op":"drain"}])");
  ExploreOptions o;
  EXPECT_EQ(explore(s, o)["terminal_outcomes"], 1);
  o.failures = true;
  auto r = explore(s, o);
  // Both complete; a fails after b's submit (b POISONED) or before it (fail-fast: b NOT_SUBMITTED); b fails.
  EXPECT_EQ(r["terminal_outcomes"], 4);
  bool poisoned = false;
  for (const auto& outcome : r["outcomes"]) poisoned |= outcome["b"] == "POISONED";
  EXPECT_TRUE(poisoned);
}

TEST(Explore, OneMemberGroupIsASingleThatCanOvertakeAndIsNoGroup) {
  // "one" is a group of one member on chip 1: a single, so it may take chip 1 while head waits for 0.
  Scenario s = load(R"([{"op":"submit_next_level","task":"busy","callable":"k","worker":0},
    {"op":"submit_next_level_group","task":"head","callable":"k","workers":[0,1],"args_list":[[],[]]},
    {"op":"submit_next_level_group","task":"one","callable":"k","workers":[1],"args_list":[[]]},{"op":"drain"}])");
  auto r = explore(s, {});
  EXPECT_TRUE(r["violations"].empty());
  EXPECT_FALSE(r["groups"].contains("one"));
  ASSERT_TRUE(r["groups"].contains("head"));
  EXPECT_EQ(r["groups"]["head"]["max_overtakes"], 1);
}

TEST(Explore, InvalidSubmitAfterAFailureIsRejectedOnEveryPath) {
  Scenario s = load(R"([{"op":"submit_next_level","task":"a","callable":"k","worker":0},
    {"op":"submit_next_level","task":"bad","callable":"k","worker":-1},
    {"op":"submit_next_level","task":"c","callable":"k","worker":1},{"op":"drain"}])");
  ExploreOptions o;
  o.failures = true;
  auto r = explore(s, o);
  bool c_not_submitted = false;
  for (const auto& outcome : r["outcomes"]) {
    EXPECT_EQ(outcome["bad"], "REJECTED") << outcome.dump();
    c_not_submitted |= outcome["c"] == "NOT_SUBMITTED";
  }
  EXPECT_TRUE(c_not_submitted);  // a failed before c's submit on some path
}

TEST(Explore, StuckTaskIsReportedWithAWitness) {
  Scenario s =
      load(R"([{"op":"submit_sub_group","task":"sg","callable":"p","args_list":[[],[]]},{"op":"drain"},
    {"op":"submit_next_level","task":"after","callable":"k","worker":0}])");
  auto r = explore(s, {});
  ASSERT_EQ(r["stuck"].size(), 1u);
  EXPECT_EQ(r["stuck"][0]["task"], "sg");
  EXPECT_NE(r["stuck"][0]["reason"].get<std::string>().find("needs 2 SUB workers"), std::string::npos);
  EXPECT_FALSE(r["stuck"][0]["witness"].empty());
  EXPECT_EQ(r["outcomes"][0]["after"], "NOT_SUBMITTED");
}

TEST(Explore, StopsEarlyPastMaxStatesAndSaysSo) {
  Scenario s = load(R"([{"op":"submit_next_level","task":"a","callable":"k","worker":0},
    {"op":"submit_next_level","task":"b","callable":"k","worker":1},{"op":"drain"}])");
  ExploreOptions o;
  o.max_states = 3;
  auto r = explore(s, o);
  EXPECT_TRUE(r["stopped_early"].get<bool>());
  EXPECT_TRUE(r.contains("note"));
}

enum class Policy { kSeed, kHeadReservation };
Scenario with_policy(Scenario s, Policy p) {
  s.policy = p == Policy::kSeed ? "seed" : "head_reservation";
  s.switches = *preset(s.policy);
  return s;
}

// s1 keeps chip 1 busy for as long as the explorer likes; g on chips 0 and 1 is READY behind it;
// s0a and s0b on chip 0 come after g. Worked by hand:
// seed: each of s0a, s0b can run on the idle chip 0 while g waits (max 2), or s1 may end before g
//   is submitted, g launches at once and both queue behind it (min 0). g can be the blocked head.
// head_reservation: while g is the blocked head chip 0 is reserved, so neither single can overtake
//   (max 0, min 0); g stalls when s0a is queued on the reserved, idle chip 0.
const char* kOvertakeTrace = R"([{"op":"submit_next_level","task":"s1","callable":"k","worker":1},
    {"op":"submit_next_level_group","task":"g","callable":"k","workers":[0,1],"args_list":[[],[]]},
    {"op":"submit_next_level","task":"s0a","callable":"k","worker":0},
    {"op":"submit_next_level","task":"s0b","callable":"k","worker":0},{"op":"drain"}])";

TEST(ExplorePolicies, SeedLetsBothSinglesOvertakeTheBlockedHead) {
  auto r = explore(with_policy(load(kOvertakeTrace), Policy::kSeed), {});
  EXPECT_EQ(r["policy"], "seed");
  EXPECT_EQ(r["groups"]["g"]["max_overtakes"], 2);
  EXPECT_EQ(r["groups"]["g"]["min_overtakes"], 0);
  EXPECT_TRUE(r["groups"]["g"]["can_stall"].get<bool>());
  EXPECT_TRUE(r["violations"].empty());
}

TEST(ExplorePolicies, HeadReservationLetsNoSingleOvertakeTheBlockedHead) {
  auto r = explore(with_policy(load(kOvertakeTrace), Policy::kHeadReservation), {});
  EXPECT_EQ(r["policy"], "head_reservation");
  EXPECT_EQ(r["groups"]["g"]["max_overtakes"], 0);
  EXPECT_EQ(r["groups"]["g"]["min_overtakes"], 0);
  EXPECT_TRUE(r["groups"]["g"]["can_stall"].get<bool>());
  EXPECT_TRUE(r["violations"].empty());
}

// g1 on chips 0,1 waits behind s1; g2 on chips 1,2 is behind g1; s2 on chip 2 comes last. Under
// head_reservation g2, not being the head, reserves nothing while g1 is blocked: s2 can overtake it
// once (max 1), or s1 ends first and g2, now the head, holds chip 2 (min 0). g1 is never overtaken.
TEST(ExplorePolicies, GroupBehindTheHeadCanStillBeOvertakenUnderHeadReservation) {
  const char* trace = R"([{"op":"submit_next_level","task":"s1","callable":"k","worker":1},
    {"op":"submit_next_level_group","task":"g1","callable":"k","workers":[0,1],"args_list":[[],[]]},
    {"op":"submit_next_level_group","task":"g2","callable":"k","workers":[1,2],"args_list":[[],[]]},
    {"op":"submit_next_level","task":"s2","callable":"k","worker":2},{"op":"drain"}])";
  auto r =
      explore(with_policy(load(trace, R"(,{"id":2,"kind":"local_chip"})"), Policy::kHeadReservation), {});
  EXPECT_EQ(r["groups"]["g1"]["max_overtakes"], 0);
  EXPECT_EQ(r["groups"]["g2"]["max_overtakes"], 1);
  EXPECT_EQ(r["groups"]["g2"]["min_overtakes"], 0);
  EXPECT_TRUE(r["groups"]["g2"]["can_stall"].get<bool>());
  EXPECT_FALSE(r["groups"]["g1"]["can_stall"].get<bool>());  // nothing is ever queued on chip 0
  EXPECT_TRUE(r["violations"].empty());
}

TEST(ExplorePolicies, BlockedHeadWithNothingQueuedStallsOnlyUnderSeed) {
  const char* trace = R"([{"op":"submit_next_level","task":"s1","callable":"k","worker":1},
    {"op":"submit_next_level_group","task":"g","callable":"k","workers":[0,1],"args_list":[[],[]]},
    {"op":"drain"}])";
  EXPECT_TRUE(explore(with_policy(load(trace), Policy::kSeed), {})["groups"]["g"]["can_stall"].get<bool>());
  EXPECT_FALSE(explore(with_policy(load(trace), Policy::kHeadReservation), {})["groups"]["g"]["can_stall"]
                   .get<bool>());
}

// A scenario whose every state holds a large core: 2000 independent singles on two chips. Under a
// small memory bound the exploration stops early with what it has, as under max_states.
TEST(Explore, StopsAtMaxMemoryWithAPartialResultAndSaysSo) {
  std::string trace = "[";
  for (int i = 0; i < 2000; ++i)
    trace += std::string(i ? "," : "") + R"({"op":"submit_next_level","task":"t)" + std::to_string(i) +
             R"(","callable":"k","worker":)" + std::to_string(i % 2) + "}";
  trace += R"(,{"op":"drain"}])";
  const Scenario s = load(trace);
  ExploreOptions o;
  o.por = false;  // every ordering: the depth-first path grows to thousands of states
  o.max_states = 1000000;
  o.max_memory = std::size_t{48} << 20;
  auto r = explore(s, o);
  EXPECT_TRUE(r["stopped_early"].get<bool>());
  EXPECT_NE(r["note"].get<std::string>().find("stopped at max_memory=50331648 bytes"), std::string::npos)
      << r["note"];
  EXPECT_LT(r["states"].get<std::size_t>(), 1000000u);
  EXPECT_GT(r["states"].get<std::size_t>(), 0u);
  EXPECT_TRUE(r["violations"].empty());
  // The same search under an ample bound and a small max_states stops for max_states instead.
  o.max_memory = std::size_t{8} << 30;
  o.max_states = 10;
  auto small = explore(s, o);
  EXPECT_NE(small["note"].get<std::string>().find("stopped after max_states=10"), std::string::npos);
}

// The bound holds in the set-up too: a generate block of 100,000 tasks (about 100 MB once built) under
// a bound 16 MiB above what the process holds stops while its trace is built, with no state explored.
TEST(Explore, StopsAtMaxMemoryDuringTheSetUpWithNoState) {
  const Scenario s = parse_scenario(
      json::parse(R"({"name":"big","generate":{"family":"random","tasks":100000,"workers":16,"group_fraction":0.2}})"),
      "big.json", ".");
  ExploreOptions o;
  o.max_memory = heap_in_use() + (std::size_t{16} << 20);
  const auto r = explore(s, o);
  EXPECT_TRUE(r["stopped_early"].get<bool>());
  EXPECT_EQ(r["states"].get<std::size_t>(), 0u);
  const std::string note = r["note"].get<std::string>();
  EXPECT_NE(note.find("during the set-up (building the trace, "), std::string::npos) << note;
  EXPECT_NE(note.find("of 100001 ops), before the first state: the heap in use was "), std::string::npos) << note;
  EXPECT_LT(heap_in_use(), o.max_memory);  // what the set-up held is given back
}

}  // namespace
}  // namespace dirsched

namespace dirsched {
namespace {

// Runs explore() on a thread whose stack is `stack_bytes` (so the test does not depend on ulimit -s).
nlohmann::ordered_json explore_on_small_stack(const Scenario& s, const ExploreOptions& o, std::size_t stack_bytes) {
  struct Job {
    const Scenario* s;
    const ExploreOptions* o;
    nlohmann::ordered_json out;
  } job{&s, &o, {}};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  pthread_t thread;
  const int rc = pthread_create(
      &thread, &attr,
      [](void* p) -> void* {
        auto* j = static_cast<Job*>(p);
        j->out = explore(*j->s, *j->o);
        return nullptr;
      },
      &job);
  pthread_attr_destroy(&attr);
  if (rc != 0) ADD_FAILURE() << "pthread_create: " << rc;
  else pthread_join(thread, nullptr);
  return job.out;
}

// The search keeps its path on the heap, not the C stack: a path of 8,001 steps (4,000 singles on two
// chips, each local as soon as it runs, so one order: submit, end, submit, end...) is explored to its
// end on a 1 MiB thread stack. The recursive search stopped after 358 states there ("a deeper path
// would overflow the stack"), and at about 13,000 on the usual 8 MiB.
TEST(Explore, PathOfThousandsOfStepsNeedsNoStackPerStep) {
  constexpr int kTasks = 4000;
  std::string trace = "[";
  for (int i = 0; i < kTasks; ++i)
    trace += std::string(i ? "," : "") + R"({"op":"submit_next_level","task":"t)" + std::to_string(i) +
             R"(","callable":"k","worker":)" + std::to_string(i % 2) + "}";
  trace += R"(,{"op":"drain"}])";
  const Scenario s = load(trace);
  const auto r = explore_on_small_stack(s, {}, std::size_t{1} << 20);
  ASSERT_TRUE(r.contains("stopped_early")) << r.dump();
  EXPECT_FALSE(r["stopped_early"].get<bool>()) << r.value("note", "");
  EXPECT_EQ(r["states"].get<std::size_t>(), 2u * kTasks + 2);  // each submit, each end, the drain
  EXPECT_EQ(r["terminal_outcomes"].get<std::size_t>(), 1u);
  EXPECT_TRUE(r["violations"].empty());
}

}  // namespace
}  // namespace dirsched
