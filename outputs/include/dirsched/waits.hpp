// Why did it wait: wait attribution, blocking chains and the critical path, as an observer.
//
// WaitAttribution watches the core's transitions (it needs no callback of its own) and splits every
// task's time from submit to start into causes that partition it (docs/outputs.md):
//   producers     submit -> READY: waiting for the tasks it depends on
//   fifo          READY single: its worker ran an earlier single of its FIFO
//   group_run     READY single: its worker ran a group's member (the group pass goes first)
//   reserved      READY single: its worker sat idle, held for the blocked group FIFO head (head_reservation)
//   scheduler     READY single: its worker sat idle and was not held (the scheduler had not iterated)
//   group_queue   READY group: an earlier group was the group FIFO head
//   targets_busy  READY group at the FIFO head: every target busy
//   target_idle   READY group at the FIFO head: a target busy and at least one sitting idle that nothing
//                 holds (a later single may take it: the starvation exposure)
//   sub_pool      READY SUB task: the SUB pool had too few idle workers (or an earlier SUB task went first)
//   target_held   READY group at the FIFO head: a target busy and the idle ones held for it (a reservation:
//                 group_reservation, in head_reservation and later versions); the price of the reservation,
//                 not an exposure to overtaking. Last, so the older causes keep their numbers.
// Transfers are no cause: a task starts at its dispatch, its input transfer comes after (execution),
// and a producer's output transfer is part of the producer's run.
//
// Exactness: each cause is accumulated as an exact sum of differences of event times (a list of
// non-overlapping doubles, as Python's math.fsum keeps), so the causes of a task add up to
// start - submit exactly; `exact_check` says whether they do, and the outputs round each to a double.
//
// Cost: O(1) per event for singles (each worker keeps running per-cause totals; a single keeps a copy
// of its worker's totals from when it turned READY and takes the difference when it starts), O(targets)
// when a group reaches the group FIFO head. Memory follows the tasks started: a task only queued holds
// a 4-byte place (LiveTable), a task's state is dropped when it ends; the causes of a started task wait
// for its tasks.csv row (take()); the critical path keeps only the tasks some live or later task can
// still name as what it waited for (reference counts), and of those only what an output can read
// (trim_chains(): the last kPathKept steps).
#pragma once

#include <algorithm>
#include <array>
#include <memory>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dirsched/containers.hpp"
#include "dirsched/error.hpp"
#include "dirsched/observer.hpp"
#include "dirsched/recorder.hpp"

namespace dirsched {

class Scheduler;

// An exact sum of doubles: non-overlapping partials, smallest magnitude first.
class ExactSum {
 public:
  void add(double x);
  void add_diff(double a, double b);  // + (a - b), exactly
  void add(const ExactSum& o, bool negate = false);
  double value() const;  // correctly rounded
  bool is_zero() const;
  std::size_t size() const { return p_.size(); }
  void clear() { p_.clear(); }  // keeps its room

