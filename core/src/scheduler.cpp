#include "dirsched/scheduler.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "dirsched/counted_name.hpp"

namespace dirsched {
namespace {

// Whether dump() and encode() show a member's slot as the task's first failure: only in a running
// task, whose future it decides (its kFail names that member, and a task with one ends FAILED); an
// ended task's is history, and two states that differ only there merge. A running task has a failed
// member exactly when one slot shows it, so the task's own flag is not shown.
bool shows_failed_first(TaskState state, bool failed_first) {
  return state == TaskState::kRunning && failed_first;
}

// A broken invariant is a bug in the core or its driver, never a caller mistake: stop at once.
[[noreturn]] void invariant_failed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "dirsched core invariant violated: %s (%s:%d)\n", what, file, line);
  std::abort();
}
#define DIRSCHED_INVARIANT(cond) ((cond) ? static_cast<void>(0) : invariant_failed(#cond, __FILE__, __LINE__))

}  // namespace

Scheduler::Scheduler(Registry registry, Options options, Observer* observer)
    : registry_(std::move(registry)), options_(options), observer_(observer) {
  workers_.resize(registry_.next_level_count());
  for (std::uint32_t i = 0; i < workers_.size(); ++i) {
    workers_[i].id = registry_.worker_at(i).id;
    workers_[i].kind = registry_.worker_at(i).kind;
    workers_[i].frames = registry_.worker_at(i).frames;
    two_frame_workers_ |= workers_[i].frames == 2;
  }
  runnable_.resize(static_cast<std::uint32_t>(workers_.size()));
  reserved_flag_.assign(workers_.size(), false);
  idle_sub_.resize(registry_.sub_workers());
  for (std::uint32_t i = 0; i < registry_.sub_workers(); ++i) idle_sub_.insert(i);
}

BufferId Scheduler::add_buffer(Buffer buffer) {
  registry_.check_owner(buffer.name, buffer.memory, buffer.owner);
  buffers_.push_back(std::move(buffer));
  return BufferId(static_cast<std::uint32_t>(buffers_.size() - 1));
}

// ---------------------------------------------------------------------------------------------
// Submit

std::optional<Rejection> Scheduler::validate(const SubmitRequest& r,
                                             std::vector<std::uint32_t>& targets) const {
  // The steps are those of docs/contract.md, in order; the first failure wins. Messages are built
  // only on the way out: an accepted submit allocates nothing here.
  auto reject = [&](ErrorCode code, const std::string& detail) {
    std::string who = (r.origin.empty() ? std::string() : r.origin + " ") + "task '" + r.name + "': ";
    return std::optional<Rejection>(Rejection{code, who + detail});
  };
  // Handles the core never issued: not a contract step, a caller bug.
  if (!r.callable.valid() || r.callable.index() >= registry_.callable_count())
    return reject(ErrorCode::kUnknownCallable, "unknown callable");
  for (const auto& member : r.args)
    for (const Arg& a : member)
      if (!a.buffer.valid() || a.buffer.index() >= buffers_.size())
        return reject(ErrorCode::kUnknownBuffer, "unknown buffer");
  const Callable& callable = registry_.callable(r.callable);
  const bool sub = is_sub(r.kind);
  const bool group = is_group(r.kind);
  const bool local = callable.ns != Namespace::kRemote;
  const std::size_t members = r.args.size();

  // Step 1: a NEXT_LEVEL submit names its worker(s); a SUB submit names none.
  if (sub) {
    if (r.worker || r.workers) return reject(ErrorCode::kSubTakesNoWorker, "SUB tasks take no worker id");
  } else if (group ? !r.workers : !r.worker) {
    return reject(ErrorCode::kMissingWorker,
                  group ? "a NEXT_LEVEL group needs a workers list" : "a NEXT_LEVEL task needs a worker id");
  }
  const std::size_t count = sub ? 0 : group ? r.workers->size() : 1;
  auto id_at = [&](std::size_t i) -> const WorkerArg& { return group ? (*r.workers)[i] : *r.worker; };
  auto where = [&](std::size_t i) { return group ? " (workers[" + std::to_string(i) + "])" : std::string(); };

  // Step 2: each id in turn, type then sign; the first bad entry decides.
  for (std::size_t i = 0; i < count; ++i) {
    const WorkerArg& w = id_at(i);
    if (!w.is_integer())
      return reject(ErrorCode::kWorkerNotInteger, "worker id " + w.shown() + where(i) + " is not an integer");
    if (w.is_negative())
      return reject(ErrorCode::kWorkerNegative, "worker id " + w.text() + where(i) + " is negative");
  }
  // Step 3: count, then distinctness.
  if (!sub && count != members)
    return reject(ErrorCode::kWorkersCountMismatch,
                  std::to_string(count) + " worker ids for " + std::to_string(members) + " members");
  // The first i named before at some j < i (the smallest such j): sorted, n log n in the members (a
  // 65,536-member group was seconds when every pair was compared).
  {
    std::size_t dup_i = count, dup_j = 0;
    if (count <= 32) {
      for (std::size_t i = 0; i < count && dup_i == count; ++i)
        for (std::size_t j = 0; j < i; ++j)
          if (id_at(i).same_integer(id_at(j))) {
            dup_i = i, dup_j = j;
            break;
          }
    } else {
      std::vector<std::size_t> order(count);
      for (std::size_t i = 0; i < count; ++i) order[i] = i;
      auto key_less = [&](std::size_t a, std::size_t b) {
        const WorkerArg &x = id_at(a), &y = id_at(b);
        if (x.in_range() != y.in_range()) return x.in_range();
        if (x.in_range()) return x.value() < y.value();
        return x.shown() < y.shown();
      };
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return key_less(a, b) || (!key_less(b, a) && a < b);
      });
      for (std::size_t k = 1; k < count; ++k)  // within a run of equal ids: its first index, then its second
        if (id_at(order[k]).same_integer(id_at(order[k - 1])) &&
            (k < 2 || !id_at(order[k - 1]).same_integer(id_at(order[k - 2]))) && order[k] < dup_i)
          dup_i = order[k], dup_j = order[k - 1];
    }
    if (dup_i < count)
      return reject(ErrorCode::kWorkersNotDistinct, "worker id " + id_at(dup_i).text() +
                                                        " is named twice (workers[" + std::to_string(dup_j) +
                                                        "] and workers[" + std::to_string(dup_i) + "])");
  }
  // Step 3b (switch mpi_group_check, #1624), submit_next_level_group only: a workers list that names
  // a rank of an MPI group and has exactly its world size without being the same set.
  if (options_.switches[Switch::kMpiGroupCheck] && r.kind == TaskKind::kGroup)
    for (const Registry::MpiGroup& g : registry_.mpi_groups()) {
      if (count != g.ranks.size()) continue;
      std::size_t in_group = 0;
      for (std::size_t i = 0; i < count; ++i)
        if (id_at(i).in_range() && std::find(g.ranks.begin(), g.ranks.end(), WorkerId(id_at(i).value())) != g.ranks.end())
          ++in_group;
      // The ids are distinct (step 3): the same set is all of them in the group.
      if (in_group > 0 && in_group < count)
        return reject(ErrorCode::kMpiGroupMixed,
                      "the workers list names " + std::to_string(in_group) + " of MPI group '" + g.name + "''s " +
                          std::to_string(g.ranks.size()) + " ranks and has its world size: mixed with other workers");
    }
  // From here on count == members for NEXT_LEVEL submits. Each target is looked up once: `targets`
  // holds its registration index, or kNoWorker when it names no registered worker (step 7 decides).
  constexpr std::uint32_t kNoWorker = std::numeric_limits<std::uint32_t>::max();
  targets.clear();
  for (std::size_t m = 0; m < count; ++m) {
    const WorkerArg& w = id_at(m);
    const auto index = w.in_range() ? registry_.index_of(WorkerId(w.value())) : std::nullopt;
    targets.push_back(index ? *index : kNoWorker);
  }
  auto kind_at = [&](std::size_t m) -> std::optional<WorkerKind> {
    return targets[m] == kNoWorker ? std::nullopt : std::optional<WorkerKind>(workers_[targets[m]].kind);
  };

  // Step 4: the callable's namespace, member by member.
  if (sub) {
    if (callable.ns != Namespace::kLocalPython)
      return reject(ErrorCode::kSubCallableNotPython, "SUB callable '" + callable.name + "' is " +
                                                          std::string(to_string(callable.ns)) +
                                                          ", not LOCAL_PYTHON");
  } else if (local) {
    const WorkerKind runs_here =
        callable.ns == Namespace::kLocalChip ? WorkerKind::kLocalChip : WorkerKind::kLocalWorker;
    for (std::size_t m = 0; m < members; ++m) {
      const auto kind = kind_at(m);
      if (kind && *kind != WorkerKind::kRemote) {
        // A registered local child decides by its kind.
        if (*kind != runs_here)
          return reject(ErrorCode::kNamespaceMismatch, std::string(to_string(callable.ns)) + " callable '" +
                                                           callable.name + "' cannot run on " +
                                                           std::string(to_string(*kind)) + " worker " +
                                                           id_at(m).text());
      } else if (!registry_.runs_locally(callable.ns)) {
        // Any other target: the check is per level, as in the runtime.
        return reject(ErrorCode::kNamespaceMismatch,
                      std::string(to_string(callable.ns)) + " callable '" + callable.name +
                          "' aimed at worker " + id_at(m).text() + ": no registered " +
                          std::string(to_string(runs_here)) + " child runs it here");
      }
    }
  }
  // Step 5: a local callable aimed at a registered remote worker.
  if (!sub && local)
    for (std::size_t m = 0; m < members; ++m)
      if (kind_at(m) == WorkerKind::kRemote)
        return reject(ErrorCode::kLocalCallableRemoteTarget,
                      std::string(to_string(callable.ns)) + " callable '" + callable.name +
                          "' cannot run on remote worker " + id_at(m).text());
  // Step 6: tensor data, member by member, arg by arg. A SUB member: a remote buffer anywhere in
  // its args first, then (switch arg_guard, #1729) a child-memory buffer.
  for (std::size_t m = 0; m < members; ++m) {
    if (sub && options_.switches[Switch::kArgGuard]) {
      bool remote = false;
      for (const Arg& a : r.args[m]) remote = remote || buffers_[a.buffer.index()].memory == Memory::kRemote;
      if (!remote)
        for (const Arg& a : r.args[m])
          if (buffers_[a.buffer.index()].memory == Memory::kChild)
            return reject(ErrorCode::kSubChildBuffer, "SUB task touches child-memory buffer '" +
                                                          buffers_[a.buffer.index()].name +
                                                          "': a Python sub-worker cannot map device memory");
    }
    for (const Arg& a : r.args[m]) {
      const Buffer& b = buffers_[a.buffer.index()];
      if (sub) {
        if (b.memory == Memory::kRemote)
          return reject(ErrorCode::kSubRemoteBuffer, "SUB task touches remote buffer '" + b.name + "'");
        continue;
      }
      const WorkerArg& target = id_at(m);
      if (b.memory == Memory::kChild && !(target.in_range() && target.value() == b.owner->value()))
        return reject(ErrorCode::kTargetNotEligible,
                      "worker " + target.text() + " cannot touch child buffer '" + b.name +
                          "' owned by worker " + std::to_string(b.owner->value()));
      if (b.memory == Memory::kRemote && local)
        return reject(ErrorCode::kTargetNotEligible, std::string(to_string(callable.ns)) + " callable '" +
                                                         callable.name + "' cannot touch remote buffer '" +
                                                         b.name + "'");
      if (b.memory == Memory::kHost && !local && a.tag != Tag::kInput)
        return reject(ErrorCode::kRemoteHostBufferWritten,
                      "REMOTE callable '" + callable.name + "' touches host buffer '" + b.name + "' as " +
                          std::string(to_string(a.tag)) + ": host data reaches a remote endpoint read-only");
    }
  }
  // Step 7: an empty group, then registration.
  if (members == 0)
    return reject(sub ? ErrorCode::kEmptyGroup : ErrorCode::kWorkersCountMismatch,
                  "a group needs at least one member");
  if (r.kind == TaskKind::kSub && members != 1)
    return reject(ErrorCode::kEmptyGroup, "a SUB single has exactly one member");
  for (std::size_t m = 0; m < count; ++m)
    if (targets[m] == kNoWorker)
      return reject(ErrorCode::kWorkerNotRegistered,
                    "worker id " + id_at(m).text() + where(m) + " names no NEXT_LEVEL worker");
  // Step 8: a REMOTE callable's eligible set and the owners of the remote buffers each member touches.
  if (!sub && !local)
    for (std::size_t m = 0; m < members; ++m) {
      const WorkerState& w = workers_[targets[m]];
      if (!registry_.eligible(r.callable, targets[m]))
        return reject(ErrorCode::kTargetNotEligible, "worker " + std::to_string(w.id.value()) +
                                                         " is not eligible for REMOTE callable '" +
                                                         callable.name + "'");
      for (const Arg& a : r.args[m]) {
        const Buffer& b = buffers_[a.buffer.index()];
        if (b.memory == Memory::kRemote && *b.owner != w.id)
          return reject(ErrorCode::kTargetNotEligible,
                        "worker " + std::to_string(w.id.value()) + " cannot touch remote buffer '" + b.name +
                            "' owned by worker " + std::to_string(b.owner->value()));
      }
    }
  // Step 9 (switch arg_guard, #1729), member by member: a written arg must not share a byte with a
  // later arg of the same member on the same buffer, whatever its tag. Host and child buffers only
  // (remote buffers: unsettled upstream); members of one group are not compared with each other.
  if (options_.switches[Switch::kArgGuard])
    for (std::size_t m = 0; m < members; ++m) {
      const std::vector<Arg>& args = r.args[m];
      for (std::size_t i = 0; i < args.size(); ++i) {
        const Tag t = args[i].tag;
        if (t != Tag::kOutput && t != Tag::kOutputExisting && t != Tag::kInOut) continue;
        const Buffer& b = buffers_[args[i].buffer.index()];
        if (b.memory == Memory::kRemote) continue;
        for (std::size_t j = i + 1; j < args.size(); ++j)
          if (args[j].buffer == args[i].buffer && views_overlap(args[i].range, args[j].range))
            return reject(ErrorCode::kOverlappingWrites,
                          (members > 1 ? "member " + std::to_string(m) + ": " : std::string()) + "arg " +
                              std::to_string(i) + " (" + std::string(to_string(t)) + ") and arg " +
                              std::to_string(j) + " (" + std::string(to_string(args[j].tag)) +
                              ") share bytes of buffer '" + b.name + "'");
      }
    }
  return std::nullopt;
}

