// The folder markers' record (record/marker.hpp): what the writers make reads back and writes again byte
// for byte; an older run marker without `files` stays without; what is not a marker is refused naming the
// file and the field.
#include "dirsched/record/marker.hpp"
#include "dirsched/record/sweep_row.hpp"
#include "refusal.hpp"

#include <gtest/gtest.h>

namespace dirsched::record {
namespace {

using nlohmann::json;

std::string refusal_run(const std::string& text) {
  return refusal_of([&] { decode_run_marker(json::parse(text), "out/.dirsched-run"); });
}

std::string refusal_sweep(const std::string& text) {
  return refusal_of([&] { decode_sweep_marker(json::parse(text), "out/.dirsched-sweep"); });
}

TEST(MarkerRecord, RunMarkersRoundTripByteForByte) {
  for (const std::string& text : {
           // a run's (SimGrid), an import's observed folder, the threads engine's, an older one without files
           std::string(R"({"dirsched":"run","scenario":"group-starvation","dirsched_version":"0.1.0","engine":"sim",)"
                       R"("time_scale":1.0,"files":["events.jsonl","summary.json","tasks.csv"]})"),
           std::string(R"({"dirsched":"run","scenario":"import-host","dirsched_version":"0.1.0","engine":"strace",)"
                       R"("time_scale":1.0,"files":["events.jsonl","summary.json","tasks.csv"]})"),
           std::string(R"({"dirsched":"run","scenario":"s","dirsched_version":"0.1.0","engine":"threads",)"
                       R"("time_scale":0.25,"files":[]})"),
           std::string(R"({"dirsched":"run","scenario":"s","dirsched_version":"0.0.9","engine":"sim","time_scale":1.0})"),
       }) {
    EXPECT_EQ(encode(decode_run_marker(json::parse(text), "m")), text + "\n");
  }
  // The older marker has no list: a reader trusts the names a run writes there.
  EXPECT_FALSE(decode_run_marker(json::parse(R"({"dirsched":"run"})"), "m").files);
}

TEST(MarkerRecord, RunMarkerFilesAreWrittenSortedOnce) {
  RunMarker m;
  m.scenario = "s";
  m.dirsched_version = "v";
  m.files = std::vector<std::string>{"tasks.csv", "events.jsonl", "tasks.csv"};
  EXPECT_EQ(encode(m),
            R"({"dirsched":"run","scenario":"s","dirsched_version":"v","engine":"sim","time_scale":1.0,)"
            R"("files":["events.jsonl","tasks.csv"]})"
            "\n");
}

TEST(MarkerRecord, RunMarkerRefusalsNameTheFileAndTheField) {
  EXPECT_EQ(refusal_run(R"({"dirsched":"sweep"})"), R"(out/.dirsched-run: expected {"dirsched": "run", ...})");
  EXPECT_EQ(refusal_run("[1]"), R"(out/.dirsched-run: expected {"dirsched": "run", ...})");
  EXPECT_EQ(refusal_run(R"({"dirsched":"run","files":"a"})"), "out/.dirsched-run: files: expected an array of file names");
  EXPECT_EQ(refusal_run(R"({"dirsched":"run","files":["a",2]})"), "out/.dirsched-run: files[1]: expected a file name");
  // What only describes the run is read leniently: a wrong type takes the default.
  const RunMarker m = decode_run_marker(json::parse(R"({"dirsched":"run","engine":3,"time_scale":"x"})"), "m");
  EXPECT_EQ(m.engine, "sim");
  EXPECT_EQ(m.time_scale, 1);
}

TEST(MarkerRecord, SweepMarkersRoundTripAndRefuse) {
  const std::string text =
      R"({"dirsched":"sweep","file":"python:ffn","scenario":"ffn","variant_count":3,"variants":[0,2,5]})";
  const SweepMarker m = decode_sweep_marker(json::parse(text), "m");
  EXPECT_EQ(m.variants, (std::vector<std::size_t>{0, 2, 5}));
  EXPECT_EQ(encode(m), text + "\n");
  EXPECT_EQ(refusal_sweep(R"({"dirsched":"run"})"), R"(out/.dirsched-sweep: not a sweep marker ("dirsched": "sweep"))");
  EXPECT_EQ(refusal_sweep(R"({"dirsched":"sweep","file":"f","variants":[]})"), "out/.dirsched-sweep: scenario: expected a string");
  EXPECT_EQ(refusal_sweep(R"({"dirsched":"sweep","scenario":"s","variants":[]})"), "out/.dirsched-sweep: file: expected a string");
  EXPECT_EQ(refusal_sweep(R"({"dirsched":"sweep","scenario":"s","file":"f"})"), "out/.dirsched-sweep: variants: expected an array");
  EXPECT_EQ(refusal_sweep(R"({"dirsched":"sweep","scenario":"s","file":"f","variants":[1,-1]})"),
            "out/.dirsched-sweep: variants[1]: expected a variant index");
  EXPECT_EQ(refusal_sweep(R"({"dirsched":"sweep","scenario":"s","file":"f","variants":[1,1]})"),
            "out/.dirsched-sweep: variants[1]: variant 1 listed twice");
}

// sweep.csv (its round trip is tested with the sweep layer's writer, tests/sweep/sweep_test.cpp).
TEST(SweepRowRecord, RefusesWhatDoesNotMatchNamingTheLineAndTheColumn) {
  const std::string header = sweep_csv_header({"gw"});
  EXPECT_EQ(decode_sweep_header(header.substr(0, header.size() - 1), "s.csv"), std::vector<std::string>{"gw"});
  auto refusal = [](const std::string& line) { return refusal_of([&] { decode_sweep_row(line, 1, "out/sweep.csv", 3); }); };
  const std::string good = "0,\"[0,1]\",true,4.5,0,0,0,0,0,0,0,0.5,0,0,0,0,COMPLETED,7,3,1.5";
  EXPECT_EQ(refusal(good), "(accepted)");
  EXPECT_EQ(decode_sweep_row(good, 1, "s.csv", 2).measures.group_held_target_s, 1.5);
  // A file from before group_held_target_s: its header and rows read, the held time 0.
  const std::string old_header = header.substr(0, header.rfind(",group_held_target_s"));
  EXPECT_EQ(decode_sweep_header(old_header, "s.csv"), std::vector<std::string>{"gw"});
  const std::string old = good.substr(0, good.rfind(','));
  EXPECT_EQ(refusal(old), "(accepted)");
  EXPECT_EQ(decode_sweep_row(old, 1, "s.csv", 2).measures.group_held_target_s, 0);
  EXPECT_EQ(refusal(old + ","), "out/sweep.csv line 3: group_held_target_s: an empty cell");
  EXPECT_EQ(refusal("0,x,true,4.5"), "out/sweep.csv line 3: 4 fields, the header has 20");
  EXPECT_EQ(refusal("0,x,yes,4.5,0,0,0,0,0,0,0,0.5,0,0,0,0,COMPLETED,7,3"),
            "out/sweep.csv line 3: clean: 'yes' is not true or false");
  EXPECT_EQ(refusal("0,x,true,,0,0,0,0,0,0,0,0.5,0,0,0,0,COMPLETED,7,3"),
            "out/sweep.csv line 3: makespan_s: an empty cell");
  EXPECT_EQ(refusal("0,x,true,4.5,0,0,0,0,0,0,0,0.5,1.5,0,0,0,COMPLETED,7,3"),
            "out/sweep.csv line 3: failed: '1.5' is not a count");
  EXPECT_EQ(refusal("-1,x,true,4.5,0,0,0,0,0,0,0,0.5,0,0,0,0,COMPLETED,7,3"),
            "out/sweep.csv line 3: variant: '-1' is not a count");
  try {
    decode_sweep_header("variant,gw,clean", "out/sweep.csv");
    ADD_FAILURE() << "a short header was accepted";
  } catch (const RecordError& e) {
    EXPECT_NE(std::string(e.what()).find("out/sweep.csv line 1: not a sweep.csv header"), std::string::npos);
  }
}

}  // namespace
}  // namespace dirsched::record
