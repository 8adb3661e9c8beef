#include "dirsched/explore.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <unordered_map>

#include <fstream>
#include <new>

#include <sys/resource.h>

// AddressSanitizer and ThreadSanitizer: the heap is their allocator's, and their shadow memory is
// reserved in terabytes (so no data limit, see DataLimit). GCC says so with __SANITIZE_*__, Clang
// with __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DIRSCHED_EXPLORE_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define DIRSCHED_EXPLORE_SANITIZER 1
#endif
#endif

#if defined(DIRSCHED_EXPLORE_SANITIZER)
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#else
#include <malloc.h>
#endif

#include "dirsched/generate.hpp"
#include "dirsched/invariants.hpp"
#include "dirsched/replay.hpp"
#include "dirsched/trace_file.hpp"

namespace dirsched {
namespace {

using ojson = nlohmann::ordered_json;

// ---------------------------------------------------------------------------------------------
// 128-bit hash of a state's words: two 64-bit multiply-rotate lanes over pairs of words, crossed and
// finished with a 64-bit avalanche each.

std::uint64_t rotl(std::uint64_t x, int r) {
  return (x << r) | (x >> (64 - r));
}
std::uint64_t avalanche(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

constexpr bool kLittleEndian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

struct Hash128 {
  std::uint64_t a = 0, b = 0;
  friend bool operator==(const Hash128& x, const Hash128& y) { return x.a == y.a && x.b == y.b; }
};

Hash128 hash_words(const std::vector<std::uint32_t>& s) {
  std::uint64_t a = 0x243f6a8885a308d3ULL, b = 0x13198a2e03707344ULL;
  const std::size_t n = s.size();
  std::size_t i = 0;
  for (; i + 2 <= n; i += 2) {
    std::uint64_t w;  // s[i] | s[i + 1] << 32 on a little-endian machine, in one load
    if constexpr (kLittleEndian)
      std::memcpy(&w, s.data() + i, sizeof w);
    else
      w = std::uint64_t{s[i]} | std::uint64_t{s[i + 1]} << 32;
    a = rotl(a ^ (w * 0x9e3779b97f4a7c15ULL), 27) * 0xc2b2ae3d27d4eb4fULL + 0x165667b19e3779f9ULL;
    b = rotl(b ^ (w * 0xff51afd7ed558ccdULL), 33) * 0x87c37b91114253d5ULL + 0x52dce729ULL;
  }
  const std::uint64_t tail = (i < n ? std::uint64_t{s[i]} : 0) ^ (std::uint64_t{n} << 40);
  a = rotl(a ^ (tail * 0x9e3779b97f4a7c15ULL), 27) * 0xc2b2ae3d27d4eb4fULL;
  b = rotl(b ^ (tail * 0xff51afd7ed558ccdULL), 33) * 0x87c37b91114253d5ULL;
  Hash128 h;
  h.a = avalanche(a ^ rotl(b, 17) ^ n);
  h.b = avalanche(b ^ rotl(h.a, 29));
  return h;
}

// Open addressing, linear probing: 128-bit hash -> node number. 20 bytes a slot, load <= 3/4.
class VisitedSet {
 public:
  static constexpr std::uint32_t kEmpty = 0xffffffffu;
  VisitedSet() { slots_.assign(1024, Slot{}); }
  // The node of `h`, or inserts `node` and returns kEmpty.
  std::uint32_t find_or_insert(const Hash128& h, std::uint32_t node) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow();
    std::size_t i = static_cast<std::size_t>(h.a) & (slots_.size() - 1);
    while (slots_[i].node != kEmpty) {
      if (slots_[i].a == h.a && slots_[i].b == h.b) return slots_[i].node;
      i = (i + 1) & (slots_.size() - 1);
    }
    slots_[i] = {h.a, h.b, node};
    ++size_;
    return kEmpty;
  }
  std::uint32_t find(const Hash128& h) const {
    std::size_t i = static_cast<std::size_t>(h.a) & (slots_.size() - 1);
    while (slots_[i].node != kEmpty) {
      if (slots_[i].a == h.a && slots_[i].b == h.b) return slots_[i].node;
      i = (i + 1) & (slots_.size() - 1);
    }
    return kEmpty;
  }
  std::size_t bytes() const { return slots_.capacity() * sizeof(Slot); }

 private:
#pragma pack(push, 4)
  struct Slot {
    std::uint64_t a = 0, b = 0;
    std::uint32_t node = kEmpty;
  };
#pragma pack(pop)
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    size_ = 0;
    for (const Slot& s : old)
      if (s.node != kEmpty) find_or_insert({s.a, s.b}, s.node);
  }
  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

// ---------------------------------------------------------------------------------------------
// What the explorer knows of the trace, the same on every path: the k-th accepted submit is the same
// op on every path (validation does not depend on state, and an unwind stops every later op), so a
// TaskId names one op everywhere.

struct Facts {
  std::vector<std::string> group_names;
  std::vector<std::vector<std::int64_t>> group_workers;  // per group: its worker ids as written
  std::unordered_map<std::string_view, std::size_t> group_index;
  std::vector<TaskId> group_task;                                  // per group, once some path submitted it
  std::vector<TaskId> sub_tasks;                                   // SUB tasks some path submitted
  std::unordered_map<std::string_view, std::uint32_t> name_index;  // every op's task name
  std::size_t names = 0;
  // Per op position p (the next op to run), over ops p..end, batch members included: whether a buffer
  // is read (INPUT, INOUT) and whether a registration index is some group's target. Kept as the last
  // position (plus one, 0 for never) that reads each buffer or targets each worker, so that "some op
  // at p or later" is last > p: linear in ops + buffers + workers (a table per position was ops x
  // buffers bits, 5 GB for a 200,000-task random block).
  std::vector<std::size_t> last_read;    // per buffer
  std::vector<std::size_t> last_target;  // per registration index
  std::vector<std::size_t> subs;         // per position: SUB submits at p or later
  bool read_from(std::size_t p, std::size_t buffer) const { return last_read[buffer] > p; }
  bool targeted_from(std::size_t p, std::size_t worker) const { return last_target[worker] > p; }
};

// Per-transition observer: overtakes, submitted ids, and rejected / not-submitted names.
class Watch : public Observer {
 public:
  Watch(const Scheduler& core, Facts& facts, std::string& verdicts, std::vector<int>& delta)
      : core_(core), facts_(facts), verdicts_(verdicts), delta_(delta) {}
  void on_event(const Event& e) override {
    switch (e.kind) {
      case EventKind::kDispatch:
      case EventKind::kActivate:  // staging (#1583): a staged single takes its worker at its activation
        if (e.task_kind != TaskKind::kSingle || e.prepare_only) return;
        for (std::size_t g = 0; g < facts_.group_task.size(); ++g) {
          const TaskId id = facts_.group_task[g];
          if (!id.valid() || id.index() >= core_.task_count() || core_.state(id) != TaskState::kReady)
            continue;
          const auto& ws = facts_.group_workers[g];
          if (std::find(ws.begin(), ws.end(), e.target.worker.value()) != ws.end()) ++delta_[g];
        }
        return;
      case EventKind::kSubmit:
        if (e.task_kind == TaskKind::kGroup) {
          auto it = facts_.group_index.find(e.name);
          if (it != facts_.group_index.end()) facts_.group_task[it->second] = e.task;
        } else if (is_sub(e.task_kind) && std::find(facts_.sub_tasks.begin(), facts_.sub_tasks.end(),
                                                    e.task) == facts_.sub_tasks.end()) {
          facts_.sub_tasks.push_back(e.task);
        }
        return;
      case EventKind::kReject:
      case EventKind::kNotSubmitted: {
        auto it = facts_.name_index.find(e.name);
        if (it != facts_.name_index.end()) verdicts_[it->second] = e.kind == EventKind::kReject ? 'R' : 'N';
        return;
      }
      default:
        return;
    }
  }

