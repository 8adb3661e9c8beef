// An embedding program: the production core on the threads runtime, with the shared event log.
// Two workers; `load` produces a buffer that a two-member group `step` consumes; `report` runs on a
// SUB worker. Prints the dispatches and the final states; exit 0 when every task completed.
#include <atomic>
#include <cstdio>
#include <limits>
#include <string>

#include "dirsched/outputs.hpp"
#include "dirsched/runtime.hpp"

namespace {

// Submits everything at once, at time 0.
class SubmitAll : public dirsched::Orchestrator {
 public:
  SubmitAll(dirsched::BufferId buffer, dirsched::CallableId chip, dirsched::CallableId py)
      : buffer_(buffer), chip_(chip), py_(py) {}
  double next_time(const dirsched::Scheduler&) const override {
    return done_ ? std::numeric_limits<double>::infinity() : 0.0;
  }
  bool run_next(dirsched::Scheduler& core, double) override {
    using namespace dirsched;
    core.submit_next_level("load", chip_, {{buffer_, Tag::kOutput}}, WorkerId(0));
    core.submit_next_level_group("step", chip_, {{{buffer_, Tag::kInput}}, {}}, {WorkerId(0), WorkerId(1)});
    core.submit_sub("report", py_, {{buffer_, Tag::kInput}});
    done_ = true;
    return true;
  }

 private:
  dirsched::BufferId buffer_;
  dirsched::CallableId chip_, py_;
  bool done_ = false;
};

}  // namespace

int main() {
  using namespace dirsched;
  Registry registry;
  registry.add_next_level(WorkerId(0), WorkerKind::kLocalChip);
  registry.add_next_level(WorkerId(1), WorkerKind::kLocalChip);
  registry.set_sub_workers(1);
  const CallableId chip = registry.add_callable({"chip", Namespace::kLocalChip, std::nullopt});
  const CallableId py = registry.add_callable({"py", Namespace::kLocalPython, std::nullopt});

  Scheduler core(registry);
  std::string events;
  const Scheduler* view = &core;
  EventLog log(events, "", view);
  core.set_observer(&log);
  const BufferId buffer = core.add_buffer({"x", Memory::kHost, std::nullopt});

  std::atomic<int> ran{0};
  CallableTable callables;
  callables.add("chip", [&](const MemberCall&) { return ++ran > 0; });
  callables.add("py", [&](const MemberCall&) { return ++ran > 0; });
  Runtime runtime(core, std::move(callables));
  SubmitAll orchestrator(buffer, chip, py);
  runtime.run(orchestrator);
  log.flush();

  bool all_completed = true;
  for (std::uint32_t i = 0; i < core.task_count(); ++i) {
    const TaskState state = core.state(TaskId(i));
    std::printf("%s %s\n", std::string(core.name(TaskId(i))).c_str(), std::string(to_string(state)).c_str());
    all_completed = all_completed && state == TaskState::kCompleted;
  }
  std::printf("%d members ran on threads; %zu bytes of events.jsonl\n", ran.load(), events.size());
  return all_completed && ran == 4 && !events.empty() ? 0 : 1;
}
