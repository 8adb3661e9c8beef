// `dirsched check`: scenarios run with the invariants on and their expect blocks evaluated.
#include "verbs.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "dirsched/eventsim.hpp"
#include "dirsched/output_folder.hpp"
#include "dirsched/outputs.hpp"
#include "dirsched/sim.hpp"
#include "error_kind.hpp"
#include "verdict.hpp"

namespace dirsched::cli {
namespace {

// Exit status of check_one: 0 pass, 1 fail, 2 malformed, 4 ran but had no expect block to check.
constexpr int kNoExpect = 4;

std::string vars_text(const Scenario& s) {
  std::string o;
  for (const auto& [name, value] : s.assigned) o += (o.empty() ? "" : " ") + name + "=" + value.dump();
  return o;
}

// After a failed expectation under a runtime version with switches on: which switch, turned off alone,
// makes the same expectation pass? Each switch that is on is tried in ladder order, one run each on the
// event engine (SimGrid's rules and clock, byte-identical to it, and free to run many times in one
// process), with the invariants checked; every one that passes is named with its PR, or the line says
// none does. A switch that is off cannot be blamed. A scenario only SimGrid can run is not tried.
void name_the_switch(const std::string& file, const VarAssignment& assignment, const PolicyFlag& policy,
                     const Scenario& failed) {
  if (std::none_of(switch_table().begin(), switch_table().end(),
                   [&](const SwitchInfo& row) { return failed.switches[row.id]; }))
    return;
  if (const std::optional<std::string> why = event_engine_refusal(failed)) {
    std::cout << "  (no switch named: trying them needs the event engine, and " << *why << " needs SimGrid)"
              << std::endl;
    return;
  }
  bool any = false;
  for (const SwitchInfo& row : switch_table()) {
    if (!failed.switches[row.id]) continue;
    Scenario again = load_chosen(file, assignment, policy.choice());
    again.switches.set(row.id, false);
    again.expect = failed.expect;  // the same expectation, whatever block the loader would pick now
    EventRunOptions o;
    o.check_invariants = true;
    o.record_events = false;
    const std::unique_ptr<Run> run = run_events(again, o);
    if (run->result.violation || check_expectations(*run)) continue;
    any = true;
    std::cout << "  passes with only this switch off: " << row.name << " (#" << row.pr << ": " << row.text << ")"
              << std::endl;
  }
  if (!any) std::cout << "  no single switch of " << failed.policy << " turned off makes it pass" << std::endl;
}

int check_one(const std::string& file, const std::vector<std::string>& cfg, const VarAssignment& assignment,
              const PolicyFlag& policy) {
  try {
    Scenario scenario = load_chosen(file, assignment, policy.choice());
    // Which candidate ran: the ones --var chose, the first candidate of every other variable.
    const std::string ran = scenario.vars.empty()
                                ? ""
                                : ", " + vars_text(scenario) +
                                      (assignment.size() == scenario.vars.size() ? ""
                                       : assignment.empty()                      ? " (the first candidates)"
                                                            : " (others at their first candidate)");
    RunOptions options;
    options.simgrid_args = simgrid_args(cfg);
    options.check_invariants = true;
    options.record_events = false;
    std::unique_ptr<Run> run = simulate(scenario, options);
    if (run->result.violation) {
      std::cout << "FAIL " << file << (ran.empty() ? "" : " (" + ran.substr(2) + ")") << ": "
                << run->result.error << std::endl;
      return 1;
    }
    if (auto divergence = check_expectations(*run)) {
      std::cout << "FAIL " << file << (ran.empty() ? "" : " (" + ran.substr(2) + ")") << ": " << *divergence
                << std::endl;
      name_the_switch(file, assignment, policy, scenario);
      return 1;
    }
    if (scenario.expect.is_null()) {
      std::cout << "NO EXPECT " << file << " (" << scenario.name << ran << "): ran with the invariants, "
                << outcome_line(*run) << ", but there is no expect block to check" << std::endl;
      return kNoExpect;
    }
    // As `run` says it (exit 1): rejected submits or a STUCK end the block holds without naming.
    if (const std::vector<Unexpected> problems = unexpected_problems(*run); !problems.empty()) {
      std::cout << "FAIL " << file << (ran.empty() ? "" : " (" + ran.substr(2) + ")") << ": " << problems[0].what << (problems[0].tasks.empty() ? "" : " (" + problems[0].tasks[0] + ")") << std::endl;
      return 1;
    }
    std::cout << "PASS " << file << " (" << scenario.name << ran << ")" << std::endl;
    return 0;
  } catch (const ScenarioError& e) {
    std::cout << "ERROR " << e.what() << std::endl;
    return 2;
  }
}

// Exit status: 0 every file passed; 1 one fell short or had nothing to check; 2 only malformed files failed.
int cmd_check(const std::vector<std::string>& files, const std::vector<std::string>& cfg,
              const VarAssignment& assignment, const PolicyFlag& policy) {
  // SimGrid allows one Engine per process: each scenario runs in a child process (a single file in this one).
  int passed = 0, failed = 0, malformed = 0, unchecked = 0, crashed = 0, unwritable = 0;
  for (const std::string& f : files) {
    int rc = 0;
    if (files.size() == 1) {
      rc = check_one(f, cfg, assignment, policy);
    } else {
      std::fflush(stdout);
      const pid_t pid = fork_tracked();
      if (pid == 0) {
        if (const char* kind = std::getenv("DIRSCHED_INTERNAL_ERROR_TEST_IN_CHILD")) cli::throw_for_test(kind);
        int child_rc = check_one(f, cfg, assignment, policy);
        if (!stdout_written()) child_rc = kExitCannotWrite;  // the parent says so once, at its end
        _exit(child_rc);
      }
      int status = 0;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      child_finished(pid);
      if (WIFSIGNALED(status)) {
        // An internal error aborts the child (134 = SIGABRT); any signal is a crash, never a verdict.
        std::cout << "FAIL " << f << ": crashed (signal " << WTERMSIG(status) << ")\n";
        ++crashed, ++failed;
        continue;
      }
      rc = WIFEXITED(status) ? WEXITSTATUS(status) : cli::kExitInternal;
    }
    if (rc == 0)
      ++passed;
    else if (rc == kNoExpect)
      ++unchecked;
    else if (rc == kExitBadInput)
      ++malformed, ++failed;
    else if (rc == kExitCannotWrite)
      ++unwritable, ++failed;  // the child could not write its report; the parent's own check says so
    else
      ++failed;
  }
  std::cout << passed << " passed, " << failed << " failed";
  if (unchecked) std::cout << ", " << unchecked << " without expect (not counted as passed)";
  if (crashed) std::cout << ", " << crashed << " crashed (a bug in dirsched: please report it with the file)";
  std::cout << "\n";
  if (crashed) return cli::kExitInternal;
  if (unwritable) return kExitCannotWrite;
  if (failed) return malformed == failed && !unchecked ? 2 : 1;
  return unchecked ? 1 : 0;
}

std::vector<std::string> files, vars;

void declare(CLI::App& check, Common& common) {
  check.add_option("scenarios", files, "Scenario JSON files")->required();
  add_cfg(check, common.cfg);
  add_policy_flags(check, common.policy);
  check.add_option("--var", vars, kVarHelp);
  check.add_flag("--var-any", g_var_any, kVarAnyHelp);
}

int run(CLI::App&, Common& common) { return cmd_check(files, common.cfg, parse_vars(vars), common.policy); }

}  // namespace

const Verb kCheckVerb{"check", "Run scenarios and evaluate their expect blocks", declare, run, nullptr};

}  // namespace dirsched::cli
