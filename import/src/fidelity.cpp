// Fidelity of a replay (see fidelity.hpp).
#include "dirsched/fidelity.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "dirsched/error.hpp"
#include "dirsched/outputs.hpp"

namespace dirsched {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

struct Timeline {
  std::string dir;
  double makespan = 0;
  std::map<std::string, double> dispatch_t;                 // member label -> dispatch time
  std::map<std::string, std::vector<std::string>> per_worker;  // worker -> member labels in order
  std::vector<std::string> order;                           // every member label, in event order
  std::map<std::string, std::string> fate;                  // task -> final state
  std::map<std::string, double> launched;                   // group -> launch time
  std::map<std::string, std::set<std::string>> stalls;      // stall event -> tasks
};

Timeline load(const std::string& dir) {
  Timeline t;
  t.dir = dir;
  const record::Summary summary = read_run_folder_summary(dir);
  t.makespan = summary.makespan_s;
  const std::string path = (fs::path(dir) / "events.jsonl").string();
  if (std::error_code ec; fs::exists(path, ec) && !fs::is_regular_file(path, ec))
    throw BadInput(path + ": not a regular file (a FIFO, a device, a socket or a folder)");
  refuse_large_run_file(path, kMaxComparedEventsBytes, "fidelity");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadInput(path + ": cannot open the file");
  std::map<std::string, std::string> kind;
  std::string line;
  std::size_t n = 0;
  std::uint64_t events = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    const record::Event e = parse_event_line(line, path, n);
    // A run's events are numbered 0, 1, 2, ... in file order: a line repeated, moved or lost is not the
    // run's record (a doubled or reversed file gave numbers from it).
    if (e.seq != events)
      throw BadInput(path + " line " + std::to_string(n) + ": seq " + std::to_string(e.seq) + " where " +
                     std::to_string(events) + " was expected (a run numbers its events from 0 in order: a line is repeated, moved or missing)");
    ++events;
    if (e.of_run()) continue;  // a run's event: no task
    const std::string& ev = e.event;
    const std::string& task = e.task;
    const double ts = e.t_s;
    if (ev == "submit") kind[task] = e.kind.empty() ? "single" : e.kind;
    if (ev == "dispatch") {
      const std::string k = kind[task];
      const std::string label = k == "group" || k == "sub_group" ? task + "[" + std::to_string(*e.member) + "]" : task;
      if (!t.dispatch_t.count(label)) t.dispatch_t[label] = ts, t.order.push_back(label);
      t.per_worker[e.worker].push_back(label);
    }
    if (ev == "complete") t.fate[task] = "COMPLETED";
    if (ev == "fail") t.fate[task] = "FAILED";
    if (ev == "poison") t.fate[task] = "POISONED";
    if (ev == "cancel") t.fate[task] = "CANCELLED";
    if (ev == "reject") t.fate[task] = "REJECTED";
    if (ev == "not_submitted") t.fate[task] = "NOT_SUBMITTED";
    if ((ev == "submit" || ev == "dispatch") && !t.fate.count(task)) t.fate[task] = "UNFINISHED";
    if (ev == "group_launched") t.launched[task] = ts;
    if (ev == "group_stall" || ev == "reservation_stall") t.stalls[ev].insert(task);
  }
  if (summary.schema >= 1 && events != summary.events)
    throw BadInput(path + ": holds " + std::to_string(events) + " events, but summary.json beside it counts " +
                   std::to_string(summary.events) + " (the two files are not of one run)");
  return t;
}

// Nearest-rank percentile of a sorted list.
double rank(const std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[k == 0 ? 0 : k - 1];
}

// Kendall's tau-b between two rankings of the same items (Knight's O(n log n) algorithm: sort by x
// then y, count the swaps a merge sort by y makes; ties in x, in y and in both are taken out).
// Undefined (NaN) with fewer than two items or when every time of one side is tied: no order to compare.
double kendall_tau_b(std::vector<std::pair<double, double>> p) {
  const std::size_t n = p.size();
  if (n < 2) return std::nan("");
  std::sort(p.begin(), p.end());
  auto pairs = [](std::uint64_t k) { return k * (k - 1) / 2; };
  std::uint64_t n0 = pairs(n), n1 = 0, n3 = 0;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && p[j].first == p[i].first) ++j;
    n1 += pairs(j - i);
    for (std::size_t k = i; k < j;) {
      std::size_t l = k;
      while (l < j && p[l].second == p[k].second) ++l;
      n3 += pairs(l - k);
      k = l;
    }
    i = j;
  }
  std::vector<double> y(n), buf(n);
  for (std::size_t i = 0; i < n; ++i) y[i] = p[i].second;
  std::uint64_t swaps = 0;
  for (std::size_t width = 1; width < n; width *= 2) {
    for (std::size_t lo = 0; lo < n; lo += 2 * width) {
      const std::size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      std::size_t a = lo, b = mid, k = lo;
      while (a < mid && b < hi) {
        if (y[b] < y[a]) {
          swaps += mid - a;
          buf[k++] = y[b++];
        } else {
          buf[k++] = y[a++];
        }
      }
      while (a < mid) buf[k++] = y[a++];
      while (b < hi) buf[k++] = y[b++];
    }
    std::swap(y, buf);
  }
  std::uint64_t n2 = 0;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && y[j] == y[i]) ++j;
    n2 += pairs(j - i);
    i = j;
  }
  const double num = static_cast<double>(n0) - static_cast<double>(n1) - static_cast<double>(n2) +
                     static_cast<double>(n3) - 2.0 * static_cast<double>(swaps);
  const double den = std::sqrt(static_cast<double>(n0 - n1) * static_cast<double>(n0 - n2));
  return den > 0 ? num / den : std::nan("");
}

