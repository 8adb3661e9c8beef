// Strict parsing of the command line's numbers and sizes.
//
// CLI11 converts "-1" to 2^64-1, a 20-digit seed to 2^64-1 and "2e19" to whatever a cast makes of it.
// These validators run on the text before any conversion: a whole number is decimal digits only (no
// sign, no exponent, no spaces) within the option's range; a real number is a finite decimal within
// its range; a size is digits with an optional K, M, G or T (powers of 1024). A refused value stops the
// command with exit 2 before any work, with the option, the text and the range in the message.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

namespace dirsched::cli {

// The value of `text` when it is a whole number in [0, 2^64-1] written with digits only.
std::optional<std::uint64_t> parse_whole(const std::string& text);
// The bytes of a size such as 512M, 2G or 1048576 (K, M, G, T: powers of 1024; an optional B or iB).
std::optional<std::uint64_t> parse_size(const std::string& text);
// "2 GiB", "512 MiB", "1000 bytes": a size as the messages print it.
std::string size_text(std::uint64_t bytes);

CLI::Validator whole_number(std::uint64_t min, std::uint64_t max);
CLI::Validator real_number(double min, double max);
CLI::Validator byte_size(std::uint64_t min, std::uint64_t max);
// A path given as '' (`render DIR --observed ''` was taken as not given): refused, naming the option.
CLI::Validator non_empty_path();

// Names the value of every option of `app` (and its subcommands) checked by a validator above after
// what it takes ("UINT in [1, 256]", "NUMBER in [0, 1]", "SIZE"). CLI11 would print the C++ type and
// the check joined ("FLOAT:UINT in [1, 256]"). Call once, after every option is added.
void name_checked_values(CLI::App& app);

}  // namespace dirsched::cli

namespace dirsched::cli {

// The first word of `argv` that names no command or option of `app`, worded for a person: "unknown
// command 'runn'; did you mean 'run'?", "unknown option --output; did you mean --outputs or --out?",
// with the command it was given to ("dirsched run"). Checked before CLI11 parses, so that a misspelt
// option is not reported as a required one missing (`run --output x` said "--out is required"). Long
// options only (`--name` or `--name=value`); a word after `--` is a value.
struct UnknownWord {
  std::string command;  // "dirsched", "dirsched run", "dirsched import strace"
  std::string message;
};
std::optional<UnknownWord> find_unknown_word(const CLI::App& app, int argc, char** argv);

}  // namespace dirsched::cli
