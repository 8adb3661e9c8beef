// The subcommands of dirsched: each verb declares its own options on its CLI11 subcommand and runs
// when it is the one given. main.cpp holds the table (kVerbs, in the order `dirsched --help` lists
// them), parses, and maps what a verb throws to an exit status (error_kind.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "common.hpp"
#include "dirsched/viz.hpp"

namespace dirsched::cli {

// What several verbs declare alike, bound to one place: main.cpp checks --cfg and the policy names, and
// applies --quiet, before the verb runs.
struct Common {
  std::vector<std::string> cfg;  // --cfg, passed through to SimGrid
  PolicyFlag policy;             // --policy, --switch
  double picture_budget = viz::kDefaultPictureBudget;
  bool quiet = false;
};

struct Verb {
  const char* name;
  const char* description;
  // Adds the verb's options to its subcommand (their variables live with the verb).
  void (*declare)(CLI::App& command, Common& common);
  // Runs the verb once its command line parsed; returns the exit status, or throws (error_kind.hpp).
  int (*run)(CLI::App& command, Common& common);
  // Whether the verb prints JSON or plan lines on stdout, which the terminal filter leaves as they are
  // (nullptr: never).
  bool (*raw_stdout)();
};

extern const Verb kRunVerb;
extern const Verb kSweepVerb;
extern const Verb kOptimizeVerb;
extern const Verb kCompareVerb;
extern const Verb kCheckVerb;
extern const Verb kBisectVerb;
extern const Verb kRenderVerb;
extern const Verb kExploreVerb;
extern const Verb kGenVerb;
extern const Verb kImportVerb;
extern const Verb kFidelityVerb;
extern const Verb kWhyVerb;
extern const Verb kWhynotVerb;

}  // namespace dirsched::cli
