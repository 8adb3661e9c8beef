// The streamed load of trace files (dirsched/trace_file.hpp) against the full read: the same ops, the
// same header, the same errors, the file changing under a replay, and per-task data held only while
// a task is live. tests/scenario/stream_outputs_test.sh compares whole runs' outputs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dirsched/generate.hpp"
#include "dirsched/replay.hpp"
#include "dirsched/scenario.hpp"
#include "dirsched/trace_file.hpp"

namespace dirsched {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("dirsched-stream-test-" + std::to_string(::getpid()));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name, const std::string& text) const {
    const std::string f = (path_ / name).string();
    std::ofstream(f, std::ios::binary) << text;
    return f;
  }

 private:
  fs::path path_;
};

std::string worker_text(const std::optional<WorkerArg>& w) {
  if (!w) return "-";
  return std::to_string(w->is_integer()) + std::to_string(w->in_range()) + std::to_string(w->is_negative()) +
         ":" + w->text();
}

// Every field of an op, nested ops too, as text: two ops are the same op when these are equal.
std::string describe(const OpSpec& op) {
  std::ostringstream o;
  o << static_cast<int>(op.kind) << " " << op.path << " at=" << (op.at_s ? std::to_string(*op.at_s) : "-")
    << " task=" << op.task << " c=" << op.callable << " w=" << worker_text(op.worker) << " ws=";
  if (op.workers)
    for (const WorkerArg& w : *op.workers) o << worker_text(w) << ",";
  else
    o << "-";
  o << " args=";
  for (const auto& member : op.args) {
    o << "[";
    for (const ArgSpec& a : member) o << (a.buffer ? std::to_string(*a.buffer) : "s") << "/" << static_cast<int>(a.tag) << " ";
    o << "]";
  }
  o << " d=";
  for (const auto& d : op.duration_s) o << (d ? std::to_string(*d) : "-") << ",";
  o << " f=";
  for (bool f : op.fail) o << f << ",";
  o << " sleep=" << op.sleep_s << " ops={";
  for (const OpSpec& inner : op.ops) o << describe(inner) << ";";
  o << "}";
  return o.str();
}

// Loads `file` both ways and compares everything the run reads. `strict`: how many ops the fast reader
// must pass on to the strict one (-1: any number).
void expect_same_load(const std::string& file, const VarAssignment& vars = {}, int strict = -1) {
  SCOPED_TRACE(file);
  Scenario full = load_scenario(file, vars, TraceRead::kFull);
  Scenario streamed = load_scenario(file, vars);
  if (full.generate) return;  // a generate block: neither reads a trace
  // A trace with run or raise ops is read whole (the replay steps into a run's callback): both loads
  // are then the full read.
  bool raises = false;
  for (const OpSpec& op : full.trace) raises |= op.kind == OpKind::kRaise;
  if (full.has_runs || raises) {
    EXPECT_FALSE(streamed.trace_file);
    EXPECT_EQ(streamed.trace.size(), full.trace.size());
    return;
  }
  ASSERT_TRUE(streamed.trace_file) << "the streamed load passed the file on to the full read";
  EXPECT_TRUE(streamed.trace.empty());
  if (strict >= 0) {
    EXPECT_EQ(streamed.trace_file->strict_op_count(), static_cast<std::size_t>(strict));
  }
  EXPECT_EQ(streamed.submit_count(), full.submit_count());
  EXPECT_EQ(streamed.trace_file->op_count(), full.trace.size());
  EXPECT_EQ(streamed.name, full.name);
  EXPECT_EQ(streamed.callables.size(), full.callables.size());
  EXPECT_EQ(streamed.buffers.size(), full.buffers.size());
  EXPECT_EQ(streamed.next_level.size(), full.next_level.size());
  EXPECT_EQ(streamed.faults.size(), full.faults.size());
  EXPECT_EQ(streamed.expect, full.expect);
  EXPECT_EQ(streamed.assigned, full.assigned);
  materialize_trace(streamed);
  EXPECT_FALSE(streamed.trace_file);
  ASSERT_EQ(streamed.trace.size(), full.trace.size());
  for (std::size_t i = 0; i < full.trace.size(); ++i) EXPECT_EQ(describe(streamed.trace[i]), describe(full.trace[i]));
}

