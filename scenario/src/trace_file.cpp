// The streamed load of a trace file (dirsched/trace_file.hpp): the top-level scan, the check of every
// op, and the replay's second reading of the ops.
//
// Ops are read from a 1 MiB window of the file. An op is read in place by FastOp while it lies whole
// in the window (Status::kMore: the window slides to the op's first byte and takes more of the file, and the
// op is read again). FastOp takes only what it can check completely itself; on anything else (Status::kBail) the
// op's bytes are found by ValueScan and read by the strict reader and detail::OpReader instead.
#include "dirsched/trace_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <stdexcept>
#include <vector>

#include "dirsched/counted_name.hpp"
#include "dirsched/error.hpp"
#include "dirsched/huge_pages.hpp"
#include "dirsched/json_reader.hpp"
#include "op_reader.hpp"

namespace dirsched {
namespace {

struct Bail {};  // the array or the file is not what the check saw: the full read decides

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

std::optional<FileIdentity> identity_of(std::FILE* f) {
  struct stat st {};
  if (::fstat(fileno(f), &st) != 0) return std::nullopt;
  FileIdentity id;
  id.device = static_cast<std::uint64_t>(st.st_dev);
  id.inode = static_cast<std::uint64_t>(st.st_ino);
  id.size = static_cast<std::uint64_t>(st.st_size);
  id.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return id;
}

constexpr const char* kChanged = "the file changed after it was checked: run it again";

ScenarioError changed(const std::string& file) { return ScenarioError(file, "", kChanged); }

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// `k` is the word `w` (a compare of a constant length, which the compiler inlines).
template <std::size_t N>
bool is(std::string_view k, const char (&w)[N]) {
  return k.size() == N - 1 && std::memcmp(k.data(), w, N - 1) == 0;
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The bytes a string FastOp reads may hold: printable ASCII but '"' and '\\' (an escape is the strict
// reader's).
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x7f; ++c) t[static_cast<std::size_t>(c)] = c != '"' && c != '\\';
  return t;
}();

// A 64-bit hash of one chunk of bytes, 32 at a time in four independent lanes (not cryptographic: it
// tells an edited chunk from the one checked, as size and modification time cannot when an edit keeps
// both). Four lanes, not one: each step's multiply waits for the one before it in its own lane only.
std::uint64_t chunk_hash(const char* p, std::size_t n) {
  constexpr std::uint64_t kMul = 0xff51afd7ed558ccdULL;
  std::uint64_t h[4] = {0x9e3779b97f4a7c15ULL ^ n, 0xc2b2ae3d27d4eb4fULL, 0x165667b19e3779f9ULL, 0x27d4eb2f165667c5ULL};
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32)
    for (std::size_t l = 0; l < 4; ++l) {
      std::uint64_t w;
      std::memcpy(&w, p + i + 8 * l, 8);
      h[l] = (h[l] ^ w) * kMul;
      h[l] ^= h[l] >> 32;
    }
  std::uint64_t r = h[0];
  for (std::size_t l = 1; l < 4; ++l) r = (r ^ h[l]) * kMul;
  for (; i < n; ++i) r = (r ^ static_cast<unsigned char>(p[i])) * 0x100000001b3ULL;
  return r ^ (r >> 32);
}

// The bytes of the trace array, chunk by chunk as a Window reads them (each fread): the check records
// their hashes, the replay compares each chunk as it is read, before any op is parsed from it, so every
// op replayed comes from the bytes that were checked (issue 28). The replay reads the same chunks, since
// it parses the same bytes the same way from the same offset.
struct ChunkLog {
  std::vector<std::uint64_t>* record = nullptr;        // the check: appended
  const std::vector<std::uint64_t>* expect = nullptr;  // the replay: compared in order
  std::size_t next = 0;
  void read(const char* p, std::size_t n) {
    const std::uint64_t h = chunk_hash(p, n);
    if (record) record->push_back(h);
    if (expect && (next >= expect->size() || (*expect)[next++] != h)) throw Bail{};
  }
};

std::atomic<std::size_t> window_bytes{std::size_t{1} << 20};  // detail::set_trace_window()

// A window of a file read in chunks from a byte offset. The byte at `lim` is always a '\0' (the buffer
// holds one more byte than the window): FastOp reads up to it without a bounds check a byte.
class Window {
 public:
  Window(std::FILE* f, std::uint64_t offset, ChunkLog* log = nullptr)
      : f_(f), buf_(window_bytes.load() + 1, '\0'), base_(offset), log_(log) {
    if (std::fseek(f, static_cast<long>(offset), SEEK_SET) != 0) throw Bail{};
    pos = lim = buf_.data();
  }
  const char* pos;
  const char* lim;
  bool eof() const { return eof_; }
  // Keeps [keep, lim) at the window's start and reads more after it (the window grows for a value
  // longer than itself). Returns the new address of `keep`; pos moves with it. False at the file's end.
  bool refill(const char*& keep) {
    const std::size_t kept = static_cast<std::size_t>(lim - keep);
    const std::size_t pos_at = static_cast<std::size_t>(pos - keep);
    base_ += static_cast<std::uint64_t>(keep - buf_.data());
    std::memmove(buf_.data(), keep, kept);
    if (kept == capacity()) buf_.resize(capacity() * 2 + 1);
    const std::size_t n = std::fread(buf_.data() + kept, 1, capacity() - kept, f_);
    if (log_ && n > 0) log_->read(buf_.data() + kept, n);
    buf_[kept + n] = '\0';
    keep = buf_.data();
    pos = keep + pos_at;
    lim = buf_.data() + kept + n;
    if (n == 0) eof_ = true;
    return n > 0;
  }
  std::uint64_t offset_of(const char* p) const { return base_ + static_cast<std::uint64_t>(p - buf_.data()); }

