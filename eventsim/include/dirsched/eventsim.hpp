// The event engine (`run --engine event`, and every evaluation of `sweep --replicates` and `optimize`
// that it can take): the SimGrid driver's loop and instant rules (docs/instant-rules.md) on a plain
// event queue of member ends, ops and stall deadlines, for scenarios whose only costs are member
// durations. Simulated time, the same seeded draws, the same events: on such a scenario its
// events.jsonl and tasks.csv are byte-identical to SimGrid's and its summary.json differs only in
// `engine` (checked on every shipped scenario by tests/sim/event_engine_test.sh). Without SimGrid there
// is no engine to start and no process to fork: an evaluation costs the core's work alone.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "dirsched/outputs.hpp"
#include "dirsched/scenario.hpp"

namespace dirsched {

// check_invariants, record_events, events_path, tasks_path, keep_order_and_records: OutputOptions'.
struct EventRunOptions : OutputOptions {
  std::optional<std::uint64_t> seed;  // overrides the scenario's
};

// Why the event engine cannot run `scenario` (its JSON path and what needs SimGrid), or nothing when it
// can: a cost in flops, input or output bytes, a collective, a fault, a scheduler cost, or a platform
// file (whose hosts only SimGrid checks).
std::optional<std::string> event_engine_refusal(const Scenario& scenario);

// Runs the scenario to the end (engine "event"). Throws ScenarioError naming event_engine_refusal()'s
// path for a scenario it cannot run, and for a clock past 2^32 s.
std::unique_ptr<Run> run_events(const Scenario& scenario, const EventRunOptions& options);

}  // namespace dirsched
