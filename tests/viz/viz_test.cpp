// The picture builders, on event logs written by hand: DAG nodes, edges, colours and shapes; lane
// order; FIFO depth steps; starvation shading; aggregation at 10,000 runs; trace events; the report.
#include "dirsched/viz.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <deque>

#include <regex>

namespace dirsched::viz {
namespace {

using nlohmann::json;

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// a (chip 5) writes x; g (group on 5 and 2) reads x; b on 2 fails; c is poisoned by b; r is rejected.
const char* kLog =
    R"({"seq":0,"t_s":0,"event":"submit","task":"a","kind":"single","callable":"k","members":1,"workers":[5]}
{"seq":1,"t_s":0,"event":"ready","task":"a","queue":"worker:5"}
{"seq":2,"t_s":0,"event":"dispatch","task":"a","member":0,"worker":5}
{"seq":3,"t_s":0,"event":"submit","task":"b","kind":"single","callable":"k","members":1,"workers":[2]}
{"seq":4,"t_s":0,"event":"ready","task":"b","queue":"worker:2"}
{"seq":5,"t_s":0,"event":"dispatch","task":"b","member":0,"worker":2}
{"seq":6,"t_s":0,"event":"submit","task":"g","kind":"group","callable":"k","members":2,"workers":[5,2],"deps":[{"producer":"a","buffer":"x"}]}
{"seq":7,"t_s":0,"event":"pending","task":"g","producers":["a"]}
{"seq":8,"t_s":0,"event":"submit","task":"c","kind":"single","callable":"k","members":1,"workers":[5],"deps":[{"producer":"b","buffer":"y"}]}
{"seq":9,"t_s":0,"event":"pending","task":"c","producers":["b"]}
{"seq":10,"t_s":0,"event":"reject","task":"r","code":"worker_negative","message":"m"}
{"seq":11,"t_s":0,"event":"submit","task":"s2","kind":"single","callable":"k","members":1,"workers":[5]}
{"seq":12,"t_s":0,"event":"ready","task":"s2","queue":"worker:5"}
{"seq":13,"t_s":1,"event":"member_end","task":"a","member":0,"worker":5,"outcome":"success"}
{"seq":14,"t_s":1,"event":"complete","task":"a"}
{"seq":15,"t_s":1,"event":"ready","task":"g","queue":"group"}
{"seq":16,"t_s":1,"event":"dispatch","task":"s2","member":0,"worker":5}
{"seq":17,"t_s":2,"event":"member_end","task":"b","member":0,"worker":2,"outcome":"failure"}
{"seq":18,"t_s":2,"event":"fail","task":"b","member":0}
{"seq":19,"t_s":2,"event":"poison","task":"c","cause":"b"}
{"seq":20,"t_s":3,"event":"member_end","task":"s2","member":0,"worker":5,"outcome":"success"}
{"seq":21,"t_s":3,"event":"complete","task":"s2"}
{"seq":22,"t_s":3,"event":"group_launched","task":"g"}
{"seq":23,"t_s":3,"event":"dispatch","task":"g","member":0,"worker":5}
{"seq":24,"t_s":3,"event":"dispatch","task":"g","member":1,"worker":2}
{"seq":25,"t_s":4,"event":"member_end","task":"g","member":0,"worker":5,"outcome":"success"}
{"seq":26,"t_s":4,"event":"member_end","task":"g","member":1,"worker":2,"outcome":"success"}
{"seq":27,"t_s":4,"event":"complete","task":"g"}
)";

// A summary written by hand, read through the run record's decoder as summary.json would be. The
// records live to the end of the test program (the pictures read them only while drawing).
const record::Summary* rec(const json& j) {
  static std::deque<record::Summary> kept;
  kept.push_back(record::decode(j, "summary.json"));
  return &kept.back();
}

json summary() {
  return json::parse(R"({"scenario":"t","outcome":"FAILED","makespan_s":4,
    "workers":[{"worker":5,"kind":"local_chip"},{"worker":2,"kind":"local_chip"},{"worker":"sub0","kind":"sub"}],
    "groups":[{"task":"g","workers":[5,2],"ready_wait_s":2,"idle_target_s":1,"overtakes":1,"overtaken_by":["s2"]}]})");
}

TEST(RunViewParse, KeepsEveryTaskAndItsFinalState) {
  json s = summary();
  RunView v = parse_run(kLog, rec(s));
  ASSERT_EQ(v.tasks.size(), 6u);
  EXPECT_EQ(v.find("b")->state, "FAILED");
  EXPECT_EQ(v.find("c")->state, "POISONED");
  EXPECT_EQ(v.find("c")->cause, "b");
  EXPECT_EQ(v.find("r")->state, "REJECTED");
  EXPECT_EQ(v.find("g")->runs.size(), 2u);
  EXPECT_DOUBLE_EQ(v.end_time, 4.0);
}

// run_cancellation: a cancelled task keeps its state, cause and run; a READY one leaves its queue's depth;
// the report lists it under its run.
TEST(RunViewParse, ACancelledTaskLeavesItsQueueAndIsListedUnderItsRun) {
  const std::string log =
      R"({"seq":0,"t_s":0,"event":"submit","task":"a","run":"r1","kind":"single","op":"submit_next_level","callable":"k","members":1,"workers":[0]}
{"seq":1,"t_s":0,"event":"ready","task":"a","run":"r1","queue":"worker:0"}
{"seq":2,"t_s":0,"event":"dispatch","task":"a","run":"r1","member":0,"worker":0}
{"seq":3,"t_s":0,"event":"submit","task":"b","run":"r1","kind":"single","op":"submit_next_level","callable":"k","members":1,"workers":[0]}
{"seq":4,"t_s":0,"event":"ready","task":"b","run":"r1","queue":"worker:0"}
{"seq":5,"t_s":0,"event":"submit","task":"g","run":"r1","kind":"group","op":"submit_next_level_group","callable":"k","members":2,"workers":[0,1]}
{"seq":6,"t_s":0,"event":"ready","task":"g","run":"r1","queue":"group"}
{"seq":7,"t_s":0.5,"event":"run_raise","run":"r1","message":"bad shape"}
{"seq":8,"t_s":0.5,"event":"cancel","task":"b","run":"r1","cause":"bad shape"}
{"seq":9,"t_s":0.5,"event":"cancel","task":"g","run":"r1","cause":"bad shape"}
{"seq":10,"t_s":1,"event":"member_end","task":"a","run":"r1","member":0,"worker":0,"outcome":"success"}
{"seq":11,"t_s":1,"event":"complete","task":"a","run":"r1"}
)";
  RunView v = parse_run(log, nullptr);
  EXPECT_EQ(v.find("b")->state, "CANCELLED");
  EXPECT_EQ(v.find("b")->cause, "bad shape");
  EXPECT_EQ(v.find("g")->run, "r1");
  EXPECT_DOUBLE_EQ(v.find("g")->end, 0.5);
  EXPECT_EQ(v.depth.at("worker:0").back().depth, 0);
  EXPECT_EQ(v.depth.at("group").back().depth, 0);
  const std::string html = report_html(v, nullptr, std::nullopt, "<svg/>");
  EXPECT_NE(html.find("<h2>Cancelled tasks</h2>"), std::string::npos);
  EXPECT_NE(html.find("<tr><td>r1</td><td>b, g</td><td>bad shape</td></tr>"), std::string::npos);
  EXPECT_EQ(report_html(parse_run(kLog, nullptr), nullptr, std::nullopt, "<svg/>").find("Cancelled"),
            std::string::npos);
}

TEST(RunViewParse, LanesFollowRegistrationOrderFromTheSummary) {
  json s = summary();
  EXPECT_EQ(parse_run(kLog, rec(s)).lanes, (std::vector<std::string>{"5", "2", "sub0"}));
  // Without a summary the NEXT_LEVEL lanes fall back to id order.
  EXPECT_EQ(parse_run(kLog, nullptr).lanes, (std::vector<std::string>{"2", "5"}));
}

