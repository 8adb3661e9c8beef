// The codec of summary.json (summary.hpp): the one place its fields are named.
#include "dirsched/record/summary.hpp"

#include <array>

#include "reader.hpp"

namespace dirsched::record {

using ojson = nlohmann::ordered_json;

namespace {

constexpr std::array<std::pair<Engine, std::string_view>, 4> kEngines = {
    {{Engine::kSim, "sim"}, {Engine::kEvent, "event"}, {Engine::kThreads, "threads"}, {Engine::kStrace, "strace"}}};
constexpr std::array<std::pair<Outcome, std::string_view>, 5> kOutcomes = {{{Outcome::kCompleted, "COMPLETED"},
                                                                          {Outcome::kFailed, "FAILED"},
                                                                          {Outcome::kStuck, "STUCK"},
                                                                          {Outcome::kViolation, "VIOLATION"},
                                                                          {Outcome::kTruncated, "TRUNCATED"}}};

template <typename E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [x, name] : table)
    if (x == e) return name;
  return "?";
}
template <typename E, std::size_t N>
std::optional<E> value_of(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view s) {
  for (const auto& [x, name] : table)
    if (name == s) return x;
  return std::nullopt;
}
template <typename E, std::size_t N>
std::string names(const std::array<std::pair<E, std::string_view>, N>& table) {
  std::string o;
  for (const auto& [x, name] : table) o += (o.empty() ? "" : ", ") + std::string(name);
  return o;
}

// ---- encoding ----

ojson opt_num(const std::optional<double>& v) { return v ? ojson(*v) : ojson(nullptr); }
ojson opt_text(const std::optional<std::string>& v) { return v ? ojson(*v) : ojson(nullptr); }

ojson wait_stats(const WaitStats& w) {
  ojson j{{"count", w.count}, {"p50_s", w.p50_s}, {"p95_s", w.p95_s}, {"max_s", w.max_s}, {"mean_s", w.mean_s}};
  if (w.histogram) j["percentiles"] = "histogram";
  return j;
}

ojson task_counts(const TaskCounts& t) {
  ojson j = ojson::object();
  for (const auto& [state, n] : t.by_state) j[state] = n;
  j["total"] = t.total;
  return j;
}

ojson long_waits(const std::vector<LongWait>& list) {
  ojson out = ojson::array();
  for (const LongWait& w : list) {
    ojson causes = ojson::object();
    for (const auto& [k, v] : w.causes) causes[k] = v;
    ojson one = {{"task", w.task}, {"workers", w.workers}, {"wait_s", w.wait_s}, {"causes", causes}};
    if (w.behind) one["behind"] = *w.behind;
    if (w.ahead) one["ahead"] = *w.ahead;
    out.push_back(one);
  }
  return out;
}

// ---- decoding: strict types, every error with its file and JSON path ----

class SummaryReader : public Reader<ojson> {
 public:
  using Reader<ojson>::Reader;

  WaitStats wait_stats(const ojson& v, const std::string& path) const {
    object(v, path);
    WaitStats w;
    if (const ojson* x = field(v, "count")) w.count = count(*x, at(path, "count"));
    if (const ojson* x = field(v, "p50_s")) w.p50_s = number(*x, at(path, "p50_s"));
    if (const ojson* x = field(v, "p95_s")) w.p95_s = number(*x, at(path, "p95_s"));
    if (const ojson* x = field(v, "max_s")) w.max_s = number(*x, at(path, "max_s"));
    if (const ojson* x = field(v, "mean_s")) w.mean_s = number(*x, at(path, "mean_s"));
    if (const ojson* x = field(v, "percentiles")) w.histogram = text(*x, at(path, "percentiles")) == "histogram";
    return w;
  }

