// The one factory of Scheduler::Options: scenario keys under `scheduler` that configure the core.
//
// `scheduler.host`, `iteration_cost_s` and `dispatch_cost_s` are the simulated platform's, not the
// core's: they stay on Scenario for the SimGrid driver. Everything the core itself takes is mapped
// here, so every engine runs a scenario with the same core configuration.
#include "dirsched/scenario.hpp"

namespace dirsched {

Scheduler::Options scheduler_options(const Scenario& scenario) {
  Scheduler::Options options;
  options.switches = scenario.switches;  // scheduler.policy and .switches, or --policy / --switch
  options.stall_report_s = scenario.stall_report_s;
  options.fail_fast = scenario.fail_fast;
  options.pipeline_depth = scenario.pipeline_depth;
  return options;
}

std::unique_ptr<Scheduler> make_scheduler(const Scenario& scenario, Observer* observer) {
  return std::make_unique<Scheduler>(scenario.registry(), scheduler_options(scenario), observer);
}

}  // namespace dirsched
