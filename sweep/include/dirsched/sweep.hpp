// Sweeps over a scenario's `vars`, and the comparison of two runs.
//
// A variant is one value per variable. enumerate_variants() lists the Cartesian product with the
// variables in name order and the last one varying fastest; variant k is always the same values, so a
// sampled sweep, a plan run on many machines and a collected folder agree on the numbering. The CLI
// runs the variants (in processes: SimGrid allows one engine per process); this file turns their run
// folders into sweep.csv, a chart and a ranking, and compares two runs.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dirsched/scenario.hpp"

namespace dirsched {

struct Variant {
  std::size_t index = 0;
  VarAssignment values;
};

std::size_t variant_count(const Scenario& s);
Variant variant_at(const Scenario& s, std::size_t index);
std::vector<Variant> enumerate_variants(const Scenario& s);
// K distinct variants drawn with the seed, in index order (all of them when K >= the count).
std::vector<Variant> sample_variants(const Scenario& s, std::size_t k, std::uint64_t seed);
std::string variant_dir(const Variant& v);  // "variant-0007"

// One row of sweep.csv, from a variant's summary.json.
struct SweepRow {
  Variant variant;
  double makespan_s = 0;
  double group_wait_mean_s = 0, group_wait_max_s = 0;
  double group_idle_target_s = 0;  // summed over groups
  double utilisation = 0;          // mean over NEXT_LEVEL workers
  long failed = 0, poisoned = 0, rejected = 0;
  std::string outcome;
};
SweepRow row_from_summary(const Variant& v, const nlohmann::json& summary);
// Best first: makespan, then time groups waited with an idle target, then the worst group wait, then index.
std::vector<std::size_t> rank(const std::vector<SweepRow>& rows);
std::string sweep_csv(const std::vector<std::string>& var_names, const std::vector<SweepRow>& rows);
std::string sweep_svg(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& ranking);
std::string ranking_text(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& ranking);
// Reads DIR/variant-*/variant.json and summary.json. Throws std::runtime_error naming a bad file.
std::vector<SweepRow> collect(const std::string& dir, std::vector<std::string>* var_names);

// compare: the first divergence in each worker's dispatch sequence, and the metrics side by side.
std::string compare_runs(const std::string& dir_a, const std::string& dir_b);
// compare, per group: both runs' policies, each group's launch time, READY wait and overtakes side by
// side, and every dispatch (task[member]@worker t=...) whose worker or time differs between the runs.
std::string compare_groups(const std::string& dir_a, const std::string& dir_b);

}  // namespace dirsched
