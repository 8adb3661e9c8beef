// Pictures of a run too large to draw in full: one streaming pass over events.jsonl (see viz.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <queue>
#include <map>
#include <unordered_map>

#include "dirsched/viz.hpp"
#include "dirsched/escape.hpp"
#include "dirsched/format.hpp"
#include "dirsched/time_limit.hpp"

namespace dirsched::viz {
namespace {

// The raw value of "key": in one event line (no JSON parse: a million-task log has tens of millions
// of lines). Strings are returned with their escapes as written (names are only compared and shown).
bool field(std::string_view line, std::string_view key, std::string_view& out) {
  std::string pat = "\"";
  pat += key;
  pat += "\":";
  const auto at = line.find(pat);
  if (at == std::string_view::npos) return false;
  std::size_t i = at + pat.size();
  if (i < line.size() && line[i] == '"') {
    std::size_t j = i + 1;
    while (j < line.size() && line[j] != '"') j += line[j] == '\\' ? 2 : 1;
    if (j >= line.size()) return false;
    out = line.substr(i + 1, j - i - 1);
    return true;
  }
  std::size_t j = i;
  while (j < line.size() && line[j] != ',' && line[j] != '}') ++j;
  out = line.substr(i, j - i);
  return true;
}
std::string esc(std::string_view s) { return html_escape(s); }

double number(std::string_view s) {
  return std::strtod(std::string(s).c_str(), nullptr);
}

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}
// A JSON string of a name taken raw from the log (its escapes kept as they were written).
std::string json_raw(std::string_view s) {
  return "\"" + std::string(s) + "\"";
}

}  // namespace

