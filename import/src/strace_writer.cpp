// A run in the runtime's [STRACE] grammar (see strace_writer.hpp).
#include "dirsched/strace_writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>
#include <vector>

#include "dirsched/outputs.hpp"
#include "dirsched/strace_import.hpp"

namespace dirsched {
namespace {

constexpr long long kOrigin = 1000000000000LL;  // the monotonic clock's reading at simulated time 0

long long ns_of(double t) {
  return kOrigin + std::llround(t * 1e9);
}

bool parse_import_name(const std::string& name, long long& run, long long& slot) {
  if (name.size() < 5 || name[0] != 'r') return false;
  const auto dot = name.find(".t");
  if (dot == std::string::npos) return false;
  try {
    std::size_t a = 0, b = 0;
    run = std::stoll(name.substr(1, dot - 1), &a);
    slot = std::stoll(name.substr(dot + 2), &b);
    return a == dot - 1 && b == name.size() - dot - 2 && run > 0 && slot >= 0;
  } catch (const std::exception&) {
    return false;
  }
}

std::string hid_of(const std::string& callable) {
  if (callable.size() > 1 && callable[0] == 'h' &&
      callable.find_first_not_of("0123456789abcdefABCDEF", 1) == std::string::npos)
    return callable.substr(1);
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : callable) h = (h ^ c) * 1099511628211ULL;
  char b[20];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
  return b;
}

struct Rec {
  long long end;  // file order: end order
  long long run;
  long long ts;
  int order;
  std::size_t n;
  std::string text;
};

}  // namespace

