// The event log as the pictures read it: a core run goes through EventLog into viz::parse_run, and
// every field the parser takes (names, kinds, callables, workers, deps, codes, causes, outcomes,
// times, member runs) must come back equal to what the Recorder saw. The parser reads optional
// fields with defaults, so a field renamed on one side only would otherwise pass unnoticed.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "dirsched/outputs.hpp"
#include "dirsched/replay.hpp"
#include "dirsched/viz.hpp"

namespace dirsched {
namespace {

// One of everything: singles with a dependency, a group, SUB single and group, a rejection, a
// failure that poisons a consumer, and (fail-fast) a submit after the failure that is never made.
const char* kScenario = R"({
  "name": "log-to-viz",
  "workers": { "next_level": [ { "id": 0, "kind": "local_chip" }, { "id": 3, "kind": "local_chip" } ],
               "sub": 2 },
  "callables": { "k": { "namespace": "LOCAL_CHIP", "duration_s": 0.5 },
                 "p": { "namespace": "LOCAL_PYTHON", "duration_s": 0.25 } },
  "buffers": { "x": { "bytes": 8 }, "y": { "bytes": 8 } },
  "trace": [
    { "op": "submit_next_level", "task": "a", "callable": "k", "worker": 0,
      "args": [ { "buffer": "x", "tag": "OUTPUT" } ] },
    { "op": "submit_next_level_group", "task": "g", "callable": "k", "workers": [3, 0],
      "args_list": [ [ { "buffer": "x", "tag": "INPUT" } ], [] ] },
    { "op": "submit_sub", "task": "s", "callable": "p" },
    { "op": "submit_sub_group", "task": "sg", "callable": "p", "args_list": [ [], [] ] },
    { "op": "submit_next_level", "task": "bad", "callable": "k", "worker": 9 },
    { "op": "submit_next_level", "task": "f", "callable": "k", "worker": 3, "fail": true,
      "args": [ { "buffer": "y", "tag": "OUTPUT" } ] },
    { "op": "submit_next_level", "task": "c", "callable": "k", "worker": 0,
      "args": [ { "buffer": "y", "tag": "INPUT" } ] },
    { "op": "drain" },
    { "op": "submit_next_level", "task": "late", "callable": "k", "worker": 0 }
  ]
})";

// Virtual time: each member runs its op's duration, else its callable's; ends go back to the core
// through the instant helper.
struct VirtualRun {
  explicit VirtualRun(const Scenario& s) : run(s) {
    run.core = make_scheduler(s);
    run.recorder = std::make_unique<Recorder>(*run.core);
    view = run.core.get();
    log = std::make_unique<EventLog>(run.events_jsonl, "", view);
    observers.add(log.get());
    observers.add(run.recorder.get());
    run.core->set_observer(&observers);
    replay = std::make_unique<Replay>(s, *run.core);
  }
  void carry_out(const std::vector<Dispatch>& ds) {
    for (const Dispatch& d : ds) {
      const OpSpec& op = replay->op_of(d.task);
      const double dur =
          op.duration_s[d.member].value_or(*run.scenario.callables[op.callable].cost.duration_s);
      running.push_back(
          {now + dur, {d.seq, d.task, d.member, op.fail[d.member] ? Outcome::kFailure : Outcome::kSuccess}});
    }
  }
  void go() {
    auto carry = [this](const std::vector<Dispatch>& ds) { carry_out(ds); };
    while (true) {
      while (replay->next_enabled() && replay->earliest_start() <= now)
        if (replay->run_next(now)) run_instant(*run.core, carry);
      if (running.empty()) break;
      now = std::min_element(running.begin(), running.end(), [](auto& a, auto& b) {
              return a.first < b.first;
            })->first;
      run.core->set_time(now);
      std::vector<MemberEnd> due;
      for (auto it = running.begin(); it != running.end();)
        if (it->first == now) {
          due.push_back(it->second);
          it = running.erase(it);
        } else {
          ++it;
        }
      complete_instant(*run.core, due, carry);
    }
    replay->unwind_rest();
    log->flush();
    run.result.outcome = run.core->run_error() ? "FAILED" : "COMPLETED";
    run.result.makespan_s = run.recorder->last_transition();
    for (const WorkerSpec& w : run.scenario.next_level) run.result.host_of_worker.push_back(w.host);
  }
  Run run;
  const Scheduler* view = nullptr;
  std::unique_ptr<EventLog> log;
  ObserverList observers;
  std::unique_ptr<Replay> replay;
  std::vector<std::pair<double, MemberEnd>> running;
  double now = 0;
};

