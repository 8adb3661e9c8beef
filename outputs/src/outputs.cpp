// Run outputs: summary.json, tasks.csv and metrics.json, write_outputs and the `expect` check.
//
// Everything in summary.json and tasks.csv is derived from simulated quantities only, so the same
// scenario and seed give byte-identical files. Self-measurements (wall time, peak RSS, events per
// second) vary from run to run and go to metrics.json instead.
#include "dirsched/outputs.hpp"
#include "dirsched/record/task_row.hpp"

#include "dirsched/error.hpp"
#include "dirsched/json_reader.hpp"
#include "dirsched/output_folder.hpp"
#include "dirsched/progress.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

namespace dirsched {
namespace {

using ojson = nlohmann::ordered_json;
namespace fs = std::filesystem;

// Rounds away binary noise (1e-12 s) so that summaries read cleanly; times stay exact in events.jsonl.
double tidy(double v) {
  return std::round(v * 1e12) / 1e12;
}

std::string worker_label(const Target& t) {
  return t.sub ? "sub" + std::to_string(t.sub_index) : std::to_string(t.worker.value());
}

}  // namespace

namespace {

// Opens `path` for reading without blocking (a FIFO would block open() and read() forever) and refuses
// anything but a regular file. Returns the descriptor, blocking again, or -1 (errno set) when it
// cannot be opened.
int open_regular(const std::string& path) {
  struct stat st {};
  const int fd = open_user_file(path, &st);  // never blocks (json_reader.hpp)
  if (fd < 0) return -1;
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw BadInput(path +
                   ": not a regular file (a FIFO, a device, a socket or a folder); a run "
                   "folder holds regular files only");
  }
  return fd;
}

}  // namespace

std::string read_run_file(const std::string& path) {
  const int fd = open_regular(path);
  if (fd < 0) throw BadInput("cannot read " + path + " (" + std::strerror(errno) + ")");
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      throw BadInput("cannot read " + path + " (" + std::strerror(e) + ")");
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

void refuse_large_run_file(const std::string& path, std::uint64_t max_bytes, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size <= max_bytes) return;
  throw BadInput(path + ": " + std::to_string(size >> 20) + " MiB of events, over the " +
                 std::to_string(max_bytes >> 20) + " MiB that " + what +
                 " reads (it keeps every dispatch; docs/limits.md)");
}

nlohmann::json read_output_json(const std::string& path) {
  // Never a FIFO or a device: the reader below would block on it.
  if (const int fd = open_regular(path); fd >= 0) ::close(fd);
  // The loader's strict reader: a hostile summary.json or marker is refused as a scenario would be.
  try {
    return read_json_file(path);
  } catch (const ScenarioError& e) {
    throw BadInput(e.what());
  }
}

record::Summary read_summary(const std::string& path) {
  const std::string text = read_run_file(path);
  try {
    (void)parse_json_text(text, path);  // the loader's strict reader: duplicate keys, depth, UTF-8, numbers
  } catch (const ScenarioError& e) {
    throw BadInput(e.what());
  }
  return record::decode(nlohmann::ordered_json::parse(text), path);
}

record::Summary read_run_folder_summary(const std::string& dir) {
  const std::filesystem::path folder(dir);
  if (!std::filesystem::is_directory(folder))
    throw BadInput(dir + (std::filesystem::exists(folder) ? ": not a folder (a run folder holds summary.json and events.jsonl)"
                                                          : ": no such run folder"));
  return read_summary((folder / "summary.json").string());
}

nlohmann::json parse_output_line(std::string_view line, const std::string& path, std::size_t line_no) {
  try {
    return parse_json_text(line, path + " line " + std::to_string(line_no));
  } catch (const ScenarioError& e) {
    // The reader counts within the line: "at line 1, column C" is "at column C" of this line.
    std::string what = e.what();
    if (const auto at = what.find("at line 1, column "); at != std::string::npos) what.erase(at + 3, 8);
    throw BadInput(what);
  }
}

record::Event parse_event_line(std::string_view line, const std::string& path, std::size_t line_no) {
  return record::decode_event(parse_output_line(line, path, line_no), path + " line " + std::to_string(line_no));
}

