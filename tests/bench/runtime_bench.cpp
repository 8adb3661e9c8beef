// The threads runtime against the bare loop it is shaped like, in the same run.
//
// Workload: 8192 independent singles with empty callables, task i on worker i mod W, submitted in
// one op at time 0, then run to the end; W = 2, 8, 64 NEXT_LEVEL workers (one thread each).
// - Runtime/W: dirsched::Runtime with the production core.
// - BareLoop/W: the runtime's own loop shape with no core: one scheduler thread, a FIFO per worker,
//   one-job mailboxes (mutex + condition variable per worker), a completion queue (one mutex, one
//   condition variable, level-triggered: the scheduler waits while the queue is empty, takes all of
//   it, hands the next job to each worker that reported).
// Both time the whole run: thread start, the stream, shutdown and join.
// Counters: tasks_per_s; dispatch latency p50_us / p99_us, from a member's end on a worker (the
// callable returned) to the start of the next member on that worker: the completion queue, the
// scheduler's wake-up, its decision and the worker's wake-up.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "dirsched/runtime.hpp"

namespace {

using namespace dirsched;
using Clock = std::chrono::steady_clock;
constexpr std::uint32_t kTasks = 8192;

// Per worker: when its last member ended, and the gaps to the next start. Written by that worker's
// thread only, read after the run joined it.
struct Lane {
  std::optional<Clock::time_point> last_end;
  std::vector<double> gaps_us;
  void start(Clock::time_point now) {
    if (last_end) gaps_us.push_back(std::chrono::duration<double, std::micro>(now - *last_end).count());
  }
};

void report(benchmark::State& state, std::vector<Lane>& lanes) {
  std::vector<double> all;
  for (Lane& l : lanes) all.insert(all.end(), l.gaps_us.begin(), l.gaps_us.end());
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) {
    return all.empty() ? 0.0 : all[static_cast<std::size_t>(p * (all.size() - 1))];
  };
  state.counters["p50_us"] = pct(0.50);
  state.counters["p99_us"] = pct(0.99);
  state.counters["tasks_per_s"] = benchmark::Counter(kTasks, benchmark::Counter::kIsIterationInvariantRate);
}

class SubmitStream : public Orchestrator {
 public:
  SubmitStream(CallableId callable, std::uint32_t workers) : callable_(callable), workers_(workers) {}
  double next_time(const Scheduler&) const override {
    return done_ ? std::numeric_limits<double>::infinity() : 0;
  }
  bool run_next(Scheduler& core, double) override {
    core.reserve(kTasks);
    for (std::uint32_t i = 0; i < kTasks; ++i)
      core.submit_next_level("t", callable_, {}, WorkerId(static_cast<std::int64_t>(i % workers_)));
    done_ = true;
    return true;
  }

 private:
  CallableId callable_;
  std::uint32_t workers_;
  bool done_ = false;
};

void BM_Runtime(benchmark::State& state) {
  const auto workers = static_cast<std::uint32_t>(state.range(0));
  std::vector<Lane> lanes;
  for (auto _ : state) {
    state.PauseTiming();
    Registry reg;
    for (std::uint32_t w = 0; w < workers; ++w) reg.add_next_level(WorkerId(w), WorkerKind::kLocalChip);
    const CallableId noop = reg.add_callable({"noop", Namespace::kLocalChip, std::nullopt});
    Scheduler core(std::move(reg));
    lanes.assign(workers, Lane{});
    CallableTable table;
    table.add("noop", [&lanes](const MemberCall& call) {
      Lane& lane = lanes[static_cast<std::size_t>(call.target.worker.value())];
      lane.start(Clock::now());
      lane.last_end = Clock::now();  // the empty body
      return true;
    });
    Runtime runtime(core, std::move(table));
    SubmitStream stream(noop, workers);
    state.ResumeTiming();
    runtime.run(stream);
    if (core.non_terminal_tasks() != 0) state.SkipWithError("tasks left");
  }
  report(state, lanes);
}

// The bare loop: the same threads, mailboxes and completion queue, a FIFO per worker instead of the core.
void BM_BareLoop(benchmark::State& state) {
  const auto workers = static_cast<std::uint32_t>(state.range(0));
  std::vector<Lane> lanes;
  for (auto _ : state) {
    state.PauseTiming();
    lanes.assign(workers, Lane{});
    state.ResumeTiming();  // thread start and join are timed, as in Runtime::run()
    struct Mailbox {
      std::mutex mutex;
      std::condition_variable cv;
      bool job = false, stop = false;
    };
    std::vector<Mailbox> boxes(workers);
    std::mutex qm;
    std::condition_variable qcv;
    std::vector<std::uint32_t> queue;  // workers whose member ended
    std::vector<std::uint32_t> left(workers, 0);
    for (std::uint32_t i = 0; i < kTasks; ++i) ++left[i % workers];
    std::vector<std::thread> threads;
    for (std::uint32_t w = 0; w < workers; ++w)
      threads.emplace_back([&, w] {
        Mailbox& box = boxes[w];
        while (true) {
          {
            std::unique_lock<std::mutex> lock(box.mutex);
            box.cv.wait(lock, [&] { return box.job || box.stop; });
            if (!box.job) return;
            box.job = false;
          }
          lanes[w].start(Clock::now());
          lanes[w].last_end = Clock::now();
          {
            std::lock_guard<std::mutex> lock(qm);
            queue.push_back(w);
          }
          qcv.notify_one();
        }
      });
    auto hand = [&](std::uint32_t w) {
      --left[w];
      {
        std::lock_guard<std::mutex> lock(boxes[w].mutex);
        boxes[w].job = true;
      }
      boxes[w].cv.notify_one();
    };
    std::thread scheduler([&] {
      std::uint32_t running = 0;
      for (std::uint32_t w = 0; w < workers; ++w)
        if (left[w]) hand(w), ++running;
      std::vector<std::uint32_t> taken;
      while (running > 0) {
        {
          std::unique_lock<std::mutex> lock(qm);
          qcv.wait(lock, [&] { return !queue.empty(); });
          taken.swap(queue);
        }
        for (std::uint32_t w : taken) {
          --running;
          if (left[w]) hand(w), ++running;
        }
        taken.clear();
      }
    });
    scheduler.join();
    for (Mailbox& b : boxes) {
      {
        std::lock_guard<std::mutex> lock(b.mutex);
        b.stop = true;
      }
      b.cv.notify_one();
    }
    for (std::thread& t : threads) t.join();
  }
  report(state, lanes);
}

}  // namespace

BENCHMARK(BM_BareLoop)
    ->ArgName("workers")
    ->Arg(2)
    ->Arg(8)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Runtime)
    ->ArgName("workers")
    ->Arg(2)
    ->Arg(8)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_MAIN();