std::vector<std::string> json_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(StreamedLoad, GivesTheShippedScenariosTheOpsOfTheFullRead) {
  const auto files = json_files(DIRSCHED_SOURCE_DIR "/scenarios");
  ASSERT_GT(files.size(), 30u);
  for (const std::string& f : files) expect_same_load(f);
  for (const std::string& f : json_files(DIRSCHED_SOURCE_DIR "/tests/scenario/inputs")) {
    expect_same_load(f);
  }
  const std::string mix = DIRSCHED_SOURCE_DIR "/tests/scenario/inputs/trace-first-mix.json";
  expect_same_load(mix, {{"w", nlohmann::json("x")}});  // a sweep variable's other value
  // The fast reader passes on exactly the unusual ops: the batch (a worker `true`), an escaped name
  // with a "$w", an escaped name with worker 1.0, a worker id of 20 digits.
  expect_same_load(DIRSCHED_SOURCE_DIR "/tests/scenario/inputs/trace-first-mix.json", {}, 4);
}

using FamilySpecs = std::vector<std::pair<std::string, std::map<std::string, double>>>;

// Each family's generated trace (with `seed`) written as a scenario file in `dir`.
std::vector<std::string> generated_files(const TempDir& dir, const FamilySpecs& specs, std::uint64_t seed) {
  std::vector<std::string> out;
  for (const auto& [family, params] : specs) {
    Scenario s;
    s.name = family;
    generate_into(GenerateSpec{family, params, seed, 0}, s, family);
    std::ostringstream text;
    write_scenario_json(s, text);
    out.push_back(dir.file(family + ".json", text.str()));
  }
  return out;
}

// The streamed reader's window set by a test (detail::set_trace_window), and put back as it was when
// the test ends, failed or not.
class TraceWindow {
 public:
  TraceWindow() : before_(detail::set_trace_window(1)) { detail::set_trace_window(before_); }
  ~TraceWindow() { detail::set_trace_window(before_); }
  TraceWindow(const TraceWindow&) = delete;
  TraceWindow& operator=(const TraceWindow&) = delete;
  void set(std::size_t bytes) const { detail::set_trace_window(bytes); }
  std::size_t before() const { return before_; }  // 1 MiB, unless another test left it

 private:
  std::size_t before_;
};

TEST(StreamedLoad, GivesGeneratedTracesTheOpsOfTheFullRead) {
  TempDir dir;
  const FamilySpecs specs = {
      {"stream", {{"tasks", 300}, {"workers", 7}, {"duration_s", 0.001}, {"interval", 0.0001}}},
      {"fork-join", {{"rounds", 4}, {"width", 5}, {"workers", 3}, {"duration_s", 0.002}}},
      {"chains", {{"chains", 4}, {"length", 9}, {"workers", 3}, {"duration_s", 0.001}, {"arrival_rate", 5000}}},
      {"tp-groups", {{"groups", 12}, {"size", 4}, {"singles_per_group", 3}, {"workers", 8}, {"duration_s", 0.001}}},
      {"random", {{"tasks", 200}, {"edges", 3}, {"group_fraction", 0.3}, {"workers", 6}, {"duration_s", 0.001}}},
  };
  for (const std::string& f : generated_files(dir, specs, 3)) expect_same_load(f, {}, 0);  // every op read by the fast reader
}

// Every op cut by the window's end at every byte: with windows of 1 to 300 bytes (the window doubles
// for an op longer than itself), the streamed load and its replay give the full read's ops, and the
// fast reader passes on to the strict one exactly the ops it passes on with a 1 MiB window (an op cut
// in two is read again with more of the file, never handed on for being cut).
TEST(StreamedLoad, OpsCutByTheWindowAtEveryByteReadAsWhole) {
  TempDir dir;
  const FamilySpecs specs = {
      {"stream", {{"tasks", 20}, {"workers", 3}, {"duration_s", 0.001}, {"interval", 0.0001}}},
      {"tp-groups", {{"groups", 3}, {"size", 3}, {"singles_per_group", 2}, {"workers", 4}, {"duration_s", 0.001}}},
      {"random", {{"tasks", 20}, {"edges", 2}, {"group_fraction", 0.3}, {"workers", 4}, {"duration_s", 0.001}}},
  };
  const std::vector<std::string> generated = generated_files(dir, specs, 5);
  const std::string mix = DIRSCHED_SOURCE_DIR "/tests/scenario/inputs/trace-first-mix.json";
  const TraceWindow window;
  for (std::size_t bytes = 1; bytes <= 300; ++bytes) {
    SCOPED_TRACE("window of " + std::to_string(bytes) + " bytes");
    window.set(bytes);
    expect_same_load(mix, {}, 4);
    for (const std::string& f : generated) expect_same_load(f, {}, 0);
    if (HasFailure()) break;  // one window's failures say it all
  }
}