  TaskCounts task_counts(const ojson& v, const std::string& path) const {
    TaskCounts t;
    object(v, path);
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::uint64_t n = count(it.value(), at(path, it.key().c_str()));
      if (it.key() == "total")
        t.total = n;
      else
        t.by_state.emplace_back(it.key(), n);
    }
    return t;
  }

  WorkerUse worker(const ojson& v, const std::string& path) const {
    object(v, path);
    WorkerUse w;
    if (const ojson* x = field(v, "kind")) w.kind = text(*x, at(path, "kind"));
    if (const ojson* x = field(v, "host")) w.host = text(*x, at(path, "host"));
    if (const ojson* x = field(v, "busy_s")) w.busy_s = number(*x, at(path, "busy_s"));
    if (const ojson* x = field(v, "utilisation")) w.utilisation = number(*x, at(path, "utilisation"));
    const ojson* id = field(v, "worker");
    if (!id) fail(at(path, "worker"), "a worker id");
    if (w.sub()) {
      if (!id->is_string() || id->get<std::string>().rfind("sub", 0) != 0) fail(at(path, "worker"), "\"subN\"");
      w.worker = id->get<std::string>();
    } else {
      w.worker = std::to_string(count(*id, at(path, "worker")));
    }
    return w;
  }

  GroupWait group(const ojson& v, const std::string& path) const {
    object(v, path);
    GroupWait g;
    if (const ojson* x = field(v, "task")) g.task = text(*x, at(path, "task"));
    if (const ojson* x = field(v, "workers")) g.workers = counts(*x, at(path, "workers"));
    if (const ojson* x = field(v, "ready_s")) g.ready_s = number(*x, at(path, "ready_s"));
    if (const ojson* x = field(v, "launched_s")) g.launched_s = number_or_null(*x, at(path, "launched_s"));
    if (const ojson* x = field(v, "ready_wait_s")) g.ready_wait_s = number(*x, at(path, "ready_wait_s"));
    if (const ojson* x = field(v, "idle_target_s")) g.idle_target_s = number(*x, at(path, "idle_target_s"));
    if (const ojson* x = field(v, "overtakes")) g.overtakes = integer(*x, at(path, "overtakes"));
    if (const ojson* x = field(v, "overtaken_by")) g.overtaken_by = texts(*x, at(path, "overtaken_by"));
    if (const ojson* x = field(v, "blocked_by"))
      g.blocked_by = list<BlockedBy>(*x, at(path, "blocked_by"), [&](const ojson& b, const std::string& p) {
        object(b, p);
        BlockedBy one;
        if (const ojson* y = field(b, "from_s")) one.from_s = number(*y, at(p, "from_s"));
        if (const ojson* y = field(b, "to_s")) one.to_s = number(*y, at(p, "to_s"));
        if (const ojson* y = field(b, "worker"); y && !y->is_null()) one.worker = count(*y, at(p, "worker"));
        if (const ojson* y = field(b, "task")) one.task = text(*y, at(p, "task"));
        if (const ojson* y = field(b, "task_wait_s")) one.task_wait_s = number(*y, at(p, "task_wait_s"));
        if (const ojson* y = field(b, "task_cause")) one.task_cause = text(*y, at(p, "task_cause"));
        return one;
      });
    return g;
  }

  LongWait long_wait(const ojson& v, const std::string& path) const {
    object(v, path);
    LongWait w;
    if (const ojson* x = field(v, "task")) w.task = text(*x, at(path, "task"));
    if (const ojson* x = field(v, "workers")) w.workers = texts(*x, at(path, "workers"));
    if (const ojson* x = field(v, "wait_s")) w.wait_s = number(*x, at(path, "wait_s"));
    if (const ojson* x = field(v, "causes"))
      w.causes = named<double>(*x, at(path, "causes"), [&](const ojson& c, const std::string& p) { return number(c, p); });
    if (const ojson* x = field(v, "behind")) w.behind = integer(*x, at(path, "behind"));
    if (const ojson* x = field(v, "ahead")) w.ahead = texts(*x, at(path, "ahead"));
    return w;
  }

  CriticalStep critical_step(const ojson& v, const std::string& path) const {
    object(v, path);
    CriticalStep c;
    if (const ojson* x = field(v, "task")) c.task = text(*x, at(path, "task"));
    if (const ojson* x = field(v, "start_s")) c.start_s = number(*x, at(path, "start_s"));
    if (const ojson* x = field(v, "end_s")) c.end_s = number(*x, at(path, "end_s"));
    if (const ojson* x = field(v, "why")) c.why = text(*x, at(path, "why"));
    if (const ojson* x = field(v, "after")) c.after = text_or_null(*x, at(path, "after"));
    return c;
  }

  Stall stall(const ojson& v, const std::string& path) const {
    object(v, path);
    Stall s;
    if (const ojson* x = field(v, "event")) s.event = text(*x, at(path, "event"));
    if (const ojson* x = field(v, "task")) s.task = text(*x, at(path, "task"));
    if (const ojson* x = field(v, "t_s")) s.t_s = number(*x, at(path, "t_s"));
    if (const ojson* x = field(v, "busy")) s.busy = counts(*x, at(path, "busy"));
    if (const ojson* x = field(v, "idle_queued")) s.idle_queued = counts(*x, at(path, "idle_queued"));
    if (const ojson* x = field(v, "waited_s")) s.waited_s = number(*x, at(path, "waited_s"));
    return s;
  }

  Outcome outcome(const ojson& v, const std::string& path) const {
    const std::optional<Outcome> o = outcome_from(text(v, path));
    if (!o) fail(path, "one of " + names(kOutcomes));
    return *o;
  }

  RunRow run_row(const ojson& v, const std::string& path) const {
    object(v, path);
    RunRow r;
    if (const ojson* x = field(v, "run")) r.run = text(*x, at(path, "run"));
    if (const ojson* x = field(v, "outcome")) r.outcome = outcome(*x, at(path, "outcome"));
    if (const ojson* x = field(v, "error")) r.error = text_or_null(*x, at(path, "error"));
    if (const ojson* x = field(v, "raised")) r.raised = boolean(*x, at(path, "raised"));
    if (const ojson* x = field(v, "start_s")) r.start_s = number_or_null(*x, at(path, "start_s"));
    if (const ojson* x = field(v, "callback_end_s")) r.callback_end_s = number_or_null(*x, at(path, "callback_end_s"));
    if (const ojson* x = field(v, "end_s")) r.end_s = number_or_null(*x, at(path, "end_s"));
    if (const ojson* x = field(v, "tasks")) r.tasks = task_counts(*x, at(path, "tasks"));
    return r;
  }

};

}  // namespace

