// Symmetry classes of a `choose` space (sweep/src/symmetry.cpp): chips the scenario cannot tell apart
// share a class; anything that names one apart keeps it alone.
#include <gtest/gtest.h>

#include "dirsched/sweep.hpp"

namespace dirsched {
namespace {

using Classes = std::vector<std::vector<std::int64_t>>;

// Eight chips; singles on 0 and 1; a group of two on "$gb", a choose space of all eight.
nlohmann::json doc_with(const std::function<void(nlohmann::json&)>& change = {}) {
  nlohmann::json d = nlohmann::json::parse(R"({
    "name": "t", "workers": {"next_level": []},
    "callables": {"k": {"namespace": "LOCAL_CHIP", "duration_s": 1}},
    "vars": {"gb": {"choose": 2, "from": [0, 1, 2, 3, 4, 5, 6, 7], "ordered": false}},
    "trace": [
      {"op": "submit_next_level", "task": "s0", "callable": "k", "worker": 0},
      {"op": "submit_next_level", "task": "s1", "callable": "k", "worker": 1},
      {"op": "submit_next_level_group", "task": "B", "callable": "k", "workers": "$gb", "args_list": [[], []]},
      {"op": "drain"}
    ]
  })");
  for (int i = 0; i < 8; ++i) d["workers"]["next_level"].push_back({{"id", i}, {"kind", "local_chip"}});
  if (change) change(d);
  return d;
}

Classes classes_of(const nlohmann::json& d) {
  return interchangeable_ids(parse_scenario(d, "t.json", "."), d, "gb");
}

TEST(Symmetry, ChipsNoOpNamesShareOneClass) {
  EXPECT_EQ(classes_of(doc_with()), (Classes{{0}, {1}, {2, 3, 4, 5, 6, 7}}));
}

TEST(Symmetry, AChipAnOpNamesStaysAlone) {
  const Classes c = classes_of(doc_with([](nlohmann::json& d) {
    const nlohmann::json op = {{"op", "submit_next_level"}, {"task", "s3"}, {"callable", "k"}, {"worker", 3}};
    d["trace"].insert(d["trace"].begin() + 2, op);
  }));
  EXPECT_EQ(c, (Classes{{0}, {1}, {2, 4, 5, 6, 7}, {3}}));
}

TEST(Symmetry, AChipInsideABatchOrGroupListIsNamed) {
  const Classes c = classes_of(doc_with([](nlohmann::json& d) {
    nlohmann::json group = {{"op", "submit_next_level_group"}, {"task", "G"}, {"callable", "k"}, {"workers", {4, 5}}};
    group["args_list"] = {nlohmann::json::array(), nlohmann::json::array()};
    nlohmann::json batch = {{"op", "batch"}};
    batch["ops"] = nlohmann::json::array({group});
    d["trace"].insert(d["trace"].begin() + 2, batch);
  }));
  EXPECT_EQ(c, (Classes{{0}, {1}, {2, 3, 6, 7}, {4}, {5}}));
}

TEST(Symmetry, AnotherVariableAsAWorkerNamesItsCandidates) {
  const Classes c = classes_of(doc_with([](nlohmann::json& d) {
    d["vars"]["w"] = {6, 7};
    d["trace"][1]["worker"] = "$w";  // chip 1 is no longer named; 6 and 7 are
  }));
  EXPECT_EQ(c, (Classes{{0}, {1, 2, 3, 4, 5}, {6}, {7}}));
}

TEST(Symmetry, AFaultOnAChipsHostOrLinkKeepsItAlone) {
  const Classes c = classes_of(doc_with([](nlohmann::json& d) {
    d["faults"] = {{{"host", "chip2"}, {"off_at_s", 1}}, {{"link", "pcie_chip3"}, {"off_at_s", 1}}};
  }));
  EXPECT_EQ(c, (Classes{{0}, {1}, {2}, {3}, {4, 5, 6, 7}}));
}

TEST(Symmetry, AnotherKindOrASharedHostIsAnotherClass) {
  const Classes c = classes_of(doc_with([](nlohmann::json& d) {
    d["workers"]["next_level"][4]["host"] = "board";
    d["workers"]["next_level"][5]["host"] = "board";
    d["workers"]["next_level"][6]["frames"] = 2;
  }));
  EXPECT_EQ(c, (Classes{{0}, {1}, {2, 3, 7}, {4, 5}, {6}}));
}

TEST(Symmetry, ATraceThatIsNotInlineGivesNoClasses) {
  nlohmann::json d = doc_with();
  const Scenario s = parse_scenario(d, "t.json", ".");
  d.erase("trace");  // as a trace file would leave it: nothing to read the names from
  const Classes c = interchangeable_ids(s, d, "gb");
  EXPECT_EQ(c.size(), 8u);
}

TEST(Symmetry, OneRepresentativePerClassOfListsPositionByPosition) {
  const Classes classes = {{0}, {1}, {2, 3, 4}};
  const std::vector<nlohmann::json> lists = {{0, 1}, {0, 2}, {0, 3}, {2, 3}, {3, 4}, {1, 4}, {2, 0}, {4, 0}, {4, 2}};
  // [2,0] is not [0,2]: member 0 runs on chip 0 in one, on a class chip in the other.
  EXPECT_EQ(class_representatives(lists, classes), (std::vector<std::size_t>{0, 1, 1, 3, 3, 5, 6, 6, 3}));
}

}  // namespace
}  // namespace dirsched
