// The user-facing spellings of every enum: event names, states, codes, tags, kinds.
#include <array>
#include <string_view>

#include "dirsched/errors.hpp"
#include "dirsched/observer.hpp"
#include "dirsched/registry.hpp"
#include "dirsched/scheduler.hpp"
#include "dirsched/task.hpp"

namespace dirsched {
namespace {

template <typename Enum, std::size_t N>
std::optional<Enum> lookup(const std::array<std::string_view, N>& names, std::string_view text) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == text) return static_cast<Enum>(i);
  return std::nullopt;
}

constexpr std::array<std::string_view, 3> kWorkerKinds = {"local_chip", "local_worker", "remote"};
constexpr std::array<std::string_view, 3> kNamespaces = {"LOCAL_CHIP", "LOCAL_PYTHON", "REMOTE"};
constexpr std::array<std::string_view, 3> kMemories = {"host", "child", "remote"};
constexpr std::array<std::string_view, 9> kStates = {"PENDING",  "READY",    "RUNNING",       "COMPLETED", "FAILED",
                                                     "POISONED", "REJECTED", "NOT_SUBMITTED", "CANCELLED"};
constexpr std::array<std::string_view, 4> kKinds = {"single", "group", "sub", "sub_group"};
constexpr std::array<std::string_view, 4> kOps = {"submit_next_level", "submit_next_level_group",
                                                  "submit_sub", "submit_sub_group"};
constexpr std::array<std::string_view, 2> kOutcomes = {"success", "failure"};
constexpr std::array<std::string_view, 5> kTags = {"INPUT", "OUTPUT", "OUTPUT_EXISTING", "INOUT", "NO_DEP"};
constexpr std::array<std::string_view, 20> kCodes = {"missing_worker",
                                                     "sub_takes_no_worker",
                                                     "worker_not_integer",
                                                     "worker_negative",
                                                     "workers_count_mismatch",
                                                     "workers_not_distinct",
                                                     "namespace_mismatch",
                                                     "sub_callable_not_python",
                                                     "local_callable_remote_target",
                                                     "target_not_eligible",
                                                     "remote_host_buffer_written",
                                                     "sub_remote_buffer",
                                                     "empty_group",
                                                     "worker_not_registered",
                                                     "unknown_callable",
                                                     "unknown_buffer",
                                                     "run_failed",
                                                     "sub_child_buffer",
                                                     "overlapping_writes",
                                                     "mpi_group_mixed"};
static_assert(kCodes.size() == static_cast<std::size_t>(ErrorCode::kMpiGroupMixed) + 1, "one spelling per code");
constexpr std::array<std::string_view, 18> kEvents = {
    "submit",      "reject",            "pending",       "ready",
    "dispatch",    "member_end",        "complete",      "fail",
    "poison",      "not_submitted",     "group_blocked", "group_launched",
    "group_stall", "reservation_stall", "run_raise",     "run_end",
    "cancel",      "activate"};

}  // namespace

std::string_view to_string(WorkerKind v) {
  return kWorkerKinds[static_cast<std::size_t>(v)];
}
std::string_view to_string(Namespace v) {
  return kNamespaces[static_cast<std::size_t>(v)];
}
std::string_view to_string(Memory v) {
  return kMemories[static_cast<std::size_t>(v)];
}
std::string_view to_string(TaskState v) {
  return kStates[static_cast<std::size_t>(v)];
}
std::string_view to_string(TaskKind v) {
  return kKinds[static_cast<std::size_t>(v)];
}
std::string_view submit_op_name(TaskKind v) {
  return kOps[static_cast<std::size_t>(v)];
}
std::string_view to_string(Outcome v) {
  return kOutcomes[static_cast<std::size_t>(v)];
}
std::string_view to_string(Tag v) {
  return kTags[static_cast<std::size_t>(v)];
}
std::string_view to_string(ErrorCode v) {
  return kCodes[static_cast<std::size_t>(v)];
}
std::string_view to_string(EventKind v) {
  return kEvents[static_cast<std::size_t>(v)];
}

std::optional<WorkerKind> worker_kind_from_string(std::string_view t) {
  return lookup<WorkerKind>(kWorkerKinds, t);
}
std::optional<Namespace> namespace_from_string(std::string_view t) {
  return lookup<Namespace>(kNamespaces, t);
}
std::optional<Memory> memory_from_string(std::string_view t) {
  return lookup<Memory>(kMemories, t);
}
std::optional<TaskState> task_state_from_string(std::string_view t) {
  return lookup<TaskState>(kStates, t);
}
std::optional<Tag> tag_from_string(std::string_view t) {
  return lookup<Tag>(kTags, t);
}
std::optional<ErrorCode> error_code_from_string(std::string_view t) {
  return lookup<ErrorCode>(kCodes, t);
}

}  // namespace dirsched
