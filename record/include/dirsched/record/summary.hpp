// summary.json as a typed, versioned record: the one model of a run's summary and its only JSON codec.
//
// Every engine (SimGrid, event, threads) fills a Summary and encodes it; the import of a real run does
// the same; every reader (sweep, compare, fidelity, the pictures, the report) decodes the file into one
// (or, drawing the run just made, takes the Summary in process). Python reads the same file and checks
// the same `schema` number (python/dirsched/results.py).
//
// Schema history (docs/outputs.md, "summary.json"):
//   0  written before summaries named a schema (dirsched up to this change): read as far as its fields
//      go, every missing one at its default;
//   1  the field "schema" first; otherwise the fields of 0.
// A summary with a schema above kSummarySchema is refused: its fields may no longer mean what this build
// reads them as.
//
// Decoding is strict about types (every error names the file and the JSON path) and lenient about
// presence: a field that is absent takes its default, as summaries from older builds and from the
// import leave out what they do not have (the import writes no switches, waits or critical path).
// Encoding writes the fields in the one order below and leaves out exactly what is absent, so that
// encode(decode(file)) == file for every summary this build writes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "dirsched/error.hpp"

namespace dirsched::record {

inline constexpr int kSummarySchema = 1;

// A summary that cannot be read: "FILE: JSON.PATH: expected ..." (or the schema's refusal).
class RecordError : public BadInput {
 public:
  using BadInput::BadInput;
};

// Which engine produced the run: SimGrid, the event engine (SimGrid's rules on a plain event queue; the
// same clock), real threads (wall seconds, scaled), or a real run imported from its [STRACE] log.
enum class Engine { kSim, kEvent, kThreads, kStrace };
std::string_view to_string(Engine e);
std::optional<Engine> engine_from(std::string_view s);
// Whether two engines' times are on one clock (sim and event are; threads and strace are each their own).
bool same_clock(Engine a, Engine b);

// How a run (or one declared run of a trace) ended.
enum class Outcome { kCompleted, kFailed, kStuck, kViolation, kTruncated };
std::string_view to_string(Outcome o);
std::optional<Outcome> outcome_from(std::string_view s);

// Count, percentiles and mean of a set of waits (the recorder's WaitStats, as written).
struct WaitStats {
  std::uint64_t count = 0;
  double p50_s = 0, p95_s = 0, max_s = 0, mean_s = 0;
  bool histogram = false;  // past the exact limit the percentiles come from a histogram
};

// One worker's use: a NEXT_LEVEL worker (id) or a SUB worker (kind "sub", name "subN").
struct WorkerUse {
  std::string worker;  // the id as text ("3"), or "subN"
  std::string kind;    // the NEXT_LEVEL kind, or "sub"
  std::string host;
  double busy_s = 0, utilisation = 0;
  bool sub() const { return kind == "sub"; }
};

// One span a READY group waited behind a worker's task (worker set) or a group ahead in the queue.
struct BlockedBy {
  double from_s = 0, to_s = 0;
  std::optional<std::uint64_t> worker;
  std::string task;
  // The holding task's own submit-to-start wait and the cause that took most of it, when it waited.
  std::optional<double> task_wait_s;
  std::optional<std::string> task_cause;  // "producers", "fifo", ... (without _s)
};

struct GroupWait {
  std::string task;
  std::vector<std::uint64_t> workers;
  double ready_s = 0;
  std::optional<double> launched_s;  // never launched: none
  double ready_wait_s = 0, idle_target_s = 0;
  std::int64_t overtakes = 0;
  std::vector<std::string> overtaken_by;
  std::optional<std::vector<BlockedBy>> blocked_by;  // written with wait attribution only
};

// Counts and sums of every group, written when the list above is capped.
struct GroupTotals {
  std::uint64_t count = 0;
  double ready_wait_s = 0, idle_target_s = 0;
  std::int64_t overtakes_max = 0;
};

// A wait split by cause; `causes` holds the non-zero ones as written ("producers_s": 1.5, ...).
struct LongWait {
  std::string task;
  std::vector<std::string> workers;
  double wait_s = 0;
  std::vector<std::pair<std::string, double>> causes;
  std::optional<std::int64_t> behind;  // singles: how many tasks it queued behind
  // Singles: the tasks that ran on its worker while it waited, oldest first (the last 8 when more did).
  std::optional<std::vector<std::string>> ahead;
};

struct CriticalStep {
  std::string task;
  double start_s = 0, end_s = 0;
  std::string why;
  std::optional<std::string> after;
};

// Why tasks waited: totals per cause, the exactness self-check, the longest waits, the critical path.
struct WaitReport {
  std::vector<std::pair<std::string, double>> causes;  // "producers_s": total, in cause order
  std::uint64_t started = 0, exact = 0;
  std::vector<LongWait> longest_single, longest_group;
  std::vector<CriticalStep> critical_path;  // its last kSummaryListCap steps
  std::optional<std::uint64_t> critical_path_omitted;
};

struct Stall {
  std::string event;  // group_stall or reservation_stall
  std::string task;
  double t_s = 0;
  std::vector<std::uint64_t> busy;
  std::optional<std::vector<std::uint64_t>> idle_queued;  // reservation stalls only
  double waited_s = 0;
};

struct StuckTask {
  std::string task, state, reason;
};

// Task counts by final state, in the written order (every counted state, even at 0), then the total.
struct TaskCounts {
  std::vector<std::pair<std::string, std::uint64_t>> by_state;
  std::uint64_t total = 0;
  std::uint64_t operator[](std::string_view state) const;  // 0 when not listed
};

// One declared run of a trace (the runtime's Worker.run()).
struct RunRow {
  std::string run;
  Outcome outcome = Outcome::kCompleted;
  std::optional<std::string> error;
  bool raised = false;
  std::optional<double> start_s, callback_end_s, end_s;
  TaskCounts tasks;
};

struct Violation {
  std::uint64_t seq = 0;
  std::string rule, detail, dump;
};

struct Summary {
  int schema = kSummarySchema;  // 0: read from a summary that named none
  std::string scenario, description;
  std::uint64_t seed = 0;
  std::string policy = "seed";
  // The effective runtime version, switch by switch (none: a summary from before the version ladder),
  // and the switches on with nothing to act on.
  std::optional<std::vector<std::pair<std::string, bool>>> switches;
  std::optional<std::vector<std::string>> inert;
  // whole_run_fifo on: how many runs may be admitted and not terminal at once (scheduler.pipeline_depth).
  std::optional<std::uint64_t> pipeline_depth;
  std::optional<double> stall_report_s;
  Engine engine = Engine::kSim;
  double time_scale = 1;
  // The variant's values (a scenario with vars), and its sweep index (none: a value off the candidates).
  std::optional<std::vector<std::pair<std::string, nlohmann::ordered_json>>> vars;
  std::optional<std::uint64_t> variant;
  std::string dirsched_version;
  Outcome outcome = Outcome::kCompleted;
  std::optional<std::string> error;
  double makespan_s = 0;
  TaskCounts tasks;
  std::vector<WorkerUse> workers;
  std::vector<std::pair<std::string, WaitStats>> queue_waits;  // "group", "sub", "worker:ID"
  std::vector<GroupWait> groups;
  std::optional<std::uint64_t> groups_omitted;
  std::optional<GroupTotals> group_totals;
  std::optional<WaitReport> waits;
  std::vector<Stall> stalls;
  std::optional<std::vector<std::pair<std::string, std::uint64_t>>> stalls_omitted;  // by event kind
  std::optional<WaitStats> ready_waits_single, ready_waits_group;
  std::vector<StuckTask> stuck;
  std::optional<std::vector<RunRow>> runs;
  std::optional<std::uint64_t> stuck_omitted;
  std::optional<Violation> violation;
  std::uint64_t events = 0;
  std::vector<std::string> notes;

  // Whether the run is a clean COMPLETED: no task failed, poisoned, rejected, or left unfinished.
  bool clean() const;
  // Stall reports of one kind ("group_stall", "reservation_stall"): listed and omitted.
  std::uint64_t stall_count(std::string_view event) const;
};

// summary.json's text: two-space indented, a newline at the end.
std::string encode(const Summary& s);
// A summary from its parsed JSON (ordered, so that lists by name keep the written order); `file` names
// it in errors. Throws RecordError.
Summary decode(const nlohmann::ordered_json& doc, const std::string& file);

}  // namespace dirsched::record
