// `dirsched run --outputs strace`: a run written back in the runtime's [STRACE] host-log grammar
// (strace.log), so that the runtime's own tools draw a simulated run beside a real one and
// `dirsched import strace` reads it back (../shared/docs/strace-import.md).
#pragma once

#include <string>

#include "dirsched/scenario.hpp"

namespace dirsched {

// The run's events.jsonl as scheduler spans of one `node` process (pid 1): a graph_build per run, a
// submit per NEXT_LEVEL task, a dispatch and a complete per member, a post_fence_retirement at each
// run's end, in end order, with the runtime's `role` attributes and its dispatch_id (counted per worker
// from 1) and `inv` (the run_id). Tasks named r<run>.t<slot> (an import's names) keep their run and slot;
// others take run_id 1, 2, ... for the scenario's runs in the order they start (1 without runs) and
// slot = their submit order within the run.
// Callables named h<hex> keep their hid; others get the FNV-1a 64 hash of their name. Times are
// ns = round(t_s * 1e9) after a fixed monotonic origin.
std::string strace_log_from_events(const std::string& events_jsonl, const Scenario& scenario);

}  // namespace dirsched
