#include "dirsched/sim.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <queue>
#include <random>
#include <set>
#include <simgrid/s4u.hpp>
#include <tuple>
#include <unordered_map>

#include "dirsched/containers.hpp"
#include "dirsched/instant_loop.hpp"
#include "dirsched/jitter.hpp"
#include "dirsched/mpi_lanes.hpp"
#include "dirsched/platform.hpp"
#include "dirsched/probe.hpp"
#include "dirsched/progress.hpp"
#include "dirsched/replay.hpp"
#include "collective.hpp"

namespace sg4 = simgrid::s4u;

namespace dirsched {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// kSameInstant and kMaxClockS (dirsched/instant_loop.hpp): two times closer than 1e-9 s are one instant
// (SimGrid's own timing precision by default); the loader keeps every time a scenario gives at most
// 2^32 s (136 years), where a double still resolves 1 us, and a platform that makes a transfer or a
// computation longer stops the run there.

class Driver {
  friend class InstantLoop<Driver>;  // its steps: faults_due, ends_due, carry_out

 public:
  Driver(Run& run, const RunOptions& options, std::uint64_t seed, InvariantChecker* checker)
      : run_(run),
        s_(run.scenario),
        seed_(seed),
        progress_(options.progress),
        checker_(checker),
        keep_dispatch_order_(options.keep_order_and_records || wants_dispatch_order(run.scenario)) {}

  void resolve_hosts() {
    auto host = [&](const std::string& name, const std::string& path) {
      sg4::Host* h = sg4::Host::by_name_or_null(name);
      if (!h) throw ScenarioError(s_.file, path, "no host '" + name + "' in the platform");
      return h;
    };
    scheduler_host_ = host(s_.scheduler_host, "scheduler.host");
    for (std::size_t i = 0; i < s_.next_level.size(); ++i)
      nl_hosts_.push_back(host(s_.next_level[i].host, "workers.next_level[" + std::to_string(i) + "].host"));
    for (std::size_t i = 0; i < s_.sub_hosts.size(); ++i)
      sub_hosts_.push_back(host(s_.sub_hosts[i], "workers.sub[" + std::to_string(i) + "]"));
    for (const FaultSpec& f : s_.faults) {
      if (!f.host.empty()) host(f.host, f.path + ".host");
      if (!f.link.empty() && !sg4::Link::by_name_or_null(f.link))
        throw ScenarioError(s_.file, f.path + ".link", "no link '" + f.link + "' in the platform");
    }
    // SimGrid takes a transfer's size as a 64-bit count: a larger one cannot be sent (the cast would
    // be undefined; SimGrid then reports a deadlock).
    for (const CallableSpec& c : s_.callables)
      for (const auto& [what, bytes] : {std::pair{"input_bytes", c.cost.input_bytes}, {"output_bytes", c.cost.output_bytes}})
        if (!(bytes < 0x1p64))
          throw ScenarioError(s_.file, "callables." + c.name + "." + what,
                              human_number(bytes) + " bytes: more than SimGrid can send (2^64-1)");
    faults_ = s_.faults;
    std::stable_sort(faults_.begin(), faults_.end(),
                     [](const FaultSpec& a, const FaultSpec& b) { return a.off_at_s < b.off_at_s; });
    for (sg4::Host* h : nl_hosts_) run_.result.host_of_worker.push_back(h->get_name());
    prep_end_.assign(nl_hosts_.size(), 0);
  }

  // False when SimGrid ended the run before the scheduler actor did (a deadlock: activities that can
  // never complete), or the simulated clock overflowed.
  bool finished() const { return finished_; }
  bool clock_overflow() const { return clock_overflow_; }  // the clock passed kMaxClockS
  std::size_t activities_left() const { return acts_.size() + timers_.size(); }
  double last_instant() const { return last_instant_; }
  // Cancels what is still in flight after such an end, so that nothing complains on destruction.
  void abandon() {
    for (sg4::ActivityPtr& a : acts_) {
      try {
        a->cancel();
      } catch (const std::exception&) {
      }
    }
  }

  void setup_core() {
    replay_ = std::make_unique<Replay>(s_, *run_.core);
    lanes_ = std::make_unique<MpiLanes>(run_.core->registry(), s_.switches[Switch::kMpiGroupLane]);
  }
  const std::string& trace_error() const { return replay_->trace_error(); }

