// What a record decoder says when it refuses its input: the RecordError's message, or "(accepted)".
#pragma once

#include <string>

#include "dirsched/record/summary.hpp"  // RecordError

namespace dirsched::record {

template <typename Decode>
std::string refusal_of(Decode&& decode) {
  try {
    decode();
  } catch (const RecordError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace dirsched::record
