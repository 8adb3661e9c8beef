// Recorder: an observer that keeps a run's history as plain data, for summaries, CSV and pictures.
//
// It keeps one record per task name in first-seen order (submit, reject or not_submitted), with its
// times and member runs, per-worker busy time, and the queue waits (READY to dispatch, per queue).
// For every group it measures the starvation the contract notes describe:
// - ready_wait: READY to launch;
// - idle_target_s: the part of that wait during which at least one of its targets sat idle;
// - overtakes: singles dispatched on one of its targets while it waited.
// These are kept incrementally: a waiting group is touched only when one of its own targets changes
// between busy and idle, so the cost does not grow with unrelated workers.
//
// Retirement: a record is retired once it and every record before it are terminal (no later event
// can touch it). Retiring counts its final state, passes it to on_retire (tasks.csv is written so, in
// record order, as the run goes) and, unless keep_records, drops it: only a group's record stays (the
// summary lists every group), and the queue waits (one double per dispatched task, for the exact
// percentiles). Memory then follows the window from the oldest unfinished task to the newest, not the
// length of the trace. finish() retires the rest at the end of the run, whatever their state.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dirsched/observer.hpp"
#include "dirsched/registry.hpp"

namespace dirsched {

struct MemberRun {
  Target target;
  double start = -1;
  double end = -1;  // -1 while running
  Outcome outcome = Outcome::kSuccess;
};

struct TaskRecord {
  std::string name;
  TaskKind kind = TaskKind::kSingle;
  TaskState state = TaskState::kPending;
  std::vector<WorkerId> workers;  // NEXT_LEVEL targets, member order
  double submit = -1, ready = -1, start = -1, end = -1;
  std::optional<ErrorCode> code;       // REJECTED
  std::string message;                 // REJECTED / NOT_SUBMITTED reason
  std::string cause;                   // POISONED: the failed task (kept only with keep_records)
  TaskId task;                         // invalid for a rejection or a not-submitted op
  std::vector<std::string> producers;  // kept only with keep_records (no output reads them)
  std::vector<MemberRun> members;
  // Groups only.
  double idle_target_s = 0;
  std::vector<std::string> overtaken_by;  // singles, in dispatch order
};

// One stall report (group_stall or reservation_stall), as the core emitted it.
struct StallRecord {
  std::string task;
  EventKind kind = EventKind::kGroupStall;
  double t = 0;
  double waited_s = 0;
  std::vector<WorkerId> busy;
  std::vector<WorkerId> idle_queued;  // reservation_stall only
};

struct WaitStats {
  std::size_t count = 0;
  double p50 = 0, p95 = 0, max = 0, mean = 0;
};

class Recorder : public Observer {
 public:
  explicit Recorder(const Registry& registry);
  void on_event(const Event& e) override;
  void reserve(std::size_t tasks) { by_task_.reserve(tasks); }
  // Keep every record for the whole run (the default: find(), tasks() and tests read them). Off, a
  // retired record is dropped (see above). Set before the first event.
  void set_keep_records(bool keep) { keep_ = keep; }
  // Called with each record as it retires, in record order.
  void set_on_retire(std::function<void(const TaskRecord&)> sink) { on_retire_ = std::move(sink); }
  // Retires every record not yet retired (the end of the run).
  void finish();

  // The records held: every record with keep_records, else those not yet retired.
  const std::deque<TaskRecord>& tasks() const { return tasks_; }
  // Records ever made, and those not yet retired.
  std::size_t record_count() const { return first_ + tasks_.size(); }
  std::size_t live_records() const { return record_count() - retired_; }
  // Records by final (or, not yet retired, current) state.
  std::map<TaskState, std::size_t> state_counts() const;
  // Every group record, in record order.
  std::vector<const TaskRecord*> groups() const;
  // READY-to-start waits of NEXT_LEVEL singles and groups (a task that never started waited until
  // `makespan`), in no particular order.
  void ready_waits(double makespan, std::vector<double>& singles, std::vector<double>& groups) const;
  // By name, among the records held (all of them with keep_records).
  const TaskRecord* find(std::string_view name) const;
  // Busy seconds per NEXT_LEVEL worker (registration order) and per SUB worker.
  const std::vector<double>& next_level_busy() const { return nl_busy_; }
  const std::vector<double>& sub_busy() const { return sub_busy_; }
  // Waits from READY to dispatch, keyed "worker:ID", "group", "sub" (sorted by key).
  std::map<std::string, WaitStats> queue_waits() const;
  // Stall reports in the order they were emitted. They change no state and are not transitions.
  const std::vector<StallRecord>& stalls() const { return stalls_; }
  double last_transition() const { return last_transition_; }
  std::uint64_t event_count() const { return events_; }

 private:
  struct Waiting {
    std::size_t record;
    std::uint32_t idle_targets;
    double since;  // last time idle_targets changed
  };
  TaskRecord& record_for(const Event& e);
  TaskRecord& record(std::size_t n);
  void worker_changed(std::uint32_t index, bool busy, double t);
  void retire_one();
  void retire_terminal();

  const Registry& registry_;
  bool keep_ = true;
  std::function<void(const TaskRecord&)> on_retire_;
  std::deque<TaskRecord> tasks_;        // records first_ on
  std::size_t first_ = 0;               // record number of tasks_.front()
  std::size_t retired_ = 0;             // records before this one are retired
  std::vector<std::uint32_t> by_task_;  // TaskId -> record number
  std::map<TaskState, std::size_t> retired_states_;
  std::vector<TaskRecord> retired_groups_;                  // without keep_records
  std::vector<double> unstarted_single_, unstarted_group_;  // retired READY tasks that never started
  // Built by the first find() (and again after new records), not per event: a run that never looks a
  // name up pays nothing for it. Not safe against concurrent find() calls.
  mutable std::vector<std::size_t> by_name_;  // positions in tasks_
  mutable std::size_t by_name_first_ = 0;     // first_ when by_name_ was built
  std::vector<double> nl_busy_, sub_busy_;
  std::vector<bool> nl_is_busy_;
  std::map<std::uint32_t, std::vector<std::size_t>> waiting_on_;  // worker index -> waiting records
  std::map<std::size_t, Waiting> waiting_;                        // record -> state
  // READY-to-dispatch waits per queue: each NEXT_LEVEL worker's FIFO (registration order), groups, SUB.
  std::vector<std::vector<double>> nl_waits_;
  std::vector<double> group_waits_, sub_waits_;
  std::vector<StallRecord> stalls_;
  double last_transition_ = 0;
  std::uint64_t events_ = 0;
};

}  // namespace dirsched
