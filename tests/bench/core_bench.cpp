// Core throughput and memory: submit, dispatch and complete, with no driver cost but a loop.
//
// Workloads (items = tasks):
// - Stream/W: 16384 independent singles, task i on worker i mod W, all submitted, then drained.
// - GroupMix/W: a mix of singles and 4-member groups on W workers.
// - Chains/W: W chains of 64 singles each, every link an INOUT on the chain's own buffer.
// - RecorderPerLiveTask: the Recorder's bytes for the same live tasks (the core's subtracted).
// - WideGroup: one group of 65,536 members (the loader's limit) on 65,536 workers, submitted (its ids
//   checked distinct) and drained; a last group names one id twice (rejected). Issue 28: the check
//   compared every pair (about 2 s a group).
// - ManyGroups: 100,000 two-member groups on 65,536 workers, with a Recorder observing, submitted and
//   drained.
// - ManyGroupsChecked: the same with the InvariantChecker observing too (run --check-invariants).
//   Issue 28: the checker's group FIFO was a vector erased at each launch, quadratic in waiting groups
//   (here about twice ManyGroups).
// - WaitingGroups/0 and /1: the checker's worse case, 400,000 READY groups on two workers launched one by
//   one (each launch takes the head of all those still waiting), without and with the checker: the
//   quadratic FIFO took 4.5 s of CPU checked against 0.12 s for the core alone; linear, about 0.24 s.
// Counters: bytes_per_live_task (heap bytes held per submitted, unfinished task).
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include "dirsched/invariants.hpp"
#include "dirsched/recorder.hpp"
#include "dirsched/scheduler.hpp"

static std::atomic<long long> g_live_bytes{0};

void* operator new(std::size_t n) {
  void* p = std::malloc(n + 16);
  if (!p) throw std::bad_alloc();
  *static_cast<std::size_t*>(p) = n;
  g_live_bytes += static_cast<long long>(n);
  return static_cast<char*>(p) + 16;
}
void operator delete(void* p) noexcept {
  if (!p) return;
  char* base = static_cast<char*>(p) - 16;
  g_live_bytes -= static_cast<long long>(*reinterpret_cast<std::size_t*>(base));
  std::free(base);
}
void operator delete(void* p, std::size_t) noexcept {
  operator delete(p);
}