std::string_view to_string(Engine e) { return name_of(kEngines, e); }
std::optional<Engine> engine_from(std::string_view s) { return value_of(kEngines, s); }
bool same_clock(Engine a, Engine b) {
  auto simulated = [](Engine e) { return e == Engine::kSim || e == Engine::kEvent; };
  return a == b || (simulated(a) && simulated(b));
}
std::string_view to_string(Outcome o) { return name_of(kOutcomes, o); }
std::optional<Outcome> outcome_from(std::string_view s) { return value_of(kOutcomes, s); }

std::uint64_t TaskCounts::operator[](std::string_view state) const {
  for (const auto& [name, n] : by_state)
    if (name == state) return n;
  return 0;
}

bool Summary::clean() const {
  return outcome == Outcome::kCompleted && !tasks["FAILED"] && !tasks["POISONED"] && !tasks["REJECTED"] &&
         !tasks["PENDING"] && !tasks["READY"] && !tasks["RUNNING"];
}

std::uint64_t Summary::stall_count(std::string_view event) const {
  std::uint64_t n = 0;
  for (const Stall& s : stalls) n += s.event == event;
  if (stalls_omitted)
    for (const auto& [kind, k] : *stalls_omitted)
      if (kind == event) n += k;
  return n;
}

std::string encode(const Summary& s) {
  ojson j;
  if (s.schema > 0) j["schema"] = s.schema;  // a schema-0 summary read back is written as it was
  j["scenario"] = s.scenario;
  j["description"] = s.description;
  j["seed"] = s.seed;
  j["policy"] = s.policy;
  if (s.switches) {
    ojson sw = ojson::object();
    for (const auto& [name, on] : *s.switches) sw[name] = on;
    j["switches"] = sw;
  }
  if (s.inert) j["inert"] = *s.inert;
  if (s.pipeline_depth) j["pipeline_depth"] = *s.pipeline_depth;
  if (s.stall_report_s) j["stall_report_s"] = *s.stall_report_s;
  j["engine"] = to_string(s.engine);
  j["time_scale"] = s.time_scale;
  if (s.vars) {
    ojson vars = ojson::object();
    for (const auto& [name, value] : *s.vars) vars[name] = value;
    j["vars"] = vars;
    j["variant"] = s.variant ? ojson(*s.variant) : ojson(nullptr);
  }
  j["dirsched_version"] = s.dirsched_version;
  j["outcome"] = to_string(s.outcome);
  j["error"] = opt_text(s.error);
  j["makespan_s"] = s.makespan_s;
  j["tasks"] = task_counts(s.tasks);

  ojson workers = ojson::array();
  for (const WorkerUse& w : s.workers)
    workers.push_back({{"worker", w.sub() ? ojson(w.worker) : ojson(std::stoull(w.worker))},
                       {"kind", w.kind},
                       {"host", w.host},
                       {"busy_s", w.busy_s},
                       {"utilisation", w.utilisation}});
  j["workers"] = workers;
  ojson queues = ojson::object();
  for (const auto& [key, w] : s.queue_waits) queues[key] = wait_stats(w);
  j["queue_waits"] = queues;

  ojson groups = ojson::array();
  for (const GroupWait& g : s.groups) {
    ojson one = {{"task", g.task},
                 {"workers", g.workers},
                 {"ready_s", g.ready_s},
                 {"launched_s", opt_num(g.launched_s)},
                 {"ready_wait_s", g.ready_wait_s},
                 {"idle_target_s", g.idle_target_s},
                 {"overtakes", g.overtakes},
                 {"overtaken_by", g.overtaken_by}};
    if (g.blocked_by) {
      ojson chain = ojson::array();
      for (const BlockedBy& b : *g.blocked_by) {
        ojson link = {{"from_s", b.from_s},
                      {"to_s", b.to_s},
                      {"worker", b.worker ? ojson(*b.worker) : ojson(nullptr)},
                      {"task", b.task}};
        if (b.task_wait_s) link["task_wait_s"] = *b.task_wait_s;
        if (b.task_cause) link["task_cause"] = *b.task_cause;
        chain.push_back(std::move(link));
      }
      one["blocked_by"] = chain;
    }
    groups.push_back(one);
  }
  j["groups"] = groups;
  if (s.groups_omitted) j["groups_omitted"] = *s.groups_omitted;
  if (s.group_totals)
    j["group_totals"] = {{"count", s.group_totals->count},
                         {"ready_wait_s", s.group_totals->ready_wait_s},
                         {"idle_target_s", s.group_totals->idle_target_s},
                         {"overtakes_max", s.group_totals->overtakes_max}};
  if (s.waits) {
    const WaitReport& w = *s.waits;
    ojson causes = ojson::object();
    for (const auto& [k, v] : w.causes) causes[k] = v;
    j["wait_causes"] = causes;
    j["wait_check"] = {{"started", w.started}, {"exact", w.exact}};
    j["longest_waits"] = {{"single", long_waits(w.longest_single)}, {"group", long_waits(w.longest_group)}};
    ojson path = ojson::array();
    for (const CriticalStep& c : w.critical_path)
      path.push_back({{"task", c.task},
                      {"start_s", c.start_s},
                      {"end_s", c.end_s},
                      {"why", c.why},
                      {"after", opt_text(c.after)}});
    j["critical_path"] = path;
    if (w.critical_path_omitted) j["critical_path_omitted"] = *w.critical_path_omitted;
  }

  ojson stalls = ojson::array();
  for (const Stall& st : s.stalls) {
    ojson one = {{"event", st.event}, {"task", st.task}, {"t_s", st.t_s}, {"busy", st.busy}};
    if (st.idle_queued) one["idle_queued"] = *st.idle_queued;
    one["waited_s"] = st.waited_s;
    stalls.push_back(one);
  }
  j["stalls"] = stalls;
  if (s.stalls_omitted) {
    ojson omitted = ojson::object();
    for (const auto& [kind, n] : *s.stalls_omitted) omitted[kind] = n;
    j["stalls_omitted"] = omitted;
  }
  if (s.ready_waits_single || s.ready_waits_group) {
    ojson rw = ojson::object();
    if (s.ready_waits_single) rw["single"] = wait_stats(*s.ready_waits_single);
    if (s.ready_waits_group) rw["group"] = wait_stats(*s.ready_waits_group);
    j["ready_waits"] = rw;
  }
  ojson stuck = ojson::array();
  for (const StuckTask& t : s.stuck) stuck.push_back({{"task", t.task}, {"state", t.state}, {"reason", t.reason}});
  j["stuck"] = stuck;
  if (s.runs) {
    ojson runs = ojson::array();
    for (const RunRow& r : *s.runs)
      runs.push_back({{"run", r.run},
                      {"outcome", to_string(r.outcome)},
                      {"error", opt_text(r.error)},
                      {"raised", r.raised},
                      {"start_s", opt_num(r.start_s)},
                      {"callback_end_s", opt_num(r.callback_end_s)},
                      {"end_s", opt_num(r.end_s)},
                      {"tasks", task_counts(r.tasks)}});
    j["runs"] = runs;
  }
  if (s.stuck_omitted) j["stuck_omitted"] = *s.stuck_omitted;
  if (s.violation)
    j["violation"] = {{"seq", s.violation->seq},
                      {"rule", s.violation->rule},
                      {"detail", s.violation->detail},
                      {"dump", s.violation->dump}};
  j["events"] = s.events;
  if (!s.notes.empty()) j["notes"] = s.notes;
  return j.dump(2) + "\n";
}

