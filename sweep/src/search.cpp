#include <algorithm>
#include <random>

#include "dirsched/sweep.hpp"

namespace dirsched {

SearchResult search_space(const std::vector<std::size_t>& dims, std::size_t budget, std::uint64_t seed,
                          const std::function<std::vector<Score>(const std::vector<std::size_t>&)>& evaluate,
                          const Neighbours& neighbours) {
  SearchResult res;
  std::size_t total = 1;
  bool fits = true;
  for (std::size_t d : dims) fits &= !__builtin_mul_overflow(total, d, &total);
  std::vector<std::size_t> stride(dims.size(), 1);
  for (std::size_t k = dims.size(); k-- > 1;) stride[k - 1] = stride[k] * dims[k];
  bool have = false;
  auto run = [&](std::vector<std::size_t> points) {
    std::vector<std::size_t> fresh;
    for (std::size_t p : points)
      if (!res.scores.count(p) && std::find(fresh.begin(), fresh.end(), p) == fresh.end() &&
          res.evaluations + fresh.size() < budget)
        fresh.push_back(p);
    if (fresh.empty()) return;
    const std::vector<Score> s = evaluate(fresh);
    for (std::size_t i = 0; i < fresh.size(); ++i) {
      res.scores[fresh[i]] = s[i];
      ++res.evaluations;
      if (!have || s[i] < res.best_score || (s[i] == res.best_score && fresh[i] < res.best)) {
        have = true;
        res.best = fresh[i], res.best_score = s[i];
        res.improvements.emplace_back(res.evaluations, fresh[i]);
      }
    }
  };
  if (fits && total <= budget) {
    res.exhaustive = true;
    std::vector<std::size_t> all(total);
    for (std::size_t i = 0; i < total; ++i) all[i] = i;
    for (std::size_t at = 0; at < total; at += 256)
      run(std::vector<std::size_t>(all.begin() + static_cast<long>(at),
                                   all.begin() + static_cast<long>(std::min(total, at + 256))));
    return res;
  }
  std::mt19937_64 rng(seed);
  auto random_point = [&]() {
    std::size_t p = 0;
    for (std::size_t k = 0; k < dims.size(); ++k) p += static_cast<std::size_t>(rng() % dims[k]) * stride[k];
    return p;
  };
  std::size_t stuck = 0;
  while (res.evaluations < budget && stuck < 1000) {
    std::size_t cur = random_point();
    if (res.scores.count(cur)) {
      ++stuck;
      continue;
    }
    stuck = 0;
    run({cur});
    bool improved = true;
    while (improved && res.evaluations < budget) {
      improved = false;
      std::vector<std::size_t> order(dims.size());
      for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t k : order) {
        const std::size_t digit = cur / stride[k] % dims[k], base = cur - digit * stride[k];
        std::vector<std::size_t> line;
        const std::vector<std::size_t> near = neighbours ? neighbours(k, digit) : std::vector<std::size_t>{};
        if (near.empty()) {
          for (std::size_t v = 0; v < dims[k]; ++v) line.push_back(base + v * stride[k]);
        } else {
          for (std::size_t v : near) line.push_back(base + v * stride[k]);
        }
        run(line);
        std::size_t best = cur;
        for (std::size_t p : line)
          if (res.scores.count(p) && res.scores[p] < res.scores[best]) best = p;
        if (best != cur) cur = best, improved = true;
        if (res.evaluations >= budget) break;
      }
    }
  }
  return res;
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
