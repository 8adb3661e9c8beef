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
#include <set>
#include <string>
#include <vector>

#include "dirsched/record/marker.hpp"
#include "dirsched/record/summary.hpp"
#include "dirsched/record/sweep_row.hpp"
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

// One row of sweep.csv (record/sweep_row.hpp): a variant and what its run measured, from its summary.json.
struct SweepRow : record::SweepMeasures {
  Variant variant;
  std::string problems() const;  // "5 rejected, 1 stuck" ("" when clean)
};
SweepRow row_from_summary(const Variant& v, const record::Summary& summary);
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
// The `.dirsched-sweep` marker of a sweep folder (record/marker.hpp): the scenario it belongs to and the
// variants it holds.
using SweepMarker = record::SweepMarker;
std::string sweep_marker_json(const SweepMarker& m);
// Throws RecordError (bad input) naming the marker (and the line of malformed JSON).
SweepMarker read_sweep_marker(const std::string& dir);
// The refusals of prepare_sweep_folder, changing nothing: OutputRefused for a sweep folder of another
// scenario, a variant folder holding files no run wrote, or a file, link or foreign folder where one of
// `m`'s variant folders goes. (sweep --plan checks so before it prints a plan, and claims after.)
void check_sweep_folder(const std::string& dir, const SweepMarker& m);
// Makes `dir` (already through check_output_folder) the sweep folder of `m`: refuses as
// check_sweep_folder does (OutputRefused); removes the run folders of variants that are not in `m` and
// the temporaries of processes that no longer run; writes the marker (atomically).
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
// Throws BadInput naming the file: missing (the folder has no plan), malformed, or not of
// the folder's current variants.
SweepPlan read_sweep_plan(const std::string& dir);

// Reads DIR/variant-*/variant.json and summary.json of the variants the marker lists. Throws
// BadInput naming the path when DIR is not a sweep folder, when a listed variant is missing,
// when two folders hold one variant index or a folder's variant.json names another index, when a
// folder is not one of the marker's variants, when a temporary of a running dirsched is there, and for
// a malformed file (with its line); a missing variant refusal names every missing one. A temporary left
// by a dead process beside a complete variant (a run killed, then run again) is removed, only once
// every check passed.
std::vector<SweepRow> collect(const std::string& dir, std::vector<std::string>* var_names);

// compare: who each run is (folder, scenario, variable values, policy), every divergence of the
// per-worker dispatch sequences up to `limit` (placement as task[member]@worker, time as t=...), the
// groups' launch times and READY waits side by side, the dispatches that moved, and the metrics.
// `same` is true when placements, order, times and metrics all agree. Throws BadInput
// naming a missing or malformed file.
struct Comparison {
  std::string text;
  bool same = true;
};
Comparison compare_runs(const std::string& dir_a, const std::string& dir_b, std::size_t limit = 20);

// ---- Replications, objectives and the ranking every output is drawn from (sweep/src/ranking.cpp) ----
//
// A replicated sweep runs every variant under the same N seeds (replicate r runs with the scenario's
// seed + r: common random numbers, so two variants' results are paired by replicate). Per variant and
// metric: the mean, the sample standard deviation, a 95% interval of the mean and "best in k of N" (the
// replicates in which no clean variant did better on that metric). The interval fits the metric
// (interval_by_bootstrap): Student t (mean +- t(0.975, N-1) sd / sqrt(N)) for a metric that is a sum
// or a mean and rarely 0; the BCa bootstrap, widened for small N (stats::bootstrap_interval, seeded, 2000
// resamples, never below 0) for a maximum, a percentile or a metric that is 0 in at least 20% of some
// variant's replicates. Places are family-wise (Separations): every pair of variants equally clean is
// tested on every key of the objective (paired t-test on the per-replicate differences; a key on which
// the pair never differs is no test, Tarone 1990), and Holm's
// step-down procedure over all those tests keeps the chance of declaring any false separation at 5% or
// less; a pair is decided by its first key Holm rejects (with one replicate, or a difference that never
// varies, any difference decides). Clean (every replicate COMPLETED with no REJECTED, FAILED, POISONED or
// STUCK task) always comes first. The order: by the number of variants a variant beats minus the number
// that beat it, then the means key by key, then the index. A variant shares the place of the first
// variant of the place above when no key separates the two: a tie, never a win.
namespace metric {
enum Id : std::size_t {
  kMakespan,
  kIdleTarget,
  kGroupWaitMax,
  kGroupWaitP95,
  kGroupWaitSum,
  kOvertakes,
  kSingleWaitMean,
  kSingleWaitP95,
  kSingleWaitMax,
  kCount
};
}
struct MetricDef {
  const char* name;   // --objective name: "makespan"
  const char* csv;    // sweep-summary.csv prefix: "makespan_s"
  const char* label;  // "makespan"
};
const MetricDef& metric_def(std::size_t id);
double metric_value(const SweepRow& r, std::size_t id);
// makespan, idle_target_wait, group_wait_max, single_wait_max, single_wait_mean: today's sweep order.
std::vector<std::size_t> default_objective();
// A comma-separated list of metric names; BadInput naming the unknown one (and the names).
std::vector<std::size_t> parse_objective(const std::string& list);
std::string objective_names();
// t(0.975, df): a table for df <= 30, a Cornish-Fisher expansion above (within 0.001).
double t975(std::size_t df);

