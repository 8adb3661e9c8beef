// `dirsched import strace LOG --out DIR`: the runtime's [STRACE] host log read into a scenario that
// replays the run, a run folder of the recorded timeline (engine "strace") and an import report
// (../shared/docs/strace-import.md is the specification; docs/howto-import-a-real-run.md the user's page).
//
// The log streams: one line at a time, and only the scheduler spans of the process(es) that can be
// chosen are kept (a compact record each), so memory follows the scheduler spans of the run, never the
// size of the log (noise, other spans and other processes cost nothing but a counter).
//
// Every refusal of the specification is an ImportError "FILE:LINE: rule" (exit 2); nothing is written
// before the whole log has been read and checked.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dirsched/error.hpp"

namespace dirsched {

class ImportError : public BadInput {
 public:
  using BadInput::BadInput;
};

struct ImportOptions {
  std::string log;                     // the host log
  std::optional<long long> pid;        // --pid N
  std::optional<std::string> level;    // --level WORD (node, network1, ..., or l3/host in older logs)
  std::vector<long long> runs;         // --run R (repeatable): only these run_ids
  std::string deps_file;               // --deps FILE: a trace the Python front end recorded
  std::optional<double> infer_gap_us;  // --infer-deps GAP_US
  bool allow_truncated = false;        // a dispatch without a completion is kept (no observed end)
  bool calibrate_overheads = false;    // --calibrate-overheads: scheduler.dispatch_cost_s from the spans
  bool sample_durations = false;       // --sample-durations: ops draw from the callables' empirical lists
  bool progress = false;               // a progress line on stderr (a tty)
};

// What an import produces, held in memory until it is written whole.
struct ImportResult {
  std::string scenario_json;  // DIR/scenario.json
  std::string report_json;    // DIR/import-report.json
  std::string summary_text;   // the readable summary for stdout
  // DIR/observed/: file name -> text (events.jsonl, summary.json, tasks.csv); the marker is added
  // when it is written.
  std::vector<std::pair<std::string, std::string>> observed;
  std::string scenario_name;
};

// Reads and checks the log; throws ImportError (bad input) and BadInput (a file that cannot
// be read).
ImportResult import_strace(const ImportOptions& options);

// Writes DIR (a new path, or an earlier import folder: its marker `.dirsched-import`) through a
// temporary folder moved in place at the end: DIR holds the old import or the new one, whole.
void write_import(const ImportResult& result, const std::string& out);

// A `[STRACE]` attribute value with its %XX escapes decoded ("%5B" -> "[").
std::string strace_decode(const std::string& value);
// The escaping the runtime applies to a value: bytes outside 0x20-0x7E, '%', '[', ']' (and the space
// that separates attributes) as %XX.
std::string strace_encode(const std::string& value);

}  // namespace dirsched