 private:
  std::vector<double> p_;
};

enum class WaitCause : std::uint8_t {
  kProducers,
  kFifo,
  kGroupRun,
  kReserved,
  kScheduler,
  kGroupQueue,
  kTargetsBusy,
  kTargetIdle,
  kSubPool,
  kTargetHeld,
};
constexpr std::size_t kWaitCauses = 10;
const char* wait_cause_name(WaitCause c);  // "producers", ...
const char* wait_cause_name(std::size_t c);

// Why a task could not start earlier (the critical path's step).
enum class StartReason : std::uint8_t {
  kSubmitted,  // it started (or turned READY) at its submit: the orchestrator's op
  kProducer,   // the producer whose completion made it READY
  kWorker,     // the task whose end freed its worker (a FIFO predecessor or a group member)
  kTarget,     // a group: the task whose end freed its last busy target
  kGroupHead,  // a group: the group ahead of it in the group FIFO launched
  kSubPool,    // a SUB task: the task whose end freed a SUB worker
  kScheduler,  // none of those at its start instant
};
const char* start_reason_name(StartReason r);

struct TaskWaits {
  std::array<double, kWaitCauses> s{};  // seconds per cause, each rounded from its exact sum
  bool exact = false;                   // the exact causes added up to start - submit exactly
  std::uint32_t behind = 0;             // singles: tasks that ran on its worker while it was READY
};

struct BlockedBy {
  double from_s, to_s;
  std::optional<WorkerId> worker;  // none: an earlier group was the FIFO head
  std::string task;
  // The holding task's own submit-to-start wait and the cause that took most of it (ties: the first in
  // cause order); none when it did not wait (or, for a group ahead, has not started yet).
  double task_wait_s = 0;
  std::optional<WaitCause> task_cause;
};

struct CriticalStep {
  std::string task;
  double start_s, end_s;
  StartReason reason;
  std::string after;  // the task it waited for, when there is one
};

struct LongWait {
  std::string task;
  std::string kind;
  double wait_s = 0;
  TaskWaits waits;
  std::vector<std::string> workers;
  // Singles: the tasks that ran on its worker while it was READY, oldest first; the last kAhead of
  // them when more did (waits.behind counts them all).
  std::vector<std::string> ahead;
};

class WaitAttribution : public Observer {
 public:
  explicit WaitAttribution(const Scheduler& core);
  ~WaitAttribution() override;
  void on_event(const Event& e) override;
  // Keep each started task's causes until take() (tasks.csv); off, they are counted and dropped.
  void set_keep(bool keep) { keep_ = keep; }
  // The causes of a started task, once (erased); nothing for a task that never started.
  std::optional<TaskWaits> take(TaskId task);
  std::optional<TaskWaits> peek(TaskId task) const;
  // Totals per cause over every task that started (exact sums, rounded).
  // Critical-path nodes at most at once (the node table only grows): it follows the tasks running and
  // the critical path's chain, not the tasks ended in one instant (prune_ended_now()).
  std::size_t peak_nodes() const { return nodes_.size(); }
  std::array<double, kWaitCauses> totals() const;
  // Tasks whose causes did not add up exactly (0 unless the attribution is wrong).
  std::uint64_t inexact() const { return inexact_; }
  std::uint64_t started() const { return started_; }
  // The longest submit-to-start waits (at most `keep`), longest first, ties by submit order.
  const std::vector<LongWait>& longest_singles() const { return top_single_; }
  const std::vector<LongWait>& longest_groups() const { return top_group_; }
  // For each group that launched or was cancelled while READY, what held it from READY until then.
  const std::vector<BlockedBy>* blocked_by(TaskId group) const;
  // The chain ending with the task that ended last, first task first: its last kPathKept steps at
  // most. Call after the run.
  std::vector<CriticalStep> critical_path() const;
  // How many steps that chain has in all (critical_path() gives the last kPathKept of them).
  std::uint64_t critical_path_steps() const;
  // The chains are trimmed (trim_chains()) once kTrimFloor nodes are held, then when half as many more
  // are held as the last trimming kept (at least kTrimFloor more). Tests: every `nodes` new nodes instead (it frees only what no output can read).
  void set_trim_period(std::size_t nodes) { trim_period_ = trim_at_ = std::max<std::size_t>(nodes, 1); }
  static constexpr std::size_t kTrimFloor = std::size_t{1} << 16;
  // Critical-path nodes held now (for the memory test).
  std::size_t nodes_held() const { return nodes_.size() - free_count_; }
  // Their names' text: bytes of live records, bytes in chunks held, compactions so far (for tests).
  struct NameText {
    std::size_t live, held, compactions;  // held: the chunks' bytes allocated
  };
  NameText name_text() const { return nodes_.text(); }
  std::size_t live_tasks() const { return live_.size(); }
  // Live tasks holding a Live (more than queued: see LiveTable); the rest hold a 4-byte place.
  std::size_t pooled_lives() const { return live_.pooled(); }
  static constexpr std::size_t kLongest = 20;
  static constexpr std::size_t kPathKept = kSummaryListCap;  // the critical path's steps an output lists
  static constexpr std::size_t kAhead = 8;  // names kept per worker for LongWait::ahead

