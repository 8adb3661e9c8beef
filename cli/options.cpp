#include "options.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace dirsched::cli {

namespace {

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

std::string range_text(std::uint64_t min, std::uint64_t max) {
  return "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
}

// The shortest text that reads back as `v` ("1e-09", not "1.0000000000000001e-09").
std::string real_text(double v) {
  char b[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(b, sizeof b, "%.*g", digits, v);
    if (std::strtod(b, nullptr) == v) break;
  }
  return b;
}

}  // namespace

std::optional<std::uint64_t> parse_whole(const std::string& text) {
  if (!all_digits(text)) return std::nullopt;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;  // past 2^64-1
  return v;
}

std::optional<std::uint64_t> parse_size(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const std::optional<std::uint64_t> n = parse_whole(text.substr(0, digits));
  if (!n) return std::nullopt;
  std::string unit = text.substr(digits);
  if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "iB") unit.resize(unit.size() - 2);
  else if (!unit.empty() && unit.back() == 'B') unit.pop_back();
  int shift = 0;
  if (unit.empty()) shift = 0;
  else if (unit == "K" || unit == "k") shift = 10;
  else if (unit == "M") shift = 20;
  else if (unit == "G") shift = 30;
  else if (unit == "T") shift = 40;
  else return std::nullopt;
  if (shift && *n > (UINT64_MAX >> shift)) return std::nullopt;
  return *n << shift;
}

std::string size_text(std::uint64_t bytes) {
  static const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  for (int i = 3; i >= 0; --i) {
    const std::uint64_t unit = std::uint64_t{1} << (10 * (i + 1));
    if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes / unit) + " " + units[i];
  }
  return std::to_string(bytes) + " bytes";
}

CLI::Validator whole_number(std::uint64_t min, std::uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        const std::optional<std::uint64_t> v = parse_whole(text);
        if (!v || *v < min || *v > max) return "'" + text + "' is not " + range_text(min, max);
        return "";
      },
      "UINT in [" + std::to_string(min) + ", " + std::to_string(max) + "]", "whole number");
}

CLI::Validator real_number(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        const std::string why = "'" + text + "' is not a number from " + real_text(min) + " to " + real_text(max);
        if (text.empty() || text.find_first_not_of("0123456789.eE+-") != std::string::npos) return why;
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (end != text.c_str() + text.size() || !std::isfinite(v) || v < min || v > max) return why;
        return "";
      },
      "NUMBER in [" + real_text(min) + ", " + real_text(max) + "]", "real number");
}

CLI::Validator byte_size(std::uint64_t min, std::uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        const std::optional<std::uint64_t> v = parse_size(text);
        if (!v || *v < min || *v > max)
          return "'" + text + "' is not a size from " + size_text(min) + " to " + size_text(max) +
                 " (digits with an optional K, M, G or T, e.g. 512M or 2G)";
        return "";
      },
      "SIZE", "byte size");
}

void name_checked_values(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    for (const char* name : {"whole number", "real number", "byte size"}) {
      CLI::Validator* check = nullptr;
      try {
        check = option->get_validator(name);
      } catch (const CLI::OptionNotFound&) {
        continue;
      }
      const std::string takes = check->get_description();
      check->description("");
      option->type_name(takes);
    }
  }
  for (CLI::App* sub : app.get_subcommands({})) name_checked_values(*sub);
}

}  // namespace dirsched::cli
