#include "whynot.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "common.hpp"
#include "dirsched/error.hpp"
#include "dirsched/eventsim.hpp"
#include "dirsched/json_reader.hpp"
#include "dirsched/outputs.hpp"
#include "dirsched/switches.hpp"

namespace dirsched::whynot {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTimeTolerance = 1e-12;  // the outputs' rounding of times

// ---- What one replay says about the task and the run -------------------------------------------

struct TaskMetrics {
  bool found = false;
  std::string state;
  std::vector<std::int64_t> workers;
  double ready = -1, start = -1;
  std::size_t overtakes = 0;
  bool started() const { return start >= 0 && ready >= 0; }
  double wait() const { return started() ? start - ready : kInf; }
};

struct RunMetrics {
  std::string outcome;
  double makespan = 0;
  double others_wait = 0;  // the other tasks' READY waits (start - ready), summed over those that started
  std::size_t completed = 0;
};

struct Metrics {
  TaskMetrics task;
  RunMetrics run;
};

// One member's run on a NEXT_LEVEL worker (the baseline's timeline).
struct Span {
  std::string task;
  std::int64_t worker = 0;
  double start = 0, end = 0;
};

struct Baseline {
  Metrics m;
  std::vector<Span> spans;
  std::map<std::string, double> submit_at;
  std::set<std::string> worth_moving;  // the singles the run names: overtakers, blocking chain, ahead on its worker
};

double rounded(double v) { return std::round(v * 1e12) / 1e12; }

std::unique_ptr<Run> replay(const Scenario& s) {
  EventRunOptions o;
  o.record_events = false;
  o.keep_order_and_records = true;  // every record, for the task's and the others' times
  return run_events(s, o);
}

Metrics measure(const Run& run, const std::string& task) {
  Metrics m;
  m.run.outcome = run.result.outcome;
  m.run.makespan = run.result.makespan_s;
  run.recorder->for_each_task([&](const TaskRecord& r) {
    if (r.state == TaskState::kCompleted) ++m.run.completed;
    if (r.name != task) {
      if (r.start >= 0 && r.ready >= 0) m.run.others_wait += r.start - r.ready;
      return;
    }
    m.task.found = true;
    m.task.state = std::string(to_string(r.state));
    for (WorkerId w : r.workers) m.task.workers.push_back(w.value());
    m.task.ready = r.ready;
    m.task.start = r.start;
    m.task.overtakes = r.overtakes;
  });
  return m;
}

// The goal's own metric (smaller is closer): overtakes, READY wait or start; infinite when never started.
double goal_metric(const Goal& g, const TaskMetrics& t) {
  if (!t.started()) return kInf;
  switch (g.kind) {
    case Goal::Kind::kNoOvertakes: return static_cast<double>(t.overtakes);
    case Goal::Kind::kWait: return t.wait();
    case Goal::Kind::kStart: return t.start;
  }
  return kInf;
}

bool meets(const Goal& g, const TaskMetrics& t) {
  const double v = goal_metric(g, t);
  return g.kind == Goal::Kind::kNoOvertakes ? v == 0 : v <= g.limit_s + kTimeTolerance;
}

ojson metrics_json(const Goal& g, const Metrics& m) {
  auto time = [](double v) { return v >= 0 && std::isfinite(v) ? json(rounded(v)) : json(nullptr); };
  ojson task = {{"state", m.task.state},
                {"workers", m.task.workers},
                {"ready_s", time(m.task.ready)},
                {"start_s", time(m.task.start)},
                {"wait_s", time(m.task.started() ? m.task.wait() : -1)},
                {"overtakes", m.task.overtakes},
                {"meets_goal", meets(g, m.task)}};
  ojson run = {{"outcome", m.run.outcome},
               {"makespan_s", rounded(m.run.makespan)},
               {"others_wait_s", rounded(m.run.others_wait)},
               {"completed", m.run.completed}};
  return {{"task", task}, {"run", run}};
}

// ---- Parsing the question -----------------------------------------------------------------------

double parse_seconds(const std::string& goal, const std::string& number) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (number.empty() || used != number.size() || !std::isfinite(v) || v < 0)
    throw BadInput("--goal " + cli::quoted(goal) + ": expected a number of seconds >= 0 after '<=', found " +
                   cli::quoted(number));
  return v;
}