std::string label(const Target& t) {
  return t.sub ? "sub" + std::to_string(t.sub_index) : std::to_string(t.worker.value());
}

TEST(EventLogToViz, EveryFieldThePictureParserReadsComesBackAsTheRecorderSawIt) {
  const Scenario s = parse_scenario(nlohmann::json::parse(kScenario), "log-to-viz.json", ".");
  VirtualRun vr(s);
  vr.go();
  const record::Summary summary = summarise(vr.run);
  const viz::RunView view = viz::parse_run(vr.run.events_jsonl, &summary);

  const std::vector<TaskRecord> records = vr.run.recorder->tasks();
  ASSERT_EQ(view.tasks.size(), records.size());
  std::map<std::string, std::string> seen_states;
  std::size_t deps = 0;
  for (const TaskRecord& r : records) {
    SCOPED_TRACE(r.name);
    const viz::TaskView* t = view.find(r.name);
    ASSERT_NE(t, nullptr);
    seen_states[r.name] = t->state;
    EXPECT_EQ(t->state, to_string(r.state));
    if (r.state == TaskState::kRejected) {
      ASSERT_TRUE(r.code.has_value());
      EXPECT_EQ(t->code, to_string(*r.code));
      continue;
    }
    if (r.state == TaskState::kNotSubmitted) continue;
    EXPECT_EQ(t->kind, to_string(r.kind));
    EXPECT_EQ(t->members, r.members.size());
    EXPECT_DOUBLE_EQ(t->submit, r.submit);
    EXPECT_DOUBLE_EQ(t->ready, r.ready);
    EXPECT_DOUBLE_EQ(t->start, r.start);
    EXPECT_DOUBLE_EQ(t->end, r.end);
    EXPECT_EQ(t->cause, r.cause);
    EXPECT_EQ(t->callable, r.kind == TaskKind::kSub || r.kind == TaskKind::kSubGroup ? "p" : "k");
    std::vector<std::string> workers;
    for (WorkerId w : r.workers) workers.push_back(std::to_string(w.value()));
    EXPECT_EQ(t->workers, workers);
    const std::size_t ran = static_cast<std::size_t>(
        std::count_if(r.members.begin(), r.members.end(), [](const MemberRun& mr) { return mr.start >= 0; }));
    ASSERT_EQ(t->runs.size(), ran);
    for (std::size_t m = 0; m < r.members.size(); ++m) {
      const MemberRun& mr = r.members[m];
      if (mr.start < 0) continue;
      auto bar = std::find_if(t->runs.begin(), t->runs.end(),
                              [&](const viz::MemberBar& b) { return b.member == m; });
      ASSERT_NE(bar, t->runs.end());
      EXPECT_EQ(bar->worker, label(mr.target));
      EXPECT_DOUBLE_EQ(bar->start, mr.start);
      EXPECT_DOUBLE_EQ(bar->end, mr.end);
      EXPECT_EQ(bar->failed, mr.outcome == Outcome::kFailure);
    }
    deps += r.producers.size();
  }
  // The scenario reached every kind of ending, so each field above was exercised.
  EXPECT_EQ(seen_states, (std::map<std::string, std::string>{{"a", "COMPLETED"},
                                                             {"g", "COMPLETED"},
                                                             {"s", "COMPLETED"},
                                                             {"sg", "COMPLETED"},
                                                             {"bad", "REJECTED"},
                                                             {"f", "FAILED"},
                                                             {"c", "POISONED"},
                                                             {"late", "NOT_SUBMITTED"}}));
  EXPECT_EQ(view.tasks[view.index.at("c")].cause, "f");
  // Dependencies: g read x from a; c read y from f.
  EXPECT_EQ(view.deps.size(), 2u);
  ASSERT_EQ(view.deps.size(), 2u);
  EXPECT_EQ(view.deps[0].producer + ">" + view.deps[0].consumer + ":" + view.deps[0].buffer, "a>g:x");
  EXPECT_EQ(view.deps[1].producer + ">" + view.deps[1].consumer + ":" + view.deps[1].buffer, "f>c:y");
  (void)deps;
  // Lanes from the summary, in registration order; queue depths from the ready events.
  EXPECT_EQ(view.lanes, (std::vector<std::string>{"0", "3", "sub0", "sub1"}));
  EXPECT_TRUE(view.depth.count("group"));
  EXPECT_TRUE(view.depth.count("sub"));
  EXPECT_TRUE(view.depth.count("worker:0"));
  EXPECT_DOUBLE_EQ(view.end_time, vr.run.recorder->last_transition());
}

}  // namespace
}  // namespace dirsched
