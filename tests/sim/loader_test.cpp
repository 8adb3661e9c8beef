// The scenario loader: every malformed input names the JSON path; contract-breaking worker ids load.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "dirsched/generate.hpp"
#include "dirsched/json_reader.hpp"
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
  EXPECT_EQ(s.policy, "seed");
  EXPECT_EQ(s.stall_report_s, 5.0);
  EXPECT_TRUE(s.fail_fast);
  json d = base();
  d["scheduler"] = {{"policy", "head_reservation"}, {"stall_report_s", 0.25}, {"fail_fast", false}};
  const Scheduler::Options o = scheduler_options(parse_scenario(d, "f.json", "."));
  EXPECT_EQ(o.switches, *preset("head_reservation"));
  EXPECT_EQ(o.stall_report_s, 0.25);
  EXPECT_FALSE(o.fail_fast);
  EXPECT_EQ(o.pipeline_depth, 2u);  // whole_run_fifo's admission: default 2
  d["scheduler"] = {{"pipeline_depth", 1}};
  EXPECT_EQ(scheduler_options(parse_scenario(d, "f.json", ".")).pipeline_depth, 1u);
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
  for (const json& bad : {json(0), json(3), json(-1), json(1.5), json("2"), json(true)}) {
    d["scheduler"] = {{"pipeline_depth", bad}};
    EXPECT_EQ(error_path(d), "scheduler.pipeline_depth") << bad.dump();
  }
}

TEST(ScenarioLoader, BetweenPassesBatches) {
  json d = base();
  const json submit = d["trace"][0];
  d["trace"] = json::array({{{"op", "batch"}, {"between_passes", true}, {"ops", json::array({submit})}}});
  const Scenario s = parse_scenario(d, "f.json", ".");
  ASSERT_EQ(s.trace.size(), 1u);
  EXPECT_TRUE(s.trace[0].between_passes);
  d["trace"][0]["between_passes"] = false;
  EXPECT_FALSE(parse_scenario(d, "f.json", ".").trace[0].between_passes);
  d["trace"][0].erase("between_passes");  // default: false
  EXPECT_FALSE(parse_scenario(d, "f.json", ".").trace[0].between_passes);
  // Refusals, each at its path: not a boolean, no submit, a nested at_s, on an op that is no batch.
  for (const json& bad : {json(1), json("true"), json(nullptr)}) {
    d["trace"][0]["between_passes"] = bad;
    EXPECT_EQ(error_path(d), "trace[0].between_passes") << bad.dump();
  }
  d["trace"][0]["between_passes"] = true;
  d["trace"][0]["ops"] = json::array();
  EXPECT_EQ(error_path(d), "trace[0].ops");
  json timed = submit;
  timed["at_s"] = 1;
  d["trace"][0]["ops"] = json::array({timed});
  EXPECT_EQ(error_path(d), "trace[0].ops[0].at_s");
  d = base();
  d["trace"][0]["between_passes"] = true;
  EXPECT_EQ(error_path(d), "trace[0].between_passes");
}

