// Names that count up (t0, t1, ...): a generated trace's tasks, and most recorded ones, are named
// by a prefix and a number. Tables that hold millions of names keep such a name as its number.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dirsched {

// A name ending in a decimal number: the prefix's size and the number. Only a canonical number
// counts (1 to 19 digits, no leading zero unless it is "0"), and the prefix is all before the last
// run of digits, so counted_text(prefix, number) gives the name back exactly.
struct CountedName {
  std::size_t prefix;
  std::uint64_t number;
};

inline std::optional<CountedName> counted_name(std::string_view name) {
  std::size_t i = name.size();
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') --i;
  const std::size_t digits = name.size() - i;
  if (digits == 0 || digits > 19 || (digits > 1 && name[i] == '0')) return std::nullopt;
  std::uint64_t v = 0;
  for (std::size_t k = i; k < name.size(); ++k) v = v * 10 + static_cast<std::uint64_t>(name[k] - '0');
  return CountedName{i, v};
}

// prefix + the number's decimal digits, into `out` (replacing what it held).
inline void counted_text(std::string_view prefix, std::uint64_t number, std::string& out) {
  char digits[20];
  const auto r = std::to_chars(digits, digits + sizeof digits, number);
  out.assign(prefix);
  out.append(digits, r.ptr);
}

}  // namespace dirsched