namespace {

using namespace dirsched;

struct Platform {
  Registry registry;
  CallableId chip;
  explicit Platform(int workers) {
    for (int i = 0; i < workers; ++i) registry.add_next_level(WorkerId(i), WorkerKind::kLocalChip);
    chip = registry.add_callable({"chip", Namespace::kLocalChip, std::nullopt});
  }
};

// Drains the core: every dispatch completes successfully at the next instant.
void drain(Scheduler& s, std::vector<Dispatch>& inflight) {
  while (true) {
    const auto& d = s.iterate();
    if (d.empty() && inflight.empty()) return;
    for (const Dispatch& x : inflight) s.report(x.task, x.member, Outcome::kSuccess);
    inflight.assign(d.begin(), d.end());
  }
}

void Stream(benchmark::State& state) {
  const int workers = static_cast<int>(state.range(0));
  constexpr int kTasks = 16384;
  Platform p(workers);
  std::vector<std::string> names;
  for (int i = 0; i < kTasks; ++i) names.push_back("t" + std::to_string(i));
  std::vector<Dispatch> inflight;
  for (auto _ : state) {
    Scheduler s(p.registry);
    s.reserve(kTasks);  // as the SimGrid driver does for a known trace
    for (int i = 0; i < kTasks; ++i) s.submit_next_level(names[i], p.chip, {}, WorkerId(i % workers));
    drain(s, inflight);
    benchmark::DoNotOptimize(s.task_count());
  }
  state.SetItemsProcessed(state.iterations() * kTasks);
}
BENCHMARK(Stream)->Arg(8)->Arg(64)->Arg(4096)->Unit(benchmark::kMillisecond);

void GroupMix(benchmark::State& state) {
  const int workers = static_cast<int>(state.range(0));
  constexpr int kTasks = 16384;
  Platform p(workers);
  std::vector<Dispatch> inflight;
  for (auto _ : state) {
    Scheduler s(p.registry);
    s.reserve(kTasks);
    for (int i = 0; i < kTasks; ++i) {
      if (i % 8 == 0) {
        std::vector<WorkerId> ws;
        for (int m = 0; m < 4; ++m) ws.push_back(WorkerId((i + m * 3) % workers));
        s.submit_next_level_group("g", p.chip, std::vector<std::vector<Arg>>(4), std::move(ws));
      } else {
        s.submit_next_level("s", p.chip, {}, WorkerId(i % workers));
      }
    }
    drain(s, inflight);
  }
  state.SetItemsProcessed(state.iterations() * kTasks);
}
BENCHMARK(GroupMix)->Arg(8)->Arg(64)->Arg(4096)->Unit(benchmark::kMillisecond);

void Chains(benchmark::State& state) {
  const int workers = static_cast<int>(state.range(0));
  constexpr int kLength = 64;
  Platform p(workers);
  std::vector<Dispatch> inflight;
  for (auto _ : state) {
    Scheduler s(p.registry);
    std::vector<BufferId> bufs;
    for (int w = 0; w < workers; ++w) bufs.push_back(s.add_buffer({"b", Memory::kHost, std::nullopt}));
    for (int k = 0; k < kLength; ++k)
      for (int w = 0; w < workers; ++w)
        s.submit_next_level("c", p.chip, {Arg{bufs[w], Tag::kInOut}}, WorkerId((w + k) % workers));
    drain(s, inflight);
  }
  state.SetItemsProcessed(state.iterations() * kLength * workers);
}
BENCHMARK(Chains)->Arg(8)->Arg(64)->Arg(4096)->Unit(benchmark::kMillisecond);

void MemoryPerLiveTask(benchmark::State& state) {
  constexpr int kTasks = 100000;
  Platform p(64);
  double per_task = 0;
  for (auto _ : state) {
    const long long before = g_live_bytes;
    {
      Scheduler s(p.registry);
      BufferId x = s.add_buffer({"x", Memory::kHost, std::nullopt});
      s.submit_next_level("head", p.chip, {Arg{x, Tag::kOutput}}, WorkerId(0));
      // Every other task waits on "head": live, PENDING, each recorded as a consumer.
      for (int i = 0; i < kTasks; ++i)
        s.submit_next_level("task" + std::to_string(i), p.chip, {Arg{x, Tag::kInput}}, WorkerId(i % 64));
      per_task = static_cast<double>(g_live_bytes - before) / kTasks;
      benchmark::DoNotOptimize(s.task_count());
    }
  }
  state.counters["bytes_per_live_task"] = per_task;
}
BENCHMARK(MemoryPerLiveTask)->Iterations(3)->Unit(benchmark::kMillisecond);

// Heap bytes held after the MemoryPerLiveTask workload, with or without a Recorder observing it
// (records not kept past retirement, as in a run without an expect block; none retires here).
long long live_bytes_after_pending(const Platform& p, int tasks, bool record) {
  const long long before = g_live_bytes;
  Scheduler s(p.registry);
  std::unique_ptr<Recorder> recorder;
  if (record) {
    recorder = std::make_unique<Recorder>(s);
    recorder->set_keep_records(false);
    s.set_observer(recorder.get());
  }
  BufferId x = s.add_buffer({"x", Memory::kHost, std::nullopt});
  s.submit_next_level("head", p.chip, {Arg{x, Tag::kOutput}}, WorkerId(0));
  for (int i = 0; i < tasks; ++i)
    s.submit_next_level("task" + std::to_string(i), p.chip, {Arg{x, Tag::kInput}}, WorkerId(i % 64));
  if (recorder && recorder->live_records() != static_cast<std::size_t>(tasks) + 1) std::abort();
  return g_live_bytes - before;
}

void RecorderPerLiveTask(benchmark::State& state) {
  constexpr int kTasks = 100000;
  Platform p(64);
  double per_task = 0;
  for (auto _ : state) {
    const long long core = live_bytes_after_pending(p, kTasks, false);
    const long long both = live_bytes_after_pending(p, kTasks, true);
    per_task = static_cast<double>(both - core) / kTasks;
  }
  state.counters["bytes_per_live_task"] = per_task;
}
BENCHMARK(RecorderPerLiveTask)->Iterations(3)->Unit(benchmark::kMillisecond);

void WideGroup(benchmark::State& state) {
  constexpr int kMembers = 65536;
  Platform p(kMembers);
  std::vector<Dispatch> inflight;
  for (auto _ : state) {
    Scheduler s(p.registry);
    std::vector<WorkerId> ws;
    for (int m = 0; m < kMembers; ++m) ws.push_back(WorkerId(kMembers - 1 - m));
    s.submit_next_level_group("wide", p.chip, std::vector<std::vector<Arg>>(kMembers), std::move(ws));
    std::vector<WorkerId> twice;
    for (int m = 0; m < kMembers; ++m) twice.push_back(WorkerId(m == kMembers - 1 ? 0 : m));
    const SubmitResult r =
        s.submit_next_level_group("twice", p.chip, std::vector<std::vector<Arg>>(kMembers), std::move(twice));
    benchmark::DoNotOptimize(r);
    drain(s, inflight);
  }
  state.SetItemsProcessed(state.iterations() * 2 * kMembers);
}
BENCHMARK(WideGroup)->Unit(benchmark::kMillisecond);

void many_groups(benchmark::State& state, bool checked) {
  constexpr int kGroups = 100000, kWorkers = 65536;
  Platform p(kWorkers);
  std::vector<Dispatch> inflight;
  for (auto _ : state) {
    Scheduler s(p.registry);
    Recorder recorder(s);
    recorder.set_keep_records(false);
    InvariantChecker checker(p.registry, s.switches());
    ObserverList observers;
    observers.add(&recorder);
    observers.add(&checker);
    s.set_observer(checked ? static_cast<Observer*>(&observers) : &recorder);
    s.reserve(kGroups);
    for (int g = 0; g < kGroups; ++g)
      s.submit_next_level_group("g", p.chip, std::vector<std::vector<Arg>>(2),
                                {WorkerId((2 * g) % kWorkers), WorkerId((2 * g + 1) % kWorkers)});
    drain(s, inflight);
    if (checked) checker.finish(s.stuck());
    benchmark::DoNotOptimize(recorder.record_count());
  }
  state.SetItemsProcessed(state.iterations() * kGroups);
}

void ManyGroups(benchmark::State& state) {
  many_groups(state, false);
}
BENCHMARK(ManyGroups)->Unit(benchmark::kMillisecond);

void ManyGroupsChecked(benchmark::State& state) {
  many_groups(state, true);
}
BENCHMARK(ManyGroupsChecked)->Unit(benchmark::kMillisecond);

void WaitingGroups(benchmark::State& state) {
  constexpr int kGroups = 400000;
  const bool checked = state.range(0) != 0;
  Platform p(2);
  std::vector<Dispatch> inflight;
  for (auto _ : state) {
    Scheduler s(p.registry);
    InvariantChecker checker(p.registry, s.switches());
    if (checked) s.set_observer(&checker);
    s.reserve(kGroups);
    for (int g = 0; g < kGroups; ++g)
      s.submit_next_level_group("g", p.chip, std::vector<std::vector<Arg>>(2), {WorkerId(0), WorkerId(1)});
    drain(s, inflight);
    if (checked) checker.finish(s.stuck());
    benchmark::DoNotOptimize(s.stuck().size());
  }
  state.SetItemsProcessed(state.iterations() * kGroups);
}
BENCHMARK(WaitingGroups)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