TEST(ScenarioLoader, PolicyMayBeASweepVariable) {
  json d = base();
  d["scheduler"] = {{"policy", "$p"}};
  d["vars"] = {{"p", {"seed", "head_reservation"}}};
  EXPECT_EQ(parse_scenario(d, "f.json", ".").policy, "seed");
  EXPECT_EQ(parse_scenario(d, "f.json", ".", {{"p", "head_reservation"}}).policy, "head_reservation");
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

// The strict reader (scenario/include/dirsched/json_reader.hpp) and the loader's limits: each rule
// with its exact path and message.
namespace dirsched {
namespace {

// The message of the ScenarioError that reading (and loading) `text` raises, or "(loaded)".
std::string read_error(const std::string& text, bool load = false) {
  try {
    const json doc = parse_json_text(text, "f.json");
    if (load) parse_scenario(doc, "f.json", ".");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(loaded)";
}

std::string load_error(const json& doc) {
  try {
    parse_scenario(doc, "f.json", ".");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(loaded)";
}

std::string repeat(const std::string& s, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

TEST(StrictJson, NestingStopsAtTheFirstLevelBeyondSixtyFour) {
  EXPECT_EQ(read_error(repeat("[", 64) + repeat("]", 64)), "(loaded)");
  EXPECT_EQ(read_error(repeat("[", 65) + repeat("]", 65)),
            "f.json: " + repeat("[0]", 64) + ": nested deeper than 64 levels (the limit)");
  // 100,000 levels in a worker id: refused at level 65 (top object, trace, op, then 62 arrays),
  // without a stack deep enough to overflow.
  const std::string deep = R"({"trace":[{"worker":)" + repeat("[", 100000) + repeat("]", 100000) + "}]}";
  EXPECT_EQ(read_error(deep),
            "f.json: trace[0].worker" + repeat("[0]", 61) + ": nested deeper than 64 levels (the limit)");
  const std::string objects = repeat(R"({"a":)", 100000) + "1" + repeat("}", 100000);
  EXPECT_EQ(read_error(objects),
            "f.json: " + std::string("a") + repeat(".a", 63) + ": nested deeper than 64 levels (the limit)");
}

TEST(StrictJson, DuplicateKeysAreRefusedWithTheirPath) {
  EXPECT_EQ(read_error(R"({"name":"a","name":"b"})"), "f.json: name: duplicate key 'name'");
  EXPECT_EQ(read_error(R"({"trace":[{},{"op":"drain","op":"sleep"}]})"),
            "f.json: trace[1].op: duplicate key 'op'");
  EXPECT_EQ(read_error(R"({"a":{"b":1},"c":{"b":1}})"), "(loaded)");  // the same key in two objects
}

TEST(StrictJson, NothingMayFollowTheDocument) {
  EXPECT_EQ(read_error("{} \n\t "), "(loaded)");
  EXPECT_EQ(read_error("{}\nx"), "f.json: unexpected text after the document at line 2, column 1");
  EXPECT_EQ(read_error("{} {}"), "f.json: unexpected text after the document at line 1, column 4");
  EXPECT_EQ(read_error(std::string("{\"a\":1}\0garbage", 15)),
            "f.json: a NUL byte after the document at line 1, column 8");
  EXPECT_EQ(read_error(std::string("{\"a\":[1,\0]}", 11)),
            "f.json: a[1]: a NUL byte in the document at line 1, column 9");
}

TEST(StrictJson, InvalidUtf8IsRefusedWithItsPath) {
  EXPECT_EQ(read_error("{\"name\":\"caf\xc3\xa9\"}"), "(loaded)");
  EXPECT_EQ(read_error("{\"name\":\"\xff\"}"), "f.json: name: invalid UTF-8 at line 1, column 10");
  EXPECT_EQ(read_error("{\"name\":\"\xc0\xaf\"}"),
            "f.json: name: invalid UTF-8 at line 1, column 10");  // overlong
  EXPECT_EQ(read_error("{\"a\":[\"\xed\xa0\x80\"]}"),
            "f.json: a[0]: invalid UTF-8 at line 1, column 9");  // a surrogate
  EXPECT_NE(read_error(R"({"a":"\ud800"})").find("f.json: a: not valid JSON at line 1, column 13"),
            std::string::npos);
}

TEST(StrictJson, NumbersADoubleCannotHoldAreRefusedWithTheirPath) {
  EXPECT_EQ(read_error(R"({"trace":[{"op":"sleep","s":1e400}]})"),
            "f.json: trace[0].s: number 1e400 does not fit in a double (at most about 1.8e308)");
  EXPECT_EQ(read_error(R"([-1e400])"),
            "f.json: [0]: number -1e400 does not fit in a double (at most about 1.8e308)");
  EXPECT_EQ(read_error(R"({"x":1e-400})"),
            "f.json: x: number 1e-400 is too small for a double (it would read as 0)");
  EXPECT_EQ(read_error(R"([0.0e-400, 0e5, 4.9e-324, 1.7976931348623157e308, 18446744073709551615])"),
            "(loaded)");
}

TEST(StrictJson, EmptyInputAndSyntaxErrorsSayWhere) {
  EXPECT_EQ(read_error(" \n"), "f.json: not valid JSON: there is no value, only whitespace or nothing");
  EXPECT_EQ(
      read_error("{\"a\":\n tru}"),
      "f.json: a: not valid JSON at line 2, column 5: syntax error while parsing value - invalid literal; "
      "last read: '\"a\":<U+000A> tru}'");
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/dirsched-loader-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name, const std::string& text) const {
    const std::string p = path_ + "/" + name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string file_error(const std::string& file) {
  try {
    read_json_file(file);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(loaded)";
}

TEST(StrictJson, FilesBeyondTheSizeLimitDirectoriesAndMissingFilesAreRefused) {
  TempDir dir;
  const std::string big = dir.file("big.json", "");
  std::filesystem::resize_file(big, kMaxJsonFileBytes + 1);  // sparse: nothing is written
  EXPECT_EQ(file_error(big),
            big + ": the file holds 268435457 bytes, more than the limit of 268435456 bytes (256 MiB) for a file read "
                "whole (only a trace file's `trace` array is streamed past it: docs/scenario-format.md, \"Big trace "
                "files\")");
  EXPECT_EQ(file_error(dir.path()), dir.path() + ": is a directory, not a JSON file");
  EXPECT_EQ(file_error(dir.path() + "/none.json"),
            dir.path() + "/none.json: cannot open the file: No such file or directory");
  const std::string two = dir.file("two.json", "{\"a\":1}\n{\"a\":2}\n");
  EXPECT_EQ(file_error(two), two + ": unexpected text after the document at line 2, column 1");
}

TEST(StrictJson, StreamingHandsEachElementOverAndKeepsTheRestOfTheDocument) {
  TempDir dir;
  const std::string f = dir.file("s.json", R"({"name":"x","trace":[{"op":"drain"},2,[3]],"z":4})");
  std::vector<std::string> seen;
  std::string before;
  JsonStream stream{"trace", [&](const json& b) { before = b.dump(); },
                    [&](std::size_t i, json&& e) { seen.push_back(std::to_string(i) + "=" + e.dump()); }};
  const json rest = read_json_stream(f, stream);
  EXPECT_EQ(before, R"({"name":"x"})");
  EXPECT_EQ(seen, (std::vector<std::string>{R"(0={"op":"drain"})", "1=2", "2=[3]"}));
  EXPECT_EQ(rest.dump(), R"({"name":"x","trace":[],"z":4})");
  // The same rules and paths while streaming.
  auto stream_error = [&](const std::string& text) {
    try {
      read_json_stream(dir.file("e.json", text), stream);
    } catch (const ScenarioError& e) {
      return std::string(e.what()).substr(dir.path().size() + 1);
    }
    return std::string("(loaded)");
  };
  EXPECT_EQ(stream_error(R"({"trace":[{},{"a":1,"a":2}]})"), "e.json: trace[1].a: duplicate key 'a'");
  EXPECT_EQ(stream_error(R"({"trace":[1,)" + repeat("[", 70) + repeat("]", 70) + "]}"),
            "e.json: trace[1]" + repeat("[0]", 62) + ": nested deeper than 64 levels (the limit)");
  EXPECT_EQ(stream_error("{\"trace\":[1e400]}"),
            "e.json: trace[0]: number 1e400 does not fit in a double (at most about 1.8e308)");
  EXPECT_EQ(stream_error(std::string("{\"trace\":[]}\n\0x", 15)),
            "e.json: a NUL byte after the document at line 2, column 1");
  EXPECT_EQ(stream_error("{\"trace\":[],\"trace\":[]}"), "e.json: trace: duplicate key 'trace'");
}

TEST(ScenarioLimits, TimesBeyondTwoToTheThirtyTwoSecondsAreRefusedWithTheirPath) {
  const std::string too_long =
      ": 4294967297 s is more than the limit of 4294967296 s (2^32 s, the bound of every simulated time)";
  json d = base();
  d["callables"]["k"]["duration_s"] = 0;
  d["trace"][0]["at_s"] = 4294967296.0;  // the bound itself is allowed
  EXPECT_EQ(load_error(d), "(loaded)");
  d["trace"][0]["at_s"] = 4294967297.0;
  EXPECT_EQ(load_error(d), "f.json: trace[0].at_s" + too_long);
  d = base();
  d["trace"][0]["duration_s"] = 4294967297.0;
  EXPECT_EQ(load_error(d), "f.json: trace[0].duration_s" + too_long);
  d = base();
  d["callables"]["k"]["duration_s"] = 1e17;
  EXPECT_EQ(load_error(d),
            "f.json: callables.k.duration_s: 1e+17 s is more than the limit of 4294967296 s (2^32 s, the "
            "bound of every simulated time)");
  d = base();
  d["trace"].push_back({{"op", "sleep"}, {"s", 1e308}});
  EXPECT_EQ(load_error(d),
            "f.json: trace[1].s: 1e+308 s is more than the limit of 4294967296 s (2^32 s, the bound of every "
            "simulated time)");
  for (const char* key : {"iteration_cost_s", "dispatch_cost_s", "stall_report_s"}) {
    d = base();
    d["scheduler"] = {{key, 4294967297.0}};
    EXPECT_EQ(load_error(d), "f.json: scheduler." + std::string(key) + too_long);
  }
  d = base();
  d["faults"] = json::parse(R"([{"host":"chip0","off_at_s":4294967297}])");
  EXPECT_EQ(load_error(d), "f.json: faults[0].off_at_s" + too_long);
}

TEST(ScenarioLimits, SumsOfTimesBeyondTheBoundAreRefusedAtTheOpThatCrossesIt) {
  json d = base();
  d["callables"]["k"]["duration_s"] = 3e9;  // each below 2^32, two of them above
  d["trace"].push_back(json::parse(R"({"op":"submit_next_level","task":"b","callable":"k","worker":0})"));
  EXPECT_EQ(
      load_error(d),
      "f.json: trace[1]: the trace's times add up to more than the limit of 2^32 s (latest at_s 0 s, then "
      "6000000000 s of sleeps, durations and scheduler costs one after another): a run that long would lose "
      "microseconds to rounding");
  // A late at_s counts with what follows it; a uniform jitter counts at its largest factor.
  d = base();
  d["trace"][0]["at_s"] = 4e9;
  d["callables"]["k"]["duration_s"] = 2e8;
  EXPECT_EQ(load_error(d), "(loaded)");
  d["callables"]["k"]["jitter"] = {{"kind", "uniform"}, {"rel", 0.5}};
  EXPECT_NE(load_error(d).find("f.json: trace[0]: the trace's times add up"), std::string::npos);
  d["callables"]["k"]["jitter"] = {{"kind", "normal"}, {"rel", 0.1}};  // 1 + 38 * 0.1 = 4.8
  EXPECT_NE(load_error(d).find("f.json: trace[0]: the trace's times add up"), std::string::npos);
  // Generated traces too: ten submits 1e9 s apart end at 9e9 s.
  EXPECT_EQ(
      load_error(json::parse(R"({"name":"g","generate":{"family":"stream","tasks":10,"interval":1e9}})")),
      "f.json: generate: at trace[5], the generated trace's times add up to more than the limit of 2^32 s "
      "(latest at_s 5000000000 s, then 0.006 s of sleeps, durations and scheduler costs one after another): "
      "a run that long would lose microseconds to rounding");
}

TEST(ScenarioLimits, BytesFlopsAndCountsBeyondTheirLimitsAreRefused) {
  json d = base();
  d["buffers"]["x"]["bytes"] = 9007199254740992.0;  // 2^53
  EXPECT_EQ(load_error(d), "(loaded)");
  d["buffers"]["x"]["bytes"] = 1e19;
  EXPECT_EQ(load_error(d),
            "f.json: buffers.x.bytes: 1e+19 bytes is more than the limit of 9007199254740992 bytes "
            "(2^53, the largest byte count a double holds exactly)");
  d = base();
  d["callables"]["k"]["output_bytes"] = 1e19;
  EXPECT_NE(load_error(d).find("f.json: callables.k.output_bytes: 1e+19 bytes"), std::string::npos);
  d = base();
  d["callables"]["k"] = {{"namespace", "LOCAL_CHIP"}, {"flops", 1e19}};
  EXPECT_EQ(load_error(d),
            "f.json: callables.k.flops: 1e+19 flops is more than the limit of 1e+18 flops (per callable)");
  d = base();
  d["workers"]["sub"] = 1000000000;
  EXPECT_EQ(load_error(d), "f.json: workers.sub: 1000000000 SUB workers is more than the limit of 65536");
  d["workers"]["sub"] = json::parse("18446744073709551615");
  EXPECT_EQ(load_error(d),
            "f.json: workers.sub: 18446744073709551615 SUB workers is more than the limit of 65536");
  d["workers"]["sub"] = 65536;
  EXPECT_EQ(load_error(d), "(loaded)");
  d = base();
  d["trace"][0] = {{"op", "submit_next_level_group"},
                   {"task", "g"},
                   {"callable", "k"},
                   {"workers", {0}},
                   {"args_list", json::array()}};
  for (int i = 0; i < 65537; ++i) d["trace"][0]["args_list"].push_back(json::array());
  EXPECT_EQ(load_error(d), "f.json: trace[0].args_list: 65537 members is more than the limit of 65536");
}

TEST(ScenarioLimits, WorkerIdsOfTwoToTheSixtyThreeAndBeyondAreRefusedWhereTheFileRegistersThem) {
  for (const char* v : {"9223372036854775808", "18446744073709551615"}) {
    json d = base();
    d["workers"]["next_level"][0]["id"] = json::parse(v);
    EXPECT_EQ(load_error(d), "f.json: workers.next_level[0].id: worker id " + std::string(v) +
                                 " is larger than the largest worker id (2^63-1)");
    d = base();
    d["buffers"]["kv"] = {{"bytes", 1}, {"memory", "remote"}, {"owner", json::parse(v)}};
    EXPECT_EQ(load_error(d), "f.json: buffers.kv.owner: worker id " + std::string(v) +
                                 " is larger than the largest worker id (2^63-1)");
  }
}

TEST(ScenarioLimits, EmptyTaskNamesAreRefused) {
  json d = base();
  d["trace"][0]["task"] = "";
  EXPECT_EQ(load_error(d), "f.json: trace[0].task: a task name must not be empty");
  d = base();
  d["trace"][0] = json::parse(R"({"op":"batch","ops":[{"op":"submit_sub","task":"","callable":"k"}]})");
  EXPECT_EQ(load_error(d), "f.json: trace[0].ops[0].task: a task name must not be empty");
}

TEST(ScenarioLimits, GenerateOptionsBeyondTheirRangesAreRefusedBeforeAnyTaskIsMade) {
  auto gen = [](const std::string& params) {
    return load_error(json::parse(R"({"name":"g","generate":{)" + params + "}}"));
  };
  EXPECT_EQ(gen(R"("family":"stream","tasks":2e19)"),
            "f.json: generate.tasks: must be a number from 1 to 100000000, found 2e+19");
  EXPECT_EQ(gen(R"("family":"stream","workers":65537)"),
            "f.json: generate.workers: must be a number from 1 to 65536, found 65537");
  EXPECT_EQ(
      gen(R"("family":"chains","chains":100000,"length":100000)"),
      "f.json: generate: the family 'chains' would make 10000000000 tasks, more than the limit of 100000000");
  EXPECT_EQ(gen(R"("family":"stream","duration_s":1e17)"),
            "f.json: generate.duration_s: must be a number from 0 to 4294967296, found 1e+17");
}

TEST(ExpectOnLoad, WrongTypesInsideExpectAreRefusedWithTheirPath) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"dispatch_order":"a@0"})",
       "expect.dispatch_order: expected an array of \"task@worker\", found a string"},
      {R"({"dispatch_order":[1]})",
       "expect.dispatch_order[0]: expected a dispatch label \"task@worker\", found an integer"},
      {R"({"dispatch_order":["a"]})",
       "expect.dispatch_order[0]: expected a dispatch label task@worker, found 'a'"},
      {R"({"dispatch_order":["zz@0"]})", "expect.dispatch_order[0]: names no task of the trace: 'zz'"},
      {R"({"dispatch_order_per_worker":[]})",
       "expect.dispatch_order_per_worker: expected an object, found an array"},
      {R"({"dispatch_order_per_worker":{"0":"a"}})",
       "expect.dispatch_order_per_worker.0: expected an array of tasks, found a string"},
      {R"({"dispatch_order_per_worker":{"0":[{}]}})",
       "expect.dispatch_order_per_worker.0[0]: expected a task (a string), found an object"},
      {R"({"final_state":{"a":1}})",
       "expect.final_state.a: unknown final state (COMPLETED, FAILED, POISONED, CANCELLED, REJECTED, NOT_SUBMITTED, "
       "READY, PENDING)"},
      {R"({"rejected":{"a":[]}})", "expect.rejected.a: unknown error code"},
      {R"({"rejected":"a"})", "expect.rejected: expected an object, found a string"},
      {R"({"overtakes":{"a":-1}})",
       "expect.overtakes.a: expected a count of singles (a non-negative integer), found an integer"},
      {R"({"overtakes":{"a":"2"}})",
       "expect.overtakes.a: expected a count of singles (a non-negative integer), found a string"},
      {R"({"makespan_s":{"max":"1"}})", "expect.makespan_s.max: expected a number, found a string"},
      {R"({"makespan_s":3})", "expect.makespan_s: expected an object, found an integer"},
      {R"({"outcome":5})", "expect.outcome: expected \"COMPLETED\", \"FAILED\" or \"STUCK\""},
      {R"({"order":[[1,"a@0"]]})",
       "expect.order[0][0]: expected a dispatch label \"task@worker\", found an integer"},
      {R"({"colour":1})", "expect.colour: unknown key 'colour'"},
  };
  for (const auto& [expect, message] : cases) {
    json d = base();
    d["expect"] = json::parse(expect);
    EXPECT_EQ(load_error(d), "f.json: " + message) << expect;
  }
  json d = base();
  d["expect"] =
      json::parse(R"({"dispatch_order":["a@0"],"dispatch_order_per_worker":{"0":["a"]},"overtakes":{"a":0},
                                "outcome":"COMPLETED","makespan_s":{"approx":1,"rel":0.1}})");
  EXPECT_EQ(load_error(d), "(loaded)");
}

}  // namespace
}  // namespace dirsched

