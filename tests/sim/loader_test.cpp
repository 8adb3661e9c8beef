// The scenario loader: every malformed input names the JSON path; contract-breaking worker ids load.
#include <gtest/gtest.h>

#include <sstream>

#include "dirsched/generate.hpp"
#include "dirsched/scenario.hpp"

namespace dirsched {
namespace {

using nlohmann::json;

json base() {
  return json::parse(R"({
    "name": "t",
    "workers": { "next_level": [ { "id": 0, "kind": "local_chip" }, { "id": 7, "kind": "remote" } ], "sub": 1 },
    "callables": { "k": { "namespace": "LOCAL_CHIP", "duration_s": 1 } },
    "buffers": { "x": { "bytes": 8 } },
    "trace": [ { "op": "submit_next_level", "task": "a", "callable": "k", "worker": 0 } ]
  })");
}

std::string error_path(const json& doc) {
  try {
    parse_scenario(doc, "f.json", ".");
  } catch (const ScenarioError& e) {
    return e.path();
  }
  return "(loaded)";
}

TEST(ScenarioLoader, LoadsAWellFormedFile) {
  Scenario s = parse_scenario(base(), "f.json", ".");
  EXPECT_EQ(s.name, "t");
  ASSERT_EQ(s.trace.size(), 1u);
  EXPECT_EQ(s.next_level[1].host, "remote7");
  EXPECT_EQ(s.sub_hosts, std::vector<std::string>{"host0"});
}

TEST(ScenarioLoader, UnknownKeysNameTheirPath) {
  json d = base();
  d["trace"][0]["wroker"] = 1;
  EXPECT_EQ(error_path(d), "trace[0].wroker");
  d = base();
  d["colour"] = "red";
  EXPECT_EQ(error_path(d), "colour");
}

TEST(ScenarioLoader, SchedulerPolicyKeysReachTheCoreOptions) {
  Scenario s = parse_scenario(base(), "f.json", ".");
  EXPECT_EQ(s.policy, Policy::kSeed);
  EXPECT_EQ(s.stall_report_s, 5.0);
  EXPECT_TRUE(s.fail_fast);
  json d = base();
  d["scheduler"] = {{"policy", "head_reservation"}, {"stall_report_s", 0.25}, {"fail_fast", false}};
  const Scheduler::Options o = scheduler_options(parse_scenario(d, "f.json", "."));
  EXPECT_EQ(o.policy, Policy::kHeadReservation);
  EXPECT_EQ(o.stall_report_s, 0.25);
  EXPECT_FALSE(o.fail_fast);
}

TEST(ScenarioLoader, BadSchedulerPolicyKeysNameTheirPath) {
  json d = base();
  d["scheduler"] = {{"policy", "reserve"}};
  EXPECT_EQ(error_path(d), "scheduler.policy");
  d["scheduler"] = {{"policy", 1}};
  EXPECT_EQ(error_path(d), "scheduler.policy");
  d["scheduler"] = {{"stall_report_s", 0}};
  EXPECT_EQ(error_path(d), "scheduler.stall_report_s");
  d["scheduler"] = {{"fail_fast", "no"}};
  EXPECT_EQ(error_path(d), "scheduler.fail_fast");
}

TEST(ScenarioLoader, PolicyMayBeASweepVariable) {
  json d = base();
  d["scheduler"] = {{"policy", "$p"}};
  d["vars"] = {{"p", {"seed", "head_reservation"}}};
  EXPECT_EQ(parse_scenario(d, "f.json", ".").policy, Policy::kSeed);
  EXPECT_EQ(parse_scenario(d, "f.json", ".", {{"p", "head_reservation"}}).policy, Policy::kHeadReservation);
  EXPECT_EQ(error_path([&] {
              json e = d;
              e["vars"]["p"] = {"fifo"};
              return e;
            }()),
            "scheduler.policy");
}

TEST(ScenarioLoader, UnknownNamesAreErrors) {
  json d = base();
  d["trace"][0]["callable"] = "nope";
  EXPECT_EQ(error_path(d), "trace[0].callable");
  d = base();
  d["trace"][0]["args"] = json::parse(R"([{"buffer":"y","tag":"INPUT"}])");
  EXPECT_EQ(error_path(d), "trace[0].args[0].buffer");
  d = base();
  d["trace"][0]["args"] = json::parse(R"([{"buffer":"x","tag":"READ"}])");
  EXPECT_EQ(error_path(d), "trace[0].args[0].tag");
  d = base();
  d["trace"][0]["op"] = "submit_everything";
  EXPECT_EQ(error_path(d), "trace[0].op");
}

TEST(ScenarioLoader, DuplicatesAreErrors) {
  json d = base();
  d["trace"].push_back(d["trace"][0]);
  EXPECT_EQ(error_path(d), "trace[1].task");
  d = base();
  d["workers"]["next_level"][1]["id"] = 0;
  EXPECT_EQ(error_path(d), "workers.next_level[1].id");
}

TEST(ScenarioLoader, WrongTypesAndNegativeCostsAreErrors) {
  json d = base();
  d["callables"]["k"]["duration_s"] = -1;
  EXPECT_EQ(error_path(d), "callables.k.duration_s");
  d = base();
  d["callables"]["k"]["duration_s"] = "1";
  EXPECT_EQ(error_path(d), "callables.k.duration_s");
  d = base();
  d["trace"][0]["fail"] = "yes";
  EXPECT_EQ(error_path(d), "trace[0].fail");
}

TEST(ScenarioLoader, PerMemberListsMustHaveTheMemberCount) {
  json d = base();
  d["trace"][0] = json::parse(
      R"({"op":"submit_next_level_group","task":"g","callable":"k","workers":[0],"args_list":[[]],"fail":[true,false]})");
  EXPECT_EQ(error_path(d), "trace[0].fail");
}

TEST(ScenarioLoader, MissingPlatformFileIsAnError) {
  json d = base();
  d["platform"] = "no-such-platform.xml";
  EXPECT_EQ(error_path(d), "platform");
}

TEST(ScenarioLoader, ContractBreakingWorkerIdsLoadAsValuesForTheCore) {
  for (const char* v : {"true", "1.0", "\"1\"", "null", "-1", "99"}) {
    json d = base();
    d["trace"][0]["worker"] = json::parse(v);
    Scenario s = parse_scenario(d, "f.json", ".");
    ASSERT_TRUE(s.trace[0].worker.has_value()) << v;
    const bool integer = std::string(v) == "-1" || std::string(v) == "99";
    EXPECT_EQ(s.trace[0].worker->is_integer(), integer) << v;
  }
}

TEST(ScenarioLoader, WorkerIdsBeyondTheIdTypeLoadAsIntegersThatAreNotWrapped) {
  for (const char* v : {"9223372036854775808", "18446744073709551615"}) {
    json d = base();
    d["trace"][0]["worker"] = json::parse(v);
    Scenario s = parse_scenario(d, "f.json", ".");
    ASSERT_TRUE(s.trace[0].worker.has_value()) << v;
    EXPECT_TRUE(s.trace[0].worker->is_integer()) << v;
    EXPECT_FALSE(s.trace[0].worker->in_range()) << v;
    EXPECT_FALSE(s.trace[0].worker->is_negative()) << v;
    EXPECT_EQ(s.trace[0].worker->text(), v);
  }
  json d = base();
  d["trace"][0]["worker"] = json::parse("9223372036854775807");
  EXPECT_TRUE(parse_scenario(d, "f.json", ".").trace[0].worker->in_range());
}

TEST(ScenarioLoader, RegisteredWorkerIdBeyondTheIdTypeIsAnError) {
  json d = base();
  d["workers"]["next_level"][1]["id"] = json::parse("9223372036854775808");
  EXPECT_EQ(error_path(d), "workers.next_level[1].id");
}

TEST(ScenarioLoader, ExpectOrderTakesPairsOfDispatchLabelsOfKnownTasks) {
  json d = base();
  d["trace"].push_back(json::parse(R"({"op":"submit_next_level","task":"b","callable":"k","worker":0})"));
  d["expect"] = json::parse(R"({"order":[["a@0","b@0"],["a[0]@0","b@sub0"]]})");
  EXPECT_EQ(error_path(d), "(loaded)");
  d["expect"] = json::parse(R"({"order":[["a@0","b@0"],["a@0"]]})");
  EXPECT_EQ(error_path(d), "expect.order[1]");
  d["expect"] = json::parse(R"({"order":[["a@0","nope@0"]]})");
  EXPECT_EQ(error_path(d), "expect.order[0][1]");
  d["expect"] = json::parse(R"({"order":[["a","b@0"]]})");
  EXPECT_EQ(error_path(d), "expect.order[0][0]");
  d["expect"] = json::parse(R"({"order":{"a@0":"b@0"}})");
  EXPECT_EQ(error_path(d), "expect.order");
}

TEST(ScenarioLoader, ExpectFinalStateNamesReadyAndPendingButNeverRunning) {
  json d = base();
  for (const char* st : {"READY", "PENDING", "COMPLETED", "NOT_SUBMITTED"}) {
    d["expect"] = json{{"final_state", {{"a", st}}}};
    EXPECT_EQ(error_path(d), "(loaded)") << st;
  }
  d["expect"] = json{{"final_state", {{"a", "RUNNING"}}}};
  EXPECT_EQ(error_path(d), "expect.final_state.a");
}

TEST(ScenarioLoader, EligibleSetMustNameRemoteWorkers) {
  json d = base();
  d["callables"]["r"] = json::parse(R"({"namespace":"REMOTE","eligible":[0],"duration_s":1})");
  EXPECT_EQ(error_path(d), "callables.r.eligible[0]");
}

TEST(ScenarioLoader, ExpectMustNameTasksOfTheTrace) {
  json d = base();
  d["expect"] = json::parse(R"({"final_state":{"zz":"COMPLETED"}})");
  EXPECT_EQ(error_path(d), "expect.final_state.zz");
}

}  // namespace
}  // namespace dirsched