// ---- Edits --------------------------------------------------------------------------------------

struct Edit {
  EditKind kind = EditKind::kPlacement;
  std::string slot;  // a change holds at most one edit per slot: one per op's placement, one order, one version
  std::string op;    // the op's path ("trace[4]"), empty for a version
  std::string task;
  json from, to;
  // How to apply it: placement: doc[pointer][field] = to; order: the list at `pointer`, its op `i` moved
  // to `j`, the instant's at_s (held by its first op, `first`) kept on whoever is first; version:
  // scheduler.policy = to (field empty) or scheduler.switches[field] = value.
  std::string pointer, field;
  std::size_t i = 0, j = 0;
  std::optional<std::size_t> first;
  json value;
  bool named = false;  // the baseline run names it (guided search)
};

const char* kind_name(EditKind k) {
  return k == EditKind::kPlacement ? "placement" : k == EditKind::kOrder ? "order" : "version";
}

// "trace[3].ops[1]" -> "/trace/3/ops/1"
std::string pointer_of(const std::string& path) {
  std::string p = "/";
  for (char c : path) {
    if (c == '[' || c == '.') p += '/';
    else if (c != ']') p += c;
  }
  return p;
}

void apply(json& doc, const Edit& e) {
  if (e.kind == EditKind::kPlacement) {
    doc[json::json_pointer(e.pointer)][e.field] = e.to;
  } else if (e.kind == EditKind::kVersion) {
    json& scheduler = doc["scheduler"];
    if (e.field.empty()) {
      scheduler["policy"] = e.to;
      scheduler.erase("switches");
    } else {
      scheduler["switches"][e.field] = e.value;
    }
  } else {
    json& list = doc[json::json_pointer(e.pointer)];
    std::optional<json> at;
    if (e.first && list[*e.first].contains("at_s")) {
      at = list[*e.first]["at_s"];
      list[*e.first].erase("at_s");
    }
    json op = list[e.i];
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(e.i));
    list.insert(list.begin() + static_cast<std::ptrdiff_t>(e.j), op);
    if (at) list[*e.first]["at_s"] = *at;
  }
}

ojson edit_json(const Edit& e) {
  return {{"kind", kind_name(e.kind)},
          {"op", e.op.empty() ? ojson(nullptr) : ojson(e.op)},
          {"task", e.task.empty() ? ojson(nullptr) : ojson(e.task)},
          {"from", e.from},
          {"to", e.to}};
}

std::string edit_text(const Edit& e) {
  if (e.kind == EditKind::kVersion) return "version: " + e.from.get<std::string>() + " -> " + e.to.get<std::string>();
  const std::string what = e.kind == EditKind::kPlacement ? (e.field == "workers" ? "workers" : "worker") : "position";
  return std::string(kind_name(e.kind)) + " of " + e.task + " (" + e.op + "): " + what + " " + e.from.dump() + " -> " +
         e.to.dump();
}

// Whether the callable's namespace (and eligible set) accepts the worker.
bool accepts(const CallableSpec& c, const WorkerSpec& w) {
  const WorkerKind want = c.ns == Namespace::kLocalChip     ? WorkerKind::kLocalChip
                          : c.ns == Namespace::kLocalPython ? WorkerKind::kLocalWorker
                                                            : WorkerKind::kRemote;
  if (w.kind != want) return false;
  return !c.eligible || std::find(c.eligible->begin(), c.eligible->end(), w.id) != c.eligible->end();
}

// Every set of `size` ids of `ids` (ascending), in lexicographic order.
void subsets(const std::vector<std::int64_t>& ids, std::size_t size, std::size_t from, std::vector<std::int64_t>& cur,
             std::vector<std::vector<std::int64_t>>& out) {
  if (cur.size() == size) {
    out.push_back(cur);
    return;
  }
  for (std::size_t k = from; k < ids.size(); ++k) {
    cur.push_back(ids[k]);
    subsets(ids, size, k + 1, cur, out);
    cur.pop_back();
  }
}

bool busy_at(const std::vector<Span>& spans, std::int64_t worker, double t) {
  return std::any_of(spans.begin(), spans.end(),
                     [&](const Span& s) { return s.worker == worker && s.start <= t && t < s.end; });
}

