// The orchestrator's replay of a scenario's trace against a Scheduler core, with no notion of time
// beyond "when may the next op start". Shared by the SimGrid driver, `dirsched explore` and the fuzz
// target, so that all three unwind, batch and drain in exactly one way.
//
// - Ops run in order. run_next() performs the next op's submits at the core without iterating: the
//   caller then runs the scheduler's iterations (run_instant), once per op (a batch is one op).
// - A submit the core refuses with kRunFailed (fail-fast) or, under on_reject "abort", any refusal
//   unwinds the orchestration: every task of the remaining ops is recorded not_submitted.
// - A batch with `between_passes` ends its op at once and hands its submits to the core
//   (Scheduler::land_between_passes): they run inside the first iteration the caller then runs, after
//   its group pass and before its singles pass; a refusal there unwinds as in any batch.
// - `drain` may run only when every submitted task is terminal; `sleep` and `at_s` only delay.
// - A `generate` block (Scenario::generate) is replayed from an OpGenerator: one op exists at a time
//   and nothing is kept per task (a generated op has the callable's cost and never fails).
// - Runs (a trace with `run` ops, held whole): every run is declared to the core at construction. A
//   run op is stepped through: open the callback (at the run's at_s), its ops one by one, close the
//   callback when its last op returned, then wait until the run is terminal (Worker.run drains) before
//   the next top-level op; so runs never overlap. A `raise`, a submit that meets fail-fast or, under
//   on_reject "abort", a refused one raises the callback: its later ops are not submitted
//   (callback_raised) and the replay waits for the run, then goes on with the next. A top-level drain
//   waits until every run begun is terminal. With whole_run_fifo a run op first waits for admission
//   (Scheduler::can_admit: fewer than pipeline_depth runs admitted and not terminal), and a callback that
//   returned ends its op at once (no wait; a raised one is still waited for); ending a callback that
//   would promote another run makes the scheduler look (run_next returns true; with one callback open
//   at a time the run ending there is the newest admitted, so promotions come from completions). In a
//   trace without runs a `raise` unwinds the rest of the
//   trace (callback_raised); fail-fast and abort unwind it as they always did, and raise the implicit
//   run's callback at the core (which cancels its unstarted tasks when run_cancellation is on).
// - A streamed trace file (Scenario::trace_file) is replayed from a TraceReader: one op exists at a
//   time; what the driver asks of a task later (member durations and failures) is kept only for a task
//   whose op sets them, and only while it is not terminal (dropped in sweeps as the table doubles).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "dirsched/generate.hpp"
#include "dirsched/scenario.hpp"
#include "dirsched/scheduler.hpp"
#include "dirsched/trace_file.hpp"

namespace dirsched {

class Replay {
 public:
  // Registers the scenario's buffers with the core.
  Replay(const Scenario& scenario, Scheduler& core);

  // Points a copy at a copy of its core (explorers copy whole states).
  void rebind(Scheduler& core) { core_ = &core; }

  // The next op, or nullptr when every op ran or the orchestration unwound.
  const OpSpec* next() const { return done() ? nullptr : pulled() ? &current_ : &scenario_->trace[op_]; }
  bool done() const { return unwound_ || op_ >= op_count_; }
  std::size_t op_count() const { return op_count_; }
  std::size_t position() const { return op_; }
  bool unwound() const { return unwound_; }
  // The cursor as words appended to `out` (position, unwound): with Scheduler::encode, an explorer's
  // state. Nothing else in a Replay changes what happens next.
  void encode(std::vector<std::uint32_t>& out) const {
    out.push_back(static_cast<std::uint32_t>(op_));
    out.push_back(static_cast<std::uint32_t>(op_ >> 31 >> 1) << 1 | (unwound_ ? 1u : 0u));
    if (!runs_.empty()) out.push_back(static_cast<std::uint32_t>(inner_) << 2 | static_cast<std::uint32_t>(phase_));
  }
  // The core's run of top-level op `op_index` (a run op of a trace with runs; invalid otherwise).
  RunId run_of_op(std::size_t op_index) const { return op_index < runs_.size() ? runs_[op_index] : RunId(); }
  // Earliest time the next op may start: when the previous one returned, or its at_s if later.
  double earliest_start() const;
  // True when the next op can run now (a drain needs every submitted task terminal).
  bool next_enabled() const;
  // Runs the next op at time `now`. Returns true when the scheduler must look: the op submitted
  // something (accepted or not), raised a callback that cancelled or promoted, ended a callback that
  // promoted, or, with edge_triggered_wake, ended or raised a callback (a wake: Scheduler::loop_woken()).
  bool run_next(double now);
  // Records every task of the ops not yet run as not submitted (a replay that cannot go on).
  void unwind_rest();

