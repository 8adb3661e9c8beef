// `dirsched compare`: two run folders compared (exit status as diff(1)).
#include "verbs.hpp"

#include <cstddef>
#include <iostream>
#include <string>

#include "dirsched/sweep.hpp"
#include "options.hpp"

namespace dirsched::cli {
namespace {

std::string run_a, run_b;
std::size_t limit = 20;

void declare(CLI::App& compare, Common&) {
  compare.add_option("run_a", run_a, "A run folder")->required();
  compare.add_option("run_b", run_b, "Another run folder")->required();
  compare.add_option("--limit", limit, "Show at most this many divergences per list (default 20)")
      ->check(cli::whole_number(0, 1000000000));
}

int run(CLI::App&, Common&) {
  // Exit status as diff(1): 0 the same, 1 different, 2 trouble (a missing or malformed folder).
  const Comparison c = compare_runs(run_a, run_b, limit);
  std::cout << c.text;
  return c.same ? 0 : 1;
}

}  // namespace

const Verb kCompareVerb{"compare", "Compare two run folders (exit 0 same, 1 different, 2 trouble)", declare, run,
                        nullptr};

}  // namespace dirsched::cli