 private:
  std::size_t capacity() const { return buf_.size() - 1; }  // the last byte is the '\0' after lim
  std::FILE* f_;
  std::vector<char> buf_;
  std::uint64_t base_;  // the file offset of buf_[0]
  ChunkLog* log_;
  bool eof_ = false;
};

// Where a JSON value ends, by brackets and strings alone (no check: the strict reader, or FastOp,
// checks it). Resumable across windows.
struct ValueScan {
  std::size_t depth = 0;
  bool started = false, in_string = false, escaped = false, scalar = false;
  // Advances over [p, end): where the value ends, or nullptr when it goes on past `end`.
  const char* feed(const char* p, const char* end) {
    while (p < end) {
      const char c = *p;
      if (!started) {
        started = true;
        if (c == '{' || c == '[')
          depth = 1;
        else if (c == '"')
          in_string = true;
        else
          scalar = true;
        ++p;
        continue;
      }
      if (in_string) {
        if (escaped)
          escaped = false;
        else if (c == '\\')
          escaped = true;
        else if (c == '"') {
          in_string = false;
          if (depth == 0) return p + 1;
        }
        ++p;
        continue;
      }
      if (scalar) {
        if (c == ',' || c == ']' || c == '}' || is_ws(c)) return p;
        ++p;
        continue;
      }
      if (c == '"')
        in_string = true;
      else if (c == '{' || c == '[')
        ++depth;
      else if ((c == '}' || c == ']') && --depth == 0)
        return p + 1;
      ++p;
    }
    return nullptr;
  }
};

// One op read in place, for the plain shapes only: every check detail::OpReader makes, made here too,
// and anything it is not sure of is a Bail (never an accepted op the full read would refuse, never a
// different one: tests/scenario/stream_test.cpp compares both on every shipped and generated file).
class FastOp {
 public:
  // [p, end) lies in a Window: *end is the '\0' after it.
  FastOp(const detail::OpReader& reader, const char* p, const char* end, bool eof)
      : reader_(reader), p_(p), end_(end), eof_(eof) {}
  enum class Status { kOk, kMore, kBail };  // kMore: the op goes on past the window
  // Reads one op; the position after it, valid when status() is kOk.
  const char* read(OpSpec& op, const std::string& path, bool in_batch) {
    op_value(op, path, in_batch);
    return p_;
  }
  Status status() const { return status_; }

 private:
  enum Key : unsigned {
    kOp = 1u << 0,
    kAtS = 1u << 1,
    kTask = 1u << 2,
    kCallable = 1u << 3,
    kWorker = 1u << 4,
    kWorkers = 1u << 5,
    kArgs = 1u << 6,
    kArgsList = 1u << 7,
    kDuration = 1u << 8,
    kFail = 1u << 9,
    kS = 1u << 10,
    kOps = 1u << 11,
    kBetweenPasses = 1u << 12,
  };