SubmitResult Scheduler::submit(const SubmitRequest& r) {
  // Validation comes first: after the run's first failure an invalid submit is still refused with
  // its own code; only a valid one meets fail-fast.
  const RunId run = submitting_run();  // CoreError (nothing changed) when no callback is open
  RunState& rs = runs_[run.index()];
  std::vector<std::uint32_t>& targets = scratch_targets_;
  if (auto rejection = validate(r, targets)) {
    Event e{EventKind::kReject};
    e.run = run;
    e.name = r.name;
    e.task_kind = r.kind;
    e.op_kind = r.kind;
    e.rejection = &*rejection;
    emit(e);
    return {TaskId(), std::move(rejection)};
  }
  if (rs.info.error && options_.fail_fast) {
    // Fail-fast: the submit raises its own run's first error and the task is never submitted.
    Rejection raised{ErrorCode::kRunFailed, rs.info.error->message};
    Event e{EventKind::kNotSubmitted};
    e.run = run;
    e.name = r.name;
    e.task_kind = r.kind;
    e.op_kind = r.kind;
    e.rejection = &raised;
    emit(e);
    return {TaskId(), std::move(raised)};
  }

  // Accepted: from here on the submit writes state.
  const TaskId id(static_cast<std::uint32_t>(tasks_.size()));
  Task task;
  std::uint32_t last_of = 0;  // into cold_ once the task is held
  task.name_begin = names_base_ + static_cast<std::uint32_t>(names_.size());
  task.op = r.kind;
  const auto members = static_cast<std::uint32_t>(r.args.size());
  DIRSCHED_INVARIANT(members >= 1);  // validation refused an empty group
  // A group of one member is a single in every way: routed to FIFO[workers[0]] (or the SUB FIFO as
  // a SUB single), never to the group FIFO. Only `op` remembers which submit made it.
  task.kind = members == 1 && r.kind == TaskKind::kGroup      ? TaskKind::kSingle
              : members == 1 && r.kind == TaskKind::kSubGroup ? TaskKind::kSub
                                                              : r.kind;
  task.state = TaskState::kPending;
  task.callable = static_cast<std::uint16_t>(r.callable.index());  // validate() checked it is registered
  if (run_spans_.empty() || run_spans_.back().run != run.index()) run_spans_.push_back({id.index(), run.index()});
  if (!is_group(task.kind)) {
    task.where = is_sub(r.kind) ? 0 : targets[0];
  } else {
    task.where = static_cast<std::uint32_t>(slots_.size());
    slots_.push_back({members});  // the header
    for (std::uint32_t m = 0; m < members; ++m) slots_.push_back({is_sub(r.kind) ? 0 : targets[m]});
  }

  // The dependency walk: every arg in order (member 0's args, then member 1's, ...) against the one
  // tensor map, which the walk updates as it goes. INPUT looks up, INOUT looks up then inserts,
  // OUTPUT / OUTPUT_EXISTING insert. A lookup that finds this task itself (it wrote the buffer
  // earlier in the walk) is ignored, so members of one task never wait for each other, nor for a
  // writer that this task has already replaced. Each distinct producer counts once.
  std::vector<TaskId>& producers = scratch_producers_;
  producers.clear();
  std::vector<Dependency>& deps = scratch_deps_;
  deps.clear();
  TaskId poisoner;
  auto found = [&](TaskId p, BufferId buffer) {
    deps.push_back({p, buffer});
    const TaskState ps = producer_state(p);
    // A cancelled producer (run_cancellation; only a submit after its run raised can find one) will
    // never write its outputs either.
    if (ps == TaskState::kFailed || ps == TaskState::kPoisoned || ps == TaskState::kCancelled) {
      if (!poisoner.valid() || p < poisoner) poisoner = p;
    } else if (ps != TaskState::kCompleted) {  // a completed producer is not a live one
      producers.push_back(p);
    }
  };
  const bool views = options_.switches[Switch::kViewDeps];
  for (const auto& member : r.args)
    for (const Arg& a : member) {
      const bool reads = a.tag == Tag::kInput || a.tag == Tag::kInOut;
      const bool writes = a.tag == Tag::kOutput || a.tag == Tag::kOutputExisting || a.tag == Tag::kInOut;
      if (!views) {  // the last-writer map: ranges are ignored
        TaskId& entry = producer_entry(run.index(), a.buffer);
        if (reads && entry.valid() && entry != id) found(entry, a.buffer);
        if (writes && entry != id) {
          if (entry.valid()) scratch_replaced_.push_back(entry);  // released after the submit event names it
          entry = id;
          ++last_of;
        }
        continue;
      }
      // view_deps (#1902): every entry sharing a byte with the arg's view, in entry order, each
      // producer once per lookup; an insert drops the entries inside its view and appends itself.
      std::vector<ViewEntry>& list = view_entries(run.index(), a.buffer);
      if (reads) {
        const std::size_t first = deps.size();
        for (const ViewEntry& e : list) {
          if (e.task == id || !views_overlap(e.range, a.range)) continue;
          bool seen = false;
          for (std::size_t k = first; k < deps.size() && !seen; ++k) seen = deps[k].producer == e.task;
          if (!seen) found(e.task, a.buffer);
        }
      }
      if (writes) {
        // Every entry a task holds counts in its last_of (reclamation keeps its name and state while
        // any entry names it); the dropped ones are released after the submit event names them.
        const auto inside = [&](const ViewEntry& e) { return view_inside(e.range, a.range); };
        for (const ViewEntry& e : list)
          if (inside(e)) scratch_replaced_.push_back(e.task);
        list.erase(std::remove_if(list.begin(), list.end(), inside), list.end());
        list.push_back({a.range, id});
        ++last_of;
      }
    }
  std::sort(producers.begin(), producers.end());
  producers.erase(std::unique(producers.begin(), producers.end()), producers.end());

  tasks_.reserve(tasks_.held() + 1);  // a name appended must have its task: name_of reads the next one's start
  hold_name(task, id, r.name);
  tasks_.push_back(task);
  if (last_of) cold_.ref(id.index()).last_of = last_of;
  ++live_;
  ++rs.info.live;
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
    task_ended(tasks_[id.index()]);
    Event e = event_for(EventKind::kPoison, id);
    e.cause = poisoner;
    emit(e);
  } else if (!producers.empty()) {
    Task& t = tasks_[id.index()];
    t.count = static_cast<std::uint32_t>(producers.size());  // its live producers
    for (TaskId p : producers) add_consumer(p, id);
    Event e = event_for(EventKind::kPending, id);
    e.producers = &producers;
    emit(e);
  } else {
    make_ready(id);
    wake_ = true;  // a submit whose task turned READY wakes the loop (the loop rule)
  }
  // Only now, the submit's events (deps, the poison cause) having named them.
  for (TaskId p : scratch_replaced_) release_last_writer(p);
  scratch_replaced_.clear();
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
  const RunId run = submitting_run();
  Event e{EventKind::kNotSubmitted};
  e.name = name;
  e.run = run;
  Rejection raised;
  if (const auto& error = runs_[run.index()].info.error) {
    raised = {ErrorCode::kRunFailed, error->message};
    e.rejection = &raised;
  }
  emit(e);
}

