// "The command ran and the answer is no" for a run: submits the core rejected, or a run that ended
// STUCK, that the scenario's `expect` block does not expect. `run` prints them on stderr and exits 1;
// `check` fails the file with the same lines (docs/exit-status.md).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "dirsched/outputs.hpp"

namespace dirsched::cli {

struct Unexpected {
  std::string what;                // "2 of 5 tasks REJECTED", "the run ended STUCK with 1 task stuck", ...
  std::vector<std::string> tasks;  // the first few: "g: REJECTED missing_worker: ..." / "h: stuck READY (...)"
  std::size_t more = 0;            // tasks of the same kind not listed
};

// The problems of `run` its expect block does not account for (none when the block holds and names
// them: every rejected task under `rejected` or as REJECTED under `final_state`, every stuck task under
// `final_state`; or its `outcome` is one other than COMPLETED). At most `most` tasks listed per kind.
std::vector<Unexpected> unexpected_problems(const Run& run, std::size_t most = 5);

// Prints them as `dirsched run` does ("dirsched: SCENARIO: 1 of 2 tasks REJECTED, not expected:"
// then one indented line per task) on `out`; returns whether there were any.
bool report_unexpected(const std::vector<Unexpected>& problems, const std::string& scenario, std::ostream& out);

}  // namespace dirsched::cli
