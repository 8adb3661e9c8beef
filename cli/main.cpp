// dirsched: the command line over the scenario loader, the SimGrid driver and the outputs.
//
// Exit status (docs/exit-status.md has every one per command): 0 success; 1 a `check` whose
// expectations fall short; 2 bad input (a malformed scenario, a missing file, a bad option or one out
// of its range, a limit passed, a platform or --cfg SimGrid would abort on, a deadlock, an output path
// the folder rule refuses), reported as one line on stderr, with nothing written; 3 an output could
// not be written (nothing claimed, nothing left); 128 + N stopped by signal N (130 SIGINT, 143
// SIGTERM, 129 SIGHUP), temporaries removed; 134 an internal error (a bug): a message, then abort
// (error_kind.hpp has the mapping from exceptions).
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>
#include <optional>
#include <set>
#include <sstream>

#include "dirsched/error.hpp"
#include "dirsched/escape.hpp"
#include "dirsched/explore.hpp"
#include "dirsched/generate.hpp"
#include "dirsched/json_reader.hpp"
#include "dirsched/output_folder.hpp"
#include "dirsched/probe.hpp"
#include "dirsched/progress.hpp"
#include "dirsched/scenario.hpp"
#include "dirsched/sim.hpp"
#include "dirsched/fidelity.hpp"
#include "dirsched/strace_import.hpp"
#include "dirsched/strace_writer.hpp"
#include "dirsched/sweep.hpp"
#include "dirsched/threads_engine.hpp"
#include "dirsched/viz.hpp"
#include "error_kind.hpp"
#include "bisect.hpp"
#include "dirsched/eventsim.hpp"
#include "evaluate.hpp"
#include "options.hpp"

namespace {

using namespace dirsched;

bool stdout_written();

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::vector<std::string> simgrid_args(const std::vector<std::string>& cfg) {
  std::vector<std::string> out;
  for (const std::string& c : cfg) out.push_back("--cfg=" + c);
  return out;
}

std::string read_file(const std::filesystem::path& p) { return read_run_file(p.string()); }  // never blocks on a FIFO

// `run --engine threads [--time-scale X]`: the scenario on real threads (runtime/) instead of SimGrid.
struct ThreadsEngine {
  bool on = false;
  double time_scale = 1;
  bool events = false;  // --engine event: the event engine (eventsim/), not SimGrid
};

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

constexpr const char* kPicturesInterrupted = "pictures-interrupted.txt";

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
  } catch (const WriteError& e) {
    set_interrupt_note("", "", "");
    // Exit 3 as any write error, but the data files were in place before: say so.
    throw WriteError(e.path(), e.reason() + " (the run's data files are written in " + out + "/)");
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

// Whether `name` is text a run folder can hold and a marker can list: valid UTF-8, no control character.
bool plain_text_name(const std::string& name) {
  if (name.empty() || !first_control_character(name).empty()) return false;
  try {
    (void)nlohmann::json(name).dump();  // throws on invalid UTF-8
  } catch (const nlohmann::json::exception&) {
    return false;
  }
  return true;
}

// `s` as a JSON string, quotes included, control characters escaped and invalid UTF-8 replaced: a value
// that is refused for its bytes is shown on one line, readably.
std::string quoted(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A file a run writes (now, or its pictures later): never a name --attach may take.
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

constexpr std::uintmax_t kMaxAttachBytes = std::uintmax_t{64} << 20;  // 64 MiB: a file kept with a run

// Replays one scenario into `out`: simulate (or run on threads), draw, write (everything moved in
// place at the end). Returns 1 when an invariant broke, else 0. `out` is checked before anything runs
// (OutputRefused).
int run_to_folder(const Scenario& scenario, RunOptions options, const std::string& out_arg,
                  std::vector<std::string> selected_data, const std::vector<std::string>& selected_pictures,
                  bool quiet, double budget_s, const ThreadsEngine& threads = {},
                  const std::map<std::string, std::string>& attached = {}) {
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
  if (aggregate) draw_aggregate(*run, out, std::move(early), selected_pictures);
  else if (draw) draw_pictures(*run, out, std::move(events_text), selected_pictures, budget_s, notes,
                               wanted("summary"));
  if (wanted("metrics")) write_file_atomic(std::filesystem::path(out) / "metrics.json", metrics_json(*run));
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
  return 0;
}

// --outputs names at least one output: "" or "," would read as not given, that is every output.
const CLI::Validator outputs_list(
    [](std::string& text) -> std::string {
      return split_list(text).empty() ? "'" + text + "' names no output (leave --outputs out for all of them)" : "";
    },
    "", "list of outputs");

// Splits --outputs into data files and pictures; false (after a message) for an unknown name.
bool parse_outputs(const std::string& outputs, std::vector<std::string>& data_out,
                   std::vector<std::string>& pictures_out) {
  static const std::set<std::string> data = {"events", "summary", "tasks", "metrics", "strace"};
  static const std::set<std::string> pictures = {"dag", "timeline", "trace", "report", "paje"};
  for (const std::string& o : split_list(outputs)) {
    if (data.count(o))
      data_out.push_back(o);
    else if (pictures.count(o))
      pictures_out.push_back(o);
    else {
      std::cerr << "dirsched: --outputs: unknown output '" << o
                << "' (events, summary, tasks, metrics, strace, dag, timeline, trace, report, paje)\n";
      return false;
    }
  }
  return true;
}

// A plan is one command per line (Slurm arrays and GNU parallel read it so): a path with a line break
// would split its commands.
void refuse_line_breaks(const std::string& command, std::initializer_list<std::string> paths) {
  for (const std::string& path : paths)
    if (path.find_first_of("\n\r") != std::string::npos)
      throw BadInput(command + ": the path " + nlohmann::json(path).dump() +
                     " has a line break: a plan's commands are one line each; move or rename it");
}

// NAME=JSON pairs from --var.
VarAssignment parse_vars(const std::vector<std::string>& vars) {
  VarAssignment out;
  for (const std::string& v : vars) {
    const auto eq = v.find('=');
    if (eq == std::string::npos || eq == 0) throw BadInput("--var " + v + ": expected NAME=VALUE");
    if (out.count(v.substr(0, eq)))  // the last would win, the others never checked
      throw BadInput("--var " + v.substr(0, eq) + ": given twice; give each variable once");
    try {  // the loader's strict reader: a 100,000-deep value must not reach a recursive dump
      out[v.substr(0, eq)] = parse_json_text(v.substr(eq + 1), "--var " + v.substr(0, eq));
    } catch (const ScenarioError& e) {
      throw BadInput(std::string(e.what()) + " (quote strings: name='\"x\"')");
    }
  }
  return out;
}

// --var-any: a --var value need not be one of the declared candidates.
bool g_var_any = false;

// load_scenario for run, check and explore: a --var value outside the variable's declared candidates
// is refused (a typo would run a variant no sweep has) unless --var-any.
Scenario load_chosen(const std::string& file, const VarAssignment& assignment, const PolicyChoice& choice) {
  Scenario s = load_scenario(file, assignment, TraceRead::kStreamed, choice);
  if (g_var_any) return s;
  for (const auto& [name, value] : assignment) {
    const std::vector<nlohmann::json>& c = s.vars.at(name);  // the loader refused undeclared names
    if (std::find(c.begin(), c.end(), value) != c.end()) continue;
    std::string list;
    for (std::size_t i = 0; i < c.size() && i < 8; ++i) list += (i ? ", " : "") + c[i].dump();
    if (c.size() > 8) list += ", ... (" + std::to_string(c.size()) + " in all)";
    throw ScenarioError(file, "vars." + name,
                        "--var " + name + "=" + value.dump() + " is not one of the declared candidates (" + list +
                            "); --var-any runs it anyway");
  }
  return s;
}

// The largest --max-variants and --sample: a sweep runs each variant in a process of its own.
constexpr std::size_t kMaxMaxVariants = 1000000;

// The range of each `gen` option (whole numbers, or real numbers for the times and the fraction), and
// which families read it (docs/reference-cli.md's table of families).
struct GenRange {
  const char* option;
  bool whole;
  double min, max;
  const char* help;
};
constexpr std::uint64_t kMaxGenTasks = 10000000;  // tasks a generated scenario may hold
constexpr double kMaxGenSeconds = 4294967296.0;    // 2^32 s, the loader's bound of every simulated time
constexpr GenRange kGenRanges[] = {
    {"tasks", true, 1, kMaxGenTasks, "stream, random: tasks (default 1000, random 100)"},
    {"workers", true, 1, 65536, "every family: NEXT_LEVEL chips (default 8)"},
    {"rounds", true, 1, kMaxGenTasks, "fork-join: rounds, chained (default 10)"},
    {"width", true, 1, kMaxGenTasks, "fork-join: parallel readers per round (default: workers)"},
    {"chains", true, 1, kMaxGenTasks, "chains: chains (default: workers)"},
    {"length", true, 1, kMaxGenTasks, "chains: links per chain (default 10)"},
    {"groups", true, 1, kMaxGenTasks, "tp-groups: groups (default 10)"},
    {"size", true, 1, 65536, "tp-groups: members per group, on consecutive chips (default 2)"},
    {"singles-per-group", true, 0, kMaxGenTasks, "tp-groups: random singles after each group (default 2)"},
    {"edges", true, 0, kMaxGenEdges, "random: dependencies per task (default 2)"},
    {"duration-s", false, 0, kMaxGenSeconds, "every family: seconds each member runs (default 0.001)"},
    {"group-fraction", false, 0, 1, "random: share of tasks that are groups (default 0.1)"},
    {"arrival-rate", false, 1e-9, 1e9, "every family: seeded Poisson arrivals, submits per second"},
    {"interval", false, 0, kMaxGenSeconds, "every family: seconds between submits"}};

// Why the family's options would generate more than kMaxGenTasks tasks ("" when they do not).
std::string gen_too_large(const std::string& family, const std::map<std::string, double>& p) {
  auto get = [&p](const char* key, double fallback) {
    auto it = p.find(key);
    return it == p.end() ? fallback : it->second;
  };
  const double workers = get("workers", 8);
  double tasks = 0;  // every factor is a whole number at most 1e7: the product is exact below 2^53
  std::string how;
  if (family == "fork-join") {
    const double rounds = get("rounds", 10), width = get("width", workers);
    tasks = rounds * (width + 2), how = "rounds x (width + 2)";
  } else if (family == "chains") {
    tasks = get("chains", workers) * get("length", 10), how = "chains x length";
  } else if (family == "tp-groups") {
    tasks = get("groups", 10) * (1 + get("singles_per_group", 2)), how = "groups x (1 + singles-per-group)";
  } else if (family == "random" && get("tasks", 100) * get("edges", 2) > 10.0 * kMaxGenTasks) {
    char b[64];
    std::snprintf(b, sizeof b, "%.0f", get("tasks", 100) * get("edges", 2));
    return std::string("tasks x edges = ") + b + " edges, more than the limit of " + std::to_string(10 * kMaxGenTasks);
  }
  if (tasks <= static_cast<double>(kMaxGenTasks)) return "";
  char b[64];
  std::snprintf(b, sizeof b, "%.0f", tasks);
  return how + " = " + b + " tasks, more than the limit of " + std::to_string(kMaxGenTasks);
}

// `--policy NAME` given on the command line: checked before anything runs, applied after loading.
// `--policy NAME` and `--switch NAME=on|off` (repeatable) given on the command line: the names are
// checked before anything runs; the loader applies them over the file (scenario.hpp PolicyChoice).
struct PolicyFlag {
  std::optional<std::string> policy;
  std::vector<std::string> switches;
  PolicyChoice choice() const { return parse_policy_choice(policy, switches); }
  // The same flags for a child command line (sweep's plan and cluster scripts).
  std::string args() const;
};

int cmd_run(const std::string& file, const std::string& out, std::optional<std::uint64_t> seed,
            const std::string& outputs, const std::vector<std::string>& cfg, bool check_invariants,
            const std::vector<std::string>& vars, const PolicyFlag& policy, const ThreadsEngine& threads,
            double budget_s, const std::vector<std::string>& attach) {
  std::vector<std::string> data, pictures;
  if (!parse_outputs(outputs, data, pictures)) return 2;
  // --attach NAME=FILE: FILE's bytes go into the run folder as NAME, written and listed with the run's own
  // files (what a front end keeps beside a run: the Python sweep's scenario.json and variant.json), so
  // that no other program edits a run folder. Read now: a bad one refuses the run before it starts.
  std::map<std::string, std::string> attach_paths;  // NAME -> FILE, read once every name has passed
  for (const std::string& one : attach) {
    const auto eq = one.find('=');
    const std::string name = eq == std::string::npos ? std::string() : one.substr(0, eq);
    if (!plain_text_name(name) || name == "." || name == ".." || name.find('/') != std::string::npos ||
        name[0] == '.' || name.find(".tmp-dirsched-") != std::string::npos || name.size() > 200 ||
        eq + 1 >= one.size())
      throw BadInput("--attach " + quoted(one) +
                     ": expected NAME=FILE, NAME a plain file name (UTF-8 without control characters, "
                     "no '/', not starting with '.', at most 200 bytes)");
    if (attach_paths.count(name)) throw BadInput("--attach " + name + ": given twice");
    if (run_writes(name)) throw BadInput("--attach " + name + ": the run writes a file of that name itself");
    attach_paths[name] = one.substr(eq + 1);
  }
  const VarAssignment assignment = parse_vars(vars);
  Progress::get().begin("load");
  Scenario scenario = load_chosen(file, assignment, policy.choice());
  if (!scenario.vars.empty() && attach_paths.count("variant.json"))
    throw BadInput(
        "--attach variant.json: the run writes a file of that name itself (the scenario has vars)");
  std::map<std::string, std::string> attached;  // NAME -> the file's bytes
  for (const auto& [name, path] : attach_paths) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) > kMaxAttachBytes)
      throw BadInput("--attach " + name + "=" + path + ": larger than " +
                     std::to_string(kMaxAttachBytes >> 20) + " MiB, the limit of a file kept with a run");
    try {
      attached[name] = read_run_file(path);
    } catch (const std::exception& e) {
      throw BadInput("--attach " + name + ": " + e.what());
    }
  }
  if (threads.on) {
    if (!cfg.empty()) throw BadInput("--cfg configures SimGrid: it does not apply to --engine threads");
    check_threads_engine(scenario);  // before anything is written
  }
  if (threads.events) {
    if (!cfg.empty()) throw BadInput("--cfg configures SimGrid: it does not apply to --engine event");
    if (const std::optional<std::string> why = event_engine_refusal(scenario)) {  // before anything is written
      const auto colon = why->find(": ");
      throw ScenarioError(scenario.file, why->substr(0, colon),
                          why->substr(colon + 2) + " needs SimGrid: the event engine cannot run it (use --engine sim)");
    }
  }
  RunOptions options;
  options.seed = seed;
  options.simgrid_args = simgrid_args(cfg);
  options.progress = Progress::get().shown();
  options.check_invariants = check_invariants;
  Progress::get().end();
  return run_to_folder(scenario, options, out, data, pictures, false, budget_s, threads, attached);
}