// The first instant of [from, to) at which every worker of `set` is idle in the baseline, if any.
std::optional<double> idle_together(const std::vector<Span>& spans, const std::vector<std::int64_t>& set, double from,
                                    double to) {
  std::vector<double> instants = {from};
  for (const Span& s : spans)
    if (s.end > from && s.end < to) instants.push_back(s.end);
  std::sort(instants.begin(), instants.end());
  for (double t : instants)
    if (std::none_of(set.begin(), set.end(), [&](std::int64_t w) { return busy_at(spans, w, t); })) return t;
  return std::nullopt;
}

struct Context {
  const Question& q;
  json doc;  // the scenario as asked: the version baked into `scheduler`, no `expect`
  std::string base_dir;
  Scenario scenario;
  Baseline base;
  const OpSpec* target = nullptr;
};

// Where a single the run names is worth moving: of the accepted workers outside the task's (all, when
// there are none), the one idle first from the single's baseline start (the lowest id on a tie).
std::int64_t best_destination(const Context& c, const std::string& single, const std::vector<std::int64_t>& ids,
                              const std::vector<std::int64_t>& target_workers) {
  double from = 0;
  std::int64_t own = -1;
  for (const Span& s : c.base.spans)
    if (s.task == single) from = s.start, own = s.worker;
  std::vector<std::int64_t> dests;
  for (std::int64_t w : ids)
    if (w != own && !std::binary_search(target_workers.begin(), target_workers.end(), w)) dests.push_back(w);
  if (dests.empty())
    for (std::int64_t w : ids)
      if (w != own) dests.push_back(w);
  std::int64_t best = -1;
  double best_t = kInf;
  for (std::int64_t w : dests) {
    const std::optional<double> t = idle_together(c.base.spans, {w}, from, kInf);
    if (t && *t < best_t) best = w, best_t = *t;
  }
  return best;
}

std::vector<std::int64_t> worker_list(const json& v) {
  std::vector<std::int64_t> out;
  if (v.is_array())
    for (const json& x : v) out.push_back(x.is_number_integer() ? x.get<std::int64_t>() : -1);
  else if (v.is_number_integer())
    out.push_back(v.get<std::int64_t>());
  return out;
}

// Placement edits: the task's own set (or worker), and one single's worker.
void placement_edits(const Context& c, std::vector<Edit>& out) {
  const bool group_target = c.target->kind == OpKind::kSubmitGroup;
  std::vector<std::int64_t> target_workers = worker_list(c.doc[json::json_pointer(pointer_of(c.target->path))]
                                                            .value(group_target ? "workers" : "worker", json()));
  std::sort(target_workers.begin(), target_workers.end());
  c.scenario.for_each_submit([&](const OpSpec& op) {
    const bool is_target = op.task == c.q.task;
    if (op.kind != OpKind::kSubmitNextLevel && !(is_target && op.kind == OpKind::kSubmitGroup)) return;
    const CallableSpec& callable = c.scenario.callables[op.callable];
    std::vector<std::int64_t> ids;
    for (const WorkerSpec& w : c.scenario.next_level)
      if (accepts(callable, w)) ids.push_back(w.id.value());
    std::sort(ids.begin(), ids.end());
    Edit e;
    e.kind = EditKind::kPlacement;
    e.slot = "placement " + op.path;
    e.op = op.path;
    e.task = op.task;
    e.pointer = pointer_of(op.path);
    e.field = op.kind == OpKind::kSubmitGroup ? "workers" : "worker";
    e.from = c.doc[json::json_pointer(e.pointer)].value(e.field, json());
    std::vector<std::int64_t> current = worker_list(e.from);
    std::sort(current.begin(), current.end());
    std::vector<std::vector<std::int64_t>> sets;
    std::vector<std::int64_t> cur;
    subsets(ids, op.kind == OpKind::kSubmitGroup ? current.size() : 1, 0, cur, sets);
    const TaskMetrics& t = c.base.m.task;
    const double until = t.started() ? t.start : c.base.m.run.makespan;
    for (const std::vector<std::int64_t>& set : sets) {
      if (set == current) continue;
      e.to = op.kind == OpKind::kSubmitGroup ? json(set) : json(set.front());
      if (is_target)  // worth trying: a set (or worker) idle together at some instant of its wait
        e.named = idle_together(c.base.spans, set, t.ready, until).has_value();
      else  // a single the run names, moved to the worker off the task's that is idle first from its start
        e.named = c.base.worth_moving.count(op.task) && set.front() == best_destination(c, op.task, ids, target_workers);
      out.push_back(e);
    }
  });
}

