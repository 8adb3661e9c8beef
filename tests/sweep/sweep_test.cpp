// The sweep table, ranking and charts on rows built by hand: a variant that lost tasks ranks after
// every clean one whatever its makespan; ties share a place and every tied best is marked; single
// waits break ties after the group waits; two variables draw a heatmap; compare's verdict.
#include "dirsched/sweep.hpp"

#include <gtest/gtest.h>

#include <regex>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace dirsched {
namespace {

// A summary written by hand, read through the record's decoder as summary.json would be.
SweepRow row_from_summary(const Variant& v, const nlohmann::ordered_json& s) {
  return dirsched::row_from_summary(v, record::decode(s, "summary.json"));
}

using nlohmann::json;

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

SweepRow row(std::size_t index, double makespan, long rejected = 0, const char* outcome = "COMPLETED") {
  json s = {{"makespan_s", makespan}, {"outcome", outcome}, {"tasks", {{"REJECTED", rejected}}}};
  Variant v;
  v.index = index;
  v.values["gw"] = json::array({index, index + 1});
  return row_from_summary(v, s);
}

TEST(SweepRanking, PutsAVariantWithRejectedTasksAfterEveryCleanOne) {
  // Variant 0 did less work (its group was rejected), so it finished first: it must still rank last.
  const std::vector<SweepRow> rows = {row(0, 1, 5), row(1, 7), row(2, 9)};
  EXPECT_FALSE(rows[0].clean);
  const std::vector<std::size_t> order = rank(rows);
  EXPECT_EQ(order, (std::vector<std::size_t>{1, 2, 0}));
  const std::string text = ranking_text(rows, order);
  EXPECT_NE(text.find("3. variant 0 (gw=[0,1]) NOT CLEAN (5 rejected)"), std::string::npos) << text;
  EXPECT_NE(text.find("1 of 3 variants are not clean"), std::string::npos) << text;
}

TEST(SweepRanking, TreatsFailedPoisonedAndStuckRunsAsNotClean) {
  Variant v;
  for (const char* state : {"FAILED", "POISONED", "PENDING", "READY", "RUNNING"}) {
    const SweepRow r = row_from_summary(v, {{"outcome", "COMPLETED"}, {"tasks", {{state, 1}}}});
    EXPECT_FALSE(r.clean) << state;
  }
  EXPECT_FALSE(row_from_summary(v, {{"outcome", "STUCK"}}).clean);
  EXPECT_TRUE(row_from_summary(v, {{"outcome", "COMPLETED"}, {"tasks", {{"COMPLETED", 4}}}}).clean);
}

TEST(SweepRanking, BreaksTiesOnSingleWaitsAfterGroupWaits) {
  auto with_single_wait = [](std::size_t index, double max_wait) {
    Variant v;
    v.index = index;
    return row_from_summary(v, {{"makespan_s", 4},
                                {"outcome", "COMPLETED"},
                                {"ready_waits", {{"single", {{"max_s", max_wait}, {"mean_s", 0.1}}}}}});
  };
  const std::vector<SweepRow> rows = {with_single_wait(0, 5), with_single_wait(1, 0.5)};
  EXPECT_EQ(rank(rows), (std::vector<std::size_t>{1, 0}));
  EXPECT_DOUBLE_EQ(rows[0].single_wait_max_s, 5);
}

TEST(SweepRanking, GivesTiedVariantsOnePlaceAndMarksEveryTiedBest) {
  const std::vector<SweepRow> rows = {row(0, 7), row(1, 7), row(2, 8), row(3, 8), row(4, 9)};
  const std::vector<std::size_t> order = rank(rows);
  EXPECT_EQ(places(rows, order), (std::vector<std::size_t>{1, 1, 3, 3, 5}));
  const std::string text = ranking_text(rows, order);
  EXPECT_NE(text.find("1=. variant 0"), std::string::npos) << text;
  EXPECT_NE(text.find("1=. variant 1"), std::string::npos) << text;
  EXPECT_NE(text.find("5. variant 4"), std::string::npos) << text;
  const std::string svg = sweep_svg(rows, order);
  EXPECT_EQ(count(svg, "class=\"best\""), 2u);
  EXPECT_EQ(count(svg, "(best, tied)"), 2u);
}

TEST(SweepCsv, HasACleanColumnAndSingleWaitsBesideGroupWaits) {
  const std::string csv = sweep_csv({"gw"}, {row(0, 1, 5), row(1, 0.43300000000000033)});
  EXPECT_EQ(
      csv.substr(0, csv.find('\n')),
      "variant,gw,clean,makespan_s,group_ready_wait_mean_s,group_ready_wait_p95_s,group_ready_wait_max_s,"
      "single_ready_wait_mean_s,single_ready_wait_p95_s,single_ready_wait_max_s,group_idle_target_s,"
      "utilisation,failed,poisoned,rejected,stuck,outcome,overtakes_max,stalls,group_held_target_s");
  EXPECT_NE(csv.find("\n0,\"[0,1]\",false,1,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1,\"[1,2]\",true,0.433,"), std::string::npos) << csv;
}

// sweep.csv through the record's codec (record/sweep_row.hpp): every row decodes and encodes back byte for
// byte, a string value included, and the measures come back as written (six significant digits).
TEST(SweepCsv, RoundTripsThroughTheRecordByteForByte) {
  Variant p;
  p.index = 7;
  p.values["gw"] = json::array({2, 3});
  p.values["policy"] = "head_reservation, \"quoted\"";
  SweepRow r = row_from_summary(p, {{"makespan_s", 12.5}, {"outcome", "COMPLETED"}, {"tasks", {{"FAILED", 2}}}});
  r.utilisation = 0.43300000000000033;
  const std::vector<SweepRow> rows = {row(0, 1, 5), row(1, 0.43300000000000033), r};
  const std::vector<std::string> names = {"gw", "policy"};
  const std::string csv = sweep_csv(names, rows);
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(record::decode_sweep_header(line, "sweep.csv"), names);
  std::string again = record::sweep_csv_header(names);
  std::vector<record::SweepCsvRow> back;
  for (std::size_t n = 2; std::getline(in, line); ++n) {
    back.push_back(record::decode_sweep_row(line, names.size(), "sweep.csv", n));
    record::encode_sweep_row(back.back().variant, back.back().values, back.back().measures, again);
  }
  EXPECT_EQ(again, csv);
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[2].variant, 7u);
  EXPECT_EQ(back[2].values, (std::vector<std::string>{"[2,3]", "head_reservation, \"quoted\""}));
  EXPECT_EQ(back[2].measures.makespan_s, 12.5);
  EXPECT_EQ(back[2].measures.utilisation, 0.433);
  EXPECT_EQ(back[2].measures.failed, 2);
  EXPECT_FALSE(back[2].measures.clean);
  EXPECT_EQ(back[0].measures.rejected, 5);
}

