// The seeded draws of a member's duration (its jitter factor, its pick of an empirical duration), shared
// by every engine so that one seed gives one set of durations on SimGrid, the event engine and threads.
//
// Draws are keyed by identity, not by dispatch order: member `member` of the scenario's n-th submit (its
// task's place among the submits in document order, counting into batches and runs' callbacks; sleeps,
// drains and at_s do not count) draws from its own stream, keyed (seed, n, member), and its d-th value
// is a pure function of (seed, n, member, d). So the same member draws the same value in every variant
// of a sweep (other workers, another policy, another dispatch order), on every engine, and whether the
// trace is held, streamed or generated (Replay::task_key): the variants are compared on common random
// numbers.
//
// The construction is counter-based (SplitMix64, Steele, Lea and Flood, "Fast splittable pseudorandom
// number generators", OOPSLA 2014): the key is folded through SplitMix64's 64-bit finalizer, one field
// at a time (a bijection per step), and draw d is the finalizer of key + (d + 1) * golden gamma, that is
// the d-th output of a SplitMix64 generator seeded with the key.
// Fixed draw indices per member: 0 and 1 for the jitter factor (uniform: 0; normal, Box-Muller: 0 and
// 1), 2 for an empirical pick, so that one draw never shifts another.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "dirsched/scenario.hpp"

namespace dirsched {

// SplitMix64's output function (Steele et al. 2014; the finalizer of MurmurHash3 with Stafford's
// "variant 13" constants): a bijection of 64-bit words with full avalanche.
constexpr std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
constexpr std::uint64_t kGoldenGamma = 0x9e3779b97f4a7c15ull;

class MemberDraws {
 public:
  static constexpr std::uint32_t kFactorDraw = 0;  // and 1 (a normal jitter's second uniform)
  static constexpr std::uint32_t kPickDraw = 2;

  MemberDraws(std::uint64_t seed, std::uint64_t task_key, std::uint32_t member)
      : key_(splitmix64_mix(splitmix64_mix(splitmix64_mix(seed + kGoldenGamma) ^ task_key) ^ member)) {}

  // Draw `index` of the stream, uniform on [0, 1) with 53 bits.
  double uniform01(std::uint32_t index) const {
    return static_cast<double>(splitmix64_mix(key_ + (static_cast<std::uint64_t>(index) + 1) * kGoldenGamma) >> 11) *
           0x1.0p-53;
  }
  // A standard normal (Box-Muller on draws `index` and `index` + 1).
  double normal(std::uint32_t index) const {
    double u1 = uniform01(index), u2 = uniform01(index + 1);
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
  // The factor the member's cost is multiplied by.
  double factor(const Jitter& j) const {
    switch (j.kind) {
      case Jitter::Kind::kNone:
        return 1.0;
      case Jitter::Kind::kUniform:
        return 1.0 + j.rel * (2.0 * uniform01(kFactorDraw) - 1.0);
      case Jitter::Kind::kNormal:
        return std::max(0.0, 1.0 + j.rel * normal(kFactorDraw));
    }
    return 1.0;
  }
  // One of a callable's empirical durations, drawn uniformly.
  double pick(const std::vector<double>& values) const {
    const auto n = static_cast<double>(values.size());
    auto i = static_cast<std::size_t>(uniform01(kPickDraw) * n);
    return values[std::min(i, values.size() - 1)];
  }

 private:
  std::uint64_t key_;
};

// What a member computes, drawn: its factor and its seconds (its op's own duration, else the callable's,
// else an empirical pick; each times the factor), or no seconds (flops, or no cost: the factor then
// scales the flops). Every engine asks this, so that the engines cannot draw apart.
struct DrawnCost {
  double factor = 1.0;
  std::optional<double> seconds;
};
inline DrawnCost draw_cost(const Cost& cost, std::optional<double> own, const MemberDraws& draws) {
  DrawnCost d{draws.factor(cost.jitter), std::nullopt};
  if (own)
    d.seconds = *own * d.factor;
  else if (cost.duration_s)
    d.seconds = *cost.duration_s * d.factor;
  else if (!cost.empirical.empty())
    d.seconds = draws.pick(cost.empirical) * d.factor;
  return d;
}

}  // namespace dirsched