 private:
  const Scheduler& core_;
  Facts& facts_;
  std::string& verdicts_;
  std::vector<int>& delta_;
};

struct State {
  std::unique_ptr<Scheduler> core;
  std::unique_ptr<Replay> replay;
  std::unique_ptr<InvariantChecker> checker;
  std::string verdicts;  // per trace task name: '-', 'R'EJECTED or 'N'OT_SUBMITTED

  State copy() const {
    State s;
    s.core = std::make_unique<Scheduler>(*core);
    s.replay = std::make_unique<Replay>(*replay);
    s.replay->rebind(*s.core);
    s.checker = std::make_unique<InvariantChecker>(*checker);
    s.verdicts = verdicts;
    return s;
  }
};

struct Choice {
  bool op = false;
  std::pair<TaskId, std::uint32_t> member;
  Outcome outcome = Outcome::kSuccess;
};

constexpr std::uint16_t kNoChoice = 0xffff;
// Per node and group: the most and fewest overtakes below it, and the choice index achieving each
// (kNoChoice at a terminal state).
struct Best {
  int max = std::numeric_limits<int>::min();
  int min = std::numeric_limits<int>::max();
  std::uint16_t next_max = kNoChoice, next_min = kNoChoice;
};
static_assert(sizeof(Best) == 12, "a node costs 12 bytes a group");

// The Best entries of every node, in pages of a fixed size: grows without a copy of what it holds and
// without the slack of a doubled vector (what it holds is about what it uses: bytes_per_state).
class BestTable {
 public:
  static constexpr std::size_t kPage = std::size_t{1} << 14;  // entries (192 KiB)
  Best& operator[](std::size_t i) { return pages_[i / kPage][i % kPage]; }
  const Best& operator[](std::size_t i) const { return pages_[i / kPage][i % kPage]; }
  void grow_to(std::size_t n) {
    while (pages_.size() * kPage < n) pages_.push_back(std::make_unique<Best[]>(kPage));
  }
  std::size_t bytes() const { return pages_.size() * kPage * sizeof(Best) + pages_.capacity() * sizeof(void*); }

 private:
  std::vector<std::unique_ptr<Best[]>> pages_;
};

// States kept for reuse (Explorer::give()): a depth-first step frees at most a couple at a time.
constexpr std::size_t kSpares = 4;

// The checker and the explorer's Watch, as one observer (no list to allocate per transition).
class Pair : public Observer {
 public:
  Pair(Observer* a, Observer* b) : a_(a), b_(b) {}
  void on_event(const Event& e) override {
    a_->on_event(e);
    b_->on_event(e);
  }