  // A failure stops the reading without an exception (the replay reads ops inside a SimGrid actor,
  // where an exception unwinds a swapped context and trips ASan): the position moves to the end, so
  // that every later peek() reads the '\0' there, which no rule takes, and each caller returns at once.
  struct Failed {
    template <typename T>
    operator T() const {  // NOLINT: any return type
      return T{};
    }
  };
  // A rule refused the byte at p_. At the window's end that byte is the '\0' after it: the op goes on
  // past the window (kMore), unless the file ends there. (An op refused on its meaning when its '}' is
  // the window's last byte is read again with more of the file after it, and refused then.) p_ never
  // passes end_; were it to (a rule taking the byte at the end), the op would go to the strict reader,
  // which the tests count.
  void fail() {
    if (status_ == Status::kOk) status_ = p_ == end_ && !eof_ ? Status::kMore : Status::kBail;
    p_ = end_;
  }
  Failed bail() {
    fail();
    return {};
  }
  void bail_void() { fail(); }
  char peek() const { return *p_; }  // the '\0' after the window at its end
  void bump() { ++p_; }              // only past a byte a rule took: never past the '\0'
  void ws() {
    while (is_ws(peek())) bump();
  }
  void expect(char c) {
    ws();
    if (peek() != c) return bail_void();
    bump();
  }
  // After a value in a container: true for ',', false for `close`.
  bool next_or(char close) {
    ws();
    const char c = peek();
    if (c != ',' && c != close) return bail();
    bump();
    return c == ',';
  }
  // True when the container (already opened) is empty.
  bool empty_then(char close) {
    ws();
    if (peek() != close) return false;
    bump();
    return true;
  }
  // A string of printable ASCII without escapes.
  std::string_view plain_string() {
    expect('"');
    const char* b = p_;
    while (kPlain[static_cast<unsigned char>(peek())]) bump();  // stops at the '\0' after the window
    if (peek() != '"') return bail();
    const std::string_view s(b, static_cast<std::size_t>(p_ - b));
    bump();
    return s;
  }
  // A JSON number's text; `integer` when it has neither fraction nor exponent.
  std::string_view number_text(bool& integer) {
    ws();
    const char* b = p_;
    if (peek() == '-') bump();
    if (peek() == '0') {
      bump();
    } else {
      if (!is_digit(peek())) return bail();
      while (is_digit(peek())) bump();
    }
    integer = true;
    if (peek() == '.') {
      bump();
      if (!is_digit(peek())) return bail();
      while (is_digit(peek())) bump();
      integer = false;
    }
    if (peek() == 'e' || peek() == 'E') {
      bump();
      if (peek() == '+' || peek() == '-') bump();
      if (!is_digit(peek())) return bail();
      while (is_digit(peek())) bump();
      integer = false;
    }
    return {b, static_cast<std::size_t>(p_ - b)};
  }
  // An integer of at most 18 digits (any of them fits an int64, as the strict reader keeps it).
  std::int64_t small_integer(std::string_view t) {
    if (t.empty() || status_ != Status::kOk) return bail();
    const bool negative = t[0] == '-';
    if (t.size() - (negative ? 1 : 0) > 18) return bail();
    std::int64_t v = 0;
    for (std::size_t i = negative ? 1 : 0; i < t.size(); ++i) v = v * 10 + (t[i] - '0');
    return negative ? -v : v;
  }
  // A number as the strict reader's double: integers through their int64 value, others correctly
  // rounded (nlohmann's strtod and from_chars agree); out of a double's range is the strict reader's.
  double number() {
    bool integer = false;
    const std::string_view t = number_text(integer);
    if (integer) return static_cast<double>(small_integer(t));
    double d = 0;
    const auto r = std::from_chars(t.data(), t.data() + t.size(), d);
    if (r.ec != std::errc() || r.ptr != t.data() + t.size() || !std::isfinite(d)) return bail();
    if (d == 0)
      for (char c : t) {
        if (c == 'e' || c == 'E') break;
        if (c >= '1' && c <= '9') return bail();  // 1e-400: the strict reader refuses it
      }
    return d;
  }
  // A simulated time: non-negative, at most kMaxTimeS.
  double time() {
    const double d = number();
    if (d < 0 || d > kMaxTimeS) return bail();
    return d;
  }
  bool boolean() {
    ws();
    const char c = peek();
    const char* word = c == 't' ? "true" : c == 'f' ? "false" : nullptr;
    if (!word) return bail();
    for (const char* w = word; *w; ++w) {
      if (peek() != *w) return bail();
      bump();
    }
    return c == 't';
  }
  // A scalar arg's value: a literal, a number or a plain string (nothing the loader reads).
  void scalar_value() {
    ws();
    const char c = peek();
    if (c == '"') {
      plain_string();
    } else if (c == 't' || c == 'f') {
      boolean();
    } else if (c == 'n') {
      for (const char* w = "null"; *w; ++w) {
        if (peek() != *w) return bail_void();
        bump();
      }
    } else {
      number();
    }
  }
  std::int64_t worker_id() {
    bool integer = false;
    const std::string_view t = number_text(integer);
    if (!integer) return bail();  // 1.0 and friends: a rejection, worded by the strict path
    return small_integer(t);
  }
  void arg(ArgSpec& a) {
    expect('{');
    if (empty_then('}')) return bail_void();
    bool scalar = false, buffer = false, tag = false;
    a = ArgSpec{};
    do {
      const std::string_view key = plain_string();
      expect(':');
      if (is(key, "scalar") && !scalar) {
        scalar = true;
        scalar_value();
      } else if (is(key, "buffer") && !buffer) {
        buffer = true;
        const auto b = reader_.buffer(plain_string());
        if (!b) return bail_void();
        a.buffer = *b;
      } else if (is(key, "tag") && !tag) {
        tag = true;
        const auto t = tag_from_string(plain_string());
        if (!t) return bail_void();
        a.tag = *t;
      } else {
        return bail_void();
      }
    } while (next_or('}'));
    if (scalar ? (buffer || tag) : !(buffer && tag)) return bail_void();
    if (scalar) a = ArgSpec{};
  }
  void arg_list(std::vector<ArgSpec>& out) {
    expect('[');
    out.clear();
    if (empty_then(']')) return;
    do {
      out.emplace_back();
      arg(out.back());
    } while (next_or(']'));
  }

