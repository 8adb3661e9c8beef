// How a sweep is ranked, shared by `sweep` (its --collect, and a local sweep at its end) and
// `optimize`: the ranking flags, the replicates a replicated sweep writes, and --collect itself.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "dirsched/scenario.hpp"
#include "dirsched/sweep.hpp"

namespace dirsched::cli {

// How a sweep ranks: the objective (after clean) and the two metrics of the Pareto view.
struct RankChoice {
  std::vector<std::size_t> objective = default_objective();
  std::size_t pareto_a = metric::kMakespan, pareto_b = metric::kGroupWaitMax;
  bool pareto_given = false;
};

// --objective and --pareto (either may be empty: not given) into `choice`; false after a message
// ("dirsched VERB: --objective: ...") when one is refused.
bool parse_rank_choice(const std::string& objective, const std::string& pareto, RankChoice& choice,
                       const char* verb = "sweep");

// Replicates 1..N-1 of every variant (replicate 0 is its run folder), in the evaluation pool (summary
// metrics only): replicate r runs with seed + r, the same seeds for every variant (common random
// numbers). Writes DIR/replicates.jsonl, which --collect ranks with. LOADED[i] is VARIANTS[i]'s scenario;
// all share one seed (the callers refuse variants of different seeds).
void write_replicates(const std::string& dir, const std::vector<Scenario>& loaded, const std::vector<Variant>& variants,
                      std::size_t replicates, unsigned jobs, const std::vector<std::string>& sim_args);

// `sweep --collect DIR`: sweep.csv, the summary, ranking.json and the pictures from DIR's variant
// folders (and its replicates.jsonl), the ranking on stdout.
int cmd_collect(const std::string& dir, const RankChoice& choice = {});

}  // namespace dirsched::cli