 private:
  Observer* a_;
  Observer* b_;
};
// At 64 nodes between checks the bound is overshot by at most 64 states' copies.
constexpr std::size_t kMemoryCheckEvery = 64;

// A failed allocation, as a note says it.
std::string allocation_failed(const ExploreOptions& o) {
  if (!o.data_limit) return "an allocation failed";
  return "an allocation failed at the data limit (RLIMIT_DATA) of " + std::to_string(o.data_limit) + " bytes";
}

// What the set-up is building, for a stop there (check_setup_memory's, or a failed allocation's).
struct Setup {
  std::string stage;
  std::size_t done = 0, total = 0;  // ops, when the step goes through them
  std::string text() const {
    return total ? stage + ", " + std::to_string(done) + " of " + std::to_string(total) + " ops" : stage;
  }
};

class Explorer {
 public:
  Explorer(const Scenario& s, const ExploreOptions& o, Setup& setup)
      : s_(s), o_(o), setup_(setup), registry_(s.registry()) {
    setup_ = {"reading the trace's facts", 0, 0};
    learn_trace();
    groups_ = f_.group_names.size();
  }

  ojson run() {
    setup_ = {"building the initial state", 0, 0};
    const std::size_t before_root = heap_in_use();
    State first = root();
    const std::size_t after_root = heap_in_use();
    // What one state holds: a node on the depth-first path may add a copy of it (check_memory()).
    state_bytes_ = after_root > before_root ? after_root - before_root : 0;
    check_setup_memory(o_, setup_.text());
    try {
      return result(search(std::move(first)));
    } catch (const std::bad_alloc&) {
      // Past DataLimit (a step the checks did not see in time): the states on the path are gone, and
      // with them the unfinished dynamic programming of the groups; what was counted stays.
      ojson out;
      out["scenario"] = s_.name;
      out["policy"] = s_.policy;
      out["states"] = nodes_;
      out["transitions"] = transitions_;
      out["stopped_early"] = true;
      out["note"] = "stopped at max_memory=" + std::to_string(o_.max_memory) + " bytes after " +
                    std::to_string(nodes_) + " states: " + allocation_failed(o_) +
                    "; results cover only those states, without the groups' overtakes";
      out["por"] = o_.por;
      out["terminal_outcomes"] = outcomes_.size();
      out["violations"] = violations_;
      out["groups"] = ojson::object();
      return out;
    }
  }

 private:
  ojson result(std::uint32_t r) {
    ojson out;
    out["scenario"] = s_.name;
    out["policy"] = s_.policy;
    {
      nlohmann::ordered_json on = nlohmann::ordered_json::array();  // the switches that are on
      for (const SwitchInfo& row : switch_table())
        if (s_.switches[row.id]) on.push_back(std::string(row.name));
      out["switches_on"] = on;
    }
    out["states"] = nodes_;
    out["transitions"] = transitions_;
    out["stopped_early"] = stopped_;
    if (stopped_ && !out_of_memory_)
      out["note"] =
          "stopped after max_states=" + std::to_string(o_.max_states) + " states: results cover only those";
    else if (stopped_)
      out["note"] = "stopped at max_memory=" + std::to_string(o_.max_memory) + " bytes (the heap in use) after " +
                    std::to_string(memory_stop_at_) + " states: results cover only those";
    out["por"] = o_.por;
    out["bytes_per_state"] = nodes_ ? (bytes_held() + nodes_ / 2) / nodes_ : 0;
    out["terminal_outcomes"] = outcomes_.size();
    ojson examples = ojson::array();
    for (const std::string& o : outcomes_) {
      if (examples.size() >= 20) break;
      examples.push_back(ojson::parse(o));
    }
    out["outcomes"] = examples;
    out["violations"] = violations_;
    ojson stuck = ojson::array();
    for (const auto& [task, v] : stuck_) stuck.push_back(v);
    out["stuck"] = stuck;
    ojson groups = ojson::object();
    for (std::size_t g = 0; g < groups_; ++g) {
      const std::size_t k = r * groups_ + g;
      if (best_[k].max < 0) continue;  // never submitted on any path
      groups[f_.group_names[g]] = {{"max_overtakes", best_[k].max},
                                   {"witness", witness(g, true)},
                                   {"min_overtakes", best_[k].min},
                                   {"min_witness", witness(g, false)},
                                   {"can_stall", can_stall_.count(f_.group_names[g]) > 0}};
    }
    out["groups"] = groups;
    return out;
  }

