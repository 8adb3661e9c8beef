// The instant loop of the simulated engines: the SimGrid driver (sim/) and the event engine (eventsim/)
// both run this, and differ only in how time passes and how members' activities end (SimGrid's actors,
// transfers and faults; a heap of timers). What happens at one instant is said here once
// (docs/instant-rules.md):
//   0. the instant is the earliest of the next timer, fault, op and stall report, snapped to its nominal
//      time when the engine's clock reads within kSameInstant of it;
//   1. the faults due now (a member whose end is due at this very instant is still running, so it fails);
//   2. the member ends due now, applied in the instant's order with its iterations (complete_instant);
//   3. the orchestrator's ops due now, one at a time, each followed by the iterations (run_instant).
// An invariant violation stops the loop where it is; so does a clock past kMaxClockS.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "dirsched/invariants.hpp"
#include "dirsched/replay.hpp"
#include "dirsched/scheduler.hpp"

namespace dirsched {

inline constexpr double kSameInstant = 1e-9;       // one instant is 1e-9 s wide
inline constexpr double kMaxClockS = 4294967296.0;  // the simulated clock ends at 2^32 s

enum class LoopEnd { kDrained, kViolation, kClockOverflow };

// Engine, the part an engine supplies:
//   double next_timer() const;        the earliest member timer's end, or +inf
//   double next_fault() const;        the next fault's time, or +inf
//   bool busy() const;                activities in flight that end on their own (SimGrid's transfers)
//   double pass_time(double t_next);  lets time pass to t_next, or until an activity ends; the clock then
//   void faults_due(double instant);  step 1
//   void ends_due(double instant);    step 2's ends, into due()
//   std::vector<MemberEnd>& due();
//   auto carry_out();                 the CarryOut of complete_instant and run_instant (starts dispatches)
//   void after_instant(double instant);
template <class Engine>
class InstantLoop {
 public:
  static constexpr double kInf = std::numeric_limits<double>::infinity();

  InstantLoop(Engine& engine, Scheduler& core, Replay& replay) : e_(engine), core_(core), replay_(replay) {}

  // Runs instants until nothing is left to happen; a violation is kept in `violation`.
  LoopEnd run(std::optional<Violation>& violation) {
    while (true) {
      const double t_timer = e_.next_timer();
      const double t_fault = e_.next_fault();
      const double t_op = next_op_time();
      // A stall report is due at an exact moment even when nothing else happens then: wake for it.
      const double t_stall = core_.next_stall_deadline().value_or(kInf);
      const double t_next = std::min({t_timer, t_fault, t_op, t_stall});
      if (!e_.busy() && t_next == kInf) return LoopEnd::kDrained;
      double instant = e_.pass_time(t_next);
      if (!(instant <= kMaxClockS)) return LoopEnd::kClockOverflow;  // a cost too long for the clock
      // Snap to the nominal time of a timer, fault or op due within the same instant, so that a 1 ms
      // duration reads 0.001 in the outputs rather than a rounded clock.
      for (double nominal : {t_timer, t_fault, t_op})
        if (std::abs(nominal - instant) <= kSameInstant) instant = std::max(last_instant_, std::min(instant, nominal));
      // A clock may wake a hair before the deadline; the report belongs to that instant.
      if (std::abs(t_stall - instant) <= kSameInstant) instant = std::max(instant, t_stall);
      last_instant_ = instant;
      core_.set_time(instant);
      try {
        step(instant);
      } catch (const InvariantViolation& v) {
        violation = v.violation;  // the run stops here; the core is left mid-transition
        return LoopEnd::kViolation;
      }
      e_.after_instant(instant);
    }
  }

  double last_instant() const { return last_instant_; }

  // The next op's time: +inf when the trace is done or its next op waits for a drain.
  double next_op_time() const {
    if (!replay_.next()) return kInf;
    return replay_.next_enabled() ? replay_.earliest_start() : kInf;
  }

 private:
  void step(double instant) {
    e_.faults_due(instant);
    e_.ends_due(instant);
    complete_instant(core_, e_.due(), e_.carry_out());
    while (next_op_time() <= instant + kSameInstant)
      if (replay_.run_next(instant)) run_instant(core_, e_.carry_out());
  }

  Engine& e_;
  Scheduler& core_;
  Replay& replay_;
  double last_instant_ = 0;
};

}  // namespace dirsched