TEST(StreamedLoad, ReadsATraceWrittenBeforeItsHeader) {
  TempDir dir;
  const std::string f = dir.file(
      "order.json",
      R"({"trace":[{"op":"submit_next_level","task":"a","callable":"k","worker":0,"args":[{"buffer":"x","tag":"OUTPUT"}]},)"
      R"({"op":"drain"}],"buffers":{"x":{"bytes":1}},"callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":1}},)"
      R"("workers":{"next_level":[{"id":0,"kind":"local_chip"}]},"name":"n","expect":{"final_state":{"a":"COMPLETED"}}})");
  expect_same_load(f);
  // Its tail reads like a trace's end (`]}`), but a key follows the trace: the check finds the array
  // ending early and the load scans every key.
  expect_same_load(dir.file(
      "tail.json",
      R"({"workers":{"next_level":[{"id":0,"kind":"local_chip"}]},"callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":1}},)"
      R"("trace":[{"op":"submit_next_level","task":"a","callable":"k","worker":0}],"name":"late",)"
      R"("faults":[{"host":"chip0","off_at_s":100}]})"));
}

// Submits of the given task names on worker 0, as the elements of a trace array.
std::string names_trace(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names)
    out += (out.empty() ? "" : ",") + std::string(R"({"op":"submit_next_level","task":")") + n +
           R"(","callable":"k","worker":0})";
  return out;
}

// a0, b0, a1, b1, ...: names that count, in runs of one name each.
std::vector<std::string> interleaved_names(int pairs) {
  std::vector<std::string> out;
  for (int i = 0; i < pairs; ++i) {
    out.push_back("a" + std::to_string(i));
    out.push_back("b" + std::to_string(i));
  }
  return out;
}

// Names alike but not the same (a number with a leading zero, one prefix with another's digits, runs
// of two prefixes over the same numbers, runs too short to keep as runs) load streamed, as the full
// read loads them: the check of distinct names sees no repeat in them.
TEST(StreamedLoad, NamesAlikeButDifferentLoadStreamed) {
  TempDir dir;
  const std::string head =
      R"("name":"h","workers":{"next_level":[{"id":0,"kind":"local_chip"}]},"callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":1}})";
  std::vector<std::string> names = {"t1", "t01", "t001", "t1x", "1", "01", "t", "t2", "t3", "u1", "u2", "u3",
                                    "t4", "t0", "t10", "9999999999999999999", "99999999999999999999", "t5"};
  expect_same_load(dir.file("alike.json", "{" + head + R"(,"trace":[)" + names_trace(names) + "]}"), {}, 0);
  const std::vector<std::string> short_runs = interleaved_names(3000);
  names.insert(names.end(), short_runs.begin(), short_runs.end());
  names.push_back("a3000");
  names.push_back("t6");
  expect_same_load(dir.file("short-runs.json", "{" + head + R"(,"trace":[)" + names_trace(names) + "]}"), {}, 0);
}

