#include "dirsched/sweep.hpp"

#include <signal.h>
#include <sys/stat.h>

#include <cerrno>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>

#include "dirsched/error.hpp"
#include "dirsched/escape.hpp"
#include "dirsched/format.hpp"
#include "dirsched/output_folder.hpp"
#include "dirsched/outputs.hpp"
#include "dirsched/switches.hpp"

namespace dirsched {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string read(const fs::path& p) { return read_run_file(p.string()); }  // never blocks on a FIFO

std::string esc(const std::string& s) { return html_escape(s); }

std::string values_text(const VarAssignment& values) {
  std::string o;
  for (const auto& [k, v] : values) o += (o.empty() ? "" : ", ") + k + "=" + v.dump();
  return o;
}

// The ranking key of a row, without its index: equal keys are a tie.
auto key_of(const SweepRow& r) {
  return std::make_tuple(!r.clean, r.makespan_s, r.group_idle_target_s, r.group_wait_max_s,
                         r.single_wait_max_s, r.single_wait_mean_s);
}

// Mean, p95 and max of a summary's READY waits of one kind; older summaries without them fall back to
// the per-queue waits (p95 then is the worst queue's p95).
void waits_from(const record::Summary& s, bool single, double& mean, double& p95, double& max) {
  if (const auto& w = single ? s.ready_waits_single : s.ready_waits_group) {
    mean = w->mean_s, p95 = w->p95_s, max = w->max_s;
    return;
  }
  double sum = 0, n = 0;
  for (const auto& [key, w] : s.queue_waits) {
    if ((key.rfind("worker:", 0) == 0) != single) continue;
    const double c = static_cast<double>(w.count);
    sum += c * w.mean_s, n += c;
    p95 = std::max(p95, w.p95_s);
    max = std::max(max, w.max_s);
  }
  mean = n > 0 ? sum / n : 0;
}

}  // namespace

std::optional<std::size_t> variant_count(const Scenario& s) {
  std::size_t n = 1;
  for (const auto& [name, candidates] : s.vars)
    if (__builtin_mul_overflow(n, candidates.size(), &n)) return std::nullopt;
  return n;
}

std::string variant_count_text(const Scenario& s) {
  // Decimal digits, least significant first: the product of the candidate counts at any size. With m
  // candidates the carry stays below m, so d * m + carry < 10 m fits (m is an array's size in memory).
  std::vector<int> digits = {1};
  for (const auto& [name, candidates] : s.vars) {
    std::uint64_t carry = 0;
    for (int& d : digits) {
      const std::uint64_t x = static_cast<std::uint64_t>(d) * candidates.size() + carry;
      d = static_cast<int>(x % 10);
      carry = x / 10;
    }
    for (; carry; carry /= 10) digits.push_back(static_cast<int>(carry % 10));
  }
  while (digits.size() > 1 && digits.back() == 0) digits.pop_back();
  std::string o;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) o += static_cast<char>('0' + *it);
  return o;
}

namespace {

// Refuses, before any variant is built, a sweep of more than max_variants runs.
void check_limit(const Scenario& s, std::optional<std::size_t> runs, std::size_t max_variants) {
  const std::string vars = std::to_string(s.vars.size()) + (s.vars.size() == 1 ? " variable" : " variables");
  if (!runs)
    throw ScenarioError(s.file, "vars",
                        vars + " give " + variant_count_text(s) +
                            " variants, more than a sweep can number (2^64-1)");
  if (*runs > max_variants)
    throw ScenarioError(s.file, "vars",
                        vars + " give " + variant_count_text(s) + " variants" +
                            (*runs == variant_count(s) ? "" : " (" + std::to_string(*runs) + " sampled)") +
                            ", more than --max-variants " + std::to_string(max_variants) +
                            " (raise it, or run a sample with --sample K)");
}

}  // namespace

Variant variant_at(const Scenario& s, std::size_t index) {
  Variant v;
  v.index = index;
  std::size_t rest = index;
  // Last variable fastest: walk the names backwards.
  for (auto it = s.vars.rbegin(); it != s.vars.rend(); ++it) {
    v.values[it->first] = it->second[rest % it->second.size()];
    rest /= it->second.size();
  }
  return v;
}

std::vector<Variant> enumerate_variants(const Scenario& s, std::size_t max_variants) {
  const std::optional<std::size_t> n = variant_count(s);
  check_limit(s, n, max_variants);
  std::vector<Variant> out;
  out.reserve(*n);
  for (std::size_t i = 0; i < *n; ++i) out.push_back(variant_at(s, i));
  return out;
}

std::vector<Variant> sample_variants(const Scenario& s, std::size_t k, std::uint64_t seed,
                                     std::size_t max_variants) {
  const std::optional<std::size_t> n = variant_count(s);
  if (!n) check_limit(s, n, max_variants);
  if (k >= *n) return enumerate_variants(s, max_variants);
  check_limit(s, k, max_variants);
  std::mt19937_64 rng(seed);
  std::set<std::size_t> picked;
  while (picked.size() < k) picked.insert(static_cast<std::size_t>(rng() % *n));
  std::vector<Variant> out;
  for (std::size_t i : picked) out.push_back(variant_at(s, i));
  return out;
}

std::string variant_dir(const Variant& v) {
  char b[32];
  std::snprintf(b, sizeof b, "variant-%04zu", v.index);
  return b;
}