namespace dirsched {
namespace {

Scenario generated(const std::string& family, const std::string& params, std::uint64_t seed = 1) {
  json doc = json::parse(R"({"name":"g","seed":)" + std::to_string(seed) + R"(,"generate":{"family":")" +
                         family + "\"" + (params.empty() ? "" : "," + params) + "}}");
  Scenario s = parse_scenario(doc, "g.json", ".");
  materialize_trace(s);
  return s;
}

// The loader keeps a generate block as a spec; the ops the replay pulls one at a time are the ops
// generate_into() builds whole, for every family (the draws happen in the same order).
TEST(Generators, TheLoaderKeepsTheSpecAndTheLazyOpsAreTheWholeTrace) {
  for (const char* family : {"stream", "fork-join", "chains", "tp-groups", "random"}) {
    json doc = json::parse(std::string(R"({"name":"g","seed":7,"generate":{"family":")") + family +
                           R"(","workers":5,"interval":0.5}})");
    Scenario lazy = parse_scenario(doc, "g.json", ".");
    EXPECT_TRUE(lazy.trace.empty()) << family;
    ASSERT_TRUE(lazy.generate) << family;
    Scenario whole;
    GenerateSpec spec = *lazy.generate;
    spec.buffer_base = 0;
    generate_into(spec, whole, "g.json");
    EXPECT_EQ(lazy.buffers.size(), whole.buffers.size()) << family;
    EXPECT_EQ(lazy.submit_count(), whole.submit_count()) << family;
    std::ostringstream a, b;
    materialize_trace(lazy);
    EXPECT_FALSE(lazy.generate) << family;
    whole.name = lazy.name;
    whole.seed = lazy.seed;
    write_scenario_json(lazy, a);
    write_scenario_json(whole, b);
    EXPECT_EQ(a.str(), b.str()) << family;
  }
}

