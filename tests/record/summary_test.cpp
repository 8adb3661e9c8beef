// The run record's summary codec (record/summary.hpp): every summary this build writes reads back into
// the same bytes; an older summary (no schema) is read and written back as it was; a newer one, a wrong
// type, an unknown engine or outcome is refused with the file and the JSON path.
#include "dirsched/record/summary.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "refusal.hpp"

#include "dirsched/eventsim.hpp"
#include "dirsched/scenario.hpp"

namespace dirsched::record {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string round_trip(const std::string& text, const std::string& file = "summary.json") {
  return encode(decode(ojson::parse(text), file));
}

// Where two texts first differ (a whole summary in a failure message is unreadable).
std::string first_difference(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  if (i == a.size() && i == b.size()) return "identical";
  const std::size_t from = i > 80 ? i - 80 : 0;
  return "differ at byte " + std::to_string(i) + ":\n" + a.substr(from, 160) + "\n---\n" + b.substr(from, 160);
}

std::string refusal(const std::string& text) {
  return refusal_of([&] { decode(ojson::parse(text), "runs/a/summary.json"); });
}

// Every shipped scenario the event engine can run (the SimGrid driver writes the same summary through
// the same summarise(): tests/sim/event_engine_test.sh): written, read, written again, byte for byte.
TEST(SummaryRecord, EveryShippedScenarioRoundTrips) {
  std::size_t checked = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(DIRSCHED_SOURCE_DIR) / "scenarios")) {
    if (entry.path().extension() != ".json") continue;
    const Scenario sc = load_scenario(entry.path().string());
    if (event_engine_refusal(sc)) continue;
    EventRunOptions options;
    options.record_events = false;
    const auto run = run_events(sc, options);
    const std::string text = summary_json(*run, {"a note"});
    ASSERT_EQ(first_difference(round_trip(text), text), "identical") << entry.path();
    const Summary s = decode(ojson::parse(text), entry.path().string());
    EXPECT_EQ(s.schema, kSummarySchema);
    EXPECT_EQ(s.engine, Engine::kEvent);
    EXPECT_NEAR(s.makespan_s, run->result.makespan_s, 1e-9);
    EXPECT_EQ(to_string(s.outcome), run->result.outcome);
    ++checked;
  }
  EXPECT_GT(checked, 30u);  // most shipped scenarios cost durations only
}

// A summary written before summaries named a schema (the tp-groups golden file of an older build).
TEST(SummaryRecord, OlderSummaryIsReadAndWrittenBackAsItWas) {
  const std::string text = slurp(fs::path(DIRSCHED_SOURCE_DIR) / "tests/record/schema0-summary.json");
  ASSERT_EQ(text.find("\"schema\""), std::string::npos);
  const Summary s = decode(ojson::parse(text), "old/summary.json");
  EXPECT_EQ(s.schema, 0);
  EXPECT_EQ(s.scenario, "golden-tp-groups");
  EXPECT_FALSE(s.workers.empty());
  EXPECT_EQ(first_difference(encode(s), text), "identical");
}

TEST(SummaryRecord, NewerSchemaIsRefused) {
  EXPECT_EQ(refusal(R"({"schema": 2, "outcome": "COMPLETED"})"),
            "runs/a/summary.json: schema 2: written by a newer dirsched; this one reads summaries up to schema 1 "
            "(run it again with this build, or read it with the build that wrote it)");
  EXPECT_EQ(refusal(R"({"schema": 0})"), "runs/a/summary.json: schema: expected a schema number >= 1");
  EXPECT_EQ(refusal(R"({"schema": "1"})"), "runs/a/summary.json: schema: expected an integer");
}

// Schema 1 is a run's summary: its always-written fields must be there; a negative makespan is no time.
TEST(SummaryRecord, ASchemaOneSummaryHasItsFields) {
  EXPECT_EQ(refusal(R"({"schema": 1, "scenario": "s"})"),
            "runs/a/summary.json: seed: expected the field (every summary of schema 1 has it)");
  const std::string text = slurp(fs::path(DIRSCHED_SOURCE_DIR) / "tests/sim/golden/tp-groups/summary.json");
  for (const char* key : {"makespan_s", "outcome", "workers", "tasks"}) {
    ojson doc = ojson::parse(text);
    doc.erase(key);
    EXPECT_EQ(refusal(doc.dump()),
              std::string("runs/a/summary.json: ") + key + ": expected the field (every summary of schema 1 has it)");
  }
  EXPECT_EQ(refusal(R"({"makespan_s": -1})"), "runs/a/summary.json: makespan_s: expected a time from 0 to 2^32 s");
  EXPECT_EQ(refusal(R"({"makespan_s": 1e308})"), "runs/a/summary.json: makespan_s: expected a time from 0 to 2^32 s");
  EXPECT_EQ(refusal(R"({"outcome": "COMPLETED"})"), "(accepted)");  // schema 0: what it has
}

