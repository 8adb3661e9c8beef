#include "dirsched/invariants.hpp"

#include <algorithm>

namespace dirsched {

InvariantChecker::InvariantChecker(const Registry& registry, Switches switches)
    : registry_(registry),
      switches_(switches),
      nl_busy_(registry.next_level_count()),
      sub_busy_(registry.sub_workers()),
      nl_staged_(registry.next_level_count()) {}

void InvariantChecker::fail(const std::string& rule, const std::string& detail) const {
  throw InvariantViolation(Violation{seq_, rule, detail, dump_ ? dump_() : std::string()});
}

InvariantChecker::TaskModel& InvariantChecker::task(TaskId id) {
  if (!id.valid() || id.index() >= tasks_.size())
    fail("known_task", "event for a task that was never submitted");
  return tasks_[id.index()];
}

std::string InvariantChecker::worker_name(std::uint32_t index) const {
  return "worker " + std::to_string(registry_.worker_at(index).id.value());
}

bool InvariantChecker::raised(std::uint32_t run) const {
  return std::find(raised_runs_.begin(), raised_runs_.end(), run) != raised_runs_.end() ||
         (run_raised_ && run_raised_(RunId(run)));
}

std::uint32_t InvariantChecker::active_run() const {
  std::uint32_t r = 0;
  while (r < ended_runs_.size() && ended_runs_[r]) ++r;
  return r;
}

TaskId InvariantChecker::group_head(std::uint32_t run) const {
  const std::uint32_t q = queue_of(run);
  return q < fifo_head_.size() && fifo_head_[q] != kNoEntry ? group_fifo_[fifo_head_[q]].group : TaskId();
}

void InvariantChecker::fifo_push(TaskId group) {
  const std::uint32_t q = queue_of(tasks_[group.index()].run);
  if (q >= fifo_head_.size()) {
    fifo_head_.resize(q + 1, kNoEntry);
    fifo_tail_.resize(q + 1, kNoEntry);
  }
  const auto at = static_cast<std::uint32_t>(group_fifo_.size());
  group_fifo_.push_back({group, kNoEntry});
  if (fifo_head_[q] == kNoEntry)
    fifo_head_[q] = at;
  else
    group_fifo_[fifo_tail_[q]].next = at;
  fifo_tail_[q] = at;
  ++fifo_ready_;
}

void InvariantChecker::fifo_left(std::uint32_t run) {
  // Groups behind the front stay linked until they reach it: the head is always a READY group.
  const std::uint32_t q = queue_of(run);
  std::uint32_t& head = fifo_head_[q];
  while (head != kNoEntry && tasks_[group_fifo_[head].group.index()].state != TaskState::kReady)
    head = group_fifo_[head].next;
  if (head == kNoEntry) fifo_tail_[q] = kNoEntry;
  if (--fifo_ready_ == 0) group_fifo_.clear();  // every queue is empty: no entry is linked
}

bool InvariantChecker::all_idle(const TaskModel& g) const {
  for (std::uint32_t t : targets_of(g))
    if (nl_busy_[t].valid()) return false;
  return true;
}

void InvariantChecker::on_event(const Event& e) {
  struct Advance {  // seq_ names this event while it is checked, the next one afterwards
    std::uint64_t& s;
    ~Advance() { ++s; }
  } advance{seq_};
  const std::string who = "task '" + std::string(e.name) + "'";
  if (launching_.valid() && e.kind != EventKind::kDispatch)
    fail("group_all_at_once", "group '" + name_of(tasks_[launching_.index()]) + "' launched but only " +
                                  std::to_string(launching_next_) +
                                  " of its members were dispatched with it");
  switch (e.kind) {
    case EventKind::kSubmit: {
      if (e.task.index() != tasks_.size()) fail("known_task", who + " submitted out of order");
      TaskModel t;
      t.name_begin = static_cast<std::uint32_t>(names_pool_.size());
      t.name_size = static_cast<std::uint32_t>(e.name.size());
      names_pool_ += e.name;
      t.targets_begin = static_cast<std::uint32_t>(targets_pool_.size());
      t.producers_begin = static_cast<std::uint32_t>(producers_pool_.size());
      t.members = e.member_count;
      // The kind follows from the submit op and the member count alone: a group of one member is
      // scheduled as a single (NEXT_LEVEL) or a SUB single, never as a group.
      t.kind = e.member_count == 1 && e.op_kind == TaskKind::kGroup      ? TaskKind::kSingle
               : e.member_count == 1 && e.op_kind == TaskKind::kSubGroup ? TaskKind::kSub
                                                                         : e.op_kind;
      if (e.task_kind != t.kind)
        fail("one_member_group_is_single",
             who + " from " + std::string(submit_op_name(e.op_kind)) + " with " +
                 std::to_string(e.member_count) + " member(s) is scheduled as " +
                 std::string(to_string(e.task_kind)) + ", not as " + std::string(to_string(t.kind)));
      if (e.workers) {
        if (is_sub(e.task_kind) && !e.workers->empty())
          fail("sub_has_no_target", who + " is SUB but names workers");
        for (WorkerId w : *e.workers) {
          auto index = registry_.index_of(w);
          if (!index) fail("known_worker", who + " targets unregistered worker " + std::to_string(w.value()));
          targets_pool_.push_back(*index);
          ++t.targets_size;
        }
      }
      if (e.deps)
        for (const Dependency& d : *e.deps) {
          // The walk ignores a lookup that finds the task itself; any other producer came earlier.
          if (!(d.producer < e.task))
            fail("no_self_dependency", who + " depends on itself or on a later task");
          // Each run has its own tensor map: a lookup never finds another run's producer.
          if (tasks_[d.producer.index()].run != e.run.index())
            fail("same_run_producer", who + " depends on '" + name_of(tasks_[d.producer.index()]) +
                                          "' of another run");
          producers_pool_.push_back(d.producer);
          ++t.producers_size;
        }
      t.run = e.run.index();
      tasks_.push_back(std::move(t));
      break;
    }
    case EventKind::kReady: {
      TaskModel& t = task(e.task);
      if (t.routed) fail("routed_once", who + " was routed a second time");
      t.routed = true;
      if (t.state != TaskState::kPending)
        fail("routed_once", who + " turned READY from " + std::string(to_string(t.state)));
      t.state = TaskState::kReady;
      const bool ok = t.kind == TaskKind::kSingle
                          ? e.queue == QueueKind::kWorker && t.targets_size > 0 &&
                                registry_.worker_at(targets_of(t)[0]).id == e.queue_worker
                      : t.kind == TaskKind::kGroup ? e.queue == QueueKind::kGroup
                                                   : e.queue == QueueKind::kSub;
      if (!ok)
        fail("queue_matches_kind",
             who + " (" + std::string(to_string(t.kind)) + ") routed to the wrong queue");
      if (t.kind == TaskKind::kGroup) {
        if (e.between_passes) {
          t.late = true;
          t.after_clear_pass = !group_head(t.run).valid();
        }
        fifo_push(e.task);
      }
      break;
    }
    case EventKind::kGroupLaunched: {
      TaskModel& g = task(e.task);
      if (g.kind != TaskKind::kGroup || g.state != TaskState::kReady)
        fail("dispatch_only_ready", who + " launched while " + std::string(to_string(g.state)));
      if (!all_idle(g)) fail("group_targets_idle", who + " launched while a target was busy");
      // whole_run_fifo: each queue is one FIFO per run, so the head is the first group of its run.
      if (group_head(g.run) != e.task) fail("group_fifo_head", who + " launched before the group FIFO head");
      g.state = TaskState::kRunning;
      fifo_left(g.run);
      g.late = false;
      launching_ = e.task;
      launching_next_ = 0;
      break;
    }
    case EventKind::kDispatch:
    case EventKind::kActivate: {
      TaskModel& t = task(e.task);
      if (e.kind == EventKind::kDispatch && e.prepare_only) {  // a staging (#1583)
        check_staging(e, t, who);
        break;
      }
      if (e.kind == EventKind::kActivate) {
        const auto w = e.target.sub ? std::nullopt : registry_.index_of(e.target.worker);
        if (!t.staged || !w || nl_staged_[*w] != e.task)
          fail("activate_only_staged", who + " activated but it is not staged on that worker");
        t.staged = false;
        nl_staged_[*w] = TaskId();
      } else if (t.staged) {
        fail("activate_only_staged", who + " is staged and was dispatched without its activation");
      }
      // With run_cancellation a raise cancelled everything of its run that had not started, so nothing
      // of that run starts afterwards (a group's members all start at its launch, before any raise).
      if (switches_[Switch::kRunCancellation] && t.state == TaskState::kReady && raised(t.run))
        fail("raised_run_starts_nothing", who + " dispatched after its run's callback raised");
      // whole_run_fifo: the active run is the oldest run not yet ended (runs begin in RunId order).
      if (switches_[Switch::kWholeRunFifo] && t.run != active_run())
        fail("only_active_run_dispatches", who + " of run " + std::to_string(t.run) +
                                               " dispatched while run " + std::to_string(active_run()) +
                                               " is the active run");
      if (t.state == TaskState::kPoisoned || t.state == TaskState::kCancelled)
        fail("dispatch_only_ready", who + " is " + std::string(to_string(t.state)) + " and was dispatched");
      for (TaskId p : producers_of(t))
        if (tasks_[p.index()].state != TaskState::kCompleted)
          fail("producers_completed",
               who + " dispatched before its producer '" + name_of(tasks_[p.index()]) + "' completed");
      if (t.kind == TaskKind::kGroup) {
        if (launching_ != e.task || e.member != launching_next_)
          fail("group_all_at_once",
               who + " member " + std::to_string(e.member) + " dispatched outside its launch");
        if (e.target.sub || registry_.worker_at(targets_of(t)[e.member]).id != e.target.worker)
          fail("group_all_at_once", who + " member " + std::to_string(e.member) + " not sent to workers[" +
                                        std::to_string(e.member) + "]");
        if (++launching_next_ == t.members) launching_ = TaskId();
      } else {
        if (t.state != TaskState::kReady &&
            !(t.kind == TaskKind::kSubGroup && t.state == TaskState::kRunning))
          fail("dispatch_only_ready", who + " dispatched while " + std::string(to_string(t.state)));
        t.state = TaskState::kRunning;
      }
      if (e.target.sub) {
        if (!is_sub(t.kind)) fail("queue_matches_kind", who + " is NEXT_LEVEL but ran on a SUB worker");
        if (e.target.sub_index >= sub_busy_.size())
          fail("known_worker", who + " on a SUB worker that does not exist");
        if (sub_busy_[e.target.sub_index].valid())
          fail("one_member_per_worker", "sub" + std::to_string(e.target.sub_index) + " already runs '" +
                                            name_of(tasks_[sub_busy_[e.target.sub_index].index()]) + "'");
        sub_busy_[e.target.sub_index] = e.task;
      } else {
        if (is_sub(t.kind)) fail("sub_has_no_target", who + " is SUB but ran on a NEXT_LEVEL worker");
        const std::uint32_t w = *registry_.index_of(e.target.worker);
        if (t.kind == TaskKind::kSingle) {
          if (w != targets_of(t)[0])
            fail("queue_matches_kind", who + " ran on " + worker_name(w) + ", not its target");
          const TaskId h = group_head(t.run);
          if (h.valid() && tasks_[h.index()].late) {
            // A group that landed between the passes, not yet looked at by a group pass.
            const TaskModel& head = tasks_[h.index()];
            if (switches_[Switch::kGroupBarrier] && head.after_clear_pass)
              fail("barrier_held", who + " dispatched while group '" + name_of(head) +
                                       "', READY between the passes, waits for the group pass");
          } else if (h.valid()) {
            const TaskModel& head = tasks_[h.index()];
            const bool target_of_head = std::count(targets_of(head).begin(), targets_of(head).end(), w) > 0;
            if (all_idle(head) && target_of_head)
              fail("head_keeps_targets", who + " took " + worker_name(w) + " from group '" + name_of(head) +
                                             "', the group FIFO head, which could launch");
            if (switches_[Switch::kGroupReservation] && target_of_head)
              fail("reservation_held", who + " took " + worker_name(w) + ", reserved by group '" +
                                           name_of(head) + "', the blocked group FIFO head");
          }
        }
        if (nl_busy_[w].valid())
          fail("one_member_per_worker",
               worker_name(w) + " already runs '" + name_of(tasks_[nl_busy_[w].index()]) + "'");
        nl_busy_[w] = e.task;
      }
      ++t.dispatched;
      break;
    }
    case EventKind::kMemberEnd: {
      TaskModel& t = task(e.task);
      if (t.state != TaskState::kRunning)
        fail("terminal_once", who + " member ended while " + std::string(to_string(t.state)));
      TaskId& slot =
          e.target.sub ? sub_busy_.at(e.target.sub_index) : nl_busy_.at(*registry_.index_of(e.target.worker));
      if (slot != e.task) fail("one_member_per_worker", who + " ended on a worker it was not running on");
      slot = TaskId();
      // registration_order_completions: within one batch, by the worker's position (NEXT_LEVEL
      // registration index, then the number of NEXT_LEVEL workers + SUB index), never dispatch order.
      if (switches_[Switch::kRegistrationOrderCompletions]) {
        const std::uint64_t position = e.target.sub ? nl_busy_.size() + e.target.sub_index
                                                    : *registry_.index_of(e.target.worker);
        const auto place = [&](std::uint64_t p) {
          return p >= nl_busy_.size() ? "sub" + std::to_string(p - nl_busy_.size())
                                      : worker_name(static_cast<std::uint32_t>(p));
        };
        if (!e.batch_start && position <= batch_last_)
          fail("completions_in_registration_order",
               who + " member " + std::to_string(e.member) + " ended on " + place(position) +
                   " after the end on " + place(batch_last_) +
                   " in one batch of completions (NEXT_LEVEL workers in registration order, then SUB by index)");
        batch_last_ = position;
      }
      if (++t.ended > t.dispatched) fail("terminal_once", who + " has more ended members than dispatched");
      break;
    }
    case EventKind::kComplete:
    case EventKind::kFail: {
      TaskModel& t = task(e.task);
      if (t.state != TaskState::kRunning) fail("terminal_once", who + " ended twice or without running");
      if (t.ended != t.members)
        fail("terminal_once", who + " ended with " + std::to_string(t.ended) + " of " +
                                  std::to_string(t.members) + " members terminal");
      t.state = e.kind == EventKind::kComplete ? TaskState::kCompleted : TaskState::kFailed;
      break;
    }
    case EventKind::kPoison: {
      TaskModel& t = task(e.task);
      if (t.state != TaskState::kPending)
        fail("dispatch_only_ready", who + " poisoned while " + std::string(to_string(t.state)));
      t.state = TaskState::kPoisoned;
      break;
    }
    case EventKind::kCancel: {
      TaskModel& t = task(e.task);
      if (!switches_[Switch::kRunCancellation])
        fail("cancel_only_on_raise", who + " cancelled with run_cancellation off");
      if (!raised(t.run)) fail("cancel_only_on_raise", who + " cancelled but its run's callback did not raise");
      if (t.state != TaskState::kPending && t.state != TaskState::kReady)
        fail("cancel_only_on_raise", who + " cancelled while " + std::string(to_string(t.state)));
      const bool in_fifo = t.kind == TaskKind::kGroup && t.state == TaskState::kReady;
      t.state = TaskState::kCancelled;
      if (in_fifo) fifo_left(t.run);
      break;
    }
    case EventKind::kRunRaise:
      raised_runs_.push_back(e.run.index());
      break;
    case EventKind::kRunEnd: {
      const std::uint32_t r = e.run.index();
      if (ended_runs_.size() <= r) ended_runs_.resize(r + 1, false);
      if (ended_runs_[r]) fail("terminal_once", "run '" + std::string(e.name) + "' ended twice");
      // whole_run_fifo: a run whose callback returned normally turns terminal only while it is active.
      if (switches_[Switch::kWholeRunFifo] && !raised(r) && r != active_run())
        fail("returned_run_ends_active", "run '" + std::string(e.name) + "' (run " + std::to_string(r) +
                                             ") ended while run " + std::to_string(active_run()) +
                                             " is the active run");
      ended_runs_[r] = true;
      break;
    }
    case EventKind::kGroupBlocked:  // a group pass looked at this head
      task(e.task).late = false;
      break;
    case EventKind::kPending:
    case EventKind::kReject:
    case EventKind::kNotSubmitted:
    case EventKind::kGroupStall:
    case EventKind::kReservationStall:
      break;
  }
}

void InvariantChecker::check_staging(const Event& e, TaskModel& t, const std::string& who) {
  if (!switches_[Switch::kStaging]) fail("staged_only_with_switch", who + " staged with staging off");
  if (t.kind != TaskKind::kSingle || e.target.sub)
    fail("staged_single", who + " (" + std::string(to_string(t.kind)) + ") staged: only a single is");
  const std::optional<std::uint32_t> w = registry_.index_of(e.target.worker);
  if (!w) fail("known_worker", who + " staged on unregistered worker " + std::to_string(e.target.worker.value()));
  if (*w != targets_of(t)[0]) fail("queue_matches_kind", who + " staged on " + worker_name(*w) + ", not its target");
  if (registry_.worker_at(*w).kind == WorkerKind::kRemote)
    fail("staged_not_remote", who + " staged on remote " + worker_name(*w));
  if (registry_.worker_at(*w).frames < 2)
    fail("staged_two_frames", who + " staged on " + worker_name(*w) + ", which has one frame");
  if (std::find(staged_runs_.begin(), staged_runs_.end(), t.run) != staged_runs_.end())
    fail("one_staged_per_run", who + " staged, but run " + std::to_string(t.run) + " had a task staged already");
  if (nl_staged_[*w].valid())
    fail("staged_frame_free", who + " staged on " + worker_name(*w) + ", whose second frame holds '" +
                                  name_of(tasks_[nl_staged_[*w].index()]) + "'");
  if (switches_[Switch::kWholeRunFifo] && t.run == active_run())
    fail("staged_next_run", who + " staged, but its run " + std::to_string(t.run) + " is the active run");
  if (t.state != TaskState::kReady)
    fail("dispatch_only_ready", who + " staged while " + std::string(to_string(t.state)));
  for (TaskId p : producers_of(t))
    if (tasks_[p.index()].state != TaskState::kCompleted)
      fail("producers_completed", who + " staged before its producer '" + name_of(tasks_[p.index()]) + "' completed");
  staged_runs_.push_back(t.run);
  nl_staged_[*w] = e.task;
  t.staged = true;
}

void InvariantChecker::finish(const std::vector<Stuck>& reported) {
  bool running = false;
  for (TaskId b : nl_busy_) running |= b.valid();
  for (TaskId b : sub_busy_) running |= b.valid();
  std::size_t idle_sub = 0;
  for (TaskId b : sub_busy_) idle_sub += !b.valid();
  std::set<std::string> named;
  for (const Stuck& s : reported)
    if (!s.reason.empty()) named.insert(s.task);
  // edge_triggered_wake: with nothing running, one iteration per wake; a READY SUB entry too large for
  // the idle pool goes back to the tail and ends the SUB pass, so the SUB work behind it waits for a
  // wake that may never come. (The seed's repeats let it run, and a wake runs one iteration, so it is
  // READY work left only when no such entry is queued.)
  std::set<std::uint32_t> sub_blocked;  // runs with such an entry
  if (switches_[Switch::kEdgeTriggeredWake])
    for (const TaskModel& t : tasks_)
      if (t.state == TaskState::kReady && is_sub(t.kind) && t.members > idle_sub) sub_blocked.insert(t.run);
  for (const TaskModel& t : tasks_) {
    if (is_terminal(t.state)) continue;
    // whole_run_fifo: a READY task of a run that is not active cannot run.
    const bool waits_for_its_run = switches_[Switch::kWholeRunFifo] && t.run != active_run();
    const bool waits_for_a_wake = is_sub(t.kind) && sub_blocked.count(t.run) > 0;
    if (!running && t.state == TaskState::kReady && !waits_for_its_run && !waits_for_a_wake) {
      const bool could_run =
          is_sub(t.kind) ? t.members <= idle_sub
          : t.kind == TaskKind::kSingle
              ? !nl_busy_[targets_of(t)[0]].valid()
              : group_head(t.run).index() == static_cast<std::uint32_t>(&t - tasks_.data()) && all_idle(t);
      if (could_run)
        fail("ready_work_left",
             "'" + name_of(t) + "' is READY and could run on idle workers, but the run ended");
    }
    if (!named.count(name_of(t)))
      fail("end_state",
           "'" + name_of(t) + "' ended " + std::string(to_string(t.state)) + " and was not reported stuck");
  }
}

}  // namespace dirsched