// A file each way: the streamed load must refuse it with the full read's own message.
TEST(StreamedLoad, RefusesBadFilesWithTheFullReadsMessage) {
  TempDir dir;
  const std::string head =
      R"("name":"h","workers":{"next_level":[{"id":0,"kind":"local_chip"}]},"callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":1}},"buffers":{"x":{"bytes":0}})";
  const std::string a = R"({"op":"submit_next_level","task":"a","callable":"k","worker":0})";
  std::vector<std::string> bad = {
      "{" + head + R"(,"trace":[)" + a + "," + a + "]}",                                      // duplicate name
      "{" + head + R"(,"trace":[)" + a + R"(,{"op":"batch","ops":[)" + a + "]}]}",           // ... in a batch
      "{" + head + R"(,"trace":[)" + a + ",]}",                                               // trailing comma
      "{" + head + R"(,"trace":[)" + a + " " + a + "]}",                                      // missing comma
      "{" + head + R"(,"trace":[{"op":"submit_next_level","task":"a","callable":"q","worker":0}]})",  // callable
      "{" + head + R"(,"trace":[{"op":"submit_next_level","task":"a","callable":"k","worker":0,"args":[{"buffer":"y","tag":"INPUT"}]}]})",
      "{" + head + R"(,"trace":[{"op":"submit_next_level","task":"a","callable":"k","worker":0,"args":[{"buffer":"x","tag":"IN"}]}]})",
      "{" + head + R"(,"trace":[{"op":"submit_next_level","task":"a","callable":"k","worker":0,"args":[{"buffer":"x"}]}]})",
      "{" + head + R"(,"trace":[{"op":"submit_next_level","task":"a","callable":"k","worker":0,"args":[{"scalar":1,"tag":"INPUT"}]}]})",
      "{" + head + R"(,"trace":[{"op":"submit_next_level","task":"a","callable":"k","worker":0,"tsk":1}]})",  // unknown key
      "{" + head + R"(,"trace":[{"op":"submit_next_level","task":"a","task":"b","callable":"k","worker":0}]})",
      "{" + head + R"(,"trace":[{"op":"submit_next_level","callable":"k","worker":0}]})",                     // no task
      "{" + head + R"(,"trace":[{"op":"submit_next_level","task":"","callable":"k","worker":0}]})",
      "{" + head + R"(,"trace":[{"op":"submit_next_level_group","task":"g","callable":"k","workers":[0],"args":[]}]})",
      "{" + head + R"(,"trace":[{"op":"submit_next_level","task":"a","callable":"k","worker":0,"args_list":[[]]}]})",
      "{" + head + R"(,"trace":[{"op":"submit_next_level_group","task":"g","callable":"k","workers":[0],"args_list":[[]],"duration_s":[1,2]}]})",
      "{" + head + R"(,"trace":[{"op":"submit_next_level_group","task":"g","callable":"k","workers":[0],"args_list":[[]],"fail":[1]}]})",
      "{" + head + R"(,"trace":[{"op":"submit_next_level","task":"a","callable":"k","worker":0,"duration_s":-1}]})",
      "{" + head + R"(,"trace":[{"op":"submit_next_level","task":"a","callable":"k","worker":0,"duration_s":1e400}]})",
      "{" + head + R"(,"trace":[{"op":"submit_next_level","task":"a","callable":"k","worker":0,"duration_s":1e-400}]})",
      "{" + head + R"(,"trace":[{"op":"submit_next_level","task":"a","callable":"k","worker":0,"duration_s":5e9}]})",
      "{" + head + R"(,"trace":[{"op":"submit_next_level","task":"a","callable":"k","worker":01}]})",
      "{" + head + R"(,"trace":[{"op":"submit_next_level","task":"a","callable":"k","worker":"$nope"}]})",
      "{" + head + R"(,"trace":[{"op":"sleep"}]})",
      "{" + head + R"(,"trace":[{"op":"sleep","s":1,"task":"a"}]})",
      "{" + head + R"(,"trace":[{"op":"drain","at_s":2},{"op":"drain","at_s":1}]})",                      // at_s order
      "{" + head + R"(,"trace":[{"op":"batch","ops":[{"op":"drain"}]}]})",
      "{" + head + R"(,"trace":[{"op":"batch","ops":[{"op":"submit_next_level","task":"a","callable":"k","worker":0,"at_s":1}]}]})",
      "{" + head + R"(,"trace":[{"op":"teleport"}]})",
      "{" + head + R"(,"trace":[{"op":"sleep","s":3e9},{"op":"sleep","s":3e9}]})",                         // time budget
      "{" + head + R"(,"trace":[)" + a + R"(],"expect":{"final_state":{"zz":"COMPLETED"}}})",            // expect names
      "{" + head + R"(,"trace":[)" + a + R"(,"x"]})",
      "{" + head + R"(,"trace":[)" + a + R"(]} trailing)",
      "{" + head + R"(,"trace":[)" + a + "]",                                                            // unclosed
      "{" + head + R"(,"trace":[)" + a + R"(],"trace":[]})",                                             // two traces
      "{" + head + R"(,"trace":{}})",
      "{" + head + "}",
      "{" + head + R"(,"trace":[{"op":"submit_next_level","task":"caf)" + std::string("\xe9") + R"(","callable":"k","worker":0}]})",
      "{" + head + R"(,"trace":[{"op":"submit_next_level","task":"a","callable":"k","worker":0}),
      "{" + head + R"(,"trace":[{"op":"submit_next_level","task":"a","callable":"k","worker":0,"fail":"yes"}]})",
      "{" + head + R"(,"trace":[)" + a + R"(],"faults":[{"host":"host0","off_at_s":1}]})",
      "{" + head + R"(,"trace":[)" + a + R"(],"nonsense":1})",
      std::string("{") + head + ",\"trace\":[" + a + "]}\n" + std::string(1, '\0') + "x",
      "{" + head + R"(,"trace":[)" + names_trace({"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t2"}) + "]}",  // a run's name again
      "{" + head + R"(,"trace":[)" + names_trace({"t1", "t2", "x", "t2", "t3"}) + "]}",                   // run against run
      "{" + head + R"(,"trace":[)" + names_trace({"t9", "u1", "t8", "t9"}) + "]}",
      "{" + head + R"(,"trace":[)" + names_trace({"u1", "t2", "x", "t2"}) + "]}",  // t2 does not extend u1's run
  };
  // Names counted in runs too short to keep as runs (a0, b0, a1, b1, ...: the check keeps hashes once
  // 4,096 runs average fewer than 4 names), with one repeated before that point and one after it.
  std::vector<std::string> interleaved = interleaved_names(3000);
  interleaved.push_back("a17");
  bad.push_back("{" + head + R"(,"trace":[)" + names_trace(interleaved) + "]}");
  interleaved.back() = "b2999";
  interleaved.push_back("c0");
  bad.push_back("{" + head + R"(,"trace":[)" + names_trace(interleaved) + "]}");
  // Each with the 1 MiB window, and with windows of 1 to 48 bytes: every fault then falls at every
  // place of the window.
  const TraceWindow window;
  for (std::size_t i = 0; i < bad.size(); ++i) {
    const std::string f = dir.file("bad" + std::to_string(i) + ".json", bad[i]);
    std::string full;
    try {
      load_scenario(f, {}, TraceRead::kFull);
    } catch (const ScenarioError& e) {
      full = e.what();
    }
    EXPECT_FALSE(full.empty()) << "case " << i << " is not a bad file: " << bad[i];
    for (std::size_t k = 0; k <= 48; ++k) {
      const std::size_t bytes = k == 0 ? window.before() : k;
      window.set(bytes);
      std::string streamed;
      try {
        load_scenario(f);
      } catch (const ScenarioError& e) {
        streamed = e.what();
      }
      EXPECT_EQ(streamed, full) << "case " << i << ", window of " << bytes;
      if (streamed != full) break;
    }
  }
}

