// Wait attribution, blocking chains and the critical path (see waits.hpp).
#include "dirsched/waits.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "dirsched/counted_name.hpp"
#include "dirsched/scheduler.hpp"

namespace dirsched {

// ---------------------------------------------------------------------------------------------
// ExactSum: Shewchuk's non-overlapping partials, as Python's math.fsum (msum) keeps them.

void ExactSum::add(double x) {
  if (x == 0) return;
  std::size_t i = 0;
  for (double y : p_) {
    if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
    const double hi = x + y;
    const double lo = y - (hi - x);
    if (lo != 0) p_[i++] = lo;
    x = hi;
  }
  p_.resize(i);
  if (x != 0) p_.push_back(x);
}

void ExactSum::add_diff(double a, double b) {
  // a - b as hi + lo exactly (TwoSum), then both.
  const double hi = a - b;
  const double bv = hi - a;
  const double av = hi - bv;
  const double lo = (a - av) + (-b - bv);
  add(hi);
  add(lo);
}

void ExactSum::add(const ExactSum& o, bool negate) {
  for (double x : o.p_) add(negate ? -x : x);
}

double ExactSum::value() const {
  // fsum's final rounding: from the largest partial down, with the half-way correction.
  std::size_t n = p_.size();
  if (n == 0) return 0;
  double hi = p_[--n], lo = 0;
  while (n > 0) {
    const double x = hi;
    const double y = p_[--n];
    hi = x + y;
    const double yr = hi - x;
    lo = y - yr;
    if (lo != 0) break;
  }
  if (n > 0 && ((lo < 0 && p_[n - 1] < 0) || (lo > 0 && p_[n - 1] > 0))) {
    const double y = lo * 2;
    const double x = hi + y;
    if (y == x - hi) hi = x;
  }
  return hi;
}

bool ExactSum::is_zero() const {
  return p_.empty();  // add() keeps no zero partial, and non-overlapping partials never cancel
}

const char* wait_cause_name(WaitCause c) {
  switch (c) {
    case WaitCause::kProducers: return "producers";
    case WaitCause::kFifo: return "fifo";
    case WaitCause::kGroupRun: return "group_run";
    case WaitCause::kReserved: return "reserved";
    case WaitCause::kScheduler: return "scheduler";
    case WaitCause::kGroupQueue: return "group_queue";
    case WaitCause::kTargetsBusy: return "targets_busy";
    case WaitCause::kTargetIdle: return "target_idle";
    case WaitCause::kSubPool: return "sub_pool";
    case WaitCause::kTargetHeld: return "target_held";
  }
  return "?";
}
const char* wait_cause_name(std::size_t c) { return wait_cause_name(static_cast<WaitCause>(c)); }

const char* start_reason_name(StartReason r) {
  switch (r) {
    case StartReason::kSubmitted: return "submitted";
    case StartReason::kProducer: return "producer";
    case StartReason::kWorker: return "worker";
    case StartReason::kTarget: return "target";
    case StartReason::kGroupHead: return "group_head";
    case StartReason::kSubPool: return "sub_pool";
    case StartReason::kScheduler: return "scheduler";
  }
  return "?";
}

namespace {
constexpr std::uint8_t kPieceFifo = 0, kPieceGroupRun = 1, kPieceReserved = 2, kPieceScheduler = 3;
constexpr std::size_t idx(WaitCause c) { return static_cast<std::size_t>(c); }
}  // namespace

WaitAttribution::WaitAttribution(const Scheduler& core) : core_(core), live_(core) {
  const std::size_t n = core.registry().next_level_count();
  workers_.resize(n);
  is_head_target_.assign(n, 0);
  prune_at_ = first_prune_at();
}

WaitAttribution::~WaitAttribution() = default;

std::optional<std::uint32_t> WaitAttribution::index_of(WorkerId w) const { return core_.registry().index_of(w); }

// --- the live tasks ---

WaitAttribution::Live WaitAttribution::LiveTable::queued_live(std::uint32_t i, std::uint32_t p) const {
  Live l;
  l.submit_at = Place::submit(p);
  if (Place::ready(p)) l.ready_at = l.submit_at;  // ready_reason kSubmitted, runs_at_ready 0: the defaults
  // What the place does not say, the core does: a live task is not terminal, so the core holds it.
  const Scheduler::QueuedShape shape = core_.queued_shape(TaskId(i));
  l.kind = shape.kind;
  l.worker = shape.worker;
  return l;
}

WaitAttribution::Live* WaitAttribution::LiveTable::find(std::uint32_t i) {
  const std::uint32_t p = read(i);
  if (p == kNoPlace) return nullptr;
  if (!Place::queued(p)) return &pooled(p);
  const std::uint32_t q = pool_place(queued_live(i, p));
  write(i) = q;
  return &pooled(q);
}

const WaitAttribution::Live* WaitAttribution::LiveTable::ending(std::uint32_t i) {
  const std::uint32_t p = read(i);
  if (p == kNoPlace) return nullptr;
  if (!Place::queued(p)) return &pooled(p);
  scratch_ = queued_live(i, p);
  return &scratch_;
}

WaitAttribution::Live* WaitAttribution::LiveTable::peek(std::uint32_t i, Live& local) {
  const std::uint32_t p = read(i);
  if (p == kNoPlace) return nullptr;
  if (!Place::queued(p)) return &pooled(p);
  local = queued_live(i, p);
  return &local;
}

void WaitAttribution::LiveTable::settle(std::uint32_t i, Live* l, Live& local) {
  if (l != &local) return compact(i);
  const std::uint32_t was = read(i);
  const std::uint32_t p = queueable(i, local) ? queued_place(local) : pool_place(std::move(local));
  if (p != was) write(i) = p;  // unchanged: its chunk stays folded
}

void WaitAttribution::LiveTable::insert(std::uint32_t i, Live&& l) {
  if (slots_.empty()) base_ = i;
  if (i < base_) throw InternalError("wait attribution: task " + std::to_string(i) + " submitted before a later one");
  if (read(i) != kNoPlace) throw InternalError("wait attribution: task " + std::to_string(i) + " submitted twice");
  if (l.submit_at == InstantTable::kNone) throw InternalError("wait attribution: task " + std::to_string(i) + " without a submit time");
  const std::uint32_t p = queueable(i, l) ? queued_place(l) : pool_place(std::move(l));
  while (i - base_ > slots_.size()) slots_.push_back(kNoPlace);
  if (i - base_ == slots_.size())
    slots_.push_back(p);
  else
    write(i) = p;
  ++count_;
}

bool WaitAttribution::LiveTable::queueable(std::uint32_t i, const Live& l) const {
  const bool ready = l.ready_at != InstantTable::kNone;
  if (l.x || l.node != 0 || l.started || l.runs_at_ready != 0 || l.ready_reason != StartReason::kSubmitted ||
      (ready && l.ready_at != l.submit_at) || (l.kind != TaskKind::kSingle && l.kind != TaskKind::kSub))
    return false;
  // queued_live() reads the kind and worker back from the core: only what it reads back the same.
  const Scheduler::QueuedShape shape = core_.queued_shape(TaskId(i));
  return l.kind == shape.kind && l.worker == shape.worker;
}

std::uint32_t WaitAttribution::LiveTable::queued_place(const Live& l) {
  return Place::of_queued(l.submit_at, l.ready_at != InstantTable::kNone);
}

void WaitAttribution::LiveTable::compact(std::uint32_t i) {
  const std::uint32_t p = read(i);
  if (p == kNoPlace || Place::queued(p)) return;
  const Live& l = pooled(p);
  if (!queueable(i, l)) return;
  const std::uint32_t q = queued_place(l);
  free_pooled(p);
  write(i) = q;
}

void WaitAttribution::LiveTable::erase(std::uint32_t i) {
  const std::uint32_t p = read(i);
  if (p == kNoPlace) return;
  if (!Place::queued(p)) free_pooled(p);
  write(i) = kNoPlace;
  --count_;
  while (!slots_.empty() && slots_.front() == kNoPlace) slots_.pop_front(), ++base_;
}

std::optional<std::uint32_t> WaitAttribution::LiveTable::front_submit() const {
  if (slots_.empty()) return std::nullopt;
  const std::uint32_t p = slots_.front();
  return Place::queued(p) ? Place::submit(p) : pooled(p).submit_at;
}

const ExactSum& WaitAttribution::zero_sum() {
  static const ExactSum z;
  return z;
}

const std::vector<std::uint32_t>& WaitAttribution::no_targets() {
  static const std::vector<std::uint32_t> none;
  return none;
}

// --- the critical-path node table ---

WaitAttribution::NodeTable::NodeTable() { push(); }  // node 0: none

std::uint32_t WaitAttribution::NodeTable::push() {
  if (nodes_.size() >= std::numeric_limits<std::uint32_t>::max())
    throw InternalError("wait attribution: more than 2^32 critical-path nodes held");
  nodes_.emplace_back();
  return static_cast<std::uint32_t>(nodes_.size() - 1);
}

WaitAttribution::NodeTable::Record WaitAttribution::NodeTable::read(const char* record) {
  Record r{static_cast<std::uint8_t>(*record), 1, 0};
  for (unsigned shift = 0;; shift += 7) {
    const auto byte = static_cast<unsigned char>(record[r.header++]);
    r.value |= std::uint64_t{byte & 0x7fu} << shift;
    if (!(byte & 0x80u)) return r;
  }
}

std::size_t WaitAttribution::NodeTable::Record::size() const {
  return header + ((flags & kCounted) ? 0 : static_cast<std::size_t>(value)) + ((flags & kOwnStart) ? sizeof(double) : 0);
}

std::uint32_t WaitAttribution::NodeTable::new_chunk(std::size_t size) {
  if (spare_.empty()) {
    if (chunks_.size() >= 0xffff)
      throw BadInput("the critical path holds more than 65,535 chunks of task names at once (at least 2 GiB: a "
                     "name past 32 KiB has a chunk of its own); the testbed's limit");
    spare_.push_back(static_cast<std::uint32_t>(chunks_.size()));
    chunks_.emplace_back();
  }
  const std::uint32_t k = spare_.back();
  spare_.pop_back();
  chunks_[k].text = std::make_unique<char[]>(size);
  chunks_[k].size = size;
  return k;
}

void WaitAttribution::NodeTable::give_back(std::uint32_t chunk) {
  Chunk& c = chunks_[chunk];
  garbage_ -= c.used;  // none of it is live
  c = Chunk{};
  spare_.push_back(chunk);
  if (chunk == current_) {
    current_ = kNoChunk;
    room_ = 0;
  }
}

std::uint32_t WaitAttribution::NodeTable::place(std::uint32_t k) {
  const std::size_t size = scratch_.size();
  Chunk& c = chunks_[k];
  const std::size_t off = c.used;  // under 2^16: a chunk of kText, or offset 0 of a record's own
  std::copy(scratch_.begin(), scratch_.end(), c.text.get() + off);
  c.used += size;
  c.live += size;
  live_bytes_ += size;
  if (k == current_) room_ -= size;
  return static_cast<std::uint32_t>(k << 16 | off);
}

void WaitAttribution::NodeTable::encode(std::uint32_t k, StartReason reason, std::string_view name,
                                        std::optional<double> start) {
  std::uint8_t flags = static_cast<std::uint8_t>(reason);
  std::uint64_t value = name.size();
  if (k != kNoChunk && chunks_[k].anchored) {
    const Chunk& c = chunks_[k];
    if (const auto counted = counted_name(name); counted && name.substr(0, counted->prefix) == c.prefix) {
      const std::uint64_t d = counted->number - c.number;  // modulo 2^64: zigzag of the signed distance
      const std::uint64_t zigzag = (d << 1) ^ (static_cast<std::int64_t>(d) < 0 ? ~std::uint64_t{0} : 0);
      const auto leb = [](std::uint64_t v) {
        std::size_t n = 1;
        while (v >>= 7) ++n;
        return n;
      };
      if (leb(zigzag) <= leb(value) + name.size()) {  // never larger than the name in full
        value = zigzag;
        flags |= kCounted;
      }
    }
  }
  if (start) flags |= kOwnStart;
  std::string& buf = scratch_;
  buf.assign(1, static_cast<char>(flags));
  do {
    buf.push_back(static_cast<char>((value & 0x7fu) | (value > 0x7fu ? 0x80u : 0u)));
    value >>= 7;
  } while (value);
  if (!(flags & kCounted)) buf.append(name);
  if (start) buf.append(reinterpret_cast<const char*>(&*start), sizeof(double));
}

void WaitAttribution::NodeTable::anchor(std::uint32_t k, std::string_view name) {
  Chunk& c = chunks_[k];
  if (c.anchored) return;
  if (const auto counted = counted_name(name)) {
    c.anchored = true;
    c.prefix.assign(name.substr(0, counted->prefix));
    c.number = counted->number;
  }
}

// Into the chunk records go to, counted against its anchor when it can be; a record that does not fit
// is made again for the next chunk, which it may anchor. A record past half a chunk (never a counted
// one) has a chunk of its own, just its size, so every chunk is at least half used.
std::uint32_t WaitAttribution::NodeTable::put(StartReason reason, std::string_view name, std::optional<double> start) {
  if (current_ != kNoChunk) {
    anchor(current_, name);
    encode(current_, reason, name, start);
    if (scratch_.size() <= room_) return place(current_);
  }
  encode(kNoChunk, reason, name, start);
  if (scratch_.size() > kText / 2) return place(new_chunk(scratch_.size()));
  if (current_ != kNoChunk && chunks_[current_].live == 0) give_back(current_);
  current_ = new_chunk(kText);
  room_ = kText;
  anchor(current_, name);
  encode(current_, reason, name, start);
  return place(current_);
}

void WaitAttribution::NodeTable::set_text(std::uint32_t n, StartReason reason, std::string_view name,
                                          std::optional<double> start) {
  (*this)[n].text = put(reason, name, start);
}

void WaitAttribution::NodeTable::name_of(const Chunk& c, const char* r, const Record& x, std::string& out) {
  if (x.flags & kCounted) {
    counted_text(c.prefix, c.number + ((x.value >> 1) ^ (~(x.value & 1) + 1)), out);  // zigzag back
  } else {
    out.assign(r + x.header, static_cast<std::size_t>(x.value));
  }
}

std::optional<double> WaitAttribution::NodeTable::own_start(const char* r, const Record& x) {
  if (!(x.flags & kOwnStart)) return std::nullopt;
  double t;
  std::memcpy(&t, r + x.size() - sizeof t, sizeof t);
  return t;
}

std::string WaitAttribution::NodeTable::name(std::uint32_t n) const {
  const std::uint32_t at = (*this)[n].text;
  std::string out;
  if (at != Node::kNoText) name_of(chunks_[at >> 16], record(at), read(record(at)), out);
  return out;
}

StartReason WaitAttribution::NodeTable::reason(std::uint32_t n) const {
  const std::uint32_t at = (*this)[n].text;
  return at == Node::kNoText ? StartReason{} : static_cast<StartReason>(*record(at) & kReasonBits);
}

double WaitAttribution::NodeTable::start(std::uint32_t n) const {
  const Node& x = (*this)[n];
  if (const auto t = own_start(record(x.text), read(record(x.text)))) return *t;
  if (!x.pred) throw InternalError("wait attribution: a critical-path node without its start or predecessor");
  return (*this)[x.pred].end;
}

void WaitAttribution::NodeTable::freed(std::uint32_t n) {
  Node& x = (*this)[n];
  const std::uint32_t chunk = x.text >> 16;
  const std::size_t size = read(record(x.text)).size();
  x.text = Node::kNoText;
  live_bytes_ -= size;
  garbage_ += size;
  ++frees_;
  if ((chunks_[chunk].live -= size) == 0 && chunk != current_) give_back(chunk);
}

void WaitAttribution::NodeTable::settle() {
  if (garbage_ > live_bytes_ && garbage_ >= kText && 2 * frees_ >= nodes_.size()) compact();
}

WaitAttribution::NameText WaitAttribution::NodeTable::text() const {
  std::size_t held = 0;
  for (const Chunk& c : chunks_) held += c.size;  // 0 for a chunk given back
  return {live_bytes_, held, compactions_};
}

// The live records into new chunks, in node order (counted against the new chunks' anchors); the old
// text goes.
void WaitAttribution::NodeTable::compact() {
  ++compactions_;
  std::vector<Chunk> old;
  old.swap(chunks_);
  spare_.clear();
  current_ = kNoChunk;
  room_ = 0;
  live_bytes_ = garbage_ = frees_ = 0;
  std::string name;
  for (std::size_t n = 1; n < nodes_.size(); ++n) {
    Node& x = (*this)[static_cast<std::uint32_t>(n)];
    if (x.text == Node::kNoText) continue;
    const Chunk& from = old[x.text >> 16];
    const char* was = from.text.get() + (x.text & 0xffffu);
    const Record r = read(was);
    name_of(from, was, r, name);
    x.text = put(static_cast<StartReason>(r.flags & kReasonBits), name, own_start(was, r));
  }
}

// --- per-worker running totals for the singles waiting on it ---

void WaitAttribution::flush(Worker& w, double t) {
  w.cum[w.piece].add_diff(t, w.piece_since);
  w.piece_since = t;
}

void WaitAttribution::set_piece(std::uint32_t wi, double t) {
  Worker& w = workers_[wi];
  flush(w, t);
  w.piece = w.running.valid() ? (w.group ? kPieceGroupRun : kPieceFifo)
                              : (w.reserved ? kPieceReserved : kPieceScheduler);
}

// --- the group FIFO head ---

void WaitAttribution::head_flush(Live& g, double t) {
  Extra& gx = g.extra();
  // An idle target is held when the group is the blocked head and the version reserves for it.
  const bool held = blocked_head_.valid() && blocked_head_ == head_ && core_.switches()[Switch::kGroupReservation];
  gx.snap[gx.idle_targets > 0 ? (held ? 2 : 1) : 0].add_diff(t, gx.piece_since);
  gx.piece_since = t;
}

void WaitAttribution::become_head(TaskId id, double t) {
  head_ = id;
  Extra& g = live_.at(id.index()).extra();
  g.head = t;
  g.piece_since = t;
  g.idle_targets = 0;
  head_runs_.clear();
  for (std::uint32_t wi : g.targets) {
    is_head_target_[wi] = 1;
    if (!workers_[wi].running.valid()) ++g.idle_targets;
  }
}

void WaitAttribution::target_changed(std::uint32_t wi, double t, bool busy_now) {
  if (!head_.valid() || !is_head_target_[wi]) return;
  Live& g = live_.at(head_.index());
  head_flush(g, t);
  if (busy_now) {
    --g.extra().idle_targets;
  } else {
    ++g.extra().idle_targets;
    const Worker& w = workers_[wi];
    head_runs_.push_back({std::max(w.since, head_of(g)), t, wi, w.running, std::string(core_.name(w.running)), w.running_wait});
    last_target_end_ = t;
    last_target_end_node_ = w.node;
  }
}

// The blocking chain of a head until `until` (its launch, or its cancellation): from READY to its
// becoming head, the group ahead of it; then greedily forward from the head instant, the busy run of one
// of its targets that reaches furthest. At a cancellation the targets still running count to `until`.
void WaitAttribution::chain_for(TaskId id, double until) {
  const Live& g = live_.at(id.index());
  const double head = head_of(g);
  std::vector<Run> runs = head_runs_;
  for (std::uint32_t wi : g.targets()) {
    const Worker& w = workers_[wi];
    if (w.running.valid())
      runs.push_back({std::max(w.since, head), until, wi, w.running, std::string(core_.name(w.running)),
                      w.running_wait});
  }
  std::vector<BlockedBy> chain;
  if (head > ready_of(g))
    chain.push_back({ready_of(g), head, std::nullopt, previous_head_, previous_head_wait_.s, previous_head_wait_.cause});
  std::stable_sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.start < b.start; });
  double cur = head;
  std::size_t i = 0;
  const Run* best = nullptr;
  while (cur < until) {
    while (i < runs.size() && runs[i].start <= cur) {
      if (!best || runs[i].end > best->end) best = &runs[i];
      ++i;
    }
    if (!best || best->end <= cur) {  // no target busy at cur: cannot happen to a blocked head
      if (i >= runs.size()) break;
      cur = runs[i].start;
      continue;
    }
    const double to = std::min(best->end, until);
    chain.push_back({cur, to, core_.registry().worker_at(best->worker).id, best->name, best->wait.s, best->wait.cause});
    cur = to;
  }
  if (!chain.empty()) chains_[id.index()] = std::move(chain);
}

