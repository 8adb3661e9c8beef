// The statistics of the ranking (dirsched/stats.hpp): Student's t against its table, Holm's procedure,
// the family-wise places on variants equal in distribution, and the coverage of the intervals against a
// held-out truth. Every rate here is counted over seeded repetitions: the same bits on every run.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "dirsched/stats.hpp"
#include "dirsched/sweep.hpp"

namespace dirsched {
namespace {

TEST(Stats, StudentTMatchesItsTable) {
  for (std::size_t df : {1, 2, 4, 9, 19, 30}) EXPECT_NEAR(stats::t_quantile(0.975, static_cast<double>(df)), t975(df), 1e-3);
  EXPECT_NEAR(stats::t_cdf(0, 7), 0.5, 1e-12);
  EXPECT_NEAR(stats::t_cdf(2.365, 7), 0.975, 1e-4);
  EXPECT_NEAR(stats::t_cdf(-2.365, 7), 0.025, 1e-4);
  EXPECT_NEAR(stats::t_quantile(0.995, 1e6), 2.5758, 1e-3);  // the normal's
  EXPECT_NEAR(stats::normal_cdf(1.959964), 0.975, 1e-6);
}

TEST(Stats, PairedTestSaysWhatItCannotTest) {
  EXPECT_FALSE(stats::paired_test({0, 0, 0}).testable);
  EXPECT_EQ(stats::paired_test({0, 0, 0}).p, 1);
  EXPECT_EQ(stats::paired_test({2, 2, 2}).p, 0);  // exact: a difference that never varies
  // mean 1, sd 1.1547, n 4: t = 1.732, two-sided p with 3 df = 0.1817 (scipy.stats.ttest_1samp).
  EXPECT_NEAR(stats::paired_test({0, 2, 0, 2}).p, 0.1817, 1e-4);
}

TEST(Stats, HolmStepsDownAndStops) {
  // m = 4: 0.01 <= 0.0125, 0.015 <= 0.0167, 0.03 > 0.025: stop; 0.02 never reached because it is larger.
  EXPECT_EQ(stats::holm({0.03, 0.01, 0.015, 0.2}, 0.05), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(stats::holm({0.001, 0.04}, 0.05), (std::vector<bool>{true, true}));  // 0.04 <= 0.05 / 1
  EXPECT_EQ(stats::holm({}, 0.05), std::vector<bool>{});
}

// Replicates of `variants` variants equal in distribution: per replicate a common part (the paired
// seeds) and per variant noise, on every key of the default objective.
std::vector<std::vector<SweepRow>> equal_variants(std::size_t variants, std::size_t replicates, stats::SplitMix& rng) {
  std::vector<std::vector<SweepRow>> out(variants);
  for (std::size_t r = 0; r < replicates; ++r) {
    const double common = 2 * rng.normal();
    for (std::size_t v = 0; v < variants; ++v) {
      SweepRow row;
      row.variant.index = v;
      row.clean = true;
      row.outcome = "COMPLETED";
      row.makespan_s = 18 + common + rng.normal();
      row.group_idle_target_s = std::abs(rng.normal());
      row.group_wait_max_s = 3 + 0.5 * rng.normal();
      row.single_wait_max_s = 5 + rng.normal();
      row.single_wait_mean_s = 0.2 + 0.02 * rng.normal();
      out[v].push_back(row);
    }
  }
  return out;
}

// Four variants equal in distribution (as a fifth single on any one of four interchangeable chips),
// 20 replicates, 300 seeded sweeps: the family-wise places declare no separation in at least 95% of
// them (7 of 300). Per-pair tests at 5% over the 6 pairs and 5 keys declare one in 213 of the 300.
TEST(FamilyWisePlaces, EqualVariantsShareFirstPlaceInAtLeast95PercentOfSweeps) {
  stats::SplitMix rng{20261207};
  const std::size_t sweeps = 300;
  std::size_t separated = 0;
  for (std::size_t s = 0; s < sweeps; ++s) {
    const Ranking r = rank_replicated(equal_variants(4, 20, rng), default_objective(), {0});
    bool any = false;
    for (const RankedVariant& v : r.order) any |= v.place != 1;
    separated += any;
  }
  std::printf("equal variants: a separation declared in %zu of %zu sweeps\n", separated, sweeps);
  EXPECT_LE(separated, sweeps * 5 / 100);
}

// A real difference is still found: one variant 1.5 s slower on makespan (1.5 noise sd), 20 replicates.
TEST(FamilyWisePlaces, ARealDifferenceIsStillSeparated) {
  stats::SplitMix rng{7};
  std::size_t found = 0;
  for (std::size_t s = 0; s < 200; ++s) {
    auto rows = equal_variants(4, 20, rng);
    for (SweepRow& row : rows[3]) row.makespan_s += 1.5;
    const Ranking r = rank_replicated(rows, default_objective(), {0});
    found += r.order.back().variant.index == 3 && r.order.back().place > 1 && r.order.back().decided_by == "makespan";
  }
  EXPECT_GE(found, 190u);
}

struct Coverage {
  double bootstrap = 0, t = 0;
  double lowest = 0;  // the smallest lower bound the bootstrap gave
};

// The share of `trials` samples of n draws of `draw` whose 95% interval holds `truth`, bootstrap and t.
template <class Draw>
Coverage coverage(std::size_t n, std::size_t trials, double truth, Draw draw, stats::SplitMix& rng) {
  Coverage c;
  c.lowest = 1e300;
  std::vector<SweepRow> reps(n);
  for (std::size_t k = 0; k < trials; ++k) {
    for (SweepRow& r : reps) r.single_wait_p95_s = draw(rng);
    const MetricStats b = metric_stats(reps, metric::kSingleWaitP95, true, 11, k);
    const MetricStats t = metric_stats(reps, metric::kSingleWaitP95, false, 11, k);
    c.bootstrap += b.ci_low <= truth && truth <= b.ci_high;
    c.t += t.ci_low <= truth && truth <= t.ci_high;
    c.lowest = std::min(c.lowest, b.ci_low);
  }
  c.bootstrap /= static_cast<double>(trials), c.t /= static_cast<double>(trials);
  return c;
}

// The truth held out: the mean of a million draws of another stream.
template <class Draw>
double held_out_truth(Draw draw) {
  stats::SplitMix rng{424242};
  double sum = 0;
  const int n = 1000000;
  for (int i = 0; i < n; ++i) sum += draw(rng);
  return sum / n;
}

// A p95 wait that is 0 in 71% of the replicates (the case) and otherwise exponential with mean
// 0.5 s; and a right-skewed maximum (lognormal). Coverage of 1000 intervals each, N = 5, 10, 20
// (measured: zero-heavy BCa 0.715, 0.835, 0.903 against t 0.703, 0.777, 0.847; lognormal 0.864, 0.895,
// 0.920 against 0.874, 0.865, 0.897; docs/howto-choose-a-worker-set.md quotes them).
TEST(Intervals, TheBootstrapCoversAZeroHeavyWaitBetterThanStudentTAndNeverGoesBelowZero) {
  const auto zero_heavy = [](stats::SplitMix& g) {
    return g.uniform() < 0.71 ? 0.0 : -0.5 * std::log(1 - g.uniform());
  };
  const auto skewed = [](stats::SplitMix& g) { return std::exp(0.8 * g.normal()); };
  const double truth_zero = held_out_truth(zero_heavy), truth_skewed = held_out_truth(skewed);
  stats::SplitMix rng{99};
  for (std::size_t n : {5, 10, 20}) {
    const Coverage z = coverage(n, 1000, truth_zero, zero_heavy, rng);
    const Coverage s = coverage(n, 1000, truth_skewed, skewed, rng);
    std::printf("N=%zu zero-heavy: bootstrap %.3f, t %.3f; lognormal: bootstrap %.3f, t %.3f\n", n, z.bootstrap, z.t,
                s.bootstrap, s.t);
    EXPECT_GE(z.lowest, 0.0);
    EXPECT_GE(s.lowest, 0.0);
    if (n >= 10) {
      EXPECT_GT(z.bootstrap, z.t) << n;
    }
    if (n == 20) {
      EXPECT_GE(z.bootstrap, 0.89);
      EXPECT_GE(s.bootstrap, 0.90);
      EXPECT_GT(s.bootstrap, s.t);
    }
  }
}

TEST(Intervals, TheRulePicksTheBootstrapForExtremesAndZeroHeavyMetrics) {
  std::vector<SweepRow> a(10), b(10);
  for (std::size_t k = 0; k < 10; ++k) a[k].makespan_s = 10 + static_cast<double>(k), b[k].makespan_s = 12;
  for (std::size_t k = 0; k < 2; ++k) a[k].group_wait_sum_s = 0;
  for (std::size_t k = 2; k < 10; ++k) a[k].group_wait_sum_s = 1, b[k].group_wait_sum_s = 1;
  b[0].group_wait_sum_s = b[1].group_wait_sum_s = 1;
  EXPECT_FALSE(interval_by_bootstrap(metric::kMakespan, {&a, &b}));
  EXPECT_TRUE(interval_by_bootstrap(metric::kSingleWaitMax, {&a, &b}));  // a maximum
  EXPECT_TRUE(interval_by_bootstrap(metric::kGroupWaitSum, {&a, &b}));   // 0 in 2 of a's 10
  a[1].group_wait_sum_s = 1;
  EXPECT_FALSE(interval_by_bootstrap(metric::kGroupWaitSum, {&a, &b}));  // 0 in 1 of 10: below 20%
  // Seeded: the same interval twice.
  const MetricStats x = metric_stats(a, metric::kGroupWaitSum, true, 5, 1), y = metric_stats(a, metric::kGroupWaitSum, true, 5, 1);
  EXPECT_EQ(x.ci_low, y.ci_low);
  EXPECT_EQ(x.ci_high, y.ci_high);
}

}  // namespace
}  // namespace dirsched
