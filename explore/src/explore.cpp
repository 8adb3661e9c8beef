#include "dirsched/explore.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

#include "dirsched/invariants.hpp"
#include "dirsched/replay.hpp"

namespace dirsched {
namespace {

using ojson = nlohmann::ordered_json;

// Counts, during one transition, the singles dispatched on a target of a READY, unlaunched group.
class OvertakeCounter : public Observer {
 public:
  OvertakeCounter(const Scheduler& core, const std::vector<TaskId>& groups) : core_(core), groups_(groups) {}
  void on_event(const Event& e) override {
    if (e.kind != EventKind::kDispatch || e.task_kind != TaskKind::kSingle) return;
    for (std::size_t g = 0; g < groups_.size(); ++g) {
      const TaskId id = groups_[g];
      if (!id.valid() || id.index() >= core_.task_count() || core_.state(id) != TaskState::kReady) continue;
      for (std::uint32_t m = 0; m < core_.members(id); ++m)
        if (core_.target(id, m) == e.target.worker) {
          ++delta[g];
          break;
        }
    }
  }
  std::map<std::size_t, int> delta;  // group index -> singles that overtook it in this transition

 private:
  const Scheduler& core_;
  const std::vector<TaskId>& groups_;
};

struct State {
  std::unique_ptr<Scheduler> core;
  std::unique_ptr<Replay> replay;
  std::unique_ptr<InvariantChecker> checker;
  std::map<std::string, std::string> not_in_core;  // REJECTED / NOT_SUBMITTED task names

  State copy() const {
    State s;
    s.core = std::make_unique<Scheduler>(*core);
    s.replay = std::make_unique<Replay>(*replay);
    s.replay->rebind(*s.core);
    s.checker = std::make_unique<InvariantChecker>(*checker);
    s.not_in_core = not_in_core;
    return s;
  }
  std::string key() const {
    return core->dump() + "|op=" + std::to_string(replay->position()) + (replay->unwound() ? "u" : "");
  }
};

// Records rejected and not-submitted names into the state being built.
class NameLog : public Observer {
 public:
  explicit NameLog(std::map<std::string, std::string>& out) : out_(out) {}
  void on_event(const Event& e) override {
    if (e.kind == EventKind::kReject) out_[std::string(e.name)] = "REJECTED";
    if (e.kind == EventKind::kNotSubmitted) out_[std::string(e.name)] = "NOT_SUBMITTED";
  }

 private:
  std::map<std::string, std::string>& out_;
};

struct Node {
  std::vector<int> best_max, best_min;  // per group, over the rest of any path to a terminal state
  std::vector<int> next_max, next_min;  // child index achieving it, -1 at a terminal state
  std::vector<std::string> step;        // per child: the action
  std::vector<std::size_t> child;       // per child: node index
};

class Explorer {
 public:
  Explorer(const Scenario& s, const ExploreOptions& o) : s_(s), o_(o), registry_(s.registry()) {
    for (const OpSpec& op : s.trace) {
      if (op.kind == OpKind::kSubmitGroup) group_names_.push_back(op.task);
      for (const OpSpec& inner : op.ops)
        if (inner.kind == OpKind::kSubmitGroup) group_names_.push_back(inner.task);
    }
  }

  ojson run() {
    State root;
    root.core = make_scheduler(s_);
    root.checker = std::make_unique<InvariantChecker>(registry_);
    root.replay = std::make_unique<Replay>(s_, *root.core);
    const std::size_t r = visit(std::move(root));
    ojson out;
    out["scenario"] = s_.name;
    out["states"] = nodes_.size();
    out["transitions"] = transitions_;
    out["stopped_early"] = stopped_;
    if (stopped_)
      out["note"] =
          "stopped after max_states=" + std::to_string(o_.max_states) + " states: results cover only those";
    out["terminal_outcomes"] = outcomes_.size();
    ojson examples = ojson::array();
    for (const std::string& o : outcomes_) {
      if (examples.size() >= 20) break;
      examples.push_back(ojson::parse(o));
    }
    out["outcomes"] = examples;
    out["violations"] = violations_;
    ojson stuck = ojson::array();
    for (const auto& [task, v] : stuck_) stuck.push_back(v);
    out["stuck"] = stuck;
    ojson groups = ojson::object();
    for (std::size_t g = 0; g < group_names_.size(); ++g) {
      const Node& n = nodes_[r];
      if (n.best_max[g] < 0) continue;  // never submitted on any path
      groups[group_names_[g]] = {{"max_overtakes", n.best_max[g]},
                                 {"witness", witness(r, g, true)},
                                 {"min_overtakes", n.best_min[g]},
                                 {"min_witness", witness(r, g, false)}};
    }
    out["groups"] = groups;
    return out;
  }

