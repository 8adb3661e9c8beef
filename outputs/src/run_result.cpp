// How every engine ends a run: one RunResult from the core, the replay, the recorder and the checker.
#include "dirsched/outputs.hpp"

namespace dirsched {

std::unique_ptr<InvariantChecker> observe_run(Run& run, ObserverList& observers, EventLog* log,
                                              bool check_invariants) {
  if (log) observers.add(log);
  observers.add(run.waits.get());
  observers.add(run.recorder.get());
  std::unique_ptr<InvariantChecker> checker;
  if (check_invariants) {
    checker = std::make_unique<InvariantChecker>(run.core->registry(), run.scenario.switches);
    Run* r = &run;
    checker->set_dump([r] { return r->core->dump(); });
    checker->set_run_raised([r](RunId id) { return r->core->run_info(id).raised; });
    observers.add(checker.get());
  }
  run.core->set_observer(&observers);
  return checker;
}

void finish_result(Run& run, Replay& replay, InvariantChecker* checker) {
  RunResult& r = run.result;
  const Scheduler& core = *run.core;
  // Ops never reached because the replay waited forever (a drain over stuck tasks).
  replay.unwind_rest();
  r.stuck = core.stuck();
  if (checker && !r.violation) {
    try {
      checker->finish(r.stuck);
    } catch (const InvariantViolation& v) {
      r.violation = v.violation;
    }
  }
  if (r.violation) {
    r.outcome = "VIOLATION";
    r.error = "invariant " + r.violation->rule + " violated at event seq " +
              std::to_string(r.violation->seq) + ": " + r.violation->detail;
  } else if (core.declared_runs()) {
    // A trace with runs: FAILED if any run failed (the error of the first, in trace order), else STUCK
    // if any is stuck, else COMPLETED.
    r.outcome = "COMPLETED";
    for (std::uint32_t i = 0; i < core.run_count(); ++i) {
      const std::string outcome = run_outcome(core, RunId(i));
      if (outcome == "FAILED" && r.outcome != "FAILED") {
        r.outcome = "FAILED";
        r.error = core.run_info(RunId(i)).error->message;
      } else if (outcome == "STUCK" && r.outcome == "COMPLETED") {
        r.outcome = "STUCK";
      }
    }
  } else if (core.run_error()) {
    r.outcome = "FAILED";
    r.error = core.run_error()->message;
  } else if (!replay.abort_error().empty()) {
    r.outcome = "FAILED";
    r.error = replay.abort_error();
  } else if (!r.stuck.empty()) {
    r.outcome = "STUCK";
  } else {
    r.outcome = "COMPLETED";
  }
  r.makespan_s = run.recorder->last_transition();
}

std::string run_outcome(const Scheduler& core, RunId run) {
  const RunInfo& r = core.run_info(run);
  if (r.error) return "FAILED";  // a member failed or its callback raised
  return r.terminal ? "COMPLETED" : "STUCK";
}

void note_staging(Run& run, const Dispatch& d) {
  run.result.staged.push_back(dispatch_label(*run.core, d));
  run.result.staged_at[std::string(run.core->name(d.task))] = run.core->now();
}

std::string dispatch_label(const Scheduler& core, const Dispatch& d) {
  return std::string(core.name(d.task)) +
         (is_group(core.kind(d.task)) ? "[" + std::to_string(d.member) + "]" : "") + "@" +
         (d.target.sub ? "sub" + std::to_string(d.target.sub_index)
                       : std::to_string(d.target.worker.value()));
}

}  // namespace dirsched
