// `dirsched bisect FILE --from P --to Q`: which runtime change altered a scenario's run
// (docs/howto-regress-a-runtime-change.md).
//
// The ladder's points (seed, upto:1565, upto:1541, ..., upto:1902: docs/versions.md) from P to Q each
// run the scenario once, in a child process of its own, with the invariant checker on. Each point
// after the first adds the switches of one upstream PR; the report says, point by point, whether the
// dispatch order, a final state, an outcome or the expect verdict differs from the point before, names
// the first change after which one does, then runs each switch of that change alone over the point
// before it. A switch this testbed has not built runs off, and the report says so: a change made only
// of such switches is never named.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dirsched/scenario.hpp"

namespace dirsched {

struct BisectOptions {
  std::string file;
  std::string from = "seed";
  std::string to = "current";
  std::optional<std::uint64_t> seed;      // overrides the scenario's
  std::vector<std::string> simgrid_args;  // --cfg
  bool json = false;                      // the report as one JSON document instead of text
};

// Loads the scenario under one switch set (the CLI's --var handling lives with the caller).
using BisectLoader = std::function<Scenario(const PolicyChoice&)>;

// Prints the report on stdout. Exit status: 0 no change between P and Q alters the run, 1 one does
// (the first is named). Bad input (an unknown point, P not before Q, a scenario that does not load)
// throws as the loader does.
int cmd_bisect(const BisectOptions& options, const BisectLoader& load);

}  // namespace dirsched