Aggregate aggregate_run(const std::string& events_path, const record::Summary* summary, std::size_t buckets,
                        std::size_t window_runs) {
  Aggregate a;
  a.buckets = std::max<std::size_t>(buckets, 1);
  // A FIFO, a device or a folder would block or mislead the reader: refused before it is opened.
  if (std::error_code ec; std::filesystem::exists(events_path, ec) && !std::filesystem::is_regular_file(events_path, ec))
    throw VizError("events.jsonl: not a regular file (a FIFO, a device, a socket or a folder): " + events_path);
  std::ifstream in(events_path, std::ios::binary);
  if (!in) throw VizError("events.jsonl: cannot read " + events_path);
  // The end time first: the log is in time order, so its last line has it.
  {
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    const std::streamoff from = std::max<std::streamoff>(0, size - 65536);
    in.seekg(from);
    std::string tail((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::size_t start = 0;
    while (start < tail.size()) {
      const std::size_t end = std::min(tail.find('\n', start), tail.size());
      std::string_view t;
      if (field(std::string_view(tail).substr(start, end - start), "t_s", t)) a.end_time = std::max(a.end_time, number(t));
      start = end + 1;
    }
    in.clear();
    in.seekg(0);
  }
  const double span = a.end_time > 0 ? a.end_time : 1;
  auto bucket_of = [&](double t) {
    const auto b = static_cast<long long>(t / span * static_cast<double>(a.buckets));
    return static_cast<std::size_t>(std::clamp<long long>(b, 0, static_cast<long long>(a.buckets) - 1));
  };
  std::unordered_map<std::string, std::size_t> lane_index;
  auto lane = [&](const std::string& name) {
    auto [it, fresh] = lane_index.emplace(name, a.lanes.size());
    if (fresh && a.lanes.size() >= kAggregateMaxLanes)
      throw VizError("events.jsonl: more than " + std::to_string(kAggregateMaxLanes) + " workers");
    if (fresh) {
      a.lanes.push_back(name);
      a.busy.emplace_back(a.buckets, 0.0f);
      a.depth.emplace_back(a.buckets, 0.0f);
      a.depth_now.push_back(0);
    }
    return it->second;
  };
  if (summary)
    for (const record::WorkerUse& w : summary->workers) lane(w.worker);
  struct Live {
    std::size_t lane;
    double start;
    std::size_t window;  // its slice in a.window, or SIZE_MAX
  };
  // Ordered maps: both are walked at the end, and the walk's order reaches the picture (float sums,
  // ties among the longest waits), so it must not depend on a hash.
  std::map<std::string, Live> live;            // "task#member" -> its run
  std::map<std::string, double> group_ready;  // READY groups
  std::unordered_map<std::string, std::size_t> single_lane;  // READY singles -> their worker's lane
  auto add_busy = [&](std::size_t l, double from, double to) {
    if (to <= from) return;
    const double w = span / static_cast<double>(a.buckets);
    for (std::size_t b = bucket_of(from); b < a.buckets; ++b) {
      const double lo = std::max(from, static_cast<double>(b) * w), hi = std::min(to, static_cast<double>(b + 1) * w);
      if (hi > lo) a.busy[l][b] += static_cast<float>(hi - lo);
      if (static_cast<double>(b + 1) * w >= to) break;
    }
  };
  auto note_depth = [&](std::size_t l, double t) {
    float& d = a.depth[l][bucket_of(t)];
    d = std::max(d, static_cast<float>(a.depth_now[l]));
    a.max_depth = std::max(a.max_depth, a.depth_now[l]);
  };
  using Wait = std::pair<double, GroupWait>;
  auto longer = [](const Wait& x, const Wait& y) { return x.first > y.first; };
  std::priority_queue<Wait, std::vector<Wait>, decltype(longer)> longest(longer);  // the kept, shortest on top
  std::string line;
  std::size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    std::string_view l(line), ev, ts, task;
    if (field(l, "event", ev) && ev.substr(0, 4) == "run_") continue;  // a run's event: no task
    if (!field(l, "event", ev) || !field(l, "t_s", ts) || !field(l, "task", task))
      throw VizError("events.jsonl line " + std::to_string(line_no) + ": an event without event, t_s or task");
    const double t = number(ts);
    if (!(t >= 0 && t <= kMaxTimeS))  // as the record's reader: no time past the testbed's limit is drawn
      throw VizError("events.jsonl line " + std::to_string(line_no) + ": t_s: expected a time from 0 to 2^32 s");
    ++a.events;
    if (ev == "submit") {
      ++a.tasks;
    } else if (ev == "ready") {
      std::string_view q;
      field(l, "queue", q);
      if (q == "group") {
        group_ready[std::string(task)] = t;
      } else if (q.substr(0, 7) == "worker:") {
        const std::size_t ln = lane(std::string(q.substr(7)));
        ++a.depth_now[ln];
        note_depth(ln, t);
        single_lane[std::string(task)] = ln;
      }
    } else if (ev == "group_launched") {
      auto it = group_ready.find(std::string(task));
      if (it != group_ready.end()) {
        ++a.groups_waited;
        longest.push({t - it->second, GroupWait{std::string(task), it->second, t}});
        if (longest.size() > kAggregateGroupWaits) longest.pop();
        group_ready.erase(it);
      }
    } else if (ev == "dispatch" && l.find("\"prepare_only\":true") != std::string_view::npos) {
      // a staging (#1583): the member starts at its activate event; it leaves its worker's FIFO now
      if (auto s = single_lane.find(std::string(task)); s != single_lane.end()) {
        if (a.depth_now[s->second] > 0) --a.depth_now[s->second];
        note_depth(s->second, t);
        single_lane.erase(s);
      }
    } else if (ev == "dispatch" || ev == "activate") {
      std::string_view w, m;
      std::string wname;
      if (field(l, "sub_worker", w))
        wname = std::string(w);
      else if (field(l, "worker", w))
        wname = std::string(w);
      else
        throw VizError("events.jsonl line " + std::to_string(line_no) + ": a dispatch without a worker");
      field(l, "member", m);
      const std::size_t ln = lane(wname);
      const bool in_window = a.window.size() < window_runs;
      live[std::string(task) + "#" + std::string(m)] = {ln, t, in_window ? a.window.size() : SIZE_MAX};
      if (auto s = single_lane.find(std::string(task)); s != single_lane.end()) {
        if (a.depth_now[s->second] > 0) --a.depth_now[s->second];
        note_depth(s->second, t);
        single_lane.erase(s);
      }
      ++a.runs;
      if (in_window) a.window.push_back({std::string(task), std::string(m), wname, t, -1});
    } else if (ev == "member_end") {
      std::string_view m;
      field(l, "member", m);
      auto it = live.find(std::string(task) + "#" + std::string(m));
      if (it == live.end()) continue;
      const double start = std::min(it->second.start, t);  // a tampered log: never a negative run
      add_busy(it->second.lane, start, t);
      if (it->second.window != SIZE_MAX) a.window[it->second.window].end = t;
      live.erase(it);
    }
  }
  for (const auto& [key, run] : live) add_busy(run.lane, run.start, a.end_time);
  for (const auto& [name, from] : group_ready) {
    ++a.groups_waited;
    longest.push({a.end_time - from, GroupWait{name, from, a.end_time}});
    if (longest.size() > kAggregateGroupWaits) longest.pop();
  }
  while (!longest.empty()) a.group_waits.push_back(longest.top().second), longest.pop();
  std::sort(a.group_waits.begin(), a.group_waits.end(),
            [](const GroupWait& x, const GroupWait& y) { return x.from != y.from ? x.from < y.from : x.group < y.group; });
  return a;
}

std::string aggregate_timeline_svg(const Aggregate& a) {
  const std::size_t rows = std::min<std::size_t>(a.lanes.size(), kAggregateRows);
  constexpr double kLeft = 150, kWidth = 1000, kRow = 14, kTop = 70;
  const double group_top = kTop + static_cast<double>(rows) * kRow + 30;
  const std::size_t g = a.group_waits.size();
  const double height = group_top + 20 + static_cast<double>(std::min<std::size_t>(g, 100)) * 4 + 30;
  const double bw = kWidth / static_cast<double>(a.buckets);
  const double bucket_s = (a.end_time > 0 ? a.end_time : 1) / static_cast<double>(a.buckets);
  std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
                  fmt(kLeft + kWidth + 20) + "\" height=\"" + fmt(height) + "\" font-family=\"Helvetica\" font-size=\"10\">\n";
  o += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o += "<text class=\"note\" x=\"10\" y=\"18\" font-size=\"13\">Aggregated timeline: " + std::to_string(a.tasks) +
       " tasks, " + std::to_string(a.runs) + " member runs on " + std::to_string(a.lanes.size()) +
       " workers are too many to draw one by one (more than " + std::to_string(kMaxPictureTasks) + " tasks)</text>\n";
  o += "<text x=\"10\" y=\"36\">Each row: a worker" + std::string(rows < a.lanes.size() ? " range (workers merged, averaged)" : "") +
       "; blue: its utilisation in each of " + std::to_string(a.buckets) + " intervals of " + fmt(bucket_s) +
       " s (darker: busier); red line: its READY queue's greatest depth in the interval (scale: " +
       std::to_string(a.max_depth) + " at the row's top). Below: groups' READY waits.</text>\n";
  o += "<text x=\"" + fmt(kLeft) + "\" y=\"" + fmt(kTop - 6) + "\">0 s</text><text x=\"" + fmt(kLeft + kWidth) +
       "\" y=\"" + fmt(kTop - 6) + "\" text-anchor=\"end\">" + fmt(a.end_time) + " s</text>\n";
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t from = r * a.lanes.size() / rows, to = (r + 1) * a.lanes.size() / rows;
    const double y = kTop + static_cast<double>(r) * kRow;
    auto label = [&](std::size_t i) {
      const std::string& n = a.lanes[i];
      return n.rfind("sub", 0) == 0 ? n : "worker " + n;
    };
    o += "<g class=\"row\"><text x=\"" + fmt(kLeft - 4) + "\" y=\"" + fmt(y + kRow - 3) + "\" text-anchor=\"end\">" +
         esc(to - from == 1 ? label(from) : label(from) + " .. " + a.lanes[to - 1]) + "</text>";
    std::string depth_points;
    for (std::size_t b = 0; b < a.buckets; ++b) {
      double busy = 0, depth = 0;
      for (std::size_t i = from; i < to; ++i) busy += a.busy[i][b], depth = std::max(depth, static_cast<double>(a.depth[i][b]));
      const double u = std::min(1.0, busy / (bucket_s * static_cast<double>(to - from)));
      if (u > 0.005)
        o += "<rect x=\"" + fmt(kLeft + static_cast<double>(b) * bw) + "\" y=\"" + fmt(y + 1) + "\" width=\"" + fmt(bw) +
             "\" height=\"" + fmt(kRow - 2) + "\" fill=\"#2b6cb0\" fill-opacity=\"" + fmt(std::round(u * 100) / 100) + "\"/>";
      if (a.max_depth > 0)
        depth_points += fmt(kLeft + (static_cast<double>(b) + 0.5) * bw) + "," +
                        fmt(y + kRow - 1 - (kRow - 2) * depth / static_cast<double>(a.max_depth)) + " ";
    }
    if (!depth_points.empty())
      o += "<polyline fill=\"none\" stroke=\"#c53030\" stroke-width=\"1\" points=\"" + depth_points + "\"/>";
    o += "</g>\n";
  }
  o += "<text x=\"10\" y=\"" + fmt(group_top) + "\">" + std::to_string(a.groups_waited) +
       " groups waited READY; the " + std::to_string(std::min<std::size_t>(g, 100)) + " longest of them as spans (ready to launch):</text>\n";
  std::vector<GroupWait> shown = a.group_waits;
  std::sort(shown.begin(), shown.end(), [](const GroupWait& x, const GroupWait& y) {
    return x.to - x.from != y.to - y.from ? x.to - x.from > y.to - y.from : x.group < y.group;
  });
  if (shown.size() > 100) shown.resize(100);
  const double scale = kWidth / (a.end_time > 0 ? a.end_time : 1);
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const GroupWait& w = shown[i];
    o += "<rect class=\"group-wait\" x=\"" + fmt(kLeft + w.from * scale) + "\" y=\"" + fmt(group_top + 10 + static_cast<double>(i) * 4) +
         "\" width=\"" + fmt(std::max(1.0, (w.to - w.from) * scale)) + "\" height=\"3\" fill=\"#dd6b20\"><title>" + esc(w.group) +
         " READY " + fmt(w.from) + " s to " + fmt(w.to) + " s</title></rect>\n";
  }
  return o + "</svg>\n";
}