void check_output_jsonl(std::string_view text, const std::string& path) {
  std::size_t line_no = 0;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    ++line_no;
    if (end > start) parse_output_line(text.substr(start, end - start), path, line_no);
    start = end + 1;
  }
}

std::string human_number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", tidy(v));
  return std::string(b) == "-0" ? "0" : b;
}

std::string human_percent(double fraction) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", 100 * fraction);
  return b;
}

const char* dirsched_version() {
  return DIRSCHED_VERSION;
}

std::optional<std::size_t> variant_index(const Scenario& s) {
  if (s.vars.empty()) return std::nullopt;
  std::size_t index = 0;
  for (const auto& [name, candidates] : s.vars) {
    auto value = s.assigned.find(name);
    if (value == s.assigned.end()) return std::nullopt;
    auto at = std::find(candidates.begin(), candidates.end(), value->second);
    if (at == candidates.end()) return std::nullopt;
    index = index * candidates.size() + static_cast<std::size_t>(at - candidates.begin());
  }
  return index;
}

std::string outcome_line(const Run& run) {
  std::map<TaskState, std::size_t> by_state = run.recorder->state_counts();
  const std::size_t total = run.recorder->record_count();
  std::string bad;
  for (TaskState st : {TaskState::kRejected, TaskState::kFailed, TaskState::kPoisoned, TaskState::kCancelled})
    if (by_state[st])
      bad += (bad.empty() ? "" : ", ") + std::to_string(by_state[st]) + " of " + std::to_string(total) +
             " tasks " + std::string(to_string(st));
  const std::string& outcome = run.result.outcome;
  if (bad.empty()) return outcome;
  // A run that finished is not a clean COMPLETED when some of its tasks never ran or did not succeed.
  return (outcome == "COMPLETED" ? "COMPLETED with problems: " : outcome + ": ") + bad;
}

// The task states summary.json counts, each listed even at 0. CANCELLED only with run_cancellation on
// (no other run can have one), so that the summaries of every other run stay as they were.
static std::vector<TaskState> counted_states(const Scheduler& core) {
  std::vector<TaskState> out = {TaskState::kCompleted, TaskState::kFailed, TaskState::kPoisoned};
  if (core.switches()[Switch::kRunCancellation]) out.push_back(TaskState::kCancelled);
  for (TaskState st : {TaskState::kRejected, TaskState::kNotSubmitted, TaskState::kPending, TaskState::kReady,
                       TaskState::kRunning})
    out.push_back(st);
  return out;
}

namespace {

record::WaitStats wait_record(const WaitStats& w) {
  record::WaitStats o;
  o.count = w.count, o.p50_s = tidy(w.p50), o.p95_s = tidy(w.p95), o.max_s = tidy(w.max), o.mean_s = tidy(w.mean);
  o.histogram = !w.exact;  // past kExactWaits waits in the run p50 / p95 come from a histogram (docs/outputs.md)
  return o;
}

// Sets a state's count, appending the state when it is not one of the counted ones.
void set_count(record::TaskCounts& t, std::string_view state, std::uint64_t n) {
  for (auto& [name, count] : t.by_state)
    if (name == state) {
      count = n;
      return;
    }
  t.by_state.emplace_back(std::string(state), n);
}

std::vector<std::uint64_t> ids(const std::vector<WorkerId>& ws) {
  std::vector<std::uint64_t> out;
  for (WorkerId w : ws) out.push_back(w.value());
  return out;
}

}  // namespace

