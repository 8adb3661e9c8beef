#include "dirsched/eventsim.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <queue>
#include <unordered_map>
#include <vector>

#include "dirsched/instant_loop.hpp"
#include "dirsched/jitter.hpp"
#include "dirsched/mpi_lanes.hpp"
#include "dirsched/replay.hpp"

namespace dirsched {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The SimGrid driver's engine (sim/src/sim.cpp) with its only activity, a member's duration, as a
// timer; both run the one instant loop (dirsched/instant_loop.hpp). Each step below names the step of
// sim.cpp it mirrors (the byte-identity test on the shipped scenarios fails where they part).
class EventDriver {
 public:
  EventDriver(Run& run, std::uint64_t seed, bool keep_order)
      : run_(run),
        s_(run.scenario),
        seed_(seed),
        keep_order_(keep_order),
        replay_(s_, *run.core),
        lanes_(run.core->registry(), s_.switches[Switch::kMpiGroupLane]),
        loop_(*this, *run.core, replay_) {}

  void run() { clock_overflow_ = loop_.run(run_.result.violation) == LoopEnd::kClockOverflow; }

  // The instant loop's engine: time jumps to the next instant (a clock never goes back); no faults, no
  // activity ends on its own.
  double next_timer() const { return timers_.empty() ? kInf : timers_.top().end; }
  double next_fault() const { return kInf; }
  bool busy() const { return false; }
  double pass_time(double t_next) {
    clock_ = std::max(clock_, t_next);
    return clock_;
  }
  void faults_due(double) {}
  std::vector<MemberEnd>& due() { return due_; }
  void after_instant(double) {}

  // Driver::collect_finished without activities: the timers due now, a preparation's or a duration's.
  void ends_due(double instant) {
    while (!timers_.empty() && timers_.top().end <= instant + kSameInstant) {
      const Timer t = timers_.top();
      timers_.pop();
      Member& m = members_.at(t.seq);
      if (m.preparing) {
        m.preparing = false;
        run_member(t.seq, m);
      } else {
        end(t.seq);
      }
    }
  }

  // Driver::carry_out without scheduler costs: start each dispatch; the ends that came due at once
  // are reported for the next iteration.
  auto carry_out() {
    return [this](const std::vector<Dispatch>& ds) {
      for (const Dispatch& d : ds) start(d);
      run_.core->report_instant(due_);
    };
  }

  Replay& replay() { return replay_; }
  bool clock_overflow() const { return clock_overflow_; }
  double last_instant() const { return loop_.last_instant(); }

 private:
  // A member's preparation (prepare_s, staging #1583) then its duration, each a timer, as on SimGrid;
  // a staged member waits here until its activation.
  struct Member {
    TaskId task;
    std::uint32_t member;
    bool fail;
    double duration = 0, prepare = 0, prepared_at = 0;
    std::uint32_t worker = 0;  // NEXT_LEVEL registration index (staging only)
    bool preparing = false, staged = false;
  };
  struct Timer {
    double end;
    std::uint64_t seq;
    bool operator>(const Timer& o) const { return end != o.end ? end > o.end : seq > o.seq; }
  };

  // Driver::start and advance: the same draws (draw_cost, keyed by the member's identity), a timer for a positive duration, an end at once otherwise.
  void start(const Dispatch& d) {
    if (d.activate) {  // Driver::activate: what is left of its preparation, then its duration
      Member& m = members_.at(d.seq);
      m.staged = false;
      const double now = run_.core->now();
      const double until = s_.next_level[m.worker].prepare_overlap ? std::max(now, m.prepared_at) : now + m.prepare;
      prep_end_[m.worker] = until;
      prepare_then_run(d.seq, m, until);
      return;
    }
    const CallableSpec& c = s_.callables[run_.core->callable(d.task).index()];
    const double duration = draw_cost(c.cost, replay_.member_duration(d.task, d.member),
                                      MemberDraws(seed_, replay_.task_key(d.task), d.member))
                                .seconds.value_or(0.0);
    ++run_.result.dispatches;
    if (keep_order_) run_.result.dispatch_order.push_back(dispatch_label(*run_.core, d));
    Member& m = members_.emplace(d.seq, Member{d.task, d.member, replay_.member_fails(d.task, d.member)}).first->second;
    m.duration = duration;
    m.prepare = replay_.member_prepare(d.task, d.member);
    if (!d.target.sub) m.worker = *run_.core->registry().index_of(d.target.worker);
    const double now = run_.core->now();
    if (d.prepare_only) {
      note_staging(run_, d);
      m.staged = true;
      if (s_.next_level[m.worker].prepare_overlap) m.prepared_at = std::max(now, prep_end_[m.worker]) + m.prepare;
      return;
    }
    if (!d.target.sub) prep_end_[m.worker] = now + m.prepare;
    if (lanes_.enabled() && !lanes_.dispatched(*run_.core, d)) return;  // Driver::start: waits in its lane
    prepare_then_run(d.seq, m, now + m.prepare);
  }

