// tasks.csv's codec (task_row.hpp).
#include "dirsched/record/task_row.hpp"

#include <charconv>
#include <cmath>
#include <vector>

#include "dirsched/format.hpp"  // csv_field
#include "csv.hpp"

namespace dirsched::record {
namespace {

constexpr std::array<const char*, 11> kBaseColumns = {
    "job_id",        "kind",        "callable",     "allocated_resources", "submission_time", "ready_time",
    "starting_time", "finish_time", "waiting_time", "execution_time",      "final_state"};

void append_number(std::string& out, const std::optional<double>& v) {
  if (!v) return;
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, *v);
  out.append(buf, res.ptr);
}

std::vector<std::string> column_names(const TaskColumns& c) {
  std::vector<std::string> names(kBaseColumns.begin(), kBaseColumns.end());
  if (c.waits) names.insert(names.end(), kWaitColumns.begin(), kWaitColumns.begin() + kWaitColumnsInPlace);
  if (c.run) names.emplace_back("run");
  if (c.staged) names.emplace_back("staged");
  if (c.waits && c.held)
    names.insert(names.end(), kWaitColumns.begin() + kWaitColumnsInPlace, kWaitColumns.end());
  return names;
}

}  // namespace

std::string tasks_csv_header(const TaskColumns& columns) {
  std::string o;
  for (const std::string& n : column_names(columns)) o += (o.empty() ? "" : ",") + n;
  return o + "\n";
}

void encode_task_row(const TaskRow& r, const TaskColumns& columns, std::string& out) {
  out += csv_field(r.job_id);
  out += ',';
  out += r.kind;
  out += ',';
  out += csv_field(r.callable);
  out += ',';
  out += r.allocated_resources;
  for (const std::optional<double>* v : {&r.submission_time, &r.ready_time, &r.starting_time, &r.finish_time,
                                         &r.waiting_time, &r.execution_time}) {
    out += ',';
    append_number(out, *v);
  }
  out += ',';
  out += r.final_state;
  if (columns.waits)
    for (std::size_t k = 0; k < kWaitColumnsInPlace; ++k) {
      out += ',';
      if (r.waits) append_number(out, (*r.waits)[k]);
    }
  if (columns.run) {
    out += ',';
    out += csv_field(r.run);
  }
  if (columns.staged) {
    out += ',';
    append_number(out, r.staged);
  }
  if (columns.waits && columns.held)
    for (std::size_t k = kWaitColumnsInPlace; k < kWaitColumns.size(); ++k) {
      out += ',';
      if (r.waits) append_number(out, (*r.waits)[k]);
    }
  out += '\n';
}

TaskColumns decode_tasks_header(std::string_view line, const std::string& file) {
  const std::vector<std::string> got = split_csv_line(line, file + " line 1");
  for (bool waits : {true, false})
    for (bool run : {false, true})
      for (bool staged : {false, true})
        for (bool held : {true, false}) {
          const TaskColumns c{waits, run, staged, held && waits};
          if (column_names(c) == got) return c;
        }
  throw RecordError(file + " line 1: not a tasks.csv header (job_id,kind,callable,... as docs/outputs.md lists)");
}

TaskRow decode_task_row(std::string_view line, const TaskColumns& columns, const std::string& file,
                        std::size_t line_no) {
  const std::string where = file + " line " + std::to_string(line_no);
  const std::vector<std::string> f = split_csv_line(line, where);
  const std::vector<std::string> names = column_names(columns);
  if (f.size() != names.size())
    throw RecordError(where + ": " + std::to_string(f.size()) + " fields, the header has " +
                      std::to_string(names.size()));
  TaskRow r;
  r.job_id = f[0];
  r.kind = f[1];
  r.callable = f[2];
  r.allocated_resources = f[3];
  std::optional<double>* times[] = {&r.submission_time, &r.ready_time,   &r.starting_time,
                                    &r.finish_time,     &r.waiting_time, &r.execution_time};
  for (std::size_t k = 0; k < 6; ++k) *times[k] = csv_number(f[4 + k], where, kBaseColumns[4 + k]);
  r.final_state = f[10];
  std::size_t at = 11;
  std::size_t set = 0;
  std::array<double, kWaitColumns.size()> w{};
  auto wait_column = [&](std::size_t k) {
    const std::optional<double> v = csv_number(f[at++], where, kWaitColumns[k]);
    set += v.has_value();
    w[k] = v.value_or(0);
  };
  if (columns.waits)
    for (std::size_t k = 0; k < kWaitColumnsInPlace; ++k) wait_column(k);
  if (columns.run) r.run = f[at++];
  if (columns.staged) r.staged = csv_number(f[at++], where, "staged");
  if (columns.waits) {
    const std::size_t n = columns.held ? kWaitColumns.size() : kWaitColumnsInPlace;
    if (columns.held)
      for (std::size_t k = kWaitColumnsInPlace; k < kWaitColumns.size(); ++k) wait_column(k);
    if (set != 0 && set != n)
      throw RecordError(where + ": the wait causes are all set (a task that started) or all empty, not " +
                        std::to_string(set) + " of " + std::to_string(n));
    if (set) r.waits = w;  // a file from before wait_target_held_s: 0 there
  }
  return r;
}

}  // namespace dirsched::record
