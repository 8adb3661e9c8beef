// The strict JSON reader behind every JSON file and value the CLI takes from a user: scenario files,
// `--var NAME=JSON` values, and any other file a command parses (call it rather than json::parse).
//
// It drives nlohmann's SAX parser (iterative, no recursion) with a handler that builds the DOM itself,
// so each rule below is enforced while reading, before any recursive routine (dump, copy, compare,
// the loader's walks of vars, expect and worker ids) ever sees the value:
//   - nesting: at most kMaxJsonDepth (64) arrays/objects deep, refused at the first level too deep;
//   - duplicate keys in one object are refused (never "last one wins");
//   - nothing may follow the document but whitespace: not text, not a NUL byte;
//   - strings must be valid UTF-8 (nlohmann's lexer checks it, and unpaired \u surrogates);
//   - numbers must fit a double: 1e400 (overflow) and 1e-400 (which would read as 0) are refused;
//   - a file may hold at most kMaxJsonFileBytes (256 MiB); a directory or unreadable file is refused.
// A fault is a ScenarioError carrying the file and the JSON path where it happened (`trace[3].worker`,
// empty for the document itself) and, for syntax faults, the line and column.
//
// Streaming (read_json_stream): the top-level object is read as usual except for one key's array,
// whose elements are handed over one at a time as each one closes, each as its own small DOM; the array
// itself is never held. The file is read in 1 MiB chunks, so memory follows one element, not the file.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "dirsched/error.hpp"

namespace dirsched {

// The loader's one error type: file, JSON path and what is wrong. `main` prints what() on one line and
// exits with status 2 (bad input).
class ScenarioError : public BadInput {
 public:
  ScenarioError(const std::string& file, const std::string& path, const std::string& what)
      : BadInput(file + ": " + (path.empty() ? "" : path + ": ") + what), path_(path) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline constexpr std::size_t kMaxJsonDepth = 64;
inline constexpr std::uint64_t kMaxJsonFileBytes = std::uint64_t{256} << 20;  // 256 MiB

// Opens a file a user named, to read it, without ever blocking there: O_NONBLOCK on the open (a FIFO
// with no writer blocks a plain open() forever, before any check by name could refuse it), then fstat
// of what was opened, and the descriptor back to blocking reads. Returns the descriptor with `*st`
// filled (the caller refuses what it cannot read: a folder, or anything but a regular file where it
// reads twice or seeks), or -1 with errno set. Every reader of a user's file opens it here.
int open_user_file(const std::string& path, struct stat* st);

// The whole file as a DOM. `file` names it in errors.
nlohmann::json read_json_file(const std::string& file);

// Text already in memory (a command-line value): `origin` names it in errors (e.g. "--var p").
nlohmann::json parse_json_text(std::string_view text, const std::string& origin);

// A value that sits `depth` arrays/objects deep in a document (an element of a top-level array: 2),
// read with the same rules as if the document were read whole: its nesting counts from `depth`.
nlohmann::json parse_json_element(std::string_view text, const std::string& origin, std::size_t depth);

struct JsonStream {
  std::string key;  // a top-level key; when its value is an array, its elements are streamed
  // Called once when `key`'s array opens, with the top-level keys read so far.
  std::function<void(const nlohmann::json& before)> on_start;
  // Called for each element of the array, in order, as soon as it is complete. May throw.
  std::function<void(std::size_t index, nlohmann::json&& element)> on_element;
};

// The file's top-level document, with `stream.key` (when its value is an array) present as an empty
// array: its elements went to stream.on_element. Same rules and messages as read_json_file, except
// that the file size limit does not apply (memory does not follow the file).
nlohmann::json read_json_stream(const std::string& file, const JsonStream& stream);

// A number for a message: whole numbers below 2^53 without a fraction ("4294967296"), others as JSON
// writes them ("1e+17", "0.25").
std::string number_text(double v);

}  // namespace dirsched
