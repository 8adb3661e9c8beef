#include <cmath>
#include <algorithm>
#include <set>
#include <sstream>

#include "dirsched/record/event.hpp"
#include "dirsched/viz.hpp"

namespace dirsched::viz {

using nlohmann::json;

double ready_wait_end(const RunView& v, const TaskView& t) {
  return t.start >= 0 ? t.start : t.state == "CANCELLED" ? t.end : v.end_time;
}

const TaskView* RunView::find(const std::string& name) const {
  auto it = index.find(name);
  return it == index.end() ? nullptr : &tasks[it->second];
}

namespace {

// Intervals inside [from, to) where at least one of `targets` is idle, from the lanes' bars.
std::vector<std::pair<double, double>> idle_intervals(const RunView& v,
                                                      const std::vector<std::string>& targets, double from,
                                                      double to) {
  std::set<double> cuts = {from, to};
  for (const std::string& t : targets) {
    auto it = v.bars.find(t);
    if (it == v.bars.end()) continue;
    for (const MemberBar& b : it->second) {
      const double end = b.end < 0 ? v.end_time : b.end;
      if (b.start > from && b.start < to) cuts.insert(b.start);
      if (end > from && end < to) cuts.insert(end);
    }
  }
  auto busy_at = [&](const std::string& t, double x) {
    auto it = v.bars.find(t);
    if (it == v.bars.end()) return false;
    for (const MemberBar& b : it->second)
      if (b.start <= x && x < (b.end < 0 ? v.end_time : b.end)) return true;
    return false;
  };
  std::vector<std::pair<double, double>> out;
  for (auto a = cuts.begin(), b = std::next(a); b != cuts.end(); ++a, ++b) {
    const double mid = (*a + *b) / 2;
    bool some_idle = false;
    for (const std::string& t : targets) some_idle |= !busy_at(t, mid);
    if (!some_idle) continue;
    if (!out.empty() && out.back().second == *a)
      out.back().second = *b;
    else
      out.emplace_back(*a, *b);
  }
  return out;
}

}  // namespace

RunView parse_run(const std::string& events_jsonl, const record::Summary* summary) {
  RunView v;
  std::set<std::string> nl_seen, sub_seen;
  std::map<std::string, int> depth;
  std::set<DepEdge> deps;
  std::vector<std::string> group_order;  // groups in READY order: the group FIFO
  auto bump = [&](const std::string& queue, double t, int delta) {
    depth[queue] += delta;
    auto& steps = v.depth[queue];
    if (!steps.empty() && steps.back().t == t)
      steps.back().depth = depth[queue];
    else
      steps.push_back({t, depth[queue]});
  };
  auto task = [&](const std::string& name) -> TaskView& {
    auto it = v.index.find(name);
    if (it != v.index.end()) return v.tasks[it->second];
    v.index[name] = v.tasks.size();
    v.tasks.emplace_back();
    v.tasks.back().name = name;
    return v.tasks.back();
  };
  std::istringstream in(events_jsonl);
  std::string line;
  std::size_t line_no = 0;
  record::Event e;  // every line decoded into this one: its storage is kept
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    const std::string where = "events.jsonl line " + std::to_string(line_no);
    json j;
    try {
      j = json::parse(line);
      record::decode_event(j, where, e);
    } catch (const json::exception& ex) {
      throw VizError(where + ": " + ex.what());
    } catch (const record::RecordError& ex) {
      throw VizError(ex.what());
    }
    try {
      const std::string& kind = e.event;
      const double t = e.t_s;
      if (!e.run.empty()) {  // a trace with runs: the run's span on the time axis
        auto span = std::find_if(v.run_spans.begin(), v.run_spans.end(),
                                 [&](const RunView::RunSpan& r) { return r.run == e.run; });
        if (span == v.run_spans.end()) span = v.run_spans.insert(v.run_spans.end(), {e.run, t, -1});
        if (e.event == "run_end") span->to = t;
      }
      if (e.of_run()) continue;  // a run's event (run_raise, run_end): no task to draw
      // Issue 28: a time the pictures cannot place (the bar merge and the axis need finite, ordered times).
      if (!std::isfinite(t) || t < 0) throw VizError("t_s " + j["t_s"].dump() + " is not a finite time >= 0");
      TaskView& tv = task(e.task);
      v.end_time = std::max(v.end_time, t);
      if (kind == "submit") {
        tv.kind = e.kind;
        tv.submit = t;
        tv.callable = e.callable;
        tv.members = e.members;
        tv.run = e.run;
        for (std::uint64_t w : e.workers) {
          tv.workers.push_back(std::to_string(w));
          nl_seen.insert(tv.workers.back());
        }
        for (const record::EventDep& d : e.deps) deps.insert({d.producer, tv.name, d.buffer});
      } else if (kind == "reject") {
        tv.state = "REJECTED";
        tv.submit = t;
        tv.code = e.code;
        v.markers.push_back({t, "reject", tv.name});
      } else if (kind == "not_submitted") {
        tv.state = "NOT_SUBMITTED";
      } else if (kind == "ready") {
        tv.state = "READY";
        tv.ready = t;
        if (e.queue == "group") group_order.push_back(tv.name);
        bump(e.queue, t, +1);
      } else if (kind == "group_stall" || kind == "reservation_stall") {
        StallMark m{t, kind, tv.name, {}, {}, e.waited_s};
        for (std::uint64_t w : e.busy) m.busy.push_back(std::to_string(w));
        for (std::uint64_t w : e.idle_queued) m.idle_queued.push_back(std::to_string(w));
        v.stalls.push_back(std::move(m));
      } else if (kind == "group_launched") {
        bump("group", t, -1);
      } else if (kind == "dispatch" && e.prepare_only) {  // a staging (#1583): it starts at its activation
        tv.staged_at = t;
        if (tv.kind == "single") bump("worker:" + e.worker, t, -1);  // it left its worker's FIFO
      } else if (kind == "dispatch" || kind == "activate") {
        const std::string& w = e.worker;
        (e.sub_worker ? sub_seen : nl_seen).insert(w);
        if (tv.state != "RUNNING") {
          tv.state = "RUNNING";
          tv.start = t;
          if (tv.kind == "single" && tv.staged_at < 0) bump("worker:" + w, t, -1);
          if (tv.kind == "sub" || tv.kind == "sub_group") bump("sub", t, -1);
        }
        tv.runs.push_back({tv.name, *e.member, tv.kind, w, t, -1, false, e.seq, kind == "activate" ? tv.staged_at : -1});
      } else if (kind == "member_end") {
        const std::uint32_t m = *e.member;
        for (MemberBar& b : tv.runs)
          if (b.member == m && b.end < 0) {
            if (t < b.start)
              throw VizError("member_end of " + tv.name + "[" + std::to_string(m) + "] at t_s " + j["t_s"].dump() +
                             " is earlier than its dispatch at " + std::to_string(b.start));
            b.end = t;
            b.failed = e.outcome == "failure";
          }
      } else if (kind == "complete" || kind == "fail") {
        tv.state = kind == "complete" ? "COMPLETED" : "FAILED";
        tv.end = t;
        if (kind == "fail") v.markers.push_back({t, "fail", tv.name});
      } else if (kind == "poison") {
        tv.state = "POISONED";
        tv.end = t;
        tv.cause = e.cause;
        v.markers.push_back({t, "poison", tv.name});
      } else if (kind == "cancel") {
        // run_cancellation: it never runs; a READY one leaves its queue now.
        if (tv.state == "READY") {
          if (tv.kind == "group") {
            bump("group", t, -1);
            group_order.erase(std::remove(group_order.begin(), group_order.end(), tv.name), group_order.end());
          } else if (tv.kind == "sub" || tv.kind == "sub_group") {
            bump("sub", t, -1);
          } else if (!tv.workers.empty()) {
            bump("worker:" + tv.workers.front(), t, -1);
          }
        }
        tv.state = "CANCELLED";
        tv.end = t;
        tv.cause = e.cause;
        v.markers.push_back({t, "cancel", tv.name});
      } else if (kind == "pending") {
        tv.state = "PENDING";
      }
    } catch (const VizError& ex) {
      throw VizError(where + ": " + ex.what());
    }
  }
  v.deps.assign(deps.begin(), deps.end());
  // Each lane's runs in dispatch order, derived from the tasks' own runs.
  for (const TaskView& t : v.tasks)
    for (const MemberBar& b : t.runs) v.bars[b.worker].push_back(b);
  for (auto& [lane, bars] : v.bars)
    std::sort(bars.begin(), bars.end(), [](const MemberBar& a, const MemberBar& b) { return a.seq < b.seq; });

