// The record's CSV reading (private to record/): one line into its RFC 4180 fields, and a number cell.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dirsched::record {

// The fields of one line (quoted fields may hold commas and doubled quotes); RecordError naming `where`
// for a quoted field left open.
std::vector<std::string> split_csv_line(std::string_view line, const std::string& where);
// A finite number, or nothing for an empty cell; RecordError "WHERE: COLUMN: 'TEXT' is not a number".
std::optional<double> csv_number(const std::string& text, const std::string& where, const char* column);

}  // namespace dirsched::record
