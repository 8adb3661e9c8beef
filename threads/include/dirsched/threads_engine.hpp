// The threads engine: a scenario run for real on the Runtime (runtime.hpp), written through the same
// outputs as a SimGrid run.
//
// Each member sleeps its duration (the op's duration_s, else the callable's, times the seeded jitter
// drawn in dispatch order as the SimGrid driver draws it) times `time_scale` of wall time on its
// worker's thread, then succeeds, or fails where the scenario says so. The scenario's replay (Replay:
// the same cursor the SimGrid driver and the explorer use) runs on the scheduler thread; its `at_s`
// and `sleep` are wall-clock seconds times `time_scale`, and so is the core's stall_report_s. Event times
// (t_s) and the makespan are wall-clock seconds since the run started, so two runs of one scenario give the
// same dispatch order when its completions are well apart, but never byte-identical times.
//
// What only a simulated platform has is refused before anything runs, as a ScenarioError naming the
// key: host and link faults, flops, input/output bytes, and the simulated scheduler costs.
//
// Memory follows the live window as on the other engines (RunOutputs, outputs.hpp): the core reclaims
// ended tasks (not with an expect block, --check-invariants, keep_order_and_records or
// DIRSCHED_RECLAIM=off), the Recorder drops retired records and tasks.csv goes to tasks_path as they
// retire. All of it runs on the runtime's scheduler thread; the worker threads never read the core.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "dirsched/outputs.hpp"
#include "dirsched/scenario.hpp"

namespace dirsched {

// check_invariants, record_events, events_path, tasks_path, keep_order_and_records: OutputOptions'
// (outputs.hpp), applied as on the other engines (RunOutputs: the core reclaims ended tasks, records
// retire into tasks.csv).
struct ThreadsOptions : OutputOptions {
  double time_scale = 1;              // wall seconds per scenario second (>= 0)
  std::optional<std::uint64_t> seed;  // overrides the scenario's (jitter draws)
};

// Throws ScenarioError (file and JSON path) for the first thing the threads engine cannot run.
void check_threads_engine(const Scenario& scenario);

// Runs the scenario to the end on threads. Throws ScenarioError as check_threads_engine() does.
std::unique_ptr<Run> run_threads(const Scenario& scenario, const ThreadsOptions& options);

}  // namespace dirsched