  void learn_trace() {
    std::vector<const OpSpec*> flat;  // submits in trace order, with the op position they belong to
    std::vector<std::size_t> pos;
    // A run op's submits (its batches opened) belong to the run op's position: the facts of a position
    // then cover the whole callback, a superset of what is still to come inside it.
    auto add = [&](const OpSpec& op, std::size_t p, auto& self) -> void {
      if (!op.task.empty()) flat.push_back(&op), pos.push_back(p);
      for (const OpSpec& inner : op.ops) self(inner, p, self);
    };
    for (std::size_t p = 0; p < s_.trace.size(); ++p) add(s_.trace[p], p, add);
    setup_.total = flat.size();
    check_setup_memory(o_, setup_.text());
    const std::size_t buffers = s_.buffers.size(), workers = registry_.next_level_count();
    f_.last_read.assign(buffers, 0);
    f_.last_target.assign(workers, 0);
    f_.subs.assign(s_.trace.size() + 1, 0);
    for (std::size_t i = 0; i < flat.size(); ++i) {
      const OpSpec& op = *flat[i];
      if (i % kMaterializeEvery == 0) setup_.done = i, check_setup_memory(o_, setup_.text());
      f_.name_index.emplace(op.task, static_cast<std::uint32_t>(f_.name_index.size()));
      if (op.kind == OpKind::kSubmitGroup) {
        f_.group_index.emplace(op.task, f_.group_names.size());
        f_.group_names.push_back(op.task);
        std::vector<std::int64_t> ws;
        if (op.workers)
          for (const WorkerArg& w : *op.workers)
            if (w.is_integer()) ws.push_back(w.value());
        f_.group_workers.push_back(ws);
      }
    }
    setup_.done = flat.size();
    check_setup_memory(o_, setup_.text());
    f_.names = f_.name_index.size();
    f_.group_task.assign(f_.group_names.size(), TaskId());
    // From the last op back: the first position met for a buffer or a worker is its last one.
    std::size_t i = flat.size();
    for (std::size_t p = s_.trace.size(); p-- > 0;) {
      f_.subs[p] = f_.subs[p + 1];
      while (i > 0 && pos[i - 1] == p) {
        const OpSpec& op = *flat[--i];
        for (const auto& member : op.args)
          for (const ArgSpec& a : member)
            if (a.buffer && (a.tag == Tag::kInput || a.tag == Tag::kInOut) && f_.last_read[*a.buffer] == 0)
              f_.last_read[*a.buffer] = p + 1;
        if (op.kind == OpKind::kSubmitGroup && op.workers)
          for (const WorkerArg& w : *op.workers)
            if (w.is_integer()) {
              if (auto index = registry_.index_of(WorkerId(w.value())); index && f_.last_target[*index] == 0)
                f_.last_target[*index] = p + 1;
            }
        if (op.kind == OpKind::kSubmitSub || op.kind == OpKind::kSubmitSubGroup) ++f_.subs[p];
      }
    }
  }

  State root() const {
    State st;
    st.core = make_scheduler(s_);
    st.checker = std::make_unique<InvariantChecker>(registry_, s_.switches);
    st.replay = std::make_unique<Replay>(s_, *st.core);
    st.verdicts.assign(f_.names, '-');
    return st;
  }

  // The next op position whose suffix facts apply (past the end once the replay is done).
  std::size_t suffix(const State& st) const {
    return st.replay->done() ? s_.trace.size() : st.replay->position();
  }

  // The member whose end alone is explored at this state (see explore.hpp), if any.
  bool local_member(const State& st, const std::vector<std::pair<TaskId, std::uint32_t>>& running,
                    std::size_t& pick) const {
    const Scheduler& core = *st.core;
    const std::size_t p = suffix(st);
    // L3: at most one SUB task waiting or still to come.
    std::size_t subs = f_.subs[p];
    for (TaskId id : f_.sub_tasks)
      if (id.index() < core.task_count() &&
          (core.state(id) == TaskState::kPending || core.state(id) == TaskState::kReady))
        ++subs;
    if (subs > 1) return false;
    // L2's waited-on workers: the targets of every PENDING or READY group, gathered once (at the first
    // member that gets that far).
    bool waited_known = false;
    waited_.clear();
    for (std::size_t i = 0; i < running.size(); ++i) {
      const auto [task, member] = running[i];
      if (is_sub(core.kind(task))) continue;
      // L4, first half: an end that may be a failure could set the run's first error.
      const bool may_fail = can_fail(st, task, member);
      if (may_fail && !core.run_info(core.run_of(task)).error) continue;
      // L6 (run_cancellation): while its run's callback may still raise (it has not ended), the raise
      // cancels every READY and PENDING task of the run, so an end that dispatches queued work (or
      // releases a consumer) before the raise does not commute with it.
      // (The implicit run of a file without runs has ended once the replay has: nothing can raise then.)
      if (core.switches()[Switch::kRunCancellation] && !core.run_info(core.run_of(task)).callback_ended &&
          !(!core.declared_runs() && st.replay->done()))
        continue;
      // L5 (whole_run_fifo): an end that may end its run promotes the next run and admits another.
      if (core.active_run().valid() && core.run_info(core.run_of(task)).live <= 1) continue;
      // L1
      if (core.pending_consumers(task) > 0) continue;
      const OpSpec& op = st.replay->op_of(task);
      bool read_later = false;
      for (const auto& args : op.args)
        for (const ArgSpec& a : args)
          if (a.buffer && a.tag != Tag::kInput && a.tag != Tag::kNoDep && f_.read_from(p, *a.buffer))
            read_later = true;
      if (read_later) continue;
      // L2
      const WorkerId target = core.target(task, member);
      const std::uint32_t w = *registry_.index_of(target);
      if (f_.targeted_from(p, w)) continue;
      if (!waited_known) {
        waited_known = true;
        for (TaskId g : f_.group_task) {
          if (!g.valid() || g.index() >= core.task_count()) continue;
          const TaskState gs = core.state(g);
          if (gs != TaskState::kPending && gs != TaskState::kReady) continue;
          for (std::uint32_t m = 0; m < core.members(g); ++m) waited_.push_back(core.target(g, m));
        }
      }
      if (std::find(waited_.begin(), waited_.end(), target) != waited_.end()) continue;
      // L4, second half: no other member of the same task still running.
      if (may_fail && core.members(task) > 1) {
        std::size_t same = 0;
        for (const auto& r : running) same += r.first == task ? 1 : 0;
        if (same > 1) continue;
      }
      pick = i;
      return true;
    }
    return false;
  }

