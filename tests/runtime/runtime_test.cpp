// The Runtime on real threads: dispatch to the target worker's thread, group launch, failure path,
// the instant order of ends that arrive together, no lock held while a callable runs, shutdown; and
// the threads engine's refusals. Assertions are on order and states only, never on durations: where
// one thread must wait for another, it waits on the other's progress (with a generous time-out that
// only a broken runtime reaches).
#include "dirsched/runtime.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "dirsched/threads_engine.hpp"

namespace dirsched {
namespace {

using namespace std::chrono_literals;

constexpr double kNever = std::numeric_limits<double>::infinity();
constexpr auto kPatience = 10s;  // only a broken runtime waits this long

// Ops one after the other, at time 0 or at a given time; a "drain" op waits until every submitted
// task is terminal.
class Script : public Orchestrator {
 public:
  using Op = std::function<bool(Scheduler&)>;  // true when it submitted
  Script& then(Op op) {
    return at([] { return 0.0; }, std::move(op));
  }
  // `when` is read each time the runtime asks (it may change while the run goes on).
  Script& at(std::function<double()> when, Op op) {
    ops_.push_back({std::move(op), false, std::move(when)});
    return *this;
  }
  Script& drain() {
    ops_.push_back({nullptr, true, [] { return 0.0; }});
    return *this;
  }
  double next_time(const Scheduler& core) const override {
    if (next_ >= ops_.size()) return kNever;
    if (ops_[next_].drain && core.non_terminal_tasks() > 0) return kNever;
    return ops_[next_].when();
  }
  bool run_next(Scheduler& core, double) override {
    const Entry& e = ops_[next_++];
    return e.drain ? false : e.op(core);
  }

