// Progress of a command's long phases (load, simulate, write, pictures, render, explore, sweep) on
// stderr, and the wall time of each phase for metrics.json.
//
// The line reads "[dirsched] simulate: 42% (1,234/2,900 ops) ETA 3 s" and is rewritten in place at
// most four times a second; "%" and "ETA" appear only where the phase knows its total, and the ETA
// only once a tenth of a second has passed (a linear extrapolation of the phase so far). It is shown
// only when stderr is a terminal and --quiet was not given: a pipe or a file never gets it. Phase wall
// times are kept whether or not anything is shown. One Progress per process (phases are the
// command's); a forked child starts its own.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace dirsched {

class Progress {
 public:
  static Progress& get();
  // Shown or not: the default is whether stderr is a terminal; --quiet turns it off.
  void set_shown(bool shown) { shown_ = shown; }
  bool shown() const { return shown_; }
  // Starts phase `name` (ending the one in progress); `total` 0 when it is not known.
  void begin(const std::string& name, double total = 0, const std::string& unit = "");
  // The total of the phase in progress, once known (the simulator learns its op count).
  void set_total(double total, const std::string& unit) { total_ = total, unit_ = unit; }
  // `done` of the total so far; `detail` follows the figures (e.g. "t=3.2 s").
  void update(double done, const std::string& detail = "");
  // Ends the phase in progress: its wall time is recorded and its line cleared.
  void end();
  // Every ended phase with its wall seconds, in order (a phase run twice is summed).
  const std::vector<std::pair<std::string, double>>& phases() const { return phases_; }
  // Wall seconds since the process started (the first call to get()).
  double since_start() const;
  // Forgets the phases (a forked child that runs a variant of its own).
  void reset();

 private:
  Progress();
  using Clock = std::chrono::steady_clock;
  bool shown_ = false;
  bool active_ = false;
  bool printed_ = false;
  std::string name_, unit_;
  double total_ = 0;
  Clock::time_point process_start_, phase_start_, last_print_;
  std::vector<std::pair<std::string, double>> phases_;
};

// "1,234,567": thousands separated, for progress lines.
std::string grouped(double n);

}  // namespace dirsched
