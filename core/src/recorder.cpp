#include "dirsched/recorder.hpp"

#include <algorithm>
#include <cmath>

namespace dirsched {

Recorder::Recorder(const Registry& registry)
    : registry_(registry),
      nl_busy_(registry.next_level_count(), 0.0),
      sub_busy_(registry.sub_workers(), 0.0),
      nl_is_busy_(registry.next_level_count(), false) {}

const TaskRecord* Recorder::find(std::string_view name) const {
  if (by_name_.size() != tasks_.size()) {
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

TaskRecord& Recorder::record_for(const Event& e) {
  if (e.task.valid() && e.task.index() < by_task_.size()) return tasks_[by_task_[e.task.index()]];
  // First sight of this name: a submit, a reject or a not_submitted.
  tasks_.emplace_back();
  TaskRecord& r = tasks_.back();
  r.name = std::string(e.name);
  r.kind = e.task_kind;
  if (e.task.valid()) {
    if (by_task_.size() <= e.task.index()) by_task_.resize(e.task.index() + 1, 0);
    by_task_[e.task.index()] = tasks_.size() - 1;
  }
  return r;
}

void Recorder::worker_changed(std::uint32_t index, bool busy, double t) {
  nl_is_busy_[index] = busy;
  auto it = waiting_on_.find(index);
  if (it == waiting_on_.end()) return;
  for (std::size_t rec : it->second) {
    Waiting& w = waiting_.at(rec);
    if (w.idle_targets > 0) tasks_[rec].idle_target_s += t - w.since;
    w.since = t;
    w.idle_targets = busy ? w.idle_targets - 1 : w.idle_targets + 1;
  }
}

void Recorder::on_event(const Event& e) {
  ++events_;
  TaskRecord& r = record_for(e);
  const std::size_t rec = static_cast<std::size_t>(&r - tasks_.data());
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
      for (TaskId p : *e.producers) r.producers.push_back(tasks_[by_task_[p.index()]].name);
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
        std::string key = e.target.sub                 ? "sub"
                          : r.kind == TaskKind::kGroup ? "group"
                                                       : "worker:" + std::to_string(e.target.worker.value());
        waits_[key].push_back(e.t - r.ready);
      }
      r.members[e.member].target = e.target;
      r.members[e.member].start = e.t;
      if (!e.target.sub) {
        const std::uint32_t index = *registry_.index_of(e.target.worker);
        if (r.kind == TaskKind::kSingle) {
          auto it = waiting_on_.find(index);
          if (it != waiting_on_.end())
            for (std::size_t g : it->second) tasks_[g].overtaken_by.push_back(r.name);
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
      r.cause = tasks_[by_task_[e.cause.index()]].name;
      last_transition_ = std::max(last_transition_, e.t);
      break;
    case EventKind::kGroupBlocked:
      break;
  }
}

std::map<std::string, WaitStats> Recorder::queue_waits() const {
  std::map<std::string, WaitStats> out;
  for (const auto& [key, values] : waits_) {
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
