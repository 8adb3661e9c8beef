// Why one task waited (why.hpp): the answer of `dirsched why` and the wording of the report's chains.
#include "dirsched/why.hpp"

#include <string_view>

#include "dirsched/format.hpp"

namespace dirsched::viz {
namespace {

using ordered_json = nlohmann::ordered_json;

ordered_json opt(const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); }

std::string seconds(const std::optional<double>& v) { return v ? g6(*v) + " s" : std::string("never"); }

ordered_json step_json(const record::CriticalStep& c) {
  ordered_json j{{"task", c.task}, {"start_s", c.start_s}, {"end_s", c.end_s}, {"why", c.why}};
  j["after"] = c.after ? ordered_json(*c.after) : ordered_json(nullptr);
  return j;
}

}  // namespace

std::optional<record::TaskRow> find_task_row(const std::string& csv, const std::string& task,
                                             const std::string& file) {
  std::size_t at = csv.find('\n');
  if (at == std::string::npos) throw record::RecordError(file + " line 1: not a tasks.csv header (no line)");
  const record::TaskColumns columns = record::decode_tasks_header(std::string_view(csv).substr(0, at), file);
  std::size_t line_no = 1;
  while (++at < csv.size()) {
    std::size_t end = csv.find('\n', at);
    if (end == std::string::npos) end = csv.size();
    ++line_no;
    const std::string_view line = std::string_view(csv).substr(at, end - at);
    at = end;
    // The name is the first field: decode only the row that can be the task's (a quoted name decodes
    // every row whose line starts with a quote).
    if (line.empty() || (line.compare(0, task.size(), task) != 0 && line.front() != '"')) continue;
    record::TaskRow row = record::decode_task_row(line, columns, file, line_no);
    if (row.job_id == task) return row;
  }
  return std::nullopt;
}

TaskWhy explain_task(const record::Summary& s, const record::TaskRow& row) {
  TaskWhy w;
  w.task = row.job_id;
  w.kind = row.kind;
  w.state = row.final_state;
  for (std::size_t at = 0; at < row.allocated_resources.size();) {  // "0 1" -> {"0", "1"}
    std::size_t end = row.allocated_resources.find(' ', at);
    if (end == std::string::npos) end = row.allocated_resources.size();
    if (end > at) w.workers.push_back(row.allocated_resources.substr(at, end - at));
    at = end + 1;
  }
  w.submit_s = row.submission_time;
  w.ready_s = row.ready_time;
  w.start_s = row.starting_time;
  w.end_s = row.finish_time;
  w.wait_s = row.waiting_time;
  if (row.waits) {
    w.causes.emplace();
    for (std::size_t k = 0; k < record::kWaitColumns.size(); ++k)
      w.causes->emplace_back(std::string(record::kWaitColumns[k]).substr(5), (*row.waits)[k]);  // "wait_" off
  }
  for (const record::GroupWait& g : s.groups)
    if (g.task == row.job_id) w.group = g;
  if (s.waits) {
    const std::vector<record::CriticalStep>& path = s.waits->critical_path;
    w.path_recorded = !path.empty();
    for (std::size_t k = 0; k < path.size(); ++k)
      if (path[k].task == row.job_id) {
        w.on_critical_path = true;
        w.step = path[k];
        if (k > 0) w.before = path[k - 1];
        break;
      }
  }
  return w;
}

std::string held_by_text(const record::BlockedBy& b) {
  std::string o = b.task + (b.worker ? " on " + std::to_string(*b.worker) : std::string(" (group ahead)")) +
                  " until " + g6(b.to_s);
  // Why the holder itself was late: its own wait and the cause that took most of it.
  if (b.task_wait_s && b.task_cause)
    o += " (" + b.task + " itself waited " + g6(*b.task_wait_s) + " s, mostly " + *b.task_cause + ")";
  return o;
}

std::string cause_words(const std::string& key) {
  std::string o = key.size() > 2 && key.compare(key.size() - 2, 2, "_s") == 0 ? key.substr(0, key.size() - 2) : key;
  for (char& c : o)
    if (c == '_') c = ' ';
  return o;
}