const std::vector<BlockedBy>* WaitAttribution::blocked_by(TaskId group) const {
  auto it = chains_.find(group.index());
  return it == chains_.end() ? nullptr : &it->second;
}

// --- critical path nodes ---

std::uint32_t WaitAttribution::new_node(std::string_view name, StartReason reason, std::optional<double> start) {
  if (nodes_held() >= trim_at_) trim_chains();
  std::uint32_t n;
  if (free_) {
    n = free_;
    free_ = nodes_[n].pred;
    --free_count_;
    nodes_[n] = Node{};
  } else {
    n = nodes_.push();
  }
  nodes_.set_text(n, reason, name, start);
  nodes_[n].refs = 1;  // the live task's
  return n;
}

void WaitAttribution::hold(std::uint32_t n) {
  if (n) ++nodes_[n].refs;
}

void WaitAttribution::release(std::uint32_t n) {
  let_go(n);
  nodes_.settle();
}

void WaitAttribution::let_go(std::uint32_t n) {
  while (n && --nodes_[n].refs == 0) {  // iteratively: a chain may be a million long
    const std::uint32_t pred = nodes_[n].pred;
    nodes_.freed(n);
    nodes_[n].pred = free_;
    free_ = n;
    ++free_count_;
    n = pred;
  }
}

