// Replicated rankings (paired tests, places family-wise at 95% by Holm, ties shared, tie-breakers named), the charts' best
// drawn from the ranking, any-field sweep variables with their JSON paths, and worker-set spaces.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "dirsched/scenario.hpp"
#include "dirsched/sweep.hpp"

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

SweepRow rep(std::size_t index, double makespan, double single_max = 1) {
  Variant v;
  v.index = index;
  v.values["gb"] = json::array({index});
  SweepRow r = row_from_summary(v, {{"makespan_s", makespan}, {"outcome", "COMPLETED"}});
  r.single_wait_max_s = single_max;
  return r;
}

std::vector<std::vector<SweepRow>> replicated(const std::vector<std::vector<double>>& makespans) {
  std::vector<std::vector<SweepRow>> out;
  for (std::size_t i = 0; i < makespans.size(); ++i) {
    out.emplace_back();
    for (double m : makespans[i]) out.back().push_back(rep(i, m));
  }
  return out;
}

TEST(TQuantile, MatchesTheTable) {
  EXPECT_NEAR(t975(1), 12.706, 1e-3);
  EXPECT_NEAR(t975(4), 2.776, 1e-3);
  EXPECT_NEAR(t975(30), 2.042, 1e-3);
  EXPECT_NEAR(t975(60), 2.000, 2e-3);
  EXPECT_NEAR(t975(120), 1.980, 2e-3);
}

// Variant 0 wins the first seed (the single-seed winner) but loses the other four by a steady margin:
// the replicated ranking puts variant 1 first, decided on makespan at 95%.
TEST(ReplicatedRanking, FollowsThePairedReplicatesNotTheFirstSeed) {
  const auto rows = replicated({{10, 15, 15.2, 15.1, 15.3}, {10.1, 14, 14.1, 14.0, 14.2}});
  const Ranking single = rank_replicated({{rows[0][0]}, {rows[1][0]}}, default_objective(), {0});
  EXPECT_EQ(single.order.front().variant.index, 0u);
  const Ranking r = rank_replicated(rows, default_objective(), {0, 1, 2, 3, 4});
  ASSERT_EQ(r.order.size(), 2u);
  EXPECT_EQ(r.order[0].variant.index, 1u);
  EXPECT_EQ(r.order[1].place, 2u);
  EXPECT_FALSE(r.order[1].tied);
  EXPECT_EQ(r.order[1].decided_by, "makespan");
  EXPECT_FALSE(r.order[1].tie_breaker);
  EXPECT_EQ(r.order[0].stats[metric::kMakespan].best_in, 4u);
  EXPECT_EQ(r.order[1].stats[metric::kMakespan].best_in, 1u);
  // Mean 13.28, CI mean +- t(0.975, 4) sd / sqrt(5).
  const MetricStats& st = r.order[0].stats[metric::kMakespan];
  EXPECT_NEAR(st.mean, 13.28, 1e-9);
  EXPECT_NEAR(st.ci_high - st.mean, t975(4) * st.sd / std::sqrt(5.0), 1e-9);
}

// Differences Holm does not separate at family-wise 95%: one place, printed as a tie, never a win.
TEST(ReplicatedRanking, PrintsIndistinguishableVariantsAsATie) {
  const auto rows = replicated({{10, 12, 11, 13, 10}, {11, 11, 12, 11, 11.5}, {20, 21, 22, 20, 21}});
  const Ranking r = rank_replicated(rows, default_objective(), {0, 1, 2, 3, 4});
  EXPECT_EQ(r.order[0].place, 1u);
  EXPECT_EQ(r.order[1].place, 1u);
  EXPECT_TRUE(r.order[0].tied);
  EXPECT_TRUE(r.order[1].tied);
  EXPECT_EQ(r.order[2].place, 3u);
  EXPECT_EQ(best_variants(r).size(), 2u);
  const std::string text = replicated_ranking_text(r);
  EXPECT_EQ(count(text, "1=. variant"), 2u) << text;
  EXPECT_NE(text.find("2 variants share first place"), std::string::npos) << text;
  EXPECT_NE(text.find("3. variant 2"), std::string::npos) << text;
  const json j = json::parse(ranking_json({"gb"}, r));
  EXPECT_EQ(j["ranking"][0]["rank"], 1);
  EXPECT_EQ(j["ranking"][1]["rank"], 1);
  EXPECT_EQ(j["ranking"][1]["tied"], true);
  EXPECT_EQ(j["best"].size(), 2u);
}

