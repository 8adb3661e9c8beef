// `dirsched run`: one scenario replayed into a run folder.
#include "verbs.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dirsched/error.hpp"
#include "dirsched/eventsim.hpp"
#include "dirsched/output_folder.hpp"
#include "dirsched/progress.hpp"
#include "dirsched/threads_engine.hpp"
#include "options.hpp"
#include "run_folder.hpp"
#include "verdict.hpp"

namespace dirsched::cli {
namespace {

constexpr std::uintmax_t kMaxAttachBytes = std::uintmax_t{64} << 20;  // 64 MiB: a file kept with a run

// Exit 1 for submits rejected or a run STUCK that the expect block does not expect: the first tasks
// on stderr (cli/verdict.hpp).
int verdict(const Run& run) { return report_unexpected(unexpected_problems(run), run.scenario.name, std::cerr) ? 1 : 0; }

int cmd_run(const std::string& file, const std::string& out, std::optional<std::uint64_t> seed,
            const std::string& outputs, const std::vector<std::string>& cfg, bool check_invariants,
            const std::vector<std::string>& vars, const PolicyFlag& policy, const ThreadsEngine& threads,
            double budget_s, const std::vector<std::string>& attach, bool plan_line) {
  std::vector<std::string> data, pictures;
  if (!parse_outputs(outputs, data, pictures)) return 2;
  // --attach NAME=FILE: FILE's bytes go into the run folder as NAME, written and listed with the run's own
  // files (what a front end keeps beside a run: the Python sweep's scenario.json and variant.json), so
  // that no other program edits a run folder. Read now: a bad one refuses the run before it starts.
  std::map<std::string, std::string> attach_paths;  // NAME -> FILE, read once every name has passed
  for (const std::string& one : attach) {
    const auto eq = one.find('=');
    const std::string name = eq == std::string::npos ? std::string() : one.substr(0, eq);
    if (!plain_text_name(name) || name == "." || name == ".." || name.find('/') != std::string::npos ||
        name[0] == '.' || name.find(".tmp-dirsched-") != std::string::npos || name.size() > 200 ||
        eq + 1 >= one.size())
      throw BadInput("--attach " + quoted(one) +
                     ": expected NAME=FILE, NAME a plain file name (UTF-8 without control characters, "
                     "no '/', not starting with '.', at most 200 bytes)");
    if (attach_paths.count(name)) throw BadInput("--attach " + name + ": given twice");
    if (run_writes(name)) throw BadInput("--attach " + name + ": the run writes a file of that name itself");
    attach_paths[name] = one.substr(eq + 1);
  }
  const VarAssignment assignment = parse_vars(vars);
  Progress::get().begin("load");
  Scenario scenario = load_chosen(file, assignment, policy.choice());
  if (!scenario.vars.empty() && attach_paths.count("variant.json"))
    throw BadInput(
        "--attach variant.json: the run writes a file of that name itself (the scenario has vars)");
  std::map<std::string, std::string> attached;  // NAME -> the file's bytes
  for (const auto& [name, path] : attach_paths) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) > kMaxAttachBytes)
      throw BadInput("--attach " + name + "=" + path + ": larger than " +
                     std::to_string(kMaxAttachBytes >> 20) + " MiB, the limit of a file kept with a run");
    try {
      attached[name] = read_run_file(path);
    } catch (const std::exception& e) {
      throw BadInput("--attach " + name + ": " + e.what());
    }
  }
  if (threads.on) {
    if (!cfg.empty()) throw BadInput("--cfg configures SimGrid: it does not apply to --engine threads");
    check_threads_engine(scenario);  // before anything is written
  }
  if (threads.events) {
    if (!cfg.empty()) throw BadInput("--cfg configures SimGrid: it does not apply to --engine event");
    if (const std::optional<std::string> why = event_engine_refusal(scenario)) {  // before anything is written
      const auto colon = why->find(": ");
      throw ScenarioError(scenario.file, why->substr(0, colon),
                          why->substr(colon + 2) + " needs SimGrid: the event engine cannot run it (use --engine sim)");
    }
  }
  RunOptions options;
  options.seed = seed;
  options.simgrid_args = simgrid_args(cfg);
  options.progress = Progress::get().shown();
  options.check_invariants = check_invariants;
  Progress::get().end();
  return run_to_folder(scenario, options, out, data, pictures, false, budget_s, threads, attached,
                       plan_line ? nullptr : verdict);
}

