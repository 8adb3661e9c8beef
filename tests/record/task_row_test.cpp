// tasks.csv's record (record/task_row.hpp): every file the writers make reads back and writes again
// byte for byte (the golden runs, every shipped scenario on the event engine); quoting round-trips;
// a header or a row that does not match is refused naming the file, the line and the column.
#include "dirsched/record/task_row.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "dirsched/eventsim.hpp"
#include "dirsched/outputs.hpp"
#include "dirsched/scenario.hpp"
#include "refusal.hpp"

namespace dirsched::record {
namespace {

namespace fs = std::filesystem;

// Decodes a whole file and encodes it again.
std::string round_trip(const std::string& text, const std::string& file, std::size_t* rows = nullptr) {
  std::istringstream in(text);
  std::string line, out;
  std::getline(in, line);
  const TaskColumns columns = decode_tasks_header(line, file);
  out = tasks_csv_header(columns);
  for (std::size_t n = 2; std::getline(in, line); ++n) {
    encode_task_row(decode_task_row(line, columns, file, n), columns, out);
    if (rows) ++*rows;
  }
  return out;
}

TEST(TaskRowRecord, EveryGoldenTasksCsvRoundTripsByteForByte) {
  std::size_t files = 0, rows = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(DIRSCHED_SOURCE_DIR) / "tests/sim/golden")) {
    const fs::path f = entry.path() / "tasks.csv";
    if (!fs::exists(f)) continue;
    std::ifstream in(f, std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(round_trip(text, f.string(), &rows), text) << f;
    ++files;
  }
  EXPECT_GE(files, 8u);
  EXPECT_GT(rows, 100u);
}

TEST(TaskRowRecord, EveryShippedScenarioOnTheEventEngineRoundTrips) {
  std::size_t runs = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(DIRSCHED_SOURCE_DIR) / "scenarios")) {
    if (entry.path().extension() != ".json") continue;
    const Scenario sc = load_scenario(entry.path().string());
    if (event_engine_refusal(sc)) continue;
    const auto run = run_events(sc, EventRunOptions{});
    const std::string text = tasks_csv(*run);
    EXPECT_EQ(round_trip(text, entry.path().string()), text) << entry.path();
    ++runs;
  }
  EXPECT_GE(runs, 40u);
}

TEST(TaskRowRecord, QuotedFieldsAndOptionalColumnsRoundTrip) {
  const TaskColumns columns{true, true, true};
  TaskRow r;
  r.job_id = "a,\"b\"";
  r.kind = "group";
  r.callable = "k";
  r.allocated_resources = "0 1";
  r.submission_time = 0;
  r.starting_time = 1.5;
  r.waiting_time = 1.5;
  r.final_state = "COMPLETED";
  r.waits = std::array<double, 10>{1.25, 0, 0, 0, 0, 0, 0, 0, 0, 0.25};
  r.run = "r,1";
  r.staged = 0.25;
  std::string out;
  encode_task_row(r, columns, out);
  // wait_target_held_s (the last cause) after every other column, so the older ones keep their places.
  EXPECT_EQ(out, "\"a,\"\"b\"\"\",group,k,0 1,0,,1.5,,1.5,,COMPLETED,1.25,0,0,0,0,0,0,0,0,\"r,1\",0.25,0.25\n");
  const TaskRow back = decode_task_row(out.substr(0, out.size() - 1), columns, "t.csv", 2);
  EXPECT_EQ(back.job_id, r.job_id);
  EXPECT_EQ(back.run, r.run);
  EXPECT_EQ(back.staged, r.staged);
  EXPECT_FALSE(back.ready_time);
  std::string again;
  encode_task_row(back, columns, again);
  EXPECT_EQ(again, out);
  EXPECT_EQ(decode_tasks_header(tasks_csv_header(columns).substr(0, tasks_csv_header(columns).size() - 1), "t.csv"),
            columns);
  // A file from before wait_target_held_s: its header and rows still read, the held time 0.
  const TaskColumns before{true, true, true, false};
  std::string old_header = tasks_csv_header(before);
  EXPECT_EQ(old_header.find("wait_target_held_s"), std::string::npos);
  EXPECT_EQ(decode_tasks_header(old_header.substr(0, old_header.size() - 1), "t.csv"), before);
  const std::string old_row = out.substr(0, out.rfind(','));
  const TaskRow old_back = decode_task_row(old_row, before, "t.csv", 2);
  ASSERT_TRUE(old_back.waits);
  EXPECT_EQ((*old_back.waits)[0], 1.25);
  EXPECT_EQ((*old_back.waits)[9], 0);
  EXPECT_EQ(old_back.staged, 0.25);
  // An import's file: the eleven base columns only.
  EXPECT_EQ(tasks_csv_header({false, false, false}),
            "job_id,kind,callable,allocated_resources,submission_time,ready_time,starting_time,finish_time,"
            "waiting_time,execution_time,final_state\n");
}

std::string refusal(const std::string& line, const TaskColumns& columns) {
  return refusal_of([&] { decode_task_row(line, columns, "out/tasks.csv", 7); });
}

TEST(TaskRowRecord, RefusesWhatDoesNotMatchNamingTheLineAndTheColumn) {
  const TaskColumns base{false, false, false};
  EXPECT_EQ(refusal("a,single,k,0,0,0,1,2,1,1", base), "out/tasks.csv line 7: 10 fields, the header has 11");
  EXPECT_EQ(refusal("a,single,k,0,0,0,x,2,1,1,COMPLETED", base),
            "out/tasks.csv line 7: starting_time: 'x' is not a number");
  EXPECT_EQ(refusal("a,single,k,0,0,0,nan,2,1,1,COMPLETED", base),
            "out/tasks.csv line 7: starting_time: 'nan' is not a number");
  EXPECT_EQ(refusal("\"a,single,k,0,0,0,1,2,1,1,COMPLETED", base), "out/tasks.csv line 7: a quoted field is not closed");
  EXPECT_EQ(refusal("a,single,k,0,0,0,1,2,1,1,COMPLETED,1,,0,0,0,0,0,0,0", {true, false, false, false}),
            "out/tasks.csv line 7: the wait causes are all set (a task that started) or all empty, not 8 of 9");
  EXPECT_EQ(refusal("a,single,k,0,0,0,1,2,1,1,COMPLETED,1,0,0,0,0,0,0,0,0,", {true, false, false}),
            "out/tasks.csv line 7: the wait causes are all set (a task that started) or all empty, not 9 of 10");
  EXPECT_EQ(refusal("a,single,k,0,0,0,1,2,1,1,COMPLETED", base), "(accepted)");
  try {
    decode_tasks_header("job_id,kind", "out/tasks.csv");
    ADD_FAILURE() << "a short header was accepted";
  } catch (const RecordError& e) {
    EXPECT_NE(std::string(e.what()).find("out/tasks.csv line 1: not a tasks.csv header"), std::string::npos);
  }
}

}  // namespace
}  // namespace dirsched::record
