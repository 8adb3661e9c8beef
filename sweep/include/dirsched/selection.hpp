// Selection of the best variant with a stated probability (sweep --select-best): the fully sequential
// procedure KN of Kim and Nelson (2001, "A fully sequential procedure for indifference-zone selection in
// simulation", ACM TOMACS 11(3), 251-273). After a first stage of n0 replicates of every variant it adds
// one replicate at a time to the variants still in contention, and drops a variant as soon as its mean
// is worse than another's by more than a shrinking allowance. Whenever the best (smallest mean) is
// better than every other by at least `delta` (the indifference zone), it is the one selected with
// probability at least `pcs`, with unknown and unequal variances and with common random numbers (the
// variances are those of the paired differences).
#pragma once

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

namespace dirsched {

struct SelectionConfig {
  double delta = 0;         // the indifference zone, in the unit of the values
  double pcs = 0.95;        // the probability of correct selection asked for (1/k < pcs < 1)
  std::size_t first_stage = 10;  // n0 >= 2
};

struct SelectionResult {
  std::size_t best = 0;                  // position in 0..k-1
  std::vector<std::size_t> replicates;   // per variant, the replicates it ran
  std::size_t runs = 0;                  // their sum
  double eta = 0, h2 = 0;                // KN's constants
  // The fixed-N design of the same guarantee from the same first stage: Nelson and Matejcik's (1995,
  // "Using common random numbers for indifference-zone selection and multiple comparisons in
  // simulation", Management Science 41(12)) Bonferroni procedure: every variant N = max(n0,
  // ceil((t S / delta)^2)) replicates, t = t(1 - (1 - pcs)/(k - 1), n0 - 1), S the largest first-stage
  // standard deviation of a pairwise difference.
  std::size_t fixed_n = 0, fixed_runs = 0;
};

// `sample(asks)`: for each (variant, replicate) asked, the value of that replicate (smaller better);
// replicate r of every variant must share its random numbers (common random numbers) or be independent.
// Asks come in batches: the first stage, then one replicate of each surviving variant per stage.
using Sampler = std::function<std::vector<double>(const std::vector<std::pair<std::size_t, std::size_t>>& asks)>;
SelectionResult select_best(std::size_t variants, const SelectionConfig& config, const Sampler& sample);

}  // namespace dirsched