std::string g6_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

std::string shell_quote(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

std::string PolicyFlag::args() const {
  std::string out;
  if (policy) out += " --policy " + shell_quote(*policy);
  for (const std::string& sw : switches) out += " --switch " + shell_quote(sw);
  return out;
}

// The largest --lines-per-task, and the array ids a default Slurm takes (MaxArraySize 1001: 0..1000).
constexpr std::size_t kMaxLinesPerTask = 1000000;
constexpr std::size_t kSlurmDefaultMaxArrayId = 1000;

// Whether the seed changes a run of SCENARIO: a jitter, or durations drawn from an empirical list.
// Without either every seed gives the same run, and replications are pointless.
bool seed_matters(const Scenario& scenario) {
  for (const CallableSpec& c : scenario.callables)
    if ((c.cost.jitter.kind != Jitter::Kind::kNone && c.cost.jitter.rel > 0) || c.cost.empirical.size() > 1) return true;
  return false;
}

// Replicates 1..N-1 of every variant (replicate 0 is its run folder), in the evaluation pool (summary
// metrics only): replicate r runs with seed + r, the same seeds for every variant (common random
// numbers). Writes DIR/replicates.jsonl, which --collect ranks with. LOADED[i] is VARIANTS[i]'s scenario;
// all share one seed (the callers refuse variants of different seeds).
void write_replicates(const std::string& dir, const std::vector<Scenario>& loaded, const std::vector<Variant>& variants,
                      std::size_t replicates, unsigned jobs, const std::vector<std::string>& sim_args) {
  std::vector<Evaluation> evals;
  for (std::size_t i = 0; i < variants.size(); ++i)
    for (std::size_t r = 1; r < replicates; ++r) evals.push_back({&loaded[i], loaded[i].seed + r, variants[i]});
  if (Progress::get().shown()) std::fprintf(stderr, "[dirsched] sweep: %zu more replicate runs\n", evals.size());
  const std::vector<SweepRow> rows = evaluate_all(evals, jobs, sim_args);
  std::vector<std::uint64_t> seeds;
  for (std::size_t r = 0; r < replicates; ++r) seeds.push_back(loaded.front().seed + r);
  std::string text = nlohmann::json{{"dirsched", "replicates"}, {"replicates", replicates}, {"seeds", seeds}}.dump() + "\n";
  for (std::size_t k = 0; k < evals.size(); ++k)
    text += nlohmann::json{{"variant", evals[k].variant.index},
                           {"replicate", k % (replicates - 1) + 1},
                           {"seed", evals[k].seed},
                           {"metrics", sweep_row_json(rows[k])}}
                .dump() +
            "\n";
  write_file_atomic(std::filesystem::path(dir) / "replicates.jsonl", text);
}

int cmd_sweep(const std::string& file, const std::string& out, unsigned jobs,
              std::optional<std::size_t> sample, std::uint64_t seed, std::size_t max_variants, bool plan,
              const std::vector<std::string>& cfg, const PolicyFlag& policy, const std::string& outputs,
              double budget_s, std::optional<std::size_t> replicates_flag, std::size_t lines_per_task,
              const std::string& collect_flags) {
  namespace fs = std::filesystem;
  // --outputs: what each variant writes. A plan's default is what --collect reads (summary.json; every
  // variant writes variant.json); a local sweep's default is every output. Either way a sweep ranks its
  // variants by their summary.json: it must be one of them.
  std::vector<std::string> data, pictures;
  if (!parse_outputs(outputs, data, pictures)) return 2;
  if (!outputs.empty() && std::find(data.begin(), data.end(), "summary") == data.end()) {
    std::cerr << "dirsched sweep: --outputs " << outputs
              << ": a sweep ranks its variants by their summary.json (sweep --collect reads it); add summary\n";
    return 2;
  }
  Progress::get().begin("load");
  const Scenario base = load_scenario(file, {}, TraceRead::kStreamed, policy.choice());
  if (base.vars.empty()) {
    std::cerr << "dirsched: " << file << ": vars: the scenario has no sweep variables\n";
    return 2;
  }
  const std::vector<Variant> variants =
      sample ? sample_variants(base, *sample, seed, max_variants) : enumerate_variants(base, max_variants);
  // Validate every variant before running any: a value may make the file malformed (a "$X" typo).
  // A jitter or an empirical duration (in any variant) is what makes a seed matter: without one,
  // replicates are the same run.
  bool jitter = false, seed_swept = false;
  for (const Variant& v : variants) {
    const Scenario s = load_scenario(file, v.values, TraceRead::kStreamed, policy.choice());
    jitter |= seed_matters(s);
    seed_swept |= s.seed != base.seed;
  }
  Progress::get().end();
  std::size_t replicates = replicates_flag.value_or(base.replicates);
  if (replicates > 1 && !jitter) {
    std::cerr << "dirsched: " << file << ": no callable has a jitter or an empirical duration: the scenario is deterministic and needs no "
              << "replications (every seed gives the same run); running 1 replicate\n";
    replicates = 1;
  }
  if (replicates > 1 && seed_swept) {
    // Replicate r of every variant runs with seed + r, the same seeds for every variant, so that
    // variants are compared on common random numbers (the paired intervals need it).
    std::cerr << "dirsched: " << file << ": seed: the variants have different seeds (a sweep variable in \"seed\"), and "
              << replicates << " replicates run every variant under the same seeds for a paired comparison; "
              << "take the variable out of \"seed\", or give --replicates 1\n";
    return 2;
  }
  if (replicates > 1 && plan) {
    std::cerr << "dirsched: sweep --plan prints one run per variant; a replicated sweep (" << replicates
              << " replicates) runs in one process: drop --plan, or give --replicates 1\n";
    return 2;
  }
  if (plan) refuse_line_breaks("sweep --plan", {fs::absolute(file).string(), fs::absolute(out).string()});
  const std::string dir = check_output_folder(out, FolderKind::kSweep, "--out").string();
  SweepMarker marker{base.name, fs::weakly_canonical(fs::absolute(file)).string(), {}};
  for (const Variant& v : variants) marker.variants.push_back(v.index);
  // Claims the folder (its marker lists the variants --collect expects) and drops an earlier
  // replicated sweep's replicates.jsonl: this sweep writes its own, or none (a plan's --collect must
  // not mix the old replicates with the new variant folders).
  const auto claim = [&] {
    prepare_sweep_folder(dir, marker);
    std::error_code ec;
    fs::remove(fs::path(dir) / "replicates.jsonl", ec);
  };
  if (plan) {
    check_sweep_folder(dir, marker);  // a plan is printed only for a folder the claim will take
    const std::string self = fs::canonical("/proc/self/exe").string();
    SweepPlan lines;
    for (const Variant& v : variants) {
      std::string cmd = self + " run " + shell_quote(fs::absolute(file).string()) + " --out " +
                        shell_quote((fs::absolute(out) / variant_dir(v)).string()) + " --outputs " +
                        shell_quote(outputs.empty() ? "summary" : outputs);
      for (const auto& [name, value] : v.values) cmd += " --var " + shell_quote(name + "=" + value.dump());
      for (const std::string& c : cfg) cmd += " --cfg=" + shell_quote(c);
      cmd += policy.args();
      if (budget_s != viz::kDefaultPictureBudget) cmd += " --picture-budget " + nlohmann::json(budget_s).dump();
      lines.variants.push_back(v.index);
      lines.lines.push_back(cmd);
    }
    // The plan reaches stdout before the folder is claimed: a plan that could not be printed (a full
    // disk, a closed pipe) leaves the folder as it was. The claim's refusals were checked above; what is
    // left to fail after the print is a write error (exit 3).
    for (const std::string& line : lines.lines) std::cout << line << "\n";
    if (!stdout_written()) return kExitCannotWrite;  // main() says so (stdout stays in error)
    claim();
    write_sweep_plan(dir, lines);  // what `--collect DIR --missing` prints from
    const std::size_t tasks = (variants.size() + lines_per_task - 1) / lines_per_task;
    std::cerr << variants.size() << " commands; afterwards: " << self << " sweep --collect " << shell_quote(out)
              << collect_flags << "\n"
              << "on Slurm (docs/howto-run-on-a-cluster.md), with this plan saved as PLAN: sbatch --array=1-" << tasks
              << " scripts/slurm-array.sh PLAN " << lines_per_task << " (" << lines_per_task
              << (lines_per_task == 1 ? " line" : " lines") << " per array task)\n";
    if (tasks > kSlurmDefaultMaxArrayId)
      std::cerr << "dirsched: warning: " << tasks << " array tasks: a default Slurm (MaxArraySize 1001) takes ids up to "
                << kSlurmDefaultMaxArrayId << "; give --lines-per-task "
                << (variants.size() + kSlurmDefaultMaxArrayId - 1) / kSlurmDefaultMaxArrayId << " or more\n";
    return 0;
  }
  claim();
  std::size_t running = 0, failed = 0, unwritable = 0, next = 0, finished = 0;
  Progress::get().begin("sweep", static_cast<double>(variants.size()), "variants");
  while (finished < variants.size()) {
    while (running < std::max(1u, jobs) && next < variants.size()) {
      const Variant& v = variants[next++];
      std::fflush(stdout);
      std::fflush(stderr);
      const pid_t pid = fork_tracked();
      if (pid < 0) throw BadInput(std::string("cannot start a variant: ") + std::strerror(errno));
      if (pid == 0) {
        try {
          Progress::get().set_shown(false);  // the sweep's own line is the one shown
          Progress::get().reset();
          RunOptions options;
          options.simgrid_args = simgrid_args(cfg);
          _exit(run_to_folder(load_scenario(file, v.values, TraceRead::kStreamed, policy.choice()), options,
                              (fs::path(dir) / variant_dir(v)).string(), data, pictures, true, budget_s));
        } catch (...) {
          _exit(cli::report_current_exception(variant_dir(v) + ": "));  // aborts on an internal error
        }
      }
      ++running;
    }
    int status = 0;
    const pid_t done = wait(&status);
    if (done > 0) child_finished(done);
    --running;
    ++finished;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    if (WIFEXITED(status) && WEXITSTATUS(status) == kExitCannotWrite) ++unwritable;
    Progress::get().update(static_cast<double>(finished));
  }
  Progress::get().end();
  if (failed) {
    std::cerr << "dirsched: " << failed << " variant(s) failed to run"
              << (unwritable ? " (" + std::to_string(unwritable) + " could not write their outputs)" : "") << "\n";
    return unwritable ? kExitCannotWrite : 1;
  }
  if (replicates > 1) {
    std::vector<Scenario> loaded;
    loaded.reserve(variants.size());
    for (const Variant& v : variants) loaded.push_back(load_scenario(file, v.values, TraceRead::kStreamed, policy.choice()));
    write_replicates(dir, loaded, variants, replicates, jobs, simgrid_args(cfg));
  }
  return 0;
}

// How a sweep ranks: the objective (after clean) and the two metrics of the Pareto view.
struct RankChoice {
  std::vector<std::size_t> objective = default_objective();
  std::size_t pareto_a = metric::kMakespan, pareto_b = metric::kGroupWaitMax;
  bool pareto_given = false;
};

// DIR/replicates.jsonl (a replicated sweep's replicates 1..N-1; replicate 0 is the variant folder):
// every variant's rows in replicate order, and the seeds. Throws BadInput naming the file
// and line.
std::vector<std::vector<SweepRow>> read_replicates(const std::string& path, const std::vector<SweepRow>& first,
                                                   std::vector<std::uint64_t>& seeds) {
  if (std::error_code ec; std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw BadInput(path + ": not a regular file (a FIFO, a device, a socket or a folder)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadInput("cannot read " + path);
  std::map<std::size_t, std::size_t> at;
  std::vector<std::vector<SweepRow>> out;
  for (const SweepRow& r : first) at[r.variant.index] = out.size(), out.push_back({r});
  std::string line;
  std::size_t n = 0, replicates = 0;
  while (std::getline(in, line)) {
    ++n;
    const std::string where = path + " line " + std::to_string(n);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
      if (n == 1) {
        replicates = j.at("replicates").get<std::size_t>();
        seeds = j.at("seeds").get<std::vector<std::uint64_t>>();
        if (replicates < 2 || seeds.size() != replicates) throw BadInput("replicates and seeds disagree");
        continue;
      }
      const std::size_t v = j.at("variant").get<std::size_t>(), r = j.at("replicate").get<std::size_t>();
      auto it = at.find(v);
      if (it == at.end()) throw BadInput("variant " + std::to_string(v) + " is not one of the sweep's");
      if (r != out[it->second].size()) throw BadInput("replicate " + std::to_string(r) + " out of order");
      out[it->second].push_back(sweep_row_from_json(out[it->second].front().variant, j.at("metrics")));
    } catch (const std::exception& e) {
      throw BadInput(where + ": " + e.what());
    }
  }
  for (const auto& rows : out)
    if (rows.size() != replicates)
      throw BadInput(path + ": variant " + std::to_string(rows.front().variant.index) + " has " +
                     std::to_string(rows.size()) + " of " + std::to_string(replicates) + " replicates");
  return out;
}

// `sweep --prepare DIR --name N --origin O --variants K`: DIR becomes the sweep folder of N (from O) with
// variants 0..K-1, as `sweep` makes it before it runs anything (prepare_sweep_folder: another
// scenario's folder refused, the stale variant folders removed when they hold nothing of the user's);
// the front end then runs each variant into DIR/variant-NNNN and calls `--collect`.
int cmd_prepare(const std::string& out, const std::string& name, const std::string& origin, std::size_t count) {
  namespace fs = std::filesystem;
  for (const auto& [flag, value] : {std::pair{"--name", &name}, {"--origin", &origin}})
    if (!plain_text_name(*value))
      throw BadInput(std::string("sweep --prepare ") + flag + " " + quoted(*value) +
                     ": expected a non-empty text (UTF-8 without control characters)");
  const std::string dir = check_output_folder(out, FolderKind::kSweep, "--prepare").string();
  SweepMarker marker{name, origin, {}};
  for (std::size_t i = 0; i < count; ++i) marker.variants.push_back(i);
  prepare_sweep_folder(dir, marker);
  std::error_code ec;  // an earlier replicated CLI sweep's replicates: --collect would mix them in
  fs::remove(fs::path(dir) / "replicates.jsonl", ec);
  if (ec) throw_write_error(fs::path(dir) / "replicates.jsonl", ec.value());
  return 0;
}

// `sweep --replicate DIR --replicates N`: for a front end that ran every variant of sweep folder DIR
// itself (Python's Testbed.sweep, each variant folder keeping its scenario.json): replicates 1..N-1 of
// each, as a replicated `sweep` runs them (write_replicates), so that --collect ranks over N paired
// seeds. Every variant must be complete and all must share one seed; a deterministic set of variants
// needs no replicates (said, and none written).
int cmd_replicate(const std::string& dir_arg, std::size_t replicates, unsigned jobs, const std::vector<std::string>& cfg,
                  const PolicyFlag& policy) {
  namespace fs = std::filesystem;
  const std::string dir = fs::path(dir_arg).lexically_normal().string();
  if (std::error_code ec; !fs::is_directory(dir, ec)) {
    std::cerr << "dirsched: " << dir << ": " << (fs::exists(dir, ec) ? "not a folder" : "no such folder")
              << ": --replicate takes the sweep folder the variants ran into\n";
    return 2;
  }
  if (std::error_code ec; !fs::is_regular_file(fs::path(dir) / ".dirsched-sweep", ec)) {
    std::cerr << "dirsched: " << dir << ": not a dirsched sweep folder (no .dirsched-sweep in it; `sweep --prepare` "
              << "makes one)\n";
    return 2;
  }
  const SweepProgress progress = sweep_progress(dir);  // the marker's variants, complete or missing
  if (progress.complete.empty() && progress.missing.empty()) {
    std::cerr << "dirsched: " << dir << ": the sweep folder lists no variants\n";
    return 2;
  }
  if (!progress.missing.empty()) {
    std::cerr << "dirsched: " << dir << ": " << variant_list_text(progress.missing)
              << " not complete: --replicate adds replicates to variants already run\n";
    return 2;
  }
  std::vector<Variant> variants;
  std::vector<Scenario> loaded;
  bool jitter = false;
  for (std::size_t index : progress.complete) {
    Variant v{index, {}};
    const fs::path file = fs::path(dir) / variant_dir(v) / "scenario.json";
    if (std::error_code ec; !fs::is_regular_file(file, ec)) {
      std::cerr << "dirsched: " << file.string() << ": no such file: --replicate runs the scenario each variant "
                << "folder keeps (Testbed.sweep attaches it); a sweep of a file replicates with --replicates\n";
      return 2;
    }
    loaded.push_back(load_scenario(file.string(), {}, TraceRead::kStreamed, policy.choice()));
    jitter |= seed_matters(loaded.back());
    if (loaded.back().seed != loaded.front().seed) {
      std::cerr << "dirsched: " << file.string() << ": seed: " << loaded.back().seed << ", and "
                << variant_dir(variants.front()) << " has " << loaded.front().seed
                << ": replicates run every variant under the same seeds for a paired comparison\n";
      return 2;
    }
    variants.push_back(std::move(v));
  }
  if (replicates > 1 && jitter) {
    // Replaces an earlier --replicate's file atomically: a failed evaluation leaves it as it was.
    write_replicates(dir, loaded, variants, replicates, jobs, simgrid_args(cfg));
    return 0;
  }
  if (replicates > 1)
    std::cerr << "dirsched: " << dir << ": no callable has a jitter or an empirical duration: the variants are "
              << "deterministic and need no replications (every seed gives the same run); 1 replicate\n";
  std::error_code ec;  // an earlier --replicate's: one replicate now, so none
  fs::remove(fs::path(dir) / "replicates.jsonl", ec);
  if (ec) throw_write_error(fs::path(dir) / "replicates.jsonl", ec.value());
  return 0;
}

// `sweep --collect DIR --missing`: the plan lines of the variants not complete yet, in plan order (a
// variant a live process is writing is left out, and said on stderr).
int cmd_missing(const std::string& dir) {
  const SweepPlan plan = read_sweep_plan(dir);
  const SweepProgress progress = sweep_progress(dir);
  std::set<std::size_t> missing(progress.missing.begin(), progress.missing.end()), running;
  for (const auto& [path, pid] : progress.live_temps) {
    const std::string name = std::filesystem::path(path).filename().string();
    for (std::size_t index : missing)
      if (name.rfind(variant_dir({index, {}}) + ".", 0) == 0) running.insert(index);
  }
  std::size_t printed = 0;
  for (std::size_t i = 0; i < plan.variants.size(); ++i)
    if (missing.count(plan.variants[i]) && !running.count(plan.variants[i])) std::cout << plan.lines[i] << "\n", ++printed;
  std::cerr << printed << " of " << plan.variants.size() << " plan lines still to run";
  if (!running.empty())
    std::cerr << "; left out, a dirsched on this machine is running them now: "
              << variant_list_text({running.begin(), running.end()});
  std::cerr << "\n";
  return 0;
}

int cmd_collect(const std::string& dir, const RankChoice& choice = {}) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  const std::vector<SweepRow> rows = collect(dir, &names);
  if (rows.empty()) {
    std::cerr << "dirsched: " << dir << ": no variant-* folders to collect\n";
    return 2;
  }
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  // Every output below is drawn from this one ranking.
  const std::string rep_path = (fs::path(d) / "replicates.jsonl").string();
  std::vector<std::uint64_t> seeds;
  std::vector<std::vector<SweepRow>> per_variant;
  if (fs::exists(rep_path)) {
    per_variant = read_replicates(rep_path, rows, seeds);
  } else {
    for (const SweepRow& r : rows) per_variant.push_back({r});
  }
  const bool replicated = per_variant.front().size() > 1;
  const Ranking ranking = rank_replicated(per_variant, choice.objective, seeds);
  const std::vector<std::size_t> front = pareto_front(ranking, choice.pareto_a, choice.pareto_b);
  // One replicate under the default objective: sweep.csv, sweep.svg and the text as before.
  const bool classic = !replicated && choice.objective == default_objective();
  std::vector<SweepRow> mean_rows;
  for (const RankedVariant& v : ranking.order) mean_rows.push_back(v.mean_row());
  if (replicated)
    write_file_atomic(fs::path(d) / "sweep.csv", replicated_csv(names, ranking));
  else
    write_file_atomic(fs::path(d) / "sweep.csv", sweep_csv(names, rows));
  write_file_atomic(fs::path(d) / "sweep-summary.csv", summary_csv(names, ranking));
  write_file_atomic(fs::path(d) / "ranking.json",
                    ranking_json(names, ranking, &front, choice.pareto_a, choice.pareto_b));
  const std::vector<std::size_t> order = rank(rows);
  write_file_atomic(fs::path(d) / "sweep.svg", classic ? sweep_svg(rows, order) : sweep_svg(ranking));
  write_file_atomic(fs::path(d) / "sweep-pareto.svg", pareto_svg(ranking, choice.pareto_a, choice.pareto_b));
  std::string pictures = "sweep.csv, sweep-summary.csv, ranking.json, sweep.svg, sweep-pareto.svg";
  if (names.size() == 2) {
    write_file_atomic(fs::path(d) / "sweep-heatmap.svg", sweep_heatmap_svg(names, mean_rows, best_variants(ranking)));
    pictures += " and sweep-heatmap.svg";
  } else {
    std::error_code ec;
    fs::remove(fs::path(d) / "sweep-heatmap.svg", ec);  // an earlier sweep's, of two variables
  }
  if (classic) {
    std::cout << ranking_text(rows, order);
    std::size_t first = 0;
    for (const RankedVariant& v : ranking.order) first += v.place == 1;
    if (first > 1) std::cout << first << " variants share first place (every key equal)\n";
  } else {
    std::cout << replicated_ranking_text(ranking);
  }
  if (choice.pareto_given || replicated) {
    std::cout << "Pareto front (" << metric_def(choice.pareto_a).name << ", " << metric_def(choice.pareto_b).name
              << ", means, smaller is better):";
    for (std::size_t i : front) {
      const RankedVariant& v = ranking.order[i];
      std::cout << " variant " << v.variant.index << " (" << g6_text(v.stats[choice.pareto_a].mean) << ", "
                << g6_text(v.stats[choice.pareto_b].mean) << ")";
    }
    std::cout << "\n";
  }
  std::cout << pictures << " in " << d << "/\n";
  // A sweep whose every variant lost tasks has no answer to give: say so in the exit status too.
  if (!ranking.order.front().clean) {
    std::cerr << "dirsched: no variant ran clean (every one has REJECTED, FAILED, POISONED or STUCK tasks)\n";
    return 1;
  }
  return 0;
}

// A copy of `j` with every "$NAME" of a variable in `values` replaced by its value.
nlohmann::json with_values(nlohmann::json j, const VarAssignment& values) {
  if (j.is_string()) {
    const std::string& t = j.get_ref<const std::string&>();
    if (t.size() > 1 && t[0] == '$' && values.count(t.substr(1))) return values.at(t.substr(1));
    return j;
  }
  if (j.is_array() || j.is_object())
    for (auto& x : j) x = with_values(x, values);
  return j;
}

// `dirsched optimize`: the best variant of a scenario's vars under the objective (see search_space).
// optimize --plan-batches DIR: the evaluations the search needs next, none of which has run yet.
struct PendingBatch {
  std::vector<std::string> lines;  // one self-contained `dirsched run` line each
};
constexpr int kExitBatchPending = 6;  // optimize --plan-batches: a batch of runs is to be run first
constexpr const char* kBatchesMarker = ".dirsched-optimize-batches";

// The work folder of optimize --plan-batches: new (made here), or one an earlier call made for the same
// scenario document, --policy/--switch and --cfg (its marker says); anything else is refused, exit 2.
void claim_batches_folder(const std::filesystem::path& dir, const std::string& key) {
  namespace fs = std::filesystem;
  const fs::path marker = dir / kBatchesMarker;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_empty(dir, ec)) {
    if (!fs::exists(marker))
      throw BadInput("--plan-batches " + dir.string() +
                     ": the folder holds files dirsched did not write (no " + kBatchesMarker + ")");
    const nlohmann::json m = read_json_file(marker.string());
    if (!m.is_object() || m.value("key", std::string()) != key)
      throw BadInput("--plan-batches " + dir.string() +
                     ": its evaluations were run for another scenario document, --policy/--switch or "
                     "--cfg; give a new folder");
    return;
  }
  fs::create_directories(dir);
  write_file_atomic(marker, nlohmann::json({{"dirsched", "optimize-batches"}, {"key", key}}).dump() + "\n");
}

