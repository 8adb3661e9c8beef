// The wait attribution's critical-path node table, driven by a core directly (the replay refuses an
// empty task name, the core does not): an empty name must be kept as one, even as the first name the
// table ever stores (no chunk of text exists yet). Without the guard in NodeTable::place() the empty
// name read the last chunk of an empty list: undefined behaviour that a Release build may survive, and
// that the AddressSanitizer stage of .ci/run stops.
#include <gtest/gtest.h>

#include "dirsched/scheduler.hpp"
#include "dirsched/waits.hpp"

namespace dirsched {
namespace {

TEST(WaitNodeNames, AnEmptyNameFirstAndAfterOthers) {
  Registry reg;
  reg.add_next_level(WorkerId(0), WorkerKind::kLocalChip);
  const CallableId k = reg.add_callable({"k", Namespace::kLocalChip, std::nullopt});
  Scheduler core(std::move(reg));
  WaitAttribution waits(core);
  core.set_observer(&waits);
  ASSERT_TRUE(core.submit_next_level("", k, {}, WorkerId(0)).accepted());
  ASSERT_TRUE(core.submit_next_level("b", k, {}, WorkerId(0)).accepted());
  double t = 0;
  for (int step = 0; step < 2; ++step) {
    const std::vector<Dispatch> ds = core.iterate();
    ASSERT_EQ(ds.size(), 1u);
    core.set_time(t += 1);
    core.report(ds[0].task, ds[0].member, Outcome::kSuccess);
  }
  core.iterate();
  const std::vector<CriticalStep> path = waits.critical_path();
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(path[0].task, "");
  EXPECT_EQ(path[1].task, "b");
  EXPECT_EQ(path[1].after, "");
  EXPECT_EQ(path[1].reason, StartReason::kWorker);
}

}  // namespace
}  // namespace dirsched
