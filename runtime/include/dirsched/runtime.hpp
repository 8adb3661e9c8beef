// The Scheduler core on real threads, shaped like the runtime's own loop.
//
// Threads:
// - one scheduler thread (started by run()) owns the core: every submit, report, iterate and query
//   happens there, so the core needs no lock. The Orchestrator (the driver's replay of its workload)
//   runs on it too, as in the SimGrid driver, which keeps the instant order exact;
// - one thread per NEXT_LEVEL worker and one per SUB worker. A worker has a one-job mailbox (the core
//   keeps a worker busy from its dispatch until its completion is applied, so one slot is enough),
//   runs the member's callable with no lock held, and pushes the member end into the completion queue.
//
// The loop of the scheduler thread, until the orchestrator has nothing left and nothing runs:
//   1. wait on the completion queue (one mutex, one condition variable, level-triggered: the
//      predicate is "the queue is not empty", not a notification) until an end arrives or the
//      orchestrator's next op or the core's stall deadline is due;
//   2. take every end in the queue at once: they form one instant, applied by complete_instant() in
//      the instant's order (dispatch order, Dispatch::seq; by worker under the switch
//      registration_order_completions), whatever order the threads pushed them in; each iteration's
//      dispatches go to the workers' mailboxes;
//   3. run the orchestrator's ops that are due, one at a time, each followed by the iterations of the
//      instant (run_instant).
// Time is wall-clock seconds since run() started; it stamps the core's events (set_time()).
//
// Members run as registered callables (CallableTable: name -> std::function), looked up once by the
// registry's callable name when the Runtime is built. A callable that returns false or throws is a
// member failure and takes the core's failure path (fail-fast, poisoning of dependents).
//
// Shutdown: run() returns only after every thread it started has been joined. If the scheduler thread
// stops on an exception (a CoreError, an observer's InvariantViolation, an orchestrator error), it
// stops dispatching, waits for the members already running to return, joins the workers and rethrows
// the exception from run(). A running callable is never interrupted.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dirsched/error.hpp"
#include "dirsched/scheduler.hpp"

namespace dirsched {

// What a callable learns about the member it runs. Filled on the scheduler thread at dispatch; the
// callable reads it on its worker thread.
struct MemberCall {
  TaskId task;
  std::uint32_t member = 0;
  Target target;
  std::uint64_t seq = 0;  // Dispatch::seq
  std::string task_name;
  // The driver's data for this member (Runtime::Options::prepare); immutable while the run lasts.
  const void* context = nullptr;
  double value = 0;
  // When the scheduler thread put the job in the worker's mailbox (for dispatch latency figures).
  std::chrono::steady_clock::time_point handed_at;
};

// true: the member succeeded; false or an exception: it failed.
using MemberFn = std::function<bool(const MemberCall&)>;

// Thrown by the Runtime's constructor for a configuration it cannot run (a callable with no function), and
// by run() when the system cannot start its threads; bad input (kBadInput).
class RuntimeError : public BadInput {
 public:
  using BadInput::BadInput;
};

class CallableTable {
 public:
  // Throws RuntimeError when `name` is already registered.
  void add(std::string name, MemberFn fn);
  const MemberFn* find(std::string_view name) const;

 private:
  std::map<std::string, MemberFn, std::less<>> fns_;
};

// The driver's workload, replayed on the scheduler thread. Times are the runtime's (wall seconds).
class Orchestrator {
 public:
  virtual ~Orchestrator() = default;
  // When the next op may run; infinity when there is none or it waits for the core (a drain).
  virtual double next_time(const Scheduler& core) const = 0;
  // Runs the next op at `now`. Returns true when it submitted something (the scheduler must look).
  virtual bool run_next(Scheduler& core, double now) = 0;
};

// A member that failed by an exception, with its message (returning false leaves no message).
struct MemberFailure {
  TaskId task;
  std::uint32_t member = 0;
  std::string message;
};

class Runtime {
 public:
  struct Options {
    // Called on the scheduler thread for every dispatch, before the job goes to its worker: the driver
    // fills MemberCall::context and ::value (e.g. the scenario op and the member's duration).
    std::function<void(const Dispatch&, MemberCall&)> prepare;
  };

  // Throws RuntimeError when a callable of the core's registry has no function in `callables`, or when
  // mpi_group_lane is on with MPI groups registered (the lane is the simulated engines' only). Starts
  // no thread: run() does.
  Runtime(Scheduler& core, CallableTable callables, Options options);
  Runtime(Scheduler& core, CallableTable callables) : Runtime(core, std::move(callables), Options{}) {}
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Runs `orchestrator` to its end on a new scheduler thread, with the worker threads, and joins them
  // all. Returns when the orchestrator has no op it can run and no member is running. Rethrows what
  // stopped the scheduler thread. Call once.
  void run(Orchestrator& orchestrator);

  // Member ends pushed and not yet taken by the scheduler thread (thread-safe; for tests).
  std::size_t queued_completions() const;
  // Seconds since run() started, on the runtime's clock (thread-safe).
  double now() const;
  // After run(): members that failed by an exception, in the order their ends arrived.
  const std::vector<MemberFailure>& failures() const { return failures_; }
  std::size_t worker_threads() const;

 private:
  struct Impl;
  Scheduler& core_;
  std::unique_ptr<Impl> impl_;
  std::vector<MemberFailure> failures_;
};

}  // namespace dirsched