void WaitAttribution::new_instant(double t) {
  if (t == instant_) return;
  instant_ = t;
  for (std::uint32_t n : ended_now_) let_go(n);
  nodes_.settle();
  ended_now_.clear();
  prune_at_ = first_prune_at();
}

// The nodes ended at this instant are held because a task that starts later in the instant may name
// one as its predecessor. Only a few can be named: the latest end on each worker (and its running
// task's node), the latest SUB end, target end, completion and group launch; every later value of these
// comes from a live task's node, which its task holds, and a live task's ready node (Live::node before
// it starts) holds its own reference until the task starts. When every task ends in one instant (0 s durations) the list would
// hold them all, so past a bound the ones nothing can name are released. A pruning costs O(workers),
// so the bound is at least four times the workers (and 4,096), and twice what a pruning kept: the
// cost per ended task stays O(1) amortised. (It scanned every live task once, which made a trace of
// 10M tasks submitted at t = 0 on 4,096 workers quadratic: a pruning at every instant.)
void WaitAttribution::prune_ended_now() {
  std::vector<std::uint32_t> nameable = {last_completed_node_, last_sub_end_node_, last_target_end_node_,
                                         previous_head_node_};
  nameable.reserve(nameable.size() + 2 * workers_.size());
  for (const Worker& w : workers_) nameable.push_back(w.last_end_node), nameable.push_back(w.node);
  std::sort(nameable.begin(), nameable.end());
  std::size_t kept = 0;
  for (const std::uint32_t n : ended_now_) {
    if (std::binary_search(nameable.begin(), nameable.end(), n))
      ended_now_[kept++] = n;
    else
      release(n);
  }
  ended_now_.resize(kept);
  prune_at_ = std::max(first_prune_at(), 2 * (kept + nameable.size()));
}

