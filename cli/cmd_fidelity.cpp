// `dirsched fidelity`: a replay measured against a recorded run.
#include "verbs.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dirsched/error.hpp"
#include "dirsched/fidelity.hpp"
#include "dirsched/output_folder.hpp"
#include "options.hpp"

namespace dirsched::cli {
namespace {

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

std::string observed_dir, simulated_dir, json_path, svg_path;
std::vector<std::string> also_observed;
std::optional<double> bound;

void declare(CLI::App& fid, Common&) {
  fid.add_option("observed", observed_dir, "The recorded run folder (dirsched import's observed/)")->required();
  fid.add_option("simulated", simulated_dir, "A run folder of the replay")->required();
  fid.add_option("--also-observed", also_observed,
                 "Other observed runs of the same workload (repeatable): each measure's run-to-run spread, the noise "
                 "floor the replay's error is judged against")
      ->expected(1, -1);
  fid.add_option("--json", json_path, "Also write every measure as JSON to FILE");
  fid.add_option("--svg", svg_path, "Also draw both timelines, observed above simulated on one time axis, to FILE");
  fid.add_option("--max-makespan-error", bound, "Exit 1 when |makespan error| is above X (0.05 = 5%)")
      ->check(cli::real_number(0, 1e6));
}

int run(CLI::App& fid, Common&) {
  std::vector<std::string> reads;
  std::vector<std::string> dirs = {observed_dir, simulated_dir};
  dirs.insert(dirs.end(), also_observed.begin(), also_observed.end());
  for (const std::string& dir : dirs)
    for (const char* name : {"summary.json", "events.jsonl"})
      reads.push_back((std::filesystem::path(dir) / name).string());
  if (fid.count("--json")) check_output_file(json_path, "--json", reads);
  if (fid.count("--svg")) check_output_file(svg_path, "--svg", reads);
  if (fid.count("--json") && fid.count("--svg") && json_path == svg_path)
    throw OutputRefused("--json and --svg: both name " + json_path + "; name two files");
  const Fidelity f = measure_fidelity(observed_dir, simulated_dir, bound, also_observed);
  // Both made before either is written: a refusal drawing the timelines leaves no half of the pair.
  const std::string svg = svg_path.empty() ? std::string() : stacked_timelines(observed_dir, simulated_dir);
  if (!json_path.empty()) write_file_atomic(json_path, f.json.dump(2) + "\n");
  if (!svg_path.empty()) write_file_atomic(svg_path, svg);
  std::cout << f.text;
  return f.within ? 0 : 1;
}

}  // namespace

const Verb kFidelityVerb{"fidelity",
                         "Measure a replay against a recorded run (exit 1 beyond --max-makespan-error, 2 trouble)",
                         declare, run, nullptr};

}  // namespace dirsched::cli