struct MetricStats {
  double mean = 0, sd = 0, ci_low = 0, ci_high = 0;
  std::size_t best_in = 0;
};
// The metrics that are a maximum or a percentile of one run (worst and p95 waits, overtakes (max)).
bool metric_is_extreme(std::size_t id);
// The share of a variant's replicates at 0 from which a metric counts as zero-heavy.
constexpr double kZeroHeavyShare = 0.2;
// Whether the interval of metric `id` is the bootstrap (else Student t), given every variant's
// replicates: an extreme metric, or one that is 0 in at least kZeroHeavyShare of some variant's.
bool interval_by_bootstrap(std::size_t id, const std::vector<const std::vector<SweepRow>*>& per_variant);
// The interval of one variant's replicates of metric `id` by that method ("student_t" or "bootstrap":
// seeded by `seed`, the variant index and the metric; never below 0).
MetricStats metric_stats(const std::vector<SweepRow>& reps, std::size_t id, bool bootstrap, std::uint64_t seed,
                         std::size_t variant_index);
const char* interval_method_name(bool bootstrap);
// The family-wise error rate of places and of optimize's tied_with: 5% (95% family-wise).
constexpr double kFamilyAlpha = 0.05;

// The family-wise comparison of variants (each its replicates, in replicate order, all the same count)
// on the keys of an objective: every pair of variants with the same `clean` (or, given `reference`,
// only the pairs holding it), on every key they differ on in some replicate, a paired t-test; Holm's
// procedure over them all at kFamilyAlpha. Memory: one byte per pair, and the p-values that are neither
// 0 nor above kFamilyAlpha (only they wait for Holm's verdict).
class Separations {
 public:
  static constexpr std::size_t kAll = static_cast<std::size_t>(-1);
  Separations(const std::vector<const std::vector<SweepRow>*>& reps, const std::vector<bool>& clean,
              const std::vector<std::size_t>& objective, std::size_t reference = kAll);
  // (key position, sign): the first key of the objective Holm separates a and b on, -1 when a is
  // better (smaller); (objective size, 0) when none does; (kAll, -1 or +1) when one only is clean.
  std::pair<std::size_t, int> decide(std::size_t a, std::size_t b) const;
  std::size_t family() const { return family_; }  // the tests Holm's procedure ran over

