// The ranking of a (replicated) sweep, and every output drawn from it: sweep.svg, the heatmap's best
// cells, the Pareto scatter, ranking.json, sweep-summary.csv and the replicated sweep.csv.
#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <stdexcept>

#include "dirsched/sweep.hpp"
#include "dirsched/stats.hpp"
#include "dirsched/error.hpp"
#include "dirsched/escape.hpp"
#include "dirsched/format.hpp"

namespace dirsched {
namespace {

using nlohmann::json;

std::string esc(const std::string& s) { return html_escape(s); }

std::string values_text(const VarAssignment& values) {
  std::string o;
  for (const auto& [k, v] : values) o += (o.empty() ? "" : ", ") + k + "=" + v.dump();
  return o;
}

std::string value_field(const VarAssignment& values, const std::string& n) {
  auto it = values.find(n);
  return csv_field(it == values.end() ? "" : it->second.is_string() ? it->second.get<std::string>() : it->second.dump());
}

const MetricDef kMetrics[metric::kCount] = {
    {"makespan", "makespan_s", "makespan"},
    {"idle_target_wait", "group_idle_target_s", "idle-target wait"},
    {"group_wait_max", "group_ready_wait_max_s", "worst group wait"},
    {"group_wait_p95", "group_ready_wait_p95_s", "group wait p95"},
    {"group_wait_sum", "group_ready_wait_sum_s", "summed group wait"},
    {"overtakes", "overtakes_max", "overtakes (max)"},
    {"single_wait_mean", "single_ready_wait_mean_s", "mean single wait"},
    {"single_wait_p95", "single_ready_wait_p95_s", "single wait p95"},
    {"single_wait_max", "single_ready_wait_max_s", "worst single wait"},
};

}  // namespace

const MetricDef& metric_def(std::size_t id) { return kMetrics[id]; }

double metric_value(const SweepRow& r, std::size_t id) {
  switch (id) {
    case metric::kMakespan: return r.makespan_s;
    case metric::kIdleTarget: return r.group_idle_target_s;
    case metric::kGroupWaitMax: return r.group_wait_max_s;
    case metric::kGroupWaitP95: return r.group_wait_p95_s;
    case metric::kGroupWaitSum: return r.group_wait_sum_s;
    case metric::kOvertakes: return static_cast<double>(r.overtakes_max);
    case metric::kSingleWaitMean: return r.single_wait_mean_s;
    case metric::kSingleWaitP95: return r.single_wait_p95_s;
    case metric::kSingleWaitMax: return r.single_wait_max_s;
    default: return 0;
  }
}

std::vector<std::size_t> default_objective() {
  return {metric::kMakespan, metric::kIdleTarget, metric::kGroupWaitMax, metric::kSingleWaitMax,
          metric::kSingleWaitMean};
}

std::string objective_names() {
  std::string o;
  for (const MetricDef& m : kMetrics) o += (o.empty() ? "" : ", ") + std::string(m.name);
  return o;
}

std::vector<std::size_t> parse_objective(const std::string& list) {
  std::vector<std::size_t> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string name = list.substr(start, comma - start);
    std::size_t id = metric::kCount;
    for (std::size_t i = 0; i < metric::kCount; ++i)
      if (name == kMetrics[i].name) id = i;
    if (id == metric::kCount) throw BadInput("unknown metric '" + name + "' (" + objective_names() + ")");
    if (std::find(out.begin(), out.end(), id) != out.end())
      throw BadInput("metric '" + name + "' given twice");
    out.push_back(id);
    start = comma + 1;
  }
  return out;
}

double t975(std::size_t df) {
  static const double table[] = {0,      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                 2.201,  2.179,  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080,
                                 2.074,  2.069,  2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df == 0) return std::nan("");
  if (df <= 30) return table[df];
  const double z = 1.959964, n = static_cast<double>(df);
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;
  return z + (z3 + z) / (4 * n) + (5 * z5 + 16 * z3 + 3 * z) / (96 * n * n) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * n * n * n);
}

SweepRow RankedVariant::mean_row() const {
  SweepRow r = reps.front();
  r.makespan_s = stats[metric::kMakespan].mean;
  r.group_idle_target_s = stats[metric::kIdleTarget].mean;
  r.group_held_target_s = 0;  // no ranking metric: the plain mean over the replicates
  for (const SweepRow& x : reps) r.group_held_target_s += x.group_held_target_s / static_cast<double>(reps.size());
  r.group_wait_max_s = stats[metric::kGroupWaitMax].mean;
  r.group_wait_p95_s = stats[metric::kGroupWaitP95].mean;
  r.group_wait_sum_s = stats[metric::kGroupWaitSum].mean;
  r.single_wait_mean_s = stats[metric::kSingleWaitMean].mean;
  r.single_wait_p95_s = stats[metric::kSingleWaitP95].mean;
  r.single_wait_max_s = stats[metric::kSingleWaitMax].mean;
  r.clean = clean;
  if (!clean)
    for (const SweepRow& x : reps)
      if (!x.clean) {
        r.failed = x.failed, r.poisoned = x.poisoned, r.rejected = x.rejected, r.stuck = x.stuck, r.outcome = x.outcome;
        break;
      }
  return r;
}

