// What a few bytes of scenario may ask the loader for: work bounded by the limits, never by a count
// the file states (found by fuzzing, tests/fuzz/scenario_fuzz.cpp; its corpus holds the same inputs).
// A regression here is a hang or an out-of-memory, not a wrong answer: ctest gives each test 60 s.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dirsched/json_reader.hpp"
#include "dirsched/scenario.hpp"

namespace dirsched {
namespace {

using nlohmann::json;

std::string load_error(const json& doc, const LoadLimits& limits = {}) {
  try {
    parse_scenario(doc, "f.json", ".", {}, {}, limits);
  } catch (const ScenarioError& e) {
    return e.path() + ": " + e.what();
  }
  return "(loaded)";
}

json ids(std::size_t n) {
  json a = json::array();
  for (std::size_t i = 0; i < n; ++i) a.push_back(i);
  return a;
}

// A group on `"workers": "$v"`, v choosing k of `from`; chips 0 to 63.
json chooser(std::size_t k, const json& from, bool ordered = false) {
  json d = json::parse(R"({"name": "c", "callables": {"k": {"namespace": "LOCAL_CHIP", "duration_s": 1}}})");
  for (int i = 0; i < 64; ++i) d["workers"]["next_level"].push_back({{"id", i}, {"kind", "local_chip"}});
  d["trace"] = {{{"op", "submit_next_level_group"}, {"task", "g"}, {"callable", "k"}, {"workers", "$v"},
                 {"args_list", json(std::vector<json>(k, json::array()))}}};
  d["vars"]["v"] = {{"choose", k}, {"from", from}};
  if (ordered) d["vars"]["v"]["ordered"] = true;
  return d;
}

// `choose 40 from` 40 ids is a space of one list; the walk used to visit every increasing sequence of
// ids (2^40 calls) to find it.
TEST(LoaderLimits, ChooseEveryIdIsOneListFoundWithoutWalkingEverySubset) {
  const Scenario s = parse_scenario(chooser(40, ids(40)), "f.json", ".");
  ASSERT_EQ(s.vars.at("v").size(), 1u);
  EXPECT_EQ(s.vars.at("v")[0], ids(40));
  const Scenario t = parse_scenario(chooser(39, ids(40)), "f.json", ".");
  ASSERT_EQ(t.vars.at("v").size(), 40u);
  EXPECT_EQ(t.vars.at("v").front(), ids(39));  // positions 0-38, then without 38, ..., without 0
  json last = ids(40);
  last.erase(0);
  EXPECT_EQ(t.vars.at("v").back(), last);
}

// The lists and their order are the walk's as before: positions in `from`, lexicographic.
TEST(LoaderLimits, ChooseListsKeepTheirOrder) {
  const Scenario s = parse_scenario(chooser(2, json{3, 1, 2, 0}), "f.json", ".");
  const std::vector<json> unordered = {{3, 1}, {3, 2}, {3, 0}, {1, 2}, {1, 0}, {2, 0}};
  EXPECT_EQ(s.vars.at("v"), unordered);
  const Scenario o = parse_scenario(chooser(2, json{2, 0, 1}, true), "f.json", ".");
  const std::vector<json> ordered = {{2, 0}, {2, 1}, {0, 2}, {0, 1}, {1, 2}, {1, 0}};
  EXPECT_EQ(o.vars.at("v"), ordered);
}

// A space is bounded by the ids its lists hold too, not only by their number: `choose 998` of 1,000
// ids is 499,500 lists (under the 1,000,000 limit) of 998 ids each, and used to build all of them (out
// of memory, from 4 KB of file). C(1414, 1412) was counted through infinity and refused as infinite.
TEST(LoaderLimits, ChooseSpaceIsBoundedByTheIdsItsListsHold) {
  json d = chooser(998, ids(1000));
  for (int i = 64; i < 1414; ++i) d["workers"]["next_level"].push_back({{"id", i}, {"kind", "local_chip"}});
  const std::string e = load_error(d);
  EXPECT_NE(e.find("vars.v: the space's 499500 lists of 998 ids hold 498501000 ids, more than the limit of 10000000"),
            std::string::npos)
      << e;
  d["vars"]["v"] = {{"choose", 1412}, {"from", ids(1414)}};
  EXPECT_NE(load_error(d).find("the space's 998991 lists of 1412 ids"), std::string::npos) << load_error(d);
  d["vars"]["v"] = {{"choose", 700}, {"from", ids(1414)}};
  EXPECT_NE(load_error(d).find("the space holds more than 1e308 lists"), std::string::npos) << load_error(d);
  d["vars"]["v"] = {{"choose", 3}, {"from", ids(200)}};  // 1,313,400 lists
  EXPECT_NE(load_error(d).find("the space holds 1313400 lists, more than the limit of 1000000"), std::string::npos)
      << load_error(d);
}

// A generate block's workers are ids 0 to workers - 1 for `choose`, read before the block is checked:
// `"workers": 1e12` used to register a trillion ids one by one (out of memory) before the loader
// refused the count.
// (A generate block has no op to take the variable: the load ends at "declared, but no value of the
// file is" once the lists are made, or earlier at the block's own error.)
TEST(LoaderLimits, ChooseReadsAGeneratedWorkerCountAsABound) {
  auto gen = [](double workers, const json& from) {
    json d = {{"name", "c"}, {"generate", {{"family", "stream"}, {"tasks", 4}, {"workers", workers}}}};
    d["vars"]["v"] = {{"choose", 1}, {"from", from}};
    return d;
  };
  const std::string huge = load_error(gen(1e12, json{0}));
  EXPECT_EQ(huge.rfind("generate.workers: ", 0), 0u) << huge;
  const std::string unused = "vars.v: f.json: vars.v: declared, but no value";
  EXPECT_EQ(load_error(gen(64, json{0, 63})).rfind(unused, 0), 0u) << load_error(gen(64, json{0, 63}));
  EXPECT_NE(load_error(gen(64, json{64, 65})).find("every one of the 2 lists names a worker that is not registered"),
            std::string::npos)
      << load_error(gen(64, json{64, 65}));
  EXPECT_EQ(load_error(gen(64, json{64, 63})).rfind(unused, 0), 0u);  // [64] left out, [63] kept
}

json generated(const json& block) {
  return {{"name", "g"}, {"generate", block}};
}

// LoadLimits::max_tasks holds a generate block's tasks, edges and group members, and a trace's
// submits, to a lower number than kMaxTasks, refused before anything is made.
TEST(LoaderLimits, LowerTaskLimitRefusesGenerateBlocksAndTraces) {
  const LoadLimits hundred{100};
  EXPECT_EQ(load_error(generated({{"family", "stream"}, {"tasks", 100}}), hundred), "(loaded)");
  const std::string tasks = load_error(generated({{"family", "stream"}, {"tasks", 1e8}}), hundred);
  EXPECT_EQ(tasks.rfind("generate.tasks: ", 0), 0u) << tasks;
  EXPECT_NE(tasks.find("from 1 to 100,"), std::string::npos) << tasks;
  const std::string chains = load_error(generated({{"family", "chains"}, {"chains", 11}, {"length", 10}}), hundred);
  EXPECT_NE(chains.find("would make 110 tasks, more than the limit of 100"), std::string::npos) << chains;
  const std::string members = load_error(
      generated({{"family", "tp-groups"}, {"groups", 2}, {"size", 64}, {"workers", 64}, {"singles_per_group", 0}}),
      hundred);
  EXPECT_NE(members.find("128 group members"), std::string::npos) << members;
  const std::string edges = load_error(generated({{"family", "random"}, {"tasks", 40}, {"edges", 3}}), hundred);
  EXPECT_NE(edges.find("120 edges"), std::string::npos) << edges;

  json trace = json::parse(R"({"name": "t", "workers": {"next_level": [{"id": 0, "kind": "local_chip"}]},
                               "callables": {"k": {"namespace": "LOCAL_CHIP", "duration_s": 1}}, "trace": []})");
  for (int i = 0; i < 3; ++i)
    trace["trace"].push_back({{"op", "submit_next_level"}, {"task", "t" + std::to_string(i)}, {"callable", "k"}, {"worker", 0}});
  EXPECT_EQ(load_error(trace, LoadLimits{3}), "(loaded)");
  const std::string over = load_error(trace, LoadLimits{2});
  EXPECT_EQ(over.rfind("trace[2]: ", 0), 0u) << over;

