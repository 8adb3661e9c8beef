// `dirsched sweep`: every variant of a scenario's vars run and ranked, or printed as a plan; and what a
// front end that runs the variants itself asks of a sweep folder (--prepare, --replicate, --collect).
#include "verbs.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "collect.hpp"
#include "dirsched/selection.hpp"
#include "evaluate.hpp"
#include "dirsched/error.hpp"
#include "dirsched/json_reader.hpp"
#include "dirsched/output_folder.hpp"
#include "dirsched/progress.hpp"
#include "dirsched/sweep.hpp"
#include "error_kind.hpp"
#include "options.hpp"
#include "run_folder.hpp"

namespace dirsched::cli {
namespace {

// The largest --lines-per-task, and the array ids a default Slurm takes (MaxArraySize 1001: 0..1000).
constexpr std::size_t kMaxLinesPerTask = 1000000;
constexpr std::size_t kSlurmDefaultMaxArrayId = 1000;

// Runs every variant in a process of its own, `jobs` at once, into DIR/variant-NNNN: 0, or the exit
// status of a sweep with failed variants (1; 3 when one could not write).
int run_variant_processes(const std::string& file, const std::string& dir, const std::vector<Variant>& variants,
                          unsigned jobs, const std::vector<std::string>& cfg, const PolicyFlag& policy,
                          const std::vector<std::string>& data, const std::vector<std::string>& pictures,
                          double budget_s) {
  namespace fs = std::filesystem;
  std::size_t running = 0, failed = 0, unwritable = 0, next = 0, finished = 0;
  Progress::get().begin("sweep", static_cast<double>(variants.size()), "variants");
  std::string refused;
  while (running > 0 || (refused.empty() && next < variants.size())) {
    while (refused.empty() && running < std::max(1u, jobs) && next < variants.size()) {
      const Variant& v = variants[next++];
      std::fflush(stdout);
      std::fflush(stderr);
      const pid_t pid = fork_tracked();
      if (pid < 0) {  // the running variants are waited for first (thrown at once, they ran on as orphans)
        refused = system_refusal("start a variant");
        break;
      }
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
    if (running == 0) break;
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
  if (!refused.empty()) throw BadInput(refused);
  if (failed) {
    std::cerr << "dirsched: " << failed << " variant(s) failed to run"
              << (unwritable ? " (" + std::to_string(unwritable) + " could not write their outputs)" : "") << "\n";
    return unwritable ? kExitCannotWrite : 1;
  }
  return 0;
}

// What a failed sweep undoes (see cmd_sweep): in a folder it made, the marker, the variant folders and
// replicates.jsonl it wrote, then the folder when nothing else is there.
void release_sweep_folder(const std::string& dir, const std::vector<Variant>& variants, bool made_here) {
  namespace fs = std::filesystem;
  if (!made_here) {
    std::cerr << "dirsched: " << dir << ": the sweep folder (an earlier sweep's) keeps what this one ran before "
              << "the failure below; sweep into it again to run every variant\n";
    return;
  }
  std::error_code ec;
  for (const Variant& v : variants) fs::remove_all(fs::path(dir) / variant_dir(v), ec);
  fs::remove(fs::path(dir) / "replicates.jsonl", ec);
  fs::remove(fs::path(dir) / marker_name(FolderKind::kSweep), ec);
  fs::remove(dir, ec);  // only when empty
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
    const std::string self = self_command();  // quoted when the path needs it (issue 53 F2)
    SweepPlan lines;
    for (const Variant& v : variants) {
      std::string cmd = self + " run " + shell_quote(fs::absolute(file).string()) + " --out " +
                        shell_quote((fs::absolute(out) / variant_dir(v)).string()) + " --outputs " +
                        shell_quote(outputs.empty() ? "summary" : outputs);
      cmd += run_line_args(v.values, cfg, policy);
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
  // A sweep that fails after its claim (a descriptor or process limit refusing a pipe or a fork, exit 2;
  // a variant that could not write, exit 3) releases a folder it made: what it wrote there is removed, so
  // that nothing is left (issue 53 F19). A folder an earlier sweep made keeps the variants run so far,
  // and the message says so. A variant that failed to run (exit 1) is an answer: the folder stays.
  const bool made_here = !fs::exists(dir);
  claim();
  try {
    const int rc = run_variant_processes(file, dir, variants, jobs, cfg, policy, data, pictures, budget_s);
    if (rc == kExitCannotWrite) release_sweep_folder(dir, variants, made_here);  // exit 3: nothing left
    if (rc != 0) return rc;
    if (replicates > 1) {
      std::vector<Scenario> loaded;
      loaded.reserve(variants.size());
      for (const Variant& v : variants) loaded.push_back(load_scenario(file, v.values, TraceRead::kStreamed, policy.choice()));
      write_replicates(dir, loaded, variants, replicates, jobs, simgrid_args(cfg));
    }
  } catch (...) {
    release_sweep_folder(dir, variants, made_here);
    throw;
  }
  return 0;
}

// `sweep FILE --out DIR --select-best DELTA [--pcs P]`: Kim and Nelson's KN (dirsched/selection.hpp) on
// the objective's first key, replicate r of every variant run with seed + r (common random numbers) in
// the evaluation pool; DIR (a sweep folder that lists no variant folders) gets selection.json.
// Kim and Nelson's KN over `loaded` (variants[i]'s scenario), into DIR/selection.json; `claim` (when
// given) makes DIR a sweep folder once the checks passed. `where` names the input in messages.
int run_selection(const std::string& where, const std::vector<Scenario>& loaded, const std::vector<Variant>& variants,
                  const SelectionConfig& config, unsigned jobs, const std::vector<std::string>& cfg,
                  const RankChoice& choice, const std::function<std::string()>& claim, std::string dir) {
  namespace fs = std::filesystem;
  bool jitter = false;
  for (const Scenario& s : loaded) {
    jitter |= seed_matters(s);
    if (s.seed != loaded.front().seed) {
      std::cerr << "dirsched: " << where << ": seed: the variants have different seeds (a sweep variable in \"seed\"); "
                << "--select-best runs every variant under the same seeds; take the variable out of \"seed\"\n";
      return 2;
    }
  }
  if (!jitter) {
    std::cerr << "dirsched: " << where << ": no callable has a jitter or an empirical duration: the scenario is "
              << "deterministic and one run per variant tells the best exactly; run the sweep without --select-best\n";
    return 2;
  }
  if (claim) dir = claim();
  const std::size_t key = choice.objective.front();
  std::vector<std::size_t> clean_reps(variants.size(), 0);
  const std::vector<std::string> sim_args = simgrid_args(cfg);
  const Sampler sample = [&](const std::vector<std::pair<std::size_t, std::size_t>>& asks) {
    std::vector<Evaluation> evals;
    for (const auto& [i, r] : asks) evals.push_back({&loaded[i], loaded[i].seed + r, variants[i]});
    const std::vector<SweepRow> rows = evaluate_all(evals, jobs, sim_args);
    std::vector<double> values;
    for (std::size_t k = 0; k < rows.size(); ++k)
      values.push_back(metric_value(rows[k], key)), clean_reps[asks[k].first] += rows[k].clean;
    return values;
  };
  const SelectionResult res = select_best(variants.size(), config, sample);
  const Variant& best = variants[res.best];
  const std::string method =
      "KN, the fully sequential procedure of Kim and Nelson (2001, ACM TOMACS 11(3)) on " +
      std::string(metric_def(key).name) + " (smaller is better): a first stage of " + std::to_string(config.first_stage) +
      " replicates, then one more replicate per stage of every variant still in contention; replicate r of every "
      "variant runs with seed + r (common random numbers). Whenever the best is better than every other by at "
      "least the indifference zone, it is selected with probability at least pcs";
  nlohmann::json vals = nlohmann::json::object(), per = nlohmann::json::array();
  for (const auto& [k, v] : best.values) vals[k] = v;
  for (std::size_t i = 0; i < variants.size(); ++i)
    per.push_back({{"variant", variants[i].index}, {"replicates", res.replicates[i]}, {"clean_replicates", clean_reps[i]}});
  const nlohmann::json j = {
      {"best", best.index},
      {"vars", vals},
      {"pcs", config.pcs},
      {"indifference", config.delta},
      {"objective", metric_def(key).name},
      {"method", method},
      {"first_stage", config.first_stage},
      {"seed", loaded.front().seed},
      {"replicates", per},
      {"runs", res.runs},
      {"fixed_n", {{"method", "Nelson and Matejcik (1995, Management Science 41(12)) Bonferroni two-stage design from "
                               "the same first stage: N = max(n0, ceil((t(1 - (1 - pcs)/(k - 1), n0 - 1) S / delta)^2)) "
                               "per variant, S the largest first-stage sd of a pairwise difference"},
                   {"per_variant", res.fixed_n},
                   {"runs", res.fixed_runs}}}};
  write_file_atomic(fs::path(dir) / "selection.json", j.dump(2) + "\n");
  const bool clean = clean_reps[res.best] == res.replicates[res.best];
  std::string values;
  for (const auto& [k, v] : best.values) values += (values.empty() ? "" : ", ") + k + "=" + v.dump();
  std::cout << "selected: variant " << best.index << " (" << values << ")" << (clean ? "" : " NOT CLEAN in some replicates")
            << ", with probability at least " << g6_text(config.pcs) << " when it is better than every other by "
            << g6_text(config.delta) << " (" << metric_def(key).name << ")\n"
            << "KN (Kim and Nelson 2001): " << res.runs << " runs over " << variants.size() << " variants, against "
            << res.fixed_runs << " for a fixed-N design of the same guarantee (Nelson-Matejcik Bonferroni, "
            << res.fixed_n << " per variant)\nselection.json in " << without_trailing_slashes(dir) << "/\n";
  return clean ? 0 : 1;
}

// `sweep FILE --out DIR --select-best DELTA`: DIR becomes a sweep folder listing no variant folders (it
// holds selection.json).
int cmd_select(const std::string& file, const std::string& out, const SelectionConfig& config, unsigned jobs,
               const std::vector<Variant>& variants, const std::vector<std::string>& cfg, const PolicyFlag& policy,
               const RankChoice& choice) {
  namespace fs = std::filesystem;
  std::vector<Scenario> loaded;
  for (const Variant& v : variants) loaded.push_back(load_scenario(file, v.values, TraceRead::kStreamed, policy.choice()));
  const auto claim = [&] {
    const std::string dir = check_output_folder(out, FolderKind::kSweep, "--out").string();
    prepare_sweep_folder(dir, SweepMarker{loaded.front().name, fs::weakly_canonical(fs::absolute(file)).string(), {}});
    return dir;
  };
  return run_selection(file, loaded, variants, config, jobs, cfg, choice, claim, "");
}

// Removes DIR/replicates.jsonl when it is there (a failure to is a write error, exit 3).
void remove_replicates(const std::string& dir) {
  const std::filesystem::path path = std::filesystem::path(dir) / "replicates.jsonl";
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (ec) throw_write_error(path, ec.value());
}

// `sweep --prepare DIR --name N --origin O --variants K`: DIR becomes the sweep folder of N (from O) with
// variants 0..K-1, as `sweep` makes it before it runs anything (prepare_sweep_folder: another
// scenario's folder refused, the stale variant folders removed when they hold nothing of the user's);
// the front end then runs each variant into DIR/variant-NNNN and calls `--collect`.
int cmd_prepare(const std::string& out, const std::string& name, const std::string& origin, std::size_t count) {
  for (const auto& [flag, value] : {std::pair{"--name", &name}, {"--origin", &origin}})
    if (!plain_text_name(*value))
      throw BadInput(std::string("sweep --prepare ") + flag + " " + quoted(*value) +
                     ": expected a non-empty text (UTF-8 without control characters)");
  const std::string dir = check_output_folder(out, FolderKind::kSweep, "--prepare").string();
  SweepMarker marker{name, origin, {}};
  for (std::size_t i = 0; i < count; ++i) marker.variants.push_back(i);
  prepare_sweep_folder(dir, marker);
  remove_replicates(dir);  // an earlier replicated CLI sweep's replicates: --collect would mix them in
  return 0;
}

// `sweep --replicate DIR --replicates N`: for a front end that ran every variant of sweep folder DIR
// itself (Python's Testbed.sweep, each variant folder keeping its scenario.json): replicates 1..N-1 of
// each, as a replicated `sweep` runs them (write_replicates), so that --collect ranks over N paired
// seeds. Every variant must be complete and all must share one seed; a deterministic set of variants
// needs no replicates (said, and none written).
// With `select` (--select-best), Kim and Nelson's KN runs over the variant folders' scenarios instead, into
// DIR/selection.json (Python's Testbed.sweep(..., select_best=DELTA)).
int cmd_replicate(const std::string& dir_arg, std::size_t replicates, unsigned jobs, const std::vector<std::string>& cfg,
                  const PolicyFlag& policy, const std::optional<SelectionConfig>& select, const RankChoice& choice) {
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
  if (select) {
    for (Variant& v : variants) {  // selection.json's vars: the values variant.json records
      const nlohmann::json j = read_json_file((fs::path(dir) / variant_dir(v) / "variant.json").string());
      if (j.contains("vars") && j["vars"].is_object())
        for (auto it = j["vars"].begin(); it != j["vars"].end(); ++it) v.values[it.key()] = it.value();
    }
    return run_selection(dir, loaded, variants, *select, jobs, cfg, choice, {}, dir);
  }
  if (replicates > 1 && jitter) {
    // Replaces an earlier --replicate's file atomically: a failed evaluation leaves it as it was.
    write_replicates(dir, loaded, variants, replicates, jobs, simgrid_args(cfg));
    return 0;
  }
  if (replicates > 1)
    std::cerr << "dirsched: " << dir << ": no callable has a jitter or an empirical duration: the variants are "
              << "deterministic and need no replications (every seed gives the same run); 1 replicate\n";
  remove_replicates(dir);  // an earlier --replicate's: one replicate now, so none
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

struct SweepArgs {
  std::string file, out, collect_dir, objective, pareto, outputs;
  unsigned jobs = 2;
  std::optional<std::size_t> sample, replicates;
  std::uint64_t seed = 0;
  std::size_t max_variants = kDefaultMaxVariants, lines_per_task = 1;
  bool plan = false, missing = false;
  std::string prepare_dir, prepare_name, prepare_origin, replicate_dir;
  std::size_t prepare_variants = 0;
  double select_best = 0, pcs = 0.95;
  std::size_t first_stage = 10;
  CLI::Option *sample_option = nullptr, *plan_option = nullptr, *replicates_option = nullptr,
              *outputs_option = nullptr, *budget_option = nullptr, *lines_per_task_option = nullptr,
              *prepare_option = nullptr, *prepare_name_option = nullptr, *prepare_origin_option = nullptr,
              *replicate_option = nullptr, *prepare_variants_option = nullptr;
} args;

void declare(CLI::App& sweep, Common& common) {
  sweep.add_option("scenario", args.file, "Scenario JSON file with a vars block");
  sweep.add_option("--out", args.out, "Folder for variant-NNNN run folders, sweep.csv and sweep.svg");
  sweep.add_option("-j,--jobs", args.jobs, "Variants run at once (processes)")->check(cli::whole_number(1, 256));
  args.sample_option = sweep.add_option("--sample", args.sample, "Run a seeded random sample of K variants")
                           ->check(cli::whole_number(1, kMaxMaxVariants));
  sweep.add_option("--seed", args.seed, "Seed of --sample")->check(any_seed());
  sweep.add_option("--max-variants", args.max_variants, "Refuse a sweep of more variants than this (default 10000)")
      ->check(cli::whole_number(1, kMaxMaxVariants));
  args.plan_option =
      sweep.add_flag("--plan", args.plan, "Print one self-contained command per variant instead of running them");
  sweep.add_option("--collect", args.collect_dir,
                   "Build sweep.csv, sweep.svg and the ranking from a folder of variant runs");
  args.replicates_option =
      sweep.add_option("--replicates", args.replicates,
                       "Run every variant under N seeds (seed, seed+1, ...: the same for every variant); default "
                       "the scenario's \"replicates\", else 1")
          ->check(cli::whole_number(1, 10000));
  sweep.add_option("--objective", args.objective,
                   "Ranking keys after clean, in order, comma-separated (default makespan,idle_target_wait,"
                   "group_wait_max,single_wait_max,single_wait_mean)");
  sweep.add_option("--pareto", args.pareto, "Two metrics A,B: print their non-dominated variants and draw them "
                                            "(sweep-pareto.svg; default makespan,group_wait_max)");
  add_cfg(sweep, common.cfg);
  add_policy_flags(sweep, common.policy);
  args.outputs_option = sweep.add_option("--outputs", args.outputs,
                                         "What each variant writes, as run --outputs (must include summary; default "
                                         "all; with --plan: summary, what --collect reads; variant.json always)")
                            ->check(outputs_list);
  args.budget_option = add_picture_budget(sweep, common.picture_budget);
  add_quiet(sweep, common.quiet);
  args.lines_per_task_option =
      sweep.add_option("--lines-per-task", args.lines_per_task,
                       "--plan: plan lines per Slurm array task, for the sbatch line it prints (default 1)")
          ->check(cli::whole_number(1, kMaxLinesPerTask));
  sweep.add_flag("--missing", args.missing,
                 "With --collect: print the plan lines of the variants still to run, nothing else");
  args.prepare_option = sweep.add_option(
      "--prepare", args.prepare_dir,
      "Make DIR the sweep folder of --name and --origin with --variants N, for a front end that runs the "
      "variants itself (Python's Testbed.sweep): the folder rules of a sweep, nothing run");
  args.prepare_name_option = sweep.add_option("--name", args.prepare_name, "--prepare: the scenario's name");
  args.prepare_origin_option =
      sweep.add_option("--origin", args.prepare_origin, "--prepare: where the variants come from (python:FUNCTION)");
  args.replicate_option = sweep.add_option(
      "--replicate", args.replicate_dir,
      "For a front end that ran every variant of sweep folder DIR itself (Python's Testbed.sweep): run "
      "replicates 1..N-1 of each (--replicates N) from the scenario.json its folder keeps, for --collect");
  sweep.add_option("--select-best", args.select_best,
                   "Select the best variant with a guarantee (Kim and Nelson's KN): DELTA, the difference worth "
                   "finding, in the first objective key's unit; writes selection.json")
      ->check(cli::real_number(1e-12, 1e300));
  sweep.add_option("--pcs", args.pcs, "--select-best: the probability of correct selection (default 0.95)")
      ->check(cli::real_number(0.5, 0.999999));
  sweep.add_option("--first-stage", args.first_stage, "--select-best: replicates of every variant first (default 10)")
      ->check(cli::whole_number(2, 10000));
  args.prepare_variants_option =
      sweep.add_option("--variants", args.prepare_variants, "--prepare: the variant count")
          ->check(cli::whole_number(1, kMaxMaxVariants));
}

int run(CLI::App& sweep, Common& common) {
  RankChoice choice;
  if (!parse_rank_choice(args.objective, args.pareto, choice)) return 2;
  if (args.prepare_option->count() || args.prepare_name_option->count() || args.prepare_origin_option->count() ||
      args.prepare_variants_option->count()) {
    if (!args.prepare_option->count() || !args.prepare_name_option->count() || !args.prepare_origin_option->count() ||
        !args.prepare_variants_option->count() || !args.file.empty() || !args.out.empty() || !args.collect_dir.empty()) {
      std::cerr << "dirsched sweep: --prepare DIR goes with --name, --origin and --variants, and nothing else "
                   "of a sweep\n";
      return 2;
    }
    return cmd_prepare(args.prepare_dir, args.prepare_name, args.prepare_origin, args.prepare_variants);
  }
  if (args.replicate_option->count()) {
    // `sweep s.json --replicate 3` means --replicates 3: said so, not the rules of --replicate DIR.
    const std::string& r = args.replicate_dir;
    if (!r.empty() && r.size() <= 20 && std::all_of(r.begin(), r.end(), [](unsigned char c) { return std::isdigit(c); }) &&
        !std::filesystem::exists(r)) {
      std::cerr << "dirsched sweep: --replicate " << r << ": takes a sweep folder (there is no folder " << r
                << "); did you mean --replicates " << r << "?\n";
      return 2;
    }
    // With --replicates N, and what a run needs (-j, --cfg, the policy); nothing else of a sweep.
    const bool select = sweep.count("--select-best") > 0;
    for (const CLI::Option* o : {args.outputs_option, args.plan_option, args.sample_option, args.budget_option,
                                 args.lines_per_task_option, sweep.get_option("--seed"), sweep.get_option("--max-variants"),
                                 select ? args.replicates_option : sweep.get_option("--objective"),
                                 sweep.get_option("--pareto")})
      if (o->count()) {
        std::cerr << "dirsched sweep: " << o->get_name() << " has no effect with --replicate (it runs replicates "
                  << "only; the ranking flags go to --collect)\n";
        return 2;
      }
    if ((!args.replicates && !select) || !args.file.empty() || !args.out.empty() || !args.collect_dir.empty() ||
        args.missing) {
      std::cerr << "dirsched sweep: --replicate DIR goes with --replicates N or --select-best DELTA (and -j, --cfg, "
                   "--policy, --switch), not with a scenario, --out or --collect\n";
      return 2;
    }
    std::optional<SelectionConfig> config;
    if (select) config = SelectionConfig{args.select_best, args.pcs, args.first_stage};
    return cmd_replicate(args.replicate_dir, args.replicates.value_or(1), args.jobs, common.cfg, common.policy, config,
                         choice);
  }
  if (args.missing && args.collect_dir.empty()) {
    std::cerr << "dirsched sweep: --missing goes with --collect DIR\n";
    return 2;
  }
  if (args.lines_per_task_option->count() && !args.plan) {
    std::cerr << "dirsched sweep: --lines-per-task goes with --plan\n";
    return 2;
  }
  // The ranking flags are --collect's: a plan prints them in the --collect line it suggests.
  std::string collect_flags;
  if (!args.objective.empty()) collect_flags += " --objective " + shell_quote(args.objective);
  if (!args.pareto.empty()) collect_flags += " --pareto " + shell_quote(args.pareto);
  if (!args.collect_dir.empty()) {
    // What only running variants means has no effect on a collect: refused, not ignored.
    for (const CLI::Option* o : {args.replicates_option, args.outputs_option, args.plan_option, args.sample_option,
                                 args.budget_option, sweep.get_option("--select-best"), sweep.get_option("--pcs"),
                                 sweep.get_option("--first-stage")})
      if (o->count()) {
        std::cerr << "dirsched sweep: " << o->get_name() << " has no effect with --collect (it is about running "
                  << "variants; --collect ranks the folders already there"
                  << (o == args.replicates_option ? ", with the replicates in their replicates.jsonl" : "") << ")\n";
        return 2;
      }
  }
  if (!args.collect_dir.empty()) return args.missing ? cmd_missing(args.collect_dir) : cmd_collect(args.collect_dir, choice);
  if (args.file.empty() || (args.out.empty())) {
    std::cerr << "dirsched sweep: give SCENARIO and --out DIR, or --collect DIR\n";
    return 2;
  }
  if (sweep.count("--select-best")) {
    for (const CLI::Option* o : {args.replicates_option, args.outputs_option, args.plan_option, args.budget_option})
      if (o->count()) {
        std::cerr << "dirsched sweep: " << o->get_name() << " has no effect with --select-best (it runs the "
                  << "replicates it needs, in the evaluation pool, and writes selection.json)\n";
        return 2;
      }
    Progress::get().begin("load");
    const Scenario base = load_scenario(args.file, {}, TraceRead::kStreamed, common.policy.choice());
    Progress::get().end();
    if (base.vars.empty()) {
      std::cerr << "dirsched: " << args.file << ": vars: the scenario has no sweep variables\n";
      return 2;
    }
    const std::vector<Variant> variants = args.sample ? sample_variants(base, *args.sample, args.seed, args.max_variants)
                                                      : enumerate_variants(base, args.max_variants);
    return cmd_select(args.file, args.out, {args.select_best, args.pcs, args.first_stage}, args.jobs, variants,
                      common.cfg, common.policy, choice);
  }
  for (const char* flag : {"--pcs", "--first-stage"})
    if (sweep.count(flag)) {
      std::cerr << "dirsched sweep: " << flag << " goes with --select-best\n";
      return 2;
    }
  const int rc = cmd_sweep(args.file, args.out, args.jobs, args.sample, args.seed, args.max_variants,
                           args.plan, common.cfg, common.policy, args.outputs, common.picture_budget, args.replicates,
                           args.lines_per_task, collect_flags);
  return rc != 0 || args.plan ? rc : cmd_collect(args.out, choice);
}

bool prints_plan() { return args.plan; }

}  // namespace

const Verb kSweepVerb{"sweep", "Run every variant of a scenario's vars and rank them", declare, run, prints_plan};

}  // namespace dirsched::cli
