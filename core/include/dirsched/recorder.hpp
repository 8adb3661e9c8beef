// Recorder: an observer that keeps a run's history as plain data, for summaries, CSV and pictures.
//
// It keeps one record per task name in first-seen order (submit, reject or not_submitted), with its
// times and member runs, per-worker busy time, and the queue waits (READY to dispatch, per queue).
// For every group it measures the starvation the contract notes describe:
// - ready_wait: READY to launch;
// - idle_target_s: the part of that wait during which at least one of its targets sat idle;
// - overtakes: singles dispatched on one of its targets while it waited.
// These are kept so that the cost per event does not grow with the number of waiting groups (a trace
// where thousands of groups wait at once made the old per-dispatch walk of them quadratic):
// - overtakes: a counter of single dispatches per worker; a group keeps each target's counter at its
//   READY, and its overtakes are the sum of the differences.
// - overtaken_by: each worker logs the names of its single dispatches only while some waiting group on
//   it still has room under kSummaryListCap; a group's names are the first of the merged logs of its
//   targets, copied once, when it launches or has its fill (found by a sweep when a worker's log
//   reaches 2 kSummaryListCap names; the log then shrinks below kSummaryListCap).
// - idle_target_s: see "Waiting groups" in recorder.cpp. The sum is kept term for term as before (the
//   same double), but a group is touched only where its sum gains a term: at an instant where one of
//   its targets changed and it has an idle target, or where a target stays idle (or busy) past it.
//
// What a record holds. A task only queued holds a 4-byte place instead (see live_ below); every other
// record is one fixed-size Live entry (32 bytes, nothing on the heap) in a pool: its
// four times (as numbers of instants, InstantTable: 4 bytes each), kind, state, a few flags, its name
// as a reference (the TaskId, whose name the core keeps; a rejected or not-submitted op, which the core never held, has its name in a small side
// arena) and, for a single, its one NEXT_LEVEL target and its one member's dispatch target inline
// (the member's start and end are the task's: a single's member starts at its dispatch and ends at
// the instant the task completes or fails). Everything rare lives in side tables keyed by record
// number, made only for the records that need them: a group's targets, member runs, idle_target_s
// and overtakes; a rejection's or a not-submitted op's message (interned: a fail-fast run gives every
// later op the same one); with keep_records, the producers and the poison cause. A TaskRecord with
// every field is built on demand from that (find(), tasks(), groups(), on_retire).
//
// Retirement: a record is retired once it and every record before it are terminal (no later event
// can touch it). Retiring counts its final state, passes it to on_retire (tasks.csv is written so, in
// record order, as the run goes) and, unless keep_records, drops it: only a group's record stays (the
// summary lists every group), and the queue waits (one double per dispatched task, for the exact
// percentiles). Memory then follows the window from the oldest unfinished task to the newest, not the
// length of the trace. finish() retires the rest at the end of the run, whatever their state.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dirsched/containers.hpp"
#include "dirsched/observer.hpp"
#include "dirsched/registry.hpp"

