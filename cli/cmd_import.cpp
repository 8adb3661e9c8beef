// `dirsched import strace`: a real run's log read into a scenario, an observed run folder and a report.
#include "verbs.hpp"

#include <unistd.h>

#include <cstdint>
#include <iostream>
#include <string>

#include "dirsched/output_folder.hpp"
#include "dirsched/strace_import.hpp"
#include "options.hpp"

namespace dirsched::cli {
namespace {

ImportOptions options;
std::string out;

void declare(CLI::App& imp, Common&) {
  imp.require_subcommand(1);
  CLI::App* strace = imp.add_subcommand("strace", "The runtime's [STRACE] host log (docs/howto-import-a-real-run.md)");
  strace->add_option("log", options.log, "The host log")->required();
  strace->add_option("--out", out, "Output folder: a new path, or an earlier import to replace")->required();
  CLI::Option* pid = strace->add_option("--pid", options.pid, "The scheduler process to import")
                         ->check(cli::whole_number(0, INT64_MAX));
  strace->add_option("--level", options.level,
                     "The level word of the scheduler process (node, network1, network2, network3)")
      ->excludes(pid);
  strace->add_option("--run", options.runs, "Import only this run_id (repeatable)")
      ->check(cli::whole_number(1, INT64_MAX));
  CLI::Option* deps = strace->add_option(
      "--deps", options.deps_file,
      "A trace the Python front end recorded from the same orchestration: its args and buffers, joined op by op");
  strace->add_option(
          "--infer-deps", options.infer_gap_us,
          "Guess P -> T when T, submitted and with idle targets, starts within GAP_US microseconds of P's end")
      ->check(cli::real_number(0, 1e12))
      ->excludes(deps);
  strace->add_flag("--allow-truncated", options.allow_truncated,
                   "Import a log cut short: a dispatch without a completion has no observed end");
  strace->add_flag("--accept-anomalies", options.accept_anomalies,
                   "Import a single run elsewhere, two members at once on one worker or a completion before its "
                   "dispatch (refused by default), each named in import-report.json anomalies");
  strace->add_flag("--calibrate-overheads", options.calibrate_overheads,
                   "Estimate scheduler.dispatch_cost_s (and per target kind) and iteration_cost_s from the spans");
  strace->add_flag("--sample-durations", options.sample_durations,
                   "Ops carry no duration: each member draws from its callable's observed durations");
}

int run(CLI::App&, Common&) {
  options.progress = isatty(STDERR_FILENO);
  check_output_folder(out, FolderKind::kImport, "--out");  // before the log is read
  std::cout << import_strace(options, out) << "outputs in " << out
            << "/ (scenario.json, observed/, import-report.json)\n";
  return 0;
}

}  // namespace

const Verb kImportVerb{"import", "Read a real run's log into a scenario, an observed run folder and a report", declare,
                       run, nullptr};

}  // namespace dirsched::cli
