// `dirsched optimize`: the best variant of a scenario's vars under the objective, searched in this
// process or, with --plan-batches, one batch of runs at a time for another engine to run.
#include "verbs.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <chrono>

#include "collect.hpp"
#include "dirsched/error.hpp"
#include "dirsched/json_reader.hpp"
#include "dirsched/output_folder.hpp"
#include "dirsched/outputs.hpp"
#include "dirsched/sweep.hpp"
#include "evaluate.hpp"
#include "options.hpp"

namespace dirsched::cli {
namespace {

// A copy of `j` with every "$NAME" of a variable in `values` replaced by its value.
nlohmann::json with_values(nlohmann::json j, const VarAssignment& values) {
  if (j.is_string()) {
    const std::string& t = j.get_ref<const std::string&>();
    if (t.size() > 1 && t[0] == '$' && values.count(t.substr(1))) return values.at(t.substr(1));
    return j;
  }
  if (j.is_array() || j.is_object())
    for (auto& x : j) x = with_values(x, values);
  return j;
}

// `dirsched optimize`: the best variant of a scenario's vars under the objective (see search_space).
// optimize --plan-batches DIR: the evaluations the search needs next, none of which has run yet.
struct PendingBatch {
  std::vector<std::string> lines;  // one self-contained `dirsched run` line each
};
constexpr int kExitBatchPending = 6;  // optimize --plan-batches: a batch of runs is to be run first
constexpr const char* kBatchesMarker = ".dirsched-optimize-batches";

// The work folder of optimize --plan-batches: new (made here), or one an earlier call made for the same
// scenario document, --policy/--switch and --cfg (its marker says); anything else is refused, exit 2.
void claim_batches_folder(const std::filesystem::path& dir, const std::string& key) {
  namespace fs = std::filesystem;
  const fs::path marker = dir / kBatchesMarker;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
    if (!fs::exists(marker))
      throw BadInput("--plan-batches " + dir.string() +
                     ": the folder holds files dirsched did not write (no " + kBatchesMarker + ")");
    const nlohmann::json m = read_json_file(marker.string());
    if (!m.is_object() || m.value("key", std::string()) != key)
      throw BadInput("--plan-batches " + dir.string() +
                     ": its evaluations were run for another scenario document, --policy/--switch or "
                     "--cfg; give a new folder");
    return;
  }
  fs::create_directories(dir);
  write_file_atomic(marker, nlohmann::json({{"dirsched", "optimize-batches"}, {"key", key}}).dump() + "\n");
}

// Two folders, the batches' not inside --out's: optimize.json and best.json replace --out whole at the
// end, so evaluations kept inside it would make the next call find --out holding files it did not write
// (the documented loop stopped after one batch, issue 53 F12). Compared resolved (symbolic links, `..`).
void refuse_batches_in_out(const std::string& out, const std::string& batches) {
  namespace fs = std::filesystem;
  const fs::path o = fs::weakly_canonical(fs::absolute(out)), b = fs::weakly_canonical(fs::absolute(batches));
  if ((o / "").lexically_normal() == (b / "").lexically_normal())
    throw OutputRefused("--plan-batches " + batches + ": the same folder as --out; give two folders");
  const fs::path rel = b.lexically_relative(o);
  if (!rel.empty() && *rel.begin() != "..")
    throw OutputRefused("--plan-batches " + batches + ": inside --out " + out +
                        ", which optimize replaces whole when the search ends; give a folder outside it");
}

// What the evaluations of a local optimize ran on (optimize.json's `evaluation`).
std::string evaluation_text(bool events, unsigned jobs) {
  const std::string common = "each evaluation: the scenario document parsed once, each variant built from it, ";
  const std::string tail = ", summary metrics only, no event log and no output folder";
  if (events)
    return common + "each run on the event engine (SimGrid's rules on a plain event queue, as run --engine event) " +
           (jobs > 1 ? "in up to " + std::to_string(jobs) + " processes forked from this one, each a contiguous share of a batch"
                     : std::string("in this process")) +
           tail;
  return common + "each run on SimGrid in a process forked from this one (one engine per process), " +
         std::to_string(jobs) + " at once" + tail;
}

// The best's intervals and the evaluated variants not separated from it (optimize.json, the answer).
struct Uncertainty {
  nlohmann::json ci = nlohmann::json::object(), methods = nlohmann::json::object(), tied = nlohmann::json::array();
  std::string tied_method, text;
};

Uncertainty uncertainty(const std::map<std::size_t, std::vector<SweepRow>>& reps_of, std::map<std::size_t, bool>& clean,
                        std::size_t best, const std::vector<std::size_t>& objective, std::uint64_t seed) {
  Uncertainty u;
  std::vector<const std::vector<SweepRow>*> all;
  std::vector<bool> cl;
  std::vector<std::size_t> points;
  std::size_t best_at = 0;
  for (const auto& [p, rows] : reps_of) {
    if (p == best) best_at = points.size();
    points.push_back(p), all.push_back(&rows), cl.push_back(clean[p]);
  }
  const std::size_t n = reps_of.at(best).size();
  std::string shown;
  for (std::size_t k = 0; k < metric::kCount; ++k) {
    const bool boot = n > 1 && interval_by_bootstrap(k, all);
    const MetricStats st = metric_stats(reps_of.at(best), k, boot, seed, best);
    u.ci[metric_def(k).name] = {st.ci_low, st.ci_high};
    u.methods[metric_def(k).name] = n > 1 ? interval_method_name(boot) : "none";
    if (k == metric::kMakespan || k == metric::kGroupWaitMax)
      shown += (shown.empty() ? "" : ", ") + std::string(metric_def(k).label) + " [" + g6_text(st.ci_low) + ", " +
               g6_text(st.ci_high) + "] s (" + (boot ? "BCa bootstrap" : "Student t") + ")";
  }
  const Separations sep(all, cl, objective, best_at);
  std::string list;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (i != best_at && sep.decide(best_at, i).second == 0)
      u.tied.push_back(points[i]),
          list += u.tied.size() > 10 ? "" : (list.empty() ? "" : ", ") + std::to_string(points[i]);
  if (u.tied.size() > 10) list += ", ... (optimize.json: tied_with)";
  u.tied_method = n > 1 ? "paired t-tests of the best against every other variant evaluated with every replicate on every key of the "
                          "objective, Holm's step-down procedure over all " +
                              std::to_string(sep.family()) + " of them at family-wise 95%"
                        : "one run per evaluation: a variant ties with the best when every key is equal";
  if (n > 1) u.text = "95% intervals of the best's means: " + shown + "\n";
  u.text += u.tied.empty() ? "separated from every other evaluated variant (" + u.tied_method + ")\n"
                           : "not separated from the best: " + std::to_string(u.tied.size()) + " evaluated variant(s) (" +
                                 list + "; " + u.tied_method + "): more replicates may separate them\n";
  return u;
}

// Racing: the replicates a point runs before it may be dropped, half of them and at least 2 (a paired
// t-test needs two); racing is off below 3 replicates, where it would save nothing.
std::size_t race_first_stage(std::size_t replicates) {
  return replicates < 3 ? replicates : std::max<std::size_t>(2, (replicates + 1) / 2);
}

// Whether point p, on its first n replicates, is behind the incumbent on its first n (the same seeds:
// paired): Separations of the two at family-wise 95% over the objective's keys (Holm), or the incumbent
// clean where p is not.
bool behind(const std::map<std::size_t, std::vector<SweepRow>>& reps_of, std::size_t incumbent, std::size_t p,
            std::size_t n, const std::vector<std::size_t>& objective) {
  auto head = [&](std::size_t q) {
    const std::vector<SweepRow>& all = reps_of.at(q);
    return std::vector<SweepRow>(all.begin(), all.begin() + static_cast<long>(n));
  };
  const std::vector<SweepRow> a = head(incumbent), b = head(p);
  auto clean = [](const std::vector<SweepRow>& rows) {
    return std::all_of(rows.begin(), rows.end(), [](const SweepRow& r) { return r.clean; });
  };
  const Separations sep({&a, &b}, {clean(a), clean(b)}, objective, 0);
  return sep.decide(0, 1).second < 0;
}

nlohmann::json racing_json(std::size_t replicates, std::size_t first, std::size_t dropped, std::size_t evaluations,
                           std::size_t runs) {
  return {{"applied", first < replicates},
          {"first_replicates", first},
          {"dropped", dropped},
          {"runs", runs},
          {"runs_without_racing", evaluations * replicates},
          {"test", first < replicates ? "after its first " + std::to_string(first) + " replicates a variant is dropped when "
                                        "paired t-tests against the incumbent (the best variant run in full so far, the "
                                        "same seeds) on the objective's keys, Holm's procedure at 95%, put it behind, or "
                                        "the incumbent is clean and it is not; each drop is its own test (no family-wise "
                                        "control across drops). objective_ci, tied_with and pareto are of the variants "
                                        "run in full only"
                                      : "off: every evaluation runs all its replicates"}};
}

// The space the search walks: per variable the candidates it evaluates, one per symmetry class of
// a `choose` space's lists (interchangeable_ids, class_representatives), every one otherwise; and
// optimize.json's `symmetry` and its printed line.
struct Reduced {
  std::vector<std::vector<std::size_t>> keep;  // per variable (name order): candidate indexes, ascending
  std::vector<std::size_t> full_dims;
  std::vector<std::vector<nlohmann::json>> lists;  // per variable: its kept lists (choose spaces reduced only)
  nlohmann::json json = nlohmann::json::object();
  std::string text;
  std::vector<std::size_t> dims() const {
    std::vector<std::size_t> d;
    for (const auto& k : keep) d.push_back(k.size());
    return d;
  }
  // The variant index (variant_at's numbering) of point p of the reduced space (the last variable fastest).
  std::size_t full(std::size_t p) const {
    std::size_t out = 0, stride = 1;
    for (std::size_t k = keep.size(); k-- > 0;) {
      out += keep[k][p % keep[k].size()] * stride;
      p /= keep[k].size(), stride *= full_dims[k];
    }
    return out;
  }
};

std::string id_lists_text(const std::vector<std::vector<std::int64_t>>& classes) {
  std::string t;
  for (const auto& c : classes) t += (t.empty() ? "" : ", ") + nlohmann::json(c).dump();
  return t;
}

Reduced reduce_by_symmetry(const Scenario& base, const nlohmann::json& doc, const std::vector<bool>& choose,
                           bool symmetry) {
  Reduced r;
  nlohmann::json vars = nlohmann::json::object();
  std::size_t k = 0, classes_total = 1;
  bool fits = true;
  for (const auto& [name, c] : base.vars) {
    r.full_dims.push_back(c.size());
    std::vector<std::size_t> keep;
    std::vector<std::vector<std::int64_t>> shared;  // the classes of more than one id
    const std::vector<std::vector<std::int64_t>> classes =
        choose[k] && symmetry ? interchangeable_ids(base, doc, name) : std::vector<std::vector<std::int64_t>>{};
    for (const auto& cl : classes)
      if (cl.size() > 1) shared.push_back(cl);
    if (!shared.empty()) {  // else every list is its own class: no canonical lists to make
      const std::vector<std::size_t> rep = class_representatives(c, classes);
      for (std::size_t i = 0; i < c.size(); ++i)
        if (rep[i] == i) keep.push_back(i);
    } else {
      for (std::size_t i = 0; i < c.size(); ++i) keep.push_back(i);
    }
    r.lists.emplace_back();
    if (keep.size() < c.size())
      for (std::size_t i : keep) r.lists.back().push_back(c[i]);
    if (choose[k]) {
      vars[name] = {{"lists", c.size()}, {"classes", keep.size()}, {"interchangeable", shared}};
      r.text += "symmetry: " + name + ": " + std::to_string(c.size()) + " lists, " + std::to_string(keep.size()) +
                " classes" +
                (!symmetry   ? " (--no-symmetry: every list evaluated)"
                 : shared.empty() ? " (no interchangeable chips)"
                                  : " (interchangeable chips: " + id_lists_text(shared) + "; one list per class evaluated)") +
                "\n";
    }
    fits &= !__builtin_mul_overflow(classes_total, keep.size(), &classes_total);
    r.keep.push_back(std::move(keep));
    ++k;
  }
  if (!vars.empty())
    r.json = {{"applied", symmetry}, {"variants", variant_count_text(base)},
              {"classes", fits ? nlohmann::json(classes_total) : nlohmann::json()}, {"variables", vars}};
  return r;
}

// Points of the reduced space to variant indexes, in every field of the result.
void to_full(SearchResult& res, const Reduced& r) {
  res.best = r.full(res.best);
  for (auto& [n, p] : res.improvements) p = r.full(p);
  std::map<std::size_t, Score> scores;
  for (auto& [p, s] : res.scores) scores.emplace(r.full(p), std::move(s));
  res.scores = std::move(scores);
}

int cmd_optimize(const std::string& file, const std::string& out, std::size_t budget, std::uint64_t seed,
                 unsigned jobs, const std::vector<std::string>& cfg, const PolicyFlag& policy,
                 std::optional<std::size_t> replicates_flag, const RankChoice& choice, const std::string& batches,
                 bool symmetry, bool racing) {
  namespace fs = std::filesystem;
  const nlohmann::json doc = read_json_file(file);
  std::string base_dir = fs::path(file).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  const Scenario base = parse_scenario(doc, file, base_dir, {}, policy.choice());  // parsed once; variants below from the document
  if (base.vars.empty()) {
    std::cerr << "dirsched: " << file << ": vars: the scenario has no sweep variables\n";
    return 2;
  }
  // The folder: new, or one an earlier optimize wrote (its marker); replaced whole at the end.
  const std::string dir = check_output_folder(out, FolderKind::kOptimize, "--out").string();
  std::size_t replicates = replicates_flag.value_or(base.replicates);
  const bool jitter = seed_matters(base);
  if (replicates > 1 && !jitter) {
    std::cerr << "dirsched: " << file << ": no callable has a jitter or an empirical duration: deterministic, no replications needed; "
              << "1 run per evaluation\n";
    replicates = 1;
  }
  const std::vector<std::string> sim_args = simgrid_args(cfg);
  // --plan-batches: every evaluation is a run folder DIR/vPOINT-sSEED that a plan line writes; the search
  // replays from the start on every call, reading the runs done, and stops at the first batch with runs
  // still to do (printed as a plan, exit 6). Same search, same seeds: the same result as a local optimize.
  const std::string self = self_command();  // quoted when the path needs it (issue 53 F2)
  fs::path batch_dir;
  if (!batches.empty()) {
    batch_dir = fs::absolute(batches);
    refuse_batches_in_out(out, batches);
    if (const auto st = fs::status(batch_dir); fs::exists(st) && !fs::is_directory(st))
      throw OutputRefused("--plan-batches " + batches + ": is a file, not a folder");
    refuse_line_breaks("optimize --plan-batches", {fs::absolute(file).string(), batch_dir.string()});
    std::string key = doc.dump() + "\n" + policy.args();
    for (const std::string& c : cfg) key += "\n" + c;
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a: the marker keeps a digest, not the document
    for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
    claim_batches_folder(batch_dir, std::to_string(h));
  }
  auto evaluate_from_batches = [&](const std::vector<std::size_t>& points, const std::vector<Scenario>& loaded,
                                   std::size_t from, std::size_t to) {
    std::vector<SweepRow> rows;
    PendingBatch pending;
    for (std::size_t i = 0; i < points.size(); ++i)
      for (std::size_t r = from; r < to; ++r) {
        const Variant v = variant_at(base, points[i]);
        const std::uint64_t s = loaded[i].seed + r;
        const fs::path folder = batch_dir / ("v" + std::to_string(points[i]) + "-s" + std::to_string(s));
        if (fs::exists(folder / marker_name(FolderKind::kRun)) && fs::exists(folder / "summary.json")) {
          const std::string path = (folder / "summary.json").string();
          const record::Summary summary = read_summary(path);
          // The folder holds the run its name says: that seed, this variant's values (a run of another
          // variant put there would be scored as this one).
          bool same = summary.seed == s && summary.vars && summary.vars->size() == v.values.size();
          for (std::size_t k = 0; same && k < summary.vars->size(); ++k) {
            const auto& [name, value] = (*summary.vars)[k];
            const auto it = v.values.find(name);
            same = it != v.values.end() && nlohmann::json::parse(value.dump()) == it->second;
          }
          if (!same) {
            const nlohmann::json want = v.values;
            nlohmann::ordered_json got = nlohmann::ordered_json::object();
            if (summary.vars)
              for (const auto& [name, value] : *summary.vars) got[name] = value;
            throw BadInput(path + ": the run of seed " + std::to_string(summary.seed) + " and vars " + got.dump() +
                           ", in the folder of variant " + std::to_string(points[i]) + " seed " + std::to_string(s) +
                           " (vars " + want.dump() + "); remove the folder and call again");
          }
          rows.push_back(row_from_summary(v, summary));
          continue;
        }
        rows.emplace_back();
        std::string cmd = self + " run " + shell_quote(fs::absolute(file).string()) + " --out " +
                          shell_quote(folder.string()) + " --outputs summary --seed " + std::to_string(s) + " --var-any";
        cmd += run_line_args(v.values, cfg, policy);
        pending.lines.push_back(cmd);
      }
    if (!pending.lines.empty()) throw pending;
    return rows;
  };
  std::map<std::size_t, std::vector<MetricStats>> means;  // point -> per metric (mean only)
  std::map<std::size_t, bool> clean;
  std::map<std::size_t, std::vector<SweepRow>> reps_of;  // point -> its replicates (the intervals, tied_with)
  bool events = true;                                    // every evaluation ran on the event engine
  std::size_t runs = 0, raced_out = 0;
  // Replicates [from, to) of each point, appended to reps_of; then each point's score from all its replicates.
  auto run_replicates = [&](const std::vector<std::size_t>& points, std::size_t from, std::size_t to) {
    if (points.empty() || from >= to) return;
    std::vector<Scenario> loaded;
    loaded.reserve(points.size());
    std::vector<Evaluation> evals;
    for (std::size_t p : points) {
      const Variant v = variant_at(base, p);
      loaded.push_back(parse_scenario(doc, file, base_dir, v.values, policy.choice()));
    }
    for (std::size_t i = 0; i < points.size(); ++i)
      for (std::size_t r = from; r < to; ++r)
        evals.push_back({&loaded[i], loaded[i].seed + r, variant_at(base, points[i])});
    const std::vector<SweepRow> rows =
        batches.empty() ? evaluate_all(evals, jobs, sim_args) : evaluate_from_batches(points, loaded, from, to);
    events &= on_event_engine(evals, sim_args);
    runs += rows.size();
    for (std::size_t i = 0; i < points.size(); ++i)
      for (std::size_t r = 0; r < to - from; ++r) {
        reps_of[points[i]].push_back(rows[i * (to - from) + r]);
        reps_of[points[i]].back().variant.values.clear();  // the metrics are what is kept, not the values again
      }
  };
  auto score_of = [&](std::size_t p) {
    const std::vector<SweepRow>& reps = reps_of.at(p);
    std::vector<MetricStats> m(metric::kCount);
    bool ok = true;
    for (const SweepRow& row : reps) {
      ok &= row.clean;
      for (std::size_t k = 0; k < metric::kCount; ++k) m[k].mean += metric_value(row, k) / static_cast<double>(reps.size());
    }
    Score s = {ok ? 0.0 : 1.0};
    for (std::size_t k : choice.objective) s.push_back(m[k].mean);
    means[p] = m;
    clean[p] = ok;
    return s;
  };
  // Racing: a point first runs `first` replicates; one that a paired test already puts behind the
  // incumbent (the best point run to the full count so far) stops there; the others run them all.
  const std::size_t first = racing ? race_first_stage(replicates) : replicates;
  std::optional<std::size_t> incumbent;
  Score incumbent_score;
  auto take_full = [&](const std::vector<std::size_t>& points) {
    run_replicates(points, first, replicates);
    for (std::size_t p : points)
      if (const Score s = score_of(p); !incumbent || s < incumbent_score) incumbent = p, incumbent_score = s;
  };
  auto evaluate = [&](const std::vector<std::size_t>& points) {
    run_replicates(points, 0, first);
    std::vector<Score> scores;
    for (std::size_t p : points) scores.push_back(score_of(p));
    if (first == replicates) return scores;
    // No incumbent yet: the batch's leader (by its first replicates) runs them all first and becomes it.
    if (!incumbent)
      take_full({points[static_cast<std::size_t>(std::min_element(scores.begin(), scores.end()) - scores.begin())]});
    std::vector<std::size_t> survivors;
    for (std::size_t p : points)
      if (reps_of.at(p).size() < replicates && !behind(reps_of, *incumbent, p, first, choice.objective))
        survivors.push_back(p);
      else if (reps_of.at(p).size() < replicates)
        ++raced_out;
    take_full(survivors);
    for (std::size_t i = 0; i < points.size(); ++i) scores[i] = score_of(points[i]);
    return scores;
  };
  const auto started = std::chrono::steady_clock::now();
  // A `choose` variable is searched by swapping one id (or, ordered, exchanging two positions) rather
  // than over all its lists at once, which under a budget smaller than the space is a random sample.
  std::vector<bool> choose, ordered;
  for (const auto& [name, c] : base.vars) {
    choose.push_back(base.vars_left_out.count(name) != 0);
    ordered.push_back(choose.back() && holds_arrangements(c));
  }
  // Chips the scenario cannot tell apart make equivalent lists: one list per class is evaluated.
  const Reduced reduced = reduce_by_symmetry(base, doc, choose, symmetry);
  std::vector<const std::vector<nlohmann::json>*> spaces;
  std::size_t var_at = 0;
  for (const auto& [name, c] : base.vars) {
    const std::vector<nlohmann::json>& kept = reduced.lists[var_at].empty() ? c : reduced.lists[var_at];
    spaces.push_back(choose[var_at++] ? &kept : nullptr);
  }
  const Neighbours swaps = [&](std::size_t k, std::size_t candidate) {
    return spaces[k] ? swap_neighbours(*spaces[k], candidate, ordered[k]) : std::vector<std::size_t>{};
  };
  Features features;
  for (const auto& [name, c] : base.vars) {
    const std::size_t k = features.size();
    features.push_back(candidate_features(spaces[k] ? *spaces[k] : c, spaces[k] != nullptr, ordered[k]));
  }
  const auto evaluate_reduced = [&](const std::vector<std::size_t>& points) {
    std::vector<std::size_t> full;
    for (std::size_t p : points) full.push_back(reduced.full(p));
    return evaluate(full);
  };
  SearchResult res;
  try {
    res = search_space(reduced.dims(), budget, seed, evaluate_reduced, swaps, &features);
    to_full(res, reduced);
  } catch (const PendingBatch& p) {
    std::string plan;
    for (const std::string& line : p.lines) plan += line + "\n";
    write_file_atomic(batch_dir / "pending.plan", plan);
    std::cout << plan;
    std::cerr << "dirsched optimize: " << p.lines.size() << " run" << (p.lines.size() == 1 ? "" : "s")
              << " of the search's next batch to do (" << runs << " done; the plan is also in "
              << (batch_dir / "pending.plan").string()
              << "): run them on any engine, then run this optimize command again (exit 6 until the search ends)\n";
    return kExitBatchPending;
  }
  if (!batches.empty()) {
    std::error_code ec;
    fs::remove(batch_dir / "pending.plan", ec);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // The answer comes from the points run to the full replicate count only (racing dropped the others):
  // the best, its intervals, tied_with and the Pareto set.
  for (auto it = reps_of.begin(); it != reps_of.end();)
    if (it->second.size() < replicates) means.erase(it->first), it = reps_of.erase(it);
    else ++it;
  if (!reps_of.count(res.best)) {
    std::optional<std::size_t> pick;
    for (const auto& [p, rows] : reps_of)
      if (!pick || res.scores.at(p) < res.scores.at(*pick)) pick = p;
    res.best = *pick;
  }
  const Variant best = variant_at(base, res.best);
  // Pareto among the clean points evaluated in full.
  std::vector<std::pair<double, double>> points;
  std::vector<std::size_t> point_of;
  for (const auto& [p, m] : means)
    if (clean[p]) points.emplace_back(m[choice.pareto_a].mean, m[choice.pareto_b].mean), point_of.push_back(p);
  nlohmann::json pareto = nlohmann::json::array();
  for (std::size_t k : non_dominated(points)) {
    const std::size_t p = point_of[k];
    nlohmann::json vals = nlohmann::json::object();
    for (const auto& [name, v] : variant_at(base, p).values) vals[name] = v;
    pareto.push_back({{"variant", p},
                      {"vars", vals},
                      {metric_def(choice.pareto_a).name, points[k].first},
                      {metric_def(choice.pareto_b).name, points[k].second}});
  }
  nlohmann::json objective = nlohmann::json::object();
  for (std::size_t k = 0; k < metric::kCount; ++k) objective[metric_def(k).name] = means[res.best][k].mean;
  objective["clean"] = clean[res.best];
  const Uncertainty unc = uncertainty(reps_of, clean, res.best, choice.objective, base.seed);
  nlohmann::json order = nlohmann::json::array({"clean"});
  for (std::size_t k : choice.objective) order.push_back(metric_def(k).name);
  nlohmann::json best_vals = nlohmann::json::object();
  for (const auto& [k, v] : best.values) best_vals[k] = v;
  nlohmann::json left_out = nlohmann::json::object();
  for (const auto& [k, n] : base.vars_left_out) left_out[k] = n;
  nlohmann::json convergence = nlohmann::json::array();
  for (const auto& [n, p] : res.improvements)
    if (reps_of.count(p))  // a variant racing dropped is no answer, not even for a while
      convergence.push_back({{"evaluations", n}, {"variant", p}, {"score", res.scores.at(p)}});
  nlohmann::json o = {
      {"best", best_vals},
      {"variant", res.best},
      {"objective", objective},
      {"objective_order", order},
      {"objective_ci", unc.ci},
      {"intervals", unc.methods},
      {"tied_with", unc.tied},
      {"tied_method", unc.tied_method},
      {"evaluations", res.evaluations},
      {"runs", runs},
      {"replicates", replicates},
      {"space", variant_count_text(base)},
      {"left_out", left_out},
      {"exhaustive", res.exhaustive},
      {"method", search_method_text(res, seed) + (reduced.text.find("one list per class") != std::string::npos
                                                       ? "; over one list per symmetry class (symmetry)"
                                                       : "")},
      {"symmetry", reduced.json},
      {"racing", racing_json(replicates, first, raced_out, res.evaluations, runs)},
      {"budget", budget},
      {"pareto", {{"metrics", {metric_def(choice.pareto_a).name, metric_def(choice.pareto_b).name}}, {"variants", pareto}}},
      {"convergence", convergence},
      {"evaluation", batches.empty()
                         ? evaluation_text(events, jobs)
                         : "each evaluation: a run folder of --plan-batches " + batch_dir.string() +
                               " (a plan line of a batch, run by any engine), read back from its summary.json"}};
  nlohmann::json best_doc = with_values(doc, best.values);
  best_doc.erase("vars");
  // best.json lives in DIR: a relative platform path is made relative to DIR, so that it still names the
  // same file when best.json is run from there.
  if (best_doc.contains("platform") && best_doc["platform"].is_string()) {
    const fs::path platform(best_doc["platform"].get<std::string>());
    if (platform.is_relative())
      best_doc["platform"] = fs::proximate(fs::absolute(fs::path(base_dir) / platform),
                                           fs::absolute(dir)).lexically_normal().generic_string();
  }
  best_doc["description"] = doc.value("description", std::string()) + (doc.contains("description") ? " " : "") +
                            "(dirsched optimize: best of " + std::to_string(res.evaluations) + " evaluations: " +
                            best_vals.dump() + ")";
  NewParents parents(dir);
  TempPath tmp(temp_path_beside(dir));
  create_temp_dir(tmp);
  write_file(tmp.path() / "optimize.json", o.dump(2) + "\n");
  write_file(tmp.path() / "best.json", best_doc.dump(2) + "\n");
  // The convergence chart: the best primary key over evaluations.
  {
    const double w = 640, h = 320, left = 70, top = 50, pw = 520, ph = 220;
    double ymax = 0;
    for (const auto& c : convergence) ymax = std::max(ymax, c["score"][1].get<double>());
    if (ymax <= 0) ymax = 1;
    const double xmax = std::max<double>(1, static_cast<double>(res.evaluations));
    std::string pts;
    double last_y = 0;
    for (const auto& c : convergence) {
      const double x = left + pw * c["evaluations"].get<double>() / xmax, y = top + ph - ph * c["score"][1].get<double>() / ymax;
      pts += (pts.empty() ? "" : " ") + g6_text(x) + "," + g6_text(last_y == 0 ? y : last_y) + " " + g6_text(x) + "," + g6_text(y);
      last_y = y;
    }
    pts += " " + g6_text(left + pw) + "," + g6_text(last_y);
    std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + g6_text(w) + "\" height=\"" + g6_text(h) +
                      "\" font-family=\"Helvetica,Arial,sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" "
                      "fill=\"#fff\"/>\n<text x=\"10\" y=\"20\" font-size=\"13\" font-weight=\"bold\">Best " +
                      std::string(metric_def(choice.objective.front()).name) + " found over " +
                      std::to_string(res.evaluations) + " evaluations (" + (res.exhaustive ? "exhaustive" : "search") +
                      ")</text>\n<rect x=\"" + g6_text(left) + "\" y=\"" + g6_text(top) + "\" width=\"" + g6_text(pw) +
                      "\" height=\"" + g6_text(ph) + "\" fill=\"none\" stroke=\"#333\"/>\n<text x=\"" + g6_text(left - 6) +
                      "\" y=\"" + g6_text(top + 4) + "\" text-anchor=\"end\">" + g6_text(ymax) + "</text>\n<text x=\"" +
                      g6_text(left - 6) + "\" y=\"" + g6_text(top + ph) + "\" text-anchor=\"end\">0</text>\n<text x=\"" +
                      g6_text(left + pw) + "\" y=\"" + g6_text(top + ph + 16) + "\" text-anchor=\"end\">" +
                      std::to_string(res.evaluations) + " evaluations</text>\n<polyline points=\"" + pts +
                      "\" fill=\"none\" stroke=\"#2e9e5b\" stroke-width=\"2\"/>\n</svg>\n";
    write_file(tmp.path() / "optimize-convergence.svg", svg);
  }
  write_file(tmp.path() / marker_name(FolderKind::kOptimize), optimize_marker_text());
  replace_folder(tmp, dir, FolderKind::kOptimize);
  parents.keep();
  std::cout << (res.exhaustive ? "exhaustive: " : "search (" + search_method_name(res) + ", seed " + std::to_string(seed) + "): ")
            << res.evaluations << " of " << variant_count_text(base) << " variants evaluated (" << runs << " runs, "
            << replicates << " per variant" << (first < replicates ? " run in full, " + std::to_string(raced_out) +
                                                        " dropped after " + std::to_string(first) + " (racing)" : "")
            << "; " << g6_text(static_cast<double>(runs) / std::max(secs, 1e-9))
            << " runs/s)\n" << reduced.text << "best: variant " << res.best << " (" << best_vals.dump() << "): makespan "
            << g6_text(objective["makespan"].get<double>()) << " s, worst group wait "
            << g6_text(objective["group_wait_max"].get<double>()) << " s" << (clean[res.best] ? "" : " NOT CLEAN") << "\n"
            << unc.text
            << "Pareto (" << metric_def(choice.pareto_a).name << ", " << metric_def(choice.pareto_b).name << "): "
            << pareto.size() << " variant(s)\noptimize.json, best.json and optimize-convergence.svg in " << dir << "/\n";
  return clean[res.best] ? 0 : 1;
}

struct OptimizeArgs {
  std::string file, out, batches, objective, pareto;
  std::size_t budget = 1000;
  std::uint64_t seed = 0;
  unsigned jobs = 2;
  std::optional<std::size_t> replicates;
  bool no_symmetry = false, no_racing = false;
} args;

void declare(CLI::App& optimize, Common& common) {
  optimize.add_option("scenario", args.file, "Scenario JSON file with a vars block")->required();
  optimize.add_option("--out", args.out, "Folder for optimize.json, best.json and the convergence chart")->required();
  optimize.add_option("--budget", args.budget, "Evaluations at most (default 1000): exhaustive when the space fits")
      ->check(cli::whole_number(1, 100000000));
  optimize.add_option("--seed", args.seed, "Seed of the search")->check(any_seed());
  optimize.add_option("-j,--jobs", args.jobs, "Runs at once (processes)")->check(cli::whole_number(1, 256));
  optimize.add_option("--replicates", args.replicates, "Seeds per evaluation (default the scenario's replicates)")
      ->check(cli::whole_number(1, 10000));
  optimize.add_option("--objective", args.objective, "Ranking keys after clean, in order, comma-separated");
  optimize.add_option("--pareto", args.pareto, "Two metrics A,B of the Pareto set (default makespan,group_wait_max)");
  optimize.add_flag("--no-symmetry", args.no_symmetry,
                    "Evaluate every list of a choose space, not one per class of interchangeable chips");
  optimize.add_flag("--no-racing", args.no_racing,
                    "Run every evaluation's replicates in full, none dropped after the first half");
  add_cfg(optimize, common.cfg);
  optimize.add_option("--plan-batches", args.batches,
                      "Run nothing: print the search's next batch of runs as a plan (exit 6), their run folders "
                      "kept in this folder; call again after running it, until optimize.json is written");
  add_policy_flags(optimize, common.policy);
}

int run(CLI::App& optimize, Common& common) {
  RankChoice choice;
  for (const char* flag : {"--objective", "--pareto"})
    if (optimize.count(flag) && (flag[2] == 'o' ? args.objective : args.pareto).empty()) {
      std::cerr << "dirsched optimize: " << flag << ": an empty list; give metric names (" << objective_names() << ")\n";
      return 2;
    }
  if (!parse_rank_choice(args.objective, args.pareto, choice, "optimize")) return 2;
  if (optimize.count("--plan-batches") && args.batches.empty())
    throw OutputRefused("--plan-batches: an empty path");  // it ran the search here, as if not given
  return cmd_optimize(args.file, args.out, args.budget, args.seed, args.jobs, common.cfg, common.policy,
                      args.replicates, choice, args.batches, !args.no_symmetry, !args.no_racing);
}

}  // namespace

const Verb kOptimizeVerb{"optimize", "Search a scenario's vars for the best variant", declare, run, nullptr};

}  // namespace dirsched::cli