std::string SweepRow::problems() const {
  std::string o;
  auto add = [&](long n, const char* what) {
    if (n) o += (o.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  add(rejected, "rejected");
  add(failed, "failed");
  add(poisoned, "poisoned");
  add(stuck, "stuck");
  if (o.empty() && !clean) o = "outcome " + (outcome.empty() ? std::string("unknown") : outcome);
  return o;
}

SweepRow row_from_summary(const Variant& v, const record::Summary& s) {
  SweepRow r;
  r.variant = v;
  r.makespan_s = s.makespan_s;
  r.outcome = std::string(record::to_string(s.outcome));
  if (s.group_totals) {  // more groups than summary.json lists (kSummaryListCap)
    r.group_idle_target_s = s.group_totals->idle_target_s;
    r.group_wait_sum_s = s.group_totals->ready_wait_s;
    r.overtakes_max = static_cast<long>(s.group_totals->overtakes_max);
  } else {
    for (const record::GroupWait& g : s.groups) {
      r.group_idle_target_s += g.idle_target_s;
      r.group_wait_sum_s += g.ready_wait_s;
      r.overtakes_max = std::max(r.overtakes_max, static_cast<long>(g.overtakes));
    }
  }
  // The idle targets held for a group (a reservation: wait_causes' target_held_s, the groups that
  // launched) are no starvation exposure: held, not idle.
  if (s.waits)
    for (const auto& [cause, t] : s.waits->causes)
      if (cause == "target_held_s") r.group_held_target_s = t;
  r.group_idle_target_s = std::max(0.0, r.group_idle_target_s - r.group_held_target_s);
  std::uint64_t stalls = s.stalls.size();
  if (s.stalls_omitted)
    for (const auto& [kind, n] : *s.stalls_omitted) stalls += n;
  r.stalls = static_cast<long>(stalls);
  waits_from(s, false, r.group_wait_mean_s, r.group_wait_p95_s, r.group_wait_max_s);
  waits_from(s, true, r.single_wait_mean_s, r.single_wait_p95_s, r.single_wait_max_s);
  double util = 0;
  std::size_t workers = 0;
  for (const record::WorkerUse& w : s.workers)
    if (!w.sub()) util += w.utilisation, ++workers;
  r.utilisation = workers ? util / static_cast<double>(workers) : 0;
  r.failed = static_cast<long>(s.tasks["FAILED"]);
  r.poisoned = static_cast<long>(s.tasks["POISONED"]);
  r.rejected = static_cast<long>(s.tasks["REJECTED"]);
  r.stuck = static_cast<long>(s.tasks["PENDING"] + s.tasks["READY"] + s.tasks["RUNNING"]);
  r.clean = s.clean();
  return r;
}

std::vector<std::size_t> rank(const std::vector<SweepRow>& rows) {
  std::vector<std::size_t> order(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::make_pair(key_of(rows[a]), rows[a].variant.index) <
           std::make_pair(key_of(rows[b]), rows[b].variant.index);
  });
  return order;
}

std::vector<std::size_t> places(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& ranking) {
  std::vector<std::size_t> out(ranking.size());
  for (std::size_t k = 0; k < ranking.size(); ++k)
    out[k] = k > 0 && key_of(rows[ranking[k]]) == key_of(rows[ranking[k - 1]]) ? out[k - 1] : k + 1;
  return out;
}

std::string decided_by(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& ranking,
                       std::size_t k) {
  if (k == 0 || k >= ranking.size()) return "";
  const SweepRow &a = rows[ranking[k - 1]], &b = rows[ranking[k]];
  if (a.clean != b.clean) return "clean";
  const std::pair<double SweepRow::*, const char*> keys[] = {
      {&SweepRow::makespan_s, "makespan"},
      {&SweepRow::group_idle_target_s, "idle-target wait"},
      {&SweepRow::group_wait_max_s, "worst group wait"},
      {&SweepRow::single_wait_max_s, "worst single wait"},
      {&SweepRow::single_wait_mean_s, "mean single wait"}};
  for (const auto& [field, name] : keys)
    if (a.*field != b.*field) return name;
  return "";
}

std::string sweep_csv(const std::vector<std::string>& names, const std::vector<SweepRow>& rows) {
  std::string o = record::sweep_csv_header(names);
  std::vector<std::string> values(names.size());
  for (const SweepRow& r : rows) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      auto it = r.variant.values.find(names[i]);
      // A string value (a policy name) reads as itself, not as a quoted JSON literal.
      values[i] = it == r.variant.values.end() ? ""
                  : it->second.is_string()     ? it->second.get<std::string>()
                                               : it->second.dump();
    }
    record::encode_sweep_row(r.variant.index, values, r, o);
  }
  return o;
}

std::string ranking_text(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& ranking) {
  std::string o;
  const std::vector<std::size_t> place = places(rows, ranking);
  std::size_t unclean = 0;
  for (std::size_t k = 0; k < ranking.size(); ++k) {
    const SweepRow& r = rows[ranking[k]];
    const bool tied =
        (k > 0 && place[k - 1] == place[k]) || (k + 1 < place.size() && place[k + 1] == place[k]);
    unclean += !r.clean;
    // The first row of a place says what put it behind the one above; rows tied with it add nothing.
    const std::string why = k > 0 && place[k - 1] == place[k] ? "" : decided_by(rows, ranking, k);
    o += std::to_string(place[k]) + (tied ? "=" : "") + ". variant " + std::to_string(r.variant.index) +
         " (" + values_text(r.variant.values) + ")" + (r.clean ? "" : " NOT CLEAN (" + r.problems() + ")") +
         ": makespan " + g6(r.makespan_s) + " s, groups waited with an idle target " +
         g6(r.group_idle_target_s) + " s, worst group wait " + g6(r.group_wait_max_s) +
         " s, worst single wait " + g6(r.single_wait_max_s) + " s (mean " + g6(r.single_wait_mean_s) +
         " s), overtakes (max) " + std::to_string(r.overtakes_max) + ", stall reports " +
         std::to_string(r.stalls) + (why.empty() ? "" : "; behind variant " + std::to_string(rows[ranking[k - 1]].variant.index) + " on " + why +
                                   (why == "clean" || why == "makespan" ? "" : " (a tie-breaker: the keys before it are equal)")) +
         "\n";
  }
  if (unclean)
    o += std::to_string(unclean) + " of " + std::to_string(rows.size()) +
         " variants are not clean (REJECTED, FAILED, POISONED or STUCK tasks) and rank last whatever their "
         "makespan\n";
  return o;
}

