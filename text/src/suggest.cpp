#include "dirsched/suggest.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

namespace dirsched {

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// Optimal string alignment distance, case ignored. Names are short (a command, an option, a key): the
// full table is fine; a typed text past 256 characters is compared by its first 256.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  a = a.substr(0, 256), b = b.substr(0, 256);
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

bool prefix_of(std::string_view shorter, std::string_view longer) {
  if (shorter.size() < 2 || shorter.size() > longer.size()) return false;
  for (std::size_t i = 0; i < shorter.size(); ++i)
    if (lower(shorter[i]) != lower(longer[i])) return false;
  return true;
}

}  // namespace

std::vector<std::string> closest_names(std::string_view typed, const std::vector<std::string>& names,
                                       std::size_t most) {
  typed = typed.substr(0, 256);  // as edit_distance compares it
  std::vector<std::pair<std::size_t, std::size_t>> near;  // (distance, index)
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    if (name == typed) continue;
    const std::size_t distance = edit_distance(typed, name);
    const std::size_t allowed = std::max<std::size_t>(1, std::max(typed.size(), name.size()) / 3);
    if (distance <= allowed || prefix_of(typed, name) || prefix_of(name, typed)) near.emplace_back(distance, i);
  }
  std::stable_sort(near.begin(), near.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [distance, i] : near) {
    if (out.size() == most) break;
    if (std::find(out.begin(), out.end(), names[i]) == out.end()) out.push_back(names[i]);
  }
  return out;
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& names, bool quote) {
  const std::vector<std::string> near = closest_names(typed, names);
  if (near.empty()) return "";
  std::string out = "did you mean ";
  for (std::size_t i = 0; i < near.size(); ++i) {
    if (i) out += i + 1 == near.size() ? " or " : ", ";
    out += quote ? "'" + near[i] + "'" : near[i];
  }
  return out + "?";
}

}  // namespace dirsched