  if (summary && summary->waits)
    for (const record::CriticalStep& c : summary->waits->critical_path) v.critical.insert(c.task);
  // Lanes: registration order from the summary when there is one.
  if (summary && !summary->workers.empty()) {
    for (const record::WorkerUse& w : summary->workers) v.lanes.push_back(w.worker);
  } else {
    std::vector<long long> ids;
    for (const std::string& s : nl_seen) ids.push_back(std::stoll(s));
    std::sort(ids.begin(), ids.end());
    for (long long id : ids) v.lanes.push_back(std::to_string(id));
    std::vector<int> subs;
    for (const std::string& s : sub_seen) subs.push_back(std::stoi(s.substr(3)));
    std::sort(subs.begin(), subs.end());
    for (int s : subs) v.lanes.push_back("sub" + std::to_string(s));
  }

  // Reservation (switch group_reservation: head_reservation and later presets; a summary from before
  // the ladder names the policy only): a group is the FIFO head from its READY or the launch of the
  // group before it, whichever is later, until its own launch; while it waits there it holds every
  // target, and the idle part of that hold is drawn as its own band.
  bool reserving = summary && summary->policy == "head_reservation";
  if (summary && summary->switches)
    for (const auto& [name, on] : *summary->switches)
      if (name == "group_reservation") reserving = on;
  if (summary) v.policy = summary->policy;
  if (reserving) {
    double previous_launch = 0;
    for (const std::string& name : group_order) {
      const TaskView& g = *v.find(name);
      const double from = std::max(g.ready, previous_launch);
      const double to = ready_wait_end(v, g);
      previous_launch = to;
      if (to <= from) continue;
      for (const std::string& w : g.workers)
        for (auto [a, b] : idle_intervals(v, {w}, from, to)) v.reserved.push_back({name, w, a, b});
    }
  }

