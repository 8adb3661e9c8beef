// The import's line reader (strace_import.cpp), in a header of its own so that its fuzz target
// (tests/fuzz/lines_fuzz.cpp) reads lines exactly as the import does.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace dirsched::strace_lines {

constexpr std::string_view kRecordHead = "[mono_ns=";
constexpr std::string_view kStallText = "NEXT_LEVEL group reservation stalled";

// The lines of a file descriptor (owned), as std::getline gives them: without their '\n', the last
// one also without it; a read error ends the lines and is kept (error(): its errno).
//
// Memory is bounded by what can be a record, never by a line's length: a line that passes kProbe bytes
// with no record head ("[mono_ns=") in it is no longer kept. Its bytes are read on to its end and
// counted (Long::bytes), and only whether a head or a stall warning comes later is watched. A head
// found later starts what is kept (the text before it was noise, as on a short line); without one the
// line comes back empty, its length and whether it held a stall warning in Long (1 GB of NUL bytes
// without a newline was held whole, then 'read error').
class LineReader {
 public:
  static constexpr std::size_t kProbe = std::size_t{1} << 20;
  struct Long {
    std::uint64_t bytes = 0;  // the bytes skipped, 0 for a line kept whole
    bool stall = false;       // a stall warning was among them
  };

  // `probe` and `buffer` (the bytes of one read): a fuzz target gives a few bytes of each, so that short
  // inputs reach the skipping and lines cut by reads.
  explicit LineReader(int fd, std::size_t probe = kProbe, std::size_t buffer = std::size_t{1} << 20)
      : fd_(fd), probe_(probe), buf_(buffer) {}
  ~LineReader() { ::close(fd_); }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  bool next(std::string& line, Long& skipped) {
    line.clear();
    skipped = Long{};
    bool took = false, skipping = false, head = false;
    std::string carry;  // skipping: the last bytes skipped, so that a marker cut by a read is still seen
    const std::size_t keep = std::max(kRecordHead.size(), kStallText.size()) - 1;
    for (;;) {
      if (pos_ == len_ && !fill()) return took;
      const char* from = buf_.data() + pos_;
      const std::size_t left = len_ - pos_;
      const void* nl = std::memchr(from, '\n', left);
      const std::size_t n = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - from) : left;
      pos_ += nl ? n + 1 : n;
      took = true;
      if (!skipping) {
        line.append(from, n);
        if (!head && line.size() > probe_ && !(head = line.find(kRecordHead) != std::string::npos)) {
          skipping = true;
          skipped.bytes = line.size();
          skipped.stall = line.find(kStallText) != std::string::npos;
          carry = line.substr(line.size() - std::min(line.size(), keep));  // a probe shorter than a marker too
          line.clear();
          line.shrink_to_fit();
        }
      } else {
        std::string window = carry;
        window.append(from, n);
        if (!skipped.stall && window.find(kStallText) != std::string::npos) skipped.stall = true;
        if (const auto at = window.find(kRecordHead); at != std::string::npos) {
          skipping = false;  // a record starts here: kept from its head on
          head = true;
          skipped.bytes = skipped.bytes - carry.size() + at;  // the carry was counted when skipped
          line.assign(window, at, std::string::npos);
        } else {
          skipped.bytes += n;
          carry = window.substr(window.size() - std::min(window.size(), keep));
        }
      }
      if (nl) return true;
    }
  }
  int error() const { return error_; }

 private:
  bool fill() {
    ssize_t n;
    do n = ::read(fd_, buf_.data(), buf_.size());
    while (n < 0 && errno == EINTR);
    if (n <= 0) {
      if (n < 0) error_ = errno;
      return false;
    }
    pos_ = 0;
    len_ = static_cast<std::size_t>(n);
    return true;
  }
  int fd_;
  std::size_t probe_;
  std::vector<char> buf_;
  std::size_t pos_ = 0, len_ = 0;
  int error_ = 0;
};

}  // namespace dirsched::strace_lines