 private:
  // A started task's submit-to-start wait and the cause that took most of it, kept with what it holds.
  struct OwnWait {
    double s = 0;
    std::optional<WaitCause> cause;  // none: it did not wait
  };
  struct Worker {
    TaskId running;  // invalid when idle
    bool group = false;
    double since = 0;       // start of the current busy run, or of the idle spell
    std::uint32_t node = 0;  // the running task's node (critical path)
    // Running per-cause totals for the singles waiting on it: fifo, group_run, reserved, scheduler.
    std::array<ExactSum, 4> cum;
    double piece_since = 0;
    std::uint8_t piece = 3;  // index into cum of the current state
    std::uint64_t runs = 0;  // dispatches on it so far
    std::array<std::string, kAhead> recent;  // the names of its last runs, run k at k % kAhead
    OwnWait running_wait;                    // the running task's own wait (BlockedBy)
    double last_end = -1;    // when its last run ended
    std::uint32_t last_end_node = 0;  // and that task's node (critical path), 0: none
    bool reserved = false;
  };
  struct Run {
    double start, end;
    std::uint32_t worker;
    TaskId task;
    std::string name;  // taken while the task is live: the core may reclaim it before the chain is made
    OwnWait wait;      // the task's own wait (BlockedBy)
  };
  // What a live task holds besides its fixed fields, made only for the tasks that need it: a single's
  // four exact sums when one is not empty (a task READY before its worker ran anything, as every task
  // of a trace submitted at t = 0, snapshots nothing), and a group's targets and head state. Reads of an
  // unmade one see zero sums and no targets.
  struct Extra {
    std::array<ExactSum, 4> snap;        // singles: the worker's totals at READY; groups: busy, idle, held
    std::vector<std::uint32_t> targets;  // groups: registration indices
    double head = -1;                    // groups: when it became the group FIFO head
    double piece_since = 0;              // groups at the head
    std::uint32_t idle_targets = 0;      // groups at the head
    OwnWait own;                         // groups, once launched: its own wait (its members' dispatches read it)
  };
  // 32 bytes a live task (a million of them when every task is submitted at t = 0). What a task needs
  // only once it has started is not here: its own wait is handed on at its start (a group's kept in
  // its Extra), and one field holds the producer's node until the start and its own node after. Its
  // two times are numbers of instants_ (InstantTable; kNone: not yet, read back as -1).
  struct Live {
    std::unique_ptr<Extra> x;
    std::uint32_t submit_at = InstantTable::kNone, ready_at = InstantTable::kNone;
    std::uint32_t runs_at_ready = 0;      // singles: its worker's runs at READY, modulo 2^32 (see finish_waits)
    std::uint32_t worker = 0;             // singles: registration index
    // Not started: the producer's node it holds (0: none); started: its own node (critical path).
    std::uint32_t node = 0;
    TaskKind kind = TaskKind::kSingle;
    StartReason ready_reason = StartReason::kSubmitted;
    bool started = false;

