// Fuzz target: the scenario loader, then a replay of the loaded trace on the core alone, every member
// ending in dispatch order, with the invariant checker attached. A ScenarioError is a good answer to
// bad input; anything else (a crash, a sanitizer report, an uncaught exception, an invariant
// violation) is a finding.
//
// Built two ways: with clang and -fsanitize=fuzzer,address as `scenario_fuzz` (DIRSCHED_FUZZ=ON), and
// in every build as `scenario_fuzz_replay`, which runs the same function on the files and folders
// named on its command line (the shipped scenarios are the seed corpus).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "dirsched/invariants.hpp"
#include "dirsched/json_reader.hpp"
#include "dirsched/replay.hpp"
#include "dirsched/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dirsched;
  Scenario scenario;
  try {  // the CLI's path: the strict reader, then the loader
    const nlohmann::json doc =
        parse_json_text(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
    scenario = parse_scenario(doc, "fuzz.json", "/nonexistent-dir");
  } catch (const ScenarioError&) {
    return 0;
  }
  Scheduler core(scenario.registry(), scheduler_options(scenario));
  InvariantChecker checker(core.registry(), core.switches());
  checker.set_dump([&core] { return core.dump(); });
  checker.set_run_raised([&core](RunId r) { return core.run_info(r).raised; });
  core.set_observer(&checker);
  Replay replay(scenario, core);
  try {
    for (std::size_t steps = 0; steps < 100000; ++steps) {
      if (replay.next_enabled()) {
        if (replay.run_next(0)) run_instant(core, [](const std::vector<Dispatch>&) {});
        continue;
      }
      const auto running = core.running();
      if (running.empty()) break;
      const auto [task, member] = running.front();
      const bool fail = replay.member_fails(task, member);
      std::vector<MemberEnd> ends = {{0, task, member, fail ? Outcome::kFailure : Outcome::kSuccess}};
      complete_instant(core, ends, [](const std::vector<Dispatch>&) {});
    }
    replay.unwind_rest();
    checker.finish(core.stuck());
  } catch (const InvariantViolation& v) {
    std::fprintf(stderr, "%s\n%s\n", v.what(), v.violation.dump.c_str());
    std::abort();
  }
  return 0;
}