void Scheduler::not_submitted(std::string_view name, RunId run, bool callback_raised) {
  run_info(run);  // CoreError for a run never declared
  Event e{EventKind::kNotSubmitted};
  e.name = name;
  e.run = run;
  e.callback_raised = callback_raised;
  emit(e);
}

// ---------------------------------------------------------------------------------------------
// Runs

RunId Scheduler::submitting_run() {
  if (open_run_.valid()) return open_run_;
  if (declared_runs_)
    throw CoreError(CoreErrorCode::kRunOrder, "a submit with no run's callback open (begin_run first)");
  // The implicit run: open for ever, never ended, silent.
  RunState rs;
  rs.info.name = "main";
  rs.info.implicit = true;
  rs.info.begun = true;
  rs.info.begin_s = now_;
  runs_.push_back(std::move(rs));
  open_run_ = last_run_ = RunId(static_cast<std::uint32_t>(runs_.size() - 1));
  return open_run_;
}

RunId Scheduler::add_run(std::string name) {
  if (!declared_runs_ && !runs_.empty())
    throw CoreError(CoreErrorCode::kRunOrder, "add_run after submits to the implicit run");
  declared_runs_ = true;
  RunState rs;
  rs.info.name = std::move(name);
  runs_.push_back(std::move(rs));
  return RunId(static_cast<std::uint32_t>(runs_.size() - 1));
}

void Scheduler::begin_run(RunId run) {
  const RunInfo& info = run_info(run);
  if (open_run_.valid())
    throw CoreError(CoreErrorCode::kRunOrder, "begin_run of '" + info.name + "' while the callback of '" +
                                                  runs_[open_run_.index()].info.name + "' is open");
  if (info.begun) throw CoreError(CoreErrorCode::kRunOrder, "run '" + info.name + "' was begun before");
  if (!can_admit())
    throw CoreError(CoreErrorCode::kRunOrder, "begin_run of '" + info.name + "': " +
                                                  std::to_string(run_fifo_.size()) +
                                                  " runs are admitted and not terminal (pipeline_depth " +
                                                  std::to_string(options_.pipeline_depth) + ")");
  RunInfo& r = runs_[run.index()].info;
  r.begun = true;
  r.begin_s = now_;
  open_run_ = last_run_ = run;
  if (fifo_on()) {  // admitted at the tail of the run FIFO; active when the FIFO was empty
    run_fifo_.push_back(run.index());
    if (!active_run_.valid()) active_run_ = run;
  }
}

std::size_t Scheduler::raise_run(const std::string& message) {
  if (!open_run_.valid() && !declared_runs_) submitting_run();  // a raise before any submit: the implicit run
  if (!open_run_.valid()) throw CoreError(CoreErrorCode::kRunOrder, "raise_run with no run's callback open");
  RunInfo& r = runs_[open_run_.index()].info;
  if (r.raised) throw CoreError(CoreErrorCode::kRunOrder, "run '" + r.name + "' raised twice");
  r.raised = true;
  wake_ = true;  // a raise wakes the loop (the loop rule), with or without run_cancellation
  if (!r.error) r.error = RunError{TaskId(), 0, message};  // a member failure stays its first error
  if (!r.implicit) {
    Event e{EventKind::kRunRaise};
    e.name = r.name;
    e.run = open_run_;
    e.message = message;
    emit(e);
  }
  // The run_cancellation seam (#1541): off, the run's submitted tasks run or are poisoned as before.
  if (!options_.switches[Switch::kRunCancellation]) return 0;
  return cancel_unstarted(open_run_.index());
}

std::size_t Scheduler::cancel_unstarted(std::uint32_t run) {
  // Every task of the run that has not started, in submit order (ids below the reclaimed window are
  // terminal). Its consumers are of the same run (one tensor map per run) and not started either, so
  // they are cancelled here too, never released or poisoned later; a running task's consumers likewise.
  const std::string cause = runs_[run].info.error->message;
  std::size_t cancelled = 0;
  bool groups = false, subs = false;
  std::vector<std::uint32_t> fifos;  // workers whose FIFO held a cancelled single
  for (std::size_t i = tasks_.floor(); i < tasks_.size(); ++i) {
    Task& t = tasks_[i];
    if (run_at(static_cast<std::uint32_t>(i)) != run || (t.state != TaskState::kPending && t.state != TaskState::kReady)) continue;
    if (t.state == TaskState::kReady) {  // it is queued: it leaves its queue below, once per queue
      if (t.kind == TaskKind::kSingle)
        fifos.push_back(t.where);
      else if (t.kind == TaskKind::kGroup)
        groups = true;
      else
        subs = true;
    }
    const TaskId id(static_cast<std::uint32_t>(i));
    set_state(id, TaskState::kCancelled);
    task_ended(t);
    ++cancelled;
    Event e = event_for(EventKind::kCancel, id);
    e.message = cause;
    emit(e);
  }
  // No queue keeps a cancelled entry (queue lengths, the stall condition and reclamation read them).
  const auto gone = [&](TaskId q) { return tasks_[q.index()].state == TaskState::kCancelled; };
  std::sort(fifos.begin(), fifos.end());
  fifos.erase(std::unique(fifos.begin(), fifos.end()), fifos.end());
  for (std::uint32_t w : fifos) {
    workers_[w].fifo.erase_if(gone);
    if (workers_[w].fifo.empty()) runnable_.erase(w);
  }
  if (groups) group_fifo_.erase_if(gone);
  if (subs) sub_fifo_.erase_if(gone);
  std::vector<TaskId>& parked = runs_[run].parked;  // whole_run_fifo: a run that is not active
  parked.erase(std::remove_if(parked.begin(), parked.end(), gone), parked.end());
  check_run_end(run);  // no-op while the callback is open; end_run() checks again
  return cancelled;
}

void Scheduler::end_run(std::optional<std::string> raised) {
  if (raised) raise_run(*raised);
  if (!open_run_.valid()) throw CoreError(CoreErrorCode::kRunOrder, "end_run with no run's callback open");
  const std::uint32_t run = open_run_.index();
  RunInfo& r = runs_[run].info;
  if (r.implicit) return;  // the implicit run's callback is the whole trace: it never closes
  r.callback_ended = true;
  wake_ = true;  // a callback's end wakes the loop (the loop rule)
  r.callback_end_s = now_;
  open_run_ = RunId();
  check_run_end(run);
}

void Scheduler::task_ended(const Task& t) {
  --live_;
  RunInfo& run = runs_[run_of_entry(t)].info;
  DIRSCHED_INVARIANT(run.live > 0);
  --run.live;
}