// Equal makespans, one worst single wait apart: the second key decides, and the ranking says it was a
// tie-breaker.
TEST(ReplicatedRanking, NamesATieBreaker) {
  std::vector<std::vector<SweepRow>> rows = {{rep(0, 14, 4.25)}, {rep(1, 14, 4)}};
  const Ranking r = rank_replicated(rows, default_objective(), {0});
  EXPECT_EQ(r.order[0].variant.index, 1u);
  EXPECT_EQ(r.order[1].decided_by, "worst single wait");
  EXPECT_TRUE(r.order[1].tie_breaker);
  const json j = json::parse(ranking_json({"gb"}, r));
  EXPECT_EQ(j["ranking"][1]["tie_breaker"], true);
  // --objective single_wait_max first: no longer a tie-breaker.
  const Ranking s = rank_replicated(rows, parse_objective("single_wait_max,makespan"), {0});
  EXPECT_FALSE(s.order[1].tie_breaker);
  EXPECT_THROW(parse_objective("makespan,nope"), BadInput);
}

// One replicate under the default objective: the classic text (rank() and places()) and the ranking
// every file is drawn from (rank_replicated) give the same order and the same shared places, exact
// ties included (random rows over a few values, so that ties on every key are common).
TEST(ReplicatedRanking, OneReplicateAgreesWithTheClassicRanking) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<SweepRow> rows;
    std::vector<std::vector<SweepRow>> per_variant;
    const std::size_t n = 2 + rng() % 9;
    for (std::size_t i = 0; i < n; ++i) {
      SweepRow r = rep(i, 10 + static_cast<double>(rng() % 3), 1 + static_cast<double>(rng() % 2));
      r.group_wait_max_s = static_cast<double>(rng() % 2);
      r.group_idle_target_s = static_cast<double>(rng() % 2);
      r.single_wait_mean_s = static_cast<double>(rng() % 2) / 2;
      if (rng() % 5 == 0) r.clean = false, r.failed = 1;
      rows.push_back(r);
      per_variant.push_back({r});
    }
    const std::vector<std::size_t> order = rank(rows);
    const std::vector<std::size_t> place = places(rows, order);
    const Ranking ranking = rank_replicated(per_variant, default_objective(), {0});
    ASSERT_EQ(ranking.order.size(), n);
    for (std::size_t k = 0; k < n; ++k) {
      EXPECT_EQ(ranking.order[k].variant.index, rows[order[k]].variant.index) << "trial " << trial << " place " << k;
      EXPECT_EQ(ranking.order[k].place, place[k]) << "trial " << trial << " place " << k;
    }
  }
}

// The heatmap marks best exactly the variants the ranking puts first: four equal makespans, one of
// them ahead on a tie-breaker, is one best cell, not four.
TEST(Charts, HeatmapBestCellsAreTheRankingsFirstPlace) {
  std::vector<SweepRow> rows;
  std::vector<std::vector<SweepRow>> per;
  for (std::size_t i = 0; i < 6; ++i) {
    Variant v;
    v.index = i;
    v.values["a"] = static_cast<int>(i / 3);
    v.values["b"] = static_cast<int>(i % 3);
    SweepRow r = row_from_summary(v, {{"makespan_s", i < 4 ? 14.0 : 16.0}, {"outcome", "COMPLETED"}});
    r.single_wait_max_s = i == 2 ? 4.0 : 4.25;
    rows.push_back(r);
    per.push_back({r});
  }
  const Ranking r = rank_replicated(per, default_objective(), {0});
  const std::set<std::size_t> best = best_variants(r);
  ASSERT_EQ(best, std::set<std::size_t>{2});
  for (const std::string& svg :
       {sweep_heatmap_svg({"a", "b"}, rows), sweep_heatmap_svg({"a", "b"}, rows, best)}) {
    EXPECT_EQ(count(svg, "class=\"cell best\""), 1u) << svg;
    EXPECT_EQ(count(svg, "(best)"), 1u);
    EXPECT_NE(svg.find("variant 2: 14 s"), std::string::npos);
  }
  const std::string bars = sweep_svg(r);
  EXPECT_EQ(count(bars, "class=\"best\""), 1u);
  const std::string scatter = pareto_svg(r, metric::kMakespan, metric::kSingleWaitMax);
  EXPECT_EQ(count(scatter, "class=\"point best\""), 1u);
}