std::string why_text(const TaskWhy& w) {
  std::string on;
  for (const std::string& x : w.workers) on += (on.empty() ? "" : ", ") + x;
  std::string o = w.task + ": " + w.kind + (on.empty() ? std::string() : " on workers [" + on + "]") + ", " +
                  w.state + "\n";
  o += "submit " + seconds(w.submit_s) + ", ready " + seconds(w.ready_s) + ", start " + seconds(w.start_s) +
       ", end " + seconds(w.end_s) + "\n";
  if (!w.wait_s) {
    o += "it never started";
  } else {
    o += "waited " + g6(*w.wait_s) + " s";
    if (w.causes) {
      std::string parts;
      for (const auto& [cause, t] : *w.causes)
        if (t > 0) parts += (parts.empty() ? "" : ", ") + cause_words(cause) + " " + g6(t) + " s";
      if (!parts.empty()) o += ": " + parts;
    } else {
      o += " (this run recorded no wait causes)";
    }
  }
  o += "\n";
  if (w.kind == "group") {
    if (!w.group) {
      o += "summary.json does not list this group (its groups list is capped)\n";
    } else if (!w.group->blocked_by) {
      o += "held by: not recorded in this run\n";
    } else if (w.group->blocked_by->empty()) {
      o += w.start_s ? "held by: nothing (it launched when it turned READY)\n" : "held by: nothing recorded (it never launched)\n";
    } else {
      o += "held by:\n";
      for (const record::BlockedBy& b : *w.group->blocked_by)
        o += "  " + g6(b.from_s) + " to " + g6(b.to_s) + " s: " + held_by_text(b) + "\n";
    }
    if (w.group) {
      const std::vector<std::string>& by = w.group->overtaken_by;
      o += "overtaken by " + std::to_string(w.group->overtakes) + (w.group->overtakes == 1 ? " single" : " singles");
      std::string names;
      for (const std::string& n : by) names += (names.empty() ? "" : ", ") + n;
      if (!names.empty()) o += ": " + names;
      o += "\n";
    }
  }
  if (!w.path_recorded) {
    o += "critical path: not recorded in this run\n";
  } else if (!w.on_critical_path) {
    o += "critical path: not on it\n";
  } else {
    o += "critical path: on it, why not earlier: " + w.step->why +
         (w.step->after ? " (after " + *w.step->after + ")" : std::string());
    o += w.before ? "; before it there: " + w.before->task + " (" + g6(w.before->start_s) + " to " +
                        g6(w.before->end_s) + " s)\n"
                  : "; it is the path's first task\n";
  }
  return o;
}

ordered_json why_json(const TaskWhy& w) {
  ordered_json j{{"task", w.task}, {"kind", w.kind}, {"state", w.state}, {"workers", w.workers}};
  j["submit_s"] = opt(w.submit_s);
  j["ready_s"] = opt(w.ready_s);
  j["start_s"] = opt(w.start_s);
  j["end_s"] = opt(w.end_s);
  j["wait_s"] = opt(w.wait_s);
  if (w.causes) {
    ordered_json c = ordered_json::object();
    for (const auto& [cause, t] : *w.causes) c[cause] = t;
    j["wait_causes"] = c;
  } else {
    j["wait_causes"] = nullptr;
  }
  if (w.kind == "group" && w.group) {
    const record::GroupWait& g = *w.group;
    ordered_json chain = nullptr;
    if (g.blocked_by) {
      chain = ordered_json::array();
      for (const record::BlockedBy& b : *g.blocked_by) {
        ordered_json l{{"from_s", b.from_s}, {"to_s", b.to_s}};
        l["worker"] = b.worker ? ordered_json(*b.worker) : ordered_json(nullptr);
        l["task"] = b.task;
        l["task_wait_s"] = opt(b.task_wait_s);
        l["task_cause"] = b.task_cause ? ordered_json(*b.task_cause) : ordered_json(nullptr);
        l["text"] = held_by_text(b);
        chain.push_back(l);
      }
    }
    j["group"] = {{"ready_wait_s", g.ready_wait_s}, {"idle_target_s", g.idle_target_s}, {"blocked_by", chain},
                  {"overtakes", g.overtakes}, {"overtaken_by", g.overtaken_by}};
  } else {
    j["group"] = nullptr;
  }
  ordered_json path{{"recorded", w.path_recorded}, {"on", w.on_critical_path}};
  path["step"] = w.step ? step_json(*w.step) : ordered_json(nullptr);
  path["before"] = w.before ? step_json(*w.before) : ordered_json(nullptr);
  j["critical_path"] = path;
  return j;
}

}  // namespace dirsched::viz