  void main_loop() {
    wall_start_ = std::chrono::steady_clock::now();
    InstantLoop<Driver> loop(*this, *run_.core, *replay_);
    const LoopEnd end = loop.run(run_.result.violation);
    last_instant_ = loop.last_instant();
    if (end == LoopEnd::kClockOverflow) {  // a cost the platform makes too long (a slow link or host)
      clock_overflow_ = true;
      return;
    }
    finish();
  }

  // The instant loop's engine (dirsched/instant_loop.hpp): SimGrid's clock passes while the actor sleeps
  // or waits for an activity; transfers and computations end on their own; hosts and links fail.
  double next_timer() const { return timers_.empty() ? kInf : timers_.top().end; }
  double next_fault() const { return next_fault_ < faults_.size() ? faults_[next_fault_].off_at_s : kInf; }
  bool busy() const { return !acts_.empty(); }
  double pass_time(double t_next) {
    const double now = sg4::Engine::get_clock();
    if (acts_.empty()) {
      if (t_next > now) sg4::this_actor::sleep_until(t_next);
    } else {
      try {
        sg4::Activity::wait_any_for(acts_, t_next == kInf ? -1.0 : std::max(0.0, t_next - now));
      } catch (const simgrid::Exception&) {
        // A transfer failed; ends_due() finds which one.
      }
    }
    return sg4::Engine::get_clock();
  }
  void ends_due(double instant) { collect_finished(instant); }
  std::vector<MemberEnd>& due() { return due_; }
  void after_instant(double instant) { report_progress(instant); }

 private:
  struct Flight {
    TaskId task;
    std::uint32_t member;
    std::uint32_t host;  // index into hosts: NEXT_LEVEL registration index, or nl count + SUB index
    int stage = 0;       // 0: input transfer, 1: compute, 2: collective, 3: output transfer
    double duration = 0;
    // Preparation (prepare_s, staging #1583): before stage 0 the member prepares on its worker until
    // prepare_until (absolute). A staged member (a staging, not yet activated) waits in flights_ and
    // starts at its activation; with prepare_overlap (#1587) it prepared from prepared_at - prepare_s.
    double prepare = 0, prepare_until = 0, prepared_at = 0;
    bool prepared = false, staged = false;
    double flops = 0;
    double in_bytes = 0, out_bytes = 0;
    bool fail = false;
    sg4::ActivityPtr activity;
  };
  struct Timer {
    double end;
    std::uint64_t seq;
    bool operator>(const Timer& o) const { return end != o.end ? end > o.end : seq > o.seq; }
  };
  using Due = MemberEnd;  // a member end waiting for its instant

  sg4::Host* host_of(const Flight& f) const {
    return f.host < nl_hosts_.size() ? nl_hosts_[f.host] : sub_hosts_[f.host - nl_hosts_.size()];
  }

  // --- carrying out dispatches ---
  // The iterations of the instant. With a scheduler cost, each iteration keeps the scheduler busy
  // (iteration_cost_s, then dispatch_cost_s before each dispatch goes out); completions that come due
  // meanwhile are applied by the next iteration.
  auto carry_out() {
    const bool costly = scheduler_costly();
    return [this, costly](const std::vector<Dispatch>& ds) {
      if (costly) {
        if (s_.iteration_cost_s > 0) sg4::this_actor::sleep_for(s_.iteration_cost_s);
        for (const Dispatch& d : ds) {
          // A staging is a dispatch decision and pays its cost; an activation pays nothing.
          if (const double cost = dispatch_cost(d); cost > 0 && !d.activate) sg4::this_actor::sleep_for(cost);
          start(d);
        }
        const double clock = sg4::Engine::get_clock();
        run_.core->set_time(clock);
        collect_finished(clock);
      } else {
        for (const Dispatch& d : ds) start(d);
      }
      run_.core->report_instant(due_);  // ends that came due at once: the next iteration
    };
  }

  bool scheduler_costly() const {
    return s_.iteration_cost_s > 0 || s_.dispatch_cost_s > 0 || s_.any_dispatch_cost_by_kind();
  }
  // What sending d costs the scheduler: scheduler.dispatch_cost_by_kind_s for its target's kind, else
  // dispatch_cost_s.
  double dispatch_cost(const Dispatch& d) const {
    if (d.target.sub) return s_.dispatch_cost_for(3);
    const std::size_t index = *run_.core->registry().index_of(d.target.worker);
    return s_.dispatch_cost_for(static_cast<std::size_t>(s_.next_level[index].kind));
  }

