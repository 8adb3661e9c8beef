#include "dirsched/runtime.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

#include "dirsched/error.hpp"

namespace dirsched {

void CallableTable::add(std::string name, MemberFn fn) {
  if (fns_.count(name)) throw RuntimeError("callable '" + name + "' is registered twice");
  fns_.emplace(std::move(name), std::move(fn));
}

const MemberFn* CallableTable::find(std::string_view name) const {
  auto it = fns_.find(name);
  return it == fns_.end() ? nullptr : &it->second;
}

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

struct End {
  std::uint64_t seq;
  TaskId task;
  std::uint32_t member;
  Outcome outcome;
  std::string error;  // what() of the exception a callable threw
};

}  // namespace

struct Runtime::Impl {
  struct Job {
    const MemberFn* fn = nullptr;
    MemberCall call;
  };
  // A worker's one-job mailbox. The core never dispatches to a busy worker, so a second job while
  // one is held is a bug.
  struct Worker {
    std::mutex mutex;
    std::condition_variable cv;
    std::optional<Job> job;
    std::optional<Job> staged;  // staging (#1583): a member held on the second frame until its activation
    bool stop = false;
    std::thread thread;
  };

  CallableTable callables;
  Options options;
  std::vector<const MemberFn*> fn_of;            // by CallableId
  std::vector<std::unique_ptr<Worker>> workers;  // NEXT_LEVEL in registration order, then SUB
  std::size_t next_level = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  // The completion queue.
  mutable std::mutex queue_mutex;
  std::condition_variable queue_cv;
  std::vector<End> queue;

  double now() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  void worker_main(Worker& w) {
    while (true) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(w.mutex);
        w.cv.wait(lock, [&] { return w.job.has_value() || w.stop; });
        if (!w.job) return;  // stop with nothing to run
        job = std::move(*w.job);
        w.job.reset();
      }
      // No lock is held here: a callable may wait for another's progress.
      End end{job.call.seq, job.call.task, job.call.member, Outcome::kFailure, {}};
      try {
        end.outcome = (*job.fn)(job.call) ? Outcome::kSuccess : Outcome::kFailure;
      } catch (const std::exception& e) {
        end.error = e.what();
        if (end.error.empty()) end.error = "exception";
      } catch (...) {
        end.error = "unknown exception";
      }
      {
        std::lock_guard<std::mutex> lock(queue_mutex);
        queue.push_back(std::move(end));
      }
      queue_cv.notify_one();
    }
  }

  void hand_out(const Scheduler& core, const Dispatch& d) {
    const std::size_t index =
        d.target.sub ? next_level + d.target.sub_index : *core.registry().index_of(d.target.worker);
    if (d.activate) {  // its staged job starts now (prepare was called at its staging)
      Worker& w = *workers[index];
      {
        std::lock_guard<std::mutex> lock(w.mutex);
        if (w.job || !w.staged)
          throw InternalError("dirsched runtime: an activation without a staged job on an idle worker");
        w.staged->call.handed_at = std::chrono::steady_clock::now();
        w.job = std::move(w.staged);
        w.staged.reset();
      }
      w.cv.notify_one();
      return;
    }
    Job job;
    job.fn = fn_of[core.callable(d.task).index()];
    job.call.task = d.task;
    job.call.member = d.member;
    job.call.target = d.target;
    job.call.seq = d.seq;
    job.call.task_name = std::string(core.name(d.task));
    if (options.prepare) options.prepare(d, job.call);
    Worker& w = *workers[index];
    if (d.prepare_only) {  // staged: held, not started (the worker may be running another member)
      std::lock_guard<std::mutex> lock(w.mutex);
      if (w.staged) throw InternalError("dirsched runtime: a second staged job for one worker");
      w.staged = std::move(job);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(w.mutex);
      if (w.job) throw InternalError("dirsched runtime: a second job for a busy worker");
      job.call.handed_at = std::chrono::steady_clock::now();
      w.job = std::move(job);
    }
    w.cv.notify_one();
  }

  void stop_workers() {
    for (auto& w : workers) {
      {
        std::lock_guard<std::mutex> lock(w->mutex);
        w->stop = true;
      }
      w->cv.notify_one();
    }
    for (auto& w : workers)
      if (w->thread.joinable()) w->thread.join();
  }
};