int cmd_optimize(const std::string& file, const std::string& out, std::size_t budget, std::uint64_t seed,
                 unsigned jobs, const std::vector<std::string>& cfg, const PolicyFlag& policy,
                 std::optional<std::size_t> replicates_flag, const RankChoice& choice, const std::string& batches) {
  namespace fs = std::filesystem;
  const nlohmann::json doc = read_json_file(file);
  std::string base_dir = fs::path(file).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  const Scenario base = parse_scenario(doc, file, base_dir, {}, policy.choice());  // parsed once; variants below from the document
  if (base.vars.empty()) {
    std::cerr << "dirsched: " << file << ": vars: the scenario has no sweep variables\n";
    return 2;
  }
  // The folder: new, or one an earlier optimize wrote (its marker); replaced whole at the end.
  const std::string dir = check_output_folder(out, FolderKind::kOptimize, "--out").string();
  std::vector<std::size_t> dims;
  std::vector<std::string> names;
  for (const auto& [name, c] : base.vars) dims.push_back(c.size()), names.push_back(name);
  std::size_t replicates = replicates_flag.value_or(base.replicates);
  const bool jitter = seed_matters(base);
  if (replicates > 1 && !jitter) {
    std::cerr << "dirsched: " << file << ": no callable has a jitter or an empirical duration: deterministic, no replications needed; "
              << "1 run per evaluation\n";
    replicates = 1;
  }
  const std::vector<std::string> sim_args = simgrid_args(cfg);
  // --plan-batches: every evaluation is a run folder DIR/vPOINT-sSEED that a plan line writes; the search
  // replays from the start on every call, reading the runs done, and stops at the first batch with runs
  // still to do (printed as a plan, exit 6). Same search, same seeds: the same result as a local optimize.
  const std::string self = fs::canonical("/proc/self/exe").string();
  fs::path batch_dir;
  if (!batches.empty()) {
    batch_dir = fs::absolute(batches);
    // Two folders: the evaluations stay while optimize.json and best.json replace --out at the end.
    if (fs::absolute(fs::path(out)).lexically_normal() == batch_dir.lexically_normal() ||
        fs::absolute(fs::path(out) / "").lexically_normal() == (batch_dir / "").lexically_normal())
      throw OutputRefused("--plan-batches " + batches + ": the same folder as --out; give two folders");
    if (const auto st = fs::status(batch_dir); fs::exists(st) && !fs::is_directory(st))
      throw OutputRefused("--plan-batches " + batches + ": is a file, not a folder");
    refuse_line_breaks("optimize --plan-batches", {fs::absolute(file).string(), batch_dir.string()});
    std::string key = doc.dump() + "\n" + policy.args();
    for (const std::string& c : cfg) key += "\n" + c;
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a: the marker keeps a digest, not the document
    for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
    claim_batches_folder(batch_dir, std::to_string(h));
  }
  auto evaluate_from_batches = [&](const std::vector<std::size_t>& points, const std::vector<Scenario>& loaded) {
    std::vector<SweepRow> rows;
    PendingBatch pending;
    for (std::size_t i = 0; i < points.size(); ++i)
      for (std::size_t r = 0; r < replicates; ++r) {
        const Variant v = variant_at(base, points[i]);
        const std::uint64_t s = loaded[i].seed + r;
        const fs::path folder = batch_dir / ("v" + std::to_string(points[i]) + "-s" + std::to_string(s));
        if (fs::exists(folder / marker_name(FolderKind::kRun)) && fs::exists(folder / "summary.json")) {
          const std::string path = (folder / "summary.json").string();
          const record::Summary summary = read_summary(path);
          // The folder holds the run its name says: that seed, this variant's values (a run of another
          // variant put there would be scored as this one).
          bool same = summary.seed == s && summary.vars && summary.vars->size() == v.values.size();
          for (std::size_t k = 0; same && k < summary.vars->size(); ++k) {
            const auto& [name, value] = (*summary.vars)[k];
            const auto it = v.values.find(name);
            same = it != v.values.end() && nlohmann::json::parse(value.dump()) == it->second;
          }
          if (!same) {
            const nlohmann::json want = v.values;
            nlohmann::ordered_json got = nlohmann::ordered_json::object();
            if (summary.vars)
              for (const auto& [name, value] : *summary.vars) got[name] = value;
            throw BadInput(path + ": the run of seed " + std::to_string(summary.seed) + " and vars " + got.dump() +
                           ", in the folder of variant " + std::to_string(points[i]) + " seed " + std::to_string(s) +
                           " (vars " + want.dump() + "); remove the folder and call again");
          }
          rows.push_back(row_from_summary(v, summary));
          continue;
        }
        rows.emplace_back();
        std::string cmd = self + " run " + shell_quote(fs::absolute(file).string()) + " --out " +
                          shell_quote(folder.string()) + " --outputs summary --seed " + std::to_string(s) + " --var-any";
        for (const auto& [name, value] : v.values) cmd += " --var " + shell_quote(name + "=" + value.dump());
        for (const std::string& c : cfg) cmd += " --cfg=" + shell_quote(c);
        cmd += policy.args();
        pending.lines.push_back(cmd);
      }
    if (!pending.lines.empty()) throw pending;
    return rows;
  };
  std::map<std::size_t, std::vector<MetricStats>> means;  // point -> per metric (mean only)
  std::map<std::size_t, bool> clean;
  std::size_t runs = 0;
  auto evaluate = [&](const std::vector<std::size_t>& points) {
    std::vector<Scenario> loaded;
    loaded.reserve(points.size());
    std::vector<Evaluation> evals;
    for (std::size_t p : points) {
      const Variant v = variant_at(base, p);
      loaded.push_back(parse_scenario(doc, file, base_dir, v.values, policy.choice()));
    }
    for (std::size_t i = 0; i < points.size(); ++i)
      for (std::size_t r = 0; r < replicates; ++r)
        evals.push_back({&loaded[i], loaded[i].seed + r, variant_at(base, points[i])});
    const std::vector<SweepRow> rows =
        batches.empty() ? evaluate_all(evals, jobs, sim_args) : evaluate_from_batches(points, loaded);
    runs += rows.size();
    std::vector<Score> scores;
    for (std::size_t i = 0; i < points.size(); ++i) {
      std::vector<MetricStats> m(metric::kCount);
      bool ok = true;
      for (std::size_t r = 0; r < replicates; ++r) {
        const SweepRow& row = rows[i * replicates + r];
        ok &= row.clean;
        for (std::size_t k = 0; k < metric::kCount; ++k) m[k].mean += metric_value(row, k) / static_cast<double>(replicates);
      }
      Score s = {ok ? 0.0 : 1.0};
      for (std::size_t k : choice.objective) s.push_back(m[k].mean);
      means[points[i]] = m;
      clean[points[i]] = ok;
      scores.push_back(s);
    }
    return scores;
  };
  const auto started = std::chrono::steady_clock::now();
  // A `choose` variable is searched by swapping one id (or, ordered, exchanging two positions) rather
  // than over all its lists at once, which under a budget smaller than the space is a random sample.
  std::vector<const std::vector<nlohmann::json>*> spaces;
  std::vector<bool> ordered;
  for (const auto& [name, c] : base.vars) {
    spaces.push_back(base.vars_left_out.count(name) ? &c : nullptr);
    ordered.push_back(spaces.back() && holds_arrangements(c));
  }
  const Neighbours swaps = [&](std::size_t k, std::size_t candidate) {
    return spaces[k] ? swap_neighbours(*spaces[k], candidate, ordered[k]) : std::vector<std::size_t>{};
  };
  SearchResult res;
  try {
    res = search_space(dims, budget, seed, evaluate, swaps);
  } catch (const PendingBatch& p) {
    std::string plan;
    for (const std::string& line : p.lines) plan += line + "\n";
    write_file_atomic(batch_dir / "pending.plan", plan);
    std::cout << plan;
    std::cerr << "dirsched optimize: " << p.lines.size() << " run" << (p.lines.size() == 1 ? "" : "s")
              << " of the search's next batch to do (" << runs << " done; the plan is also in "
              << (batch_dir / "pending.plan").string()
              << "): run them on any engine, then run this optimize command again (exit 6 until the search ends)\n";
    return kExitBatchPending;
  }
  if (!batches.empty()) {
    std::error_code ec;
    fs::remove(batch_dir / "pending.plan", ec);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const Variant best = variant_at(base, res.best);
  // Pareto among the evaluated clean points.
  std::vector<std::pair<double, double>> points;
  std::vector<std::size_t> point_of;
  for (const auto& [p, m] : means)
    if (clean[p]) points.emplace_back(m[choice.pareto_a].mean, m[choice.pareto_b].mean), point_of.push_back(p);
  nlohmann::json pareto = nlohmann::json::array();
  for (std::size_t k : non_dominated(points)) {
    const std::size_t p = point_of[k];
    nlohmann::json vals = nlohmann::json::object();
    for (const auto& [name, v] : variant_at(base, p).values) vals[name] = v;
    pareto.push_back({{"variant", p},
                      {"vars", vals},
                      {metric_def(choice.pareto_a).name, points[k].first},
                      {metric_def(choice.pareto_b).name, points[k].second}});
  }
  nlohmann::json objective = nlohmann::json::object();
  for (std::size_t k = 0; k < metric::kCount; ++k) objective[metric_def(k).name] = means[res.best][k].mean;
  objective["clean"] = clean[res.best];
  nlohmann::json order = nlohmann::json::array({"clean"});
  for (std::size_t k : choice.objective) order.push_back(metric_def(k).name);
  nlohmann::json best_vals = nlohmann::json::object();
  for (const auto& [k, v] : best.values) best_vals[k] = v;
  nlohmann::json left_out = nlohmann::json::object();
  for (const auto& [k, n] : base.vars_left_out) left_out[k] = n;
  nlohmann::json convergence = nlohmann::json::array();
  for (const auto& [n, p] : res.improvements)
    convergence.push_back({{"evaluations", n}, {"variant", p}, {"score", res.scores.at(p)}});
  nlohmann::json o = {
      {"best", best_vals},
      {"variant", res.best},
      {"objective", objective},
      {"objective_order", order},
      {"evaluations", res.evaluations},
      {"runs", runs},
      {"replicates", replicates},
      {"space", variant_count_text(base)},
      {"left_out", left_out},
      {"exhaustive", res.exhaustive},
      {"method", res.exhaustive ? "exhaustive: every variant evaluated"
                                : "seeded coordinate descent with random restarts (search seed " + std::to_string(seed) +
                                      "): one variable's candidates at a time (a choose space's: the lists one swap "
                                      "away), best kept, until the budget"},
      {"budget", budget},
      {"pareto", {{"metrics", {metric_def(choice.pareto_a).name, metric_def(choice.pareto_b).name}}, {"variants", pareto}}},
      {"convergence", convergence},
      {"evaluation", batches.empty()
                         ? "each evaluation: the scenario document parsed once, each variant built from it, each run in a "
                           "process forked from this one (SimGrid: one engine per process), summary metrics only, no "
                           "output folder"
                         : "each evaluation: a run folder of --plan-batches " + batch_dir.string() +
                               " (a plan line of a batch, run by any engine), read back from its summary.json"}};
  nlohmann::json best_doc = with_values(doc, best.values);
  best_doc.erase("vars");
  // best.json lives in DIR: a relative platform path is made relative to DIR, so that it still names the
  // same file when best.json is run from there.
  if (best_doc.contains("platform") && best_doc["platform"].is_string()) {
    const fs::path platform(best_doc["platform"].get<std::string>());
    if (platform.is_relative())
      best_doc["platform"] = fs::proximate(fs::absolute(fs::path(base_dir) / platform),
                                           fs::absolute(dir)).lexically_normal().generic_string();
  }
  best_doc["description"] = doc.value("description", std::string()) + (doc.contains("description") ? " " : "") +
                            "(dirsched optimize: best of " + std::to_string(res.evaluations) + " evaluations: " +
                            best_vals.dump() + ")";
  NewParents parents(dir);
  TempPath tmp(temp_path_beside(dir));
  create_temp_dir(tmp);
  write_file(tmp.path() / "optimize.json", o.dump(2) + "\n");
  write_file(tmp.path() / "best.json", best_doc.dump(2) + "\n");
  // The convergence chart: the best primary key over evaluations.
  {
    const double w = 640, h = 320, left = 70, top = 50, pw = 520, ph = 220;
    double ymax = 0;
    for (const auto& c : convergence) ymax = std::max(ymax, c["score"][1].get<double>());
    if (ymax <= 0) ymax = 1;
    const double xmax = std::max<double>(1, static_cast<double>(res.evaluations));
    std::string pts;
    double last_y = 0;
    for (const auto& c : convergence) {
      const double x = left + pw * c["evaluations"].get<double>() / xmax, y = top + ph - ph * c["score"][1].get<double>() / ymax;
      pts += (pts.empty() ? "" : " ") + g6_text(x) + "," + g6_text(last_y == 0 ? y : last_y) + " " + g6_text(x) + "," + g6_text(y);
      last_y = y;
    }
    pts += " " + g6_text(left + pw) + "," + g6_text(last_y);
    std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + g6_text(w) + "\" height=\"" + g6_text(h) +
                      "\" font-family=\"Helvetica,Arial,sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" "
                      "fill=\"#fff\"/>\n<text x=\"10\" y=\"20\" font-size=\"13\" font-weight=\"bold\">Best " +
                      std::string(metric_def(choice.objective.front()).name) + " found over " +
                      std::to_string(res.evaluations) + " evaluations (" + (res.exhaustive ? "exhaustive" : "search") +
                      ")</text>\n<rect x=\"" + g6_text(left) + "\" y=\"" + g6_text(top) + "\" width=\"" + g6_text(pw) +
                      "\" height=\"" + g6_text(ph) + "\" fill=\"none\" stroke=\"#333\"/>\n<text x=\"" + g6_text(left - 6) +
                      "\" y=\"" + g6_text(top + 4) + "\" text-anchor=\"end\">" + g6_text(ymax) + "</text>\n<text x=\"" +
                      g6_text(left - 6) + "\" y=\"" + g6_text(top + ph) + "\" text-anchor=\"end\">0</text>\n<text x=\"" +
                      g6_text(left + pw) + "\" y=\"" + g6_text(top + ph + 16) + "\" text-anchor=\"end\">" +
                      std::to_string(res.evaluations) + " evaluations</text>\n<polyline points=\"" + pts +
                      "\" fill=\"none\" stroke=\"#2e9e5b\" stroke-width=\"2\"/>\n</svg>\n";
    write_file(tmp.path() / "optimize-convergence.svg", svg);
  }
  write_file(tmp.path() / marker_name(FolderKind::kOptimize), optimize_marker_text());
  replace_folder(tmp, dir, FolderKind::kOptimize);
  parents.keep();
  std::cout << (res.exhaustive ? "exhaustive: " : "search (seeded coordinate descent, seed " + std::to_string(seed) + "): ")
            << res.evaluations << " of " << variant_count_text(base) << " variants evaluated (" << runs << " runs, "
            << replicates << " per variant; " << g6_text(static_cast<double>(runs) / std::max(secs, 1e-9))
            << " runs/s)\nbest: variant " << res.best << " (" << best_vals.dump() << "): makespan "
            << g6_text(objective["makespan"].get<double>()) << " s, worst group wait "
            << g6_text(objective["group_wait_max"].get<double>()) << " s" << (clean[res.best] ? "" : " NOT CLEAN") << "\n"
            << "Pareto (" << metric_def(choice.pareto_a).name << ", " << metric_def(choice.pareto_b).name << "): "
            << pareto.size() << " variant(s)\noptimize.json, best.json and optimize-convergence.svg in " << dir << "/\n";
  return clean[res.best] ? 0 : 1;
}

// A file the user names for an output (fidelity --json, --svg): refused, before anything is read or
// written, when the path is empty, when something other than a regular file is there (writing replaces
// what is at the path with a file: a folder, a link, a FIFO or a device would be lost), or when it is one
// of the files the command reads (`reads`). An existing regular file is what the user asked to replace.
void check_output_file(const std::string& path, const std::string& what,
                       const std::vector<std::string>& reads) {
  namespace fs = std::filesystem;
  if (path.empty()) throw OutputRefused(what + ": an empty path; name a file");
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return;  // a new file (a missing folder is a write error)
  if (!S_ISREG(st.st_mode)) {
    const char* is = S_ISDIR(st.st_mode)   ? "a folder"
                     : S_ISLNK(st.st_mode) ? "a link"
                                           : "not a regular file (a FIFO, a device or a socket)";
    throw OutputRefused(what + " " + path + ": " + is +
                        "; dirsched would replace it with a file: name another path");
  }
  for (const std::string& r : reads) {
    std::error_code ec;
    if (fs::equivalent(path, r, ec))
      throw OutputRefused(what + " " + path + ": is " + r + ", which this command reads; name another file");
  }
}

// fidelity --svg: the two folders' timelines one above the other (measure_fidelity read both already:
// a folder without events.jsonl was refused there).
std::string stacked_timelines(const std::string& observed, const std::string& simulated) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, viz::RunView>> views;
  for (const auto& [title, dir] : {std::pair{"observed", observed}, {"simulated", simulated}}) {
    const fs::path events = fs::path(dir) / "events.jsonl";
    const fs::path summary_path = fs::path(dir) / "summary.json";
    std::optional<record::Summary> summary;
    if (fs::exists(summary_path)) summary = read_summary(summary_path.string());
    const std::string text = read_run_file(events.string());
    check_output_jsonl(text, events.string());
    try {
      views.emplace_back(std::string(title) + ": " + dir, viz::parse_run(text, summary ? &*summary : nullptr));
    } catch (const viz::VizError& e) {
      throw BadInput(dir + "/" + e.what());
    }
  }
  return viz::stacked_timelines_svg(views);
}

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
  std::string dir = dir_arg;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
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

