// A small driver for core tests: virtual time, fixed member durations, no SimGrid.
//
// It plays the role the SimGrid actors play in `sim/`: it carries out the core's dispatches, lets
// each member run for the duration the test gave it, and reports completions at their instant in the
// instant's order (Scheduler::report_instant: dispatch order, or by worker under
// registration_order_completions), then runs the iterations of that instant (run_instant). Members of
// zero duration end at once: those of one iteration are reported together the same way, for the next
// iteration. Every op (submit_*, batch) is followed by the scheduler's iterations, as the contract
// notes require.
#pragma once

#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dirsched/invariants.hpp"
#include "dirsched/recorder.hpp"
#include "dirsched/scheduler.hpp"

namespace dirsched::testing {

// Options with the given ladder switches on, every other switch off (the seed's runtime).
inline Scheduler::Options with(std::initializer_list<Switch> on) {
  Scheduler::Options o;
  for (Switch s : on) o.switches.set(s, true);
  return o;
}

// Records the event stream as short strings, e.g. "ready a worker:3", "dispatch g[1]@5".
class EventTrace : public Observer {
 public:
  void on_event(const Event& e) override;
  std::vector<std::string> lines;
  std::vector<Event> events;  // copies; pointer fields are cleared
};

struct Builder {
  Registry registry;
  // `frames`: 1 (default) or 2 (staging, #1583).
  Builder& chip(std::int64_t id, std::uint32_t frames = 1) {
    registry.add_next_level(WorkerId(id), WorkerKind::kLocalChip, frames);
    return *this;
  }
  Builder& local(std::int64_t id, std::uint32_t frames = 1) {
    registry.add_next_level(WorkerId(id), WorkerKind::kLocalWorker, frames);
    return *this;
  }
  Builder& remote(std::int64_t id) {
    registry.add_next_level(WorkerId(id), WorkerKind::kRemote);
    return *this;
  }
  Builder& sub(std::uint32_t n) {
    registry.set_sub_workers(n);
    return *this;
  }
};

class FakeDriver {
 public:
  // Adds callables "chip" (LOCAL_CHIP), "py" (LOCAL_PYTHON) and "rpc" (REMOTE, every remote worker).
  explicit FakeDriver(Builder builder, Scheduler::Options options = {});
  FakeDriver(const FakeDriver&) = delete;  // observers hold pointers into the driver
  FakeDriver& operator=(const FakeDriver&) = delete;

  Scheduler& core() { return *core_; }
  // Another observer of the core's events, after the driver's own (add it before the first op).
  void observe(Observer* observer) { observers_.add(observer); }
  const Recorder& recorder() const { return *recorder_; }
  Recorder& recorder() { return *recorder_; }
  CallableId chip() const { return chip_; }
  CallableId py() const { return py_; }
  CallableId rpc() const { return rpc_; }
  CallableId add_remote_callable(std::string name, std::vector<WorkerId> eligible);
  BufferId buffer(const std::string& name, Memory memory = Memory::kHost, std::optional<WorkerId> owner = {});
  static Arg in(BufferId b) { return {b, Tag::kInput}; }
  static Arg out(BufferId b) { return {b, Tag::kOutput}; }
  static Arg inout(BufferId b) { return {b, Tag::kInOut}; }

  // Duration and failure of a task's members (default 1.0 s, success). Set before the dispatch.
  void duration(const std::string& task, double seconds) { durations_[task] = {seconds}; }
  void durations(const std::string& task, std::vector<double> seconds) {
    durations_[task] = std::move(seconds);
  }
  void fail(const std::string& task, std::uint32_t member = 0) { failures_[task].push_back(member); }

  // Ops: each submit is followed by the scheduler's iterations at the current instant.
  SubmitResult single(const std::string& name, std::int64_t worker, std::vector<Arg> args = {},
                      CallableId callable = CallableId());
  SubmitResult group(const std::string& name, std::vector<std::int64_t> workers,
                     std::vector<std::vector<Arg>> args = {}, CallableId callable = CallableId());
  SubmitResult sub(const std::string& name, std::vector<Arg> args = {});
  SubmitResult sub_group(const std::string& name, std::size_t members);
  SubmitResult submit(const SubmitRequest& request);  // raw, then iterate
  // Submits every request before the scheduler looks, then iterates.
  std::vector<SubmitResult> batch(const std::vector<SubmitRequest>& requests);
  // A between_passes batch: the requests land inside the next iteration, after its group pass and
  // before its singles pass (Scheduler::land_between_passes); the scheduler iterates at once.
  std::vector<SubmitResult> between_passes(const std::vector<SubmitRequest>& requests);
  SubmitRequest single_request(const std::string& name, std::int64_t worker,
                               std::vector<Arg> args = {}) const;
  SubmitRequest group_request(const std::string& name, std::vector<std::int64_t> workers) const;

  // The open callback raises now (Scheduler::raise_run); when the core cancelled tasks
  // (run_cancellation) or the raise woke a parked loop (edge_triggered_wake), the scheduler iterates
  // at this instant, as the replay does. Returns how many were cancelled.
  std::size_t raise(const std::string& message);
  // The open callback returns (end_run) or raises and returns; when that promoted the next run
  // (whole_run_fifo) or woke a parked loop (edge_triggered_wake), the scheduler iterates at this
  // instant, as the replay does.
  void end_run();
  std::size_t raise_and_end(const std::string& message);

  // Advances to the next instant with completions due; false when nothing is running.
  bool step();
  // Advances until the given time (completions up to and including it are applied).
  void advance_to(double t);
  void run();  // until nothing runs
  double now() const { return now_; }

  // Dispatches so far, "task@worker", "task[m]@worker", "task@subN"; staging (#1583): a staging is
  // "task@worker staged" (nothing starts) and its activation "task@worker activated" (it starts then).
  const std::vector<std::string>& dispatches() const { return dispatches_; }
  std::vector<std::string> dispatches_since(std::size_t from) const {
    return {dispatches_.begin() + static_cast<std::ptrdiff_t>(from), dispatches_.end()};
  }
  const EventTrace& trace() const { return trace_; }
  TaskState state(const std::string& name) const;
  std::size_t iterations() const { return iterations_; }

 private:
  struct Running {
    double end;
    std::uint64_t seq;
    TaskId task;
    std::uint32_t member;
    Outcome outcome;
  };
  void settle();
  void observe();
  void carry_out(const std::vector<Dispatch>& dispatches);

  Scheduler::Options options_;
  std::unique_ptr<Scheduler> core_;
  std::unique_ptr<Recorder> recorder_;
  std::unique_ptr<InvariantChecker> checker_;  // on in every core test: a violation throws
  EventTrace trace_;
  ObserverList observers_;
  CallableId chip_, py_, rpc_;
  std::map<std::string, std::vector<double>> durations_;
  std::map<std::string, std::vector<std::uint32_t>> failures_;
  std::vector<Running> running_;
  std::vector<std::string> dispatches_;
  double now_ = 0;
  std::size_t iterations_ = 0;
};

}  // namespace dirsched::testing