  // The clock a member's timers count from (SimGrid's under scheduler costs, else the instant's).
  double timer_base() const { return scheduler_costly() ? sg4::Engine::get_clock() : run_.core->now(); }

  void start(const Dispatch& d) {
    if (d.activate) {
      activate(d);
      return;
    }
    const CallableSpec& c = s_.callables[run_.core->callable(d.task).index()];
    Flight f;
    f.task = d.task;
    f.member = d.member;
    f.host = d.target.sub ? static_cast<std::uint32_t>(nl_hosts_.size() + d.target.sub_index)
                          : *run_.core->registry().index_of(d.target.worker);
    f.fail = replay_->member_fails(d.task, d.member);
    // jitter.hpp: the draws of this member (keyed by its task's identity), the same on every engine
    const DrawnCost cost = draw_cost(c.cost, replay_->member_duration(d.task, d.member),
                                     MemberDraws(seed_, replay_->task_key(d.task), d.member));
    if (cost.seconds)
      f.duration = *cost.seconds;
    else if (c.cost.flops)
      f.flops = *c.cost.flops * cost.factor;
    f.in_bytes = c.cost.input_bytes;
    f.out_bytes = c.cost.output_bytes;
    f.prepare = replay_->member_prepare(d.task, d.member);
    ++run_.result.dispatches;
    if (keep_dispatch_order_) run_.result.dispatch_order.push_back(dispatch_label(*run_.core, d));
    if (d.prepare_only) {  // staged: held until its activation (a staged member never runs before)
      note_staging(run_, d);
      f.staged = true;
      if (s_.next_level[f.host].prepare_overlap)  // prepares from now, after the running one's preparation
        f.prepared_at = std::max(timer_base(), prep_end_[f.host]) + f.prepare;
      flights_.insert(d.seq, std::move(f));
      return;
    }
    f.prepare_until = timer_base() + f.prepare;
    if (!d.target.sub) prep_end_[f.host] = f.prepare_until;
    Flight& flight = flights_.insert(d.seq, std::move(f));
    // Into its MPI group's lane first (mpi_group_lane), so that a member lost at once leaves it as any
    // lost member does: the others of a whole-group request still end together.
    const bool starts = !lanes_->enabled() || lanes_->dispatched(*run_.core, d);
    if (off_hosts_.count(host_of(flight))) {  // a dispatch to an off host fails at once
      lose_member(d.seq, flight);  // its collective, if any, fails with it
      lose(d.seq);
      return;
    }
    if (!starts) return;  // waits in its lane
    advance(d.seq, flight);
  }

  // mpi_group_lane: members their lane lets start now (held since their dispatch); one whose host went
  // off meanwhile fails at once.
  void release(const std::vector<std::uint64_t>& seqs) {
    for (std::uint64_t seq : seqs) {
      Flight* f = flights_.find(seq);
      if (!f) continue;
      if (off_hosts_.count(host_of(*f))) {
        lose(seq);
        continue;
      }
      f->prepare_until = timer_base() + f->prepare;
      advance(seq, *f);
    }
  }

  // A staged member starts: it prepares (what is left of it under prepare_overlap), then runs.
  void activate(const Dispatch& d) {
    Flight& f = flights_.at(d.seq);
    f.staged = false;
    const double now = timer_base();
    f.prepare_until = s_.next_level[f.host].prepare_overlap ? std::max(now, f.prepared_at) : now + f.prepare;
    prep_end_[f.host] = f.prepare_until;
    if (off_hosts_.count(host_of(f))) {  // its host went off while it was staged: it fails at once
      lose_member(d.seq, f);
      end(d.seq, Outcome::kFailure);
      return;
    }
    advance(d.seq, f);
  }

