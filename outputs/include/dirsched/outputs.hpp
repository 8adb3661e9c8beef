// Run outputs, shared by every engine: the event log (events.jsonl), summary.json, tasks.csv,
// metrics.json and the `expect` check.
//
// An engine (the SimGrid driver, the threads runtime, a test) fills a Run: the core it drove, the
// Recorder that observed it, the event log and the RunResult. Everything here reads only that, so two
// engines that produce the same events write the same files through the same code. summary.json and
// tasks.csv hold simulated (or engine-clock) quantities only, so the same scenario and seed give
// byte-identical files; self-measurements (wall time, peak RSS) go to metrics.json.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "dirsched/invariants.hpp"
#include "dirsched/observer.hpp"
#include "dirsched/record/event.hpp"
#include "dirsched/record/summary.hpp"
#include "dirsched/recorder.hpp"
#include "dirsched/replay.hpp"
#include "dirsched/scenario.hpp"
#include "dirsched/scheduler.hpp"
#include "dirsched/record/task_row.hpp"
#include "dirsched/waits.hpp"

namespace dirsched {

struct RunResult {
  std::string outcome;  // COMPLETED, FAILED, STUCK, or VIOLATION (an invariant broke: see `violation`)
  std::string error;    // the run's first error, when FAILED
  double makespan_s = 0;
  std::uint64_t seed = 0;
  std::uint64_t dispatches = 0;
  // "task@worker", "task[m]@worker", "task@subN": kept only when an expect block checks the order.
  std::vector<std::string> dispatch_order;
  // staging (#1583): the dispatches that were stagings, in order, as labels (few: at most one per run),
  // and each staged task's staging time (tasks.csv's `staged`). Drivers fill both with note_staging().
  std::vector<std::string> staged;
  std::map<std::string, double> staged_at;
  std::vector<Stuck> stuck;
  std::optional<Violation> violation;
  std::vector<std::string> host_of_worker;  // NEXT_LEVEL, registration order
  double wall_s = 0;
  // Which engine ran it: "sim" (SimGrid, times in scenario seconds; time_scale 1) or "threads" (real
  // threads, times in wall seconds, each scenario second taking time_scale of them).
  std::string engine = "sim";
  double time_scale = 1;
  // The live window at its widest, as RunOutputs saw it at every submit, reject and not_submitted:
  // the task entries the core held (Scheduler::held_tasks) and the records the Recorder held
  // (held_records). With reclamation they follow the live window, without it the trace (metrics.json).
  std::size_t peak_core_tasks = 0;
  std::size_t peak_records = 0;
  // The first kFirstRejections rejected submits in event order, (task, "code: message"), and how many
  // there were: what `run` names on stderr when it exits 1 (records may retire before the end).
  static constexpr std::size_t kFirstRejections = 8;
  std::vector<std::pair<std::string, std::string>> first_rejections;
  std::size_t rejections = 0;
};

// Everything one run produced: the core and its recorder (for queries), the event log, the result.
struct Run {
  explicit Run(const Scenario& s) : scenario(s) {}
  const Scenario& scenario;
  std::unique_ptr<Scheduler> core;
  std::unique_ptr<Recorder> recorder;
  std::unique_ptr<WaitAttribution> waits;  // why each task waited (waits.hpp); may be null
  std::string events_jsonl;  // events.jsonl, one line per event (empty when streamed to events_file)
  std::string events_file;   // where the log was streamed, if it was
  std::string tasks_file;    // where tasks.csv was streamed as tasks retired, if it was
  RunResult result;
};

// tasks.csv, one row per Recorder record in record order. The callable of a task comes from the core
// (by TaskId), of a rejected or never-submitted op from the scenario's trace.
class TasksCsv {
 public:
  explicit TasksCsv(const Run& run);
  // The file's columns (record/task_row.hpp): the wait causes always; `run` when the trace declares
  // runs; `staged` when staging can act.
  const record::TaskColumns& columns() const { return columns_; }
  void append_row(const TaskRecord& r, std::string& out);
  // Take each row's wait causes from the Run's WaitAttribution (streamed rows: each is written once).
  void set_take_waits(bool take) { take_waits_ = take; }