// The two columns added at the end: the most overtakes of one group, and the stall reports.
TEST(SweepCsv, EndsWithTheWorstOvertakesOfAGroupAndTheStallReports) {
  Variant v;
  v.values["gw"] = json::array({0, 1});
  const SweepRow r = row_from_summary(
      v, {{"makespan_s", 4.5},
          {"outcome", "COMPLETED"},
          {"groups", {{{"task", "g"}, {"overtakes", 4}}, {{"task", "h"}, {"overtakes", 7}}, {{"task", "k"}}}},
          {"stalls", {{{"event", "group_stall"}}, {{"event", "reservation_stall"}}, {{"event", "group_stall"}}}}});
  EXPECT_EQ(r.overtakes_max, 7);
  EXPECT_EQ(r.stalls, 3);
  const std::string csv = sweep_csv({"gw"}, {r});
  EXPECT_EQ(csv.substr(csv.find('\n') + 1), "0,\"[0,1]\",true,4.5,0,0,0,0,0,0,0,0,0,0,0,0,COMPLETED,7,3,0\n") << csv;
  const std::string text = ranking_text({r}, {0});
  EXPECT_NE(text.find(", overtakes (max) 7, stall reports 3\n"), std::string::npos) << text;
}

// Variables are separated by ", ", and each place after the first says which key put it behind.
TEST(SweepRanking, SeparatesVariablesAndNamesTheTieBreakerThatDecided) {
  auto make = [](std::size_t index, double makespan, double idle, double worst_group) {
    Variant v;
    v.index = index;
    v.values["gw"] = json::array({0, index});
    v.values["p"] = "seed";
    return row_from_summary(v, {{"makespan_s", makespan},
                                {"outcome", "COMPLETED"},
                                {"groups", {{{"task", "g"}, {"idle_target_s", idle}}}},
                                {"ready_waits", {{"group", {{"max_s", worst_group}}}}}});
  };
  const std::vector<SweepRow> rows = {make(0, 4.5, 0.5, 2.9), make(1, 4.5, 0.5, 0.9), make(2, 4, 0.4, 0.4),
                                      make(3, 4.5, 0.9, 0.9), make(4, 4.5, 0.9, 0.9)};
  const std::vector<std::size_t> order = rank(rows);
  ASSERT_EQ(order, (std::vector<std::size_t>{2, 1, 0, 3, 4}));
  EXPECT_EQ(decided_by(rows, order, 0), "");
  EXPECT_EQ(decided_by(rows, order, 1), "makespan");
  EXPECT_EQ(decided_by(rows, order, 2), "worst group wait");
  EXPECT_EQ(decided_by(rows, order, 3), "idle-target wait");
  EXPECT_EQ(decided_by(rows, order, 4), "");  // a tie
  const std::string text = ranking_text(rows, order);
  EXPECT_NE(text.find("1. variant 2 (gw=[0,2], p=\"seed\"): makespan 4 s"), std::string::npos) << text;
  EXPECT_NE(text.find("; behind variant 2 on makespan\n"), std::string::npos) << text;
  EXPECT_NE(text.find("3. variant 0 (gw=[0,0], p=\"seed\")"), std::string::npos) << text;
  EXPECT_NE(text.find("; behind variant 1 on worst group wait (a tie-breaker: the keys before it are equal)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("; behind variant 0 on idle-target wait (a tie-breaker: the keys before it are equal)\n"), std::string::npos) << text;
  EXPECT_EQ(count(text, "behind"), 3u) << text;  // the second of the tied pair adds nothing
}

TEST(SweepSvg, DrawsBestFirstOnASecondsAxisWithValueLabels) {
  const std::vector<SweepRow> rows = {row(0, 9), row(1, 2, 3), row(2, 4)};
  const std::string svg = sweep_svg(rows, rank(rows));
  EXPECT_NE(svg.find("makespan (s)"), std::string::npos);
  EXPECT_GE(count(svg, "class=\"tick\""), 3u);
  // Best first: variant 2 (4 s) above variant 0 (9 s) above the not-clean variant 1.
  const auto v2 = svg.find("1. variant 2"), v0 = svg.find("2. variant 0"), v1 = svg.find("3. variant 1");
  ASSERT_NE(v2, std::string::npos);
  ASSERT_NE(v0, std::string::npos);
  ASSERT_NE(v1, std::string::npos);
  EXPECT_LT(v2, v0);
  EXPECT_LT(v0, v1);
  EXPECT_NE(svg.find(">4 s  (best)<"), std::string::npos);
  EXPECT_NE(svg.find("not clean: 3 rejected"), std::string::npos);
  EXPECT_EQ(count(svg, "class=\"unclean\""), 1u);
}

TEST(SweepHeatmap, DrawsOneCellPerVariantOfTwoVariables) {
  std::vector<SweepRow> rows;
  for (std::size_t i = 0; i < 6; ++i) {
    Variant v;
    v.index = i;
    v.values["a"] = static_cast<int>(i / 2);
    v.values["b"] = std::string(i % 2 ? "y" : "x");
    rows.push_back(row_from_summary(v, {{"makespan_s", 10.0 - static_cast<double>(i)},
                                        {"outcome", "COMPLETED"},
                                        {"tasks", {{"REJECTED", i == 5 ? 1 : 0}}}}));
  }
  const std::string svg = sweep_heatmap_svg({"a", "b"}, rows);
  EXPECT_EQ(count(svg, "class=\"cell"), 6u);
  EXPECT_EQ(count(svg, "class=\"cell unclean\""), 1u);
  EXPECT_EQ(count(svg, "class=\"cell best\""), 1u);
  EXPECT_NE(svg.find(">6 s (best)<"), std::string::npos) << svg;  // variant 4; variant 5 (5 s) lost a task
  EXPECT_EQ(count(svg, "class=\"row\""), 3u);
  EXPECT_EQ(count(svg, "class=\"col\""), 2u);
  EXPECT_EQ(sweep_heatmap_svg({"a"}, rows), "");
}

// A run folder with just what compare reads.
void write_run(const std::filesystem::path& dir, const std::string& events, double makespan) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "events.jsonl") << events;
  std::ofstream(dir / "summary.json") << json{
      {"scenario", "s"},
      {"makespan_s", makespan},
      {"outcome", "COMPLETED"},
      {"vars", {{"gw", {0, 1}}}},
      {"groups", json::array()}}.dump();
}

