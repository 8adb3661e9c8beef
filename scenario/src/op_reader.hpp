// The loader's reading of one trace op, shared by the full read (scenario.cpp) and the streamed read
// (trace_file.cpp), so that both check an op in exactly one way. Internal to the scenario target.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "dirsched/scenario.hpp"

namespace dirsched::detail {

class Obj;  // scenario.cpp: one JSON object being read

// What an op is checked against: the callables, buffers and sweep-variable values of a loaded header
// (the rest of the file but the trace), and the file that errors name.
class OpReader {
 public:
  explicit OpReader(const Scenario& header);
  // One op at `path` ("trace[3]", "trace[3].ops[1]"): every key known, every value of its type, every
  // callable and buffer named exists, per-member lists have the member count. `names` holds the task
  // names so far: a duplicate is refused (null: the caller checks uniqueness itself). `in_run`: an op
  // of a run's callback (no drain, no nested run). ScenarioError with the file and the path otherwise.
  OpSpec op(const nlohmann::json& v, const std::string& path, bool in_batch, std::set<std::string>* names,
            bool in_run = false) const;
  std::optional<std::size_t> callable(std::string_view name) const;
  std::optional<std::size_t> buffer(std::string_view name) const;
  const std::string& file() const { return file_; }
  // The value a "$NAME" stands for in this variant, or `v` itself.
  const nlohmann::json& var_or(const nlohmann::json& v, const std::string& path) const;
  // The sweep variables the ops read so far stood for (a streamed trace substitutes op by op).
  const std::set<std::string>& used_vars() const { return used_; }
  // Some arg read so far names a `range`.
  bool saw_range() const { return saw_range_; }

 private:
  void submit(Obj& o, OpSpec& op, std::set<std::string>* names) const;
  std::vector<ArgSpec> arg_list(const nlohmann::json& v, const std::string& path) const;

  std::string file_;
  std::map<std::string, std::size_t, std::less<>> callable_index_, buffer_index_;
  std::map<std::string, nlohmann::json> assigned_;
  mutable std::set<std::string> used_;
  std::vector<double> buffer_bytes_;  // by buffer index: what a `range` must fit in
  mutable bool saw_range_ = false;
};

// Replaces, in place, every string "$NAME" of `j` whose NAME is a declared variable by its value in
// this variant (the value itself is not searched again). Records the names in `used` and, when
// `where` is given, the JSON path of each replaced value -> NAME. True when anything was replaced.
bool substitute_vars(nlohmann::json& j, const std::map<std::string, nlohmann::json>& assigned,
                     const std::string& path, std::set<std::string>& used,
                     std::map<std::string, std::string>* where);

// The loader's serial upper bound of the makespan (see time_budget in scenario.cpp), op by op: visit()
// throws ScenarioError at the op where the bound passes kMaxTimeS. `generated` words the message for a
// generate block.
class TimeBudget {
 public:
  TimeBudget(const Scenario& s, bool generated) : s_(s), generated_(generated) {}
  void visit(const OpSpec& op);

 private:
  void members(const OpSpec& op);
  const Scenario& s_;
  bool generated_;
  double latest_at_ = 0, serial_ = 0;
};

// The group members of a trace, all its groups together, op by op: add() throws ScenarioError at the
// group (at the top level, in a batch or in a run's callback) whose members take the count past `max`
// (kMaxTotalMembers, or a lower LoadLimits::max_tasks).
class MemberCount {
 public:
  MemberCount(std::string file, std::size_t max) : file_(std::move(file)), max_(max) {}
  void add(const OpSpec& op);

 private:
  std::string file_;
  std::size_t max_, total_ = 0;
};

}  // namespace dirsched::detail