TEST(StreamedLoad, AgreesWithTheFullReadOnTheFuzzCorpus) {
  for (const std::string& f : json_files(DIRSCHED_SOURCE_DIR "/tests/fuzz/corpus")) {
    std::string full = "loaded", streamed = "loaded";
    try {
      load_scenario(f, {}, TraceRead::kFull);
    } catch (const ScenarioError& e) {
      full = e.what();
    }
    try {
      load_scenario(f);
    } catch (const ScenarioError& e) {
      streamed = e.what();
    }
    EXPECT_EQ(streamed, full) << f;
  }
}

// A chain of tasks on one worker, each with its own duration, replayed on the core alone with every
// member ending right after its dispatch: the table of overrides stays about the live window.
TEST(StreamedReplay, HoldsMemberOverridesOnlyWhileTheTaskIsLive) {
  TempDir dir;
  std::string trace;
  const int n = 5000;
  for (int i = 0; i < n; ++i)
    trace += std::string(i ? "," : "") + R"({"op":"submit_next_level","task":"t)" + std::to_string(i) +
             R"(","callable":"k","worker":0,"duration_s":)" + std::to_string(i % 7) + R"(,"fail":)" +
             (i % 5 == 4 ? "true" : "false") + "}";
  const std::string f = dir.file(
      "live.json", R"({"name":"live","scheduler":{"fail_fast":false},"workers":{"next_level":[{"id":0,"kind":"local_chip"}]},)"
                   R"("callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":1}},"trace":[)" +
                       trace + "]}");
  const Scenario s = load_scenario(f);
  ASSERT_TRUE(s.trace_file);
  auto core = make_scheduler(s);
  Replay replay(s, *core);
  std::size_t most = 0, checked = 0;
  while (!replay.done()) {
    ASSERT_TRUE(replay.next_enabled());
    if (replay.run_next(0)) run_instant(*core, [](const std::vector<Dispatch>&) {});
    most = std::max(most, replay.held_overrides());
    const auto running = core->running();
    for (const auto& [task, member] : running) {
      const int i = std::stoi(std::string(core->name(task)).substr(1));
      EXPECT_EQ(replay.member_duration(task, member), std::optional<double>(i % 7));
      EXPECT_EQ(replay.member_fails(task, member), i % 5 == 4);
      ++checked;
      std::vector<MemberEnd> ends = {{0, task, member, Outcome::kSuccess}};
      complete_instant(*core, ends, [](const std::vector<Dispatch>&) {});
    }
  }
  EXPECT_EQ(checked, static_cast<std::size_t>(n));
  EXPECT_LE(most, 200u) << "the overrides of finished tasks were kept";
}

