#include "dirsched/scheduler.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace dirsched {
namespace {

// A broken invariant is a bug in the core or its driver, never a caller mistake: stop at once.
[[noreturn]] void invariant_failed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "dirsched core invariant violated: %s (%s:%d)\n", what, file, line);
  std::abort();
}
#define DIRSCHED_INVARIANT(cond) ((cond) ? static_cast<void>(0) : invariant_failed(#cond, __FILE__, __LINE__))

std::string id_text(const WorkerArg& w) {
  return w.is_integer() ? std::to_string(w.value()) : w.shown();
}

}  // namespace

Scheduler::Scheduler(Registry registry, Options options, Observer* observer)
    : registry_(std::move(registry)), options_(options), observer_(observer) {
  workers_.resize(registry_.next_level_count());
  for (std::uint32_t i = 0; i < workers_.size(); ++i) {
    workers_[i].id = registry_.worker_at(i).id;
    workers_[i].kind = registry_.worker_at(i).kind;
  }
  runnable_.resize(static_cast<std::uint32_t>(workers_.size()));
  idle_sub_.resize(registry_.sub_workers());
  for (std::uint32_t i = 0; i < registry_.sub_workers(); ++i) idle_sub_.insert(i);
}

BufferId Scheduler::add_buffer(Buffer buffer) {
  registry_.check_owner(buffer.name, buffer.memory, buffer.owner);
  buffers_.push_back(std::move(buffer));
  producer_of_.push_back(TaskId());
  return BufferId(static_cast<std::uint32_t>(buffers_.size() - 1));
}

// ---------------------------------------------------------------------------------------------
// Submit