bool metric_is_extreme(std::size_t id) {
  return id == metric::kGroupWaitMax || id == metric::kGroupWaitP95 || id == metric::kOvertakes ||
         id == metric::kSingleWaitP95 || id == metric::kSingleWaitMax;
}

bool interval_by_bootstrap(std::size_t id, const std::vector<const std::vector<SweepRow>*>& per_variant) {
  if (metric_is_extreme(id)) return true;
  for (const std::vector<SweepRow>* reps : per_variant) {
    std::size_t zeros = 0;
    for (const SweepRow& r : *reps) zeros += metric_value(r, id) == 0;
    if (!reps->empty() && static_cast<double>(zeros) >= kZeroHeavyShare * static_cast<double>(reps->size())) return true;
  }
  return false;
}

const char* interval_method_name(bool bootstrap) { return bootstrap ? "bootstrap" : "student_t"; }

MetricStats metric_stats(const std::vector<SweepRow>& reps, std::size_t id, bool bootstrap, std::uint64_t seed,
                         std::size_t variant_index) {
  MetricStats st;
  std::vector<double> x;
  for (const SweepRow& r : reps) x.push_back(metric_value(r, id));
  const double n = static_cast<double>(x.size());
  for (double v : x) st.mean += v;
  st.mean /= n;
  double ss = 0;
  for (double v : x) ss += (v - st.mean) * (v - st.mean);
  st.sd = x.size() > 1 ? std::sqrt(ss / (n - 1)) : 0;
  if (bootstrap) {
    const stats::Interval i = stats::bootstrap_interval(x, stats::mix_seed(seed, variant_index, id), 0.0);
    st.ci_low = i.low, st.ci_high = i.high;
  } else {
    const double half = x.size() > 1 ? t975(x.size() - 1) * st.sd / std::sqrt(n) : 0;
    st.ci_low = st.mean - half, st.ci_high = st.mean + half;
  }
  return st;
}

Separations::Separations(const std::vector<const std::vector<SweepRow>*>& reps, const std::vector<bool>& clean,
                         const std::vector<std::size_t>& objective, std::size_t reference)
    : n_(reps.size()), keys_(objective.size()), reference_(reference), clean_(clean) {
  first_.assign(reference == kAll ? n_ * (n_ > 0 ? n_ - 1 : 0) / 2 : n_, 0);
  struct Pending {
    double p;
    std::size_t slot, key;
    int sign;
  };
  std::vector<Pending> pending;  // 0 < p <= kFamilyAlpha: for Holm to decide
  std::size_t exact = 0;
  std::vector<double> d;
  for (std::size_t a = 0; a < n_; ++a)
    for (std::size_t b = a + 1; b < n_; ++b) {
      if (clean_[a] != clean_[b] || (reference != kAll && a != reference && b != reference)) continue;
      const std::size_t n = std::min(reps[a]->size(), reps[b]->size());
      for (std::size_t k = 0; k < keys_; ++k) {
        d.assign(n, 0.0);
        for (std::size_t r = 0; r < n; ++r)
          d[r] = metric_value((*reps[a])[r], objective[k]) - metric_value((*reps[b])[r], objective[k]);
        const stats::PairedTest t = stats::paired_test(d);
        if (!t.testable) continue;
        ++family_;
        const int sign = t.mean < 0 ? -1 : 1;
        if (t.p == 0) ++exact, separate(slot(a, b), k, sign);
        else if (t.p <= kFamilyAlpha) pending.push_back({t.p, slot(a, b), k, sign});
      }
    }
  std::stable_sort(pending.begin(), pending.end(), [](const Pending& x, const Pending& y) { return x.p < y.p; });
  std::vector<double> small;
  for (const Pending& x : pending) small.push_back(x.p);
  const std::size_t rejected = stats::holm_count(small, family_, exact, kFamilyAlpha);
  for (std::size_t i = 0; i < rejected; ++i) separate(pending[i].slot, pending[i].key, pending[i].sign);
}

void Separations::separate(std::size_t at, std::size_t key, int sign) {
  const int code = first_[at], with = sign * static_cast<int>(key + 1);
  if (code == 0 || static_cast<int>(key + 1) < std::abs(code)) first_[at] = static_cast<signed char>(with);
}

std::size_t Separations::slot(std::size_t a, std::size_t b) const {
  if (reference_ != kAll) return a == reference_ ? b : a;
  // Pair (a, b), a < b, in the order (0,1), (0,2), ..., (1,2), ...
  return a * n_ - a * (a + 1) / 2 + (b - a - 1);
}