namespace dirsched {

struct MemberRun {
  Target target;
  double start = -1;
  double end = -1;  // -1 while running
  Outcome outcome = Outcome::kSuccess;
};

// A record as the outputs read it. The Recorder does not hold these: it builds one on demand (find(),
// tasks(), groups(), on_retire) from its compact record and side tables (see the header comment).
struct TaskRecord {
  std::string name;
  TaskKind kind = TaskKind::kSingle;
  TaskState state = TaskState::kPending;
  std::vector<WorkerId> workers;  // NEXT_LEVEL targets, member order
  double submit = -1, ready = -1, start = -1, end = -1;
  std::optional<ErrorCode> code;       // REJECTED
  std::string message;                 // REJECTED / NOT_SUBMITTED reason
  std::string cause;                   // POISONED: the failed task (kept only with keep_records)
  TaskId task;                         // invalid for a rejection or a not-submitted op
  RunId run;                           // the run it belongs to (Scheduler::add_run; the implicit one)
  std::vector<std::string> producers;  // kept only with keep_records (no output reads them)
  std::vector<MemberRun> members;
  // Groups only.
  double idle_target_s = 0;
  std::vector<std::string> overtaken_by;  // singles, in dispatch order: the first kSummaryListCap
  std::size_t overtakes = 0;              // all of them
};

// One stall report (group_stall or reservation_stall), as the core emitted it.
struct StallRecord {
  std::string task;
  EventKind kind = EventKind::kGroupStall;
  double t = 0;
  double waited_s = 0;
  std::vector<WorkerId> busy;
  std::vector<WorkerId> idle_queued;  // reservation_stall only
};

struct WaitStats {
  std::size_t count = 0;
  double p50 = 0, p95 = 0, max = 0, mean = 0;
  bool exact = true;  // false: p50 and p95 from the histogram (WaitSketch), within kWaitSketchError
};

// How many entries a per-task or per-group list of the outputs holds at most (summary.json's groups,
// stalls, stuck, critical_path, a group's overtaken_by); the rest are counted. Larger than any shipped
// scenario needs, so their outputs are the full lists.
inline constexpr std::size_t kSummaryListCap = 1000;
// How many waits the Recorder keeps exactly, over all its wait lists; past that every list turns into a
// WaitSketch histogram.
inline constexpr std::size_t kExactWaits = std::size_t{1} << 20;
// The histogram's buckets: [g^i, g^(i+1)) with g = 1 + 1/64; a bucket's value is its geometric-ish
// middle, so a percentile read from it is within this relative error of the exact one.
inline constexpr double kWaitSketchRatio = 1.0 + 1.0 / 64;
inline constexpr double kWaitSketchError = (kWaitSketchRatio - 1) / (kWaitSketchRatio + 1);  // 0.78 %

// A list of waits (seconds, >= 0) summarised as count, nearest-rank p50 / p95, max and mean. Exact
// (every value kept) until sketch() is called; then a histogram of log buckets (zeros counted apart),
// whose memory follows the number of distinct buckets (a few thousand at most, 8 bytes each), not of values. Count,
// max and mean stay exact (the mean as a running sum); p50 and p95 are within kWaitSketchError.
class WaitSketch {
 public:
  void add(double v);
  void add(const WaitSketch& other);
  void sketch();
  bool sketched() const { return sketched_; }
  bool empty() const { return count_ == 0; }
  std::size_t count() const { return count_; }
  std::size_t held() const { return values_.size(); }  // values kept exactly
  WaitStats stats() const;
  WaitStats take_stats();  // the same, sorting the kept values in place (no copy): read once, last
  void reserve(std::size_t n);  // room for n more exact values

 private:
  using Values = std::vector<double, HugePageAllocator<double>>;
  static WaitStats exact_stats(Values& values);  // sorts `values` (not empty) in place
  WaitStats histogram_stats() const;             // sketched, or empty
  void bucket(double v, std::uint64_t n);
  Values values_;  // up to kExactWaits: huge pages
  // The histogram: (bucket, count) by bucket, ascending; a bucket not listed is empty. A flat vector of
  // 8-byte entries: a tree node per bucket was 64 bytes, and an at-once trace of 10M tasks on 4,096
  // workers gives each worker's two lists some 200 buckets each (16-byte entries held 24 MiB there). A
  // bucket of more than kFull values takes several entries, side by side, all full but the last.
  struct Bucket {
    static constexpr std::uint32_t kFull = 0xffffffffu;
    std::int32_t index;
    std::uint32_t n;
  };
  static_assert(sizeof(Bucket) == 8, "a histogram entry stays compact");
  std::vector<Bucket> buckets_;
  std::uint64_t zeros_ = 0;
  bool sketched_ = false;
  std::size_t count_ = 0;
  double sum_ = 0, max_ = 0;
};

class Scheduler;

class Recorder : public Observer {
 public:
  // Names of submitted tasks are read from `core` (by TaskId) whenever a record is built, so `core`
  // must outlive the Recorder's queries.
  explicit Recorder(const Scheduler& core);
  ~Recorder() override;
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;
  void on_event(const Event& e) override;
  // Keep every record for the whole run (the default: find(), tasks() and tests read them). Off, a
  // retired record is dropped (see above). Set before the first event.
  void set_keep_records(bool keep) { keep_ = keep; }
  // Called with each record as it retires, in record order. The record passed is reused: copy what
  // outlives the call.
  void set_on_retire(std::function<void(const TaskRecord&)> sink) { on_retire_ = std::move(sink); }
  // Retires every record not yet retired (the end of the run).
  void finish();

