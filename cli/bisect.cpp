#include "bisect.hpp"

#include <algorithm>
#include <iostream>
#include <map>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "dirsched/error.hpp"
#include "dirsched/outputs.hpp"
#include "dirsched/sim.hpp"
#include "dirsched/switches.hpp"
#include "evaluate.hpp"

namespace dirsched {

namespace {

using nlohmann::json;

// What one point's run is compared on.
struct PointRun {
  std::vector<std::string> order;                           // every dispatch, as expect's dispatch_order
  std::vector<std::pair<std::string, std::string>> states;  // task -> final state, first record of a name
  std::string outcome;
  std::vector<std::pair<std::string, std::string>> runs;    // declared runs -> outcome
  bool has_expect = false;
  std::string divergence;  // the expect block's first divergence ("" when it holds)
  double makespan_s = 0;
  std::size_t dispatches = 0;
};

json to_json(const PointRun& r) {
  return {{"order", r.order},           {"states", r.states},         {"outcome", r.outcome},
          {"runs", r.runs},             {"has_expect", r.has_expect}, {"divergence", r.divergence},
          {"makespan_s", r.makespan_s}, {"dispatches", r.dispatches}};
}

PointRun from_json(const json& j) {
  PointRun r;
  j.at("order").get_to(r.order);
  j.at("states").get_to(r.states);
  j.at("outcome").get_to(r.outcome);
  j.at("runs").get_to(r.runs);
  j.at("has_expect").get_to(r.has_expect);
  j.at("divergence").get_to(r.divergence);
  j.at("makespan_s").get_to(r.makespan_s);
  j.at("dispatches").get_to(r.dispatches);
  return r;
}

// One run of the scenario under `scenario`'s switch set, in this (child) process.
PointRun run_point(const Scenario& scenario, const BisectOptions& options) {
  RunOptions o;
  o.seed = options.seed;
  o.simgrid_args = options.simgrid_args;
  o.check_invariants = true;
  o.record_events = false;
  o.keep_order_and_records = true;
  const std::unique_ptr<Run> run = simulate(scenario, o);
  // A broken invariant is a bug in the core under that switch set, never a property of the scenario.
  if (run->result.violation) throw InternalError("an invariant broke: " + run->result.error);
  PointRun r;
  r.order = run->result.dispatch_order;
  std::map<std::string, bool> seen;
  run->recorder->for_each_task([&](const TaskRecord& t) {
    if (!seen.emplace(t.name, true).second) return;
    std::string state(to_string(t.state));
    if (t.code) state += " (" + std::string(to_string(*t.code)) + ")";
    r.states.emplace_back(t.name, state);
  });
  r.outcome = run->result.outcome;
  if (run->core->declared_runs())
    for (std::uint32_t i = 0; i < run->core->run_count(); ++i)
      r.runs.emplace_back(run->core->run_info(RunId(i)).name, run_outcome(*run->core, RunId(i)));
  r.has_expect = !scenario.expect.is_null();
  r.divergence = check_expectations(*run).value_or("");
  r.makespan_s = run->result.makespan_s;
  r.dispatches = run->result.dispatches;
  return r;
}

// A point of the ladder: a preset, and the change (one PR's switches) it adds over the point before.
struct Point {
  std::string name;            // "seed", "upto:1565", ...
  std::optional<unsigned> pr;  // the PR it adds (none for the first point of the bisect)
  std::vector<Switch> added;   // that PR's switches, in table order
  Switches wanted;             // the preset
};

std::string label(const Point& p) { return p.pr ? "#" + std::to_string(*p.pr) : p.name; }

// The choice that runs `set`: the preset `base`, the switches this testbed has not built turned off,
// then `extra` on.
PolicyChoice choice_for(const std::string& base, const Switches& set, std::optional<Switch> extra = std::nullopt) {
  PolicyChoice c;
  c.policy = base;
  for (const SwitchInfo& s : switch_table())
    if (set.on(s.id) && !switch_built(s.id)) {
      c.switches.emplace_back(s.id, false);
      c.switch_flags.push_back(std::string(s.name) + "=off");
    }
  if (extra) {
    c.switches.emplace_back(*extra, true);
    c.switch_flags.push_back(std::string(to_string(*extra)) + "=on");
  }
  return c;
}

std::size_t ladder_index(const std::string& name, const char* flag, const std::vector<std::string>& points) {
  std::string error;
  const std::optional<Switches> set = preset(name, &error);
  if (!set) throw BadInput(std::string(flag) + ": " + error);
  for (std::size_t i = 0; i < points.size(); ++i)
    if (*preset(points[i]) == *set) return i;
  throw InternalError(std::string(flag) + ": preset '" + name + "' is no point of the ladder");
}

std::string window(const std::vector<std::string>& v, std::size_t from) {
  std::string s;
  for (std::size_t i = from; i < v.size() && i < from + 4; ++i) s += (s.empty() ? "" : ", ") + v[i];
  if (s.empty()) return "(nothing more)";
  return v.size() > from + 4 ? s + ", ..." : s;
}

std::string verdict(const PointRun& r) {
  if (!r.has_expect) return "no expect block";
  return r.divergence.empty() ? "PASS" : "FAIL (" + r.divergence + ")";
}

// Keyed differences "what: A -> B" between two lists of (name, value) in the first list's order.
void keyed(const char* what, const std::vector<std::pair<std::string, std::string>>& a,
           const std::vector<std::pair<std::string, std::string>>& b, std::vector<std::string>& out) {
  std::map<std::string, std::string> bm(b.begin(), b.end()), am(a.begin(), a.end());
  std::vector<std::string> items;
  for (const auto& [name, value] : a) {
    const auto it = bm.find(name);
    const std::string other = it == bm.end() ? "(no record)" : it->second;
    if (other != value) items.push_back(name + ": " + value + " -> " + other);
  }
  for (const auto& [name, value] : b)
    if (!am.count(name)) items.push_back(name + ": (no record) -> " + value);
  if (items.empty()) return;
  std::string line = std::string(what) + " of " + std::to_string(items.size()) + ": ";
  for (std::size_t i = 0; i < items.size() && i < 4; ++i) line += (i ? "; " : "") + items[i];
  if (items.size() > 4) line += "; ...";
  out.push_back(line);
}

// What differs from `a` (point `an`) to `b` (point `bn`): one line per aspect, none when the runs agree.
// The expect verdicts count only when both points checked the same block (`same_expect`): the loader
// takes expect.by_policy.P at a point whose switches are exactly preset P, the top-level block
// elsewhere, and a verdict that changes with its block says nothing about the run.
std::vector<std::string> differences(const PointRun& a, const PointRun& b, const std::string& an,
                                     const std::string& bn, bool same_expect) {
  std::vector<std::string> out;
  const auto mismatch = std::mismatch(a.order.begin(), a.order.end(), b.order.begin(), b.order.end());
  if (mismatch.first != a.order.end() || mismatch.second != b.order.end()) {
    const auto i = static_cast<std::size_t>(mismatch.first - a.order.begin());
    out.push_back("dispatch order from position " + std::to_string(i) + ": " + an + " " + window(a.order, i) +
                  "; " + bn + " " + window(b.order, i));
  }
  keyed("final states", a.states, b.states, out);
  if (a.outcome != b.outcome) out.push_back("outcome: " + a.outcome + " -> " + b.outcome);
  keyed("run outcomes", a.runs, b.runs, out);
  if (same_expect && verdict(a) != verdict(b)) out.push_back("expect: " + verdict(a) + " -> " + verdict(b));
  return out;
}

// "a, b*": a switch this testbed has not built is marked with a star when `mark_unbuilt`.
std::string switch_names(const std::vector<Switch>& list, bool mark_unbuilt) {
  std::string s;
  for (Switch w : list)
    s += (s.empty() ? "" : ", ") + std::string(to_string(w)) + (mark_unbuilt && !switch_built(w) ? "*" : "");
  return s;
}

// "current (upto:1902)" when the user named the point otherwise than the ladder does.
std::string point_name(const std::string& given, const std::string& ladder_name) {
  return canonical_policy_name(given) == ladder_name ? ladder_name : given + " (" + ladder_name + ")";
}

bool any_built(const std::vector<Switch>& list) {
  return std::any_of(list.begin(), list.end(), [](Switch s) { return switch_built(s); });
}

std::string summary_line(const PointRun& r) {
  return std::to_string(r.dispatches) + " dispatches, " + r.outcome + ", makespan " + human_number(r.makespan_s) +
         " s, " + (r.has_expect ? "expect " + verdict(r) : "no expect block");
}

}  // namespace

int cmd_bisect(const BisectOptions& options, const BisectLoader& load) {
  const std::vector<std::string> ladder = ladder_points();
  const std::size_t from = ladder_index(options.from, "--from", ladder);
  const std::size_t to = ladder_index(options.to, "--to", ladder);
  if (from >= to)
    throw BadInput("--from " + options.from + " --to " + options.to + ": --from must come before --to " +
                   "in the ladder's merge order (" +
                   [&] {
                     std::string s;
                     for (const std::string& p : ladder) s += (s.empty() ? "" : ", ") + p;
                     return s;
                   }() +
                   ")");
  std::vector<Point> points;
  for (std::size_t i = from; i <= to; ++i) {
    Point p{ladder[i], std::nullopt, {}, *preset(ladder[i])};
    if (i > from) {
      const Switches before = *preset(ladder[i - 1]);
      for (const SwitchInfo& s : switch_table())
        if (p.wanted.on(s.id) && !before.on(s.id)) p.added.push_back(s.id), p.pr = s.pr;
    }
    points.push_back(p);
  }
  // A range made only of switches not built here has nothing to run: refused, not reported as "same".
  if (std::none_of(points.begin() + 1, points.end(), [](const Point& p) { return any_built(p.added); })) {
    std::string list;
    for (std::size_t i = 1; i < points.size(); ++i) list += (list.empty() ? "" : ", ") + label(points[i]);
    throw BadInput("--from " + options.from + " --to " + options.to + ": every change between them (" + list +
                   ") is made of switches this testbed has not built: nothing to bisect");
  }
  // Load every point first: a file that does not load under one of them stops the bisect before
  // anything runs.
  std::vector<Scenario> scenarios;
  for (const Point& p : points) scenarios.push_back(load(choice_for(p.name, p.wanted)));
  const unsigned jobs = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
  auto run_all = [&](const std::vector<const Scenario*>& list, const std::function<std::string(std::size_t)>& who) {
    const std::vector<std::string> texts = run_in_children(
        list.size(), jobs, [&](std::size_t i) { return to_json(run_point(*list[i], options)).dump(); }, who);
    std::vector<PointRun> runs;
    for (const std::string& t : texts) runs.push_back(from_json(json::parse(t)));
    return runs;
  };
  std::vector<const Scenario*> list;
  for (const Scenario& s : scenarios) list.push_back(&s);
  const std::vector<PointRun> runs = run_all(list, [&](std::size_t i) { return "point " + points[i].name; });

  // The first change after which the run differs, and each of its built switches alone.
  std::vector<std::vector<std::string>> diffs(points.size());
  std::optional<std::size_t> first;
  for (std::size_t i = 1; i < points.size(); ++i) {
    diffs[i] = differences(runs[i - 1], runs[i], label(points[i - 1]), label(points[i]),
                           scenarios[i - 1].expect == scenarios[i].expect);
    if (!diffs[i].empty() && !first) first = i;
  }
  struct Alone {
    Switch s;
    std::vector<std::string> vs_before;  // what differs from the point before
    bool as_change = false;              // the same run as the whole change's
  };
  std::vector<Alone> alone;
  if (first) {
    const Point& before = points[*first - 1];
    std::vector<Scenario> alone_scenarios;
    for (Switch s : points[*first].added)
      if (switch_built(s)) {
        alone.push_back({s, {}, false});
        alone_scenarios.push_back(load(choice_for(before.name, before.wanted, s)));
      }
    // A change of one switch is its own "alone" run: not run twice.
    if (alone.size() > 1) {
      std::vector<const Scenario*> alone_list;
      for (const Scenario& s : alone_scenarios) alone_list.push_back(&s);
      const std::vector<PointRun> alone_runs =
          run_all(alone_list, [&](std::size_t i) { return label(before) + " + " + std::string(to_string(alone[i].s)); });
      for (std::size_t i = 0; i < alone.size(); ++i) {
        const std::string name = label(before) + " + " + std::string(to_string(alone[i].s));
        alone[i].vs_before = differences(runs[*first - 1], alone_runs[i], label(before), name,
                                         scenarios[*first - 1].expect == alone_scenarios[i].expect);
        alone[i].as_change = differences(alone_runs[i], runs[*first], name, label(points[*first]),
                                         alone_scenarios[i].expect == scenarios[*first].expect)
                                 .empty();
      }
    } else if (alone.size() == 1) {
      alone[0].vs_before = diffs[*first];
      alone[0].as_change = true;
    }
  }

  std::vector<Switch> unbuilt;
  for (const SwitchInfo& s : switch_table())
    if (points.back().wanted.on(s.id) && !points.front().wanted.on(s.id) && !switch_built(s.id)) unbuilt.push_back(s.id);

  if (options.json) {
    json doc = {{"file", options.file}, {"from", points.front().name}, {"to", points.back().name}};
    doc["not_built"] = json::array();
    for (Switch s : unbuilt) doc["not_built"].push_back(std::string(to_string(s)));
    doc["points"] = json::array();
    for (std::size_t i = 0; i < points.size(); ++i) {
      json p = {{"point", points[i].name},
                {"dispatches", runs[i].dispatches},
                {"outcome", runs[i].outcome},
                {"makespan_s", runs[i].makespan_s},
                {"expect", verdict(runs[i])}};
      if (points[i].pr) {
        p["pr"] = *points[i].pr;
        p["switches"] = json::array();
        for (Switch s : points[i].added) p["switches"].push_back(std::string(to_string(s)));
        p["tested"] = any_built(points[i].added);
        p["differences"] = diffs[i];
      }
      doc["points"].push_back(p);
    }
    if (first) {
      json f = {{"point", points[*first].name}, {"pr", *points[*first].pr}, {"alone", json::array()}};
      for (const Alone& a : alone)
        f["alone"].push_back(
            {{"switch", std::string(to_string(a.s))}, {"differences", a.vs_before}, {"as_change", a.as_change}});
      doc["first_change"] = f;
    } else {
      doc["first_change"] = nullptr;
    }
    std::cout << doc.dump(2) << "\n";
    return first ? 1 : 0;
  }

  std::cout << "bisect " << options.file << ": " << point_name(options.from, points.front().name) << " -> "
            << point_name(options.to, points.back().name) << ", "
            << points.size() - 1 << " change" << (points.size() == 2 ? "" : "s")
            << " in merge order, each point run once with the invariants checked\n";
  if (!unbuilt.empty())
    std::cout << "* not built in this testbed, so off at every point (a change made only of them is not tested): "
              << switch_names(unbuilt, false) << "\n";
  std::cout << "\n";
  const auto pad = [](std::string s, std::size_t width) { return s.size() < width ? s + std::string(width - s.size(), ' ') : s + " "; };
  constexpr std::size_t kColumn = 44;
  std::cout << "  " << pad(label(points.front()), kColumn) << summary_line(runs.front()) << "\n";
  for (std::size_t i = 1; i < points.size(); ++i) {
    const Point& p = points[i];
    std::cout << "  " << pad(label(p) + " " + switch_names(p.added, true), kColumn);
    if (!any_built(p.added))
      std::cout << "not built: runs as the point before\n";
    else if (diffs[i].empty())
      std::cout << "same\n";
    else {
      std::cout << "DIFFERS: " << summary_line(runs[i]) << "\n";
      for (const std::string& d : diffs[i]) std::cout << "      " << d << "\n";
    }
  }
  std::cout << "\n";
  if (!first) {
    std::cout << "no change from " << point_name(options.from, points.front().name) << " to "
              << point_name(options.to, points.back().name)
              << " alters the run (dispatch order, final states, outcomes, expect verdict)\n";
    return 0;
  }
  const Point& f = points[*first];
  std::cout << "first change that alters the run: " << label(f) << " (" << switch_names(f.added, true) << ")\n";
  for (Switch s : f.added) std::cout << "  " << to_string(s) << ": " << switch_info(s).text << "\n";
  std::cout << "each switch of " << label(f) << " alone over " << label(points[*first - 1]) << ":\n";
  for (Switch s : f.added)
    if (!switch_built(s)) std::cout << "  " << pad(std::string(to_string(s)), 32) << "not built\n";
  for (const Alone& a : alone) {
    std::cout << "  " << pad(std::string(to_string(a.s)), 32)
              << (a.vs_before.empty() ? "no difference alone"
                                      : a.as_change ? "differs, as the whole change does"
                                                    : "differs, not as the whole change does")
              << "\n";
    if (alone.size() > 1)
      for (const std::string& d : a.vs_before) std::cout << "      " << d << "\n";
  }
  return 1;
}

}  // namespace dirsched
