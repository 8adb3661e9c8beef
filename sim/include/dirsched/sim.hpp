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

#include "dirsched/outputs.hpp"
#include "dirsched/scenario.hpp"

namespace dirsched {

// What the outputs need (check_invariants, record_events, events_path, tasks_path,
// keep_order_and_records) is OutputOptions' (outputs.hpp).
struct RunOptions : OutputOptions {
  std::optional<std::uint64_t> seed;      // overrides the scenario's
  std::vector<std::string> simgrid_args;  // e.g. "--cfg=network/model:CM02"
  bool progress = false;                  // a progress line on stderr
};

// Runs the scenario to the end. Throws ScenarioError for what only the platform can tell (a host
// that does not exist), before the simulation starts.
std::unique_ptr<Run> simulate(const Scenario& scenario, const RunOptions& options);

}  // namespace dirsched
