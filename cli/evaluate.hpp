// The evaluation pool of replicated sweeps and `optimize`: each evaluation (a loaded scenario and a
// seed) runs with no event log, no tasks.csv and no output folder, and gives only the summary metrics.
// When every evaluation has durations only and no --cfg is given, the event engine (eventsim/) runs
// them: in this process, or with jobs > 1 in that many forked children, each taking a contiguous share.
// Otherwise each runs on SimGrid in a child forked from this process (SimGrid allows one engine per
// process), at most `jobs` at once, sending back its row (sweep_row_json) through a pipe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dirsched/scenario.hpp"
#include "dirsched/sweep.hpp"

namespace dirsched {

struct Evaluation {
  const Scenario* scenario = nullptr;
  std::uint64_t seed = 0;
  Variant variant;
};

// "cannot WHAT: why" for a call the system refused (errno), naming the limit it met (ulimit -n for
// EMFILE, ulimit -u for EAGAIN) so that the user knows which to raise.
std::string system_refusal(const std::string& what);

// Runs work(i) for every i below `count`, each in a child forked from this process, at most `jobs` at
// once; returns what each returned, in order. who(i) names evaluation i in messages. The first child
// that threw stops the others from starting, and its error is rethrown here as a cli::ClassifiedError
// of the kind it had in the child (a child that died without a report is an internal error).
std::vector<std::string> run_in_children(std::size_t count, unsigned jobs,
                                         const std::function<std::string(std::size_t)>& work,
                                         const std::function<std::string(std::size_t)>& who);

// Whether evaluate_all runs `evals` on the event engine (durations only, no --cfg), else on SimGrid.
bool on_event_engine(const std::vector<Evaluation>& evals, const std::vector<std::string>& simgrid_args);

// One row per evaluation, in order. Throws cli::ClassifiedError (the kind the error had) naming the
// variant and seed of an evaluation that failed (its error, or how its process ended).
std::vector<SweepRow> evaluate_all(const std::vector<Evaluation>& evals, unsigned jobs,
                                   const std::vector<std::string>& simgrid_args);

}  // namespace dirsched
