// The testbed's one time limit (docs/limits.md): every simulated time a scenario gives, every sum of them
// a run can form, and every time a run's record holds stays at most kMaxTimeS = 2^32 s (136 years). A
// double still resolves 1 us there (its step at 2^32 is 2^-20 s), so no duration is lost to rounding.
// The loader refuses a file past it (scenario.hpp), the record's readers a record past it.
#pragma once

namespace dirsched {

inline constexpr double kMaxTimeS = 4294967296.0;  // 2^32 s

}  // namespace dirsched
