// `dirsched why RUN TASK`: why one task of a run waited, from its record (viz/why.hpp, the same answer
// as report.html's why sections), as text or, with --json, as a document.
#include "verbs.hpp"

#include <filesystem>
#include <iostream>
#include <string>

#include "dirsched/error.hpp"
#include "dirsched/output_folder.hpp"
#include "dirsched/outputs.hpp"
#include "dirsched/why.hpp"

namespace dirsched::cli {
namespace {

std::string dir_arg, task_arg;
bool as_json = false;

int cmd_why(const std::string& dir_given, const std::string& task) {
  namespace fs = std::filesystem;
  fs::path dir(without_trailing_slashes(dir_given));
  // An import folder holds its run in observed/: read that one.
  if (fs::is_directory(dir) && !has_marker(dir, FolderKind::kRun) && has_marker(dir, FolderKind::kImport) &&
      has_marker(dir / "observed", FolderKind::kRun))
    dir /= "observed";
  if (!fs::is_directory(dir) || !has_marker(dir, FolderKind::kRun))
    throw BadInput("why " + dir.string() + ": not a dirsched run folder (no " + marker_name(FolderKind::kRun) +
                   " in it; give a folder that dirsched run or import wrote)");
  const record::Summary summary = read_summary((dir / "summary.json").string());
  const std::string csv_path = (dir / "tasks.csv").string();
  const std::optional<record::TaskRow> row = viz::find_task_row(read_run_file(csv_path), task, csv_path);
  if (!row) throw BadInput("why " + dir.string() + ": no task '" + task + "' in this run (" + csv_path + ")");
  const viz::TaskWhy w = viz::explain_task(summary, *row);
  if (as_json)
    std::cout << viz::why_json(w).dump(2) << "\n";
  else
    std::cout << viz::why_text(w);
  return 0;
}

void declare(CLI::App& why, Common&) {
  why.add_option("run_dir", dir_arg, "A folder written by dirsched run (or import: its observed run)")->required();
  why.add_option("task", task_arg, "The task's name")->required();
  why.add_flag("--json", as_json, "Print the answer as a JSON document");
}

int run(CLI::App&, Common&) { return cmd_why(dir_arg, task_arg); }

bool prints_json() { return as_json; }

}  // namespace

const Verb kWhyVerb{"why", "Why a task of a run waited: its times, wait causes, blocking chain, critical path",
                    declare, run, prints_json};

}  // namespace dirsched::cli