namespace dirsched {
namespace {

json run_op(const std::string& name, json ops) {
  return json{{"op", "run"}, {"run", name}, {"ops", std::move(ops)}};
}
json sub(const std::string& task) {
  return json{{"op", "submit_next_level"}, {"task", task}, {"callable", "k"}, {"worker", 0}};
}
std::string error_text(const json& doc) {
  try {
    parse_scenario(doc, "f.json", ".");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(loaded)";
}

TEST(RunsLoader, ReadsRunAndRaiseOps) {
  json d = base();
  d["trace"] = json::array({run_op("r1", json::array({sub("a"), json{{"op", "raise"}}})),
                            json{{"op", "sleep"}, {"s", 1}}, run_op("r2", json::array()), json{{"op", "drain"}}});
  d["expect"] = json{{"runs", {{"r1", "FAILED"}, {"r2", "COMPLETED"}}}};
  Scenario s = parse_scenario(d, "f.json", ".");
  EXPECT_TRUE(s.has_runs);
  ASSERT_EQ(s.trace[0].kind, OpKind::kRun);
  EXPECT_EQ(s.trace[0].run, "r1");
  ASSERT_EQ(s.trace[0].ops.size(), 2u);
  EXPECT_EQ(s.trace[0].ops[1].kind, OpKind::kRaise);
  EXPECT_EQ(s.trace[0].ops[1].message, "orchestration failed");
  EXPECT_EQ(s.submit_count(), 1u);
  EXPECT_FALSE(parse_scenario(base(), "f.json", ".").has_runs);
}

TEST(RunsLoader, LoadErrorsNameTheirPath) {
  json d = base();
  d["trace"] = json::array({run_op("r1", json::array({sub("a")})), run_op("r1", json::array())});
  EXPECT_EQ(error_path(d), "trace[1].run");
  EXPECT_NE(error_text(d).find("duplicate run name 'r1'"), std::string::npos);
  d["trace"] = json::array({run_op("r1", json::array()), sub("a")});
  EXPECT_EQ(error_path(d), "trace[1]");
  EXPECT_NE(error_text(d).find("a submit outside a run in a file with runs"), std::string::npos);
  d["trace"] = json::array({sub("a"), run_op("r1", json::array())});  // before the first run too
  EXPECT_EQ(error_path(d), "trace[0]");
  d["trace"] = json::array({run_op("r1", json::array()), json{{"op", "batch"}, {"ops", json::array({sub("a")})}}});
  EXPECT_EQ(error_path(d), "trace[1]");
  d["trace"] = json::array({run_op("r1", json::array()), json{{"op", "raise"}}});
  EXPECT_EQ(error_path(d), "trace[1]");
  d["trace"] = json::array({run_op("r1", json::array({sub("a"), json{{"op", "drain"}}}))});
  EXPECT_EQ(error_path(d), "trace[0].ops[1]");
  EXPECT_NE(error_text(d).find("drain is not allowed inside a run (a callback cannot wait for its own tasks)"),
            std::string::npos);
  d["trace"] = json::array({run_op("r1", json::array({run_op("r2", json::array())}))});
  EXPECT_EQ(error_path(d), "trace[0].ops[0]");
  d["trace"] = json::array({run_op("r1", json::array({sub("a")})), run_op("r2", json::array({sub("a")}))});
  EXPECT_EQ(error_path(d), "trace[1].ops[0].task");  // task names unique across runs
  json late = sub("b");
  late["at_s"] = 1;
  json run = run_op("r1", json::array({late}));
  run["at_s"] = 2;
  d["trace"] = json::array({run});
  EXPECT_EQ(error_path(d), "trace[0].ops[0].at_s");
  d["trace"] = json::array({run_op("r1", json::array({json{{"op", "raise"}, {"message", 3}}}))});
  EXPECT_EQ(error_path(d), "trace[0].ops[0].message");
}

TEST(RunsLoader, ExpectRunsNamesRunsOfTheTrace) {
  json d = base();
  d["trace"] = json::array({run_op("r1", json::array({sub("a")}))});
  d["expect"] = json{{"runs", {{"r9", "FAILED"}}}};
  EXPECT_EQ(error_text(d), "f.json: expect.runs.r9: no such run");
  d["expect"] = json{{"runs", {{"r1", "DONE"}}}};
  EXPECT_EQ(error_path(d), "expect.runs.r1");
  d = base();  // a trace without runs is the one run "main"
  d["expect"] = json{{"runs", {{"main", "COMPLETED"}}}};
  EXPECT_EQ(error_path(d), "(loaded)");
  d["expect"] = json{{"runs", {{"r1", "COMPLETED"}}}};
  EXPECT_EQ(error_path(d), "expect.runs.r1");
}

}  // namespace
}  // namespace dirsched