  // Starts the member's next stage with a cost, or reports it done.
  void advance(std::uint64_t seq, Flight& f) {
    if (!f.prepared) {  // its preparation first (prepare_s; nothing to wait for when 0)
      f.prepared = true;
      if (f.prepare_until > timer_base()) {
        timers_.push({f.prepare_until, seq});
        return;
      }
    }
    while (f.stage < 4) {
      const int stage = f.stage++;
      if (stage == 2 && joins_collective(f)) {
        arrive(seq, f);  // waits for the group's other members, then for the exchange
        return;
      }
      try {
        if ((stage == 0 && f.in_bytes > 0) || (stage == 3 && f.out_bytes > 0)) {
          if (route_is_off(host_of(f))) break;  // a transfer over a link that is off fails at once
        }
        if (stage == 0 && f.in_bytes > 0) {
          track(seq, f,
                sg4::Comm::sendto_async(scheduler_host_, host_of(f), static_cast<std::uint64_t>(f.in_bytes)));
          return;
        }
        if (stage == 1 && f.flops > 0) {
          track(seq, f, host_of(f)->exec_async(f.flops));
          return;
        }
        if (stage == 1 && f.duration > 0) {
          timers_.push({timer_base() + f.duration, seq});
          return;
        }
        if (stage == 3 && f.out_bytes > 0) {
          track(
              seq, f,
              sg4::Comm::sendto_async(host_of(f), scheduler_host_, static_cast<std::uint64_t>(f.out_bytes)));
          return;
        }
      } catch (const simgrid::Exception&) {
        end(seq, Outcome::kFailure);  // e.g. a route through a link that is off
        return;
      }
    }
    end(seq, f.fail || f.stage < 4 ? Outcome::kFailure : Outcome::kSuccess);
  }

  // --- collectives (docs/simulation.md, "Collectives") ---
  // The members of a group whose callable declares a collective meet after computing: when the last
  // one arrives the exchange runs step by step (a step ends when all its transfers have), then every
  // member goes on to its output transfer. Two members on one host exchange at no cost (the platform
  // models no link inside a host). A member lost to a fault fails the collective: the members waiting
  // in it fail at once, those still computing when they arrive.
  struct CollectiveRun {
    std::vector<std::uint64_t> waiting;  // seqs of the members that arrived
    std::uint32_t members = 0, arrived = 0, lost = 0;
    std::size_t step = 0, pending = 0;
    bool failed = false;
    std::vector<sg4::ActivityPtr> comms;                    // the transfers of the current step
    std::vector<std::pair<sg4::Host*, sg4::Host*>> routes;  // their ends
  };
  static constexpr std::uint64_t kCollectiveComm = std::uint64_t{1} << 63;  // act_seq_ mark: TaskId below

  bool joins_collective(const Flight& f) const {
    const CallableSpec& c = s_.callables[run_.core->callable(f.task).index()];
    return c.cost.collective.kind != Collective::Kind::kNone && run_.core->members(f.task) > 1;
  }

  void arrive(std::uint64_t seq, const Flight& f) {
    const std::uint32_t task = f.task.index();  // end() below frees `f`
    CollectiveRun& c = collectives_[task];
    c.members = run_.core->members(f.task);
    if (c.failed) {
      end(seq, Outcome::kFailure);
      ++c.lost;
      settle_collective(task);
      return;
    }
    c.waiting.push_back(seq);
    if (++c.arrived == c.members) run_steps(task);
  }

  // Starts the collective's next step with a transfer, or, all steps done, lets its members go on.
  void run_steps(std::uint32_t task) {
    CollectiveRun& c = collectives_.at(task);
    const Flight& any = flights_.at(c.waiting.front());
    const Collective& spec = s_.callables[run_.core->callable(any.task).index()].cost.collective;
    std::vector<sg4::Host*> host(c.members, nullptr);
    for (std::uint64_t seq : c.waiting) {
      const Flight& f = flights_.at(seq);
      host[f.member] = host_of(f);
    }
    const std::size_t steps = collective::steps(spec.kind, c.members);
    while (c.step < steps) {
      c.comms.clear();
      c.routes.clear();
      try {
        for (const auto& [from, to, bytes] : collective::sends(spec.kind, c.members, c.step, spec.bytes)) {
          // One host: nothing crosses a link. 0 bytes: the members only meet (SimGrid never ends a
          // 0-byte host-to-host comm: it would deadlock).
          if (host[from] == host[to] || !(bytes > 0)) continue;
          if (link_is_off(host[from], host[to])) throw simgrid::Exception(XBT_THROW_POINT, "link off");
          sg4::ActivityPtr comm = sg4::Comm::sendto_async(host[from], host[to], static_cast<std::uint64_t>(bytes));
          c.comms.push_back(comm);
          c.routes.emplace_back(host[from], host[to]);
          act_pos_[comm.get()] = acts_.size();
          acts_.push_back(comm);
          act_seq_.push_back(kCollectiveComm | task);
        }
      } catch (const simgrid::Exception&) {
        fail_collective(task);
        return;
      }
      c.pending = c.comms.size();
      if (c.pending > 0) return;
      ++c.step;
    }
    std::vector<std::uint64_t> go = c.waiting;
    collectives_.erase(task);
    for (std::uint64_t seq : go) advance(seq, flights_.at(seq));
  }