// explore that stopped at --max-states, --max-memory or the stack's depth (docs/progress-and-pictures.md).
constexpr int kExitExploreStoppedEarly = 5;

// Exit status of check_one: 0 pass, 1 fail, 2 malformed, 4 ran but had no expect block to check.
constexpr int kNoExpect = 4;

std::string vars_text(const Scenario& s) {
  std::string o;
  for (const auto& [name, value] : s.assigned) o += (o.empty() ? "" : " ") + name + "=" + value.dump();
  return o;
}

// After a failed expectation under a runtime version with switches on: which switch, turned off alone,
// makes the same expectation pass? Each switch that is on is tried in ladder order, one run each on the
// event engine (SimGrid's rules and clock, byte-identical to it, and free to run many times in one
// process), with the invariants checked; every one that passes is named with its PR, or the line says
// none does. A switch that is off cannot be blamed. A scenario only SimGrid can run is not tried.
void name_the_switch(const std::string& file, const VarAssignment& assignment, const PolicyFlag& policy,
                     const Scenario& failed) {
  if (std::none_of(switch_table().begin(), switch_table().end(),
                   [&](const SwitchInfo& row) { return failed.switches[row.id]; }))
    return;
  if (const std::optional<std::string> why = event_engine_refusal(failed)) {
    std::cout << "  (no switch named: trying them needs the event engine, and " << *why << " needs SimGrid)"
              << std::endl;
    return;
  }
  bool any = false;
  for (const SwitchInfo& row : switch_table()) {
    if (!failed.switches[row.id]) continue;
    Scenario again = load_chosen(file, assignment, policy.choice());
    again.switches.set(row.id, false);
    again.expect = failed.expect;  // the same expectation, whatever block the loader would pick now
    EventRunOptions o;
    o.check_invariants = true;
    o.record_events = false;
    const std::unique_ptr<Run> run = run_events(again, o);
    if (run->result.violation || check_expectations(*run)) continue;
    any = true;
    std::cout << "  passes with only this switch off: " << row.name << " (#" << row.pr << ": " << row.text << ")"
              << std::endl;
  }
  if (!any) std::cout << "  no single switch of " << failed.policy << " turned off makes it pass" << std::endl;
}