  void op_value(OpSpec& op, const std::string& path, bool in_batch) {
    op.kind = OpKind::kDrain;
    op.path = path;
    op.at_s.reset();
    op.task.clear();
    op.callable = 0;
    op.worker.reset();
    op.workers.reset();
    op.args.clear();
    op.duration_s.clear();
    op.fail.clear();
    op.prepare_s.clear();  // prepare_s is read by the strict reader (the fast one bails on it)
    op.sleep_s = 0;
    op.ops.clear();
    op.between_passes = false;
    unsigned seen = 0;
    bool between_passes = false;
    std::string_view kind, task, callable;
    double at_s = 0, sleep_s = 0, duration = 0;
    bool fail = false;
    std::vector<double>& durations = durations_;
    std::vector<bool>& fails = fails_;
    bool duration_list = false, fail_list = false;
    expect('{');
    if (empty_then('}')) return bail_void();
    do {
      const std::string_view key = plain_string();
      expect(':');
      unsigned bit = 0;
      if (is(key, "op")) {
        bit = kOp;
        kind = plain_string();
      } else if (is(key, "task")) {
        bit = kTask;
        task = plain_string();
      } else if (is(key, "callable")) {
        bit = kCallable;
        callable = plain_string();
      } else if (is(key, "worker")) {
        bit = kWorker;
        op.worker = WorkerArg(WorkerId(worker_id()));
      } else if (is(key, "args")) {
        bit = kArgs;
        op.args.resize(1);
        arg_list(op.args[0]);
      } else if (is(key, "at_s")) {
        bit = kAtS;
        at_s = time();
      } else if (is(key, "workers")) {
        bit = kWorkers;
        expect('[');
        op.workers.emplace();
        if (!empty_then(']')) do
            op.workers->push_back(WorkerArg(WorkerId(worker_id())));
          while (next_or(']'));
      } else if (is(key, "args_list")) {
        bit = kArgsList;
        expect('[');
        op.args.clear();
        if (!empty_then(']')) do {
            op.args.emplace_back();
            arg_list(op.args.back());
          } while (next_or(']'));
      } else if (is(key, "duration_s")) {
        bit = kDuration;
        ws();
        if (peek() == '[') {
          duration_list = true;
          bump();
          durations.clear();
          if (!empty_then(']')) do
              durations.push_back(time());
            while (next_or(']'));
        } else {
          duration = time();
        }
      } else if (is(key, "fail")) {
        bit = kFail;
        ws();
        if (peek() == '[') {
          fail_list = true;
          bump();
          fails.clear();
          if (!empty_then(']')) do
              fails.push_back(boolean());
            while (next_or(']'));
        } else {
          fail = boolean();
        }
      } else if (is(key, "s")) {
        bit = kS;
        sleep_s = time();
      } else if (is(key, "between_passes")) {
        bit = kBetweenPasses;
        between_passes = boolean();
      } else if (is(key, "ops") && !in_batch) {
        bit = kOps;
        expect('[');
        if (!empty_then(']')) do {
            op.ops.emplace_back();
            op_value(op.ops.back(), path + ".ops[" + std::to_string(op.ops.size() - 1) + "]", true);
          } while (next_or(']'));
      }
      if (!bit || (seen & bit)) return bail_void();  // an unknown or a duplicate key
      seen |= bit;
    } while (next_or('}'));
    if (status_ != Status::kOk) return;

    static const std::pair<std::string_view, OpKind> kinds[] = {{"submit_next_level", OpKind::kSubmitNextLevel},
                                                                {"submit_next_level_group", OpKind::kSubmitGroup},
                                                                {"submit_sub", OpKind::kSubmitSub},
                                                                {"submit_sub_group", OpKind::kSubmitSubGroup},
                                                                {"batch", OpKind::kBatch},
                                                                {"sleep", OpKind::kSleep},
                                                                {"drain", OpKind::kDrain}};
    if (!(seen & kOp)) return bail_void();
    const auto* k = std::find_if(std::begin(kinds), std::end(kinds), [&](const auto& e) {
      return e.first.size() == kind.size() && std::memcmp(e.first.data(), kind.data(), kind.size()) == 0;
    });
    if (k == std::end(kinds)) return bail_void();
    op.kind = k->second;
    if (seen & kAtS) {
      if (in_batch) return bail_void();
      op.at_s = at_s;
    }
    constexpr unsigned kSubmit = kOp | kAtS | kTask | kCallable | kWorker | kWorkers | kDuration | kFail;
    switch (op.kind) {
      case OpKind::kSleep:
        if (in_batch || (seen & ~(kOp | kAtS | kS)) || !(seen & kS)) return bail_void();
        op.sleep_s = sleep_s;
        return;
      case OpKind::kDrain:
        if (in_batch || (seen & ~(kOp | kAtS))) return bail_void();
        return;
      case OpKind::kBatch:
        if (in_batch || (seen & ~(kOp | kAtS | kOps | kBetweenPasses)) || !(seen & kOps)) return bail_void();
        // An empty between_passes batch is refused: the strict reader words it.
        if (between_passes && op.ops.empty()) return bail_void();
        op.between_passes = between_passes;
        return;
      default:
        break;
    }
    const bool group = op.kind == OpKind::kSubmitGroup || op.kind == OpKind::kSubmitSubGroup;
    if ((seen & ~(kSubmit | (group ? kArgsList : kArgs))) || !(seen & kTask) || !(seen & kCallable) ||
        task.empty())
      return bail_void();
    if (group && !(seen & kArgsList)) return bail_void();
    if (!group && !(seen & kArgs)) op.args.resize(1);
    if (op.args.size() > kMaxMembers || (op.workers && op.workers->size() > kMaxMembers)) return bail_void();
    const auto c = reader_.callable(callable);
    if (!c) return bail_void();
    op.callable = *c;
    op.task.assign(task.data(), task.size());
    const std::size_t members = op.args.size();
    if (duration_list) {
      if (durations.size() != members) return bail_void();
      op.duration_s.assign(durations.begin(), durations.end());
    } else {
      op.duration_s.assign(members, (seen & kDuration) ? std::optional<double>(duration) : std::nullopt);
    }
    if (fail_list) {
      if (fails.size() != members) return bail_void();
      op.fail.assign(fails.begin(), fails.end());
    } else {
      op.fail.assign(members, fail);
    }
  }

