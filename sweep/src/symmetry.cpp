// Symmetry classes of a `choose` space (sweep.hpp): the chips a scenario cannot tell apart, and one
// list per class of lists that differ only by such chips.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "dirsched/sweep.hpp"

namespace dirsched {

namespace {

using IdSet = std::set<std::int64_t>;

// Every integer in `v`, and in the lists it holds (a candidate of another variable).
void add_integers(const nlohmann::json& v, IdSet& out) {
  if (v.is_number_integer()) out.insert(v.get<std::int64_t>());
  if (v.is_array())
    for (const nlohmann::json& x : v) add_integers(x, out);
}

// The ids the inline trace names as a worker: a literal under `worker` or `workers`, or the candidates of
// a variable other than `var` given there. False when the trace is not inline (a trace file, a generate
// block): then nothing can be said.
bool trace_names(const Scenario& base, const nlohmann::json& doc, const std::string& var, IdSet& named) {
  if (!doc.contains("trace") || !doc["trace"].is_array()) return false;
  std::function<void(const nlohmann::json&)> value = [&](const nlohmann::json& v) {
    if (v.is_string()) {
      const std::string& t = v.get_ref<const std::string&>();
      if (t.size() > 1 && t[0] == '$' && t.substr(1) != var)
        if (const auto it = base.vars.find(t.substr(1)); it != base.vars.end())
          for (const nlohmann::json& c : it->second) add_integers(c, named);
    } else if (v.is_array()) {
      for (const nlohmann::json& x : v) value(x);
    } else {
      add_integers(v, named);
    }
  };
  std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& j) {
    if (j.is_object())
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (it.key() == "worker" || it.key() == "workers") value(it.value());
        else walk(it.value());
      }
    else if (j.is_array())
      for (const nlohmann::json& x : j) walk(x);
  };
  walk(doc["trace"]);
  return true;
}

// The ids named anywhere but the trace: buffer owners, MPI ranks, expect.dispatch_order_per_worker, the
// hosts and links a fault turns off, and every integer another variable may put anywhere.
IdSet named_outside_trace(const Scenario& base, const std::string& var) {
  IdSet named;
  for (const BufferSpec& b : base.buffers)
    if (b.owner) named.insert(b.owner->value());
  for (const MpiGroupSpec& g : base.mpi_groups)
    for (WorkerId r : g.ranks) named.insert(r.value());
  if (base.expect.is_object() && base.expect.contains("dispatch_order_per_worker"))
    for (auto it = base.expect["dispatch_order_per_worker"].begin(); it != base.expect["dispatch_order_per_worker"].end(); ++it)
      named.insert(std::strtoll(it.key().c_str(), nullptr, 10));
  for (const WorkerSpec& w : base.next_level)
    for (const FaultSpec& f : base.faults)
      if (f.host == w.host || f.link == "pcie_" + w.host || f.link == "net_" + w.host) named.insert(w.id.value());
  for (const auto& [name, candidates] : base.vars)
    if (name != var)
      for (const nlohmann::json& c : candidates) add_integers(c, named);
  return named;
}

// What a chip is to the scenario when nothing names it: kind, frames, overlap, the callables it is
// eligible for, and its host (on the default platform, a host of its own counts as any other host of
// its own: each has the same speed and the same link to the centre).
using Signature = std::tuple<int, std::uint32_t, bool, std::vector<bool>, std::string>;

Signature signature(const Scenario& base, const WorkerSpec& w) {
  std::vector<bool> eligible;
  for (const CallableSpec& c : base.callables)
    eligible.push_back(c.eligible && std::find(c.eligible->begin(), c.eligible->end(), w.id) != c.eligible->end());
  std::size_t sharing = 0;
  for (const WorkerSpec& o : base.next_level) sharing += o.host == w.host;
  for (const std::string& h : base.sub_hosts) sharing += h == w.host;
  const bool own_host = base.platform.empty() && sharing == 1 && w.host != base.scheduler_host;
  return {static_cast<int>(w.kind), w.frames, w.prepare_overlap, std::move(eligible), own_host ? std::string() : w.host};
}

}  // namespace

std::vector<std::vector<std::int64_t>> interchangeable_ids(const Scenario& base, const nlohmann::json& doc,
                                                           const std::string& var) {
  std::vector<std::vector<std::int64_t>> out;
  const auto it = base.vars.find(var);
  if (it == base.vars.end()) return out;
  IdSet ids;
  for (const nlohmann::json& c : it->second) add_integers(c, ids);
  IdSet named = named_outside_trace(base, var);
  const bool known = trace_names(base, doc, var, named);
  std::map<Signature, std::vector<std::int64_t>> by_signature;
  for (std::int64_t id : ids) {
    const auto w = std::find_if(base.next_level.begin(), base.next_level.end(),
                                [&](const WorkerSpec& s) { return s.id.value() == id; });
    if (!known || named.count(id) || w == base.next_level.end()) {
      out.push_back({id});
      continue;
    }
    by_signature[signature(base, *w)].push_back(id);
  }
  for (auto& [sig, members] : by_signature) out.push_back(std::move(members));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::size_t> class_representatives(const std::vector<nlohmann::json>& candidates,
                                               const std::vector<std::vector<std::int64_t>>& classes) {
  std::map<std::int64_t, std::size_t> class_of;
  for (std::size_t k = 0; k < classes.size(); ++k)
    for (std::int64_t id : classes[k]) class_of[id] = k;
  std::map<std::vector<std::int64_t>, std::size_t> first;  // canonical list -> its first candidate
  std::vector<std::size_t> rep(candidates.size());
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    // The canonical list: each class's ids replaced, in position order, by the class's smallest ones.
    // Position by position even in an unordered space: member m of a group runs on the list's m-th id,
    // and members may differ, so only a renaming that keeps positions is known to change nothing.
    std::vector<std::int64_t> canon;
    std::vector<std::size_t> used(classes.size(), 0);
    bool ids = candidates[c].is_array();
    for (const nlohmann::json& x : candidates[c]) {
      const auto k = x.is_number_integer() ? class_of.find(x.get<std::int64_t>()) : class_of.end();
      if (k == class_of.end()) {
        ids = false;
        break;
      }
      canon.push_back(classes[k->second][used[k->second]++]);
    }
    if (!ids) {
      rep[c] = c;  // not a list of the classes' ids: a class of its own
      continue;
    }
    rep[c] = first.emplace(std::move(canon), c).first->second;
  }
  return rep;
}

}  // namespace dirsched
