// dirsched: the command line over the scenario loader, the SimGrid driver and the outputs.
//
// Exit status (the README's table has every one per command): 0 success; 1 a `check` whose
// expectations fall short; 2 bad input (a malformed scenario, a missing file, a bad option or one out
// of its range, a limit passed, a platform or --cfg SimGrid would abort on, a deadlock, an output path
// the folder rule refuses), reported as one line on stderr, with nothing written; 3 an output could
// not be written (nothing claimed, nothing left); 128 + N stopped by signal N (130 SIGINT, 143
// SIGTERM, 129 SIGHUP), temporaries removed.
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "dirsched/explore.hpp"
#include "dirsched/generate.hpp"
#include "dirsched/output_folder.hpp"
#include "dirsched/probe.hpp"
#include "dirsched/scenario.hpp"
#include "dirsched/sim.hpp"
#include "dirsched/fidelity.hpp"
#include "dirsched/strace_import.hpp"
#include "dirsched/strace_writer.hpp"
#include "dirsched/sweep.hpp"
#include "dirsched/threads_engine.hpp"
#include "dirsched/viz.hpp"
#include "options.hpp"

namespace {

using namespace dirsched;

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

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `run --engine threads [--time-scale X]`: the scenario on real threads (runtime/) instead of SimGrid.
struct ThreadsEngine {
  bool on = false;
  double time_scale = 1;
};

// Replays one scenario into `out`: simulate (or run on threads), draw, write (everything moved in
// place at the end). Returns 1 when an invariant broke, else 0. `out` is checked before anything runs
// (OutputRefused).
int run_to_folder(const Scenario& scenario, RunOptions options, const std::string& out_arg,
                  std::vector<std::string> selected_data, const std::vector<std::string>& selected_pictures,
                  bool quiet, const ThreadsEngine& threads = {}) {
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
  try {
    if (threads.on) {
      ThreadsOptions t;
      t.time_scale = threads.time_scale;
      t.seed = options.seed;
      t.check_invariants = options.check_invariants;
      t.record_events = options.record_events;
      t.events_path = options.events_path;
      run = run_threads(scenario, t);
    } else {
      run = simulate(scenario, options);
    }
  } catch (const WriteError& e) {
    // The temporaries are gone with the run: name the file as the user will look for it.
    const bool tasks = tasks_tmp && e.path() == tasks_tmp->path().string();
    throw WriteError(out + (tasks ? "/tasks.csv" : "/events.jsonl"), e.reason());
  }
  std::map<std::string, std::string> files;
  std::vector<std::string> notes;
  // Past this size the pictures would cost more than the run (and a timeline of a million bars is
  // no picture): they are left out and the summary says so.
  constexpr std::size_t kMaxPictureTasks = 100000;
  if (draw && run->recorder->record_count() > kMaxPictureTasks) {
    draw = false;
    notes.push_back("pictures skipped: " + std::to_string(run->recorder->record_count()) + " tasks exceed " +
                    std::to_string(kMaxPictureTasks) +
                    "; dirsched render can still draw them from events.jsonl");
  }
  if (draw) {
    const nlohmann::json summary = nlohmann::json::parse(summary_json(*run));
    std::string note;
    files = viz::render_all(viz::parse_run(read_file(run->events_file), &summary), summary, selected_pictures,
                            &note);
    if (!note.empty()) notes.push_back(note);
  }
  if (strace) files["strace.log"] = strace_log_from_events(read_file(run->events_file), scenario);
  if (!scenario.vars.empty()) {
    // Which variant of the sweep this is (null when the values are not one of the candidates).
    const auto index = variant_index(scenario);
    nlohmann::json variant = {{"vars", scenario.assigned},
                              {"variant", index ? nlohmann::json(*index) : nlohmann::json(nullptr)}};
    files["variant.json"] = variant.dump(2) + "\n";
  }
  write_outputs(*run, out, selected_data, files, notes);
  parents.keep();
  if (!quiet) {
    std::cout << scenario.name << ": " << outcome_line(*run) << ", makespan "
              << human_number(run->result.makespan_s) << " s, " << run->recorder->record_count() << " tasks, "
              << run->result.dispatches << " dispatches\n"
              << "outputs in " << out << "/" << (draw ? " (open report.html)" : "") << "\n";
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

// Splits --outputs into data files and pictures; false (after a message) for an unknown name.
bool parse_outputs(const std::string& outputs, std::vector<std::string>& data_out,
                   std::vector<std::string>& pictures_out) {
  static const std::set<std::string> data = {"events", "summary", "tasks", "metrics", "strace"};
  static const std::set<std::string> pictures = {"dag", "timeline", "trace", "report"};
  for (const std::string& o : split_list(outputs)) {
    if (data.count(o))
      data_out.push_back(o);
    else if (pictures.count(o))
      pictures_out.push_back(o);
    else {
      std::cerr << "dirsched: --outputs: unknown output '" << o
                << "' (events, summary, tasks, metrics, strace, dag, timeline, trace, report)\n";
      return false;
    }
  }
  return true;
}

// NAME=JSON pairs from --var.
VarAssignment parse_vars(const std::vector<std::string>& vars) {
  VarAssignment out;
  for (const std::string& v : vars) {
    const auto eq = v.find('=');
    if (eq == std::string::npos || eq == 0) throw std::runtime_error("--var " + v + ": expected NAME=VALUE");
    try {  // the loader's strict reader: a 100,000-deep value must not reach a recursive dump
      out[v.substr(0, eq)] = parse_json_text(v.substr(eq + 1), "--var " + v.substr(0, eq));
    } catch (const ScenarioError& e) {
      throw std::runtime_error(std::string(e.what()) + " (quote strings: name='\"x\"')");
    }
  }
  return out;
}

// The largest --max-variants and --sample: a sweep runs each variant in a process of its own.
constexpr std::size_t kMaxMaxVariants = 1000000;

// The range of each `gen` option (whole numbers, or real numbers for the times and the fraction), and
// which families read it (the README's table of families).
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
using PolicyFlag = std::optional<std::string>;
Scenario with_policy(Scenario scenario, const PolicyFlag& policy) {
  if (policy) scenario.policy = parse_policy(*policy, "--policy");
  return scenario;
}

int cmd_run(const std::string& file, const std::string& out, std::optional<std::uint64_t> seed,
            const std::string& outputs, const std::vector<std::string>& cfg, bool check_invariants,
            const std::vector<std::string>& vars, const PolicyFlag& policy, const ThreadsEngine& threads) {
  std::vector<std::string> data, pictures;
  if (!parse_outputs(outputs, data, pictures)) return 2;
  const VarAssignment assignment = parse_vars(vars);
  Scenario scenario = with_policy(load_scenario(file, assignment), policy);
  if (threads.on) {
    if (!cfg.empty()) throw std::runtime_error("--cfg configures SimGrid: it does not apply to --engine threads");
    check_threads_engine(scenario);  // before anything is written
  }
  RunOptions options;
  options.seed = seed;
  options.simgrid_args = simgrid_args(cfg);
  options.progress = isatty(STDERR_FILENO);
  options.check_invariants = check_invariants;
  return run_to_folder(scenario, options, out, data, pictures, false, threads);
}

std::string shell_quote(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

int cmd_sweep(const std::string& file, const std::string& out, unsigned jobs,
              std::optional<std::size_t> sample, std::uint64_t seed, std::size_t max_variants, bool plan,
              const std::vector<std::string>& cfg, const PolicyFlag& policy) {
  namespace fs = std::filesystem;
  const Scenario base = load_scenario(file);
  if (base.vars.empty()) {
    std::cerr << "dirsched: " << file << ": vars: the scenario has no sweep variables\n";
    return 2;
  }
  const std::vector<Variant> variants =
      sample ? sample_variants(base, *sample, seed, max_variants) : enumerate_variants(base, max_variants);
  // Validate every variant before running any: a value may make the file malformed (a "$X" typo).
  for (const Variant& v : variants) load_scenario(file, v.values);
  // The folder belongs to this scenario from now on: its marker lists the variants --collect expects.
  const std::string dir = check_output_folder(out, FolderKind::kSweep, "--out").string();
  SweepMarker marker{base.name, fs::weakly_canonical(fs::absolute(file)).string(), {}};
  for (const Variant& v : variants) marker.variants.push_back(v.index);
  prepare_sweep_folder(dir, marker);
  if (plan) {
    const std::string self = fs::canonical("/proc/self/exe").string();
    for (const Variant& v : variants) {
      std::string cmd = self + " run " + shell_quote(fs::absolute(file).string()) + " --out " +
                        shell_quote((fs::absolute(out) / variant_dir(v)).string()) +
                        " --outputs events,summary,tasks,metrics,report";
      for (const auto& [name, value] : v.values) cmd += " --var " + shell_quote(name + "=" + value.dump());
      for (const std::string& c : cfg) cmd += " --cfg=" + shell_quote(c);
      if (policy) cmd += " --policy " + shell_quote(*policy);
      std::cout << cmd << "\n";
    }
    std::cerr << variants.size() << " commands; afterwards: " << self << " sweep --collect " << out << "\n";
    return 0;
  }
  std::size_t running = 0, failed = 0, unwritable = 0, next = 0, finished = 0;
  const bool tty = isatty(STDERR_FILENO);
  while (finished < variants.size()) {
    while (running < std::max(1u, jobs) && next < variants.size()) {
      const Variant& v = variants[next++];
      std::fflush(stdout);
      std::fflush(stderr);
      const pid_t pid = fork_tracked();
      if (pid < 0) throw std::runtime_error(std::string("cannot start a variant: ") + std::strerror(errno));
      if (pid == 0) {
        try {
          RunOptions options;
          options.simgrid_args = simgrid_args(cfg);
          _exit(run_to_folder(with_policy(load_scenario(file, v.values), policy), options,
                              (fs::path(dir) / variant_dir(v)).string(), {}, {}, true));
        } catch (const WriteError& e) {
          std::cerr << "dirsched: " << variant_dir(v) << ": " << e.what() << "\n";
          _exit(kExitCannotWrite);
        } catch (const std::exception& e) {
          std::cerr << "dirsched: " << variant_dir(v) << ": " << e.what() << "\n";
          _exit(2);
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
    if (tty) std::fprintf(stderr, "\r[dirsched] sweep: %zu/%zu variants done   ", finished, variants.size());
  }
  if (tty) std::fprintf(stderr, "\n");
  if (failed) {
    std::cerr << "dirsched: " << failed << " variant(s) failed to run"
              << (unwritable ? " (" + std::to_string(unwritable) + " could not write their outputs)" : "") << "\n";
    return unwritable ? kExitCannotWrite : 1;
  }
  return 0;
}

int cmd_collect(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  const std::vector<SweepRow> rows = collect(dir, &names);
  if (rows.empty()) {
    std::cerr << "dirsched: " << dir << ": no variant-* folders to collect\n";
    return 2;
  }
  const std::vector<std::size_t> order = rank(rows);
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  write_file_atomic(fs::path(d) / "sweep.csv", sweep_csv(names, rows));
  write_file_atomic(fs::path(d) / "sweep.svg", sweep_svg(rows, order));
  std::string pictures = "sweep.csv and sweep.svg";
  if (names.size() == 2) {
    write_file_atomic(fs::path(d) / "sweep-heatmap.svg", sweep_heatmap_svg(names, rows));
    pictures = "sweep.csv, sweep.svg and sweep-heatmap.svg";
  } else {
    std::error_code ec;
    fs::remove(fs::path(d) / "sweep-heatmap.svg", ec);  // an earlier sweep's, of two variables
  }
  std::cout << ranking_text(rows, order) << pictures << " in " << d << "/\n";
  // A sweep whose every variant lost tasks has no answer to give: say so in the exit status too.
  if (!rows[order.front()].clean) {
    std::cerr << "dirsched: no variant ran clean (every one has REJECTED, FAILED, POISONED or STUCK tasks)\n";
    return 1;
  }
  return 0;
}

// Redraws the pictures of a run folder from its events.jsonl (and summary.json, for lane order).
int cmd_render(const std::string& dir_arg) {
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
  nlohmann::json summary = nlohmann::json::object();
  const fs::path summary_path = fs::path(dir) / "summary.json";
  if (fs::exists(summary_path)) summary = read_output_json(summary_path.string());
  std::string note;
  std::map<std::string, std::string> files;
  try {
    const std::string text = read_file(events);
    check_output_jsonl(text, events.string());  // as strict as the loader: viz reads what passes
    const viz::RunView view = viz::parse_run(text, summary.empty() ? nullptr : &summary);
    files = viz::render_all(view, summary, {}, &note);
  } catch (const viz::VizError& e) {
    std::cerr << "dirsched: " << dir << "/" << e.what() << "\n";
    return 2;
  } catch (const nlohmann::json::exception& e) {
    std::cerr << "dirsched: " << summary_path.string() << ": a field has the wrong type (" << e.what() << ")\n";
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
  }
  add_to_run_marker(dir, names);
  for (const auto& [name, text] : files) write_file_atomic(fs::path(dir) / name, text);
  std::cout << "drew " << files.size() << " files in " << dir << "/"
            << (note.empty() ? "" : " (" + note + ")") << "\n";
  return 0;
}

// Exit status of check_one: 0 pass, 1 fail, 2 malformed, 4 ran but had no expect block to check.
constexpr int kNoExpect = 4;

std::string vars_text(const Scenario& s) {
  std::string o;
  for (const auto& [name, value] : s.assigned) o += (o.empty() ? "" : " ") + name + "=" + value.dump();
  return o;
}

int check_one(const std::string& file, const std::vector<std::string>& cfg, const VarAssignment& assignment,
              const PolicyFlag& policy) {
  try {
    Scenario scenario = with_policy(load_scenario(file, assignment), policy);
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
  int passed = 0, failed = 0, malformed = 0, unchecked = 0;
  for (const std::string& f : files) {
    int rc = 0;
    if (files.size() == 1) {
      rc = check_one(f, cfg, assignment, policy);
    } else {
      std::fflush(stdout);
      const pid_t pid = fork_tracked();
      if (pid == 0) _exit(check_one(f, cfg, assignment, policy));
      int status = 0;
      waitpid(pid, &status, 0);
      child_finished(pid);
      rc = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
    }
    if (rc == 0)
      ++passed;
    else if (rc == kNoExpect)
      ++unchecked;
    else if (rc == 2)
      ++malformed, ++failed;
    else {
      if (rc == 3) std::cout << "FAIL " << f << ": crashed\n";
      ++failed;
    }
  }
  std::cout << passed << " passed, " << failed << " failed";
  if (unchecked) std::cout << ", " << unchecked << " without expect (not counted as passed)";
  std::cout << "\n";
  if (failed) return malformed == failed && !unchecked ? 2 : 1;
  return unchecked ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  // First, before any thread: SIGINT, SIGTERM and SIGHUP go to the thread that removes temporaries.
  install_interrupt_cleanup();
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
      "or strace (strace.log in the runtime's [STRACE] grammar; never by default)");
  run->add_option("--cfg", cfg, "SimGrid configuration, passed through (e.g. --cfg=network/model:CM02)");
  bool check_invariants = false;
  run->add_flag("--check-invariants", check_invariants,
                "Check the contract's invariants after every transition");
  PolicyFlag policy;
  const char* policy_help = "seed or head_reservation, overriding the scenario's scheduler.policy";
  run->add_option("--policy", policy, policy_help);
  std::vector<std::string> run_vars;
  run->add_option("--var", run_vars,
                  "NAME=VALUE (JSON) for a sweep variable; others take their first candidate");
  // Strict numbers (cli/options.hpp): checked on the text, before CLI11 converts it (it wraps -1).
  const CLI::Validator any_seed = cli::whole_number(0, UINT64_MAX);
  run->get_option("--seed")->check(any_seed);
  std::string run_engine = "sim";
  run->add_option("--engine", run_engine, "sim (SimGrid, the default) or threads (real threads, wall-clock time)")
      ->check(CLI::IsMember({"sim", "threads"}));
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
  sweep->add_option("--sample", sweep_sample, "Run a seeded random sample of K variants")
      ->check(cli::whole_number(1, kMaxMaxVariants));
  sweep->add_option("--seed", sweep_seed, "Seed of --sample")->check(any_seed);
  sweep->add_option("--max-variants", sweep_max_variants,
                    "Refuse a sweep of more variants than this (default 10000)")
      ->check(cli::whole_number(1, kMaxMaxVariants));
  sweep->add_flag("--plan", sweep_plan,
                  "Print one self-contained command per variant instead of running them");
  sweep->add_option("--collect", collect_dir,
                    "Build sweep.csv, sweep.svg and the ranking from a folder of variant runs");
  sweep->add_option("--cfg", cfg, "SimGrid configuration, passed through");
  sweep->add_option("--policy", policy, policy_help);

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
  check->add_option("--policy", policy, policy_help);
  std::vector<std::string> check_vars;
  check->add_option("--var", check_vars,
                    "NAME=VALUE (JSON) for a sweep variable; others take their first candidate");

  CLI::App* render =
      app.add_subcommand("render", "Redraw the pictures of a run folder from its events.jsonl");
  std::string render_dir;
  render->add_option("run_dir", render_dir, "A folder written by dirsched run")->required();

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
         "Stop once the heap in use passes this size, e.g. 512M or 2G (default 2G)")
      ->check(cli::byte_size(std::uint64_t{1} << 20, std::uint64_t{1} << 40));
  exp->add_flag("--failures", explore_options.failures,
                 "Let any member also fail (a member the file marks `fail: true` fails on every path anyway)");
  exp->add_option("--policy", policy, policy_help);
  std::vector<std::string> explore_vars;
  exp->add_option("--var", explore_vars,
                  "NAME=VALUE (JSON) for a sweep variable; others take their first candidate");
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
  CLI::Option* imp_pid = imp_strace->add_option("--pid", import_options.pid, "The scheduler process to import");
  imp_strace->add_option("--level", import_options.level,
                         "The level word of the scheduler process (node, network1, network2, network3)")
      ->excludes(imp_pid);
  imp_strace->add_option("--run", import_options.runs, "Import only this run_id (repeatable)")
      ->check(cli::whole_number(1, INT64_MAX));
  CLI::Option* imp_deps = imp_strace->add_option("--deps", import_options.deps_file,
                                                 "A trace the Python front end recorded from the same orchestration");
  imp_strace->add_option("--infer-deps", import_options.infer_gap_us,
                         "Guess P -> T when T starts within GAP_US microseconds of P's end (marked as guesses)")
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
    app.exit(e);
    return 2;
  }
  try {
    if (std::find(cfg.begin(), cfg.end(), "help") != cfg.end()) {  // --cfg=help: SimGrid's options
      print_simgrid_help();
      return 0;
    }
    if (policy) parse_policy(*policy, "--policy");  // a typo stops here, before anything runs
    if (*run) {
      threads.on = run_engine == "threads";
      if (!(threads.time_scale >= 0)) {  // CLI::Range lets NaN through
        std::cerr << "dirsched run: --time-scale: expected a number in [0, 1e6]\n";
        return 2;
      }
      if (time_scale->count() && !threads.on) {
        std::cerr << "dirsched run: --time-scale applies to --engine threads only\n";
        return 2;
      }
      return cmd_run(run_file, out_dir, seed, outputs, cfg, check_invariants, run_vars, policy, threads);
    }
    if (*sweep) {
      if (!collect_dir.empty()) return cmd_collect(collect_dir);
      if (sweep_file.empty() || (sweep_out.empty())) {
        std::cerr << "dirsched sweep: give SCENARIO and --out DIR, or --collect DIR\n";
        return 2;
      }
      const int rc = cmd_sweep(sweep_file, sweep_out, sweep_jobs, sweep_sample, sweep_seed, sweep_max_variants,
                               sweep_plan, cfg, policy);
      return rc != 0 || sweep_plan ? rc : cmd_collect(sweep_out);
    }
    if (*compare) {
      // Exit status as diff(1): 0 the same, 1 different, 2 trouble (a missing or malformed folder).
      const Comparison c = compare_runs(compare_a, compare_b, compare_limit);
      std::cout << c.text;
      return c.same ? 0 : 1;
    }
    if (*imp) {
      if (import_options.pid && *import_options.pid < 0) {
        std::cerr << "dirsched import strace: --pid: expected a process id (not negative)\n";
        return 2;
      }
      if (!import_options.deps_file.empty())
        throw std::runtime_error("--deps: not built yet in this version (see docs/howto-import-a-real-run.md)");
      import_options.progress = isatty(STDERR_FILENO);
      check_output_folder(import_out, FolderKind::kImport, "--out");  // before the log is read
      const ImportResult r = import_strace(import_options);
      write_import(r, import_out);
      std::cout << r.summary_text << "outputs in " << import_out
                << "/ (scenario.json, observed/, import-report.json)\n";
      return 0;
    }
    if (*fid) {
      const Fidelity f = measure_fidelity(fid_observed, fid_simulated, fid_bound);
      if (!fid_json.empty()) write_file_atomic(fid_json, f.json.dump(2) + "\n");
      std::cout << f.text;
      return f.within ? 0 : 1;
    }
    if (*check) return cmd_check(check_files, cfg, parse_vars(check_vars), policy);
    if (*render) return cmd_render(render_dir);
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
      write_scenario_json(s, std::cout);
      return 0;
    }
    if (*exp) {
      explore_options.por = !explore_no_por;
      const Scenario scenario = with_policy(load_scenario(explore_file, parse_vars(explore_vars)), policy);
      nlohmann::ordered_json result = explore(scenario, explore_options);
      if (!scenario.vars.empty()) result["vars"] = scenario.assigned;  // which candidate was explored
      std::cout << result.dump(2) << "\n";
      return result["violations"].empty() ? 0 : 1;
    }
  } catch (const ScenarioError& e) {
    std::cerr << "dirsched: " << e.what() << "\n";
    return 2;
  } catch (const ImportError& e) {
    std::cerr << "dirsched: " << e.what() << "\n";
    return 2;
  } catch (const OutputRefused& e) {
    std::cerr << "dirsched: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const WriteError& e) {
    std::cerr << "dirsched: " << e.what() << "\n";
    return kExitCannotWrite;
  } catch (const std::exception& e) {
    std::cerr << "dirsched: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
