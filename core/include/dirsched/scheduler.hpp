// The Scheduler core: the directed NEXT_LEVEL placement contract as a sans-IO state machine.
//
// Inputs come in as calls: submits, member completions (report()), and the current time (set_time()),
// which stamps events and is when a due stall report is emitted; no decision depends on it. Decisions come
// out as data: iterate() returns the dispatches of one scheduler iteration. The core has no clock, thread,
// file or global; a driver (the SimGrid actors, the fake driver of the unit tests, a production runtime)
// carries the decisions out.
//
// A submit (submit()):
// 1. Validation, steps 1-8 of docs/contract.md in order, first failure wins. A rejected submit
//    changes no state: validation runs to completion before anything is written.
// 2. Fail-fast, only for a submit that passed validation: after the run's first member failure it
//    raises that error and the task is not submitted.
// 3. A group of one member becomes a single (NEXT_LEVEL) or a SUB single; Event::op_kind keeps the
//    submit it came from.
// 4. The dependency walk: the args in order, member by member, against the one tensor map, updated
//    as it goes; a lookup that finds the task itself is ignored; each distinct producer counts once.
//
// Invariants it keeps:
// - A PENDING task lives only in task state. A task is routed exactly once, when it turns READY:
//   single -> FIFO[target], group -> the group FIFO, SUB -> the SUB FIFO. Its route and its targets
//   never change afterwards.
// - A worker runs one member at a time, busy from dispatch until its completion is applied.
// - No queue is scanned past its head. The singles pass visits only workers that are idle and have
//   queued work (an IndexSet kept up to date on every push, dispatch and completion), so its cost does
//   not grow with the number of idle workers.
//
// One iteration (iterate()):
// 1. Apply every reported completion, in report order (report_instant() reports an instant's ends in
//    the instant's order): member bookkeeping, its worker freed; a task turns terminal when its last
//    member ends; a completed task releases its consumers in submit order (each is routed when its
//    last live producer completes); a failed one poisons its not-yet-running downstream tasks,
//    transitively. The first member failure becomes the run's error (fail-fast).
// 1b. staging (#1583), asked in one place, preparable_run(): on, with whole_run_fifo and declared runs,
//    the preparable run is the second run of the run FIFO when its callback returned without raising.
//    First the active run's staged member (if any) is activated (event activate; its worker is busy
//    from then: activate_staged()); then the staging pass (staging_pass()): when a preparable run
//    exists, none of its members is staged and it has no READY group, the first worker in registration
//    order with two frames, a free staged frame and a READY single of that run at the head of its part
//    of the worker's FIFO gets that single staged (a dispatch event with prepare_only; Dispatch::
//    prepare_only). A staged member holds the worker's second frame only: the worker stays idle or busy
//    as before for the passes below. Off (or inert), nothing is ever staged and both steps do nothing.
// 2. Group pass: pop heads that are no longer READY; launch the head when all of its targets are
//    idle (member i to workers[i]) and look at the next head; stop at the first head with a busy
//    target (the blocked head). Later groups are not examined. What the blocked head holds against
//    singles is the switch group_reservation's one decision, made in reserve_for_blocked_head():
//      off (seed)        nothing (the documented runtime: a blocked group can starve);
//      on (#1565, head_reservation and later presets)  all of its targets, for this iteration only
//                        (re-decided every iteration, so the reservation ends the iteration the
//                        group launches).
//    A batch racing the scheduler lands here, when a driver handed one (land_between_passes()).
// 3. Singles pass: in registration order, every idle worker with queued work gets its FIFO head,
//    unless the group pass reserved it. The switch group_barrier's one decision, barrier_holds(): on
//    (#1754), after a group pass without a blocked head, a READY group in the group FIFO (one that
//    landed between the passes) sends the first READY single popped back to the tail of its worker's
//    FIFO and stops the singles pass; the iteration runs the group pass again, then the singles pass.
// 4. SUB pass: in FIFO order, a single takes the lowest-index idle SUB worker, a group of N the N
//    lowest. An entry that does not fit goes back to the tail and ends the pass.
//
// Stall reports (diagnostic only). After every iteration, track_stall() updates one episode: with
// group_reservation off it is open while the same group stays the blocked head; with it on while the
// same group stays the blocked head and one of its reserved targets is idle with a non-empty FIFO. A head
// change or the condition clearing closes it. An episode that lasts stall_report_s is reported once,
// stamped exactly start + stall_report_s: set_time() emits it when the driver's time reaches that
// moment, and next_stall_deadline() tells a driver when to wake for it.
//
// Within one instant a driver runs the scheduler's iterations with run_instant() below, which asks
// loop_continues() before each one. That is the loop rule, the one decision point of the switches
// edge_triggered_wake (#1612) and busy_poll (#1754) (docs/versions.md, "The loop rule"):
//   both off (seed)   iterations repeat until as many consecutive iterations as the SUB FIFO holds
//                     entries (at least one) dispatched nothing, and every reported end is applied;
//                     busy_poll alone: the same (the seed's loop never parks);
//   edge_triggered_wake alone   exactly one iteration per wake (a pending wake, below);
//   both on (current) the seed's repeats, stopping after an iteration that ends with no member running
//                     or staged (staging): then the loop parks until a wake.
// Wakes (wake_pending()): an end reported (report()), a submit whose task turned READY, a run's callback
// end or raise (end_run(), raise_run()), a run's promotion, and wake() (the hook for a between_passes
// batch). A submit that leaves its task PENDING, a rejection, a not_submitted, a sleep wake nothing. The
// core records wakes under every switch set (a flag, no event, not in dump()); only the loop rule reads
// it. An iteration takes every wake posted before its passes begin (cleared after step 1 of an iteration, above), so a
// promotion during step 1 is the same wake as the end that caused it (upstream can post two wakes for one
// completion; the testbed takes one), and a wake posted during the passes asks for the next iteration.
//
// The instant rule, for every driver: the member ends that came due at one instant are reported
// together (report_instant()), in the order the switch registration_order_completions says (off: the
// order their members were dispatched, Dispatch::seq; on, #1754: the position of the worker that ran
// each member, NEXT_LEVEL workers in registration order, then SUB workers by index), then the
// iterations of the instant run. Step 1 of iterate() applies them in that order, one by one, so each
// end frees its worker at its position, a task turns terminal (releasing or poisoning its consumers)
// at the position of its last member to end, its failure is its first failing member in that order,
// and the run's first error is the first failure in that order. complete_instant() below does exactly
// that; the SimGrid and event drivers, the threads runtime, the core tests' fake driver and the
// explorer all call it (or report_instant() for the ends that come due at once inside an instant)
// rather than coding the rule again.
//
// Runs (docs/contract.md, "Runs"). A run is one orchestration callback. A driver declares each run
// (add_run), opens its callback (begin_run), submits, and ends it (end_run: returned, or raised with a
// message). Every submit and not_submitted belongs to the open callback's run. Each run has its own first
// error (fail-fast reads the submitting run's only), its own tensor map (a lookup never finds another
// run's producer) and its own outcome: it is terminal when its callback ended and every task it
// submitted is terminal, FAILED if a member failed or its callback raised, else COMPLETED (events
// run_raise, run_end). A driver that declares no run has one implicit run, "main", open for ever and
// never ended, which emits no run event: its events are those of a core without runs. The core does
// not order runs: a driver that must not overlap them waits for run_terminal() itself. With the switch
// run_cancellation on, a raise cancels the run's tasks that have not started (raise_run()); a member
// failure after the callback returned cancels nothing.
//
// whole_run_fifo (#1541, with #1460's handles and #1540's leases), for a driver that declares runs: the
// runs begun and not terminal form the run FIFO, in begin order (admission: begin_run refuses a run when
// Options::pipeline_depth of them are already there; can_admit() says whether it would). The *active*
// run is the oldest of them, and only its tasks are dispatched: a task of a later run turns READY and is
// routed as usual (same ready event), but waits in its run's part of the queue (RunState::parked, in
// READY order) until its run is active. Promotion (promote()): when the active run turns terminal, the
// next run of the FIFO is active from that moment and its parked tasks enter the queues in READY order,
// so the next group pass sees all of them before any single is placed (as after a batch). A run whose
// callback returned normally turns terminal only while active; a raised one as soon as its tasks are
// final. The queues the passes read hold only the active run's entries, so the reservation, the stall
// episode and the SUB repeat count (sub_queue_length()) concern the active run alone. Off, or with the
// implicit run, nothing of this applies and the core behaves exactly as before.
//
// Driver misuse throws CoreError (core_error.hpp) before anything changes, so the core stays sound:
// - report() of an id the core never issued (kUnknownTask), a member index past the task's members
//   (kUnknownMember), a member not running (never dispatched, or already applied: kNotRunning), or a
//   member already reported and waiting in the inbox (kDoubleReport);
// - a query naming an unknown task, worker index or buffer (kUnknownTask, kUnknownWorker,
//   kUnknownBuffer); target() of a SUB task (kNotNextLevel).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dirsched/containers.hpp"
#include "dirsched/core_error.hpp"
#include "dirsched/errors.hpp"
#include "dirsched/huge_pages.hpp"
#include "dirsched/ids.hpp"
#include "dirsched/observer.hpp"
#include "dirsched/registry.hpp"
#include "dirsched/switches.hpp"
#include "dirsched/task.hpp"