 private:
  bool take_waits_ = false;
  const std::string& callable_of(const TaskRecord& r);
  const Run& run_;
  std::map<std::string, std::string> by_name_;  // built at the first op without a TaskId
  bool by_name_built_ = false;
  record::TaskColumns columns_;
  record::TaskRow row_;
};

// staging (#1583) can act in this scenario: the switch is on and not inert (tasks.csv's `staged`).
bool staging_live(const Scenario& scenario);

// tasks.csv written as the Recorder retires records (Recorder::set_on_retire), through a 1 MiB buffer
// into `path` (a registered temporary, see output_folder.hpp), so no row waits in memory for the end of
// the run. close() writes what is left and throws WriteError naming `path` when any write failed.
class TasksCsvWriter {
 public:
  TasksCsvWriter(const Run& run, const std::string& path);
  ~TasksCsvWriter();
  TasksCsvWriter(const TasksCsvWriter&) = delete;
  TasksCsvWriter& operator=(const TasksCsvWriter&) = delete;
  void write(const TaskRecord& r);
  void close();

 private:
  void spill();
  TasksCsv csv_;
  std::string path_;
  std::string buffer_;
  std::FILE* file_ = nullptr;
  int err_ = 0;  // errno of the first failed open or write (reported by close())
  bool closed_ = false;
};

// events.jsonl as an observer: each event becomes one line, into `out` or, when `path` is not empty,
// through a 1 MiB buffered file opened at the first event (a registered temporary, see
// output_folder.hpp). `core` is read for names when an event is written; it may be set after
// construction. flush() ends the file (an empty one when there was no event) and throws WriteError
// naming the path when any write, the flush or the close failed.
class EventLog : public Observer {
 public:
  EventLog(std::string& out, const std::string& path, const Scheduler*& core)
      : out_(out), path_(path), core_(core) {}
  ~EventLog() override;
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;
  void flush();
  void on_event(const Event& e) override;

 private:
  void write_line();
  void open_file();
  void note_error(int err);
  std::string& out_;
  std::string path_;
  const Scheduler*& core_;
  std::string line_;
  std::FILE* file_ = nullptr;
  std::string error_;  // why the first write failed
  std::uint64_t seq_ = 0;
};

// What every engine's options say about its outputs: RunOptions (SimGrid), EventRunOptions and
// ThreadsOptions derive from it, and RunOutputs reads it.
struct OutputOptions {
  bool check_invariants = false;  // an InvariantChecker on the event stream; a violation stops the run
  bool record_events = true;      // keep the event log (off when events.jsonl is not written)
  std::string events_path;        // stream the event log to this file instead of memory
  std::string tasks_path;         // write tasks.csv to this file as tasks retire (Run::tasks_file)
  // Keep RunResult::dispatch_order and every Recorder record even when no expect block reads them
  // (bisect compares whole runs).
  bool keep_order_and_records = false;
};

// DIRSCHED_RECLAIM=off keeps every task's slot in the core (tests compare the outputs both ways).
bool reclaim_wanted();

// The outputs' side of a run, one set-up for every engine (docs/performance.md, "What stays per task"),
// built once the engine has made run.core and before the first submit. It makes the Recorder and the
// WaitAttribution and applies the memory rule: the core reclaims ended tasks' slots
// (Scheduler::set_reclaim) unless something asks it about a task after the task's end (an expect block
// or keep_order_and_records, whose Recorder keeps every record, or the invariant checker's dump;
// reclaim_wanted() false); the Recorder drops records as they retire unless an expect block or
// keep_order_and_records needs them; tasks.csv, when options.tasks_path is set, is written there as
// records retire (TasksCsvWriter), and the wait attribution keeps a started task's causes for that row
// only then. Then it attaches the observers, in this order: the event log (none unless
// options.record_events; streamed to options.events_path when set), the wait attribution, the
// recorder, the invariant checker when asked for, and a probe of the live window's widest
// (RunResult::peak_core_tasks, peak_records).
//
// Everything here runs where the core runs (the SimGrid actor, the event loop, the threads runtime's
// scheduler thread): the observers and the retire hook are called from inside the core's calls.
class RunOutputs {
 public:
  RunOutputs(Run& run, const OutputOptions& options);
  ~RunOutputs();  // detach()
  RunOutputs(const RunOutputs&) = delete;
  RunOutputs& operator=(const RunOutputs&) = delete;