// A scenario whose trace file changed after its check: the replay stops at once, saying so, and reading
// the trace whole refuses it.
void expect_the_replay_stops(const Scenario& s) {
  auto core = make_scheduler(s);
  Replay replay(s, *core);
  EXPECT_EQ(replay.trace_error(), "the file changed after it was checked: run it again");
  EXPECT_TRUE(replay.done());
  Scenario whole = s;
  EXPECT_THROW(materialize_trace(whole), ScenarioError);
}

TEST(StreamedReplay, StopsWhenTheFileChangesAfterTheCheck) {
  TempDir dir;
  const std::string text =
      R"({"name":"c","workers":{"next_level":[{"id":0,"kind":"local_chip"}]},"callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":1}},)"
      R"("trace":[{"op":"submit_next_level","task":"a","callable":"k","worker":0},{"op":"drain"}]})";
  const std::string f = dir.file("c.json", text);
  Scenario s = load_scenario(f);
  ASSERT_TRUE(s.trace_file);
  {
    auto core = make_scheduler(s);
    Replay replay(s, *core);  // the file as checked: it runs
    EXPECT_TRUE(replay.trace_error().empty());
    EXPECT_EQ(replay.op_count(), 2u);
  }
  std::string longer = text;
  longer.insert(longer.find("{\"op\":\"drain\"}"), R"({"op":"submit_next_level","task":"a","callable":"k","worker":0},)");
  fs::remove(f);
  dir.file("c.json", longer);  // a duplicate name now: the check would refuse it
  expect_the_replay_stops(s);
}

// Issue 28: an edit in place that keeps the size and the modification time (same inode, same bytes
// count, mtime put back) still stops the replay: the check is bound to the bytes, a hash per chunk.
TEST(StreamedReplay, StopsWhenAnEditKeepsTheSizeAndTheModificationTime) {
  TempDir dir;
  const std::string text =
      R"({"name":"c","workers":{"next_level":[{"id":0,"kind":"local_chip"}]},"callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":1}},)"
      R"("trace":[{"op":"submit_next_level","task":"a","callable":"k","worker":0},)"
      R"({"op":"submit_next_level","task":"b","callable":"k","worker":0},{"op":"drain"}]})";
  const std::string f = dir.file("c.json", text);
  Scenario s = load_scenario(f);
  ASSERT_TRUE(s.trace_file);
  const auto mtime = fs::last_write_time(f);
  {
    std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(static_cast<std::streamoff>(text.find("\"task\":\"b\"") + 8));
    io.put('a');  // a duplicate name now: the check would refuse it
  }
  fs::last_write_time(f, mtime);
  ASSERT_EQ(fs::file_size(f), text.size());
  ASSERT_EQ(fs::last_write_time(f), mtime);
  expect_the_replay_stops(s);
}