record::Summary summarise(const Run& run, const std::vector<std::string>& notes) {
  const Recorder& rec = *run.recorder;
  const RunResult& r = run.result;
  const Registry& reg = run.core->registry();
  const double makespan = r.makespan_s;
  record::Summary s;
  s.scenario = run.scenario.name;
  s.description = run.scenario.description;
  s.seed = r.seed;
  s.policy = run.scenario.policy;
  // The effective runtime version, switch by switch, and the switches on with nothing to act on.
  s.switches.emplace();
  for (const SwitchInfo& row : switch_table()) s.switches->emplace_back(row.name, run.core->switches()[row.id]);
  s.inert.emplace();
  for (Switch x : inert_switches(run.scenario)) s.inert->emplace_back(to_string(x));
  if (run.core->switches()[Switch::kWholeRunFifo]) s.pipeline_depth = run.core->options().pipeline_depth;
  s.stall_report_s = tidy(run.core->options().stall_report_s);
  const std::optional<record::Engine> engine = record::engine_from(r.engine);
  if (!engine) throw InternalError("summarise: unknown engine '" + r.engine + "'");
  s.engine = *engine;
  s.time_scale = tidy(r.time_scale);
  if (!run.scenario.vars.empty()) {
    s.vars.emplace();
    for (const auto& [name, value] : run.scenario.assigned) s.vars->emplace_back(name, value);
    if (const auto index = variant_index(run.scenario)) s.variant = *index;
  }
  s.dirsched_version = dirsched_version();
  const std::optional<record::Outcome> outcome = record::outcome_from(r.outcome);
  if (!outcome) throw InternalError("summarise: unknown outcome '" + r.outcome + "'");
  s.outcome = *outcome;
  if (!r.error.empty()) s.error = r.error;
  s.makespan_s = tidy(makespan);

  for (TaskState st : counted_states(*run.core)) s.tasks.by_state.emplace_back(to_string(st), 0);
  for (const auto& [state, n] : rec.state_counts()) set_count(s.tasks, to_string(state), n);
  s.tasks.total = rec.record_count();

  for (std::uint32_t i = 0; i < reg.next_level_count(); ++i) {
    const double busy = rec.next_level_busy()[i];
    s.workers.push_back({std::to_string(reg.worker_at(i).id.value()), std::string(to_string(reg.worker_at(i).kind)),
                         r.host_of_worker.at(i), tidy(busy), makespan > 0 ? tidy(busy / makespan) : 0.0});
  }
  for (std::uint32_t i = 0; i < reg.sub_workers(); ++i) {
    const double busy = rec.sub_busy()[i];
    s.workers.push_back({"sub" + std::to_string(i), "sub", run.scenario.sub_hosts.at(i), tidy(busy),
                         makespan > 0 ? tidy(busy / makespan) : 0.0});
  }
  for (const auto& [key, w] : rec.queue_waits()) s.queue_waits.emplace_back(key, wait_record(w));