std::string aggregate_trace(const Aggregate& a) {
  // Chrome trace JSON, windowed: counters for every worker (utilisation and queue depth per interval,
  // the whole run), the longest group waits as slices, and the member runs of the first window_runs
  // dispatches only. Its size is bounded whatever the run's (a few MB), so Perfetto loads it.
  std::string o = "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"note\":\"aggregated and windowed: " +
                  std::to_string(a.tasks) + " tasks; counters cover the whole run in " + std::to_string(a.buckets) +
                  " intervals; member runs shown for the first " + std::to_string(a.window.size()) + " of " +
                  std::to_string(a.runs) + " dispatches\"},\"traceEvents\":[\n";
  auto us = [](double t) { return fmt(std::round(t * 1e9) / 1e3); };
  o += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"workers (utilisation, queue depth)\"}},\n";
  o += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"args\":{\"name\":\"member runs (window)\"}},\n";
  o += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":3,\"args\":{\"name\":\"group waits (longest)\"}}";
  const std::size_t rows = std::min<std::size_t>(a.lanes.size(), kAggregateRows);
  const double bucket_s = (a.end_time > 0 ? a.end_time : 1) / static_cast<double>(a.buckets);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t from = r * a.lanes.size() / rows, to = (r + 1) * a.lanes.size() / rows;
    const std::string name = to - from == 1 ? "worker " + a.lanes[from] : "workers " + a.lanes[from] + ".." + a.lanes[to - 1];
    for (std::size_t b = 0; b < a.buckets; ++b) {
      double busy = 0, depth = 0;
      for (std::size_t i = from; i < to; ++i) busy += a.busy[i][b], depth = std::max(depth, static_cast<double>(a.depth[i][b]));
      o += ",\n{\"name\":" + json_raw(name) + ",\"ph\":\"C\",\"pid\":1,\"ts\":" + us(static_cast<double>(b) * bucket_s) +
           ",\"args\":{\"utilisation\":" + fmt(std::min(1.0, busy / (bucket_s * static_cast<double>(to - from)))) +
           ",\"queue_depth\":" + fmt(depth) + "}}";
    }
  }
  std::map<std::string, std::size_t> tid;  // walked below: the thread names in worker order, not hash order
  for (const RunSlice& r : a.window) {
    const auto t = tid.emplace(r.worker, tid.size()).first->second;
    const double end = r.end < 0 ? a.end_time : r.end;
    o += ",\n{\"name\":" + json_raw(r.task) + ",\"ph\":\"X\",\"pid\":2,\"tid\":" + std::to_string(t) + ",\"ts\":" +
         us(r.start) + ",\"dur\":" + fmt(std::max(0.0, std::round(end * 1e9) / 1e3 - std::round(r.start * 1e9) / 1e3)) +
         ",\"args\":{\"member\":" + r.member + ",\"worker\":" + json_raw(r.worker) + "}}";
  }
  for (const auto& [worker, t] : tid)
    o += ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":2,\"tid\":" + std::to_string(t) + ",\"args\":{\"name\":" +
         json_raw(worker.rfind("sub", 0) == 0 ? worker : "worker " + worker) + "}}";
  for (std::size_t i = 0; i < a.group_waits.size(); ++i) {
    const GroupWait& w = a.group_waits[i];
    o += ",\n{\"name\":" + json_raw(w.group) + ",\"cat\":\"group_wait\",\"ph\":\"X\",\"pid\":3,\"tid\":" +
         std::to_string(i % 16) + ",\"ts\":" + us(w.from) + ",\"dur\":" + fmt(std::max(0.0, std::round(w.to * 1e9) / 1e3 - std::round(w.from * 1e9) / 1e3)) + "}";
  }
  return o + "\n]}\n";
}

}  // namespace dirsched::viz