int check_one(const std::string& file, const std::vector<std::string>& cfg, const VarAssignment& assignment,
              const PolicyFlag& policy) {
  try {
    Scenario scenario = load_chosen(file, assignment, policy.choice());
    // Which candidate ran: the ones --var chose, the first candidate of every other variable.
    const std::string ran = scenario.vars.empty()
                                ? ""
                                : ", " + vars_text(scenario) +
                                      (assignment.size() == scenario.vars.size() ? ""
                                       : assignment.empty()                      ? " (the first candidates)"
                                                            : " (others at their first candidate)");
    RunOptions options;
    options.simgrid_args = simgrid_args(cfg);
    options.check_invariants = true;
    options.record_events = false;
    std::unique_ptr<Run> run = simulate(scenario, options);
    if (run->result.violation) {
      std::cout << "FAIL " << file << (ran.empty() ? "" : " (" + ran.substr(2) + ")") << ": "
                << run->result.error << std::endl;
      return 1;
    }
    if (auto divergence = check_expectations(*run)) {
      std::cout << "FAIL " << file << (ran.empty() ? "" : " (" + ran.substr(2) + ")") << ": " << *divergence
                << std::endl;
      name_the_switch(file, assignment, policy, scenario);
      return 1;
    }
    if (scenario.expect.is_null()) {
      std::cout << "NO EXPECT " << file << " (" << scenario.name << ran << "): ran with the invariants, "
                << outcome_line(*run) << ", but there is no expect block to check" << std::endl;
      return kNoExpect;
    }
    std::cout << "PASS " << file << " (" << scenario.name << ran << ")" << std::endl;
    return 0;
  } catch (const ScenarioError& e) {
    std::cout << "ERROR " << e.what() << std::endl;
    return 2;
  }
}

