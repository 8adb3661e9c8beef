#include "dirsched/mpi_lanes.hpp"

#include <algorithm>

#include "dirsched/core_error.hpp"

namespace dirsched {

MpiLanes::MpiLanes(const Registry& registry, bool on) {
  if (!on || registry.mpi_groups().empty()) return;
  lane_of_index_.assign(registry.next_level_count(), -1);
  for (const Registry::MpiGroup& g : registry.mpi_groups()) {
    const auto lane = static_cast<std::int32_t>(lanes_.size());
    for (WorkerId w : g.ranks) lane_of_index_[*registry.index_of(w)] = lane;
    std::vector<WorkerId> sorted = g.ranks;
    std::sort(sorted.begin(), sorted.end(), [](WorkerId a, WorkerId b) { return a.value() < b.value(); });
    ranks_.push_back(std::move(sorted));
    lanes_.emplace_back();
  }
}

bool MpiLanes::dispatched(const Scheduler& core, const Dispatch& d) {
  if (!enabled() || d.target.sub) return true;
  const std::optional<std::uint32_t> index = core.registry().index_of(d.target.worker);
  if (!index || lane_of_index_[*index] < 0) return true;  // not a rank: no lane
  const auto lane = static_cast<std::uint32_t>(lane_of_index_[*index]);
  std::deque<Request>& q = lanes_[lane];
  lane_of_seq_[d.seq] = lane;
  // A group's members are dispatched together (one launch): member 0 opens a whole request, the others
  // join it.
  if (!q.empty() && q.back().whole && q.back().task == d.task) {
    q.back().seqs.push_back(d.seq);
    return q.back().started;
  }
  Request r;
  r.task = d.task;
  if (core.kind(d.task) == TaskKind::kGroup && core.members(d.task) == ranks_[lane].size()) {
    std::vector<WorkerId> targets;
    for (std::uint32_t m = 0; m < core.members(d.task); ++m) targets.push_back(core.target(d.task, m));
    std::sort(targets.begin(), targets.end(), [](WorkerId a, WorkerId b) { return a.value() < b.value(); });
    r.whole = targets == ranks_[lane];
  }
  r.expected = r.whole ? core.members(d.task) : 1;
  r.seqs.push_back(d.seq);
  r.started = q.empty();
  q.push_back(std::move(r));
  return q.back().started;
}

void MpiLanes::finished(const MemberEnd& end, std::vector<MemberEnd>& report, std::vector<std::uint64_t>& start) {
  auto it = lane_of_seq_.find(end.seq);
  if (it == lane_of_seq_.end()) {  // not a rank's member
    report.push_back(end);
    return;
  }
  const std::uint32_t lane = it->second;
  lane_of_seq_.erase(it);
  Request& r = lanes_[lane].front();
  if (!r.started || std::find(r.seqs.begin(), r.seqs.end(), end.seq) == r.seqs.end())
    throw CoreError(CoreErrorCode::kNotRunning, "mpi lane: a member ended that its lane did not start");
  r.ended.push_back(end);
  if (r.ended.size() < r.expected) return;  // a whole request ends with its slowest member
  advance(lane, report, start);
}

void MpiLanes::lost(std::uint64_t seq, std::vector<MemberEnd>& report, std::vector<std::uint64_t>& start) {
  auto it = lane_of_seq_.find(seq);
  if (it == lane_of_seq_.end()) return;
  const std::uint32_t lane = it->second;
  lane_of_seq_.erase(it);
  std::deque<Request>& q = lanes_[lane];
  for (std::size_t i = 0; i < q.size(); ++i) {
    Request& r = q[i];
    auto s = std::find(r.seqs.begin(), r.seqs.end(), seq);
    if (s == r.seqs.end()) continue;
    r.seqs.erase(s);
    --r.expected;
    if (r.ended.size() < r.expected) return;
    if (i == 0 && r.started) {
      advance(lane, report, start);
    } else {  // held, and every member gone: it never runs
      q.erase(q.begin() + static_cast<std::ptrdiff_t>(i));
    }
    return;
  }
}

// The lane's front request is done: its held ends are reported, and the next request starts (a request
// whose members were all lost meanwhile is skipped).
void MpiLanes::advance(std::uint32_t lane, std::vector<MemberEnd>& report, std::vector<std::uint64_t>& start) {
  std::deque<Request>& q = lanes_[lane];
  report.insert(report.end(), q.front().ended.begin(), q.front().ended.end());
  q.pop_front();
  if (q.empty()) return;
  q.front().started = true;
  start.insert(start.end(), q.front().seqs.begin(), q.front().seqs.end());
}

std::size_t MpiLanes::held() const {
  std::size_t n = 0;
  for (const auto& q : lanes_)
    for (const Request& r : q)
      if (!r.started) n += r.seqs.size();
  return n;
}

}  // namespace dirsched