  InvariantChecker* checker() const { return checker_.get(); }
  // Fill RunResult::dispatch_order (an expect block reads it, or keep_order_and_records); reserved.
  bool keep_order() const { return keep_order_; }
  // The end of a run that went to its end: flushes the event log, detaches the observers, retires the
  // Recorder's remaining records (their rows to tasks.csv) and closes tasks.csv; sets Run::events_file
  // and Run::tasks_file. Throws WriteError naming the temporary file when a write failed.
  void finish();
  // The observers and the retire hook off the core and the Recorder (before an engine throws, and at
  // destruction): nothing the engine still does reaches a file.
  void detach();

 private:
  Run& run_;
  const Scheduler* core_view_;  // what the event log reads names from
  EventLog log_;
  ObserverList observers_;
  std::unique_ptr<InvariantChecker> checker_;
  std::unique_ptr<TasksCsvWriter> tasks_csv_;
  std::string events_path_, tasks_path_;
  bool keep_order_ = false;
  // The last observer: RunResult::peak_core_tasks and peak_records, where the window can widen.
  struct WindowProbe : Observer {
    explicit WindowProbe(Run& r) : run(r) {}
    void on_event(const Event& e) override;
    Run& run;
  } probe_;
};

// The end of a run, the same for every engine: the ops never reached are recorded not submitted
// (replay.unwind_rest()), the stuck list and the checker's final check are taken, and the outcome,
// error and makespan are set from the core, the replay and the recorder. wall_s is the engine's.
void finish_result(Run& run, Replay& replay, InvariantChecker* checker);
// A declared run's outcome at the end: FAILED (a member failed or its callback raised), else COMPLETED
// when terminal, else STUCK (it cannot progress, or the replay never reached it).
std::string run_outcome(const Scheduler& core, RunId run);
// "task@worker", "task[m]@worker", "task@subN": one entry of RunResult::dispatch_order.
std::string dispatch_label(const Scheduler& core, const Dispatch& d);
// A driver carried out a staging (Dispatch::prepare_only) at the core's time: RunResult::staged, staged_at.
void note_staging(Run& run, const Dispatch& d);

// metrics.json: self-measurements (wall time of the command and of each phase, peak RSS, event rate).
std::string metrics_json(const Run& run);

// Output files. `outputs` selects among "events", "summary", "tasks", "metrics" (empty: all);
// `extra` are more files (the pictures) written alongside, with the `.dirsched-run` marker last.
// `dir` must pass check_output_folder (OutputRefused otherwise); everything goes to a temporary
// folder beside it that replaces `dir` at the end (replace_folder), so a run never leaves a
// half-written folder; a failed write throws WriteError and leaves nothing.
void write_outputs(const Run& run, const std::string& dir, const std::vector<std::string>& outputs,
                   const std::map<std::string, std::string>& extra = {},
                   const std::vector<std::string>& notes = {});
// `notes` (e.g. a picture left out for size) go to the summary's "notes" list when there are any.
// summarise() is the typed record (record/summary.hpp) that pictures drawn in the same process read;
// summary_json() its text.
record::Summary summarise(const Run& run, const std::vector<std::string>& notes = {});
std::string summary_json(const Run& run, const std::vector<std::string>& notes = {});
std::string tasks_csv(const Run& run);

// Shortest text that reads back as the same double ("0.001", "1e-09"): stable across runs.
std::string format_number(double v);
// For people: seconds and counts with six significant digits after rounding away binary noise
// ("0.433", not "0.43300000000000033"); percentages with one decimal ("48.8"). Never in events.jsonl.
std::string human_number(double v);
std::string human_percent(double fraction);  // 0.487805 -> "48.8"
// The version of this build (the CMake project version), as `dirsched --version` prints it.
const char* dirsched_version();
// The sweep variant index of the scenario's assigned values (variables in name order, the last one
// varying fastest), or nothing when it has no vars or a value is not one of its candidates.
std::optional<std::size_t> variant_index(const Scenario& s);
// Counts of tasks by final state, for the one-line report of a run ("3 of 60 tasks REJECTED").
std::string outcome_line(const Run& run);

// Reads and parses a JSON file a run wrote (summary.json, variant.json, a marker) with the loader's
// strict reader (json_reader.hpp: duplicate keys, depth, UTF-8, numbers, size). Throws
// BadInput "PATH: not valid JSON at line L, column C: REASON", "PATH: JSON.PATH: REASON" or
// "PATH: cannot open the file: ...".
nlohmann::json read_output_json(const std::string& path);
// summary.json read as strictly (read_output_json's checks), then decoded into the typed record: throws
// record::RecordError "PATH: JSON.PATH: expected ...", or for a newer schema.
record::Summary read_summary(const std::string& path);
// DIR/summary.json of a run folder that a reader (compare, fidelity) was given: BadInput "DIR: no such
// run folder" or "DIR: not a folder (...)" before anything is read, then read_summary's errors.
record::Summary read_run_folder_summary(const std::string& dir);
// The whole of a file a run wrote (events.jsonl): a regular file only, never a FIFO, a device or a
// folder, which are refused (BadInput "PATH: not a regular file ...") without blocking.
std::string read_run_file(const std::string& path);
// What compare and fidelity read of a run's events.jsonl (they keep every dispatch, so their memory
// follows the file): past it the folder is refused (docs/limits.md). render takes its streaming,
// aggregated path instead.
inline constexpr std::uint64_t kMaxComparedEventsBytes = std::uint64_t{256} << 20;  // 256 MiB
// BadInput "PATH: N MiB of events, over the 256 MiB that WHAT reads ..." when the regular file at `path`
// is larger than `max_bytes`; nothing when it is smaller or absent (the reader then says why).
void refuse_large_run_file(const std::string& path, std::uint64_t max_bytes, const std::string& what);
// One line of a JSON Lines file a run wrote (events.jsonl), as strictly: BadInput
// "PATH line N: REASON" (a syntax fault "at column C" of that line).
nlohmann::json parse_output_line(std::string_view line, const std::string& path, std::size_t line_no);
// One line of events.jsonl, parsed as strictly and decoded into the typed record (record/event.hpp):
// record::RecordError "PATH line N: FIELD: expected ..." for a field of the wrong type.
record::Event parse_event_line(std::string_view line, const std::string& path, std::size_t line_no);
// Every line of `text` (the file at `path`) through parse_output_line: the first bad line throws.
void check_output_jsonl(std::string_view text, const std::string& path);

// A JSON string literal for `s`, quotes included.
std::string json_string(std::string_view s);

// Whether the scenario's `expect` block reads RunResult::dispatch_order (dispatch_order,
// dispatch_order_per_worker, order): engines fill that list only then, since it costs a string a dispatch.
bool expect_reads_dispatch_order(const Scenario& scenario);

// Evaluates the scenario's `expect` block; returns the first divergence, or nothing when it holds.
std::optional<std::string> check_expectations(const Run& run);

}  // namespace dirsched
