#include "options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "dirsched/suggest.hpp"

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

CLI::Validator non_empty_path() {
  return CLI::Validator([](std::string& text) -> std::string { return text.empty() ? "an empty path" : ""; }, "PATH",
                        "non-empty path");
}

void name_checked_values(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    for (const char* name : {"whole number", "real number", "byte size", "non-empty path"}) {
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

namespace {

std::vector<std::string> long_names(const CLI::App& at) {
  std::vector<std::string> names;
  for (const CLI::Option* option : at.get_options())
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  return names;
}

std::vector<std::string> command_names(const CLI::App& at) {
  std::vector<std::string> names;
  for (const CLI::App* sub : at.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

std::string with_hint(std::string message, const std::string& hint) { return hint.empty() ? message : message + "; " + hint; }

}  // namespace

std::optional<UnknownWord> find_unknown_word(const CLI::App& app, int argc, char** argv) {
  const CLI::App* at = &app;
  std::string command = "dirsched";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--") break;
    if (word.rfind("--", 0) == 0) {
      const std::string name = word.substr(0, word.find('='));
      const CLI::Option* option = at->get_option_no_throw(name);
      if (!option)
        return UnknownWord{command, with_hint("unknown option " + name, did_you_mean(name, long_names(*at), false))};
      // Its value is the next word, unless given as --name=value or the option takes none.
      if (word.find('=') == std::string::npos && option->get_items_expected_min() > 0) ++i;
      continue;
    }
    if (word.size() > 1 && word[0] == '-') {  // a short option: its value, if it takes one, is skipped
      const CLI::Option* option = at->get_option_no_throw(word.substr(0, 2));
      if (option && word.size() == 2 && option->get_items_expected_min() > 0) ++i;
      continue;
    }
    const std::vector<std::string> commands = command_names(*at);
    if (std::find(commands.begin(), commands.end(), word) != commands.end()) {
      at = at->get_subcommand(word), command += " " + word;
      continue;
    }
    // A word that is not a command where one is required (`dirsched runn`, `dirsched import stace`).
    if (at->get_require_subcommand_min() > 0)
      return UnknownWord{command, with_hint("unknown command '" + word + "'", did_you_mean(word, commands, true))};
  }
  return std::nullopt;
}

}  // namespace dirsched::cli

