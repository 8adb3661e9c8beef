// Exhaustive exploration of a scenario on the core alone (no SimGrid, no durations).
//
// Member durations are abstracted away: from every state, any running member may end next (with
// `failures`, it may also fail), and the orchestrator's next op may come before or after any of those
// completions. A batch stays atomic, a drain waits until every submitted task is terminal, and sleep
// and at_s only order ops. Each transition is followed by the scheduler's iterations, as in a run.
// Equal states merge: a state is the core's full dump plus the replay position, so the explored graph
// is a DAG (every transition either runs an op or ends a member). Every state is checked by the
// InvariantChecker. For every group, dynamic programming over that DAG gives the most and the fewest
// singles that can be dispatched on its targets between its READY and its launch, with a witness.
// The core runs under the scenario's policy (scheduler.policy or --policy), and every group also
// says whether it can stall (can_stall): whether some reachable state has the policy's stall
// condition open for it (seed: it is the blocked head; head_reservation: it is the blocked head and
// holds an idle target with queued singles). Time is not modelled: "could be reported", not when.
//
// What it does not prove: completions that coincide in time are explored one at a time, not as one
// simultaneous batch; durations, transfer costs and faults are not modelled; past max_states the
// result covers only the states visited (`stopped_early`).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>

#include "dirsched/scenario.hpp"

namespace dirsched {

struct ExploreOptions {
  std::size_t max_states = 1000000;
  bool failures = false;
};

nlohmann::ordered_json explore(const Scenario& scenario, const ExploreOptions& options);

}  // namespace dirsched