namespace dirsched {

enum class Tag : std::uint8_t { kInput, kOutput, kOutputExisting, kInOut, kNoDep };
std::string_view to_string(Tag tag);
std::optional<Tag> tag_from_string(std::string_view text);

// Bytes [begin, end) of a buffer (begin < end).
struct ByteRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  bool operator==(const ByteRange& o) const { return begin == o.begin && end == o.end; }
};

struct Arg {
  Arg() = default;
  // {buffer, tag} is the whole buffer: most args name no view.
  Arg(BufferId b, Tag t, std::optional<ByteRange> r = std::nullopt) : buffer(b), tag(t), range(r) {}
  BufferId buffer;
  Tag tag = Tag::kNoDep;
  std::optional<ByteRange> range;  // a view of the buffer; none: the whole buffer (view_deps, arg_guard)
};

// Do two args' views of one buffer share a byte? The whole buffer shares a byte with everything.
inline bool views_overlap(const std::optional<ByteRange>& a, const std::optional<ByteRange>& b) {
  return !a || !b || (a->begin < b->end && b->begin < a->end);
}
// Does view `inner` lie inside view `outer`? Everything lies inside the whole buffer.
inline bool view_inside(const std::optional<ByteRange>& inner, const std::optional<ByteRange>& outer) {
  return !outer || (inner && outer->begin <= inner->begin && inner->end <= outer->end);
}

struct Buffer {
  std::string name;
  Memory memory = Memory::kHost;
  std::optional<WorkerId> owner;  // kChild: a local worker; kRemote: a remote worker
};

// The untyped form of every submit. The typed helpers on Scheduler build one of these.
struct SubmitRequest {
  TaskKind kind = TaskKind::kSingle;
  std::string name;
  CallableId callable;
  std::vector<std::vector<Arg>> args;             // one list per member; a single has exactly one
  std::optional<WorkerArg> worker;                // submit_next_level
  std::optional<std::vector<WorkerArg>> workers;  // submit_next_level_group
  std::string origin;                             // prefixed to rejection messages, e.g. "trace[3]"
};

struct SubmitResult {
  TaskId task;                         // valid when accepted
  std::optional<Rejection> rejection;  // set when refused or not submitted
  bool accepted() const { return !rejection.has_value(); }
};