// The list an op sits in ("/trace" or "/trace/3/ops") and its index there.
std::pair<std::string, std::size_t> list_of(const std::string& path) {
  const std::size_t open = path.rfind('[');
  return {pointer_of(path.substr(0, open)), static_cast<std::size_t>(std::stoul(path.substr(open + 1)))};
}

// Order edits: each submit op moved among the submit ops of its instant (equal submit times, only the
// first holding an at_s, which stays first), or by one position.
void order_edits(const Context& c, std::vector<Edit>& out) {
  c.scenario.for_each_submit([&](const OpSpec& op) {
    const auto [pointer, i] = list_of(op.path);
    const json& list = c.doc[json::json_pointer(pointer)];
    const auto time_of = [&](std::size_t k) -> std::optional<double> {
      const json& o = list[k];
      if (!o.contains("task") || !o["task"].is_string()) return std::nullopt;
      const auto it = c.base.submit_at.find(o["task"].get<std::string>());
      return it == c.base.submit_at.end() ? std::nullopt : std::optional<double>(it->second);
    };
    const std::optional<double> when = time_of(i);
    std::size_t lo = i, hi = i;
    if (when) {
      while (lo > 0 && time_of(lo - 1) == when && !list[lo].contains("at_s")) --lo;
      while (hi + 1 < list.size() && time_of(hi + 1) == when && !list[hi + 1].contains("at_s")) ++hi;
    }
    std::set<std::size_t> to;
    for (std::size_t j = lo; j <= hi; ++j) to.insert(j);
    if (i > 0) to.insert(i - 1);
    if (i + 1 < list.size()) to.insert(i + 1);
    to.erase(i);
    const bool named_op = op.task == c.q.task || c.base.worth_moving.count(op.task);
    for (std::size_t j : to) {
      Edit e;
      e.kind = EditKind::kOrder;
      e.slot = "order";
      e.op = op.path;
      e.task = op.task;
      e.pointer = pointer;
      e.i = i;
      e.j = j;
      if (j >= lo && j <= hi && lo != hi) e.first = lo;
      e.from = i;
      e.to = j;
      // Worth trying: the task earlier, a single that held or overtook it later.
      e.named = named_op && ((op.task == c.q.task) == (j < i));
      out.push_back(e);
    }
  });
}

void version_edits(const Context& c, std::vector<Edit>& out) {
  const std::string from = c.scenario.policy;
  for (const std::string& p : ladder_points()) {
    if (preset(p) == c.scenario.switches) continue;
    Edit e;
    e.kind = EditKind::kVersion;
    e.slot = "version";
    e.from = from;
    e.to = p;  // the two named presets by their names
    for (const char* name : {"head_reservation", "current"})
      if (preset(name) == preset(p)) e.to = name;
    e.named = true;
    out.push_back(e);
  }
  for (const SwitchInfo& s : switch_table()) {
    if (!switch_built(s.id)) continue;
    const bool on = c.scenario.switches.on(s.id);
    Edit e;
    e.kind = EditKind::kVersion;
    e.slot = "version";
    e.field = std::string(s.name);
    e.value = !on;
    e.from = e.field + (on ? "=on" : "=off");
    e.to = e.field + (on ? "=off" : "=on");
    e.named = true;
    out.push_back(e);
  }
}

// ---- Replaying changes --------------------------------------------------------------------------

struct Tried {
  std::vector<std::size_t> change;  // indices into the candidates, ascending
  Metrics m;
  bool admissible = false, meets = false;
};

// The document of a change: placements and the version first (their paths are the file's), the order
// edit last.
json changed_doc(const Context& c, const std::vector<Edit>& cands, const std::vector<std::size_t>& change) {
  json doc = c.doc;
  for (std::size_t k : change)
    if (cands[k].kind != EditKind::kOrder) apply(doc, cands[k]);
  for (std::size_t k : change)
    if (cands[k].kind == EditKind::kOrder) apply(doc, cands[k]);
  return doc;
}

