// The ladder table and the presets (switches.hpp): merge order, upto:N, the not-built list.
#include <gtest/gtest.h>

#include "dirsched/switches.hpp"

namespace dirsched {
namespace {

std::vector<std::string> on(const Switches& s) {
  std::vector<std::string> out;
  for (const SwitchInfo& row : switch_table())
    if (s[row.id]) out.emplace_back(row.name);
  return out;
}

TEST(Switches, TheTableIsTheLadderInMergeOrder) {
  std::vector<std::string> names;
  std::vector<unsigned> prs;
  for (const SwitchInfo& row : switch_table()) names.emplace_back(row.name), prs.push_back(row.pr);
  EXPECT_EQ(names, (std::vector<std::string>{"group_reservation", "whole_run_fifo", "run_cancellation", "staging",
                                              "edge_triggered_wake", "arg_guard", "registration_order_completions",
                                              "busy_poll", "group_barrier", "mpi_group_check", "mpi_group_lane",
                                              "view_deps"}));
  EXPECT_EQ(prs, (std::vector<unsigned>{1565, 1541, 1541, 1583, 1612, 1729, 1754, 1754, 1754, 1624, 1624, 1902}));
  EXPECT_EQ(ladder_prs(), (std::vector<unsigned>{1565, 1541, 1583, 1612, 1729, 1754, 1624, 1902}));
  for (const SwitchInfo& row : switch_table()) {
    EXPECT_EQ(switch_from_string(row.name), row.id);
    EXPECT_EQ(to_string(row.id), row.name);
  }
  EXPECT_EQ(switch_from_string("Staging"), std::nullopt);
}

TEST(Switches, PresetsAreTheTableColumns) {
  EXPECT_EQ(on(*preset("seed")), std::vector<std::string>{});
  EXPECT_EQ(on(*preset("head_reservation")), std::vector<std::string>{"group_reservation"});
  EXPECT_EQ(on(*preset("current")).size(), kSwitchCount);
  EXPECT_EQ(*preset("upto:1565"), *preset("head_reservation"));
  EXPECT_EQ(*preset("upto:#1565"), *preset("head_reservation"));
  EXPECT_EQ(*preset("upto:1902"), *preset("current"));
}

TEST(Switches, UptoTurnsOnEveryRowAtOrAboveThePrsLastRow) {
  EXPECT_EQ(on(*preset("upto:1541")),
            (std::vector<std::string>{"group_reservation", "whole_run_fifo", "run_cancellation"}));
  EXPECT_EQ(on(*preset("upto:1754")).back(), "group_barrier");
  EXPECT_EQ(on(*preset("upto:1754")).size(), 9u);
  EXPECT_EQ(on(*preset("upto:1624")).back(), "mpi_group_lane");
  // Each ladder point adds switches and never turns one off.
  std::vector<std::string> points = ladder_points();
  EXPECT_EQ(points.front(), "seed");
  EXPECT_EQ(points.back(), "upto:1902");
  EXPECT_EQ(points.size(), 9u);
  for (std::size_t i = 1; i < points.size(); ++i) {
    const Switches a = *preset(points[i - 1]), b = *preset(points[i]);
    EXPECT_NE(a, b) << points[i];
    for (const SwitchInfo& row : switch_table()) {
      if (a[row.id]) {
        EXPECT_TRUE(b[row.id]) << points[i] << " " << row.name;
      }
    }
  }
}

TEST(Switches, UnknownPresetsNameWhatIsKnown) {
  std::string error;
  EXPECT_EQ(preset("upto:1600", &error), std::nullopt);
  EXPECT_EQ(error, "upto:1600 names no PR of the ladder (1565, 1541, 1583, 1612, 1729, 1754, 1624, 1902)");
  EXPECT_EQ(preset("upto:", &error), std::nullopt);
  EXPECT_EQ(preset("upto:15x65", &error), std::nullopt);
  EXPECT_EQ(preset("Seed", &error), std::nullopt);
  EXPECT_NE(error.find("seed, head_reservation, current, or upto:N"), std::string::npos);
  EXPECT_EQ(canonical_policy_name("upto:#1729"), "upto:1729");
  EXPECT_EQ(canonical_policy_name("upto:01565"), "upto:1565");  // it was recorded as typed
  EXPECT_EQ(canonical_policy_name("upto:#01565"), "upto:1565");
  // Issue 53: leading zeros are optional however many there are (13 characters were refused).
  EXPECT_EQ(canonical_policy_name("upto:0000000001565"), "upto:1565");
  ASSERT_TRUE(preset("upto:0000000001565"));
  EXPECT_EQ(*preset("upto:0000000001565"), *preset("head_reservation"));
  EXPECT_FALSE(preset("upto:0000"));              // PR 0 is no PR of the ladder
  EXPECT_FALSE(preset("upto:00001234567890"));    // 10 significant digits
  EXPECT_EQ(canonical_policy_name("upto:15x65"), "upto:15x65");  // refused by preset(), named as given
  EXPECT_EQ(canonical_policy_name("current"), "current");
}

TEST(Switches, TheNotBuiltListIsExactlyTheSwitchesThisTestbedLacks) {
  std::vector<std::string> missing;
  for (const SwitchInfo& row : switch_table())
    if (!switch_built(row.id)) missing.emplace_back(row.name);
  EXPECT_EQ(missing, (std::vector<std::string>{}));  // every switch of the ladder is built
  EXPECT_TRUE(switch_built(Switch::kMpiGroupLane));
  EXPECT_TRUE(switch_built(Switch::kStaging));
  EXPECT_TRUE(switch_built(Switch::kGroupBarrier));
  EXPECT_TRUE(switch_built(Switch::kRegistrationOrderCompletions));
  EXPECT_TRUE(switch_built(Switch::kRunCancellation));
  EXPECT_TRUE(switch_built(Switch::kWholeRunFifo));
  EXPECT_EQ(Switches{}.set(Switch::kRunCancellation, true).first_unbuilt(), std::nullopt);
  EXPECT_EQ(preset("current")->first_unbuilt(), std::nullopt);
  EXPECT_EQ(preset("upto:1583")->first_unbuilt(), std::nullopt);
  EXPECT_EQ(preset("upto:1541")->first_unbuilt(), std::nullopt);
  EXPECT_EQ(preset("head_reservation")->first_unbuilt(), std::nullopt);
  Switches s = *preset("current");
  for (const SwitchInfo& row : switch_table())
    if (!switch_built(row.id)) s.set(row.id, false);
  EXPECT_EQ(s.first_unbuilt(), std::nullopt);
  EXPECT_EQ(on(s), (std::vector<std::string>{"group_reservation", "whole_run_fifo", "run_cancellation", "staging",
                                              "edge_triggered_wake", "arg_guard", "registration_order_completions",
                                              "busy_poll", "group_barrier", "mpi_group_check", "mpi_group_lane",
                                              "view_deps"}));
}

}  // namespace
}  // namespace dirsched