// The O(n log n) front is the quadratic definition's, ties and duplicates included.
TEST(Pareto, NonDominatedMatchesTheDefinition) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::pair<double, double>> p(1 + rng() % 12);
    for (auto& [a, b] : p) a = static_cast<double>(rng() % 4), b = static_cast<double>(rng() % 4);
    std::vector<std::size_t> want;
    for (std::size_t i = 0; i < p.size(); ++i) {
      bool dominated = false;
      for (std::size_t j = 0; j < p.size(); ++j)
        dominated |= p[j].first <= p[i].first && p[j].second <= p[i].second &&
                     (p[j].first < p[i].first || p[j].second < p[i].second);
      if (!dominated) want.push_back(i);
    }
    EXPECT_EQ(non_dominated(p), want) << "trial " << trial;
  }
}

TEST(Pareto, KeepsOnlyNonDominatedCleanVariants) {
  std::vector<std::vector<SweepRow>> per;
  const double pts[][2] = {{10, 5}, {12, 3}, {11, 6}, {15, 1}, {9, 9}};
  for (std::size_t i = 0; i < 5; ++i) {
    SweepRow r = rep(i, pts[i][0]);
    r.group_wait_max_s = pts[i][1];
    per.push_back({r});
  }
  const Ranking r = rank_replicated(per, default_objective(), {0});
  std::set<std::size_t> front;
  for (std::size_t i : pareto_front(r, metric::kMakespan, metric::kGroupWaitMax)) front.insert(r.order[i].variant.index);
  EXPECT_EQ(front, (std::set<std::size_t>{0, 1, 3, 4}));
}

TEST(SummaryCsv, HasRankMeansIntervalsAndBestIn) {
  const auto rows = replicated({{10, 11}, {12, 13}});
  const Ranking r = rank_replicated(rows, default_objective(), {0, 1});
  const std::string csv = summary_csv({"gb"}, r);
  EXPECT_EQ(csv.rfind("variant,gb,rank,", 0), 0u) << csv;
  EXPECT_NE(csv.find("makespan_s_mean,makespan_s_sd,makespan_s_ci_low,makespan_s_ci_high,makespan_s_best_in"),
            std::string::npos);
  const std::string per = replicated_csv({"gb"}, r);
  EXPECT_EQ(per.rfind("variant,replicate,seed,gb,clean,makespan_s", 0), 0u) << per;
  EXPECT_EQ(count(per, "\n"), 5u);
  EXPECT_NE(per.find("\n1,1,1,[1],true,13,"), std::string::npos) << per;
}