 private:
  struct Entry {
    Op op;
    bool drain;
    std::function<double()> when;
  };
  std::vector<Entry> ops_;
  std::size_t next_ = 0;
};

// The event stream as short lines ("dispatch g[1]@0", "end a ok"), written on the scheduler thread and
// read after run() joined it.
class Lines : public Observer {
 public:
  void on_event(const Event& e) override {
    const std::string name(e.name);
    const std::string m = is_group(e.task_kind) ? "[" + std::to_string(e.member) + "]" : "";
    const std::string where =
        e.target.sub ? "sub" + std::to_string(e.target.sub_index) : std::to_string(e.target.worker.value());
    if (e.kind == EventKind::kSubmit) lines.push_back("submit " + name);
    if (e.kind == EventKind::kDispatch) lines.push_back("dispatch " + name + m + "@" + where);
    if (e.kind == EventKind::kMemberEnd)
      lines.push_back("end " + name + m + (e.outcome == Outcome::kSuccess ? " ok" : " failed"));
  }
  std::size_t index(const std::string& line) const {
    for (std::size_t i = 0; i < lines.size(); ++i)
      if (lines[i] == line) return i;
    ADD_FAILURE() << "no line '" << line << "'";
    return lines.size();
  }
  std::vector<std::string> lines;
};

// Waits until `ready()` holds, up to kPatience; false on time-out.
bool wait_for(const std::function<bool()>& ready) {
  const auto until = std::chrono::steady_clock::now() + kPatience;
  while (!ready()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// A log of what the callables did, from any thread.
struct Journal {
  void add(const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex);
    entries.push_back(what);
  }
  std::size_t index(const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex);
    for (std::size_t i = 0; i < entries.size(); ++i)
      if (entries[i] == what) return i;
    ADD_FAILURE() << "no entry '" << what << "'";
    return entries.size();
  }
  std::mutex mutex;
  std::vector<std::string> entries;
};

struct Fixture {
  explicit Fixture(std::uint32_t next_level = 2, std::uint32_t sub = 0, Scheduler::Options options = {}) {
    Registry reg;
    for (std::uint32_t i = 0; i < next_level; ++i) reg.add_next_level(WorkerId(i), WorkerKind::kLocalChip);
    reg.set_sub_workers(sub);
    chip = reg.add_callable({"chip", Namespace::kLocalChip, std::nullopt});
    py = reg.add_callable({"py", Namespace::kLocalPython, std::nullopt});
    core = std::make_unique<Scheduler>(std::move(reg), options, &lines);
  }
  TaskId single(Scheduler& c, const std::string& name, std::int64_t worker, std::vector<Arg> args = {}) {
    SubmitResult r = c.submit_next_level(name, chip, std::move(args), WorkerId(worker));
    EXPECT_TRUE(r.accepted()) << name;
    return r.task;
  }
  TaskState state(const std::string& name) const {
    for (std::uint32_t i = 0; i < core->task_count(); ++i)
      if (core->name(TaskId(i)) == name) return core->state(TaskId(i));
    ADD_FAILURE() << "no task " << name;
    return TaskState::kPending;
  }
  Lines lines;
  CallableId chip, py;
  std::unique_ptr<Scheduler> core;
};

TEST(RuntimeDispatch, EachMemberRunsOnItsTargetWorkersOwnThread) {
  Fixture f(2, 2);
  std::mutex mutex;
  std::map<std::string, std::set<std::thread::id>> threads;  // worker -> threads that ran its members
  std::vector<std::string> calls;
  auto record = [&](const MemberCall& c) {
    std::lock_guard<std::mutex> lock(mutex);
    const std::string where =
        c.target.sub ? "sub" + std::to_string(c.target.sub_index) : std::to_string(c.target.worker.value());
    threads[where].insert(std::this_thread::get_id());
    calls.push_back(c.task_name + "/" + std::to_string(c.member) + "@" + where);
    return true;
  };
  CallableTable table;
  table.add("chip", record);
  table.add("py", record);
  Runtime rt(*f.core, std::move(table));
  EXPECT_EQ(rt.worker_threads(), 4u);
  Script script;
  script.then([&](Scheduler& c) {
    f.single(c, "a", 0);
    f.single(c, "b", 1);
    f.single(c, "c", 0);
    EXPECT_TRUE(c.submit_next_level_group("g", f.chip, {{}, {}}, {WorkerId(1), WorkerId(0)}).accepted());
    EXPECT_TRUE(c.submit_sub("s", f.py, {}).accepted());
    EXPECT_TRUE(c.submit_sub_group("sg", f.py, {{}, {}}).accepted());
    return true;
  });
  rt.run(script);
  for (const char* t : {"a", "b", "c", "g", "s", "sg"}) EXPECT_EQ(f.state(t), TaskState::kCompleted) << t;
  EXPECT_EQ(calls.size(), 8u);
  std::set<std::thread::id> all;
  for (const auto& [where, ids] : threads) {
    EXPECT_EQ(ids.size(), 1u) << "worker " << where << " ran on more than one thread";
    all.insert(ids.begin(), ids.end());
  }
  EXPECT_EQ(all.size(), threads.size()) << "two workers shared a thread";
  EXPECT_FALSE(all.count(std::this_thread::get_id())) << "a member ran on the caller's thread";
  // The group pass launched g first (every target idle), then worker 0's FIFO in order: a, then c.
  EXPECT_EQ(f.lines.index("dispatch g[0]@1"), f.lines.index("submit sg") + 1) << "the first dispatch is g's";
  EXPECT_LT(f.lines.index("dispatch a@0"), f.lines.index("dispatch c@0"));
}

TEST(RuntimeGroups, AGroupLaunchesAllMembersOnlyWhenEveryTargetIsFree) {
  Fixture f(2);
  Journal j;
  std::atomic<bool> x_ran{false};
  CallableTable table;
  table.add("chip", [&](const MemberCall& c) {
    const std::string who = c.task_name + (c.task_name == "g" ? std::to_string(c.member) : "");
    j.add("start " + who);
    // `long` holds worker 1 until `x` (a single queued after the group) has run on worker 0.
    if (c.task_name == "long" && !wait_for([&] { return x_ran.load(); })) return false;
    if (c.task_name == "x") x_ran = true;
    j.add("end " + who);
    return true;
  });
  table.add("py", [](const MemberCall&) { return true; });
  Runtime rt(*f.core, std::move(table));
  Script script;
  script.then([&](Scheduler& c) { return f.single(c, "long", 1).valid(); })
      .then([&](Scheduler& c) {
        return c.submit_next_level_group("g", f.chip, {{}, {}}, {WorkerId(0), WorkerId(1)}).accepted();
      })
      .then([&](Scheduler& c) { return f.single(c, "x", 0).valid(); });
  rt.run(script);
  for (const char* t : {"long", "g", "x"}) EXPECT_EQ(f.state(t), TaskState::kCompleted) << t;
  // No member of g started before long released worker 1, though worker 0 was free (and ran x).
  EXPECT_LT(j.index("end long"), j.index("start g0"));
  EXPECT_LT(j.index("end long"), j.index("start g1"));
  // Both members went out in one iteration: their dispatches are adjacent.
  EXPECT_EQ(f.lines.index("dispatch g[1]@1"), f.lines.index("dispatch g[0]@0") + 1);
}

TEST(RuntimeFailure, AThrowingOrFailingCallablePoisonsItsDependentsOnly) {
  Fixture f(3);
  CallableTable table;
  table.add("chip", [](const MemberCall& c) {
    if (c.task_name == "a") throw std::runtime_error("boom");
    return c.task_name != "d";  // d reports failure by returning false
  });
  table.add("py", [](const MemberCall&) { return true; });
  Scheduler::Options options;
  options.fail_fast = false;  // so that both failures happen
  Fixture g(3, 0, options);
  Runtime rt(*g.core, std::move(table));
  BufferId x = g.core->add_buffer({"x", Memory::kHost, std::nullopt});
  BufferId y = g.core->add_buffer({"y", Memory::kHost, std::nullopt});
  Script script;
  script.then([&](Scheduler& c) {
    g.single(c, "a", 0, {{x, Tag::kOutput}});
    g.single(c, "b", 1, {{x, Tag::kInput}, {y, Tag::kOutput}});
    g.single(c, "b2", 2, {{y, Tag::kInput}});  // transitively
    g.single(c, "c", 1);
    g.single(c, "d", 2);
    return true;
  });
  rt.run(script);
  EXPECT_EQ(g.state("a"), TaskState::kFailed);
  EXPECT_EQ(g.state("b"), TaskState::kPoisoned);
  EXPECT_EQ(g.state("b2"), TaskState::kPoisoned);
  EXPECT_EQ(g.state("c"), TaskState::kCompleted);
  EXPECT_EQ(g.state("d"), TaskState::kFailed);
  ASSERT_EQ(rt.failures().size(), 1u);
  EXPECT_EQ(rt.failures()[0].message, "boom");
  EXPECT_EQ(g.core->name(rt.failures()[0].task), "a");
}

TEST(RuntimeFailure, AfterAFailureFailFastRefusesLaterSubmits) {
  Fixture f(1);
  CallableTable table;
  table.add("chip", [](const MemberCall& c) { return c.task_name != "a"; });
  table.add("py", [](const MemberCall&) { return true; });
  Runtime rt(*f.core, std::move(table));
  SubmitResult late;
  Script script;
  script.then([&](Scheduler& c) { return f.single(c, "a", 0).valid(); }).drain().then([&](Scheduler& c) {
    late = c.submit_next_level("late", f.chip, {}, WorkerId(0));
    return true;
  });
  rt.run(script);
  EXPECT_EQ(f.state("a"), TaskState::kFailed);
  ASSERT_FALSE(late.accepted());
  EXPECT_EQ(late.rejection->code, ErrorCode::kRunFailed);
}

TEST(RuntimeInstant, EndsThatArriveTogetherAreAppliedInDispatchOrder) {
  Fixture f(2);
  Runtime* rt = nullptr;
  CallableTable table;
  // x (dispatched first) returns only after y's end is in the queue: y arrives first.
  table.add("chip", [&](const MemberCall& c) {
    if (c.task_name == "x") return wait_for([&] { return rt->queued_completions() >= 1; });
    return true;
  });
  table.add("py", [](const MemberCall&) { return true; });
  Runtime runtime(*f.core, std::move(table));
  rt = &runtime;
  bool both_queued = false;
  Script script;
  script
      .then([&](Scheduler& c) {
        f.single(c, "x", 0);
        f.single(c, "y", 1);
        return true;
      })
      // Holds the scheduler thread until both ends wait in the queue: it takes them as one instant.
      .then([&](Scheduler&) {
        both_queued = wait_for([&] { return rt->queued_completions() == 2; });
        return false;
      });
  runtime.run(script);
  ASSERT_TRUE(both_queued);
  EXPECT_EQ(f.state("x"), TaskState::kCompleted);
  EXPECT_LT(f.lines.index("dispatch x@0"), f.lines.index("dispatch y@1"));
  EXPECT_LT(f.lines.index("end x ok"), f.lines.index("end y ok"))
      << "applied in arrival order, not dispatch order";
}

TEST(RuntimeInstant, EndsAreAppliedBeforeTheOpsOfTheirInstant) {
  // When the scheduler wakes, a's end waits in the queue and the op submitting b is due: a's end first.
  Fixture f(1);
  Runtime* rt = nullptr;
  CallableTable table;
  table.add("chip", [](const MemberCall&) { return true; });
  table.add("py", [](const MemberCall&) { return true; });
  Runtime runtime(*f.core, std::move(table));
  rt = &runtime;
  bool ready = false;
  double b_at = kNever;  // set below: later than the instant the first two ops run in
  Script script;
  script
      .then([&](Scheduler& c) { return f.single(c, "a", 0).valid(); })
      // Holds the scheduler thread until a's end is queued and b's op is due.
      .then([&](Scheduler&) {
        ready = wait_for([&] { return rt->queued_completions() == 1; });
        b_at = rt->now() + 0.02;
        ready = ready && wait_for([&] { return rt->now() > b_at; });
        return false;
      })
      .at([&] { return b_at; }, [&](Scheduler& c) { return f.single(c, "b", 0).valid(); });
  runtime.run(script);
  ASSERT_TRUE(ready);
  EXPECT_EQ(f.state("b"), TaskState::kCompleted);
  EXPECT_LT(f.lines.index("end a ok"), f.lines.index("submit b")) << "an op ran before its instant's ends";
}

TEST(RuntimeLocks, NoLockIsHeldWhileACallableRuns) {
  // a (worker 0) waits until c has started; c runs on worker 1 after b, so c starts only when b's end
  // went through the completion queue, the scheduler thread applied it and handed c to worker 1. A
  // lock held around a callable (the queue's, a mailbox's, the scheduler's) stops that chain.
  Fixture f(2);
  std::atomic<bool> c_started{false};
  CallableTable table;
  table.add("chip", [&](const MemberCall& call) {
    if (call.task_name == "a") return wait_for([&] { return c_started.load(); });
    if (call.task_name == "c") c_started = true;
    return true;
  });
  table.add("py", [](const MemberCall&) { return true; });
  Runtime rt(*f.core, std::move(table));
  Script script;
  script.then([&](Scheduler& c) {
    f.single(c, "a", 0);
    f.single(c, "b", 1);
    f.single(c, "c", 1);
    return true;
  });
  rt.run(script);
  EXPECT_EQ(f.state("a"), TaskState::kCompleted) << "a waited in vain: a lock was held during a callable";
  EXPECT_EQ(f.state("c"), TaskState::kCompleted);
}

TEST(RuntimeShutdown, AnOrchestratorErrorWaitsForRunningMembersThenRethrows) {
  Fixture f(2);
  std::atomic<bool> started{false}, finished{false};
  CallableTable table;
  table.add("chip", [&](const MemberCall&) {
    started = true;
    std::this_thread::sleep_for(50ms);
    finished = true;
    return true;
  });
  table.add("py", [](const MemberCall&) { return true; });
  Runtime rt(*f.core, std::move(table));
  Script script;
  script.then([&](Scheduler& c) { return f.single(c, "a", 0).valid(); }).then([&](Scheduler&) -> bool {
    if (!wait_for([&] { return started.load(); })) return false;
    throw std::runtime_error("orchestrator broke");
  });
  EXPECT_THROW(rt.run(script), std::runtime_error);
  EXPECT_TRUE(finished) << "run() returned while a member was still running";
}

TEST(RuntimeShutdown, ARunWithNothingToDoReturnsAndJoins) {
  Fixture f(3, 2);
  CallableTable table;
  table.add("chip", [](const MemberCall&) { return true; });
  table.add("py", [](const MemberCall&) { return true; });
  Runtime rt(*f.core, std::move(table));
  Script script;
  rt.run(script);
  EXPECT_EQ(f.core->task_count(), 0u);
}

TEST(RuntimeShutdown, ACallableWithoutAFunctionIsRefusedBeforeAnyThreadStarts) {
  Fixture f(1);
  CallableTable table;
  table.add("chip", [](const MemberCall&) { return true; });
  try {
    Runtime rt(*f.core, std::move(table));
    FAIL() << "built a runtime with no function for 'py'";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(), "callable 'py' has no registered function");
  }
  CallableTable twice;
  twice.add("chip", [](const MemberCall&) { return true; });
  EXPECT_THROW(twice.add("chip", [](const MemberCall&) { return true; }), RuntimeError);
}

// --- the threads engine on scenarios ---

Scenario scenario(const std::string& extra_callable_keys, const std::string& extra_top = "") {
  const std::string text =
      R"({ "name": "t", "workers": { "next_level": [ { "id": 0, "kind": "local_chip" } ] },
    "callables": { "k": { "namespace": "LOCAL_CHIP", "duration_s": 0.001)" +
      extra_callable_keys + R"( } },
    "trace": [ { "op": "submit_next_level", "task": "a", "callable": "k", "worker": 0 },
               { "op": "submit_next_level", "task": "b", "callable": "k", "worker": 0, "fail": true } ])" +
      extra_top + "}";
  return parse_scenario(nlohmann::json::parse(text), "t.json", ".");
}

std::string refusal(const Scenario& s) {
  try {
    check_threads_engine(s);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(ThreadsEngine, RefusesWhatOnlyASimulatedPlatformHas) {
  EXPECT_EQ(refusal(scenario("")), "");
  EXPECT_NE(
      refusal(scenario(R"(, "input_bytes": 8)")).find("t.json: callables.k.input_bytes: a transfer cost"),
      std::string::npos);
  EXPECT_NE(refusal(scenario(R"(, "output_bytes": 8)")).find("callables.k.output_bytes"), std::string::npos);
  EXPECT_NE(refusal(scenario("", R"(, "faults": [ { "host": "host1", "off_at_s": 1 } ])"))
                .find("faults[0]: a host fault"),
            std::string::npos);
  EXPECT_NE(refusal(scenario("", R"(, "scheduler": { "iteration_cost_s": 0.001 })"))
                .find("scheduler.iteration_cost_s"),
            std::string::npos);
  EXPECT_THROW(run_threads(scenario(R"(, "input_bytes": 8)"), {}), ScenarioError);
}

TEST(ThreadsEngine, RunsAScenarioThroughTheSharedOutputs) {
  const Scenario s = scenario("");
  ThreadsOptions options;
  options.time_scale = 0;
  options.check_invariants = true;
  options.keep_order_and_records = true;  // the records stay for tasks() (they retire and go otherwise)
  std::unique_ptr<dirsched::Run> run = run_threads(s, options);
  EXPECT_EQ(run->result.outcome, "FAILED");
  EXPECT_EQ(run->result.dispatches, 2u);
  ASSERT_EQ(run->recorder->tasks().size(), 2u);
  EXPECT_EQ(run->recorder->tasks()[0].state, TaskState::kCompleted);
  EXPECT_EQ(run->recorder->tasks()[1].state, TaskState::kFailed);
  EXPECT_NE(run->events_jsonl.find("\"event\":\"dispatch\""), std::string::npos);
  const std::string summary = summary_json(*run);
  EXPECT_NE(summary.find("\"outcome\": \"FAILED\""), std::string::npos) << summary;
}

}  // namespace
}  // namespace dirsched

namespace dirsched {
namespace {

TEST(ThreadsEngine, ScalesTheStallReportWithTheTimeScale) {
  // g waits 1 s (scenario) for worker 1; stall_report_s 0.5 becomes 0.05 wall seconds at scale 0.1.
  const std::string text = R"({ "name": "stall", "scheduler": { "stall_report_s": 0.5 },
    "workers": { "next_level": [ { "id": 0, "kind": "local_chip" }, { "id": 1, "kind": "local_chip" } ] },
    "callables": { "k": { "namespace": "LOCAL_CHIP", "duration_s": 1 } },
    "trace": [ { "op": "submit_next_level", "task": "long", "callable": "k", "worker": 1 },
               { "op": "submit_next_level_group", "task": "g", "callable": "k", "workers": [0, 1],
                 "args_list": [ [], [] ], "duration_s": [0, 0] } ] })";
  const Scenario s = parse_scenario(nlohmann::json::parse(text), "stall.json", ".");
  ThreadsOptions options;
  options.time_scale = 0.1;
  std::unique_ptr<dirsched::Run> run = run_threads(s, options);
  EXPECT_EQ(run->result.outcome, "COMPLETED");
  EXPECT_DOUBLE_EQ(run->core->options().stall_report_s, 0.05);
  EXPECT_NE(run->events_jsonl.find("\"event\":\"group_stall\",\"task\":\"g\""), std::string::npos)
      << run->events_jsonl;
}

}  // namespace
}  // namespace dirsched

