// A trace file's `trace` array read as the replay goes: the streamed load (docs/scenario-format.md,
// "Big trace files").
//
// load_scenario() reads a file in two passes and keeps no op of the trace:
//   1. A scan of the top level: every key but `trace` is read into a small document (the header:
//      workers, callables, buffers, scheduler, faults, expect, vars, ...), in any key order; the byte
//      range of the `trace` array is noted.
//   2. A check of every op, before anything runs: each one is read and checked as the full read checks
//      it (detail::OpReader, one code path), then dropped; the task names are checked unique (by a
//      64-bit hash each, sorted, or, for names that count up one by one, as runs of numbers; the full
//      read settles a collision), and so are the limits (kMaxTasks,
//      kMaxTotalMembers, the time budget, at_s order). What is kept: the array's offset, the op and
//      submit counts, the file's identity (device, inode, size, modification time), and a 64-bit hash
//      of each chunk of the array as it was read (one per MiB or so).
// The replay then reads the ops a second time, one at a time (TraceReader): memory follows one op.
//
// The streamed load is only ever an accelerator of the full read: on anything it does not take on
// itself (a fault of any kind, a top-level key with an escape, a byte-order mark, a file past the size
// limit, a hash collision) load_scenario() reads the file whole instead, so every error message, and
// every scenario loaded, is the full read's own. Ops are read by a fast reader for the plain shapes
// (ASCII strings, integer worker ids, literal scalars); an op it does not take (an escape, a `$NAME`,
// a worker id that is not an integer, ...) is read as a small JSON document by the strict reader and
// checked by detail::OpReader.
//
// A file that changes between the check and the replay (its identity, a chunk's hash, or its op count)
// stops the replay before any op of a changed chunk is parsed: TraceReader::next() returns false and error() says so; every engine then ends with that
// ScenarioError (exit 2) before anything is written.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "dirsched/scenario.hpp"

namespace dirsched {

namespace detail {
class OpReader;
}

// What identifies a file's content cheaply: a rewrite changes one of them.
struct FileIdentity {
  std::uint64_t device = 0, inode = 0, size = 0;
  std::int64_t mtime_ns = 0;
  bool operator==(const FileIdentity& o) const {
    return device == o.device && inode == o.inode && size == o.size && mtime_ns == o.mtime_ns;
  }
  bool operator!=(const FileIdentity& o) const { return !(*this == o); }
};

// A checked trace file, as the loader found it.
class TraceFile {
 public:
  TraceFile(std::string file, std::uint64_t begin, std::uint64_t end, FileIdentity identity,
            std::shared_ptr<const detail::OpReader> reader)
      : file_(std::move(file)), begin_(begin), end_(end), identity_(identity), reader_(std::move(reader)) {}

  const std::string& file() const { return file_; }
  std::uint64_t begin() const { return begin_; }  // the byte offset of the array's '['
  std::uint64_t end() const { return end_; }      // just past its ']'
  const FileIdentity& identity() const { return identity_; }
  const detail::OpReader& reader() const { return *reader_; }
  std::size_t op_count() const { return ops_; }
  std::size_t submit_count() const { return submits_; }
  // Ops (batches count once) the check read with the strict reader rather than the fast one.
  std::size_t strict_op_count() const { return strict_; }
  // The trace array's bytes as the check read them, a hash per chunk: the replay compares each chunk it
  // reads, so an edit that keeps the size and the modification time still stops it.
  const std::vector<std::uint64_t>& chunk_hashes() const { return chunk_hashes_; }
  void set_chunk_hashes(std::vector<std::uint64_t> h) { chunk_hashes_ = std::move(h); }
  void set_counts(std::size_t ops, std::size_t submits, std::size_t strict) {
    ops_ = ops, submits_ = submits, strict_ = strict;
  }

  // The callable of a task the replay did not submit (a rejection, or an op never reached), which
  // tasks.csv names and the core does not know: the Replay notes each one here as it goes (few, and
  // only those), since no op is kept. The op being submitted is noted first in a slot of its own,
  // for a rejection whose row is written while the core is still in submit().
  void note_submitting(std::string_view task, std::size_t callable) const;
  void note_unsubmitted(std::string_view task, std::size_t callable) const;
  std::optional<std::size_t> unsubmitted_callable(std::string_view task) const;

 private:
  std::string file_;
  std::uint64_t begin_ = 0, end_ = 0;
  FileIdentity identity_;
  std::shared_ptr<const detail::OpReader> reader_;
  std::vector<std::uint64_t> chunk_hashes_;
  std::size_t ops_ = 0, submits_ = 0, strict_ = 0;
  mutable std::map<std::string, std::size_t, std::less<>> unsubmitted_;
  mutable std::string submitting_;
  mutable std::size_t submitting_callable_ = 0;
};

// The ops of a checked trace file, read one at a time in trace order.
class TraceReader {
 public:
  explicit TraceReader(const TraceFile& trace);
  ~TraceReader();
  // A streamed replay is never copied (an explorer materializes the trace first): a copy throws.
  TraceReader(const TraceReader& other);
  TraceReader& operator=(const TraceReader&) = delete;
  // The next op; false after the last one, or when the file changed since it was checked (error()).
  bool next(OpSpec& op);
  // Empty, or what went wrong (without the file name): the file changed after it was checked.
  const std::string& error() const { return error_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string error_;
};

// Builds s.trace from s.trace_file (and clears it), for those that read the trace whole (the explorer);
// nothing for a scenario without one. ScenarioError when the file changed since it was checked.
// `every` (may be empty) is called with the op count every kMaterializeEvery ops: it may throw to stop.
void materialize_trace_file(Scenario& s, const std::function<void(std::size_t ops)>& every = nullptr);

inline constexpr std::size_t kMaterializeEvery = 4096;

namespace detail {

// The streamed load's pass 1 and 2 (see the top of this file), for load_scenario(). Returns nothing
// when the file is not one it takes on itself (then the caller reads it whole); a ScenarioError from
// it means the same: the full read finds the fault and words it.
struct TraceScan {
  nlohmann::json header;  // the top level with "trace": [] where the array was
  std::uint64_t begin = 0, end = 0;
  FileIdentity identity;
};
// `trace_last`: the file is taken to end with its trace array (as `dirsched gen` writes it), checked
// by its tail, and the scan stops at the array: the header is the keys before it, and
// check_trace_file() confirms the array ends where the tail said (a header key missing then is no
// fault of the file: the caller scans again with `trace_last` false, which reads every key).
std::optional<TraceScan> scan_trace_file(const std::string& file, bool trace_last);
// Checks every op of the scanned array against `header` (a Scenario loaded from scan.header): names,
// limits, time budget. `names` (for an expect block) receives every task name. Returns the TraceFile,
// or nothing when the full read must decide.
std::shared_ptr<TraceFile> check_trace_file(const Scenario& header, const TraceScan& scan,
                                            std::set<std::string>* names);
// How many bytes the streamed reader reads at a time, 1 MiB (its window grows for a longer op). Tests
// make it small, so that ops cross the window's end at every byte; returns the size it replaces. Set
// it before a load, and keep it until that load's trace is replayed.
std::size_t set_trace_window(std::size_t bytes);

}  // namespace detail

}  // namespace dirsched