  // The records held, built on demand: every record with keep_records, else those not yet retired.
  std::vector<TaskRecord> tasks() const;
  // The same records one at a time, in record order, through one reused TaskRecord (no copy of them all).
  void for_each_task(const std::function<void(const TaskRecord&)>& f) const;
  // Records ever made, and those not yet retired.
  std::size_t record_count() const { return first_ + live_.size(); }
  std::size_t live_records() const { return record_count() - retired_; }
  // Records the Recorder holds now: the live ones, and with keep_records the retired ones too.
  std::size_t held_records() const { return live_.size(); }
  // Records held as a Live (more than queued: see live_); the rest hold a 4-byte place.
  std::size_t pooled_records() const { return pool_.held(); }
  // Records by final (or, not yet retired, current) state.
  std::map<TaskState, std::size_t> state_counts() const;
  // The same per run (RunId index -> state -> count), for runs that have a record.
  std::map<std::uint32_t, std::map<TaskState, std::size_t>> run_state_counts() const;
  // Every group record, in record order; without keep_records, once more than kSummaryListCap groups
  // have retired, only the kSummaryListCap that waited longest READY (launch, or the run's last
  // transition, minus READY) are kept, and groups() gives those, longest wait first.
  std::vector<TaskRecord> groups() const;
  bool groups_capped() const { return groups_capped_; }
  // READY-to-start waits of NEXT_LEVEL singles and groups (a task that never started waited until
  // `makespan`), in no particular order.
  void ready_waits(double makespan, WaitSketch& singles, WaitSketch& groups) const;
  // Every group ever recorded (not only those groups() lists): counts and sums for the summary.
  struct GroupTotals {
    std::size_t count = 0;
    double ready_wait_s = 0;  // sum, a group that never launched waiting until `makespan`
    double idle_target_s = 0;
    std::size_t overtakes_max = 0;
  };
  GroupTotals group_totals(double makespan) const;
  // By name, among the records held (all of them with keep_records); the first record of that name.
  std::optional<TaskRecord> find(std::string_view name) const;
  // Busy seconds per NEXT_LEVEL worker (registration order) and per SUB worker.
  const std::vector<double>& next_level_busy() const { return nl_busy_; }
  const std::vector<double>& sub_busy() const { return sub_busy_; }
  // Waits from READY to dispatch, keyed "worker:ID", "group", "sub" (sorted by key).
  std::map<std::string, WaitStats> queue_waits() const;
  // Stall reports in the order they were emitted. They change no state and are not transitions.
  // The first kSummaryListCap of them; stall_counts() counts every one by kind.
  const std::vector<StallRecord>& stalls() const { return stalls_; }
  const std::map<EventKind, std::size_t>& stall_counts() const { return stall_counts_; }
  double last_transition() const { return last_transition_; }
  std::uint64_t event_count() const { return events_; }