// --- a task starts ---

std::array<ExactSum, kWaitCauses>& WaitAttribution::fresh_causes() {
  for (ExactSum& x : causes_) x.clear();
  return causes_;
}

WaitAttribution::OwnWait WaitAttribution::finish_waits(TaskId id, Live& l, double t, std::array<ExactSum, kWaitCauses>& c) {
  ExactSum& check = check_;
  check.clear();
  for (const ExactSum& x : c) check.add(x);
  check.add_diff(submit_of(l), t);  // - (t - submit)
  TaskWaits w;
  w.exact = check.is_zero();
  if (!w.exact) ++inexact_;
  for (std::size_t k = 0; k < kWaitCauses; ++k) {
    w.s[k] = c[k].value();
    totals_[k].add(c[k]);
  }
  ++started_;
  if (l.kind == TaskKind::kSingle) {
    // Runs that went ahead of it: fewer than 2^32, so the difference modulo 2^32 is the count.
    w.behind = static_cast<std::uint32_t>(workers_[l.worker].runs) - l.runs_at_ready;
  }
  const double wait = t - submit_of(l);
  OwnWait own{wait, std::nullopt};
  for (std::size_t k = 0; k < kWaitCauses; ++k)
    if (w.s[k] > 0 && (!own.cause || w.s[k] > w.s[idx(*own.cause)])) own.cause = static_cast<WaitCause>(k);
  if (wait > 0 && (l.kind == TaskKind::kSingle || l.kind == TaskKind::kGroup)) {
    std::vector<LongWait>& top = l.kind == TaskKind::kSingle ? top_single_ : top_group_;
    if (top.size() < kLongest || wait > top.back().wait_s) {
      LongWait lw;
      lw.task = std::string(core_.name(id));
      lw.kind = l.kind == TaskKind::kSingle ? "single" : "group";
      lw.wait_s = wait;
      lw.waits = w;
      if (l.kind == TaskKind::kSingle) {
        lw.workers.push_back(std::to_string(core_.registry().worker_at(l.worker).id.value()));
        // Runs l.runs_at_ready .. runs - 1 went ahead of it; the worker still names the last kAhead.
        const Worker& wk = workers_[l.worker];
        const std::uint64_t runs_at_ready = wk.runs - w.behind;
        const std::uint64_t from = std::max<std::uint64_t>(runs_at_ready, wk.runs >= kAhead ? wk.runs - kAhead : 0);
        for (std::uint64_t k = from; k < wk.runs; ++k) lw.ahead.push_back(wk.recent[k % kAhead]);
      } else {
        for (std::uint32_t wi : l.targets()) lw.workers.push_back(std::to_string(core_.registry().worker_at(wi).id.value()));
      }
      note_long(lw, top);
    }
  }
  if (keep_) done_[id.index()] = std::move(w);
  return own;
}

