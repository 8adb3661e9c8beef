// The SimGrid driver: replays a scenario against a simulated platform with the production core.
//
// It adds no scheduling logic: every decision comes from dirsched::Scheduler. The driver carries
// the decisions out on SimGrid (comms for input and output bytes, execs for flops, timers for fixed
// durations) and feeds completions back.
//
// One SimGrid actor, on the scheduler's host, runs both the orchestrator's replay cursor and the
// scheduler loop. Keeping them in one actor is what makes the instant order of the contract notes
// exact instead of an accident of SimGrid's actor wake-up order. At each simulated instant:
//   1. faults due now turn hosts or links off; members running on an off host fail now;
//   2. completions due now (timers, finished activities, failed transfers) are reported in the order
//      their members were dispatched, then the scheduler runs the iterations of the instant;
//   3. orchestrator ops due now run one at a time, in trace order, each followed by the iterations
//      of the instant (a batch submits all its tasks first).
// A member with nothing to move and no cost completes at once: its completion is reported during the
// same instant and applied by the next iteration.
//
// SimGrid's Engine can exist once per process, so one Simulation runs per process (the CLI forks
// for `check` over several files).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dirsched/invariants.hpp"
#include "dirsched/recorder.hpp"
#include "dirsched/scenario.hpp"
#include "dirsched/scheduler.hpp"

namespace dirsched {

struct RunOptions {
  std::optional<std::uint64_t> seed;      // overrides the scenario's
  std::vector<std::string> simgrid_args;  // e.g. "--cfg=network/model:CM02"
  bool progress = false;                  // a progress line on stderr
  bool check_invariants = false;  // an InvariantChecker on the event stream; a violation stops the run
  bool record_events = true;      // keep the event log (off when events.jsonl is not written)
  std::string events_path;        // stream the event log to this file instead of memory
};

struct RunResult {
  std::string outcome;  // COMPLETED, FAILED, STUCK, or VIOLATION (an invariant broke: see `violation`)
  std::string error;    // the run's first error, when FAILED
  double makespan_s = 0;
  std::uint64_t seed = 0;
  std::vector<std::string> dispatch_order;  // "task@worker", "task[m]@worker", "task@subN"
  std::vector<Stuck> stuck;
  std::optional<Violation> violation;
  std::vector<std::string> host_of_worker;  // NEXT_LEVEL, registration order
  double wall_s = 0;
};

// Everything one run produced: the core and its recorder (for queries), the event log, the result.
struct Run {
  explicit Run(const Scenario& s) : scenario(s) {}
  const Scenario& scenario;
  std::unique_ptr<Scheduler> core;
  std::unique_ptr<Recorder> recorder;
  std::string events_jsonl;  // events.jsonl, one line per event (empty when streamed to events_file)
  std::string events_file;   // where the log was streamed (RunOptions::events_path), if it was
  RunResult result;
};

// Runs the scenario to the end. Throws ScenarioError for what only the platform can tell (a host
// that does not exist), before the simulation starts.
std::unique_ptr<Run> simulate(const Scenario& scenario, const RunOptions& options);

// Output files. `outputs` selects among "events", "summary", "tasks", "metrics" (empty: all);
// `extra` are more files (the pictures) written alongside. Everything goes to a temporary folder
// beside `dir`, moved in place at the end, so a run never leaves a half-written folder.
void write_outputs(const Run& run, const std::string& dir, const std::vector<std::string>& outputs,
                   const std::map<std::string, std::string>& extra = {},
                   const std::vector<std::string>& notes = {});
// `notes` (e.g. a picture left out for size) go to the summary's "notes" list when there are any.
std::string summary_json(const Run& run, const std::vector<std::string>& notes = {});
std::string tasks_csv(const Run& run);

// Shortest text that reads back as the same double ("0.001", "1e-09"): stable across runs.
std::string format_number(double v);

// Evaluates the scenario's `expect` block; returns the first divergence, or nothing when it holds.
std::optional<std::string> check_expectations(const Run& run);

}  // namespace dirsched
