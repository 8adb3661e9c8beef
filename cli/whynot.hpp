// `dirsched whynot FILE --task NAME --goal GOAL` (docs/why-it-waited.md): the smallest change to a
// scenario under which one task meets a goal, each candidate proved by a replay on the event engine in
// this process.
//
// Goals: `no-overtakes` (a group that no single overtakes), `wait<=SECONDS` (its READY wait, start -
// ready), `start<=SECONDS`. Edits: `placement` (the task's own worker set, or one single's worker: any
// other registered worker the callable's namespace accepts), `order` (one submit op moved among the ops
// of its instant, or by one position), `version` (a ladder preset, or one switch flipped). A change is
// at most one edit per op, one order edit and one version edit.
//
// Smallest: fewest edits; then the smallest |change| of the makespan; then of the other tasks' READY
// waits (their sum); then the candidate order (kind: placement, order, version; then the op's path;
// then the value given). A candidate counts only when every task that completed before still completes.
//
// The search: the baseline run names the singles worth moving (a group's overtakers and blocking chain,
// a single's tasks ahead on its worker) and the worker sets worth trying (those idle together at some
// instant of its wait); those candidates are replayed first (guided), the rest only when none of them
// meets the goal. With few candidates (kFewCandidates) every one is replayed (exhaustive).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dirsched/scenario.hpp"

namespace dirsched::whynot {

struct Goal {
  enum class Kind { kNoOvertakes, kWait, kStart } kind = Kind::kNoOvertakes;
  double limit_s = 0;
  std::string text;  // as given
};
// BadInput "--goal TEXT: expected no-overtakes, wait<=SECONDS or start<=SECONDS ..." otherwise.
Goal parse_goal(const std::string& text);

enum class EditKind { kPlacement, kOrder, kVersion };
// "placement,order,version" (any of them, each once); BadInput naming the unknown kind.
std::vector<EditKind> parse_edit_kinds(const std::string& list);

// At most this many one-edit candidates: every one is replayed.
inline constexpr std::size_t kFewCandidates = 16;
// At most this many replays of changes of two or more edits.
inline constexpr std::size_t kMaxReplays = 20000;

struct Question {
  std::string file;
  std::string task;
  Goal goal;
  std::vector<EditKind> edits = {EditKind::kPlacement};
  std::size_t max_edits = 1;
  PolicyChoice choice;  // --policy, --switch: the version the question is asked of
};

struct Answer {
  nlohmann::ordered_json report;  // whynot.json
  nlohmann::json scenario;        // scenario.json: the changed scenario (found or not: the best change)
  bool found = false;
  std::string text;               // the lines printed without --json
};

// Throws BadInput for a scenario that does not load or that the event engine cannot run, an unknown
// task, or a goal that does not fit the task (no-overtakes of a single).
Answer answer(const Question& q);

}  // namespace dirsched::whynot
