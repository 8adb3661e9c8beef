#include <algorithm>
#include <random>

#include "dirsched/sweep.hpp"

namespace dirsched {

SearchResult search_space(const std::vector<std::size_t>& dims, std::size_t budget, std::uint64_t seed,
                          const std::function<std::vector<Score>(const std::vector<std::size_t>&)>& evaluate) {
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
        for (std::size_t v = 0; v < dims[k]; ++v) line.push_back(base + v * stride[k]);
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

}  // namespace dirsched
