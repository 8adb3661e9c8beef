// CoreError: what the Scheduler throws when its driver misuses it.
//
// A driver bug (reporting a task the core never issued, a member index past the task's members, a
// member that is not running, the same member twice) is not a property of the workload, so it is not
// a Rejection and never reaches the event log. The core checks it at the call, before it writes
// anything, and throws CoreError: the call had no effect and the core stays usable, so a runtime can
// log the bug and carry on, or stop cleanly, instead of dying in abort().
//
// Broken internal invariants (a bug in the core itself) still stop the process at once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "dirsched/error.hpp"

namespace dirsched {

enum class CoreErrorCode : std::uint8_t {
  kUnknownTask,    // an id the core never issued (invalid, or past the last task)
  kUnknownMember,  // a member index not below the task's member count
  kNotRunning,     // report() of a member that was never dispatched or has already ended
  kDoubleReport,   // report() of a member already reported and not yet applied
  kNotNextLevel,   // a NEXT_LEVEL-only query (target()) on a SUB task
  kUnknownWorker,  // a worker or SUB registration index past the registered ones
  kUnknownBuffer,  // a buffer id the core never issued
  kRunOrder,       // a run's callback begun twice, ended with none open, or a submit outside any open callback;
                   // a between_passes batch handed while one waits (land_between_passes)
};

std::string_view to_string(CoreErrorCode code);  // unknown_task, unknown_member, ...

// An internal error (a bug in the driver): dirsched::InternalError, kind kInternal (no longer a
// std::logic_error: catch it by name or as dirsched::Error).
class CoreError : public InternalError {
 public:
  CoreError(CoreErrorCode code, const std::string& what) : InternalError(what), code_(code) {}
  CoreErrorCode code() const { return code_; }

 private:
  CoreErrorCode code_;
};

}  // namespace dirsched
