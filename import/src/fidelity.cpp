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
#include "dirsched/output_folder.hpp"
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
  std::map<std::string, double> ready;                      // task -> when it turned READY
  std::map<std::string, std::pair<double, double>> starts;  // group -> its first and last member's dispatch
  struct Stall {
    std::string task;
    std::vector<std::uint64_t> busy, idle_queued;
  };
  std::vector<Stall> stall_list;  // group_stall and reservation_stall events, in order
};

using PerGroup = std::map<std::string, double>;

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
      if (!t.dispatch_t.count(label)) {
        t.dispatch_t[label] = ts, t.order.push_back(label);
        if (k == "group") {
          auto [it, first] = t.starts.try_emplace(task, ts, ts);
          if (!first) it->second = {std::min(it->second.first, ts), std::max(it->second.second, ts)};
        }
      }
      t.per_worker[e.worker].push_back(label);
    }
    if (ev == "ready" && !t.ready.count(task)) t.ready[task] = ts;
    if (ev == "complete") t.fate[task] = "COMPLETED";
    if (ev == "fail") t.fate[task] = "FAILED";
    if (ev == "poison") t.fate[task] = "POISONED";
    if (ev == "cancel") t.fate[task] = "CANCELLED";
    if (ev == "reject") t.fate[task] = "REJECTED";
    if (ev == "not_submitted") t.fate[task] = "NOT_SUBMITTED";
    if ((ev == "submit" || ev == "dispatch") && !t.fate.count(task)) t.fate[task] = "UNFINISHED";
    if (ev == "group_launched") t.launched[task] = ts;
    if (ev == "group_stall" || ev == "reservation_stall") {
      t.stalls[ev].insert(task);
      t.stall_list.push_back({task, e.busy, e.idle_queued});
    }
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

// Each member's absolute dispatch-time difference (sorted), the (a, b) pairs for Kendall's tau, and the
// members only one side dispatched.
struct Dispatches {
  std::vector<double> errors;
  std::vector<std::pair<double, double>> pairs;
  std::vector<std::string> only_a, only_b;
};
Dispatches compare_dispatches(const Timeline& a, const Timeline& b) {
  Dispatches d;
  for (const auto& [label, t] : a.dispatch_t) {
    auto it = b.dispatch_t.find(label);
    if (it == b.dispatch_t.end()) {
      d.only_a.push_back(label);
      continue;
    }
    d.errors.push_back(std::fabs(it->second - t));
    d.pairs.push_back({t, it->second});
  }
  for (const auto& [label, t] : b.dispatch_t)
    if (!a.dispatch_t.count(label)) d.only_b.push_back(label);
  std::sort(d.errors.begin(), d.errors.end());
  return d;
}

// Every worker either run dispatched to, and those whose dispatch sequence differs.
struct Orders {
  std::size_t workers = 0;
  std::vector<std::string> differing;
  double agreement() const {
    return workers == 0 ? 1 : static_cast<double>(workers - differing.size()) / static_cast<double>(workers);
  }
};
Orders compare_orders(const Timeline& a, const Timeline& b) {
  std::set<std::string> workers;
  for (const auto& [w, l] : a.per_worker) workers.insert(w);
  for (const auto& [w, l] : b.per_worker) workers.insert(w);
  Orders o;
  o.workers = workers.size();
  const std::vector<std::string> none;
  for (const std::string& w : workers) {
    auto ia = a.per_worker.find(w), ib = b.per_worker.find(w);
    if ((ia == a.per_worker.end() ? none : ia->second) != (ib == b.per_worker.end() ? none : ib->second))
      o.differing.push_back(w);
  }
  return o;
}

// Per launched group: its READY wait (READY to launch) and its members' start skew (last dispatch less
// first).
PerGroup ready_waits(const Timeline& t) {
  PerGroup out;
  for (const auto& [g, at] : t.launched)
    if (auto it = t.ready.find(g); it != t.ready.end()) out[g] = at - it->second;
  return out;
}
PerGroup start_skews(const Timeline& t) {
  PerGroup out;
  for (const auto& [g, at] : t.launched)
    if (auto it = t.starts.find(g); it != t.starts.end()) out[g] = it->second.second - it->second.first;
  return out;
}

