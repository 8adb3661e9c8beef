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
// A scenario file may hold {"generate": {"family": ..., params...}} in place of `trace`: the loader
// then keeps only the spec (Scenario::generate) and the replay pulls the ops from an OpGenerator one at
// a time, so a 10M-task trace is never held whole; materialize_trace() builds it for those that read
// `trace` itself (the explorer, `dirsched gen`).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "dirsched/scenario.hpp"

namespace dirsched {

// The most edges a `random` task draws (`generate.edges`, and `dirsched gen random --edges`).
inline constexpr std::size_t kMaxGenEdges = 1024;

struct GenerateSpec {
  std::string family;
  std::map<std::string, double> params;  // every numeric option by name
  std::uint64_t seed = 0;
  std::size_t buffer_base = 0;  // the generated buffers' first index (after the file's own)
  // The most tasks the block may make, and edges (`random`) and group members (`tp-groups`): kMaxTasks,
  // or the caller's LoadLimits::max_tasks (parse_scenario).
  std::size_t max_tasks = kMaxTasks;
};

// The ops of a generate block, made one at a time in trace order. Copyable (an explorer copies
// replays): a copy goes on from the same op with the same draws.
class OpGenerator {
 public:
  // Checks the spec's options (ScenarioError with path `generate...`); `s` is the scenario being
  // loaded (its own workers, if any, must cover `workers`).
  OpGenerator(const GenerateSpec& spec, const Scenario& s, const std::string& file);
  // Adds the workers, callable and buffers the file did not set itself.
  void setup(Scenario& s) const;
  // The next op (the last is a drain); false after it.
  bool next(OpSpec& op);
  std::size_t op_count() const { return submits_ + 1; }
  std::size_t submit_count() const { return submits_; }
  std::size_t position() const { return op_; }
  const std::shared_ptr<const GenerateSpec>& spec() const { return spec_; }

 private:
  enum class Family { kStream, kForkJoin, kChains, kTpGroups, kRandom };
  void submit(OpSpec& op, OpKind kind, std::string task, std::size_t members);
  void single(OpSpec& op, std::string task, std::size_t worker);
  void group(OpSpec& op, std::string task, const std::vector<std::size_t>& workers);

  std::shared_ptr<const GenerateSpec> spec_;
  Family family_ = Family::kStream;
  std::size_t workers_ = 0, a_ = 0, b_ = 0, c_ = 0;  // the family's counts, in its option order
  double duration_ = 0, fraction_ = 0;
  bool poisson_ = false, spaced_ = false;
  double rate_ = 0, interval_ = 0;
  std::size_t submits_ = 0, buffer_base_ = 0;
  std::size_t op_ = 0;
  std::mt19937_64 rng_, arrivals_;
  std::exponential_distribution<double> gap_;
  double arrival_t_ = 0;
};

// Fills workers, callables, buffers and trace of `s` (those the file did not set itself).
// Throws ScenarioError (path `generate...`) for an unknown family or a bad parameter.
void generate_into(const GenerateSpec& spec, Scenario& s, const std::string& file);
// The same checks and the same workers, callables and buffers, but only the spec is kept
// (s.generate): the trace stays empty and a Replay generates the ops as it goes.
void generate_lazily(const GenerateSpec& spec, Scenario& s, const std::string& file);
// Builds s.trace from s.generate or s.trace_file (and clears it); nothing for a scenario without
// either. A trace file that changed since it was checked is a ScenarioError. `every` (may be empty)
// is called with the op count every kMaterializeEvery (4,096) ops, and may throw to stop (the explorer
// checks its memory bound there).
void materialize_trace(Scenario& s, const std::function<void(std::size_t ops)>& every = nullptr);

// Writes a scenario as JSON text, streaming (a million ops need no JSON tree in memory).
void write_scenario_json(const Scenario& s, std::ostream& out);

}  // namespace dirsched
