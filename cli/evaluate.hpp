// The evaluation pool of replicated sweeps and `optimize`: each evaluation (a loaded scenario and a
// seed) runs in a child forked from this process (SimGrid allows one engine per process), at most
// `jobs` at once, with no event log, no tasks.csv and no output folder; the child sends back only the
// summary metrics (sweep_row_json) through a pipe.
#pragma once

#include <cstdint>
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

// One row per evaluation, in order. Throws std::runtime_error naming the variant and seed of an
// evaluation that failed (its error, or how its process ended).
std::vector<SweepRow> evaluate_all(const std::vector<Evaluation>& evals, unsigned jobs,
                                   const std::vector<std::string>& simgrid_args);

}  // namespace dirsched