void Scheduler::check_run_end(std::uint32_t run) {
  RunState& rs = runs_[run];
  RunInfo& r = rs.info;
  if (r.terminal || r.implicit || !r.callback_ended || r.live > 0) return;
  // whole_run_fifo: a callback that returned normally ends its run only while the run is active (an
  // empty successor waits for its turn); a raised run ends as soon as its tasks are final.
  if (fifo_on() && !r.raised && active_run_ != RunId(run)) return;
  r.terminal = true;
  r.end_s = now_;
  // No later lookup can reach its tensor map: its producers are released (see reclaim()).
  for (TaskId p : rs.producer_of)
    if (p.valid()) release_last_writer(p);
  for (const std::vector<ViewEntry>& list : rs.views)
    for (const ViewEntry& e : list) release_last_writer(e.task);
  std::vector<TaskId>().swap(rs.producer_of);
  std::vector<std::vector<ViewEntry>>().swap(rs.views);
  Event e{EventKind::kRunEnd};
  e.name = r.name;
  e.run = RunId(run);
  e.run_failed = r.error.has_value();
  emit(e);
  if (fifo_on()) {  // it leaves the run FIFO; when it was the active run, the next one is promoted
    run_fifo_.erase(std::find(run_fifo_.begin(), run_fifo_.end(), run));
    if (active_run_ == RunId(run)) promote();
  }
}

void Scheduler::promote() {
  active_run_ = run_fifo_.empty() ? RunId() : RunId(run_fifo_.front());
  if (!active_run_.valid()) return;
  ++promotions_;
  wake_ = true;  // a promotion wakes the loop; during an iteration's step 1, that iteration takes it
  // Its READY tasks enter their queues in READY order: the next group pass sees every READY group of
  // the run before the singles pass places any single (as after a batch).
  std::vector<TaskId> parked;
  parked.swap(runs_[active_run_.index()].parked);
  for (TaskId id : parked)
    if (tasks_[id.index()].state == TaskState::kReady) enqueue(id);
  // A run whose callback returned while it waited, with nothing left, ends now (and promotes the next).
  check_run_end(active_run_.index());
}

TaskId& Scheduler::producer_entry(std::uint32_t run, BufferId buffer) {
  std::vector<TaskId>& map = runs_[run].producer_of;
  if (map.size() <= buffer.index()) map.resize(buffers_.size());
  return map[buffer.index()];
}

std::vector<Scheduler::ViewEntry>& Scheduler::view_entries(std::uint32_t run, BufferId buffer) {
  std::vector<std::vector<ViewEntry>>& map = runs_[run].views;
  if (map.size() <= buffer.index()) map.resize(buffers_.size());
  return map[buffer.index()];
}

const RunInfo& Scheduler::run_info(RunId run) const {
  if (!run.valid() || run.index() >= runs_.size())
    throw CoreError(CoreErrorCode::kUnknownTask, "run id was never issued");
  return runs_[run.index()].info;
}

const std::optional<RunError>& Scheduler::run_error() const {
  const RunId r = open_run_.valid() ? open_run_ : last_run_;
  return r.valid() ? runs_[r.index()].info.error : kNoError;
}

// ---------------------------------------------------------------------------------------------
// Routing and transitions

Event Scheduler::event_for(EventKind kind, TaskId id) const {
  Event e{kind};
  e.task = id;
  if (!observer_) return e;  // what follows is read only by an observer (emit())
  const Task& t = tasks_[id.index()];
  e.run = RunId(run_at(id.index()));
  e.name = t.flags & kCountedName ? event_name(id.index(), t) : text_at(t.name_begin, name_end(t));
  e.task_kind = t.kind;
  e.op_kind = t.op;
  e.member_count = members_of(t);
  return e;
}

void Scheduler::set_state(TaskId id, TaskState to) {
  Task& t = tasks_[id.index()];
  DIRSCHED_INVARIANT(transition_allowed(TaskState{t.state}, to));
  // `count` turns from live producers into members ended here: both are 0 (see Task).
  DIRSCHED_INVARIANT(to != TaskState::kRunning || t.count == 0);
  t.state = to;
}

void Scheduler::make_ready(TaskId id) {
  set_state(id, TaskState::kReady);
  const Task& t = tasks_[id.index()];
  Event e = event_for(EventKind::kReady, id);
  switch (t.kind) {
    case TaskKind::kSingle:
      e.queue = QueueKind::kWorker;
      e.queue_worker = workers_[t.where].id;
      break;
    case TaskKind::kGroup:
      e.queue = QueueKind::kGroup;
      break;
    case TaskKind::kSub:
    case TaskKind::kSubGroup:
      e.queue = QueueKind::kSub;
      break;
  }
  // The whole_run_fifo seam (#1541): a task of a run that is not active waits in its run's part of the
  // queue; the passes see it once its run is promoted.
  if (const std::uint32_t run = fifo_on() ? run_at(id.index()) : 0; fifo_on() && RunId(run) != active_run_)
    runs_[run].parked.push_back(id);
  else
    enqueue(id);
  emit(e);
}

void Scheduler::enqueue(TaskId id) {
  const Task& t = tasks_[id.index()];
  switch (t.kind) {
    case TaskKind::kSingle: {
      const std::uint32_t w = t.where;
      workers_[w].fifo.push_back(id);
      if (!workers_[w].busy) runnable_.insert(w);
      break;
    }
    case TaskKind::kGroup:
      group_fifo_.push_back(id);
      break;
    case TaskKind::kSub:
    case TaskKind::kSubGroup:
      sub_fifo_.push_back(id);
      break;
  }
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
    task_ended(tasks_[c.index()]);
    Event e = event_for(EventKind::kPoison, c);
    e.cause = via;
    emit(e);
    for_each_consumer(tasks_[c.index()], [&, c = c](TaskId next) { work.emplace_back(next, c); });
  }
}

void Scheduler::add_consumer(TaskId producer, TaskId consumer) {
  DIRSCHED_INVARIANT(producer.index() >= reclaimed_ && producer.index() < tasks_.size());
  Cold& p = cold_.ref(producer.index());
  const auto e = static_cast<std::uint32_t>(edges_.size());
  edges_.push_back({consumer, kNoEdge});
  // The ring: the new edge is the last, its next the first.
  if (p.consumers == kNoEdge) {
    edges_[e].next = e;
  } else {
    edges_[e].next = edges_[p.consumers].next;
    edges_[p.consumers].next = e;
  }
  p.consumers = e;
}

void Scheduler::finish(TaskId id) {
  Task& t = tasks_[id.index()];
  task_ended(t);
  if (!(t.flags & kMemberFailed)) {
    set_state(id, TaskState::kCompleted);
    Event e = event_for(EventKind::kComplete, id);
    emit(e);
    for_each_consumer(tasks_[id.index()], [&](TaskId c) {
      Task& ct = tasks_[c.index()];
      if (ct.state != TaskState::kPending) return;
      DIRSCHED_INVARIANT(ct.count > 0);  // its live producers (it is PENDING)
      if (--ct.count == 0) make_ready(c);
    });
  } else {
    set_state(id, TaskState::kFailed);
    Event e = event_for(EventKind::kFail, id);
    e.member = 0;
    while (!read_slot(t, e.member).has(kFailedFirst)) {
      ++e.member;
      DIRSCHED_INVARIANT(e.member < members_of(t));
    }
    emit(e);
    poison_from(id);
  }
  check_run_end(run_at(id.index()));
}

void Scheduler::apply(const Completion& c, bool batch_start) {
  DIRSCHED_INVARIANT(c.task.valid() && c.task.index() < tasks_.size());
  Task& t = tasks_[c.task.index()];
  DIRSCHED_INVARIANT(t.state == TaskState::kRunning && c.member < members_of(t));
  SlotRef slot = this->slot(t, c.member);
  DIRSCHED_INVARIANT(slot.has(kRunning) && !slot.has(kEnded) && slot.has(kReported));  // report() checked
  slot.clear(kRunning | kReported);
  slot.set(kEnded);
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
    e.batch_start = batch_start;
    emit(e);
  }
  if (c.outcome == Outcome::kFailure) {
    if (!(t.flags & kMemberFailed)) {
      t.flags |= kMemberFailed;
      slot.set(kFailedFirst);
    }
    if (std::optional<RunError>& error = runs_[run_of_entry(t)].info.error; !error)
      error =
          RunError{c.task, c.member,
                   "task '" + std::string(name_of(t)) + "' member " + std::to_string(c.member) + " failed"};
  }
  if (++t.count == members_of(t)) finish(c.task);  // count: its members ended
}

void Scheduler::mark_idle(std::uint32_t w) {
  workers_[w].busy = false;
  if (!workers_[w].fifo.empty()) runnable_.insert(w);
}

void Scheduler::report(TaskId task, std::uint32_t member, Outcome outcome) {
  // Every check before the first write: a refused report leaves the core as it was.
  const Task& t = task_at(task);
  if (member >= members_of(t))
    throw CoreError(CoreErrorCode::kUnknownMember, "report: task '" + std::string(name_of(t)) + "' has " +
                                                       std::to_string(members_of(t)) + " member(s), not member " +
                                                       std::to_string(member));
  SlotRef slot = this->slot(tasks_[task.index()], member);
  if (!slot.has(kRunning))
    throw CoreError(CoreErrorCode::kNotRunning,
                    "report: task '" + std::string(name_of(t)) + "' member " + std::to_string(member) +
                        (slot.has(kEnded) ? " has already ended" : " was never dispatched"));
  if (slot.has(kReported))
    throw CoreError(CoreErrorCode::kDoubleReport, "report: task '" + std::string(name_of(t)) + "' member " +
                                                      std::to_string(member) + " is already reported");
  inbox_.push_back({task, member, outcome});
  slot.set(kReported);
  wake_ = true;  // the completions of an instant wake the loop (the loop rule)
}

