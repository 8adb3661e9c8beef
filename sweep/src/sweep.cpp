#include "dirsched/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

namespace dirsched {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string g6(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

}  // namespace

std::size_t variant_count(const Scenario& s) {
  std::size_t n = 1;
  for (const auto& [name, candidates] : s.vars) n *= candidates.size();
  return n;
}

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

std::vector<Variant> enumerate_variants(const Scenario& s) {
  std::vector<Variant> out;
  for (std::size_t i = 0; i < variant_count(s); ++i) out.push_back(variant_at(s, i));
  return out;
}

std::vector<Variant> sample_variants(const Scenario& s, std::size_t k, std::uint64_t seed) {
  const std::size_t n = variant_count(s);
  if (k >= n) return enumerate_variants(s);
  std::mt19937_64 rng(seed);
  std::set<std::size_t> picked;
  while (picked.size() < k) picked.insert(static_cast<std::size_t>(rng() % n));
  std::vector<Variant> out;
  for (std::size_t i : picked) out.push_back(variant_at(s, i));
  return out;
}

std::string variant_dir(const Variant& v) {
  char b[32];
  std::snprintf(b, sizeof b, "variant-%04zu", v.index);
  return b;
}

SweepRow row_from_summary(const Variant& v, const json& s) {
  SweepRow r;
  r.variant = v;
  r.makespan_s = s.value("makespan_s", 0.0);
  r.outcome = s.value("outcome", "");
  double sum = 0;
  std::size_t n = 0;
  for (const json& g : s.value("groups", json::array())) {
    const double w = g.value("ready_wait_s", 0.0);
    sum += w;
    r.group_wait_max_s = std::max(r.group_wait_max_s, w);
    r.group_idle_target_s += g.value("idle_target_s", 0.0);
    ++n;
  }
  r.group_wait_mean_s = n ? sum / static_cast<double>(n) : 0;
  double util = 0;
  std::size_t workers = 0;
  for (const json& w : s.value("workers", json::array()))
    if (w.value("kind", "") != "sub") util += w.value("utilisation", 0.0), ++workers;
  r.utilisation = workers ? util / static_cast<double>(workers) : 0;
  const json tasks = s.value("tasks", json::object());
  r.failed = tasks.value("FAILED", 0L);
  r.poisoned = tasks.value("POISONED", 0L);
  r.rejected = tasks.value("REJECTED", 0L);
  return r;
}

std::vector<std::size_t> rank(const std::vector<SweepRow>& rows) {
  std::vector<std::size_t> order(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const SweepRow &x = rows[a], &y = rows[b];
    return std::make_tuple(x.makespan_s, x.group_idle_target_s, x.group_wait_max_s, x.variant.index) <
           std::make_tuple(y.makespan_s, y.group_idle_target_s, y.group_wait_max_s, y.variant.index);
  });
  return order;
}

std::string sweep_csv(const std::vector<std::string>& names, const std::vector<SweepRow>& rows) {
  std::string o = "variant";
  for (const std::string& n : names) o += "," + csv_field(n);
  o += ",makespan_s,group_ready_wait_mean_s,group_ready_wait_max_s,group_idle_target_s,utilisation,failed,"
       "poisoned,"
       "rejected,outcome\n";
  for (const SweepRow& r : rows) {
    o += std::to_string(r.variant.index);
    for (const std::string& n : names) {
      auto it = r.variant.values.find(n);
      // A string value (a policy name) reads as itself, not as a quoted JSON literal.
      const std::string text = it == r.variant.values.end() ? ""
                               : it->second.is_string()     ? it->second.get<std::string>()
                                                            : it->second.dump();
      o += "," + csv_field(text);
    }
    o += "," + g6(r.makespan_s) + "," + g6(r.group_wait_mean_s) + "," + g6(r.group_wait_max_s) + "," +
         g6(r.group_idle_target_s) + "," + g6(r.utilisation) + "," + std::to_string(r.failed) + "," +
         std::to_string(r.poisoned) + "," + std::to_string(r.rejected) + "," + r.outcome + "\n";
  }
  return o;
}

std::string ranking_text(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& ranking) {
  std::string o;
  int place = 1;
  for (std::size_t i : ranking) {
    const SweepRow& r = rows[i];
    std::string vals;
    for (const auto& [k, v] : r.variant.values) vals += (vals.empty() ? "" : " ") + k + "=" + v.dump();
    o += std::to_string(place++) + ". variant " + std::to_string(r.variant.index) + " (" + vals +
         "): makespan " + g6(r.makespan_s) + " s, groups waited with an idle target " +
         g6(r.group_idle_target_s) + " s, worst group wait " + g6(r.group_wait_max_s) + " s" +
         (r.rejected ? ", " + std::to_string(r.rejected) + " rejected" : "") + "\n";
  }
  return o;
}