  const detail::OpReader& reader_;
  const char* p_;
  const char* end_;
  bool eof_;
  Status status_ = Status::kOk;
  std::vector<double> durations_;
  std::vector<bool> fails_;
};

// The elements of the `trace` array, from its '[' to its ']', each one an op.
class ArrayReader {
 public:
  ArrayReader(std::FILE* f, std::uint64_t begin, const detail::OpReader& reader, const std::string& file,
              ChunkLog* chunks = nullptr)
      : in_(f, begin, chunks), reader_(reader), file_(file) {
    ws();
    if (*in_.pos != '[') throw Bail{};
    ++in_.pos;
  }
  // The next op; false after the ']'. Bail on a malformed array; ScenarioError from a bad op.
  bool next(OpSpec& op) {
    if (done_) return false;
    ws();
    if (index_ == 0 && *in_.pos == ']') return finish();
    if (index_ > 0) {
      if (*in_.pos == ']') return finish();
      if (*in_.pos != ',') throw Bail{};
      ++in_.pos;
      ws();
    }
    set_path();
    const char* start = in_.pos;
    while (true) {
      FastOp fast(reader_, start, in_.lim, in_.eof());
      const char* after = fast.read(op, path_, false);
      if (fast.status() == FastOp::Status::kOk) {
        in_.pos = after;
        break;
      }
      if (fast.status() == FastOp::Status::kMore) {
        in_.refill(start);
        continue;
      }
      op = strict(start);
      ++strict_;
      break;
    }
    ++index_;
    return true;
  }
  std::uint64_t end_offset() const { return end_; }
  std::size_t strict_count() const { return strict_; }