  // A member the file marks `fail: true` fails on every path; with `failures`, any other member may
  // also fail (or succeed); without, it succeeds, as in a run.
  bool pinned_failure(const State& st, TaskId task, std::uint32_t member) const {
    return st.replay->member_fails(task, member);
  }
  bool can_fail(const State& st, TaskId task, std::uint32_t member) const {
    return o_.failures || pinned_failure(st, task, member);
  }
  void push_ends(const State& st, const std::pair<TaskId, std::uint32_t>& m, std::vector<Choice>& out) const {
    if (pinned_failure(st, m.first, m.second)) {
      out.push_back({false, m, Outcome::kFailure});
      return;
    }
    out.push_back({false, m, Outcome::kSuccess});
    if (o_.failures) out.push_back({false, m, Outcome::kFailure});
  }

  // Appends the choices of `st` to `out`.
  void choices(const State& st, std::vector<Choice>& out) const {
    const auto running = st.core->running();
    std::size_t pick = 0;
    if (o_.por && local_member(st, running, pick)) {
      push_ends(st, running[pick], out);
      return;
    }
    if (st.replay->next_enabled()) out.push_back({true, {}, Outcome::kSuccess});
    for (const auto& m : running) push_ends(st, m, out);
  }
  std::vector<Choice> choices(const State& st) const {
    std::vector<Choice> out;
    choices(st, out);
    return out;
  }

  std::string step_name(const State& st, const Choice& c) const {
    if (c.op) {
      const OpSpec& op = *st.replay->next();
      return "op " + op.path + (op.task.empty() ? "" : " " + op.task);
    }
    std::string name(st.core->name(c.member.first));
    if (is_group(st.core->kind(c.member.first))) name += "[" + std::to_string(c.member.second) + "]";
    return "end " + name + (c.outcome == Outcome::kFailure ? " failure" : " success");
  }

  // Applies one choice to a copy of `from`. False on an invariant violation (`violation` set).
  // `from` may be `to` moved in (the last choice of a state needs no copy).
  bool apply(const State& from, const Choice& c, State& to, std::vector<int>& delta,
             std::optional<Violation>& violation) {
    if (&from != &to) copy_into(from, to);
    delta.assign(groups_, 0);
    Watch watch(*to.core, f_, to.verdicts, delta);
    Pair observers(to.checker.get(), &watch);
    to.core->set_observer(&observers);
    Scheduler* core = to.core.get();
    to.checker->set_dump([core] { return core->dump(); });
    to.checker->set_run_raised([core](RunId r) { return core->run_info(r).raised; });
    bool ok = true;
    try {
      if (c.op) {
        if (to.replay->run_next(0)) run_instant(*to.core, [](const std::vector<Dispatch>&) {});
      } else {
        // One end per transition: the explorer orders coinciding ends itself, one at a time.
        std::vector<MemberEnd> ends = {{0, c.member.first, c.member.second, c.outcome}};
        complete_instant(*to.core, ends, [](const std::vector<Dispatch>&) {});
      }
    } catch (const InvariantViolation& v) {
      violation = v.violation;
      ok = false;
    }
    to.core->set_observer(nullptr);
    to.checker->set_dump(nullptr);
    to.checker->set_run_raised(nullptr);
    return ok;
  }

  Hash128 key(const State& st) {
    scratch_.clear();
    st.core->encode(scratch_);
    st.replay->encode(scratch_);
    return hash_words(scratch_);
  }

  // The steps of path_ (choice indices from the root), as text.
  std::vector<std::string> path_steps() {
    std::vector<std::string> steps;
    State st = root();
    for (std::uint16_t k : path_) {
      const std::vector<Choice> cs = choices(st);
      const Choice& c = cs[k];
      steps.push_back(step_name(st, c));
      std::vector<int> delta;
      std::optional<Violation> v;
      apply(st, c, st, delta, v);  // in place: a copy per step is what a large scenario cannot afford
    }
    return steps;
  }

