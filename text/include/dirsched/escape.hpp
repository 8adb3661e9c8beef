// One escaping for every writer: names (tasks, callables, hosts, workers, scenario names) and any
// value read back from a run folder are data, never markup, DOT escapes or terminal control sequences.
//
// - html_escape: HTML text and attribute values, and SVG/XML (the same four characters: & < > ").
//   (an apostrophe is left as it is: every attribute dirsched writes is in double quotes.)
//   Control characters (U+0000-U+001F but tab and newline, U+007F, U+0080-U+009F) are not allowed in
//   XML 1.0 even as references: each becomes U+FFFD, the replacement character.
// - dot_escape: a Graphviz label or tooltip (an escString) given to libcgraph: a backslash is doubled,
//   so that `\N`, `\G`, `\l`, `\n` in a name stay text; control characters become U+FFFD. The quote
//   is left to cgraph's writer, which puts every string in quotes and escapes `"` itself.
// - terminal_text: a line for a terminal or a log: control characters (but newline and tab) and the
//   C1 range become visible text (`\x1b`, `\u009b`), so an escape sequence in a name (clipboard write,
//   title, clear screen) never reaches the terminal raw.
// - TerminalFilter: the same as a stream filter (std::cerr and the text commands' std::cout go through it).
#pragma once

#include <streambuf>
#include <string>
#include <string_view>

namespace dirsched {

std::string html_escape(std::string_view s);
std::string dot_escape(std::string_view s);
std::string terminal_text(std::string_view s);

// The first control character of `s` (as terminal_text shows it), or "" when it has none. Tab and
// newline count as control characters here: names hold neither.
std::string first_control_character(std::string_view s);

// A streambuf that passes text to `dest` through terminal_text (a C1 character split across two
// writes is still caught). It does not own `dest`.
class TerminalFilter : public std::streambuf {
 public:
  explicit TerminalFilter(std::streambuf* dest) : dest_(dest) {}
  ~TerminalFilter() override;

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  bool put(unsigned char c);
  std::streambuf* dest_;
  bool pending_c2_ = false;  // a 0xC2 byte held until the next one shows whether it starts a C1 character
  bool failed_ = false;
};

}  // namespace dirsched