TEST(RunViewParse, FifoDepthStepsUpOnReadyAndDownOnDispatch) {
  RunView v = parse_run(kLog, nullptr);
  const auto& w5 = v.depth.at("worker:5");
  ASSERT_EQ(w5.size(), 2u);  // a and s2 at t=0 collapse into one step per instant
  EXPECT_DOUBLE_EQ(w5[0].t, 0);
  EXPECT_EQ(w5[0].depth, 1);  // a ready+dispatched (0), then s2 ready (1)
  EXPECT_DOUBLE_EQ(w5[1].t, 1);
  EXPECT_EQ(w5[1].depth, 0);
  const auto& group = v.depth.at("group");
  ASSERT_EQ(group.size(), 2u);
  EXPECT_EQ(group[0].depth, 1);
  EXPECT_DOUBLE_EQ(group[1].t, 3);
  EXPECT_EQ(group[1].depth, 0);
}

TEST(RunViewParse, StarvationIsWhereTheReadyGroupHadAnIdleTarget) {
  RunView v = parse_run(kLog, nullptr);
  // g READY 1..3; chip 5 busy throughout (a then s2), chip 2 busy until 2 (b): idle 2..3.
  ASSERT_EQ(v.starved.size(), 1u);
  EXPECT_EQ(v.starved[0].group, "g");
  EXPECT_DOUBLE_EQ(v.starved[0].from, 2);
  EXPECT_DOUBLE_EQ(v.starved[0].to, 3);
}

TEST(RunViewParse, MalformedLineNamesItsNumber) {
  try {
    parse_run("{\"seq\":0,\"t_s\":0,\"event\":\"submit\",\"task\":\"a\",\"kind\":\"single\"}\nnot json\n",
              nullptr);
    FAIL();
  } catch (const VizError& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
}

// Issue 28 item 6: a member_end before its dispatch, or huge dispatch times, made the timeline's bar
// merge loop forever. The parser now refuses an end before its start (naming the line); huge times draw.
std::string one_run(const std::string& dispatch_t, const std::string& end_t) {
  return "{\"seq\":0,\"t_s\":0,\"event\":\"submit\",\"task\":\"a\",\"kind\":\"single\",\"workers\":[0]}\n"
         "{\"seq\":1,\"t_s\":0,\"event\":\"ready\",\"task\":\"a\",\"queue\":\"worker:0\"}\n"
         "{\"seq\":2,\"t_s\":" + dispatch_t + ",\"event\":\"dispatch\",\"task\":\"a\",\"member\":0,\"worker\":0}\n"
         "{\"seq\":3,\"t_s\":" + end_t + ",\"event\":\"member_end\",\"task\":\"a\",\"member\":0,\"worker\":0}\n"
         "{\"seq\":4,\"t_s\":" + end_t + ",\"event\":\"complete\",\"task\":\"a\"}\n";
}

TEST(RunViewParse, MemberEndBeforeItsDispatchIsRefusedWithItsLine) {
  for (const char* when : {"4294967296", "5"}) {
    try {
      parse_run(one_run(when, "1"), nullptr);
      FAIL() << when;
    } catch (const VizError& e) {
      EXPECT_NE(std::string(e.what()).find("line 4"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("earlier than its dispatch"), std::string::npos) << e.what();
    }
  }
}

// Times past the testbed's limit of 2^32 s never reach a picture: the record's reader refuses them.
TEST(RunViewParse, TimesPastTheLimitAreRefusedWithTheirLine) {
  for (const char* when : {"4294967296.5", "1e308", "18446744073709551616"}) {
    try {
      parse_run(one_run(when, when), nullptr);
      FAIL() << when;
    } catch (const VizError& e) {
      EXPECT_NE(std::string(e.what()).find("line 3: t_s: expected a time from 0 to 2^32 s"), std::string::npos) << e.what();
    }
  }
}

TEST(TimelinePicture, HugeTimesDrawInBoundedTime) {
  for (const char* when : {"4294967296", "4294967295.999999"}) {
    const RunView v = parse_run(one_run("1", when), nullptr);
    const std::string svg = timeline_svg(v);
    EXPECT_NE(svg.find("</svg>"), std::string::npos) << when;
    // Many tiny bars merge into one: the merge must also end when a bar is narrower than a pixel.
    const RunView w = parse_run(one_run(when, when), nullptr);
    EXPECT_NE(timeline_svg(w).find("</svg>"), std::string::npos) << when;
  }
}

TEST(DagPicture, OneNodePerTaskAndOneEdgePerDependencyLabelledWithItsBuffer) {
  const std::string dot = dag_dot(parse_run(kLog, nullptr));
  EXPECT_EQ(count(dot, " -> "), 2u);
  EXPECT_NE(dot.find("a -> g"), std::string::npos);
  EXPECT_NE(dot.find("b -> c"), std::string::npos);
  EXPECT_EQ(count(dot, "fillcolor=\"#"), 6u);  // one per task (the default is "white")
  std::regex edge_label(R"(a -> g[^;]*label=x)");
  EXPECT_TRUE(std::regex_search(dot, edge_label)) << dot;
}

TEST(DagPicture, ColoursByFinalStateAndShapesByKind) {
  const std::string dot = dag_dot(parse_run(kLog, nullptr));
  auto node = [&](const std::string& name) {
    const auto at = dot.find("\t" + name + "\t");
    return at == std::string::npos ? std::string() : dot.substr(at, dot.find(";", at) - at);
  };
  EXPECT_NE(node("b").find(state_colour("FAILED")), std::string::npos) << node("b");
  EXPECT_NE(node("c").find(state_colour("POISONED")), std::string::npos);
  EXPECT_NE(node("r").find(state_colour("REJECTED")), std::string::npos);
  EXPECT_NE(node("g").find("box3d"), std::string::npos);
  EXPECT_NE(node("g").find("[1]@2"), std::string::npos) << node("g");
}

TEST(DagPicture, SameRunDrawsTheSameBytes) {
  RunView v = parse_run(kLog, nullptr);
  EXPECT_EQ(dag_dot(v), dag_dot(v));
  auto svg = dag_svg(v);
  ASSERT_TRUE(svg.has_value());
  EXPECT_NE(svg->find("<svg"), std::string::npos);
  EXPECT_EQ(*svg, *dag_svg(v));
}

// The group FIFO and SUB FIFO lanes only when something queued there: kLog's group g waited READY 1-3,
// no SUB task ever queued.
TEST(TimelinePicture, HasALanePerWorkerThenTheFifosThatQueued) {
  json s = summary();
  const std::string svg = timeline_svg(parse_run(kLog, rec(s)));
  EXPECT_EQ(count(svg, "class=\"lane\""), 4u);
  EXPECT_EQ(svg.find(">SUB FIFO<"), std::string::npos);
  const auto w5 = svg.find(">worker 5<"), w2 = svg.find(">worker 2<"), sub = svg.find(">sub0<"),
             group = svg.find(">group FIFO<");
  ASSERT_NE(w5, std::string::npos);
  EXPECT_LT(w5, w2);
  EXPECT_LT(w2, sub);
  EXPECT_LT(sub, group);
  EXPECT_EQ(count(svg, "class=\"bar\""), 5u);      // a, b, s2, g[0], g[1]
  EXPECT_EQ(count(svg, "class=\"starved\""), 1u);       // on the group lane: 2-3, worker 2 idle
  EXPECT_EQ(count(svg, "class=\"starved-idle\""), 1u);  // on worker 2's lane only: 5 was busy
  EXPECT_GE(count(svg, "class=\"tick\""), 5u);
  EXPECT_NE(svg.find("data-queue=\"worker:5\""), std::string::npos);
}

// Runs past kMaxPictureTasks are drawn from one streaming pass (aggregate_run): kLog read so, in 4
// intervals of 1 s. Worker 5 runs a (0-1), s2 (1-3) and g[0] (3-4): busy every interval; worker 2 runs
// b (0-2) and g[1] (3-4): idle in 2-3. g waited READY 1-3. The trace is windowed to 2 member runs.
TEST(AggregatedPicture, BusyTimePerIntervalGroupWaitsAndAWindowedTrace) {
  char path[] = "/tmp/dirsched-viz-aggregate-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string log = kLog;
  ASSERT_EQ(::write(fd, log.data(), log.size()), static_cast<ssize_t>(log.size()));
  ::close(fd);
  json s = summary();
  const Aggregate a = aggregate_run(path, rec(s), 4, 2);
  ::unlink(path);
  EXPECT_DOUBLE_EQ(a.end_time, 4);
  EXPECT_EQ(a.tasks, 5u);  // submitted: r was rejected
  EXPECT_EQ(a.runs, 5u);
  ASSERT_EQ(a.lanes, (std::vector<std::string>{"5", "2", "sub0"}));  // the summary's registration order
  EXPECT_EQ(a.busy[0], (std::vector<float>{1, 1, 1, 1}));
  EXPECT_EQ(a.busy[1], (std::vector<float>{1, 1, 0, 1}));
  ASSERT_EQ(a.group_waits.size(), 1u);
  EXPECT_EQ(a.group_waits[0].group, "g");
  EXPECT_DOUBLE_EQ(a.group_waits[0].from, 1);
  EXPECT_DOUBLE_EQ(a.group_waits[0].to, 3);
  EXPECT_EQ(a.window.size(), 2u);
  const std::string svg = aggregate_timeline_svg(a);
  EXPECT_NE(svg.find("Aggregated timeline: 5"), std::string::npos) << svg.substr(0, 400);
  EXPECT_EQ(count(svg, "class=\"group-wait\""), 1u);
  const json trace = json::parse(aggregate_trace(a));  // valid JSON, and says it is windowed
  EXPECT_NE(trace["otherData"]["note"].get<std::string>().find("member runs shown for the first 2 of 5"),
            std::string::npos)
      << trace["otherData"].dump();
}

// The aggregated reader refuses a time past 2^32 s as the record's reader does (it drew "intervals of
// 2.5e+305 s" where fidelity refused the same folder).
TEST(AggregatedPicture, TimesPastTheLimitAreRefusedWithTheirLine) {
  char path[] = "/tmp/dirsched-viz-aggregate-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string log = one_run("1", "1e308");
  ASSERT_EQ(::write(fd, log.data(), log.size()), static_cast<ssize_t>(log.size()));
  ::close(fd);
  try {
    (void)aggregate_run(path, nullptr, 4, 2);
    ADD_FAILURE() << "accepted";
  } catch (const VizError& e) {
    EXPECT_NE(std::string(e.what()).find("line 4: t_s: expected a time from 0 to 2^32 s"), std::string::npos) << e.what();
  }
  ::unlink(path);
}

TEST(TimelinePicture, TenThousandRunsAggregateInsteadOfVanishing) {
  std::string log;
  int seq = 0;
  for (int i = 0; i < 10000; ++i) {
    const std::string t = "t" + std::to_string(i), at = std::to_string(i * 0.001),
                      end = std::to_string(i * 0.001 + 0.001);
    log += "{\"seq\":" + std::to_string(seq++) + ",\"t_s\":" + at + ",\"event\":\"submit\",\"task\":\"" + t +
           "\",\"kind\":\"single\",\"workers\":[0]}\n";
    log += "{\"seq\":" + std::to_string(seq++) + ",\"t_s\":" + at + ",\"event\":\"dispatch\",\"task\":\"" +
           t + "\",\"member\":0,\"worker\":0}\n";
    log += "{\"seq\":" + std::to_string(seq++) + ",\"t_s\":" + end + ",\"event\":\"member_end\",\"task\":\"" +
           t + "\",\"member\":0,\"worker\":0,\"outcome\":\"success\"}\n";
  }
  const std::string svg = timeline_svg(parse_run(log, nullptr));
  EXPECT_EQ(count(svg, "class=\"bar\""), 0u);
  const std::size_t agg = count(svg, "class=\"agg\"");
  EXPECT_GE(agg, 1u);
  EXPECT_LT(agg, 1100u);  // at most about one rectangle per pixel column
  EXPECT_LT(svg.size(), 400000u);
}

TEST(TracePicture, OneCompleteEventPerMemberRunAndCountersAndInstants) {
  json t = json::parse(chrome_trace(parse_run(kLog, nullptr)));
  std::size_t x = 0, counters = 0, instants = 0;
  for (const auto& e : t["traceEvents"]) {
    const std::string ph = e["ph"];
    x += ph == "X" && e.value("cat", "") != "group_wait";  // member runs
    counters += ph == "C";
    instants += ph == "i";
  }
  EXPECT_EQ(x, 5u);
  EXPECT_GE(counters, 4u);
  EXPECT_EQ(instants, 3u);  // reject r, fail b, poison c
}

// 40 independent singles s1..s40 and two chains of 10: the shape issue 14 measured at 1415 x 2972 pt.
std::string independent_and_two_chains() {
  std::string log;
  int seq = 0;
  auto line = [&](const std::string& body) {
    log += "{\"seq\":" + std::to_string(seq++) + "," + body + "}\n";
  };
  for (int i = 1; i <= 40; ++i)
    line(R"("t_s":0,"event":"submit","task":"s)" + std::to_string(i) +
         R"(","kind":"single","callable":"k","members":1,"workers":[0])");
  for (const char* c : {"a", "b"})
    for (int k = 0; k < 10; ++k)
      line(R"("t_s":0,"event":"submit","task":")" + std::string(c) + std::to_string(k) +
           R"(","kind":"single","callable":"k","members":1,"workers":[0])" +
           (k ? R"(,"deps":[{"producer":")" + std::string(c) + std::to_string(k - 1) + R"(","buffer":"x"}])"
              : std::string()));
  return log;
}