 private:
  bool finish() {
    ++in_.pos;
    end_ = in_.offset_of(in_.pos);
    done_ = true;
    return false;
  }
  // path_ = "trace[<index_>]", in the room path_ already has.
  void set_path() {
    counted_text(kPathPrefix, index_, path_);
    path_.push_back(']');
  }
  void ws() {
    while (true) {
      while (in_.pos < in_.lim && is_ws(*in_.pos)) ++in_.pos;
      if (in_.pos < in_.lim) return;
      const char* keep = in_.pos;
      if (!in_.refill(keep)) throw Bail{};
    }
  }
  // The op at `start` read by the strict reader and checked by detail::OpReader.
  OpSpec strict(const char* start) {
    ValueScan scan;
    const char* end = scan.feed(start, in_.lim);
    while (!end) {
      const std::size_t done = static_cast<std::size_t>(in_.lim - start);
      if (!in_.refill(start)) throw Bail{};
      end = scan.feed(start + done, in_.lim);
    }
    in_.pos = end;
    const nlohmann::json v =
        parse_json_element(std::string_view(start, static_cast<std::size_t>(end - start)), file_, 2);
    return reader_.op(v, path_, false, nullptr);
  }

  Window in_;
  const detail::OpReader& reader_;
  const std::string& file_;
  static constexpr std::string_view kPathPrefix = "trace[";
  std::string path_;
  std::size_t index_ = 0, strict_ = 0;
  std::uint64_t end_ = 0;
  bool done_ = false;
};

// Whether a trace's task names are all different, without keeping the names (a million of them would
// be tens of MiB). A name is kept as a 64-bit hash; two names with one hash read as a repeat, and the
// full read then decides. Names that count up one by one (t0, t1, t2, ...: counted_name()) are kept
// as runs instead, (the prefix's hash, first number, last number): a generated trace of a million
// tasks is one run, not a million hashes to sort. Two names are the same text exactly when both count
// with one prefix and one number, or neither counts and their texts are equal, so runs are checked
// against runs and the other names' hashes against each other. When runs are short (fewer than
// kRunLength names each, over at least kMinRuns runs), each counted name is kept as a hash of its prefix
// and number instead, the runs so far written out that way.
class DistinctNames {
 public:
  void add(std::string_view name) {
    const std::optional<CountedName> c = counted_name(name);
    if (!c) {
      hashes_.push_back(std::hash<std::string_view>()(name));
      return;
    }
    const std::uint64_t prefix = std::hash<std::string_view>()(name.substr(0, c->prefix));
    ++counted_;
    if (!counting_) {
      hashes_.push_back(key(prefix, c->number));
      return;
    }
    if (!runs_.empty() && runs_.back().prefix == prefix && c->number == runs_.back().last + 1) {
      runs_.back().last = c->number;  // at most 19 digits: no wrap
      return;
    }
    runs_.push_back({prefix, c->number, c->number});
    if (runs_.size() >= kMinRuns && runs_.size() * kRunLength > counted_) stop_counting();
  }
  // Whether some name came twice (or two hashes met). Reorders what is kept.
  bool repeats() {
    std::sort(hashes_.begin(), hashes_.end());
    if (std::adjacent_find(hashes_.begin(), hashes_.end()) != hashes_.end()) return true;
    std::sort(runs_.begin(), runs_.end(), [](const Run& a, const Run& b) {
      return a.prefix != b.prefix ? a.prefix < b.prefix : a.first < b.first;
    });
    for (std::size_t i = 1; i < runs_.size(); ++i)  // sorted: a run overlaps another only if it overlaps the one before
      if (runs_[i].prefix == runs_[i - 1].prefix && runs_[i].first <= runs_[i - 1].last) return true;
    return false;
  }

 private:
  static constexpr std::size_t kMinRuns = 4096, kRunLength = 4;
  struct Run {
    std::uint64_t prefix, first, last;
  };
  // A counted name's hash: one to one in the number for a prefix (an odd multiplier, then a mix that
  // loses nothing).
  static std::uint64_t key(std::uint64_t prefix, std::uint64_t number) {
    std::uint64_t h = prefix ^ (number * 0x9e3779b97f4a7c15ULL);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ULL;
    return h ^ (h >> 29);
  }
  void stop_counting() {
    hashes_.reserve(hashes_.size() + counted_);  // no doubling while the runs are still held
    for (const Run& r : runs_)
      for (std::uint64_t n = r.first;; ++n) {
        hashes_.push_back(key(r.prefix, n));
        if (n == r.last) break;
      }
    runs_ = {};
    counting_ = false;
  }
  std::vector<std::uint64_t, HugePageAllocator<std::uint64_t>> hashes_;  // huge pages: one a name
  std::vector<Run> runs_;
  std::size_t counted_ = 0;
  bool counting_ = true;
};

}  // namespace

void TraceFile::note_unsubmitted(std::string_view task, std::size_t callable) const {
  unsubmitted_.emplace(std::string(task), callable);
}