  void comm_done(std::uint32_t task, bool finished) {
    auto it = collectives_.find(task);
    if (it == collectives_.end() || it->second.failed) return;
    if (!finished) {
      fail_collective(task);
      return;
    }
    if (--it->second.pending == 0) {
      ++it->second.step;
      run_steps(task);
    }
  }

  // The members waiting fail now; the others when they arrive. The transfers in flight are cancelled.
  void fail_collective(std::uint32_t task) {
    CollectiveRun& c = collectives_.at(task);
    c.failed = true;
    for (sg4::ActivityPtr& a : c.comms) {
      auto pos = act_pos_.find(a.get());
      if (pos == act_pos_.end()) continue;
      a->cancel();
      untrack(pos->second);
    }
    c.comms.clear();
    c.routes.clear();
    for (std::uint64_t seq : c.waiting) {
      end(seq, Outcome::kFailure);
      ++c.lost;
    }
    c.waiting.clear();
    settle_collective(task);
  }

  // A failed collective is forgotten once every member has arrived or was lost.
  void settle_collective(std::uint32_t task) {
    auto it = collectives_.find(task);
    if (it != collectives_.end() && it->second.failed && it->second.lost >= it->second.members) collectives_.erase(it);
  }

  // Member `seq`, lost to a fault (the caller ends it), leaves its collective failed. Before its
  // collective stage it has not arrived yet: the collective learns of it here all the same.
  void lose_member(std::uint64_t seq, const Flight& f) {
    if (!joins_collective(f)) return;
    const std::uint32_t task = f.task.index();
    CollectiveRun& c = collectives_[task];
    c.members = run_.core->members(f.task);
    c.waiting.erase(std::remove(c.waiting.begin(), c.waiting.end(), seq), c.waiting.end());
    ++c.lost;
    if (!c.failed)
      fail_collective(task);
    else
      settle_collective(task);
  }

  // A link fault: a collective with a transfer in flight over that link fails (SimGrid would end the
  // transfer as finished).
  void fail_collectives_over_off_links() {
    std::vector<std::uint32_t> hit;
    for (const auto& [task, c] : collectives_)
      for (const auto& [from, to] : c.routes)
        if (link_is_off(from, to)) {
          hit.push_back(task);
          break;
        }
    for (std::uint32_t task : hit) fail_collective(task);
  }

  bool link_is_off(sg4::Host* from, sg4::Host* to) const {
    if (off_links_.empty()) return false;
    std::vector<sg4::Link*> links;
    double latency = 0;
    from->route_to(to, links, &latency);
    for (sg4::Link* l : links)
      if (off_links_.count(l)) return true;
    return false;
  }

  // SimGrid 3.32 ends a host-to-host comm as FINISHED when a link of its route turns off, so the
  // driver tracks off links itself: a transfer on a route with an off link fails.
  bool route_is_off(sg4::Host* worker_host) const {
    if (off_links_.empty()) return false;
    std::vector<sg4::Link*> links;
    double latency = 0;
    scheduler_host_->route_to(worker_host, links, &latency);
    for (sg4::Link* l : links)
      if (off_links_.count(l)) return true;
    return false;
  }

  void track(std::uint64_t seq, Flight& f, sg4::ActivityPtr a) {
    f.activity = a;
    act_pos_[a.get()] = acts_.size();
    acts_.push_back(a);
    act_seq_.push_back(seq);
  }

  void untrack(std::size_t i) {
    act_pos_.erase(acts_[i].get());
    if (i + 1 != acts_.size()) {
      acts_[i] = acts_.back();
      act_seq_[i] = act_seq_.back();
      act_pos_[acts_[i].get()] = i;
    }
    acts_.pop_back();
    act_seq_.pop_back();
  }

  // A member ended: reported at its instant, unless its MPI group's lane holds the ends of a whole-group
  // request until its slowest member (mpi_group_lane); the lane's next request starts.
  void end(std::uint64_t seq, Outcome outcome) {
    const Flight& f = flights_.at(seq);
    const MemberEnd e{seq, f.task, f.member, outcome};
    flights_.erase(seq);
    if (!lanes_->enabled()) {
      due_.push_back(e);
      return;
    }
    std::vector<std::uint64_t> start;
    lanes_->finished(e, due_, start);
    release(start);
  }

