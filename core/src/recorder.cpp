#include "dirsched/recorder.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dirsched {

Recorder::Recorder(const Registry& registry)
    : registry_(registry),
      nl_busy_(registry.next_level_count(), 0.0),
      sub_busy_(registry.sub_workers(), 0.0),
      nl_is_busy_(registry.next_level_count(), false),
      nl_waits_(registry.next_level_count()) {}

const TaskRecord* Recorder::find(std::string_view name) const {
  if (by_name_.size() != tasks_.size() || by_name_first_ != first_) {
    by_name_first_ = first_;
    // (Re)build the name index: record numbers sorted by name, the first record of a name first.
    by_name_.resize(tasks_.size());
    for (std::size_t i = 0; i < tasks_.size(); ++i) by_name_[i] = i;
    std::stable_sort(by_name_.begin(), by_name_.end(),
                     [&](std::size_t a, std::size_t b) { return tasks_[a].name < tasks_[b].name; });
  }
  auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                             [&](std::size_t r, std::string_view n) { return tasks_[r].name < n; });
  return it == by_name_.end() || tasks_[*it].name != name ? nullptr : &tasks_[*it];
}

TaskRecord& Recorder::record(std::size_t n) {
  // Retired records get no more events (they are terminal, and so is everything before them).
  if (n < first_) throw std::logic_error("recorder: an event for a retired task");
  return tasks_[n - first_];
}

TaskRecord& Recorder::record_for(const Event& e) {
  if (e.task.valid() && e.task.index() < by_task_.size()) return record(by_task_[e.task.index()]);
  // First sight of this name: a submit, a reject or a not_submitted.
  tasks_.emplace_back();
  TaskRecord& r = tasks_.back();
  r.name = std::string(e.name);
  r.kind = e.task_kind;
  r.task = e.task;
  if (e.task.valid()) {
    if (by_task_.size() <= e.task.index()) by_task_.resize(e.task.index() + 1, 0);
    by_task_[e.task.index()] = static_cast<std::uint32_t>(record_count() - 1);
  }
  return r;
}

namespace {
bool terminal(TaskState s) {
  return s == TaskState::kCompleted || s == TaskState::kFailed || s == TaskState::kPoisoned ||
         s == TaskState::kRejected || s == TaskState::kNotSubmitted;
}
}  // namespace

void Recorder::retire_one() {
  const TaskRecord& r = tasks_[retired_ - first_];
  ++retired_states_[r.state];
  if (r.ready >= 0 && r.start < 0 && r.kind == TaskKind::kSingle) unstarted_single_.push_back(r.ready);
  if (r.ready >= 0 && r.start < 0 && r.kind == TaskKind::kGroup) unstarted_group_.push_back(r.ready);
  if (on_retire_) on_retire_(r);
  ++retired_;
  if (keep_) return;
  if (r.kind == TaskKind::kGroup) retired_groups_.push_back(std::move(tasks_.front()));
  tasks_.pop_front();
  ++first_;
}

void Recorder::retire_terminal() {
  while (retired_ < record_count() && terminal(tasks_[retired_ - first_].state)) retire_one();
}

void Recorder::finish() {
  while (retired_ < record_count()) retire_one();
}

std::map<TaskState, std::size_t> Recorder::state_counts() const {
  std::map<TaskState, std::size_t> out = retired_states_;
  for (std::size_t n = retired_; n < record_count(); ++n) ++out[tasks_[n - first_].state];
  return out;
}

std::vector<const TaskRecord*> Recorder::groups() const {
  std::vector<const TaskRecord*> out;
  for (const TaskRecord& g : retired_groups_) out.push_back(&g);
  for (const TaskRecord& t : tasks_)
    if (t.kind == TaskKind::kGroup) out.push_back(&t);
  return out;
}

void Recorder::ready_waits(double makespan, std::vector<double>& singles, std::vector<double>& groups) const {
  // A started task's wait is the one its queue recorded at its first dispatch ("worker:ID" holds the
  // NEXT_LEVEL singles, "group" the groups); the rest waited until the end of the run.
  for (const std::vector<double>& values : nl_waits_)
    singles.insert(singles.end(), values.begin(), values.end());
  groups.insert(groups.end(), group_waits_.begin(), group_waits_.end());
  for (double ready : unstarted_single_) singles.push_back(makespan - ready);
  for (double ready : unstarted_group_) groups.push_back(makespan - ready);
  for (std::size_t n = retired_; n < record_count(); ++n) {
    const TaskRecord& t = tasks_[n - first_];
    if (t.ready < 0 || t.start >= 0) continue;
    if (t.kind == TaskKind::kSingle) singles.push_back(makespan - t.ready);
    if (t.kind == TaskKind::kGroup) groups.push_back(makespan - t.ready);
  }
}

void Recorder::worker_changed(std::uint32_t index, bool busy, double t) {
  nl_is_busy_[index] = busy;
  auto it = waiting_on_.find(index);
  if (it == waiting_on_.end()) return;
  for (std::size_t rec : it->second) {
    Waiting& w = waiting_.at(rec);
    if (w.idle_targets > 0) record(rec).idle_target_s += t - w.since;
    w.since = t;
    w.idle_targets = busy ? w.idle_targets - 1 : w.idle_targets + 1;
  }
}

