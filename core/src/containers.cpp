#include "dirsched/containers.hpp"

#include <string>

namespace dirsched {

void InstantTable::not_held(std::uint32_t n) {
  throw InternalError("InstantTable: instant " + std::to_string(n) + " is not held");
}

void InstantTable::too_many() {
  throw InternalError("InstantTable: " + std::to_string(kModulus) + " instants held at once (2^30 - 1)");
}

}  // namespace dirsched
