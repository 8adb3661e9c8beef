// Scenario files: the user-facing input of the testbed (../shared/docs/scenario-format.md).
//
// load_scenario() reads and checks a whole file before anything runs: every key is known, every
// value has its type, every callable, buffer and tag named by an op exists, task names are unique,
// per-member lists have the member count. A fault is a ScenarioError naming the file and the JSON
// path (`trace[3].workers[1]`); the CLI prints it on one line and exits with status 2.
//
// Worker ids are the exception, on purpose: `true`, `1.0`, `"1"`, `null` or -1 where an id belongs are
// not malformed files but submits the core refuses (worker_not_integer, worker_negative, ...), so
// they load as WorkerArg values and the replay records the rejection.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "dirsched/ids.hpp"
#include "dirsched/json_reader.hpp"  // ScenarioError
#include "dirsched/registry.hpp"
#include "dirsched/scheduler.hpp"
#include "dirsched/switches.hpp"
#include "dirsched/time_limit.hpp"

namespace dirsched {

// Limits of a scenario (docs/limits.md, docs/scenario-format.md). Every simulated time a file gives,
// and every sum of them a run can form, stays at most kMaxTimeS = 2^32 s (time_limit.hpp). The loader
// checks each value and a serial upper bound of the makespan (time_budget in scenario.cpp); a file that
// breaks either is refused.
inline constexpr double kMaxBytes = 9007199254740992.0;  // 2^53: every byte count a double holds exactly
inline constexpr double kMaxFlops = 1e18;                // one callable's flops
inline constexpr std::size_t kMaxWorkers = 65536;        // NEXT_LEVEL workers, and SUB workers
inline constexpr std::size_t kMaxMembers = 65536;        // members of one group
inline constexpr std::size_t kMaxTasks = 100000000;      // submits of one trace (generated or not)
// Group members of one trace, all its groups together: 65,536 per group would let 1e8 submits ask for
// 6.5e12. The same bound as a generate block's groups x size.
inline constexpr std::size_t kMaxTotalMembers = 100000000;
// The largest factor a jitter can draw: uniform 1 + rel; normal 1 + 38 rel (the simulator's
// Box-Muller draw never exceeds 37.2 standard deviations).
inline constexpr double kNormalJitterSigmas = 38;

struct Jitter {
  enum class Kind { kNone, kUniform, kNormal } kind = Kind::kNone;
  double rel = 0;  // uniform: factor in [1-rel, 1+rel]; normal: standard deviation as a fraction
};

// A group's members exchanging data among the group's targets after they compute (`collective`):
// simulated as transfers between the members' hosts (docs/simulation.md, "Collectives").
struct Collective {
  enum class Kind { kNone, kAllreduce, kAllgather, kBroadcast };
  Kind kind = Kind::kNone;
  double bytes = 0;  // allreduce: each member's buffer; allgather: the gathered total; broadcast: the message
};

struct Cost {
  std::optional<double> duration_s;
  // `"duration": {"empirical": [...]}`: each member draws one of these seconds, uniformly, from the
  // run's seeded stream (an imported callable's observed durations). Empty: not given.
  std::vector<double> empirical;
  std::optional<double> flops;
  Jitter jitter;
  double input_bytes = 0;
  double output_bytes = 0;
  Collective collective;
  // `prepare_s` (staging, #1583/#1587): seconds a member prepares on its worker before its duration
  // (not jittered). 0: none.
  double prepare_s = 0;
};

struct CallableSpec {
  std::string name;
  Namespace ns = Namespace::kLocalPython;
  std::optional<std::vector<WorkerId>> eligible;
  Cost cost;
};

struct BufferSpec {
  std::string name;
  double bytes = 0;
  Memory memory = Memory::kHost;
  std::optional<WorkerId> owner;
};

struct WorkerSpec {
  WorkerId id{0};
  WorkerKind kind = WorkerKind::kLocalChip;
  std::string host;
  // staging (#1583): mailbox frames, 1 or 2 (local kinds only); prepare_overlap (#1587, needs 2): a
  // staged member prepares while the worker's running member executes.
  std::uint32_t frames = 1;
  bool prepare_overlap = false;
};

// workers.mpi_groups[]: registered remote workers forming one MPI group, in rank order.
struct MpiGroupSpec {
  std::string name;
  std::vector<WorkerId> ranks;
};

struct ArgSpec {
  std::optional<std::size_t> buffer;  // index into Scenario::buffers; nullopt for a scalar
  Tag tag = Tag::kNoDep;
  std::optional<ByteRange> range;  // `range`: bytes [begin, end) of the buffer; none: the whole buffer
};

// kRun and kRaise come last: generated traces and their writer (generate.cpp) know the first seven.
enum class OpKind { kSubmitNextLevel, kSubmitGroup, kSubmitSub, kSubmitSubGroup, kBatch, kSleep, kDrain, kRun, kRaise };

struct OpSpec {
  OpKind kind = OpKind::kDrain;
  std::string path;  // "trace[3]" or "trace[3].ops[1]"
  std::optional<double> at_s;
  // Submits.
  std::string task;
  std::size_t callable = 0;
  std::optional<WorkerArg> worker;
  std::optional<std::vector<WorkerArg>> workers;
  std::vector<std::vector<ArgSpec>> args;  // one list per member
  // Per member, or empty when every member takes the callable's cost and succeeds (generated traces
  // leave them empty: two allocations a task saved). Read them through the two accessors below.
  std::vector<std::optional<double>> duration_s;  // nullopt: the callable's cost
  std::vector<bool> fail;
  std::vector<std::optional<double>> prepare_s;  // `prepare_s`, per member; nullopt: the callable's
  std::optional<double> member_duration(std::size_t m) const {
    return m < duration_s.size() ? duration_s[m] : std::nullopt;
  }
  std::optional<double> member_prepare(std::size_t m) const {
    return m < prepare_s.size() ? prepare_s[m] : std::nullopt;
  }
  bool member_fails(std::size_t m) const { return m < fail.size() && fail[m]; }
  // Sleep, batch and run (a run's `ops` are its callback's ops).
  double sleep_s = 0;
  std::vector<OpSpec> ops;
  // Batch: `between_passes`, its submits land inside the next scheduler iteration, after its group
  // pass and before its singles pass (Scheduler::land_between_passes).
  bool between_passes = false;
  // Run: its name, unique in the file. Raise: its message (the run's error).
  std::string run;
  std::string message;
};

struct FaultSpec {
  std::string host;  // exactly one of host and link
  std::string link;
  double off_at_s = 0;
  std::string path;
};

struct GenerateSpec;
class TraceFile;

struct Scenario {
  std::string file;  // as given
  std::string name;
  std::string description;
  std::uint64_t seed = 0;
  std::string platform;  // resolved path, empty for the default platform
  std::string scheduler_host = "host0";
  double iteration_cost_s = 0;
  double dispatch_cost_s = 0;
  // scheduler.dispatch_cost_by_kind_s: the dispatch cost of a member sent to a target of one kind
  // (local_chip, local_worker, remote, then sub), in place of dispatch_cost_s; a kind not given takes
  // dispatch_cost_s. Members go out one after another on the scheduler, each after its own cost.
  static constexpr const char* kDispatchCostKinds[] = {"local_chip", "local_worker", "remote", "sub"};
  std::optional<double> dispatch_cost_by_kind_s[4];
  // The cost of a dispatch to a target of kind `kind` (WorkerKind's index, or 3 for SUB).
  double dispatch_cost_for(std::size_t kind) const { return dispatch_cost_by_kind_s[kind].value_or(dispatch_cost_s); }
  double largest_dispatch_cost_s() const {
    double most = 0;
    for (std::size_t k = 0; k < 4; ++k) most = std::max(most, dispatch_cost_for(k));
    return most;
  }
  bool any_dispatch_cost_by_kind() const {
    for (const auto& c : dispatch_cost_by_kind_s)
      if (c && *c > 0) return true;
    return false;
  }
  // The runtime version (dirsched/switches.hpp): the preset's name as written back (scheduler.policy,
  // or --policy; "upto:#1565" reads "upto:1565"), and the effective switches: the preset, then
  // scheduler.switches (dropped under --policy), then --switch. Never one the testbed has not built.
  std::string policy = "seed";
  Switches switches;
  // Some arg of the trace names a `range` (view_deps has something to act on).
  bool any_range = false;
  double stall_report_s = 5;      // scheduler.stall_report_s
  std::uint32_t pipeline_depth = 2;  // scheduler.pipeline_depth (whole_run_fifo's admission: 1 or 2)
  bool fail_fast = true;          // scheduler.fail_fast
  std::vector<WorkerSpec> next_level;
  std::vector<std::string> sub_hosts;  // one per SUB worker
  std::vector<MpiGroupSpec> mpi_groups;  // workers.mpi_groups
  std::vector<CallableSpec> callables;
  std::vector<BufferSpec> buffers;
  bool abort_on_reject = false;
  std::vector<OpSpec> trace;
  // True when the trace holds `run` ops (then its top level holds only run, sleep and drain ops). A
  // trace without one is one run named "main" whose callback is the whole trace.
  bool has_runs = false;
  // Every submit op of the trace, in trace order, batches and runs opened (a trace held whole).
  template <typename F>
  void for_each_submit(F&& f) const {
    auto visit = [&](const OpSpec& op, auto& self) -> void {
      if (!op.task.empty()) f(op);
      for (const OpSpec& inner : op.ops) self(inner, self);
    };
    for (const OpSpec& op : trace) visit(op, visit);
  }
  // A `generate` block the loader kept as a spec (dirsched/generate.hpp): `trace` is then empty and
  // the Replay generates the ops one at a time. Null for a trace file or after materialize_trace().
  std::shared_ptr<const GenerateSpec> generate;
  // A trace file read as the replay goes (dirsched/trace_file.hpp): `trace` is then empty and the
  // Replay reads the ops from the file one at a time. Null for a full read (parse_scenario, or a file
  // the streamed load passed on) or after materialize_trace().
  std::shared_ptr<const TraceFile> trace_file;
  std::vector<FaultSpec> faults;
  nlohmann::json expect;  // checked against the run by check_expectations()
  // Sweep variables: name -> candidate values, and the value each took in this load (the first
  // candidate unless an assignment chose another).
  std::map<std::string, std::vector<nlohmann::json>> vars;
  std::map<std::string, nlohmann::json> assigned;
  // `"replicates": N`: how many seeds (seed, seed + 1, ...) `sweep` runs every variant under (1: one).
  std::size_t replicates = 1;
  // Candidates a `{"choose": K, "from": [...]}` variable left out (ids no NEXT_LEVEL worker has, or a
  // worker kind the callables that use it cannot run on), by variable.
  std::map<std::string, std::size_t> vars_left_out;