 private:
  // The group TaskIds in a state, by group index (invalid when not submitted there).
  std::vector<TaskId> group_ids(const Scheduler& core) const {
    std::vector<TaskId> ids(group_names_.size());
    for (std::size_t i = 0; i < core.task_count(); ++i) {
      const TaskId id(static_cast<std::uint32_t>(i));
      if (core.kind(id) != TaskKind::kGroup) continue;
      for (std::size_t g = 0; g < group_names_.size(); ++g)
        if (core.name(id) == group_names_[g]) ids[g] = id;
    }
    return ids;
  }

  std::vector<std::string> witness(std::size_t node, std::size_t g, bool max) const {
    std::vector<std::string> steps;
    for (int c = max ? nodes_[node].next_max[g] : nodes_[node].next_min[g]; c >= 0;
         c = max ? nodes_[node].next_max[g] : nodes_[node].next_min[g]) {
      steps.push_back(nodes_[node].step[static_cast<std::size_t>(c)]);
      node = nodes_[node].child[static_cast<std::size_t>(c)];
    }
    return steps;
  }

  // Applies one action to a copy of `from`; returns the new state and the overtakes it caused.
  bool apply(const State& from, const std::string& action, std::size_t member_pick, Outcome outcome,
             State& to, std::map<std::size_t, int>& delta) {
    to = from.copy();
    std::vector<TaskId> groups = group_ids(*to.core);
    OvertakeCounter counter(*to.core, groups);
    NameLog names(to.not_in_core);
    ObserverList observers;
    observers.add(to.checker.get());
    observers.add(&counter);
    observers.add(&names);
    to.core->set_observer(&observers);
    to.checker->set_dump([&to] { return to.core->dump(); });
    try {
      if (action == "op") {
        const bool looked = to.replay->run_next(0);
        if (looked) {
          groups = group_ids(*to.core);  // a submit may have added a group
          run_instant(*to.core, [](const std::vector<Dispatch>&) {});
        }
      } else {
        // One end per transition: the explorer orders coinciding ends itself, one at a time.
        const auto running = to.core->running();
        std::vector<MemberEnd> ends = {{0, running[member_pick].first, running[member_pick].second, outcome}};
        complete_instant(*to.core, ends, [](const std::vector<Dispatch>&) {});
      }
    } catch (const InvariantViolation& v) {
      to.core->set_observer(nullptr);
      record_violation(v.violation);
      return false;
    }
    to.core->set_observer(nullptr);
    to.checker->set_dump(nullptr);
    delta = counter.delta;
    return true;
  }

  void record_violation(const Violation& v) {
    if (violations_.size() >= 10) return;
    violations_.push_back({{"rule", v.rule}, {"detail", v.detail}, {"witness", path_}, {"dump", v.dump}});
  }

  std::string action_name(const Scheduler& core, const std::pair<TaskId, std::uint32_t>& m, Outcome o) const {
    std::string name(core.name(m.first));
    if (is_group(core.kind(m.first))) name += "[" + std::to_string(m.second) + "]";
    return "end " + name + (o == Outcome::kFailure ? " failure" : " success");
  }

  void terminal(const State& st) {
    State end = st.copy();
    NameLog names(end.not_in_core);
    end.core->set_observer(&names);
    end.replay->unwind_rest();
    end.core->set_observer(nullptr);
    ojson outcome = ojson::object();
    std::map<std::string, std::string> states = end.not_in_core;
    for (std::size_t i = 0; i < end.core->task_count(); ++i) {
      const TaskId id(static_cast<std::uint32_t>(i));
      states[std::string(end.core->name(id))] = std::string(to_string(end.core->state(id)));
    }
    for (const auto& [k, v] : states) outcome[k] = v;
    outcomes_.insert(outcome.dump());
    const std::vector<Stuck> stuck = end.core->stuck();
    try {
      end.checker->finish(stuck);
    } catch (const InvariantViolation& v) {
      record_violation(v.violation);
    }
    for (const Stuck& s : stuck)
      if (!stuck_.count(s.task))
        stuck_[s.task] = {
            {"task", s.task}, {"state", to_string(s.state)}, {"reason", s.reason}, {"witness", path_}};
  }

