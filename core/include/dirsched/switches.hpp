// The version ladder: every behaviour change of the runtime since the seed's commit is one *switch*,
// tied to the upstream PR that made it (docs/versions.md, contract-notes "Runtime versions").
//
// This file is the policy table of the core: the switches in merge order with their PRs, the presets
// (`seed`, `head_reservation`, `current`, `upto:N`), and which switches this testbed has built. The
// Scheduler takes a Switches value in its Options and asks it, at one decision point per switch, what
// to do; nothing else in the core names a preset.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dirsched {

// In the ladder's merge order (the order of the table, the order `upto:N` cuts).
enum class Switch : std::uint8_t {
  kGroupReservation,
  kWholeRunFifo,
  kRunCancellation,
  kStaging,
  kEdgeTriggeredWake,
  kArgGuard,
  kRegistrationOrderCompletions,
  kBusyPoll,
  kGroupBarrier,
  kMpiGroupCheck,
  kMpiGroupLane,
  kViewDeps,
};
inline constexpr std::size_t kSwitchCount = 12;

struct SwitchInfo {
  Switch id;
  std::string_view name;  // the spelling in scenario files, --switch and summary.json
  unsigned pr;            // the upstream PR that made the change (the `upto:N` key)
  std::string_view prs;   // as the table names them, e.g. "#1541 (with #1460 and #1540)"
  std::string_view text;  // one line: what the switch changes
};

// The ladder table, one row per switch, in merge order.
const std::array<SwitchInfo, kSwitchCount>& switch_table();
const SwitchInfo& switch_info(Switch s);
std::string_view to_string(Switch s);
std::optional<Switch> switch_from_string(std::string_view name);
// "group_reservation, whole_run_fifo, ...": every name, in table order (for error messages).
std::string known_switch_names();
// The distinct PRs of the table, in merge order (the bisect points): 1565, 1541, 1583, ...
std::vector<unsigned> ladder_prs();

// Has this testbed built the switch? The ONE list of switches the core does not implement yet: a
// driver must refuse an effective set that turns one of them on (see first_unbuilt()). Whoever
// builds a switch removes it from the list in switches.cpp.
bool switch_built(Switch s);

// One bool per switch. Default: every switch off (the seed's runtime).
class Switches {
 public:
  bool operator[](Switch s) const { return on_[static_cast<std::size_t>(s)]; }
  bool on(Switch s) const { return (*this)[s]; }
  Switches& set(Switch s, bool value) {
    on_[static_cast<std::size_t>(s)] = value;
    return *this;
  }
  bool operator==(const Switches& o) const { return on_ == o.on_; }
  bool operator!=(const Switches& o) const { return on_ != o.on_; }
  // The first switch (table order) that is on but not built, if any.
  std::optional<Switch> first_unbuilt() const;

 private:
  std::array<bool, kSwitchCount> on_{};
};

// A preset by name: "seed", "head_reservation", "current", or "upto:N" / "upto:#N" with N a PR of the
// table (every switch whose row is at or above the last row of PR N). Nullopt and `error` set (one
// line, naming what is known) otherwise.
std::optional<Switches> preset(std::string_view name, std::string* error = nullptr);
// The spelling written back (summary.json, by_policy keys): "upto:#1565" and "upto:01565" -> "upto:1565"; presets as
// they are. Only for a name preset() accepts.
std::string canonical_policy_name(std::string_view name);
// The preset names and `upto:N` points in the ladder's merge order: seed, upto:1565 (=
// head_reservation), upto:1541, ..., upto:1902 (= current).
std::vector<std::string> ladder_points();

}  // namespace dirsched