    std::uint32_t ready_node() const { return started ? 0 : node; }
    std::uint32_t own_node() const { return started ? node : 0; }
    const ExactSum& snap(std::size_t k) const { return x ? x->snap[k] : zero_sum(); }
    Extra& extra() {
      if (!x) x = std::make_unique<Extra>();
      return *x;
    }
    // A single's snapshot: made only when one of the sums is not empty.
    void set_snap(const std::array<ExactSum, 4>& from) {
      bool any = false;
      for (const ExactSum& s : from) any |= s.size() > 0;
      if (any)
        extra().snap = from;
      else
        x.reset();
    }
    const std::vector<std::uint32_t>& targets() const { return x ? x->targets : no_targets(); }
    // A group's own wait once launched ({0, none} before).
    OwnWait group_own() const { return x ? x->own : OwnWait{}; }
  };
  static_assert(sizeof(Live) == 32, "the per-task wait record stays compact");
  static const ExactSum& zero_sum();
  static const std::vector<std::uint32_t>& no_targets();
  static double head_of(const Live& g) { return g.x ? g.x->head : -1; }
  // A critical-path node, 24 bytes: its task's name and start reason are kept in the node table's
  // text (the core may reclaim the task before the path is read), a record that `text` names. Its
  // start is not here when it is its predecessor's end, already set when the node was made (every task
  // of a queue, every task READY at a producer's end); the record holds any other start
  // (NodeTable::kOwnStart: a group at the group FIFO's head, whose predecessor has only launched, or a
  // task started by one member of a group still running).
  struct Node {
    static constexpr std::uint32_t kNoText = 0xffffffffu;  // free (and node 0)
    double end = -1;
    std::uint32_t text = kNoText;  // NodeTable's position of its record (chunk << 16 | offset)
    std::uint32_t pred = 0;        // 0: none (or trimmed off)
    std::uint32_t refs = 0;        // 0: free (and node 0)
    std::uint32_t steps = 0;       // the chain's steps up to and with this one (fewer than 2^32: one per task)
  };
  static_assert(sizeof(Node) == 24, "a critical-path node stays compact");
  // The nodes in a ChunkedQueue (growing moves none and never holds two copies; a table of more than
  // 2 MiB of nodes gets huge pages, as the task tables do: a million-task run made 10,000 page faults
  // growing it 80 KiB at a time from malloc), their names in chunks of text. A freed node's record
  // is garbage. A chunk none of whose records is live goes back at once (nodes mostly go in the order
  // they came, so most chunks empty whole); what garbage is left waits for a compaction of the text,
  // once it outweighs the live records and the frees since the last compaction are half the table:
  // each compaction's cost (the table and the live records) is paid for by the frees before it.
  class NodeTable {
   public:
    NodeTable();
    Node& operator[](std::uint32_t n) { return nodes_[n]; }
    const Node& operator[](std::uint32_t n) const { return nodes_[n]; }
    std::size_t size() const { return nodes_.size(); }
    std::uint32_t push();  // a new node at the end
    // Node n's record: its start reason, its name, and its start when `start` is given (otherwise
    // the node starts at its predecessor's end: start()).
    void set_text(std::uint32_t n, StartReason reason, std::string_view name, std::optional<double> start);
    std::string name(std::uint32_t n) const;
    StartReason reason(std::uint32_t n) const;
    double start(std::uint32_t n) const;
    bool live(std::uint32_t n) const { return nodes_[n].text != Node::kNoText; }  // not free (nor node 0)
    void freed(std::uint32_t n);  // node n was freed: its record is garbage (its chunk, when empty, goes)
    void settle();                // compacts the text when due (not within a batch of frees)
    NameText text() const;

   private:
    static constexpr std::size_t kText = 64 * 1024;  // a chunk; a record past half of one has a chunk of its own
    // A record: a byte (the reason, and the flags below), the name, then the start (8 bytes) with
    // kOwnStart. The name is its size (LEB128) and its bytes, or with kCounted a number: a name that
    // ends in a decimal number (no leading zero) and begins as its chunk's anchor does is that
    // number's distance from the anchor's (zigzag LEB128). A trace's names mostly count up (t0, t1,
    // ...; the nodes of a chunk started close together), so most records are 2 to 4 bytes, not 10. A
    // name is counted only when that is no longer than the name in full.
    static constexpr std::uint8_t kReasonBits = 0x0f;
    static constexpr std::uint8_t kCounted = 0x40;
    static constexpr std::uint8_t kOwnStart = 0x80;
    struct Record {
      std::uint8_t flags;         // the first byte
      std::size_t header;         // the flag byte and the LEB128
      std::uint64_t value;        // the LEB128: the name's size, or with kCounted the zigzag distance
      std::size_t size() const;   // the whole record's bytes
    };
    static Record read(const char* record);
    struct Chunk {
      std::unique_ptr<char[]> text;
      std::size_t size = 0, used = 0, live = 0;  // bytes: allocated, placed, of live records
      // The anchor of its counted names: the first name ending in a number offered to it while it
      // took records (that record may have gone to the next chunk).
      bool anchored = false;
      std::string prefix;
      std::uint64_t number = 0;
    };
    static void name_of(const Chunk& c, const char* record, const Record& x, std::string& out);
    static std::optional<double> own_start(const char* record, const Record& x);
    std::uint32_t place(std::uint32_t k);  // scratch_ into chunk k
    const char* record(std::uint32_t position) const {
      return chunks_[position >> 16].text.get() + (position & 0xffffu);
    }
    // Builds the record in scratch_ against chunk k's anchor (kNoChunk: none).
    void encode(std::uint32_t k, StartReason reason, std::string_view name, std::optional<double> start);
    void anchor(std::uint32_t k, std::string_view name);  // chunk k's anchor, when it has none and name counts
    std::uint32_t put(StartReason reason, std::string_view name, std::optional<double> start);
    std::uint32_t new_chunk(std::size_t size);  // a chunk's number (BadInput past 65,535 held)
    void give_back(std::uint32_t chunk);
    void compact();
    ChunkedQueue<Node> nodes_;  // only ever grows at the back (freed nodes are reused by number)
    static constexpr std::uint32_t kNoChunk = 0xffffffffu;
    std::vector<Chunk> chunks_;         // a position is chunk << 16 | offset
    std::vector<std::uint32_t> spare_;  // chunks given back, for reuse by number
    std::uint32_t current_ = kNoChunk;  // the chunk records are placed in
    std::size_t room_ = 0;              // left in it
    std::size_t live_bytes_ = 0, garbage_ = 0, frees_ = 0;  // bytes of records (garbage: in chunks held)
    std::size_t compactions_ = 0;
    std::string scratch_;                                    // the record being placed
  };

