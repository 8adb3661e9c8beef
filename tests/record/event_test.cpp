// The event-line record (record/event.hpp): every line every shipped scenario writes decodes, with the
// fields its writer (outputs/src/event_log.cpp) put there; a wrong type or a missing field is refused
// naming the line and the field.
#include "dirsched/record/event.hpp"

#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "dirsched/eventsim.hpp"
#include "dirsched/record/summary.hpp"
#include "dirsched/scenario.hpp"
#include "refusal.hpp"

namespace dirsched::record {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string refusal(const std::string& line) {
  return refusal_of([&] { decode_event(json::parse(line), "out/events.jsonl line 7"); });
}

TEST(EventRecord, EveryLineOfEveryShippedScenarioDecodes) {
  std::size_t lines = 0, dispatches = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(DIRSCHED_SOURCE_DIR) / "scenarios")) {
    if (entry.path().extension() != ".json") continue;
    const Scenario sc = load_scenario(entry.path().string());
    if (event_engine_refusal(sc)) continue;
    const auto run = run_events(sc, EventRunOptions{});
    std::istringstream in(run->events_jsonl);
    std::string line;
    std::uint64_t seq = 0;
    while (std::getline(in, line)) {
      const Event e = decode_event(json::parse(line), entry.path().string());
      EXPECT_EQ(e.seq, seq++) << line;
      EXPECT_EQ(e.of_run(), e.task.empty()) << line;
      if (e.event == "dispatch") {
        ++dispatches;
        EXPECT_TRUE(e.member.has_value()) << line;
        EXPECT_EQ(e.sub_worker, e.worker.rfind("sub", 0) == 0) << line;
      }
      ++lines;
    }
  }
  EXPECT_GT(lines, 1000u);
  EXPECT_GT(dispatches, 100u);
}

TEST(EventRecord, FieldsComeBackAsWritten) {
  const Event s = decode_event(
      json::parse(R"({"seq":3,"t_s":1.5,"event":"submit","task":"c","run":"r0","kind":"group","op":"submit_next_level_group",)"
                  R"("callable":"k","members":2,"workers":[4,7],"deps":[{"producer":"a","buffer":"x"}]})"),
      "l");
  EXPECT_EQ(s.seq, 3u);
  EXPECT_EQ(s.t_s, 1.5);
  EXPECT_EQ(s.run, "r0");
  EXPECT_EQ(s.kind, "group");
  EXPECT_EQ(s.members, 2u);
  EXPECT_EQ(s.workers, (std::vector<std::uint64_t>{4, 7}));
  ASSERT_EQ(s.deps.size(), 1u);
  EXPECT_EQ(s.deps[0].producer, "a");
  EXPECT_EQ(s.deps[0].buffer, "x");
  const Event d = decode_event(json::parse(R"({"seq":4,"t_s":2,"event":"dispatch","task":"s","member":0,"sub_worker":"sub3"})"), "l");
  EXPECT_EQ(d.worker, "sub3");
  EXPECT_TRUE(d.sub_worker);
  const Event r = decode_event(json::parse(R"({"seq":5,"t_s":2,"event":"run_raise","run":"r1","message":"boom"})"), "l");
  EXPECT_TRUE(r.of_run());
  EXPECT_EQ(r.run, "r1");
  EXPECT_EQ(r.message, "boom");
}

TEST(EventRecord, WrongTypesAndMissingFieldsNameTheLineAndField) {
  EXPECT_EQ(refusal(R"({"t_s":0,"task":"a"})"), "out/events.jsonl line 7: event: expected the event's name");
  EXPECT_EQ(refusal(R"({"event":"ready","task":"a"})"), "out/events.jsonl line 7: t_s: expected a time");
  EXPECT_EQ(refusal(R"({"event":"ready","t_s":"0","task":"a"})"), "out/events.jsonl line 7: t_s: expected a number");
  EXPECT_EQ(refusal(R"({"event":"ready","t_s":0})"), "out/events.jsonl line 7: task: expected the task's name");
  EXPECT_EQ(refusal(R"({"event":"ready","t_s":-5,"task":"a"})"), "out/events.jsonl line 7: t_s: expected a time from 0 to 2^32 s");
  // Finite but past the testbed's time limit (it printed "inf" in fidelity and the pictures).
  EXPECT_EQ(refusal(R"({"event":"ready","t_s":1e308,"task":"a"})"), "out/events.jsonl line 7: t_s: expected a time from 0 to 2^32 s");
  EXPECT_EQ(refusal(R"({"event":"ready","t_s":4294967296.5,"task":"a"})"), "out/events.jsonl line 7: t_s: expected a time from 0 to 2^32 s");
  EXPECT_EQ(refusal(R"({"event":"ready","t_s":4294967296,"task":"a"})"), "(accepted)");
  EXPECT_EQ(refusal(R"({"event":"ready","t_s":1,"waited_s":1e308,"task":"a"})"), "out/events.jsonl line 7: waited_s: expected a time from 0 to 2^32 s");
  EXPECT_EQ(refusal(R"({"event":"run_end","t_s":0})"), "out/events.jsonl line 7: run: expected the run's name");
  EXPECT_EQ(refusal(R"({"event":"dispatch","t_s":0,"task":"a","member":"0","worker":1})"),
            "out/events.jsonl line 7: member: expected an integer >= 0");
  EXPECT_EQ(refusal(R"({"event":"dispatch","t_s":0,"task":"a","worker":1})"),
            "out/events.jsonl line 7: member: expected a member index");
  EXPECT_EQ(refusal(R"({"event":"dispatch","t_s":0,"task":"a","member":0,"sub_worker":"subx"})"),
            "out/events.jsonl line 7: sub_worker: expected \"subN\"");
  EXPECT_EQ(refusal(R"({"event":"submit","t_s":0,"task":"a","deps":[{"producer":"p"}]})"),
            "out/events.jsonl line 7: deps[0].buffer: expected a buffer name");
  EXPECT_EQ(refusal(R"({"event":"submit","t_s":0,"task":"a","workers":[1,-2]})"),
            "out/events.jsonl line 7: workers[1]: expected an integer >= 0");
}

}  // namespace
}  // namespace dirsched::record