// The registration_order_completions seam (#1754): the order of one instant's ends.
void Scheduler::report_instant(std::vector<MemberEnd>& ends) {
  if (!options_.switches[Switch::kRegistrationOrderCompletions]) {
    // Dispatch order.
    std::sort(ends.begin(), ends.end(), [](const MemberEnd& a, const MemberEnd& b) { return a.seq < b.seq; });
  } else if (ends.size() > 1) {
    // The worker that ran each member: NEXT_LEVEL registration index, then workers_.size() + SUB index.
    // An end that names no member of a held task goes last (report() refuses it there).
    const auto position = [&](const MemberEnd& e) -> std::uint64_t {
      if (!e.task.valid() || e.task.index() < reclaimed_ || e.task.index() >= tasks_.size())
        return std::numeric_limits<std::uint64_t>::max();
      const Task& t = tasks_[e.task.index()];
      if (e.member >= members_of(t)) return std::numeric_limits<std::uint64_t>::max();
      const std::uint32_t w = read_slot(t, e.member).worker;
      return is_sub(t.kind) ? workers_.size() + w : w;
    };
    std::vector<std::pair<std::pair<std::uint64_t, std::uint64_t>, std::size_t>> keyed;
    keyed.reserve(ends.size());
    for (std::size_t i = 0; i < ends.size(); ++i) keyed.push_back({{position(ends[i]), ends[i].seq}, i});
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<MemberEnd> sorted;
    sorted.reserve(ends.size());
    for (const auto& k : keyed) sorted.push_back(ends[k.second]);
    ends.swap(sorted);
  }
  for (const MemberEnd& e : ends) report(e.task, e.member, e.outcome);
  ends.clear();
}

void Scheduler::reclaimed_entry_named(std::size_t i, std::size_t floor) {
  std::fprintf(stderr, "dirsched: internal error: core entry %zu named after it was reclaimed (entries below %zu are)\n",
               i, floor);
  std::abort();
}

TaskState Scheduler::producer_state(TaskId p) const {
  if (p.index() >= reclaimed_) return tasks_[p.index()].state;
  return last_writers_.at(p.index()).state;
}

void Scheduler::release_last_writer(TaskId p) {
  if (p.index() >= reclaimed_) {
    --cold_.ref(p.index()).last_of;
    return;
  }
  const auto it = last_writers_.find(p.index());
  if (--it->second.buffers == 0) last_writers_.erase(it);
}

void Scheduler::hold_name(Task& task, TaskId id, std::string_view name) {
  // It counts up when the previous task is held (its text, or its run's base's, still is) and the
  // name is its prefix with its number plus one: as text, the digits of next_count_ (canonical).
  if (next_count_ && reclaimed_ < tasks_.size()) {
    const NextCount& n = *next_count_;
    if (name.size() == n.prefix_size + n.size &&
        std::memcmp(name.data() + n.prefix_size, n.digits, n.size) == 0 &&
        name.substr(0, n.prefix_size) == text_at(n.prefix_begin, n.prefix_begin + n.prefix_size)) {
      task.flags |= kCountedName;
      if (!(tasks_[id.index() - 1].flags & kCountedName)) {
        name_runs_.push_back({id.index(), tasks_[id.index() - 1].name_begin});
        event_name_cache_ = {};
      }
      if (!next_count_->count_up()) next_count_.reset();
      return;
    }
  }
  names_.append(name.data(), name.size());
  next_count_.reset();
  if (const std::optional<CountedName> c = counted_name(name)) {
    NextCount n;
    n.prefix_begin = task.name_begin;
    n.prefix_size = static_cast<std::uint32_t>(c->prefix);
    const auto r = std::to_chars(n.digits, n.digits + sizeof n.digits, c->number);
    n.size = static_cast<std::uint8_t>(r.ptr - n.digits);
    if (n.count_up()) next_count_ = n;
  }
}

bool Scheduler::NextCount::count_up() {
  for (std::size_t i = size; i-- > 0;) {
    if (digits[i] != '9') {
      ++digits[i];
      return true;
    }
    digits[i] = '0';
  }
  // All nines: one more digit, at most 19 (counted_name).
  if (size == 19) return false;
  std::memmove(digits + 1, digits, size);
  digits[0] = '1';
  ++size;
  return true;
}

std::deque<Scheduler::NameRun>::const_iterator Scheduler::run_after(std::size_t index) const {
  const auto next = std::upper_bound(name_runs_.begin(), name_runs_.end(), index,
                                     [](std::size_t i, const NameRun& r) { return i < r.first; });
  DIRSCHED_INVARIANT(next != name_runs_.begin());
  return next;
}

Scheduler::CountedRun Scheduler::counted_run(const NameRun& run, const Task& t) const {
  const std::string_view base = text_at(run.base_begin, t.name_begin);  // a counted name holds no text
  const std::optional<CountedName> n = counted_name(base);
  DIRSCHED_INVARIANT(n.has_value());
  return {base.substr(0, n->prefix), n->number - (run.first - 1)};
}

std::string_view Scheduler::event_name(std::size_t index, const Task& t) const {
  // event_name_ keeps the prefix of the run it last wrote, and room for the digits after it: the
  // digits are all that change within a run, written in place.
  constexpr std::size_t kDigits = 20;  // a uint64's
  EventName& c = event_name_cache_;
  if (index < c.first || index >= c.end) {
    const auto next = run_after(index);
    const NameRun& run = *std::prev(next);
    const CountedRun counted = counted_run(run, t);
    c.first = run.first;
    c.end = next == name_runs_.end() ? std::numeric_limits<std::size_t>::max() : next->first;
    c.prefix = counted.prefix.size();
    c.zero = counted.zero;
    event_name_.assign(counted.prefix);
    event_name_.resize(c.prefix + kDigits);
  }
  char* digits = event_name_.data() + c.prefix;
  const auto r = std::to_chars(digits, digits + kDigits, c.zero + index);
  return {event_name_.data(), static_cast<std::size_t>(r.ptr - event_name_.data())};
}

void Scheduler::name_into(const Task& t, std::string& out) const {
  if (!(t.flags & kCountedName)) {
    out.assign(text_at(t.name_begin, name_end(t)));
    return;
  }
  const std::size_t index = tasks_.index_of(t);
  const CountedRun counted = counted_run(*std::prev(run_after(index)), t);
  counted_text(counted.prefix, counted.zero + index, out);
}

std::string Scheduler::name(TaskId task) const {
  if (task.valid() && task.index() < reclaimed_)
    if (const auto it = last_writers_.find(task.index()); it != last_writers_.end()) return it->second.name;
  return name_of(task_at(task));
}

void Scheduler::reclaim() {
  // The front of the window: a task is reclaimed once it and every earlier task are terminal (see
  // set_reclaim()). The group whose stall episode is tracked is kept, whatever its state.
  std::size_t front = reclaimed_;
  std::size_t slot_floor = slots_.floor();  // past the slots of the last group reclaimed (submit order)
  while (front < tasks_.size() && is_terminal(tasks_[front].state) &&
         TaskId(static_cast<std::uint32_t>(front)) != stall_head_) {
    const Task& t = tasks_[front];
    if (is_group(t.kind)) slot_floor = t.where + 1 + members_of(t);
    if (const std::uint32_t last_of = cold_.get(front).last_of; last_of > 0)
      last_writers_.emplace(static_cast<std::uint32_t>(front), LastWriter{std::string(name_of(t)), t.state, last_of});
    ++front;
  }
  if (front == reclaimed_) return;
  // The front task's text, or its run's base's (whose text a counted name is read from).
  while (name_runs_.size() > 1 && name_runs_[1].first <= front) {
    name_runs_.pop_front();
    event_name_cache_ = {};
  }
  const std::uint32_t name_floor = front == tasks_.size() ? names_base_ + static_cast<std::uint32_t>(names_.size())
                                   : tasks_[front].flags & kCountedName ? std::prev(run_after(front))->base_begin
                                                                       : tasks_[front].name_begin;
  // Edges are appended in consumer order: those whose consumer is reclaimed belong to reclaimed producers.
  std::size_t edge_floor = edges_.floor();
  while (edge_floor < edges_.size() && edges_[edge_floor].consumer.index() < front) ++edge_floor;
  reclaimed_ = front;
  tasks_.set_floor(front);
  slots_.set_floor(slot_floor);
  edges_.set_floor(edge_floor);
  cold_.drop_before(front);
  names_.release_front(static_cast<std::uint32_t>(name_floor - names_base_));
  // Compaction, amortised, each table on its own: once its reclaimed front (more than 4,096 entries)
  // outweighs what it holds. Then the rest is copied into pages already given back and never over
  // itself, each page of it given back once copied; a front smaller than the rest would be copied over
  // the rest while all of it is still held (the names of the 10M at-once run: 34 MiB more at the peak).
  const auto due = [](std::size_t dead, std::size_t held) { return dead > 4096 && dead > held; };
  if (due(front - tasks_.base(), tasks_.size() - front)) tasks_.drop_before(front);
  if (due(slot_floor - slots_.base(), slots_.size() - slot_floor)) slots_.drop_before(slot_floor);
  if (due(edge_floor - edges_.base(), edges_.size() - edge_floor)) edges_.drop_before(edge_floor);
  const std::uint32_t names_dead = name_floor - names_base_;
  if (due(names_dead, names_.size() - names_dead)) {
    names_.erase_front(names_dead);
    names_base_ = name_floor;
  }
}