  // At most kSummaryListCap groups: past that the longest READY waits, longest first, and the counts and
  // sums of every group in group_totals.
  std::vector<TaskRecord> group_records = rec.groups();
  const bool groups_capped = rec.groups_capped() || group_records.size() > kSummaryListCap;
  if (groups_capped) {
    auto wait = [&](const TaskRecord& g) { return (g.start >= 0 ? g.start : makespan) - g.ready; };
    std::stable_sort(group_records.begin(), group_records.end(),
                     [&](const TaskRecord& a, const TaskRecord& b) { return wait(a) > wait(b); });
    group_records.erase(std::remove_if(group_records.begin(), group_records.end(),
                                       [](const TaskRecord& g) { return g.ready < 0; }),
                        group_records.end());
    if (group_records.size() > kSummaryListCap) group_records.resize(kSummaryListCap);
  }
  for (const TaskRecord& t : group_records) {
    if (t.ready < 0) continue;
    record::GroupWait g;
    g.task = t.name;
    g.workers = ids(t.workers);
    g.ready_s = tidy(t.ready);
    if (t.start >= 0) g.launched_s = tidy(t.start);
    g.ready_wait_s =
        tidy((t.start >= 0 ? t.start : t.state == TaskState::kCancelled ? t.end : makespan) - t.ready);
    g.idle_target_s = tidy(t.idle_target_s);
    g.overtakes = t.overtakes;
    g.overtaken_by = t.overtaken_by;
    if (run.waits) {
      g.blocked_by.emplace();
      if (const std::vector<BlockedBy>* b = run.waits->blocked_by(t.task))
        for (const BlockedBy& x : *b)
          g.blocked_by->push_back(
              {tidy(x.from_s), tidy(x.to_s), x.worker ? std::optional<std::uint64_t>(x.worker->value()) : std::nullopt,
               x.task, x.task_cause ? std::optional<double>(tidy(x.task_wait_s)) : std::nullopt,
               x.task_cause ? std::optional<std::string>(wait_cause_name(*x.task_cause)) : std::nullopt});
    }
    s.groups.push_back(std::move(g));
  }
  if (groups_capped) {
    const Recorder::GroupTotals gt = rec.group_totals(makespan);
    s.groups_omitted = gt.count - s.groups.size();
    s.group_totals = record::GroupTotals{gt.count, tidy(gt.ready_wait_s), tidy(gt.idle_target_s),
                                          static_cast<std::int64_t>(gt.overtakes_max)};
  }
  if (run.waits) {
    // Why tasks waited (waits.hpp, docs/outputs.md): totals per cause, the longest waits, the critical path.
    const WaitAttribution& wa = *run.waits;
    record::WaitReport w;
    const auto totals = wa.totals();
    for (std::size_t k = 0; k < kWaitCauses; ++k) w.causes.emplace_back(std::string(wait_cause_name(k)) + "_s", tidy(totals[k]));
    // The self-check: tasks that started, and those whose causes added up to start - submit exactly.
    w.started = wa.started(), w.exact = wa.started() - wa.inexact();
    auto longest = [](const std::vector<LongWait>& v) {
      std::vector<record::LongWait> out;
      for (const LongWait& x : v) {
        record::LongWait one;
        one.task = x.task, one.workers = x.workers, one.wait_s = tidy(x.wait_s);
        for (std::size_t k = 0; k < kWaitCauses; ++k)
          if (x.waits.s[k] != 0) one.causes.emplace_back(std::string(wait_cause_name(k)) + "_s", tidy(x.waits.s[k]));
        if (x.kind == "single") one.behind = x.waits.behind;
        if (!x.ahead.empty()) one.ahead = x.ahead;
        out.push_back(std::move(one));
      }
      return out;
    };
    w.longest_single = longest(wa.longest_singles());
    w.longest_group = longest(wa.longest_groups());
    // At most kSummaryListCap steps (WaitAttribution::kPathKept): the last ones, which end at the makespan.
    const std::vector<CriticalStep> steps = wa.critical_path();
    const std::uint64_t skip = wa.critical_path_steps() - steps.size();
    for (const CriticalStep& c : steps) {
      w.critical_path.push_back({c.task, tidy(c.start_s), tidy(c.end_s), start_reason_name(c.reason),
                                 c.after.empty() ? std::nullopt : std::optional<std::string>(c.after)});
    }
    if (skip) w.critical_path_omitted = skip;
    s.waits = std::move(w);
  }

  for (const StallRecord& st : rec.stalls()) {
    record::Stall one;
    one.event = std::string(to_string(st.kind)), one.task = st.task, one.t_s = tidy(st.t), one.busy = ids(st.busy);
    if (st.kind == EventKind::kReservationStall) one.idle_queued = ids(st.idle_queued);
    one.waited_s = tidy(st.waited_s);
    s.stalls.push_back(std::move(one));
  }
  std::size_t stall_total = 0;
  for (const auto& [kind, n] : rec.stall_counts()) stall_total += n;
  if (stall_total > s.stalls.size()) {
    s.stalls_omitted.emplace();  // the first kSummaryListCap are listed; the rest counted by kind
    std::size_t listed_group = 0;
    for (const StallRecord& st : rec.stalls()) listed_group += st.kind == EventKind::kGroupStall;
    for (const auto& [kind, n] : rec.stall_counts())
      s.stalls_omitted->emplace_back(
          std::string(to_string(kind)), n - (kind == EventKind::kGroupStall ? listed_group : rec.stalls().size() - listed_group));
  }
  // READY waits of NEXT_LEVEL singles, beside the groups': the other half of the group-vs-single
  // question. A single that never started waited until the end of the run, as a group does.
  WaitSketch single_waits, group_waits;
  rec.ready_waits(makespan, single_waits, group_waits);
  s.ready_waits_single = wait_record(single_waits.take_stats());
  s.ready_waits_group = wait_record(group_waits.take_stats());

