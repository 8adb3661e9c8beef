// why.hpp: the answer of `dirsched why` from a record written by hand (the demo's group g, and an
// import's row without causes), the row lookup in tasks.csv, and the report's wording of a chain.
#include "dirsched/why.hpp"

#include <gtest/gtest.h>

#include "dirsched/viz.hpp"

namespace dirsched::viz {
namespace {

record::TaskRow row(const std::string& name, const std::string& kind, double submit, double start, double end,
                    bool waits) {
  record::TaskRow r;
  r.job_id = name;
  r.kind = kind;
  r.callable = "k";
  r.allocated_resources = kind == "group" ? "0 1" : "0";
  r.submission_time = r.ready_time = submit;
  r.starting_time = start;
  r.finish_time = end;
  r.waiting_time = start - submit;
  r.execution_time = end - start;
  r.final_state = "COMPLETED";
  if (waits) {
    r.waits.emplace();
    r.waits->fill(0);
  }
  return r;
}

std::string csv(const std::vector<record::TaskRow>& rows, const record::TaskColumns& c) {
  std::string o = record::tasks_csv_header(c);
  for (const record::TaskRow& r : rows) record::encode_task_row(r, c, o);
  return o;
}

// The demo's g: READY at 0.5, launched at 7; busy 5 s, idle 1.5 s; held by a0, a1, a2 on 0, then b2 on 1.
record::Summary demo_summary() {
  record::Summary s;
  record::GroupWait g;
  g.task = "g";
  g.workers = {0, 1};
  g.ready_s = 0.5;
  g.launched_s = 7;
  g.ready_wait_s = 6.5;
  g.idle_target_s = 1.5;
  g.overtakes = 2;
  g.overtaken_by = {"a1", "a2"};
  g.blocked_by = std::vector<record::BlockedBy>{{0.5, 2, 0, "a0", std::nullopt, std::nullopt},
                                                {2, 4, 0, "a1", 2.0, std::string("fifo")},
                                                {4, 6, 0, "a2", 4.0, std::string("fifo")},
                                                {6, 7, 1, "b2", std::nullopt, std::nullopt}};
  s.groups.push_back(g);
  s.waits.emplace();
  s.waits->critical_path = {{"b2", 5, 7, "worker", std::string("b1")}, {"g", 7, 8, "target", std::string("b2")}};
  return s;
}

TEST(Why, FindsTheTaskRowAndOnlyIt) {
  const record::TaskColumns c;
  const std::string text = csv({row("g0", "single", 0, 1, 2, true), row("g", "group", 0.5, 7, 8, true)}, c);
  const auto g = find_task_row(text, "g", "tasks.csv");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->job_id, "g");  // not g0, whose line starts with "g"
  EXPECT_EQ(g->starting_time, 7);
  EXPECT_FALSE(find_task_row(text, "nope", "tasks.csv"));
  EXPECT_THROW(find_task_row("a,b\n", "g", "tasks.csv"), record::RecordError);
  // A name that needs quoting.
  const std::string quoted = csv({row("x,y", "single", 0, 1, 2, true)}, c);
  ASSERT_TRUE(find_task_row(quoted, "x,y", "tasks.csv"));
}

TEST(Why, ExplainsTheDemoGroup) {
  record::TaskRow r = row("g", "group", 0.5, 7, 8, true);
  (*r.waits)[6] = 5;    // wait_targets_busy_s
  (*r.waits)[7] = 1.5;  // wait_target_idle_s
  const TaskWhy w = explain_task(demo_summary(), r);
  ASSERT_TRUE(w.causes);
  EXPECT_EQ(w.causes->size(), record::kWaitColumns.size());
  EXPECT_EQ((*w.causes)[6].first, "targets_busy_s");
  ASSERT_TRUE(w.group);
  EXPECT_TRUE(w.on_critical_path);
  ASSERT_TRUE(w.before);
  EXPECT_EQ(w.before->task, "b2");
  const std::string text = why_text(w);
  EXPECT_EQ(text.rfind("g: group on workers [0, 1], COMPLETED\n", 0), 0u) << text;
  EXPECT_NE(text.find("submit 0.5 s, ready 0.5 s, start 7 s, end 8 s\n"), std::string::npos) << text;
  EXPECT_NE(text.find("waited 6.5 s: targets busy 5 s, target idle 1.5 s\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  2 to 4 s: a1 on 0 until 4 (a1 itself waited 2 s, mostly fifo)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  6 to 7 s: b2 on 1 until 7\n"), std::string::npos) << text;
  EXPECT_NE(text.find("overtaken by 2 singles: a1, a2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("critical path: on it, why not earlier: target (after b2); before it there: b2 (5 to 7 s)"),
            std::string::npos)
      << text;
  const nlohmann::ordered_json j = why_json(w);
  EXPECT_EQ(j["wait_s"], 6.5);
  EXPECT_EQ(j["wait_causes"]["target_idle_s"], 1.5);
  EXPECT_EQ(j["group"]["blocked_by"].size(), 4u);
  EXPECT_EQ(j["group"]["blocked_by"][1]["text"], "a1 on 0 until 4 (a1 itself waited 2 s, mostly fifo)");
  EXPECT_EQ(j["critical_path"]["before"]["task"], "b2");
}

TEST(Why, ASingleOffThePath) {
  const TaskWhy w = explain_task(demo_summary(), row("a1", "single", 0, 2, 4, true));
  EXPECT_FALSE(w.on_critical_path);
  EXPECT_FALSE(w.group);
  const std::string text = why_text(w);
  EXPECT_NE(text.find("waited 2 s\n"), std::string::npos) << text;  // no cause set: no split
  EXPECT_NE(text.find("critical path: not on it\n"), std::string::npos) << text;
  EXPECT_TRUE(why_json(w)["group"].is_null());
}

TEST(Why, AnImportRecordsNoCauses) {
  record::Summary s;  // an import's: no waits, groups without chains
  record::GroupWait g;
  g.task = "g";
  g.ready_wait_s = 6.5;
  s.groups.push_back(g);
  const TaskWhy w = explain_task(s, row("g", "group", 0.5, 7, 8, false));
  EXPECT_FALSE(w.causes);
  const std::string text = why_text(w);
  EXPECT_NE(text.find("waited 6.5 s (this run recorded no wait causes)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("held by: not recorded in this run\n"), std::string::npos) << text;
  EXPECT_NE(text.find("critical path: not recorded in this run\n"), std::string::npos) << text;
  EXPECT_TRUE(why_json(w)["wait_causes"].is_null());
}

// The report words each link of a chain as the command does.
TEST(Why, TheReportWordsTheChainAsTheCommand) {
  const record::Summary s = demo_summary();
  const std::string html = report_html(RunView{}, &s, std::nullopt, "<svg></svg>");
  for (const record::BlockedBy& b : *s.groups[0].blocked_by)
    EXPECT_NE(html.find(held_by_text(b)), std::string::npos) << held_by_text(b);
}

}  // namespace
}  // namespace dirsched::viz