  // Starvation: every group that sat READY, for the span it waited with some target idle.
  for (const TaskView& t : v.tasks) {
    if (t.kind != "group" || t.ready < 0) continue;
    const double until = ready_wait_end(v, t);
    for (auto [a, b] : idle_intervals(v, t.workers, t.ready, until))
      v.starved.push_back({t.name, t.workers, a, b});
    for (const std::string& w : t.workers)
      for (auto [a, b] : idle_intervals(v, {w}, t.ready, until)) v.idle_targets.push_back({t.name, w, a, b});
  }
  // What held each waiting group, and who overtook it: the run record's own accounting.
  if (summary)
    for (const record::GroupWait& g : summary->groups) {
      if (g.blocked_by)
        for (const record::BlockedBy& b : *g.blocked_by)
          v.held.push_back({g.task, b.worker ? std::to_string(*b.worker) : std::string(), b.task, b.from_s, b.to_s});
      for (const std::string& s : g.overtaken_by) v.overtakes.push_back({s, g.task});
    }
  return v;
}

const char* state_colour(const std::string& s) {
  if (s == "COMPLETED") return "#8fd18f";
  if (s == "FAILED") return "#f08070";
  if (s == "POISONED") return "#c9a0dc";
  if (s == "CANCELLED") return "#e0c9a6";
  if (s == "REJECTED") return "#b0b0b0";
  if (s == "NOT_SUBMITTED") return "#ffffff";
  return "#fff3a0";  // still PENDING, READY or RUNNING: stuck
}

}  // namespace dirsched::viz