Summary decode(const ojson& doc, const std::string& file) {
  const SummaryReader in(file);
  in.object(doc, "");
  Summary s;
  using R = SummaryReader;
  s.schema = 0;
  if (const ojson* x = R::field(doc, "schema")) {
    const std::int64_t n = in.integer(*x, "schema");
    if (n < 1) in.fail("schema", "a schema number >= 1");
    if (n > kSummarySchema)
      throw RecordError(file + ": schema " + std::to_string(n) + ": written by a newer dirsched; this one reads " +
                        "summaries up to schema " + std::to_string(kSummarySchema) +
                        " (run it again with this build, or read it with the build that wrote it)");
    s.schema = static_cast<int>(n);
  }
  // A summary that names its schema has every field its writers always write: one without them is not
  // a run's summary (a default would read as a clean, instant run). Schema 0 reads what it has.
  if (s.schema >= 1)
    for (const char* key : {"scenario", "seed", "policy", "engine", "time_scale", "outcome", "error", "makespan_s",
                            "tasks", "workers", "groups", "stalls", "events"})
      if (!R::field(doc, key)) in.fail(key, "the field (every summary of schema 1 has it)");
  if (const ojson* x = R::field(doc, "scenario")) s.scenario = in.text(*x, "scenario");
  if (const ojson* x = R::field(doc, "description")) s.description = in.text(*x, "description");
  if (const ojson* x = R::field(doc, "seed")) s.seed = in.count(*x, "seed");
  if (const ojson* x = R::field(doc, "policy")) s.policy = in.text(*x, "policy");
  if (const ojson* x = R::field(doc, "switches"))
    s.switches = in.named<bool>(*x, "switches", [&](const ojson& v, const std::string& p) { return in.boolean(v, p); });
  if (const ojson* x = R::field(doc, "inert")) s.inert = in.texts(*x, "inert");
  if (const ojson* x = R::field(doc, "pipeline_depth")) s.pipeline_depth = in.count(*x, "pipeline_depth");
  if (const ojson* x = R::field(doc, "stall_report_s")) s.stall_report_s = in.number(*x, "stall_report_s");
  if (const ojson* x = R::field(doc, "engine")) {
    const std::optional<Engine> e = engine_from(in.text(*x, "engine"));
    if (!e) in.fail("engine", "one of " + names(kEngines));
    s.engine = *e;
  }
  if (const ojson* x = R::field(doc, "time_scale")) s.time_scale = in.number(*x, "time_scale");
  if (const ojson* x = R::field(doc, "vars"))
    s.vars = in.named<ojson>(*x, "vars", [](const ojson& v, const std::string&) { return v; });
  if (const ojson* x = R::field(doc, "variant"); x && !x->is_null()) s.variant = in.count(*x, "variant");
  if (const ojson* x = R::field(doc, "dirsched_version")) s.dirsched_version = in.text(*x, "dirsched_version");
  if (const ojson* x = R::field(doc, "outcome")) s.outcome = in.outcome(*x, "outcome");
  if (const ojson* x = R::field(doc, "error")) s.error = in.text_or_null(*x, "error");
  if (const ojson* x = R::field(doc, "makespan_s")) {
    s.makespan_s = in.time(*x, "makespan_s");
  }
  if (const ojson* x = R::field(doc, "tasks")) s.tasks = in.task_counts(*x, "tasks");
  if (const ojson* x = R::field(doc, "workers"))
    s.workers = in.list<WorkerUse>(*x, "workers", [&](const ojson& v, const std::string& p) { return in.worker(v, p); });
  if (const ojson* x = R::field(doc, "queue_waits"))
    s.queue_waits =
        in.named<WaitStats>(*x, "queue_waits", [&](const ojson& v, const std::string& p) { return in.wait_stats(v, p); });
  if (const ojson* x = R::field(doc, "groups"))
    s.groups = in.list<GroupWait>(*x, "groups", [&](const ojson& v, const std::string& p) { return in.group(v, p); });
  if (const ojson* x = R::field(doc, "groups_omitted")) s.groups_omitted = in.count(*x, "groups_omitted");
  if (const ojson* x = R::field(doc, "group_totals")) {
    in.object(*x, "group_totals");
    GroupTotals t;
    if (const ojson* y = R::field(*x, "count")) t.count = in.count(*y, "group_totals.count");
    if (const ojson* y = R::field(*x, "ready_wait_s")) t.ready_wait_s = in.number(*y, "group_totals.ready_wait_s");
    if (const ojson* y = R::field(*x, "idle_target_s")) t.idle_target_s = in.number(*y, "group_totals.idle_target_s");
    if (const ojson* y = R::field(*x, "overtakes_max")) t.overtakes_max = in.integer(*y, "group_totals.overtakes_max");
    s.group_totals = t;
  }
  // Written together (with wait attribution); a summary with any of them has a WaitReport.
  if (R::field(doc, "wait_causes") || R::field(doc, "wait_check") || R::field(doc, "longest_waits") ||
      R::field(doc, "critical_path")) {
    WaitReport w;
    if (const ojson* x = R::field(doc, "wait_causes"))
      w.causes = in.named<double>(*x, "wait_causes", [&](const ojson& v, const std::string& p) { return in.number(v, p); });
    if (const ojson* y = R::field(doc, "wait_check")) {
      in.object(*y, "wait_check");
      if (const ojson* z = R::field(*y, "started")) w.started = in.count(*z, "wait_check.started");
      if (const ojson* z = R::field(*y, "exact")) w.exact = in.count(*z, "wait_check.exact");
    }
    if (const ojson* y = R::field(doc, "longest_waits")) {
      in.object(*y, "longest_waits");
      auto each = [&](const ojson& v, const std::string& p) { return in.long_wait(v, p); };
      if (const ojson* z = R::field(*y, "single")) w.longest_single = in.list<LongWait>(*z, "longest_waits.single", each);
      if (const ojson* z = R::field(*y, "group")) w.longest_group = in.list<LongWait>(*z, "longest_waits.group", each);
    }
    if (const ojson* y = R::field(doc, "critical_path"))
      w.critical_path = in.list<CriticalStep>(
          *y, "critical_path", [&](const ojson& v, const std::string& p) { return in.critical_step(v, p); });
    if (const ojson* y = R::field(doc, "critical_path_omitted"))
      w.critical_path_omitted = in.count(*y, "critical_path_omitted");
    s.waits = std::move(w);
  }
  if (const ojson* x = R::field(doc, "stalls"))
    s.stalls = in.list<Stall>(*x, "stalls", [&](const ojson& v, const std::string& p) { return in.stall(v, p); });
  if (const ojson* x = R::field(doc, "stalls_omitted"))
    s.stalls_omitted =
        in.named<std::uint64_t>(*x, "stalls_omitted", [&](const ojson& v, const std::string& p) { return in.count(v, p); });
  if (const ojson* x = R::field(doc, "ready_waits")) {
    in.object(*x, "ready_waits");
    if (const ojson* y = R::field(*x, "single")) s.ready_waits_single = in.wait_stats(*y, "ready_waits.single");
    if (const ojson* y = R::field(*x, "group")) s.ready_waits_group = in.wait_stats(*y, "ready_waits.group");
  }
  if (const ojson* x = R::field(doc, "stuck"))
    s.stuck = in.list<StuckTask>(*x, "stuck", [&](const ojson& v, const std::string& p) {
      in.object(v, p);
      StuckTask t;
      if (const ojson* y = R::field(v, "task")) t.task = in.text(*y, R::at(p, "task"));
      if (const ojson* y = R::field(v, "state")) t.state = in.text(*y, R::at(p, "state"));
      if (const ojson* y = R::field(v, "reason")) t.reason = in.text(*y, R::at(p, "reason"));
      return t;
    });
  if (const ojson* x = R::field(doc, "runs"))
    s.runs = in.list<RunRow>(*x, "runs", [&](const ojson& v, const std::string& p) { return in.run_row(v, p); });
  if (const ojson* x = R::field(doc, "stuck_omitted")) s.stuck_omitted = in.count(*x, "stuck_omitted");
  if (const ojson* x = R::field(doc, "violation")) {
    in.object(*x, "violation");
    Violation v;
    if (const ojson* y = R::field(*x, "seq")) v.seq = in.count(*y, "violation.seq");
    if (const ojson* y = R::field(*x, "rule")) v.rule = in.text(*y, "violation.rule");
    if (const ojson* y = R::field(*x, "detail")) v.detail = in.text(*y, "violation.detail");
    if (const ojson* y = R::field(*x, "dump")) v.dump = in.text(*y, "violation.dump");
    s.violation = std::move(v);
  }
  if (const ojson* x = R::field(doc, "events")) s.events = in.count(*x, "events");
  if (const ojson* x = R::field(doc, "notes")) s.notes = in.texts(*x, "notes");
  return s;
}

}  // namespace dirsched::record