TEST(Generators, StreamPutsTaskIOnWorkerIModW) {
  Scenario s = generated("stream", R"("tasks":10,"workers":4)");
  ASSERT_EQ(s.trace.size(), 11u);  // ten submits and a drain
  EXPECT_EQ(s.next_level.size(), 4u);
  for (std::size_t i = 0; i < 10; ++i)
    EXPECT_EQ(s.trace[i].worker->value(), static_cast<std::int64_t>(i % 4));
  EXPECT_EQ(s.trace.back().kind, OpKind::kDrain);
}

TEST(Generators, EveryFamilyIsDeterministicForASeedAndVariesWithIt) {
  for (const char* family : {"fork-join", "chains", "tp-groups", "random"}) {
    auto text = [&](std::uint64_t seed) {
      Scenario s = generated(family, R"("workers":6)", seed);
      std::ostringstream out;
      write_scenario_json(s, out);
      return out.str();
    };
    EXPECT_EQ(text(3), text(3)) << family;
    if (std::string(family) != "chains") {  // chains draw nothing at random
      EXPECT_NE(text(3), text(4)) << family;
    }
  }
}

TEST(Generators, ForkJoinJoinReadsEveryPart) {
  Scenario s = generated("fork-join", R"("rounds":2,"width":3,"workers":4)");
  ASSERT_EQ(s.trace.size(), 2u * (1 + 3 + 1) + 1);
  const OpSpec& join = s.trace[4];
  EXPECT_EQ(join.task, "join0");
  EXPECT_EQ(join.args[0].size(), 4u);                 // three parts in, the join buffer out
  EXPECT_EQ(s.trace[5].args[0][0].tag, Tag::kInput);  // round 1's fork reads round 0's join
}