// A seeded 4,096-point space (two variables of 64 candidates, a coupled bowl with seeded bumps): the
// search finds the exhaustive optimum within 10% of the evaluations, and the same seed the same answer.
TEST(Search, FindsTheExhaustiveOptimumWithinATenthOfTheSpace) {
  std::mt19937_64 rng(42);
  std::vector<double> bump(4096);
  for (double& b : bump) b = static_cast<double>(rng() % 1000) / 1000.0;
  auto f = [&](std::size_t p) {
    const double i = static_cast<double>(p / 64) - 41, j = static_cast<double>(p % 64) - 17;
    return std::vector<double>{0, i * i + j * j + 0.6 * i * j + 0.01 * bump[p]};
  };
  std::size_t calls = 0;
  auto eval = [&](const std::vector<std::size_t>& pts) {
    std::vector<Score> out;
    for (std::size_t p : pts) out.push_back(f(p)), ++calls;
    return out;
  };
  const SearchResult all = search_space({64, 64}, 4096, 0, eval);
  EXPECT_TRUE(all.exhaustive);
  EXPECT_EQ(all.evaluations, 4096u);
  calls = 0;
  const SearchResult found = search_space({64, 64}, 409, 7, eval);
  EXPECT_FALSE(found.exhaustive);
  EXPECT_LE(found.evaluations, 409u);
  EXPECT_EQ(calls, found.evaluations);
  EXPECT_EQ(found.best, all.best);
  EXPECT_EQ(search_space({64, 64}, 409, 7, eval).best, found.best);
}

// The lists of a `choose` space in the loader's order (ids in `from` order, the last pick fastest).
std::vector<json> choose_lists(std::size_t k, std::size_t n, bool ordered) {
  std::vector<json> out;
  std::vector<std::size_t> pick;
  std::vector<bool> taken(n, false);
  std::function<void(std::size_t)> rec = [&](std::size_t start) {
    if (pick.size() == k) {
      out.push_back(json(pick));
      return;
    }
    for (std::size_t i = ordered ? 0 : start; i < n; ++i) {
      if (taken[i]) continue;
      taken[i] = true, pick.push_back(i);
      rec(i + 1);
      taken[i] = false, pick.pop_back();
    }
  };
  rec(0);
  return out;
}

TEST(Search, SwapNeighboursTradeOneIdOrExchangeTwoPositions) {
  const std::vector<json> unordered = choose_lists(2, 4, false);  // [0,1] [0,2] [0,3] [1,2] [1,3] [2,3]
  EXPECT_FALSE(holds_arrangements(unordered));
  EXPECT_EQ(swap_neighbours(unordered, 0, false), (std::vector<std::size_t>{1, 2, 3, 4}));  // not [2,3]
  EXPECT_EQ(swap_neighbours(unordered, 5, false), (std::vector<std::size_t>{1, 2, 3, 4}));  // not [0,1]
  const std::vector<json> ordered = choose_lists(2, 3, true);  // [0,1] [0,2] [1,0] [1,2] [2,0] [2,1]
  EXPECT_TRUE(holds_arrangements(ordered));
  // [0,2] and [2,1]: another id at one position; [1,0]: the two exchanged. Not [1,2] or [2,0].
  EXPECT_EQ(swap_neighbours(ordered, 0, true), (std::vector<std::size_t>{1, 2, 5}));
  EXPECT_TRUE(swap_neighbours({json(1), json(2)}, 0, false).empty()) << "not lists: no neighbourhood";
}

// An additive objective over a `choose 4 from 12` space (495 lists), best at the lexicographically last
// list: the descent that swaps one id finds it within a quarter of the space for every seed, where the
// same budget over the whole space at once is a sample that usually misses it.
TEST(Search, ASwapNeighbourhoodFindsTheBestWorkerSetUnderABudget) {
  const std::vector<json> lists = choose_lists(4, 12, false);
  ASSERT_EQ(lists.size(), 495u);
  auto eval = [&](const std::vector<std::size_t>& pts) {
    std::vector<Score> out;
    for (std::size_t p : pts) {
      double cost = 0;
      for (const json& id : lists[p]) cost += 11.0 - id.get<double>();
      out.push_back({0, cost});
    }
    return out;
  };
  const SearchResult all = search_space({495}, 495, 0, eval);
  ASSERT_TRUE(all.exhaustive);
  ASSERT_EQ(lists[all.best], json({8, 9, 10, 11}));
  const Neighbours swaps = [&](std::size_t, std::size_t c) { return swap_neighbours(lists, c, false); };
  std::size_t sampled_hits = 0;
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const SearchResult found = search_space({495}, 120, seed, eval, swaps);
    EXPECT_FALSE(found.exhaustive);
    EXPECT_LE(found.evaluations, 120u);
    EXPECT_EQ(found.best, all.best) << "seed " << seed;
    sampled_hits += search_space({495}, 120, seed, eval).best == all.best;
  }
  EXPECT_LT(sampled_hits, 10u) << "the landscape does not tell a search from a sample";
}