  // The default is kMaxTasks, and a larger value changes nothing.
  const std::string big = load_error(generated({{"family", "stream"}, {"tasks", 2e8}}), LoadLimits{kMaxTasks * 4});
  EXPECT_NE(big.find("from 1 to 100000000,"), std::string::npos) << big;
}

// A trace's groups hold at most kMaxTotalMembers members in all, counted op by op in batches and run
// callbacks too (LoadLimits::max_tasks lowers it here): refused at the group that passes it. 65,536
// members per group used to be the only bound, which 1e8 submits multiply to 6.5e12.
TEST(LoaderLimits, TraceGroupMembersAreBoundedInAll) {
  auto group = [](const std::string& task, std::size_t members) {
    return json{{"op", "submit_next_level_group"},
                {"task", task},
                {"callable", "k"},
                {"args_list", json(std::vector<json>(members, json::array()))}};
  };
  json d = json::parse(R"({"name": "t", "workers": {"next_level": [{"id": 0, "kind": "local_chip"}]},
                           "callables": {"k": {"namespace": "LOCAL_CHIP", "duration_s": 1}}, "trace": []})");
  d["trace"].push_back(group("a", 40));
  d["trace"].push_back({{"op", "batch"}, {"ops", {group("b", 40), group("c", 20), group("d", 1)}}});
  EXPECT_EQ(load_error(d, LoadLimits{101}), "(loaded)");
  EXPECT_EQ(
      load_error(d, LoadLimits{100}),
      "trace[1].ops[2]: f.json: trace[1].ops[2]: the trace's groups have 101 members up to this one, more "
      "than the limit of 100 group members in all");
  // Singles are tasks, not group members.
  d["trace"].push_back({{"op", "submit_next_level"}, {"task", "s"}, {"callable", "k"}, {"worker", 0}});
  EXPECT_EQ(load_error(d, LoadLimits{101}), "(loaded)");

