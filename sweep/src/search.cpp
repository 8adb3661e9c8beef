#include <algorithm>
#include <cmath>
#include <optional>
#include <queue>
#include <random>
#include <unordered_set>

#include "dirsched/sweep.hpp"

namespace dirsched {

namespace {

using Evaluate = std::function<std::vector<Score>(const std::vector<std::size_t>&)>;

// The points evaluated so far, within the budget: no point twice, the best and its improvements kept.
class Tally {
 public:
  Tally(SearchResult& res, std::size_t budget, const Evaluate& evaluate)
      : res_(res), budget_(budget), evaluate_(evaluate) {}
  bool spent() const { return res_.evaluations >= budget_; }
  bool has(std::size_t p) const { return res_.scores.count(p) != 0; }
  void run(const std::vector<std::size_t>& points) {
    std::vector<std::size_t> fresh;
    for (std::size_t p : points)
      if (!has(p) && std::find(fresh.begin(), fresh.end(), p) == fresh.end() && res_.evaluations + fresh.size() < budget_)
        fresh.push_back(p);
    if (fresh.empty()) return;
    const std::vector<Score> s = evaluate_(fresh);
    for (std::size_t i = 0; i < fresh.size(); ++i) {
      res_.scores[fresh[i]] = s[i];
      ++res_.evaluations;
      if (!have_ || s[i] < res_.best_score || (s[i] == res_.best_score && fresh[i] < res_.best)) {
        have_ = true;
        res_.best = fresh[i], res_.best_score = s[i];
        res_.improvements.emplace_back(res_.evaluations, fresh[i]);
      }
    }
  }