TEST(DagPicture, PacksIndependentComponentsIntoAWideDrawingNotOneTallColumn) {
  const auto svg = dag_svg(parse_run(independent_and_two_chains(), nullptr));
  ASSERT_TRUE(svg);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(*svg, m, std::regex(R"re(<svg width="(\d+)pt" height="(\d+)pt")re")));
  const double w = std::stod(m[1]), h = std::stod(m[2]);
  // Unpacked, dot stacks the 40 singles in one column: taller than wide (about 2.1 : 1).
  EXPECT_LT(h / w, 0.6) << w << " x " << h;
  EXPECT_LT(h, 1000) << w << " x " << h;
}

TEST(DagPicture, ListsNodesInSubmitOrder) {
  // s10 is submitted before s2: the file follows the log, not the names.
  const std::string log =
      R"({"seq":0,"t_s":0,"event":"submit","task":"s10","kind":"single","callable":"k","members":1,"workers":[0]}
{"seq":1,"t_s":0,"event":"submit","task":"s2","kind":"single","callable":"k","members":1,"workers":[0]}
)";
  const std::string dot = dag_dot(parse_run(log, nullptr));
  const auto s2 = dot.find("\ts2\t"), s10 = dot.find("\ts10\t");
  ASSERT_NE(s2, std::string::npos) << dot.substr(0, 400);
  ASSERT_NE(s10, std::string::npos);
  EXPECT_LT(s10, s2);
}

// Graphviz 2.43 drops every edge label when dot packs components; the drawing must keep them.
TEST(DagPicture, DrawsEveryEdgeLabelWhenTheGraphHasSeveralComponents) {
  const auto svg = dag_svg(parse_run(kLog, nullptr));  // a -x-> g, b -y-> c, r, s2: four components
  ASSERT_TRUE(svg);
  EXPECT_EQ(count(*svg, ">x</text>"), 1u) << *svg;
  EXPECT_EQ(count(*svg, ">y</text>"), 1u);
  const auto chains = dag_svg(parse_run(independent_and_two_chains(), nullptr));
  ASSERT_TRUE(chains);
  EXPECT_EQ(count(*chains, ">x</text>"), 18u);  // two chains of 10
  EXPECT_EQ(count(*chains, "class=\"node\""), 60u);
}

