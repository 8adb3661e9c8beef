// InvariantChecker: an observer that checks the placement contract after every transition.
//
// It keeps its own model of the run from the event stream alone (task states, worker occupancy, the
// group FIFO order) and checks, at each event:
//   one_member_group_is_single  a group op with one member is scheduled as a single / SUB single
//   queue_matches_kind     a single is routed to its target's FIFO, a group to the group FIFO, SUB to SUB
//                          (the kind taken from the submit op and the member count, not from the core)
//   no_self_dependency     a task's producers are earlier tasks, never itself
//   sub_has_no_target      a SUB task carries no worker id
//   routed_once            a task turns READY once
//   dispatch_only_ready    only a READY task is dispatched (never a PENDING or POISONED one)
//   producers_completed    every producer of a dispatched task has completed
//   one_member_per_worker  a worker runs at most one member at a time
//   group_all_at_once      a launched group dispatches all its members, member i to workers[i], at once
//   group_targets_idle     a group launches only when every target is idle
//   terminal_once          a task ends once, and a group only after all its members ended
//   head_keeps_targets     no single takes a target of a group FIFO head that could launch
//   reservation_held       head_reservation only: no single takes any target of the group FIFO head
//                          (which, when a single is dispatched, is the blocked head that reserved it)
//   cancel_only_on_raise   run_cancellation: a task is cancelled only with the switch on, only after its
//                          run's callback raised (run_raise, or run_raised() for a run that emits no run
//                          events), and only from PENDING or READY; a cancelled task never dispatches
//                          (dispatch_only_ready) and its group leaves the group FIFO
//   raised_run_starts_nothing  run_cancellation: once a run's callback raised, none of its tasks is
//                          dispatched (all that had not started were cancelled)
//   only_active_run_dispatches  whole_run_fifo: only the active run's tasks are dispatched; the active
//                          run is the oldest run not yet ended (run_end), runs being begun in RunId order
//                          (every driver: the replay declares and begins them in trace order). The group
//                          FIFO is one FIFO per run: group_fifo_head and head_keeps_targets read the head
//                          of the run's own groups
//   returned_run_ends_active  whole_run_fifo: a run whose callback did not raise ends (run_end) only
//                          while it is the active run; a raised run may end as soon as its tasks are final
//   completions_in_registration_order  registration_order_completions: the member ends one iteration
//                          applies (a batch: Event::batch_start to the next) come in the order of the
//                          worker that ran each member, NEXT_LEVEL workers in registration order, then
//                          SUB workers by index (strictly: a worker ends one member per batch)
//   barrier_held           group_barrier: no single is dispatched while its run's group FIFO head is a
//                          group that turned READY between the passes (a between_passes batch, its ready
//                          event marked so) after a group pass that left no group in the FIFO, and that no
//                          group pass has looked at since (group_launched or group_blocked). With the
//                          switch off such a late head is exempt from head_keeps_targets and
//                          reservation_held until a group pass looks at it: a single may take its targets
//   staging rules (#1583), on a dispatch with prepare_only (a staging) and on activate:
//     staged_only_with_switch  nothing is staged with the switch off
//     staged_single          a staged task is a single (never a group, never SUB)
//     staged_not_remote      never on a remote worker
//     staged_two_frames      never on a worker with one frame
//     one_staged_per_run     at most one task of a run is ever staged
//     staged_frame_free      a worker holds one staged member at a time
//     staged_next_run        a staged task is of a run that is not the active one (whole_run_fifo)
//     activate_only_staged   activate starts a task staged on that worker, and a staged task starts
//                          only by its activate; the activation is a dispatch for every rule above
//                          (only_active_run_dispatches: its run is active by then)
// and at the end (finish) that every submitted task is terminal, or stuck for a stated reason; READY
// work that could still run on an idle worker is a violation (ready_work_left).
// A violation throws InvariantViolation with the event's seq, the rule, and the dump of the queues.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dirsched/error.hpp"
#include "dirsched/observer.hpp"
#include "dirsched/registry.hpp"
#include "dirsched/scheduler.hpp"

namespace dirsched {

struct Violation {
  std::uint64_t seq = 0;  // the event's position in the stream (events.jsonl seq)
  std::string rule;
  std::string detail;
  std::string dump;  // queues and tasks at that moment
};

// Kind kBadInput, the kind the CLI's table gave it as a std::runtime_error; the engines catch it and
// report the run as VIOLATION.
class InvariantViolation : public BadInput {
 public:
  explicit InvariantViolation(Violation v)
      : BadInput("invariant " + v.rule + " violated at event seq " + std::to_string(v.seq) + ": " + v.detail),
        violation(std::move(v)) {}
  Violation violation;
};

class InvariantChecker : public Observer {
 public:
  // `switches`: the run's (Scheduler::switches()); group_reservation adds reservation_held.
  explicit InvariantChecker(const Registry& registry, Switches switches = {});
  // Supplies the queue dump attached to a violation (e.g. [&]{ return scheduler.dump(); }).
  void set_dump(std::function<std::string()> dump) { dump_ = std::move(dump); }
  // Has this run's callback raised? Only asked for a run that emits no run events (the implicit run of
  // a driver that declares none); e.g. [&](RunId r) { return scheduler.run_info(r).raised; }. Without
  // it, a cancellation there is a violation.
  void set_run_raised(std::function<bool(RunId)> raised) { run_raised_ = std::move(raised); }
  void on_event(const Event& e) override;
  // Call when the run is over with what the driver reports stuck (Scheduler::stuck()): every task
  // this checker saw that is not terminal must be in the report, with a reason, and no READY work may
  // be left that an idle worker could still run.
  void finish(const std::vector<Stuck>& reported);
  std::uint64_t events_seen() const { return seq_; }

