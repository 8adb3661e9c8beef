#include "verdict.hpp"

#include <algorithm>
#include <ostream>
#include <set>

#include "dirsched/errors.hpp"

namespace dirsched::cli {

namespace {

// The tasks the expect block names with the state `state` (under final_state) or as rejected.
std::set<std::string> named_as(const nlohmann::json& expect, const char* state, bool rejected_too) {
  std::set<std::string> names;
  if (!expect.is_object()) return names;
  if (const auto fs = expect.find("final_state"); fs != expect.end() && fs->is_object())
    for (auto it = fs->begin(); it != fs->end(); ++it)
      if (it.value().is_string() && it.value().get<std::string>() == state) names.insert(it.key());
  if (const auto r = expect.find("rejected"); rejected_too && r != expect.end() && r->is_object())
    for (auto it = r->begin(); it != r->end(); ++it) names.insert(it.key());
  return names;
}

std::string tasks_text(std::size_t n) { return std::to_string(n) + (n == 1 ? " task" : " tasks"); }

Unexpected rejected_problems(const Run& run, bool expect_holds, std::size_t most) {
  const RunResult& r = run.result;
  // When the block holds, every task it names as rejected was: the others are the unexpected ones.
  const std::set<std::string> expected =
      expect_holds ? named_as(run.scenario.expect, "REJECTED", true) : std::set<std::string>{};
  Unexpected u;
  const std::size_t unexpected = r.rejections - std::min(r.rejections, expected.size());
  if (unexpected == 0) return u;
  for (const auto& [task, why] : r.first_rejections)
    if (!expected.count(task) && u.tasks.size() < most) u.tasks.push_back(task + ": REJECTED " + why);
  u.what = std::to_string(unexpected) + " of " + tasks_text(run.recorder->record_count()) + " REJECTED" +
           (expect_holds ? " not named by the expect block" : "");
  u.more = unexpected - u.tasks.size();
  return u;
}

Unexpected stuck_problems(const Run& run, bool expect_holds, std::size_t most) {
  Unexpected u;
  if (run.result.outcome != "STUCK") return u;
  const nlohmann::json& e = run.scenario.expect;
  std::set<std::string> named;
  if (expect_holds && e.is_object() && e.contains("final_state"))
    for (auto it = e["final_state"].begin(); it != e["final_state"].end(); ++it) named.insert(it.key());
  std::size_t count = 0;
  for (const Stuck& st : run.result.stuck) {
    if (named.count(st.task)) continue;
    if (++count <= most) u.tasks.push_back(st.task + ": stuck " + std::string(to_string(st.state)) + " (" + st.reason + ")");
  }
  if (count == 0 && !run.result.stuck.empty()) return u;  // every stuck task is named with its state
  u.what = "the run ended STUCK (" + tasks_text(run.result.stuck.size()) + " never finished)";
  u.more = count - u.tasks.size();
  return u;
}

}  // namespace

std::vector<Unexpected> unexpected_problems(const Run& run, std::size_t most) {
  const nlohmann::json& e = run.scenario.expect;
  const bool expect_holds = !e.is_null() && !check_expectations(run);
  std::vector<Unexpected> out;
  // A block that holds and expects the run not to end COMPLETED (FAILED: on_reject abort; STUCK) expects
  // its problems too.
  if (expect_holds && e.is_object() && e.contains("outcome") && e["outcome"] != "COMPLETED") return out;
  for (Unexpected u : {rejected_problems(run, expect_holds, most), stuck_problems(run, expect_holds, most)})
    if (!u.what.empty()) out.push_back(std::move(u));
  return out;
}

bool report_unexpected(const std::vector<Unexpected>& problems, const std::string& scenario, std::ostream& out) {
  for (const Unexpected& u : problems) {
    out << "dirsched: " << scenario << ": " << u.what << ":\n";
    for (const std::string& t : u.tasks) out << "  " << t << "\n";
    if (u.more) out << "  ... and " << u.more << " more (tasks.csv lists every task)\n";
  }
  if (!problems.empty())
    out << "dirsched: the outputs are written; exit 1 (an expect block naming these tasks under rejected or "
           "final_state, or the outcome, makes this the answer expected)\n";
  return !problems.empty();
}

}  // namespace dirsched::cli