// Components are placed row by row in the order their first task was submitted: s1 s2 s3 ... left to
// right, then the next row, and the chains a0.. and b0.. after s40.
TEST(DagPicture, PlacesIndependentComponentsInSubmitOrderRowByRow) {
  const auto svg = dag_svg(parse_run(independent_and_two_chains(), nullptr));
  ASSERT_TRUE(svg);
  std::regex piece(R"re(<g class="component" transform="translate\(([0-9.]+) ([0-9.]+)\)">[^]*?<title>dag</title>[^]*?<title>([^<]+)</title>)re");
  std::vector<std::string> order;
  std::vector<std::pair<double, double>> at;  // (y, x)
  for (auto it = std::sregex_iterator(svg->begin(), svg->end(), piece); it != std::sregex_iterator(); ++it) {
    order.push_back((*it)[3]);
    at.push_back({std::stod((*it)[2]), std::stod((*it)[1])});
  }
  std::vector<std::string> expected;
  for (int i = 1; i <= 40; ++i) expected.push_back("s" + std::to_string(i));
  expected.push_back("a0");
  expected.push_back("b0");
  EXPECT_EQ(order, expected);
  for (std::size_t i = 1; i < at.size(); ++i)
    EXPECT_TRUE(at[i - 1] < at[i]) << order[i - 1] << " is not before " << order[i];
  ASSERT_GT(at.size(), 2u);
  EXPECT_EQ(at[0].first, at[1].first);  // s1 and s2 share the first row
  EXPECT_LT(at[0].second, at[1].second);
}

TEST(DagPicture, PastTheLimitDrawsTasksMergedByCallableAndWorker) {
  std::string log;
  const std::size_t n = kMaxDagSvgNodes + 200;
  for (std::size_t i = 0; i < n; ++i)
    log += "{\"seq\":" + std::to_string(i) + R"(,"t_s":0,"event":"submit","task":"t)" + std::to_string(i) +
           R"(","kind":"single","callable":")" + (i % 2 ? "odd" : "even") + R"(","members":1,"workers":[)" +
           std::to_string(i % 3) + "]" +
           (i >= 6 ? R"(,"deps":[{"producer":"t)" + std::to_string(i - 6) + R"(","buffer":"x"}])"
                   : std::string()) +
           "}\n";
  RunView v = parse_run(log, nullptr);
  const auto svg = dag_svg(v);
  ASSERT_TRUE(svg);
  EXPECT_EQ(count(*svg, "class=\"node\""), 6u);  // {even, odd} x workers {0, 1, 2}
  EXPECT_NE(svg->find("even @ worker 0"), std::string::npos);
  EXPECT_NE(svg->find("200 tasks"), std::string::npos);  // 1,200 tasks over six nodes
  std::string note;
  render_all(v, nullptr, {"dag"}, &note);
  EXPECT_NE(note.find("dag.svg condensed"), std::string::npos) << note;
}

// A group READY on worker 5 from `from` to its launch at `to`, with worker 5 idle all that time.
void add_waiting_group(RunView& v, const std::string& name, double from, double to) {
  TaskView g;
  g.name = name;
  g.kind = "group";
  g.workers = {"5"};
  g.ready = from;
  g.start = to;
  v.index[name] = v.tasks.size();
  v.tasks.push_back(g);
  v.starved.push_back({name, {"5"}, from, to});
}

TEST(TimelinePicture, HasItsOwnLegendADepthScaleAndOneLabelledShadePerWaitingGroup) {
  json s = summary();
  RunView v = parse_run(kLog, rec(s));
  add_waiting_group(v, "h", 3.2, 3.9);  // a second waiting group
  const std::string svg = timeline_svg(v);
  EXPECT_NE(svg.find("<g class=\"legend\">"), std::string::npos);
  EXPECT_NE(svg.find(">g READY: its wait, its idle targets<"), std::string::npos);
  EXPECT_NE(svg.find(">h READY: its wait, its idle targets<"), std::string::npos);
  EXPECT_NE(svg.find(">single<"), std::string::npos);
  EXPECT_GE(count(svg, "class=\"depth-scale\""), 2u);
  EXPECT_EQ(count(svg, "class=\"depth-scale\""), count(svg, "class=\"depth\""));
  const std::vector<LegendItem> legend = timeline_legend(v);
  std::vector<std::string> shades;
  for (const LegendItem& it : legend)
    if (it.kind == "shade") shades.push_back(it.colour);
  ASSERT_EQ(shades.size(), 2u);
  EXPECT_NE(shades[0], shades[1]);
  EXPECT_NE(svg.find("data-group=\"h\""), std::string::npos);
  EXPECT_GE(count(svg, "class=\"starved-label\""), 1u);
}

TEST(TimelinePicture, LegendIsBoundedAndListsOnlyWhatOccurs) {
  json s = summary();
  RunView v = parse_run(kLog, rec(s));
  for (int k = 0; k < 56; ++k) add_waiting_group(v, "x" + std::to_string(k), 3.2, 3.9);
  const std::vector<LegendItem> legend = timeline_legend(v);
  EXPECT_LE(legend.size(), 16u);
  EXPECT_NE(timeline_svg(v).find(">51 more groups READY: waits, idle targets<"), std::string::npos);
  for (const LegendItem& it : legend) EXPECT_NE(it.text, "SUB task");  // kLog runs no SUB task
  RunView empty;
  EXPECT_TRUE(timeline_legend(empty).empty());
}

// Issue 24, "a timeline that explains": g (READY 1-3 on 5 and 2) is drawn as a wait span; worker 2,
// idle 2-3, is shaded; the busy targets that held it (the summary's blocking chain) carry strips; s2,
// which overtook it, is marked; g's bar holds the arrow from its producer a, shown on hover.
TEST(TimelinePicture, ExplainsWhyAGroupWaited) {
  json s = summary();
  s["groups"][0]["blocked_by"] = json::parse(
      R"([{"from_s":1,"to_s":2,"worker":2,"task":"b"},{"from_s":2,"to_s":3,"worker":5,"task":"s2"},)"
      R"({"from_s":1,"to_s":1.5,"task":"h"}])");  // the last: behind a group ahead (no worker)
  const std::string svg = timeline_svg(parse_run(kLog, rec(s)));
  auto titles = [&](const std::string& cls) {
    std::vector<std::string> out;
    const std::regex re("class=\"" + cls + "\"[^>]*><title>([^<]*)</title>");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it)
      out.push_back((*it)[1]);
    return out;
  };
  EXPECT_EQ(titles("group-wait"), (std::vector<std::string>{"g READY 1-3 s, waited 2 s, then launched"}));
  EXPECT_EQ(titles("starved-idle"), (std::vector<std::string>{"worker 2 idle while g sat READY, 2-3 s"}));
  EXPECT_EQ(titles("held"), (std::vector<std::string>{"worker 2 busy with b, holding g, 1-2 s",
                                                      "worker 5 busy with s2, holding g, 2-3 s",
                                                      "behind group h, holding g, 1-1.5 s"}));
  EXPECT_EQ(titles("overtake"),
            (std::vector<std::string>{"s2 overtook g: dispatched on 5 at 1 s while g was READY"}));
  // Each on its own lane (lanes from y 30, 42 apart: worker 5, worker 2, sub0, group FIFO): the idle
  // shade on worker 2's lane only, the strips on the lane of the worker named, or the group FIFO's.
  auto ys = [&](const std::string& cls) {
    std::vector<std::string> out;
    const std::regex re("class=\"" + cls + "\" x=\"[^\"]*\" y=\"([^\"]*)\"");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it)
      out.push_back((*it)[1]);
    return out;
  };
  EXPECT_EQ(ys("starved-idle"), (std::vector<std::string>{"72"}));
  EXPECT_EQ(ys("held"), (std::vector<std::string>{"72.5", "30.5", "156.5"}));
  // g's first member bar and the arrow from a (ended at 1 on worker 5) in one hover group.
  const std::regex task_group("<g class=\"task\"><rect class=\"bar\"[^>]*><title>g\\[0\\] on 5[^<]*</title></rect>\n"
                              "(<text[^>]*>[^<]*</text>\n)?<g class=\"deps\"><g><title>a -> g</title><line [^>]*/>"
                              "<path [^>]*/></g></g></g>");
  EXPECT_TRUE(std::regex_search(svg, task_group)) << svg;
  EXPECT_EQ(count(svg, "<g class=\"task\">"), 1u);  // c, the other consumer, never ran
  EXPECT_NE(svg.find(".task:hover>.deps"), std::string::npos);
  for (const char* item : {">g READY: its wait, its idle targets<", ">single that overtook a READY group<",
                           ">strip, in the group's colour: a busy target or the group ahead holding it<",
                           ">dependencies: arrows while the pointer is on a bar<"})
    EXPECT_NE(svg.find(item), std::string::npos) << item;
  // Without the summary there is no blocking chain and no overtake to draw; the wait and idle shade stay.
  const std::string bare = timeline_svg(parse_run(kLog, nullptr));
  EXPECT_EQ(bare.find("class=\"held\""), std::string::npos);
  EXPECT_EQ(bare.find("class=\"overtake\""), std::string::npos);
  EXPECT_NE(bare.find("class=\"group-wait\""), std::string::npos);
}

