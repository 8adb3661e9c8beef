// `dirsched bisect`: the runtime change after which a scenario's run differs (bisect.hpp).
#include "verbs.hpp"

#include <string>
#include <vector>

#include "bisect.hpp"

namespace dirsched::cli {
namespace {

BisectOptions options;
std::vector<std::string> vars;

void declare(CLI::App& bis, Common& common) {
  bis.add_option("scenario", options.file, "Scenario JSON file")->required();
  bis.add_option("--from", options.from, "The ladder point to start from: seed (default), head_reservation, upto:N");
  bis.add_option("--to", options.to, "The ladder point to end at: current (default), upto:N");
  bis.add_option("--seed", options.seed, "Seed, overriding the scenario's")->check(any_seed());
  add_cfg(bis, common.cfg);
  bis.add_option("--var", vars, kVarHelp);
  bis.add_flag("--var-any", g_var_any, kVarAnyHelp);
  bis.add_flag("--json", options.json, "The report as one JSON document on stdout");
}

int run(CLI::App&, Common& common) {
  options.simgrid_args = simgrid_args(common.cfg);
  const VarAssignment assignment = parse_vars(vars);
  return cmd_bisect(options, [&](const PolicyChoice& choice) { return load_chosen(options.file, assignment, choice); });
}

}  // namespace

const Verb kBisectVerb{
    "bisect", "Name the runtime change (PR and switch) after which a scenario's run differs (exit 0 none, 1 one)",
    declare, run, nullptr};

}  // namespace dirsched::cli
