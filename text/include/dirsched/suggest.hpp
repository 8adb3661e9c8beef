// "Did you mean": the valid names closest to one a person typed (an unknown command, option or JSON
// key), for the messages that refuse it.
// - closest_names: the names within a small edit distance of `typed` (insertions, deletions,
//   substitutions and swaps of two neighbouring characters, case ignored; at most a third of the longer
//   name, and at least 1), or of which `typed` is a prefix or that are a prefix of it; closest first, ties
//   in the order given, at most `most`. A typed text past 256 characters is compared by its first 256.
// - did_you_mean: "did you mean 'workers'?" / "did you mean --out or --outputs?" (`quote` puts the names in
//   single quotes), or "" when no name is close.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dirsched {

std::vector<std::string> closest_names(std::string_view typed, const std::vector<std::string>& names,
                                       std::size_t most = 3);
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& names, bool quote);

}  // namespace dirsched
