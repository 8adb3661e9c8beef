// The default platform, built in code when a scenario names no platform file.
//
// Host `host0` (or the scheduler's host) runs the scheduler and, by default, the SUB workers; it has
// one core per SUB worker. Every other host a scenario names gets a host of its kind: local chips
// (100 Tflop/s) and local workers (100 Gflop/s) joined to the scheduler host by a PCIe-like link
// (16 GB/s, 1 us), remote endpoints (10 Tflop/s) by a network link (12.5 GB/s = 100 Gb/s, 5 us).
#pragma once

#include "dirsched/scenario.hpp"

namespace dirsched {

void build_default_platform(const Scenario& scenario);

}  // namespace dirsched