void WaitAttribution::note_long(const LongWait& w, std::vector<LongWait>& top) {
  // Longest first; an equal wait goes after those already there (earlier start first).
  auto at = std::upper_bound(top.begin(), top.end(), w.wait_s,
                             [](double v, const LongWait& x) { return v > x.wait_s; });
  top.insert(at, w);
  if (top.size() > kLongest) top.pop_back();
}

void WaitAttribution::started(const Event& e, Live& l, double t, StartReason reason, std::uint32_t pred) {
  const std::uint32_t ready_node = l.ready_node();
  // A node that starts at its predecessor's end (already there, and set once) reads its start from it.
  const double pred_end = pred ? nodes_[pred].end : -1;  // -1: not ended
  const bool at_pred_end = pred && pred_end >= 0 && std::memcmp(&pred_end, &t, sizeof t) == 0;
  l.node = new_node(e.name, reason, at_pred_end ? std::nullopt : std::optional<double>(t));
  l.started = true;
  Node& n = nodes_[l.node];
  n.pred = pred;
  n.steps = (pred ? nodes_[pred].steps : 0) + 1;  // a task starts once: a chain has fewer than 2^32
  longest_ = std::max(longest_, n.steps);
  hold(pred);
  release(ready_node);  // read by now (pred, when it started at its READY instant)
}

