// `dirsched whynot FILE --task NAME --goal GOAL --out DIR`: the smallest change to the scenario under
// which the task meets the goal, proved by a replay (whynot.hpp). DIR (new, or one whynot wrote) gets
// whynot.json and scenario.json, replaced whole; the input's folder is never written.
#include "verbs.hpp"

#include <filesystem>
#include <iostream>
#include <string>

#include "dirsched/output_folder.hpp"
#include "options.hpp"
#include "whynot.hpp"

namespace dirsched::cli {
namespace {

struct WhynotArgs {
  std::string file, task, goal, out, edits = "placement";
  std::size_t max_edits = 1;
  bool json = false;
} args;

int cmd_whynot(const Common& common) {
  whynot::Question q;
  q.file = args.file;
  q.task = args.task;
  q.goal = whynot::parse_goal(args.goal);
  q.edits = whynot::parse_edit_kinds(args.edits);
  q.max_edits = args.max_edits;
  q.choice = common.policy.choice();
  const std::string dir = check_output_folder(args.out, FolderKind::kWhynot, "--out").string();
  const whynot::Answer a = whynot::answer(q);
  NewParents parents(dir);
  TempPath tmp(temp_path_beside(dir));
  create_temp_dir(tmp);
  write_file(tmp.path() / "whynot.json", a.report.dump(2) + "\n");
  write_file(tmp.path() / "scenario.json", a.scenario.dump(2) + "\n");
  write_file(tmp.path() / marker_name(FolderKind::kWhynot), whynot_marker_text());
  replace_folder(tmp, dir, FolderKind::kWhynot);
  parents.keep();
  if (args.json)
    std::cout << a.report.dump(2) << "\n";
  else
    std::cout << a.text << "whynot.json and scenario.json in " << dir << "/\n";
  return a.found ? 0 : 1;
}

void declare(CLI::App& cmd, Common& common) {
  cmd.add_option("scenario", args.file, "Scenario JSON file")->required();
  cmd.add_option("--task", args.task, "The task asked about")->required();
  cmd.add_option("--goal", args.goal, "no-overtakes, wait<=SECONDS (READY wait) or start<=SECONDS")->required();
  cmd.add_option("--out", args.out, "Folder for whynot.json and scenario.json (the changed scenario)")->required();
  cmd.add_option("--edits", args.edits, "Edit kinds, comma-separated: placement (default), order, version");
  cmd.add_option("--max-edits", args.max_edits, "Edits in one change at most (default 1)")
      ->check(whole_number(1, 4));
  add_policy_flags(cmd, common.policy);
  cmd.add_flag("--json", args.json, "Print whynot.json on stdout instead of the summary lines");
}

int run(CLI::App&, Common& common) { return cmd_whynot(common); }

bool prints_json() { return args.json; }

}  // namespace

const Verb kWhynotVerb{"whynot",
                       "The smallest change to a scenario under which a task meets a goal (exit 0 found, 1 not)",
                       declare, run, prints_json};

}  // namespace dirsched::cli