 private:
  // The record every task has while it is held (see the header comment): 32 bytes, no heap. Its times
  // are numbers of instants_ (InstantTable::kNone: not yet, read back as -1).
  struct Live {
    std::uint32_t submit = InstantTable::kNone, ready = InstantTable::kNone, start = InstantTable::kNone;
    std::uint32_t end = InstantTable::kNone;  // with kEnded; a single's member end before its task ends (kMemberEnded only)
    // kNamed: the TaskId; otherwise the offset of the name in the side arena (from the run's start).
    std::uint32_t name = 0;
    // kInline NEXT_LEVEL single: its worker's registration index; kInline SUB single: the SUB worker
    // it runs on, once dispatched; kHasMessage (no TaskId): the number of its message.
    std::uint32_t where = 0;
    TaskKind kind = TaskKind::kSingle;
    TaskState state = TaskState::kPending;
    ErrorCode code = ErrorCode::kMissingWorker;  // REJECTED
    std::uint8_t flags = 0;
    std::uint32_t run = 0;  // RunId index (in the padding the entry had)
  };
  static_assert(sizeof(Live) == 32, "the per-task record stays compact");
  // Live::flags.
  static constexpr std::uint8_t kNamed = 1;         // a submitted task: name is its TaskId
  static constexpr std::uint8_t kInline = 2;        // one member, its worker and run in the Live entry
  static constexpr std::uint8_t kMemberEnded = 4;   // kInline: the member has ended (at `end`)
  static constexpr std::uint8_t kMemberFailed = 8;  // kInline: and failed
  static constexpr std::uint8_t kEnded = 16;        // the task ended (completed, failed, poisoned, cancelled) at `end`
  static constexpr std::uint8_t kHasExtra = 32;     // it has a side record in extras_
  static constexpr std::uint8_t kHasMessage = 64;   // a rejection or not-submitted message (`where`)
  // The rare parts of a record, made only for the records that have them.
  struct Extra {
    std::vector<WorkerId> workers;   // not kInline: the NEXT_LEVEL targets
    std::vector<MemberRun> members;  // not kInline
    double idle_target_s = 0;        // groups
    std::vector<std::string> overtaken_by;  // the first kSummaryListCap, by name
    std::size_t overtakes = 0;
    TaskId cause;                    // keep_records only
    std::vector<TaskId> producers;   // keep_records only
  };
  // A group that waits READY (see recorder.cpp, "Waiting groups").
  struct Waiting {
    std::size_t record = 0;
    Extra* extra = nullptr;              // the group's side record (std::map nodes do not move)
    std::vector<std::uint32_t> index;    // its targets' registration indices, member order
    std::vector<std::uint64_t> base;     // singles_[index[j]] at READY
    std::vector<std::uint32_t> slot;     // its place in active_ or inactive_ of index[j]
    double since = 0;                    // active: the instant its idle time was last added up to
    bool active = false;                 // some target idle (as of the last settled instant)
    bool collecting = true;              // overtaken_by not yet copied out of the logs
  };
  struct Slot {
    Waiting* group;
    std::uint32_t target;  // position in group->index
  };
  // One logged single dispatch: its number among all single dispatches (the merge order) and its name.
  struct Logged {
    std::uint64_t seq;
    std::string name;
  };
  Live& new_record(const Event& e);
  // Record n to change (made a pool entry if it was only queued), or to read (a copy, made without
  // changing anything).
  Live& record(std::size_t n);
  Live record(std::size_t n) const;
  Live view(std::uint32_t place, std::size_t n) const;  // record n from its place
  // Back to a queued place when record n holds nothing a place does not say.
  void compact(std::size_t n);
  TaskId task_of(std::size_t n) const;  // a named record's TaskId, from its number (spans_)
  std::size_t record_of(TaskId task) const;  // and back; throws for a task retired or never recorded
  Extra& extra(std::size_t n);
  const Extra* extra_if(std::size_t n) const;
  std::string name_of(const Live& r) const;
  void build(std::size_t n, TaskRecord& out) const;
  Extra& spill(std::size_t n, Live& r);
  void drop_front();
  std::uint32_t intern_message(const std::string& message);
  void worker_changed(std::uint32_t index, bool busy, double t);
  void advance(double t);
  void settle_instant();
  void settle(Waiting& w);
  void move_slots(Waiting& w, bool active);
  void start_waiting(std::size_t rec, Extra& x, double t);
  void stop_waiting(std::size_t rec, bool launched, double t);
  void single_dispatched(std::uint32_t index, std::string_view name);
  void sweep(std::uint32_t index);
  void copy_names(const Waiting& w, std::vector<std::string>& out) const;
  std::size_t overtakes_of(const Waiting& w) const;
  double idle_target_of(const Waiting& w) const;
  const Waiting* waiting_if(std::size_t n) const;
  void retire_one();
  void retire_terminal();
  double group_wait(const TaskRecord& g) const;
  bool group_less(const TaskRecord& a, const TaskRecord& b) const;

