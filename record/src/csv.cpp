// The record's CSV reading (csv.hpp).
#include "csv.hpp"

#include <charconv>
#include <cmath>

#include "dirsched/record/summary.hpp"  // RecordError

namespace dirsched::record {

std::vector<std::string> split_csv_line(std::string_view line, const std::string& where) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    std::string& f = fields.back();
    if (quoted) {
      if (c != '"') {
        f += c;
      } else if (i + 1 < line.size() && line[i + 1] == '"') {
        f += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c == '"' && f.empty()) {
      quoted = true;
    } else {
      f += c;
    }
  }
  if (quoted) throw RecordError(where + ": a quoted field is not closed");
  return fields;
}

std::optional<double> csv_number(const std::string& text, const std::string& where, const char* column) {
  if (text.empty()) return std::nullopt;
  double v = 0;
  const auto res = std::from_chars(text.data(), text.data() + text.size(), v);
  if (res.ec != std::errc() || res.ptr != text.data() + text.size() || !std::isfinite(v))
    throw RecordError(where + ": " + column + ": '" + text + "' is not a number");
  return v;
}

}  // namespace dirsched::record