  // The live tasks by task index: task ids are dense and given in submit order, so a window from the
  // oldest live task to the newest (chunks, no allocation per task; a map held a node each, a million
  // of them when every task is submitted at t = 0). An ended task's place is cleared, and the window's
  // front moves past cleared places.
  //
  // A place is 4 bytes. A task that is only queued holds no Live: a single or SUB task not yet READY,
  // or READY at its submit with nothing ahead of it (no run of its worker, no snapshot, no node: every
  // task of a trace submitted at t = 0 while it waits) is its place alone, tagged, with its submit
  // instant and whether it is READY; its kind and worker are the core's (a live task is held there).
  // Any other task's place names a Live in a pool, made
  // when an event needs one (find()) and given back when the task is only queued again (compact()) or
  // ends. So memory at t = 0 follows the tasks started, not the tasks queued.
  class LiveTable {
   public:
    explicit LiveTable(const Scheduler& core) : core_(core) {}
    // The live task's Live, made from its place if it was only queued; nullptr when it is not live.
    Live* find(std::uint32_t i);
    Live& at(std::uint32_t i) {
      Live* l = find(i);
      if (!l) throw InternalError("wait attribution: no live task " + std::to_string(i));
      return *l;
    }
    // Its Live to read at its end, not kept (a task only queued has no node, targets or own wait);
    // nullptr when it is not live. Valid until the next ending() or its erase().
    const Live* ending(std::uint32_t i);
    // Its Live to change: the pooled one, or `local` made from its place; settle() puts it back.
    Live* peek(std::uint32_t i, Live& local);
    void settle(std::uint32_t i, Live* l, Live& local);
    void insert(std::uint32_t i, Live&& l);
    // Back to a queued place when its Live holds nothing a place does not say.
    void compact(std::uint32_t i);
    void erase(std::uint32_t i);
    std::size_t size() const { return count_; }
    // Lives held in the pool now (the tasks that are more than queued), and at most.
    std::size_t pooled() const { return pool_.held(); }
    // The oldest live task's submit (none when no task is live): no live task names an earlier instant.
    std::optional<std::uint32_t> front_submit() const;