Runtime::Runtime(Scheduler& core, CallableTable callables, Options options)
    : core_(core), impl_(std::make_unique<Impl>()) {
  impl_->callables = std::move(callables);
  impl_->options = std::move(options);
  const Registry& reg = core.registry();
  // mpi_group_lane (#1624) decides when a rank's member starts and ends; real threads run each member
  // at its dispatch, so they cannot follow it.
  if (core.switches()[Switch::kMpiGroupLane] && !reg.mpi_groups().empty())
    throw RuntimeError("mpi_group_lane is on and the registry has MPI groups: the threads runtime runs each member at its dispatch and cannot serialise an MPI group's requests");
  for (std::uint32_t i = 0; i < reg.callable_count(); ++i) {
    const std::string& name = reg.callable(CallableId(i)).name;
    const MemberFn* fn = impl_->callables.find(name);
    if (!fn) throw RuntimeError("callable '" + name + "' has no registered function");
    impl_->fn_of.push_back(fn);
  }
  impl_->next_level = reg.next_level_count();
  const std::size_t count = reg.next_level_count() + reg.sub_workers();
  for (std::size_t i = 0; i < count; ++i) impl_->workers.push_back(std::make_unique<Impl::Worker>());
}

Runtime::~Runtime() {
  if (impl_) impl_->stop_workers();
}

std::size_t Runtime::worker_threads() const {
  return impl_->workers.size();
}

std::size_t Runtime::queued_completions() const {
  std::lock_guard<std::mutex> lock(impl_->queue_mutex);
  return impl_->queue.size();
}

double Runtime::now() const {
  return impl_->now();
}

void Runtime::run(Orchestrator& orchestrator) {
  Impl& m = *impl_;
  m.start = std::chrono::steady_clock::now();
  // One thread per worker and one for the scheduler: when the system cannot start them all, the
  // message says how many were asked for, how many started and the limit (not just "Resource
  // temporarily unavailable").
  const std::size_t wanted = m.workers.size() + 1;
  std::size_t started = 0;
  auto cannot_start = [&](const std::system_error& e) {
    m.stop_workers();
    struct rlimit lim {};
    std::string limit = "unlimited";
    if (getrlimit(RLIMIT_NPROC, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) limit = std::to_string(lim.rlim_cur);
    return RuntimeError("the threads engine needs " + std::to_string(wanted) +
                        " threads (one per worker and the scheduler's) and could start only " +
                        std::to_string(started) + " (" + e.code().message() +
                        "; the limit of processes and threads, ulimit -u, is " + limit +
                        ", and each thread needs its stack, ulimit -s and -v)");
  };
  for (auto& w : m.workers) {
    Impl::Worker* worker = w.get();
    try {
      worker->thread = std::thread([&m, worker] { m.worker_main(*worker); });
    } catch (const std::system_error& e) {
      throw cannot_start(e);
    }
    ++started;
  }
  std::exception_ptr error;
  std::thread scheduler;
  try {
    scheduler = std::thread([&] {
    Scheduler& core = core_;
    std::vector<MemberEnd> ends;
    std::vector<End> taken;
    auto carry_out = [&](const std::vector<Dispatch>& ds) {
      for (const Dispatch& d : ds) m.hand_out(core, d);
    };
    try {
      core.set_time(0);
      while (true) {
        const double t_op = orchestrator.next_time(core);
        const double t_next = std::min(t_op, core.next_stall_deadline().value_or(kNever));
        // Nothing running means nothing can arrive: with nothing due either, the run is over.
        if (core.running_members() == 0 && t_next == kNever) break;
        {
          std::unique_lock<std::mutex> lock(m.queue_mutex);
          auto arrived = [&] { return !m.queue.empty(); };
          if (t_next == kNever) {
            m.queue_cv.wait(lock, arrived);
          } else {
            const auto deadline = m.start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                std::chrono::duration<double>(t_next));
            m.queue_cv.wait_until(lock, deadline, arrived);
          }
          taken.swap(m.queue);
        }
        // A wait can end a hair before its deadline: the op or report then belongs to this instant.
        const double now = std::max(m.now(), taken.empty() ? t_next : 0.0);
        core.set_time(now);
        // 1. The ends that arrived: one instant, applied in the instant's order, then its iterations.
        for (End& e : taken) {
          ends.push_back({e.seq, e.task, e.member, e.outcome});
          if (!e.error.empty()) failures_.push_back({e.task, e.member, std::move(e.error)});
        }
        taken.clear();
        complete_instant(core, ends, carry_out);
        // 2. The orchestrator's ops due now, one at a time.
        while (orchestrator.next_time(core) <= now)
          if (orchestrator.run_next(core, now)) run_instant(core, carry_out);
      }
    } catch (...) {
      error = std::current_exception();
    }
  });
  } catch (const std::system_error& e) {
    throw cannot_start(e);
  }
  scheduler.join();
  m.stop_workers();  // waits for running members to return
  if (error) std::rethrow_exception(error);
}

}  // namespace dirsched