 private:
  // Names, targets and producers live in three flat pools (a task holds offsets), so copying a
  // checker (the explorer copies one per transition) costs a few allocations, not several per task.
  struct TaskModel {
    std::uint32_t name_begin = 0, name_size = 0;
    std::uint32_t targets_begin = 0, targets_size = 0;  // registration indices, in targets_pool_
    std::uint32_t producers_begin = 0, producers_size = 0;
    TaskKind kind = TaskKind::kSingle;
    TaskState state = TaskState::kPending;
    std::uint32_t members = 1;
    std::uint32_t dispatched = 0;
    std::uint32_t ended = 0;
    bool routed = false;
    std::uint32_t run = 0;  // RunId index
    // A group that turned READY between the passes and no group pass looked at yet; `after_clear_pass`:
    // no group of its run was ahead of it then (the group pass had left none: the barrier applies).
    bool late = false;
    bool after_clear_pass = false;
    bool staged = false;  // staging: on a worker's second frame, not yet activated
  };
  template <typename T>
  struct View {
    const T* data;
    std::uint32_t count;
    const T* begin() const { return data; }
    const T* end() const { return data + count; }
    bool empty() const { return count == 0; }
    const T& operator[](std::size_t i) const { return data[i]; }
  };
  std::string name_of(const TaskModel& t) const { return names_pool_.substr(t.name_begin, t.name_size); }
  View<std::uint32_t> targets_of(const TaskModel& t) const {
    return {targets_pool_.data() + t.targets_begin, t.targets_size};
  }
  View<TaskId> producers_of(const TaskModel& t) const {
    return {producers_pool_.data() + t.producers_begin, t.producers_size};
  }
  [[noreturn]] void fail(const std::string& rule, const std::string& detail) const;
  TaskModel& task(TaskId id);
  std::string worker_name(std::uint32_t index) const;
  bool all_idle(const TaskModel& g) const;
  bool raised(std::uint32_t run) const;  // its run_raise was seen, or run_raised_ says so
  void check_staging(const Event& e, TaskModel& t, const std::string& who);  // a prepare_only dispatch
  std::uint32_t active_run() const;       // whole_run_fifo: the lowest run index not ended
  TaskId group_head(std::uint32_t run) const;  // the group FIFO head (of `run`'s groups, whole_run_fifo)
  void fifo_push(TaskId group);                // a group turned READY
  void fifo_left(std::uint32_t run);           // a group of `run` left READY (launched or cancelled)

  const Registry& registry_;
  Switches switches_;
  std::function<std::string()> dump_;
  std::function<bool(RunId)> run_raised_;
  std::vector<std::uint32_t> raised_runs_;  // runs whose run_raise was seen (RunId indices)
  std::vector<bool> ended_runs_;            // per RunId index: its run_end was seen
  std::uint64_t seq_ = 0;
  std::vector<TaskModel> tasks_;
  std::string names_pool_;
  std::vector<std::uint32_t> targets_pool_;
  std::vector<TaskId> producers_pool_;
  std::vector<TaskId> nl_busy_;     // per NEXT_LEVEL worker: the task running there, or invalid
  std::vector<TaskId> sub_busy_;    // per SUB worker
  // The group FIFO: READY groups not yet launched, in READY order; one queue, or one per run with
  // whole_run_fifo. Each queue is a list threaded through group_fifo_ by index. A group leaves by its
  // state (launched, cancelled) and is unlinked once it reaches its queue's front, so a launch, a
  // cancel and group_head() cost O(1) amortised (a vector erased at each launch was quadratic).
  struct FifoEntry {
    TaskId group;
    std::uint32_t next;  // the queue's next entry, or kNoEntry
  };
  static constexpr std::uint32_t kNoEntry = UINT32_MAX;
  // Queue 0 without whole_run_fifo; with it, run r's is r + 1 and 0 is that of events naming no run.
  std::uint32_t queue_of(std::uint32_t run) const {
    return !switches_[Switch::kWholeRunFifo] || run == RunId::kInvalid ? 0 : run + 1;
  }
  std::vector<FifoEntry> group_fifo_;                 // cleared whenever no group is READY
  std::vector<std::uint32_t> fifo_head_, fifo_tail_;  // per queue: a READY group's entry, or kNoEntry
  std::size_t fifo_ready_ = 0;                        // READY groups in all queues
  std::vector<TaskId> nl_staged_;   // staging: per NEXT_LEVEL worker, the member on its second frame
  std::vector<std::uint32_t> staged_runs_;  // staging: runs that had a task staged (RunId indices)
  std::uint64_t batch_last_ = 0;    // registration_order_completions: the last end's worker position
  TaskId launching_;                // group whose members must be dispatched next
  std::uint32_t launching_next_ = 0;
};

}  // namespace dirsched
