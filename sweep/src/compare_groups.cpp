// compare, per group: the part of `dirsched compare` that answers "what did the policy change?".
//
// Reads only summary.json (policy, groups) and events.jsonl (dispatches, stall reports) of the two
// run folders. Groups are matched by name, dispatches by task[member]; a dispatch "moved" when its
// worker or its time differs between the runs, or it happened in one run only.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "dirsched/sweep.hpp"

namespace dirsched {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string short_number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

struct RunFacts {
  std::string policy;
  std::map<std::string, json> groups;                                // by name
  std::map<std::string, std::pair<std::string, double>> dispatches;  // task[member] -> (worker, t)
  std::vector<std::string> order;                                    // task[member] in dispatch order
  std::size_t stalls = 0;
};

RunFacts facts(const std::string& dir) {
  RunFacts f;
  const json summary = json::parse(slurp(fs::path(dir) / "summary.json"));
  f.policy = summary.value("policy", std::string("seed"));
  for (const json& g : summary.value("groups", json::array())) f.groups[g.at("task").get<std::string>()] = g;
  std::istringstream in(slurp(fs::path(dir) / "events.jsonl"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const json e = json::parse(line);
    const std::string kind = e.value("event", "");
    if (kind == "group_stall" || kind == "reservation_stall") ++f.stalls;
    if (kind != "dispatch") continue;
    const std::string key =
        e.at("task").get<std::string>() + "[" + std::to_string(e.at("member").get<int>()) + "]";
    const std::string worker = e.contains("sub_worker") ? e["sub_worker"].get<std::string>()
                                                        : std::to_string(e.at("worker").get<long long>());
    f.dispatches[key] = {worker, e.at("t_s").get<double>()};
    f.order.push_back(key);
  }
  return f;
}

}  // namespace

std::string compare_groups(const std::string& dir_a, const std::string& dir_b) {
  const RunFacts a = facts(dir_a), b = facts(dir_b);
  std::string o = "policies: A " + a.policy + ", B " + b.policy + " (stall reports: A " +
                  std::to_string(a.stalls) + ", B " + std::to_string(b.stalls) + ")\n";
  std::map<std::string, int> names;  // every group of either run, A's order first
  for (const auto& [n, g] : a.groups) names[n] = 0;
  for (const auto& [n, g] : b.groups) names[n] = 0;
  if (!names.empty()) {
    char line[256];
    o += "groups (launch and READY wait in s, singles that overtook it):\n";
    std::snprintf(line, sizeof line, "  %-16s %10s %10s %10s %10s %6s %6s\n", "group", "launch A", "launch B",
                  "wait A", "wait B", "ovt A", "ovt B");
    o += line;
    auto field = [](const std::map<std::string, json>& gs, const std::string& n, const char* key) {
      auto it = gs.find(n);
      if (it == gs.end() || !it->second.contains(key) || it->second[key].is_null()) return std::string("-");
      return it->second[key].is_number_float() ? short_number(it->second[key].get<double>())
                                               : it->second[key].dump();
    };
    for (const auto& [n, unused] : names) {
      std::snprintf(line, sizeof line, "  %-16s %10s %10s %10s %10s %6s %6s\n", n.c_str(),
                    field(a.groups, n, "launched_s").c_str(), field(b.groups, n, "launched_s").c_str(),
                    field(a.groups, n, "ready_wait_s").c_str(), field(b.groups, n, "ready_wait_s").c_str(),
                    field(a.groups, n, "overtakes").c_str(), field(b.groups, n, "overtakes").c_str());
      o += line;
    }
  }
  // Dispatches that moved, in A's dispatch order, then those only B made.
  std::string moved;
  std::size_t count = 0;
  auto show = [](const std::string& key, const std::pair<std::string, double>& d) {
    return key + "@" + d.first + " t=" + short_number(d.second);
  };
  for (const std::string& key : a.order) {
    const auto& da = a.dispatches.at(key);
    auto it = b.dispatches.find(key);
    if (it != b.dispatches.end() && it->second == da) continue;
    ++count;
    moved += "  " + show(key, da) + " -> " +
             (it == b.dispatches.end() ? "(not dispatched)" : show(key, it->second)) + "\n";
  }
  for (const std::string& key : b.order)
    if (!a.dispatches.count(key)) {
      ++count;
      moved += "  (not dispatched) -> " + show(key, b.dispatches.at(key)) + "\n";
    }
  o += "dispatches that moved (A -> B): " + std::to_string(count) + "\n" + moved;
  return o;
}

}  // namespace dirsched