  void prepare_then_run(std::uint64_t seq, Member& m, double prepare_until) {
    if (prepare_until > run_.core->now()) {
      m.preparing = true;
      timers_.push({prepare_until, seq});
      return;
    }
    run_member(seq, m);
  }

  void run_member(std::uint64_t seq, Member& m) {
    if (m.duration > 0)
      timers_.push({run_.core->now() + m.duration, seq});
    else
      end(seq);
  }

  // Driver::end and release: the lane (mpi_group_lane) may hold the end and start its next request.
  void end(std::uint64_t seq) {
    const auto it = members_.find(seq);
    const Member& m = it->second;
    const MemberEnd e{seq, m.task, m.member, m.fail ? Outcome::kFailure : Outcome::kSuccess};
    members_.erase(it);
    if (!lanes_.enabled()) {
      due_.push_back(e);
      return;
    }
    std::vector<std::uint64_t> start;
    lanes_.finished(e, due_, start);
    for (std::uint64_t s : start) {
      Member& held = members_.at(s);
      prepare_then_run(s, held, run_.core->now() + held.prepare);
    }
  }

  Run& run_;
  const Scenario& s_;
  std::uint64_t seed_;  // of the members' draws (jitter.hpp)
  bool keep_order_;
  Replay replay_;
  MpiLanes lanes_;  // mpi_group_lane (#1624)
  InstantLoop<EventDriver> loop_;
  double clock_ = 0;
  bool clock_overflow_ = false;
  std::unordered_map<std::uint64_t, Member> members_;  // running, by dispatch seq
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers_;
  std::vector<MemberEnd> due_;
  std::vector<double> prep_end_ = std::vector<double>(s_.next_level.size(), 0.0);  // Driver::prep_end_
};

}  // namespace

std::optional<std::string> event_engine_refusal(const Scenario& s) {
  const auto why = [](const std::string& path, const std::string& what) { return path + ": " + what; };
  if (!s.platform.empty()) return why("platform", "a platform file (only SimGrid reads its hosts)");
  if (!s.faults.empty()) return why(s.faults.front().path, "a fault");
  if (s.iteration_cost_s > 0) return why("scheduler.iteration_cost_s", "a scheduler cost");
  if (s.dispatch_cost_s > 0) return why("scheduler.dispatch_cost_s", "a scheduler cost");
  if (s.any_dispatch_cost_by_kind()) return why("scheduler.dispatch_cost_by_kind_s", "a scheduler cost");
  for (const CallableSpec& c : s.callables) {
    const std::string path = "callables." + c.name;
    if (c.cost.flops) return why(path + ".flops", "a cost in flops");
    if (c.cost.input_bytes > 0) return why(path + ".input_bytes", "a transfer");
    if (c.cost.output_bytes > 0) return why(path + ".output_bytes", "a transfer");
    if (c.cost.collective.kind != Collective::Kind::kNone) return why(path + ".collective", "a collective");
  }
  return std::nullopt;
}

std::unique_ptr<Run> run_events(const Scenario& scenario, const EventRunOptions& options) {
  if (const std::optional<std::string> why = event_engine_refusal(scenario)) {
    const auto colon = why->find(": ");
    throw ScenarioError(scenario.file, why->substr(0, colon),
                        why->substr(colon + 2) + " needs SimGrid: the event engine cannot run it (use --engine sim)");
  }
  auto run = std::make_unique<Run>(scenario);
  const std::uint64_t seed = options.seed.value_or(scenario.seed);
  run->result.seed = seed;
  run->result.engine = "event";
  for (const WorkerSpec& w : scenario.next_level) run->result.host_of_worker.push_back(w.host);
  run->core = make_scheduler(scenario);
  RunOutputs outputs(*run, options);  // as on SimGrid: the memory rule, tasks.csv, the observers
  const auto wall_start = std::chrono::steady_clock::now();
  EventDriver driver(*run, seed, outputs.keep_order());
  driver.run();
  if (driver.clock_overflow()) {
    outputs.detach();
    throw ScenarioError(scenario.file, "",
                        "the simulated clock passed 2^32 s after t=" + human_number(driver.last_instant()) + " s");
  }
  finish_result(*run, driver.replay(), outputs.checker());
  run->result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (!driver.replay().trace_error().empty()) {  // a streamed trace file changed under the run
    outputs.detach();
    throw ScenarioError(scenario.file, "", driver.replay().trace_error());
  }
  outputs.finish();
  return run;
}

}  // namespace dirsched
