// The statistics behind every statement a sweep, optimize and a selection make (sweep/src/stats.cpp):
// Student's t distribution, the paired t-test, Holm's step-down procedure for a family of tests, and a
// seeded bootstrap interval of a mean. Pure functions of their inputs: the same inputs give the same
// bits on every machine (the bootstrap draws from its own generator, never from the standard library's
// distributions, whose results are left to each implementation).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dirsched::stats {

// P(T <= t) for Student's t with `df` degrees of freedom (df > 0), through the regularized incomplete
// beta function (a continued fraction, relative error below 1e-12).
double t_cdf(double t, double df);
// The t with P(T <= t) = p (0 < p < 1), by bisection on t_cdf (within 1e-10).
double t_quantile(double p, double df);
double normal_cdf(double z);
double normal_quantile(double p);  // by bisection (within 1e-12)

// The paired t-test of "the mean difference is 0" on differences `d`: the mean, and the two-sided
// p-value. A mean within 1e-12 of 0 gives p = 1; one difference, or differences that never vary (a
// deterministic scenario), give p = 0 for any other mean: the difference is exact, not estimated.
// `testable` is false when every difference is 0: no outcome of the data could reject, so a family
// leaves the test out (Tarone 1990, "A modified Bonferroni method for discrete data", Biometrics 46).
struct PairedTest {
  double mean = 0;
  double p = 1;
  bool testable = false;
};
PairedTest paired_test(const std::vector<double>& d);

// Holm's step-down procedure (Holm 1979, "A simple sequentially rejective multiple test procedure"):
// the p-values sorted, the k-th smallest (k from 0) rejected while p <= alpha / (m - k). Rejects a true
// hypothesis of the family with probability at most alpha, whatever their dependence. In input order.
std::vector<bool> holm(const std::vector<double>& p, double alpha);
// Holm's procedure without the whole family in memory: of a family of `m` tests, `exact` have p = 0
// (rejected first); `small` holds the other p-values at most alpha, ascending (no larger one can be
// rejected). Returns how many of `small`, from its start, are rejected.
std::size_t holm_count(const std::vector<double>& small, std::size_t m, std::size_t exact, double alpha);

// The interval of the mean of `x`: low and high.
struct Interval {
  double low = 0, high = 0;
};
// The BCa bootstrap interval of the mean at 95% (bias-corrected and accelerated: Efron 1987, "Better
// bootstrap confidence intervals", JASA 82(397); the acceleration by the jackknife): `resamples` means
// of n values drawn with replacement (splitmix64 from `seed`), and their quantiles at the BCa levels of
// z = sqrt(n/(n-1)) t(0.975, n-1) instead of 1.96 (Hesterberg 2015, "What teachers should know about
// the bootstrap", The American Statistician 69(4): the widening for small n, which alone covers too
// seldom). Clamped below at `floor` (0 for a wait or a count). The mean twice for n < 2 or equal values.
constexpr std::size_t kBootstrapResamples = 2000;
Interval bootstrap_interval(const std::vector<double>& x, std::uint64_t seed, double floor,
                            std::size_t resamples = kBootstrapResamples);

// splitmix64 (Steele, Lea and Flood 2014): a seeded stream of 64-bit words, and a uniform double in
// [0, 1) and a standard normal (Box-Muller) from it, the same on every platform.
struct SplitMix {
  std::uint64_t state;
  std::uint64_t next();
  double uniform();
  double normal();
};
// A seed for one named stream of a seeded computation: (seed, a, b) mixed.
std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0);

}  // namespace dirsched::stats