TEST(TimelinePicture, DependencyArrowsAreLeftOutPastTheirBoundAndTheLegendSaysSo) {
  RunView v = parse_run(kLog, nullptr);
  for (int k = 0; k < 4000; ++k) v.deps.push_back({"p" + std::to_string(k), "q", "x"});
  const std::string svg = timeline_svg(v);
  EXPECT_EQ(svg.find("<g class=\"task\">"), std::string::npos);
  EXPECT_NE(svg.find(">dependency arrows left out (4,002 dependencies, more than 4,000)<"), std::string::npos);
}

TEST(TimelinePicture, OutlinesTheCriticalPathFromTheSummary) {
  json s = summary();
  s["critical_path"] = json::array({json{{"task", "a"}, {"start_s", 0}, {"end_s", 1}, {"why", "submitted"}, {"after", nullptr}}});
  const RunView v = parse_run(kLog, rec(s));
  const std::string svg = timeline_svg(v);
  EXPECT_EQ(count(svg, "data-critical=\"1\""), 1u);
  EXPECT_NE(svg.find("on the critical path</text>"), std::string::npos);
  EXPECT_EQ(timeline_svg(parse_run(kLog, nullptr)).find("on the critical path"), std::string::npos);
}

TEST(TracePicture, HasFlowArrowsForDependenciesAndGroupMembersAndSlicesForGroupWaits) {
  json t = json::parse(chrome_trace(parse_run(kLog, nullptr)));
  std::map<std::string, int> starts, finishes;
  std::size_t waits = 0;
  for (const auto& e : t["traceEvents"]) {
    const std::string ph = e["ph"];
    if (ph == "s") ++starts[e["cat"].get<std::string>()];
    if (ph == "f") ++finishes[e["cat"].get<std::string>()];
    if (ph == "X" && e.value("cat", "") == "group_wait") {
      ++waits;
      EXPECT_EQ(e["ts"].get<double>(), 1e6);   // g READY at 1 s
      EXPECT_EQ(e["dur"].get<double>(), 2e6);  // launched at 3 s
    }
  }
  EXPECT_EQ(starts["dependency"], 1);  // a -> g (c never ran: poisoned)
  EXPECT_EQ(finishes["dependency"], 1);
  EXPECT_EQ(starts["group"], 1);  // g[0] -> g[1]
  EXPECT_EQ(finishes["group"], 1);
  EXPECT_EQ(waits, 1u);
}

TEST(ReportPage, IsSelfContained) {
  json s = summary();
  RunView v = parse_run(kLog, rec(s));
  const std::string html = report_html(v, rec(s), dag_svg(v), timeline_svg(v));
  EXPECT_EQ(count(html, "<svg"), 2u);
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  std::regex remote(R"((src|href)=["']https?:)");
  EXPECT_FALSE(std::regex_search(html, remote));
  EXPECT_NE(html.find("s2"), std::string::npos);  // the overtake shows in the starvation table
}

// b holds chip 1 until 2; g on chips 0 and 1 is READY from 0.5 and launches at 2; s waits on chip 0
// (held for g under head_reservation) and a reservation_stall is logged at 1.5.
const char* kReservedLog =
    R"({"seq":0,"t_s":0,"event":"submit","task":"b","kind":"single","callable":"k","members":1,"workers":[1]}
{"seq":1,"t_s":0,"event":"ready","task":"b","queue":"worker:1"}
{"seq":2,"t_s":0,"event":"dispatch","task":"b","member":0,"worker":1}
{"seq":3,"t_s":0.5,"event":"submit","task":"g","kind":"group","callable":"k","members":2,"workers":[0,1]}
{"seq":4,"t_s":0.5,"event":"ready","task":"g","queue":"group"}
{"seq":5,"t_s":0.5,"event":"group_blocked","task":"g","busy":[1]}
{"seq":6,"t_s":1,"event":"submit","task":"s","kind":"single","callable":"k","members":1,"workers":[0]}
{"seq":7,"t_s":1,"event":"ready","task":"s","queue":"worker:0"}
{"seq":8,"t_s":1.5,"event":"reservation_stall","task":"g","busy":[1],"idle_queued":[0],"waited_s":1}
{"seq":9,"t_s":2,"event":"member_end","task":"b","member":0,"worker":1,"outcome":"success"}
{"seq":10,"t_s":2,"event":"complete","task":"b"}
{"seq":11,"t_s":2,"event":"group_launched","task":"g"}
{"seq":12,"t_s":2,"event":"dispatch","task":"g","member":0,"worker":0}
{"seq":13,"t_s":2,"event":"dispatch","task":"g","member":1,"worker":1}
{"seq":14,"t_s":3,"event":"member_end","task":"g","member":0,"worker":0,"outcome":"success"}
{"seq":15,"t_s":3,"event":"member_end","task":"g","member":1,"worker":1,"outcome":"success"}
{"seq":16,"t_s":3,"event":"complete","task":"g"}
)";

json policy_summary(const char* policy) {
  return json{{"policy", policy},
              {"stall_report_s", 0.5},
              {"workers", json::array({{{"worker", 0}, {"kind", "local_chip"}},
                                       {{"worker", 1}, {"kind", "local_chip"}}})}};
}

TEST(PolicyPictures, ReservedIdleTimeIsABandOnlyUnderHeadReservation) {
  const json hr = policy_summary("head_reservation");
  const RunView v = parse_run(kReservedLog, rec(hr));
  ASSERT_EQ(v.reserved.size(), 1u);  // chip 0 idle and held 0.5..2; chip 1 was busy all along
  EXPECT_EQ(v.reserved[0].worker, "0");
  EXPECT_EQ(v.reserved[0].from, 0.5);
  EXPECT_EQ(v.reserved[0].to, 2.0);
  const std::string svg = timeline_svg(v);
  EXPECT_EQ(count(svg, "class=\"reserved\""), 1u);
  EXPECT_EQ(count(svg, ">reserved, idle: held for the blocked group head</text>"), 1u);  // in the legend
  const json seed = policy_summary("seed");
  EXPECT_TRUE(parse_run(kReservedLog, rec(seed)).reserved.empty());
}

