// Every transition the core makes, reported as data to an observer.
//
// The core never prints or records anything itself: the event log, statistics, invariant checks and
// pictures are observers. Events arrive synchronously, in the order the transitions happen, each
// stamped with the time the driver last passed to Scheduler::set_time(). Fields that an event kind
// does not use keep their defaults. Pointers and views inside an Event are valid only during the call.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "dirsched/errors.hpp"
#include "dirsched/ids.hpp"
#include "dirsched/task.hpp"

namespace dirsched {

enum class EventKind : std::uint8_t {
  kSubmit,            // accepted: task, kind, targets, deps
  kReject,            // refused: name, code, message (no TaskId)
  kPending,           // producers
  kReady,             // queue
  kDispatch,          // member, target
  kMemberEnd,         // member, target, outcome
  kComplete,          //
  kFail,              // member (the first member failure)
  kPoison,            // cause (the task whose failure poisoned this one)
  kNotSubmitted,      // name (no TaskId)
  kGroupBlocked,      // the group FIFO head could not launch: busy targets
  kGroupLaunched,     // the group FIFO head launched
  kGroupStall,        // seed: the same group has been the blocked head for stall_report_s
  kReservationStall,  // head_reservation: a reservation held an idle, queued target stall_report_s
  // Run events (no task: `run` and `name` = the run's name). Never for the implicit run of a driver
  // that declares no run (Scheduler::add_run), so such a driver sees exactly the events above.
  kRunRaise,  // the run's callback raised: message
  kRunEnd,    // the run turned terminal: run_failed says FAILED, else COMPLETED
  // run_cancellation (#1541): a PENDING or READY task of a run whose callback raised; message = the
  // run's error (its cause). A task event (it has a TaskId), last so that the values above keep theirs.
  kCancel,
  // staging (#1583): a staged member starts on its worker, in the first iteration in which its run is
  // active (before the staging pass): member, target. Its staging was a kDispatch with prepare_only.
  kActivate,
};
constexpr bool is_run_event(EventKind k) { return k == EventKind::kRunRaise || k == EventKind::kRunEnd; }

std::string_view to_string(EventKind kind);  // the event names of events.jsonl

enum class QueueKind : std::uint8_t { kWorker, kGroup, kSub };

// Where a member runs: a NEXT_LEVEL worker (by id) or a SUB worker (by pool index).
struct Target {
  bool sub = false;
  WorkerId worker{0};
  std::uint32_t sub_index = 0;
};

// One INPUT / INOUT argument that found a producer in the tensor map (live, completed or failed).
struct Dependency {
  TaskId producer;
  BufferId buffer;
};

struct Event {
  explicit Event(EventKind k) : kind(k) {}
  EventKind kind;
  double t = 0;
  TaskId task;                             // invalid for kReject, kNotSubmitted and run events
  // The task's name (a run event: the run's name), always set for an observer; read it within
  // on_event (a name that counts up is written for each event: Scheduler::name() gives a copy).
  std::string_view name;
  RunId run;                               // the run of the task or op (every event); see Scheduler::add_run
  std::string_view message;                // kRunRaise: the raise's message; kCancel: the run's error
  bool run_failed = false;                 // kRunEnd: the run's outcome is FAILED
  bool callback_raised = false;            // kNotSubmitted: the op came after its callback raised
  TaskKind task_kind = TaskKind::kSingle;  // how the task is scheduled
  // The submit op that made it (kGroup: submit_next_level_group, ...). It differs from task_kind only
  // for a group of one member, which is scheduled as a single (docs/contract.md).
  TaskKind op_kind = TaskKind::kSingle;
  std::uint32_t member = 0;
  std::uint32_t member_count = 0;  // every event with a TaskId
  Target target;                   // kDispatch, kMemberEnd
  Outcome outcome = Outcome::kSuccess;
  // kMemberEnd: the first end one iteration applies. The ends an iteration applies are one batch the
  // driver reported together (Scheduler::report_instant: one instant's ends, or those that came due
  // at once after an iteration), in the instant's order; the next batch starts at the next such end.
  bool batch_start = false;
  QueueKind queue = QueueKind::kWorker;  // kReady; with queue_worker for kWorker
  WorkerId queue_worker{0};
  TaskId cause;                                        // kPoison
  const std::vector<TaskId>* producers = nullptr;      // kPending
  const std::vector<Dependency>* deps = nullptr;       // kSubmit: every producer found, with its buffer
  const std::vector<WorkerId>* workers = nullptr;      // kSubmit (targets), kGroupBlocked and stalls (busy)
  const std::vector<WorkerId>* idle_queued = nullptr;  // kReservationStall: reserved, idle, work queued
  double waited_s = 0;                                 // stalls: how long the group has been the blocked head
  const Rejection* rejection = nullptr;                // kReject, kNotSubmitted (the run's error)
  std::uint64_t dispatch_seq = 0;                      // kDispatch, kActivate: global dispatch order
  // kDispatch: a staging (staging, #1583): the member takes the worker's second frame and does not run
  // until its kActivate. The worker stays idle or busy as before.
  bool prepare_only = false;
  // Emitted while a between_passes batch landed (Scheduler::land_between_passes): between the group
  // pass and the singles pass of an iteration. Any kind (submit, ready, reject, ...).
  bool between_passes = false;
};

// An observer is told of each transition while the core makes it: it may read the core (the Recorder
// and the wait attribution read names, kinds and targets), never change it. The core keeps references
// into its tables across an event (Scheduler::apply), which a submit from an observer could move.
class Observer {
 public:
  virtual ~Observer() = default;
  virtual void on_event(const Event& event) = 0;
};

// Fans one event stream out to several observers, in the order they were added.
class ObserverList : public Observer {
 public:
  void add(Observer* observer) { observers_.push_back(observer); }
  void on_event(const Event& event) override {
    for (Observer* o : observers_) o->on_event(event);
  }

 private:
  std::vector<Observer*> observers_;
};

}  // namespace dirsched