std::string sweep_svg(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& ranking) {
  const std::vector<std::size_t> place = places(rows, ranking);
  std::size_t longest = 0;
  for (const SweepRow& r : rows) longest = std::max(longest, values_text(r.variant.values).size() + 24);
  const double bar_h = 24, left = std::min(520.0, 30 + 6.2 * static_cast<double>(longest)), plot_w = 480,
               right = 260, top = 64;
  const double width = left + plot_w + right;
  double max_m = 0;
  for (const SweepRow& r : rows) max_m = std::max(max_m, r.makespan_s);
  if (max_m <= 0) max_m = 1;
  const double step = tick_step(max_m, 6);
  const double axis_max = std::ceil(max_m / step - 1e-9) * step;
  auto x_of = [&](double v) { return left + plot_w * v / axis_max; };
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
      "<text x=\"10\" y=\"20\" font-size=\"13\" font-weight=\"bold\">Makespan per variant, best "
      "first</text>\n<text x=\"10\" y=\"37\" fill=\"#555\">Ties (same makespan, idle-target wait and "
      "worst waits) share a place; green: best; hatched: not clean (ranked last)</text>\n";
  // Grid and axis in seconds.
  for (int k = 0; k * step <= axis_max * (1 + 1e-9); ++k) {
    const double v = k * step, x = x_of(v);
    o += "<line class=\"grid\" x1=\"" + g6(x) + "\" y1=\"" + g6(top - 4) + "\" x2=\"" + g6(x) + "\" y2=\"" +
         g6(plot_bottom) + "\" stroke=\"#e6e6e6\"/>\n<text class=\"tick\" x=\"" + g6(x) + "\" y=\"" +
         g6(plot_bottom + 16) + "\" text-anchor=\"middle\">" + g6(v) + "</text>\n";
  }
  o += "<line x1=\"" + g6(left) + "\" y1=\"" + g6(plot_bottom) + "\" x2=\"" + g6(left + plot_w) + "\" y2=\"" +
       g6(plot_bottom) + "\" stroke=\"#333\"/>\n<text class=\"axis-label\" x=\"" + g6(left + plot_w / 2) +
       "\" y=\"" + g6(plot_bottom + 36) + "\" text-anchor=\"middle\">makespan (s)</text>\n";
  for (std::size_t k = 0; k < ranking.size(); ++k) {
    const SweepRow& r = rows[ranking[k]];
    const bool best = r.clean && place[k] == 1;
    const bool tied =
        (k > 0 && place[k - 1] == place[k]) || (k + 1 < place.size() && place[k + 1] == place[k]);
    const double y = top + bar_h * static_cast<double>(k);
    const std::string cls = best ? "best" : r.clean ? "bar" : "unclean";
    const double w = std::max(1.0, x_of(r.makespan_s) - left);
    o += "<text class=\"label\" x=\"10\" y=\"" + g6(y + 16) + "\">" + std::to_string(place[k]) +
         (tied ? "=" : "") + ". variant " + std::to_string(r.variant.index) + " " +
         esc(values_text(r.variant.values)) + "</text>\n";
    o += "<rect class=\"" + cls + "\" x=\"" + g6(left) + "\" y=\"" + g6(y + 4) + "\" width=\"" + g6(w) +
         "\" height=\"" + g6(bar_h - 8) + "\" fill=\"" +
         (best      ? "#2e9e5b"
          : r.clean ? "#8aa4c8"
                    : "url(#hatch)") +
         "\" stroke=\"" + (r.clean ? "none" : "#999999") + "\"><title>variant " +
         std::to_string(r.variant.index) + ": " + g6(r.makespan_s) + " s, worst group wait " +
         g6(r.group_wait_max_s) + " s, worst single wait " + g6(r.single_wait_max_s) + " s</title></rect>\n";
    o += "<text class=\"value\" x=\"" + g6(left + w + 6) + "\" y=\"" + g6(y + 16) + "\">" + g6(r.makespan_s) +
         " s" + (best ? (tied ? "  (best, tied)" : "  (best)") : "") +
         (r.clean ? "" : "  not clean: " + esc(r.problems())) + "</text>\n";
  }
  return o + "</svg>\n";
}

std::string sweep_heatmap_svg(const std::vector<std::string>& names, const std::vector<SweepRow>& rows) {
  // Best is what the ranking puts first (every key tied), never merely the shortest makespan.
  const std::vector<std::size_t> order = rank(rows);
  const std::vector<std::size_t> place = places(rows, order);
  std::set<std::size_t> best;
  for (std::size_t k = 0; k < order.size(); ++k)
    if (place[k] == 1 && rows[order[k]].clean) best.insert(rows[order[k]].variant.index);
  return sweep_heatmap_svg(names, rows, best);
}