std::optional<Scenario> load_change(const Context& c, const json& doc) {
  try {
    return parse_scenario(doc, c.q.file, c.base_dir);
  } catch (const BadInput&) {
    return std::nullopt;  // the loader refuses the change (an at_s moved before an earlier one, ...)
  }
}

// Which of two admissible changes is smaller (the header's order).
bool smaller(const Context& c, const Tried& a, const Tried& b) {
  const auto key = [&](const Tried& t) {
    return std::make_tuple(t.change.size(), std::abs(t.m.run.makespan - c.base.m.run.makespan),
                           std::abs(t.m.run.others_wait - c.base.m.run.others_wait));
  };
  if (key(a) != key(b)) return key(a) < key(b);
  return a.change < b.change;
}

// Which is closer to the goal when none meets it: the goal's metric, then smaller.
bool closer(const Context& c, const Tried& a, const Tried& b) {
  const double ga = goal_metric(c.q.goal, a.m.task), gb = goal_metric(c.q.goal, b.m.task);
  if (ga != gb) return ga < gb;
  return smaller(c, a, b);
}

struct Search {
  const Context& c;
  const std::vector<Edit>& cands;
  std::size_t replays = 0, refused = 0;
  std::set<std::vector<std::size_t>> done;
  std::optional<Tried> best, closest;

  void try_change(const std::vector<std::size_t>& change) {
    if (!done.insert(change).second) return;
    const json doc = changed_doc(c, cands, change);
    const std::optional<Scenario> s = load_change(c, doc);
    if (!s) {
      ++refused;
      return;
    }
    ++replays;
    const std::unique_ptr<Run> run = replay(*s);
    Tried t{change, measure(*run, c.q.task)};
    t.admissible = t.m.task.found && t.m.run.outcome != "VIOLATION" && t.m.run.completed >= c.base.m.run.completed;
    t.meets = t.admissible && meets(c.q.goal, t.m.task);
    if (t.meets && (!best || smaller(c, t, *best))) best = t;
    if (t.admissible && (!closest || closer(c, t, *closest))) closest = t;
  }
};

// Calls f(change) for every set of `size` indices of `pool` (ascending) on distinct slots.
template <typename F>
void for_each_combination(const std::vector<Edit>& cands, const std::vector<std::size_t>& pool, std::size_t size,
                          F&& f) {
  std::vector<std::size_t> cur;
  std::set<std::string> slots;
  const auto rec = [&](std::size_t from, auto& self) -> bool {
    if (cur.size() == size) return f(cur);
    for (std::size_t k = from; k < pool.size(); ++k) {
      const Edit& e = cands[pool[k]];
      if (slots.count(e.slot)) continue;
      cur.push_back(pool[k]);
      slots.insert(e.slot);
      const bool go_on = self(k + 1, self);
      slots.erase(e.slot);
      cur.pop_back();
      if (!go_on) return false;
    }
    return true;
  };
  rec(0, rec);
}

// How many changes of exactly k edits on distinct slots (the elementary symmetric sums of the slot sizes).
double changes_of(const std::vector<Edit>& cands, std::size_t k) {
  std::map<std::string, double> sizes;
  for (const Edit& e : cands) sizes[e.slot] += 1;
  std::vector<double> e(k + 1, 0);
  e[0] = 1;
  for (const auto& [slot, n] : sizes)
    for (std::size_t j = k; j >= 1; --j) e[j] += e[j - 1] * n;
  return e[k];
}

// Every "$NAME" value of `j` that names an assigned sweep variable, replaced by its value.
void bake_vars(json& j, const std::map<std::string, json>& assigned) {
  if (j.is_structured()) {
    for (json& x : j) bake_vars(x, assigned);
  } else if (j.is_string() && j.get_ref<const std::string&>().rfind('$', 0) == 0) {
    const auto it = assigned.find(j.get_ref<const std::string&>().substr(1));
    if (it != assigned.end()) j = it->second;
  }
}

