// Exhaustive exploration of a scenario on the core alone (no SimGrid, no durations).
//
// Member durations are abstracted away: from every state, any running member may end next, and the
// orchestrator's next op may come before or after any of those completions. A member ends as the file
// says, as in a run: it fails if its op marks it `fail: true` and succeeds otherwise; with `failures`,
// a member the file marks failing still fails on every path and any other member may succeed or fail. A batch stays atomic, a drain waits until every submitted task is terminal, and sleep
// and at_s only order ops. Each transition is followed by the scheduler's iterations, as in a run.
// Every transition is checked by the InvariantChecker. For every group, dynamic programming over the
// explored graph gives the most and the fewest singles that can be dispatched on its targets between
// its READY and its launch, with a witness.
// The core and the checker run under the scenario's policy (scheduler.policy or --policy); every group
// also says whether it can stall (can_stall): whether some visited state has the policy's stall
// condition open for it (seed: it is the blocked head; head_reservation: it is the blocked head and
// holds an idle target with queued singles). Time is not modelled: "could be reported", not when.
//
// States. A state is the core (Scheduler::encode, which holds what dump() shows, without names) plus
// the replay cursor (op position, unwound). The visited set keeps, per state, a 128-bit hash of those
// bytes and a node number, never the bytes: two different states merge only if their 128-bit hashes
// collide, which for n states has probability about n^2 / 2^129 under a random-hash model (below
// 1e-20 at 1e9 states). A node keeps, per group, the best overtake counts below it and the index of
// the choice that achieves them (witnesses are rebuilt by replaying those choices from the root), so
// a visited state costs a few dozen bytes. The graph is a DAG (every transition runs an op or ends a
// member), so a depth-first search finishes every child before its parent.
//
// Partial-order reduction (por, on by default). At a state where some running member X is "local",
// only X's end is explored (success, and failure with `failures`); elsewhere every choice is. X, a
// member of NEXT_LEVEL task T on worker w, is local when
//   L1 T has no PENDING consumer, and no op still to run reads a buffer T writes;
//   L2 w is a target of no group that is PENDING or READY, nor of any group an op still to run submits;
//   L3 at most one SUB task is PENDING, READY or still to be submitted (so the SUB FIFO never holds two
//      entries and the instant's iteration count cannot reorder it);
//   L4 when X may fail (the file marks it failing, or `failures`): the run's first error is already
//      set, and T is a single or X is the last of T's members still running (so no failure order is
//      decided by X). A success commutes with another member's failure: it touches neither the run's
//      error nor a task's first failed member, and a failure poisons only PENDING tasks.
//   L5 with whole_run_fifo (runs declared): T is not the last live task of its run (so X's end cannot end
//      the run, which would promote the next run, whose READY tasks then dispatch, and admit another
//      run op: an order against that run's submits).
//   L6 with run_cancellation: T's run's callback has ended (it can no longer raise). While it may raise,
//      the raise cancels every READY and PENDING task of the run, so X's end, which hands w its FIFO head
//      (or, as a success, releases a consumer), decides whether that task runs or is cancelled: an order
//      against the raising op. (Without L6 the reduction lost outcomes: fail-fast.json under current with
//      failures, 23 of 24; tests/explore/ pins it.)
// staging (#1583) needs no condition of its own: the staging pass reads the preparable run's READY
// singles and the frames, which an end of the active run changes only when it ends that run (L5).
// mpi_group_lane changes only when members start and end, which the explorer does not model: it explores
// every order of ends, the lane's among them (an over-approximation).
// Each condition can only stay true along any path that does not end X, and under them X's end
// commutes with every other action (another completion, an op): it frees w and hands w its FIFO head,
// which gives the same worker FIFO in either order; it routes nothing, launches no group, counts no
// overtake (w is nobody's waiting target), does not touch the run's error, and races no raise (L6). {end X} is therefore a
// persistent set, and by the persistent-set theorem every maximal path of the full graph has a
// permutation, by swaps of adjacent commuting actions, among the explored paths. Those swaps keep the
// end state and each action's overtake count, so the reduction keeps exactly: the set of terminal
// states (terminal_outcomes, outcomes), the stuck tasks and their reasons, each group's max_overtakes
// and min_overtakes, and the end-of-run invariant checks. Per-transition invariant checks run on the
// explored transitions only: a violation that showed only in a skipped ordering of commuting
// completions is not reported (por = false checks every ordering). `states` counts explored states.
//
// What it does not prove: completions that coincide in time are explored one at a time, not as one
// simultaneous batch (so every order of them is explored, and registration_order_completions, which
// orders a batch, changes nothing here: each transition reports one end); durations, transfer costs and faults are not modelled; past max_states, or once
// the heap in use passes max_memory, the result covers only the states visited (`stopped_early`, and
// a note saying which bound stopped it). The depth-first path is an explicit stack on the heap (one
// frame per step, a copy of the state only where a state has choices left), not the C stack: a path
// is as deep as max_memory allows, whatever ulimit -s says.
//
// The memory bound (docs/limits.md). The heap in use (heap_in_use()) is checked during the set-up, every
// 4,096 ops while the trace is built (a generate block or a streamed trace file) and while its facts
// are read, and once the initial state is built; then at the first state and as often as the growth
// seen needs (every 64 new states while states are small, every state once one state's copy could
// take what is left). Past max_memory during the set-up, the result has no state (`states` 0) and the
// note says "during the set-up" and which step. The CLI also sets a DataLimit (RLIMIT_DATA) for the
// whole command, so that an allocation the checks do not see in time fails: explore() turns that
// std::bad_alloc into the same early stop (in the set-up, or while exploring: then the states visited
// are counted, and the groups' overtakes, whose dynamic programming did not finish, are left out).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "dirsched/scenario.hpp"