// The spike the descent misses (issue 50): a `choose 4 from 12` space whose best list is far better than
// every other, the rest additive in its ids with chips 0-3 cheap (a descent from most lists ends at
// [0,1,2,3]). The surrogate learns each id's effect from every list holding it and finds the spike with
// 30 evaluations for every seed, never evaluating a list twice; the descent with the same budget does not.
TEST(Search, TheSurrogateFindsASpikeTheDescentMisses) {
  const std::vector<json> lists = choose_lists(4, 12, false);
  const Features features = {candidate_features(lists, true, false)};
  auto eval = [&](const std::vector<std::size_t>& pts) {
    std::vector<Score> out;
    for (std::size_t p : pts) {
      double cost = 0;
      for (const json& id : lists[p]) cost += id.get<double>() < 4 ? 1.0 : id.get<double>() >= 8 ? 0.5 : 3.0;
      if (lists[p] == json({8, 9, 10, 11})) cost = -10;
      out.push_back({0, cost});
    }
    return out;
  };
  const Neighbours swaps = [&](std::size_t, std::size_t c) { return swap_neighbours(lists, c, false); };
  std::size_t descent_hits = 0;
  for (std::uint64_t seed = 0; seed < 10; ++seed) {
    const SearchResult found = search_space({495}, 30, seed, eval, swaps, &features);
    EXPECT_TRUE(found.surrogate);
    EXPECT_EQ(found.evaluations, 30u);
    EXPECT_EQ(found.scores.size(), 30u) << "no list evaluated twice";
    EXPECT_EQ(lists[found.best], json({8, 9, 10, 11})) << "seed " << seed;
    descent_hits += lists[search_space({495}, 30, seed, eval, swaps).best] == json({8, 9, 10, 11});
  }
  EXPECT_LT(descent_hits, 10u) << "the landscape does not tell the surrogate from the descent";
}

// --- any field can be a variable ---

const char* kBase = R"({
  "name": "v", "seed": 1,
  "workers": {"next_level": [{"id": 0, "kind": "local_chip"}, {"id": 1, "kind": "local_chip"},
                             {"id": 2, "kind": "remote"}, {"id": 3, "kind": "remote"}]},
  "callables": {"k": {"namespace": "LOCAL_CHIP", "duration_s": 1},
                "r": {"namespace": "REMOTE", "duration_s": 1, "eligible": [2, 3]}},
  "trace": [{"op": "submit_next_level", "task": "a", "callable": "k", "worker": 0}]
})";

Scenario load(json doc, const VarAssignment& a = {}) { return parse_scenario(doc, "f.json", ".", a); }