const Scheduler::Task& Scheduler::task_at(TaskId id) const {
  if (id.valid() && id.index() < reclaimed_)
    throw CoreError(CoreErrorCode::kUnknownTask, "task id " + std::to_string(id.index()) +
                                                     " was reclaimed (it ended, and nothing can name it again)");
  if (!id.valid() || id.index() >= tasks_.size())
    throw CoreError(CoreErrorCode::kUnknownTask, id.valid() ? "task id " + std::to_string(id.index()) +
                                                                  " was never issued (" +
                                                                  std::to_string(tasks_.size()) + " tasks)"
                                                            : "invalid task id");
  return tasks_[id.index()];
}

const Scheduler::WorkerState& Scheduler::worker_at(std::uint32_t index) const {
  if (index >= workers_.size())
    throw CoreError(CoreErrorCode::kUnknownWorker, "no NEXT_LEVEL worker at registration index " +
                                                       std::to_string(index) + " (" +
                                                       std::to_string(workers_.size()) + " registered)");
  return workers_[index];
}

bool Scheduler::sub_worker_busy(std::uint32_t index) const {
  if (index >= registry_.sub_workers())
    throw CoreError(CoreErrorCode::kUnknownWorker, "no SUB worker " + std::to_string(index) + " (" +
                                                       std::to_string(registry_.sub_workers()) +
                                                       " in the pool)");
  return !idle_sub_.contains(index);
}

const Buffer& Scheduler::buffer(BufferId id) const {
  if (!id.valid() || id.index() >= buffers_.size())
    throw CoreError(CoreErrorCode::kUnknownBuffer, "buffer id was never issued");
  return buffers_[id.index()];
}

// ---------------------------------------------------------------------------------------------
// One iteration