  // Follows the recorded best choices for group g from the root.
  std::vector<std::string> witness(std::size_t g, bool max) {
    std::vector<std::string> steps;
    State st = root();
    std::uint32_t node = visited_.find(key(st));
    while (node != VisitedSet::kEmpty) {
      const Best& b = best_[node * groups_ + g];
      const std::uint16_t k = max ? b.next_max : b.next_min;
      if (k == kNoChoice) break;
      const std::vector<Choice> cs = choices(st);
      steps.push_back(step_name(st, cs[k]));
      std::vector<int> delta;
      std::optional<Violation> v;
      apply(st, cs[k], st, delta, v);  // in place, as in path_steps()
      node = visited_.find(key(st));
    }
    return steps;
  }

  void record_violation(const Violation& v) {
    if (violations_.size() >= 10) return;
    violations_.push_back(
        {{"rule", v.rule}, {"detail", v.detail}, {"witness", path_steps()}, {"dump", v.dump}});
  }

  void terminal(const State& st) {
    State end = take();
    copy_into(st, end);
    std::vector<int> delta(groups_, 0);
    Watch watch(*end.core, f_, end.verdicts, delta);
    end.core->set_observer(&watch);
    end.replay->unwind_rest();
    end.core->set_observer(nullptr);
    std::map<std::string, std::string> states;
    for (const auto& [name, index] : f_.name_index)
      if (end.verdicts[index] != '-')
        states[std::string(name)] = end.verdicts[index] == 'R' ? "REJECTED" : "NOT_SUBMITTED";
    for (std::size_t i = 0; i < end.core->task_count(); ++i) {
      const TaskId id(static_cast<std::uint32_t>(i));
      states[std::string(end.core->name(id))] = std::string(to_string(end.core->state(id)));
    }
    ojson outcome = ojson::object();
    for (const auto& [k, v] : states) outcome[k] = v;
    outcomes_.insert(outcome.dump());
    const std::vector<Stuck> stuck = end.core->stuck();
    try {
      end.checker->finish(stuck);
    } catch (const InvariantViolation& v) {
      record_violation(v.violation);
    }
    for (const Stuck& s : stuck)
      if (!stuck_.count(s.task))
        stuck_[s.task] = {
            {"task", s.task}, {"state", to_string(s.state)}, {"reason", s.reason}, {"witness", path_steps()}};
    give(end);
  }

  // A copy of `from` in `to`: into to's core by assignment when `to` is a spare (its tables' buffers
  // are reused: no allocation per table), else a new one.
  void copy_into(const State& from, State& to) const {
    if (to.core)
      *to.core = *from.core;
    else
      to.core = std::make_unique<Scheduler>(*from.core);
    to.replay = std::make_unique<Replay>(*from.replay);
    to.replay->rebind(*to.core);
    to.checker = std::make_unique<InvariantChecker>(*from.checker);
    to.verdicts = from.verdicts;
  }
  // A state to copy into: a spare one if any.
  State take() {
    if (spare_.empty()) return State{};
    State st = std::move(spare_.back());
    spare_.pop_back();
    return st;
  }
  // A state no longer needed: kept as a spare (a few at most) for the next copy.
  void give(State& st) {
    if (st.core && spare_.size() < kSpares) spare_.push_back(std::move(st));
  }

  std::size_t bytes_held() const {
    return visited_.bytes() + best_.bytes();
  }

  std::uint32_t new_node() {
    const auto id = static_cast<std::uint32_t>(nodes_++);
    best_.grow_to(nodes_ * groups_);
    return id;
  }

  // A state on the depth-first path: its choices, the one being explored (whose child, if new, is
  // the frame above) and that transition's overtakes, to fold in once the child is done.
  // Its choices are choices_[first, end), and the overtakes of choice k's transition (per group) are
  // deltas_[depth * groups_, + groups_): two stacks shared by every frame, so a frame allocates nothing.
  struct Frame {
    State st;  // empty once its last choice took it (the last choice needs no copy)
    std::uint32_t id = 0;
    std::size_t first = 0, end = 0;
    std::size_t k = 0;           // the choice being explored: choices_[first + k]
    std::size_t tasks_here = 0;  // tasks submitted at this state (for the groups no child speaks of)
  };

  // A new state (its hash `h` not yet visited): numbers it and pushes its frame, choices computed.
  void open(State st, const Hash128& h, std::vector<Frame>& stack) {
    const std::uint32_t id = static_cast<std::uint32_t>(nodes_);
    visited_.find_or_insert(h, id);
    new_node();
    // Time is not modelled, so "can stall" means: some reachable state has the stall condition of
    // the policy open for this group (an episode that would be reported if it lasted long enough).
    if (const TaskId stalling = st.core->stalling_group(); stalling.valid())
      can_stall_.insert(std::string(st.core->name(stalling)));
    if (nodes_ > o_.max_states) stopped_ = true;
    if (o_.on_states && nodes_ % 4096 == 0) o_.on_states(nodes_);
    // The states held on the depth-first path, not the visited set, are what grow with a large
    // scenario (each holds a copy of the core): the heap is checked as check_memory() says.
    if (!stopped_ && nodes_ >= next_memory_check_) check_memory();
    Frame f;
    f.id = id;
    f.first = f.end = choices_.size();
    if (!stopped_) choices(st, choices_), f.end = choices_.size();
    if (f.first == f.end && !stopped_) terminal(st);
    f.tasks_here = st.core->task_count();
    f.st = std::move(st);
    stack.push_back(std::move(f));
    deltas_.resize(stack.size() * groups_);
  }

