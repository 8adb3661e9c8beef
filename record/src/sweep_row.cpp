// sweep.csv's codec (sweep_row.hpp).
#include "dirsched/record/sweep_row.hpp"

#include <array>
#include <cmath>

#include "csv.hpp"
#include "dirsched/format.hpp"  // csv_field, g6

namespace dirsched::record {
namespace {

constexpr std::array<const char*, 9> kTimeColumns = {
    "makespan_s",          "group_ready_wait_mean_s",  "group_ready_wait_p95_s",
    "group_ready_wait_max_s", "single_ready_wait_mean_s", "single_ready_wait_p95_s",
    "single_ready_wait_max_s", "group_idle_target_s",     "utilisation"};
constexpr std::array<const char*, 4> kCountColumns = {"failed", "poisoned", "rejected", "stuck"};

// The time and count fields in column order (const or not, for the encoder and the decoder).
template <typename M>
auto times(M& m) {
  return std::array<decltype(&m.makespan_s), 9>{&m.makespan_s,         &m.group_wait_mean_s,  &m.group_wait_p95_s,
                                                &m.group_wait_max_s,   &m.single_wait_mean_s, &m.single_wait_p95_s,
                                                &m.single_wait_max_s,  &m.group_idle_target_s, &m.utilisation};
}
template <typename M>
auto counts(M& m) {
  return std::array<decltype(&m.failed), 4>{&m.failed, &m.poisoned, &m.rejected, &m.stuck};
}

// Every column but the variables: variant, clean, the times, the counts, outcome, overtakes_max, stalls,
// group_held_target_s.
constexpr std::size_t kFixedColumns = 1 + 1 + kTimeColumns.size() + kCountColumns.size() + 4;

long whole(const std::string& text, const std::string& where, const char* column) {
  const std::optional<double> v = csv_number(text, where, column);
  if (!v || *v < 0 || *v != std::floor(*v) || *v > 9.0e15)
    throw RecordError(where + ": " + column + ": '" + text + "' is not a count");
  return static_cast<long>(*v);
}

}  // namespace

std::string sweep_csv_header(const std::vector<std::string>& var_names) {
  std::string o = "variant";
  for (const std::string& n : var_names) o += "," + csv_field(n);
  o += ",clean";
  for (const char* c : kTimeColumns) o += std::string(",") + c;
  for (const char* c : kCountColumns) o += std::string(",") + c;
  return o + ",outcome,overtakes_max,stalls,group_held_target_s\n";
}

void encode_sweep_row(std::size_t variant, const std::vector<std::string>& values, const SweepMeasures& m,
                      std::string& out) {
  out += std::to_string(variant);
  for (const std::string& v : values) out += "," + csv_field(v);
  out += m.clean ? ",true" : ",false";
  for (const double* x : times(m)) out += "," + g6(*x);
  for (const long* n : counts(m)) out += "," + std::to_string(*n);
  out += "," + csv_field(m.outcome) + "," + std::to_string(m.overtakes_max) + "," + std::to_string(m.stalls) + "," +
         g6(m.group_held_target_s) + "\n";
}

std::vector<std::string> decode_sweep_header(std::string_view line, const std::string& file) {
  const std::vector<std::string> f = split_csv_line(line, file + " line 1");
  // Today's header, or one from before group_held_target_s (a column fewer at the end).
  for (const std::size_t fixed : {kFixedColumns, kFixedColumns - 1})
    if (f.size() >= fixed && f[0] == "variant") {
      const std::vector<std::string> names(f.begin() + 1, f.end() - static_cast<std::ptrdiff_t>(fixed - 1));
      std::string want = sweep_csv_header(names);
      if (fixed < kFixedColumns) want = want.substr(0, want.rfind(",group_held_target_s")) + "\n";
      if (want == std::string(line) + "\n") return names;
    }
  throw RecordError(file + " line 1: not a sweep.csv header (variant, the variables, clean, makespan_s, ... as "
                    "docs/outputs.md lists)");
}

SweepCsvRow decode_sweep_row(std::string_view line, std::size_t var_count, const std::string& file,
                             std::size_t line_no) {
  const std::string where = file + " line " + std::to_string(line_no);
  const std::vector<std::string> f = split_csv_line(line, where);
  const std::size_t want = var_count + kFixedColumns;
  if (f.size() != want && f.size() != want - 1)  // a file from before group_held_target_s
    throw RecordError(where + ": " + std::to_string(f.size()) + " fields, the header has " + std::to_string(want));
  SweepCsvRow r;
  std::size_t at = 0;
  r.variant = static_cast<std::size_t>(whole(f[at++], where, "variant"));
  r.values.assign(f.begin() + 1, f.begin() + 1 + static_cast<std::ptrdiff_t>(var_count));
  at += var_count;
  const std::string& clean = f[at++];
  if (clean != "true" && clean != "false") throw RecordError(where + ": clean: '" + clean + "' is not true or false");
  r.measures.clean = clean == "true";
  std::size_t k = 0;
  for (double* x : times(r.measures)) {
    const std::optional<double> v = csv_number(f[at++], where, kTimeColumns[k++]);
    if (!v) throw RecordError(where + ": " + kTimeColumns[k - 1] + ": an empty cell");
    *x = *v;
  }
  k = 0;
  for (long* n : counts(r.measures)) *n = whole(f[at++], where, kCountColumns[k++]);
  r.measures.outcome = f[at++];
  r.measures.overtakes_max = whole(f[at++], where, "overtakes_max");
  r.measures.stalls = whole(f[at++], where, "stalls");
  if (at < f.size()) {
    const std::optional<double> v = csv_number(f[at++], where, "group_held_target_s");
    if (!v) throw RecordError(where + ": group_held_target_s: an empty cell");
    r.measures.group_held_target_s = *v;
  }
  return r;
}

}  // namespace dirsched::record
