// Helpers the subcommands share (common.hpp).
#include "common.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "dirsched/error.hpp"
#include "dirsched/escape.hpp"
#include "dirsched/json_reader.hpp"
#include "dirsched/output_folder.hpp"
#include "dirsched/outputs.hpp"
#include "dirsched/viz.hpp"
#include "options.hpp"

namespace dirsched::cli {

bool stdout_written() {
  std::cout.flush();
  return std::cout.good() && std::fflush(stdout) == 0 && !std::ferror(stdout);
}

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

std::string read_file(const std::filesystem::path& p) { return read_run_file(p.string()); }

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

std::string self_command() {
  const std::string self = std::filesystem::canonical("/proc/self/exe").string();
  // A path of plain characters stays as it was (the plans people already have); any other is quoted.
  const bool plain = !self.empty() && self.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                              "0123456789_/.+,:=@%-") == std::string::npos;
  return plain ? self : shell_quote(self);
}

std::string PolicyFlag::args() const {
  std::string out;
  if (policy) out += " --policy " + shell_quote(*policy);
  for (const std::string& sw : switches) out += " --switch " + shell_quote(sw);
  return out;
}

std::string run_line_args(const VarAssignment& values, const std::vector<std::string>& cfg, const PolicyFlag& policy) {
  std::string out;
  for (const auto& [name, value] : values) out += " --var " + shell_quote(name + "=" + value.dump());
  for (const std::string& c : cfg) out += " --cfg=" + shell_quote(c);
  // A variant's rejected submits or STUCK end are its answer, as in `sweep` (exit 0): a plan's line does
  // not fail on them (Slurm's afterok would hold back the collect step).
  return out + policy.args() + " --plan-line";
}

std::string without_trailing_slashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

bool named(const std::vector<std::string>& selected, const char* name) {
  return std::find(selected.begin(), selected.end(), name) != selected.end();
}

bool wanted(const std::vector<std::string>& selected, const char* name) {
  return selected.empty() || named(selected, name);
}

bool plain_text_name(const std::string& name) {
  if (name.empty() || !first_control_character(name).empty()) return false;
  try {
    (void)nlohmann::json(name).dump();  // throws on invalid UTF-8
  } catch (const nlohmann::json::exception&) {
    return false;
  }
  return true;
}

std::string quoted(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void refuse_line_breaks(const std::string& command, std::initializer_list<std::string> paths) {
  for (const std::string& path : paths)
    if (path.find_first_of("\n\r") != std::string::npos)
      throw BadInput(command + ": the path " + nlohmann::json(path).dump() +
                     " has a line break: a plan's commands are one line each; move or rename it");
}

namespace {

// What a --var VALUE that is not JSON was likely meant as: a list without its brackets (gb=4,5,6,7),
// else a string without its quotes. The hint is the whole option, quoted for the shell.
std::string var_hint(const std::string& name, const std::string& value) {
  if (value.find(',') != std::string::npos && nlohmann::json::accept("[" + value + "]"))
    return "a list is written in brackets: --var " + shell_quote(name + "=[" + value + "]");
  const std::string as_string = nlohmann::json(value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return "a value is JSON; a string is quoted: --var " + shell_quote(name + "=" + as_string);
}

}  // namespace

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
      throw BadInput(std::string(e.what()) + " (" + var_hint(v.substr(0, eq), v.substr(eq + 1)) + ")");
    }
  }
  return out;
}

bool g_var_any = false;

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

bool seed_matters(const Scenario& scenario) {
  for (const CallableSpec& c : scenario.callables)
    if ((c.cost.jitter.kind != Jitter::Kind::kNone && c.cost.jitter.rel > 0) || c.cost.empirical.size() > 1) return true;
  return false;
}

const CLI::Validator outputs_list(
    [](std::string& text) -> std::string {
      return split_list(text).empty() ? "'" + text + "' names no output (leave --outputs out for all of them)" : "";
    },
    "", "list of outputs");

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

const char* const kVarHelp = "NAME=VALUE (JSON) for a sweep variable; others take their first candidate";
const char* const kVarAnyHelp = "Let a --var value be outside the declared candidates";

CLI::Validator any_seed() { return cli::whole_number(0, UINT64_MAX); }

void add_policy_flags(CLI::App& command, PolicyFlag& policy) {
  command.add_option("--policy", policy.policy,
                     "The runtime version: seed, head_reservation, current or upto:N (a PR of the ladder, "
                     "docs/versions.md), overriding the scenario's scheduler.policy and scheduler.switches");
  command
      .add_option("--switch", policy.switches,
                  "NAME=on|off: one switch of the ladder over the policy (repeatable; wins over the file)")
      ->take_all()
      ->expected(1)
      ->allow_extra_args(false);
}

void add_cfg(CLI::App& command, std::vector<std::string>& cfg) {
  command.add_option("--cfg", cfg, "SimGrid configuration, passed through");
}

CLI::Option* add_picture_budget(CLI::App& command, double& budget_s) {
  return command
      .add_option("--picture-budget", budget_s,
                  "Seconds each picture may take to draw (default 5): past them a smaller one, noted")
      ->check(cli::real_number(0, 3600));
}

void add_quiet(CLI::App& command, bool& quiet) {
  command.add_flag("--quiet", quiet, "No progress line on stderr (it shows only on a terminal anyway)");
}

}  // namespace dirsched::cli
