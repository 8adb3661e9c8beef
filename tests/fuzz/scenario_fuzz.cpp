// Fuzz target: the scenario loader, then a replay of the loaded trace on the core alone, every member
// ending in dispatch order, with the invariant checker attached: under the file's own switches, then
// under one more point of the version ladder chosen by the input's bytes. A ScenarioError is a good answer to
// bad input; anything else (a crash, a sanitizer report, an uncaught exception, an invariant
// violation) is a finding.
//
// Built two ways: with clang and -fsanitize=fuzzer,address as `scenario_fuzz` (DIRSCHED_FUZZ=ON), and
// in every build as `scenario_fuzz_replay`, which runs the same function on the files and folders
// named on its command line (the shipped scenarios are the seed corpus).
//
// The work per input is bounded by the input's size, not by the counts its bytes can ask for:
// - At most kFuzzMaxTasks submits, through the loader's own limit (LoadLimits): a trace of more, or a
//   `generate` block that would make more tasks, edges or group members, is refused at load like one
//   past kMaxTasks (100,000,000), before anything is made. An explicit trace in 8 KB (CI's -max_len)
//   holds at most a few thousand submits or members, so the bound only holds a generate block to the
//   size of the largest explicit scenario. Without it, `"generate": {"family": "stream", "tasks": 1e8}`
//   (57 bytes) is a legitimate scenario that the load and the unwind below walk op by op: 300 s and
//   1 GB under ASan, CI's "slowest unit 200 s"; a `tp-groups` block of two 65,536-member groups made the
//   old running() walk below quadratic (over a minute).
// - At most kFuzzMaxSteps steps (a submitting op, or one member's end), then the rest is unwound.
// - The members end in dispatch order, from a queue the dispatches fill: O(1) a step (asking the core
//   for running() each step walked every task it holds: the core reclaims none here).
// What is left is the loader's own limits: the slowest input known is a `choose` space of 646,646
// lists of 10 ids (within them), about 4 s under ASan. (The loader's `choose` walk was exponential and
// read a generate block's worker count id by id: fixed there, tests/scenario/loader_limits_test.cpp.)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>
#include <utility>

#include "dirsched/invariants.hpp"
#include "dirsched/json_reader.hpp"
#include "dirsched/replay.hpp"
#include "dirsched/scenario.hpp"
#include "dirsched/switches.hpp"

namespace {
constexpr std::size_t kFuzzMaxTasks = 10000;
constexpr std::size_t kFuzzMaxSteps = 100000;
}  // namespace

namespace {

// One replay of `scenario` on the core alone, under its own switches, with the checker attached.
void replay_checked(const dirsched::Scenario& scenario) {
  using namespace dirsched;
  Scheduler core(scenario.registry(), scheduler_options(scenario));
  InvariantChecker checker(core.registry(), core.switches());
  checker.set_dump([&core] { return core.dump(); });
  checker.set_run_raised([&core](RunId r) { return core.run_info(r).raised; });
  core.set_observer(&checker);
  Replay replay(scenario, core);
  std::deque<std::pair<TaskId, std::uint32_t>> running;  // dispatched members, not yet ended, in order
  const auto dispatched = [&running](const std::vector<Dispatch>& ds) {
    for (const Dispatch& d : ds)  // a staging (#1583) runs only from its activation
      if (!d.prepare_only) running.emplace_back(d.task, d.member);
  };
  try {
    for (std::size_t steps = 0; steps < kFuzzMaxSteps; ++steps) {
      if (replay.next_enabled()) {
        if (replay.run_next(0)) run_instant(core, dispatched);
        continue;
      }
      if (running.empty()) break;
      const auto [task, member] = running.front();
      running.pop_front();
      const bool fail = replay.member_fails(task, member);
      std::vector<MemberEnd> ends = {{0, task, member, fail ? Outcome::kFailure : Outcome::kSuccess}};
      complete_instant(core, ends, dispatched);
    }
    replay.unwind_rest();
    checker.finish(core.stuck());
  } catch (const InvariantViolation& v) {
    std::fprintf(stderr, "%s\n%s\n", v.what(), v.violation.dump.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dirsched;
  Scenario scenario;
  try {  // the CLI's path: the strict reader, then the loader (with the lower task limit)
    const nlohmann::json doc =
        parse_json_text(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
    scenario = parse_scenario(doc, "fuzz.json", "/nonexistent-dir", {}, {}, LoadLimits{kFuzzMaxTasks});
  } catch (const ScenarioError&) {
    return 0;
  }
  replay_checked(scenario);
  // The checker under every runtime version too, not only the file's: one ladder point per input, chosen
  // by the input's bytes (FNV-1a), its switches that are not built yet turned off, so that the corpus
  // as a whole visits every point. Skipped when it is the file's own set.
  static const std::vector<std::string> points = ladder_points();
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  Switches other = *preset(points[h % points.size()]);
  for (const SwitchInfo& row : switch_table())
    if (!switch_built(row.id)) other.set(row.id, false);
  if (other != scenario.switches) {
    scenario.switches = other;
    replay_checked(scenario);
  }
  return 0;
}
