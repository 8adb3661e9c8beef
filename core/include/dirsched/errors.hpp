// Stable error codes for refused submits, in the contract's validation order.
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
  // 1
  kMissingWorker,
  // 2
  kWorkerNotInteger,
  // 3
  kWorkerNegative,
  // 4
  kWorkersCountMismatch,
  kWorkersNotDistinct,
  // 5
  kWorkerNotRegistered,
  // 6
  kLocalCallableRemoteTarget,
  kNamespaceMismatch,
  // 7
  kTargetNotEligible,
  // 8
  kSubTakesNoWorker,
  kSubCallableNotPython,
  kSubRemoteBuffer,
  // Not in the contract's list: handles the core never issued, and empty SUB groups.
  kUnknownCallable,
  kUnknownBuffer,
  kEmptyGroup,
  // Fail-fast: the run already failed; the submit raises that error and the task is not submitted.
  kRunFailed,
};

std::string_view to_string(ErrorCode code);
std::optional<ErrorCode> error_code_from_string(std::string_view text);

struct Rejection {
  ErrorCode code;
  std::string message;
};

}  // namespace dirsched
