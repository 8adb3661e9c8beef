#include "dirsched/core_error.hpp"

#include <array>

namespace dirsched {

std::string_view to_string(CoreErrorCode code) {
  static constexpr std::array<std::string_view, 8> kNames = {
      "unknown_task",   "unknown_member", "not_running",    "double_report",
      "not_next_level", "unknown_worker", "unknown_buffer", "run_order"};
  return kNames[static_cast<std::size_t>(code)];
}

}  // namespace dirsched