std::string sweep_heatmap_svg(const std::vector<std::string>& names, const std::vector<SweepRow>& rows,
                              const std::set<std::size_t>& best_variants) {
  if (names.size() != 2) return "";
  // Each variable's candidates in variant order (the index grows with the candidate's position).
  std::vector<std::vector<json>> cand(2);
  std::vector<const SweepRow*> sorted;
  for (const SweepRow& r : rows) sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(),
            [](const SweepRow* a, const SweepRow* b) { return a->variant.index < b->variant.index; });
  for (std::size_t d = 0; d < 2; ++d)
    for (const SweepRow* r : sorted) {
      auto it = r->variant.values.find(names[d]);
      if (it != r->variant.values.end() &&
          std::find(cand[d].begin(), cand[d].end(), it->second) == cand[d].end())
        cand[d].push_back(it->second);
    }
  // Candidates of the second variable appear in order within each first value; the first variable's
  // order is that of the first appearance, which the index sort gives.
  std::map<std::pair<std::size_t, std::size_t>, const SweepRow*> cell;
  double lo = 0, hi = 0;
  bool any_clean = false;
  for (const SweepRow* r : sorted) {
    const auto a =
        std::find(cand[0].begin(), cand[0].end(), r->variant.values.at(names[0])) - cand[0].begin();
    const auto b =
        std::find(cand[1].begin(), cand[1].end(), r->variant.values.at(names[1])) - cand[1].begin();
    cell[{static_cast<std::size_t>(a), static_cast<std::size_t>(b)}] = r;
    if (!r->clean) continue;
    lo = any_clean ? std::min(lo, r->makespan_s) : r->makespan_s;
    hi = any_clean ? std::max(hi, r->makespan_s) : r->makespan_s;
    any_clean = true;
  }
  std::size_t label_len = names[0].size();
  for (const json& v : cand[0]) label_len = std::max(label_len, v.dump().size());
  const double cw = 110, ch = 44, left = 30 + 6.5 * static_cast<double>(label_len), top = 86;
  const double width = std::max(620.0, left + cw * static_cast<double>(cand[1].size()) + 30);
  const double height = top + ch * static_cast<double>(cand[0].size()) + 70;
  auto colour = [&](double m) {
    // Green (best) through yellow to red (worst), over the clean variants' makespans.
    const double f = hi > lo ? (m - lo) / (hi - lo) : 0;
    const int red = static_cast<int>(f < 0.5 ? 80 + 2 * f * 160 : 240);
    const int green = static_cast<int>(f < 0.5 ? 190 : 190 - (f - 0.5) * 2 * 120);
    char b[16];
    std::snprintf(b, sizeof b, "#%02x%02x%02x", red, green, 90);
    return std::string(b);
  };
  std::string o =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + g6(width) + "\" height=\"" + g6(height) +
      "\" viewBox=\"0 0 " + g6(width) + " " + g6(height) +
      "\" font-family=\"Helvetica,Arial,sans-serif\" font-size=\"11\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n<text x=\"10\" y=\"20\" font-size=\"13\" "
      "font-weight=\"bold\">Makespan (s) by " +
      esc(names[0]) + " (rows) and " + esc(names[1]) +
      " (columns)</text>\n<text x=\"10\" y=\"37\" fill=\"#555\">green best, red worst among clean "
      "variants" +
      (any_clean ? " (" + g6(lo) + " s to " + g6(hi) + " s)" : "") +
      "; grey: not clean; blank: not run</text>\n";
  o += "<text x=\"" + g6(left + cw * static_cast<double>(cand[1].size()) / 2) + "\" y=\"" + g6(top - 26) +
       "\" text-anchor=\"middle\" font-weight=\"bold\">" + esc(names[1]) + "</text>\n";
  o += "<text x=\"10\" y=\"" + g6(top - 8) + "\" font-weight=\"bold\">" + esc(names[0]) + "</text>\n";
  for (std::size_t b = 0; b < cand[1].size(); ++b)
    o += "<text class=\"col\" x=\"" + g6(left + cw * (static_cast<double>(b) + 0.5)) + "\" y=\"" +
         g6(top - 8) + "\" text-anchor=\"middle\">" + esc(cand[1][b].dump()) + "</text>\n";
  for (std::size_t a = 0; a < cand[0].size(); ++a) {
    const double y = top + ch * static_cast<double>(a);
    o += "<text class=\"row\" x=\"10\" y=\"" + g6(y + ch / 2 + 4) + "\">" + esc(cand[0][a].dump()) +
         "</text>\n";
    for (std::size_t b = 0; b < cand[1].size(); ++b) {
      const double x = left + cw * static_cast<double>(b);
      auto it = cell.find({a, b});
      if (it == cell.end()) {
        o += "<rect class=\"missing\" x=\"" + g6(x) + "\" y=\"" + g6(y) + "\" width=\"" + g6(cw) +
             "\" height=\"" + g6(ch) + "\" fill=\"#ffffff\" stroke=\"#cccccc\"/>\n";
        continue;
      }
      const SweepRow& r = *it->second;
      const bool best = r.clean && best_variants.count(r.variant.index);
      o += "<rect class=\"" + std::string(r.clean ? (best ? "cell best" : "cell") : "cell unclean") +
           "\" x=\"" + g6(x) + "\" y=\"" + g6(y) + "\" width=\"" + g6(cw) + "\" height=\"" + g6(ch) +
           "\" fill=\"" + (r.clean ? colour(r.makespan_s) : "#c8c8c8") + "\" stroke=\"" +
           (best ? "#000000" : "#ffffff") + "\" stroke-width=\"" + (best ? "2" : "1") + "\"><title>variant " +
           std::to_string(r.variant.index) + ": " + g6(r.makespan_s) + " s" +
           (r.clean ? "" : ", not clean: " + esc(r.problems())) + "</title></rect>\n";
      o += "<text class=\"value\" x=\"" + g6(x + cw / 2) + "\" y=\"" +
           g6(y + (r.clean ? ch / 2 + 4 : ch / 2 - 2)) + "\" text-anchor=\"middle\">" + g6(r.makespan_s) +
           " s" + (best ? " (best)" : "") + "</text>\n";
      if (!r.clean)
        o += "<text class=\"why\" x=\"" + g6(x + cw / 2) + "\" y=\"" + g6(y + ch / 2 + 11) +
             "\" text-anchor=\"middle\" fill=\"#600\">" + esc(r.problems()) + "</text>\n";
    }
  }
  return o + "</svg>\n";
}

std::string sweep_marker_json(const SweepMarker& m) { return record::encode(m); }

SweepMarker read_sweep_marker(const std::string& dir) {
  const std::string path = (fs::path(dir) / marker_name(FolderKind::kSweep)).string();
  return record::decode_sweep_marker(read_output_json(path), path);  // RecordError: bad input
}

namespace {

// The index of a folder named variant-NNNN (digits only), or nothing.
std::optional<std::size_t> variant_folder_index(const std::string& name) {
  if (name.rfind("variant-", 0) != 0 || name.size() == 8 || name.size() > 8 + 18 ||
      name.find_first_not_of("0123456789", 8) != std::string::npos)
    return std::nullopt;
  return static_cast<std::size_t>(std::stoull(name.substr(8)));
}

// A folder's entries, sorted (the order of the checks and removals, and so of their messages).
std::vector<fs::path> sorted_entries(const fs::path& folder) {
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(folder)) entries.push_back(e.path());
  std::sort(entries.begin(), entries.end());
  return entries;
}

}  // namespace

void check_sweep_folder(const std::string& dir, const SweepMarker& m) {
  const fs::path folder(dir);
  if (has_marker(folder, FolderKind::kSweep)) {
    const SweepMarker old = read_sweep_marker(dir);
    if (old.scenario != m.scenario || old.file != m.file)
      throw OutputRefused(dir + ": is the sweep folder of scenario '" + old.scenario + "' (" + old.file +
                          "), not of '" + m.scenario + "' (" + m.file + "); give another --out");
    // Every variant folder, the stale ones prepare_sweep_folder removes and the others replaced by
    // their runs, is checked before anything is removed: a refusal changes nothing.
    for (const fs::path& p : sorted_entries(folder))
      if (variant_folder_index(p.filename().string()) && has_marker(p, FolderKind::kRun))
        refuse_foreign_entries(p, p.string(), "give another --out");
    // Where this sweep's runs go: nothing but a variant folder a run wrote (a file, a link or a folder of
    // the user's there was found only when that variant's run came to replace it).
    for (std::size_t index : m.variants) {
      const fs::path p = folder / variant_dir({index, {}});
      struct stat st {};
      if (lstat(p.c_str(), &st) != 0) continue;
      if (S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode) || !has_marker(p, FolderKind::kRun))
        throw OutputRefused(p.string() + ": " +
                            (S_ISLNK(st.st_mode)  ? "a symbolic link"
                             : S_ISDIR(st.st_mode) ? "a folder no run wrote (no .dirsched-run in it)"
                                                   : "a file") +
                            " where this sweep's variant " + std::to_string(index) +
                            " goes; move it out, or give another --out");
    }
  }
}