  for (std::size_t i = 0; i < r.stuck.size() && i < kSummaryListCap; ++i)  // the first ones; the rest counted
    s.stuck.push_back({r.stuck[i].task, std::string(to_string(r.stuck[i].state)), r.stuck[i].reason});
  if (run.core->declared_runs()) {
    // Per run, in trace order (a trace without runs has none: its one run is the whole summary).
    const Scheduler& core = *run.core;
    const auto by_run = rec.run_state_counts();
    auto time = [](double t) { return t < 0 ? std::nullopt : std::optional<double>(tidy(t)); };
    s.runs.emplace();
    for (std::uint32_t i = 0; i < core.run_count(); ++i) {
      const RunInfo& info = core.run_info(RunId(i));
      record::RunRow row;
      row.run = info.name;
      row.outcome = *record::outcome_from(run_outcome(core, RunId(i)));
      if (info.error) row.error = info.error->message;
      row.raised = info.raised;
      row.start_s = time(info.begin_s), row.callback_end_s = time(info.callback_end_s), row.end_s = time(info.end_s);
      for (TaskState st : counted_states(core)) row.tasks.by_state.emplace_back(to_string(st), 0);
      if (auto it = by_run.find(i); it != by_run.end())
        for (const auto& [state, n] : it->second) set_count(row.tasks, to_string(state), n), row.tasks.total += n;
      s.runs->push_back(std::move(row));
    }
  }
  if (r.stuck.size() > kSummaryListCap) s.stuck_omitted = r.stuck.size() - kSummaryListCap;
  if (r.violation)
    s.violation = record::Violation{r.violation->seq, r.violation->rule, r.violation->detail, r.violation->dump};
  s.events = rec.event_count();
  s.notes = notes;
  return s;
}

std::string summary_json(const Run& run, const std::vector<std::string>& notes) {
  return record::encode(summarise(run, notes));
}

bool staging_live(const Scenario& scenario) {
  if (!scenario.switches[Switch::kStaging]) return false;
  const std::vector<Switch> inert = inert_switches(scenario);
  return std::find(inert.begin(), inert.end(), Switch::kStaging) == inert.end();
}

TasksCsv::TasksCsv(const Run& run) : run_(run), columns_{true, run.scenario.has_runs, staging_live(run.scenario)} {}

const std::string& TasksCsv::callable_of(const TaskRecord& r) {
  const Scenario& sc = run_.scenario;
  if (r.task.valid()) return sc.callables[run_.core->callable(r.task).index()].name;
  if (sc.generate) return sc.callables[0].name;  // every generated op runs callable 0
  if (sc.trace_file) return sc.callables[sc.trace_file->unsubmitted_callable(r.name).value_or(0)].name;
  if (!by_name_built_) {
    for (const OpSpec& op : sc.trace) {
      if (!op.task.empty()) by_name_[op.task] = sc.callables[op.callable].name;
      for (const OpSpec& inner : op.ops) by_name_[inner.task] = sc.callables[inner.callable].name;
    }
    by_name_built_ = true;
  }
  return by_name_[r.name];
}

void TasksCsv::append_row(const TaskRecord& r, std::string& out) {
  auto t = [](double v) { return v < 0 ? std::optional<double>() : std::optional<double>(tidy(v)); };
  record::TaskRow& row = row_;  // reused: its strings keep their capacity from row to row
  row.job_id = r.name;
  row.kind = to_string(r.kind);
  row.callable = callable_of(r);
  row.allocated_resources.clear();
  if (!r.members.empty() && r.start >= 0) {
    for (const MemberRun& m : r.members)
      row.allocated_resources += (row.allocated_resources.empty() ? "" : " ") + worker_label(m.target);
  } else {
    for (WorkerId w : r.workers)
      row.allocated_resources += (row.allocated_resources.empty() ? "" : " ") + std::to_string(w.value());
  }
  row.submission_time = t(r.submit);
  row.ready_time = t(r.ready);
  row.starting_time = t(r.start);
  row.finish_time = t(r.end);
  row.waiting_time = r.start >= 0 && r.submit >= 0 ? t(r.start - r.submit) : std::nullopt;
  row.execution_time = r.start >= 0 && r.end >= 0 ? t(r.end - r.start) : std::nullopt;
  row.final_state = to_string(r.state);
  // The wait causes (waits.hpp): empty for a task that never started.
  std::optional<TaskWaits> w;
  if (run_.waits && r.task.valid() && r.start >= 0) w = take_waits_ ? run_.waits->take(r.task) : run_.waits->peek(r.task);
  row.waits.reset();
  if (w) {
    row.waits.emplace();
    for (std::size_t k = 0; k < kWaitCauses; ++k) (*row.waits)[k] = tidy(w->s[k]);
  }
  if (columns_.run) row.run = run_.core->run_info(r.run).name;
  row.staged.reset();
  if (columns_.staged) {  // staging (#1583): when it was staged, empty when it was not
    auto it = run_.result.staged_at.find(r.name);
    if (it != run_.result.staged_at.end()) row.staged = tidy(it->second);
  }
  record::encode_task_row(row, columns_, out);
}