struct Dispatch {
  TaskId task;
  std::uint32_t member;
  Target target;
  std::uint64_t seq;  // global dispatch order (the instant's order with registration_order_completions off)
  // staging (#1583). prepare_only: the member is staged on the worker's second frame; it does not start
  // (a driver holds it: no end may be reported yet). activate: a staged member starts now; `seq` is its
  // staging's (a staged member keeps the dispatch order of its staging). Both false for every other
  // dispatch (and always with the switch off).
  bool prepare_only = false;
  bool activate = false;
};

// A member end as a driver holds it until its instant (Scheduler::report_instant orders one
// instant's ends: by the dispatch's seq, or by the member's worker under registration_order_completions).
struct MemberEnd {
  std::uint64_t seq;  // Dispatch::seq of the member
  TaskId task;
  std::uint32_t member;
  Outcome outcome;
};

struct RunError {
  TaskId task;
  std::uint32_t member;
  std::string message;
};

// One run as the core holds it (Scheduler::run_info).
struct RunInfo {
  std::string name;
  bool implicit = false;  // the run of a driver that declared none: no run events
  bool begun = false, callback_ended = false, raised = false, terminal = false;
  std::optional<RunError> error;  // its first member failure, or its raise's message (task invalid)
  double begin_s = -1, callback_end_s = -1, end_s = -1;
  std::size_t live = 0;  // its accepted tasks not yet terminal
};

// A task a finished run left non-terminal, with why (see Scheduler::stuck()).
struct Stuck {
  std::string task;
  TaskState state;
  std::string reason;
};


class Scheduler {
 public:
  struct Options {
    // The runtime's behaviour: after the first member failure every submit raises that error and is
    // not submitted. Off only for what-if studies and for tests of the submit-time poison rule,
    // which fail-fast otherwise makes unreachable.
    bool fail_fast = true;
    // The runtime version, switch by switch (switches.hpp); default: the seed's (every switch off).
    Switches switches;
    // How long a stall episode lasts before it is reported (simulated seconds, > 0).
    double stall_report_s = 5;
    // whole_run_fifo: how many runs may be admitted and not terminal at once (1 or 2).
    std::uint32_t pipeline_depth = 2;
  };
  explicit Scheduler(Registry registry, Observer* observer = nullptr)
      : Scheduler(std::move(registry), Options{}, observer) {}
  Scheduler(Registry registry, Options options, Observer* observer = nullptr);

  // --- configuration (not part of any task's state) ---
  void set_observer(Observer* observer) { observer_ = observer; }
  // Buffers may be added at any time. Throws RegistryError for an owner that does not fit the memory.
  BufferId add_buffer(Buffer buffer);
  // Capacity for this many tasks (an optimisation only: a driver that knows its trace size). With
  // reclamation on, only the front the live window reaches is ever touched (resident).
  void reserve(std::size_t tasks) {
    tasks_.reserve(tasks);
  }
  // Slot reclamation (off by default; set before the first submit). On, a task's slot (its entry, its
  // member slots, its name bytes (a run's base keeps them while its run is held: NameRun) and the
  // consumer edges that name it) is reclaimed once the task and every task submitted before it are
  // terminal, like the runtime's ring: it is in no queue and its
  // consumers were released or poisoned. Only a later submit can still name it, as the last producer
  // of a buffer it wrote: such a task keeps its name and final state in a side table until every one of
  // its buffers has a newer producer (so that table follows the buffers, not the tasks). TaskIds stay
  // the submit order; name() answers for those, any other per-task query of a reclaimed id throws
  // CoreError(kUnknownTask), and dump(), encode(), running() and stuck() show the tasks not reclaimed.
  // A driver turns it on when nothing asks the core about a task after the task's terminal event (the
  // Recorder not keeping records).
  void set_reclaim(bool on) { reclaim_ = on; }
  bool reclaims() const { return reclaim_; }
  // Ids below this one are reclaimed.
  std::size_t reclaimed_before() const { return reclaimed_; }
  // Entries the core holds (not reclaimed, or reclaimed and not yet compacted away).
  std::size_t held_tasks() const { return tasks_.held(); }
  // Pages of the fields only a task with a consumer or a written buffer needs (none for a trace
  // without buffers; for tests).
  std::size_t cold_pages() const { return cold_.pages_held(); }
  // Bytes of name text held (a name that counts up holds none; for tests).
  std::size_t name_bytes() const { return names_.size(); }
  // Stamps every following event. No decision depends on it. When `t` reaches the open stall
  // episode's deadline, the stall report is emitted first, stamped with the deadline itself.
  void set_time(double t);
  double now() const { return now_; }
  // When the open stall episode will be reported, if one is open and not yet reported. A driver
  // that keeps its own clock wakes at this time (and calls set_time()) even if nothing else is due.
  std::optional<double> next_stall_deadline() const;

