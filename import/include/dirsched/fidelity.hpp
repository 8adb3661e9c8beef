// `dirsched fidelity OBSERVED SIMULATED`: how close a replay's timeline is to a recorded one
// (../shared/docs/strace-import.md, "Fidelity of a replay"). Both are run folders (events.jsonl and
// summary.json); members are matched by their label (task, or task[member]).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dirsched {

struct Fidelity {
  nlohmann::ordered_json json;  // every measure, as --json writes it
  std::string text;             // the same for people, ending with the verdict line
  double makespan_error = 0;    // (simulated - observed) / observed; NaN when only the observed is 0
  bool within = true;           // |makespan_error| <= the bound (true when no bound was given)
};

// Throws BadInput naming the folder and file when one is missing or malformed. `also_observed`: other
// observed runs of the same workload; with them the JSON holds `noise_floor` (per measure: the largest
// difference between two observed runs, the replay's error against `observed`, and whether that error is
// no larger) and the verdict is stated against it.
Fidelity measure_fidelity(const std::string& observed, const std::string& simulated,
                          std::optional<double> max_makespan_error,
                          const std::vector<std::string>& also_observed = {});

}  // namespace dirsched