// Observed against simulated, group by group: the list, and the median and largest absolute error.
ojson compare_groups(const PerGroup& a, const PerGroup& b) {
  ojson groups = ojson::array();
  std::vector<double> err;
  for (const auto& [g, t] : a) {
    auto it = b.find(g);
    ojson one = {{"task", g}, {"observed_s", t}, {"simulated_s", it == b.end() ? ojson(nullptr) : ojson(it->second)}};
    if (it != b.end()) {
      one["error_s"] = it->second - t;
      err.push_back(std::fabs(it->second - t));
    }
    groups.push_back(one);
  }
  std::sort(err.begin(), err.end());
  return {{"groups", groups}, {"median", rank(err, 0.5)}, {"max", err.empty() ? 0 : err.back()}};
}

// The largest absolute difference over the groups both have (0 when none).
double largest_difference(const PerGroup& a, const PerGroup& b) {
  double d = 0;
  for (const auto& [g, t] : a)
    if (auto it = b.find(g); it != b.end()) d = std::max(d, std::fabs(it->second - t));
  return d;
}

// Below a nanosecond (a log's resolution) two times are the same: an error that exceeds the spread by
// less is rounding, not a miss.
constexpr double kSameTime = 1e-9;

// A measure of the noise floor: how far apart two runs are on it.
struct NoiseMeasure {
  const char* name;
  double (*distance)(const Timeline&, const Timeline&);
  const char* method;
};
const NoiseMeasure kNoiseMeasures[] = {
    {"makespan_s", [](const Timeline& a, const Timeline& b) { return std::fabs(a.makespan - b.makespan); },
     "absolute difference of the makespans (s)"},
    {"group_ready_wait_s",
     [](const Timeline& a, const Timeline& b) { return largest_difference(ready_waits(a), ready_waits(b)); },
     "largest absolute difference of a group's READY wait (READY to launch) over the groups both runs launched (s)"},
    {"group_launch_s", [](const Timeline& a, const Timeline& b) { return largest_difference(a.launched, b.launched); },
     "largest absolute difference of a group's launch time over the groups both runs launched (s)"},
    {"group_start_skew_s",
     [](const Timeline& a, const Timeline& b) { return largest_difference(start_skews(a), start_skews(b)); },
     "largest absolute difference of a group's member start skew (last member's dispatch less the first's) over "
     "the groups both runs launched (s)"},
    {"worker_order", [](const Timeline& a, const Timeline& b) { return 1 - compare_orders(a, b).agreement(); },
     "share of workers whose dispatch sequence differs"},
    {"dispatch_s", [](const Timeline& a, const Timeline& b) { return rank(compare_dispatches(a, b).errors, 0.95); },
     "p95 (nearest rank) of the absolute difference of a member's dispatch time over the members both runs "
     "dispatched (s)"},
};

// noise_floor: per measure, the largest difference between two observed runs, the replay's against the
// first, and whether it is no larger. Counts the measures within into `within`.
ojson noise_floor(const std::vector<Timeline>& observed, const Timeline& sim, std::vector<std::string>& beyond) {
  ojson floor = ojson::object();
  for (const NoiseMeasure& m : kNoiseMeasures) {
    double spread = 0;
    for (std::size_t i = 0; i < observed.size(); ++i)
      for (std::size_t j = i + 1; j < observed.size(); ++j) spread = std::max(spread, m.distance(observed[i], observed[j]));
    const double error = m.distance(observed[0], sim);
    const bool within = error <= spread + kSameTime;
    if (!within) beyond.push_back(m.name);
    floor[m.name] = {{"observed_spread", spread}, {"error", error}, {"within", within}, {"method", m.method}};
  }
  return floor;
}

