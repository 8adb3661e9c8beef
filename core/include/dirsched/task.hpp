// The task lifecycle, in one place.
//
//   (submit) ──> PENDING ──(last producer completed)──> READY ──(dispatch)──> RUNNING
//       │           │                                                            │
//       │           └──(a producer failed)──> POISONED              COMPLETED <──┤
//       ├──(no live producer)──> READY                                FAILED <───┘
//       └──(a producer already failed or poisoned)──> POISONED
//
// run_cancellation (#1541): when a run's callback raises, each of its PENDING and READY tasks turns
// CANCELLED (it leaves its queue and never runs); a RUNNING one runs to its end as usual.
//
// REJECTED (submit refused) and NOT_SUBMITTED (the replay stopped before the op) are final states a
// task name can end in without the core ever holding the task: a rejected submit changes no state.
// A group moves through the table as one task; its members only track "running" and "ended".
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace dirsched {

enum class TaskState : std::uint8_t {
  kPending,
  kReady,
  kRunning,
  kCompleted,
  kFailed,
  kPoisoned,
  kRejected,
  kNotSubmitted,
  kCancelled,  // last, so that the values above keep their numbers (dumps, encodings)
};

enum class TaskKind : std::uint8_t { kSingle, kGroup, kSub, kSubGroup };

enum class Outcome : std::uint8_t { kSuccess, kFailure };

std::string_view to_string(TaskState state);  // COMPLETED, FAILED, ...
std::string_view to_string(TaskKind kind);    // single, group, sub, sub_group
// The submit op that makes a task of this kind: submit_next_level, submit_next_level_group, ...
std::string_view submit_op_name(TaskKind kind);
std::string_view to_string(Outcome outcome);  // success, failure
std::optional<TaskState> task_state_from_string(std::string_view text);

constexpr bool is_terminal(TaskState s) {
  return s == TaskState::kCompleted || s == TaskState::kFailed || s == TaskState::kPoisoned ||
         s == TaskState::kRejected || s == TaskState::kNotSubmitted || s == TaskState::kCancelled;
}
constexpr bool is_group(TaskKind k) {
  return k == TaskKind::kGroup || k == TaskKind::kSubGroup;
}
constexpr bool is_sub(TaskKind k) {
  return k == TaskKind::kSub || k == TaskKind::kSubGroup;
}

// The transition table above. `from` is std::nullopt for a task that is being submitted.
constexpr bool transition_allowed(std::optional<TaskState> from, TaskState to) {
  if (!from) return to == TaskState::kPending || to == TaskState::kReady || to == TaskState::kPoisoned;
  switch (*from) {
    case TaskState::kPending:
      return to == TaskState::kReady || to == TaskState::kPoisoned || to == TaskState::kCancelled;
    case TaskState::kReady:
      return to == TaskState::kRunning || to == TaskState::kCancelled;
    case TaskState::kRunning:
      return to == TaskState::kCompleted || to == TaskState::kFailed;
    default:
      return false;
  }
}

}  // namespace dirsched
