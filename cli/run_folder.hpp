// A run folder written by `run` and by each variant of a sweep: the engine's run, its data files, then
// its pictures (drawn aggregated past viz::kMaxPictureTasks), with the summary line on stdout.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "dirsched/sim.hpp"

namespace dirsched::cli {

// `run --engine threads [--time-scale X]`: the scenario on real threads (runtime/) instead of SimGrid.
struct ThreadsEngine {
  bool on = false;
  double time_scale = 1;
  bool events = false;  // --engine event: the event engine (eventsim/), not SimGrid
};

// Left in a run folder whose pictures a stop (Ctrl-C) interrupted; `render` removes it.
constexpr const char* kPicturesInterrupted = "pictures-interrupted.txt";

// A file a run writes (now, or its pictures later): never a name --attach may take.
bool run_writes(const std::string& name);

// Replays one scenario into `out`: simulate (or run on threads), draw, write (everything moved in
// place at the end). Returns 1 when an invariant broke, else `verdict(run)` when given (`run`: rejected
// submits or STUCK the expect block does not expect, cli/verdict.hpp), else 0. `out` is checked before
// anything runs (OutputRefused).
int run_to_folder(const Scenario& scenario, RunOptions options, const std::string& out_arg,
                  std::vector<std::string> selected_data, const std::vector<std::string>& selected_pictures,
                  bool quiet, double budget_s, const ThreadsEngine& threads = {},
                  const std::map<std::string, std::string>& attached = {}, int (*verdict)(const Run&) = nullptr);

}  // namespace dirsched::cli