TEST(Generators, TpGroupsPutsMembersOnConsecutiveChips) {
  Scenario s = generated("tp-groups", R"("groups":3,"size":2,"singles_per_group":1,"workers":4)");
  const OpSpec& g1 = s.trace[2];
  ASSERT_EQ(g1.kind, OpKind::kSubmitGroup);
  EXPECT_EQ((*g1.workers)[0].value(), 2);
  EXPECT_EQ((*g1.workers)[1].value(), 3);
}

TEST(Generators, GeneratedScenarioRoundTripsThroughItsJson) {
  Scenario s = generated("random", R"("tasks":30,"workers":5,"group_fraction":0.3)");
  std::ostringstream out;
  write_scenario_json(s, out);
  Scenario back = parse_scenario(json::parse(out.str()), "back.json", ".");
  ASSERT_EQ(back.trace.size(), s.trace.size());
  for (std::size_t i = 0; i < s.trace.size(); ++i) {
    EXPECT_EQ(back.trace[i].task, s.trace[i].task);
    EXPECT_EQ(back.trace[i].args.size(), s.trace[i].args.size());
  }
}

TEST(Generators, ArrivalRateSpacesEveryFamilysSubmitsAsASeededPoissonProcess) {
  for (const char* family : {"stream", "fork-join", "chains", "tp-groups", "random"}) {
    Scenario s = generated(family, R"("workers":4,"arrival_rate":50)", 5);
    Scenario same = generated(family, R"("workers":4,"arrival_rate":50)", 5);
    Scenario at_once = generated(family, R"("workers":4)", 5);
    double last = 0, sum = 0;
    std::size_t n = 0;
    for (std::size_t i = 0; i < s.trace.size(); ++i) {
      const OpSpec& op = s.trace[i];
      EXPECT_EQ(op.task, at_once.trace[i].task) << family;  // the same DAG as without arrivals
      if (op.task.empty()) continue;
      ASSERT_TRUE(op.at_s) << family << " " << op.task;
      EXPECT_GT(*op.at_s, last) << family;
      EXPECT_EQ(*op.at_s, *same.trace[i].at_s) << family;
      sum += *op.at_s - last, last = *op.at_s, ++n;
    }
    ASSERT_GT(n, 10u) << family;
    EXPECT_NEAR(sum / static_cast<double>(n), 1.0 / 50, 0.6 / 50) << family;  // mean gap about 1/R
  }
}

TEST(Generators, IntervalSubmitsTaskKAtKTimesTheInterval) {
  Scenario s = generated("tp-groups", R"("groups":2,"singles_per_group":1,"workers":4,"interval":0.25)");
  ASSERT_EQ(s.trace.size(), 5u);
  for (std::size_t k = 0; k < 4; ++k) EXPECT_DOUBLE_EQ(*s.trace[k].at_s, 0.25 * static_cast<double>(k));
  EXPECT_FALSE(s.trace[4].at_s);  // the drain
  EXPECT_EQ(
      error_path(json::parse(R"({"name":"g","generate":{"family":"stream","interval":1,"arrival_rate":2}})")),
      "generate.interval");
}

TEST(Generators, UnknownFamilyAndOptionsNameTheirPath) {
  EXPECT_EQ(error_path(json::parse(R"({"name":"g","generate":{"family":"zipf"}})")), "generate.family");
  EXPECT_EQ(error_path(json::parse(R"({"name":"g","generate":{"family":"stream","taks":3}})")),
            "generate.taks");
  EXPECT_EQ(error_path(json::parse(R"({"name":"g","generate":{"family":"stream"},"trace":[]})")), "generate");
}

TEST(SweepVars, DollarNamesResolveToTheAssignedValue) {
  json d = base();
  d["vars"] = json::parse(R"({"w":[0,7,true]})");
  d["trace"][0]["worker"] = "$w";
  EXPECT_EQ(parse_scenario(d, "f.json", ".").trace[0].worker->value(), 0);  // first candidate by default
  Scenario s = parse_scenario(d, "f.json", ".", {{"w", json(true)}});
  EXPECT_FALSE(s.trace[0].worker->is_integer());  // a contract-breaking value is a rejection, not an error
  d["trace"][0]["worker"] = "$nope";
  EXPECT_EQ(error_path(d), "trace[0].worker");
}

}  // namespace
}  // namespace dirsched