  // A member lost to a host fault, held in its lane or running: it fails now, whatever its lane holds.
  void lose(std::uint64_t seq) {
    const Flight& f = flights_.at(seq);
    due_.push_back({seq, f.task, f.member, Outcome::kFailure});
    flights_.erase(seq);
    if (!lanes_->enabled()) return;
    std::vector<std::uint64_t> start;
    lanes_->lost(seq, due_, start);
    release(start);
  }

  // Finished or failed activities, and timers due by `instant`: their members advance a stage.
  void collect_finished(double instant) {
    while (!acts_.empty()) {
      ssize_t i = -1;
      bool failed = false;
      try {
        i = sg4::Activity::test_any(acts_);
      } catch (const simgrid::Exception&) {
        failed = true;
      }
      if (failed) {
        // Find the failed one by testing each; a test that throws names it.
        for (std::size_t k = 0; k < acts_.size(); ++k) {
          bool bad = false;
          try {
            acts_[k]->test();
          } catch (const simgrid::Exception&) {
            bad = true;
          }
          if (bad) {
            const std::uint64_t seq = act_seq_[k];
            untrack(k);
            if (seq & kCollectiveComm)
              comm_done(static_cast<std::uint32_t>(seq & ~kCollectiveComm), false);
            else
              end(seq, Outcome::kFailure);
            break;
          }
        }
        continue;
      }
      if (i < 0) break;
      const std::uint64_t seq = act_seq_[static_cast<std::size_t>(i)];
      const bool finished = acts_[static_cast<std::size_t>(i)]->get_state() == sg4::Activity::State::FINISHED;
      untrack(static_cast<std::size_t>(i));
      if (seq & kCollectiveComm)
        comm_done(static_cast<std::uint32_t>(seq & ~kCollectiveComm), finished);
      else if (finished)
        advance(seq, flights_.at(seq));
      else
        end(seq, Outcome::kFailure);
    }
    // Timers due now.
    while (!timers_.empty() && timers_.top().end <= instant + kSameInstant) {
      const Timer t = timers_.top();
      timers_.pop();
      Flight* f = flights_.find(t.seq);
      if (!f) continue;  // its host went off
      advance(t.seq, *f);
    }
  }

  // --- one instant (the loop's step 1: the faults due now) ---
  // A member whose completion is due at this very instant is still running when its host goes off, so
  // it fails.
  void faults_due(double instant) {
    while (next_fault_ < faults_.size() && faults_[next_fault_].off_at_s <= instant + kSameInstant) {
      const FaultSpec& f = faults_[next_fault_++];
      std::vector<std::uint64_t> lost;
      if (!f.link.empty()) {
        sg4::Link* link = sg4::Link::by_name(f.link);
        link->turn_off();
        off_links_.insert(link);
        // Members moving bytes over it now fail; computing members are not affected.
        for (std::uint64_t seq : flights_.keys()) {
          const Flight& fl = flights_.at(seq);
          if (fl.activity && (fl.stage == 1 || fl.stage == 4) && route_is_off(host_of(fl)))
            lost.push_back(seq);
        }
        fail_collectives_over_off_links();
      } else {
        sg4::Host* h = sg4::Host::by_name(f.host);
        off_hosts_.insert(h);
        for (std::uint64_t seq : flights_.keys()) {
          const Flight& fl = flights_.at(seq);
          if (host_of(fl) == h && !fl.staged) lost.push_back(seq);  // a staged one fails at its activation
        }
      }
      for (std::uint64_t seq : lost) {
        Flight* lost_flight = flights_.find(seq);
        if (!lost_flight) continue;  // failed with its collective already
        Flight& fl = *lost_flight;
        lose_member(seq, fl);
        if (!flights_.contains(seq)) continue;
        if (fl.activity) {
          auto pos = act_pos_.find(fl.activity.get());
          if (pos != act_pos_.end()) {
            fl.activity->cancel();
            untrack(pos->second);
          }
        }
        lose(seq);
      }
    }
  }

  void report_progress(double instant) {
    if (!progress_) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_progress_ < std::chrono::milliseconds(250)) return;
    last_progress_ = now;
    char detail[160];
    std::snprintf(detail, sizeof detail, "t=%.6g s  tasks live %zu  running %zu", instant,
                  run_.core->non_terminal_tasks(), run_.core->running_members());
    Progress::get().set_total(static_cast<double>(replay_->op_count()), "ops");
    Progress::get().update(static_cast<double>(replay_->position()), detail);
  }

