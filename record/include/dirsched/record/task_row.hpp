// One row of tasks.csv, typed, and the file's only codec (docs/outputs.md, "tasks.csv"): every engine's
// writer (outputs/) and the import of real runs (import/) encode through it; a reader decodes through it.
//
// The columns, in order: job_id, kind, callable, allocated_resources, submission_time, ready_time,
// starting_time, finish_time, waiting_time, execution_time, final_state; then, in a run's file (not in
// an import's), nine wait causes wait_<cause>_s; then `run` when the trace declares runs; then
// `staged` when staging can act; then (a run's file) wait_target_held_s. New columns are only ever appended. Column names follow Batsim's
// jobs.csv where the meaning is the same.
//
// Fields: RFC 4180 (a field holding a comma, a double quote, CR or LF is quoted, inner quotes doubled;
// lines end with LF). Numbers: the shortest text that reads back as the same double; an absent time
// (a task that never started, ...) is an empty field.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "dirsched/record/summary.hpp"  // RecordError

namespace dirsched::record {

// The wait causes, in column order (wait_producers_s, ...).
// The last, wait_target_held_s, came later: it is written after every other column (after `run` and
// `staged`), so the older columns keep their positions; a file from before it has no such column.
constexpr std::array<const char*, 10> kWaitColumns = {
    "wait_producers_s",   "wait_fifo_s",         "wait_group_run_s",   "wait_reserved_s", "wait_scheduler_s",
    "wait_group_queue_s", "wait_targets_busy_s", "wait_target_idle_s", "wait_sub_pool_s", "wait_target_held_s"};
constexpr std::size_t kWaitColumnsInPlace = 9;  // those written right after final_state

// Which of the optional columns a file has.
struct TaskColumns {
  bool waits = true;    // the nine wait_<cause>_s (a run's file; an import's has none)
  bool run = false;     // the trace declares runs
  bool staged = false;  // staging (#1583) can act
  bool held = true;     // with waits: wait_target_held_s, last (false: a file from before it)
  bool operator==(const TaskColumns& o) const {
    return waits == o.waits && run == o.run && staged == o.staged && (!waits || held == o.held);
  }
};

struct TaskRow {
  std::string job_id, kind, callable, allocated_resources;
  std::optional<double> submission_time, ready_time, starting_time, finish_time, waiting_time, execution_time;
  std::string final_state;
  std::optional<std::array<double, kWaitColumns.size()>> waits;  // none for a task that never started (column order)
  std::string run;                                                // with TaskColumns::run
  std::optional<double> staged;                                   // with TaskColumns::staged
};

// The header line (with its LF).
std::string tasks_csv_header(const TaskColumns& columns);
// Appends one row (with its LF) to `out`.
void encode_task_row(const TaskRow& row, const TaskColumns& columns, std::string& out);

// The columns a header line (without its LF) names; RecordError naming `file` for any other header.
TaskColumns decode_tasks_header(std::string_view line, const std::string& file);
// One row (without its LF); RecordError naming `file`, the line and the column for a row that does not
// match the header or a number that is not one.
TaskRow decode_task_row(std::string_view line, const TaskColumns& columns, const std::string& file,
                        std::size_t line_no);

}  // namespace dirsched::record