TEST(SummaryRecord, WrongTypesNameTheirPath) {
  EXPECT_EQ(refusal(R"([1])"), "runs/a/summary.json: (top level): expected an object");
  EXPECT_EQ(refusal(R"({"makespan_s": "12"})"), "runs/a/summary.json: makespan_s: expected a number");
  EXPECT_EQ(refusal(R"({"workers": [{"worker": 1, "kind": "aic"}, {"worker": 2, "busy_s": true}]})"),
            "runs/a/summary.json: workers[1].busy_s: expected a number");
  EXPECT_EQ(refusal(R"({"workers": [{"worker": "w1", "kind": "aic"}]})"),
            "runs/a/summary.json: workers[0].worker: expected an integer >= 0");
  EXPECT_EQ(refusal(R"({"workers": [{"worker": 3, "kind": "sub"}]})"),
            "runs/a/summary.json: workers[0].worker: expected \"subN\"");
  EXPECT_EQ(refusal(R"({"groups": [{"task": "g", "overtaken_by": ["a", 2]}]})"),
            "runs/a/summary.json: groups[0].overtaken_by[1]: expected a string");
  EXPECT_EQ(refusal(R"({"tasks": {"COMPLETED": -1}})"), "runs/a/summary.json: tasks.COMPLETED: expected an integer >= 0");
  EXPECT_EQ(refusal(R"({"engine": "gpu"})"),
            "runs/a/summary.json: engine: expected one of sim, event, threads, strace");
  EXPECT_EQ(refusal(R"({"outcome": "DONE"})"),
            "runs/a/summary.json: outcome: expected one of COMPLETED, FAILED, STUCK, VIOLATION, TRUNCATED");
  EXPECT_EQ(refusal(R"({"runs": [{"run": "r", "end_s": "late"}]})"),
            "runs/a/summary.json: runs[0].end_s: expected a number or null");
}

// Every optional part present at once, and the derived questions readers ask of a summary.
TEST(SummaryRecord, EveryPartRoundTrips) {
  Summary s;
  s.scenario = "all", s.description = "every part", s.seed = 7, s.policy = "head_reservation";
  s.switches = {{{"group_reservation", true}, {"run_cancellation", false}}};
  s.inert = std::vector<std::string>{"run_cancellation"};
  s.pipeline_depth = 1;
  s.stall_report_s = 5;
  s.engine = Engine::kThreads, s.time_scale = 0.01;
  s.vars = {{{"w", ojson::array({0, 1})}}};
  s.variant = 3;
  s.dirsched_version = "0.1.0";
  s.outcome = Outcome::kFailed, s.error = "g[1] failed";
  s.makespan_s = 12.5;
  s.tasks.by_state = {{"COMPLETED", 3}, {"FAILED", 1}, {"POISONED", 2}};
  s.tasks.total = 6;
  s.workers = {{"0", "aic", "host0", 10, 0.8}, {"sub0", "sub", "host0", 1, 0.08}};
  s.queue_waits = {{"group", {2, 1, 2, 2, 1.5, true}}};
  s.groups = {{"g", {0, 1}, 0.5, std::nullopt, 12, 3, 2, {"a", "b"}, std::vector<BlockedBy>{{0.5, 2, 1, "a", 1.5, "producers"}}}};
  s.groups_omitted = 4;
  s.group_totals = GroupTotals{5, 20, 6, 3};
  s.waits = WaitReport{{{"producers_s", 1}}, 6, 5, {{"a", {"0"}, 2, {{"fifo_s", 2}}, 1, std::vector<std::string>{"b"}}}, {}, {{"a", 0, 2, "submitted", std::nullopt}}, 9};
  s.stalls = {{"reservation_stall", "g", 5.5, {1}, std::vector<std::uint64_t>{0}, 5}};
  s.stalls_omitted = {{{"group_stall", 2}}};
  s.ready_waits_single = WaitStats{1, 2, 2, 2, 2, false};
  s.ready_waits_group = WaitStats{1, 12, 12, 12, 12, false};
  s.stuck = {{"c", "PENDING", "waits on g"}};
  s.runs = {{{"r0", Outcome::kFailed, "boom", true, 0.0, 1.0, std::nullopt, s.tasks}}};
  s.stuck_omitted = 1;
  s.violation = Violation{17, "fifo", "detail", "dump"};
  s.events = 40;
  s.notes = {"a note"};
  const std::string text = encode(s);
  EXPECT_EQ(first_difference(round_trip(text), text), "identical");
  EXPECT_NE(text.find("\"blocked_by\""), std::string::npos);
  EXPECT_NE(text.find("\"critical_path_omitted\": 9"), std::string::npos);
  EXPECT_NE(text.find("\"inert\": [\n    \"run_cancellation\"\n  ],\n  \"pipeline_depth\": 1,"), std::string::npos);
  EXPECT_FALSE(s.clean());
  EXPECT_EQ(s.tasks["POISONED"], 2u);
  EXPECT_EQ(s.tasks["RUNNING"], 0u);
  EXPECT_EQ(s.stall_count("group_stall"), 2u);
  EXPECT_EQ(s.stall_count("reservation_stall"), 1u);
  EXPECT_TRUE(same_clock(Engine::kSim, Engine::kEvent));
  EXPECT_FALSE(same_clock(Engine::kSim, Engine::kThreads));
}

}  // namespace
}  // namespace dirsched::record