std::pair<std::size_t, int> Separations::decide(std::size_t a, std::size_t b) const {
  if (clean_[a] != clean_[b]) return {kAll, clean_[a] ? -1 : 1};
  const int code = first_[slot(std::min(a, b), std::max(a, b))];
  if (code == 0) return {keys_, 0};
  const int flip = a < b ? 1 : -1;
  return {static_cast<std::size_t>(std::abs(code) - 1), flip * (code < 0 ? -1 : 1)};
}

Ranking rank_replicated(std::vector<std::vector<SweepRow>> per_variant, const std::vector<std::size_t>& objective,
                        std::vector<std::uint64_t> seeds) {
  Ranking out;
  out.objective = objective;
  out.seeds = std::move(seeds);
  out.replicates = per_variant.empty() ? 1 : per_variant.front().size();
  std::vector<const std::vector<SweepRow>*> reps;
  for (const auto& r : per_variant) reps.push_back(&r);
  out.bootstrap.resize(metric::kCount);
  for (std::size_t m = 0; m < metric::kCount; ++m) out.bootstrap[m] = out.replicates > 1 && interval_by_bootstrap(m, reps);
  const std::uint64_t seed = out.seeds.empty() ? 0 : out.seeds.front();
  std::vector<RankedVariant> vs;
  std::vector<bool> clean;
  for (const auto& rows : per_variant) {
    RankedVariant v;
    v.variant = rows.front().variant;
    v.reps = rows;  // a copy: `reps` above points at per_variant, which the Separations below read
    for (const SweepRow& r : v.reps) v.clean_reps += r.clean;
    v.clean = v.clean_reps == v.reps.size();
    for (std::size_t m = 0; m < metric::kCount; ++m)
      v.stats.push_back(metric_stats(v.reps, m, out.bootstrap[m], seed, v.variant.index));
    clean.push_back(v.clean);
    vs.push_back(std::move(v));
  }
  // best in k of N: per replicate, the clean variants with the least value of the metric.
  for (std::size_t r = 0; r < out.replicates; ++r)
    for (std::size_t m = 0; m < metric::kCount; ++m) {
      double lo = 0;
      bool any = false;
      for (const RankedVariant& v : vs)
        if (r < v.reps.size() && v.reps[r].clean) {
          const double x = metric_value(v.reps[r], m);
          lo = any ? std::min(lo, x) : x, any = true;
        }
      for (RankedVariant& v : vs)
        if (any && r < v.reps.size() && v.reps[r].clean && metric_value(v.reps[r], m) <= lo + 1e-12) ++v.stats[m].best_in;
    }
  // Pairwise: wins minus losses, each pair decided by its first key Holm separates it on.
  const Separations sep(reps, clean, objective);
  out.family = sep.family();
  const std::size_t n = vs.size();
  std::vector<long> score(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const int c = sep.decide(i, j).second;
      score[i] -= c, score[j] += c;
    }
  std::vector<std::size_t> idx(n);
  for (std::size_t i = 0; i < n; ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    if (vs[a].clean != vs[b].clean) return vs[a].clean;
    if (score[a] != score[b]) return score[a] > score[b];
    for (std::size_t m : objective)
      if (vs[a].stats[m].mean != vs[b].stats[m].mean) return vs[a].stats[m].mean < vs[b].stats[m].mean;
    return vs[a].variant.index < vs[b].variant.index;
  });
  // Places: a variant ties with the first of the place above when no key separates them.
  std::size_t leader = 0;
  for (std::size_t k = 0; k < n; ++k) {
    RankedVariant& v = vs[idx[k]];
    if (k == 0) {
      v.place = 1;
      continue;
    }
    RankedVariant& lead = vs[idx[leader]];
    const auto [key, sign] = sep.decide(idx[leader], idx[k]);
    if (sign == 0) {
      v.place = lead.place;
      v.tied = lead.tied = true;
      continue;
    }
    v.place = k + 1;
    v.behind = lead.variant.index;
    v.decided_by = key == Separations::kAll ? "clean" : kMetrics[objective[key]].label;
    v.tie_breaker = key != Separations::kAll && key > 0;
    leader = k;
  }
  for (std::size_t i : idx) out.order.push_back(std::move(vs[i]));
  for (std::size_t k = 0; k < out.order.size(); ++k)  // a tie marks every member of its place
    for (std::size_t j = 0; j < out.order.size(); ++j)
      if (j != k && out.order[j].place == out.order[k].place) out.order[k].tied = true;
  return out;
}

std::string places_method_text(const Ranking& r) {
  if (r.replicates <= 1) return "one replicate: exact comparison key by key; equal keys share a place (a tie)";
  return "places from paired t-tests on every pair of variants and every key of the objective, Holm's step-down "
         "procedure over all " +
         std::to_string(r.family) +
         " of them at family-wise 95% (the chance that any separation is declared between variants that do not "
         "differ is at most 5%); a pair is decided by its first key Holm separates";
}