Context load_context(const Question& q) {
  namespace fs = std::filesystem;
  json doc = read_json_file(q.file);
  if (!doc.is_object()) throw BadInput(q.file + ": expected a scenario object");
  if (doc.contains("generate") || !doc.contains("trace") || !doc["trace"].is_array())
    throw BadInput("whynot " + q.file + ": trace: whynot edits the ops written in the file's trace (a generate "
                   "block or a trace file cannot be edited op by op)");
  // The version asked of, written into the document, so that scenario.json names it.
  if (!q.choice.empty()) {
    json& scheduler = doc["scheduler"];
    if (!scheduler.is_object()) scheduler = json::object();
    if (q.choice.policy) {
      scheduler["policy"] = *q.choice.policy;
      scheduler.erase("switches");
    }
    for (const auto& [s, on] : q.choice.switches) scheduler["switches"][std::string(to_string(s))] = on;
  }
  doc.erase("expect");  // it describes the file's run, not a changed one
  std::string base_dir = fs::path(q.file).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  Scenario s = parse_scenario(doc, q.file, base_dir);
  if (doc.contains("vars")) {  // the values the run takes, written in: an edit may replace a "$NAME"
    bake_vars(doc, s.assigned);
    doc.erase("vars");
    s = parse_scenario(doc, q.file, base_dir);
  }
  if (const std::optional<std::string> why = event_engine_refusal(s))
    throw BadInput("whynot " + q.file + ": " + *why + " (whynot replays on the event engine)");
  return Context{q, std::move(doc), base_dir, std::move(s), {}, nullptr};
}

void find_target(Context& c) {
  c.scenario.for_each_submit([&](const OpSpec& op) {
    if (!c.target && op.task == c.q.task) c.target = &op;
  });
  if (!c.target)
    throw BadInput("whynot " + c.q.file + ": --task " + cli::quoted(c.q.task) + ": no submit op of the trace names it");
  if (c.target->kind != OpKind::kSubmitNextLevel && c.target->kind != OpKind::kSubmitGroup)
    throw BadInput("whynot " + c.q.file + ": --task " + cli::quoted(c.q.task) + " (" + c.target->path +
                   "): a SUB task; whynot asks about NEXT_LEVEL singles and groups");
  if (c.q.goal.kind == Goal::Kind::kNoOvertakes && c.target->kind != OpKind::kSubmitGroup)
    throw BadInput("whynot " + c.q.file + ": --goal no-overtakes: " + c.q.task +
                   " is a single (only groups are overtaken); give wait<=SECONDS or start<=SECONDS");
}

void run_baseline(Context& c) {
  const std::unique_ptr<Run> run = replay(c.scenario);
  c.base.m = measure(*run, c.q.task);
  const TaskMetrics& t = c.base.m.task;
  const double until = t.started() ? t.start : c.base.m.run.makespan;
  std::vector<std::string> overtakers;
  run->recorder->for_each_task([&](const TaskRecord& r) {
    c.base.submit_at[r.name] = r.submit;
    if (r.name == c.q.task) overtakers = r.overtaken_by;
    for (const MemberRun& m : r.members)
      if (!m.target.sub && m.start >= 0)
        c.base.spans.push_back({r.name, m.target.worker.value(), m.start, m.end >= 0 ? m.end : c.base.m.run.makespan});
  });
  c.base.worth_moving.insert(overtakers.begin(), overtakers.end());
  // The blocking chain (a group), or the tasks that ran on its worker while it waited (a single).
  const record::Summary summary = summarise(*run);
  for (const record::GroupWait& g : summary.groups)
    if (g.task == c.q.task && g.blocked_by)
      for (const record::BlockedBy& b : *g.blocked_by)
        if (b.worker) c.base.worth_moving.insert(b.task);
  if (c.target->kind == OpKind::kSubmitNextLevel)
    for (const Span& s : c.base.spans)
      if (s.task != c.q.task && !t.workers.empty() && s.worker == t.workers.front() && s.end > t.ready && s.start < until)
        c.base.worth_moving.insert(s.task);
}

std::string seconds(double v) { return std::isfinite(v) ? human_number(rounded(v)) + " s" : "never"; }