 private:
  SearchResult& res_;
  std::size_t budget_;
  const Evaluate& evaluate_;
  bool have_ = false;
};

struct Space {
  std::vector<std::size_t> dims, stride;
  std::size_t digit(std::size_t p, std::size_t k) const { return p / stride[k] % dims[k]; }
  std::size_t random_point(std::mt19937_64& rng) const {
    std::size_t p = 0;
    for (std::size_t k = 0; k < dims.size(); ++k) p += static_cast<std::size_t>(rng() % dims[k]) * stride[k];
    return p;
  }
};

// The seeded coordinate descent with random restarts (sweep.hpp).
void descent(const Space& sp, Tally& tally, SearchResult& res, std::mt19937_64& rng, const Neighbours& neighbours) {
  std::size_t stuck = 0;
  while (!tally.spent() && stuck < 1000) {
    std::size_t cur = sp.random_point(rng);
    if (tally.has(cur)) {
      ++stuck;
      continue;
    }
    stuck = 0;
    tally.run({cur});
    bool improved = true;
    while (improved && !tally.spent()) {
      improved = false;
      std::vector<std::size_t> order(sp.dims.size());
      for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t k : order) {
        const std::size_t digit = sp.digit(cur, k), base = cur - digit * sp.stride[k];
        std::vector<std::size_t> line;
        const std::vector<std::size_t> near = neighbours ? neighbours(k, digit) : std::vector<std::size_t>{};
        if (near.empty()) {
          for (std::size_t v = 0; v < sp.dims[k]; ++v) line.push_back(base + v * sp.stride[k]);
        } else {
          for (std::size_t v : near) line.push_back(base + v * sp.stride[k]);
        }
        tally.run(line);
        std::size_t best = cur;
        for (std::size_t p : line)
          if (tally.has(p) && res.scores[p] < res.scores[best]) best = p;
        if (best != cur) cur = best, improved = true;
        if (tally.spent()) break;
      }
    }
  }
}

// Solves the symmetric positive definite system a x = b (n x n, row-major) in place (Cholesky).
std::vector<double> solve_spd(std::vector<double> a, std::vector<double> b, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (std::size_t k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    d = std::sqrt(std::max(d, 1e-12));
    a[j * n + j] = d;
    for (std::size_t i = j + 1; i < n; ++i) {
      double v = a[i * n + j];
      for (std::size_t k = 0; k < j; ++k) v -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = v / d;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {  // L y = b
    for (std::size_t k = 0; k < i; ++k) b[i] -= a[i * n + k] * b[k];
    b[i] /= a[i * n + i];
  }
  for (std::size_t i = n; i-- > 0;) {  // L' x = y
    for (std::size_t k = i + 1; k < n; ++k) b[i] -= a[k * n + i] * b[k];
    b[i] /= a[i * n + i];
  }
  return b;
}

constexpr double kRidge = 0.5;     // in units of the standardized key
constexpr double kOptimism = 1.0;  // standard errors

// Each variable's candidates' part of the predicted first key (a ridge fit of main effects over the
// clean evaluated points); empty when fewer than two clean points have a key.
std::vector<std::vector<double>> fit_parts(const Space& sp, const SearchResult& res, const Features& f,
                                           const std::vector<std::size_t>& offset, std::size_t nf) {
  std::vector<std::pair<std::vector<std::size_t>, double>> rows;
  for (const auto& [p, s] : res.scores) {
    if (s.size() < 2 || s[0] != 0) continue;
    std::vector<std::size_t> x;
    for (std::size_t k = 0; k < sp.dims.size(); ++k)
      for (std::uint32_t i : f[k][sp.digit(p, k)]) x.push_back(offset[k] + i);
    rows.emplace_back(std::move(x), s[1]);
  }
  if (rows.size() < 2) return {};
  double mean = 0, var = 0;
  for (const auto& r : rows) mean += r.second / static_cast<double>(rows.size());
  for (const auto& r : rows) var += (r.second - mean) * (r.second - mean) / static_cast<double>(rows.size());
  const double sd = var > 0 ? std::sqrt(var) : 1.0;
  const std::size_t n = nf + 1;  // the intercept last, not penalized
  std::vector<double> a(n * n, 0.0), b(n, 0.0);
  for (auto& [x, y] : rows) {
    x.push_back(nf);
    const double t = (y - mean) / sd;
    for (std::size_t i : x) {
      b[i] += t;
      for (std::size_t j : x) a[i * n + j] += 1;
    }
  }
  for (std::size_t i = 0; i < nf; ++i) a[i * n + i] += kRidge;
  std::vector<double> seen(nf, 0.0);  // how many clean evaluated points hold each feature
  for (std::size_t i = 0; i < nf; ++i) seen[i] = a[i * n + i] - kRidge;
  const std::vector<double> w = solve_spd(std::move(a), std::move(b), n);
  // Optimism under uncertainty: a feature's effect is taken kOptimism standard errors better than its
  // estimate (1 / sqrt(points holding it + penalty) in standardized units), so a value seldom or never
  // evaluated is tried rather than predicted at the mean forever (a sum still, as the walk needs).
  std::vector<std::vector<double>> parts(sp.dims.size());
  for (std::size_t k = 0; k < sp.dims.size(); ++k)
    for (const std::vector<std::uint32_t>& c : f[k]) {
      double v = 0;
      for (std::uint32_t i : c) v += w[offset[k] + i] - kOptimism / std::sqrt(seen[offset[k] + i] + kRidge);
      parts[k].push_back(v);
    }
  return parts;
}

// The unevaluated point with the smallest predicted key: a best-first walk over each variable's
// candidates sorted by their part (the k-best sums of sorted lists), at most evaluations + 1 pops.
std::optional<std::size_t> best_predicted(const Space& sp, const Tally& tally, const std::vector<std::vector<double>>& parts) {
  const std::size_t nv = sp.dims.size();
  std::vector<std::vector<std::size_t>> order(nv);
  for (std::size_t k = 0; k < nv; ++k) {
    order[k].resize(sp.dims[k]);
    for (std::size_t c = 0; c < sp.dims[k]; ++c) order[k][c] = c;
    std::stable_sort(order[k].begin(), order[k].end(), [&](std::size_t x, std::size_t y) { return parts[k][x] < parts[k][y]; });
  }
  using Entry = std::pair<double, std::vector<std::size_t>>;  // predicted sum, rank per variable
  auto point = [&](const std::vector<std::size_t>& r) {
    std::size_t p = 0;
    for (std::size_t k = 0; k < nv; ++k) p += order[k][r[k]] * sp.stride[k];
    return p;
  };
  auto sum = [&](const std::vector<std::size_t>& r) {
    double v = 0;
    for (std::size_t k = 0; k < nv; ++k) v += parts[k][order[k][r[k]]];
    return v;
  };
  auto later = [](const Entry& x, const Entry& y) { return x.first != y.first ? x.first > y.first : x.second > y.second; };
  std::priority_queue<Entry, std::vector<Entry>, decltype(later)> heap(later);
  std::unordered_set<std::size_t> seen;
  std::vector<std::size_t> first(nv, 0);
  heap.emplace(sum(first), first);
  seen.insert(point(first));
  while (!heap.empty()) {
    const std::vector<std::size_t> r = heap.top().second;
    heap.pop();
    const std::size_t p = point(r);
    if (!tally.has(p)) return p;
    for (std::size_t k = 0; k < nv; ++k) {
      if (r[k] + 1 >= sp.dims[k]) continue;
      std::vector<std::size_t> next = r;
      ++next[k];
      if (seen.insert(point(next)).second) heap.emplace(sum(next), next);
    }
  }
  return std::nullopt;
}

// How many features variable k's candidates use (one past the largest index).
std::size_t feature_count(const Features& f, std::size_t k) {
  std::uint32_t most = 0;
  for (const std::vector<std::uint32_t>& c : f[k])
    for (std::uint32_t i : c) most = std::max(most, i + 1);
  return most;
}

// The main-effects surrogate search (sweep.hpp).
void surrogate(const Space& sp, Tally& tally, SearchResult& res, std::mt19937_64& rng, const Features& f,
               std::size_t budget, std::size_t total) {
  std::vector<std::size_t> offset(sp.dims.size(), 0);
  std::size_t nf = 0;
  for (std::size_t k = 0; k < sp.dims.size(); ++k) {
    offset[k] = nf;
    nf += feature_count(f, k);
  }
  const std::size_t design = std::min(budget, std::max<std::size_t>(4, budget / 10));
  std::vector<std::size_t> first;
  for (std::size_t tries = 0; first.size() < design && tries < 1000 * design; ++tries) {
    const std::size_t p = sp.random_point(rng);
    if (std::find(first.begin(), first.end(), p) == first.end()) first.push_back(p);
  }
  // In batches of a few: each variant of a batch is a parsed scenario held until the batch ends, and a
  // variant's scenario holds its `choose` spaces' lists (up to 1,000,000).
  constexpr std::size_t kDesignBatch = 4;
  for (std::size_t at = 0; at < first.size(); at += kDesignBatch)
    tally.run(std::vector<std::size_t>(first.begin() + static_cast<long>(at),
                                       first.begin() + static_cast<long>(std::min(first.size(), at + kDesignBatch))));
  while (!tally.spent() && res.evaluations < total) {
    const std::vector<std::vector<double>> parts = fit_parts(sp, res, f, offset, nf);
    std::optional<std::size_t> next;
    if (!parts.empty()) next = best_predicted(sp, tally, parts);
    for (std::size_t tries = 0; !next && tries < 1000; ++tries)  // no fit yet: a random point
      if (const std::size_t p = sp.random_point(rng); !tally.has(p)) next = p;
    if (!next) break;
    tally.run({*next});
  }
}

bool model_fits(const std::vector<std::size_t>& dims, const Features* f) {
  if (!f || f->size() != dims.size()) return false;
  std::size_t nf = 0;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    if ((*f)[k].size() != dims[k]) return false;
    nf += feature_count(*f, k);
  }
  return nf <= kMaxModelFeatures;
}

}  // namespace

SearchResult search_space(const std::vector<std::size_t>& dims, std::size_t budget, std::uint64_t seed,
                          const Evaluate& evaluate, const Neighbours& neighbours, const Features* features) {
  SearchResult res;
  Tally tally(res, budget, evaluate);
  Space sp{dims, std::vector<std::size_t>(dims.size(), 1)};
  std::size_t total = 1;
  bool fits = true;
  for (std::size_t d : dims) fits &= !__builtin_mul_overflow(total, d, &total);
  for (std::size_t k = dims.size(); k-- > 1;) sp.stride[k - 1] = sp.stride[k] * dims[k];
  if (fits && total <= budget) {
    res.exhaustive = true;
    for (std::size_t at = 0; at < total; at += 256) {
      std::vector<std::size_t> batch;
      for (std::size_t i = at; i < std::min(total, at + 256); ++i) batch.push_back(i);
      tally.run(batch);
    }
    return res;
  }
  std::mt19937_64 rng(seed);
  if (fits && model_fits(dims, features)) {
    res.surrogate = true;
    surrogate(sp, tally, res, rng, *features, budget, total);
  } else {
    descent(sp, tally, res, rng, neighbours);
  }
  return res;
}

std::string search_method_name(const SearchResult& res) {
  return res.exhaustive ? "exhaustive" : res.surrogate ? "main-effects surrogate search" : "seeded coordinate descent";
}

std::string search_method_text(const SearchResult& res, std::uint64_t seed) {
  if (res.exhaustive) return "exhaustive: every variant evaluated";
  const std::string s = " (search seed " + std::to_string(seed) + ")";
  if (res.surrogate)
    return "main-effects surrogate search" + s +
           ": a seeded random design of max(4, budget/10) variants, then one at a time the unevaluated variant "
           "that a ridge regression of the first objective key on each variable's values (a choose list: the ids "
           "it holds; ordered: id by position), each effect one standard error optimistic, predicts best, until "
           "the budget";
  return "seeded coordinate descent with random restarts" + s +
         ": one variable's candidates at a time (a choose space's: the lists one swap away), best kept, until the "
         "budget";
}

std::vector<std::vector<std::uint32_t>> candidate_features(const std::vector<nlohmann::json>& candidates, bool choose,
                                                           bool ordered) {
  std::vector<std::vector<std::uint32_t>> out(candidates.size());
  if (!choose) {
    for (std::size_t c = 0; c < candidates.size(); ++c) out[c] = {static_cast<std::uint32_t>(c)};
    return out;
  }
  std::vector<nlohmann::json> ids;  // every id any list holds, sorted
  for (const nlohmann::json& c : candidates)
    for (const nlohmann::json& id : c) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  for (std::size_t c = 0; c < candidates.size(); ++c)
    for (std::size_t pos = 0; pos < candidates[c].size(); ++pos) {
      const auto id = static_cast<std::uint32_t>(
          std::lower_bound(ids.begin(), ids.end(), candidates[c][pos]) - ids.begin());
      out[c].push_back(ordered ? static_cast<std::uint32_t>(pos * ids.size()) + id : id);
    }
  return out;
}

// Ordered spaces hold every arrangement of each set, unordered ones each set once: whether another list
// holds the first list's ids tells them apart. O(candidates x length x log length), nothing copied but
// the first list.
bool holds_arrangements(const std::vector<nlohmann::json>& candidates) {
  if (candidates.size() < 2 || !candidates.front().is_array()) return false;
  std::vector<nlohmann::json> first(candidates.front().begin(), candidates.front().end());
  std::sort(first.begin(), first.end());
  for (std::size_t i = 1; i < candidates.size(); ++i) {
    const nlohmann::json& c = candidates[i];
    if (!c.is_array() || c.size() != first.size()) return false;
    if (std::all_of(c.begin(), c.end(),
                    [&](const nlohmann::json& id) { return std::binary_search(first.begin(), first.end(), id); }))
      return true;
  }
  return false;
}

std::vector<std::size_t> swap_neighbours(const std::vector<nlohmann::json>& candidates, std::size_t c, bool ordered) {
  std::vector<std::size_t> out;
  if (c >= candidates.size() || !candidates[c].is_array()) return out;
  const nlohmann::json& at = candidates[c];
  std::vector<nlohmann::json> held(at.begin(), at.end());  // c's ids, sorted: one lookup in log(length)
  std::sort(held.begin(), held.end());
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const nlohmann::json& other = candidates[i];
    if (i == c) continue;
    if (!other.is_array() || other.size() != at.size()) return {};
    if (ordered) {
      // Positions that differ: one (another id there), or two exchanged.
      std::size_t diff[3] = {0, 0, 0}, n = 0;
      for (std::size_t j = 0; j < at.size() && n < 3; ++j)
        if (at[j] != other[j]) diff[n++] = j;
      if (n == 1 || (n == 2 && at[diff[0]] == other[diff[1]] && at[diff[1]] == other[diff[0]])) out.push_back(i);
    } else {
      // Ids of `other` that `c` does not hold: exactly one (so one traded for one).
      std::size_t missing = 0;
      for (const nlohmann::json& id : other)
        if (!std::binary_search(held.begin(), held.end(), id) && ++missing > 1) break;
      if (missing == 1) out.push_back(i);
    }
  }
  return out;
}

}  // namespace dirsched