// Two runs of one trace under two policies: the same dispatches, but g was overtaken 5 times under one
// and never under the other, and each logged its own kind of stall report.
TEST(Compare, ShowsThePoliciesEachGroupsOvertakesAndTheStallReports) {
  const auto tmp =
      std::filesystem::temp_directory_path() / ("dirsched-compare-ovt-" + std::to_string(::getpid()));
  const std::string events =
      R"({"seq":0,"t_s":0,"event":"submit","task":"g","kind":"group","members":1}
{"seq":1,"t_s":2,"event":"dispatch","task":"g","member":0,"worker":0}
)";
  auto run = [&](const std::string& name, const std::string& policy, int overtakes, const char* stall) {
    std::filesystem::create_directories(tmp / name);
    std::ofstream(tmp / name / "events.jsonl") << events;
    std::ofstream(tmp / name / "summary.json")
        << json{{"scenario", "s"},
                {"policy", policy},
                {"makespan_s", 3},
                {"outcome", "COMPLETED"},
                {"groups", {{{"task", "g"}, {"launched_s", 2}, {"ready_wait_s", 2}, {"overtakes", overtakes}}}},
                {"stalls", {{{"event", stall}, {"task", "g"}, {"t_s", 1}}}}}
               .dump();
  };
  run("p", "seed", 5, "group_stall");
  run("q", "head_reservation", 0, "reservation_stall");
  run("r", "seed", 5, "group_stall");
  const Comparison c = compare_runs((tmp / "p").string(), (tmp / "q").string());
  EXPECT_FALSE(c.same) << c.text;  // same dispatches, but the stall reports differ
  EXPECT_NE(c.text.find("\npolicies: A seed, B head_reservation\n"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find(" p ovt q ovt\n"), std::string::npos) << c.text;
  EXPECT_TRUE(std::regex_search(c.text, std::regex(R"(\n  g +t=2 +t=2 +2 s +2 s +\+0 s +5 +0\n)"))) << c.text;
  EXPECT_TRUE(std::regex_search(c.text, std::regex(R"(\n  group_stall reports +1 +0 )"))) << c.text;
  EXPECT_TRUE(std::regex_search(c.text, std::regex(R"(\n  reservation_stall reports +0 +1 )"))) << c.text;
  const Comparison same = compare_runs((tmp / "p").string(), (tmp / "r").string());
  EXPECT_TRUE(same.same) << same.text;
  EXPECT_EQ(same.text.find("policies:"), std::string::npos) << same.text;
  std::filesystem::remove_all(tmp);
}

