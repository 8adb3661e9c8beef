// Fuzz target, differential: the streamed reader (read_json_stream, which the loader uses for a trace
// file's `trace` array, so that memory does not follow the file) against the whole-document reader
// (read_json_file). json_reader.hpp promises the same rules and the same messages: for any bytes, both
// refuse with the same message, or both accept and the streamed document, its `trace` elements put
// back in order, equals the whole one. Anything else is a finding (abort).
//
// Built as `stream_fuzz` with DIRSCHED_FUZZ=ON (clang, libFuzzer), and in every build as
// `stream_fuzz_replay` over the shipped scenarios, the trace files and tests/fuzz/stream-corpus/.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "dirsched/json_reader.hpp"

namespace {

// One file per process, rewritten for each input (both readers read files).
const std::string& input_path() {
  static const std::string path = [] {
    char name[] = "/tmp/dirsched-stream-fuzz-XXXXXX";
    const int fd = ::mkstemp(name);
    if (fd < 0) std::abort();
    ::close(fd);
    return std::string(name);
  }();
  return path;
}

struct Outcome {
  bool ok = false;
  nlohmann::json doc;
  std::string error;
};

[[noreturn]] void finding(const std::string& what, const Outcome& whole, const Outcome& streamed) {
  std::fprintf(stderr, "stream_fuzz: %s\nwhole:    %s\nstreamed: %s\n", what.c_str(),
               whole.ok ? whole.doc.dump().c_str() : whole.error.c_str(),
               streamed.ok ? streamed.doc.dump().c_str() : streamed.error.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dirsched;
  const std::string& path = input_path();
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    // An empty input comes with no buffer (data may be null): nothing to write.
    if (!f || (size != 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) std::abort();
  }
  Outcome whole, streamed;
  try {
    whole.doc = read_json_file(path);
    whole.ok = true;
  } catch (const ScenarioError& e) {
    whole.error = e.what();
  }
  std::vector<nlohmann::json> elements;
  bool started = false;
  JsonStream stream;
  stream.key = "trace";
  stream.on_start = [&](const nlohmann::json&) { started = true; };
  stream.on_element = [&](std::size_t index, nlohmann::json&& element) {
    if (index != elements.size()) std::abort();  // elements come in order, each once
    elements.push_back(std::move(element));
  };
  try {
    streamed.doc = read_json_stream(path, stream);
    streamed.ok = true;
  } catch (const ScenarioError& e) {
    streamed.error = e.what();
  }
  if (whole.ok != streamed.ok) finding("one reader accepts what the other refuses", whole, streamed);
  if (!whole.ok) {
    if (whole.error != streamed.error) finding("different messages", whole, streamed);
    return 0;
  }
  if (started) {
    const auto it = streamed.doc.find("trace");
    if (it == streamed.doc.end() || !it->is_array() || !it->empty())
      finding("the streamed key is not left as an empty array", whole, streamed);
    *it = nlohmann::json(std::move(elements));
  } else if (!elements.empty()) {
    finding("elements without a start", whole, streamed);
  }
  if (whole.doc != streamed.doc) finding("different documents", whole, streamed);
  return 0;
}