void prepare_sweep_folder(const std::string& dir, const SweepMarker& m) {
  check_sweep_folder(dir, m);  // every refusal before anything is removed: a refusal changes nothing
  const fs::path folder(dir);
  if (has_marker(folder, FolderKind::kSweep)) {
    const std::set<std::size_t> keep(m.variants.begin(), m.variants.end());
    auto stale = [&](const fs::path& p) {  // a variant of the earlier sweep that this one does not run
      const auto index = variant_folder_index(p.filename().string());
      return index && !keep.count(*index) && has_marker(p, FolderKind::kRun);
    };
    const std::vector<fs::path> entries = sorted_entries(folder);
    for (const fs::path& p : entries) {
      const std::string name = p.filename().string();
      std::error_code ec;
      if (stale(p)) {
        fs::remove_all(p, ec);
      } else if (const pid_t owner = temp_owner(name); owner != 0 && process_gone(owner)) {
        fs::remove_all(p, ec);  // left by a run that was killed (its process is gone)
      }
      if (ec) throw_write_error(p, ec.value());
    }
  } else {
    create_parents(folder / "x");
  }
  write_file_atomic(folder / marker_name(FolderKind::kSweep), sweep_marker_json(m));
}

namespace {

fs::path sweep_folder(const std::string& dir) {
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  const fs::path folder(d);
  if (!fs::is_directory(folder)) throw BadInput(d + ": no such sweep folder");
  if (!has_marker(folder, FolderKind::kSweep))
    throw BadInput(d + ": not a dirsched sweep folder (no " + std::string(marker_name(FolderKind::kSweep)) +
                   " in it)");
  return folder;
}

const char* kPlanName = ".dirsched-plan";

}  // namespace

SweepProgress sweep_progress(const std::string& dir) {
  const fs::path folder = sweep_folder(dir);
  const SweepMarker marker = read_sweep_marker(folder.string());
  SweepProgress p;
  for (std::size_t index : marker.variants) {
    const fs::path f = folder / variant_dir({index, {}});
    // Present, whatever their type: a FIFO or a folder in their place is then refused by the reader
    // (exit 2, "not a regular file"), never counted as a variant still to run.
    const bool complete = fs::is_directory(f) && fs::exists(f / "summary.json") && fs::exists(f / "variant.json");
    (complete ? p.complete : p.missing).push_back(index);
  }
  for (const fs::path& f : sorted_entries(folder))
    if (const pid_t owner = temp_owner(f.filename().string()))
      (process_gone(owner) ? p.dead_temps : p.live_temps).emplace_back(f.string(), static_cast<long>(owner));
  return p;
}

std::string variant_list_text(const std::vector<std::size_t>& indices) {
  std::vector<std::size_t> v = indices;
  std::sort(v.begin(), v.end());
  std::string o;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    o += (o.empty() ? "" : ", ") + variant_dir({v[i], {}});
    if (j > i) o += (j == i + 1 ? ", " : "..") + variant_dir({v[j], {}});
    i = j + 1;
  }
  return o;
}

void write_sweep_plan(const std::string& dir, const SweepPlan& plan) {
  const json j = {{"dirsched", "plan"}, {"variants", plan.variants}, {"lines", plan.lines}};
  write_file_atomic(fs::path(dir) / kPlanName, j.dump() + "\n");
}

SweepPlan read_sweep_plan(const std::string& dir) {
  const fs::path folder = sweep_folder(dir);
  const std::string path = (folder / kPlanName).string();
  if (!fs::exists(path))
    throw BadInput(path + ": no such file: the folder has no plan (only `sweep --plan` keeps one)");
  const json j = read_output_json(path);
  auto bad = [&](const std::string& what) { return BadInput(path + ": " + what); };
  if (!j.is_object() || j.value("dirsched", json()) != "plan") throw bad("not a plan (\"dirsched\": \"plan\")");
  if (!j.contains("variants") || !j["variants"].is_array()) throw bad("variants: expected an array");
  if (!j.contains("lines") || !j["lines"].is_array() || j["lines"].size() != j["variants"].size())
    throw bad("lines: expected one line per variant");
  SweepPlan plan;
  for (std::size_t i = 0; i < j["variants"].size(); ++i) {
    if (!j["variants"][i].is_number_unsigned()) throw bad("variants[" + std::to_string(i) + "]: expected a variant index");
    if (!j["lines"][i].is_string()) throw bad("lines[" + std::to_string(i) + "]: expected a string");
    plan.variants.push_back(j["variants"][i].get<std::size_t>());
    plan.lines.push_back(j["lines"][i].get<std::string>());
  }
  if (plan.variants != read_sweep_marker(folder.string()).variants)
    throw bad("the plan is of other variants than the sweep folder's (" + std::string(marker_name(FolderKind::kSweep)) +
              "): the folder was swept again since; make the plan again with `sweep --plan`");
  return plan;
}

