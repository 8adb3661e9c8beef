// `dirsched import strace LOG --out DIR`: the runtime's [STRACE] host log read into a scenario that
// replays the run, a run folder of the recorded timeline (engine "strace") and an import report
// (../shared/docs/strace-import.md is the specification; docs/howto-import-a-real-run.md the user's page).
//
// The log streams, one line at a time, read twice: the first reading counts and checks, the second keeps
// the scheduler spans of the chosen process only, in tables of the counted size, so memory follows the
// tasks of the run (about 450 bytes each), never the size of the log (noise, other spans and other
// processes cost nothing but a counter).
//
// Every refusal of the specification is an ImportError "FILE:LINE: rule" (exit 2); nothing is written
// before the whole log has been read and checked.
#pragma once

#include <cstddef>
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

// --infer-deps guesses at most this many edges in all (every one is an arg of its consumer and an entry
// of the report): past it the import is refused (exit 2) at the consumer that passes it, naming the
// bound, rather than running out of memory (2,000 producers ending just before 2,000 consumers make
// 4,000,000). docs/limits.md.
inline constexpr std::size_t kMaxInferredEdges = 1'000'000;

struct ImportOptions {
  std::string log;                     // the host log
  std::optional<long long> pid;        // --pid N
  std::optional<std::string> level;    // --level WORD (node, network1, ..., or l3/host in older logs)
  std::vector<long long> runs;         // --run R (repeatable): only these run_ids
  std::string deps_file;               // --deps FILE: a trace the Python front end recorded
  std::optional<double> infer_gap_us;  // --infer-deps GAP_US
  bool allow_truncated = false;        // a dispatch without a completion is kept (no observed end)
  bool accept_anomalies = false;       // --accept-anomalies: the spec's refused contract breaks imported, named
  bool calibrate_overheads = false;    // --calibrate-overheads: scheduler.dispatch_cost_s (per kind too) from the spans
  bool sample_durations = false;       // --sample-durations: ops draw from the callables' empirical lists
  bool progress = false;               // a progress line on stderr (a tty)
};

// Reads and checks the log (ImportError, bad input, on any refusal, and BadInput for a file that cannot be
// read: nothing written then), then writes OUT (a new path, or an earlier import folder: its marker
// `.dirsched-import`) through a temporary folder moved in place at the end, so OUT holds the old import
// or the new one, whole. Memory follows the tasks of the chosen process, not the size of the log: the
// spans are dropped once paired and every output file is written as it is made. Returns the readable
// summary for stdout.
std::string import_strace(const ImportOptions& options, const std::string& out);

// A `[STRACE]` attribute value with its %XX escapes decoded ("%5B" -> "[").
std::string strace_decode(const std::string& value);
// The escaping the runtime applies to a value: bytes outside 0x20-0x7E, '%', '[', ']' (and the space
// that separates attributes) as %XX.
std::string strace_encode(const std::string& value);

}  // namespace dirsched