TEST(PolicyPictures, StallReportsAreMarkedAndListed) {
  const json hr = policy_summary("head_reservation");
  const RunView v = parse_run(kReservedLog, rec(hr));
  ASSERT_EQ(v.stalls.size(), 1u);
  EXPECT_EQ(v.stalls[0].idle_queued, std::vector<std::string>{"0"});
  const std::string svg = timeline_svg(v);
  EXPECT_EQ(count(svg, "class=\"stall\""), 1u);
  EXPECT_NE(svg.find("reservation_stall g at 1.5 s"), std::string::npos);
  const std::string html = report_html(v, rec(hr), std::nullopt, svg);
  EXPECT_NE(html.find("<th>policy</th><td>head_reservation</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>reservation_stall</td><td>g</td><td>1</td><td>0</td>"), std::string::npos);
}

TEST(ReportPage, SaysWhichScenarioSeedPolicyVariantAndVersionItShows) {
  json s = summary();
  s["description"] = "What this run pins.";
  s["seed"] = 7;
  s["policy"] = "head_reservation";
  s["vars"] = {{"gw", {2, 3}}};
  s["variant"] = 3;
  s["dirsched_version"] = "9.8.7";
  RunView v = parse_run(kLog, rec(s));
  const std::string html = report_html(v, rec(s), std::nullopt, timeline_svg(v));
  EXPECT_NE(html.find("What this run pins."), std::string::npos);
  EXPECT_NE(html.find("Variant 3 of the sweep:</b> gw = [2,3]"), std::string::npos);
  EXPECT_NE(html.find("<th>seed</th><td>7</td>"), std::string::npos);
  EXPECT_NE(html.find("<th>policy</th><td>head_reservation</td>"), std::string::npos);
  EXPECT_NE(html.find("<th>dirsched</th><td>9.8.7</td>"), std::string::npos);
  // Without a summary the page names no policy (it cannot know one).
  EXPECT_EQ(report_html(v, nullptr, std::nullopt, "").find("<th>policy</th>"), std::string::npos);
}

TEST(ReportPage, ListsGroupsWorstWaitFirstCappedWithALinkToAll) {
  json s = summary();
  s["groups"] = json::array();
  const std::size_t n = kReportGroupRows + 10;
  for (std::size_t i = 0; i < n; ++i)  // g7 waits longest
    s["groups"].push_back({{"task", "g" + std::to_string(i)},
                           {"workers", {5, 2}},
                           {"ready_wait_s", i == 7 ? 100.0 : static_cast<double>(i % 13)},
                           {"idle_target_s", 0},
                           {"overtakes", 0},
                           {"overtaken_by", json::array()}});
  RunView v = parse_run(kLog, rec(s));
  const std::string html = report_html(v, rec(s), std::nullopt, "");
  const auto table = html.find("<table class=\"groups\">");
  const auto all = html.find("<table class=\"groups-all\">");
  ASSERT_NE(table, std::string::npos);
  ASSERT_NE(all, std::string::npos);
  const std::string capped = html.substr(table, html.find("</table>", table) - table);
  EXPECT_EQ(count(capped, "<tr><td>"), kReportGroupRows);
  EXPECT_EQ(capped.find("<tr><td>"), capped.find("<tr><td>g7<"));  // worst first
  EXPECT_EQ(count(html.substr(all), "<tr><td>"), n);
  EXPECT_NE(html.find("href=\"#all-groups\""), std::string::npos);
  EXPECT_NE(html.find("id=\"all-groups\""), std::string::npos);
}

// `workers` NEXT_LEVEL workers 0..workers-1 and three singles on 0, 7 and workers-1; a summary that lists
// every worker (busy or not) in id order.
std::pair<RunView, json> wide_run(int workers) {
  std::string log;
  int seq = 0;
  json ws = json::array();
  for (int w = 0; w < workers; ++w) ws.push_back({{"worker", w}, {"kind", "local_chip"}, {"busy_s", 0.0}});
  for (int w : {0, 7, workers - 1}) {
    const std::string t = "t" + std::to_string(w), id = std::to_string(w);
    log += "{\"seq\":" + std::to_string(seq++) + R"(,"t_s":0,"event":"submit","task":")" + t +
           R"(","kind":"single","callable":"k","members":1,"workers":[)" + id + "]}\n";
    log += "{\"seq\":" + std::to_string(seq++) + R"(,"t_s":0,"event":"dispatch","task":")" + t +
           R"(","member":0,"worker":)" + id + "}\n";
    log += "{\"seq\":" + std::to_string(seq++) + R"(,"t_s":1,"event":"member_end","task":")" + t +
           R"(","member":0,"worker":)" + id + R"(,"outcome":"success"})" + "\n";
    ws[static_cast<std::size_t>(w)]["busy_s"] = 1.0;
  }
  json s = {{"scenario", "wide"}, {"workers", ws}};
  return {parse_run(log, rec(s)), s};
}

TEST(TimelinePicture, PastTheLaneLimitDrawsOnlyBusyWorkersAndCountsTheIdleOnes) {
  auto [v, s] = wide_run(static_cast<int>(kMaxIdleLanes) + 100);
  const std::string svg = timeline_svg(v);
  EXPECT_EQ(count(svg, "class=\"lane\""), 3u) << "workers 0, 7, 299 (no FIFO lane: nothing queued)";
  EXPECT_NE(svg.find(">worker 7<"), std::string::npos);
  EXPECT_NE(svg.find(">worker 299<"), std::string::npos);
  EXPECT_EQ(svg.find(">worker 8<"), std::string::npos);
  EXPECT_NE(svg.find("<text class=\"idle-note\" x=\"120\" y=\"36\">297 idle workers not drawn</text>"),
            std::string::npos);
  const std::string html = report_html(v, rec(s), std::nullopt, svg);
  EXPECT_NE(html.find("297 idle workers not listed"), std::string::npos);
  EXPECT_EQ(count(html, "<td>local_chip</td>"), 3u);
  const json trace = json::parse(chrome_trace(v));
  std::size_t threads = 0;
  for (const auto& e : trace["traceEvents"]) threads += e.value("name", "") == "thread_name";
  EXPECT_EQ(threads, 3u);
}

TEST(TimelinePicture, UpToTheLaneLimitDrawsEveryWorkerAsBefore) {
  auto [v, s] = wide_run(static_cast<int>(kMaxIdleLanes));
  const std::string svg = timeline_svg(v);
  EXPECT_EQ(count(svg, "class=\"lane\""), kMaxIdleLanes);
  EXPECT_EQ(svg.find("idle-note"), std::string::npos);
  // The first lane sits where it always did: 30 px from the top.
  EXPECT_NE(svg.find("<rect class=\"lane\" x=\"0\" y=\"30\""), std::string::npos);
  const std::string html = report_html(v, rec(s), std::nullopt, svg);
  EXPECT_EQ(count(html, "<td>local_chip</td>"), kMaxIdleLanes);
  EXPECT_EQ(html.find("not listed"), std::string::npos);
}


// Issue 55, "a legend that lists only what the picture holds": every swatch's colour is used by a mark
// above the legend, drawn the same way; no entry for a mark the picture lacks (reserved band, stall
// report, merged runs, a queue that never held anything).
std::string above_legend(const std::string& svg) { return svg.substr(0, svg.find("<g class=\"legend\">")); }
std::string legend_part(const std::string& svg) { return svg.substr(svg.find("<g class=\"legend\">")); }
bool has_entry(const std::vector<LegendItem>& legend, const std::string& prefix) {
  for (const LegendItem& it : legend)
    if (it.text.rfind(prefix, 0) == 0) return true;
  return false;
}