void Recorder::on_event(const Event& e) {
  ++events_;
  TaskRecord& r = record_for(e);
  const std::size_t rec = e.task.valid() ? by_task_[e.task.index()] : record_count() - 1;
  switch (e.kind) {
    case EventKind::kSubmit:
      r.submit = e.t;
      r.state = TaskState::kPending;
      if (e.workers) r.workers = *e.workers;
      r.members.resize(e.member_count);
      break;
    case EventKind::kReject:
      r.state = TaskState::kRejected;
      r.submit = e.t;
      r.code = e.rejection->code;
      r.message = e.rejection->message;
      break;
    case EventKind::kNotSubmitted:
      r.state = TaskState::kNotSubmitted;
      if (e.rejection) r.message = e.rejection->message;
      break;
    case EventKind::kPending:
      if (keep_)
        for (TaskId p : *e.producers) r.producers.push_back(record(by_task_[p.index()]).name);
      break;
    case EventKind::kReady: {
      r.state = TaskState::kReady;
      r.ready = e.t;
      if (r.kind == TaskKind::kGroup) {
        Waiting w{rec, 0, e.t};
        for (WorkerId id : r.workers) {
          const std::uint32_t index = *registry_.index_of(id);
          waiting_on_[index].push_back(rec);
          if (!nl_is_busy_[index]) ++w.idle_targets;
        }
        waiting_.emplace(rec, w);
      }
      break;
    }
    case EventKind::kGroupLaunched: {
      Waiting& w = waiting_.at(rec);
      if (w.idle_targets > 0) r.idle_target_s += e.t - w.since;
      waiting_.erase(rec);
      for (WorkerId id : r.workers) {
        auto& list = waiting_on_[*registry_.index_of(id)];
        list.erase(std::find(list.begin(), list.end(), rec));
      }
      break;
    }
    case EventKind::kDispatch: {
      if (r.state != TaskState::kRunning) {
        r.state = TaskState::kRunning;
        r.start = e.t;
        // The queue it waited in: "sub", "group" or its worker's FIFO ("worker:ID").
        (e.target.sub                 ? sub_waits_
         : r.kind == TaskKind::kGroup ? group_waits_
                                      : nl_waits_[*registry_.index_of(e.target.worker)])
            .push_back(e.t - r.ready);
      }
      r.members[e.member].target = e.target;
      r.members[e.member].start = e.t;
      if (!e.target.sub) {
        const std::uint32_t index = *registry_.index_of(e.target.worker);
        if (r.kind == TaskKind::kSingle) {
          auto it = waiting_on_.find(index);
          if (it != waiting_on_.end())
            for (std::size_t g : it->second) record(g).overtaken_by.push_back(r.name);
        }
        worker_changed(index, true, e.t);
      }
      break;
    }
    case EventKind::kMemberEnd: {
      MemberRun& m = r.members.at(e.member);
      m.end = e.t;
      m.outcome = e.outcome;
      if (e.target.sub) {
        sub_busy_[e.target.sub_index] += m.end - m.start;
      } else {
        const std::uint32_t index = *registry_.index_of(e.target.worker);
        nl_busy_[index] += m.end - m.start;
        worker_changed(index, false, e.t);
      }
      break;
    }
    case EventKind::kComplete:
      r.state = TaskState::kCompleted;
      r.end = e.t;
      last_transition_ = std::max(last_transition_, e.t);
      break;
    case EventKind::kFail:
      r.state = TaskState::kFailed;
      r.end = e.t;
      last_transition_ = std::max(last_transition_, e.t);
      break;
    case EventKind::kPoison:
      r.state = TaskState::kPoisoned;
      r.end = e.t;
      if (keep_) r.cause = record(by_task_[e.cause.index()]).name;
      last_transition_ = std::max(last_transition_, e.t);
      break;
    case EventKind::kGroupStall:
    case EventKind::kReservationStall: {
      StallRecord st;
      st.task = r.name;
      st.kind = e.kind;
      st.t = e.t;
      st.waited_s = e.waited_s;
      if (e.workers) st.busy = *e.workers;
      if (e.idle_queued) st.idle_queued = *e.idle_queued;
      stalls_.push_back(std::move(st));
      break;
    }
    case EventKind::kGroupBlocked:
      break;
  }
  switch (e.kind) {
    case EventKind::kComplete:
    case EventKind::kFail:
    case EventKind::kPoison:
    case EventKind::kReject:
    case EventKind::kNotSubmitted:
      retire_terminal();
      break;
    default:
      break;
  }
}

std::map<std::string, WaitStats> Recorder::queue_waits() const {
  std::map<std::string, const std::vector<double>*> waits;
  for (std::uint32_t i = 0; i < nl_waits_.size(); ++i)
    if (!nl_waits_[i].empty())
      waits["worker:" + std::to_string(registry_.worker_at(i).id.value())] = &nl_waits_[i];
  if (!group_waits_.empty()) waits["group"] = &group_waits_;
  if (!sub_waits_.empty()) waits["sub"] = &sub_waits_;
  std::map<std::string, WaitStats> out;
  for (const auto& [key, list] : waits) {
    const std::vector<double>& values = *list;
    std::vector<double> v = values;
    std::sort(v.begin(), v.end());
    WaitStats s;
    s.count = v.size();
    auto rank = [&](double q) {  // nearest-rank percentile
      std::size_t k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
      return v[k == 0 ? 0 : k - 1];
    };
    s.p50 = rank(0.50);
    s.p95 = rank(0.95);
    s.max = v.back();
    double sum = 0;
    for (double x : v) sum += x;
    s.mean = sum / static_cast<double>(v.size());
    out.emplace(key, s);
  }
  return out;
}

}  // namespace dirsched