// The critical path the outputs read is the last kPathKept steps of the chain ending with the task that
// ended last, and the name of what the first of them waited for: kPathKept + 1 nodes of one chain.
// Without trimming, every worker's running task would hold its whole history (each task's node holds
// its predecessor's), so the table would grow with the trace: 10M nodes for 10M tasks.
//
// Which nodes can that chain still pass through? A node is named as a predecessor only while something
// other than a node holds it (its live task, the nodes ended in this instant, a READY task's ready
// node), and once nothing does it never is again (every naming needs its end in the current instant).
// So the chain's newest node that exists now is one of those "roots", and what it can need of an
// existing chain is that root's kPathKept + 1 nodes. Trimming keeps exactly those (marked from every
// root, oldest first: the first to reach a node reaches it farthest) and cuts the link behind the last
// of each; what is cut off is then held by nothing and freed. A root is a node held more often than it
// has successors (refs counts both). The cost is O(nodes held); it runs when half as many more are held
// as the last one kept (at least kTrimFloor more), so O(1) a node amortised.
void WaitAttribution::trim_chains() {
  if (longest_ <= kPathKept + 1) {  // no chain reaches past what is kept: nothing to cut
    trim_at_ = trim_period_ ? nodes_held() + trim_period_ : nodes_held() + std::max(kTrimFloor, nodes_held() / 2);
    return;
  }
  const std::size_t size = nodes_.size();
  // The roots, with no table beside the nodes (one of 4 bytes a node was 23 MiB at the 10M run's
  // peak): each live node's successors' references are taken off it, what is left is read, and they
  // are given back.
  for (std::uint32_t n = 1; n < size; ++n)
    if (nodes_.live(n) && nodes_[n].pred) --nodes_[nodes_[n].pred].refs;
  std::vector<std::uint32_t> roots;
  for (std::uint32_t n = 1; n < size; ++n)
    if (nodes_[n].refs > 0) roots.push_back(n);  // free nodes have no refs
  for (std::uint32_t n = 1; n < size; ++n)
    if (nodes_.live(n) && nodes_[n].pred) ++nodes_[nodes_[n].pred].refs;
  // Oldest chains first. Along a chain `steps` falls by one a node, so a root reaches a node with
  // kPathKept + 1 - (its steps - the node's) to go: the first root to reach a node reaches it farthest,
  // and a later one stops there. The nodes reached with one to go are the last kept of their chain.
  std::sort(roots.begin(), roots.end(), [&](std::uint32_t a, std::uint32_t b) {
    return nodes_[a].steps != nodes_[b].steps ? nodes_[a].steps < nodes_[b].steps : a < b;
  });
  std::vector<bool> reached(size, false);
  std::vector<std::uint32_t> last;
  for (const std::uint32_t r : roots) {
    std::uint32_t n = r;
    for (std::uint32_t left = kPathKept + 1; n && !reached[n] && left > 1; n = nodes_[n].pred, --left) reached[n] = true;
    if (n && !reached[n]) {  // one to go
      reached[n] = true;
      if (nodes_[n].pred) last.push_back(n);
    }
  }
  std::sort(last.begin(), last.end());  // cut in node order: the free list's order does not depend on the roots'
  for (const std::uint32_t n : last) {
    const std::uint32_t cut = nodes_[n].pred;
    nodes_[n].pred = 0;
    let_go(cut);
  }
  nodes_.settle();  // once all is cut: most chunks empty whole on the way
  // The next trimming when half as many more are held (at least kTrimFloor).
  const std::size_t kept = nodes_held();
  trim_at_ = trim_period_ ? kept + trim_period_ : kept + std::max(kTrimFloor, kept / 2);
}

// ---------------------------------------------------------------------------------------------

