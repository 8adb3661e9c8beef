// Fuzz target: the import's line reader (import/src/line_reader.hpp), which reads a runtime log of any
// size in bounded memory (issue 53 F7). Its probe is 16 bytes here and its reads 7 bytes (1 MiB each in
// the import), so that short inputs reach every path: a line kept whole, a long line skipped as noise, a record head found after
// long text, a marker cut by a read. Checked against the input's lines as std::getline gives them:
// - a line of at most `probe` bytes comes back whole, with nothing skipped;
// - a longer one comes back whole, or as the text from its first record head on with the bytes before
//   it counted as skipped (none of them a head), or empty with all its bytes counted and whether a
//   stall warning was among them;
// - as many lines as getline gives, then the end.
// Any difference aborts (a finding). Built as `lines_fuzz` with DIRSCHED_FUZZ=ON, and in every build as
// `lines_fuzz_replay` over tests/fuzz/lines-corpus/ and the import's test logs.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "../../import/src/line_reader.hpp"

namespace {

using dirsched::strace_lines::kRecordHead;
using dirsched::strace_lines::kStallText;
using dirsched::strace_lines::LineReader;

constexpr std::size_t kProbe = 16;
constexpr std::size_t kBuffer = 7;  // reads of 7 bytes: lines and markers cut by reads

void check(bool ok) {
  if (!ok) std::abort();
}

// One line read against the input's line `want`.
void check_line(std::string_view want, const std::string& got, const LineReader::Long& skipped) {
  if (skipped.bytes == 0) return check(got == want);
  check(want.size() > kProbe && skipped.bytes + got.size() == want.size());
  const std::string_view before = want.substr(0, skipped.bytes);
  check(want.substr(skipped.bytes) == got && before.find(kRecordHead) == std::string_view::npos);
  if (got.empty()) check(skipped.stall == (want.find(kStallText) != std::string_view::npos));
  else check(got.rfind(kRecordHead, 0) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const int fd = ::memfd_create("lines_fuzz", 0);
  if (fd < 0) std::abort();
  if (size && ::write(fd, data, size) != static_cast<ssize_t>(size)) std::abort();
  if (::lseek(fd, 0, SEEK_SET) != 0) std::abort();
  LineReader in(fd, kProbe, kBuffer);  // closes fd
  std::string line;
  LineReader::Long skipped;
  std::size_t at = 0;
  while (in.next(line, skipped)) {
    check(at < input.size());  // no line past the end
    const std::size_t nl = input.find('\n', at);
    const std::size_t end = nl == std::string_view::npos ? input.size() : nl;
    check_line(input.substr(at, end - at), line, skipped);
    at = nl == std::string_view::npos ? input.size() : nl + 1;
  }
  check(at == input.size() && in.error() == 0);  // every line read
  return 0;
}
