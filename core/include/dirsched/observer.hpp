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
  kSubmit,         // accepted: task, kind, targets, deps
  kReject,         // refused: name, code, message (no TaskId)
  kPending,        // producers
  kReady,          // queue
  kDispatch,       // member, target
  kMemberEnd,      // member, target, outcome
  kComplete,       //
  kFail,           // member (the first member failure)
  kPoison,         // cause (the task whose failure poisoned this one)
  kNotSubmitted,   // name (no TaskId)
  kGroupBlocked,   // the group FIFO head could not launch: busy targets
  kGroupLaunched,  // the group FIFO head launched
};

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
  TaskId task;                             // invalid for kReject and kNotSubmitted
  std::string_view name;                   // the task's name, always set
  TaskKind task_kind = TaskKind::kSingle;  // how the task is scheduled
  // The submit op that made it (kGroup: submit_next_level_group, ...). It differs from task_kind only
  // for a group of one member, which is scheduled as a single (docs/contract.md).
  TaskKind op_kind = TaskKind::kSingle;
  std::uint32_t member = 0;
  std::uint32_t member_count = 0;  // every event with a TaskId
  Target target;                   // kDispatch, kMemberEnd
  Outcome outcome = Outcome::kSuccess;
  QueueKind queue = QueueKind::kWorker;  // kReady; with queue_worker for kWorker
  WorkerId queue_worker{0};
  TaskId cause;                                    // kPoison
  const std::vector<TaskId>* producers = nullptr;  // kPending
  const std::vector<Dependency>* deps = nullptr;   // kSubmit: every producer found, with its buffer
  const std::vector<WorkerId>* workers = nullptr;  // kSubmit (targets), kGroupBlocked (busy ones)
  const Rejection* rejection = nullptr;            // kReject, kNotSubmitted (the run's error)
  std::uint64_t dispatch_seq = 0;                  // kDispatch, kMemberEnd: global dispatch order
};

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
