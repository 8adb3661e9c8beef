// How every engine sets its outputs up (RunOutputs) and ends a run: one RunResult from the core, the
// replay, the recorder and the checker.
#include "dirsched/outputs.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace dirsched {

bool reclaim_wanted() {
  const char* env = std::getenv("DIRSCHED_RECLAIM");
  return !(env && std::string(env) == "off");
}

RunOutputs::RunOutputs(Run& run, const OutputOptions& options)
    : run_(run),
      core_view_(run.core.get()),
      log_(run.events_jsonl, options.events_path, core_view_),
      events_path_(options.events_path),
      tasks_path_(options.tasks_path),
      probe_(run) {
  const Scenario& s = run.scenario;
  Scheduler& core = *run.core;
  run.recorder = std::make_unique<Recorder>(core);
  run.waits = std::make_unique<WaitAttribution>(core);
  // Every record stays only when something looks records up after the run: an expect block (by name,
  // and it reads names from the core) or bisect's whole-run comparison. Then, and for the checker's
  // dump, the core keeps every task too.
  const bool keep_records = options.keep_order_and_records || !s.expect.is_null();
  core.set_reclaim(!keep_records && !options.check_invariants && reclaim_wanted());
  core.reserve(s.submit_count());
  run.recorder->set_keep_records(keep_records);
  run.waits->set_keep(!options.tasks_path.empty() || !s.expect.is_null());  // for tasks.csv's rows
  if (!options.tasks_path.empty()) {
    tasks_csv_ = std::make_unique<TasksCsvWriter>(run, options.tasks_path);
    run.recorder->set_on_retire([w = tasks_csv_.get()](const TaskRecord& r) { w->write(r); });
  }
  keep_order_ = options.keep_order_and_records || expect_reads_dispatch_order(s);
  if (keep_order_) run.result.dispatch_order.reserve(s.submit_count());

  if (options.record_events) observers_.add(&log_);
  observers_.add(run.waits.get());
  observers_.add(run.recorder.get());
  if (options.check_invariants) {
    checker_ = std::make_unique<InvariantChecker>(core.registry(), s.switches);
    Run* r = &run;
    checker_->set_dump([r] { return r->core->dump(); });
    checker_->set_run_raised([r](RunId id) { return r->core->run_info(id).raised; });
    observers_.add(checker_.get());
  }
  observers_.add(&probe_);
  core.set_observer(&observers_);
}

void RunOutputs::WindowProbe::on_event(const Event& e) {
  // The core's entries and the Recorder's records are made only here (a submit; a reject or an op
  // never submitted makes a record alone).
  if (e.kind != EventKind::kSubmit && e.kind != EventKind::kReject && e.kind != EventKind::kNotSubmitted) return;
  RunResult& r = run.result;
  if (e.kind == EventKind::kReject && ++r.rejections <= RunResult::kFirstRejections && e.rejection)
    r.first_rejections.emplace_back(std::string(e.name),
                                    std::string(to_string(e.rejection->code)) + ": " + e.rejection->message);
  r.peak_core_tasks = std::max(r.peak_core_tasks, run.core->held_tasks());
  r.peak_records = std::max(r.peak_records, run.recorder->held_records());
}

RunOutputs::~RunOutputs() { detach(); }

void RunOutputs::detach() {
  if (run_.core) run_.core->set_observer(nullptr);
  if (run_.recorder) run_.recorder->set_on_retire(nullptr);
}

void RunOutputs::finish() {
  log_.flush();
  run_.core->set_observer(nullptr);
  run_.recorder->finish();  // the records still held retire: their rows go to tasks.csv
  run_.recorder->set_on_retire(nullptr);
  if (tasks_csv_) {
    tasks_csv_->close();
    run_.tasks_file = tasks_path_;
  }
  run_.events_file = events_path_;
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
