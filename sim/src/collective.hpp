// The transfers of a group's collective (docs/simulation.md, "Collectives"), shared by the driver
// (sim.cpp, which runs them) and the probe (probe.cpp, which checks their routes before a run).
#pragma once

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

#include "dirsched/scenario.hpp"

namespace dirsched::collective {

// (from member, to member, bytes) of one step.
using Send = std::tuple<std::uint32_t, std::uint32_t, double>;

// Ring allreduce: 2(n-1) steps; ring allgather: n-1 steps; binomial-tree broadcast from member 0:
// ceil(log2 n) steps. None for fewer than two members.
inline std::size_t steps(Collective::Kind kind, std::uint32_t n) {
  if (n < 2 || kind == Collective::Kind::kNone) return 0;
  if (kind == Collective::Kind::kAllreduce) return 2 * (static_cast<std::size_t>(n) - 1);
  if (kind == Collective::Kind::kAllgather) return n - 1;
  std::size_t k = 0;
  while ((std::uint64_t{1} << k) < n) ++k;
  return k;
}

// The ring kinds: every member sends bytes/n to the next (member n-1 to member 0), every step. The
// broadcast: in step k, members i < 2^k send the whole message to i + 2^k.
inline std::vector<Send> sends(Collective::Kind kind, std::uint32_t n, std::size_t step, double bytes) {
  std::vector<Send> out;
  if (kind == Collective::Kind::kBroadcast) {
    const std::uint64_t half = std::uint64_t{1} << step;
    for (std::uint64_t i = 0; i < half && i + half < n; ++i)
      out.emplace_back(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i + half), bytes);
  } else {
    for (std::uint32_t i = 0; i < n; ++i) out.emplace_back(i, (i + 1) % n, bytes / n);
  }
  return out;
}

}  // namespace dirsched::collective