std::string tasks_csv(const Run& run) {
  TasksCsv csv(run);
  std::string out = record::tasks_csv_header(csv.columns());
  run.recorder->for_each_task([&](const TaskRecord& r) { csv.append_row(r, out); });
  return out;
}

TasksCsvWriter::TasksCsvWriter(const Run& run, const std::string& path) : csv_(run), path_(path) {
  csv_.set_take_waits(true);
  buffer_ = record::tasks_csv_header(csv_.columns());
}

TasksCsvWriter::~TasksCsvWriter() {
  if (file_) std::fclose(file_);
}

void TasksCsvWriter::write(const TaskRecord& r) {
  csv_.append_row(r, buffer_);
  if (buffer_.size() >= (1u << 20)) spill();
}

// Runs inside a SimGrid actor (on_retire): a failure is remembered, not thrown, and close() reports it.
void TasksCsvWriter::spill() {
  if (!err_ && !file_) file_ = open_temp_file(path_, &err_);  // at the first full buffer or at close()
  if (!err_ && std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) err_ = errno ? errno : EIO;
  buffer_.clear();
}

void TasksCsvWriter::close() {
  if (closed_) return;
  closed_ = true;
  spill();
  if (file_ && std::fclose(file_) != 0 && !err_) err_ = errno ? errno : EIO;
  file_ = nullptr;
  if (err_) throw_write_error(path_, err_);
}

std::string metrics_json(const Run& run) {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  // The engine's own wall time (the simulation, or the threads' run) gives the event rate; wall_s is
  // the command's, from its start to this file, and phases_s splits it (load, simulate, write,
  // pictures: see progress.hpp).
  const double engine_wall = run.result.wall_s;
  const double events = static_cast<double>(run.recorder->event_count());
  ojson phases = ojson::object();
  for (const auto& [name, s] : Progress::get().phases()) phases[name] = s;
  ojson m{{"wall_s", Progress::get().since_start()},
          {"phases_s", phases},
          {"engine_wall_s", engine_wall},
          {"peak_rss_kib", usage.ru_maxrss},
          {"events", run.recorder->event_count()},
          {"events_per_s", engine_wall > 0 ? events / engine_wall : 0.0},
          {"tasks", run.recorder->record_count()},
          // The live window at its widest (RunResult): it follows the trace only without reclamation.
          {"peak_core_tasks", run.result.peak_core_tasks},
          {"peak_records", run.result.peak_records},
          {"peak_wait_nodes", run.waits ? run.waits->peak_nodes() : 0}};
  return m.dump(2) + "\n";
}

