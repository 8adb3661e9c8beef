// events.jsonl: one JSON object per event, written as the events happen (see outputs.hpp).
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

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
  if (file_) std::fflush(file_);
}

void EventLog::on_event(const Event& e) {
  std::string& o = path_.empty() ? out_ : line_;
  line_.clear();
  o += "{\"seq\":" + std::to_string(seq_++) + ",\"t_s\":" + format_number(e.t) + ",\"event\":\"";
  o += to_string(e.kind);
  o += "\",\"task\":" + json_string(e.name);
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
      if (e.rejection) o += ",\"reason\":" + json_string(e.rejection->message);
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
    case EventKind::kGroupBlocked:
      ids("busy", *e.workers);
      break;
    case EventKind::kGroupLaunched:
    case EventKind::kComplete:
      break;
  }
  o += "}\n";
  if (!path_.empty()) write_line();
}

void EventLog::write_line() {
  if (!file_) {
    const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    file_ = std::fopen(path_.c_str(), "wb");
    if (!file_) throw std::runtime_error("cannot write " + path_);
    std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
  }
  if (std::fwrite(line_.data(), 1, line_.size(), file_) != line_.size())
    throw std::runtime_error("cannot write " + path_);
}

}  // namespace dirsched