  std::size_t visit(State st) {
    const std::string key = st.key();
    auto found = index_.find(key);
    if (found != index_.end()) return found->second;
    const std::size_t id = nodes_.size();
    index_.emplace(key, id);
    nodes_.emplace_back();
    const std::size_t groups = group_names_.size();
    // best_* start "unknown"; -1 marks "this group is never submitted below".
    std::vector<int> bmax(groups, std::numeric_limits<int>::min()),
        bmin(groups, std::numeric_limits<int>::max());
    std::vector<int> nmax(groups, -1), nmin(groups, -1);
    if (nodes_.size() > o_.max_states) stopped_ = true;

    struct Choice {
      std::string step;
      std::string action;
      std::size_t pick;
      Outcome outcome;
    };
    std::vector<Choice> choices;
    if (!stopped_) {
      if (st.replay->next_enabled()) {
        const OpSpec& op = *st.replay->next();
        choices.push_back(
            {"op " + op.path + (op.task.empty() ? "" : " " + op.task), "op", 0, Outcome::kSuccess});
      }
      const auto running = st.core->running();
      for (std::size_t i = 0; i < running.size(); ++i) {
        choices.push_back(
            {action_name(*st.core, running[i], Outcome::kSuccess), "end", i, Outcome::kSuccess});
        if (o_.failures)
          choices.push_back(
              {action_name(*st.core, running[i], Outcome::kFailure), "end", i, Outcome::kFailure});
      }
    }
    if (choices.empty() && !stopped_) terminal(st);
    for (const Choice& c : choices) {
      State next;
      std::map<std::size_t, int> delta;
      path_.push_back(c.step);
      ++transitions_;
      const bool ok = apply(st, c.action, c.pick, c.outcome, next, delta);
      if (ok) {
        const std::size_t child = visit(std::move(next));
        Node& n = nodes_[id];
        const std::size_t k = n.child.size();
        n.child.push_back(child);
        n.step.push_back(c.step);
        for (std::size_t g = 0; g < groups; ++g) {
          const int d = delta.count(g) ? delta.at(g) : 0;
          const int cmax = nodes_[child].best_max[g], cmin = nodes_[child].best_min[g];
          if (cmax < 0) continue;  // the group never exists below this child
          if (d + cmax > bmax[g]) bmax[g] = d + cmax, nmax[g] = static_cast<int>(k);
          if (d + cmin < bmin[g]) bmin[g] = d + cmin, nmin[g] = static_cast<int>(k);
        }
      }
      path_.pop_back();
    }
    // Where no child said anything of a group (a terminal state, or a group that never exists below):
    // a group submitted by now contributes 0 more overtakes, one never submitted is marked -1.
    const std::vector<TaskId> present = group_ids(*st.core);
    for (std::size_t g = 0; g < groups; ++g)
      if (bmax[g] == std::numeric_limits<int>::min()) bmax[g] = bmin[g] = present[g].valid() ? 0 : -1;
    Node& n = nodes_[id];
    n.best_max = bmax;
    n.best_min = bmin;
    n.next_max = nmax;
    n.next_min = nmin;
    return id;
  }

  const Scenario& s_;
  const ExploreOptions& o_;
  Registry registry_;
  std::vector<std::string> group_names_;
  std::vector<Node> nodes_;
  std::unordered_map<std::string, std::size_t> index_;  // lookup only; results come from nodes_
  std::vector<std::string> path_;
  std::size_t transitions_ = 0;
  bool stopped_ = false;
  std::set<std::string> outcomes_;
  ojson violations_ = ojson::array();
  std::map<std::string, ojson> stuck_;
};

}  // namespace

ojson explore(const Scenario& scenario, const ExploreOptions& options) {
  return Explorer(scenario, options).run();
}

}  // namespace dirsched