  const Scheduler& core_;
  const Registry& registry_;
  bool keep_ = true;
  std::function<void(const TaskRecord&)> on_retire_;
  TaskRecord scratch_;             // what on_retire_ is given
  // Records first_ on, a place each (4 bytes). A task only queued (Pending, or READY at its submit; a
  // single or SUB task of one member, nothing else recorded: every task of a trace submitted at t = 0
  // while it waits) is its place alone (Place, containers.hpp): its submit instant and whether it is
  // READY. Its TaskId is its record number's (spans_), and its kind, NEXT_LEVEL worker and run are the
  // core's (which holds every task not yet terminal), so the place need not say them. Any other
  // record's place names its Live in pool_, made when an event changes it and given back when it is
  // only queued again or is dropped. So the records held at t = 0 follow the tasks started, not the
  // tasks queued.
  std::uint32_t pool_place(Live&& r) { return Place::of_pool(pool_.take(std::move(r))); }
  PlaceQueue live_;
  SlotPool<Live> pool_;
  // Named records by number: from record `first` on, record n is TaskId n - offset (a rejected or
  // not-submitted op, which has no TaskId, starts a new span after it).
  struct Span {
    std::size_t first, offset;
  };
  std::deque<Span> spans_;
  InstantTable instants_;          // the times live_ names (forgotten as records are dropped)
  double time(std::uint32_t instant) const { return instants_.time(instant); }
  std::uint32_t instant(double t) { return instants_.name(t); }
  std::size_t first_ = 0;          // record number of live_.front()
  std::size_t retired_ = 0;        // records before this one are retired
  std::size_t next_task_ = 0;  // one past the last TaskId recorded
  std::map<std::size_t, Extra> extras_;  // record number -> its side record (rare records only)
  // Names of the records without a TaskId, each a 4-byte length then its bytes. Live::name is the
  // offset from the start of the run; side_names_ starts at offset side_base_ (the names of dropped
  // records are cut off the front once they are more than half of it).
  std::string side_names_;
  std::size_t side_base_ = 0;
  std::size_t side_dead_ = 0;  // bytes at the front of side_names_ that belong to dropped records
  // Rejection and not-submitted messages, interned against the last one (message_base_ is the number
  // of the first one still held).
  std::deque<std::string> messages_;
  std::uint32_t message_base_ = 0;
  std::map<TaskState, std::size_t> retired_states_;
  std::map<std::uint32_t, std::map<TaskState, std::size_t>> retired_run_states_;
  std::vector<TaskRecord> retired_groups_;                  // without keep_records (a heap once capped)
  bool groups_capped_ = false;
  std::size_t group_count_ = 0, unlaunched_groups_ = 0, overtakes_max_ = 0;
  double launched_wait_s_ = 0, unlaunched_ready_s_ = 0, idle_target_s_ = 0;
  std::vector<double> unstarted_single_, unstarted_group_;  // retired READY tasks that never started
  std::vector<double> cancelled_single_waits_, cancelled_group_waits_;  // READY to their cancellation
  // Built by the first find() (and again after new records), not per event: a run that never looks a
  // name up pays nothing for it. Not safe against concurrent find() calls.
  mutable std::vector<std::size_t> by_name_;  // positions in live_
  mutable std::size_t by_name_first_ = 0;     // first_ when by_name_ was built
  std::vector<double> nl_busy_, sub_busy_;
  std::vector<bool> nl_is_busy_;
  // Waiting groups (see recorder.cpp). Per NEXT_LEVEL worker (registration index):
  std::map<std::size_t, Waiting> waiting_;  // record -> state (nodes do not move: Slot points at them)
  std::vector<std::vector<Slot>> active_, inactive_;  // its waiting groups, by whether one target is idle
  std::vector<std::uint64_t> singles_;                // singles dispatched on it so far
  std::vector<std::deque<Logged>> log_;               // names of its singles log_base_ on
  std::vector<std::uint64_t> log_base_;
  std::vector<std::size_t> collecting_count_;         // its waiting groups still collecting names
  // Its collecting groups as (base, record) in READY order, so by base; entries of groups that have
  // left or stopped collecting are dropped lazily (by sweep(), or all at once when none collects).
  std::vector<std::deque<std::pair<std::uint64_t, std::size_t>>> collecting_;
  std::uint64_t seq_ = 0;  // single dispatches on NEXT_LEVEL workers so far
  // The instant being recorded (the time of the last transition) and the workers that changed in it,
  // with their state before it.
  double now_ = 0;
  std::vector<std::uint32_t> dirty_;
  std::vector<char> is_dirty_, was_busy_;
  std::vector<Waiting*> moving_;  // scratch for settle_instant()
  // READY-to-dispatch waits per queue: each NEXT_LEVEL worker's FIFO (registration order), groups, SUB.
  std::vector<WaitSketch> nl_waits_;
  WaitSketch group_waits_, sub_waits_;
  std::size_t exact_waits_ = 0;  // values the wait lists hold exactly (kExactWaits)
  void add_wait(WaitSketch& list, double v);
  std::vector<StallRecord> stalls_;
  std::map<EventKind, std::size_t> stall_counts_;
  double last_transition_ = 0;
  std::uint64_t events_ = 0;
};

}  // namespace dirsched