// Exit status: 0 every file passed; 1 one fell short or had nothing to check; 2 only malformed files failed.
int cmd_check(const std::vector<std::string>& files, const std::vector<std::string>& cfg,
              const VarAssignment& assignment, const PolicyFlag& policy) {
  // SimGrid allows one Engine per process: each scenario runs in a child process (a single file in this one).
  int passed = 0, failed = 0, malformed = 0, unchecked = 0, crashed = 0, unwritable = 0;
  for (const std::string& f : files) {
    int rc = 0;
    if (files.size() == 1) {
      rc = check_one(f, cfg, assignment, policy);
    } else {
      std::fflush(stdout);
      const pid_t pid = fork_tracked();
      if (pid == 0) {
        if (const char* kind = std::getenv("DIRSCHED_INTERNAL_ERROR_TEST_IN_CHILD")) cli::throw_for_test(kind);
        int child_rc = check_one(f, cfg, assignment, policy);
        if (!stdout_written()) child_rc = kExitCannotWrite;  // the parent says so once, at its end
        _exit(child_rc);
      }
      int status = 0;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      child_finished(pid);
      if (WIFSIGNALED(status)) {
        // An internal error aborts the child (134 = SIGABRT); any signal is a crash, never a verdict.
        std::cout << "FAIL " << f << ": crashed (signal " << WTERMSIG(status) << ")\n";
        ++crashed, ++failed;
        continue;
      }
      rc = WIFEXITED(status) ? WEXITSTATUS(status) : cli::kExitInternal;
    }
    if (rc == 0)
      ++passed;
    else if (rc == kNoExpect)
      ++unchecked;
    else if (rc == kExitBadInput)
      ++malformed, ++failed;
    else if (rc == kExitCannotWrite)
      ++unwritable, ++failed;  // the child could not write its report; the parent's own check says so
    else
      ++failed;
  }
  std::cout << passed << " passed, " << failed << " failed";
  if (unchecked) std::cout << ", " << unchecked << " without expect (not counted as passed)";
  if (crashed) std::cout << ", " << crashed << " crashed (a bug in dirsched: please report it with the file)";
  std::cout << "\n";
  if (crashed) return cli::kExitInternal;
  if (unwritable) return kExitCannotWrite;
  if (failed) return malformed == failed && !unchecked ? 2 : 1;
  return unchecked ? 1 : 0;
}

// Whether everything written to stdout so far reached it (flushed; a full disk or /dev/full fails here).
bool stdout_written() {
  std::cout.flush();
  return std::cout.good() && std::fflush(stdout) == 0 && !std::ferror(stdout);
}

// Text on stderr, and on stdout for the commands that print text (not the JSON of gen and explore,
// nor sweep --plan's commands), goes through the terminal filter: a control character or an escape
// sequence in a name is shown as text (\x1b), never sent raw. The filters are never destroyed (the
// streams flush at exit).
void filter_terminal_text(bool stdout_too) {
  static TerminalFilter* err = new TerminalFilter(std::cerr.rdbuf());
  std::cerr.rdbuf(err);
  if (stdout_too) {
    static TerminalFilter* out = new TerminalFilter(std::cout.rdbuf());
    std::cout.rdbuf(out);
  }
}

int run_command(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  // First, before any thread: SIGINT, SIGTERM and SIGHUP go to the thread that removes temporaries.
  install_interrupt_cleanup();
  const int rc = run_command(argc, argv);
  // Every write to stdout is checked: output lost on a full disk is an error (exit 3), never a success.
  if (!stdout_written()) {
    const int e = errno;
    std::cerr << "dirsched: cannot write to standard output" << (e ? std::string(": ") + std::strerror(e) : "")
              << "\n";
    return kExitCannotWrite;
  }
  return rc;
}

