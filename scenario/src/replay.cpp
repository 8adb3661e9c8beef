#include "dirsched/replay.hpp"

#include <algorithm>
#include <memory>
#include <utility>

#include "dirsched/jitter.hpp"

namespace dirsched {

Replay::Replay(const Scenario& scenario, Scheduler& core) : scenario_(&scenario), core_(&core) {
  for (const CallableSpec& c : scenario.callables)
    draws_ |= (c.cost.jitter.kind != Jitter::Kind::kNone && c.cost.jitter.rel > 0) || c.cost.empirical.size() > 1;
  if (draws_) number_submits(scenario.trace);
  for (const BufferSpec& b : scenario.buffers)
    buffers_.push_back(core.add_buffer({b.name, b.memory, b.owner}));
  if (scenario.generate) {
    gen_.emplace(*scenario.generate, scenario, scenario.file);
    op_count_ = gen_->op_count();
    gen_->next(current_);
  } else if (scenario.trace_file) {
    stream_.emplace(*scenario.trace_file);
    op_count_ = scenario.trace_file->op_count();
    if (op_count_ > 0 && !pull(current_)) op_count_ = 0;
  } else {
    op_count_ = scenario.trace.size();
    if (scenario.has_runs) {
      runs_.resize(op_count_);
      for (std::size_t i = 0; i < op_count_; ++i)
        if (scenario.trace[i].kind == OpKind::kRun) runs_[i] = core.add_run(scenario.trace[i].run);
    }
  }
}

bool Replay::pull(OpSpec& op) {
  if (gen_) return gen_->next(op);
  if (stream_->next(op)) return true;
  if (trace_error_.empty()) trace_error_ = stream_->error();
  unwound_ = true;  // the file changed: the run stops here and ends with trace_error_
  return false;
}

void Replay::advance() {
  ++op_;
  inner_ = 0;
  phase_ = Phase::kBegin;
  if (pulled() && op_ < op_count_) pull(current_);
}

std::optional<double> Replay::member_duration(TaskId task, std::uint32_t member) const {
  if (gen_) return std::nullopt;
  if (stream_) {
    auto it = overrides_.find(task.index());
    if (it == overrides_.end() || member >= it->second.duration_s.size()) return std::nullopt;
    return it->second.duration_s[member];
  }
  return op_of(task).member_duration(member);
}

bool Replay::member_fails(TaskId task, std::uint32_t member) const {
  if (gen_) return false;
  if (stream_) {
    auto it = overrides_.find(task.index());
    return it != overrides_.end() && member < it->second.fail.size() && it->second.fail[member];
  }
  return op_of(task).member_fails(member);
}

double Replay::member_prepare(TaskId task, std::uint32_t member) const {
  const double callable = scenario_->callables[core_->callable(task).index()].cost.prepare_s;
  if (gen_) return callable;
  if (stream_) {
    auto it = overrides_.find(task.index());
    if (it == overrides_.end() || member >= it->second.prepare_s.size()) return callable;
    return it->second.prepare_s[member].value_or(callable);
  }
  return op_of(task).member_prepare(member).value_or(callable);
}

// Document order, into batches and runs' callbacks: the order a streamed or generated trace is
// submitted in, so that held and pulled traces key their draws alike.
void Replay::number_submits(const std::vector<OpSpec>& ops) {
  for (const OpSpec& op : ops) {
    if (op.kind == OpKind::kBatch || op.kind == OpKind::kRun)
      number_submits(op.ops);
    else if (op.kind == OpKind::kSubmitNextLevel || op.kind == OpKind::kSubmitGroup || op.kind == OpKind::kSubmitSub ||
             op.kind == OpKind::kSubmitSubGroup)
      place_of_op_.emplace(&op, place_of_op_.size());
  }
}

std::uint64_t Replay::task_key(TaskId task) const {
  if (!pulled()) {
    const auto it = draws_ ? place_of_op_.find(&op_of(task)) : place_of_op_.end();
    return it == place_of_op_.end() ? 0 : it->second;
  }
  const auto it = keys_.find(task.index());
  return it == keys_.end() ? 0 : it->second;
}

template <class Table>
void Replay::sweep_terminal(Table& table, std::size_t& swept) {
  if (table.size() < 2 * swept + 64) return;
  for (auto it = table.begin(); it != table.end();)
    it = it->first < core_->reclaimed_before() || is_terminal(core_->state(TaskId(it->first))) ? table.erase(it)
                                                                                              : std::next(it);
  swept = table.size();
}

// Keeps a streamed task's overrides (and, when callables draw, any pulled task's draw key) while it may
// still run. The tables are swept of terminal tasks each time they double, so they hold at most about
// twice the live tasks.
void Replay::hold_overrides(TaskId task, const OpSpec& op) {
  if (draws_) {
    sweep_terminal(keys_, keys_swept_);
    keys_[task.index()] = submits_ - 1;  // submit() counted this one
  }
  if (!stream_) return;
  const bool any = std::any_of(op.duration_s.begin(), op.duration_s.end(), [](const auto& d) { return d.has_value(); }) ||
                   std::find(op.fail.begin(), op.fail.end(), true) != op.fail.end() || !op.prepare_s.empty();
  if (!any) return;
  sweep_terminal(overrides_, overrides_swept_);
  overrides_[task.index()] = Overrides{op.duration_s, op.fail, op.prepare_s};
}

void Replay::not_submitted(const OpSpec& op) {
  if (stream_) scenario_->trace_file->note_unsubmitted(op.task, op.callable);
  if (aborted_)  // the abort's refusal is the implicit run's error now, but was never these ops' reason
    core_->not_submitted(op.task, core_->open_run(), false);
  else
    core_->not_submitted(op.task);
}

void Replay::raise_implicit() {
  aborted_ = !pending_abort_.empty();
  core_->raise_run(raise_message());
}

double Replay::earliest_start() const {
  const OpSpec* op = next();
  if (op && op->kind == OpKind::kRun) {
    if (phase_ == Phase::kBegin) return std::max(ready_at_, op->at_s.value_or(0.0));
    if (phase_ == Phase::kInner) return std::max(ready_at_, op->ops[inner_].at_s.value_or(0.0));
    return ready_at_;
  }
  return op ? std::max(ready_at_, op->at_s.value_or(0.0)) : ready_at_;
}

bool Replay::every_begun_run_terminal() const {
  for (RunId r : runs_)
    if (r.valid() && core_->run_info(r).begun && !core_->run_terminal(r)) return false;
  return true;
}

bool Replay::next_enabled() const {
  const OpSpec* op = next();
  if (!op) return false;
  if (op->kind == OpKind::kRun) {
    // whole_run_fifo: admission waits until fewer than pipeline_depth runs are admitted and not terminal.
    if (phase_ == Phase::kBegin) return core_->can_admit();
    return phase_ != Phase::kWait || core_->run_terminal(runs_[op_]);
  }
  if (op->kind != OpKind::kDrain) return true;
  return runs_.empty() ? core_->non_terminal_tasks() == 0 : every_begun_run_terminal();
}

// Filled in place: the request's vectors and strings keep their room from one submit to the next (a
// fresh request was an allocation or two per task).
const SubmitRequest& Replay::request(const OpSpec& op) {
  SubmitRequest& r = request_;
  r.kind = op.kind == OpKind::kSubmitNextLevel ? TaskKind::kSingle
           : op.kind == OpKind::kSubmitGroup   ? TaskKind::kGroup
           : op.kind == OpKind::kSubmitSub     ? TaskKind::kSub
                                               : TaskKind::kSubGroup;
  r.name.assign(op.task);
  r.callable = CallableId(static_cast<std::uint32_t>(op.callable));
  r.args.resize(op.args.size());
  for (std::size_t m = 0; m < op.args.size(); ++m) {
    std::vector<Arg>& args = r.args[m];
    args.clear();
    for (const ArgSpec& a : op.args[m])
      if (a.buffer) args.push_back({buffers_[*a.buffer], a.tag, a.range});
  }
  r.worker = op.worker;
  r.workers = op.workers;
  r.origin.assign(op.path);
  return r;
}

// False when the orchestration unwinds at this submit.
bool Replay::submit(const OpSpec& op) {
  if (stream_) scenario_->trace_file->note_submitting(op.task, op.callable);
  ++submits_;
  SubmitResult res = core_->submit(request(op));
  if (res.accepted()) {
    if (pulled()) {
      hold_overrides(res.task, op);
      return true;
    }
    if (ops_of_task_.size() <= res.task.index()) ops_of_task_.resize(res.task.index() + 1, nullptr);
    ops_of_task_[res.task.index()] = &op;
    return true;
  }
  if (stream_) scenario_->trace_file->note_unsubmitted(op.task, op.callable);
  if (res.rejection->code == ErrorCode::kRunFailed) return false;  // the core recorded it not_submitted
  if (scenario_->abort_on_reject) {
    abort_error_ = res.rejection->message + " (" + std::string(to_string(res.rejection->code)) + ")";
    pending_abort_ = abort_error_;
    return false;
  }
  return true;  // recorded as a rejection; the replay goes on
}

void Replay::unwind_from(std::size_t op_index, std::size_t batch_index) {
  unwound_ = true;
  if (pulled()) {  // op_index is op_ (current_) or op_ + 1; only streamed ops have batches
    auto rest = [&](const OpSpec& op, std::size_t from) {
      if (op.kind == OpKind::kBatch) {
        for (std::size_t j = from; j < op.ops.size(); ++j) not_submitted(op.ops[j]);
      } else if (!op.task.empty()) {
        not_submitted(op);
      }
    };
    if (op_index == op_ && op_ < op_count_) rest(current_, batch_index);
    for (std::size_t i = op_ + 1; i < op_count_; ++i) {
      OpSpec op;
      if (!pull(op)) break;
      rest(op, 0);
    }
    return;
  }
  for (std::size_t i = op_index; i < scenario_->trace.size(); ++i) {
    const OpSpec& op = scenario_->trace[i];
    if (op.kind == OpKind::kBatch) {
      for (std::size_t j = (i == op_index ? batch_index : 0); j < op.ops.size(); ++j)
        not_submitted(op.ops[j]);
    } else if (!op.task.empty()) {
      not_submitted(op);
    }
  }
}

void Replay::unwind_rest() {
  if (done()) return;
  if (runs_.empty()) return unwind_from(op_, 0);
  // A trace with runs (held whole): the rest of the open callback, then every later run's ops, each in
  // its own run. Nothing raised: these ops were never reached (an earlier run never ended).
  unwound_ = true;
  auto rest = [&](const OpSpec& op, RunId run) {
    if (op.kind == OpKind::kBatch)
      for (const OpSpec& inner : op.ops) core_->not_submitted(inner.task, run, false);
    else if (!op.task.empty())
      core_->not_submitted(op.task, run, false);
  };
  for (std::size_t i = op_; i < op_count_; ++i) {
    const OpSpec& op = scenario_->trace[i];
    if (op.kind != OpKind::kRun) continue;
    const std::size_t from = i == op_ && phase_ == Phase::kInner ? inner_ : i == op_ && phase_ != Phase::kBegin ? op.ops.size() : 0;
    for (std::size_t j = from; j < op.ops.size(); ++j) rest(op.ops[j], runs_[i]);
  }
}

// The open callback raises `message` at its op `from_inner` (of which the batch's submits from
// `batch_from` were not made): its later ops are not submitted, the run's callback ends raised, and the
// replay waits for the run. In a trace without runs (the implicit run's callback is the whole trace),
// the rest of the trace is not submitted and the replay is over.
bool Replay::raise_run(const std::string& message, std::size_t from_inner, std::size_t batch_from) {
  auto rest = [&](const OpSpec& op, std::size_t from, RunId run) {
    if (op.kind == OpKind::kBatch) {
      for (std::size_t j = from; j < op.ops.size(); ++j) core_->not_submitted(op.ops[j].task, run, true);
    } else if (!op.task.empty() && from == 0) {
      core_->not_submitted(op.task, run, true);
    }
  };
  if (runs_.empty()) {
    const bool cancelled = core_->raise_run(message) > 0;  // the implicit run: its error, no event
    const RunId run = core_->open_run();
    unwound_ = true;
    for (std::size_t i = from_inner; i < scenario_->trace.size(); ++i)
      rest(scenario_->trace[i], i == from_inner ? batch_from : 0, run);
    return cancelled || core_->loop_woken();  // edge_triggered_wake: a raise is a wake
  }
  const OpSpec& run_op = scenario_->trace[op_];
  const RunId run = runs_[op_];
  const bool cancelled = core_->raise_run(message) > 0;
  for (std::size_t j = from_inner; j < run_op.ops.size(); ++j)
    rest(run_op.ops[j], j == from_inner ? batch_from : 0, run);
  const std::uint64_t promotions = core_->promotions();
  core_->end_run();
  phase_ = Phase::kWait;  // after a raise the driver waits for the run, with or without whole_run_fifo
  // edge_triggered_wake: a raise and a callback's end are wakes (Scheduler::loop_woken()).
  return cancelled || core_->promotions() != promotions || core_->loop_woken();
}

bool Replay::run_next_in_run(const OpSpec& run, double now) {
  switch (phase_) {
    case Phase::kBegin:
      core_->begin_run(runs_[op_]);
      ready_at_ = now;
      phase_ = run.ops.empty() ? Phase::kEnd : Phase::kInner;
      return false;
    case Phase::kEnd: {
      const std::uint64_t promotions = core_->promotions();
      core_->end_run();
      ready_at_ = now;
      if (!core_->switches()[Switch::kWholeRunFifo]) {
        phase_ = Phase::kWait;  // Worker.run drains before the next op
        return core_->loop_woken();  // edge_triggered_wake: a callback's end is a wake
      }
      // whole_run_fifo: a callback that returned ends the op at once (Worker.submit returned). Should its
      // run's end promote another run, the scheduler looks at that run's READY tasks (with one callback
      // open at a time the run ending here is the newest admitted: a guard, not a path of the replay).
      // staging (#1583): a callback's end can make its run the preparable one, whose single the next
      // iteration may stage.
      const bool preparable = core_->preparable_run() == runs_[op_];
      advance();
      return core_->promotions() != promotions || core_->loop_woken() || preparable;  // a callback's end is a wake
    }
    case Phase::kWait:
      ready_at_ = now;
      advance();
      return false;
    case Phase::kInner:
      break;
  }
  const OpSpec& op = run.ops[inner_];
  const std::size_t at = inner_;
  auto next_inner = [&] {
    if (++inner_ == run.ops.size()) phase_ = Phase::kEnd;
  };
  ready_at_ = now;
  switch (op.kind) {
    case OpKind::kSleep:
      ready_at_ = now + op.sleep_s;
      next_inner();
      return false;
    case OpKind::kRaise:
      return raise_run(op.message, at + 1, 0);
    case OpKind::kBatch:
      if (op.between_passes) {
        // Lands inside the next iteration, between its passes; a refusal raises the callback there.
        next_inner();
        core_->land_between_passes([this, batch = &op, at] {
          for (std::size_t j = 0; j < batch->ops.size(); ++j)
            if (!submit(batch->ops[j])) {
              raise_run(raise_message(), at, j + 1);
              return;
            }
        });
        return true;
      }
      for (std::size_t j = 0; j < op.ops.size(); ++j)
        if (!submit(op.ops[j])) {
          raise_run(raise_message(), at, j + 1);
          return true;
        }
      next_inner();
      return true;
    default:
      if (!submit(op)) {
        raise_run(raise_message(), at + 1, 0);
        return true;
      }
      next_inner();
      return true;
  }
}

// Why the open callback raised at a refused submit: fail-fast (its run's error) or on_reject abort.
std::string Replay::raise_message() {
  if (!pending_abort_.empty()) return std::exchange(pending_abort_, std::string());
  const auto& error = core_->run_error();
  return error ? error->message : std::string("orchestration failed");
}

bool Replay::run_next(double now) {
  const OpSpec& op = *next();
  switch (op.kind) {
    case OpKind::kRun:
      return run_next_in_run(op, now);
    case OpKind::kRaise:  // a trace without runs: the implicit run's callback raises
      return raise_run(op.message, op_ + 1, 0);
    case OpKind::kSleep:
      ready_at_ = now + op.sleep_s;
      advance();
      return false;
    case OpKind::kDrain:
      ready_at_ = now;
      advance();
      return false;
    case OpKind::kBatch:
      if (op.between_passes) {
        // Lands inside the next iteration, between its passes; the op is over here. A streamed op is
        // replaced by the next one at advance(), so the hook keeps a copy of it; an op of a trace held
        // whole stays where it is (op_of() points at it). A refusal there unwinds the rest of the
        // batch, then every later op.
        ready_at_ = now;
        std::shared_ptr<const OpSpec> copy = pulled() ? std::make_shared<const OpSpec>(op) : nullptr;
        const OpSpec* batch = copy ? copy.get() : &op;
        core_->land_between_passes([this, batch, copy] {
          for (std::size_t j = 0; j < batch->ops.size(); ++j)
            if (!submit(batch->ops[j])) {
              raise_implicit();
              for (std::size_t k = j + 1; k < batch->ops.size(); ++k) not_submitted(batch->ops[k]);
              unwind_from(op_, 0);
              return;
            }
        });
        advance();
        return true;
      }
      for (std::size_t j = 0; j < op.ops.size(); ++j)
        if (!submit(op.ops[j])) {
          raise_implicit();
          unwind_from(op_, j + 1);
          return true;
        }
      break;
    default:
      if (!submit(op)) {
        raise_implicit();
        unwind_from(op_ + 1, 0);
        return true;
      }
  }
  ready_at_ = now;
  advance();
  return true;
}

}  // namespace dirsched