TEST(TimelineLegend, EverySwatchIsAMarkDrawnAboveIt) {
  json s = summary();
  s["groups"][0]["blocked_by"] = json::parse(R"([{"from_s":1,"to_s":2,"worker":2,"task":"b"}])");
  s["critical_path"] = json::array({json{{"task", "a"}, {"start_s", 0}, {"end_s", 1}, {"why", "submitted"}, {"after", nullptr}}});
  const json hr = policy_summary("head_reservation");
  for (const RunView& v : {parse_run(kLog, rec(s)), parse_run(kLog, nullptr), parse_run(kReservedLog, rec(hr))}) {
    const std::string svg = timeline_svg(v), body = above_legend(svg), legend = legend_part(svg);
    const std::vector<LegendItem> items = timeline_legend(v);
    ASSERT_FALSE(items.empty());
    for (const LegendItem& it : items) {
      const std::string c = "\"" + it.colour + "\"";
      EXPECT_TRUE(body.find("fill=" + c) != std::string::npos || body.find("stroke=" + c) != std::string::npos)
          << it.text << ": " << it.colour << " is drawn nowhere above the legend";
      EXPECT_NE(legend.find(">" + it.text + "<"), std::string::npos) << it.text;
    }
  }
}

TEST(TimelineLegend, AnEntryOnlyWhenItsMarkIsInThePicture) {
  json s = summary();
  const RunView plain = parse_run(kLog, rec(s));
  const std::vector<LegendItem> legend = timeline_legend(plain);
  // kLog at 1,200 px: every run is wider than a pixel, no policy band, no stall, no SUB task queued.
  EXPECT_FALSE(has_entry(legend, "runs merged")) << "no run is thinner than a pixel";
  EXPECT_FALSE(has_entry(legend, "reserved, idle"));
  EXPECT_FALSE(has_entry(legend, "stall report"));
  EXPECT_FALSE(has_entry(legend, "SUB tasks queued"));
  EXPECT_FALSE(has_entry(legend, "on the critical path"));
  EXPECT_TRUE(has_entry(legend, "singles queued on the worker"));  // s2 waited on worker 5, 0-1 s
  EXPECT_TRUE(has_entry(legend, "groups queued"));                 // g, 1-3 s
  const std::string svg = timeline_svg(plain);
  EXPECT_EQ(svg.find("class=\"agg\""), std::string::npos);
  EXPECT_EQ(svg.find("reserved, idle"), std::string::npos) << "not even in the header";
  EXPECT_EQ(svg.find("stall report"), std::string::npos) << "not even in the header";
  // Now each mark is there, and so is its entry.
  RunView merged = plain;
  for (int k = 0; k < 3; ++k) merged.bars["2"].push_back({"t" + std::to_string(k), 0, "single", "2", 3.5 + 0.0001 * k,
                                                          3.5 + 0.0001 * (k + 1), false, 100u + static_cast<unsigned>(k), -1});
  EXPECT_TRUE(has_entry(timeline_legend(merged), "runs merged"));
  EXPECT_NE(timeline_svg(merged).find("class=\"agg\""), std::string::npos);
  const json hr = policy_summary("head_reservation");
  const RunView reserving = parse_run(kReservedLog, rec(hr));
  EXPECT_TRUE(has_entry(timeline_legend(reserving), "reserved, idle"));
  EXPECT_TRUE(has_entry(timeline_legend(reserving), "stall report"));
  // A queue that never held anything (dispatched at once) draws no depth and has no entry.
  const char* at_once = R"({"seq":0,"t_s":0,"event":"submit","task":"a","kind":"single","callable":"k","members":1,"workers":[0]}
{"seq":1,"t_s":0,"event":"ready","task":"a","queue":"worker:0"}
{"seq":2,"t_s":0,"event":"dispatch","task":"a","member":0,"worker":0}
{"seq":3,"t_s":1,"event":"member_end","task":"a","member":0,"worker":0,"outcome":"success"}
{"seq":4,"t_s":1,"event":"complete","task":"a"}
)";
  const RunView once = parse_run(at_once, nullptr);
  EXPECT_FALSE(has_entry(timeline_legend(once), "singles queued"));
  EXPECT_EQ(timeline_svg(once).find("class=\"depth\""), std::string::npos);
  EXPECT_EQ(timeline_svg(once).find(">group FIFO<"), std::string::npos);
}

// The strip's swatch is the group's colour (it was dark grey while the strips were orange), and the
// queue's swatch is filled as its depth is.
TEST(TimelineLegend, SwatchesAreDrawnAsTheirMarks) {
  json s = summary();
  s["groups"][0]["blocked_by"] = json::parse(R"([{"from_s":1,"to_s":2,"worker":2,"task":"b"}])");
  const std::string svg = timeline_svg(parse_run(kLog, rec(s)));
  const std::smatch strip = [&] {
    std::smatch m;
    std::regex_search(svg, m, std::regex("class=\"held\"[^>]* fill=\"(#[0-9a-f]{6})\""));
    return m;
  }();
  ASSERT_FALSE(strip.empty());
  const std::string legend = legend_part(svg);
  EXPECT_TRUE(std::regex_search(legend, std::regex("height=\"4\" fill=\"" + strip[1].str() +
                                                   "\"/><text class=\"legend-item\"[^>]*>strip, in the group's colour")))
      << legend;
  std::smatch depth;
  ASSERT_TRUE(std::regex_search(svg, depth, std::regex("class=\"depth\" data-queue=\"worker:5\" d=\"[^\"]*\" fill=\"(#[0-9a-f]{6})\" fill-opacity=\"([0-9.]+)\"")));
  EXPECT_TRUE(std::regex_search(legend, std::regex("fill=\"" + depth[1].str() + "\" fill-opacity=\"" + depth[2].str() +
                                                   "\"/><text class=\"legend-item\"[^>]*>singles queued on the worker")))
      << legend;
}

// FIFO depth has a band of its own at the bottom of the lane, below the bars with a gap, so it never
// runs along a bar's edge (where it read as the critical path's outline), and its scale stays inside
// its lane. kLog's lanes: worker 5 at y 30, 42 high, its bars 33-51; the group FIFO at y 156.
TEST(TimelinePicture, QueueDepthHasItsOwnBandAndItsLabelStaysInItsLane) {
  json s = summary();
  const std::string svg = timeline_svg(parse_run(kLog, rec(s)));
  for (const auto& [queue, top] : {std::pair<std::string, double>{"worker:5", 30}, {"group", 156}}) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(svg, m, std::regex("class=\"depth\" data-queue=\"" + queue + "\" d=\"([^\"]*)\"")))
        << queue;
    const std::string d = m[1];
    const std::regex v_re("V([0-9.]+)");
    std::size_t n = 0;
    for (auto it = std::sregex_iterator(d.begin(), d.end(), v_re); it != std::sregex_iterator(); ++it, ++n) {
      const double y = std::stod((*it)[1]);
      EXPECT_GE(y, top + 3 + 18 + 3) << queue << ": the depth reaches the bars' band: " << d;
      EXPECT_LE(y, top + 42) << queue << ": the depth leaves its lane: " << d;
    }
    EXPECT_GE(n, 2u) << d;
    ASSERT_TRUE(std::regex_search(svg, m, std::regex("class=\"depth\" data-queue=\"" + queue +
                                                     "\"[^\\n]*\\n<text class=\"depth-scale\" x=\"([0-9.]+)\" y=\"([0-9.]+)\"")));
    EXPECT_LT(std::stod(m[1]), 120) << "the scale sits in the label column, not over the bars";
    EXPECT_GT(std::stod(m[2]) - 9, top) << queue;
    EXPECT_LE(std::stod(m[2]), top + 42) << queue;
  }
  EXPECT_EQ(svg.find("<polyline class=\"depth\""), std::string::npos) << "a depth drawn as a line again";
}

