// What SimGrid would abort on, checked before a run in a child process.
//
// SimGrid 3.32 ends the process (xbt_die, or a crash) for a bad --cfg value or model name, an
// unreadable platform file, and a transfer with no route (a Full zone's missing route crashes even
// Host::route_to), and it never finishes a transfer over a link of bandwidth 0. None of that can be
// caught in the process that meets it, so probe_simgrid() forks a child that takes the same first
// steps as a run: an Engine, each --cfg in turn, the platform, then for every host the scenario uses
// (when some callable moves bytes) the routes from the scheduler's host and back, each link's
// bandwidth and the latency, and (when some callable has flops) each host's speed. The child reports
// each step before it takes it; when it dies the parent knows where, and turns SimGrid's complaint
// into one exception naming the option, or the scenario file, the platform file and the route.
// Nothing is written. The default platform without --cfg needs no probe (its routes are built here).
#pragma once

#include <string>
#include <vector>

#include "dirsched/scenario.hpp"

namespace dirsched {

// Throws BadInput ("--cfg=X: why") for a bad option, ScenarioError (path `platform`) for
// the platform file or a route.
void probe_simgrid(const Scenario& scenario, const std::vector<std::string>& simgrid_args);

// Refuses (BadInput, "--cfg=X: why") a --cfg option that is not on dirsched's allow-list (an
// option that writes or reads files, or runs actors in parallel) or a number out of its bounds (a
// stack SimGrid would crash on). `cfg` holds "NAME:VALUE" or "--cfg=NAME:VALUE". probe_simgrid calls
// it; the CLI calls it first, before anything runs. docs/limits.md lists the options and their bounds.
void check_simgrid_cfg(const std::vector<std::string>& cfg);
std::string allowed_simgrid_options();

// SimGrid's list of configuration options (what --cfg=help prints), on stdout.
void print_simgrid_help();

}  // namespace dirsched