  // The op that submitted an accepted task (a trace held whole only: generated and streamed ops are
  // not kept; std::out_of_range then).
  const OpSpec& op_of(TaskId task) const { return *ops_of_task_.at(task.index()); }
  // What the member of an accepted, non-terminal task does: its own duration (nothing: the callable's
  // cost) and whether it fails. For a trace held whole, a streamed one and a generate block alike.
  std::optional<double> member_duration(TaskId task, std::uint32_t member) const;
  bool member_fails(TaskId task, std::uint32_t member) const;
  // The member's `prepare_s` (staging, #1583): the op's, else the callable's (0 when neither says).
  double member_prepare(TaskId task, std::uint32_t member) const;
  const std::string& abort_error() const { return abort_error_; }
  // Empty, or why a streamed trace stopped before its end (the file changed after the load checked
  // it): the engine then ends with ScenarioError(file, "", trace_error()) instead of writing outputs.
  const std::string& trace_error() const { return trace_error_; }
  // Streamed ops whose members override duration or failure, held now (for tests and the bench).
  std::size_t held_overrides() const { return overrides_.size(); }
  // The identity an accepted task's members draw by (jitter.hpp): its op's place among the scenario's
  // submits in document order, the same in every variant of a sweep and whether the trace is held,
  // streamed or generated. Kept only when a callable draws (jitter, several empirical durations): 0
  // otherwise.
  std::uint64_t task_key(TaskId task) const;

 private:
  const SubmitRequest& request(const OpSpec& op);
  SubmitRequest request_;  // request()'s, reused
  bool submit(const OpSpec& op);
  // Runs: where the cursor is in the run op at op_.
  enum class Phase : std::uint8_t { kBegin, kInner, kEnd, kWait };
  bool run_next_in_run(const OpSpec& run, double now);
  // True when the core cancelled tasks at the raise (run_cancellation): the scheduler must look.
  bool raise_run(const std::string& message, std::size_t from_inner, std::size_t batch_from);
  // A trace without runs unwinds at a fail-fast or abort submit: the implicit run's callback raises.
  void raise_implicit();
  bool aborted_ = false;  // a trace without runs unwound on_reject abort (later ops carry no reason)
  bool every_begun_run_terminal() const;
  std::string raise_message();  // the open callback's raise at a refused submit
  std::string pending_abort_;   // the abort refusal not yet raised
  void unwind_from(std::size_t op_index, std::size_t batch_index);
  void advance();
  bool pulled() const { return gen_ || stream_; }
  bool pull(OpSpec& op);  // the next op from the generator or the stream
  void not_submitted(const OpSpec& op);
  void hold_overrides(TaskId task, const OpSpec& op);
  void number_submits(const std::vector<OpSpec>& ops);  // place_of_op_
  // Removes the entries of terminal or reclaimed tasks from a table keyed by TaskId index once it has
  // doubled since the last sweep (`swept`: its size then).
  template <class Table>
  void sweep_terminal(Table& table, std::size_t& swept);

  // A streamed task's own member durations and failures (only a task whose op sets either).
  struct Overrides {
    std::vector<std::optional<double>> duration_s;
    std::vector<bool> fail;
    std::vector<std::optional<double>> prepare_s;
  };

  const Scenario* scenario_;
  Scheduler* core_;
  std::vector<BufferId> buffers_;
  std::size_t op_ = 0;
  double ready_at_ = 0;
  bool unwound_ = false;
  std::string abort_error_;
  std::vector<const OpSpec*> ops_of_task_;  // TaskId -> op (a trace file only)
  std::size_t op_count_ = 0;
  std::optional<OpGenerator> gen_;      // a generate block: makes op op_ into current_
  std::optional<TraceReader> stream_;  // a streamed trace file: reads op op_ into current_
  OpSpec current_;
  std::map<std::uint32_t, Overrides> overrides_;  // TaskId index -> its op's overrides (streamed)
  std::size_t overrides_swept_ = 0;                // overrides_.size() after the last sweep
  bool draws_ = false;                              // a callable draws (jitter, empirical): keys kept
  std::map<std::uint32_t, std::uint64_t> keys_;     // TaskId index -> its submit's place (pulled ops)
  std::size_t keys_swept_ = 0;
  std::uint64_t submits_ = 0;                       // pulled submits so far (accepted or not)
  std::unordered_map<const OpSpec*, std::uint64_t> place_of_op_;  // a held trace's submits, in order
  std::string trace_error_;
  std::vector<RunId> runs_;  // per top-level op: its run (a run op), else invalid; empty without runs
  std::size_t inner_ = 0;    // the run's next op (Phase::kInner)
  Phase phase_ = Phase::kBegin;
};

}  // namespace dirsched