   private:
    // A place (Place, containers.hpp): a task only queued, or its Live in pool_.
    static constexpr std::uint32_t kNoPlace = 0;  // cleared: not live
    // Task i's place (kNoPlace when it is not held), and to change it (held).
    std::uint32_t read(std::uint32_t i) const {
      return i < base_ || i - base_ >= slots_.size() ? kNoPlace : slots_.get(i - base_);
    }
    std::uint32_t& write(std::uint32_t i) { return slots_.at(i - base_); }
    Live queued_live(std::uint32_t i, std::uint32_t p) const;  // task i's Live from its queued place
    bool queueable(std::uint32_t i, const Live& l) const;
    static std::uint32_t queued_place(const Live& l);
    std::uint32_t pool_place(Live&& l) { return Place::of_pool(pool_.take(std::move(l))); }
    void free_pooled(std::uint32_t p) { pool_.give(Place::pool(p)); }
    Live& pooled(std::uint32_t p) { return pool_[Place::pool(p)]; }
    const Live& pooled(std::uint32_t p) const { return pool_[Place::pool(p)]; }
    const Scheduler& core_;
    PlaceQueue slots_;
    SlotPool<Live> pool_;  // stable: a Live& survives a later find()
    Live scratch_;                      // ending() of a task only queued
    std::uint32_t base_ = 0;
    std::size_t count_ = 0;
  };
  void flush(Worker& w, double t);
  void set_piece(std::uint32_t wi, double t);
  void head_flush(Live& g, double t);
  void become_head(TaskId g, double t);
  void target_changed(std::uint32_t wi, double t, bool busy_now);
  // `e`: the task's start (its name is read from it, not looked up in the core again).
  void started(const Event& e, Live& l, double t, StartReason reason, std::uint32_t pred);
  // Its wait, by cause (`c`), added up; returns its own wait (for BlockedBy of what waits behind it).
  OwnWait finish_waits(TaskId id, Live& l, double t, std::array<ExactSum, kWaitCauses>& c);
  void note_long(const LongWait& w, std::vector<LongWait>& top);
  std::uint32_t new_node(std::string_view name, StartReason reason, std::optional<double> start);  // start: none when it is its pred's end
  void hold(std::uint32_t n);
  void release(std::uint32_t n);  // let_go(), then the node table settles
  void let_go(std::uint32_t n);   // drops a reference to n, freeing what no one holds any more
  void new_instant(double t);
  void chain_for(TaskId head, double until);
  std::optional<std::uint32_t> index_of(WorkerId w) const;

  const Scheduler& core_;
  bool keep_ = true;
  std::vector<Worker> workers_;
  LiveTable live_;
  InstantTable instants_;  // the times live_ names
  double submit_of(const Live& l) const { return instants_.time(l.submit_at); }
  double ready_of(const Live& l) const { return instants_.time(l.ready_at); }
  void erase_live(TaskId task);  // and forgets the instants no live task names
  std::unordered_map<std::uint32_t, TaskWaits> done_;
  std::deque<TaskId> group_fifo_;
  TaskId blocked_head_;  // the last group_blocked head, until it launches
  TaskId head_;          // the group FIFO front
  std::vector<std::uint8_t> is_head_target_;
  std::vector<Run> head_runs_;
  std::string previous_head_;       // the group that launched, or was cancelled, when the head became head
  OwnWait previous_head_wait_;      // and its own wait
  std::uint32_t previous_head_node_ = 0;
  double previous_head_launch_ = -1;
  std::unordered_map<std::uint32_t, std::vector<BlockedBy>> chains_;
  double last_completed_t_ = -1;
  std::uint32_t last_target_end_node_ = 0;  // the head's target that freed last
  double last_target_end_ = -1;
  std::uint32_t last_sub_end_node_ = 0;
  double last_sub_end_ = -1;
  std::array<ExactSum, kWaitCauses> totals_;
  std::uint64_t inexact_ = 0, started_ = 0;
  std::vector<LongWait> top_single_, top_group_;
  // Reused for each start (no allocation per task once they have room).
  std::array<ExactSum, kWaitCauses>& fresh_causes();
  std::array<ExactSum, kWaitCauses> causes_;
  ExactSum check_;
  // Critical path: node 0 is "none".
  NodeTable nodes_;
  // The free nodes, last freed first, linked through their `pred` (a vector of them held 3M numbers
  // once trimming had freed that many: 13 MiB at 2M tasks).
  std::uint32_t free_ = 0;  // 0: none
  std::size_t free_count_ = 0;
  std::vector<std::uint32_t> ended_now_;  // ended at the current instant: freed when time moves on
  std::size_t prune_at_ = 4096;           // ended_now_'s size that prunes it (prune_ended_now())
  std::size_t first_prune_at() const { return std::max<std::size_t>(4096, 4 * workers_.size()); }
  void prune_ended_now();
  // Frees the nodes no output can read: those more than kPathKept steps behind every node something
  // other than a node holds (see waits.cpp).
  void trim_chains();
  std::size_t trim_period_ = 0;  // 0: as above
  std::uint32_t longest_ = 0;    // the most steps of any chain so far
  std::size_t trim_at_ = kTrimFloor;
  double instant_ = 0;
  std::uint32_t last_ = 0;  // the node that ended last (the makespan's)
  TaskId last_submit_;
  std::uint32_t last_completed_node_ = 0;
};

}  // namespace dirsched
