// Stable error codes for refused submits, grouped by the step of the contract's validation order
// (docs/contract.md) that issues them.
//
// The strings returned by to_string() are part of the user-facing interface: they appear in the event
// log and in scenario `expect` blocks. Never rename one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dirsched {

enum class ErrorCode : std::uint8_t {
  // Step 1: the worker argument is present (NEXT_LEVEL) or absent (SUB).
  kMissingWorker,
  kSubTakesNoWorker,
  // Step 2: each id in turn, type then sign.
  kWorkerNotInteger,
  kWorkerNegative,
  // Step 3: count, then distinctness.
  kWorkersCountMismatch,
  kWorkersNotDistinct,
  // Step 4: the callable's namespace.
  kNamespaceMismatch,
  kSubCallableNotPython,
  // Step 5.
  kLocalCallableRemoteTarget,
  // Step 6: tensor data (kTargetNotEligible also at step 8: eligible set and remote owner).
  kTargetNotEligible,
  kRemoteHostBufferWritten,
  kSubRemoteBuffer,
  // Step 7: an empty SUB group (an empty NEXT_LEVEL group is kWorkersCountMismatch), then registration.
  kEmptyGroup,
  kWorkerNotRegistered,
  // Not in the contract's list: handles the core never issued.
  kUnknownCallable,
  kUnknownBuffer,
  // Fail-fast: the run already failed; a valid submit raises that error and is not submitted.
  kRunFailed,
  // Added by switches of the version ladder (switches.hpp), appended so that earlier codes keep their
  // values. arg_guard: step 6 (after kSubRemoteBuffer) and step 9 (after step 8); mpi_group_check:
  // step 3b (after kWorkersNotDistinct).
  kSubChildBuffer,
  kOverlappingWrites,
  kMpiGroupMixed,
};

std::string_view to_string(ErrorCode code);
std::optional<ErrorCode> error_code_from_string(std::string_view text);

struct Rejection {
  ErrorCode code;
  std::string message;
};

}  // namespace dirsched