TEST(Compare, SaysSameForIdenticalRunsAndListsEveryDivergenceOtherwise) {
  const auto tmp =
      std::filesystem::temp_directory_path() / ("dirsched-compare-" + std::to_string(::getpid()));
  const std::string one =
      R"({"seq":0,"t_s":0,"event":"submit","task":"a","kind":"single","members":1}
{"seq":1,"t_s":0,"event":"dispatch","task":"a","member":0,"worker":0}
{"seq":2,"t_s":0,"event":"submit","task":"b","kind":"single","members":1}
{"seq":3,"t_s":1,"event":"dispatch","task":"b","member":0,"worker":0}
{"seq":4,"t_s":1,"event":"submit","task":"g","kind":"group","members":2}
{"seq":5,"t_s":2,"event":"dispatch","task":"g","member":0,"worker":0}
{"seq":6,"t_s":2,"event":"dispatch","task":"g","member":1,"worker":1}
)";
  // b and g[0] swap places on worker 0.
  const std::string two =
      R"({"seq":0,"t_s":0,"event":"submit","task":"a","kind":"single","members":1}
{"seq":1,"t_s":0,"event":"dispatch","task":"a","member":0,"worker":0}
{"seq":2,"t_s":0,"event":"submit","task":"b","kind":"single","members":1}
{"seq":4,"t_s":1,"event":"submit","task":"g","kind":"group","members":2}
{"seq":5,"t_s":1,"event":"dispatch","task":"g","member":0,"worker":0}
{"seq":6,"t_s":1,"event":"dispatch","task":"g","member":1,"worker":1}
{"seq":3,"t_s":2,"event":"dispatch","task":"b","member":0,"worker":0}
)";
  write_run(tmp / "x", one, 3);
  write_run(tmp / "y", one, 3);
  write_run(tmp / "z", two, 3);
  const Comparison same = compare_runs((tmp / "x").string(), (tmp / "y").string());
  EXPECT_TRUE(same.same) << same.text;
  const Comparison diff = compare_runs((tmp / "x").string(), (tmp / "z").string(), 1);
  EXPECT_FALSE(diff.same);
  EXPECT_NE(diff.text.find("A: " + (tmp / "x").string() + " (scenario s, gw=[0,1]"), std::string::npos)
      << diff.text;
  EXPECT_NE(diff.text.find("worker 0: 2 of 3 positions differ"), std::string::npos) << diff.text;
  EXPECT_NE(diff.text.find("#1: x b@0 t=1, z g[0]@0 t=1"), std::string::npos) << diff.text;
  EXPECT_NE(diff.text.find("1 more not shown (--limit 1)"), std::string::npos) << diff.text;
  EXPECT_THROW(compare_runs((tmp / "x").string(), (tmp / "missing").string()), std::runtime_error);
  std::filesystem::remove_all(tmp);
}

