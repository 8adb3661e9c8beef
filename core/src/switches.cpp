// The ladder table and the presets (switches.hpp).
#include "dirsched/switches.hpp"

#include <algorithm>

namespace dirsched {
namespace {

constexpr std::array<SwitchInfo, kSwitchCount> kTable = {{
    {Switch::kGroupReservation, "group_reservation", 1565, "#1565",
     "a blocked group FIFO head holds all its targets against singles"},
    {Switch::kWholeRunFifo, "whole_run_fifo", 1541, "#1541 (with #1460 and #1540)",
     "runs overlap two deep; only the oldest live run dispatches"},
    {Switch::kRunCancellation, "run_cancellation", 1541, "#1541",
     "a raising callback cancels its run's unstarted tasks"},
    {Switch::kStaging, "staging", 1583, "#1583 (timing #1587)",
     "the next run stages one single on a two-frame worker"},
    {Switch::kEdgeTriggeredWake, "edge_triggered_wake", 1612, "#1612", "the loop parks after a pass until a wake"},
    {Switch::kArgGuard, "arg_guard", 1729, "#1729", "overlapping_writes, sub_child_buffer"},
    {Switch::kRegistrationOrderCompletions, "registration_order_completions", 1754, "#1754",
     "one instant's completions apply in registration order"},
    {Switch::kBusyPoll, "busy_poll", 1754, "#1754", "the loop never parks while a member runs or is staged"},
    {Switch::kGroupBarrier, "group_barrier", 1754, "#1754",
     "a group that appears between passes stops the singles pass"},
    {Switch::kMpiGroupCheck, "mpi_group_check", 1624, "#1624", "mpi_group_mixed"},
    {Switch::kMpiGroupLane, "mpi_group_lane", 1624, "#1624", "one request at a time per MPI group"},
    {Switch::kViewDeps, "view_deps", 1902, "#1902", "dependencies by byte range within a buffer"},
}};

// THE list of switches this testbed has not built yet. Remove a name when its switch is built (and
// its rules tested); nothing else refers to it.
// Empty: every switch of the ladder is built. The mechanism stays for the next upstream change.
constexpr std::array<Switch, 0> kNotBuilt = {};

bool table_in_enum_order() {
  for (std::size_t i = 0; i < kSwitchCount; ++i)
    if (static_cast<std::size_t>(kTable[i].id) != i) return false;
  return true;
}

std::optional<unsigned> pr_number(std::string_view text) {
  if (!text.empty() && text.front() == '#') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  // Leading zeros are optional, however many (upto:0000000001565); at most 9 digits after them.
  while (text.size() > 1 && text.front() == '0') text.remove_prefix(1);
  if (text.size() > 9) return std::nullopt;
  unsigned n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<unsigned>(c - '0');
  }
  return n;
}

std::string pr_list() {
  std::string out;
  for (unsigned pr : ladder_prs()) out += (out.empty() ? "" : ", ") + std::to_string(pr);
  return out;
}

// Every switch at or above the last row of PR `pr`.
Switches upto(unsigned pr) {
  std::size_t last = 0;
  for (std::size_t i = 0; i < kSwitchCount; ++i)
    if (kTable[i].pr == pr) last = i;
  Switches s;
  for (std::size_t i = 0; i <= last; ++i) s.set(kTable[i].id, true);
  return s;
}

}  // namespace

const std::array<SwitchInfo, kSwitchCount>& switch_table() {
  static_assert(kTable.size() == kSwitchCount);
  return kTable;
}

const SwitchInfo& switch_info(Switch s) { return kTable[static_cast<std::size_t>(s)]; }

std::string_view to_string(Switch s) { return switch_info(s).name; }

std::optional<Switch> switch_from_string(std::string_view name) {
  for (const SwitchInfo& row : kTable)
    if (row.name == name) return row.id;
  return std::nullopt;
}

std::string known_switch_names() {
  std::string out;
  for (const SwitchInfo& row : kTable) out += (out.empty() ? "" : ", ") + std::string(row.name);
  return out;
}

std::vector<unsigned> ladder_prs() {
  std::vector<unsigned> out;
  for (const SwitchInfo& row : kTable)
    if (std::find(out.begin(), out.end(), row.pr) == out.end()) out.push_back(row.pr);
  return out;
}

bool switch_built(Switch s) {
  return std::find(kNotBuilt.begin(), kNotBuilt.end(), s) == kNotBuilt.end();
}

std::optional<Switch> Switches::first_unbuilt() const {
  for (const SwitchInfo& row : kTable)
    if (on(row.id) && !switch_built(row.id)) return row.id;
  return std::nullopt;
}

std::optional<Switches> preset(std::string_view name, std::string* error) {
  if (!table_in_enum_order()) return std::nullopt;  // unreachable: the table is the enum's order
  if (name == "seed") return Switches{};
  if (name == "head_reservation") return upto(1565);
  if (name == "current") return upto(kTable.back().pr);
  if (name.substr(0, 5) == "upto:") {
    const std::optional<unsigned> pr = pr_number(name.substr(5));
    const std::vector<unsigned> prs = ladder_prs();
    if (pr && std::find(prs.begin(), prs.end(), *pr) != prs.end()) return upto(*pr);
    if (error) *error = std::string(name) + " names no PR of the ladder (" + pr_list() + ")";
    return std::nullopt;
  }
  if (error)
    *error = "unknown policy '" + std::string(name) + "' (seed, head_reservation, current, or upto:N with N one of " +
             pr_list() + ")";
  return std::nullopt;
}

std::string canonical_policy_name(std::string_view name) {
  // upto:#1729 and upto:01729 are upto:1729 (one spelling in every record, so that runs compare).
  if (name.substr(0, 5) == "upto:")
    if (const std::optional<unsigned> pr = pr_number(name.substr(5))) return "upto:" + std::to_string(*pr);
  return std::string(name);
}

std::vector<std::string> ladder_points() {
  std::vector<std::string> out = {"seed"};
  for (unsigned pr : ladder_prs()) out.push_back("upto:" + std::to_string(pr));
  return out;
}

}  // namespace dirsched
