#include "dirsched/json_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <vector>

namespace dirsched {
namespace {

using nlohmann::json;

// Where a byte offset falls, counted like nlohmann's messages: line from 1, column = bytes of the
// line read up to and including the offending one.
struct LineCol {
  std::size_t line = 1, column = 0;
};

LineCol locate_in(const char* text, std::size_t size, std::uint64_t offset) {
  LineCol lc;
  const std::size_t end = offset < size ? static_cast<std::size_t>(offset) : size;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < end; ++i)
    if (text[i] == '\n') ++lc.line, line_start = i + 1;
  lc.column = end - line_start;
  return lc;
}

std::string at_text(LineCol lc) {
  return "line " + std::to_string(lc.line) + ", column " + std::to_string(lc.column);
}

// The input up to its first NUL byte (nlohmann's lexer takes a NUL for the end of the input, which
// would let anything after it through): the NUL's offset is kept and reported.
class Input {
 public:
  // Text in memory.
  explicit Input(std::string_view text) : pos_(text.data()), lim_(text.data() + text.size()) {
    if (const void* z = std::memchr(text.data(), 0, text.size())) {
      nul_at_ = static_cast<std::uint64_t>(static_cast<const char*>(z) - text.data());
      lim_ = static_cast<const char*>(z);
    }
    text_ = text;
  }
  // A file read in chunks.
  explicit Input(std::FILE* f) : file_(f), buf_(std::size_t{1} << 20) { pos_ = lim_ = buf_.data(); }

  bool at_end() { return pos_ == lim_ && !refill(); }
  char peek() const { return *pos_; }
  void bump() { ++pos_; }
  std::optional<std::uint64_t> nul_at() const { return nul_at_; }
  bool read_failed() const { return read_failed_; }
  std::string_view text() const { return text_; }

 private:
  bool refill() {
    if (!file_ || nul_at_ || eof_) return false;
    consumed_ += static_cast<std::uint64_t>(lim_ - buf_.data());
    const std::size_t n = std::fread(buf_.data(), 1, buf_.size(), file_);
    pos_ = lim_ = buf_.data();
    if (n == 0) {
      eof_ = true;
      read_failed_ = std::ferror(file_) != 0;
      return false;
    }
    lim_ = buf_.data() + n;
    if (const void* z = std::memchr(buf_.data(), 0, n)) {
      nul_at_ = consumed_ + static_cast<std::uint64_t>(static_cast<const char*>(z) - buf_.data());
      lim_ = static_cast<const char*>(z);
    }
    return pos_ != lim_;
  }

  std::string_view text_;
  std::FILE* file_ = nullptr;
  std::vector<char> buf_;
  const char* pos_ = nullptr;
  const char* lim_ = nullptr;
  std::uint64_t consumed_ = 0;  // bytes of the chunks before the current one
  std::optional<std::uint64_t> nul_at_;
  bool eof_ = false, read_failed_ = false;
};

// An input iterator over an Input, for nlohmann's iterator adapter (which only compares against the
// end, dereferences and increments).
struct InputIter {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = char;
  Input* in = nullptr;  // null: the end
  char operator*() const { return in->peek(); }
  InputIter& operator++() {
    in->bump();
    return *this;
  }
  InputIter operator++(int) {
    InputIter old = *this;
    in->bump();
    return old;
  }
  bool at_end() const { return !in || in->at_end(); }
  friend bool operator==(const InputIter& a, const InputIter& b) { return a.at_end() == b.at_end(); }
  friend bool operator!=(const InputIter& a, const InputIter& b) { return !(a == b); }
};

struct Fault {
  std::string path, what;
};

// nlohmann's SAX events in, a DOM out, with the reader's rules checked at each event.
class Builder {
 public:
  explicit Builder(const JsonStream* stream, std::size_t base_depth = 0)
      : stream_(stream), base_depth_(base_depth) {}