std::string pct(double f) {
  std::ostringstream o;
  o << (f >= 0 ? "+" : "") << human_percent(f) << "%";
  return o.str();
}

}  // namespace

Fidelity measure_fidelity(const std::string& observed, const std::string& simulated, std::optional<double> bound) {
  const Timeline a = load(observed), b = load(simulated);
  Fidelity f;
  ojson& j = f.json;
  j["observed"] = observed;
  j["simulated"] = simulated;
  // Relative to the observed makespan: undefined (NaN, JSON null) when that is 0 and the simulated one is
  // not; 0 when both are 0.
  f.makespan_error = a.makespan > 0   ? (b.makespan - a.makespan) / a.makespan
                     : b.makespan > 0 ? std::nan("")
                                      : 0;
  const bool undefined = std::isnan(f.makespan_error);
  j["makespan_s"] = {{"observed", a.makespan}, {"simulated", b.makespan}};
  j["makespan_error"] = undefined ? ojson(nullptr) : ojson(f.makespan_error);
  // Dispatch times, member by member (members only one side dispatched are counted apart).
  std::vector<double> errs;
  std::vector<std::pair<double, double>> ranks;
  std::vector<std::string> only_a, only_b;
  for (const auto& [label, t] : a.dispatch_t) {
    auto it = b.dispatch_t.find(label);
    if (it == b.dispatch_t.end()) {
      only_a.push_back(label);
      continue;
    }
    errs.push_back(std::fabs(it->second - t));
    ranks.push_back({t, it->second});
  }
  for (const auto& [label, t] : b.dispatch_t)
    if (!a.dispatch_t.count(label)) only_b.push_back(label);
  std::sort(errs.begin(), errs.end());
  const double med = rank(errs, 0.5), p95 = rank(errs, 0.95), mx = errs.empty() ? 0 : errs.back();
  auto share = [&](double v) { return a.makespan > 0 ? v / a.makespan : 0.0; };
  j["dispatch_error_s"] = {{"members", errs.size()},
                           {"median", med},
                           {"p95", p95},
                           {"max", mx},
                           {"share_of_observed_makespan", {{"median", share(med)}, {"p95", share(p95)}, {"max", share(mx)}}},
                           {"method", "absolute difference of a member's dispatch time; nearest-rank percentiles"},
                           {"only_observed", only_a},
                           {"only_simulated", only_b}};
  // Order: workers whose sequence is identical, and Kendall's tau-b over every dispatch both have.
  std::set<std::string> workers;
  for (const auto& [w, l] : a.per_worker) workers.insert(w);
  for (const auto& [w, l] : b.per_worker) workers.insert(w);
  std::size_t same = 0;
  ojson differing = ojson::array();
  for (const std::string& w : workers) {
    auto ia = a.per_worker.find(w), ib = b.per_worker.find(w);
    const std::vector<std::string> none;
    const auto& la = ia == a.per_worker.end() ? none : ia->second;
    const auto& lb = ib == b.per_worker.end() ? none : ib->second;
    if (la == lb)
      ++same;
    else
      differing.push_back(w);
  }
  const double agreement = workers.empty() ? 1 : static_cast<double>(same) / static_cast<double>(workers.size());
  const double tau = kendall_tau_b(ranks);
  j["order_agreement"] = {{"share", agreement}, {"workers", workers.size()}, {"differing", differing}};
  j["kendall_tau"] = {{"tau_b", std::isnan(tau) ? ojson(nullptr) : ojson(tau)}, {"pairs_of", ranks.size()},
                      {"method", "Kendall's tau-b of observed vs simulated dispatch times (ties counted as ties)"}};
  // Fates: every task whose final state differs, never dropped.
  ojson fates = ojson::array();
  std::set<std::string> tasks;
  for (const auto& [t, s] : a.fate) tasks.insert(t);
  for (const auto& [t, s] : b.fate) tasks.insert(t);
  for (const std::string& t : tasks) {
    auto ia = a.fate.find(t), ib = b.fate.find(t);
    const std::string sa = ia == a.fate.end() ? "ABSENT" : ia->second, sb = ib == b.fate.end() ? "ABSENT" : ib->second;
    if (sa != sb) fates.push_back({{"task", t}, {"observed", sa}, {"simulated", sb}});
  }
  j["fate_mismatches"] = {{"count", fates.size()}, {"tasks", fates}};
  // Groups: launch time error.
  ojson groups = ojson::array();
  std::vector<double> gerr;
  for (const auto& [g, t] : a.launched) {
    auto it = b.launched.find(g);
    ojson one = {{"task", g}, {"observed_s", t}, {"simulated_s", it == b.launched.end() ? ojson(nullptr) : ojson(it->second)}};
    if (it != b.launched.end()) {
      one["error_s"] = it->second - t;
      gerr.push_back(std::fabs(it->second - t));
    }
    groups.push_back(one);
  }
  std::sort(gerr.begin(), gerr.end());
  j["group_launch_error_s"] = {{"groups", groups}, {"median", rank(gerr, 0.5)}, {"max", gerr.empty() ? 0 : gerr.back()}};
  // Stall reports: the same tasks reported by the same event?
  ojson stalls = ojson::object();
  bool stalls_agree = true;
  for (const char* ev : {"group_stall", "reservation_stall"}) {
    auto ia = a.stalls.find(ev), ib = b.stalls.find(ev);
    const std::set<std::string> none;
    const auto& sa = ia == a.stalls.end() ? none : ia->second;
    const auto& sb = ib == b.stalls.end() ? none : ib->second;
    stalls[ev] = {{"observed", sa.size()}, {"simulated", sb.size()}, {"same_tasks", sa == sb}};
    stalls_agree &= sa == sb;
  }
  stalls["agree"] = stalls_agree;
  j["stall_reports"] = stalls;
  f.within = !bound || (!undefined && std::fabs(f.makespan_error) <= *bound);  // an undefined error meets no bound
  j["bound"] = bound ? ojson(*bound) : ojson(nullptr);
  j["within_bound"] = f.within;

  std::ostringstream t;
  t << "observed:  " << observed << " (makespan " << human_number(a.makespan) << " s)\n";
  t << "simulated: " << simulated << " (makespan " << human_number(b.makespan) << " s)\n";
  const std::string error_text = undefined ? "undefined (the observed makespan is 0)" : pct(f.makespan_error);
  t << "makespan error: " << error_text << "\n";
  t << "dispatch error: median " << human_number(med) << " s, p95 " << human_number(p95) << " s, max "
    << human_number(mx) << " s (" << human_percent(share(mx)) << "% of the observed makespan at most) over "
    << errs.size() << " members";
  if (!only_a.empty() || !only_b.empty())
    t << "; " << only_a.size() << " dispatched only in the observed run, " << only_b.size() << " only in the simulated";
  t << "\n";
  t << "order: " << same << " of " << workers.size() << " workers dispatch in the same sequence ("
    << human_percent(agreement) << "%); Kendall tau-b "
    << (std::isnan(tau) ? std::string("undefined (fewer than two dispatches, or one side's times all tied)")
                        : human_number(tau))
    << "\n";
  t << "fates: " << fates.size() << " tasks end differently";
  for (std::size_t i = 0; i < fates.size() && i < 10; ++i)
    t << (i ? ", " : ": ") << fates[i]["task"].get<std::string>() << " " << fates[i]["observed"].get<std::string>()
      << " -> " << fates[i]["simulated"].get<std::string>();
  t << "\n";
  t << "groups: " << a.launched.size() << " launched; launch error median " << human_number(rank(gerr, 0.5))
    << " s, max " << human_number(gerr.empty() ? 0 : gerr.back()) << " s\n";
  t << "stall reports: " << (stalls_agree ? "agree" : "differ") << "\n";
  t << "verdict: makespan " << error_text;
  if (bound)
    t << (f.within ? " within " : " BEYOND ") << "the bound of " << human_percent(*bound) << "%";
  else
    t << " (no bound given; calibrated StarPU-on-SimGrid predictions are within a few percent)";
  t << ", order " << human_percent(agreement) << "% of workers, " << fates.size() << " fate mismatches\n";
  f.text = t.str();
  return f;
}

}  // namespace dirsched
