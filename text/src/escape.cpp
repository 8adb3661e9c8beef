#include "dirsched/escape.hpp"

#include <cstdio>

namespace dirsched {

namespace {

constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool c0_or_del(unsigned char c) { return c < 0x20 || c == 0x7f; }

std::string hex_byte(unsigned char c) {
  char b[8];
  std::snprintf(b, sizeof b, "\\x%02x", c);
  return b;
}

std::string c1_text(unsigned char second) {
  char b[12];
  std::snprintf(b, sizeof b, "\\u%04x", second);
  return b;
}

}  // namespace

std::string html_escape(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\n':
      case '\t': o += static_cast<char>(c); break;
      default:
        if (c0_or_del(c)) {
          o += kReplacement;
        } else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
                   static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
          o += kReplacement;
          ++i;
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o;
}

std::string dot_escape(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\\')
      o += "\\\\";
    else if (c0_or_del(c))
      o += kReplacement;
    else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
             static_cast<unsigned char>(s[i + 1]) <= 0x9F)
      o += kReplacement, ++i;
    else
      o += static_cast<char>(c);
  }
  return o;
}

std::string terminal_text(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\n' || c == '\t')
      o += static_cast<char>(c);
    else if (c0_or_del(c))
      o += hex_byte(c);
    else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
             static_cast<unsigned char>(s[i + 1]) <= 0x9F)
      o += c1_text(static_cast<unsigned char>(s[++i]));
    else
      o += static_cast<char>(c);
  }
  return o;
}

std::string first_control_character(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c0_or_del(c)) return hex_byte(c);
    if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(s[i + 1]) <= 0x9F)
      return c1_text(static_cast<unsigned char>(s[i + 1]));
  }
  return "";
}

TerminalFilter::~TerminalFilter() {
  if (pending_c2_) dest_->sputc(static_cast<char>(0xC2));
}

bool TerminalFilter::put(unsigned char c) {
  std::string out;
  if (pending_c2_) {
    pending_c2_ = false;
    if (c >= 0x80 && c <= 0x9F) {
      out = c1_text(c);
      return dest_->sputn(out.data(), static_cast<std::streamsize>(out.size())) ==
             static_cast<std::streamsize>(out.size());
    }
    if (dest_->sputc(static_cast<char>(0xC2)) == traits_type::eof()) return false;
  }
  if (c == 0xC2) {
    pending_c2_ = true;
    return true;
  }
  if (c != '\n' && c != '\t' && c0_or_del(c)) {
    out = hex_byte(c);
    return dest_->sputn(out.data(), static_cast<std::streamsize>(out.size())) ==
           static_cast<std::streamsize>(out.size());
  }
  return dest_->sputc(static_cast<char>(c)) != traits_type::eof();
}

TerminalFilter::int_type TerminalFilter::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  if (!put(static_cast<unsigned char>(traits_type::to_char_type(c)))) {
    failed_ = true;
    return traits_type::eof();
  }
  return c;
}

std::streamsize TerminalFilter::xsputn(const char* s, std::streamsize n) {
  for (std::streamsize i = 0; i < n; ++i)
    if (!put(static_cast<unsigned char>(s[i]))) {
      failed_ = true;
      return i;
    }
  return n;
}

int TerminalFilter::sync() {
  return dest_->pubsync() == 0 && !failed_ ? 0 : -1;
}

}  // namespace dirsched