// Issue 55: the timeline in the report's first screen, right after the headline numbers.
TEST(ReportPage, ShowsTheTimelineRightAfterTheHeadlineNumbers) {
  json s = summary();
  s["ready_waits"] = {{"single", {{"count", 1}, {"mean_s", 1}, {"p95_s", 1}, {"max_s", 1}}}};
  const RunView v = parse_run(kLog, rec(s));
  const std::string html = report_html(v, rec(s), dag_svg(v), timeline_svg(v));
  const auto headline = html.find("<table class=\"run\">"), timeline = html.find("<h2 id=\"timeline\">");
  ASSERT_NE(headline, std::string::npos);
  ASSERT_NE(timeline, std::string::npos);
  EXPECT_EQ(html.find("<h2", headline), timeline) << "a section between the headline numbers and the timeline";
  EXPECT_LT(timeline, html.find("<h2>DAG</h2>"));
  EXPECT_LT(timeline, html.find("<h2>Workers</h2>"));
}

// Issue 55, "the DAG says what it is": a run without dependencies is drawn as its tasks by worker, in
// dispatch order, under one line saying there are none; the states' colours only when they differ.
const char* kNoDeps =
    R"({"seq":0,"t_s":0,"event":"submit","task":"a0","kind":"single","callable":"k","members":1,"workers":[0]}
{"seq":1,"t_s":0,"event":"ready","task":"a0","queue":"worker:0"}
{"seq":2,"t_s":0,"event":"dispatch","task":"a0","member":0,"worker":0}
{"seq":3,"t_s":0,"event":"submit","task":"b0","kind":"single","callable":"k","members":1,"workers":[1]}
{"seq":4,"t_s":0,"event":"ready","task":"b0","queue":"worker:1"}
{"seq":5,"t_s":0,"event":"dispatch","task":"b0","member":0,"worker":1}
{"seq":6,"t_s":0,"event":"submit","task":"a1","kind":"single","callable":"k","members":1,"workers":[0]}
{"seq":7,"t_s":0,"event":"ready","task":"a1","queue":"worker:0"}
{"seq":8,"t_s":0,"event":"submit","task":"g","kind":"group","callable":"k","members":2,"workers":[0,1]}
{"seq":9,"t_s":1,"event":"member_end","task":"a0","member":0,"worker":0,"outcome":"success"}
{"seq":10,"t_s":1,"event":"complete","task":"a0"}
{"seq":11,"t_s":1,"event":"dispatch","task":"a1","member":0,"worker":0}
{"seq":12,"t_s":1,"event":"member_end","task":"b0","member":0,"worker":1,"outcome":"OUTCOME_B"}
{"seq":13,"t_s":1,"event":"COMPLETE_B","task":"b0"}
{"seq":14,"t_s":2,"event":"member_end","task":"a1","member":0,"worker":0,"outcome":"success"}
{"seq":15,"t_s":2,"event":"complete","task":"a1"}
{"seq":16,"t_s":2,"event":"ready","task":"g","queue":"group"}
{"seq":17,"t_s":2,"event":"group_launched","task":"g"}
{"seq":18,"t_s":2,"event":"dispatch","task":"g","member":0,"worker":0}
{"seq":19,"t_s":2,"event":"dispatch","task":"g","member":1,"worker":1}
{"seq":20,"t_s":3,"event":"member_end","task":"g","member":0,"worker":0,"outcome":"success"}
{"seq":21,"t_s":3,"event":"member_end","task":"g","member":1,"worker":1,"outcome":"success"}
{"seq":22,"t_s":3,"event":"complete","task":"g"}
)";
std::string no_deps_log(bool b_fails) {
  std::string log = kNoDeps;
  auto put = [&](const std::string& from, const std::string& to) { log.replace(log.find(from), from.size(), to); };
  put("OUTCOME_B", b_fails ? "failure" : "success");
  put("COMPLETE_B", b_fails ? "fail" : "complete");
  return log;
}

TEST(DagPicture, WithoutDependenciesShowsTheTasksByWorkerInDispatchOrder) {
  const RunView v = parse_run(no_deps_log(false), nullptr);
  ASSERT_TRUE(v.deps.empty());
  const DagPicture d = dag_picture(v, kDefaultPictureBudget);
  ASSERT_TRUE(d.svg.has_value());
  EXPECT_EQ(d.note, "") << "nothing for summary.json's notes";
  const std::string& svg = *d.svg;
  EXPECT_NE(svg.find(">No dependencies: 4 tasks, none waits for another's output<"), std::string::npos) << svg;
  EXPECT_EQ(count(svg, "<g class=\"worker-row\">"), 2u);
  EXPECT_EQ(svg.find("<title>dag</title>"), std::string::npos) << "unconnected boxes laid out by dot";
  // Worker 0's row reads a0, a1, g[0]; worker 1's b0, g[1]: rows in lane order, boxes in dispatch order.
  std::vector<std::string> boxes;
  const std::regex box(R"(<g class="node"><title>[^<]*</title><rect [^>]*/><text [^>]*>([^<]*)</text></g>)");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), box); it != std::sregex_iterator(); ++it)
    boxes.push_back((*it)[1]);
  EXPECT_EQ(boxes, (std::vector<std::string>{"a0", "a1", "g[0]", "b0", "g[1]"}));
  // A summary whose worker list lacks a worker that ran: its tasks still drawn, in a row after the others.
  const json only0 = json::parse(R"({"scenario":"t","workers":[{"worker":0,"kind":"local_chip"}]})");
  const std::string partial = *dag_picture(parse_run(no_deps_log(false), rec(only0)), kDefaultPictureBudget).svg;
  EXPECT_EQ(count(partial, "<g class=\"worker-row\">"), 2u);
  EXPECT_EQ(count(partial, "<g class=\"node\">"), 5u);
  // One state: said in the caption, no colour key.
  EXPECT_NE(svg.find("all COMPLETED"), std::string::npos);
  EXPECT_EQ(svg.find("class=\"states\""), std::string::npos);
  const std::string html = report_html(v, nullptr, d.svg, timeline_svg(v));
  EXPECT_EQ(count(html, "No dependencies"), 1u) << "said once, by the picture";
  EXPECT_EQ(count(report_html(v, nullptr, std::nullopt, timeline_svg(v)), "<p class=\"no-deps\">No dependencies"), 1u)
      << "said by the report when there is no picture";
  EXPECT_EQ(html.find("class=\"swatch\""), std::string::npos) << "a state key where every task is COMPLETED";
  // States that differ: the key, with only the states the run has.
  const RunView failed = parse_run(no_deps_log(true), nullptr);
  const std::string fsvg = *dag_picture(failed, kDefaultPictureBudget).svg;
  EXPECT_NE(fsvg.find("class=\"states\""), std::string::npos);
  EXPECT_NE(fsvg.find(">FAILED</text>"), std::string::npos);
  EXPECT_EQ(fsvg.find(">CANCELLED</text>"), std::string::npos);
  const std::string fhtml = report_html(failed, nullptr, std::nullopt, timeline_svg(failed));
  EXPECT_EQ(count(fhtml, "class=\"swatch\""), 2u) << "COMPLETED and FAILED";
  EXPECT_EQ(fhtml.find("</span>CANCELLED"), std::string::npos);
}

TEST(DagPicture, WithDependenciesIsTheGraphAndItsKeyListsTheStatesItHas) {
  const RunView v = parse_run(kLog, nullptr);
  const DagPicture d = dag_picture(v, kDefaultPictureBudget);
  ASSERT_TRUE(d.svg.has_value());
  EXPECT_EQ(d.svg->find("No dependencies"), std::string::npos);
  EXPECT_NE(d.svg->find("<title>a&#45;&gt;g"), std::string::npos) << *d.svg;
  const std::string html = report_html(v, nullptr, d.svg, timeline_svg(v));
  EXPECT_EQ(html.find("no-deps"), std::string::npos);
  for (const char* st : {"COMPLETED", "FAILED", "POISONED", "REJECTED"})
    EXPECT_NE(html.find(std::string("</span>") + st), std::string::npos) << st;
  EXPECT_EQ(html.find("</span>CANCELLED"), std::string::npos);
  EXPECT_EQ(html.find("</span>NOT_SUBMITTED"), std::string::npos);
}

}  // namespace
}  // namespace dirsched::viz