std::optional<Rejection> Scheduler::validate(const SubmitRequest& r,
                                             std::vector<std::uint32_t>& targets) const {
  // Messages are built only on the way out: an accepted submit allocates nothing here.
  auto reject = [&](ErrorCode code, const std::string& detail) {
    std::string who = (r.origin.empty() ? std::string() : r.origin + " ") + "task '" + r.name + "': ";
    return std::optional<Rejection>(Rejection{code, who + detail});
  };
  if (!r.callable.valid() || r.callable.index() >= registry_.callable_count())
    return reject(ErrorCode::kUnknownCallable, "unknown callable");
  for (const auto& member : r.args)
    for (const Arg& a : member)
      if (!a.buffer.valid() || a.buffer.index() >= buffers_.size())
        return reject(ErrorCode::kUnknownBuffer, "unknown buffer");
  const Callable& callable = registry_.callable(r.callable);

  if (is_sub(r.kind)) {
    // Rule 8. The NEXT_LEVEL rules do not apply: a SUB task has no target to check.
    if (r.worker || r.workers) return reject(ErrorCode::kSubTakesNoWorker, "SUB tasks take no worker id");
    if (r.args.empty() || (r.kind == TaskKind::kSub && r.args.size() != 1))
      return reject(ErrorCode::kEmptyGroup, r.args.empty() ? "a SUB group needs at least one member"
                                                           : "a SUB single has exactly one member");
    if (callable.ns != Namespace::kLocalPython)
      return reject(ErrorCode::kSubCallableNotPython, "SUB callable '" + callable.name + "' is " +
                                                          std::string(to_string(callable.ns)) +
                                                          ", not LOCAL_PYTHON");
    for (const auto& member : r.args)
      for (const Arg& a : member)
        if (buffers_[a.buffer.index()].memory == Memory::kRemote)
          return reject(ErrorCode::kSubRemoteBuffer,
                        "SUB task touches remote buffer '" + buffers_[a.buffer.index()].name + "'");
    return std::nullopt;
  }

  // Rule 1: the worker ids are present.
  const bool group = r.kind == TaskKind::kGroup;
  if (group ? !r.workers : !r.worker)
    return reject(ErrorCode::kMissingWorker,
                  group ? "a NEXT_LEVEL group needs a workers list" : "a NEXT_LEVEL task needs a worker id");
  const std::size_t count = group ? r.workers->size() : 1;
  auto id_at = [&](std::size_t i) -> const WorkerArg& { return group ? (*r.workers)[i] : *r.worker; };
  // Rules 2 and 3, each over every id before the next rule.
  for (std::size_t i = 0; i < count; ++i)
    if (!id_at(i).is_integer())
      return reject(ErrorCode::kWorkerNotInteger, "worker id " + id_at(i).shown() +
                                                      (group ? " (workers[" + std::to_string(i) + "])" : "") +
                                                      " is not an integer");
  for (std::size_t i = 0; i < count; ++i)
    if (id_at(i).value() < 0)
      return reject(ErrorCode::kWorkerNegative, "worker id " + id_text(id_at(i)) + " is negative");
  // Rule 4.
  if (count != r.args.size() || count == 0)
    return reject(ErrorCode::kWorkersCountMismatch,
                  std::to_string(count) + " worker ids for " + std::to_string(r.args.size()) + " members");
  for (std::size_t i = 0; i < count; ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (id_at(i).value() == id_at(j).value())
        return reject(ErrorCode::kWorkersNotDistinct, "worker id " + id_text(id_at(i)) +
                                                          " is named twice (workers[" + std::to_string(j) +
                                                          "] and workers[" + std::to_string(i) + "])");
  // Rule 5.
  targets.clear();
  for (std::size_t i = 0; i < count; ++i) {
    auto index = registry_.index_of(WorkerId(id_at(i).value()));
    if (!index)
      return reject(ErrorCode::kWorkerNotRegistered,
                    "worker id " + id_text(id_at(i)) + " names no NEXT_LEVEL worker");
    targets.push_back(*index);
  }
  // Rule 6.
  const bool local = callable.ns != Namespace::kRemote;
  if (local) {
    for (std::uint32_t t : targets)
      if (workers_[t].kind == WorkerKind::kRemote)
        return reject(ErrorCode::kLocalCallableRemoteTarget,
                      std::string(to_string(callable.ns)) + " callable '" + callable.name +
                          "' cannot run on remote worker " + std::to_string(workers_[t].id.value()));
    for (std::uint32_t t : targets) {
      const WorkerKind needed =
          callable.ns == Namespace::kLocalChip ? WorkerKind::kLocalChip : WorkerKind::kLocalWorker;
      if (workers_[t].kind != needed)
        return reject(ErrorCode::kNamespaceMismatch, std::string(to_string(callable.ns)) + " callable '" +
                                                         callable.name + "' cannot run on " +
                                                         std::string(to_string(workers_[t].kind)) +
                                                         " worker " + std::to_string(workers_[t].id.value()));
    }
  }
  // Rule 7: the callable's eligible set, then the owners of the buffers each member touches.
  if (!local) {
    for (std::uint32_t t : targets)
      if (!registry_.eligible(r.callable, t))
        return reject(ErrorCode::kTargetNotEligible, "worker " + std::to_string(workers_[t].id.value()) +
                                                         " is not eligible for REMOTE callable '" +
                                                         callable.name + "'");
  }
  for (std::size_t m = 0; m < targets.size(); ++m)
    for (const Arg& a : r.args[m]) {
      const Buffer& b = buffers_[a.buffer.index()];
      if (b.memory != Memory::kHost && *b.owner != workers_[targets[m]].id)
        return reject(ErrorCode::kTargetNotEligible,
                      "worker " + std::to_string(workers_[targets[m]].id.value()) + " cannot touch " +
                          std::string(to_string(b.memory)) + " buffer '" + b.name + "' owned by worker " +
                          std::to_string(b.owner->value()));
    }
  return std::nullopt;
}

SubmitResult Scheduler::submit(const SubmitRequest& r) {
  if (run_error_ && options_.fail_fast) {
    // Fail-fast: the submit raises the run's first error and the task is never submitted.
    Rejection raised{ErrorCode::kRunFailed, run_error_->message};
    Event e{EventKind::kNotSubmitted};
    e.name = r.name;
    e.task_kind = r.kind;
    e.rejection = &raised;
    emit(e);
    return {TaskId(), std::move(raised)};
  }
  std::vector<std::uint32_t>& targets = scratch_targets_;
  if (auto rejection = validate(r, targets)) {
    Event e{EventKind::kReject};
    e.name = r.name;
    e.task_kind = r.kind;
    e.rejection = &*rejection;
    emit(e);
    return {TaskId(), std::move(rejection)};
  }

  // Accepted: from here on the submit writes state.
  const TaskId id(static_cast<std::uint32_t>(tasks_.size()));
  Task task;
  task.name_begin = static_cast<std::uint32_t>(names_.size());
  task.name_size = static_cast<std::uint32_t>(r.name.size());
  task.kind = r.kind;
  task.state = TaskState::kPending;
  task.callable = r.callable;
  task.members = static_cast<std::uint32_t>(r.args.size());
  task.slot_begin = static_cast<std::uint32_t>(slots_.size());
  for (std::uint32_t m = 0; m < task.members; ++m)
    slots_.push_back({is_sub(r.kind) ? 0 : targets[m], false, false});

  // Look up every producer before registering any output: members of one task never depend on each
  // other, and a task never depends on itself.
  std::vector<TaskId>& producers = scratch_producers_;
  producers.clear();
  std::vector<Dependency>& deps = scratch_deps_;
  deps.clear();
  TaskId poisoner;
  for (const auto& member : r.args)
    for (const Arg& a : member) {
      if (a.tag != Tag::kInput && a.tag != Tag::kInOut) continue;
      const TaskId p = producer_of_[a.buffer.index()];
      if (!p.valid()) continue;
      deps.push_back({p, a.buffer});
      const TaskState ps = tasks_[p.index()].state;
      if (ps == TaskState::kCompleted) continue;  // not a live producer
      if (ps == TaskState::kFailed || ps == TaskState::kPoisoned) {
        if (!poisoner.valid() || p < poisoner) poisoner = p;
        continue;
      }
      producers.push_back(p);
    }
  std::sort(producers.begin(), producers.end());
  producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
  for (const auto& member : r.args)
    for (const Arg& a : member)
      if (a.tag == Tag::kOutput || a.tag == Tag::kOutputExisting || a.tag == Tag::kInOut)
        producer_of_[a.buffer.index()] = id;

  names_ += r.name;
  tasks_.push_back(task);
  ++live_;
  {
    Event e = event_for(EventKind::kSubmit, id);
    std::vector<WorkerId>& ws = scratch_workers_;
    ws.clear();
    if (!is_sub(r.kind))
      for (std::uint32_t t : targets) ws.push_back(workers_[t].id);
    e.workers = &ws;
    e.deps = &deps;
    emit(e);
  }
  if (poisoner.valid()) {
    tasks_[id.index()].state = TaskState::kPoisoned;
    --live_;
    Event e = event_for(EventKind::kPoison, id);
    e.cause = poisoner;
    emit(e);
  } else if (!producers.empty()) {
    Task& t = tasks_[id.index()];
    t.live_producers = static_cast<std::uint32_t>(producers.size());
    for (TaskId p : producers) add_consumer(p, id);
    Event e = event_for(EventKind::kPending, id);
    e.producers = &producers;
    emit(e);
  } else {
    make_ready(id);
  }
  return {id, std::nullopt};
}

SubmitResult Scheduler::submit_next_level(std::string name, CallableId callable, std::vector<Arg> args,
                                          WorkerId worker) {
  SubmitRequest r;
  r.kind = TaskKind::kSingle;
  r.name = std::move(name);
  r.callable = callable;
  r.args.push_back(std::move(args));
  r.worker = WorkerArg(worker);
  return submit(r);
}

SubmitResult Scheduler::submit_next_level_group(std::string name, CallableId callable,
                                                std::vector<std::vector<Arg>> args_list,
                                                std::vector<WorkerId> workers) {
  SubmitRequest r;
  r.kind = TaskKind::kGroup;
  r.name = std::move(name);
  r.callable = callable;
  r.args = std::move(args_list);
  r.workers.emplace(workers.begin(), workers.end());
  return submit(r);
}

SubmitResult Scheduler::submit_sub(std::string name, CallableId callable, std::vector<Arg> args) {
  SubmitRequest r;
  r.kind = TaskKind::kSub;
  r.name = std::move(name);
  r.callable = callable;
  r.args.push_back(std::move(args));
  return submit(r);
}

SubmitResult Scheduler::submit_sub_group(std::string name, CallableId callable,
                                         std::vector<std::vector<Arg>> args_list) {
  SubmitRequest r;
  r.kind = TaskKind::kSubGroup;
  r.name = std::move(name);
  r.callable = callable;
  r.args = std::move(args_list);
  return submit(r);
}

void Scheduler::not_submitted(std::string_view name) {
  Event e{EventKind::kNotSubmitted};
  e.name = name;
  Rejection raised;
  if (run_error_) {
    raised = {ErrorCode::kRunFailed, run_error_->message};
    e.rejection = &raised;
  }
  emit(e);
}

// ---------------------------------------------------------------------------------------------
// Routing and transitions

Event Scheduler::event_for(EventKind kind, TaskId id) const {
  Event e{kind};
  e.task = id;
  e.name = name_of(tasks_[id.index()]);
  e.task_kind = tasks_[id.index()].kind;
  e.member_count = tasks_[id.index()].members;
  return e;
}

void Scheduler::set_state(TaskId id, TaskState to) {
  Task& t = tasks_[id.index()];
  DIRSCHED_INVARIANT(transition_allowed(t.state, to));
  t.state = to;
}

void Scheduler::make_ready(TaskId id) {
  set_state(id, TaskState::kReady);
  Task& t = tasks_[id.index()];
  Event e = event_for(EventKind::kReady, id);
  switch (t.kind) {
    case TaskKind::kSingle: {
      const std::uint32_t w = slots_[t.slot_begin].worker;
      workers_[w].fifo.push_back(id);
      if (!workers_[w].busy) runnable_.insert(w);
      e.queue = QueueKind::kWorker;
      e.queue_worker = workers_[w].id;
      break;
    }
    case TaskKind::kGroup:
      group_fifo_.push_back(id);
      e.queue = QueueKind::kGroup;
      break;
    case TaskKind::kSub:
    case TaskKind::kSubGroup:
      sub_fifo_.push_back(id);
      e.queue = QueueKind::kSub;
      break;
  }
  emit(e);
}

void Scheduler::poison_from(TaskId failed) {
  // Breadth-first over consumers, each level in submit order. Only PENDING tasks can be downstream
  // of a task that has not completed, so nothing poisoned here was ever queued or running.
  // The cause reported is the producer that poisoned it (the failed task, or a poisoned one between),
  // as for a task poisoned at submit.
  std::vector<std::pair<TaskId, TaskId>> work;  // (consumer, its producer)
  for_each_consumer(tasks_[failed.index()], [&](TaskId c) { work.emplace_back(c, failed); });
  for (std::size_t i = 0; i < work.size(); ++i) {
    const auto [c, via] = work[i];
    if (tasks_[c.index()].state != TaskState::kPending) continue;
    set_state(c, TaskState::kPoisoned);
    --live_;
    Event e = event_for(EventKind::kPoison, c);
    e.cause = via;
    emit(e);
    for_each_consumer(tasks_[c.index()], [&, c = c](TaskId next) { work.emplace_back(next, c); });
  }
}

void Scheduler::add_consumer(TaskId producer, TaskId consumer) {
  Task& p = tasks_[producer.index()];
  const auto e = static_cast<std::uint32_t>(edges_.size());
  edges_.push_back({consumer, kNoEdge});
  if (p.last_consumer == kNoEdge)
    p.first_consumer = e;
  else
    edges_[p.last_consumer].next = e;
  p.last_consumer = e;
}

void Scheduler::finish(TaskId id) {
  Task& t = tasks_[id.index()];
  --live_;
  if (!t.member_failed) {
    set_state(id, TaskState::kCompleted);
    Event e = event_for(EventKind::kComplete, id);
    emit(e);
    for_each_consumer(tasks_[id.index()], [&](TaskId c) {
      Task& ct = tasks_[c.index()];
      if (ct.state != TaskState::kPending) return;
      DIRSCHED_INVARIANT(ct.live_producers > 0);
      if (--ct.live_producers == 0) make_ready(c);
    });
  } else {
    set_state(id, TaskState::kFailed);
    Event e = event_for(EventKind::kFail, id);
    e.member = t.failed_member;
    emit(e);
    poison_from(id);
  }
}

void Scheduler::apply(const Completion& c) {
  DIRSCHED_INVARIANT(c.task.valid() && c.task.index() < tasks_.size());
  Task& t = tasks_[c.task.index()];
  DIRSCHED_INVARIANT(t.state == TaskState::kRunning && c.member < t.members);
  Slot& slot = slots_[t.slot_begin + c.member];
  DIRSCHED_INVARIANT(slot.running && !slot.ended);
  slot.running = false;
  slot.ended = true;
  --running_members_;
  Target target;
  if (is_sub(t.kind)) {
    target.sub = true;
    target.sub_index = slot.worker;
    idle_sub_.insert(slot.worker);
  } else {
    target.worker = workers_[slot.worker].id;
    mark_idle(slot.worker);
  }
  {
    Event e = event_for(EventKind::kMemberEnd, c.task);
    e.member = c.member;
    e.target = target;
    e.outcome = c.outcome;
    emit(e);
  }
  if (c.outcome == Outcome::kFailure) {
    if (!t.member_failed) {
      t.member_failed = true;
      t.failed_member = c.member;
    }
    if (!run_error_)
      run_error_ =
          RunError{c.task, c.member,
                   "task '" + std::string(name_of(t)) + "' member " + std::to_string(c.member) + " failed"};
  }
  if (++tasks_[c.task.index()].members_ended == tasks_[c.task.index()].members) finish(c.task);
}

void Scheduler::mark_idle(std::uint32_t w) {
  workers_[w].busy = false;
  if (!workers_[w].fifo.empty()) runnable_.insert(w);
}

void Scheduler::report(TaskId task, std::uint32_t member, Outcome outcome) {
  inbox_.push_back({task, member, outcome});
}

// ---------------------------------------------------------------------------------------------
// One iteration

void Scheduler::dispatch_member(TaskId id, std::uint32_t member, Target target) {
  Task& t = tasks_[id.index()];
  Slot& slot = slots_[t.slot_begin + member];
  DIRSCHED_INVARIANT(!slot.running && !slot.ended);
  slot.running = true;
  ++running_members_;
  if (target.sub) {
    slot.worker = target.sub_index;
    idle_sub_.erase(target.sub_index);
  } else {
    WorkerState& w = workers_[slot.worker];
    DIRSCHED_INVARIANT(!w.busy);
    w.busy = true;
    runnable_.erase(slot.worker);
  }
  const std::uint64_t seq = dispatch_seq_++;
  out_.push_back({id, member, target, seq});
  Event e = event_for(EventKind::kDispatch, id);
  e.member = member;
  e.target = target;
  e.dispatch_seq = seq;
  emit(e);
}

void Scheduler::group_pass() {
  while (!group_fifo_.empty()) {
    const TaskId head = group_fifo_.front();
    const Task& g = tasks_[head.index()];
    if (g.state != TaskState::kReady) {
      group_fifo_.pop_front();
      continue;
    }
    std::vector<WorkerId>& busy = scratch_workers_;
    busy.clear();
    for (std::uint32_t m = 0; m < g.members; ++m) {
      const WorkerState& w = workers_[slots_[g.slot_begin + m].worker];
      if (w.busy) busy.push_back(w.id);
    }
    if (!busy.empty()) {
      // Report a blocked head once per distinct set of busy targets, not once per iteration.
      if (blocked_head_ != head || blocked_busy_ != busy) {
        blocked_head_ = head;
        blocked_busy_ = busy;
        Event e = event_for(EventKind::kGroupBlocked, head);
        e.workers = &busy;
        emit(e);
      }
      return;
    }
    group_fifo_.pop_front();
    set_state(head, TaskState::kRunning);
    {
      Event e = event_for(EventKind::kGroupLaunched, head);
      emit(e);
    }
    const std::uint32_t members = g.members;
    const std::uint32_t begin = g.slot_begin;
    for (std::uint32_t m = 0; m < members; ++m) {
      Target target;
      target.worker = workers_[slots_[begin + m].worker].id;
      dispatch_member(head, m, target);
    }
  }
}

void Scheduler::singles_pass() {
  for (std::uint32_t w = runnable_.first(); w != IndexSet::kNone; w = runnable_.next(w + 1)) {
    WorkerState& ws = workers_[w];
    while (!ws.fifo.empty() && tasks_[ws.fifo.front().index()].state != TaskState::kReady)
      ws.fifo.pop_front();
    if (ws.fifo.empty()) {
      runnable_.erase(w);
      continue;
    }
    const TaskId head = ws.fifo.front();
    ws.fifo.pop_front();
    set_state(head, TaskState::kRunning);
    Target target;
    target.worker = ws.id;
    dispatch_member(head, 0, target);
  }
}

void Scheduler::sub_pass() {
  while (!sub_fifo_.empty()) {
    const TaskId head = sub_fifo_.front();
    sub_fifo_.pop_front();
    const Task& t = tasks_[head.index()];
    if (t.state != TaskState::kReady) continue;
    if (idle_sub_.size() < t.members) {
      sub_fifo_.push_back(head);  // back to the tail; the pass stops
      return;
    }
    set_state(head, TaskState::kRunning);
    const std::uint32_t members = t.members;
    for (std::uint32_t m = 0; m < members; ++m) {
      Target target;
      target.sub = true;
      target.sub_index = idle_sub_.first();
      dispatch_member(head, m, target);
    }
  }
}

const std::vector<Dispatch>& Scheduler::iterate() {
  out_.clear();
  // Step 1. apply() may route consumers, never dispatch, so the inbox cannot grow meanwhile.
  for (std::size_t i = 0; i < inbox_.size(); ++i) apply(inbox_[i]);
  inbox_.clear();
  group_pass();
  singles_pass();
  sub_pass();
  return out_;
}

WorkerId Scheduler::target(TaskId task, std::uint32_t member) const {
  const Task& t = tasks_[task.index()];
  DIRSCHED_INVARIANT(!is_sub(t.kind) && member < t.members);
  return workers_[slots_[t.slot_begin + member].worker].id;
}

std::vector<std::pair<TaskId, std::uint32_t>> Scheduler::running() const {
  std::vector<std::pair<TaskId, std::uint32_t>> out;
  for (std::size_t i = 0; i < tasks_.size(); ++i)
    for (std::uint32_t m = 0; m < tasks_[i].members; ++m)
      if (slots_[tasks_[i].slot_begin + m].running)
        out.emplace_back(TaskId(static_cast<std::uint32_t>(i)), m);
  return out;
}

std::size_t Scheduler::pending_consumers(TaskId task) const {
  std::size_t n = 0;
  for_each_consumer(tasks_[task.index()],
                    [&](TaskId c) { n += tasks_[c.index()].state == TaskState::kPending ? 1 : 0; });
  return n;
}

std::vector<Stuck> Scheduler::stuck() const {
  std::vector<Stuck> out;
  for (std::size_t i = 0; i < tasks_.size(); ++i) {
    const Task& t = tasks_[i];
    if (is_terminal(t.state)) continue;
    std::string reason;
    switch (t.state) {
      case TaskState::kPending:
        reason = "PENDING on " + std::to_string(t.live_producers) + " producer(s) that never completed";
        break;
      case TaskState::kReady:
        if (is_sub(t.kind))
          reason = t.members > registry_.sub_workers()
                       ? "needs " + std::to_string(t.members) + " SUB workers, the pool has " +
                             std::to_string(registry_.sub_workers())
                       : "READY in the SUB FIFO, never dispatched";
        else if (t.kind == TaskKind::kGroup)
          reason = "READY in the group FIFO, never launched";
        else
          reason = "READY on worker " + std::to_string(workers_[slots_[t.slot_begin].worker].id.value()) +
                   ", never dispatched";
        break;
      default:
        reason = "a member never reported its end";
    }
    out.push_back({std::string(name_of(t)), t.state, reason});
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Dump

std::string Scheduler::dump() const {
  std::string out;
  auto task_name = [&](TaskId id) { return std::string(name_of(tasks_[id.index()])); };
  out += "tasks:\n";
  for (std::size_t i = 0; i < tasks_.size(); ++i) {
    const Task& t = tasks_[i];
    out += "  " + std::string(name_of(t)) + " " + std::string(to_string(t.kind)) + " " +
           std::string(to_string(t.state)) + " ended=" + std::to_string(t.members_ended) + "/" +
           std::to_string(t.members) + " live_producers=" + std::to_string(t.live_producers) + " consumers=[";
    for_each_consumer(t, [&](TaskId c) { out += task_name(c) + ","; });
    out += "] members=[";
    for (std::uint32_t m = 0; m < t.members; ++m) {
      const Slot& s = slots_[t.slot_begin + m];
      out += std::to_string(s.worker) + (s.running ? "R" : s.ended ? "E" : "") + ",";
    }
    out += "]\n";
  }
  out += "workers:\n";
  for (const WorkerState& w : workers_) {
    out += "  " + std::to_string(w.id.value()) + (w.busy ? " busy" : " idle") + " fifo=[";
    for (std::size_t i = 0; i < w.fifo.size(); ++i) out += task_name(w.fifo.at(i)) + ",";
    out += "]\n";
  }
  out += "group_fifo=[";
  for (std::size_t i = 0; i < group_fifo_.size(); ++i) out += task_name(group_fifo_.at(i)) + ",";
  out += "]\nsub_fifo=[";
  for (std::size_t i = 0; i < sub_fifo_.size(); ++i) out += task_name(sub_fifo_.at(i)) + ",";
  out += "]\nidle_sub=[";
  for (std::uint32_t i = idle_sub_.first(); i != IndexSet::kNone; i = idle_sub_.next(i + 1))
    out += std::to_string(i) + ",";
  out += "]\ntensor_map:\n";
  for (std::size_t b = 0; b < buffers_.size(); ++b)
    if (producer_of_[b].valid()) out += "  " + buffers_[b].name + " <- " + task_name(producer_of_[b]) + "\n";
  out += "inbox=" + std::to_string(inbox_.size()) + " running=" + std::to_string(running_members_) +
         " live=" + std::to_string(live_) + " run_error=" + (run_error_ ? run_error_->message : "none") +
         "\n";
  return out;
}

void Scheduler::encode(std::vector<std::uint32_t>& out) const {
  // Field for field what dump() prints, in its order; every variable-length list carries its length
  // first, so the words parse back one way and equal words mean equal dumps.
  out.push_back(static_cast<std::uint32_t>(tasks_.size()));
  for (const Task& t : tasks_) {
    out.push_back(static_cast<std::uint32_t>(t.kind) | static_cast<std::uint32_t>(t.state) << 8);
    out.push_back(t.members_ended);
    out.push_back(t.live_producers);
    std::uint32_t n = 0;
    for_each_consumer(t, [&](TaskId) { ++n; });
    out.push_back(n);
    for_each_consumer(t, [&](TaskId c) { out.push_back(c.index()); });
    out.push_back(t.members);
    for (std::uint32_t m = 0; m < t.members; ++m) {
      const Slot& sl = slots_[t.slot_begin + m];
      out.push_back(sl.worker << 2 | (sl.running ? 1u : 0u) | (sl.ended ? 2u : 0u));
    }
  }
  out.push_back(static_cast<std::uint32_t>(workers_.size()));
  for (const WorkerState& w : workers_) {
    out.push_back(static_cast<std::uint32_t>(w.fifo.size()) << 1 | (w.busy ? 1u : 0u));
    for (std::size_t i = 0; i < w.fifo.size(); ++i) out.push_back(w.fifo.at(i).index());
  }
  out.push_back(static_cast<std::uint32_t>(group_fifo_.size()));
  for (std::size_t i = 0; i < group_fifo_.size(); ++i) out.push_back(group_fifo_.at(i).index());
  out.push_back(static_cast<std::uint32_t>(sub_fifo_.size()));
  for (std::size_t i = 0; i < sub_fifo_.size(); ++i) out.push_back(sub_fifo_.at(i).index());
  out.push_back(idle_sub_.size());
  for (std::uint32_t i = idle_sub_.first(); i != IndexSet::kNone; i = idle_sub_.next(i + 1)) out.push_back(i);
  out.push_back(static_cast<std::uint32_t>(producer_of_.size()));
  for (TaskId p : producer_of_) out.push_back(p.index());
  out.push_back(static_cast<std::uint32_t>(inbox_.size()));
  out.push_back(static_cast<std::uint32_t>(running_members_));
  out.push_back(static_cast<std::uint32_t>(live_));
  // The run's error: which member failed (its message is a function of that).
  if (run_error_) {
    out.push_back(1);
    out.push_back(run_error_->task.index());
    out.push_back(run_error_->member);
  } else {
    out.push_back(0);
  }
}

}  // namespace dirsched
