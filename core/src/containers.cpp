#include "dirsched/containers.hpp"

#include <string>

namespace dirsched {

void InstantTable::not_held(std::uint32_t n) {
  throw InternalError("InstantTable: instant " + std::to_string(n) + " is not held");
}

void InstantTable::too_many() { throw InternalError("InstantTable: 2^32 - 1 instants held"); }

}  // namespace dirsched