void write_outputs(const Run& run, const std::string& dir, const std::vector<std::string>& outputs,
                   const std::map<std::string, std::string>& extra, const std::vector<std::string>& notes) {
  auto wanted = [&](const char* name) {
    return outputs.empty() || std::find(outputs.begin(), outputs.end(), name) != outputs.end();
  };
  // Checked again here (the CLI checks before the run): an engine calling this directly gets the same rule.
  const fs::path target = check_output_folder(dir, FolderKind::kRun, "output folder");
  create_parents(target);
  // Write into a fresh folder beside the target, then move it in place: never half-written.
  TempPath tmp(temp_path_beside(target));
  try {
    create_temp_dir(tmp);
  } catch (const WriteError& e) {
    throw WriteError(target.string(), e.reason());
  }
  // A failure names the file as the user will look for it (in `dir`), not its temporary name.
  auto put = [&](const std::string& file, const std::string& text) {
    try {
      write_file(tmp.path() / file, text);
    } catch (const WriteError& e) {
      throw WriteError((target / file).string(), e.reason());
    }
  };
  std::vector<std::string> streamed;  // the files renamed in, closed but not synced by their writers
  if (wanted("events")) {
    std::error_code ec;
    if (run.events_file.empty())
      put("events.jsonl", run.events_jsonl);
    else if (fs::exists(run.events_file, ec))
      try {
        rename_path(run.events_file, tmp.path() / "events.jsonl");
        streamed.push_back("events.jsonl");
      } catch (const WriteError& e) {
        throw WriteError((target / "events.jsonl").string(), e.reason());
      }
    else
      put("events.jsonl", "");  // an engine that never opened its log: the run had no event
  } else if (!run.events_file.empty()) {
    std::error_code ec;
    fs::remove(run.events_file, ec);
  }
  if (wanted("summary")) put("summary.json", summary_json(run, notes));
  if (wanted("tasks") && !run.tasks_file.empty()) {
    try {  // streamed as tasks retired
      rename_path(run.tasks_file, tmp.path() / "tasks.csv");
      streamed.push_back("tasks.csv");
    } catch (const WriteError& e) {
      throw WriteError((target / "tasks.csv").string(), e.reason());
    }
  } else if (wanted("tasks")) {
    put("tasks.csv", tasks_csv(run));
  } else if (!run.tasks_file.empty()) {
    std::error_code ec;
    fs::remove(run.tasks_file, ec);
  }
  if (wanted("metrics")) put("metrics.json", metrics_json(run));
  for (const auto& [file, text] : extra) put(file, text);
  // The streamed files were closed, not synced: they reach the disk before the folder moves in.
  for (const std::string& name : streamed)
    if (const int e = sync_path(tmp.path() / name)) throw_write_error(target / name, e);
  // The marker last: a folder that has it is complete. It lists every file in it, so that a later
  // replace can tell them from files the user added.
  std::vector<std::string> written;
  for (const auto& e : fs::directory_iterator(tmp.path())) written.push_back(e.path().filename().string());
  put(marker_name(FolderKind::kRun), run_marker_json({run.scenario.name, dirsched_version(), run.result.engine,
                                                      tidy(run.result.time_scale), std::move(written)}));
  replace_folder(tmp, target, FolderKind::kRun);
}

bool expect_reads_dispatch_order(const Scenario& scenario) {
  const nlohmann::json& e = scenario.expect;
  return e.is_object() &&
         (e.contains("dispatch_order") || e.contains("dispatch_order_per_worker") || e.contains("order"));
}

