// Why one task waited, from what its run recorded (docs/why-it-waited.md): the one place that turns a
// run's record (summary.json's groups[] and critical_path, the task's tasks.csv row) into the answer,
// used by `dirsched why RUN TASK` and by report.html's "why" sections (the blocking-chain links are
// worded by held_by_text for both), so the command and the report cannot say different things.
//
// An imported run (engine strace) records no wait causes, blocking chains or critical path: the
// answer then has the task's times and total wait, and says the rest was not recorded.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "dirsched/record/summary.hpp"
#include "dirsched/record/task_row.hpp"

namespace dirsched::viz {

struct TaskWhy {
  std::string task, kind, state;
  std::vector<std::string> workers;  // tasks.csv allocated_resources ("0 1"), one entry a worker
  std::optional<double> submit_s, ready_s, start_s, end_s;
  std::optional<double> wait_s;  // start - submit (tasks.csv waiting_time); none: it never started
  // The wait split by cause (tasks.csv wait_<cause>_s), every cause in column order, keyed as
  // summary.json's wait_causes ("producers_s", ...); none when the run recorded no causes (an import)
  // or the task never started.
  std::optional<std::vector<std::pair<std::string, double>>> causes;
  // A group: its entry of summary.json's groups[] (none when the summary left it out past its cap).
  std::optional<record::GroupWait> group;
  // The critical path: whether the run recorded one, whether the task is on it, its step and the step
  // before it there (none: it is the path's first recorded step).
  bool path_recorded = false;
  bool on_critical_path = false;
  std::optional<record::CriticalStep> step, before;
};

// The task's row of a tasks.csv text (`file` names it in errors); none when no row names the task.
// Throws record::RecordError for a file that is not a tasks.csv.
std::optional<record::TaskRow> find_task_row(const std::string& tasks_csv, const std::string& task,
                                             const std::string& file);

// The answer for the task of `row`, with what `summary` recorded of it.
TaskWhy explain_task(const record::Summary& summary, const record::TaskRow& row);

// One link of a blocking chain, as the report and the command word it: "a1 on 0 until 4 (a1 itself
// waited 2 s, mostly fifo)", "g0 (group ahead) until 3".
std::string held_by_text(const record::BlockedBy& b);
// A cause key ("targets_busy_s") as words ("targets busy").
std::string cause_words(const std::string& key);

// The plain-text answer (several lines, each ending in LF) and the same as a JSON document.
std::string why_text(const TaskWhy& w);
nlohmann::ordered_json why_json(const TaskWhy& w);

}  // namespace dirsched::viz
