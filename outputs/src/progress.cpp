// See progress.hpp.
#include "dirsched/progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace dirsched {

Progress& Progress::get() {
  static Progress p;
  return p;
}

Progress::Progress() : shown_(isatty(STDERR_FILENO) == 1), process_start_(Clock::now()) {}

double Progress::since_start() const {
  return std::chrono::duration<double>(Clock::now() - process_start_).count();
}

void Progress::reset() {
  if (active_) end();
  phases_.clear();
  process_start_ = Clock::now();  // a sweep variant's child: its wall_s counts from its own start
}

void Progress::begin(const std::string& name, double total, const std::string& unit) {
  if (active_) end();
  active_ = true;
  printed_ = false;
  name_ = name;
  unit_ = unit;
  total_ = total;
  phase_start_ = Clock::now();
  last_print_ = phase_start_ - std::chrono::seconds(1);
  update(0);
}

std::string grouped(double n) {
  char b[48];
  std::snprintf(b, sizeof b, "%.0f", std::floor(n < 0 ? 0 : n));
  std::string digits = b, out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void Progress::update(double done, const std::string& detail) {
  if (!active_ || !shown_) return;
  const auto now = Clock::now();
  if (now - last_print_ < std::chrono::milliseconds(250)) return;
  last_print_ = now;
  const double elapsed = std::chrono::duration<double>(now - phase_start_).count();
  std::string line = "[dirsched] " + name_ + ":";
  if (total_ > 0) {
    char pct[32];
    std::snprintf(pct, sizeof pct, " %.0f%%", std::min(100.0, 100 * done / total_));
    line += pct;
    line += " (" + grouped(done) + "/" + grouped(total_) + (unit_.empty() ? "" : " " + unit_) + ")";
    if (done > 0 && elapsed >= 0.1 && done < total_) {
      char eta[48];
      std::snprintf(eta, sizeof eta, " ETA %.0f s", std::ceil(elapsed * (total_ - done) / done));
      line += eta;
    }
  } else if (done > 0) {
    line += " " + grouped(done) + (unit_.empty() ? "" : " " + unit_);
  }
  char el[32];
  std::snprintf(el, sizeof el, " %.1f s", elapsed);
  line += el;
  if (!detail.empty()) line += "  " + detail;
  std::fprintf(stderr, "\r%s\033[K", line.c_str());
  std::fflush(stderr);
  printed_ = true;
}

void Progress::end() {
  if (!active_) return;
  active_ = false;
  const double wall = std::chrono::duration<double>(Clock::now() - phase_start_).count();
  bool merged = false;
  for (auto& [name, s] : phases_)
    if (name == name_) s += wall, merged = true;
  if (!merged) phases_.emplace_back(name_, wall);
  if (printed_ && shown_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
  printed_ = false;
}

}  // namespace dirsched
