// Fuzz target: the events.jsonl line decoder that `compare`, `fidelity` and sweep's collection use
// (outputs' parse_event_line: the strict JSON reader, then record::decode_event). Whatever a line
// holds, it must decode or be refused as bad input (a dirsched::Error of kind kBadInput: exit 2 naming
// the file and line), and never crash, hang or throw anything else (a nlohmann type_error, an
// out_of_range, a logic_error: each a finding).
//
// An input is any bytes; each line (split at '\n') is decoded as one line of a run's events.jsonl.
// Built as `event_fuzz` with DIRSCHED_FUZZ=ON (clang, libFuzzer), and in every build as
// `event_fuzz_replay` over tests/fuzz/render-corpus/ (the golden runs' logs, line by line) and
// tests/fuzz/event-corpus/ (hand-made hostile lines).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "dirsched/error.hpp"
#include "dirsched/json_reader.hpp"
#include "dirsched/record/event.hpp"

namespace {

// One line as parse_event_line reads it (outputs/src/outputs.cpp): the same two calls.
void decode_line(std::string_view line, std::size_t line_no) {
  const std::string where = "events.jsonl line " + std::to_string(line_no);
  try {
    const dirsched::record::Event e = dirsched::record::decode_event(dirsched::parse_json_text(line, where), where);
    (void)e;
  } catch (const dirsched::Error& e) {
    // Refused: as bad input, naming where (anything else is a finding).
    if (e.kind() != dirsched::ErrorKind::kBadInput || std::string_view(e.what()).find(where) == std::string_view::npos)
      std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::size_t line_no = 0;
  for (std::size_t at = 0; at <= input.size();) {
    const std::size_t nl = input.find('\n', at);
    const std::size_t end = nl == std::string_view::npos ? input.size() : nl;
    decode_line(input.substr(at, end - at), ++line_no);
    if (nl == std::string_view::npos) break;
    at = nl + 1;
  }
  return 0;
}