// Variant counting: a product of candidate counts, without overflow, refused past the limit before
// any variant is built.
Scenario with_vars(std::size_t variables, std::size_t candidates) {
  Scenario s;
  s.file = "many.json";
  for (std::size_t i = 0; i < variables; ++i) {
    json c = json::array();
    for (std::size_t k = 0; k < candidates; ++k) c.push_back(k);
    char name[8];
    std::snprintf(name, sizeof name, "v%02zu", i);
    s.vars[name] = std::vector<json>(c.begin(), c.end());
  }
  return s;
}

TEST(VariantCount, IsTheExactProductWhenItFits) {
  EXPECT_EQ(variant_count(with_vars(3, 4)), std::optional<std::size_t>(64));
  EXPECT_EQ(variant_count(with_vars(63, 2)), std::optional<std::size_t>(std::size_t{1} << 63));
  EXPECT_EQ(variant_count_text(with_vars(10, 10)), "10000000000");
}

TEST(VariantCount, SixtyFourVariablesOfTwoDoNotWrapToZero) {
  EXPECT_EQ(variant_count(with_vars(64, 2)), std::nullopt);
  EXPECT_EQ(variant_count_text(with_vars(64, 2)), "18446744073709551616");
  EXPECT_EQ(variant_count_text(with_vars(30, 1000)), "1" + std::string(90, '0'));
}

TEST(VariantCount, PastTheLimitNothingIsBuiltAndTheCountIsInTheMessage) {
  try {
    (void)enumerate_variants(with_vars(10, 10));
    FAIL() << "10^10 variants were enumerated";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(std::string(e.what()),
              "many.json: vars: 10 variables give 10000000000 variants, more than --max-variants 10000 (raise "
              "it, or run a sample with --sample K)");
  }
  EXPECT_THROW((void)enumerate_variants(with_vars(64, 2), SIZE_MAX), ScenarioError);
  EXPECT_THROW((void)sample_variants(with_vars(64, 2), 3, 1), ScenarioError);
  EXPECT_THROW((void)sample_variants(with_vars(10, 10), 10001, 1), ScenarioError);
  EXPECT_EQ(enumerate_variants(with_vars(2, 3), 9).size(), 9u);
  EXPECT_THROW((void)enumerate_variants(with_vars(2, 3), 8), ScenarioError);
}

TEST(VariantCount, ASampleOfAHugeProductStaysDistinctAndInRange) {
  const std::vector<Variant> v = sample_variants(with_vars(10, 10), 5, 7);
  ASSERT_EQ(v.size(), 5u);
  for (std::size_t i = 0; i < v.size(); ++i) {
    EXPECT_LT(v[i].index, 10000000000u);
    if (i) {
      EXPECT_LT(v[i - 1].index, v[i].index);
    }
  }
}

}  // namespace
}  // namespace dirsched