std::string sweep_svg(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& ranking) {
  const double bar_h = 22, left = 260, width = 900, top = 40;
  double max_m = 0;
  for (const SweepRow& r : rows) max_m = std::max(max_m, r.makespan_s);
  if (max_m <= 0) max_m = 1;
  const double height = top + bar_h * static_cast<double>(rows.size()) + 40;
  std::string o = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + g6(width) + "\" height=\"" +
                  g6(height) +
                  "\" font-family=\"Helvetica,Arial,sans-serif\" font-size=\"11\">\n<rect width=\"100%\" "
                  "height=\"100%\" fill=\"#fff\"/>\n"
                  "<text x=\"10\" y=\"20\" font-size=\"13\" font-weight=\"bold\">Makespan per variant (best "
                  "highlighted)</text>\n";
  const std::size_t best = ranking.empty() ? rows.size() : ranking.front();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SweepRow& r = rows[i];
    const double y = top + bar_h * static_cast<double>(i);
    const double w = (width - left - 80) * r.makespan_s / max_m;
    std::string label = "variant " + std::to_string(r.variant.index);
    for (const auto& [k, v] : r.variant.values) label += " " + k + "=" + v.dump();
    o += "<text x=\"10\" y=\"" + g6(y + 15) + "\">" + label + "</text>\n";
    o += std::string("<rect class=\"") + (i == best ? "best" : "bar") + "\" x=\"" + g6(left) + "\" y=\"" +
         g6(y + 3) + "\" width=\"" + g6(std::max(1.0, w)) + "\" height=\"" + g6(bar_h - 6) + "\" fill=\"" +
         (i == best ? "#2e9e5b" : "#8aa4c8") + "\"/>\n";
    o += "<text x=\"" + g6(left + w + 6) + "\" y=\"" + g6(y + 15) + "\">" + g6(r.makespan_s) + " s" +
         (i == best ? "  (best)" : "") + "</text>\n";
  }
  return o + "</svg>\n";
}

std::vector<SweepRow> collect(const std::string& dir, std::vector<std::string>* var_names) {
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("variant-", 0) == 0)
      folders.push_back(e.path());
  std::sort(folders.begin(), folders.end());
  std::vector<SweepRow> rows;
  std::set<std::string> names;
  for (const fs::path& f : folders) {
    if (!fs::exists(f / "summary.json") || !fs::exists(f / "variant.json"))
      throw std::runtime_error(f.string() + ": missing summary.json or variant.json (did that variant run?)");
    const json v = json::parse(read(f / "variant.json"));
    Variant var;
    var.index = v.at("variant").get<std::size_t>();
    for (auto it = v.at("vars").begin(); it != v.at("vars").end(); ++it) {
      var.values[it.key()] = it.value();
      names.insert(it.key());
    }
    rows.push_back(row_from_summary(var, json::parse(read(f / "summary.json"))));
  }
  std::sort(rows.begin(), rows.end(),
            [](const SweepRow& a, const SweepRow& b) { return a.variant.index < b.variant.index; });
  if (var_names) var_names->assign(names.begin(), names.end());
  return rows;
}

std::string compare_runs(const std::string& a, const std::string& b) {
  auto sequences = [](const std::string& dir) {
    std::map<std::string, std::vector<std::string>> per;
    std::istringstream in(read(fs::path(dir) / "events.jsonl"));
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      const json e = json::parse(line);
      if (e.value("event", "") != "dispatch") continue;
      const std::string worker = e.contains("sub_worker") ? e["sub_worker"].get<std::string>()
                                                          : std::to_string(e["worker"].get<long long>());
      per[worker].push_back(e["task"].get<std::string>() + "[" + std::to_string(e["member"].get<int>()) +
                            "]@" + g6(e["t_s"].get<double>()));
    }
    return per;
  };
  const auto sa = sequences(a), sb = sequences(b);
  std::set<std::string> workers;
  for (const auto& [w, s] : sa) workers.insert(w);
  for (const auto& [w, s] : sb) workers.insert(w);
  std::string o = "dispatch sequences per worker (task[member]@time):\n";
  auto strip_time = [](const std::string& d) { return d.substr(0, d.rfind('@')); };
  for (const std::string& w : workers) {
    const auto& x = sa.count(w) ? sa.at(w) : std::vector<std::string>{};
    const auto& y = sb.count(w) ? sb.at(w) : std::vector<std::string>{};
    std::size_t i = 0;
    while (i < x.size() && i < y.size() && strip_time(x[i]) == strip_time(y[i])) ++i;
    if (i == x.size() && i == y.size()) {
      o += "  worker " + w + ": same " + std::to_string(x.size()) + " dispatches\n";
    } else {
      o += "  worker " + w + ": first divergence at dispatch #" + std::to_string(i) + ": A " +
           (i < x.size() ? x[i] : "(none)") + ", B " + (i < y.size() ? y[i] : "(none)") + "\n";
    }
  }
  const json ja = json::parse(read(fs::path(a) / "summary.json")),
             jb = json::parse(read(fs::path(b) / "summary.json"));
  const SweepRow ra = row_from_summary({}, ja), rb = row_from_summary({}, jb);
  char line[256];
  o += "metrics:\n";
  std::snprintf(line, sizeof line, "  %-30s %14s %14s %8s\n", "", "A", "B", "B/A");
  o += line;
  auto metric = [&](const char* name, double x, double y) {
    std::snprintf(line, sizeof line, "  %-30s %14.6g %14.6g %8s\n", name, x, y,
                  x != 0 ? g6(y / x).c_str() : "-");
    o += line;
  };
  metric("makespan_s", ra.makespan_s, rb.makespan_s);
  metric("utilisation (mean)", ra.utilisation, rb.utilisation);
  metric("group READY wait mean (s)", ra.group_wait_mean_s, rb.group_wait_mean_s);
  metric("group READY wait max (s)", ra.group_wait_max_s, rb.group_wait_max_s);
  metric("groups waited, idle target (s)", ra.group_idle_target_s, rb.group_idle_target_s);
  metric("failed", static_cast<double>(ra.failed), static_cast<double>(rb.failed));
  metric("poisoned", static_cast<double>(ra.poisoned), static_cast<double>(rb.poisoned));
  metric("rejected", static_cast<double>(ra.rejected), static_cast<double>(rb.rejected));
  o += "  outcome: A " + ra.outcome + ", B " + rb.outcome + "\n";
  return o;
}

}  // namespace dirsched
