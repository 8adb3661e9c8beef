// A run folder: the engine's run, its data files, then its pictures (run_folder.hpp).
#include "run_folder.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "dirsched/error.hpp"
#include "dirsched/eventsim.hpp"
#include "dirsched/output_folder.hpp"
#include "dirsched/outputs.hpp"
#include "dirsched/progress.hpp"
#include "dirsched/record/marker.hpp"
#include "dirsched/strace_writer.hpp"
#include "dirsched/threads_engine.hpp"
#include "dirsched/viz.hpp"

namespace dirsched::cli {
namespace {

// The picture files `selected` (empty: all) can write, for the marker before they are drawn.
std::vector<std::string> picture_files(const std::vector<std::string>& selected) {
  auto want = [&](const char* what) {
    return selected.empty() || std::find(selected.begin(), selected.end(), what) != selected.end();
  };
  std::vector<std::string> names;
  if (want("dag")) names.insert(names.end(), {"dag.dot", "dag.svg"});
  if (want("timeline")) names.push_back("timeline.svg");
  if (want("trace")) names.push_back("trace.json");
  if (want("report")) names.push_back("report.html");
  if (std::find(selected.begin(), selected.end(), "paje") != selected.end()) names.push_back("trace.paje");
  return names;
}

// From here until end_pictures(): a stop (Ctrl-C) keeps the run's data files in `out` and leaves
// pictures-interrupted.txt there saying so.
void begin_pictures(const std::string& out) {
  set_interrupt_note((std::filesystem::path(out) / kPicturesInterrupted).string(),
                     "The run's data files are complete; its pictures were not drawn: the run was stopped while "
                     "drawing them. `dirsched render " + out + "` draws them.",
                     "the data files are in " + out + "/; pictures interrupted (dirsched render " + out +
                         " draws them)");
  Progress::get().begin("pictures");
}

// The pictures of a run whose data files are in `out` already: each drawn under the budget (see
// viz::dag_picture), written atomically, listed in the marker before they are drawn. While they are
// drawn, a stop (Ctrl-C) keeps the data and leaves pictures-interrupted.txt saying so. A note about a
// picture goes to summary.json's "notes" (rewritten when `summary` was written).
void draw_pictures(const Run& run, const std::string& out, std::string events_text,
                   const std::vector<std::string>& selected, double budget_s, std::vector<std::string> notes,
                   bool summary) {
  namespace fs = std::filesystem;
  add_to_run_marker(out, picture_files(selected));  // pictures-interrupted.txt is always dirsched's
  begin_pictures(out);
  const record::Summary summary_doc = summarise(run);  // the run record in process: no file read back
  std::string note;
  const viz::RunView view = viz::parse_run(events_text, &summary_doc);
  events_text.clear();
  events_text.shrink_to_fit();
  std::map<std::string, std::string> files;
  if (!(selected.size() == 1 && selected.front() == "paje"))
    files = viz::render_all(view, &summary_doc, selected, &note, budget_s);
  if (std::find(selected.begin(), selected.end(), "paje") != selected.end()) files["trace.paje"] = viz::paje_trace(view);
  try {
    for (const auto& [name, text] : files) write_file_atomic(fs::path(out) / name, text);
    if (!note.empty()) {
      notes.push_back(note);
      if (summary) write_file_atomic(fs::path(out) / "summary.json", summary_json(run, notes));
    }
  } catch (const WriteError&) {
    set_interrupt_note("", "", "");
    throw;  // run_to_folder says what is left
  }
  set_interrupt_note("", "", "");
  Progress::get().end();
}

// Which picture to open first, named after "outputs in DIR/": report.html, or timeline.svg when the run
// was drawn aggregated (no report.html then); nothing when neither was drawn.
std::string open_hint(bool draw, bool aggregate, const std::vector<std::string>& selected) {
  auto want = [&](const char* what) {
    return selected.empty() || std::find(selected.begin(), selected.end(), what) != selected.end();
  };
  if (!draw) return "";
  if (aggregate) return want("timeline") ? " (open timeline.svg: aggregated past " +
                                               std::to_string(viz::kMaxPictureTasks) + " tasks, no report.html)"
                                         : "";
  return want("report") ? " (open report.html)" : "";
}

// The pictures of a run past viz::kMaxPictureTasks: timeline.svg aggregated, trace.json windowed, from
// `early` or from the log in the folder (no trace.paje: the note says so).
void draw_aggregate(const Run& run, const std::string& out, std::optional<viz::Aggregate> early,
                    const std::vector<std::string>& selected) {
  namespace fs = std::filesystem;
  auto want = [&](const char* what) {
    return selected.empty() || std::find(selected.begin(), selected.end(), what) != selected.end();
  };
  std::vector<std::string> names;
  if (want("timeline")) names.push_back("timeline.svg");
  if (want("trace")) names.push_back("trace.json");
  add_to_run_marker(out, names);
  begin_pictures(out);
  const record::Summary summary_doc = summarise(run);
  const viz::Aggregate a = early ? std::move(*early) : viz::aggregate_run((fs::path(out) / "events.jsonl").string(), &summary_doc);
  if (want("timeline")) write_file_atomic(fs::path(out) / "timeline.svg", viz::aggregate_timeline_svg(a));
  if (want("trace")) write_file_atomic(fs::path(out) / "trace.json", viz::aggregate_trace(a));
  set_interrupt_note("", "", "");
  Progress::get().end();
}

// After a picture (or metrics.json) could not be written (a full disk): the marker listed the pictures
// before they were drawn; the files not there are taken out of its list, so that it names only the files the folder
// holds. Best effort: a marker that cannot be rewritten either keeps names that are absent, which the
// folder rule accepts.
void forget_missing_files(const std::string& out) {
  namespace fs = std::filesystem;
  try {
    const fs::path path = fs::path(out) / marker_name(FolderKind::kRun);
    record::RunMarker marker = record::decode_run_marker(nlohmann::json::parse(read_file(path)), path.string());
    if (!marker.files) return;
    std::error_code ec;
    auto& files = *marker.files;
    files.erase(std::remove_if(files.begin(), files.end(),
                               [&](const std::string& f) { return !fs::exists(fs::path(out) / f, ec); }),
                files.end());
    write_file_atomic(path, run_marker_json(std::move(marker)));
  } catch (const std::exception&) {
  }
}

}  // namespace

bool run_writes(const std::string& name) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all = picture_files({"dag", "timeline", "trace", "report", "paje"});
    for (const char* data : {"events.jsonl", "summary.json", "tasks.csv", "metrics.json", "strace.log",
                             "pictures-interrupted.txt", "fidelity.json"})
      all.emplace_back(data);
    return all;
  }();
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Replays one scenario into `out`: simulate (or run on threads), draw, write (everything moved in
// place at the end). Returns 1 when an invariant broke, else 0. `out` is checked before anything runs
// (OutputRefused).
int run_to_folder(const Scenario& scenario, RunOptions options, const std::string& out_arg,
                  std::vector<std::string> selected_data, const std::vector<std::string>& selected_pictures,
                  bool quiet, double budget_s, const ThreadsEngine& threads,
                  const std::map<std::string, std::string>& attached, int (*verdict)(const Run&)) {
  const std::string out = check_output_folder(out_arg, FolderKind::kRun, "--out").string();
  bool draw = (selected_data.empty() && selected_pictures.empty()) || !selected_pictures.empty();
  const bool all = selected_data.empty() && selected_pictures.empty();
  if (!all && selected_data.empty()) selected_data = {"none"};  // pictures only: no data file
  const bool events =
      all || std::find(selected_data.begin(), selected_data.end(), "events") != selected_data.end();
  // strace.log (the runtime's [STRACE] grammar) is made from the event log, after the run.
  const auto strace_at = std::find(selected_data.begin(), selected_data.end(), "strace");
  const bool strace = strace_at != selected_data.end();
  if (strace) selected_data.erase(strace_at);
  if (strace && selected_data.empty()) selected_data = {"none"};
  options.record_events = draw || events || strace;
  // The log streams to a registered temporary beside the output folder (moved in at the end).
  NewParents parents(out);
  std::optional<TempPath> events_tmp;
  if (options.record_events) {
    events_tmp.emplace(temp_path_beside(out, "events"));
    options.events_path = events_tmp->path().string();
  }
  // tasks.csv too: written as tasks retire, to a registered temporary beside the output folder.
  std::optional<TempPath> tasks_tmp;
  if (all || std::find(selected_data.begin(), selected_data.end(), "tasks") != selected_data.end()) {
    tasks_tmp.emplace(temp_path_beside(out, "tasks"));
    options.tasks_path = tasks_tmp->path().string();
  }
  std::unique_ptr<Run> run;
  Progress::get().begin("simulate");
  try {
    if (threads.on) {
      ThreadsOptions t;
      static_cast<OutputOptions&>(t) = options;  // the same outputs, tasks.csv streamed as on SimGrid
      t.time_scale = threads.time_scale;
      t.seed = options.seed;
      run = run_threads(scenario, t);
    } else if (threads.events) {
      EventRunOptions e;
      static_cast<OutputOptions&>(e) = options;
      e.seed = options.seed;
      run = run_events(scenario, e);
    } else {
      run = simulate(scenario, options);
    }
  } catch (const WriteError& e) {
    // The temporaries are gone with the run: name the file as the user will look for it.
    const bool tasks = tasks_tmp && e.path() == tasks_tmp->path().string();
    throw WriteError(out + (tasks ? "/tasks.csv" : "/events.jsonl"), e.reason());
  }
  Progress::get().end();  // simulate
  std::map<std::string, std::string> files;
  std::vector<std::string> notes;
  // Past viz::kMaxPictureTasks a picture of every task would cost more than the run (and a timeline
  // of a million bars is no picture): the timeline is aggregated and the trace windowed, from one
  // streaming pass over the log (viz::aggregate_run); no DAG picture, no report. The summary says so.
  const bool aggregate = draw && run->recorder->record_count() > viz::kMaxPictureTasks;
  std::optional<viz::Aggregate> early;
  if (aggregate) {
    notes.push_back("pictures aggregated: " + std::to_string(run->recorder->record_count()) + " tasks exceed " +
                    std::to_string(viz::kMaxPictureTasks) +
                    ": timeline.svg shows utilisation and queue depth per worker and the longest group waits, "
                    "trace.json is windowed; no dag.svg, dag.dot, report.html or trace.paje");
    // The log stays in the folder only when it is one of the data files: otherwise it is read now.
    if (!events && !run->events_file.empty()) {
      const record::Summary summary_doc = summarise(*run);
      early = viz::aggregate_run(run->events_file, &summary_doc);
    }
  }
  // The pictures read the log, which write_outputs moves into the folder (or drops when the data
  // selection leaves it out): read it first.
  std::string events_text;
  if (draw && !aggregate) events_text = read_file(run->events_file);
  if (strace)  // from the log read for the pictures when it was
    files["strace.log"] = strace_log_from_events(events_text.empty() ? read_file(run->events_file) : events_text, scenario);
  if (!scenario.vars.empty()) {
    // Which variant of the sweep this is (null when the values are not one of the candidates).
    const auto index = variant_index(scenario);
    nlohmann::json variant = {{"vars", scenario.assigned},
                              {"variant", index ? nlohmann::json(*index) : nlohmann::json(nullptr)}};
    files["variant.json"] = variant.dump(2) + "\n";
  }
  for (const auto& [name, text] : attached) {  // --attach: the caller's files (checked by cmd_run)
    if (files.count(name))
      throw InternalError("--attach " + name + ": a name the run writes passed the check");
    files[name] = text;
  }
  // The data first, durable and in place: a picture that is slow, fails or is interrupted never costs
  // the run its data.
  Progress::get().begin("write");
  write_outputs(*run, out, selected_data, files, notes);
  parents.keep();
  Progress::get().end();
  const auto wanted = [&](const char* name) {
    return selected_data.empty() || std::find(selected_data.begin(), selected_data.end(), name) != selected_data.end();
  };
  try {
    if (aggregate) draw_aggregate(*run, out, std::move(early), selected_pictures);
    else if (draw) draw_pictures(*run, out, std::move(events_text), selected_pictures, budget_s, notes,
                                 wanted("summary"));
    if (wanted("metrics")) write_file_atomic(std::filesystem::path(out) / "metrics.json", metrics_json(*run));
  } catch (const WriteError& e) {
    // Exit 3 as any write error; the data files were complete and in place before: they stay, the
    // pictures not written are not listed, and the message says so.
    set_interrupt_note("", "", "");
    forget_missing_files(out);
    throw WriteError(e.path(), e.reason() + " (the run's data files are complete in " + out +
                                   "/; the files not written are not listed there: `dirsched render " + out +
                                   "` draws the pictures when there is room)");
  }
  if (!quiet) {
    std::cout << scenario.name << ": " << outcome_line(*run) << ", makespan "
              << human_number(run->result.makespan_s) << " s, " << run->recorder->record_count() << " tasks, "
              << run->result.dispatches << " dispatches\n"
              << "outputs in " << out << "/" << open_hint(draw, aggregate, selected_pictures) << "\n";
    if (!run->result.error.empty()) std::cout << "run error: " << run->result.error << "\n";
    for (const Stuck& st : run->result.stuck) std::cout << "stuck: " << st.task << " (" << st.reason << ")\n";
  }
  if (run->result.violation) {
    std::cerr << "dirsched: " << run->result.error << "\nqueues at that event:\n"
              << run->result.violation->dump;
    return 1;
  }
  return verdict ? verdict(*run) : 0;
}

}  // namespace dirsched::cli