struct RunArgs {
  std::string file, out, outputs, engine = "sim";
  std::optional<std::uint64_t> seed;
  bool check_invariants = false, plan_line = false;
  std::vector<std::string> vars, attach;
  ThreadsEngine threads;
  CLI::Option* time_scale = nullptr;
} args;

void declare(CLI::App& command, Common& common) {
  command.add_option("scenario", args.file, "Scenario JSON file")->required();
  command.add_option("--out", args.out, "Output folder: a new path, or a run folder to replace")->required();
  command.add_option("--seed", args.seed, "Seed, overriding the scenario's");
  command.add_option(
      "--outputs", args.outputs,
      "Comma-separated subset of events,summary,tasks,metrics,dag,timeline,trace,report (default all), "
      "paje (trace.paje for ViTE, only when named) and strace (strace.log in the runtime's [STRACE] grammar; "
      "only when named)")
      ->check(outputs_list);
  command.add_option("--cfg", common.cfg, "SimGrid configuration, passed through (e.g. --cfg=network/model:CM02)");
  command.add_flag("--check-invariants", args.check_invariants, "Check the contract's invariants after every transition");
  add_policy_flags(command, common.policy);
  command.add_option("--var", args.vars, kVarHelp);
  command.add_flag("--var-any", g_var_any, kVarAnyHelp);
  // Strict numbers (cli/options.hpp): checked on the text, before CLI11 converts it (it wraps -1).
  command.get_option("--seed")->check(any_seed());
  command.add_option("--engine", args.engine,
                 "sim (SimGrid, the default), event (SimGrid's rules without SimGrid, for durations-only "
                 "scenarios: faster, the same outputs) or threads (real threads, wall-clock time)")
      ->check(CLI::IsMember({"sim", "event", "threads"}));
  add_picture_budget(command, common.picture_budget);
  add_quiet(command, common.quiet);
  command.add_flag("--plan-line", args.plan_line,
                   "A variant of a sweep or optimize plan: rejected submits or a STUCK end are its answer "
                   "(exit 0, as in sweep), not exit 1");
  command.add_option("--attach", args.attach,
                 "NAME=FILE: keep FILE in the run folder as NAME (a front end's scenario.json, variant.json)");
  args.time_scale =
      command.add_option("--time-scale", args.threads.time_scale,
                     "--engine threads: wall seconds per scenario second (default 1; 0 runs members at once)")
          ->check(cli::real_number(0, 1e6));
}

int run(CLI::App&, Common& common) {
  ThreadsEngine& threads = args.threads;
  threads.on = args.engine == "threads";
  threads.events = args.engine == "event";
  if (!(threads.time_scale >= 0)) {  // CLI::Range lets NaN through
    std::cerr << "dirsched run: --time-scale: expected a number in [0, 1e6]\n";
    return 2;
  }
  if (args.time_scale->count() && !threads.on) {
    std::cerr << "dirsched run: --time-scale applies to --engine threads only\n";
    return 2;
  }
  return cmd_run(args.file, args.out, args.seed, args.outputs, common.cfg, args.check_invariants, args.vars,
                 common.policy, threads, common.picture_budget, args.attach, args.plan_line);
}

}  // namespace

const Verb kRunVerb{"run", "Replay a scenario on its simulated platform and write the outputs", declare, run,
                           nullptr};

}  // namespace dirsched::cli