void TraceFile::note_submitting(std::string_view task, std::size_t callable) const {
  submitting_.assign(task.data(), task.size());
  submitting_callable_ = callable;
}

std::optional<std::size_t> TraceFile::unsubmitted_callable(std::string_view task) const {
  if (task == submitting_) return submitting_callable_;
  auto it = unsubmitted_.find(task);
  return it == unsubmitted_.end() ? std::nullopt : std::optional<std::size_t>(it->second);
}

struct TraceReader::Impl {
  const TraceFile& trace;
  File f;
  ChunkLog chunks;
  std::optional<ArrayReader> array;
  std::size_t ops = 0;
};

TraceReader::TraceReader(const TraceFile& trace) : impl_(new Impl{trace, nullptr, {}, std::nullopt, 0}) {
  impl_->f.reset(std::fopen(trace.file().c_str(), "rb"));
  impl_->chunks.expect = &trace.chunk_hashes();
  const std::optional<FileIdentity> id = impl_->f ? identity_of(impl_->f.get()) : std::nullopt;
  try {
    if (!id || *id != trace.identity()) throw Bail{};
    impl_->array.emplace(impl_->f.get(), trace.begin(), trace.reader(), trace.file(), &impl_->chunks);
  } catch (const Bail&) {
    error_ = kChanged;
  }
}

TraceReader::~TraceReader() = default;

TraceReader::TraceReader(const TraceReader&) {
  throw InternalError("a streamed trace cannot be copied mid-replay: call materialize_trace() first");
}

bool TraceReader::next(OpSpec& op) {
  if (!error_.empty() || !impl_->array) return false;
  const TraceFile& t = impl_->trace;
  try {
    if (impl_->array->next(op)) {
      if (++impl_->ops > t.op_count()) throw Bail{};
      return true;
    }
    const std::optional<FileIdentity> id = identity_of(impl_->f.get());
    if (impl_->ops != t.op_count() || impl_->array->end_offset() != t.end() || !id || *id != t.identity() ||
        impl_->chunks.next != t.chunk_hashes().size())
      throw Bail{};
  } catch (const Bail&) {
    error_ = kChanged;
  } catch (const ScenarioError&) {
    error_ = kChanged;
  }
  impl_->array.reset();
  return false;
}

void materialize_trace_file(Scenario& s, const std::function<void(std::size_t ops)>& every) {
  if (!s.trace_file) return;
  TraceReader reader(*s.trace_file);
  s.trace.reserve(s.trace_file->op_count());
  for (OpSpec op; reader.next(op);) {
    s.trace.push_back(op);
    if (every && s.trace.size() % kMaterializeEvery == 0) every(s.trace.size());
  }
  if (!reader.error().empty()) throw changed(s.trace_file->file());
  s.trace_file.reset();
}