namespace dirsched {
namespace {

// 20,000 tasks on two workers, a drain after every 100 submits: whatever the threads' timing, at most
// 100 tasks are live at once. Each task reads and writes one of four buffers (a chain per buffer, so a
// reclaimed task is named again as its buffer's last writer) and every 25th is a group of two.
Scenario drained_window(std::size_t tasks, std::size_t window) {
  nlohmann::json trace = nlohmann::json::array();
  for (std::size_t i = 0; i < tasks; ++i) {
    const nlohmann::json arg = {{"buffer", "b" + std::to_string(i % 4)}, {"tag", "INOUT"}};
    if (i % 25 == 24)
      trace.push_back({{"op", "submit_next_level_group"}, {"task", "g" + std::to_string(i)}, {"callable", "k"},
                       {"workers", {0, 1}}, {"args_list", {{arg}, nlohmann::json::array()}}});
    else
      trace.push_back({{"op", "submit_next_level"}, {"task", "t" + std::to_string(i)}, {"callable", "k"},
                       {"worker", i % 2}, {"args", {arg}}});
    if (i % window == window - 1) trace.push_back({{"op", "drain"}});
  }
  const nlohmann::json doc = {
      {"name", "drained-window"},
      {"workers", {{"next_level", {{{"id", 0}, {"kind", "local_chip"}}, {{"id", 1}, {"kind", "local_chip"}}}}}},
      {"callables", {{"k", {{"namespace", "LOCAL_CHIP"}, {"duration_s", 0}}}}},
      {"buffers", {{"b0", {{"bytes", 0}}}, {"b1", {{"bytes", 0}}}, {"b2", {{"bytes", 0}}}, {"b3", {{"bytes", 0}}}}},
      {"trace", trace}};
  return parse_scenario(doc, "drained.json", ".");
}

// Issue 27 on the threads engine: the core reclaims ended tasks and the Recorder drops retired records,
// so what either holds follows the live window (here 100 tasks), not the 20,000 of the trace; tasks.csv
// still gets every row, streamed as records retire. Counts, not times: the drains bound the window.
TEST(ThreadsEngine, MemoryFollowsTheLiveWindow) {
  constexpr std::size_t kTasks = 20000, kWindow = 100;
  const Scenario s = drained_window(kTasks, kWindow);
  const std::string csv = ::testing::TempDir() + "threads-window-tasks.csv";
  ThreadsOptions options;
  options.time_scale = 0;
  options.record_events = false;
  options.tasks_path = csv;
  std::unique_ptr<dirsched::Run> run = run_threads(s, options);
  EXPECT_EQ(run->result.outcome, "COMPLETED");
  EXPECT_TRUE(run->core->reclaims());
  EXPECT_EQ(run->recorder->record_count(), kTasks);
  EXPECT_EQ(run->recorder->state_counts()[TaskState::kCompleted], kTasks);
  // The core compacts its reclaimed front once it outnumbers the held entries and 4,096: it holds at
  // most 4,096 entries more than the window. The Recorder drops each record as it retires.
  EXPECT_GT(run->result.peak_core_tasks, 0u);
  EXPECT_LE(run->result.peak_core_tasks, 4096 + 2 * kWindow);
  EXPECT_GT(run->result.peak_records, 0u);
  EXPECT_LE(run->result.peak_records, 2 * kWindow);
  EXPECT_GE(run->core->reclaimed_before(), kTasks - kWindow);
  EXPECT_EQ(run->recorder->held_records(), 0u);
  EXPECT_EQ(run->tasks_file, csv);
  std::ifstream in(csv);
  std::string line;
  std::size_t rows = 0, completed = 0;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    ++rows;
    completed += line.find(",COMPLETED,") != std::string::npos;
  }
  EXPECT_EQ(rows, kTasks);
  EXPECT_EQ(completed, kTasks);
  std::remove(csv.c_str());

  // The same probe without reclamation: the core holds every task (the records still retire), and with
  // every record kept the Recorder holds them all too.
  ThreadsOptions plain;
  plain.time_scale = 0;
  plain.record_events = false;
  ::setenv("DIRSCHED_RECLAIM", "off", 1);
  std::unique_ptr<dirsched::Run> kept = run_threads(s, plain);
  ::unsetenv("DIRSCHED_RECLAIM");
  EXPECT_FALSE(kept->core->reclaims());
  EXPECT_EQ(kept->result.peak_core_tasks, kTasks);
  EXPECT_LE(kept->result.peak_records, 2 * kWindow);
  ThreadsOptions all = plain;
  all.keep_order_and_records = true;
  std::unique_ptr<dirsched::Run> every = run_threads(s, all);
  EXPECT_FALSE(every->core->reclaims());  // the records read names from the core
  EXPECT_EQ(every->result.peak_records, kTasks);
  EXPECT_EQ(every->recorder->held_records(), kTasks);
}

}  // namespace
}  // namespace dirsched