// The chunk hashes must never call an unchanged file changed: a 3 MiB trace whose ops cross the 1 MiB
// window's refills, with ops the strict reader takes (an escape) and one op longer than the window
// (its buffer doubles), replays whole with no error, op for op as the full read gives them.
TEST(StreamedReplay, AnUnchangedFileOfManyChunksReplaysWhole) {
  TempDir dir;
  std::string text =
      R"({"name":"c","workers":{"next_level":[{"id":0,"kind":"local_chip"}]},"callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":1}},"trace":[)";
  std::size_t ops = 0;
  auto op = [&](const std::string& o) { text += (ops++ ? "," : "") + o; };
  for (int i = 0; text.size() < (std::size_t{3} << 20); ++i) {
    op(R"({"op":"submit_next_level","task":"t)" + std::to_string(i) + R"(","callable":"k","worker":0})");
    if (i % 5000 == 0) op(R"({"op":"submit_next_level","task":"eé)" + std::to_string(i) + R"(","callable":"k","worker":0})");
    if (i == 20000) {  // about 1.5 MiB of scalars in one op
      std::string args;
      for (int k = 0; k < 150000; ++k) args += (k ? "," : "") + std::string(R"({"scalar":12345})");
      op(R"({"op":"submit_next_level","task":"long","callable":"k","worker":0,"args":[)" + args + "]}");
    }
  }
  op(R"({"op":"drain"})");
  text += "]}";
  const std::string f = dir.file("c.json", text);
  Scenario s = load_scenario(f);
  ASSERT_TRUE(s.trace_file);
  ASSERT_GT(s.trace_file->chunk_hashes().size(), 3u);
  Scenario whole = s;
  materialize_trace(whole);  // throws when a chunk's hash differs
  EXPECT_EQ(whole.trace.size(), ops);
  ::setenv("DIRSCHED_TRACE_READ", "full", 1);
  const Scenario full = load_scenario(f);
  ::unsetenv("DIRSCHED_TRACE_READ");
  ASSERT_EQ(full.trace.size(), ops);
  for (std::size_t i = 0; i < ops; ++i) ASSERT_EQ(whole.trace[i].task, full.trace[i].task) << i;
  auto core = make_scheduler(s);
  Replay replay(s, *core);
  EXPECT_TRUE(replay.trace_error().empty()) << replay.trace_error();
}

// The 256 MiB limit bounds only what is read whole: a trace file past it loads streamed (its ops
// apart by whitespace here, written once), and a fault in it is reported by the streamed check (file
// and JSON path) rather than by the size.
TEST(StreamedLoad, ATraceFilePastTheWholeReadLimitLoadsStreamed) {
  TempDir dir;
  const std::string head =
      R"({"name":"big","workers":{"next_level":[{"id":0,"kind":"local_chip"}]},)"
      R"("callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":1}},"trace":[)";
  const std::string a = R"({"op":"submit_next_level","task":"a","callable":"k","worker":0})";
  auto write = [&](const std::string& name, const std::string& second) {
    const std::string f = dir.file(name, "");
    std::ofstream out(f, std::ios::binary);
    out << head << a << ",";
    const std::string spaces(std::size_t{1} << 20, ' ');
    for (std::uint64_t n = 0; n <= (kMaxJsonFileBytes >> 20); ++n) out << spaces;
    out << second << "]}\n";
    return f;
  };
  const std::string good = write("big.json", R"({"op":"submit_next_level","task":"b","callable":"k","worker":0})");
  ASSERT_GT(fs::file_size(good), kMaxJsonFileBytes);
  const Scenario s = load_scenario(good);
  ASSERT_TRUE(s.trace_file);
  EXPECT_EQ(s.trace_file->submit_count(), 2u);
  fs::remove(good);
  const std::string bad = write("bad.json", R"({"op":"submit_next_level","task":"b","callable":"q","worker":0})");
  try {
    (void)load_scenario(bad);
    ADD_FAILURE() << "loaded";
  } catch (const ScenarioError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("trace[1]"), std::string::npos) << what;
    EXPECT_EQ(what.find("256 MiB"), std::string::npos) << what;
  }
  // Read whole on request, the same file is refused by its size.
  try {
    (void)load_scenario(bad, {}, TraceRead::kFull);
    ADD_FAILURE() << "loaded";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("more than the limit of 268435456 bytes (256 MiB) for a file read whole"),
              std::string::npos)
        << e.what();
  }
}

TEST(StreamedLoad, FullReadOnRequest) {
  const std::string f = DIRSCHED_SOURCE_DIR "/scenarios/quick-tour.json";
  EXPECT_TRUE(load_scenario(f).trace_file);
  EXPECT_FALSE(load_scenario(f, {}, TraceRead::kFull).trace_file);
  ::setenv("DIRSCHED_TRACE_READ", "full", 1);
  EXPECT_FALSE(load_scenario(f).trace_file);
  ::unsetenv("DIRSCHED_TRACE_READ");
}

}  // namespace
}  // namespace dirsched