  // --- inputs ---
  SubmitResult submit(const SubmitRequest& request);
  SubmitResult submit_next_level(std::string name, CallableId callable, std::vector<Arg> args,
                                 WorkerId worker);
  SubmitResult submit_next_level_group(std::string name, CallableId callable,
                                       std::vector<std::vector<Arg>> args_list,
                                       std::vector<WorkerId> workers);
  SubmitResult submit_sub(std::string name, CallableId callable, std::vector<Arg> args);
  SubmitResult submit_sub_group(std::string name, CallableId callable,
                                std::vector<std::vector<Arg>> args_list);
  // Records that the orchestration unwound before this op: the task ends NOT_SUBMITTED, in the open
  // callback's run (reason: that run's error, if any), or in `run` when given (a run the replay never
  // reached, or after a raise: then `callback_raised`).
  void not_submitted(std::string_view name);
  void not_submitted(std::string_view name, RunId run, bool callback_raised);
  // Runs (see the header comment). add_run declares one (not begun); begin_run opens its callback (none
  // may be open: CoreError kRunOrder); end_run closes the open callback, raising `raised` as the run's
  // error when given. A raise in the implicit run sets its error and emits nothing.
  RunId add_run(std::string name);
  void begin_run(RunId run);
  void end_run(std::optional<std::string> raised = std::nullopt);
  // The open callback raises `message` now (event run_raise) and stays open until end_run(): a driver
  // records the ops the raise skipped in between. end_run(message) is raise_run(message), end_run().
  // This is the switch run_cancellation's one decision point (#1541): on, every PENDING or READY task
  // of the run ends CANCELLED here (event cancel each, in submit order, with the run's error), leaves
  // its queue and never runs; its running members run to their end. Returns how many were cancelled:
  // when any were, the driver lets the scheduler iterate (a cancelled group head no longer blocks).
  std::size_t raise_run(const std::string& message);
  // A member ended. Applied at the start of the next iterate(), in report order. Throws CoreError
  // (kUnknownTask, kUnknownMember, kNotRunning, kDoubleReport) and records nothing on misuse.
  void report(TaskId task, std::uint32_t member, Outcome outcome);
  // The member ends of one instant (or the ends that came due at once after one iteration): reports
  // them in the instant's order and clears `ends`. This is the switch registration_order_completions's
  // one decision point (#1754):
  //   off (seed, head_reservation)  dispatch order: ascending MemberEnd::seq;
  //   on                            the position of the worker that ran the member: NEXT_LEVEL workers
  //                                 in registration order, then SUB workers by index (seq breaks ties,
  //                                 which two running members never make: a worker runs one at a time).
  // An end the core cannot place on (on: an unknown or reclaimed task, a member past its task's) is
  // put last, where report() refuses it. A CoreError from one report() propagates; the ends before it
  // in this order stay reported and the rest are not.
  void report_instant(std::vector<MemberEnd>& ends);

  // Posts a wake (see the header comment): the next iteration's passes look. A
  // between_passes batch landing is one (iterate() posts it); nothing else outside the core needs to
  // call it: the core posts every other wake itself.
  void wake() { wake_ = true; }
  // A batch racing the scheduler (a `between_passes` batch; upstream's test hook after_group_phase_cb):
  // the next iterate() calls `land` once, after its group pass and before its singles pass. `land`
  // makes the batch's submits through this core, and whatever the orchestration does at once (a
  // fail-fast or abort: not_submitted, raise_run, end_run); it must not iterate() or report(). Every
  // event emitted meanwhile carries Event::between_passes. The driver iterates right after handing one
  // (Replay::run_next returns true): the pending batch is not part of dump() or encode(). One at a time:
  // handing a second before the next iterate() throws CoreError(kRunOrder).
  void land_between_passes(std::function<void()> land);
  // Did the last iterate() land a batch? run_instant counts that iteration as a wake (its submits are).
  bool landed_between_passes() const { return landed_; }

  // --- decisions ---
  // One scheduler iteration. The returned vector is reused by the next call.
  const std::vector<Dispatch>& iterate();
  // The loop rule (edge_triggered_wake, busy_poll): should the loop run another iteration now, `idle`
  // consecutive iterations of this instant having dispatched nothing (0 before the first)? run_instant()
  // asks it before every iteration; the seed's answer for idle 0 is always yes.
  bool loop_continues(std::size_t idle) const;
  // Is a wake pending that a parked loop takes (edge_triggered_wake on)? Off: never, since the seed's
  // loop does not park. A driver that performs an op the seed's loop does not look at (a callback's end
  // or raise without a promotion or a cancellation) runs run_instant() when this is true.
  bool loop_woken() const;