  void finish() {
    finished_ = true;
    finish_result(run_, *replay_, checker_);
    run_.result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
  }

  // The dispatch order ("task@worker" per dispatch) is kept only for an expect block that checks it:
  // nothing else reads it, and it costs a string per dispatch.
  static bool wants_dispatch_order(const Scenario& s) { return expect_reads_dispatch_order(s); }

  Run& run_;
  const Scenario& s_;
  std::uint64_t seed_;  // of the members' draws (jitter.hpp)
  bool progress_;
  InvariantChecker* checker_;
  bool keep_dispatch_order_;
  bool finished_ = false;
  bool clock_overflow_ = false;
  double last_instant_ = 0;
  std::chrono::steady_clock::time_point wall_start_, last_progress_;

  sg4::Host* scheduler_host_ = nullptr;
  std::vector<sg4::Host*> nl_hosts_, sub_hosts_;
  std::vector<FaultSpec> faults_;
  std::size_t next_fault_ = 0;
  std::set<sg4::Host*> off_hosts_;
  std::set<sg4::Link*> off_links_;
  std::unique_ptr<Replay> replay_;
  std::unique_ptr<MpiLanes> lanes_;  // mpi_group_lane (#1624): when a rank's member starts and ends

  KeyedPool<Flight> flights_;  // by dispatch seq
  std::vector<double> prep_end_;             // per NEXT_LEVEL worker: when its last started member's preparation ends
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_;
  std::vector<sg4::ActivityPtr> acts_;
  std::vector<std::uint64_t> act_seq_;
  std::unordered_map<const sg4::Activity*, std::size_t> act_pos_;  // lookup only
  std::vector<Due> due_;
  std::map<std::uint32_t, CollectiveRun> collectives_;  // by TaskId index: groups in a collective
};

}  // namespace

std::unique_ptr<Run> simulate(const Scenario& scenario, const RunOptions& options) {
  // SimGrid aborts on a bad option or platform: a child process meets those first.
  probe_simgrid(scenario, options.simgrid_args);
  auto run = std::make_unique<Run>(scenario);
  const std::uint64_t seed = options.seed.value_or(scenario.seed);
  run->result.seed = seed;

  std::vector<std::string> args = {"dirsched", "--log=root.thres:critical", "--log=no_loc"};
  for (const std::string& a : options.simgrid_args) args.push_back(a);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  sg4::Engine engine(&argc, argv.data());
  try {
    if (scenario.platform.empty())
      build_default_platform(scenario);
    else
      engine.load_platform(scenario.platform);
  } catch (const std::exception& e) {
    throw ScenarioError(scenario.file, "platform",
                        (scenario.platform.empty() ? "the default platform" : scenario.platform) + ": " +
                            std::string(e.what()).substr(0, std::string(e.what()).find('\n')));
  }

  run->core = make_scheduler(scenario);
  // The memory rule, the tasks.csv stream and the observers, as on every engine (RunOutputs).
  RunOutputs outputs(*run, options);

  Driver driver(*run, options, seed, outputs.checker());
  driver.resolve_hosts();
  driver.setup_core();
  sg4::Host* host = sg4::Host::by_name(scenario.scheduler_host);
  sg4::Actor::create("scheduler", host, [&driver]() { driver.main_loop(); });
  engine.run();
  if (!driver.finished()) {
    const std::string left = std::to_string(driver.activities_left()) + " transfer(s), computation(s) or timer(s)";
    std::string why = driver.clock_overflow()
                          ? "the simulated clock passed 2^32 s after t=" + human_number(driver.last_instant()) +
                                " s (a transfer or computation the platform makes too long)"
                          : "SimGrid reported a deadlock at t=" + human_number(driver.last_instant()) + " s: " +
                                left + " can never complete (a transfer or computation too long for SimGrid)";
    driver.abandon();
    outputs.detach();
    throw ScenarioError(scenario.file, scenario.platform.empty() ? "" : "platform",
                        (scenario.platform.empty() ? "" : scenario.platform + ": ") + why);
  }
  if (!driver.trace_error().empty()) {  // a streamed trace file changed under the run
    outputs.detach();
    throw ScenarioError(scenario.file, "", driver.trace_error());
  }
  outputs.finish();
  return run;
}

}  // namespace dirsched