std::optional<std::string> check_expectations(const Run& run) {
  const nlohmann::json& e = run.scenario.expect;
  if (e.is_null()) return std::nullopt;
  const auto& order = run.result.dispatch_order;
  auto list = [](const std::vector<std::string>& v, std::size_t from) {
    std::string s;
    for (std::size_t i = from; i < v.size() && i < from + 6; ++i) s += (s.empty() ? "" : ", ") + v[i];
    return "[" + s + (v.size() > from + 6 ? ", ..." : "") + "]";
  };
  if (e.contains("dispatch_order")) {
    std::vector<std::string> want = e["dispatch_order"].get<std::vector<std::string>>();
    for (std::size_t i = 0; i < std::max(want.size(), order.size()); ++i) {
      const std::string got = i < order.size() ? order[i] : "(nothing)";
      const std::string exp = i < want.size() ? want[i] : "(nothing)";
      if (got != exp)
        return "dispatch_order[" + std::to_string(i) + "]: expected " + exp + ", got " + got +
               "; run dispatched " + list(order, i > 2 ? i - 2 : 0);
    }
  }
  if (e.contains("dispatch_order_per_worker")) {
    std::map<std::string, std::vector<std::string>> per;
    for (const std::string& d : order) {
      const auto at = d.rfind('@');
      per[d.substr(at + 1)].push_back(d.substr(0, at));
    }
    for (auto it = e["dispatch_order_per_worker"].begin(); it != e["dispatch_order_per_worker"].end(); ++it) {
      std::vector<std::string> want;
      for (const auto& x : it.value()) {
        std::string s = x.get<std::string>();
        const auto at = s.rfind('@');
        want.push_back(at == std::string::npos ? s : s.substr(0, at));
      }
      const auto& got = per[it.key()];
      if (got != want)
        return "dispatch_order_per_worker." + it.key() + ": expected " + list(want, 0) + ", got " +
               list(got, 0);
    }
  }
  if (e.contains("order"))
    for (std::size_t i = 0; i < e["order"].size(); ++i) {
      // Each pair: the first dispatch happens before the second (both must happen).
      const std::string first = e["order"][i][0].get<std::string>();
      const std::string second = e["order"][i][1].get<std::string>();
      const auto a = std::find(order.begin(), order.end(), first);
      const auto b = std::find(order.begin(), order.end(), second);
      const std::string pair = "order[" + std::to_string(i) + "] (" + first + " before " + second + "): ";
      if (a == order.end()) return pair + first + " was never dispatched; run dispatched " + list(order, 0);
      if (b == order.end()) return pair + second + " was never dispatched; run dispatched " + list(order, 0);
      if (b < a)
        return pair + second + " was dispatched at position " + std::to_string(b - order.begin()) + ", " +
               first + " only at " + std::to_string(a - order.begin());
    }
  if (e.contains("staged")) {  // staging (#1583): the stagings, in order; [] pins that none was
    const std::vector<std::string> want = e["staged"].get<std::vector<std::string>>();
    if (want != run.result.staged)
      return "staged: expected " + list(want, 0) + ", got " + list(run.result.staged, 0);
  }
  if (e.contains("final_state"))
    for (auto it = e["final_state"].begin(); it != e["final_state"].end(); ++it) {
      const std::optional<TaskRecord> r = run.recorder->find(it.key());
      const std::string got = r ? std::string(to_string(r->state)) : "NOT_SUBMITTED";
      if (got != it.value().get<std::string>())
        return "final_state." + it.key() + ": expected " + it.value().get<std::string>() + ", got " + got;
    }
  if (e.contains("rejected"))
    for (auto it = e["rejected"].begin(); it != e["rejected"].end(); ++it) {
      const std::optional<TaskRecord> r = run.recorder->find(it.key());
      const std::string got = r && r->code ? std::string(to_string(*r->code)) : "(not rejected)";
      if (got != it.value().get<std::string>())
        return "rejected." + it.key() + ": expected " + it.value().get<std::string>() + ", got " + got;
    }
  if (e.contains("makespan_s")) {
    const auto& m = e["makespan_s"];
    const double got = run.result.makespan_s;
    if (m.contains("max") && got > m["max"].get<double>() + 1e-12)
      return "makespan_s: expected at most " + format_number(m["max"].get<double>()) + ", got " +
             format_number(tidy(got));
    if (m.contains("min") && got < m["min"].get<double>() - 1e-12)
      return "makespan_s: expected at least " + format_number(m["min"].get<double>()) + ", got " +
             format_number(tidy(got));
    if (m.contains("approx")) {
      const double want = m["approx"].get<double>();
      const double rel = m.value("rel", 1e-6);
      if (std::abs(got - want) > rel * std::abs(want) + 1e-12)
        return "makespan_s: expected about " + format_number(want) + " (rel " + format_number(rel) +
               "), got " + format_number(tidy(got));
    }
  }
  if (e.contains("runs"))
    for (auto it = e["runs"].begin(); it != e["runs"].end(); ++it) {
      // A trace without runs has the one run "main", whose outcome is the scenario's.
      std::string got = run.result.outcome;
      if (run.core->declared_runs())
        for (std::uint32_t i = 0; i < run.core->run_count(); ++i)
          if (run.core->run_info(RunId(i)).name == it.key()) got = run_outcome(*run.core, RunId(i));
      if (got != it.value().get<std::string>())
        return "runs." + it.key() + ": expected " + it.value().get<std::string>() + ", got " + got;
    }
  if (e.contains("outcome") && e["outcome"].get<std::string>() != run.result.outcome)
    return "outcome: expected " + e["outcome"].get<std::string>() + ", got " + run.result.outcome;
  if (e.contains("overtakes"))
    for (auto it = e["overtakes"].begin(); it != e["overtakes"].end(); ++it) {
      const std::optional<TaskRecord> r = run.recorder->find(it.key());
      const std::size_t got = r ? r->overtakes : 0;
      if (got != it.value().get<std::size_t>())
        return "overtakes." + it.key() + ": expected " + std::to_string(it.value().get<std::size_t>()) +
               ", got " + std::to_string(got);
    }
  return std::nullopt;
}

}  // namespace dirsched