  // --- queries ---
  const Registry& registry() const { return registry_; }
  const Options& options() const { return options_; }
  std::size_t task_count() const { return tasks_.size(); }
  // Per-task queries throw CoreError(kUnknownTask) for an id the core never issued.
  TaskState state(TaskId task) const { return task_at(task).state; }
  TaskKind kind(TaskId task) const { return task_at(task).kind; }
  // Also of a reclaimed task that is still a buffer's last producer (a later submit names it). A
  // copy: a name that counts up is held as a number (see name_runs_), not as text to point into.
  std::string name(TaskId task) const;
  std::uint32_t members(TaskId task) const { return members_of(task_at(task)); }
  // Target worker of member `member` of a NEXT_LEVEL task (CoreError kUnknownMember, kNotNextLevel).
  WorkerId target(TaskId task, std::uint32_t member) const;
  // The same as a registration index (Registry::index_of(target(task, member))).
  std::uint32_t target_index(TaskId task, std::uint32_t member = 0) const;
  // What an observer's 4-byte place of a queued task leaves out (containers.hpp, Place), in one
  // lookup: its kind, its run and, for a NEXT_LEVEL single, its worker's registration index (else 0).
  struct QueuedShape {
    TaskKind kind;
    std::uint32_t run;
    std::uint32_t worker;
  };
  QueuedShape queued_shape(TaskId task) const {
    const Task& t = task_at(task);
    return {t.kind, run_at(task.index()), t.kind == TaskKind::kSingle ? t.where : 0};
  }
  CallableId callable(TaskId task) const { return CallableId(std::uint32_t{task_at(task).callable}); }
  const Buffer& buffer(BufferId id) const;
  std::size_t buffer_count() const { return buffers_.size(); }
  std::size_t sub_queue_length() const { return sub_fifo_.size(); }
  std::size_t group_queue_length() const { return group_fifo_.size(); }
  // By registration index (SUB index for sub_worker_busy); CoreError(kUnknownWorker) past the end.
  std::size_t worker_queue_length(std::uint32_t index) const { return worker_at(index).fifo.size(); }
  bool worker_busy(std::uint32_t index) const { return worker_at(index).busy; }
  bool sub_worker_busy(std::uint32_t index) const;
  std::size_t unapplied_completions() const { return inbox_.size(); }
  // A wake posted and not yet taken by an iteration (recorded under every switch set; see the header).
  bool wake_pending() const { return wake_; }
  std::size_t non_terminal_tasks() const { return live_; }
  std::size_t running_members() const { return running_members_; }
  // Every running member as (task, member), in task order. O(tasks): for explorers and tests.
  std::vector<std::pair<TaskId, std::uint32_t>> running() const;
  // The error of the open callback's run, else of the last run begun (of the one run, in a core without
  // declared runs).
  const std::optional<RunError>& run_error() const;
  std::size_t run_count() const { return runs_.size(); }
  const RunInfo& run_info(RunId run) const;
  RunId run_of(TaskId task) const {
    task_at(task);  // CoreError for a task not held
    return RunId(run_at(task.index()));
  }
  RunId open_run() const { return open_run_; }  // invalid when no callback is open
  bool declared_runs() const { return declared_runs_; }  // add_run was called (no implicit run)
  bool run_terminal(RunId run) const { return run_info(run).terminal; }
  // whole_run_fifo: the active run (invalid when the switch is off, no run was declared, or every run
  // begun is terminal), and whether begin_run() would admit one more run now (always true when off).
  RunId active_run() const { return fifo_on() ? active_run_ : RunId(); }
  bool can_admit() const { return !fifo_on() || run_fifo_.size() < options_.pipeline_depth; }
  // Promotions so far (whole_run_fifo): a driver that ends a callback compares it before and after, and
  // lets the scheduler iterate when a run was promoted (its READY tasks entered the queues).
  std::uint64_t promotions() const { return promotions_; }
  // READY tasks of `run` waiting for it to be active (whole_run_fifo; 0 otherwise).
  std::size_t parked_length(RunId run) const {
    run_info(run);  // CoreError for a run never declared
    return runs_[run.index()].parked.size();
  }
  const Switches& switches() const { return options_.switches; }
  // staging (#1583): the run whose next single may be staged now (invalid when none, and always when the
  // switch is off), the member staged on worker `index` (registration order; invalid when none), and how
  // many members are staged on all workers.
  RunId preparable_run() const;
  TaskId staged_on(std::uint32_t index) const { return worker_at(index).staged; }
  std::size_t staged_members() const { return staged_members_; }
  // Is worker `index` (registration order) reserved by the blocked head in the last iteration?
  bool reserved(std::uint32_t index) const { return reserved_flag_[index]; }
  // The group whose stall episode is open after the last iteration (invalid when none): what the
  // explorer, which has no time, reports as "can stall".
  TaskId stalling_group() const { return episode_open_ ? stall_head_ : TaskId(); }
  // How many of `task`'s consumers are still PENDING on it (for explorers' independence checks).
  std::size_t pending_consumers(TaskId task) const;
  // Every non-terminal task with the reason it cannot progress, assuming nothing is running any more.
  std::vector<Stuck> stuck() const;
  // Every piece of scheduling state in a stable text form: tasks, queues, workers, tensor map.
  // Equal dumps mean equal states (tests compare them).
  std::string dump() const;
  // The same state as dump(), as 32-bit words appended to `out`: every field dump() shows, with task
  // names left out (a task is its TaskId; the k-th accepted submit of one trace is the same op on
  // every path, so names add nothing). Two cores built from the same registry, buffers and submit
  // sequence have equal encodings exactly when their dumps are equal. For explorers, which hash it;
  // not a stable file format.
  void encode(std::vector<std::uint32_t>& out) const;