std::string metrics_line(const Context& c, const Metrics& m) {
  std::string line = c.q.task + " " + (m.task.started() ? "start " + seconds(m.task.start) + ", READY wait " +
                                                              seconds(m.task.wait())
                                                        : "never started (" + m.task.state + ")");
  if (c.target->kind == OpKind::kSubmitGroup) line += ", " + std::to_string(m.task.overtakes) + " overtakes";
  return line + "; makespan " + seconds(m.run.makespan) + ", other tasks' READY waits " + seconds(m.run.others_wait);
}

}  // namespace

Goal parse_goal(const std::string& text) {
  Goal g;
  g.text = text;
  if (text == "no-overtakes") return g;
  for (const auto& [prefix, kind] : {std::pair{"wait<=", Goal::Kind::kWait}, std::pair{"start<=", Goal::Kind::kStart}}) {
    const std::string p = prefix;
    if (text.rfind(p, 0) == 0) {
      g.kind = kind;
      g.limit_s = parse_seconds(text, text.substr(p.size()));
      return g;
    }
  }
  throw BadInput("--goal " + cli::quoted(text) + ": expected no-overtakes, wait<=SECONDS or start<=SECONDS");
}

std::vector<EditKind> parse_edit_kinds(const std::string& list) {
  std::vector<EditKind> out;
  for (const std::string& name : cli::split_list(list)) {
    EditKind k;
    if (name == "placement") k = EditKind::kPlacement;
    else if (name == "order") k = EditKind::kOrder;
    else if (name == "version") k = EditKind::kVersion;
    else
      throw BadInput("--edits " + cli::quoted(list) + ": unknown edit kind " + cli::quoted(name) +
                     " (known: placement, order, version)");
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  }
  if (out.empty()) throw BadInput("--edits " + cli::quoted(list) + ": name at least one of placement, order, version");
  return out;
}