namespace {

int run_command(int argc, char** argv) {
  CLI::App app{"dirsched: simulate and verify directed task scheduling"};
  app.set_version_flag("--version", std::string("dirsched ") + dirsched_version());
  app.require_subcommand(1);
  std::vector<std::string> cfg;

  CLI::App* run =
      app.add_subcommand("run", "Replay a scenario on its simulated platform and write the outputs");
  std::string run_file, out_dir, outputs;
  std::optional<std::uint64_t> seed;
  run->add_option("scenario", run_file, "Scenario JSON file")->required();
  run->add_option("--out", out_dir, "Output folder: a new path, or a run folder to replace")->required();
  run->add_option("--seed", seed, "Seed, overriding the scenario's");
  run->add_option(
      "--outputs", outputs,
      "Comma-separated subset of events,summary,tasks,metrics,dag,timeline,trace,report (default all), "
      "paje (trace.paje for ViTE, only when named) and strace (strace.log in the runtime's [STRACE] grammar; "
      "only when named)")
      ->check(outputs_list);
  run->add_option("--cfg", cfg, "SimGrid configuration, passed through (e.g. --cfg=network/model:CM02)");
  bool check_invariants = false;
  run->add_flag("--check-invariants", check_invariants,
                "Check the contract's invariants after every transition");
  PolicyFlag policy;
  const char* policy_help =
      "The runtime version: seed, head_reservation, current or upto:N (a PR of the ladder, docs/versions.md), "
      "overriding the scenario's scheduler.policy and scheduler.switches";
  const char* switch_help = "NAME=on|off: one switch of the ladder over the policy (repeatable; wins over the file)";
  auto policy_flags = [&](CLI::App* command) {
    command->add_option("--policy", policy.policy, policy_help);
    command->add_option("--switch", policy.switches, switch_help)->take_all()->expected(1)->allow_extra_args(false);
  };
  policy_flags(run);
  std::vector<std::string> run_vars;
  run->add_option("--var", run_vars,
                  "NAME=VALUE (JSON) for a sweep variable; others take their first candidate");
  run->add_flag("--var-any", g_var_any, "Let a --var value be outside the declared candidates");
  // Strict numbers (cli/options.hpp): checked on the text, before CLI11 converts it (it wraps -1).
  const CLI::Validator any_seed = cli::whole_number(0, UINT64_MAX);
  run->get_option("--seed")->check(any_seed);
  std::string run_engine = "sim";
  run->add_option("--engine", run_engine,
                  "sim (SimGrid, the default), event (SimGrid's rules without SimGrid, for durations-only "
                  "scenarios: faster, the same outputs) or threads (real threads, wall-clock time)")
      ->check(CLI::IsMember({"sim", "event", "threads"}));
  // One definition of --picture-budget, --quiet and (for sweep) --outputs, shared by the commands.
  double picture_budget = viz::kDefaultPictureBudget;
  bool quiet = false;
  const char* budget_help = "Seconds each picture may take to draw (default 5): past them a smaller one, noted";
  const char* quiet_help = "No progress line on stderr (it shows only on a terminal anyway)";
  const CLI::Validator budget_range = cli::real_number(0, 3600);
  run->add_option("--picture-budget", picture_budget, budget_help)->check(budget_range);
  run->add_flag("--quiet", quiet, quiet_help);
  std::vector<std::string> run_attach;
  run->add_option("--attach", run_attach,
                  "NAME=FILE: keep FILE in the run folder as NAME (a front end's scenario.json, variant.json)");
  ThreadsEngine threads;
  CLI::Option* time_scale =
      run->add_option("--time-scale", threads.time_scale,
                      "--engine threads: wall seconds per scenario second (default 1; 0 runs members at once)")
          ->check(cli::real_number(0, 1e6));

  CLI::App* sweep = app.add_subcommand("sweep", "Run every variant of a scenario's vars and rank them");
  std::string sweep_file, sweep_out, collect_dir;
  unsigned sweep_jobs = 2;
  std::optional<std::size_t> sweep_sample;
  std::uint64_t sweep_seed = 0;
  bool sweep_plan = false;
  sweep->add_option("scenario", sweep_file, "Scenario JSON file with a vars block");
  sweep->add_option("--out", sweep_out, "Folder for variant-NNNN run folders, sweep.csv and sweep.svg");
  std::size_t sweep_max_variants = kDefaultMaxVariants;
  sweep->add_option("-j,--jobs", sweep_jobs, "Variants run at once (processes)")->check(cli::whole_number(1, 256));
  CLI::Option* sweep_sample_option = sweep->add_option("--sample", sweep_sample, "Run a seeded random sample of K variants")
      ->check(cli::whole_number(1, kMaxMaxVariants));
  sweep->add_option("--seed", sweep_seed, "Seed of --sample")->check(any_seed);
  sweep->add_option("--max-variants", sweep_max_variants,
                    "Refuse a sweep of more variants than this (default 10000)")
      ->check(cli::whole_number(1, kMaxMaxVariants));
  CLI::Option* sweep_plan_option = sweep->add_flag("--plan", sweep_plan,
                  "Print one self-contained command per variant instead of running them");
  sweep->add_option("--collect", collect_dir,
                    "Build sweep.csv, sweep.svg and the ranking from a folder of variant runs");
  std::optional<std::size_t> sweep_replicates;
  CLI::Option* sweep_replicates_option = sweep->add_option("--replicates", sweep_replicates,
                    "Run every variant under N seeds (seed, seed+1, ...: the same for every variant); default the "
                    "scenario's \"replicates\", else 1")
      ->check(cli::whole_number(1, 10000));
  std::string sweep_objective, sweep_pareto;
  sweep->add_option("--objective", sweep_objective,
                    "Ranking keys after clean, in order, comma-separated (default makespan,idle_target_wait,"
                    "group_wait_max,single_wait_max,single_wait_mean)");
  sweep->add_option("--pareto", sweep_pareto, "Two metrics A,B: print their non-dominated variants and draw them "
                                              "(sweep-pareto.svg; default makespan,group_wait_max)");
  sweep->add_option("--cfg", cfg, "SimGrid configuration, passed through");
  policy_flags(sweep);
  std::string sweep_outputs;
  CLI::Option* sweep_outputs_option = sweep->add_option("--outputs", sweep_outputs,
                    "What each variant writes, as run --outputs (must include summary; default all; with --plan: "
                    "summary, what --collect reads; variant.json always)")
                                          ->check(outputs_list);
  CLI::Option* sweep_budget_option =
      sweep->add_option("--picture-budget", picture_budget, budget_help)->check(budget_range);
  sweep->add_flag("--quiet", quiet, quiet_help);

  CLI::App* optimize = app.add_subcommand("optimize", "Search a scenario's vars for the best variant");
  std::string optimize_file, optimize_out, optimize_batches;
  std::size_t optimize_budget = 1000;
  std::uint64_t optimize_seed = 0;
  unsigned optimize_jobs = 2;
  optimize->add_option("scenario", optimize_file, "Scenario JSON file with a vars block")->required();
  optimize->add_option("--out", optimize_out, "Folder for optimize.json, best.json and the convergence chart")->required();
  optimize->add_option("--budget", optimize_budget, "Evaluations at most (default 1000): exhaustive when the space fits")
      ->check(cli::whole_number(1, 100000000));
  optimize->add_option("--seed", optimize_seed, "Seed of the search")->check(any_seed);
  optimize->add_option("-j,--jobs", optimize_jobs, "Runs at once (processes)")->check(cli::whole_number(1, 256));
  optimize->add_option("--replicates", sweep_replicates, "Seeds per evaluation (default the scenario's replicates)")
      ->check(cli::whole_number(1, 10000));
  optimize->add_option("--objective", sweep_objective, "Ranking keys after clean, in order, comma-separated");
  optimize->add_option("--pareto", sweep_pareto, "Two metrics A,B of the Pareto set (default makespan,group_wait_max)");
  optimize->add_option("--cfg", cfg, "SimGrid configuration, passed through");
  optimize->add_option("--plan-batches", optimize_batches,
                       "Run nothing: print the search's next batch of runs as a plan (exit 6), their run folders "
                       "kept in this folder; call again after running it, until optimize.json is written");
  policy_flags(optimize);
  std::size_t sweep_lines_per_task = 1;
  CLI::Option* lines_per_task =
      sweep->add_option("--lines-per-task", sweep_lines_per_task,
                        "--plan: plan lines per Slurm array task, for the sbatch line it prints (default 1)")
          ->check(cli::whole_number(1, kMaxLinesPerTask));
  bool sweep_missing = false;
  sweep->add_flag("--missing", sweep_missing,
                  "With --collect: print the plan lines of the variants still to run, nothing else");
  std::string prepare_dir, prepare_name, prepare_origin;
  std::size_t prepare_variants = 0;
  CLI::Option* prepare_option = sweep->add_option(
      "--prepare", prepare_dir,
      "Make DIR the sweep folder of --name and --origin with --variants N, for a front end that runs the "
      "variants itself (Python's Testbed.sweep): the folder rules of a sweep, nothing run");
  CLI::Option* prepare_name_option = sweep->add_option("--name", prepare_name, "--prepare: the scenario's name");
  CLI::Option* prepare_origin_option =
      sweep->add_option("--origin", prepare_origin, "--prepare: where the variants come from (python:FUNCTION)");
  std::string replicate_dir;
  CLI::Option* replicate_option = sweep->add_option(
      "--replicate", replicate_dir,
      "For a front end that ran every variant of sweep folder DIR itself (Python's Testbed.sweep): run "
      "replicates 1..N-1 of each (--replicates N) from the scenario.json its folder keeps, for --collect");
  CLI::Option* prepare_variants_option =
      sweep->add_option("--variants", prepare_variants, "--prepare: the variant count")
          ->check(cli::whole_number(1, kMaxMaxVariants));

  CLI::App* compare =
      app.add_subcommand("compare", "Compare two run folders (exit 0 same, 1 different, 2 trouble)");
  std::string compare_a, compare_b;
  compare->add_option("run_a", compare_a, "A run folder")->required();
  compare->add_option("run_b", compare_b, "Another run folder")->required();
  std::size_t compare_limit = 20;
  compare->add_option("--limit", compare_limit, "Show at most this many divergences per list (default 20)")
      ->check(cli::whole_number(0, 1000000000));

  CLI::App* check = app.add_subcommand("check", "Run scenarios and evaluate their expect blocks");
  std::vector<std::string> check_files;
  check->add_option("scenarios", check_files, "Scenario JSON files")->required();
  check->add_option("--cfg", cfg, "SimGrid configuration, passed through");
  policy_flags(check);
  std::vector<std::string> check_vars;
  check->add_option("--var", check_vars,
                    "NAME=VALUE (JSON) for a sweep variable; others take their first candidate");
  check->add_flag("--var-any", g_var_any, "Let a --var value be outside the declared candidates");

  CLI::App* bis = app.add_subcommand(
      "bisect", "Name the runtime change (PR and switch) after which a scenario's run differs (exit 0 none, 1 one)");
  BisectOptions bisect_options;
  bis->add_option("scenario", bisect_options.file, "Scenario JSON file")->required();
  bis->add_option("--from", bisect_options.from,
                  "The ladder point to start from: seed (default), head_reservation, upto:N");
  bis->add_option("--to", bisect_options.to, "The ladder point to end at: current (default), upto:N");
  bis->add_option("--seed", bisect_options.seed, "Seed, overriding the scenario's")->check(any_seed);
  bis->add_option("--cfg", cfg, "SimGrid configuration, passed through");
  std::vector<std::string> bisect_vars;
  bis->add_option("--var", bisect_vars, "NAME=VALUE (JSON) for a sweep variable; others take their first candidate");
  bis->add_flag("--var-any", g_var_any, "Let a --var value be outside the declared candidates");
  bis->add_flag("--json", bisect_options.json, "The report as one JSON document on stdout");

  CLI::App* render =
      app.add_subcommand("render", "Redraw the pictures of a run folder from its events.jsonl");
  std::string render_dir;
  render->add_option("run_dir", render_dir, "A folder written by dirsched run")->required();
  std::string render_observed;
  render->add_option("--observed", render_observed,
                     "A recorded run this one replays (an imported observed/ folder): report.html adds the "
                     "fidelity measures and both timelines one above the other, and fidelity.json is written");
  render->add_option("--picture-budget", picture_budget, budget_help)->check(budget_range);
  render->add_flag("--quiet", quiet, quiet_help);

  CLI::App* exp = app.add_subcommand(
      "explore", "Explore every interleaving of a scenario on the core alone; JSON on stdout");
  std::string explore_file;
  ExploreOptions explore_options;
  exp->add_option("scenario", explore_file, "Scenario JSON file")->required();
  // Node numbers are 32-bit (0xffffffff marks an empty slot of the visited set).
  exp->add_option("--max-states", explore_options.max_states, "Stop after this many distinct states")
      ->check(cli::whole_number(1, 4000000000));
  exp->add_option_function<std::string>(
         "--max-memory",
         [&explore_options](const std::string& v) { explore_options.max_memory = *cli::parse_size(v); },
         "Stop once the heap in use passes this size, the load and set-up included (docs/limits.md), "
         "e.g. 512M or 2G (default 2G)")
      ->check(cli::byte_size(std::uint64_t{1} << 20, std::uint64_t{1} << 40));
  exp->add_flag("--failures", explore_options.failures,
                 "Let any member also fail (a member the file marks `fail: true` fails on every path anyway)");
  policy_flags(exp);
  std::vector<std::string> explore_vars;
  exp->add_option("--var", explore_vars,
                  "NAME=VALUE (JSON) for a sweep variable; others take their first candidate");
  exp->add_flag("--quiet", quiet, quiet_help);
  exp->add_flag("--var-any", g_var_any, "Let a --var value be outside the declared candidates");
  bool explore_no_por = false;
  exp->add_flag("--no-por", explore_no_por, "Explore every ordering (no partial-order reduction)");

  CLI::App* gen = app.add_subcommand("gen", "Write a generated scenario to stdout");
  std::string gen_family;
  std::uint64_t gen_seed = 0;
  std::map<std::string, double> gen_params;
  gen->add_option("family", gen_family, "stream, fork-join, chains, tp-groups or random")->required();
  gen->add_option("--seed", gen_seed, "Seed of the generator's draws")->check(any_seed);
  for (const GenRange& r : kGenRanges) {
    std::string key(r.option);
    std::replace(key.begin(), key.end(), '-', '_');
    gen->add_option_function<double>(
           std::string("--") + r.option, [&gen_params, key](double v) { gen_params[key] = v; }, r.help)
        ->check(r.whole ? cli::whole_number(static_cast<std::uint64_t>(r.min), static_cast<std::uint64_t>(r.max))
                        : cli::real_number(r.min, r.max));
  }

  CLI::App* imp = app.add_subcommand("import", "Read a real run's log into a scenario, an observed run folder and a report");
  imp->require_subcommand(1);
  CLI::App* imp_strace = imp->add_subcommand("strace", "The runtime's [STRACE] host log (docs/howto-import-a-real-run.md)");
  ImportOptions import_options;
  std::string import_out;
  imp_strace->add_option("log", import_options.log, "The host log")->required();
  imp_strace->add_option("--out", import_out, "Output folder: a new path, or an earlier import to replace")->required();
  CLI::Option* imp_pid = imp_strace->add_option("--pid", import_options.pid, "The scheduler process to import")
                             ->check(cli::whole_number(0, INT64_MAX));
  imp_strace->add_option("--level", import_options.level,
                         "The level word of the scheduler process (node, network1, network2, network3)")
      ->excludes(imp_pid);
  imp_strace->add_option("--run", import_options.runs, "Import only this run_id (repeatable)")
      ->check(cli::whole_number(1, INT64_MAX));
  CLI::Option* imp_deps = imp_strace->add_option("--deps", import_options.deps_file,
                                                 "A trace the Python front end recorded from the same orchestration: its args and buffers, joined op by op");
  imp_strace->add_option("--infer-deps", import_options.infer_gap_us,
                         "Guess P -> T when T, submitted and with idle targets, starts within GAP_US microseconds of P's end")
      ->check(cli::real_number(0, 1e12))
      ->excludes(imp_deps);
  imp_strace->add_flag("--allow-truncated", import_options.allow_truncated,
                       "Import a log cut short: a dispatch without a completion has no observed end");
  imp_strace->add_flag("--calibrate-overheads", import_options.calibrate_overheads,
                       "Estimate scheduler.dispatch_cost_s from the dispatch spans");
  imp_strace->add_flag("--sample-durations", import_options.sample_durations,
                       "Ops carry no duration: each member draws from its callable's observed durations");

  CLI::App* fid = app.add_subcommand(
      "fidelity", "Measure a replay against a recorded run (exit 1 beyond --max-makespan-error, 2 trouble)");
  std::string fid_observed, fid_simulated, fid_json;
  std::optional<double> fid_bound;
  fid->add_option("observed", fid_observed, "The recorded run folder (dirsched import's observed/)")->required();
  fid->add_option("simulated", fid_simulated, "A run folder of the replay")->required();
  fid->add_option("--json", fid_json, "Also write every measure as JSON to FILE");
  std::string fid_svg;
  fid->add_option("--svg", fid_svg, "Also draw both timelines, observed above simulated on one time axis, to FILE");
  fid->add_option("--max-makespan-error", fid_bound, "Exit 1 when |makespan error| is above X (0.05 = 5%)")
      ->check(cli::real_number(0, 1e6));

  cli::name_checked_values(app);  // "--tasks UINT in [1, 10000000]", not CLI11's "FLOAT:UINT in ..."
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Worded like every other refusal: which command, then what is wrong with its arguments.
    std::string command = "dirsched";
    for (const CLI::App* at = &app; !at->get_subcommands().empty();) {  // `dirsched import strace` too
      at = at->get_subcommands().front();
      command += " " + at->get_name();
    }
    std::cerr << command << ": " << e.what() << "\n" << "(see '" << command << " --help')\n";
    return 2;
  }
  filter_terminal_text(!*gen && !*exp && !sweep_plan);
  try {
    if (const char* kind = std::getenv("DIRSCHED_INTERNAL_ERROR_TEST")) cli::throw_for_test(kind);
    if (std::find(cfg.begin(), cfg.end(), "help") != cfg.end()) {  // --cfg=help: SimGrid's options
      print_simgrid_help();
      return 0;
    }
    check_simgrid_cfg(cfg);  // an option that writes files or would crash SimGrid, before anything runs
    (void)policy.choice();  // a typo in --policy or --switch stops here, before anything runs
    if (quiet) Progress::get().set_shown(false);
    if (*run) {
      threads.on = run_engine == "threads";
      threads.events = run_engine == "event";
      if (!(threads.time_scale >= 0)) {  // CLI::Range lets NaN through
        std::cerr << "dirsched run: --time-scale: expected a number in [0, 1e6]\n";
        return 2;
      }
      if (time_scale->count() && !threads.on) {
        std::cerr << "dirsched run: --time-scale applies to --engine threads only\n";
        return 2;
      }
      return cmd_run(run_file, out_dir, seed, outputs, cfg, check_invariants, run_vars, policy, threads,
                     picture_budget, run_attach);
    }
    if (*sweep || *optimize) {
      RankChoice choice;
      const char* flag = "--objective";
      try {
        if (!sweep_objective.empty()) choice.objective = parse_objective(sweep_objective);
        flag = "--pareto";
        if (!sweep_pareto.empty()) {
          const std::vector<std::size_t> two = parse_objective(sweep_pareto);
          if (two.size() != 2) throw BadInput("expected two metrics A,B");
          choice.pareto_a = two[0], choice.pareto_b = two[1], choice.pareto_given = true;
        }
      } catch (const BadInput& e) {  // parse_objective's refusals
        std::cerr << "dirsched sweep: " << flag << ": " << e.what() << "\n";
        return 2;
      }
      if (*optimize && optimize->count("--plan-batches") && optimize_batches.empty())
        throw OutputRefused("--plan-batches: an empty path");  // it ran the search here, as if not given
      if (*optimize)
        return cmd_optimize(optimize_file, optimize_out, optimize_budget, optimize_seed, optimize_jobs, cfg, policy,
                            sweep_replicates, choice, optimize_batches);
      if (prepare_option->count() || prepare_name_option->count() || prepare_origin_option->count() ||
          prepare_variants_option->count()) {
        if (!prepare_option->count() || !prepare_name_option->count() || !prepare_origin_option->count() ||
            !prepare_variants_option->count() || !sweep_file.empty() || !sweep_out.empty() || !collect_dir.empty()) {
          std::cerr << "dirsched sweep: --prepare DIR goes with --name, --origin and --variants, and nothing else "
                       "of a sweep\n";
          return 2;
        }
        return cmd_prepare(prepare_dir, prepare_name, prepare_origin, prepare_variants);
      }
      if (replicate_option->count()) {
        // With --replicates N, and what a run needs (-j, --cfg, the policy); nothing else of a sweep.
        for (const CLI::Option* o : {sweep_outputs_option, sweep_plan_option, sweep_sample_option, sweep_budget_option,
                                     lines_per_task, sweep->get_option("--seed"), sweep->get_option("--max-variants"),
                                     sweep->get_option("--objective"), sweep->get_option("--pareto")})
          if (o->count()) {
            std::cerr << "dirsched sweep: " << o->get_name() << " has no effect with --replicate (it runs replicates "
                      << "only; the ranking flags go to --collect)\n";
            return 2;
          }
        if (!sweep_replicates || !sweep_file.empty() || !sweep_out.empty() || !collect_dir.empty() || sweep_missing) {
          std::cerr << "dirsched sweep: --replicate DIR goes with --replicates N (and -j, --cfg, --policy, "
                       "--switch), not with a scenario, --out or --collect\n";
          return 2;
        }
        return cmd_replicate(replicate_dir, *sweep_replicates, sweep_jobs, cfg, policy);
      }
      if (sweep_missing && collect_dir.empty()) {
        std::cerr << "dirsched sweep: --missing goes with --collect DIR\n";
        return 2;
      }
      if (lines_per_task->count() && !sweep_plan) {
        std::cerr << "dirsched sweep: --lines-per-task goes with --plan\n";
        return 2;
      }
      // The ranking flags are --collect's: a plan prints them in the --collect line it suggests.
      std::string collect_flags;
      if (!sweep_objective.empty()) collect_flags += " --objective " + shell_quote(sweep_objective);
      if (!sweep_pareto.empty()) collect_flags += " --pareto " + shell_quote(sweep_pareto);
      if (!collect_dir.empty()) {
        // What only running variants means has no effect on a collect: refused, not ignored.
        for (const CLI::Option* o : {sweep_replicates_option, sweep_outputs_option, sweep_plan_option,
                                     sweep_sample_option, sweep_budget_option})
          if (o->count()) {
            std::cerr << "dirsched sweep: " << o->get_name() << " has no effect with --collect (it is about running "
                      << "variants; --collect ranks the folders already there"
                      << (o == sweep_replicates_option ? ", with the replicates in their replicates.jsonl" : "") << ")\n";
            return 2;
          }
      }
      if (!collect_dir.empty()) return sweep_missing ? cmd_missing(collect_dir) : cmd_collect(collect_dir, choice);
      if (sweep_file.empty() || (sweep_out.empty())) {
        std::cerr << "dirsched sweep: give SCENARIO and --out DIR, or --collect DIR\n";
        return 2;
      }
      const int rc = cmd_sweep(sweep_file, sweep_out, sweep_jobs, sweep_sample, sweep_seed, sweep_max_variants,
                               sweep_plan, cfg, policy, sweep_outputs, picture_budget, sweep_replicates,
                               sweep_lines_per_task, collect_flags);
      return rc != 0 || sweep_plan ? rc : cmd_collect(sweep_out, choice);
    }
    if (*compare) {
      // Exit status as diff(1): 0 the same, 1 different, 2 trouble (a missing or malformed folder).
      const Comparison c = compare_runs(compare_a, compare_b, compare_limit);
      std::cout << c.text;
      return c.same ? 0 : 1;
    }
    if (*imp) {
      import_options.progress = isatty(STDERR_FILENO);
      check_output_folder(import_out, FolderKind::kImport, "--out");  // before the log is read
      std::cout << import_strace(import_options, import_out) << "outputs in " << import_out
                << "/ (scenario.json, observed/, import-report.json)\n";
      return 0;
    }
    if (*fid) {
      std::vector<std::string> reads;
      for (const std::string& dir : {fid_observed, fid_simulated})
        for (const char* name : {"summary.json", "events.jsonl"})
          reads.push_back((std::filesystem::path(dir) / name).string());
      if (fid->count("--json")) check_output_file(fid_json, "--json", reads);
      if (fid->count("--svg")) check_output_file(fid_svg, "--svg", reads);
      if (fid->count("--json") && fid->count("--svg") && fid_json == fid_svg)
        throw OutputRefused("--json and --svg: both name " + fid_json + "; name two files");
      const Fidelity f = measure_fidelity(fid_observed, fid_simulated, fid_bound);
      // Both made before either is written: a refusal drawing the timelines leaves no half of the pair.
      const std::string svg =
          fid_svg.empty() ? std::string() : stacked_timelines(fid_observed, fid_simulated);
      if (!fid_json.empty()) write_file_atomic(fid_json, f.json.dump(2) + "\n");
      if (!fid_svg.empty()) write_file_atomic(fid_svg, svg);
      std::cout << f.text;
      return f.within ? 0 : 1;
    }
    if (*check) return cmd_check(check_files, cfg, parse_vars(check_vars), policy);
    if (*bis) {
      bisect_options.simgrid_args = simgrid_args(cfg);
      const VarAssignment assignment = parse_vars(bisect_vars);
      return cmd_bisect(bisect_options, [&](const PolicyChoice& choice) {
        return load_chosen(bisect_options.file, assignment, choice);
      });
    }
    if (*render) return cmd_render(render_dir, picture_budget, render_observed);
    if (*gen) {
      if (const std::string why = gen_too_large(gen_family, gen_params); !why.empty()) {
        std::cerr << "dirsched: gen " << gen_family << ": " << why << "\n";
        return 2;
      }
      Scenario s;
      s.name = gen_family;
      s.description = "Generated by dirsched gen " + gen_family + " (seed " + std::to_string(gen_seed) + ")";
      s.seed = gen_seed;
      generate_into(GenerateSpec{gen_family, gen_params, gen_seed}, s, "gen");
      // gen writes only what the loader reads: the same size limit and the same checks (a time past
      // 2^32 s from a slow arrival rate, for one), before a byte reaches stdout.
      std::ostringstream text;
      write_scenario_json(s, text);
      const std::string json_text = text.str();
      if (json_text.size() > kMaxJsonFileBytes) {
        std::cerr << "dirsched: gen " << gen_family << ": the scenario would be " << json_text.size()
                  << " bytes, more than the loader's limit of " << kMaxJsonFileBytes
                  << " bytes (256 MiB); ask for fewer tasks\n";
        return 2;
      }
      try {
        (void)parse_scenario(parse_json_text(json_text, "gen " + gen_family), "gen " + gen_family, ".");
      } catch (const ScenarioError& e) {
        std::cerr << "dirsched: gen " << gen_family << " would write a scenario the loader refuses: " << e.what()
                  << "\n";
        return 2;
      }
      std::cout << json_text;
      return 0;
    }
    if (*exp) {
      explore_options.por = !explore_no_por;
      const VarAssignment assignment = parse_vars(explore_vars);
      // --max-memory bounds the whole command, the load and the set-up included: the heap is checked
      // along them (check_setup_memory), and RLIMIT_DATA turns what no check sees in time into a failed
      // allocation, caught here or in explore() as the same early stop (docs/limits.md). Released
      // before the result is written (at most 20 outcomes, already held).
      DataLimit data_limit(explore_options.max_memory);
      explore_options.data_limit = data_limit.limit();
      nlohmann::ordered_json result;
      std::optional<Scenario> scenario;
      Progress::get().begin("load");
      try {
        scenario.emplace(load_chosen(explore_file, assignment, policy.choice()));
        check_setup_memory(explore_options, "loading the scenario");
      } catch (const SetupMemoryStop& stop) {
        result = explore_stopped_in_setup(scenario->name, explore_options, stop.stage, stop.heap);
      } catch (const std::bad_alloc&) {
        scenario.reset();
        result = explore_stopped_in_setup(explore_file, explore_options, "loading the scenario", 0);
      }
      if (result.is_null()) {
        Progress::get().begin("explore", static_cast<double>(explore_options.max_states), "states (max-states)");
        explore_options.on_states = [](std::size_t n) { Progress::get().update(static_cast<double>(n)); };
        result = explore(*scenario, explore_options);
        if (!scenario->vars.empty()) result["vars"] = scenario->assigned;  // which candidate was explored
      }
      scenario.reset();
      data_limit.release();
      Progress::get().end();
      std::cout << result.dump(2) << "\n";
      std::cout.flush();
      if (!result["violations"].empty()) return 1;
      if (result.value("stopped_early", false)) {
        // Partial: the JSON covers only the visited states. Said on stderr too, with its own status.
        std::cerr << "dirsched explore: stopped early, the result covers only the states visited: "
                  << result.value("note", std::string("a bound was reached")) << "\n";
        return kExitExploreStoppedEarly;
      }
      return 0;
    }
  } catch (...) {
    // Bad input 2, cannot write 3, a bug: a message and abort (134).
    return cli::report_current_exception();
  }
  return 0;
}

}  // namespace
