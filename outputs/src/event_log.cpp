// events.jsonl: one JSON object per event, written as the events happen (see outputs.hpp).
#include <cerrno>
#include <charconv>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "dirsched/output_folder.hpp"
#include "dirsched/outputs.hpp"

namespace dirsched {

std::string format_number(double v) {
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          out += b;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

EventLog::~EventLog() {
  if (file_) std::fclose(file_);
}

void EventLog::flush() {
  if (path_.empty()) return;
  // A run without a single event still has a log: an empty file.
  if (!file_ && error_.empty()) open_file();
  if (file_) {
    if (std::fflush(file_) != 0 || std::ferror(file_)) note_error(errno);
    if (std::fclose(file_) != 0) note_error(errno);
    file_ = nullptr;
  }
  if (!error_.empty()) throw WriteError(path_, error_);
}

void EventLog::note_error(int err) {
  if (error_.empty()) error_ = std::strerror(err != 0 ? err : EIO);
}

void EventLog::open_file() {
  const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  std::error_code ec;  // no exception here: this runs inside a SimGrid actor
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  int err = 0;
  file_ = open_temp_file(path_, &err);
  if (!file_) {
    note_error(err);
    return;
  }
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
}

void EventLog::on_event(const Event& e) {
  std::string& o = path_.empty() ? out_ : line_;
  line_.clear();
  o += "{\"seq\":" + std::to_string(seq_++) + ",\"t_s\":" + format_number(e.t) + ",\"event\":\"";
  o += to_string(e.kind);
  if (is_run_event(e.kind)) {  // a run's event: no task
    o += "\",\"run\":" + json_string(e.name);
    if (e.kind == EventKind::kRunRaise) o += ",\"message\":" + json_string(e.message);
    if (e.kind == EventKind::kRunEnd) o += e.run_failed ? ",\"outcome\":\"FAILED\"" : ",\"outcome\":\"COMPLETED\"";
    if (e.between_passes) o += ",\"between_passes\":true";
    o += "}\n";
    if (!path_.empty()) write_line();
    return;
  }
  o += "\",\"task\":" + json_string(e.name);
  // A trace with runs: every task event names its run (a trace without keeps its lines as they were).
  if (core_->declared_runs()) o += ",\"run\":" + json_string(core_->run_info(e.run).name);
  auto target = [&](const Target& t) {
    if (t.sub)
      o += ",\"sub_worker\":\"sub" + std::to_string(t.sub_index) + "\"";
    else
      o += ",\"worker\":" + std::to_string(t.worker.value());
  };
  auto ids = [&](const char* key, const std::vector<WorkerId>& ws) {
    o += std::string(",\"") + key + "\":[";
    for (std::size_t i = 0; i < ws.size(); ++i) o += (i ? "," : "") + std::to_string(ws[i].value());
    o += "]";
  };
  switch (e.kind) {
    case EventKind::kSubmit:
      o += ",\"kind\":\"" + std::string(to_string(e.task_kind)) + "\"";
      o += ",\"op\":\"" + std::string(submit_op_name(e.op_kind)) + "\"";
      o += ",\"callable\":" + json_string(core_->registry().callable(core_->callable(e.task)).name);
      o += ",\"members\":" + std::to_string(e.member_count);
      if (!is_sub(e.task_kind)) ids("workers", *e.workers);
      if (!e.deps->empty()) {
        o += ",\"deps\":[";
        for (std::size_t i = 0; i < e.deps->size(); ++i)
          o += std::string(i ? "," : "") +
               "{\"producer\":" + json_string(core_->name((*e.deps)[i].producer)) +
               ",\"buffer\":" + json_string(core_->buffer((*e.deps)[i].buffer).name) + "}";
        o += "]";
      }
      break;
    case EventKind::kReject:
      o += ",\"code\":\"" + std::string(to_string(e.rejection->code)) +
           "\",\"message\":" + json_string(e.rejection->message);
      break;
    case EventKind::kNotSubmitted:
      if (e.callback_raised)
        o += ",\"reason\":\"callback_raised\"";
      else if (e.rejection)
        o += ",\"reason\":" + json_string(e.rejection->message);
      break;
    case EventKind::kPending:
      o += ",\"producers\":[";
      for (std::size_t i = 0; i < e.producers->size(); ++i)
        o += (i ? "," : "") + json_string(core_->name((*e.producers)[i]));
      o += "]";
      break;
    case EventKind::kReady:
      o += ",\"queue\":\"";
      o += e.queue == QueueKind::kWorker  ? "worker:" + std::to_string(e.queue_worker.value())
           : e.queue == QueueKind::kGroup ? "group"
                                          : "sub";
      o += "\"";
      break;
    case EventKind::kDispatch:
      o += ",\"member\":" + std::to_string(e.member);
      target(e.target);
      if (e.prepare_only) o += ",\"prepare_only\":true";  // staging (#1583)
      break;
    case EventKind::kActivate:  // staging (#1583): a staged member starts
      o += ",\"member\":" + std::to_string(e.member);
      target(e.target);
      break;
    case EventKind::kMemberEnd:
      o += ",\"member\":" + std::to_string(e.member);
      target(e.target);
      o += ",\"outcome\":\"" + std::string(to_string(e.outcome)) + "\"";
      break;
    case EventKind::kFail:
      o += ",\"member\":" + std::to_string(e.member);
      break;
    case EventKind::kPoison:
      o += ",\"cause\":" + json_string(core_->name(e.cause));
      break;
    case EventKind::kCancel:  // run_cancellation: the cause is the run's error
      o += ",\"cause\":" + json_string(e.message);
      break;
    case EventKind::kGroupBlocked:
      ids("busy", *e.workers);
      break;
    case EventKind::kGroupStall:
    case EventKind::kReservationStall:
      ids("busy", *e.workers);
      if (e.idle_queued) ids("idle_queued", *e.idle_queued);
      o += ",\"waited_s\":" + format_number(e.waited_s);
      break;
    case EventKind::kGroupLaunched:
    case EventKind::kComplete:
    case EventKind::kRunRaise:
    case EventKind::kRunEnd:
      break;
  }
  // Emitted while a between_passes batch landed (a file without one never writes the field).
  if (e.between_passes) o += ",\"between_passes\":true";
  o += "}\n";
  if (!path_.empty()) write_line();
}

// Called from inside the simulation (a SimGrid actor), where an exception cannot travel: a failed
// write is remembered, later lines are dropped, and flush() throws the first error.
void EventLog::write_line() {
  if (!error_.empty()) return;
  if (!file_) open_file();
  if (!file_) return;
  if (std::fwrite(line_.data(), 1, line_.size(), file_) != line_.size()) note_error(errno);
}

}  // namespace dirsched
