// dirsched: the command line over the scenario loader, the SimGrid driver and the outputs.
//
// Exit status (docs/exit-status.md has every one per command): 0 success; 1 a `check` whose
// expectations fall short; 2 bad input (a malformed scenario, a missing file, a bad option or one out
// of its range, a limit passed, a platform or --cfg SimGrid would abort on, a deadlock, an output path
// the folder rule refuses), reported as one line on stderr, with nothing written; 3 an output could
// not be written (nothing claimed, nothing left); 128 + N stopped by signal N (130 SIGINT, 143
// SIGTERM, 129 SIGHUP), temporaries removed; 134 an internal error (a bug): a message, then abort
// (error_kind.hpp has the mapping from exceptions).
//
// The commands are a table of verbs (verbs.hpp), each in its file: cmd_run.cpp, cmd_sweep.cpp, ...
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "dirsched/escape.hpp"
#include "dirsched/output_folder.hpp"
#include "dirsched/outputs.hpp"
#include "dirsched/probe.hpp"
#include "dirsched/progress.hpp"
#include "error_kind.hpp"
#include "options.hpp"
#include "verbs.hpp"

namespace {

using namespace dirsched;
using dirsched::cli::Verb;

// In the order `dirsched --help` lists them.
const Verb* const kVerbs[] = {&cli::kRunVerb,     &cli::kSweepVerb,   &cli::kOptimizeVerb, &cli::kCompareVerb,
                              &cli::kCheckVerb,   &cli::kBisectVerb,  &cli::kRenderVerb,   &cli::kExploreVerb,
                              &cli::kGenVerb,     &cli::kImportVerb,  &cli::kFidelityVerb, &cli::kWhyVerb,
                              &cli::kWhynotVerb};
constexpr std::size_t kVerbCount = sizeof kVerbs / sizeof kVerbs[0];

// Text on stderr, and on stdout for the commands that print text (not the JSON of gen and explore,
// nor sweep --plan's commands), goes through the terminal filter: a control character or an escape
// sequence in a name is shown as text (\x1b), never sent raw. The filters are never destroyed (the
// streams flush at exit).
void filter_terminal_text(bool stdout_too) {
  static TerminalFilter* err = new TerminalFilter(std::cerr.rdbuf());
  std::cerr.rdbuf(err);
  if (stdout_too) {
    static TerminalFilter* out = new TerminalFilter(std::cout.rdbuf());
    std::cout.rdbuf(out);
  }
}

int run_command(int argc, char** argv) {
  CLI::App app{"dirsched: simulate and verify directed task scheduling"};
  app.set_version_flag("--version", std::string("dirsched ") + dirsched_version());
  app.require_subcommand(1);
  cli::Common common;
  CLI::App* commands[kVerbCount];
  for (std::size_t i = 0; i < kVerbCount; ++i) {
    commands[i] = app.add_subcommand(kVerbs[i]->name, kVerbs[i]->description);
    kVerbs[i]->declare(*commands[i], common);
  }
  cli::name_checked_values(app);  // "--tasks UINT in [1, 10000000]", not CLI11's "FLOAT:UINT in ..."
  if (const auto unknown = cli::find_unknown_word(app, argc, argv)) {  // "did you mean 'run'?"
    std::cerr << unknown->command << ": " << unknown->message << "\n(see '" << unknown->command << " --help')\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Worded like every other refusal: which command, then what is wrong with its arguments.
    std::string command = "dirsched";
    for (const CLI::App* at = &app; !at->get_subcommands().empty();) {  // `dirsched import strace` too
      at = at->get_subcommands().front();
      command += " " + at->get_name();
    }
    std::cerr << command << ": " << e.what() << "\n" << "(see '" << command << " --help')\n";
    return 2;
  }
  std::size_t chosen = 0;
  while (chosen < kVerbCount && !*commands[chosen]) ++chosen;  // require_subcommand(1): one of them
  const Verb& verb = *kVerbs[chosen < kVerbCount ? chosen : 0];
  filter_terminal_text(chosen == kVerbCount || !verb.raw_stdout || !verb.raw_stdout());
  try {
    if (const char* kind = std::getenv("DIRSCHED_INTERNAL_ERROR_TEST")) cli::throw_for_test(kind);
    if (cli::named(common.cfg, "help")) {  // --cfg=help: SimGrid's options
      print_simgrid_help();
      return 0;
    }
    check_simgrid_cfg(common.cfg);  // an option that writes files or would crash SimGrid, before anything runs
    (void)common.policy.choice();  // a typo in --policy or --switch stops here, before anything runs
    if (common.quiet) Progress::get().set_shown(false);
    if (chosen < kVerbCount) return verb.run(*commands[chosen], common);
  } catch (...) {
    // Bad input 2, cannot write 3, a bug: a message and abort (134).
    return cli::report_current_exception();
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // First, before any thread: SIGINT, SIGTERM and SIGHUP go to the thread that removes temporaries.
  install_interrupt_cleanup();
  const int rc = run_command(argc, argv);
  // Every write to stdout is checked: output lost on a full disk is an error (exit 3), never a success.
  if (!cli::stdout_written()) {
    const int e = errno;
    std::cerr << "dirsched: cannot write to standard output" << (e ? std::string(": ") + std::strerror(e) : "")
              << "\n";
    return kExitCannotWrite;
  }
  return rc;
}