  std::size_t submit_count() const;
  // Builds the core's registry (workers in list order, SUB pool, callables in file order).
  Registry registry() const;
};

// The core's options from a scenario (its keys under `scheduler`), and a Scheduler built with them.
// The single place every driver takes them from: the SimGrid driver, the explorer and the fuzz
// target build their core with make_scheduler(); the threads engine with scheduler_options(), its
// stall_report_s scaled to wall seconds (runtime/src/threads_engine.cpp). A new core option is one
// key in the loader's `scheduler` block, one Scenario field and one line in scheduler_options()
// (scenario/src/scheduler_options.cpp).
Scheduler::Options scheduler_options(const Scenario& scenario);
std::unique_ptr<Scheduler> make_scheduler(const Scenario& scenario, Observer* observer = nullptr);
// The runtime version chosen on the command line (`--policy NAME`, `--switch NAME=on|off`, repeatable):
// it wins over the file. A --policy replaces scheduler.policy and drops scheduler.switches (the
// command line names the whole version); the --switch flags apply last, in order.
struct PolicyChoice {
  std::optional<std::string> policy;
  std::vector<std::pair<Switch, bool>> switches;
  std::vector<std::string> switch_flags;  // as given, for messages
  bool empty() const { return !policy && switches.empty(); }
};
// Checks the names (a typo stops the command before anything runs): BadInput with one
// line naming the flag and what is known otherwise. Whether the switches are built is checked when
// a scenario loads with the choice.
PolicyChoice parse_policy_choice(const std::optional<std::string>& policy, const std::vector<std::string>& switch_flags);
// The switches that are on but have nothing to act on in this scenario (summary.json `inert`), in
// table order: view_deps without a `range` arg, the MPI switches without workers.mpi_groups, staging
// without whole_run_fifo or a two-frame worker, busy_poll without edge_triggered_wake.
std::vector<Switch> inert_switches(const Scenario& scenario);

// `assignment` picks a value for some sweep variables (name -> value); the others take their first
// candidate. A value need not be a candidate (sweep --plan passes values on the command line).
// load_scenario() streams the trace (Scenario::trace_file; the file is checked whole first, and read
// whole instead wherever the streamed load is not sure: dirsched/trace_file.hpp) unless `read` is
// kFull or the environment has DIRSCHED_TRACE_READ=full; the two give the same runs, outputs and errors.
using VarAssignment = std::map<std::string, nlohmann::json>;
enum class TraceRead { kStreamed, kFull };
// `choice`: the command line's --policy / --switch, applied before the switches are checked (a file
// whose effective set turns on a switch this testbed has not built is refused, naming where it was
// turned on). With it, `expect` is `expect.by_policy.P` when the effective set is exactly preset P.
Scenario load_scenario(const std::string& file, const VarAssignment& assignment = {},
                       TraceRead read = TraceRead::kStreamed, const PolicyChoice& choice = {});
// A lower task limit than kMaxTasks, for a caller whose work must follow the size of its input rather
// than the counts a few bytes can ask for (the fuzz target, tests/fuzz/scenario_fuzz.cpp): a trace
// with more submits or group members, or a generate block that would make more tasks, edges or group
// members, is refused as one past kMaxTasks (kMaxTotalMembers) is, with the lower number in the
// message, before anything is made. A value above kMaxTasks changes nothing.
struct LoadLimits {
  std::size_t max_tasks = kMaxTasks;
};
Scenario parse_scenario(const nlohmann::json& doc, const std::string& file, const std::string& base_dir,
                        const VarAssignment& assignment = {}, const PolicyChoice& choice = {},
                        const LoadLimits& limits = {});

}  // namespace dirsched
