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
#pragma once

#include <cstdint>
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
  std::optional<ErrorCode> code;  // REJECTED
  std::string message;            // REJECTED / NOT_SUBMITTED reason
  std::string cause;              // POISONED: the failed task
  std::vector<std::string> producers;
  std::vector<MemberRun> members;
  // Groups only.
  double idle_target_s = 0;
  std::vector<std::string> overtaken_by;  // singles, in dispatch order
};

struct WaitStats {
  std::size_t count = 0;
  double p50 = 0, p95 = 0, max = 0, mean = 0;
};

class Recorder : public Observer {
 public:
  explicit Recorder(const Registry& registry);
  void on_event(const Event& e) override;
  void reserve(std::size_t tasks) { tasks_.reserve(tasks); }

  const std::vector<TaskRecord>& tasks() const { return tasks_; }
  const TaskRecord* find(std::string_view name) const;
  // Busy seconds per NEXT_LEVEL worker (registration order) and per SUB worker.
  const std::vector<double>& next_level_busy() const { return nl_busy_; }
  const std::vector<double>& sub_busy() const { return sub_busy_; }
  // Waits from READY to dispatch, keyed "worker:ID", "group", "sub" (sorted by key).
  std::map<std::string, WaitStats> queue_waits() const;
  double last_transition() const { return last_transition_; }
  std::uint64_t event_count() const { return events_; }

 private:
  struct Waiting {
    std::size_t record;
    std::uint32_t idle_targets;
    double since;  // last time idle_targets changed
  };
  TaskRecord& record_for(const Event& e);
  void worker_changed(std::uint32_t index, bool busy, double t);

  const Registry& registry_;
  std::vector<TaskRecord> tasks_;
  std::vector<std::size_t> by_task_;  // TaskId -> record
  // Built by the first find() (and again after new records), not per event: a run that never looks a
  // name up pays nothing for it. Not safe against concurrent find() calls.
  mutable std::vector<std::size_t> by_name_;
  std::vector<double> nl_busy_, sub_busy_;
  std::vector<bool> nl_is_busy_;
  std::map<std::uint32_t, std::vector<std::size_t>> waiting_on_;  // worker index -> waiting records
  std::map<std::size_t, Waiting> waiting_;                        // record -> state
  std::map<std::string, std::vector<double>> waits_;
  double last_transition_ = 0;
  std::uint64_t events_ = 0;
};

}  // namespace dirsched
