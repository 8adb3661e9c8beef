// The scenario loader: every malformed input names the JSON path; contract-breaking worker ids load.
#include <gtest/gtest.h>

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