 private:
  std::size_t slot(std::size_t a, std::size_t b) const;
  void separate(std::size_t slot, std::size_t key, int sign);
  std::size_t n_, keys_, reference_, family_ = 0;
  std::vector<bool> clean_;
  std::vector<signed char> first_;  // per pair: sign x (1 + the first key Holm separates it on), 0 for none
};
struct RankedVariant {
  Variant variant;
  std::vector<SweepRow> reps;  // by replicate
  std::size_t clean_reps = 0;
  bool clean = true;           // every replicate clean
  std::vector<MetricStats> stats;  // by metric id
  std::size_t place = 1;
  bool tied = false;
  std::string decided_by;     // the key that put it behind `behind` ("" for place 1 and ties)
  bool tie_breaker = false;   // that key is not the objective's first (the earlier keys did not decide)
  std::optional<std::size_t> behind;  // variant index of the first variant of the place above
  SweepRow mean_row() const;  // a row of the means (clean as `clean`), for the charts
};
struct Ranking {
  std::size_t replicates = 1;
  std::size_t family = 0;                 // the comparisons of pairs and keys Holm's procedure covered
  std::vector<bool> bootstrap;            // by metric id: its interval is the bootstrap (else Student t)
  std::vector<std::uint64_t> seeds;
  std::vector<std::size_t> objective;
  std::vector<RankedVariant> order;  // best first
};
// rows: per variant, its replicates in replicate order (every variant the same count).
Ranking rank_replicated(std::vector<std::vector<SweepRow>> per_variant, const std::vector<std::size_t>& objective,
                        std::vector<std::uint64_t> seeds);
// The sentences ranking.json's `method` and the printed ranking start with (places, intervals).
std::string places_method_text(const Ranking& r);
std::string intervals_method_text(const Ranking& r);
// Variant indexes ranked first (place 1, clean): what every chart marks best.
std::set<std::size_t> best_variants(const Ranking& r);
// The non-dominated clean variants on two metrics (means; smaller is better), as positions in r.order.
// The points no other point dominates (as small or smaller on both, smaller on one), as indexes in
// input order; equal points do not dominate each other. O(n log n): a sort by (a, b), then one pass.
std::vector<std::size_t> non_dominated(const std::vector<std::pair<double, double>>& points);
std::vector<std::size_t> pareto_front(const Ranking& r, std::size_t a, std::size_t b);
std::string ranking_json(const std::vector<std::string>& var_names, const Ranking& r,
                         const std::vector<std::size_t>* pareto = nullptr, std::size_t pa = 0, std::size_t pb = 0);
std::string summary_csv(const std::vector<std::string>& var_names, const Ranking& r);
// sweep.csv of a replicated sweep: one row per variant and replicate (columns variant, replicate, seed,
// then those of sweep_csv, then group_ready_wait_sum_s).
std::string replicated_csv(const std::vector<std::string>& var_names, const Ranking& r);
std::string replicated_ranking_text(const Ranking& r);
// Metric a against metric b, one point per clean variant at its means with 95% CI whiskers, the Pareto
// front joined and marked; best (the ranking's place 1) in green.
std::string pareto_svg(const Ranking& r, std::size_t a, std::size_t b);
// The heatmap with its best cells from the ranking (`best`: variant indexes).
std::string sweep_heatmap_svg(const std::vector<std::string>& var_names, const std::vector<SweepRow>& rows,
                              const std::set<std::size_t>& best);
// sweep.svg from a ranking: bars of mean makespan best first, places and ties as the ranking has them,
// 95% CI whiskers when replicated.
std::string sweep_svg(const Ranking& r);

}  // namespace dirsched

namespace dirsched {
// A row's metrics as a small JSON object (replicates.jsonl, the evaluation pool), and back. The
// variant is not in it. from_json throws BadInput naming a missing or mistyped field.
nlohmann::json sweep_row_json(const SweepRow& r);
SweepRow sweep_row_from_json(const Variant& v, const nlohmann::json& j);
}  // namespace dirsched

#include <functional>

