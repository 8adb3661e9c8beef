// Ranking a sweep: the ranking flags, replicates.jsonl, and `sweep --collect` (collect.hpp).
#include "collect.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fstream>
#include <set>

#include "common.hpp"
#include "dirsched/error.hpp"
#include "dirsched/output_folder.hpp"
#include "dirsched/progress.hpp"
#include "evaluate.hpp"

namespace dirsched::cli {
namespace {

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

}  // namespace

bool parse_rank_choice(const std::string& objective, const std::string& pareto, RankChoice& choice,
                       const char* verb) {
  const char* flag = "--objective";
  try {
    if (!objective.empty()) choice.objective = parse_objective(objective);
    flag = "--pareto";
    if (!pareto.empty()) {
      const std::vector<std::size_t> two = parse_objective(pareto);
      if (two.size() != 2) throw BadInput("expected two metrics A,B");
      choice.pareto_a = two[0], choice.pareto_b = two[1], choice.pareto_given = true;
    }
  } catch (const BadInput& e) {  // parse_objective's refusals
    std::cerr << "dirsched " << verb << ": " << flag << ": " << e.what() << "\n";
    return false;
  }
  return true;
}

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

int cmd_collect(const std::string& dir, const RankChoice& choice) {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  const std::vector<SweepRow> rows = collect(dir, &names);
  if (rows.empty()) {
    std::cerr << "dirsched: " << dir << ": no variant-* folders to collect\n";
    return 2;
  }
  const std::string d = without_trailing_slashes(dir);
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

}  // namespace dirsched::cli