  // The best overtake counts of `f` (at `depth` on the path) through its choice f.k, whose child is
  // node c.
  void fold(const Frame& f, std::size_t depth, std::uint32_t c) {
    const int* d = deltas_.data() + depth * groups_;
    for (std::size_t g = 0; g < groups_; ++g) {
      const Best& below = best_[c * groups_ + g];
      if (below.max < 0) continue;  // the group never exists below this child
      Best& here = best_[f.id * groups_ + g];
      if (d[g] + below.max > here.max) here.max = d[g] + below.max, here.next_max = static_cast<std::uint16_t>(f.k);
      if (d[g] + below.min < here.min) here.min = d[g] + below.min, here.next_min = static_cast<std::uint16_t>(f.k);
    }
  }

  // Where no child said anything of a group (a terminal state, or a group that never exists below):
  // a group submitted by now contributes 0 more overtakes, one never submitted is marked -1.
  void close(const Frame& f) {
    for (std::size_t g = 0; g < groups_; ++g) {
      const std::size_t at = f.id * groups_ + g;
      Best& b = best_[at];
      if (b.max != std::numeric_limits<int>::min()) continue;
      const TaskId gid = f_.group_task[g];
      const bool present = gid.valid() && gid.index() < f.tasks_here;
      b.max = b.min = present ? 0 : -1;
    }
  }

  // Depth-first from `first` (not yet visited), with an explicit stack of frames rather than one C
  // stack frame per step, so a path is as deep as the heap allows (max_memory bounds it). Every child
  // is finished before its parent goes on to its next choice: the order of the recursive search
  // (states numbered, transitions counted, witnesses and bounds the same). Returns the root's node.
  std::uint32_t search(State first) {
    std::vector<Frame> stack;
    const Hash128 h = key(first);
    open(std::move(first), h, stack);
    std::vector<int> delta;
    for (;;) {
      Frame& f = stack.back();
      const std::size_t depth = stack.size() - 1;
      // Past a bound nothing more is explored: the siblings left on the path would each cost a copy
      // of the state (the very thing a memory bound is there to stop).
      if (f.first + f.k < f.end && !stopped_) {
        const std::size_t k = f.k;
        std::optional<Violation> violation;
        path_.push_back(static_cast<std::uint16_t>(k));
        ++transitions_;
        const bool last = f.first + k + 1 == f.end;
        // st is not needed after its last choice; the others are applied to a copy (into a spare).
        State next = last ? std::move(f.st) : take();
        const Choice c = choices_[f.first + k];
        if (apply(last ? next : f.st, c, next, delta, violation)) {
          const Hash128 ch = key(next);
          const std::uint32_t child = visited_.find(ch);
          std::copy(delta.begin(), delta.end(), deltas_.begin() + static_cast<std::ptrdiff_t>(depth * groups_));
          if (child == VisitedSet::kEmpty) {
            open(std::move(next), ch, stack);  // f is not to be used past this (the stack may move)
            continue;
          }
          fold(f, depth, child);
        } else {
          record_violation(*violation);
        }
        give(next);
        path_.pop_back();
        ++f.k;
        continue;
      }
      close(f);
      const std::uint32_t id = f.id;
      choices_.resize(f.first);
      give(f.st);
      stack.pop_back();
      deltas_.resize(stack.size() * groups_);
      if (stack.empty()) return id;
      Frame& parent = stack.back();
      fold(parent, depth - 1, id);
      path_.pop_back();
      ++parent.k;
    }
  }

  // The heap against max_memory, at the first node and then as often as the growth seen so far needs
  // for the bound to hold: every kMemoryCheckEvery nodes while states are small, every node once one
  // state's copy (a large scenario's core) could take what is left. A node is counted as at least one
  // state's copy (state_bytes_, the initial state's size), whatever the growth seen: the first nodes of a
  // path often copy nothing (one choice each), and the ones after them copy a state each. The bound may
  // be passed by what one node adds, never by kMemoryCheckEvery of them.
  void check_memory() {
    const std::size_t heap = heap_in_use();
    if (heap > o_.max_memory) {
      stopped_ = out_of_memory_ = true, memory_stop_at_ = nodes_;
      return;
    }
    const std::size_t nodes = std::max<std::size_t>(1, nodes_ - last_check_nodes_);
    const std::size_t per_node =
        std::max((heap > last_check_heap_ ? heap - last_check_heap_ : 0) / nodes, state_bytes_) + 1;
    const std::size_t room = o_.max_memory - heap;
    next_memory_check_ = nodes_ + std::clamp<std::size_t>(room / (2 * per_node), 1, kMemoryCheckEvery);
    last_check_nodes_ = nodes_, last_check_heap_ = heap;
  }