 private:
  // A task's name lives in names_ (one arena for every task, in submit order): a task holds where its
  // name begins, and it ends where the next task's begins (name_of). A name that counts up from the
  // previous task's (same prefix, number + 1: t0, t1, ...) holds no text (kCountedName, name_runs_).
  // Every task submitted at t = 0 is held at once, so each field here costs 38 MiB at 10M tasks: a
  // one-member task (every single and SUB single) keeps its member's slot in its entry, a group's
  // member count and slots are in slots_, and a field serves two purposes where the two never overlap
  // in a task's life (`count`). Its run is not in its entry: a run's tasks are submitted while its
  // callback is open, one run at a time, so each run holds one span of task ids (run_spans_, run_at).
  // Kind, op and state share one byte, and the callable is a 16-bit index. Its consumers and the
  // buffers it last wrote are in cold_, made only for tasks that have them.
  struct Task {
    std::uint32_t name_begin = 0;
    // Until it is dispatched, its producers not yet completed (live_producers()); from its first
    // dispatch, its members ended (members_ended()). A task is dispatched only once READY, when both are 0.
    std::uint32_t count = 0;
    // One member: its slot's worker (below). A group: where its slots begin in slots_, with a header
    // (the member count) first and then one slot per member.
    std::uint32_t where = 0;
    std::uint16_t callable = 0;  // its CallableId's index (Registry::kMaxCallables)
    TaskKind kind : 2;           // how it is scheduled: a one-member group is kSingle / kSub
    TaskKind op : 2;             // the submit that made it
    TaskState state : 4;
    // kMemberFailed (a member has failed; the first to fail has kFailedFirst), kCountedName (its name
    // counts up), and for one member its slot's flags.
    std::uint8_t flags = 0;
  };
  static_assert(sizeof(Task) == 16, "a queued task's entry stays compact");
  static constexpr std::uint32_t kNoEdge = 0xffffffffu;
  // What a task holds only once it has a consumer or writes a buffer (cold_, by task index; none in a
  // trace without buffers).
  struct Cold {
    // Its consumers in submit order, a ring through edges_ (no vector per task): the last consumer's
    // edge, whose `next` is the first's; kNoEdge when it has none.
    std::uint32_t consumers = kNoEdge;
    std::uint32_t last_of = 0;  // buffers whose last producer (tensor map) it is
  };
  struct Edge {
    TaskId consumer;
    std::uint32_t next = kNoEdge;
  };
  // A member's slot: the worker's registration index (NEXT_LEVEL, fixed at submit) or SUB index (at
  // dispatch), and its flags.
  static constexpr std::uint8_t kRunning = 1;       // running
  static constexpr std::uint8_t kEnded = 2;         // its end is applied
  static constexpr std::uint8_t kReported = 4;      // running, its end in the inbox and not yet applied
  static constexpr std::uint8_t kFailedFirst = 8;   // its failure was the task's first (the kFail event names it)
  static constexpr std::uint8_t kMemberFailed = 16; // (a task's flag) some member has failed
  static constexpr std::uint8_t kCountedName = 32;  // (a task's flag) its name counts up (name_runs_)
  static constexpr std::uint8_t kTaskFlags = kMemberFailed | kCountedName;
  struct Slot {
    std::uint32_t worker = 0;  // a group's header: its member count
    std::uint8_t flags = 0;
    bool has(std::uint8_t f) const { return (flags & f) != 0; }
  };
  static_assert(sizeof(Slot) == 8, "one slot per group member");
  // A member's slot where it lives, for changing it: in its task's entry, or in slots_.
  struct SlotRef {
    std::uint32_t& worker;
    std::uint8_t& flags;
    bool has(std::uint8_t f) const { return (flags & f) != 0; }
    void set(std::uint8_t f) { flags = static_cast<std::uint8_t>(flags | f); }
    void clear(std::uint8_t f) { flags = static_cast<std::uint8_t>(flags & ~f); }
  };
  SlotRef slot(Task& t, std::uint32_t m) {
    if (!is_group(t.kind)) return {t.where, t.flags};
    Slot& s = slots_[t.where + 1 + m];
    return {s.worker, s.flags};
  }
  Slot read_slot(const Task& t, std::uint32_t m) const {
    if (!is_group(t.kind)) return {t.where, static_cast<std::uint8_t>(t.flags & ~kTaskFlags)};
    return slots_[t.where + 1 + m];
  }
  std::uint32_t members_of(const Task& t) const { return is_group(t.kind) ? slots_[t.where].worker : 1; }
  // `count` read as what it is in the task's state (see Task).
  static bool dispatched(const Task& t) {
    return t.state == TaskState::kRunning || t.state == TaskState::kCompleted || t.state == TaskState::kFailed;
  }
  static std::uint32_t live_producers(const Task& t) { return dispatched(t) ? 0 : t.count; }
  static std::uint32_t members_ended(const Task& t) { return dispatched(t) ? t.count : 0; }
  struct WorkerState {
    WorkerId id{0};
    WorkerKind kind;
    bool busy = false;
    Fifo<TaskId> fifo;
    std::uint32_t frames = 1;  // staging: 2 lets it hold one staged member (its second frame)
    TaskId staged;             // the member staged on its second frame (READY, not running), or invalid
    std::uint64_t staged_seq = 0;  // that staging's Dispatch::seq
  };
  struct Completion {
    TaskId task;
    std::uint32_t member;
    Outcome outcome;
  };

  const Task& task_at(TaskId id) const;
  const WorkerState& worker_at(std::uint32_t index) const;
  // Runs of names that count up, by their first counted task (ascending). The task before it, the
  // run's base, is named in full; task i of the run is named by the base's prefix and its number plus
  // (i - base). The base's text stays held (reclaim()'s name floor) while a task of its run is held,
  // and a counted task's name_begin is where that text ends. Only the runs from the front task's on.
  struct NameRun {
    std::uint32_t first;       // the first counted task
    std::uint32_t base_begin;  // where the base's name begins in names_
  };
  // `t` is an entry of tasks_ (its name ends where the next entry's begins).
  std::string name_of(const Task& t) const {
    std::string out;
    name_into(t, out);
    return out;
  }
  // The name of `t` into `out` (replacing what it held).
  void name_into(const Task& t, std::string& out) const;
  // At submit: appends the name of `task` (to be `id`) to names_, or counts it up (kCountedName).
  void hold_name(Task& task, TaskId id, std::string_view name);
  // Where `t`'s text begins and ends in names_ (modulo 2^32, as name_begin): empty for a counted name.
  std::uint32_t name_end(const Task& t) const {
    const Task* next = &t + 1;
    return next == tasks_.end() ? names_base_ + static_cast<std::uint32_t>(names_.size()) : next->name_begin;
  }
  std::string_view text_at(std::uint32_t begin, std::uint32_t end) const {
    return {names_.data() + static_cast<std::uint32_t>(begin - names_base_), std::size_t{end - begin}};
  }
  // The run after the one task `index` (counted) is in (name_runs_.end() after the last).
  std::deque<NameRun>::const_iterator run_after(std::size_t index) const;
  // Of counted task `t` in `run`: the prefix (a view into names_) and the number that task index 0
  // would have (task i's is zero + i).
  struct CountedRun {
    std::string_view prefix;
    std::uint64_t zero;
  };
  CountedRun counted_run(const NameRun& run, const Task& t) const;
  // The name of task `index` (`t`, counted) in event_name_.
  std::string_view event_name(std::size_t index, const Task& t) const;
  // A table indexed by a number ever issued (TaskId, slot, edge) whose front is dropped once reclaimed:
  // entry i is v_[i - base_]. Naming an entry below floor_ (reclaimed) is a core bug: it aborts.
  [[noreturn]] static void reclaimed_entry_named(std::size_t i, std::size_t floor);
  template <typename T>
  class Window {
   public:
    T& operator[](std::size_t i) {
      if (i < floor_) reclaimed_entry_named(i, floor_);
      return v_[i - base_];
    }
    const T& operator[](std::size_t i) const {
      if (i < floor_) reclaimed_entry_named(i, floor_);
      return v_[i - base_];
    }
    std::size_t size() const { return base_ + v_.size(); }  // entries ever issued
    std::size_t base() const { return base_; }
    std::size_t floor() const { return floor_; }
    std::size_t held() const { return v_.size(); }
    void push_back(const T& x) { v_.push_back(x); }
    void reserve(std::size_t n) { v_.reserve(n); }
    void set_floor(std::size_t i) {  // the entries below i are never read again: their pages go back
      floor_ = i;
      v_.release_front(i - base_);
    }
    // Forgets the entries below `i` (<= floor()).
    void drop_before(std::size_t i) {
      v_.erase_front(i - base_);
      base_ = i;
    }
    std::size_t index_of(const T& x) const { return base_ + static_cast<std::size_t>(&x - v_.begin()); }
    const T* begin() const { return v_.begin() + (floor_ - base_); }
    const T* end() const { return v_.end(); }

