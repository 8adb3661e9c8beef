// The seeded draws of a run's duration jitter, shared by every engine so that one seed gives one set
// of durations whether the members run on SimGrid or on threads. One draw per dispatch, in dispatch
// order, from one std::mt19937_64.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "dirsched/scenario.hpp"

namespace dirsched {

class JitterRng {
 public:
  explicit JitterRng(std::uint64_t seed) : gen_(seed) {}
  double uniform01() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }
  double normal() {  // Box-Muller, one value per call for a simple, portable sequence
    double u1 = uniform01(), u2 = uniform01();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
  // One of a callable's empirical durations, drawn uniformly (one draw, only for such a callable, so
  // every other scenario's stream is unchanged).
  double pick(const std::vector<double>& values) {
    const auto n = static_cast<double>(values.size());
    auto i = static_cast<std::size_t>(uniform01() * n);
    return values[std::min(i, values.size() - 1)];
  }
  // The factor a member's cost is multiplied by.
  double factor(const Jitter& j) {
    switch (j.kind) {
      case Jitter::Kind::kNone:
        return 1.0;
      case Jitter::Kind::kUniform:
        return 1.0 + j.rel * (2.0 * uniform01() - 1.0);
      case Jitter::Kind::kNormal:
        return std::max(0.0, 1.0 + j.rel * normal());
    }
    return 1.0;
  }

 private:
  std::mt19937_64 gen_;
};

}  // namespace dirsched