std::string strace_log_from_events(const std::string& events_jsonl, const Scenario& scenario) {
  std::map<long long, std::string> endpoint;  // NEXT_LEVEL id -> endpoint_kind
  for (const WorkerSpec& w : scenario.next_level)
    endpoint[static_cast<long long>(w.id.value())] = w.kind == WorkerKind::kRemote ? "remote_l3" : "local_mailbox";
  struct Task {
    long long run = 1, slot = 0;
    std::string kind, hid;
  };
  std::map<std::string, Task> tasks;
  std::map<long long, long long> run_start;  // run -> its first submit's ns
  // A run of the scenario (the events' "run") -> its run_id, from 1 in the order first seen, and the
  // next task_slot of each run_id (slots count from 0 in every run, as the runtime's do).
  std::map<std::string, long long> run_ids;
  std::map<long long, long long> next_slot;
  std::map<std::string, long long> dispatch_ids;  // worker label -> last dispatch_id (the runtime's count from 1)
  std::map<std::pair<std::string, long long>, std::pair<long long, std::string>> open;  // (task, member) -> ts, ids
  std::vector<Rec> recs;
  // The spans of the facade thread (graph_build, submit, post_fence_retirement) are on thread 2, the
  // scheduler's on thread 3; `inv` is the run_id, and `role` the thread's part, as the runtime writes them.
  auto rec = [&](long long ts, long long dur, int order, const std::string& name, const std::string& hid,
                 long long run, const std::string& attrs) {
    const bool facade = name == "node.submit" || name == "node.graph_build" || name == "node.post_fence_retirement";
    const std::string tid = facade ? "2" : "3";
    std::string line = "[mono_ns=" + std::to_string(ts + dur) + "][T0x" + tid + "][TIMING] " +
                       name.substr(5) + ": [STRACE] v=1 pid=1 tid=" + tid + " inv=" + std::to_string(run) + " hid=" + hid +
                       " depth=0 name=" + name + " ts=" + std::to_string(ts) + " dur=" + std::to_string(dur) + attrs;
    recs.push_back({ts + dur, run, ts, order, recs.size(), line});
  };
  std::istringstream in(events_jsonl);
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    const nlohmann::json e = parse_output_line(line, "events.jsonl", n);
    const std::string ev = e.at("event").get<std::string>();
    const long long ts = ns_of(e.at("t_s").get<double>());
    if (ev == "run_end") {  // the runtime's post-fence retirement of a run that submitted
      if (auto it = run_ids.find(e.value("run", std::string())); it != run_ids.end())
        rec(ts, 0, 3, "node.post_fence_retirement", "0", it->second,
            " run_id=" + std::to_string(it->second) + " role=facade");
      continue;
    }
    if (ev.rfind("run_", 0) == 0) continue;  // a run's event: no task
    const std::string name = e.at("task").get<std::string>();
    if (ev == "submit") {
      Task t;
      if (!parse_import_name(name, t.run, t.slot)) {
        t.run = run_ids.emplace(e.value("run", std::string()), static_cast<long long>(run_ids.size()) + 1).first->second;
        t.slot = next_slot[t.run]++;
      } else if (e.contains("run")) {
        run_ids.emplace(e["run"].get<std::string>(), t.run);  // its run's end is a retirement of that run_id
      }
      t.kind = e.value("kind", "single");
      t.hid = strace_encode(hid_of(e.value("callable", std::string())));
      tasks[name] = t;
      if (!run_start.count(t.run)) run_start[t.run] = t.run == 1 ? kOrigin : ts;
      const std::string id = " run_id=" + std::to_string(t.run) + " task_slot=" + std::to_string(t.slot);
      if (t.kind == "single")
        rec(ts, 0, 0, "node.submit", t.hid, t.run,
            id + " group_index=0 group_size=1 worker_id=" + std::to_string(e.at("workers").at(0).get<long long>()) +
                " role=facade");
      else if (t.kind == "group")
        rec(ts, 0, 0, "node.submit", t.hid, t.run,
            id + " group_index=-1 group_size=" + std::to_string(e.at("members").get<long long>()) + " role=facade");
      continue;  // SUB tasks write no submit span
    }
    if (ev != "dispatch" && ev != "activate" && ev != "member_end") continue;
    const Task& t = tasks.at(name);
    const long long member = e.at("member").get<long long>();
    const bool sub = e.contains("sub_worker");
    const std::string label = sub ? e["sub_worker"].get<std::string>() : std::to_string(e.at("worker").get<long long>());
    const std::string wid = sub ? label.substr(3) : label;
    const std::string ep = sub ? "local_mailbox" : endpoint.count(std::stoll(wid)) ? endpoint[std::stoll(wid)] : "local_mailbox";
    if (ev == "dispatch") {
      const long long did = ++dispatch_ids[label];
      const std::string ids = " run_id=" + std::to_string(t.run) + " task_slot=" + std::to_string(t.slot) +
                              " group_index=" + std::to_string(member) + " worker_id=" + wid +
                              " dispatch_id=" + std::to_string(did) + " endpoint_kind=" + ep +
                              // staging (#1583): a staged dispatch starts at its activate span
                              (e.value("prepare_only", false) ? " prepare_only=1" : " prepare_only=0");
      open[{name, member}] = {ts, ids};
      rec(ts, 0, 1, "node.dispatch", t.hid, t.run, ids + " role=scheduler");
    } else if (ev == "activate") {
      rec(ts, 0, 1, "node.activate", t.hid, t.run, open.at({name, member}).second + " role=worker");
    } else {
      const auto& [start, ids] = open.at({name, member});
      (void)start;
      rec(ts, 0, 2, "node.complete", t.hid, t.run,
          ids + " role=worker outcome=" + (e.value("outcome", "success") == "failure" ? "1" : "0"));
    }
  }
  for (const auto& [run, ts] : run_start)
    rec(ts, 0, -1, "node.graph_build", "0", run, " run_id=" + std::to_string(run) + " role=facade");
  // End order; at one instant a run's spans before the next run's (a run's retirement, then the next
  // run's graph_build), and within a run graph_build, submits, dispatches, completes, retirement.
  std::sort(recs.begin(), recs.end(), [](const Rec& a, const Rec& b) {
    return std::tie(a.end, a.run, a.order, a.n) < std::tie(b.end, b.run, b.order, b.n);
  });
  std::string out;
  for (const Rec& r : recs) out += r.text + "\n";
  return out;
}

}  // namespace dirsched