namespace dirsched {

struct ExploreOptions {
  std::size_t max_states = 1000000;
  // Stop (stopped_early, the partial result) once the heap in use passes this many bytes.
  std::size_t max_memory = std::size_t{2} << 30;
  // The RLIMIT_DATA in force (DataLimit::limit(), 0 for none): named in the note of a failed allocation.
  std::size_t data_limit = 0;
  bool failures = false;
  bool por = true;
  // Called every 4,096 new states with the count so far (the CLI's progress line); may be empty.
  std::function<void(std::size_t states)> on_states;
};

nlohmann::ordered_json explore(const Scenario& scenario, const ExploreOptions& options);

// The bytes the allocator has handed out and not taken back: what max_memory bounds (under a
// sanitizer, its allocator's count). For one binary and one input the sequence of allocations is the
// same, so a stop is too.
std::size_t heap_in_use();

// Thrown by check_setup_memory() once the heap in use passes max_memory during the set-up.
struct SetupMemoryStop {
  std::string stage;
  std::size_t heap = 0;
};
// Throws SetupMemoryStop when heap_in_use() passes options.max_memory; `stage` says what was being
// built (the CLI calls it once the scenario is loaded, explore() along its set-up).
void check_setup_memory(const ExploreOptions& options, const std::string& stage);

// The result of an explore that reached the bound during its set-up, before the first state:
// stopped_early, no state, and a note naming the step and the heap in use (`heap`), or, with `heap` 0,
// the allocation that failed at options.data_limit.
nlohmann::ordered_json explore_stopped_in_setup(const std::string& scenario, const ExploreOptions& options,
                                                const std::string& stage, std::size_t heap);

// What DataLimit allows above max_memory and what the process held before: malloc's own overhead and
// free chunks it keeps (heap_in_use() counts only what is handed out), and what one state adds past a
// check, so that the checks, which stop with the partial result, come first.
inline constexpr std::size_t kDataLimitMargin = std::size_t{64} << 20;

// While one lives, the process's data segment (RLIMIT_DATA: the heap and every private writable
// mapping) is bounded at what it maps when the DataLimit is made (VmData, about 11 MB for dirsched)
// plus max_memory plus kDataLimitMargin: an allocation past that fails with std::bad_alloc, which
// explore() and the CLI turn into the early stop. The limit in force before is put back by release()
// or the destructor. A lower limit already in force is kept (limit() says it). Not set (limit() 0)
// under AddressSanitizer or ThreadSanitizer, whose shadow and allocator regions are terabytes of
// reserved mappings that a data limit would make fail: there only the checks bound the heap. Nor when
// /proc/self/status gives no VmData.
class DataLimit {
 public:
  explicit DataLimit(std::size_t max_memory);
  ~DataLimit() { release(); }
  DataLimit(const DataLimit&) = delete;
  DataLimit& operator=(const DataLimit&) = delete;
  std::size_t limit() const { return limit_; }
  void release();

 private:
  std::size_t limit_ = 0;  // the data limit in force, 0 for none
  bool set_ = false;       // whether this one set it (and release() puts the old one back)
  std::uint64_t old_cur_ = 0, old_max_ = 0;
};

}  // namespace dirsched