std::string intervals_method_text(const Ranking& r) {
  if (r.replicates <= 1) return "one replicate: no intervals";
  std::string t, boot;
  for (std::size_t m = 0; m < metric::kCount; ++m) {
    std::string& list = r.bootstrap[m] ? boot : t;
    list += (list.empty() ? "" : ", ") + std::string(kMetrics[m].name);
  }
  std::string o = "95% intervals of the means:";
  if (!t.empty()) o += " Student t (mean +- t(0.975, N-1) sd/sqrt(N)) for " + t;
  if (!t.empty() && !boot.empty()) o += ";";
  if (!boot.empty())
    o += " BCa bootstrap (" + std::to_string(stats::kBootstrapResamples) +
         " resamples, seeded, never below 0) for " + boot + " (a maximum, a percentile, or 0 in at least " +
         std::to_string(static_cast<int>(kZeroHeavyShare * 100)) + "% of some variant's replicates)";
  return o;
}

std::set<std::size_t> best_variants(const Ranking& r) {
  std::set<std::size_t> out;
  for (const RankedVariant& v : r.order)
    if (v.place == 1 && v.clean) out.insert(v.variant.index);
  return out;
}

std::vector<std::size_t> non_dominated(const std::vector<std::pair<double, double>>& points) {
  std::vector<std::size_t> by(points.size());
  for (std::size_t i = 0; i < by.size(); ++i) by[i] = i;
  std::sort(by.begin(), by.end(), [&](std::size_t x, std::size_t y) { return points[x] < points[y]; });
  // Walk the groups of equal a in increasing a: a point is not dominated when its b is its group's
  // smallest and smaller than every b of a smaller a.
  std::vector<std::size_t> out;
  double best_before = std::numeric_limits<double>::infinity();
  for (std::size_t g = 0; g < by.size();) {
    std::size_t end = g;
    while (end < by.size() && points[by[end]].first == points[by[g]].first) ++end;
    const double group_min = points[by[g]].second;
    if (group_min < best_before)
      for (std::size_t k = g; k < end && points[by[k]].second == group_min; ++k) out.push_back(by[k]);
    best_before = std::min(best_before, group_min);
    g = end;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::size_t> pareto_front(const Ranking& r, std::size_t a, std::size_t b) {
  std::vector<std::pair<double, double>> points;
  std::vector<std::size_t> at;  // the clean variants' places in r.order
  for (std::size_t i = 0; i < r.order.size(); ++i)
    if (r.order[i].clean) points.emplace_back(r.order[i].stats[a].mean, r.order[i].stats[b].mean), at.push_back(i);
  std::vector<std::size_t> out;
  for (std::size_t k : non_dominated(points)) out.push_back(at[k]);
  return out;
}

std::string ranking_json(const std::vector<std::string>& names, const Ranking& r, const std::vector<std::size_t>* pareto,
                         std::size_t pa, std::size_t pb) {
  json j;
  j["replicates"] = r.replicates;
  j["seeds"] = r.seeds;
  json obj = json::array({"clean"});
  for (std::size_t m : r.objective) obj.push_back(kMetrics[m].name);
  j["objective"] = obj;
  j["var_names"] = names;
  j["method"] = r.replicates > 1 ? "common random numbers (replicate r: seed + r); " + places_method_text(r) + "; " +
                                       intervals_method_text(r) +
                                       "; a variant that no key separates from the first of the place above shares "
                                       "its place (a tie)"
                                 : places_method_text(r);
  j["places"] = {{"procedure", r.replicates > 1 ? "holm" : "exact"},
                 {"family_level", 1 - kFamilyAlpha},
                 {"comparisons", r.family}};
  json intervals = json::object();
  for (std::size_t m = 0; m < metric::kCount; ++m)
    intervals[kMetrics[m].name] = r.replicates > 1 ? interval_method_name(r.bootstrap[m]) : "none";
  j["intervals"] = {{"level", 0.95}, {"bootstrap_resamples", stats::kBootstrapResamples}, {"by_metric", intervals}};
  json rows = json::array();
  for (const RankedVariant& v : r.order) {
    json x;
    x["variant"] = v.variant.index;
    x["vars"] = json::object();
    for (const auto& [k, val] : v.variant.values) x["vars"][k] = val;
    x["rank"] = v.place;
    x["tied"] = v.tied;
    x["clean"] = v.clean;
    x["clean_replicates"] = v.clean_reps;
    x["decided_by"] = v.decided_by.empty() ? json(nullptr) : json(v.decided_by);
    x["tie_breaker"] = v.tie_breaker;
    x["behind"] = v.behind ? json(*v.behind) : json(nullptr);
    json m = json::object();
    for (std::size_t id = 0; id < metric::kCount; ++id) {
      const MetricStats& st = v.stats[id];
      m[kMetrics[id].name] = {{"mean", st.mean}, {"sd", st.sd}, {"ci_low", st.ci_low}, {"ci_high", st.ci_high},
                              {"best_in", st.best_in}};
    }
    x["metrics"] = m;
    rows.push_back(x);
  }
  j["ranking"] = rows;
  json best = json::array();
  for (std::size_t b : best_variants(r)) best.push_back(b);
  j["best"] = best;
  if (pareto) {
    json p = json::array();
    for (std::size_t i : *pareto) p.push_back(r.order[i].variant.index);
    j["pareto"] = {{"metrics", {kMetrics[pa].name, kMetrics[pb].name}}, {"variants", p}};
  }
  return j.dump(2) + "\n";
}

std::string summary_csv(const std::vector<std::string>& names, const Ranking& r) {
  std::string o = "variant";
  for (const std::string& n : names) o += "," + csv_field(n);
  o += ",rank,tied,clean,clean_replicates,replicates,decided_by,tie_breaker";
  for (const MetricDef& m : kMetrics)
    o += "," + std::string(m.csv) + "_mean," + m.csv + "_sd," + m.csv + "_ci_low," + m.csv + "_ci_high," + m.csv +
         "_best_in," + m.csv + "_ci_method";
  o += "\n";
  for (const RankedVariant& v : r.order) {
    o += std::to_string(v.variant.index);
    for (const std::string& n : names) o += "," + value_field(v.variant.values, n);
    o += "," + std::to_string(v.place) + "," + (v.tied ? "true" : "false") + "," + (v.clean ? "true" : "false") + "," +
         std::to_string(v.clean_reps) + "," + std::to_string(v.reps.size()) + "," + csv_field(v.decided_by) + "," +
         (v.tie_breaker ? "true" : "false");
    for (std::size_t m = 0; m < metric::kCount; ++m) {
      const MetricStats& st = v.stats[m];
      o += "," + g6(st.mean) + "," + g6(st.sd) + "," + g6(st.ci_low) + "," + g6(st.ci_high) + "," +
           std::to_string(st.best_in) + "," + (r.replicates > 1 ? interval_method_name(r.bootstrap[m]) : "none");
    }
    o += "\n";
  }
  return o;
}

std::string replicated_csv(const std::vector<std::string>& names, const Ranking& r) {
  // Rows in variant order, then replicate: the same table whatever the ranking.
  std::vector<const RankedVariant*> by_index;
  for (const RankedVariant& v : r.order) by_index.push_back(&v);
  std::sort(by_index.begin(), by_index.end(),
            [](const RankedVariant* a, const RankedVariant* b) { return a->variant.index < b->variant.index; });
  std::vector<SweepRow> one(1);
  std::string o;
  bool header = true;
  for (const RankedVariant* v : by_index)
    for (std::size_t k = 0; k < v->reps.size(); ++k) {
      one[0] = v->reps[k];
      const std::string text = sweep_csv(names, one);
      const std::size_t nl = text.find('\n');
      if (header) o += "variant,replicate,seed" + text.substr(7, nl - 7) + ",group_ready_wait_sum_s\n", header = false;
      const std::string row = text.substr(nl + 1, text.size() - nl - 2);
      const std::size_t comma = row.find(',');
      o += row.substr(0, comma) + "," + std::to_string(k) + "," +
           (k < r.seeds.size() ? std::to_string(r.seeds[k]) : std::string()) + row.substr(comma) + "," +
           g6(v->reps[k].group_wait_sum_s) + "\n";
    }
  return o;
}

std::string replicated_ranking_text(const Ranking& r) {
  std::string o;
  const std::size_t n = r.replicates;
  o += "ranking over " + std::to_string(n) + " replicates (seeds " +
       (r.seeds.empty() ? std::string("?") : std::to_string(r.seeds.front()) + ".." + std::to_string(r.seeds.back())) +
       ", the same for every variant); objective: clean";
  for (std::size_t m : r.objective) o += ", " + std::string(kMetrics[m].name);
  o += "\n" + places_method_text(r) + ": a variant no key separates from the place above shares its place (=)\n" +
       intervals_method_text(r) + "\n";
  auto ci = [&](const RankedVariant& v, std::size_t m, const char* unit) {
    const MetricStats& s = v.stats[m];
    return g6(s.mean) + unit + " [" + g6(s.ci_low) + ", " + g6(s.ci_high) + "]";
  };
  for (const RankedVariant& v : r.order) {
    o += std::to_string(v.place) + (v.tied ? "=" : "") + ". variant " + std::to_string(v.variant.index) + " (" +
         values_text(v.variant.values) + ")" +
         (v.clean ? "" : " NOT CLEAN in " + std::to_string(v.reps.size() - v.clean_reps) + " of " +
                             std::to_string(v.reps.size()) + " replicates") +
         ": makespan " + ci(v, metric::kMakespan, " s") + ", best in " +
         std::to_string(v.stats[metric::kMakespan].best_in) + " of " + std::to_string(n) + "; worst group wait " +
         ci(v, metric::kGroupWaitMax, " s") + ", idle-target wait " + ci(v, metric::kIdleTarget, " s") +
         ", worst single wait " + ci(v, metric::kSingleWaitMax, " s") + ", overtakes (max) " +
         g6(v.stats[metric::kOvertakes].mean);
    if (v.behind)
      o += "; behind variant " + std::to_string(*v.behind) + " on " + v.decided_by +
           (v.tie_breaker ? " (a tie-breaker: the keys before it do not separate them)" : "");
    o += "\n";
  }
  std::size_t first = 0;
  for (const RankedVariant& v : r.order) first += v.place == 1;
  if (first > 1)
    o += std::to_string(first) + " variants share first place: no key of the objective tells them apart at family-wise 95% (" +
         std::to_string(n) + " replicates); more replicates may\n";
  return o;
}

std::string sweep_svg(const Ranking& rk) {
  std::vector<SweepRow> rows;
  std::vector<std::size_t> order;
  for (const RankedVariant& v : rk.order) rows.push_back(v.mean_row()), order.push_back(order.size());
  std::size_t longest = 0;
  for (const SweepRow& r : rows) longest = std::max(longest, values_text(r.variant.values).size() + 24);
  const double bar_h = 24, left = std::min(520.0, 30 + 6.2 * static_cast<double>(longest)), plot_w = 480,
               right = 260, top = 64;
  const double width = left + plot_w + right;
  double max_m = 0;
  for (const RankedVariant& v : rk.order) max_m = std::max(max_m, v.stats[metric::kMakespan].ci_high);
  if (max_m <= 0) max_m = 1;
  const double step = tick_step(max_m, 6);
  const double axis_max = std::ceil(max_m / step - 1e-9) * step;
  auto x_of = [&](double v) { return left + plot_w * std::max(0.0, v) / axis_max; };
  const double plot_bottom = top + bar_h * static_cast<double>(rows.size());
  const double height = plot_bottom + 70;
  std::string o =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + g6(width) + "\" height=\"" + g6(height) +
      "\" viewBox=\"0 0 " + g6(width) + " " + g6(height) +
      "\" font-family=\"Helvetica,Arial,sans-serif\" font-size=\"11\">\n"
      "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
      "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#dddddd\"/>"
      "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#999999\" stroke-width=\"2\"/>"
      "</pattern></defs>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
      "<text x=\"10\" y=\"20\" font-size=\"13\" font-weight=\"bold\">Mean makespan per variant over " +
      std::to_string(rk.replicates) +
      " replicates, in ranking order</text>\n<text x=\"10\" y=\"37\" fill=\"#555\">whiskers: 95% interval (" +
      std::string(rk.bootstrap.empty() || !rk.bootstrap[metric::kMakespan] ? "Student t" : "bootstrap") +
      "); places family-wise at 95% (Holm) on the objective; tied places share a number; green: ranked "
      "first; hatched: not clean</text>\n";
  for (int k = 0; k * step <= axis_max * (1 + 1e-9); ++k) {
    const double v = k * step, x = x_of(v);
    o += "<line class=\"grid\" x1=\"" + g6(x) + "\" y1=\"" + g6(top - 4) + "\" x2=\"" + g6(x) + "\" y2=\"" +
         g6(plot_bottom) + "\" stroke=\"#e6e6e6\"/>\n<text class=\"tick\" x=\"" + g6(x) + "\" y=\"" +
         g6(plot_bottom + 16) + "\" text-anchor=\"middle\">" + g6(v) + "</text>\n";
  }
  o += "<line x1=\"" + g6(left) + "\" y1=\"" + g6(plot_bottom) + "\" x2=\"" + g6(left + plot_w) + "\" y2=\"" +
       g6(plot_bottom) + "\" stroke=\"#333\"/>\n<text class=\"axis-label\" x=\"" + g6(left + plot_w / 2) + "\" y=\"" +
       g6(plot_bottom + 36) + "\" text-anchor=\"middle\">makespan (s), mean</text>\n";
  for (std::size_t k = 0; k < rk.order.size(); ++k) {
    const RankedVariant& v = rk.order[k];
    const SweepRow& r = rows[k];
    const bool best = v.clean && v.place == 1;
    const double y = top + bar_h * static_cast<double>(k);
    const std::string cls = best ? "best" : r.clean ? "bar" : "unclean";
    const double w = std::max(1.0, x_of(r.makespan_s) - left);
    o += "<text class=\"label\" x=\"10\" y=\"" + g6(y + 16) + "\">" + std::to_string(v.place) + (v.tied ? "=" : "") +
         ". variant " + std::to_string(v.variant.index) + " " + esc(values_text(v.variant.values)) + "</text>\n";
    o += "<rect class=\"" + cls + "\" x=\"" + g6(left) + "\" y=\"" + g6(y + 4) + "\" width=\"" + g6(w) +
         "\" height=\"" + g6(bar_h - 8) + "\" fill=\"" + (best ? "#2e9e5b" : r.clean ? "#8aa4c8" : "url(#hatch)") +
         "\" stroke=\"" + (r.clean ? "none" : "#999999") + "\"><title>variant " + std::to_string(v.variant.index) +
         ": mean " + g6(r.makespan_s) + " s</title></rect>\n";
    const MetricStats& st = v.stats[metric::kMakespan];
    if (rk.replicates > 1)
      o += "<line class=\"ci\" x1=\"" + g6(x_of(st.ci_low)) + "\" y1=\"" + g6(y + 12) + "\" x2=\"" +
           g6(x_of(st.ci_high)) + "\" y2=\"" + g6(y + 12) + "\" stroke=\"#222\" stroke-width=\"1.5\"/>\n";
    o += "<text class=\"value\" x=\"" + g6(std::max(left + w, x_of(st.ci_high)) + 6) + "\" y=\"" + g6(y + 16) +
         "\">" + g6(r.makespan_s) + " s" +
         (rk.replicates > 1 ? " [" + g6(st.ci_low) + ", " + g6(st.ci_high) + "]" : std::string()) +
         (best ? (v.tied ? "  (best, tied)" : "  (best)") : "") + (r.clean ? "" : "  not clean: " + esc(r.problems())) +
         "</text>\n";
  }
  return o + "</svg>\n";
}

std::string pareto_svg(const Ranking& rk, std::size_t a, std::size_t b) {
  const std::vector<std::size_t> front = pareto_front(rk, a, b);
  const std::set<std::size_t> best = best_variants(rk);
  double xmax = 0, ymax = 0;
  for (const RankedVariant& v : rk.order)
    if (v.clean) xmax = std::max(xmax, v.stats[a].ci_high), ymax = std::max(ymax, v.stats[b].ci_high);
  if (xmax <= 0) xmax = 1;
  if (ymax <= 0) ymax = 1;
  const double xs = tick_step(xmax, 6), ys = tick_step(ymax, 6);
  const double xa = std::ceil(xmax / xs - 1e-9) * xs, ya = std::ceil(ymax / ys - 1e-9) * ys;
  const double left = 70, top = 60, pw = 520, ph = 360, width = left + pw + 220, height = top + ph + 60;
  auto X = [&](double v) { return left + pw * std::max(0.0, v) / xa; };
  auto Y = [&](double v) { return top + ph - ph * std::max(0.0, v) / ya; };
  std::string o = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + g6(width) + "\" height=\"" + g6(height) +
                  "\" viewBox=\"0 0 " + g6(width) + " " + g6(height) +
                  "\" font-family=\"Helvetica,Arial,sans-serif\" font-size=\"11\">\n"
                  "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n<text x=\"10\" y=\"20\" font-size=\"13\" "
                  "font-weight=\"bold\">" +
                  esc(kMetrics[a].label) + " against " + esc(kMetrics[b].label) + " (means over " +
                  std::to_string(rk.replicates) +
                  " replicates)</text>\n<text x=\"10\" y=\"37\" fill=\"#555\">whiskers: 95% intervals (ranking.json: intervals); red "
                  "line: the Pareto front (no clean variant is better on both means); green: ranked first</text>\n";
  for (int k = 0; k * xs <= xa * (1 + 1e-9); ++k)
    o += "<text class=\"tick\" x=\"" + g6(X(k * xs)) + "\" y=\"" + g6(top + ph + 16) + "\" text-anchor=\"middle\">" +
         g6(k * xs) + "</text>\n";
  for (int k = 0; k * ys <= ya * (1 + 1e-9); ++k)
    o += "<text class=\"tick\" x=\"" + g6(left - 6) + "\" y=\"" + g6(Y(k * ys) + 4) + "\" text-anchor=\"end\">" +
         g6(k * ys) + "</text>\n";
  o += "<rect x=\"" + g6(left) + "\" y=\"" + g6(top) + "\" width=\"" + g6(pw) + "\" height=\"" + g6(ph) +
       "\" fill=\"none\" stroke=\"#333\"/>\n<text x=\"" + g6(left + pw / 2) + "\" y=\"" + g6(top + ph + 36) +
       "\" text-anchor=\"middle\">" + esc(kMetrics[a].csv) + "</text>\n<text x=\"14\" y=\"" + g6(top + ph / 2) +
       "\" transform=\"rotate(-90 14 " + g6(top + ph / 2) + ")\" text-anchor=\"middle\">" + esc(kMetrics[b].csv) +
       "</text>\n";
  std::vector<std::size_t> sorted = front;
  std::sort(sorted.begin(), sorted.end(),
            [&](std::size_t p, std::size_t q) { return rk.order[p].stats[a].mean < rk.order[q].stats[a].mean; });
  std::string pts;
  for (std::size_t i : sorted) pts += (pts.empty() ? "" : " ") + g6(X(rk.order[i].stats[a].mean)) + "," + g6(Y(rk.order[i].stats[b].mean));
  if (!pts.empty()) o += "<polyline class=\"front\" points=\"" + pts + "\" fill=\"none\" stroke=\"#c0392b\" stroke-width=\"1.5\"/>\n";
  for (std::size_t i = 0; i < rk.order.size(); ++i) {
    const RankedVariant& v = rk.order[i];
    if (!v.clean) continue;
    const bool on_front = std::find(front.begin(), front.end(), i) != front.end();
    const bool is_best = best.count(v.variant.index) > 0;
    const double x = X(v.stats[a].mean), y = Y(v.stats[b].mean);
    if (rk.replicates > 1)
      o += "<line class=\"ci\" x1=\"" + g6(X(v.stats[a].ci_low)) + "\" y1=\"" + g6(y) + "\" x2=\"" + g6(X(v.stats[a].ci_high)) +
           "\" y2=\"" + g6(y) + "\" stroke=\"#888\"/>\n<line class=\"ci\" x1=\"" + g6(x) + "\" y1=\"" +
           g6(Y(v.stats[b].ci_low)) + "\" x2=\"" + g6(x) + "\" y2=\"" + g6(Y(v.stats[b].ci_high)) + "\" stroke=\"#888\"/>\n";
    o += "<circle class=\"" + std::string(is_best ? "point best" : on_front ? "point front" : "point") + "\" cx=\"" +
         g6(x) + "\" cy=\"" + g6(y) + "\" r=\"4\" fill=\"" + (is_best ? "#2e9e5b" : on_front ? "#c0392b" : "#8aa4c8") +
         "\"><title>variant " + std::to_string(v.variant.index) + " (" + esc(values_text(v.variant.values)) +
         "): rank " + std::to_string(v.place) + "</title></circle>\n";
    if (on_front || is_best)
      o += "<text class=\"point-label\" x=\"" + g6(x + 6) + "\" y=\"" + g6(y - 6) + "\">" +
           std::to_string(v.variant.index) + "</text>\n";
  }
  return o + "</svg>\n";
}

}  // namespace dirsched

namespace dirsched {

nlohmann::json sweep_row_json(const SweepRow& r) {
  return {{"makespan_s", r.makespan_s},
          {"group_wait", {r.group_wait_mean_s, r.group_wait_p95_s, r.group_wait_max_s, r.group_wait_sum_s}},
          {"single_wait", {r.single_wait_mean_s, r.single_wait_p95_s, r.single_wait_max_s}},
          {"idle_target_s", r.group_idle_target_s},
          {"held_target_s", r.group_held_target_s},
          {"utilisation", r.utilisation},
          {"counts", {r.failed, r.poisoned, r.rejected, r.stuck, r.overtakes_max, r.stalls}},
          {"outcome", r.outcome},
          {"clean", r.clean}};
}

SweepRow sweep_row_from_json(const Variant& v, const nlohmann::json& j) {
  SweepRow r;
  r.variant = v;
  try {
    r.makespan_s = j.at("makespan_s").get<double>();
    const auto& g = j.at("group_wait");
    r.group_wait_mean_s = g.at(0).get<double>(), r.group_wait_p95_s = g.at(1).get<double>();
    r.group_wait_max_s = g.at(2).get<double>(), r.group_wait_sum_s = g.at(3).get<double>();
    const auto& s = j.at("single_wait");
    r.single_wait_mean_s = s.at(0).get<double>(), r.single_wait_p95_s = s.at(1).get<double>();
    r.single_wait_max_s = s.at(2).get<double>();
    r.group_idle_target_s = j.at("idle_target_s").get<double>();
    if (j.contains("held_target_s")) r.group_held_target_s = j.at("held_target_s").get<double>();  // older rows: 0
    r.utilisation = j.at("utilisation").get<double>();
    const auto& c = j.at("counts");
    r.failed = c.at(0).get<long>(), r.poisoned = c.at(1).get<long>(), r.rejected = c.at(2).get<long>();
    r.stuck = c.at(3).get<long>(), r.overtakes_max = c.at(4).get<long>(), r.stalls = c.at(5).get<long>();
    r.outcome = j.at("outcome").get<std::string>();
    r.clean = j.at("clean").get<bool>();
  } catch (const nlohmann::json::exception& e) {
    throw BadInput(std::string("a row of metrics: ") + e.what());
  }
  return r;
}

}  // namespace dirsched