void Scheduler::dispatch_member(TaskId id, std::uint32_t member, Target target) {
  Task& t = tasks_[id.index()];
  SlotRef slot = this->slot(t, member);
  DIRSCHED_INVARIANT(!slot.has(kRunning) && !slot.has(kEnded));
  slot.set(kRunning);
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
  // Last iteration's reservation is void: the blocked head (if any) reserves again below.
  for (std::uint32_t w : reserved_) reserved_flag_[w] = false;
  reserved_.clear();
  iteration_head_ = TaskId();
  while (!group_fifo_.empty()) {
    const TaskId head = group_fifo_.front();
    const Task& g = tasks_[head.index()];
    if (g.state != TaskState::kReady) {
      group_fifo_.pop_front();
      continue;
    }
    std::vector<WorkerId>& busy = scratch_workers_;
    busy.clear();
    for_each_member_worker(g, [&](std::uint32_t, const WorkerState& w) {
      if (w.busy) busy.push_back(w.id);
    });
    if (!busy.empty()) {
      // Report a blocked head once per distinct set of busy targets, not once per iteration.
      if (blocked_head_ != head || blocked_busy_ != busy) {
        blocked_head_ = head;
        blocked_busy_ = busy;
        Event e = event_for(EventKind::kGroupBlocked, head);
        e.workers = &busy;
        emit(e);
      }
      iteration_head_ = head;
      reserve_for_blocked_head(g);
      return;
    }
    group_fifo_.pop_front();
    set_state(head, TaskState::kRunning);
    {
      Event e = event_for(EventKind::kGroupLaunched, head);
      emit(e);
    }
    const std::uint32_t members = members_of(g);
    for (std::uint32_t m = 0; m < members; ++m) {
      Target target;
      target.worker = workers_[read_slot(tasks_[head.index()], m).worker].id;
      dispatch_member(head, m, target);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The group_reservation seam (#1565). The passes ask the switch two things and nothing else: what the
// blocked head reserves (written to reserved_, which the singles pass skips), and whether its wait is
// a stall (and which stall report it makes). Every other switch has its own decision point too: see
// validate() (arg_guard, mpi_group_check) and the dependency walk (view_deps).

void Scheduler::reserve_for_blocked_head(const Task& head) {
  if (!options_.switches[Switch::kGroupReservation]) return;  // nothing held: later singles may take
                                                               // the head's idle targets
  for_each_member_worker(head, [&](std::uint32_t w, const WorkerState&) {
    reserved_.push_back(w);
    reserved_flag_[w] = true;
  });
}

// The group_barrier seam (#1754): may the singles pass place a single now? In an iteration whose group
// pass ended without a blocked head, the group FIFO holds a READY group only when one turned READY after
// that pass (a between_passes batch; with atomic instants never): with the switch on, the barrier then
// holds (the single popped goes back to the tail of its worker's FIFO, the singles pass stops and the
// group pass runs again). Off, singles are placed and may take the late group's targets. Only the
// head is read: entries no longer READY are popped first, as the group pass would pop them.
bool Scheduler::barrier_holds() {
  if (!options_.switches[Switch::kGroupBarrier] || iteration_head_.valid()) return false;
  while (!group_fifo_.empty() && tasks_[group_fifo_.front().index()].state != TaskState::kReady)
    group_fifo_.pop_front();
  return !group_fifo_.empty();
}

bool Scheduler::stall_condition(const Task& head) const {
  if (!options_.switches[Switch::kGroupReservation]) return true;  // being the blocked head is the stall
  bool holds_back = false;  // the reservation holds back queued work
  for_each_member_worker(head, [&](std::uint32_t, const WorkerState& w) { holds_back |= !w.busy && !w.fifo.empty(); });
  return holds_back;
}

// ---------------------------------------------------------------------------------------------
// Stall reports

void Scheduler::track_stall() {
  const TaskId head = iteration_head_;
  if (head != stall_head_) {  // a head change ends the episode
    stall_head_ = head;
    head_since_ = now_;
    episode_open_ = false;
  }
  if (!head.valid()) return;
  if (!stall_condition(tasks_[head.index()])) {
    episode_open_ = false;
    return;
  }
  if (!episode_open_) {
    episode_open_ = true;
    episode_reported_ = false;
    episode_start_ = now_;
  }
  if (!episode_reported_ && episode_start_ + options_.stall_report_s <= now_) report_stall();
}

std::optional<double> Scheduler::next_stall_deadline() const {
  if (!episode_open_ || episode_reported_) return std::nullopt;
  return episode_start_ + options_.stall_report_s;
}

void Scheduler::set_time(double t) {
  if (auto due = next_stall_deadline(); due && *due <= t) {
    now_ = *due;  // the report carries its own moment, not the driver's later one
    report_stall();
  }
  now_ = t;
}

void Scheduler::report_stall() {
  const Task& g = tasks_[stall_head_.index()];
  const bool reservation = options_.switches[Switch::kGroupReservation];
  std::vector<WorkerId> busy, idle_queued;
  for_each_member_worker(g, [&](std::uint32_t, const WorkerState& w) {
    if (w.busy)
      busy.push_back(w.id);
    else if (reservation && !w.fifo.empty())
      idle_queued.push_back(w.id);
  });
  Event e = event_for(reservation ? EventKind::kReservationStall : EventKind::kGroupStall, stall_head_);
  e.workers = &busy;
  if (reservation) e.idle_queued = &idle_queued;
  // Written so that under seed (episode start == head start) it is stall_report_s exactly.
  e.waited_s = options_.stall_report_s + (episode_start_ - head_since_);
  episode_reported_ = true;
  emit(e);
}

// ---------------------------------------------------------------------------------------------
// Singles and SUB passes

bool Scheduler::singles_pass() {
  // Nothing the singles pass does changes the group FIFO or the last group pass's head: one answer
  // holds for every single it pops.
  const bool barrier = barrier_holds();
  for (std::uint32_t w = runnable_.first(); w != IndexSet::kNone; w = runnable_.next(w + 1)) {
    if (reserved_flag_[w]) continue;  // held for the blocked group head; stays runnable
    WorkerState& ws = workers_[w];
    while (!ws.fifo.empty() && tasks_[ws.fifo.front().index()].state != TaskState::kReady)
      ws.fifo.pop_front();
    if (ws.fifo.empty()) {
      runnable_.erase(w);
      continue;
    }
    const TaskId head = ws.fifo.front();
    ws.fifo.pop_front();
    if (barrier) {
      ws.fifo.push_back(head);  // back to the tail of its worker's FIFO (which stays non-empty: runnable)
      return false;
    }
    set_state(head, TaskState::kRunning);
    Target target;
    target.worker = ws.id;
    dispatch_member(head, 0, target);
  }
  return true;
}

void Scheduler::sub_pass() {
  while (!sub_fifo_.empty()) {
    const TaskId head = sub_fifo_.front();
    sub_fifo_.pop_front();
    const Task& t = tasks_[head.index()];
    if (t.state != TaskState::kReady) continue;
    if (idle_sub_.size() < members_of(t)) {
      sub_fifo_.push_back(head);  // back to the tail; the pass stops
      return;
    }
    set_state(head, TaskState::kRunning);
    const std::uint32_t members = members_of(t);
    for (std::uint32_t m = 0; m < members; ++m) {
      Target target;
      target.sub = true;
      target.sub_index = idle_sub_.first();
      dispatch_member(head, m, target);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The staging seam (#1583). The switch is asked in one place, preparable_run(): off (or inert: no
// declared runs, whole_run_fifo off, no second live run whose callback returned without raising) there
// is no preparable run, nothing is ever staged, and activate_staged() finds nothing to start.

RunId Scheduler::preparable_run() const {
  // Without a two-frame worker nothing can be staged: no run is preparable (and the replay asks for no
  // iteration at a callback's end on its behalf, so an inert switch changes no timing).
  if (!options_.switches[Switch::kStaging] || !two_frame_workers_ || !fifo_on() || run_fifo_.size() < 2) return RunId();
  // The run FIFO's head is the active run; the second run is preparable once its callback returned.
  const RunInfo& next = runs_[run_fifo_[1]].info;
  if (!next.callback_ended || next.raised) return RunId();
  return RunId(run_fifo_[1]);
}

void Scheduler::activate_staged() {
  if (staged_members_ == 0 || !active_run_.valid()) return;
  RunState& rs = runs_[active_run_.index()];
  if (!rs.staged.valid()) return;
  const TaskId id = rs.staged;
  rs.staged = TaskId();
  const Task& t = tasks_[id.index()];
  const std::uint32_t w = t.where;
  WorkerState& ws = workers_[w];
  // Its run was promoted because the run before it turned terminal: nothing of that run runs, and no
  // other run's member was dispatched meanwhile, so its worker is idle.
  DIRSCHED_INVARIANT(ws.staged == id && !ws.busy && t.state == TaskState::kReady);
  ws.staged = TaskId();
  --staged_members_;
  set_state(id, TaskState::kRunning);
  SlotRef slot = this->slot(tasks_[id.index()], 0);
  DIRSCHED_INVARIANT(!slot.has(kRunning) && !slot.has(kEnded));
  slot.set(kRunning);
  ++running_members_;
  ws.busy = true;
  runnable_.erase(w);
  Target target;
  target.worker = ws.id;
  Dispatch d{id, 0, target, ws.staged_seq};
  d.activate = true;
  out_.push_back(d);
  Event e = event_for(EventKind::kActivate, id);
  e.target = target;
  e.dispatch_seq = ws.staged_seq;
  emit(e);
}

void Scheduler::staging_pass() {
  const RunId run = preparable_run();
  if (!run.valid()) return;  // none (inert without a two-frame worker: no walk)
  RunState& rs = runs_[run.index()];
  if (rs.staged.valid() || rs.stage_blocked) return;  // at most one staged member per run
  // Its part of each queue is `parked` (READY order). One walk: a READY group stops the pass; otherwise
  // the first worker in registration order with two frames, a free second frame and a READY single of
  // the run at the head of its part of the worker's FIFO. The first single seen for the lowest such
  // worker is that worker's head (a lower index than the best so far was not seen before).
  std::uint32_t best = std::numeric_limits<std::uint32_t>::max();
  std::size_t best_at = 0;
  for (std::size_t i = rs.stage_scanned; i < rs.parked.size(); ++i) {
    const Task& t = tasks_[rs.parked[i].index()];
    if (t.state != TaskState::kReady) continue;
    if (t.kind == TaskKind::kGroup) {  // the run has a READY group: nothing is staged
      rs.stage_blocked = true;
      return;
    }
    if (t.kind != TaskKind::kSingle) continue;
    const std::uint32_t w = t.where;
    if (w < best && workers_[w].frames == 2 && !workers_[w].staged.valid()) {
      best = w;
      best_at = i;
    }
  }
  if (best == std::numeric_limits<std::uint32_t>::max()) {
    rs.stage_scanned = rs.parked.size();  // nothing here: the next pass looks at later entries only
    return;
  }
  const TaskId id = rs.parked[best_at];
  rs.parked.erase(rs.parked.begin() + static_cast<std::ptrdiff_t>(best_at));
  WorkerState& ws = workers_[best];
  DIRSCHED_INVARIANT(ws.kind != WorkerKind::kRemote);
  ws.staged = id;
  ws.staged_seq = dispatch_seq_++;
  rs.staged = id;
  ++staged_members_;
  Target target;
  target.worker = ws.id;
  Dispatch d{id, 0, target, ws.staged_seq};
  d.prepare_only = true;
  out_.push_back(d);
  Event e = event_for(EventKind::kDispatch, id);
  e.target = target;
  e.dispatch_seq = ws.staged_seq;
  e.prepare_only = true;
  emit(e);
}

const std::vector<Dispatch>& Scheduler::iterate() {
  if (reclaim_) reclaim();  // what the last iteration (or submit) ended, its events all emitted
  out_.clear();
  // Step 1. apply() may route consumers, never dispatch, so the inbox cannot grow meanwhile.
  for (std::size_t i = 0; i < inbox_.size(); ++i) apply(inbox_[i], i == 0);
  inbox_.clear();
  // This iteration takes every wake posted so far, a promotion in step 1 included; one posted during
  // the passes below (a between_passes batch) asks for the next iteration.
  wake_ = false;
  landed_ = false;
  // staging (#1583): the active run's staged member starts, then one single of the preparable run may
  // be staged; both do nothing unless the switch is on (preparable_run()).
  activate_staged();
  staging_pass();
  group_pass();
  if (between_passes_) {  // a batch racing the scheduler lands now (land_between_passes)
    std::function<void()> land = std::move(between_passes_);
    between_passes_ = nullptr;
    struct Landing {  // reset even when `land` throws (a driver's misuse)
      bool& flag;
      ~Landing() { flag = false; }
    } landing{landing_};
    landing_ = true;
    land();
    landed_ = true;
  }
  // group_barrier: a singles pass the barrier stopped is followed by the group pass again, then the
  // singles pass (which checks again only when that group pass has no blocked head).
  while (!singles_pass()) group_pass();
  sub_pass();
  track_stall();
  return out_;
}

// The loop rule (header comment): the one decision point of edge_triggered_wake and of busy_poll.
bool Scheduler::loop_continues(std::size_t idle) const {
  // The seed's loop does not park while a ready queue holds work: it repeats until as many consecutive
  // iterations as the (active run's) SUB FIFO holds entries, at least one, dispatched nothing, so that
  // the SUB entries behind one that went back to the tail get their turn; and it applies every end.
  const std::size_t needed = std::max<std::size_t>(1, sub_fifo_.size());
  const bool repeat = idle < needed || !inbox_.empty();
  // edge_triggered_wake (#1612): off, that is the whole rule (busy_poll alone changes nothing: the loop
  // never parks anyway). On, the loop parks after a pass and a wake runs exactly one iteration.
  if (!loop_parks()) return repeat;
  if (wake_) return true;
  // busy_poll (#1754): while a member runs or is staged (staging, #1583) the loop does not park: the
  // seed's repeats, until an iteration ends with no member running or staged. Settled here: this holds
  // for every call, so an op that wakes nothing (a submit left PENDING, a rejection) while members run
  // is looked at as the seed's loop looks at it.
  return options_.switches[Switch::kBusyPoll] && (running_members_ > 0 || staged_members_ > 0) && repeat;
}

bool Scheduler::loop_woken() const { return loop_parks() && wake_; }

void Scheduler::land_between_passes(std::function<void()> land) {
  if (between_passes_ || landing_)
    throw CoreError(CoreErrorCode::kRunOrder,
                    "land_between_passes: a between_passes batch is already waiting for the next iteration");
  between_passes_ = std::move(land);
  wake_ = true;  // the batch is a wake: under edge_triggered_wake the next iteration runs to land it
}

WorkerId Scheduler::target(TaskId task, std::uint32_t member) const {
  return workers_[target_index(task, member)].id;
}

std::uint32_t Scheduler::target_index(TaskId task, std::uint32_t member) const {
  const Task& t = task_at(task);
  if (is_sub(t.kind))
    throw CoreError(CoreErrorCode::kNotNextLevel,
                    "target: task '" + std::string(name_of(t)) + "' is a SUB task");
  if (member >= members_of(t))
    throw CoreError(CoreErrorCode::kUnknownMember, "target: task '" + std::string(name_of(t)) + "' has " +
                                                       std::to_string(members_of(t)) + " member(s), not member " +
                                                       std::to_string(member));
  return read_slot(t, member).worker;
}

std::vector<std::pair<TaskId, std::uint32_t>> Scheduler::running() const {
  std::vector<std::pair<TaskId, std::uint32_t>> out;
  for (std::size_t i = reclaimed_; i < tasks_.size(); ++i)
    for (std::uint32_t m = 0; m < members_of(tasks_[i]); ++m)
      if (read_slot(tasks_[i], m).has(kRunning))
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
  // A SUB FIFO entry larger than the whole pool: it goes back to the tail in every iteration, and under
  // edge_triggered_wake the SUB work that fits waits for a wake that never came (the seed's repeats
  // would have reached it).
  std::optional<TaskId> too_large;
  for (std::size_t i = 0; loop_parks() && i < sub_fifo_.size() && !too_large; ++i)
    if (members_of(task_at(sub_fifo_.at(i))) > registry_.sub_workers()) too_large = sub_fifo_.at(i);
  for (std::size_t i = reclaimed_; i < tasks_.size(); ++i) {
    const Task& t = tasks_[i];
    if (is_terminal(t.state)) continue;
    std::string reason;
    switch (t.state) {
      case TaskState::kPending:
        reason = "PENDING on " + std::to_string(live_producers(t)) + " producer(s) that never completed";
        break;
      case TaskState::kReady:
        if (fifo_on() && RunId(run_of_entry(t)) != active_run_)
          reason = "READY in run '" + runs_[run_of_entry(t)].info.name + "', which never became the active run";
        else if (is_sub(t.kind) && members_of(t) > registry_.sub_workers())
          reason = "needs " + std::to_string(members_of(t)) + " SUB workers, the pool has " +
                   std::to_string(registry_.sub_workers());
        else if (is_sub(t.kind) && too_large)
          reason = "READY in the SUB FIFO, never dispatched: '" + std::string(name_of(task_at(*too_large))) +
                   "' needs more SUB workers than the pool has and goes back to the tail each iteration, and the "
                   "loop parked with no wake left (edge_triggered_wake)";
        else if (is_sub(t.kind))
          reason = "READY in the SUB FIFO, never dispatched";
        else if (t.kind == TaskKind::kGroup)
          reason = "READY in the group FIFO, never launched";
        else
          reason = "READY on worker " + std::to_string(workers_[t.where].id.value()) +
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
  auto task_name = [&](TaskId id) {
    return id.index() < reclaimed_ ? std::string(name(id)) + "(reclaimed)" : std::string(name_of(tasks_[id.index()]));
  };
  out += "tasks:\n";
  if (reclaimed_) out += "  (" + std::to_string(reclaimed_) + " reclaimed)\n";
  for (std::size_t i = reclaimed_; i < tasks_.size(); ++i) {
    const Task& t = tasks_[i];
    out += "  " + std::string(name_of(t)) + " " + std::string(to_string(t.kind)) + " " +
           std::string(to_string(t.state)) + " ended=" + std::to_string(members_ended(t)) + "/" +
           std::to_string(members_of(t)) + " live_producers=" + std::to_string(live_producers(t)) + " consumers=[";
    for_each_consumer(t, [&](TaskId c) { out += task_name(c) + ","; });
    out += "] members=[";
    for (std::uint32_t m = 0; m < members_of(t); ++m) {
      const Slot s = read_slot(t, m);
      out += std::to_string(s.worker) + (s.has(kRunning) ? "R" : s.has(kEnded) ? "E" : "") +
             (shows_failed_first(t.state, s.has(kFailedFirst)) ? "F" : "") + ",";
    }
    out += "]\n";
  }
  out += "workers:\n";
  for (const WorkerState& w : workers_) {
    out += "  " + std::to_string(w.id.value()) + (w.busy ? " busy" : " idle") + " fifo=[";
    for (std::size_t i = 0; i < w.fifo.size(); ++i) out += task_name(w.fifo.at(i)) + ",";
    out += "]";
    if (w.staged.valid()) out += " staged=" + task_name(w.staged);  // staging only
    out += "\n";
  }
  out += "group_fifo=[";
  for (std::size_t i = 0; i < group_fifo_.size(); ++i) out += task_name(group_fifo_.at(i)) + ",";
  out += "]\nsub_fifo=[";
  for (std::size_t i = 0; i < sub_fifo_.size(); ++i) out += task_name(sub_fifo_.at(i)) + ",";
  out += "]\nidle_sub=[";
  for (std::uint32_t i = idle_sub_.first(); i != IndexSet::kNone; i = idle_sub_.next(i + 1))
    out += std::to_string(i) + ",";
  out += "]\ntensor_map:\n";
  for (const RunState& rs : runs_)
    for (std::size_t b = 0; b < rs.producer_of.size(); ++b)
      if (rs.producer_of[b].valid())
        out += "  " + buffers_[b].name + " <- " + task_name(rs.producer_of[b]) +
               (runs_.size() > 1 ? " (run " + rs.info.name + ")" : "") + "\n";
  if (options_.switches[Switch::kViewDeps]) {
    out += "views:\n";
    for (const RunState& rs : runs_)
      for (std::size_t b = 0; b < rs.views.size(); ++b) {
        if (rs.views[b].empty()) continue;
        out += "  " + buffers_[b].name + (runs_.size() > 1 ? " (run " + rs.info.name + ")" : "") + " <-";
        for (const ViewEntry& e : rs.views[b])
          out += " " + (e.range ? "[" + std::to_string(e.range->begin) + "," + std::to_string(e.range->end) + ")"
                                : std::string("all")) +
                 ":" + task_name(e.task);
        out += "\n";
      }
  }
  const auto& error = run_error();
  out += "inbox=" + std::to_string(inbox_.size()) + " running=" + std::to_string(running_members_) +
         " live=" + std::to_string(live_) + " run_error=" + (error ? error->message : "none") + "\n";
  if (declared_runs_)
    for (const RunState& rs : runs_)
      out += "run " + rs.info.name + (rs.info.begun ? " begun" : "") + (rs.info.callback_ended ? " ended" : "") +
             (rs.info.raised ? " raised" : "") + (rs.info.terminal ? " terminal" : "") +
             " live=" + std::to_string(rs.info.live) + " error=" + (rs.info.error ? rs.info.error->message : "none") +
             "\n";
  if (options_.switches[Switch::kEdgeTriggeredWake]) out += std::string("wake ") + (wake_ ? "pending" : "none") + "\n";
  if (fifo_on()) {
    out += "run_fifo=[";
    for (std::uint32_t r : run_fifo_) out += runs_[r].info.name + (RunId(r) == active_run_ ? "(active)," : ",");
    out += "]\n";
    for (const RunState& rs : runs_) {
      if (rs.parked.empty()) continue;
      out += "parked " + rs.info.name + "=[";
      for (TaskId p : rs.parked) out += task_name(p) + ",";
      out += "]\n";
    }
  }
  return out;
}

void Scheduler::encode(std::vector<std::uint32_t>& out) const {
  // Field for field what dump() prints, in its order; every variable-length list carries its length
  // first, so the words parse back one way and equal words mean equal dumps.
  out.push_back(static_cast<std::uint32_t>(tasks_.size()));
  for (const Task& t : tasks_) {
    out.push_back(static_cast<std::uint32_t>(t.kind) | static_cast<std::uint32_t>(t.state) << 8);
    out.push_back(members_ended(t));
    out.push_back(live_producers(t));
    std::uint32_t n = 0;
    for_each_consumer(t, [&](TaskId) { ++n; });
    out.push_back(n);
    for_each_consumer(t, [&](TaskId c) { out.push_back(c.index()); });
    out.push_back(members_of(t));
    for (std::uint32_t m = 0; m < members_of(t); ++m) {
      const Slot sl = read_slot(t, m);
      out.push_back(sl.worker << 3 | (sl.has(kRunning) ? 1u : 0u) | (sl.has(kEnded) ? 2u : 0u) |
                    (shows_failed_first(t.state, sl.has(kFailedFirst)) ? 4u : 0u));
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
  // Every run's tensor map (a buffer no op of the run touched is an absent entry: invalid), its views
  // under view_deps, and its state.
  out.push_back(static_cast<std::uint32_t>(runs_.size()));
  const bool views = options_.switches[Switch::kViewDeps];
  for (const RunState& rs : runs_) {
    out.push_back(static_cast<std::uint32_t>(buffers_.size()));
    for (std::size_t b = 0; b < buffers_.size(); ++b)
      out.push_back(b < rs.producer_of.size() ? rs.producer_of[b].index() : TaskId().index());
    if (views)
      for (std::size_t b = 0; b < buffers_.size(); ++b) {
        const std::vector<ViewEntry>* list = b < rs.views.size() ? &rs.views[b] : nullptr;
        out.push_back(list ? static_cast<std::uint32_t>(list->size()) : 0u);
        if (list)
          for (const ViewEntry& e : *list) {
            out.push_back(e.task.index());
            out.push_back(e.range ? 1u : 0u);
            if (e.range)
              for (std::uint64_t v : {e.range->begin, e.range->end})
                out.push_back(static_cast<std::uint32_t>(v)), out.push_back(static_cast<std::uint32_t>(v >> 32));
          }
      }
    const RunInfo& r = rs.info;
    out.push_back((r.begun ? 1u : 0u) | (r.callback_ended ? 2u : 0u) | (r.raised ? 4u : 0u) |
                  (r.terminal ? 8u : 0u));
    out.push_back(static_cast<std::uint32_t>(r.live));
    out.push_back(r.error ? 1u : 0u);
    if (r.error) out.push_back(r.error->task.index()), out.push_back(r.error->member);
  }
  out.push_back(open_run_.index());
  out.push_back(static_cast<std::uint32_t>(inbox_.size()));
  out.push_back(static_cast<std::uint32_t>(running_members_));
  out.push_back(static_cast<std::uint32_t>(live_));
  if (options_.switches[Switch::kStaging])  // staging: each worker's staged member (invalid: none)
    for (const WorkerState& w : workers_) out.push_back(w.staged.index());
  // edge_triggered_wake: a pending wake decides whether the next op's iteration runs (equal words mean
  // equal futures; without the switch the flag decides nothing and is left out).
  if (options_.switches[Switch::kEdgeTriggeredWake]) out.push_back(wake_ ? 1u : 0u);
  if (fifo_on()) {  // the run FIFO (its head is the active run) and every run's parked tasks
    out.push_back(static_cast<std::uint32_t>(run_fifo_.size()));
    for (std::uint32_t r : run_fifo_) out.push_back(r);
    out.push_back(active_run_.index());
    for (const RunState& rs : runs_) {
      out.push_back(static_cast<std::uint32_t>(rs.parked.size()));
      for (TaskId p : rs.parked) out.push_back(p.index());
    }
  }
}

}  // namespace dirsched
