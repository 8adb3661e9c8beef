#pragma once
// mpi_group_lane (#1624): each MPI group (workers.mpi_groups) executes one request at a time.
//
// A member dispatched to a rank is a request of its group's lane; requests run one after another in
// dispatch order (a queue: upstream's lane is a mutex, the order it grants is not settled). A group task
// whose workers are exactly an MPI group's ranks (in any order) is one request: its members start together
// when the lane frees and all of them end when the slowest ends. Every other member on a rank (a single,
// a member of a group that is a subset or superset of the ranks) is a request of its own. The scheduler
// sees each rank busy from dispatch to its member's end, waiting in the lane included: nothing here
// changes the core, only when a driver starts a member and when it reports its end.
//
// Sans-IO, as the core: the drivers (SimGrid, the event engine) ask it. With the switch off, or no MPI
// group declared, every member starts at its dispatch and every end is reported as it happens.
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "dirsched/scheduler.hpp"

namespace dirsched {

class MpiLanes {
 public:
  MpiLanes(const Registry& registry, bool on);
  // The switch is on and some MPI group exists: the drivers ask the other functions.
  bool enabled() const { return !lanes_.empty(); }
  // Member `d` was dispatched (a staging never is: staged members are local). True when it starts now;
  // false when its lane holds it: a later finished() or lost() names it in `start`.
  bool dispatched(const Scheduler& core, const Dispatch& d);
  // Member `end.seq` finished executing. The ends to report now are appended to `report`: this one, or
  // none while its whole-group request waits for its slowest member (then every member's). The seqs of
  // held members that start now are appended to `start`.
  void finished(const MemberEnd& end, std::vector<MemberEnd>& report, std::vector<std::uint64_t>& start);
  // Member `seq` was lost (a host fault), held or running; the driver reports its failure itself. The
  // lane forgets it; what that completes or frees goes to `report` and `start` as above.
  void lost(std::uint64_t seq, std::vector<MemberEnd>& report, std::vector<std::uint64_t>& start);
  // Members held in some lane (dispatched, not started).
  std::size_t held() const;

 private:
  struct Request {
    TaskId task;
    bool whole = false;              // the group task on exactly the MPI group's ranks
    std::uint32_t expected = 1;      // members still to end (a lost one leaves)
    std::vector<std::uint64_t> seqs;  // its members' dispatch seqs
    std::vector<MemberEnd> ended;     // whole: ends held until the slowest
    bool started = false;
  };
  void advance(std::uint32_t lane, std::vector<MemberEnd>& report, std::vector<std::uint64_t>& start);

  std::vector<std::int32_t> lane_of_index_;           // registration index -> lane, or -1
  std::vector<std::vector<WorkerId>> ranks_;          // per lane (sorted): a whole request names exactly these
  std::vector<std::deque<Request>> lanes_;            // per MPI group; empty when the switch is off
  std::unordered_map<std::uint64_t, std::uint32_t> lane_of_seq_;  // lookup only, never iterated
};

}  // namespace dirsched