namespace {

// Every one-edit candidate of the kinds asked for, in the candidate order; an order edit only when the
// loader accepts it (it may move an at_s before an earlier one; a placement names a registered worker
// its callable accepts and a version a built switch: both load).
std::vector<Edit> candidates(const Context& c) {
  std::vector<Edit> cands;
  const auto wants = [&](EditKind k) { return std::find(c.q.edits.begin(), c.q.edits.end(), k) != c.q.edits.end(); };
  if (wants(EditKind::kPlacement)) placement_edits(c, cands);
  if (wants(EditKind::kOrder)) order_edits(c, cands);
  if (wants(EditKind::kVersion)) version_edits(c, cands);
  std::vector<Edit> valid;
  for (std::size_t k = 0; k < cands.size(); ++k)
    if (cands[k].kind != EditKind::kOrder || load_change(c, changed_doc(c, cands, {k}))) valid.push_back(cands[k]);
  return valid;
}

struct SearchOutcome {
  bool exhaustive = false, capped = false;
  std::size_t named = 0;
  std::string levels;  // how each number of edits was searched: "1 edit: guided, then every candidate; ..."
};

// Fewest edits first: at each number of edits, the named candidates' changes (guided), then, when none met
// the goal, every change; or every change at once when the candidates are few.
SearchOutcome search_changes(const Context& c, const std::vector<Edit>& cands, Search& search) {
  SearchOutcome o;
  std::vector<std::size_t> named, all;
  for (std::size_t k = 0; k < cands.size(); ++k) {
    all.push_back(k);
    if (cands[k].named) named.push_back(k);
  }
  o.named = named.size();
  o.exhaustive = cands.size() <= kFewCandidates;
  for (std::size_t k = 1; k <= c.q.max_edits && !search.best && !o.capped; ++k) {
    const auto attempt = [&](const std::vector<std::size_t>& change) {
      if (k > 1 && search.replays + search.refused >= kMaxReplays) {
        o.capped = true;
        return false;
      }
      search.try_change(change);
      return true;
    };
    o.levels += (o.levels.empty() ? "" : "; ") + std::to_string(k) + (k == 1 ? " edit: " : " edits: ");
    if (!o.exhaustive) {
      for_each_combination(cands, named, k, attempt);
      o.levels += "guided";
      if (search.best || o.capped) break;
      o.levels += ", then ";
    }
    for_each_combination(cands, all, k, attempt);
    o.levels += "every candidate";
  }
  return o;
}

std::string method_text(const Context& c, const SearchOutcome& o, std::size_t one_edit) {
  std::string method =
      o.exhaustive
          ? "exhaustive: " + std::to_string(one_edit) + " one-edit candidates (at most " +
                std::to_string(kFewCandidates) + "), every change of each number of edits replayed until one met the goal"
          : "guided: first the " + std::to_string(o.named) + " of " + std::to_string(one_edit) +
                " one-edit candidates the baseline run names (each single that overtook or held " + c.q.task +
                " moved to the worker off its set idle first from that single's start, or later in the trace; its "
                "own worker sets idle together during its wait; its op earlier; every version), and their "
                "combinations; the others only when none of those met the goal";
  method += " (" + o.levels + ")";
  if (o.capped) method += "; stopped at " + std::to_string(kMaxReplays) + " replays";
  return method;
}

std::string plural(std::size_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

}  // namespace

Answer answer(const Question& q) {
  Context c = load_context(q);
  find_target(c);
  run_baseline(c);
  const std::vector<Edit> cands = candidates(c);
  Search search{c, cands, 0, 0, {}, {}, {}};
  const bool already = meets(q.goal, c.base.m.task);
  const SearchOutcome o = already ? SearchOutcome{} : search_changes(c, cands, search);
  std::uint64_t at_most_k = 0;
  for (std::size_t k = 1; k <= q.max_edits; ++k) at_most_k += static_cast<std::uint64_t>(std::llround(changes_of(cands, k)));

  // Not found: the closest change, if it comes closer to the goal than the run as it is.
  const Tried* chosen = search.best ? &*search.best : search.closest ? &*search.closest : nullptr;
  if (!search.best && chosen && goal_metric(q.goal, chosen->m.task) >= goal_metric(q.goal, c.base.m.task))
    chosen = nullptr;
  Answer a;
  a.found = already || search.best.has_value();
  ojson edits = ojson::array(), edit_kinds = ojson::array();
  std::string edit_lines;
  if (chosen)
    for (std::size_t k : chosen->change) {
      edits.push_back(edit_json(cands[k]));
      edit_lines += "  " + edit_text(cands[k]) + "\n";
    }
  for (EditKind k : q.edits) edit_kinds.push_back(kind_name(k));
  const Metrics after = chosen ? chosen->m : c.base.m;
  a.scenario = chosen ? changed_doc(c, cands, chosen->change) : c.doc;
  a.scenario["description"] = c.doc.value("description", std::string()) +
                              (c.doc.contains("description") ? " " : "") + "(dirsched whynot --task " + q.task +
                              " --goal " + q.goal.text + ": " + plural(edits.size(), "edit") + ", " +
                              (a.found ? "goal met" : "goal not met: the closest change found") + ")";
  a.report = {{"task", q.task},
              {"goal", q.goal.text},
              {"found", a.found},
              {"edits", edits},
              {"before", metrics_json(q.goal, c.base.m)},
              {"after", metrics_json(q.goal, after)},
              {"replays", search.replays},
              {"candidates", at_most_k},
              {"one_edit_candidates", cands.size()},
              {"refused", search.refused},
              {"method", already ? "none: the baseline run already meets the goal" : method_text(c, o, cands.size())},
              {"policy", c.scenario.policy},
              {"edit_kinds", edit_kinds},
              {"max_edits", q.max_edits},
              {"order", "fewest edits; then the smallest |change| of the makespan; then of the other tasks' READY "
                        "waits (summed); then the candidate order: placement, order, version; the op's place in the "
                        "trace; the value in the order tried"}};
  a.text = q.task + ": " + q.goal.text + " " +
           (already     ? "already met, no edit needed"
            : a.found   ? "met with " + plural(edits.size(), "edit")
            : chosen    ? "not met within " + plural(q.max_edits, "edit") + "; the closest change:"
                        : "not met within " + plural(q.max_edits, "edit") + "; no change came closer than the run as it is") +
           "\n" + edit_lines + "before: " + metrics_line(c, c.base.m) + "\nafter:  " + metrics_line(c, after) +
           "\nreplays: " + std::to_string(search.replays) + " of " + std::to_string(at_most_k) +
           " candidates of at most " + plural(q.max_edits, "edit") + " (" + std::to_string(cands.size()) +
           " of one edit); " + (already ? "none" : o.levels) + "\n";
  return a;
}

}  // namespace dirsched::whynot
