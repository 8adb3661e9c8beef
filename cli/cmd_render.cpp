// `dirsched render`: the pictures of a run folder redrawn from its events.jsonl.
#include "verbs.hpp"

#include "options.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dirsched/error.hpp"
#include "dirsched/escape.hpp"
#include "dirsched/fidelity.hpp"
#include "dirsched/output_folder.hpp"
#include "dirsched/outputs.hpp"
#include "dirsched/progress.hpp"
#include "run_folder.hpp"

namespace dirsched::cli {
namespace {

// render --observed: report.html gains the fidelity measures against the observed run and the two
// timelines one above the other (issue 25: the report of a replay).
std::string with_observed_section(const std::string& report, const Fidelity& f, const std::string& stacked) {
  const std::string section = "<h2>Against the observed run</h2>\n<pre class=\"fidelity\">" + html_escape(f.text) +
                              "</pre>\n<div class=\"pic\">" + stacked + "</div>\n";
  const std::size_t end = report.rfind("</body>");
  if (end == std::string::npos) return report + section;
  return report.substr(0, end) + section + report.substr(end);
}

// Redraws the pictures of a run folder from its events.jsonl (and summary.json, for lane order).
int cmd_render(const std::string& dir_arg, double budget_s, const std::string& observed) {
  namespace fs = std::filesystem;
  const std::string dir = without_trailing_slashes(dir_arg);
  const fs::path events = fs::path(dir) / "events.jsonl";
  if (!fs::exists(events)) {
    std::cerr << "dirsched: " << events.string() << ": no such file (render needs a run folder)\n";
    return 2;
  }
  // It writes into the folder: only into one that a run wrote.
  if (fs::is_symlink(dir) || !has_marker(dir, FolderKind::kRun)) {
    std::cerr << "dirsched: render " << dir << ": not a dirsched run folder (no " << marker_name(FolderKind::kRun)
              << " in it); render writes only into a folder that dirsched run wrote\n";
    return 2;
  }
  // The folder is locked for the whole redraw: a run replacing it waits, so the pictures always match
  // the data beside them.
  const FolderLock folder_lock(dir);
  std::optional<record::Summary> summary;
  const fs::path summary_path = fs::path(dir) / "summary.json";
  if (fs::exists(summary_path)) summary = read_summary(summary_path.string());
  const record::Summary* summary_doc = summary ? &*summary : nullptr;
  std::string note;
  std::map<std::string, std::string> files;
  // A folder past viz::kMaxPictureTasks (by its summary, or a log past 256 MiB without one) is drawn
  // aggregated, in one streaming pass: bounded in memory whatever the log holds.
  const bool big = (summary && summary->tasks.total > viz::kMaxPictureTasks) ||
                   (fs::is_regular_file(events) && fs::file_size(events) > (std::uintmax_t{256} << 20));
  if (big && !observed.empty()) {
    std::cerr << "dirsched: render --observed: " << dir << " is past " << viz::kMaxPictureTasks
              << " tasks and is drawn aggregated; compare it with `dirsched fidelity` instead\n";
    return 2;
  }
  if (big) {
    try {
      Progress::get().begin("pictures");
      const viz::Aggregate a = viz::aggregate_run(events.string(), summary_doc);
      files["timeline.svg"] = viz::aggregate_timeline_svg(a);
      files["trace.json"] = viz::aggregate_trace(a);
      note = "aggregated: " + std::to_string(a.tasks) + " tasks exceed " + std::to_string(viz::kMaxPictureTasks);
      Progress::get().end();
    } catch (const viz::VizError& e) {
      std::cerr << "dirsched: " << dir << "/" << e.what() << "\n";
      return 2;
    }
  } else
  try {
    Progress::get().begin("read");
    const std::string text = read_file(events);
    check_output_jsonl(text, events.string());  // as strict as the loader: viz reads what passes
    const viz::RunView view = viz::parse_run(text, summary_doc);
    Progress::get().begin("pictures");
    files = viz::render_all(view, summary_doc, {}, &note, budget_s);
    if (fs::exists(fs::path(dir) / "trace.paje")) files["trace.paje"] = viz::paje_trace(view);
    if (!observed.empty()) {  // measure_fidelity refuses a folder without its files (BadInput: exit 2)
      const Fidelity f = measure_fidelity(observed, dir, std::nullopt);
      files["report.html"] = with_observed_section(files["report.html"], f, stacked_timelines(observed, dir));
      files["fidelity.json"] = f.json.dump(2) + "\n";
    }
    Progress::get().end();
  } catch (const viz::VizError& e) {
    std::cerr << "dirsched: " << dir << "/" << e.what() << "\n";
    return 2;
  }
  // Never over a file the user put there; the marker lists the pictures before they are drawn (a stop
  // between the two leaves a listed file missing, never an unlisted one).
  const std::vector<std::string> foreign = foreign_entries(dir);
  std::vector<std::string> names;
  for (const auto& entry : files) {
    names.push_back(entry.first);
    if (std::binary_search(foreign.begin(), foreign.end(), entry.first))
      throw OutputRefused("render " + dir + ": " + entry.first +
                          " is a file dirsched did not write (not in its .dirsched-run); move it out first");
    if (std::binary_search(foreign.begin(), foreign.end(), entry.first + "/"))  // a folder, link, FIFO, ...
      throw OutputRefused("render " + dir + ": " + entry.first +
                          " is not a regular file (a folder, link or device dirsched did not make); move it out first");
  }
  add_to_run_marker(dir, names);
  Progress::get().begin("write", static_cast<double>(files.size()), "files");
  double written = 0;
  for (const auto& [name, text] : files) {
    write_file_atomic(fs::path(dir) / name, text);
    Progress::get().update(++written);
  }
  std::error_code ec;
  fs::remove(fs::path(dir) / kPicturesInterrupted, ec);  // drawn now
  Progress::get().end();
  std::cout << "drew " << files.size() << " files in " << dir << "/"
            << (note.empty() ? "" : " (" + note + ")") << "\n";
  return 0;
}

std::string dir_arg, observed;

void declare(CLI::App& render, Common& common) {
  render.add_option("run_dir", dir_arg, "A folder written by dirsched run")->required();
  render.add_option("--observed", observed,
                    "A recorded run this one replays (an imported observed/ folder): report.html adds the "
                    "fidelity measures and both timelines one above the other, and fidelity.json is written")
      ->check(non_empty_path());
  add_picture_budget(render, common.picture_budget);
  add_quiet(render, common.quiet);
}

int run(CLI::App&, Common& common) { return cmd_render(dir_arg, common.picture_budget, observed); }

}  // namespace

const Verb kRenderVerb{"render", "Redraw the pictures of a run folder from its events.jsonl", declare, run, nullptr};

}  // namespace dirsched::cli
