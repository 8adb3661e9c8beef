#include "dirsched/threads_engine.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "dirsched/jitter.hpp"
#include "dirsched/replay.hpp"
#include "dirsched/runtime.hpp"

namespace dirsched {

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// The scenario's trace on the scheduler thread. Replay keeps scenario seconds; the runtime's clock is
// wall seconds, `scale` times as many.
class ScenarioOrchestrator : public Orchestrator {
 public:
  ScenarioOrchestrator(Replay& replay, double scale) : replay_(replay), scale_(scale) {}

  double next_time(const Scheduler&) const override {
    if (!replay_.next() || !replay_.next_enabled()) return kNever;
    const double start = replay_.earliest_start();
    // An op that may start when the last one returned runs in the same instant (as on SimGrid), not
    // a rounding error later.
    if (start <= last_replay_now_) return last_now_;
    return start * scale_;
  }
  bool run_next(Scheduler&, double now) override {
    last_now_ = now;
    last_replay_now_ = scale_ > 0 ? now / scale_ : replay_.earliest_start();
    return replay_.run_next(last_replay_now_);
  }

 private:
  Replay& replay_;
  double scale_;
  double last_now_ = 0, last_replay_now_ = 0;
};

}  // namespace

void check_threads_engine(const Scenario& s) {
  auto refuse = [&](const std::string& path, const std::string& what) {
    throw ScenarioError(
        s.file, path,
        what + " needs the simulated platform: the threads engine cannot run it (use --engine sim)");
  };
  for (const FaultSpec& f : s.faults) refuse(f.path, f.host.empty() ? "a link fault" : "a host fault");
  for (const CallableSpec& c : s.callables) {
    const std::string path = "callables." + c.name;
    if (c.cost.flops) refuse(path + ".flops", "a cost in flops");
    if (c.cost.input_bytes > 0) refuse(path + ".input_bytes", "a transfer cost");
    if (c.cost.output_bytes > 0) refuse(path + ".output_bytes", "a transfer cost");
    if (c.cost.collective.kind != Collective::Kind::kNone) refuse(path + ".collective", "a collective (transfers)");
  }
  for (std::size_t i = 0; i < s.next_level.size(); ++i)
    if (s.next_level[i].prepare_overlap)
      refuse("workers.next_level[" + std::to_string(i) + "].prepare_overlap", "a preparation overlapping a run");
  if (s.switches[Switch::kMpiGroupLane] && !s.mpi_groups.empty())
    refuse("workers.mpi_groups", "one request at a time per MPI group (mpi_group_lane)");
  if (s.iteration_cost_s > 0) refuse("scheduler.iteration_cost_s", "a simulated scheduler cost");
  if (s.dispatch_cost_s > 0) refuse("scheduler.dispatch_cost_s", "a simulated scheduler cost");
  if (s.any_dispatch_cost_by_kind()) refuse("scheduler.dispatch_cost_by_kind_s", "a simulated scheduler cost");
}

std::unique_ptr<Run> run_threads(const Scenario& scenario, const ThreadsOptions& options) {
  check_threads_engine(scenario);
  auto run = std::make_unique<Run>(scenario);
  const std::uint64_t seed = options.seed.value_or(scenario.seed);
  run->result.seed = seed;
  run->result.engine = "threads";
  run->result.time_scale = options.time_scale;
  for (const WorkerSpec& w : scenario.next_level) run->result.host_of_worker.push_back(w.host);

  // The core's options from the one factory; its one duration, the stall report's, is in wall
  // seconds here like every other time.
  Scheduler::Options core_options = scheduler_options(scenario);
  if (options.time_scale > 0) core_options.stall_report_s *= options.time_scale;
  run->core = std::make_unique<Scheduler>(scenario.registry(), core_options);
  // The memory rule, the tasks.csv stream and the observers, as on every engine (RunOutputs). All of it
  // runs on the runtime's scheduler thread, inside the core's calls; the worker threads never read the
  // core (a MemberCall carries copies: the task's name, the duration, the failure flag).
  RunOutputs outputs(*run, options);
  const bool keep_order = outputs.keep_order();
  Replay replay(scenario, *run->core);

  // Every callable sleeps its member's duration, then reports what the scenario says: the context
  // points at kFails or is null. The member's duration and failure come from the replay, which reads
  // them from the trace or, for a `generate` block (no ops kept), knows there are none.
  static constexpr bool kFails = true;
  const double scale = options.time_scale;
  CallableTable table;
  for (const CallableSpec& c : scenario.callables)
    table.add(c.name, [scale](const MemberCall& call) {
      if (call.value > 0 && scale > 0)
        std::this_thread::sleep_for(std::chrono::duration<double>(call.value * scale));
      return call.context == nullptr;
    });
  Runtime::Options ro;
  ro.prepare = [&](const Dispatch& d, MemberCall& call) {
    const CallableSpec& c = scenario.callables[run->core->callable(d.task).index()];
    call.context = replay.member_fails(d.task, d.member) ? &kFails : nullptr;
    call.value = draw_cost(c.cost, replay.member_duration(d.task, d.member),  // the draws of SimGrid's
                           MemberDraws(seed, replay.task_key(d.task), d.member))
                     .seconds.value_or(0.0);
    call.value += replay.member_prepare(d.task, d.member);  // its preparation, then its duration
    ++run->result.dispatches;
    if (keep_order) run->result.dispatch_order.push_back(dispatch_label(*run->core, d));
    if (d.prepare_only) note_staging(*run, d);
  };
  Runtime runtime(*run->core, std::move(table), std::move(ro));
  ScenarioOrchestrator orchestrator(replay, scale);
  const auto wall_start = std::chrono::steady_clock::now();
  try {
    runtime.run(orchestrator);
  } catch (const InvariantViolation& v) {
    run->result.violation = v.violation;  // the run stops here, as on SimGrid
  }
  finish_result(*run, replay, outputs.checker());
  if (!replay.trace_error().empty()) {  // a streamed trace file changed under the run
    outputs.detach();
    throw ScenarioError(scenario.file, "", replay.trace_error());
  }
  run->result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  outputs.finish();
  return run;
}

}  // namespace dirsched
