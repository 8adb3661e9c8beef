// Student's t, the paired t-test, Holm's procedure and the seeded bootstrap (dirsched/stats.hpp).
#include "dirsched/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dirsched::stats {
namespace {

// The continued fraction of the incomplete beta function (modified Lentz's method).
double beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEps = 1e-15;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  const auto guard = [](double v) { return std::abs(v) < kTiny ? kTiny : v; };
  d = 1 / guard(d);
  double h = d;
  for (int m = 1; m <= 500; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 / guard(1 + aa * d), c = guard(1 + aa / c), h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 / guard(1 + aa * d), c = guard(1 + aa / c);
    const double step = d * c;
    h *= step;
    if (std::abs(step - 1) < kEps) break;
  }
  return h;
}

// The regularized incomplete beta function I_x(a, b).
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

// P(|T| >= t) for t >= 0.
double two_sided_tail(double t, double df) { return incomplete_beta(df / 2, 0.5, df / (df + t * t)); }

double mean_of(const std::vector<double>& x) {
  return x.empty() ? 0 : std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
}

double sd_of(const std::vector<double>& x, double mean) {
  if (x.size() < 2) return 0;
  double ss = 0;
  for (double v : x) ss += (v - mean) * (v - mean);
  return std::sqrt(ss / static_cast<double>(x.size() - 1));
}

// The q-quantile of sorted values, interpolated between the two nearest (position q (n - 1)).
double quantile_sorted(const std::vector<double>& s, double q) {
  const double pos = q * static_cast<double>(s.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (pos - static_cast<double>(lo)) * (s[hi] - s[lo]);
}

}  // namespace

double t_cdf(double t, double df) {
  const double tail = two_sided_tail(std::abs(t), df) / 2;
  return t >= 0 ? 1 - tail : tail;
}

double t_quantile(double p, double df) {
  double lo = -1, hi = 1;
  while (t_cdf(lo, df) > p) lo *= 2;
  while (t_cdf(hi, df) < p) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-10; ++i) {
    const double mid = (lo + hi) / 2;
    (t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

PairedTest paired_test(const std::vector<double>& d) {
  PairedTest out;
  out.mean = mean_of(d);
  constexpr double kRounding = 1e-12;  // differences below a picosecond are rounding, not a result
  out.testable = std::any_of(d.begin(), d.end(), [](double x) { return std::abs(x) > kRounding; });
  if (std::abs(out.mean) <= kRounding) return out;
  const double sd = sd_of(d, out.mean);
  if (d.size() < 2 || sd <= kRounding) {
    out.p = 0;
    return out;
  }
  const double df = static_cast<double>(d.size() - 1);
  out.p = two_sided_tail(std::abs(out.mean) / (sd / std::sqrt(static_cast<double>(d.size()))), df);
  return out;
}

std::size_t holm_count(const std::vector<double>& small, std::size_t m, std::size_t exact, double alpha) {
  std::size_t k = 0;
  while (k < small.size() && small[k] <= alpha / static_cast<double>(m - exact - k)) ++k;
  return k;
}

std::vector<bool> holm(const std::vector<double>& p, double alpha) {
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  std::vector<bool> reject(p.size(), false);
  std::size_t exact = 0;
  std::vector<double> small;
  for (std::size_t i : order)
    if (p[i] == 0) reject[i] = true, ++exact;
    else if (p[i] <= alpha) small.push_back(p[i]);
  const std::size_t n = holm_count(small, p.size(), exact, alpha);
  for (std::size_t k = 0; k < n; ++k) reject[order[exact + k]] = true;
  return reject;
}

double normal_quantile(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    const double mid = (lo + hi) / 2;
    (normal_cdf(mid) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

namespace {

// The jackknife estimate of the acceleration of the mean (Efron 1987, eq. 6.6).
double acceleration(const std::vector<double>& x) {
  const double n = static_cast<double>(x.size()), sum = std::accumulate(x.begin(), x.end(), 0.0);
  std::vector<double> jack;
  for (double v : x) jack.push_back((sum - v) / (n - 1));
  const double jm = mean_of(jack);
  double num = 0, den = 0;
  for (double j : jack) num += (jm - j) * (jm - j) * (jm - j), den += (jm - j) * (jm - j);
  return den > 0 ? num / (6 * std::pow(den, 1.5)) : 0;
}

}  // namespace

Interval bootstrap_interval(const std::vector<double>& x, std::uint64_t seed, double floor, std::size_t resamples) {
  const double mean = mean_of(x);
  const auto clamped = [&](double lo, double hi) { return Interval{std::max(floor, lo), std::max(floor, hi)}; };
  if (x.size() < 2 || resamples < 2) return clamped(mean, mean);
  const std::size_t n = x.size();
  SplitMix rng{seed};
  std::vector<double> means(resamples);
  double below = 0;
  for (double& m : means) {
    double sum = 0;
    for (std::size_t k = 0; k < n; ++k) sum += x[rng.next() % n];
    m = sum / static_cast<double>(n);
    below += m < mean ? 1 : m == mean ? 0.5 : 0;
  }
  std::sort(means.begin(), means.end());
  if (means.front() == means.back()) return clamped(mean, mean);  // every value the same
  const double b = static_cast<double>(resamples), nd = static_cast<double>(n);
  const double z0 = normal_quantile(std::clamp(below / b, 0.5 / b, 1 - 0.5 / b));
  const double a = acceleration(x);
  const double z = std::sqrt(nd / (nd - 1)) * t_quantile(0.975, nd - 1);  // Hesterberg's widened level
  const auto level = [&](double zq) {
    const double w = z0 + zq, d = 1 - a * w;
    return d <= 0 ? (w < 0 ? 0.0 : 1.0) : normal_cdf(z0 + w / d);
  };
  return clamped(quantile_sorted(means, level(-z)), quantile_sorted(means, level(z)));
}

std::uint64_t SplitMix::next() {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double SplitMix::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double SplitMix::normal() {
  const double u = 1 - uniform(), v = uniform();  // u in (0, 1]: its log is finite
  return std::sqrt(-2 * std::log(u)) * std::cos(2 * 3.14159265358979323846 * v);
}

std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  SplitMix m{seed ^ (a * 0x9e3779b97f4a7c15ull) ^ (b * 0xc2b2ae3d27d4eb4full)};
  m.next();
  return m.next();
}

}  // namespace dirsched::stats