  bool null() { return scalar(json(nullptr)); }
  bool boolean(bool v) { return scalar(json(v)); }
  bool number_integer(json::number_integer_t v) { return scalar(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return scalar(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t& text) {
    if (v == 0 && reads_non_zero(text))
      return fail(path(), "number " + text + " is too small for a double (it would read as 0)");
    return scalar(json(v));
  }
  bool string(json::string_t& v) { return scalar(json(std::move(v))); }
  bool binary(json::binary_t& v) { return scalar(json(std::move(v))); }  // never from JSON text
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(json::string_t& k) {
    Frame& f = stack_.back();
    if (f.value->contains(k)) return fail(join(path_of_container(), k), "duplicate key '" + k + "'");
    f.key = std::move(k);
    f.has_key = true;
    return true;
  }
  bool parse_error(std::size_t position, const std::string& last_token, const json::exception& ex) {
    error_ = {position, last_token, ex.id, ex.what(), path()};
    return false;
  }

  struct SyntaxError {
    std::size_t position = 0;
    std::string last_token;
    int id = 0;
    std::string what, path;
  };
  const std::optional<Fault>& fault() const { return fault_; }
  const std::optional<SyntaxError>& syntax_error() const { return error_; }
  bool complete() const { return complete_; }
  bool started() const { return started_; }
  json take() { return std::move(root_); }

 private:
  struct Frame {
    json* value = nullptr;
    std::size_t count = 0;  // arrays: elements complete (the index of the one being read)
    std::string key;        // objects: the member being read
    bool has_key = false;
    bool streamed = false;  // the streamed array: elements go to the callback, not into it
  };

  static std::string join(const std::string& base, const std::string& key) {
    return base.empty() ? key : base + "." + key;
  }
  // The path of the value being read now (`trace[3].worker`).
  std::string path() const {
    std::string p;
    for (const Frame& f : stack_) {
      if (f.value->is_array())
        p += "[" + std::to_string(f.count) + "]";
      else if (f.has_key)
        p = join(p, f.key);
    }
    return p;
  }
  // The path of the innermost open container (for a key not yet stored).
  std::string path_of_container() const {
    std::string p;
    for (std::size_t i = 0; i + 1 < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      p = f.value->is_array() ? p + "[" + std::to_string(f.count) + "]" : join(p, f.key);
    }
    return p;
  }
  // A mantissa with a non-zero digit ("1e-400"), as opposed to a real zero ("0.0e5").
  static bool reads_non_zero(const std::string& text) {
    for (char c : text) {
      if (c == 'e' || c == 'E') break;
      if (c >= '1' && c <= '9') return true;
    }
    return false;
  }
  bool fail(std::string path, std::string what) {
    fault_ = Fault{std::move(path), std::move(what)};
    return false;
  }

  json* place(json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Frame& f = stack_.back();
    if (f.streamed) {
      element_ = std::move(v);
      return &element_;
    }
    if (f.value->is_array()) {
      auto& a = f.value->get_ref<json::array_t&>();
      a.push_back(std::move(v));
      return &a.back();
    }
    return &f.value->get_ref<json::object_t&>().emplace(f.key, std::move(v)).first->second;
  }
  // A value just completed in the innermost container (or as the document).
  bool completed() {
    if (stack_.empty()) {
      complete_ = true;
      return true;
    }
    Frame& f = stack_.back();
    if (f.streamed) {
      json element = std::move(element_);
      element_ = json();
      stream_->on_element(f.count, std::move(element));
    }
    if (f.value->is_array()) ++f.count;
    return true;
  }
  bool scalar(json&& v) {
    started_ = true;
    place(std::move(v));
    return completed();
  }
  bool open(json&& empty) {
    started_ = true;
    if (stack_.size() + base_depth_ >= kMaxJsonDepth)
      return fail(path(), "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels (the limit)");
    const bool streamed = stream_ && empty.is_array() && stack_.size() == 1 && stack_[0].value->is_object() &&
                          stack_[0].key == stream_->key;
    if (streamed && stream_->on_start) stream_->on_start(root_);
    json* v = place(std::move(empty));
    Frame f;
    f.value = v;
    f.streamed = streamed;
    stack_.push_back(std::move(f));
    return true;
  }
  bool close() {
    stack_.pop_back();
    return completed();
  }

  const JsonStream* stream_;
  std::size_t base_depth_;  // containers around the value read (parse_json_element)
  json root_;
  json element_;  // the streamed element being read
  std::vector<Frame> stack_;
  std::optional<Fault> fault_;
  std::optional<SyntaxError> error_;
  bool complete_ = false, started_ = false;
};

// The text after nlohmann's "[json.exception...] parse error at line L, column C: ".
std::string explanation(const std::string& what) {
  const auto p = what.find("parse error");
  if (p == std::string::npos) return what;
  const auto colon = what.find(": ", p);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

// Runs the parser over `in` and turns every way it can fail into one ScenarioError. `locate` gives
// the line and column of a byte offset.
template <typename Locate>
json run(Input& in, const std::string& origin, const JsonStream* stream, Locate locate, std::size_t base_depth = 0) {
  Builder b(stream, base_depth);
  const bool ok = json::sax_parse(InputIter{&in}, InputIter{}, &b, json::input_format_t::json,
                                  /*strict=*/true, /*ignore_comments=*/false);
  if (in.read_failed()) throw ScenarioError(origin, "", "cannot read the file (a read error)");
  if (b.fault()) throw ScenarioError(origin, b.fault()->path, b.fault()->what);
  if (const auto nul = in.nul_at()) {
    // The parser stopped at the NUL, taking it for the end of the input.
    const LineCol lc = locate(*nul + 1);
    const std::string where = b.complete() ? "after the document" : "in the document";
    throw ScenarioError(origin, b.complete() ? "" : (b.syntax_error() ? b.syntax_error()->path : ""),
                        "a NUL byte " + where + " at " + at_text(lc));
  }
  if (!ok) {
    const auto& e = *b.syntax_error();
    const LineCol lc = locate(e.position);
    if (e.id == 406)
      throw ScenarioError(origin, e.path,
                          "number " + e.last_token + " does not fit in a double (at most about 1.8e308)");
    if (b.complete()) throw ScenarioError(origin, "", "unexpected text after the document at " + at_text(lc));
    if (e.what.find("UTF-8") != std::string::npos)
      throw ScenarioError(origin, e.path, "invalid UTF-8 at " + at_text(lc));
    if (!b.started() && e.what.find("unexpected end of input") != std::string::npos)
      throw ScenarioError(origin, "", "not valid JSON: there is no value, only whitespace or nothing");
    throw ScenarioError(origin, e.path, "not valid JSON at " + at_text(lc) + ": " + explanation(e.what));
  }
  return b.take();
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

File open_checked(const std::string& file, std::uint64_t* size) {
  struct stat st {};
  const int fd = open_user_file(file, &st);
  if (fd < 0) throw ScenarioError(file, "", "cannot open the file: " + std::string(std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw ScenarioError(file, "", "is a directory, not a JSON file");
  }
  File f(::fdopen(fd, "rb"));
  if (!f) {
    const int e = errno;
    ::close(fd);
    throw ScenarioError(file, "", "cannot open the file: " + std::string(std::strerror(e)));
  }
  // A pipe (`<(...)`) is read as it comes; a FIFO nobody writes to reads as empty, never waited on.
  *size = S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0;
  return f;
}

// Line and column of an offset in a file, read again (only on the way to an error message).
LineCol locate_in_file(const std::string& file, std::uint64_t offset) {
  LineCol lc;
  File f(std::fopen(file.c_str(), "rb"));
  if (!f) return lc;
  std::vector<char> buf(std::size_t{1} << 16);
  std::uint64_t done = 0, line_start = 0;
  while (done < offset) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), offset - done));
    const std::size_t n = std::fread(buf.data(), 1, want, f.get());
    if (n == 0) break;
    for (std::size_t i = 0; i < n; ++i)
      if (buf[i] == '\n') ++lc.line, line_start = done + i + 1;
    done += n;
  }
  lc.column = static_cast<std::size_t>(done - line_start);
  return lc;
}

std::string size_text(std::uint64_t bytes) {
  return std::to_string(bytes) + " bytes";
}

}  // namespace

int open_user_file(const std::string& path, struct stat* st) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  if (::fstat(fd, st) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

std::string number_text(double v) {
  if (v == std::floor(v) && std::abs(v) <= 9007199254740992.0)
    return std::to_string(static_cast<std::int64_t>(v));
  return json(v).dump();
}

json parse_json_text(std::string_view text, const std::string& origin) {
  Input in(text);
  return run(in, origin, nullptr,
             [&](std::uint64_t offset) { return locate_in(text.data(), text.size(), offset); });
}

json parse_json_element(std::string_view text, const std::string& origin, std::size_t depth) {
  Input in(text);
  return run(
      in, origin, nullptr, [&](std::uint64_t offset) { return locate_in(text.data(), text.size(), offset); },
      depth);
}

json read_json_file(const std::string& file) {
  std::uint64_t size = 0;
  File f = open_checked(file, &size);
  const std::string limit = size_text(kMaxJsonFileBytes) + " (256 MiB)";
  if (size > kMaxJsonFileBytes)
    throw ScenarioError(file, "",
                        "the file holds " + size_text(size) + ", more than the limit of " + limit +
                            " for a file read whole (only a trace file's `trace` array is streamed past it: "
                            "docs/scenario-format.md, \"Big trace files\")");
  std::string text;
  text.reserve(static_cast<std::size_t>(size));
  std::vector<char> buf(std::size_t{1} << 16);
  while (const std::size_t n = std::fread(buf.data(), 1, buf.size(), f.get())) {
    if (text.size() + n > kMaxJsonFileBytes)  // a pipe or a special file: no size known beforehand
      throw ScenarioError(file, "", "the file holds more than the limit of " + limit);
    text.append(buf.data(), n);
  }
  if (std::ferror(f.get()))
    throw ScenarioError(file, "", "cannot read the file: " + std::string(std::strerror(errno)));
  Input in(text);
  return run(in, file, nullptr,
             [&](std::uint64_t offset) { return locate_in(text.data(), text.size(), offset); });
}

json read_json_stream(const std::string& file, const JsonStream& stream) {
  std::uint64_t size = 0;
  File f = open_checked(file, &size);
  Input in(f.get());
  return run(in, file, &stream, [&](std::uint64_t offset) { return locate_in_file(file, offset); });
}

}  // namespace dirsched