   private:
    HugeVector<T> v_;  // a million entries at once: huge pages, grown without a copy
    std::size_t base_ = 0, floor_ = 0;
  };
  // The run of the task at `index` (held or not): the span that holds it.
  std::uint32_t run_at(std::uint32_t index) const {
    if (index >= run_spans_.back().first) return run_spans_.back().run;
    auto it = std::upper_bound(run_spans_.begin(), run_spans_.end(), index,
                               [](std::uint32_t i, const RunSpan& s) { return i < s.first; });
    return std::prev(it)->run;
  }
  std::uint32_t run_of_entry(const Task& t) const { return run_at(static_cast<std::uint32_t>(tasks_.index_of(t))); }
  TaskState producer_state(TaskId p) const;
  void reclaim();
  void add_consumer(TaskId producer, TaskId consumer);
  template <typename F>
  void for_each_consumer(const Task& t, F&& f) const {
    const std::uint32_t last = cold_.get(tasks_.index_of(t)).consumers;
    if (last == kNoEdge) return;
    for (std::uint32_t e = edges_[last].next;; e = edges_[e].next) {
      f(edges_[e].consumer);
      if (e == last) return;
    }
  }
  // f(registration index, its state) for each member's worker of NEXT_LEVEL group `g`, in member order.
  template <typename F>
  void for_each_member_worker(const Task& g, F&& f) const {
    const std::uint32_t members = members_of(g);
    for (std::uint32_t m = 0; m < members; ++m) {
      const std::uint32_t w = read_slot(g, m).worker;
      f(w, workers_[w]);
    }
  }
  std::optional<Rejection> validate(const SubmitRequest& r, std::vector<std::uint32_t>& targets) const;
  void emit(Event& e) {
    e.t = now_;
    e.between_passes = landing_;
    if (observer_) observer_->on_event(e);
  }
  Event event_for(EventKind kind, TaskId id) const;
  void set_state(TaskId id, TaskState to);
  void make_ready(TaskId id);
  void poison_from(TaskId failed);
  void apply(const Completion& c, bool batch_start);
  void finish(TaskId id);
  void dispatch_member(TaskId id, std::uint32_t member, Target target);
  void group_pass();
  void reserve_for_blocked_head(const Task& head);
  bool barrier_holds();
  bool singles_pass();  // false: the barrier stopped it (group_barrier)
  void track_stall();
  bool stall_condition(const Task& head) const;
  void report_stall();
  void sub_pass();
  void activate_staged();  // staging: the active run's staged member starts (step 1b)
  void staging_pass();     // staging: stage one single of the preparable run (step 1b)
  void mark_idle(std::uint32_t worker_index);
  RunId submitting_run();          // the open callback's run (the implicit one made on first use)
  void task_ended(const Task& t);  // a task turned terminal: its run's live count
  void check_run_end(std::uint32_t run);
  std::size_t cancel_unstarted(std::uint32_t run);  // run_cancellation: see raise_run()
  // edge_triggered_wake's one decision (#1612): does the loop park after a pass until a wake? Off (the
  // seed), it never parks. Asked by the loop rule only (loop_continues, loop_woken).
  bool loop_parks() const { return options_.switches[Switch::kEdgeTriggeredWake]; }
  // whole_run_fifo (see the header comment).
  bool fifo_on() const { return declared_runs_ && options_.switches[Switch::kWholeRunFifo]; }
  void enqueue(TaskId id);  // into the queue of its route (no event)
  void promote();           // the active run turned terminal: the next one is active
  // view_deps on: per buffer, the (view, producer) entries in insertion order.
  struct ViewEntry {
    std::optional<ByteRange> range;
    TaskId task;
  };
  struct RunState {
    RunInfo info;
    // Its tensor map (both dropped when the run is terminal): view_deps off, buffer -> last producer;
    // view_deps on, buffer -> its (view, producer) entries.
    std::vector<TaskId> producer_of;
    std::vector<std::vector<ViewEntry>> views;
    // whole_run_fifo: its READY tasks while it is not the active run, in READY order.
    std::vector<TaskId> parked;
    // staging: its member staged on a worker's second frame (not in `parked`), or invalid.
    TaskId staged;
    // staging: `parked` entries the staging pass has already found nothing to stage in, and whether it
    // met a READY group (then nothing of this run is ever staged). While the run is preparable its
    // parked list only grows at the end (a raise makes it unpreparable for good, a promotion active), and
    // no other run stages, so an entry found unsuitable stays so: each pass looks at the new ones only.
    std::size_t stage_scanned = 0;
    bool stage_blocked = false;
  };
  TaskId& producer_entry(std::uint32_t run, BufferId buffer);
  std::vector<ViewEntry>& view_entries(std::uint32_t run, BufferId buffer);

  Registry registry_;
  Options options_;
  Observer* observer_ = nullptr;
  double now_ = 0;