std::vector<SweepRow> collect(const std::string& dir, std::vector<std::string>* var_names) {
  const fs::path folder = sweep_folder(dir);
  const std::string d = folder.string();
  const SweepMarker marker = read_sweep_marker(d);
  const SweepProgress progress = sweep_progress(d);
  if (!progress.live_temps.empty())
    throw BadInput(progress.live_temps.front().first + ": a temporary of a dirsched still running (process " +
                   std::to_string(progress.live_temps.front().second) +
                   "); wait for it to finish, or stop it");
  const std::set<std::size_t> listed(marker.variants.begin(), marker.variants.end());
  std::map<std::size_t, fs::path> found;
  for (const fs::path& f : sorted_entries(folder)) {
    const std::string name = f.filename().string();
    if (temp_owner(name) || name.rfind("variant-", 0) != 0) continue;  // temporaries: sweep_progress
    const auto index = variant_folder_index(name);
    if (!index || name != variant_dir({*index, {}}) || !fs::is_directory(f))
      throw BadInput(f.string() + ": not a variant folder (variant-NNNN)");
    if (!listed.count(*index))
      throw BadInput(f.string() + ": variant " + std::to_string(*index) + " is not one of this sweep's " +
                     std::to_string(listed.size()) + " variants (" + marker_name(FolderKind::kSweep) + ")");
    found[*index] = f;
  }
  if (!progress.missing.empty()) {
    const std::size_t n = progress.missing.size();
    throw BadInput(d + ": " + std::to_string(n) + " of " + std::to_string(marker.variants.size()) +
                   " variants missing (not run, or did not finish): " + variant_list_text(progress.missing) +
                   "; " +
                   (fs::exists(fs::path(d) / kPlanName)
                        ? "`dirsched sweep --collect " + d + " --missing` prints the plan " +
                              (n == 1 ? "line" : "lines") + " to run"
                        : std::string("this sweep has no plan (it was run, or prepared, by a command that "
                                      "runs its variants itself): run that command again")));
  }
  std::vector<SweepRow> rows;
  std::set<std::string> names;
  std::map<std::size_t, fs::path> held;  // variant index -> the folder whose variant.json says it
  for (const auto& [index, f] : found) {
    const FolderLock folder_lock(f);  // never while a run replaces it: its variant.json and summary.json agree
    if (!fs::exists(f / "summary.json") || !fs::exists(f / "variant.json"))
      throw BadInput(f.string() + ": missing summary.json or variant.json (did that variant run?)");
    const std::string vpath = (f / "variant.json").string();
    const json v = read_output_json(vpath);
    if (!v.is_object() || !v.contains("variant") || !v["variant"].is_number_unsigned())
      throw BadInput(vpath + ": variant: expected the variant index");
    if (!v.contains("vars") || !v["vars"].is_object()) throw BadInput(vpath + ": vars: expected an object");
    Variant var;
    var.index = v["variant"].get<std::size_t>();
    if (const auto twice = held.find(var.index); twice != held.end())
      throw BadInput(vpath + ": variant " + std::to_string(var.index) + " twice (also " +
                     twice->second.string() + ")");
    held[var.index] = f;
    if (var.index != index)
      throw BadInput(vpath + ": variant: " + std::to_string(var.index) + " in the folder of variant " +
                     std::to_string(index));
    for (auto it = v["vars"].begin(); it != v["vars"].end(); ++it) {
      var.values[it.key()] = it.value();
      names.insert(it.key());
    }
    rows.push_back(row_from_summary(var, read_summary((f / "summary.json").string())));
  }
  if (var_names) var_names->assign(names.begin(), names.end());
  // Every variant is complete: what dead processes left (a variant killed, then run again) is garbage.
  for (const auto& [path, pid] : progress.dead_temps) {
    std::error_code ec;
    fs::remove_all(path, ec);
    if (ec) throw_write_error(path, ec.value());
  }
  return rows;
}

namespace {

// One run folder as compare reads it: who it is, and its dispatches.
struct RunFacts {
  std::string dir, label, name;
  record::Summary summary;
  struct Dispatch {
    std::string placement;  // task@worker or task[member]@worker, as in `expect`
    std::string member;     // task or task[member]
    std::string worker;
    double t = 0;
  };
  std::map<std::string, std::vector<Dispatch>> per_worker;
  std::map<std::string, Dispatch> by_member;
};

json read_json(const fs::path& p) {
  return read_output_json(p.string());
}

// The policy a run was made with, as its summary says: the preset's name, then every switch whose
// effective value differs from that preset ("head_reservation with group_reservation=off"). A summary
// without switches (an import, an older run) or with a policy that is no preset gives the name alone.
std::string effective_policy(const record::Summary& s) {
  std::string text = s.policy;
  const std::optional<Switches> base = s.switches ? preset(s.policy) : std::nullopt;
  if (!base) return text;
  std::string changed;
  for (const auto& [name, on] : *s.switches) {
    const std::optional<Switch> sw = switch_from_string(name);
    if (!sw || base->on(*sw) == on) continue;
    changed += (changed.empty() ? "" : " and ") + name + (on ? "=on" : "=off");
  }
  if (!changed.empty()) text += " with " + changed;
  return text;
}

RunFacts load_run(const std::string& dir) {
  RunFacts r;
  r.dir = dir;
  const fs::path folder(dir);
  r.summary = read_run_folder_summary(dir);
  VarAssignment vars;
  if (r.summary.vars) {
    for (const auto& [k, v] : *r.summary.vars) vars[k] = v;
  } else if (fs::exists(folder / "variant.json")) {
    const json v = read_json(folder / "variant.json").value("vars", json::object());
    for (auto it = v.begin(); it != v.end(); ++it) vars[it.key()] = it.value();
  }
  std::string name = folder.filename().string();
  if (name.empty() || name == ".") name = fs::absolute(folder).parent_path().filename().string();
  r.name = name;
  r.label = dir + " (scenario " + (r.summary.scenario.empty() ? std::string("?") : r.summary.scenario);
  if (!vars.empty()) r.label += ", " + values_text(vars);
  r.label += ", policy " + effective_policy(r.summary) + ", seed " + std::to_string(r.summary.seed);
  if (r.summary.engine != record::Engine::kSim)
    r.label += ", engine " + std::string(record::to_string(r.summary.engine)) + ", time scale " +
               g6(r.summary.time_scale);
  r.label += ")";
  std::map<std::string, std::string> kind;
  refuse_large_run_file((folder / "events.jsonl").string(), kMaxComparedEventsBytes, "compare");
  // Lines taken as views of the file's text: the file is held once (a stream over it would copy it).
  const std::string text = read(folder / "events.jsonl");
  std::size_t line_no = 0;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t nl = std::min(text.find('\n', at), text.size());
    const std::string_view line(text.data() + at, nl - at);
    at = nl + 1;
    ++line_no;
    if (line.empty()) continue;
    const record::Event e = parse_event_line(line, (folder / "events.jsonl").string(), line_no);
    if (e.of_run()) continue;  // a run's event (run_raise, run_end) names no task
    if (e.event == "submit") kind[e.task] = e.kind.empty() ? "single" : e.kind;
    if (e.event != "dispatch") continue;
    const std::string k = kind[e.task];
    const std::string member = k == "group" || k == "sub_group" ? e.task + "[" + std::to_string(*e.member) + "]" : e.task;
    RunFacts::Dispatch d{member + "@" + e.worker, member, e.worker, e.t_s};
    r.per_worker[e.worker].push_back(d);
    r.by_member[member] = d;
  }
  return r;
}

