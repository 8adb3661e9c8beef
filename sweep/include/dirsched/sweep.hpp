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
#include <optional>
#include <string>
#include <vector>

#include "dirsched/scenario.hpp"

namespace dirsched {

struct Variant {
  std::size_t index = 0;
  VarAssignment values;
};

// The number of variants, the product of the candidate counts, computed without overflow: nullopt
// when it does not fit in std::size_t. variant_count_text() is the exact product in decimal, any size.
std::optional<std::size_t> variant_count(const Scenario& s);
std::string variant_count_text(const Scenario& s);
Variant variant_at(const Scenario& s, std::size_t index);
// The default of --max-variants: a sweep runs each variant in a process of its own.
constexpr std::size_t kDefaultMaxVariants = 10000;
// Every variant. Throws ScenarioError (path `vars`, the count in the message) before building any
// when there are more than max_variants.
std::vector<Variant> enumerate_variants(const Scenario& s, std::size_t max_variants = kDefaultMaxVariants);
// K distinct variants drawn with the seed, in index order (all of them when K >= the count). Throws
// as enumerate_variants when more than max_variants would run, or the count does not fit in 64 bits.
std::vector<Variant> sample_variants(const Scenario& s, std::size_t k, std::uint64_t seed,
                                     std::size_t max_variants = kDefaultMaxVariants);
std::string variant_dir(const Variant& v);  // "variant-0007"

// One row of sweep.csv, from a variant's summary.json.
struct SweepRow {
  Variant variant;
  double makespan_s = 0;
  double group_wait_mean_s = 0, group_wait_p95_s = 0, group_wait_max_s = 0;
  double single_wait_mean_s = 0, single_wait_p95_s = 0, single_wait_max_s = 0;
  double group_idle_target_s = 0;  // summed over groups
  double utilisation = 0;          // mean over NEXT_LEVEL workers
  long failed = 0, poisoned = 0, rejected = 0, stuck = 0;
  long overtakes_max = 0;  // the most singles that overtook one NEXT_LEVEL group
  long stalls = 0;         // stall reports (group_stall and reservation_stall) the run logged
  std::string outcome;
  // COMPLETED with no REJECTED, FAILED, POISONED or STUCK task. A variant that is not clean did less
  // work, so its makespan says nothing about its worker sets: it ranks after every clean one.
  bool clean = true;
  std::string problems() const;  // "5 rejected, 1 stuck" ("" when clean)
};
SweepRow row_from_summary(const Variant& v, const nlohmann::json& summary);
// Best first: clean before not clean; then makespan, the time groups waited with an idle target, the
// worst group wait, the worst single wait, the mean single wait; then the variant index.
std::vector<std::size_t> rank(const std::vector<SweepRow>& rows);
// The place of each ranked row (1-based); rows whose keys all tie (everything but the index) share one.
std::vector<std::size_t> places(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& ranking);
// What put ranked row k behind row k-1: "clean", "makespan", "idle-target wait", "worst group wait",
// "worst single wait", "mean single wait"; "" for the first row and for a tie.
std::string decided_by(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& ranking, std::size_t k);
std::string sweep_csv(const std::vector<std::string>& var_names, const std::vector<SweepRow>& rows);
// Bars best first on a makespan axis in seconds, each with its value; tied places share a number, every
// variant tied for first is marked best, a variant that is not clean is hatched and says why.
std::string sweep_svg(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& ranking);
// Exactly two variables: a grid of makespans (rows the first variable's candidates, columns the
// second's), coloured best to worst over the clean variants; not-clean cells are grey and say why.
std::string sweep_heatmap_svg(const std::vector<std::string>& var_names, const std::vector<SweepRow>& rows);
std::string ranking_text(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& ranking);
// The `.dirsched-sweep` marker of a sweep folder: the scenario it belongs to (its name and file; the
// Python front end writes "python:FUNCTION" as the file) and the variants it holds. JSON, keys sorted:
// {"dirsched":"sweep","file":...,"scenario":...,"variant_count":N,"variants":[...]}.
struct SweepMarker {
  std::string scenario, file;
  std::vector<std::size_t> variants;
};
std::string sweep_marker_json(const SweepMarker& m);
// Throws std::runtime_error naming the marker (and the line of malformed JSON).
SweepMarker read_sweep_marker(const std::string& dir);
// Makes `dir` (already through check_output_folder) the sweep folder of `m`: refuses, with
// OutputRefused, a sweep folder of another scenario; removes the run folders of variants that are not
// in `m` and the temporaries of processes that no longer run; writes the marker (atomically).
void prepare_sweep_folder(const std::string& dir, const SweepMarker& m);
// Where the marker's variants of sweep folder `dir` stand, without changing anything. A variant is
// complete when its folder holds summary.json and variant.json (a run folder appears whole, by one
// rename); else it is missing. A temporary (NAME.tmp-dirsched-PID-...) is live while process PID runs on
// this machine, dead otherwise. Throws as collect() when `dir` is not a sweep folder.
struct SweepProgress {
  std::vector<std::size_t> complete, missing;                    // in the marker's order
  std::vector<std::pair<std::string, long>> live_temps, dead_temps;  // path, process id
};
SweepProgress sweep_progress(const std::string& dir);
// "variant-0003, variant-0007..variant-0009" (runs of consecutive indices joined).
std::string variant_list_text(const std::vector<std::size_t>& indices);

// The plan that `sweep --plan` printed, kept in the sweep folder (.dirsched-plan) so that
// `sweep --collect DIR --missing` can print the lines still to run: one line per marker variant.
struct SweepPlan {
  std::vector<std::size_t> variants;
  std::vector<std::string> lines;
};
void write_sweep_plan(const std::string& dir, const SweepPlan& plan);
// Throws std::runtime_error naming the file: missing (the folder has no plan), malformed, or not of
// the folder's current variants.
SweepPlan read_sweep_plan(const std::string& dir);

// Reads DIR/variant-*/variant.json and summary.json of the variants the marker lists. Throws
// std::runtime_error naming the path when DIR is not a sweep folder, when a listed variant is missing,
// when two folders hold one variant index or a folder's variant.json names another index, when a
// folder is not one of the marker's variants, when a temporary of a running dirsched is there, and for
// a malformed file (with its line); a missing variant refusal names every missing one. A temporary left
// by a dead process beside a complete variant (a run killed, then run again) is removed, only once
// every check passed.
std::vector<SweepRow> collect(const std::string& dir, std::vector<std::string>* var_names);

// compare: who each run is (folder, scenario, variable values, policy), every divergence of the
// per-worker dispatch sequences up to `limit` (placement as task[member]@worker, time as t=...), the
// groups' launch times and READY waits side by side, the dispatches that moved, and the metrics.
// `same` is true when placements, order, times and metrics all agree. Throws std::runtime_error
// naming a missing or malformed file.
struct Comparison {
  std::string text;
  bool same = true;
};
Comparison compare_runs(const std::string& dir_a, const std::string& dir_b, std::size_t limit = 20);

}  // namespace dirsched