namespace detail {

// Where a file that ends with its `trace` array ends it: just past the ']' of a tail `] }` (whitespace
// aside), or nothing.
std::optional<std::uint64_t> trace_end_at_tail(std::FILE* f, std::uint64_t size) {
  const std::uint64_t tail = std::min<std::uint64_t>(size, 4096);
  std::vector<char> buf(static_cast<std::size_t>(tail));
  if (std::fseek(f, static_cast<long>(size - tail), SEEK_SET) != 0 ||
      std::fread(buf.data(), 1, buf.size(), f) != buf.size())
    return std::nullopt;
  std::size_t i = buf.size();
  auto skip_ws = [&] {
    while (i > 0 && is_ws(buf[i - 1])) --i;
  };
  skip_ws();
  if (i == 0 || buf[--i] != '}') return std::nullopt;
  skip_ws();
  if (i == 0 || buf[i - 1] != ']') return std::nullopt;
  return size - tail + i;
}

std::optional<TraceScan> scan_trace_file(const std::string& file, bool trace_last) {
  struct stat st {};
  // No size limit here: the trace array is never held whole (the 256 MiB limit bounds what is read
  // whole: the header below, and a file the full read takes).
  if (::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  File f(std::fopen(file.c_str(), "rb"));
  if (!f) return std::nullopt;
  TraceScan scan;
  const std::optional<FileIdentity> id = identity_of(f.get());
  if (!id) return std::nullopt;
  scan.identity = *id;
  std::optional<std::uint64_t> last_end;
  if (trace_last && !(last_end = trace_end_at_tail(f.get(), id->size))) return std::nullopt;
  try {
    Window in(f.get(), 0);
    auto peek = [&]() -> char {
      if (in.pos == in.lim) {
        const char* keep = in.pos;
        if (!in.refill(keep)) throw Bail{};
      }
      return *in.pos;
    };
    auto ws = [&] {
      while (is_ws(peek())) ++in.pos;
    };
    std::string header = "{";
    bool trace = false;
    ws();
    if (peek() != '{') return std::nullopt;  // a byte-order mark, or not an object
    ++in.pos;
    ws();
    if (peek() != '}') {
      do {
        ws();
        if (peek() != '"') return std::nullopt;
        ++in.pos;
        std::string key;
        for (char c; (c = peek()) != '"'; ++in.pos) {
          if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f || c == '\\')
            return std::nullopt;
          key += c;
        }
        ++in.pos;
        ws();
        if (peek() != ':') return std::nullopt;
        ++in.pos;
        ws();
        if (header.size() > 1) header += ',';
        const bool is_trace = key == "trace";
        if (is_trace) {
          if (trace || peek() != '[') return std::nullopt;
          trace = true;
          scan.begin = in.offset_of(in.pos);
          header += "\"trace\":[]";
          if (last_end) {  // the rest is the array and the object's end: the check confirms it
            scan.end = *last_end;
            break;
          }
        } else {
          header += "\"" + key + "\":";
        }
        ValueScan value;
        while (true) {
          peek();
          const char* from = in.pos;
          const char* end = value.feed(from, in.lim);
          if (!is_trace) header.append(from, static_cast<std::size_t>((end ? end : in.lim) - from));
          if (header.size() > kMaxJsonFileBytes) return std::nullopt;  // the header is read whole
          in.pos = end ? end : in.lim;
          if (end) break;
        }
        if (is_trace) scan.end = in.offset_of(in.pos);
        ws();
        const char c = peek();
        ++in.pos;
        if (c == '}') break;
        if (c != ',') return std::nullopt;
      } while (true);
    } else {
      ++in.pos;
    }
    // Only whitespace after the document.
    while (!last_end) {
      while (in.pos < in.lim && is_ws(*in.pos)) ++in.pos;
      if (in.pos < in.lim) return std::nullopt;
      const char* keep = in.pos;
      if (!in.refill(keep)) break;
    }
    if (!trace) return std::nullopt;
    header += "}";
    scan.header = parse_json_text(header, file);
  } catch (const Bail&) {
    return std::nullopt;
  }
  return scan;
}

std::size_t set_trace_window(std::size_t bytes) { return window_bytes.exchange(std::max<std::size_t>(bytes, 1)); }

std::shared_ptr<TraceFile> check_trace_file(const Scenario& header, const TraceScan& scan,
                                            std::set<std::string>* names) {
  File f(std::fopen(header.file.c_str(), "rb"));
  if (!f) return nullptr;
  const std::optional<FileIdentity> id = identity_of(f.get());
  if (!id || *id != scan.identity) return nullptr;
  auto reader = std::make_shared<const OpReader>(header);
  std::vector<std::uint64_t> chunk_hashes;
  ChunkLog chunks;
  chunks.record = &chunk_hashes;
  std::size_t ops = 0, submits = 0, counted = 0, strict = 0;
  double last_at = 0;
  TimeBudget budget(header, false);
  // Thrown, not left to the full read: a file past the whole-read limit has no full read to word it.
  MemberCount members(header.file, kMaxTotalMembers);
  DistinctNames distinct;
  auto name = [&](const OpSpec& op) {
    if (op.task.empty()) return true;
    ++submits;
    if (names) return names->insert(op.task).second;
    distinct.add(op.task);
    return true;
  };
  try {
    ArrayReader array(f.get(), scan.begin, *reader, header.file, &chunks);
    for (OpSpec op; array.next(op); ++ops) {
      // A trace with runs is read whole (the replay steps into a run's callback; the load checks its
      // top level and run names as a whole).
      if (op.kind == OpKind::kRun || op.kind == OpKind::kRaise) return nullptr;
      counted += op.kind == OpKind::kBatch ? op.ops.size() : 1;
      if (counted > kMaxTasks) return nullptr;
      members.add(op);
      if (op.at_s) {
        if (*op.at_s < last_at) return nullptr;
        last_at = *op.at_s;
      }
      budget.visit(op);
      if (!name(op)) return nullptr;
      for (const OpSpec& inner : op.ops)
        if (!name(inner)) return nullptr;
    }
    if (array.end_offset() != scan.end) return nullptr;
    strict = array.strict_count();
  } catch (const Bail&) {
    return nullptr;
  }
  if (distinct.repeats()) return nullptr;
  auto trace = std::make_shared<TraceFile>(header.file, scan.begin, scan.end, scan.identity, std::move(reader));
  trace->set_counts(ops, submits, strict);
  trace->set_chunk_hashes(std::move(chunk_hashes));
  return trace;
}

}  // namespace detail

}  // namespace dirsched
