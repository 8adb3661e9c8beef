// "Did you mean" (text/suggest.hpp): the names an unknown command, option or JSON key is refused with.
#include "dirsched/suggest.hpp"

#include <gtest/gtest.h>

namespace dirsched {
namespace {

const std::vector<std::string> kVerbs = {"run", "sweep", "optimize", "compare", "check", "render", "explore", "gen"};

TEST(Suggest, ATypoNamesTheCommandMeant) {
  EXPECT_EQ(did_you_mean("runn", kVerbs, true), "did you mean 'run'?");
  EXPECT_EQ(did_you_mean("swepe", kVerbs, true), "did you mean 'sweep'?");  // two neighbours swapped
  EXPECT_EQ(did_you_mean("RENDER", kVerbs, true), "did you mean 'render'?");  // case ignored
}

TEST(Suggest, ClosestFirstAtMostThreeAndPrefixes) {
  const std::vector<std::string> options = {"--seed", "--out", "--outputs", "--cfg"};
  EXPECT_EQ(did_you_mean("--output", options, false), "did you mean --outputs or --out?");
  EXPECT_EQ(closest_names("ab", {"a1", "a2", "a3", "a4"}).size(), 3u);  // one edit each: the first three
}

TEST(Suggest, NothingCloseIsNoHint) {
  EXPECT_EQ(did_you_mean("zzzzzzzz", kVerbs, true), "");
  EXPECT_EQ(did_you_mean("run", kVerbs, true), "");  // not itself, and 'gen' is two edits of three letters
  EXPECT_EQ(did_you_mean(std::string(100000, 'x'), kVerbs, true), "");  // a huge word: compared by its head
}

}  // namespace
}  // namespace dirsched
