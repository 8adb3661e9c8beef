// `dirsched explore`: every interleaving of a scenario on the core alone, JSON on stdout.
#include "verbs.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <new>

#include "dirsched/explore.hpp"
#include "dirsched/progress.hpp"
#include "options.hpp"

namespace dirsched::cli {
namespace {

// explore that stopped at --max-states or --max-memory (docs/progress-and-pictures.md).
constexpr int kExitExploreStoppedEarly = 5;

std::string file;
ExploreOptions options;
std::vector<std::string> vars;
bool no_por = false;

void declare(CLI::App& exp, Common& common) {
  exp.add_option("scenario", file, "Scenario JSON file")->required();
  // Node numbers are 32-bit (0xffffffff marks an empty slot of the visited set).
  exp.add_option("--max-states", options.max_states, "Stop after this many distinct states")
      ->check(cli::whole_number(1, 4000000000));
  exp.add_option_function<std::string>(
         "--max-memory", [](const std::string& v) { options.max_memory = *cli::parse_size(v); },
         "Stop once the heap in use passes this size, the load and set-up included (docs/limits.md), "
         "e.g. 512M or 2G (default 2G)")
      ->check(cli::byte_size(std::uint64_t{1} << 20, std::uint64_t{1} << 40));
  exp.add_flag("--failures", options.failures,
               "Let any member also fail (a member the file marks `fail: true` fails on every path anyway)");
  add_policy_flags(exp, common.policy);
  exp.add_option("--var", vars, kVarHelp);
  add_quiet(exp, common.quiet);
  exp.add_flag("--var-any", g_var_any, kVarAnyHelp);
  exp.add_flag("--no-por", no_por, "Explore every ordering (no partial-order reduction)");
}

int run(CLI::App&, Common& common) {
  options.por = !no_por;
  const VarAssignment assignment = parse_vars(vars);
  // --max-memory bounds the whole command, the load and the set-up included: the heap is checked
  // along them (check_setup_memory), and RLIMIT_DATA turns what no check sees in time into a failed
  // allocation, caught here or in explore() as the same early stop (docs/limits.md). Released
  // before the result is written (at most 20 outcomes, already held).
  DataLimit data_limit(options.max_memory);
  options.data_limit = data_limit.limit();
  nlohmann::ordered_json result;
  std::optional<Scenario> scenario;
  Progress::get().begin("load");
  try {
    scenario.emplace(load_chosen(file, assignment, common.policy.choice()));
    check_setup_memory(options, "loading the scenario");
  } catch (const SetupMemoryStop& stop) {
    result = explore_stopped_in_setup(scenario->name, options, stop.stage, stop.heap);
  } catch (const std::bad_alloc&) {
    scenario.reset();
    result = explore_stopped_in_setup(file, options, "loading the scenario", 0);
  }
  if (result.is_null()) {
    Progress::get().begin("explore", static_cast<double>(options.max_states), "states (max-states)");
    options.on_states = [](std::size_t n) { Progress::get().update(static_cast<double>(n)); };
    result = explore(*scenario, options);
    if (!scenario->vars.empty()) result["vars"] = scenario->assigned;  // which candidate was explored
  }
  scenario.reset();
  data_limit.release();
  Progress::get().end();
  std::cout << result.dump(2) << "\n";
  std::cout.flush();
  if (!result["violations"].empty()) return 1;
  if (result.value("stopped_early", false)) {
    // Partial: the JSON covers only the visited states. Said on stderr too, with its own status.
    std::cerr << "dirsched explore: stopped early, the result covers only the states visited: "
              << result.value("note", std::string("a bound was reached")) << "\n";
    return kExitExploreStoppedEarly;
  }
  return 0;
}

bool prints_json() { return true; }

}  // namespace

const Verb kExploreVerb{"explore", "Explore every interleaving of a scenario on the core alone; JSON on stdout", declare,
                        run, prints_json};

}  // namespace dirsched::cli
