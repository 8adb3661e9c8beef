// Workload generators: a few parameters stand for a huge trace.
//
// Families (every one takes `seed`; draws come from one std::mt19937_64 seeded with it):
//   stream     tasks N, workers W, duration_s D: N independent singles, task i on chip i mod W, all at t=0
//   fork-join  rounds R, width K, workers W, duration_s D: per round a fork task, K parallel tasks that
//              read its output, a join that reads all K; round r+1 forks from round r's join
//   chains     chains C, length L, workers W, duration_s D: chain c is L singles with INOUT on its own
//              buffer, link k on chip (c + k) mod W
//   tp-groups  groups G, size k, workers W, singles_per_group S, duration_s D: G groups of k members on
//              k consecutive chips (starting at (j * k) mod W), each followed by S singles on random chips
//   random     tasks N, workers W, edges E, group_fraction P, duration_s D: a random DAG; each task reads
//              up to E earlier tasks' outputs; a fraction P are groups of 2-4 members on distinct chips
// Every family also takes `arrival_rate` R (submits arrive as a Poisson process of R per second: gaps
// drawn from an exponential distribution on a stream of their own, so the DAG is the one without it) or
// `interval` S (submit i at i * S); without either, every op starts as soon as the previous returned.
// The generated scenario is complete (workers, callables, buffers, trace) and replays like any file.
// A scenario file may hold {"generate": {"family": ..., params...}} in place of `trace`.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>

#include "dirsched/scenario.hpp"

namespace dirsched {

struct GenerateSpec {
  std::string family;
  std::map<std::string, double> params;  // every numeric option by name
  std::uint64_t seed = 0;
};

// Fills workers, callables, buffers and trace of `s` (those the file did not set itself).
// Throws ScenarioError (path `generate...`) for an unknown family or a bad parameter.
void generate_into(const GenerateSpec& spec, Scenario& s, const std::string& file);

// Writes a scenario as JSON text, streaming (a million ops need no JSON tree in memory).
void write_scenario_json(const Scenario& s, std::ostream& out);

}  // namespace dirsched