// The runtime's own diagnosis: the `reservation stalled` warnings an import read from the log
// (import-report.json beside an import's observed/ folder), or null when OBSERVED is not an import's.
std::optional<std::pair<std::string, json>> log_stall_warnings(const std::string& observed) {
  fs::path dir = fs::path(observed).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();
  const fs::path import_dir = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
  const fs::path report = import_dir / "import-report.json";
  std::error_code ec;
  if (!has_marker(import_dir, FolderKind::kImport) || !fs::is_regular_file(report, ec)) return std::nullopt;
  // A report past the bound of what fidelity reads (an import of millions of tasks lists them) is not
  // parsed whole for its warnings: the comparison is left out (null), as for a folder not an import's.
  if (fs::file_size(report, ec) > kMaxComparedEventsBytes || ec) return std::nullopt;
  std::ifstream in(report, std::ios::binary);
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.contains("stall_warnings"))
    throw BadInput(report.string() + ": not an import report (no stall_warnings): cannot compare the log's stall warnings");
  const json& w = j["stall_warnings"];
  return std::make_pair(report.string(), w.value("warnings", json::array()));
}

// The slot of a task named r<run>.t<slot> (an import's names), or -1.
long long slot_of(const std::string& task) {
  const std::size_t dot = task.find(".t");
  if (task.empty() || task[0] != 'r' || dot == std::string::npos) return -1;
  try {
    std::size_t used = 0;
    const long long slot = std::stoll(task.substr(dot + 2), &used);
    return used == task.size() - dot - 2 ? slot : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

// Each warning matched, in log order, to the first unmatched stall report of the replay on the group of
// its slot; then whether the busy and the idle-with-queued-singles targets are the same sets.
ojson compare_stall_warnings(const std::string& report, const json& warnings, const Timeline& sim, bool& agree) {
  std::vector<bool> used(sim.stall_list.size(), false);
  ojson pairs = ojson::array(), only_log = ojson::array(), only_sim = ojson::array();
  agree = true;
  const auto ids = [](const json& list, const char* field) {
    std::set<std::uint64_t> out;
    for (const json& x : list) {
      const json& v = field ? x.value(field, json()) : x;
      if (v.is_number_integer()) out.insert(v.get<std::uint64_t>());
    }
    return out;
  };
  for (const json& w : warnings) {
    const long long slot = w.value("group_slot", json()).is_number_integer() ? w["group_slot"].get<long long>() : -2;
    std::size_t k = 0;
    while (k < sim.stall_list.size() && (used[k] || slot_of(sim.stall_list[k].task) != slot)) ++k;
    if (k == sim.stall_list.size()) {
      only_log.push_back(ojson::parse(w.dump()));
      agree = false;
      continue;
    }
    used[k] = true;
    const Timeline::Stall& r = sim.stall_list[k];
    const std::set<std::uint64_t> busy(r.busy.begin(), r.busy.end()), idle(r.idle_queued.begin(), r.idle_queued.end());
    const std::set<std::uint64_t> log_busy = ids(w.value("busy_target_ids", json::array()), nullptr),
                                  log_idle = ids(w.value("idle_targets_with_queued_singles", json::array()), "worker");
    const bool same = busy == log_busy && idle == log_idle;
    agree &= same;
    pairs.push_back({{"line", w.value("line", json())}, {"group_slot", slot}, {"task", r.task},
                     {"busy", {{"log", log_busy}, {"simulated", busy}}},
                     {"idle_with_queued_singles", {{"log", log_idle}, {"simulated", idle}}}, {"same", same}});
  }
  for (std::size_t k = 0; k < used.size(); ++k)
    if (!used[k]) only_sim.push_back(sim.stall_list[k].task), agree = false;
  return {{"source", report},
          {"log", warnings.size()},
          {"simulated", sim.stall_list.size()},
          {"matched", pairs},
          {"only_log", only_log},
          {"only_simulated", only_sim},
          {"agree", agree},
          {"method", "each warning of the log matched, in log order, to the first unmatched group_stall or "
                     "reservation_stall of the replay whose task's slot (r<run>.t<slot>) is its group_slot (the "
                     "warning names no run and has no time); same: the same busy targets and the same idle "
                     "targets with queued singles"}};
}

// The verdict's makespan part: against the bound asked, then against the noise floor (or its absence).
std::string makespan_verdict(const ojson& j, std::optional<double> bound, bool within) {
  std::ostringstream t;
  const ojson& e = j["makespan_error"];
  t << "makespan " << (e.is_null() ? std::string("undefined (the observed makespan is 0)") : pct(e.get<double>()));
  if (bound) t << (within ? " within " : " BEYOND ") << "the bound of " << human_percent(*bound) << "%";
  if (!j.contains("noise_floor")) return t.str() + " (no noise floor: give --also-observed with other runs of the workload)";
  const ojson& m = j["noise_floor"]["makespan_s"];
  const double observed = j["makespan_s"]["observed"].get<double>();
  t << (m["within"].get<bool>() ? ", within" : ", BEYOND") << " the noise floor (the observed runs differ by up to "
    << human_number(m["observed_spread"].get<double>()) << " s";
  if (observed > 0) t << ", " << human_percent(m["observed_spread"].get<double>() / observed) << "%";
  return t.str() + ")";
}

std::string fidelity_text(const ojson& j, std::size_t observed_runs, const std::vector<std::string>& beyond,
                          std::optional<double> bound) {
  std::ostringstream t;
  const auto num = [&](const ojson& v) { return human_number(v.get<double>()); };
  t << "observed:  " << j["observed"].get<std::string>() << " (makespan " << num(j["makespan_s"]["observed"]) << " s)\n";
  t << "simulated: " << j["simulated"].get<std::string>() << " (makespan " << num(j["makespan_s"]["simulated"]) << " s)\n";
  const ojson& e = j["makespan_error"];
  t << "makespan error: " << (e.is_null() ? std::string("undefined (the observed makespan is 0)") : pct(e.get<double>())) << "\n";
  const ojson& d = j["dispatch_error_s"];
  t << "dispatch error: median " << num(d["median"]) << " s, p95 " << num(d["p95"]) << " s, max " << num(d["max"])
    << " s (" << human_percent(d["share_of_observed_makespan"]["max"].get<double>())
    << "% of the observed makespan at most) over " << d["members"].get<std::size_t>() << " members";
  if (!d["only_observed"].empty() || !d["only_simulated"].empty())
    t << "; " << d["only_observed"].size() << " dispatched only in the observed run, " << d["only_simulated"].size()
      << " only in the simulated";
  t << "\n";
  const ojson& o = j["order_agreement"];
  const std::size_t workers = o["workers"].get<std::size_t>();
  const ojson& tau = j["kendall_tau"]["tau_b"];
  t << "order: " << workers - o["differing"].size() << " of " << workers << " workers dispatch in the same sequence ("
    << human_percent(o["share"].get<double>()) << "%); Kendall tau-b "
    << (tau.is_null() ? std::string("undefined (fewer than two dispatches, or one side's times all tied)") : num(tau))
    << "\n";
  const ojson& fates = j["fate_mismatches"]["tasks"];
  t << "fates: " << fates.size() << " tasks end differently";
  for (std::size_t i = 0; i < fates.size() && i < 10; ++i)
    t << (i ? ", " : ": ") << fates[i]["task"].get<std::string>() << " " << fates[i]["observed"].get<std::string>()
      << " -> " << fates[i]["simulated"].get<std::string>();
  t << "\n";
  const ojson& g = j["group_launch_error_s"];
  const ojson& k = j["group_start_skew_s"];
  t << "groups: " << g["groups"].size() << " launched; launch error median " << num(g["median"]) << " s, max "
    << num(g["max"]) << " s; member start skew error median " << num(k["median"]) << " s, max " << num(k["max"]) << " s\n";
  t << "stall reports: " << (j["stall_reports"]["agree"].get<bool>() ? "agree" : "differ") << "\n";
  if (const ojson& w = j["runtime_stall_warnings"]; !w.is_null()) {
    std::size_t same = 0;
    for (const ojson& p : w["matched"]) same += p["same"].get<bool>();
    t << "runtime's stall warnings: " << w["log"].get<std::size_t>() << " in the log, "
      << w["simulated"].get<std::size_t>() << " stall reports in the replay; " << w["matched"].size()
      << " matched on their group (" << same << " with the same busy and idle targets), "
      << w["only_log"].size() << " only in the log, " << w["only_simulated"].size() << " only in the replay: "
      << (w["agree"].get<bool>() ? "agree" : "differ") << "\n";
  }
  if (j.contains("noise_floor")) {
    t << "noise floor (" << observed_runs << " observed runs; spread: the largest difference between two of them; "
      << "error: the replay against the first):\n";
    for (const auto& [name, m] : j["noise_floor"].items())
      t << "  " << name << ": error " << num(m["error"]) << ", spread " << num(m["observed_spread"]) << ": "
        << (m["within"].get<bool>() ? "within" : "BEYOND") << "\n";
  }
  t << "verdict: " << makespan_verdict(j, bound, j["within_bound"].get<bool>());
  if (j.contains("noise_floor")) {
    const std::size_t n = j["noise_floor"].size();
    t << "; " << n - beyond.size() << " of " << n << " measures within the noise floor";
    for (std::size_t i = 0; i < beyond.size(); ++i) t << (i ? ", " : " (beyond: ") << beyond[i];
    if (!beyond.empty()) t << ")";
  }
  t << "; order " << human_percent(o["share"].get<double>()) << "% of workers, " << fates.size()
    << " fate mismatches\n";
  return t.str();
}

}  // namespace

Fidelity measure_fidelity(const std::string& observed, const std::string& simulated, std::optional<double> bound,
                          const std::vector<std::string>& also_observed) {
  std::vector<Timeline> runs;
  runs.push_back(load(observed));
  for (const std::string& dir : also_observed) runs.push_back(load(dir));
  const Timeline& a = runs.front();
  const Timeline b = load(simulated);
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
  const Dispatches d = compare_dispatches(a, b);
  const std::vector<double>& errs = d.errors;
  const double med = rank(errs, 0.5), p95 = rank(errs, 0.95), mx = errs.empty() ? 0 : errs.back();
  auto share = [&](double v) { return a.makespan > 0 ? v / a.makespan : 0.0; };
  j["dispatch_error_s"] = {{"members", errs.size()},
                           {"median", med},
                           {"p95", p95},
                           {"max", mx},
                           {"share_of_observed_makespan", {{"median", share(med)}, {"p95", share(p95)}, {"max", share(mx)}}},
                           {"method", "absolute difference of a member's dispatch time; nearest-rank percentiles"},
                           {"only_observed", d.only_a},
                           {"only_simulated", d.only_b}};
  // Order: workers whose sequence is identical, and Kendall's tau-b over every dispatch both have.
  const Orders orders = compare_orders(a, b);
  const double agreement = orders.agreement();
  const double tau = kendall_tau_b(d.pairs);
  j["order_agreement"] = {{"share", agreement}, {"workers", orders.workers}, {"differing", orders.differing}};
  j["kendall_tau"] = {{"tau_b", std::isnan(tau) ? ojson(nullptr) : ojson(tau)}, {"pairs_of", d.pairs.size()},
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
  // Groups: launch time error, and the members' start skew, observed against simulated.
  j["group_launch_error_s"] = compare_groups(a.launched, b.launched);
  j["group_start_skew_s"] = compare_groups(start_skews(a), start_skews(b));
  j["group_start_skew_s"]["method"] = "per launched group: its last member's dispatch less its first's";
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
  // The runtime's own diagnosis, when OBSERVED is an import's: its log's reservation-stall warnings.
  const auto warnings = log_stall_warnings(observed);
  bool warnings_agree = true;
  j["runtime_stall_warnings"] =
      warnings ? compare_stall_warnings(warnings->first, warnings->second, b, warnings_agree) : ojson(nullptr);
  // The noise floor, from two observed runs or more.
  std::vector<std::string> beyond;
  if (runs.size() > 1) {
    j["also_observed"] = also_observed;
    j["noise_floor"] = noise_floor(runs, b, beyond);
  }
  f.within = !bound || (!undefined && std::fabs(f.makespan_error) <= *bound);  // an undefined error meets no bound
  j["bound"] = bound ? ojson(*bound) : ojson(nullptr);
  j["within_bound"] = f.within;
  f.text = fidelity_text(j, runs.size(), beyond, bound);
  return f;
}

}  // namespace dirsched
