// One row of sweep.csv, typed, and the file's only codec (docs/outputs.md, "sweep.csv"): a variant's
// measures, taken from its summary.json by the sweep layer (sweep/, row_from_summary), written here.
//
// The columns: variant, one column per sweep variable (its value: a string as itself, anything else as
// JSON), then clean, makespan_s, group_ready_wait_{mean,p95,max}_s, single_ready_wait_{mean,p95,max}_s,
// group_idle_target_s, utilisation, failed, poisoned, rejected, stuck, outcome, overtakes_max, stalls,
// group_held_target_s (appended later: a file from before it is read with 0 there).
// Times and the utilisation are written with six significant digits (text/format.hpp's g6), so a row
// read back holds them rounded so; counts are whole numbers. RFC 4180 quoting; lines end with LF.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "dirsched/record/summary.hpp"  // RecordError

namespace dirsched::record {

// What a sweep measures of one variant's run.
struct SweepMeasures {
  double makespan_s = 0;
  double group_wait_mean_s = 0, group_wait_p95_s = 0, group_wait_max_s = 0;
  double single_wait_mean_s = 0, single_wait_p95_s = 0, single_wait_max_s = 0;
  // Summed over groups: the time they waited with an idle target that nothing held (a later single may
  // take it: the starvation exposure), and with an idle target held for them (a reservation's price).
  double group_idle_target_s = 0;
  double group_held_target_s = 0;
  double group_wait_sum_s = 0;     // READY waits of every group, summed (a replicated sweep's column, not here)
  double utilisation = 0;          // mean over NEXT_LEVEL workers
  long failed = 0, poisoned = 0, rejected = 0, stuck = 0;
  long overtakes_max = 0;  // the most singles that overtook one NEXT_LEVEL group
  long stalls = 0;         // stall reports (group_stall and reservation_stall) the run logged
  std::string outcome;
  // COMPLETED with no REJECTED, FAILED, POISONED or STUCK task. A variant that is not clean did less
  // work, so its makespan says nothing about its worker sets: it ranks after every clean one.
  bool clean = true;
};

// The header line (with its LF) of a sweep over `var_names`.
std::string sweep_csv_header(const std::vector<std::string>& var_names);
// Appends one row (with its LF): the variant's index, its values' text (one per variable, in the
// header's order) and its measures.
void encode_sweep_row(std::size_t variant, const std::vector<std::string>& values, const SweepMeasures& m,
                      std::string& out);

struct SweepCsvRow {
  std::size_t variant = 0;
  std::vector<std::string> values;
  SweepMeasures measures;
};
// The variable names a header line (without its LF) names; RecordError naming `file` otherwise.
std::vector<std::string> decode_sweep_header(std::string_view line, const std::string& file);
// One row (without its LF) of a file over `var_count` variables; RecordError naming the file, the line
// and the column.
SweepCsvRow decode_sweep_row(std::string_view line, std::size_t var_count, const std::string& file,
                             std::size_t line_no);

}  // namespace dirsched::record
