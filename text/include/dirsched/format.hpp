// Number and field formatting shared by every writer of text a person reads (reports, charts, CSV):
// one definition each, so that a number is printed the same in a chart, a table and a CSV cell.
// - g6: six significant digits after rounding away binary noise ("0.433", never "0.43300000000000033";
//   never "-0").
// - csv_field: RFC 4180: a field holding a comma, a double quote, CR or LF is quoted, inner quotes doubled.
// - tick_step: 1, 2 or 5 times a power of ten, giving about `target` axis ticks over `span` (1 when the
//   span is not positive).
#pragma once

#include <string>
#include <string_view>

namespace dirsched {

std::string g6(double v);
std::string csv_field(std::string_view s);
double tick_step(double span, int target);

}  // namespace dirsched
