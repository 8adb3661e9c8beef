#include "dirsched/recorder.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

#include "dirsched/error.hpp"
#include "dirsched/scheduler.hpp"

namespace dirsched {
Recorder::Recorder(const Scheduler& core)
    : core_(core),
      registry_(core.registry()),
      nl_busy_(registry_.next_level_count(), 0.0),
      sub_busy_(registry_.sub_workers(), 0.0),
      nl_is_busy_(registry_.next_level_count(), false),
      active_(registry_.next_level_count()),
      inactive_(registry_.next_level_count()),
      singles_(registry_.next_level_count(), 0),
      log_(registry_.next_level_count()),
      log_base_(registry_.next_level_count(), 0),
      collecting_count_(registry_.next_level_count(), 0),
      collecting_(registry_.next_level_count()),
      is_dirty_(registry_.next_level_count(), 0),
      was_busy_(registry_.next_level_count(), 0),
      nl_waits_(registry_.next_level_count()) {}

Recorder::~Recorder() = default;

std::string Recorder::name_of(const Live& r) const {
  if (r.flags & kNamed) return core_.name(TaskId(r.name));
  const char* at = side_names_.data() + (r.name - side_base_);
  std::uint32_t size = 0;
  std::memcpy(&size, at, sizeof size);
  return std::string(at + sizeof size, size);
}

Recorder::Live& Recorder::record(std::size_t n) {
  // Retired records get no more events (they are terminal, and so is everything before them).
  if (n < first_) throw InternalError("recorder: an event for a retired task");
  std::uint32_t place = live_.get(n - first_);
  if (Place::queued(place)) live_.at(n - first_) = place = pool_place(view(place, n));
  return pool_[Place::pool(place)];
}

Recorder::Live Recorder::record(std::size_t n) const {
  if (n < first_) throw InternalError("recorder: a retired record read");
  return view(live_.get(n - first_), n);
}

Recorder::Live Recorder::view(std::uint32_t place, std::size_t n) const {
  if (!Place::queued(place)) return pool_[Place::pool(place)];
  Live r;
  r.submit = Place::submit(place);
  r.flags = kNamed | kInline;
  const TaskId task = task_of(n);
  r.name = task.index();
  // What the place does not say, the core does: the task is not terminal, so it is held.
  const Scheduler::QueuedShape shape = core_.queued_shape(task);
  r.run = shape.run;
  r.kind = shape.kind;
  r.where = shape.worker;
  if (Place::ready(place)) {
    r.state = TaskState::kReady;
    r.ready = r.submit;
  }
  return r;
}

TaskId Recorder::task_of(std::size_t n) const {
  // The span that holds n: the last one starting at or before it (almost always the newest).
  if (!spans_.empty() && n >= spans_.back().first) return TaskId(static_cast<std::uint32_t>(n - spans_.back().offset));
  auto it = std::upper_bound(spans_.begin(), spans_.end(), n, [](std::size_t x, const Span& s) { return x < s.first; });
  if (it == spans_.begin()) throw InternalError("recorder: a queued record before every span");
  return TaskId(static_cast<std::uint32_t>(n - std::prev(it)->offset));
}

std::size_t Recorder::record_of(TaskId task) const {
  // The span whose tasks begin at or before it (spans are in record order, so in task order too).
  if (!task.valid()) throw InternalError("recorder: an event for a task without a TaskId");
  const std::size_t i = task.index();
  auto begins = [](const Span& s) { return s.first - s.offset; };
  auto it = !spans_.empty() && i >= begins(spans_.back())
                ? spans_.end()
                : std::upper_bound(spans_.begin(), spans_.end(), i, [&](std::size_t x, const Span& s) { return x < begins(s); });
  if (it == spans_.begin()) {
    if (i < next_task_) throw InternalError("recorder: an event for a retired task");
    throw InternalError("recorder: an event for a task it never saw submitted");
  }
  const std::size_t n = i + std::prev(it)->offset;
  if (n < first_) throw InternalError("recorder: an event for a retired task");
  // A TaskId this Recorder never saw lands on another record (a rejected op's, or one of the next
  // span's) or past the last.
  if (n >= record_count() || (it != spans_.end() && n >= it->first))
    throw InternalError("recorder: an event for a task it never saw submitted");
  const std::uint32_t place = live_.get(n - first_);
  if (!Place::queued(place)) {
    const Live& r = pool_[Place::pool(place)];
    if (!(r.flags & kNamed) || r.name != i) throw InternalError("recorder: an event for a task it never saw submitted");
  }
  return n;
}

void Recorder::compact(std::size_t n) {
  const std::uint32_t place = live_.get(n - first_);
  if (Place::queued(place)) return;
  const Live& r = pool_[Place::pool(place)];
  const bool ready = r.state == TaskState::kReady;
  if (r.flags != (kNamed | kInline) || (r.state != TaskState::kPending && !ready) ||
      r.ready != (ready ? r.submit : InstantTable::kNone) || r.start != InstantTable::kNone ||
      r.end != InstantTable::kNone || r.code != Live{}.code ||
      (r.kind != TaskKind::kSingle && r.kind != TaskKind::kSub) || (r.kind == TaskKind::kSub && r.where != 0) ||
      task_of(n).index() != r.name)
    return;
  // view() reads the kind, worker and run back from the core: compact only what it reads back the same.
  const Scheduler::QueuedShape shape = core_.queued_shape(TaskId(r.name));
  if (r.run != shape.run || r.kind != shape.kind || r.where != shape.worker) return;
  const std::uint32_t queued = Place::of_queued(r.submit, ready);
  pool_.give(Place::pool(place));
  live_.at(n - first_) = queued;
}

Recorder::Extra& Recorder::extra(std::size_t n) {
  Live& r = record(n);
  r.flags |= kHasExtra;
  return extras_[n];
}

const Recorder::Extra* Recorder::extra_if(std::size_t n) const {
  if (!(record(n).flags & kHasExtra)) return nullptr;
  return &extras_.at(n);
}

std::uint32_t Recorder::intern_message(const std::string& message) {
  // A fail-fast run gives every later op the same message: keep it once.
  if (messages_.empty() || messages_.back() != message) messages_.push_back(message);
  return static_cast<std::uint32_t>(message_base_ + messages_.size() - 1);
}

Recorder::Live& Recorder::new_record(const Event& e) {
  const std::size_t n = record_count();
  // TaskIds are issued in submit order: a record's is its number less its span's offset.
  if (e.task.valid() && e.task.index() < next_task_) throw InternalError("recorder: a second submit of one task");
  const std::uint32_t place = pool_place(Live{});
  live_.push_back(place);
  Live& r = pool_[Place::pool(place)];
  r.kind = e.task_kind;
  r.run = e.run.valid() ? e.run.index() : 0;
  if (e.task.valid()) {
    r.flags = kNamed;
    r.name = e.task.index();
    next_task_ = std::size_t{e.task.index()} + 1;
    if (spans_.empty() || n - spans_.back().offset != e.task.index()) spans_.push_back({n, n - e.task.index()});
  } else {
    const std::size_t at = side_base_ + side_names_.size();
    if (at > std::numeric_limits<std::uint32_t>::max() || e.name.size() > std::numeric_limits<std::uint32_t>::max())
      throw InternalError("recorder: more than 4 GiB of names of rejected or not-submitted ops");
    r.name = static_cast<std::uint32_t>(at);
    const auto size = static_cast<std::uint32_t>(e.name.size());
    side_names_.append(reinterpret_cast<const char*>(&size), sizeof size);
    side_names_.append(e.name);
  }
  return r;
}

void Recorder::build(std::size_t n, TaskRecord& out) const {
  const Live& r = record(n);
  out.name.assign(name_of(r));
  out.kind = r.kind;
  out.state = r.state;
  out.submit = time(r.submit);
  out.ready = time(r.ready);
  out.start = time(r.start);
  out.end = r.flags & kEnded ? time(r.end) : -1;
  out.code = r.state == TaskState::kRejected ? std::optional<ErrorCode>(r.code) : std::nullopt;
  if (r.flags & kHasMessage)
    out.message = messages_[r.where - message_base_];
  else
    out.message.clear();
  out.task = r.flags & kNamed ? TaskId(r.name) : TaskId();
  out.run = RunId(r.run);
  out.workers.clear();
  out.members.clear();
  out.cause.clear();
  out.producers.clear();
  out.idle_target_s = 0;
  out.overtaken_by.clear();
  out.overtakes = 0;
  if (r.flags & kInline) {
    const bool sub = is_sub(r.kind);
    if (!sub) out.workers.push_back(registry_.worker_at(r.where).id);
    MemberRun m;
    if (r.start != InstantTable::kNone) {
      m.target.sub = sub;
      if (sub)
        m.target.sub_index = r.where;
      else
        m.target.worker = registry_.worker_at(r.where).id;
      m.start = time(r.start);
    }
    if (r.flags & kMemberEnded) m.end = time(r.end);
    if (r.flags & kMemberFailed) m.outcome = Outcome::kFailure;
    out.members.push_back(m);
  }
  if (const Extra* x = extra_if(n)) {
    if (!(r.flags & kInline)) {
      out.workers = x->workers;
      out.members = x->members;
    }
    if (const Waiting* w = waiting_if(n)) {
      out.idle_target_s = idle_target_of(*w);
      out.overtakes = overtakes_of(*w);
      copy_names(*w, out.overtaken_by);
    } else {
      out.idle_target_s = x->idle_target_s;
      out.overtaken_by = x->overtaken_by;
      out.overtakes = x->overtakes;
    }
    if (x->cause.valid()) out.cause.assign(core_.name(x->cause));
    for (TaskId t : x->producers) out.producers.emplace_back(core_.name(t));
  }
}

Recorder::Extra& Recorder::spill(std::size_t n, Live& r) {
  // A record whose single member does not fit the inline form moves it to its side record.
  TaskRecord full;
  build(n, full);
  Extra& x = extra(n);
  x.workers = std::move(full.workers);
  x.members = std::move(full.members);
  r.flags &= static_cast<std::uint8_t>(~(kInline | kMemberEnded | kMemberFailed));
  return x;
}

std::vector<TaskRecord> Recorder::tasks() const {
  std::vector<TaskRecord> out(live_.size());
  for (std::size_t i = 0; i < live_.size(); ++i) build(first_ + i, out[i]);
  return out;
}

void Recorder::for_each_task(const std::function<void(const TaskRecord&)>& f) const {
  TaskRecord r;
  for (std::size_t i = 0; i < live_.size(); ++i) {
    build(first_ + i, r);
    f(r);
  }
}

std::optional<TaskRecord> Recorder::find(std::string_view name) const {
  if (by_name_.size() != live_.size() || by_name_first_ != first_) {
    by_name_first_ = first_;
    // (Re)build the name index: positions sorted by name, the first record of a name first.
    by_name_.resize(live_.size());
    for (std::size_t i = 0; i < live_.size(); ++i) by_name_[i] = i;
    std::stable_sort(by_name_.begin(), by_name_.end(),
                     [&](std::size_t a, std::size_t b) { return name_of(record(first_ + a)) < name_of(record(first_ + b)); });
  }
  auto it = std::lower_bound(by_name_.begin(), by_name_.end(), name,
                             [&](std::size_t i, std::string_view n) { return name_of(record(first_ + i)) < n; });
  if (it == by_name_.end() || name_of(record(first_ + *it)) != name) return std::nullopt;
  TaskRecord out;
  build(first_ + *it, out);
  return out;
}

void Recorder::drop_front() {
  // The oldest record leaves: its span (once the next one begins), its name (if in the side arena),
  // its messages and side record go with it.
  const Live r = std::as_const(*this).record(first_);
  if (!(r.flags & kNamed)) {
    std::uint32_t size = 0;
    std::memcpy(&size, side_names_.data() + (r.name - side_base_), sizeof size);
    side_dead_ = r.name - side_base_ + sizeof size + size;
    if (side_dead_ > 4096 && side_dead_ * 2 > side_names_.size()) {
      side_names_.erase(0, side_dead_);
      side_base_ += side_dead_;
      side_dead_ = 0;
    }
  }
  if (r.flags & kHasMessage)
    while (message_base_ < r.where) {
      messages_.pop_front();
      ++message_base_;
    }
  if (r.flags & kHasExtra) extras_.erase(first_);
  if (!Place::queued(live_.front())) pool_.give(Place::pool(live_.front()));
  live_.pop_front();
  ++first_;
  while (spans_.size() > 1 && spans_[1].first <= first_) spans_.pop_front();
  // No record names an instant before the new front's submit (a not-submitted op has none).
  if (live_.empty()) return instants_.record_left(std::nullopt);
  const std::uint32_t front = live_.front();
  instants_.record_left(Place::queued(front) ? Place::submit(front) : pool_[Place::pool(front)].submit);
}

void Recorder::retire_one() {
  const std::size_t n = retired_;
  // A group that never launched (retired by finish()) stops waiting: its measures as they stand.
  if (std::as_const(*this).record(n).kind == TaskKind::kGroup && waiting_.count(n)) stop_waiting(n, false, now_);
  const Live r = std::as_const(*this).record(n);  // read, not changed: a place stays a place
  ++retired_states_[r.state];
  ++retired_run_states_[r.run][r.state];
  // A READY task that never started waited until the end of the run, unless it was cancelled: then until
  // its cancellation (run_cancellation), a wait known now.
  const bool cancelled = r.state == TaskState::kCancelled;
  const bool unstarted = r.ready != InstantTable::kNone && r.start == InstantTable::kNone;
  if (unstarted && r.kind == TaskKind::kSingle)
    (cancelled ? cancelled_single_waits_ : unstarted_single_).push_back(cancelled ? time(r.end) - time(r.ready) : time(r.ready));
  if (unstarted && r.kind == TaskKind::kGroup)
    (cancelled ? cancelled_group_waits_ : unstarted_group_).push_back(cancelled ? time(r.end) - time(r.ready) : time(r.ready));
  if (on_retire_) {
    build(n, scratch_);
    on_retire_(scratch_);
  }
  ++retired_;
  if (r.kind == TaskKind::kGroup) {
    ++group_count_;
    if (r.start != InstantTable::kNone) {
      launched_wait_s_ += time(r.start) - time(r.ready);
    } else if (r.ready != InstantTable::kNone && cancelled) {
      launched_wait_s_ += time(r.end) - time(r.ready);  // a known wait, like a launched group's
    } else if (r.ready != InstantTable::kNone) {
      ++unlaunched_groups_;
      unlaunched_ready_s_ += time(r.ready);
    }
    if (const Extra* x = extra_if(n)) {
      idle_target_s_ += x->idle_target_s;
      overtakes_max_ = std::max(overtakes_max_, x->overtakes);
    }
  }
  if (keep_) return;
  if (r.kind == TaskKind::kGroup) {
    // Past kSummaryListCap groups only the longest READY waits are kept (a min-heap on the wait).
    retired_groups_.emplace_back();
    build(n, retired_groups_.back());
    if (retired_groups_.size() > kSummaryListCap) {
      auto less = [this](const TaskRecord& a, const TaskRecord& b) { return group_less(a, b); };
      if (!groups_capped_) {
        groups_capped_ = true;
        std::make_heap(retired_groups_.begin(), retired_groups_.end(), less);
      } else {
        std::push_heap(retired_groups_.begin(), retired_groups_.end(), less);
      }
      std::pop_heap(retired_groups_.begin(), retired_groups_.end(), less);  // drops the shortest wait
      retired_groups_.pop_back();
    }
  }
  drop_front();
}

void Recorder::retire_terminal() {
  while (retired_ < record_count() && is_terminal(std::as_const(*this).record(retired_).state)) retire_one();
}

void Recorder::finish() {
  while (retired_ < record_count()) retire_one();
}

std::map<TaskState, std::size_t> Recorder::state_counts() const {
  std::map<TaskState, std::size_t> out = retired_states_;
  for (std::size_t n = retired_; n < record_count(); ++n) ++out[record(n).state];
  return out;
}

std::map<std::uint32_t, std::map<TaskState, std::size_t>> Recorder::run_state_counts() const {
  auto out = retired_run_states_;
  for (std::size_t n = retired_; n < record_count(); ++n) ++out[record(n).run][record(n).state];
  return out;
}
double Recorder::group_wait(const TaskRecord& g) const {
  return (g.start >= 0 ? g.start : g.state == TaskState::kCancelled ? g.end : last_transition_) - g.ready;
}

bool Recorder::group_less(const TaskRecord& a, const TaskRecord& b) const {
  // "a waited less": the heap's top is the group that waited least (a later record first among equals).
  const double wa = group_wait(a), wb = group_wait(b);
  if (wa != wb) return wa > wb;
  return a.task.index() < b.task.index();
}

std::vector<TaskRecord> Recorder::groups() const {
  std::vector<TaskRecord> out = retired_groups_;
  for (std::size_t i = 0; i < live_.size(); ++i)
    if (record(first_ + i).kind == TaskKind::kGroup) {
      out.emplace_back();
      build(first_ + i, out.back());
    }
  if (groups_capped_)
    std::sort(out.begin(), out.end(), [this](const TaskRecord& a, const TaskRecord& b) { return group_less(a, b); });
  return out;
}

Recorder::GroupTotals Recorder::group_totals(double makespan) const {
  GroupTotals t;
  t.count = group_count_;
  t.ready_wait_s = launched_wait_s_ + static_cast<double>(unlaunched_groups_) * makespan - unlaunched_ready_s_;
  t.idle_target_s = idle_target_s_;
  t.overtakes_max = overtakes_max_;
  for (std::size_t i = 0; i < live_.size(); ++i) {
    const std::size_t n = first_ + i;
    const Live r = record(n);
    if (n < retired_ || r.kind != TaskKind::kGroup) continue;
    ++t.count;
    if (r.ready != InstantTable::kNone)
      t.ready_wait_s += (r.start != InstantTable::kNone       ? time(r.start)
                         : r.state == TaskState::kCancelled ? time(r.end)
                                                            : makespan) -
                        time(r.ready);
    if (const Waiting* w = waiting_if(n)) {
      t.idle_target_s += idle_target_of(*w);
      t.overtakes_max = std::max(t.overtakes_max, overtakes_of(*w));
    } else if (const Extra* x = extra_if(n)) {
      t.idle_target_s += x->idle_target_s;
      t.overtakes_max = std::max(t.overtakes_max, x->overtakes);
    }
  }
  return t;
}

void Recorder::ready_waits(double makespan, WaitSketch& singles, WaitSketch& groups) const {
  // A started task's wait is the one its queue recorded at its first dispatch ("worker:ID" holds the
  // NEXT_LEVEL singles, "group" the groups); the rest waited until the end of the run. Room for the
  // kept values first: a million of them grew by doubling, twice the memory at the end of a run.
  std::size_t held = unstarted_single_.size() + cancelled_single_waits_.size() + (record_count() - retired_);
  for (const WaitSketch& values : nl_waits_) held += values.held();
  singles.reserve(held);
  for (const WaitSketch& values : nl_waits_) singles.add(values);
  groups.add(group_waits_);
  for (double ready : unstarted_single_) singles.add(makespan - ready);
  for (double ready : unstarted_group_) groups.add(makespan - ready);
  for (double wait : cancelled_single_waits_) singles.add(wait);
  for (double wait : cancelled_group_waits_) groups.add(wait);
  for (std::size_t n = retired_; n < record_count(); ++n) {
    const Live& t = record(n);
    if (t.ready == InstantTable::kNone || t.start != InstantTable::kNone) continue;
    const double until = t.state == TaskState::kCancelled ? time(t.end) : makespan;
    if (t.kind == TaskKind::kSingle) singles.add(until - time(t.ready));
    if (t.kind == TaskKind::kGroup) groups.add(until - time(t.ready));
  }
}

// ---------------------------------------------------------------------------------------------
// Waiting groups
//
// Overtakes and overtaken_by: see the header comment. Idle-target time: a group's idle_target_s is a
// sum of terms, one per stretch between two consecutive instants at which one of its targets changed
// between busy and idle, counted while at least one target was idle. That is the sum the recorder has
// always made (one term per transition of a target), term for term and in the same order, so the
// double is the same bit for bit: a closed form such as "READY to launch minus the time every target
// was busy" rounds differently, and the outputs print 12 decimals. Several transitions at one instant
// add zero-length terms, which change nothing, so the work is done once per instant, in
// settle_instant(), when time moves on:
// - every active group (some target idle) on a worker that changed in the instant adds its term up to
//   the instant: a term its exact sum must add anyway;
// - a worker that ends the instant idle having begun it busy makes its inactive groups active; one
//   that ends it busy having begun it idle makes those of its active groups with no idle target left
//   inactive. A worker idle only inside an instant (a member ends and the next single starts at the
//   same time: the usual case on a loaded worker) touches no group.
// A worker runs one member at a time (scheduler.hpp), so "some target idle" is read from nl_is_busy_
// instead of being counted per group.

namespace {

// Removes entry `at` of a worker's list in O(1): the last entry takes its place and is told so.
template <class List>
void unlist(List& list, std::uint32_t at) {
  list[at] = list.back();
  list.pop_back();
  if (at < list.size()) list[at].group->slot[list[at].target] = at;
}

}  // namespace

const Recorder::Waiting* Recorder::waiting_if(std::size_t n) const {
  const auto it = waiting_.find(n);
  return it == waiting_.end() ? nullptr : &it->second;
}

void Recorder::worker_changed(std::uint32_t index, bool busy, double t) {
  advance(t);
  if (!is_dirty_[index]) {
    is_dirty_[index] = 1;
    was_busy_[index] = nl_is_busy_[index];
    dirty_.push_back(index);
  }
  nl_is_busy_[index] = busy;
}

void Recorder::advance(double t) {
  if (t == now_) return;
  settle_instant();
  now_ = t;
}

void Recorder::settle(Waiting& w) {
  // "!=", not "<": were time ever to go back, the term is added as the per-transition sum added it.
  if (w.since != now_) {
    w.extra->idle_target_s += now_ - w.since;
    w.since = now_;
  }
}

void Recorder::settle_instant() {
  if (dirty_.empty()) return;
  // First every term up to this instant, with the groups' activity as the last instant left it.
  for (std::uint32_t i : dirty_)
    for (const Slot& s : active_[i]) settle(*s.group);
  for (std::uint32_t i : dirty_) {
    is_dirty_[i] = 0;
    const bool busy = nl_is_busy_[i];
    if (static_cast<bool>(was_busy_[i]) == busy) continue;
    moving_.clear();
    if (!busy) {
      for (const Slot& s : inactive_[i]) moving_.push_back(s.group);
      for (Waiting* g : moving_) {
        g->since = now_;
        move_slots(*g, true);
      }
    } else {
      for (const Slot& s : active_[i]) {
        const std::vector<std::uint32_t>& targets = s.group->index;
        if (std::all_of(targets.begin(), targets.end(), [&](std::uint32_t t) { return nl_is_busy_[t]; }))
          moving_.push_back(s.group);
      }
      for (Waiting* g : moving_) move_slots(*g, false);
    }
  }
  dirty_.clear();
}

void Recorder::move_slots(Waiting& w, bool active) {
  for (std::uint32_t j = 0; j < w.index.size(); ++j) {
    unlist((w.active ? active_ : inactive_)[w.index[j]], w.slot[j]);
    std::vector<Slot>& to = (active ? active_ : inactive_)[w.index[j]];
    w.slot[j] = static_cast<std::uint32_t>(to.size());
    to.push_back({&w, j});
  }
  w.active = active;
}

void Recorder::start_waiting(std::size_t rec, Extra& x, double t) {
  advance(t);
  const auto [it, fresh] = waiting_.try_emplace(rec);
  if (!fresh) throw InternalError("recorder: a group READY twice");
  Waiting& w = it->second;
  w.record = rec;
  w.extra = &x;
  w.since = t;
  for (WorkerId id : x.workers) {
    const std::uint32_t i = *registry_.index_of(id);
    w.index.push_back(i);
    w.base.push_back(singles_[i]);
    // Placed as if it had waited since the start of this instant, as every other group is: the next
    // settle_instant() moves it by the changes of this instant, as it moves them. (Settling now
    // instead would walk the groups of every worker idle for this moment only: a member ends, this
    // group's producer completes, the next single starts, all at one time.) Its terms start now.
    if (is_dirty_[i] ? !was_busy_[i] : !nl_is_busy_[i]) w.active = true;
  }
  w.slot.resize(w.index.size());
  for (std::uint32_t j = 0; j < w.index.size(); ++j) {
    const std::uint32_t i = w.index[j];
    std::vector<Slot>& list = (w.active ? active_ : inactive_)[i];
    w.slot[j] = static_cast<std::uint32_t>(list.size());
    list.push_back({&w, j});
    ++collecting_count_[i];
    collecting_[i].emplace_back(w.base[j], rec);
  }
}

void Recorder::stop_waiting(std::size_t rec, bool launched, double t) {
  const auto it = waiting_.find(rec);
  if (it == waiting_.end()) throw InternalError("recorder: a group launched that was not waiting");
  if (launched) advance(t);
  Waiting& w = it->second;
  Extra& x = *w.extra;
  // Its sum as settle_instant() would leave it, without settling the instant for every group (a launch
  // usually follows a member end at the same time). Launched: plus the last term, up to the launch,
  // which is zero when a target changed at this instant (its term then ends now).
  x.idle_target_s = idle_target_of(w);
  if (launched && w.active &&
      std::none_of(w.index.begin(), w.index.end(), [&](std::uint32_t i) { return is_dirty_[i] != 0; }))
    x.idle_target_s += t - w.since;
  x.overtakes = overtakes_of(w);
  if (w.collecting) copy_names(w, x.overtaken_by);
  for (std::uint32_t j = 0; j < w.index.size(); ++j) {
    unlist((w.active ? active_ : inactive_)[w.index[j]], w.slot[j]);  // as of the last settled instant
    if (w.collecting) --collecting_count_[w.index[j]];  // its collecting_ entries go lazily
  }
  waiting_.erase(it);
}

void Recorder::single_dispatched(std::uint32_t index, std::string_view name) {
  ++seq_;
  ++singles_[index];
  if (collecting_count_[index] == 0) {
    // No group waiting on it wants names: nothing to log (log_base_ + log size == singles_ always).
    log_[index].clear();
    collecting_[index].clear();
    log_base_[index] = singles_[index];
    return;
  }
  log_[index].push_back({seq_, std::string(name)});
  if (log_[index].size() >= 2 * kSummaryListCap) sweep(index);
}

void Recorder::sweep(std::uint32_t index) {
  // The groups on this worker that have their fill copy their names and stop collecting. Every one
  // left has had fewer than kSummaryListCap singles on this worker since its READY, so the log is cut
  // below kSummaryListCap and the next sweep is at least kSummaryListCap dispatches away: by then each
  // group looked at now has its fill, so a group is looked at by at most two sweeps per target.
  std::deque<std::pair<std::uint64_t, std::size_t>> keep;
  for (const auto& [base, rec] : collecting_[index]) {
    const auto it = waiting_.find(rec);
    if (it == waiting_.end() || !it->second.collecting) continue;  // gone, or stopped collecting
    Waiting& w = it->second;
    if (overtakes_of(w) >= kSummaryListCap) {
      copy_names(w, w.extra->overtaken_by);
      w.collecting = false;
      for (std::uint32_t i : w.index) --collecting_count_[i];
      continue;
    }
    keep.emplace_back(base, rec);
  }
  collecting_[index] = std::move(keep);
  // Entries are in READY order, so by base: the first holds the oldest name still wanted.
  const std::uint64_t from = collecting_[index].empty() ? singles_[index] : collecting_[index].front().first;
  while (log_base_[index] < from) {
    log_[index].pop_front();
    ++log_base_[index];
  }
}

void Recorder::copy_names(const Waiting& w, std::vector<std::string>& out) const {
  if (!w.collecting) {
    out = w.extra->overtaken_by;
    return;
  }
  // The first kSummaryListCap singles dispatched on any of its targets since READY, in dispatch
  // order: a merge of the targets' logs by sequence number (a collecting group keeps them logged).
  out.clear();
  const std::size_t n = std::min(overtakes_of(w), kSummaryListCap);
  out.reserve(n);
  // Per target: the next entry's place in its log and its sequence number (none left: the largest).
  constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();
  std::vector<std::uint64_t> at = w.base, seq(at.size());
  auto look = [&](std::size_t j) {
    const std::uint32_t i = w.index[j];
    seq[j] = at[j] == singles_[i] ? kNone : log_[i][at[j] - log_base_[i]].seq;
  };
  for (std::size_t j = 0; j < at.size(); ++j) {
    if (at[j] < log_base_[w.index[j]]) throw InternalError("recorder: a name log cut before a group read it");
    look(j);
  }
  while (out.size() < n) {
    const std::size_t j = static_cast<std::size_t>(std::min_element(seq.begin(), seq.end()) - seq.begin());
    const std::uint32_t i = w.index[j];
    out.push_back(log_[i][at[j] - log_base_[i]].name);
    ++at[j];
    look(j);
  }
}

std::size_t Recorder::overtakes_of(const Waiting& w) const {
  std::uint64_t n = 0;
  for (std::size_t j = 0; j < w.index.size(); ++j) n += singles_[w.index[j]] - w.base[j];
  return static_cast<std::size_t>(n);
}

double Recorder::idle_target_of(const Waiting& w) const {
  // As settle_instant() will leave it: with the term up to this instant if one of its targets changed.
  const double sum = w.extra->idle_target_s;
  if (w.active && w.since != now_)
    for (std::uint32_t i : w.index)
      if (is_dirty_[i]) return sum + (now_ - w.since);
  return sum;
}

void Recorder::on_event(const Event& e) {
  ++events_;
  if (is_run_event(e.kind)) return;  // no task: the outputs read runs from the core
  // A submit, a reject or a not_submitted makes a record; every other event finds its task's.
  const bool first_sight =
      e.kind == EventKind::kSubmit || e.kind == EventKind::kReject || e.kind == EventKind::kNotSubmitted;
  std::size_t rec;
  if (first_sight) {
    rec = record_count();
    new_record(e);
  } else {
    rec = record_of(e.task);
  }
  if (e.kind == EventKind::kReady && rec >= first_) {
    // A queued task READY at its submit stays only queued: its place says so.
    const std::uint32_t place = live_.get(rec - first_);
    if (Place::queued(place) && !Place::ready(place) && Place::submit(place) == instant(e.t)) {
      live_.at(rec - first_) = Place::of_queued(Place::submit(place), true);
      return;
    }
  }
  Live& r = record(rec);
  switch (e.kind) {
    case EventKind::kSubmit: {
      r.submit = instant(e.t);
      r.state = TaskState::kPending;
      const std::size_t targets = e.workers ? e.workers->size() : 0;
      const bool sub = is_sub(r.kind);
      if (e.member_count == 1 && (r.kind == TaskKind::kSingle || r.kind == TaskKind::kSub) &&
          targets == (sub ? 0u : 1u)) {
        r.flags |= kInline;
        if (!sub) r.where = *registry_.index_of((*e.workers)[0]);
      } else {
        Extra& x = extra(rec);
        if (e.workers) x.workers = *e.workers;
        x.members.resize(e.member_count);
      }
      break;
    }
    case EventKind::kReject:
      r.state = TaskState::kRejected;
      r.submit = instant(e.t);
      r.code = e.rejection->code;
      r.where = intern_message(e.rejection->message);
      r.flags |= kHasMessage;
      break;
    case EventKind::kNotSubmitted:
      r.state = TaskState::kNotSubmitted;
      if (e.callback_raised) {
        r.where = intern_message("callback_raised");
        r.flags |= kHasMessage;
      } else if (e.rejection) {
        r.where = intern_message(e.rejection->message);
        r.flags |= kHasMessage;
      }
      break;
    case EventKind::kPending:
      if (keep_) extra(rec).producers = *e.producers;
      break;
    case EventKind::kReady: {
      r.state = TaskState::kReady;
      r.ready = instant(e.t);
      if (r.kind == TaskKind::kGroup) start_waiting(rec, extra(rec), e.t);
      break;
    }
    case EventKind::kGroupLaunched:
      stop_waiting(rec, true, e.t);
      break;
    case EventKind::kDispatch:
    case EventKind::kActivate: {
      // staging (#1583): a staging starts nothing; its member starts at its activation, recorded as a
      // dispatch is (its start, its queue wait, its worker busy from then).
      if (e.prepare_only) break;
      const std::uint32_t index = e.target.sub ? 0 : *registry_.index_of(e.target.worker);
      if (r.state != TaskState::kRunning) {
        r.state = TaskState::kRunning;
        r.start = instant(e.t);
        // The queue it waited in: "sub", "group" or its worker's FIFO ("worker:ID").
        add_wait(e.target.sub                 ? sub_waits_
                 : r.kind == TaskKind::kGroup ? group_waits_
                                              : nl_waits_[index],
                 e.t - time(r.ready));
      }
      // The inline form holds one member dispatched once, on the worker it was submitted to.
      if ((r.flags & kInline) && (e.member != 0 || e.target.sub != is_sub(r.kind) ||
                                  (!e.target.sub && index != r.where) || time(r.start) != e.t))
        spill(rec, r);
      if (r.flags & kInline) {
        if (e.target.sub) r.where = e.target.sub_index;
      } else {
        MemberRun& m = extra(rec).members.at(e.member);
        m.target = e.target;
        m.start = e.t;
      }
      if (!e.target.sub) {
        if (r.kind == TaskKind::kSingle) single_dispatched(index, e.name);
        worker_changed(index, true, e.t);
      }
      break;
    }
    case EventKind::kMemberEnd: {
      if ((r.flags & kInline) && (e.member != 0 || (r.flags & kMemberEnded))) spill(rec, r);
      double start;
      if (r.flags & kInline) {
        r.flags |= kMemberEnded;
        if (e.outcome == Outcome::kFailure) r.flags |= kMemberFailed;
        r.end = instant(e.t);
        start = time(r.start);
      } else {
        MemberRun& m = extra(rec).members.at(e.member);
        m.end = e.t;
        m.outcome = e.outcome;
        start = m.start;
      }
      if (e.target.sub) {
        sub_busy_[e.target.sub_index] += e.t - start;
      } else {
        const std::uint32_t index = *registry_.index_of(e.target.worker);
        nl_busy_[index] += e.t - start;
        worker_changed(index, false, e.t);
      }
      break;
    }
    case EventKind::kComplete:
    case EventKind::kFail:
    case EventKind::kPoison:
      // A single's member end is kept in `end`: it moves out if the task ends at another instant.
      if ((r.flags & kInline) && (r.flags & kMemberEnded) && time(r.end) != e.t) spill(rec, r);
      r.state = e.kind == EventKind::kComplete ? TaskState::kCompleted
                : e.kind == EventKind::kFail   ? TaskState::kFailed
                                               : TaskState::kPoisoned;
      r.end = instant(e.t);
      r.flags |= kEnded;
      if (e.kind == EventKind::kPoison && keep_) extra(rec).cause = e.cause;
      last_transition_ = std::max(last_transition_, e.t);
      break;
    case EventKind::kCancel: {
      // Never started (run_cancellation): a READY group stops waiting for its targets here.
      if (waiting_.count(rec)) stop_waiting(rec, true, e.t);  // its last idle stretch ends at the cancel
      r.state = TaskState::kCancelled;
      r.end = instant(e.t);
      r.flags |= kEnded;
      last_transition_ = std::max(last_transition_, e.t);
      break;
    }
    case EventKind::kGroupStall:
    case EventKind::kReservationStall: {
      StallRecord st;
      st.task = std::string(e.name);
      st.kind = e.kind;
      st.t = e.t;
      st.waited_s = e.waited_s;
      if (e.workers) st.busy = *e.workers;
      if (e.idle_queued) st.idle_queued = *e.idle_queued;
      ++stall_counts_[e.kind];
      if (stalls_.size() < kSummaryListCap) stalls_.push_back(std::move(st));
      break;
    }
    case EventKind::kGroupBlocked:
    case EventKind::kRunRaise:
    case EventKind::kRunEnd:
      break;
  }
  // A task submitted, waiting or made READY with nothing else recorded is only queued: its place alone.
  if (e.kind == EventKind::kSubmit || e.kind == EventKind::kPending || e.kind == EventKind::kReady) compact(rec);
  switch (e.kind) {
    case EventKind::kComplete:
    case EventKind::kFail:
    case EventKind::kPoison:
    case EventKind::kCancel:
    case EventKind::kReject:
    case EventKind::kNotSubmitted:
      retire_terminal();
      break;
    default:
      break;
  }
}

void Recorder::add_wait(WaitSketch& list, double v) {
  list.add(v);
  if (list.sketched()) return;
  if (++exact_waits_ <= kExactWaits) return;
  // Past the budget every list becomes a histogram (the same moment on every run of one scenario).
  for (WaitSketch& w : nl_waits_) w.sketch();
  group_waits_.sketch();
  sub_waits_.sketch();
}

std::map<std::string, WaitStats> Recorder::queue_waits() const {
  std::map<std::string, const WaitSketch*> waits;
  for (std::uint32_t i = 0; i < nl_waits_.size(); ++i)
    if (!nl_waits_[i].empty())
      waits["worker:" + std::to_string(registry_.worker_at(i).id.value())] = &nl_waits_[i];
  if (!group_waits_.empty()) waits["group"] = &group_waits_;
  if (!sub_waits_.empty()) waits["sub"] = &sub_waits_;
  std::map<std::string, WaitStats> out;
  for (const auto& [key, list] : waits) out.emplace(key, list->stats());
  return out;
}

// ---------------------------------------------------------------------------------------------
// WaitSketch

void WaitSketch::add(double v) {
  ++count_;
  sum_ += v;
  max_ = count_ == 1 ? v : std::max(max_, v);
  if (sketched_)
    bucket(v, 1);
  else
    values_.push_back(v);
}

void WaitSketch::add(const WaitSketch& o) {
  if (o.empty()) return;
  if (!o.sketched_) {
    for (double v : o.values_) add(v);
    return;
  }
  sketch();
  max_ = count_ == 0 ? o.max_ : std::max(max_, o.max_);
  count_ += o.count_;
  sum_ += o.sum_;
  zeros_ += o.zeros_;
  std::vector<Bucket> merged;
  merged.reserve(buckets_.size() + o.buckets_.size());
  auto a = buckets_.cbegin();
  auto b = o.buckets_.cbegin();
  while (a != buckets_.cend() || b != o.buckets_.cend()) {
    // The next bucket's count from both (each may hold it in several entries).
    const std::int32_t i = b == o.buckets_.cend() || (a != buckets_.cend() && a->index < b->index) ? a->index : b->index;
    std::uint64_t n = 0;
    for (; a != buckets_.cend() && a->index == i; ++a) n += a->n;
    for (; b != o.buckets_.cend() && b->index == i; ++b) n += b->n;
    for (; n > 0; n -= std::min<std::uint64_t>(n, Bucket::kFull))
      merged.push_back({i, static_cast<std::uint32_t>(std::min<std::uint64_t>(n, Bucket::kFull))});
  }
  buckets_.swap(merged);
}

void WaitSketch::bucket(double v, std::uint64_t n) {
  if (!(v > 0)) {
    zeros_ += n;
    return;
  }
  const auto i = static_cast<std::int32_t>(std::floor(std::log(v) / std::log(kWaitSketchRatio)));
  // Bucket i's last entry takes what it has room for (a worker's waits mostly grow with its queue: the
  // last bucket first), and the rest goes in new entries after it.
  std::size_t at = buckets_.size();
  if (buckets_.empty() || buckets_.back().index != i)
    at = static_cast<std::size_t>(std::upper_bound(buckets_.begin(), buckets_.end(), i,
                                                   [](std::int32_t x, const Bucket& b) { return x < b.index; }) -
                                  buckets_.begin());
  if (at > 0 && buckets_[at - 1].index == i) {
    Bucket& last = buckets_[at - 1];
    const std::uint64_t take = std::min<std::uint64_t>(n, Bucket::kFull - last.n);
    last.n += static_cast<std::uint32_t>(take);
    n -= take;
  }
  for (; n > 0; ++at) {
    const Bucket entry{i, static_cast<std::uint32_t>(std::min<std::uint64_t>(n, Bucket::kFull))};
    n -= entry.n;
    // Grown by half, not doubled: thousands of lists hold a few hundred buckets each.
    if (buckets_.size() == buckets_.capacity()) {
      std::vector<Bucket> bigger;
      bigger.reserve(buckets_.size() + buckets_.size() / 2 + 8);
      bigger.insert(bigger.end(), buckets_.begin(), buckets_.begin() + static_cast<std::ptrdiff_t>(at));
      bigger.push_back(entry);
      bigger.insert(bigger.end(), buckets_.begin() + static_cast<std::ptrdiff_t>(at), buckets_.end());
      buckets_.swap(bigger);
    } else {
      buckets_.insert(buckets_.begin() + static_cast<std::ptrdiff_t>(at), entry);
    }
  }
}

void WaitSketch::reserve(std::size_t n) {
  if (!sketched_) values_.reserve(values_.size() + n);
}

void WaitSketch::sketch() {
  if (sketched_) return;
  sketched_ = true;
  for (double v : values_) bucket(v, 1);
  values_.clear();
  values_.shrink_to_fit();
}

WaitStats WaitSketch::stats() const {
  if (count_ == 0 || sketched_) return histogram_stats();
  auto copy = values_;
  return exact_stats(copy);
}

WaitStats WaitSketch::take_stats() {
  if (count_ == 0 || sketched_) return histogram_stats();
  return exact_stats(values_);
}

WaitStats WaitSketch::exact_stats(Values& v) {
  // Exact, as every wait list was summarised before the histogram (the same numbers, bit for bit).
  WaitStats s;
  s.count = v.size();
  std::sort(v.begin(), v.end());
  auto rank = [&](double q) {  // nearest-rank percentile
    std::size_t k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[k == 0 ? 0 : k - 1];
  };
  s.p50 = rank(0.50);
  s.p95 = rank(0.95);
  s.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  return s;
}

WaitStats WaitSketch::histogram_stats() const {
  WaitStats s;
  if (count_ == 0) return s;
  s.count = count_;
  s.exact = false;
  s.max = max_;
  s.mean = sum_ / static_cast<double>(count_);
  auto rank = [&](double q) {
    std::size_t k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(count_)));
    if (k == 0) k = 1;
    if (k <= zeros_) return 0.0;
    std::uint64_t seen = zeros_;
    for (const Bucket& b : buckets_) {
      seen += b.n;
      if (seen >= k) {
        const double lo = std::pow(kWaitSketchRatio, b.index);
        return std::min(max_, lo * (1 + kWaitSketchRatio) / 2);
      }
    }
    return max_;
  };
  s.p50 = rank(0.50);
  s.p95 = rank(0.95);
  return s;
}

}  // namespace dirsched
