#include "dirsched/format.hpp"

#include <cmath>
#include <cstdio>

namespace dirsched {

std::string g6(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", std::round(v * 1e12) / 1e12);
  return std::string(b) == "-0" ? "0" : b;
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

double tick_step(double span, int target) {
  if (span <= 0) return 1;
  const double raw = span / target;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

}  // namespace dirsched
