#include "dirsched/replay.hpp"

#include <algorithm>

namespace dirsched {

Replay::Replay(const Scenario& scenario, Scheduler& core) : scenario_(&scenario), core_(&core) {
  for (const BufferSpec& b : scenario.buffers)
    buffers_.push_back(core.add_buffer({b.name, b.memory, b.owner}));
  if (scenario.generate) {
    gen_.emplace(*scenario.generate, scenario, scenario.file);
    op_count_ = gen_->op_count();
    gen_->next(current_);
  } else {
    op_count_ = scenario.trace.size();
  }
}

void Replay::advance() {
  ++op_;
  if (gen_ && op_ < op_count_) gen_->next(current_);
}

double Replay::earliest_start() const {
  const OpSpec* op = next();
  return op ? std::max(ready_at_, op->at_s.value_or(0.0)) : ready_at_;
}

bool Replay::next_enabled() const {
  const OpSpec* op = next();
  if (!op) return false;
  return op->kind != OpKind::kDrain || core_->non_terminal_tasks() == 0;
}

SubmitRequest Replay::request(const OpSpec& op) const {
  SubmitRequest r;
  r.kind = op.kind == OpKind::kSubmitNextLevel ? TaskKind::kSingle
           : op.kind == OpKind::kSubmitGroup   ? TaskKind::kGroup
           : op.kind == OpKind::kSubmitSub     ? TaskKind::kSub
                                               : TaskKind::kSubGroup;
  r.name = op.task;
  r.callable = CallableId(static_cast<std::uint32_t>(op.callable));
  for (const auto& member : op.args) {
    std::vector<Arg> args;
    for (const ArgSpec& a : member)
      if (a.buffer) args.push_back({buffers_[*a.buffer], a.tag});
    r.args.push_back(std::move(args));
  }
  r.worker = op.worker;
  r.workers = op.workers;
  r.origin = op.path;
  return r;
}

// False when the orchestration unwinds at this submit.
bool Replay::submit(const OpSpec& op) {
  SubmitResult res = core_->submit(request(op));
  if (res.accepted()) {
    if (gen_) return true;
    if (ops_of_task_.size() <= res.task.index()) ops_of_task_.resize(res.task.index() + 1, nullptr);
    ops_of_task_[res.task.index()] = &op;
    return true;
  }
  if (res.rejection->code == ErrorCode::kRunFailed) return false;  // the core recorded it not_submitted
  if (scenario_->abort_on_reject) {
    abort_error_ = res.rejection->message + " (" + std::string(to_string(res.rejection->code)) + ")";
    return false;
  }
  return true;  // recorded as a rejection; the replay goes on
}

void Replay::unwind_from(std::size_t op_index, std::size_t batch_index) {
  unwound_ = true;
  if (gen_) {  // generated ops have no batches; op_index is op_ (current_) or op_ + 1
    if (op_index == op_ && !current_.task.empty()) core_->not_submitted(current_.task);
    for (OpSpec op; gen_->next(op);)
      if (!op.task.empty()) core_->not_submitted(op.task);
    return;
  }
  for (std::size_t i = op_index; i < scenario_->trace.size(); ++i) {
    const OpSpec& op = scenario_->trace[i];
    if (op.kind == OpKind::kBatch) {
      for (std::size_t j = (i == op_index ? batch_index : 0); j < op.ops.size(); ++j)
        core_->not_submitted(op.ops[j].task);
    } else if (!op.task.empty()) {
      core_->not_submitted(op.task);
    }
  }
}

void Replay::unwind_rest() {
  if (!done()) unwind_from(op_, 0);
}

bool Replay::run_next(double now) {
  const OpSpec& op = *next();
  switch (op.kind) {
    case OpKind::kSleep:
      ready_at_ = now + op.sleep_s;
      advance();
      return false;
    case OpKind::kDrain:
      ready_at_ = now;
      advance();
      return false;
    case OpKind::kBatch:
      for (std::size_t j = 0; j < op.ops.size(); ++j)
        if (!submit(op.ops[j])) {
          unwind_from(op_, j + 1);
          return true;
        }
      break;
    default:
      if (!submit(op)) {
        unwind_from(op_ + 1, 0);
        return true;
      }
  }
  ready_at_ = now;
  advance();
  return true;
}

}  // namespace dirsched