  json runs = d;
  runs["trace"] = {
      {{"op", "run"}, {"run", "r"}, {"ops", {group("e", 60), {{"op", "batch"}, {"ops", {group("f", 50)}}}}}}};
  const std::string in_run = load_error(runs, LoadLimits{100});
  EXPECT_EQ(in_run.rfind("trace[0].ops[1].ops[0]: ", 0), 0u) << in_run;
  EXPECT_NE(in_run.find("the trace's groups have 110 members up to this one"), std::string::npos) << in_run;
}

// A task's core entry holds its callable in 16 bits: a scenario naming more callables than the
// registry takes is refused at "callables" (bad input, status 2), not by an abort in the core; the
// registry refuses the 65,536th callable it is handed directly.
TEST(LoaderLimits, MoreCallablesThanTheCoreHoldsAreRefusedAtCallables) {
  json d = json::parse(R"({"name": "c", "workers": {"next_level": [{"id": 0, "kind": "local_chip"}]}, "trace": []})");
  json& c = d["callables"];
  for (std::size_t i = 0; i < Registry::kMaxCallables; ++i)
    c["k" + std::to_string(i)] = {{"namespace", "LOCAL_CHIP"}, {"duration_s", 1}};
  EXPECT_EQ(parse_scenario(d, "f.json", ".").callables.size(), Registry::kMaxCallables);
  c["one_more"] = {{"namespace", "LOCAL_CHIP"}, {"duration_s", 1}};
  EXPECT_EQ(load_error(d), "callables: f.json: callables: 65536 callables; at most 65535");

  Registry r;
  for (std::size_t i = 0; i < Registry::kMaxCallables; ++i)
    r.add_callable({"k" + std::to_string(i), Namespace::kLocalChip, std::nullopt});
  EXPECT_THROW(r.add_callable({"one_more", Namespace::kLocalChip, std::nullopt}), RegistryError);
}

}  // namespace
}  // namespace dirsched