  Window<Task> tasks_;
  // Every held task's name, back to back.
  HugeVector<char> names_;
  // Offset of names_[0] from the run's start, modulo 2^32 as name_begin is (the names held stay
  // under 4 GiB; those of the whole run need not).
  std::uint32_t names_base_ = 0;
  std::deque<NameRun> name_runs_;  // see NameRun
  // What the next task's name must be to count up: the previous task's prefix (in names_) and its
  // number plus one, as canonical decimal digits (at most 19: counted_name). Unset after a name that
  // does not end in such a number.
  struct NextCount {
    std::uint32_t prefix_begin = 0;
    std::uint32_t prefix_size = 0;
    char digits[20] = {};
    std::uint8_t size = 0;
    bool count_up();  // the digits plus one; false past 19 digits
  };
  std::optional<NextCount> next_count_;
  // Event::name of a counted task: written by event_for (event_name()), read while its event is
  // emitted (the core builds and emits one event at a time), with the run it was last written for:
  // tasks first..end-1, whose names are its first `prefix` bytes and zero + the task's index (written
  // after them, in room kept for 20 digits).
  mutable std::string event_name_;
  struct EventName {
    std::size_t first = 1, end = 0;  // none
    std::size_t prefix = 0;
    std::uint64_t zero = 0;
  };
  mutable EventName event_name_cache_;
  SparsePages<Cold> cold_;       // by task index, from the first task not reclaimed
  Window<Edge> edges_;           // consumer lists (appended in consumer order)
  Window<Slot> slots_;
  bool reclaim_ = false;
  std::size_t reclaimed_ = 0;  // ids below are reclaimed
  // Reclaimed tasks still the last producer of a buffer: name, final state, how many buffers.
  struct LastWriter {
    std::string name;
    TaskState state;
    std::uint32_t buffers;
  };
  std::unordered_map<std::uint32_t, LastWriter> last_writers_;
  void release_last_writer(TaskId p);
  std::vector<Buffer> buffers_;
  std::vector<RunState> runs_;  // each with its own tensor map
  // The runs' spans of task ids in submit order: from `first` until the next span, tasks of `run`.
  struct RunSpan {
    std::uint32_t first;
    std::uint32_t run;
  };
  std::vector<RunSpan> run_spans_;
  RunId open_run_;              // the run whose callback is open
  RunId last_run_;              // the last run begun
  bool declared_runs_ = false;  // add_run was called: no implicit run
  // whole_run_fifo: the run FIFO (begun, not terminal, in begin order) and its head, the active run.
  std::vector<std::uint32_t> run_fifo_;
  RunId active_run_;
  std::uint64_t promotions_ = 0;

  std::vector<WorkerState> workers_;
  IndexSet runnable_;  // registration indices: idle and FIFO non-empty
  Fifo<TaskId> group_fifo_;
  Fifo<TaskId> sub_fifo_;
  IndexSet idle_sub_;
  TaskId blocked_head_;                 // the group head last reported as blocked
  std::vector<WorkerId> blocked_busy_;  // and its busy targets then

  // The policy seam's output: what the last group pass reserved (registration indices).
  TaskId iteration_head_;                // the blocked head of the last group pass, or invalid
  std::vector<std::uint32_t> reserved_;  // reserved worker indices, in member order
  std::vector<bool> reserved_flag_;      // per worker: in reserved_
  // Stall tracking: one episode at a time, for one head.
  TaskId stall_head_;  // the blocked head the tracking is about
  bool episode_open_ = false;
  bool episode_reported_ = false;
  double episode_start_ = 0;
  double head_since_ = 0;  // when stall_head_ became the blocked head

  // A batch handed to land between the next iteration's passes, while it lands, and whether the last
  // iteration landed one.
  std::function<void()> between_passes_;
  bool landing_ = false;
  bool landed_ = false;

  std::vector<Completion> inbox_;
  bool wake_ = false;  // a wake posted since the last iteration's step 1 (the loop rule)
  std::vector<Dispatch> out_;
  std::uint64_t dispatch_seq_ = 0;
  std::size_t live_ = 0;
  std::size_t running_members_ = 0;
  std::size_t staged_members_ = 0;  // staging: members staged on some worker's second frame
  bool two_frame_workers_ = false;  // staging: some worker has two frames (else the pass stops at once)
  static inline const std::optional<RunError> kNoError{};

  // Scratch space reused across submits, so a submit allocates only what the task keeps.
  mutable std::vector<std::uint32_t> scratch_targets_;
  std::vector<TaskId> scratch_producers_;
  std::vector<TaskId> scratch_replaced_;  // last producers a submit replaced in the tensor map
  std::vector<Dependency> scratch_deps_;
  std::vector<WorkerId> scratch_workers_;
};


// Runs the iterations of one instant: iterate() while scheduler.loop_continues() says so (the loop rule
// of the switches edge_triggered_wake and busy_poll; with both off, until as many consecutive iterations
// as the SUB FIFO holds entries, at least one, dispatched nothing; an iteration that landed a
// between_passes batch counts as one that dispatched). `carry_out(dispatches)` is called after every
// iteration; it may report() completions that came due at once, which the next iteration applies (a
// report is a wake). Returns the number of iterations run: 0 when the loop is parked and nothing woke
// it (edge_triggered_wake), at least 1 otherwise.
template <typename CarryOut>
std::size_t run_instant(Scheduler& scheduler, CarryOut&& carry_out) {
  std::size_t idle = 0;
  std::size_t iterations = 0;
  while (scheduler.loop_continues(idle)) {
    const std::vector<Dispatch>& dispatches = scheduler.iterate();
    ++iterations;
    // An iteration that landed a between_passes batch counts as one that dispatched: the batch's
    // submits are a wake, so the iterations go on and the next group pass sees what it submitted.
    const bool dispatched = !dispatches.empty() || scheduler.landed_between_passes();
    carry_out(dispatches);
    idle = dispatched ? 0 : idle + 1;
  }
  return iterations;
}

// The instant rule in one place: the ends of one instant in the instant's order (report_instant),
// then the iterations of the instant (run_instant with `carry_out`). Does nothing and returns 0 when
// `ends` is empty (an instant with nothing new for the scheduler to look at). `ends` is cleared.
template <typename CarryOut>
std::size_t complete_instant(Scheduler& scheduler, std::vector<MemberEnd>& ends, CarryOut&& carry_out) {
  if (ends.empty()) return 0;
  scheduler.report_instant(ends);
  return run_instant(scheduler, std::forward<CarryOut>(carry_out));
}

}  // namespace dirsched