  const Scenario& s_;
  const ExploreOptions& o_;
  Setup& setup_;
  std::size_t next_memory_check_ = 0, last_check_nodes_ = 0, last_check_heap_ = 0;
  std::size_t state_bytes_ = 0;  // the initial state's heap (check_memory())
  Registry registry_;
  Facts f_;
  std::size_t groups_ = 0;
  VisitedSet visited_;
  std::size_t nodes_ = 0;
  // Per node and group (node * groups_ + g): the best overtake counts below it and the choice index
  // achieving them (kNoChoice at a terminal state).
  BestTable best_;
  std::vector<std::uint16_t> path_;  // choice indices from the root to the state being explored
  std::vector<Choice> choices_;      // the choices of every state on the path (Frame)
  std::vector<int> deltas_;          // per state on the path, its current transition's overtakes (Frame)
  mutable std::vector<WorkerId> waited_;  // local_member()'s, reused
  std::vector<State> spare_;         // states no longer needed, copied into (take(), give())
  std::vector<std::uint32_t> scratch_;
  std::size_t transitions_ = 0;
  bool stopped_ = false;
  bool out_of_memory_ = false;  // stopped by max_memory (else by max_states)
  std::size_t memory_stop_at_ = 0;
  std::set<std::string> outcomes_;
  std::set<std::string> can_stall_;  // groups whose stall condition holds in some visited state
  ojson violations_ = ojson::array();
  std::map<std::string, ojson> stuck_;
};

}  // namespace

std::size_t heap_in_use() {
#if defined(DIRSCHED_EXPLORE_SANITIZER)
  return __sanitizer_get_current_allocated_bytes();
#else
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
#endif
}

void check_setup_memory(const ExploreOptions& options, const std::string& stage) {
  const std::size_t heap = heap_in_use();
  if (heap > options.max_memory) throw SetupMemoryStop{stage, heap};
}

ojson explore_stopped_in_setup(const std::string& scenario, const ExploreOptions& options, const std::string& stage,
                               std::size_t heap) {
  ojson out;
  out["scenario"] = scenario;
  out["states"] = 0;
  out["transitions"] = 0;
  out["stopped_early"] = true;
  out["note"] = "stopped at max_memory=" + std::to_string(options.max_memory) + " bytes during the set-up (" +
                stage + "), before the first state: " +
                (heap ? "the heap in use was " + std::to_string(heap) + " bytes" : allocation_failed(options));
  out["por"] = options.por;
  out["terminal_outcomes"] = 0;
  out["violations"] = ojson::array();
  out["groups"] = ojson::object();
  return out;
}

ojson explore(const Scenario& scenario, const ExploreOptions& options) {
  Setup setup{"loading the scenario", 0, 0};
  try {
    check_setup_memory(options, setup.text());
    if (!scenario.generate && !scenario.trace_file) return Explorer(scenario, options, setup).run();
    // The explorer reads the trace as a whole (its facts look ahead): a generate block or a streamed
    // trace file is built first.
    setup.stage = "building the trace";
    Scenario whole = scenario;
    if (whole.generate) setup.total = OpGenerator(*whole.generate, whole, whole.file).op_count();
    if (whole.trace_file) setup.total = whole.trace_file->op_count();
    materialize_trace(whole, [&](std::size_t ops) {
      setup.done = ops;
      check_setup_memory(options, setup.text());
    });
    return Explorer(whole, options, setup).run();
  } catch (const SetupMemoryStop& stop) {
    return explore_stopped_in_setup(scenario.name, options, stop.stage, stop.heap);
  } catch (const std::bad_alloc&) {
    // Past DataLimit before the first state (Explorer::run() catches its own once the search began).
    return explore_stopped_in_setup(scenario.name, options, setup.text(), 0);
  }
}

DataLimit::DataLimit(std::size_t max_memory) {
#if !defined(DIRSCHED_EXPLORE_SANITIZER)
  // A limit on the data segment, not on the address space (RLIMIT_AS): the libraries' code and the
  // reservations malloc makes without writing to them would count there, and not for the machine.
  std::ifstream status("/proc/self/status");
  std::size_t vm_data_kb = 0;
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmData:", 0) == 0) vm_data_kb = std::strtoull(line.c_str() + 7, nullptr, 10);
  struct rlimit old {};
  if (vm_data_kb == 0 || getrlimit(RLIMIT_DATA, &old) != 0) return;
  const std::size_t held = vm_data_kb * 1024;
  if (max_memory > std::numeric_limits<std::size_t>::max() - held - kDataLimitMargin) return;
  const std::size_t limit = held + max_memory + kDataLimitMargin;
  if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur <= limit) {  // a lower limit already holds: kept
    limit_ = old.rlim_cur;
    return;
  }
  struct rlimit lim = old;  // the soft limit only (above ours the hard one is too: cur <= max)
  lim.rlim_cur = limit;
  if (setrlimit(RLIMIT_DATA, &lim) != 0) return;
  limit_ = limit, set_ = true, old_cur_ = old.rlim_cur, old_max_ = old.rlim_max;
#else
  // Under a sanitizer the shadow memory is mapped on demand inside terabyte reservations: RLIMIT_DATA
  // (and RLIMIT_AS) would make them fail. The heap checks alone bound the heap there.
  (void)max_memory;
#endif
}

void DataLimit::release() {
  if (set_) {
    struct rlimit old {};
    old.rlim_cur = old_cur_, old.rlim_max = old_max_;
    setrlimit(RLIMIT_DATA, &old);
  }
  set_ = false, limit_ = 0;
}

}  // namespace dirsched
