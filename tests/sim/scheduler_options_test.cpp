// The one factory of the core's configuration: make_scheduler() builds the Scheduler every driver
// runs from the scenario's registry and scheduler_options().
#include <gtest/gtest.h>

#include "dirsched/scenario.hpp"

namespace dirsched {
namespace {

const char* kScenario = R"({
  "name": "factory",
  "scheduler": { "host": "host0", "iteration_cost_s": 0.001 },
  "workers": { "next_level": [ { "id": 4, "kind": "local_chip" }, { "id": 2, "kind": "remote" } ], "sub": 3 },
  "callables": { "k": { "namespace": "LOCAL_CHIP", "duration_s": 1 },
                 "r": { "namespace": "REMOTE", "eligible": [2], "duration_s": 1 } },
  "trace": []
})";

TEST(SchedulerFactory, BuildsTheCoreFromTheScenariosRegistryAndOptions) {
  const Scenario s = parse_scenario(nlohmann::json::parse(kScenario), "factory.json", ".");
  const std::unique_ptr<Scheduler> core = make_scheduler(s);
  const Registry& reg = core->registry();
  ASSERT_EQ(reg.next_level_count(), 2u);
  EXPECT_EQ(reg.worker_at(0).id, WorkerId(4));
  EXPECT_EQ(reg.worker_at(1).kind, WorkerKind::kRemote);
  EXPECT_EQ(reg.sub_workers(), 3u);
  ASSERT_EQ(reg.callable_count(), 2u);
  EXPECT_EQ(reg.callable(CallableId(1u)).name, "r");
  EXPECT_EQ(core->options().fail_fast, scheduler_options(s).fail_fast);
}

TEST(SchedulerFactory, ScenarioWithoutCoreKeysRunsTheRuntimesDefaults) {
  const Scenario s = parse_scenario(nlohmann::json::parse(kScenario), "factory.json", ".");
  // The platform keys of the scheduler block (host, costs) stay with the simulator.
  EXPECT_DOUBLE_EQ(s.iteration_cost_s, 0.001);
  EXPECT_TRUE(scheduler_options(s).fail_fast);
}

}  // namespace
}  // namespace dirsched