void WaitAttribution::on_event(const Event& e) {
  if (is_run_event(e.kind)) return;  // no task, no wait
  new_instant(e.t);
  const double t = e.t;
  switch (e.kind) {
    case EventKind::kSubmit: {
      Live l;
      l.kind = e.task_kind;
      if (!(t >= 0)) throw InternalError("wait attribution: task " + std::to_string(e.task.index()) + " without a submit time");
      l.submit_at = instants_.name(t);
      if (e.task_kind == TaskKind::kSingle && e.workers && !e.workers->empty()) {
        l.worker = index_of((*e.workers)[0]).value_or(0);
      } else if (e.task_kind == TaskKind::kGroup) {
        Extra& g = l.extra();
        if (e.workers)
          for (WorkerId w : *e.workers) g.targets.push_back(index_of(w).value_or(0));
      }
      live_.insert(e.task.index(), std::move(l));
      last_submit_ = e.task;
      break;
    }
    case EventKind::kReady: {
      // A task only queued is changed in `local` and put back by settle(): nothing below may look the
      // same task up in live_ (become_head() does, for a group, which is never only queued).
      Live local;
      Live* it = live_.peek(e.task.index(), local);
      if (!it) break;
      Live& l = *it;
      l.ready_at = instants_.name(t);
      if (last_submit_ == e.task && submit_of(l) == t) {
        l.ready_reason = StartReason::kSubmitted;
      } else {
        l.ready_reason = StartReason::kProducer;
        l.node = last_completed_t_ == t ? last_completed_node_ : 0;  // its ready node
        hold(l.node);  // until it starts or ends: it may start at this instant, naming it
      }
      if (l.kind == TaskKind::kSingle) {
        Worker& w = workers_[l.worker];
        flush(w, t);
        l.set_snap(w.cum);
        l.runs_at_ready = static_cast<std::uint32_t>(w.runs - (w.running.valid() ? 1 : 0));  // the run under way counts as ahead
      } else if (l.kind == TaskKind::kGroup) {
        group_fifo_.push_back(e.task);
        if (group_fifo_.size() == 1) become_head(e.task, t);
      }
      live_.settle(e.task.index(), it, local);  // READY at its submit with nothing ahead: still only queued
      break;
    }
    case EventKind::kGroupBlocked: {
      if (blocked_head_ == e.task) break;
      Live* it = live_.find(e.task.index());
      if (it && head_ == e.task) head_flush(*it, t);  // its idle targets are held from now on
      blocked_head_ = e.task;
      if (!it) break;
      for (std::uint32_t wi : it->targets()) {
        workers_[wi].reserved = true;
        set_piece(wi, t);
      }
      break;
    }
    case EventKind::kGroupLaunched: {
      Live* it = live_.find(e.task.index());
      if (!it) break;
      Live& g = *it;
      if (head_ == e.task) head_flush(g, t);
      std::array<ExactSum, kWaitCauses>& c = fresh_causes();
      c[idx(WaitCause::kProducers)].add_diff(ready_of(g), submit_of(g));
      c[idx(WaitCause::kGroupQueue)].add_diff(head_of(g), ready_of(g));
      c[idx(WaitCause::kTargetsBusy)] = g.snap(0);
      c[idx(WaitCause::kTargetIdle)] = g.snap(1);
      c[idx(WaitCause::kTargetHeld)] = g.snap(2);
      chain_for(e.task, t);
      StartReason reason = StartReason::kScheduler;
      std::uint32_t pred = 0;
      if (ready_of(g) == t) {
        reason = g.ready_reason;
        pred = g.ready_node();
      } else if (head_of(g) == t && head_of(g) > ready_of(g) && previous_head_launch_ == t) {
        reason = StartReason::kGroupHead;
        pred = previous_head_node_;
      } else if (last_target_end_ == t) {
        reason = StartReason::kTarget;
        pred = last_target_end_node_;
      }
      started(e, g, t, reason, pred);
      g.extra().own = finish_waits(e.task, g, t, c);
      for (std::uint32_t wi : g.targets()) is_head_target_[wi] = 0;
      if (blocked_head_ == e.task) {
        for (std::uint32_t wi : g.targets()) {
          workers_[wi].reserved = false;
          set_piece(wi, t);
        }
        blocked_head_ = TaskId();
      }
      auto f = std::find(group_fifo_.begin(), group_fifo_.end(), e.task);
      if (f != group_fifo_.end()) group_fifo_.erase(f);
      previous_head_ = std::string(core_.name(e.task));
      previous_head_wait_ = g.group_own();
      previous_head_node_ = g.own_node();
      previous_head_launch_ = t;
      head_ = TaskId();
      head_runs_.clear();
      if (!group_fifo_.empty()) become_head(group_fifo_.front(), t);
      break;
    }
    case EventKind::kDispatch:
    case EventKind::kActivate: {
      // staging (#1583): a staging starts nothing; the member starts at its activation, and its wait
      // runs to then (attributed as for any single of its worker's FIFO).
      if (e.prepare_only) break;
      Live* it = live_.find(e.task.index());
      if (!it) break;
      Live& l = *it;
      if (e.target.sub) {
        if (e.member == 0) {
          std::array<ExactSum, kWaitCauses>& c = fresh_causes();
          c[idx(WaitCause::kProducers)].add_diff(ready_of(l), submit_of(l));
          c[idx(WaitCause::kSubPool)].add_diff(t, ready_of(l));
          StartReason reason = StartReason::kScheduler;
          std::uint32_t pred = 0;
          if (ready_of(l) == t) {
            reason = l.ready_reason;
            pred = l.ready_node();
          } else if (last_sub_end_ == t) {
            reason = StartReason::kSubPool;
            pred = last_sub_end_node_;
          }
          started(e, l, t, reason, pred);
          finish_waits(e.task, l, t, c);
        }
        break;
      }
      const std::optional<std::uint32_t> wi = index_of(e.target.worker);
      if (!wi) break;
      Worker& w = workers_[*wi];
      OwnWait own;  // the running task's own wait, for BlockedBy of what waits behind it
      if (l.kind == TaskKind::kSingle) {
        flush(w, t);
        std::array<ExactSum, kWaitCauses>& c = fresh_causes();
        c[idx(WaitCause::kProducers)].add_diff(ready_of(l), submit_of(l));
        const WaitCause piece_cause[4] = {WaitCause::kFifo, WaitCause::kGroupRun, WaitCause::kReserved,
                                          WaitCause::kScheduler};
        for (std::size_t k = 0; k < 4; ++k) {
          c[idx(piece_cause[k])] = w.cum[k];
          c[idx(piece_cause[k])].add(l.snap(k), true);
        }
        StartReason reason = StartReason::kScheduler;
        std::uint32_t pred = 0;
        if (ready_of(l) == t) {
          reason = l.ready_reason;
          pred = l.ready_node();
        } else if (w.last_end == t) {
          reason = StartReason::kWorker;
          pred = w.last_end_node;
        }
        started(e, l, t, reason, pred);
        own = finish_waits(e.task, l, t, c);
        l.x.reset();  // the snapshot is not needed any more
      } else {
        own = l.group_own();  // a group's member
      }
      target_changed(*wi, t, true);
      w.running = e.task;
      w.group = e.task_kind == TaskKind::kGroup;
      w.since = t;
      w.node = l.own_node();
      w.running_wait = own;
      w.recent[w.runs % kAhead].assign(e.name.data(), e.name.size());
      ++w.runs;
      set_piece(*wi, t);
      break;
    }
    case EventKind::kMemberEnd: {
      if (e.target.sub) {
        const Live* it = live_.ending(e.task.index());
        last_sub_end_ = t;
        last_sub_end_node_ = it ? it->own_node() : 0;
        break;
      }
      const std::optional<std::uint32_t> wi = index_of(e.target.worker);
      if (!wi) break;
      Worker& w = workers_[*wi];
      target_changed(*wi, t, false);  // reads the run that ends
      w.last_end = t;
      w.last_end_node = w.node;
      w.running = TaskId();
      w.since = t;
      set_piece(*wi, t);
      break;
    }
    case EventKind::kCancel: {  // never started (run_cancellation): a READY group leaves the group FIFO
      const Live* it = live_.ending(e.task.index());
      if (!it) break;
      auto f = std::find(group_fifo_.begin(), group_fifo_.end(), e.task);
      // What held a READY group until its cancellation: as for a launch when it was the head; behind the
      // head, the head (issue 24: a group that never launched had an empty chain).
      if (f != group_fifo_.end()) {
        if (head_ == e.task)
          chain_for(e.task, t);
        else if (head_.valid() && t > ready_of(*it))
          chains_[e.task.index()] = {{ready_of(*it), t, std::nullopt, std::string(core_.name(head_)), 0, std::nullopt}};
      }
      const std::vector<std::uint32_t> targets = it->targets();
      const OwnWait own = it->group_own();
      release(it->ready_node());
      erase_live(e.task);
      if (f == group_fifo_.end()) break;
      group_fifo_.erase(f);
      if (blocked_head_ == e.task) {
        for (std::uint32_t wi : targets) {
          workers_[wi].reserved = false;
          set_piece(wi, t);
        }
        blocked_head_ = TaskId();
      }
      if (head_ == e.task) {
        for (std::uint32_t wi : targets) is_head_target_[wi] = 0;
        // The group ahead of the next head until now was this one (not the last group that launched).
        previous_head_ = std::string(core_.name(e.task));
        previous_head_wait_ = own;
        head_ = TaskId();
        head_runs_.clear();
        if (!group_fifo_.empty()) become_head(group_fifo_.front(), t);
      }
      break;
    }
    case EventKind::kComplete:
    case EventKind::kFail:
    case EventKind::kPoison: {
      const Live* it = live_.ending(e.task.index());
      if (!it) break;
      const std::uint32_t n = it->own_node();
      release(it->ready_node());  // it never started
      erase_live(e.task);
      if (n) {
        nodes_[n].end = t;
        ended_now_.push_back(n);  // the ended_now_ hold takes over the live task's reference
        if (!last_ || t > nodes_[last_].end) {
          hold(n);
          release(last_);
          last_ = n;
        }
      }
      if (e.kind == EventKind::kComplete) {
        last_completed_t_ = t;
        last_completed_node_ = n;
      }
      if (ended_now_.size() >= prune_at_) prune_ended_now();
      break;
    }
    default:
      break;
  }
}

