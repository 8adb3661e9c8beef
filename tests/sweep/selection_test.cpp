// Kim and Nelson's KN (dirsched/selection.hpp) on cases whose truth is known exactly: normal samples
// with the best's mean delta below every other (the slippage configuration, the hardest for a procedure
// of this guarantee), seeded; the probability of correct selection counted over many repetitions.
#include <gtest/gtest.h>

#include <cstdio>

#include "dirsched/error.hpp"
#include "dirsched/selection.hpp"
#include "dirsched/stats.hpp"

namespace dirsched {
namespace {

// Variant i's replicate r: mean[i] + sd[i] * noise, with a common part per replicate when `crn`.
Sampler normal_sampler(std::vector<double> mean, std::vector<double> sd, bool crn, std::uint64_t seed) {
  return [=](const std::vector<std::pair<std::size_t, std::size_t>>& asks) {
    std::vector<double> out;
    for (const auto& [i, r] : asks) {
      stats::SplitMix own{stats::mix_seed(seed, i + 1, r)}, common{stats::mix_seed(seed, 0, r)};
      const double z = crn ? 0.7 * common.normal() + 0.714 * own.normal() : own.normal();
      out.push_back(mean[i] + sd[i] * z);
    }
    return out;
  };
}

struct Rate {
  double pcs = 0, runs = 0, fixed_runs = 0;
};

Rate measure(std::size_t k, double delta, const std::vector<double>& sd, bool crn, std::size_t reps) {
  Rate rate;
  std::vector<double> mean(k, delta);
  mean[2] = 0;  // the best, in the middle
  for (std::size_t m = 0; m < reps; ++m) {
    const SelectionResult r = select_best(k, {delta, 0.95, 10}, normal_sampler(mean, sd, crn, 1000 + m));
    rate.pcs += r.best == 2;
    rate.runs += static_cast<double>(r.runs);
    rate.fixed_runs += static_cast<double>(r.fixed_runs);
  }
  rate.pcs /= static_cast<double>(reps), rate.runs /= static_cast<double>(reps), rate.fixed_runs /= static_cast<double>(reps);
  return rate;
}

TEST(SelectBest, KNSelectsTheBestWithAtLeastTheAskedProbability) {
  const Rate equal = measure(5, 0.5, std::vector<double>(5, 1.0), false, 2000);
  const Rate unequal = measure(5, 0.5, {1, 2, 1, 0.5, 1.5}, false, 2000);
  const Rate crn = measure(5, 0.5, std::vector<double>(5, 1.0), true, 2000);
  std::printf("PCS equal variances %.3f (runs %.0f, fixed-N %.0f); unequal %.3f (%.0f, %.0f); CRN %.3f (%.0f, %.0f)\n",
              equal.pcs, equal.runs, equal.fixed_runs, unequal.pcs, unequal.runs, unequal.fixed_runs, crn.pcs, crn.runs,
              crn.fixed_runs);
  EXPECT_GE(equal.pcs, 0.95);
  EXPECT_GE(unequal.pcs, 0.95);
  EXPECT_GE(crn.pcs, 0.95);
  EXPECT_LT(equal.runs, equal.fixed_runs);  // the point of a sequential procedure
}

TEST(SelectBest, DropsAFarWorseVariantAfterTheFirstStage) {
  const SelectionResult r = select_best(3, {0.5, 0.95, 10}, normal_sampler({0, 0.1, 50}, {1, 1, 1}, false, 3));
  EXPECT_EQ(r.replicates[2], 10u);
  EXPECT_GT(r.replicates[0], 10u);
  EXPECT_EQ(r.runs, r.replicates[0] + r.replicates[1] + r.replicates[2]);
  EXPECT_THROW(select_best(3, {0, 0.95, 10}, normal_sampler({0, 0, 0}, {1, 1, 1}, false, 3)), InternalError);
}

}  // namespace
}  // namespace dirsched
