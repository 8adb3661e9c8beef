#include "fake_driver.hpp"

#include <algorithm>
#include <memory>

namespace dirsched::testing {

static std::string target_text(const Target& t) {
  return t.sub ? "sub" + std::to_string(t.sub_index) : std::to_string(t.worker.value());
}

void EventTrace::on_event(const Event& e) {
  std::string line = std::string(to_string(e.kind)) + " " + std::string(e.name);
  switch (e.kind) {
    case EventKind::kReady:
      line += e.queue == QueueKind::kWorker  ? " worker:" + std::to_string(e.queue_worker.value())
              : e.queue == QueueKind::kGroup ? " group"
                                             : " sub";
      break;
    case EventKind::kDispatch:
    case EventKind::kActivate:
    case EventKind::kMemberEnd:
      line += "[" + std::to_string(e.member) + "]@" + target_text(e.target);
      if (e.kind == EventKind::kMemberEnd) line += " " + std::string(to_string(e.outcome));
      if (e.prepare_only) line += " prepare_only";
      break;
    case EventKind::kReject:
      line += " " + std::string(to_string(e.rejection->code));
      break;
    case EventKind::kCancel:
      line += " cause=" + std::string(e.message);
      break;
    case EventKind::kGroupBlocked:
      line += " busy=";
      for (WorkerId w : *e.workers) line += std::to_string(w.value()) + ",";
      break;
    case EventKind::kGroupStall:
    case EventKind::kReservationStall:
      line += " busy=";
      for (WorkerId w : *e.workers) line += std::to_string(w.value()) + ",";
      if (e.idle_queued) {
        line += " idle_queued=";
        for (WorkerId w : *e.idle_queued) line += std::to_string(w.value()) + ",";
      }
      break;
    default:
      break;
  }
  lines.push_back(line);
  Event copy = e;
  copy.name = {};
  copy.producers = nullptr;
  copy.workers = nullptr;
  copy.idle_queued = nullptr;
  copy.deps = nullptr;
  copy.rejection = nullptr;
  copy.message = {};
  events.push_back(copy);
}

FakeDriver::FakeDriver(Builder builder, Scheduler::Options options) : options_(options) {
  Registry& reg = builder.registry;
  chip_ = reg.add_callable({"chip", Namespace::kLocalChip, std::nullopt});
  py_ = reg.add_callable({"py", Namespace::kLocalPython, std::nullopt});
  rpc_ = reg.add_callable({"rpc", Namespace::kRemote, std::nullopt});
  core_ = std::make_unique<Scheduler>(std::move(reg), options_);
  observe();
}

void FakeDriver::observe() {
  recorder_ = std::make_unique<Recorder>(*core_);
  checker_ = std::make_unique<InvariantChecker>(core_->registry(), options_.switches);
  checker_->set_dump([this] { return core_->dump(); });
  checker_->set_run_raised([this](RunId r) { return core_->run_info(r).raised; });
  observers_ = ObserverList();
  observers_.add(&trace_);
  observers_.add(recorder_.get());
  observers_.add(checker_.get());
  core_->set_observer(&observers_);
}

CallableId FakeDriver::add_remote_callable(std::string name, std::vector<WorkerId> eligible) {
  // The registry is frozen inside the core; rebuild it with one more callable. Only valid before any
  // task was submitted, which is how the tests use it.
  Registry reg = core_->registry();
  CallableId id = reg.add_callable({std::move(name), Namespace::kRemote, std::move(eligible)});
  core_ = std::make_unique<Scheduler>(std::move(reg), options_);
  observe();
  return id;
}

BufferId FakeDriver::buffer(const std::string& name, Memory memory, std::optional<WorkerId> owner) {
  return core_->add_buffer({name, memory, owner});
}

SubmitRequest FakeDriver::single_request(const std::string& name, std::int64_t worker,
                                         std::vector<Arg> args) const {
  SubmitRequest r;
  r.kind = TaskKind::kSingle;
  r.name = name;
  r.callable = chip_;
  r.args.push_back(std::move(args));
  r.worker = WorkerArg(WorkerId(worker));
  return r;
}

SubmitRequest FakeDriver::group_request(const std::string& name, std::vector<std::int64_t> workers) const {
  SubmitRequest r;
  r.kind = TaskKind::kGroup;
  r.name = name;
  r.callable = chip_;
  r.args.resize(workers.size());
  r.workers.emplace();
  for (std::int64_t w : workers) r.workers->push_back(WorkerArg(WorkerId(w)));
  return r;
}

SubmitResult FakeDriver::single(const std::string& name, std::int64_t worker, std::vector<Arg> args,
                                CallableId callable) {
  SubmitRequest r = single_request(name, worker, std::move(args));
  if (callable.valid()) r.callable = callable;
  return submit(r);
}

SubmitResult FakeDriver::group(const std::string& name, std::vector<std::int64_t> workers,
                               std::vector<std::vector<Arg>> args, CallableId callable) {
  SubmitRequest r = group_request(name, std::move(workers));
  if (!args.empty()) r.args = std::move(args);
  if (callable.valid()) r.callable = callable;
  return submit(r);
}

SubmitResult FakeDriver::sub(const std::string& name, std::vector<Arg> args) {
  SubmitRequest r;
  r.kind = TaskKind::kSub;
  r.name = name;
  r.callable = py_;
  r.args.push_back(std::move(args));
  return submit(r);
}

SubmitResult FakeDriver::sub_group(const std::string& name, std::size_t members) {
  SubmitRequest r;
  r.kind = TaskKind::kSubGroup;
  r.name = name;
  r.callable = py_;
  r.args.resize(members);
  return submit(r);
}

SubmitResult FakeDriver::submit(const SubmitRequest& request) {
  core_->set_time(now_);
  SubmitResult result = core_->submit(request);
  settle();
  return result;
}

std::vector<SubmitResult> FakeDriver::batch(const std::vector<SubmitRequest>& requests) {
  core_->set_time(now_);
  std::vector<SubmitResult> results;
  for (const SubmitRequest& r : requests) results.push_back(core_->submit(r));
  settle();
  return results;
}

std::vector<SubmitResult> FakeDriver::between_passes(const std::vector<SubmitRequest>& requests) {
  core_->set_time(now_);
  std::vector<SubmitResult> results;
  core_->land_between_passes([&] {
    for (const SubmitRequest& r : requests) results.push_back(core_->submit(r));
  });
  settle();
  return results;
}

void FakeDriver::carry_out(const std::vector<Dispatch>& dispatches) {
  std::vector<MemberEnd> at_once;  // zero-duration members: one batch, for the next iteration
  for (const Dispatch& d : dispatches) {
    const std::string name(core_->name(d.task));
    const bool member_syntax = is_group(core_->kind(d.task));
    dispatches_.push_back(name + (member_syntax ? "[" + std::to_string(d.member) + "]" : "") + "@" +
                          target_text(d.target) + (d.prepare_only ? " staged" : d.activate ? " activated" : ""));
    if (d.prepare_only) continue;  // staging (#1583): it starts at its activation
    double duration = 1.0;
    if (auto it = durations_.find(name); it != durations_.end())
      duration = it->second.size() == 1 ? it->second[0] : it->second.at(d.member);
    Outcome outcome = Outcome::kSuccess;
    if (auto it = failures_.find(name);
        it != failures_.end() && std::count(it->second.begin(), it->second.end(), d.member))
      outcome = Outcome::kFailure;
    if (duration == 0) {
      at_once.push_back({d.seq, d.task, d.member, outcome});  // completes at once
    } else {
      running_.push_back({now_ + duration, d.seq, d.task, d.member, outcome});
    }
  }
  core_->report_instant(at_once);  // seen by the next iteration
}

void FakeDriver::settle() {
  iterations_ += run_instant(*core_, [this](const std::vector<Dispatch>& d) { carry_out(d); });
}

bool FakeDriver::step() {
  if (running_.empty()) return false;
  double next = running_.front().end;
  for (const Running& r : running_) next = std::min(next, r.end);
  now_ = next;
  core_->set_time(now_);
  // Completions due now, in the instant's order (the core's instant helper).
  std::vector<MemberEnd> due;
  std::vector<Running> rest;
  for (const Running& r : running_) {
    if (r.end == next)
      due.push_back({r.seq, r.task, r.member, r.outcome});
    else
      rest.push_back(r);
  }
  running_.swap(rest);
  iterations_ += complete_instant(*core_, due, [this](const std::vector<Dispatch>& d) { carry_out(d); });
  return true;
}

void FakeDriver::advance_to(double t) {
  while (!running_.empty()) {
    double next = running_.front().end;
    for (const Running& r : running_) next = std::min(next, r.end);
    if (next > t) break;
    step();
  }
  now_ = t;
}

std::size_t FakeDriver::raise(const std::string& message) {
  const std::size_t cancelled = core_->raise_run(message);
  if (cancelled > 0 || core_->loop_woken()) settle();  // edge_triggered_wake: a raise is a wake
  return cancelled;
}

std::size_t FakeDriver::raise_and_end(const std::string& message) {
  const std::uint64_t promotions = core_->promotions();
  const std::size_t cancelled = core_->raise_run(message);
  core_->end_run();
  if (cancelled > 0 || core_->promotions() != promotions || core_->loop_woken()) settle();
  return cancelled;
}

void FakeDriver::end_run() {
  const std::uint64_t promotions = core_->promotions();
  const RunId ending = core_->open_run();
  core_->end_run();
  // whole_run_fifo: the promoted run's READY tasks; edge_triggered_wake: a callback's end is a wake;
  // staging: the run that ended may be the preparable one (as the replay does).
  const bool preparable = ending.valid() && core_->preparable_run() == ending;
  if (core_->promotions() != promotions || core_->loop_woken() || preparable) settle();
}

void FakeDriver::run() {
  while (step()) {
  }
}

TaskState FakeDriver::state(const std::string& name) const {
  const std::optional<TaskRecord> r = recorder_->find(name);
  return r ? r->state : TaskState::kNotSubmitted;
}

}  // namespace dirsched::testing