namespace dirsched {
// The search of `optimize` over the variants of a scenario (variant k as variant_at numbers it: `dims`
// are the candidate counts in name order, the last fastest). A score is compared lexicographically,
// smaller better. Exhaustive when the space has at most `budget` points; otherwise a seeded coordinate
// descent: from a random point, every other candidate of one variable at a time (variables in a seeded
// order; for a variable with a neighbourhood, its neighbours only) is evaluated as one batch and the best
// taken, until no variable improves; then a restart from a random point not yet evaluated, until the
// budget is spent. No point is evaluated twice.
using Score = std::vector<double>;
struct SearchResult {
  std::size_t best = 0;
  Score best_score;
  std::size_t evaluations = 0;
  bool exhaustive = false;
  bool surrogate = false;  // the main-effects surrogate search ran (features given and few enough)
  std::vector<std::pair<std::size_t, std::size_t>> improvements;  // (evaluations so far, new best point)
  std::map<std::size_t, Score> scores;                            // every point evaluated
};
// `neighbours(k, c)`, when given and not empty for variable k, replaces "every other candidate" in the
// descent's step on k with the candidates it returns for candidate c (a `choose` space: swap_neighbours).
using Neighbours = std::function<std::vector<std::size_t>(std::size_t var, std::size_t candidate)>;
// `features[k][c]`: the features candidate c of variable k has (candidate_features). Given, and at most
// kMaxModelFeatures in all, the search is a main-effects surrogate search instead of the descent: a
// seeded random design of max(4, budget / 10) points, then, one point at a time, the unevaluated point
// whose score a ridge regression of the first objective key on the features (fitted to the clean points
// evaluated so far, the key standardized, penalty 0.5; each effect taken one standard error better than
// its estimate, so that a value seldom evaluated gets tried) predicts best, until the budget is spent. The
// prediction is a sum over variables, so the best unevaluated point comes from a best-first walk of
// each variable's candidates sorted by their part: the work per step follows the evaluations, not the
// space's size.
using Features = std::vector<std::vector<std::vector<std::uint32_t>>>;
inline constexpr std::size_t kMaxModelFeatures = 128;
SearchResult search_space(const std::vector<std::size_t>& dims, std::size_t budget, std::uint64_t seed,
                          const std::function<std::vector<Score>(const std::vector<std::size_t>&)>& evaluate,
                          const Neighbours& neighbours = {}, const Features* features = nullptr);
// What ran, for optimize.json's `method` (with the search seed) and its printed line (the name alone).
std::string search_method_text(const SearchResult& res, std::uint64_t seed);
std::string search_method_name(const SearchResult& res);
// A variable's candidates as features: a `choose` space's list holds its ids (unordered: one feature per
// id; ordered: one per (position, id)); any other candidate is one feature of its own.
std::vector<std::vector<std::uint32_t>> candidate_features(const std::vector<nlohmann::json>& candidates, bool choose,
                                                           bool ordered);
// The swap neighbourhood of candidate `c` in a `choose` space (`candidates`: lists of ids of one length):
// unordered, the lists that trade one id for one not in `c`; ordered (`holds_arrangements`), those that
// put another id at one position, or exchange two positions. Ascending; empty when the candidates are
// not such lists. O(candidates x length x log length).
std::vector<std::size_t> swap_neighbours(const std::vector<nlohmann::json>& candidates, std::size_t c, bool ordered);
// Whether another candidate holds the first one's ids in another order (an ordered `choose` space).
bool holds_arrangements(const std::vector<nlohmann::json>& candidates);
// Symmetry (sweep/src/symmetry.cpp): the ids of variable `var`'s lists (a `choose` space) grouped into
// classes of chips the scenario cannot tell apart, each class sorted, the classes sorted; an id alone is
// a class of one. Two ids share a class when both are NEXT_LEVEL workers of one kind, frames and
// prepare_overlap, eligible for the same callables, on the same host (on the default platform, each alone
// on a host of its own will do: those hosts have one speed and one link each), and nothing names either
// apart: no op's `worker` or `workers` outside "$var" (another variable there names all its candidates'
// ids), no buffer owner, MPI rank, expect.dispatch_order_per_worker key, fault on its host or link, and
// no candidate of another variable holds it. A trace that is not inline (a trace file, a generate block)
// cannot be read for names: every id is then a class of one.
std::vector<std::vector<std::int64_t>> interchangeable_ids(const Scenario& base, const nlohmann::json& doc,
                                                           const std::string& var);
// Per candidate, the first candidate equivalent to it: the same list, position by position, once the
// ids of each class are renamed within the class (ordered space or not: member m of a group runs on the
// list's m-th id). A candidate that is not a list of the classes' ids is its own.
std::vector<std::size_t> class_representatives(const std::vector<nlohmann::json>& candidates,
                                               const std::vector<std::vector<std::int64_t>>& classes);
}  // namespace dirsched