std::string load_error(json doc, const VarAssignment& a = {}) {
  try {
    load(std::move(doc), a);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(AnyFieldVars, StandForDurationsSeedPolicyJitterAtAndStallReport) {
  json d = json::parse(kBase);
  d["vars"] = {{"d", {2.5, 3}}, {"s", {7, 8}}, {"p", {"head_reservation", "seed"}}, {"j", {0.2}},
               {"at", {1.5}}, {"st", {9}}};
  d["seed"] = "$s";
  d["callables"]["k"]["duration_s"] = "$d";
  d["callables"]["k"]["jitter"] = {{"kind", "uniform"}, {"rel", "$j"}};
  d["scheduler"] = {{"policy", "$p"}, {"stall_report_s", "$st"}};
  d["trace"][0]["at_s"] = "$at";
  const Scenario s = load(d, {{"d", 3}});
  EXPECT_EQ(s.callables[0].cost.duration_s, 3.0);
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.policy, "head_reservation");
  EXPECT_DOUBLE_EQ(s.callables[0].cost.jitter.rel, 0.2);
  EXPECT_EQ(s.trace[0].at_s, 1.5);
  EXPECT_EQ(s.stall_report_s, 9.0);
}

TEST(AnyFieldVars, AreTypeCheckedWithTheJsonPathAndTheVariable) {
  json d = json::parse(kBase);
  d["vars"] = {{"d", {"long"}}};
  d["callables"]["k"]["duration_s"] = "$d";
  EXPECT_EQ(load_error(d), "f.json: callables.k.duration_s: expected a number, found a string (the value of $d in "
                           "this variant: \"long\")");
  d["vars"] = {{"d", {-1}}};
  EXPECT_NE(load_error(d).find("callables.k.duration_s: must not be negative (the value of $d"), std::string::npos);
  json t = json::parse(kBase);
  t["vars"] = {{"w", {json::array({0, "x"})}}};
  t["trace"][0] = {{"op", "submit_next_level_group"}, {"task", "g"}, {"callable", "k"}, {"workers", "$w"},
                   {"args_list", {json::array(), json::array()}}, {"duration_s", "$w"}};
  EXPECT_NE(load_error(t).find("trace[0].duration_s[1]: expected a number, found a string (the value of $w"),
            std::string::npos)
      << load_error(t);
  json seed = json::parse(kBase);
  seed["vars"] = {{"s", {-3}}};
  seed["seed"] = "$s";
  EXPECT_NE(load_error(seed).find("f.json: seed: expected a non-negative integer (the value of $s"), std::string::npos);
}

TEST(AnyFieldVars, AVariableNothingUsesIsRefused) {
  json d = json::parse(kBase);
  d["vars"] = {{"unused", {1, 2}}};
  EXPECT_EQ(load_error(d), "f.json: vars.unused: declared, but no value of the file is \"$unused\": every variant "
                           "would be the same run (use it, or remove it)");
}

TEST(WorkerSetSpace, EnumeratesChoicesAndLeavesOutWhatTheContractRefuses) {
  json d = json::parse(kBase);
  d["trace"][0] = {{"op", "submit_next_level_group"}, {"task", "g"}, {"callable", "k"}, {"workers", "$gb"},
                   {"args_list", {json::array(), json::array()}}};
  d["vars"] = {{"gb", {{"choose", 2}, {"from", {0, 1, 2, 3}}}}};
  Scenario s = load(d);
  EXPECT_EQ(s.vars["gb"].size(), 6u);
  EXPECT_EQ(s.vars["gb"][0], json::array({0, 1}));
  EXPECT_EQ(s.vars_left_out["gb"], 0u);
  d["vars"]["gb"]["ordered"] = true;
  EXPECT_EQ(load(d).vars["gb"].size(), 12u);
  // 9 is no worker: every list holding it is left out (and counted).
  d["vars"]["gb"] = {{"choose", 2}, {"from", {0, 1, 9}}};
  s = load(d);
  EXPECT_EQ(s.vars["gb"], std::vector<json>{json::array({0, 1})});
  EXPECT_EQ(s.vars_left_out["gb"], 2u);
  // A REMOTE callable eligible on 2 and 3 only: lists with a chip are left out.
  d["trace"][0]["callable"] = "r";
  d["vars"]["gb"] = {{"choose", 2}, {"from", {0, 1, 2, 3}}};
  s = load(d);
  EXPECT_EQ(s.vars["gb"], std::vector<json>{json::array({2, 3})});
  EXPECT_EQ(s.vars_left_out["gb"], 5u);
  d["vars"]["gb"] = {{"choose", 5}, {"from", {0, 1, 2, 3}}};
  EXPECT_NE(load_error(d).find("vars.gb.choose: choose 5 of 4 ids: too few ids"), std::string::npos) << load_error(d);
  d["vars"]["gb"] = {{"choose", 2}, {"from", {0, 1}}, {"odered", true}};
  EXPECT_NE(load_error(d).find("vars.gb.odered: unknown key"), std::string::npos) << load_error(d);
}

}  // namespace
}  // namespace dirsched
