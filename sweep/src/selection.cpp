// Kim and Nelson's procedure KN, and the fixed-N design it is compared with (dirsched/selection.hpp).
#include "dirsched/selection.hpp"

#include <algorithm>
#include <cmath>

#include "dirsched/error.hpp"
#include "dirsched/stats.hpp"

namespace dirsched {
namespace {

struct State {
  std::vector<std::vector<double>> x;  // per variant, its values by replicate
  std::vector<double> sum;
  void add(const std::vector<std::pair<std::size_t, std::size_t>>& asks, const std::vector<double>& values) {
    for (std::size_t k = 0; k < asks.size(); ++k) x[asks[k].first].push_back(values[k]), sum[asks[k].first] += values[k];
  }
  double mean(std::size_t i) const { return sum[i] / static_cast<double>(x[i].size()); }
};

// The first-stage sample variance of X_i - X_l.
double pair_variance(const State& s, std::size_t i, std::size_t l, std::size_t n0) {
  double mean = 0;
  for (std::size_t j = 0; j < n0; ++j) mean += s.x[i][j] - s.x[l][j];
  mean /= static_cast<double>(n0);
  double ss = 0;
  for (std::size_t j = 0; j < n0; ++j) ss += (s.x[i][j] - s.x[l][j] - mean) * (s.x[i][j] - s.x[l][j] - mean);
  return ss / static_cast<double>(n0 - 1);
}

}  // namespace

SelectionResult select_best(std::size_t k, const SelectionConfig& c, const Sampler& sample) {
  if (k == 0) throw InternalError("select_best: no variants");
  if (!(c.delta > 0) || !(c.pcs > 0 && c.pcs < 1) || c.first_stage < 2)
    throw InternalError("select_best: delta > 0, 0 < pcs < 1 and a first stage of 2 or more");
  const std::size_t n0 = c.first_stage;
  SelectionResult out;
  State s{std::vector<std::vector<double>>(k), std::vector<double>(k, 0.0)};
  std::vector<std::pair<std::size_t, std::size_t>> asks;
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t r = 0; r < n0; ++r) asks.emplace_back(i, r);
  s.add(asks, sample(asks));
  const double alpha = 1 - c.pcs, kd = static_cast<double>(k), n0d = static_cast<double>(n0);
  std::vector<double> s2(k * k, 0.0);
  double s2_max = 0;
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t l = i + 1; l < k; ++l) {
      s2[i * k + l] = s2[l * k + i] = pair_variance(s, i, l, n0);
      s2_max = std::max(s2_max, s2[i * k + l]);
    }
  if (k > 1) {
    out.eta = 0.5 * (std::pow(2 * alpha / (kd - 1), -2 / (n0d - 1)) - 1);
    out.h2 = 2 * out.eta * (n0d - 1);
    const double t = stats::t_quantile(1 - alpha / (kd - 1), n0d - 1);
    out.fixed_n = std::max<std::size_t>(n0, static_cast<std::size_t>(std::ceil(t * t * s2_max / (c.delta * c.delta))));
  } else {
    out.fixed_n = n0;
  }
  out.fixed_runs = out.fixed_n * k;
  std::vector<std::size_t> alive(k);
  for (std::size_t i = 0; i < k; ++i) alive[i] = i;
  for (std::size_t r = n0;; ++r) {
    // Screening: i leaves when its mean exceeds another survivor's by more than W_il(r).
    std::vector<std::size_t> kept;
    for (std::size_t i : alive) {
      bool out_of_it = false;
      for (std::size_t l : alive) {
        if (l == i) continue;
        const double w = std::max(0.0, c.delta / (2.0 * static_cast<double>(r)) *
                                           (out.h2 * s2[i * k + l] / (c.delta * c.delta) - static_cast<double>(r)));
        out_of_it |= s.mean(i) > s.mean(l) + w;
      }
      if (!out_of_it) kept.push_back(i);
    }
    alive = kept;  // never empty: the smallest mean is never out of it
    // Past every N_il = h2 S2_il / delta^2 the allowances are 0: the smallest mean is selected.
    bool past = true;
    for (std::size_t i : alive)
      for (std::size_t l : alive) past &= l == i || static_cast<double>(r) >= out.h2 * s2[i * k + l] / (c.delta * c.delta);
    if (alive.size() == 1 || past) break;
    asks.clear();
    for (std::size_t i : alive) asks.emplace_back(i, r);
    s.add(asks, sample(asks));
  }
  out.best = alive.front();
  for (std::size_t i : alive)
    if (s.mean(i) < s.mean(out.best)) out.best = i;
  for (const auto& v : s.x) out.replicates.push_back(v.size()), out.runs += v.size();
  return out;
}

}  // namespace dirsched
