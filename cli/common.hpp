// Helpers the subcommands share: lists and quoting, --var and --policy, --outputs, the option
// definitions several commands declare alike, and the checks on names a run folder can hold.
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "dirsched/scenario.hpp"

namespace dirsched::cli {

// Whether everything written to stdout so far reached it (flushed; a full disk or /dev/full fails here).
bool stdout_written();

std::vector<std::string> split_list(const std::string& s);
// --cfg values as SimGrid's arguments (--cfg=...).
std::vector<std::string> simgrid_args(const std::vector<std::string>& cfg);
std::string read_file(const std::filesystem::path& p);  // never blocks on a FIFO
std::string g6_text(double v);
std::string shell_quote(const std::string& s);
// This dirsched's own path as the first word of a plan's command (sweep --plan, optimize --plan-batches,
// the "afterwards" hints): quoted for the shell when it holds a space, `$`, a quote or any other
// character a shell would read (issue 53 F2); a plain path as it is.
std::string self_command();

// Whether `selected` (an --outputs list; empty: all) asks for `name`, and whether it names `name`
// itself (an output written only when named, such as paje).
bool named(const std::vector<std::string>& selected, const char* name);
bool wanted(const std::vector<std::string>& selected, const char* name);

// `--policy NAME` and `--switch NAME=on|off` (repeatable) given on the command line: the names are
// checked before anything runs; the loader applies them over the file (scenario.hpp PolicyChoice).
struct PolicyFlag {
  std::optional<std::string> policy;
  std::vector<std::string> switches;
  PolicyChoice choice() const { return parse_policy_choice(policy, switches); }
  // The same flags for a child command line (sweep's plan and cluster scripts).
  std::string args() const;
};

// Whether `name` is text a run folder can hold and a marker can list: valid UTF-8, no control character.
bool plain_text_name(const std::string& name);
// `s` as a JSON string, quotes included, control characters escaped and invalid UTF-8 replaced: a value
// that is refused for its bytes is shown on one line, readably.
std::string quoted(const std::string& s);

// The tail of a plan's `dirsched run` line for a variant: its --var values, the --cfg values and the
// --policy/--switch flags, each shell-quoted, then --plan-line (run's exit 0 on rejected submits).
std::string run_line_args(const VarAssignment& values, const std::vector<std::string>& cfg, const PolicyFlag& policy);

// `dir` without trailing slashes ("/" stays).
std::string without_trailing_slashes(std::string dir);

// A plan is one command per line (Slurm arrays and GNU parallel read it so): a path with a line break
// would split its commands.
void refuse_line_breaks(const std::string& command, std::initializer_list<std::string> paths);

// NAME=JSON pairs from --var.
VarAssignment parse_vars(const std::vector<std::string>& vars);
// --var-any: a --var value need not be one of the declared candidates.
extern bool g_var_any;
// load_scenario for run, check and explore: a --var value outside the variable's declared candidates
// is refused (a typo would run a variant no sweep has) unless --var-any.
Scenario load_chosen(const std::string& file, const VarAssignment& assignment, const PolicyChoice& choice);

// Whether the seed changes a run of SCENARIO: a jitter, or durations drawn from an empirical list.
// Without either every seed gives the same run, and replications are pointless.
bool seed_matters(const Scenario& scenario);

// The largest --max-variants and --sample: a sweep runs each variant in a process of its own.
constexpr std::size_t kMaxMaxVariants = 1000000;

// --outputs names at least one output: "" or "," would read as not given, that is every output.
extern const CLI::Validator outputs_list;
// Splits --outputs into data files and pictures; false (after a message) for an unknown name.
bool parse_outputs(const std::string& outputs, std::vector<std::string>& data_out,
                   std::vector<std::string>& pictures_out);

// fidelity --svg and render --observed: the two folders' timelines one above the other.
std::string stacked_timelines(const std::string& observed, const std::string& simulated);

// The options several commands declare alike, with one text each.
extern const char* const kVarHelp;     // --var
extern const char* const kVarAnyHelp;  // --var-any
CLI::Validator any_seed();             // --seed: a whole number in [0, 2^64-1]
void add_policy_flags(CLI::App& command, PolicyFlag& policy);  // --policy, --switch
void add_cfg(CLI::App& command, std::vector<std::string>& cfg);  // --cfg (run says more)
CLI::Option* add_picture_budget(CLI::App& command, double& budget_s);
void add_quiet(CLI::App& command, bool& quiet);

}  // namespace dirsched::cli