void WaitAttribution::erase_live(TaskId task) {
  live_.erase(task.index());
  instants_.record_left(live_.front_submit());  // no live task names an instant before it
}

std::optional<TaskWaits> WaitAttribution::take(TaskId task) {
  auto it = done_.find(task.index());
  if (it == done_.end()) return std::nullopt;
  TaskWaits w = std::move(it->second);
  done_.erase(it);
  return w;
}

std::optional<TaskWaits> WaitAttribution::peek(TaskId task) const {
  auto it = done_.find(task.index());
  if (it == done_.end()) return std::nullopt;
  return it->second;
}

std::array<double, kWaitCauses> WaitAttribution::totals() const {
  std::array<double, kWaitCauses> out{};
  for (std::size_t k = 0; k < kWaitCauses; ++k) out[k] = totals_[k].value();
  return out;
}

std::uint64_t WaitAttribution::critical_path_steps() const { return last_ ? std::uint64_t{nodes_[last_].steps} : 0; }

std::vector<CriticalStep> WaitAttribution::critical_path() const {
  std::vector<CriticalStep> out;
  for (std::uint32_t n = last_; n && out.size() < kPathKept; n = nodes_[n].pred) {
    const Node& x = nodes_[n];
    CriticalStep s;
    s.task = nodes_.name(n);
    s.start_s = nodes_.start(n);
    s.end_s = x.end;
    s.reason = nodes_.reason(n);
    if (x.pred) s.after = nodes_.name(x.pred);
    out.push_back(std::move(s));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace dirsched