// NEXT_LEVEL workers by id, then SUB workers by index.
bool worker_less(const std::string& a, const std::string& b) {
  const bool sa = a.rfind("sub", 0) == 0, sb = b.rfind("sub", 0) == 0;
  if (sa != sb) return sb;
  const std::string na = sa ? a.substr(3) : a, nb = sb ? b.substr(3) : b;
  try {
    return std::stoll(na) < std::stoll(nb);
  } catch (const std::exception&) {
    return a < b;
  }
}

std::string at_time(const RunFacts::Dispatch& d) {
  return d.placement + " t=" + g6(d.t);
}

}  // namespace

Comparison compare_runs(const std::string& dir_a, const std::string& dir_b, std::size_t limit) {
  const RunFacts a = load_run(dir_a), b = load_run(dir_b);
  std::string na = a.name, nb = b.name;
  if (na == nb) na = "A", nb = "B";
  Comparison c;
  std::string& o = c.text;
  o += "A: " + a.label + "\nB: " + b.label + "\n";
  if (a.summary.scenario != b.summary.scenario)
    o += "note: the runs are of different scenarios\n";
  // Times of two clocks (wall-clock threads against simulated time, or two time scales) do not compare:
  // only the order does. SimGrid and the event engine keep one clock, simulated scenario seconds.
  const bool timed = record::same_clock(a.summary.engine, b.summary.engine) &&
                     g6(a.summary.time_scale) == g6(b.summary.time_scale);
  const auto engine = [](const RunFacts& r) { return std::string(record::to_string(r.summary.engine)); };
  if (!timed)
    o += "note: different engines or time scales (" + na + " " + engine(a) + " x" + g6(a.summary.time_scale) + ", " +
         nb + " " + engine(b) + " x" + g6(b.summary.time_scale) +
         "): times are not comparable; placements, order and counts are compared, times are shown only\n";
  const std::string pa = effective_policy(a.summary), pb = effective_policy(b.summary);
  if (pa != pb) o += "policies: A " + pa + ", B " + pb + "\n";
  o += "notation: placement task[member]@worker (task@worker for a single), time t=... s\n";

  // Every position where the per-worker dispatch sequences differ.
  std::set<std::string, bool (*)(const std::string&, const std::string&)> workers(worker_less);
  for (const auto& [w, s] : a.per_worker) workers.insert(w);
  for (const auto& [w, s] : b.per_worker) workers.insert(w);
  std::size_t shown = 0, order_diffs = 0;
  o += "dispatch order per worker:\n";
  static const std::vector<RunFacts::Dispatch> none;
  for (const std::string& w : workers) {
    const auto& x = a.per_worker.count(w) ? a.per_worker.at(w) : none;
    const auto& y = b.per_worker.count(w) ? b.per_worker.at(w) : none;
    std::vector<std::size_t> diff;
    for (std::size_t i = 0; i < std::max(x.size(), y.size()); ++i)
      if (i >= x.size() || i >= y.size() || x[i].placement != y[i].placement) diff.push_back(i);
    const std::string who = w.rfind("sub", 0) == 0 ? w : "worker " + w;
    if (diff.empty()) {
      o += "  " + who + ": same " + std::to_string(x.size()) + " dispatches\n";
      continue;
    }
    order_diffs += diff.size();
    o += "  " + who + ": " + std::to_string(diff.size()) + " of " +
         std::to_string(std::max(x.size(), y.size())) + " positions differ (" + std::to_string(x.size()) +
         " dispatches in " + na + ", " + std::to_string(y.size()) + " in " + nb + ")\n";
    for (std::size_t i : diff) {
      if (shown++ >= limit) continue;
      o += "    #" + std::to_string(i) + ": " + na + " " + (i < x.size() ? at_time(x[i]) : "(none)") + ", " +
           nb + " " + (i < y.size() ? at_time(y[i]) : "(none)") + "\n";
    }
  }
  if (shown > limit)
    o += "  ... " + std::to_string(shown - limit) + " more not shown (--limit " + std::to_string(limit) +
         ")\n";

  // Dispatches that moved: another worker, another time, or only in one run.
  std::set<std::string> members;
  for (const auto& [m, d] : a.by_member) members.insert(m);
  for (const auto& [m, d] : b.by_member) members.insert(m);
  std::vector<std::pair<double, std::string>> moved;
  for (const std::string& m : members) {
    auto x = a.by_member.find(m), y = b.by_member.find(m);
    if (x != a.by_member.end() && y != b.by_member.end() && x->second.worker == y->second.worker &&
        (!timed || std::abs(x->second.t - y->second.t) <= 1e-9))
      continue;
    const double when = x != a.by_member.end() ? x->second.t : y->second.t;
    moved.emplace_back(
        when, m + ": " + na + " " + (x != a.by_member.end() ? at_time(x->second) : "(not dispatched)") +
                  ", " + nb + " " + (y != b.by_member.end() ? at_time(y->second) : "(not dispatched)"));
  }
  std::sort(moved.begin(), moved.end());
  o += std::string(timed ? "dispatches that moved (worker or time): " : "dispatches that moved (worker): ") +
       std::to_string(moved.size()) + "\n";
  for (std::size_t i = 0; i < moved.size() && i < limit; ++i) o += "  " + moved[i].second + "\n";
  if (moved.size() > limit)
    o += "  ... " + std::to_string(moved.size() - limit) + " more not shown (--limit " +
         std::to_string(limit) + ")\n";

  // Groups side by side: when each launched and how long it waited READY, largest change first.
  struct G {
    std::string name;
    std::optional<record::GroupWait> x, y;
  };
  std::vector<G> groups;
  std::map<std::string, std::size_t> at;
  for (const auto* run : {&a, &b})
    for (const record::GroupWait& g : run->summary.groups) {
      const std::string& name = g.task;
      if (!at.count(name)) at[name] = groups.size(), groups.push_back({name, {}, {}});
      (run == &a ? groups[at[name]].x : groups[at[name]].y) = g;
    }
  auto wait = [](const std::optional<record::GroupWait>& g) { return g ? g->ready_wait_s : 0.0; };
  std::stable_sort(groups.begin(), groups.end(), [&](const G& p, const G& q) {
    return std::abs(wait(p.y) - wait(p.x)) > std::abs(wait(q.y) - wait(q.x));
  });
  if (!groups.empty()) {
    char line[512];
    std::size_t gw = 5;
    for (const G& g : groups) gw = std::max(gw, g.name.size());
    const int name_w = static_cast<int>(std::min<std::size_t>(gw, 40));
    const int col = static_cast<int>(std::max<std::size_t>(12, std::max(na.size(), nb.size()) + 7));
    o += "groups (launch time, READY wait and overtakes by singles, largest wait change first):\n";
    const int ocol = static_cast<int>(std::max<std::size_t>(5, std::max(na.size(), nb.size()) + 4));
    std::snprintf(line, sizeof line, "  %-*s %*s %*s %*s %*s %10s %*s %*s\n", name_w, "group", col,
                  (na + " launch").c_str(), col, (nb + " launch").c_str(), col, (na + " wait").c_str(), col,
                  (nb + " wait").c_str(), "change", ocol, (na + " ovt").c_str(), ocol, (nb + " ovt").c_str());
    o += line;
    auto launch = [](const std::optional<record::GroupWait>& g) {
      if (!g) return std::string("(absent)");
      return g->launched_s ? "t=" + g6(*g->launched_s) : std::string("never");
    };
    auto secs = [](const std::optional<record::GroupWait>& g, double v) { return g ? g6(v) + " s" : std::string("-"); };
    auto overtakes = [](const std::optional<record::GroupWait>& g) {
      return g ? std::to_string(g->overtakes) : std::string("-");
    };
    for (std::size_t i = 0; i < groups.size() && i < limit; ++i) {
      const G& g = groups[i];
      std::snprintf(
          line, sizeof line, "  %-*s %*s %*s %*s %*s %10s %*s %*s\n", name_w, g.name.c_str(), col,
          launch(g.x).c_str(), col, launch(g.y).c_str(), col, secs(g.x, wait(g.x)).c_str(), col,
          secs(g.y, wait(g.y)).c_str(),
          (g.x && g.y ? (wait(g.y) >= wait(g.x) ? "+" : "") + g6(wait(g.y) - wait(g.x)) + " s" : "-").c_str(),
          ocol, overtakes(g.x).c_str(), ocol, overtakes(g.y).c_str());
      o += line;
    }
    if (groups.size() > limit)
      o += "  ... " + std::to_string(groups.size() - limit) + " more groups not shown (--limit " +
           std::to_string(limit) + ")\n";
  }

  const SweepRow ra = row_from_summary({}, a.summary), rb = row_from_summary({}, b.summary);
  char line[512];
  const int mcol = static_cast<int>(std::max<std::size_t>(14, std::max(na.size(), nb.size())));
  o += "metrics:\n";
  std::snprintf(line, sizeof line, "  %-32s %*s %*s %10s\n", "", mcol, na.c_str(), mcol, nb.c_str(), "ratio");
  o += line;
  bool metrics_same = true;
  auto metric = [&](const char* name, double x, double y) {
    // A time (or a share of time) of two clocks differs without saying anything: not a difference.
    const bool of_time = std::string_view(name).find("(s)") != std::string_view::npos ||
                         std::string_view(name).rfind("utilisation", 0) == 0;
    if (timed || !of_time) metrics_same &= g6(x) == g6(y);
    std::snprintf(line, sizeof line, "  %-32s %*s %*s %10s\n", name, mcol, g6(x).c_str(), mcol, g6(y).c_str(),
                  x != 0 ? g6(y / x).c_str() : "-");
    o += line;
  };
  metric("makespan (s)", ra.makespan_s, rb.makespan_s);
  metric("utilisation (mean)", ra.utilisation, rb.utilisation);
  metric("group READY wait mean (s)", ra.group_wait_mean_s, rb.group_wait_mean_s);
  metric("group READY wait p95 (s)", ra.group_wait_p95_s, rb.group_wait_p95_s);
  metric("group READY wait max (s)", ra.group_wait_max_s, rb.group_wait_max_s);
  metric("single READY wait mean (s)", ra.single_wait_mean_s, rb.single_wait_mean_s);
  metric("single READY wait p95 (s)", ra.single_wait_p95_s, rb.single_wait_p95_s);
  metric("single READY wait max (s)", ra.single_wait_max_s, rb.single_wait_max_s);
  metric("groups waited, idle target (s)", ra.group_idle_target_s, rb.group_idle_target_s);
  metric("groups waited, held target (s)", ra.group_held_target_s, rb.group_held_target_s);
  metric("failed", static_cast<double>(ra.failed), static_cast<double>(rb.failed));
  metric("poisoned", static_cast<double>(ra.poisoned), static_cast<double>(rb.poisoned));
  metric("rejected", static_cast<double>(ra.rejected), static_cast<double>(rb.rejected));
  metric("stuck", static_cast<double>(ra.stuck), static_cast<double>(rb.stuck));
  for (const char* event : {"group_stall", "reservation_stall"})
    metric((std::string(event) + " reports").c_str(), static_cast<double>(a.summary.stall_count(event)),
           static_cast<double>(b.summary.stall_count(event)));
  o += "  outcome: " + na + " " + ra.outcome + (ra.clean ? "" : " (not clean)") + ", " + nb + " " +
       rb.outcome + (rb.clean ? "" : " (not clean)") + "\n";
  c.same = order_diffs == 0 && moved.empty() && metrics_same && ra.outcome == rb.outcome;
  o += c.same ? (timed ? "same: placements, order, times and metrics agree\n"
                       : "same: placements, order and counts agree (times not comparable)\n")
              : "different: " + std::to_string(order_diffs) + " order position(s), " +
                    std::to_string(moved.size()) + " moved dispatch(es)" +
                    (metrics_same ? "" : ", metrics differ") + "\n";
  return c;
}

}  // namespace dirsched
