// timeline.svg, trace.json and report.html: hand-written, so every byte is ours and stable.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "dirsched/escape.hpp"
#include "dirsched/format.hpp"
#include "dirsched/viz.hpp"
#include "dirsched/why.hpp"

namespace dirsched::viz {
namespace {

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  std::string s(b);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string percent(double fraction) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", 100 * fraction);
  return b;
}


std::string esc(const std::string& s) { return html_escape(s); }

// A long-waiting single's "behind" cell: how many tasks ran ahead of it on its worker, and which (the
// last ones the summary names, oldest first).
std::string behind_text(const record::LongWait& w) {
  const std::int64_t n = w.behind.value_or(0);
  std::string o = std::to_string(n);
  if (!w.ahead || w.ahead->empty()) return o;
  std::string names;
  for (const std::string& a : *w.ahead) names += (names.empty() ? "" : ", ") + esc(a);
  return o + ": " + (static_cast<std::size_t>(n) > w.ahead->size() ? "..., " : "") + names;
}

// One row of the report's group table.
std::string group_row(const record::GroupWait& g) {
  std::string by;
  for (const std::string& s : g.overtaken_by) by += (by.empty() ? "" : ", ") + s;
  return "<tr><td>" + esc(g.task) + "</td><td>" + esc(nlohmann::json(g.workers).dump()) + "</td><td class=\"num\">" +
         g6(g.ready_wait_s) + "</td><td class=\"num\">" + (g.launched_s ? g6(*g.launched_s) : std::string("never")) +
         "</td><td class=\"num\">" + g6(g.idle_target_s) + "</td><td>" + std::to_string(g.overtakes) +
         (by.empty() ? "" : ": " + esc(by)) + "</td></tr>";
}

constexpr const char* kGroupHeader =
    "<tr><th>group</th><th>workers</th><th>READY wait (s)</th><th>launched at (s)</th><th>waited with an "
    "idle "
    "target (s)</th><th>singles that overtook it</th></tr>";

const char* bar_colour(const MemberBar& b) {
  if (b.failed) return "#e05a47";
  if (b.kind == "group") return "#e8a33d";
  if (b.kind == "sub" || b.kind == "sub_group") return "#5aa27c";
  return "#4f81bd";
}

// A lane: its bars (and a group's wait spans, a stall's diamond) in the top part, from kBarTop, and the
// depth of its queue as a filled step area in a band of its own at the bottom, kDepthBand high, below a
// gap: a queue never runs along a bar's edge, where it would read as the critical path's outline.
constexpr double kLabelW = 120, kLaneH = 42, kBarTop = 3, kBarH = 18, kDepthBand = 12, kAxisH = 40,
                 kLegendRowH = 16;
constexpr const char* kWorkerDepth = "#7f8c8d", *kGroupDepth = "#8e44ad", *kSubDepth = "#16a085";
constexpr double kDepthOpacity = 0.5, kShadeOpacity = 0.22;

// Each waiting group gets its own hue, so two groups' waits never share one shading.
// Past the six named ones, every group shares a neutral grey (the legend counts them as "N more").
const char* shade_colour(std::size_t k) {
  static const char* palette[] = {"#ff9f1c", "#2ec4b6", "#e71d36", "#7b2cbf", "#3a86ff", "#8ac926"};
  return k < 6 ? palette[k] : "#9e9e9e";
}

// 65526 -> "65,526".
std::string thousands(std::size_t n) {
  std::string d = std::to_string(n), o;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (i > 0 && (d.size() - i) % 3 == 0) o += ',';
    o += d[i];
  }
  return o;
}

// The groups that sat READY for a while (launched later than READY, or never), in task order: each
// gets its own colour for its wait span, its idle targets and the strips of what held it.
std::vector<const TaskView*> waiting_groups(const RunView& v) {
  std::vector<const TaskView*> out;
  for (const TaskView& t : v.tasks)
    if (t.kind == "group" && t.ready >= 0 && ready_wait_end(v, t) > t.ready) out.push_back(&t);
  return out;
}
constexpr std::size_t kNamedShades = 6;  // the legend names this many waiting groups, then counts the rest

// Dependency arrows (shown while the pointer is on a bar, always for the critical path): drawn up to
// this many dependencies; past it, none, and the legend says so.
constexpr std::size_t kMaxDepArrows = 4000;

// Time to x in the timeline.
struct XScale {
  double span, plot_w;
  double operator()(double t) const { return kLabelW + t / span * plot_w; }
};
XScale x_scale(const RunView& v, const TimelineOptions& opt) {
  return {v.end_time > 0 ? v.end_time : 1, opt.width_px - kLabelW - 20};
}

// A lane's runs as drawn: a run a pixel wide or more is its own bar; a thinner one merges with the runs
// that start within a pixel of it into one box ("runs merged").
struct DrawnRun {
  std::size_t first = 0, n = 1;
  double x0 = 0, x1 = 0;
  bool merged = false, failed = false;
};
std::vector<DrawnRun> drawn_runs(const std::vector<MemberBar>& bars, double end_time, const XScale& x_of) {
  std::vector<DrawnRun> out;
  for (std::size_t k = 0; k < bars.size();) {
    DrawnRun d;
    d.first = k;
    d.x0 = x_of(bars[k].start);
    d.x1 = x_of(bars[k].end < 0 ? end_time : bars[k].end);
    if (d.x1 - d.x0 >= 1.0) {
      d.failed = bars[k].failed;
      out.push_back(d);
      ++k;
      continue;
    }
    d.merged = true;
    d.n = 0;
    // The bar at k is always taken, so the merge ends whatever the times (issue 28: a bar that ends
    // before it starts once made this loop spin).
    do {
      d.x1 = std::max(d.x1, x_of(bars[k].end < 0 ? end_time : bars[k].end));
      d.failed |= bars[k].failed;
      ++d.n;
      ++k;
    } while (k < bars.size() && x_of(bars[k].start) <= d.x1 + 1.0);
    out.push_back(d);
  }
  return out;
}

// A queue's deepest depth (0: nothing ever waited in it, and nothing is drawn).
int deepest(const RunView& v, const std::string& queue) {
  auto it = v.depth.find(queue);
  int m = 0;
  if (it != v.depth.end())
    for (const DepthStep& s : it->second) m = std::max(m, s.depth);
  return m;
}

// The group FIFO lane holds the group queue's depth, the waiting groups' spans and the stall reports:
// drawn when any of them is; the SUB FIFO lane when SUB tasks queued.
bool has_group_lane(const RunView& v) {
  return deepest(v, "group") > 0 || !v.stalls.empty() || !waiting_groups(v).empty();
}
bool has_sub_lane(const RunView& v) { return deepest(v, "sub") > 0; }

// The colour of a waiting group's marks (its shade, span and strips), by its order among them.
std::map<std::string, std::size_t> shade_index(const RunView& v) {
  std::map<std::string, std::size_t> shade_of;
  for (const TaskView* g : waiting_groups(v)) shade_of.emplace(g->name, std::min(shade_of.size(), kNamedShades));
  return shade_of;
}

}  // namespace

std::vector<std::string> drawn_lanes(const RunView& v, std::size_t* hidden) {
  if (hidden) *hidden = 0;
  if (v.lanes.size() <= kMaxIdleLanes) return v.lanes;
  std::set<std::string> active;
  for (const auto& [lane, bars] : v.bars)
    if (!bars.empty()) active.insert(lane);
  for (const auto& [queue, steps] : v.depth)
    if (queue.rfind("worker:", 0) == 0)
      for (const DepthStep& st : steps)
        if (st.depth > 0) active.insert(queue.substr(7));
  for (const StarvedInterval& st : v.starved) active.insert(st.targets.begin(), st.targets.end());
  for (const ReservedInterval& r : v.reserved) active.insert(r.worker);
  for (const StallMark& m : v.stalls) {
    active.insert(m.busy.begin(), m.busy.end());
    active.insert(m.idle_queued.begin(), m.idle_queued.end());
  }
  std::vector<std::string> out;
  for (const std::string& lane : v.lanes)
    if (active.count(lane)) out.push_back(lane);
  if (hidden) *hidden = v.lanes.size() - out.size();
  return out;
}

// A trace with runs: each run's span as a band under the time axis, the colours alternating.
constexpr const char* kRunBand[2] = {"#9fb6d6", "#d6b99f"};

std::vector<LegendItem> timeline_legend(const RunView& v, const TimelineOptions& opt) {
  // Only what the drawing holds (issue 55: no entry for a mark the picture lacks), a bounded list at
  // any size (issue 24), each swatch drawn as its mark is.
  const std::vector<std::string> lanes = drawn_lanes(v, nullptr);
  const std::set<std::string> drawn(lanes.begin(), lanes.end());
  const XScale x_of = x_scale(v, opt);
  bool single = false, group = false, sub = false, failed = false, merged = false, staged = false;
  for (const auto& [lane, bars] : v.bars) {
    if (!drawn.count(lane)) continue;
    for (const DrawnRun& d : drawn_runs(bars, v.end_time, x_of)) {
      if (d.merged) {
        merged |= !d.failed;
        failed |= d.failed;
        continue;
      }
      const MemberBar& b = bars[d.first];
      failed |= b.failed;
      if (b.kind == "group") group = true;
      else if (b.kind == "sub" || b.kind == "sub_group") sub = true;
      else single = true;
    }
    for (const MemberBar& b : bars) staged |= b.staged >= 0;
  }
  std::vector<LegendItem> items;
  if (single) items.push_back({"bar", "#4f81bd", "single"});
  if (group) items.push_back({"bar", "#e8a33d", "group member"});
  if (sub) items.push_back({"bar", "#5aa27c", "SUB task"});
  if (failed) items.push_back({"bar", "#e05a47", "failed"});
  if (merged) items.push_back({"bar", "#6f8fb5", "runs merged (thinner than a pixel)"});
  if (!v.critical.empty()) items.push_back({"outline", "#d4006a", "on the critical path"});
  if (staged) items.push_back({"staged", "#3d5a80", "staged (staging): from its staging to its activation"});
  bool reserved = false;
  for (const ReservedInterval& r : v.reserved) reserved |= drawn.count(r.worker) > 0;
  if (reserved) items.push_back({"reserved", "#9aa7b8", "reserved, idle: held for the blocked group head"});
  if (!v.run_spans.empty()) items.push_back({"bar", kRunBand[0], "runs (bands under the time axis)"});
  bool fifo = false;
  for (const std::string& lane : lanes) fifo |= lane.rfind("sub", 0) != 0 && deepest(v, "worker:" + lane) > 0;
  if (fifo) items.push_back({"area", kWorkerDepth, "singles queued on the worker (at the lane's bottom)"});
  if (deepest(v, "group") > 0) items.push_back({"area", kGroupDepth, "groups queued (READY) in the group FIFO"});
  if (has_sub_lane(v)) items.push_back({"area", kSubDepth, "SUB tasks queued"});
  const std::vector<const TaskView*> groups = waiting_groups(v);
  for (std::size_t k = 0; k < groups.size() && k < kNamedShades; ++k)
    items.push_back({"shade", shade_colour(k), groups[k]->name + " READY: its wait, its idle targets"});
  if (groups.size() > kNamedShades)
    items.push_back({"shade", shade_colour(kNamedShades),
                     std::to_string(groups.size() - kNamedShades) + " more groups READY: waits, idle targets"});
  if (!v.held.empty()) {
    // Drawn in the held group's colour: the first one's here.
    const std::map<std::string, std::size_t> shade_of = shade_index(v);
    auto it = shade_of.find(v.held.front().group);
    bool on_target = false, ahead = false;
    for (const HeldInterval& h : v.held) (h.worker.empty() ? ahead : on_target) = true;
    items.push_back({"strip", shade_colour(it == shade_of.end() ? kNamedShades : it->second),
                     std::string("strip, in the group's colour: ") + (on_target ? "a busy target" : "") +
                         (on_target && ahead ? " or " : "") + (ahead ? "the group ahead" : "") + " holding it"});
  }
  if (!v.overtakes.empty()) items.push_back({"mark", "#d35400", "single that overtook a READY group"});
  if (!v.stalls.empty()) items.push_back({"stall", "#b0006d", "stall report"});
  if (!v.deps.empty())
    items.push_back({"line", "#555555",
                     v.deps.size() > kMaxDepArrows
                         ? "dependency arrows left out (" + thousands(v.deps.size()) + " dependencies, more than " +
                               thousands(kMaxDepArrows) + ")"
                         : "dependencies: arrows while the pointer is on a bar"});
  return items;
}

std::string stacked_timelines_svg(const std::vector<std::pair<std::string, RunView>>& runs,
                                  const TimelineOptions& opt) {
  double end = 0;
  for (const auto& [title, view] : runs) end = std::max(end, view.end_time);
  constexpr double kTitleH = 24;
  std::string body;
  double y = 0;
  for (const auto& [title, view] : runs) {
    RunView same_axis = view;
    same_axis.end_time = end;
    std::string svg = timeline_svg(same_axis, opt);
    // Its height, from the root element timeline_svg() writes first.
    const std::string key = "height=\"";
    const std::size_t at = svg.find(key) + key.size();
    const double height = std::stod(svg.substr(at, svg.find('"', at) - at));
    body += "<text x=\"" + num(kLabelW) + "\" y=\"" + num(y + 17) + "\" font-size=\"14\" font-weight=\"bold\">" +
            esc(title) + " (ends at " + g6(view.end_time) + " s)</text>\n";
    const std::string root = "<svg xmlns=\"http://www.w3.org/2000/svg\" ";
    svg.replace(0, root.size(), "<svg x=\"0\" y=\"" + num(y + kTitleH) + "\" ");
    body += svg;
    y += kTitleH + height;
  }
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(opt.width_px) + "\" height=\"" + num(y) +
         "\" viewBox=\"0 0 " + num(opt.width_px) + " " + num(y) +
         "\" font-family=\"Helvetica,Arial,sans-serif\" font-size=\"11\">\n<rect x=\"0\" y=\"0\" width=\"100%\" "
         "height=\"100%\" fill=\"#ffffff\"/>\n" +
         body + "</svg>\n";
}

std::string timeline_svg(const RunView& v, const TimelineOptions& opt) {
  const XScale x_of = x_scale(v, opt);
  const double plot_w = x_of.plot_w, span = x_of.span;
  std::size_t hidden = 0;
  std::vector<std::string> lanes = drawn_lanes(v, &hidden);
  const std::size_t worker_lanes = lanes.size();
  // Past kMaxIdleLanes workers, one line under the title says how many idle ones were left out.
  const double kTop = hidden ? 46 : 30;
  const bool group_lane = has_group_lane(v), sub_lane = has_sub_lane(v);
  if (group_lane) lanes.push_back("group FIFO");
  if (sub_lane) lanes.push_back("SUB FIFO");
  const std::vector<LegendItem> legend = timeline_legend(v, opt);
  const std::size_t legend_cols = 3;
  const double legend_h = kLegendRowH * std::ceil(static_cast<double>(legend.size()) / legend_cols) + 10;
  const double height = kTop + kLaneH * static_cast<double>(lanes.size()) + kAxisH + legend_h;
  std::string o;
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(opt.width_px) + "\" height=\"" +
       num(height) + "\" viewBox=\"0 0 " + num(opt.width_px) + " " + num(height) +
       "\" font-family=\"Helvetica,Arial,sans-serif\" font-size=\"11\">\n";
  o += "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  o += "<style>.deps{visibility:hidden}.task:hover>.deps,.deps.on-path{visibility:visible}</style>\n";
  o += "<text x=\"" + num(kLabelW) + "\" y=\"18\" font-size=\"13\" font-weight=\"bold\">Dispatch timeline (" +
       g6(v.end_time) + " s)</text>\n";
  if (hidden)
    o += "<text class=\"idle-note\" x=\"" + num(kLabelW) + "\" y=\"36\">" + thousands(hidden) +
         (hidden == 1 ? " idle worker" : " idle workers") + " not drawn</text>\n";
  auto lane_y = [&](std::size_t i) { return kTop + kLaneH * static_cast<double>(i); };
  std::map<std::string, std::size_t> lane_of;
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    lane_of[lanes[i]] = i;
    const double y = lane_y(i);
    o += "<rect class=\"lane\" x=\"0\" y=\"" + num(y) + "\" width=\"" + num(opt.width_px) + "\" height=\"" +
         num(kLaneH) + "\" fill=\"" + (i % 2 ? "#f4f6f8" : "#ffffff") + "\"/>\n";
    const bool sub = lanes[i].rfind("sub", 0) == 0;
    const std::string label = i < worker_lanes ? (sub ? lanes[i] : "worker " + lanes[i]) : lanes[i];
    o += "<text class=\"lane-label\" x=\"6\" y=\"" + num(y + kBarTop + kBarH / 2 + 4) + "\">" + esc(label) +
         "</text>\n";
  }
  // Waiting groups (issue 24), each in its own colour: its READY wait as a span on the group lane, the
  // part of it with some target idle shaded there; on the target lanes, an idle target shaded and a busy
  // one holding the group (the blocking chain, from the summary) marked by a strip at the lane's top.
  const std::map<std::string, std::size_t> shade_of = shade_index(v);
  auto colour_of = [&](const std::string& group) {
    auto it = shade_of.find(group);
    return shade_colour(it == shade_of.end() ? kNamedShades : it->second);
  };
  if (group_lane) {
    std::size_t k = 0;
    for (const TaskView* g : waiting_groups(v)) {
      const double to = ready_wait_end(v, *g), x0 = x_of(g->ready), x1 = std::max(x0 + 1, x_of(to));
      const double y = lane_y(worker_lanes) + 4 + 5 * static_cast<double>(k++ % 4);
      o += "<path class=\"group-wait\" d=\"M" + num(x0) + " " + num(y - 3) + " v6 M" + num(x0) + " " + num(y) +
           " H" + num(x1) + " M" + num(x1) + " " + num(y - 3) + " v6\" stroke=\"" + colour_of(g->name) +
           "\" stroke-width=\"2\" fill=\"none\"><title>" + esc(g->name) + " READY " + g6(g->ready) + "-" + g6(to) +
           " s, waited " + g6(to - g->ready) + " s" +
           (g->start >= 0 ? ", then launched" : g->state == "CANCELLED" ? ", then cancelled" : ", never launched") +
           "</title></path>\n";
    }
  }
  for (const StarvedInterval& s : v.starved) {
    if (!group_lane) break;
    const double x0 = x_of(s.from), w = std::max(1.0, x_of(s.to) - x0);
    o += "<rect class=\"starved\" x=\"" + num(x0) + "\" y=\"" + num(lane_y(worker_lanes)) + "\" width=\"" + num(w) +
         "\" height=\"" + num(kLaneH) + "\" fill=\"" + colour_of(s.group) + "\" fill-opacity=\"0.22\" data-group=\"" +
         esc(s.group) + "\"><title>" + esc(s.group) + " READY with an idle target, " + g6(s.from) + "-" + g6(s.to) +
         " s</title></rect>\n";
    if (w > 6.5 * static_cast<double>(s.group.size()) + 6)
      o += "<text class=\"starved-label\" x=\"" + num(x0 + 3) + "\" y=\"" + num(lane_y(worker_lanes) + 11) +
           "\" font-size=\"10\">" + esc(s.group) + "</text>\n";
  }
  for (const ReservedInterval& s : v.idle_targets) {
    auto lane = lane_of.find(s.worker);
    if (lane == lane_of.end()) continue;
    const double x0 = x_of(s.from), w = std::max(1.0, x_of(s.to) - x0);
    o += "<rect class=\"starved-idle\" x=\"" + num(x0) + "\" y=\"" + num(lane_y(lane->second)) + "\" width=\"" +
         num(w) + "\" height=\"" + num(kLaneH) + "\" fill=\"" + colour_of(s.group) +
         "\" fill-opacity=\"0.22\" data-group=\"" + esc(s.group) + "\"><title>worker " + esc(s.worker) + " idle while " +
         esc(s.group) + " sat READY, " + g6(s.from) + "-" + g6(s.to) + " s</title></rect>\n";
  }
  // Reserved idle time (head_reservation): a worker held for the blocked group head while idle.
  for (const ReservedInterval& r : v.reserved) {
    if (!lane_of.count(r.worker)) continue;
    const double x0 = x_of(r.from), w = std::max(1.0, x_of(r.to) - x0);
    o += "<rect class=\"reserved\" x=\"" + num(x0) + "\" y=\"" + num(lane_y(lane_of[r.worker]) + kBarTop) +
         "\" width=\"" + num(w) + "\" height=\"" + num(kBarH) +
         "\" fill=\"#9aa7b8\" fill-opacity=\"0.55\" stroke=\"#5d6b7e\" "
         "stroke-dasharray=\"3,2\"><title>worker " +
         esc(r.worker) + " reserved for " + esc(r.group) + ", idle, " + g6(r.from) + "-" + g6(r.to) +
         " s</title></rect>\n";
  }
  // staging (#1583): a staged member from its staging to its activation, dashed, on its worker's lane.
  for (std::size_t i = 0; i < worker_lanes; ++i) {
    auto it = v.bars.find(lanes[i]);
    if (it == v.bars.end()) continue;
    for (const MemberBar& b : it->second) {
      if (b.staged < 0) continue;
      const double x0 = x_of(b.staged), w = std::max(1.0, x_of(b.start) - x0);
      o += "<rect class=\"staged\" x=\"" + num(x0) + "\" y=\"" + num(lane_y(i) + kBarTop) + "\" width=\"" + num(w) +
           "\" height=\"" + num(kBarH) +
           "\" fill=\"#6f8fb5\" fill-opacity=\"0.2\" stroke=\"#3d5a80\" stroke-dasharray=\"4,2\"><title>" +
           esc(b.task) + " staged on " + esc(lanes[i]) + ", " + g6(b.staged) + "-" + g6(b.start) +
           " s (activated when its run became active)</title></rect>\n";
    }
  }
  // Dependency arrows: into each task's first run, from the end of the producer's last-ending run, on
  // the lanes drawn. Each bar with arrows sits in a <g class="task"> with them, so the style at the top
  // shows them while the pointer is on the bar; a task on the critical path shows them always.
  std::map<std::string, std::vector<std::string>> producers_of;
  if (v.deps.size() <= kMaxDepArrows)
    for (const DepEdge& d : v.deps) producers_of[d.consumer].push_back(d.producer);
  auto mid_y = [&](const std::string& lane) { return lane_y(lane_of.at(lane)) + kBarTop + kBarH / 2; };
  // Each producer's last-ending run on a drawn lane, found once.
  std::map<std::string, const MemberBar*> last_run;
  for (const auto& [consumer, producers] : producers_of)
    for (const std::string& p : producers) {
      if (last_run.count(p)) continue;
      const MemberBar*& last = last_run[p];
      last = nullptr;
      if (const TaskView* pt = v.find(p))
        for (const MemberBar& r : pt->runs)
          if (r.end >= 0 && lane_of.count(r.worker) && (!last || r.end > last->end)) last = &r;
    }
  auto arrows_into = [&](const MemberBar& b, double x0) {
    auto it = producers_of.find(b.task);
    if (it == producers_of.end()) return std::string();
    const TaskView* t = v.find(b.task);
    if (!t || t->runs.empty() || t->runs.front().seq != b.seq) return std::string();
    std::string a;
    for (const std::string& p : it->second) {
      const MemberBar* last = last_run[p];
      if (!last) continue;
      // A line and its own head (no marker: an id would repeat when timelines are stacked in one page).
      const double x1 = x_of(last->end), y1 = mid_y(last->worker), y2 = mid_y(b.worker);
      const double dx = x0 - x1, dy = y2 - y1, len = std::max(1e-9, std::hypot(dx, dy));
      const double ux = dx / len, uy = dy / len;
      a += "<g><title>" + esc(p) + " -> " + esc(b.task) + "</title><line x1=\"" + num(x1) + "\" y1=\"" + num(y1) +
           "\" x2=\"" + num(x0) + "\" y2=\"" + num(y2) + "\" stroke=\"#555555\" stroke-width=\"1.2\"/><path d=\"M" +
           num(x0) + " " + num(y2) + " L" + num(x0 - 6 * ux - 3 * uy) + " " + num(y2 - 6 * uy + 3 * ux) + " L" +
           num(x0 - 6 * ux + 3 * uy) + " " + num(y2 - 6 * uy - 3 * ux) + " z\" fill=\"#555555\"/></g>";
    }
    if (a.empty()) return a;
    return "<g class=\"deps" + std::string(v.critical.count(b.task) ? " on-path" : "") + "\">" + a + "</g>";
  };
  // Bars, merged where they would be thinner than a pixel.
  for (std::size_t i = 0; i < worker_lanes; ++i) {
    auto it = v.bars.find(lanes[i]);
    if (it == v.bars.end()) continue;
    const double y = lane_y(i) + kBarTop;  // the band below the bars holds the queue's depth
    const auto& bars = it->second;
    for (const DrawnRun& d : drawn_runs(bars, v.end_time, x_of)) {
      if (!d.merged) {
        const MemberBar& b = bars[d.first];
        const double end = b.end < 0 ? v.end_time : b.end, x0 = d.x0, x1 = d.x1;
        const std::string name = b.kind == "group" || b.kind == "sub_group"
                                     ? b.task + "[" + std::to_string(b.member) + "]"
                                     : b.task;
        const std::string arrows = arrows_into(b, x0);
        if (!arrows.empty()) o += "<g class=\"task\">";
        o += "<rect class=\"bar\" x=\"" + num(x0) + "\" y=\"" + num(y) + "\" width=\"" + num(x1 - x0) +
             "\" height=\"" + num(kBarH) + "\" fill=\"" + bar_colour(b) +
             (v.critical.count(b.task) ? "\" stroke=\"#d4006a\" stroke-width=\"2\" data-critical=\"1"
                                       : "\" stroke=\"#ffffff\" stroke-width=\"0.5") +
             "\"><title>" + esc(name) + " on " + esc(lanes[i]) +
             ": " + g6(b.start) + "-" + g6(end) + " s" + (b.failed ? ", failed" : "") +
             (v.critical.count(b.task) ? ", on the critical path" : "") + "</title></rect>\n";
        if (x1 - x0 > 7.0 * static_cast<double>(name.size()))
          o += "<text class=\"bar-label\" x=\"" + num(x0 + 3) + "\" y=\"" + num(y + 13) +
               "\" fill=\"#ffffff\">" + esc(name) + "</text>\n";
        if (!arrows.empty()) o += arrows + "</g>\n";
        continue;
      }
      o += "<rect class=\"agg\" x=\"" + num(d.x0) + "\" y=\"" + num(y) + "\" width=\"" +
           num(std::max(1.0, d.x1 - d.x0)) + "\" height=\"" + num(kBarH) + "\" fill=\"" +
           (d.failed ? "#e05a47" : "#6f8fb5") + "\"><title>" + std::to_string(d.n) +
           " member runs</title></rect>\n";
    }
  }
  // The blocking chain: a strip at the top of the target's lane (or of the group lane, for a group ahead
  // in the FIFO) for each span the group waited behind that task.
  for (const HeldInterval& h : v.held) {
    const bool on_worker = !h.worker.empty();
    auto lane = lane_of.find(on_worker ? h.worker : "group FIFO");
    if (lane == lane_of.end()) continue;
    const double x0 = x_of(h.from), w = std::max(1.0, x_of(h.to) - x0);
    o += "<rect class=\"held\" x=\"" + num(x0) + "\" y=\"" + num(lane_y(lane->second) + 0.5) + "\" width=\"" +
         num(w) + "\" height=\"4\" fill=\"" + colour_of(h.group) + "\" data-group=\"" + esc(h.group) + "\"><title>" +
         (on_worker ? "worker " + esc(h.worker) + " busy with " + esc(h.task) : "behind group " + esc(h.task)) +
         ", holding " + esc(h.group) + ", " + g6(h.from) + "-" + g6(h.to) + " s</title></rect>\n";
  }
  // Singles that overtook a READY group: a mark at the start of their run.
  for (const Overtake& ov : v.overtakes) {
    const TaskView* t = v.find(ov.single);
    if (!t || t->runs.empty() || !lane_of.count(t->runs.front().worker)) continue;
    const MemberBar& b = t->runs.front();
    const double x = x_of(b.start), y = lane_y(lane_of.at(b.worker)) + kBarTop;
    o += "<path class=\"overtake\" d=\"M" + num(x) + " " + num(y) + " h9 l-4.5 8 z\" fill=\"#d35400\" "
         "stroke=\"#ffffff\" stroke-width=\"0.8\"><title>" + esc(ov.single) + " overtook " + esc(ov.group) +
         ": dispatched on " + esc(b.worker) + " at " + g6(b.start) + " s while " + esc(ov.group) +
         " was READY</title></path>\n";
  }
  // Queue depths, as filled steps in the band at the bottom of the lane (a worker's single FIFO in its
  // lane, the two shared FIFOs in theirs), the band's top the deepest depth; the scale ("queued: up to
  // N") under the lane's name, in the lane.
  auto steps = [&](const std::string& queue, std::size_t row, const char* colour) {
    const int max_depth = deepest(v, queue);
    if (max_depth <= 0) return;
    const double base = lane_y(row) + kLaneH - 2, amp = kDepthBand;
    std::string d = "M" + num(x_of(0)) + " " + num(base);
    double prev_y = base;
    for (const DepthStep& s : v.depth.at(queue)) {
      const double y = base - amp * s.depth / max_depth;
      if (y != prev_y) d += " H" + num(x_of(s.t)) + " V" + num(y);
      prev_y = y;
    }
    d += " H" + num(x_of(span)) + " V" + num(base) + " z";
    o += "<path class=\"depth\" data-queue=\"" + esc(queue) + "\" d=\"" + d + "\" fill=\"" + colour +
         "\" fill-opacity=\"" + num(kDepthOpacity) + "\"><title>" + esc(queue) + " depth (max " +
         std::to_string(max_depth) + ")</title></path>\n";
    o += "<text class=\"depth-scale\" x=\"6\" y=\"" + num(base - 1) + "\" font-size=\"9\" fill=\"" + colour +
         "\">queued: up to " + std::to_string(max_depth) + "</text>\n";
  };
  for (std::size_t i = 0; i < worker_lanes; ++i)
    if (lanes[i].rfind("sub", 0) != 0) steps("worker:" + lanes[i], i, kWorkerDepth);
  if (group_lane) steps("group", worker_lanes, kGroupDepth);
  if (sub_lane) steps("sub", worker_lanes + (group_lane ? 1 : 0), kSubDepth);
  // Stall reports: a diamond on the group FIFO lane and a dashed line down from the top.
  for (const StallMark& m : v.stalls) {
    const double x = x_of(m.t), yg = lane_y(worker_lanes) + kBarTop + kBarH / 2;
    o += "<line class=\"stall-line\" x1=\"" + num(x) + "\" y1=\"" + num(kTop) + "\" x2=\"" + num(x) +
         "\" y2=\"" + num(yg) + "\" stroke=\"#b0006d\" stroke-width=\"1\" stroke-dasharray=\"4,3\"/>\n";
    std::string what = m.event + " " + m.task + " at " + g6(m.t) + " s, waited " + g6(m.waited_s) + " s";
    if (!m.busy.empty()) {
      what += ", busy";
      for (const std::string& b : m.busy) what += " " + b;
    }
    if (!m.idle_queued.empty()) {
      what += ", idle with queued work";
      for (const std::string& b : m.idle_queued) what += " " + b;
    }
    o += "<path class=\"stall\" d=\"M" + num(x) + " " + num(yg - 7) +
         " l6 7 l-6 7 l-6 -7 z\" fill=\"#b0006d\"><title>" + esc(what) + "</title></path>\n";
  }
  // The policy, named in the header line (what it adds to the picture is in the legend).
  o += "<text class=\"policy-legend\" x=\"" + num(opt.width_px - 20) + "\" y=\"18\" text-anchor=\"end\">policy " +
       esc(v.policy) + "</text>\n";
  // Time axis.
  const double axis_y = kTop + kLaneH * static_cast<double>(lanes.size()) + 4;
  o += "<line x1=\"" + num(kLabelW) + "\" y1=\"" + num(axis_y) + "\" x2=\"" + num(kLabelW + plot_w) +
       "\" y2=\"" + num(axis_y) + "\" stroke=\"#333333\"/>\n";
  const double step = tick_step(span, 10);
  for (int k = 0; k * step <= span * (1 + 1e-9); ++k) {
    const double t = k * step, x = x_of(t);
    o += "<line class=\"tick\" x1=\"" + num(x) + "\" y1=\"" + num(axis_y) + "\" x2=\"" + num(x) + "\" y2=\"" +
         num(axis_y + 5) + "\" stroke=\"#333333\"/><text x=\"" + num(x) + "\" y=\"" + num(axis_y + 17) +
         "\" text-anchor=\"middle\">" + g6(t) + "</text>\n";
  }
  o += "<text x=\"" + num(kLabelW + plot_w) + "\" y=\"" + num(axis_y + 32) +
       "\" text-anchor=\"end\">simulated time (s)</text>\n";
  // Runs: a band per run under the tick labels, its name in it when it fits.
  for (std::size_t k = 0; k < v.run_spans.size(); ++k) {
    const RunView::RunSpan& r = v.run_spans[k];
    const double to = r.to < 0 ? v.end_time : r.to;
    const double x0 = x_of(r.from), w = std::max(1.0, x_of(to) - x0);
    o += "<rect class=\"run-band\" x=\"" + num(x0) + "\" y=\"" + num(axis_y + 21) + "\" width=\"" + num(w) +
         "\" height=\"6\" fill=\"" + kRunBand[k % 2] + "\"><title>run " + esc(r.run) + ", " + g6(r.from) + "-" +
         (r.to < 0 ? "never ended" : g6(r.to) + " s") + "</title></rect>\n";
    if (w > 6.0 * static_cast<double>(r.run.size()) + 4)
      o += "<text class=\"run-label\" x=\"" + num(x0 + 2) + "\" y=\"" + num(axis_y + 36) + "\" font-size=\"9\">" +
           esc(r.run) + "</text>\n";
  }
  // The legend, below the axis.
  const double legend_y = axis_y + kAxisH, col_w = (opt.width_px - 20) / legend_cols;
  o += "<g class=\"legend\">\n";
  for (std::size_t k = 0; k < legend.size(); ++k) {
    const LegendItem& it = legend[k];
    const double x = 10 + col_w * static_cast<double>(k % legend_cols);
    const double y = legend_y + kLegendRowH * static_cast<double>(k / legend_cols);
    const std::string c = it.colour;
    if (it.kind == "line")
      o += "<line x1=\"" + num(x) + "\" y1=\"" + num(y + 6) + "\" x2=\"" + num(x + 18) + "\" y2=\"" +
           num(y + 6) + "\" stroke=\"" + c + "\" stroke-width=\"1.2\"/>";
    else if (it.kind == "strip")
      o += "<rect x=\"" + num(x) + "\" y=\"" + num(y + 1) + "\" width=\"18\" height=\"4\" fill=\"" + c + "\"/>";
    else if (it.kind == "mark")
      o += "<path d=\"M" + num(x + 4) + " " + num(y + 1) + " h9 l-4.5 8 z\" fill=\"" + c +
           "\" stroke=\"#ffffff\" stroke-width=\"0.8\"/>";
    else if (it.kind == "area")  // steps up and down, as a queue's depth is drawn
      o += "<path d=\"M" + num(x) + " " + num(y + 12) + " V" + num(y + 8) + " H" + num(x + 6) + " V" + num(y + 1) +
           " H" + num(x + 13) + " V" + num(y + 6) + " H" + num(x + 18) + " V" + num(y + 12) + " z\" fill=\"" + c +
           "\" fill-opacity=\"" + num(kDepthOpacity) + "\"/>";
    else if (it.kind == "stall")
      o += "<path d=\"M" + num(x + 9) + " " + num(y - 1) + " l6 7 l-6 7 l-6 -7 z\" fill=\"" + c + "\"/>";
    else if (it.kind == "reserved")
      o += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"18\" height=\"12\" fill=\"" + c +
           "\" fill-opacity=\"0.55\" stroke=\"#5d6b7e\" stroke-dasharray=\"3,2\"/>";
    else if (it.kind == "staged")
      o += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"18\" height=\"12\" fill=\"#6f8fb5\" "
           "fill-opacity=\"0.2\" stroke=\"" + c + "\" stroke-dasharray=\"4,2\"/>";
    else
      o += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"18\" height=\"12\" fill=\"" +
           (it.kind == "outline" ? "none\" stroke=\"" + c + "\" stroke-width=\"2" : c) + "\"" +
           (it.kind == "shade" ? " fill-opacity=\"" + num(kShadeOpacity) + "\"" : std::string()) + "/>";
    o += "<text class=\"legend-item\" x=\"" + num(x + 24) + "\" y=\"" + num(y + 10) + "\">" + esc(it.text) +
         "</text>\n";
  }
  o += "</g>\n</svg>\n";
  return o;
}

std::string chrome_trace(const RunView& v) {
  using nlohmann::ordered_json;
  ordered_json events = ordered_json::array();
  std::map<std::string, int> tid;
  const bool only_busy = v.lanes.size() > kMaxIdleLanes;  // past it, name only the threads with runs
  for (std::size_t i = 0; i < v.lanes.size(); ++i) {
    tid[v.lanes[i]] = static_cast<int>(i);
    const bool sub = v.lanes[i].rfind("sub", 0) == 0;
    if (only_busy && !v.bars.count(v.lanes[i])) continue;
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", sub ? 2 : 1},
                      {"tid", i},
                      {"args", {{"name", sub ? v.lanes[i] : "worker " + v.lanes[i]}}}});
  }
  events.push_back(
      {{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "NEXT_LEVEL workers"}}}});
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 2}, {"args", {{"name", "SUB workers"}}}});
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 3}, {"args", {{"name", "queues"}}}});
  auto us = [](double t) { return std::round(t * 1e9) / 1e3; };
  for (const std::string& lane : v.lanes) {
    auto it = v.bars.find(lane);
    if (it == v.bars.end()) continue;
    const bool sub = lane.rfind("sub", 0) == 0;
    for (const MemberBar& b : it->second) {
      const double end = b.end < 0 ? v.end_time : b.end;
      events.push_back(
          {{"name", b.kind == "group" || b.kind == "sub_group" ? b.task + "[" + std::to_string(b.member) + "]"
                                                               : b.task},
           {"cat", b.kind},
           {"ph", "X"},
           {"pid", sub ? 2 : 1},
           {"tid", tid[lane]},
           {"ts", us(b.start)},
           {"dur", us(end) - us(b.start)},
           {"args", {{"outcome", b.failed ? "failure" : "success"}}}});
    }
  }
  // staging (#1583): a staged member from its staging to its activation, on its worker's thread.
  for (const std::string& lane : v.lanes) {
    auto it = v.bars.find(lane);
    if (it == v.bars.end()) continue;
    for (const MemberBar& b : it->second)
      if (b.staged >= 0)
        events.push_back({{"name", b.task + " staged"},
                          {"cat", "staged"},
                          {"ph", "X"},
                          {"pid", 1},
                          {"tid", tid[lane]},
                          {"ts", us(b.staged)},
                          {"dur", us(b.start) - us(b.staged)}});
  }
  // Runs: one thread each in a process of their own, a slice from its first event to its end.
  if (!v.run_spans.empty())
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 4}, {"args", {{"name", "runs"}}}});
  for (std::size_t k = 0; k < v.run_spans.size(); ++k) {
    const RunView::RunSpan& r = v.run_spans[k];
    const double to = r.to < 0 ? v.end_time : r.to;
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 4}, {"tid", k}, {"args", {{"name", "run " + r.run}}}});
    events.push_back({{"name", r.run},
                      {"cat", "run"},
                      {"ph", "X"},
                      {"pid", 4},
                      {"tid", k},
                      {"ts", us(r.from)},
                      {"dur", us(to) - us(r.from)},
                      {"args", {{"ended", r.to >= 0}}}});
  }
  for (const auto& [queue, steps] : v.depth)
    for (const DepthStep& s : steps)
      events.push_back({{"name", "depth " + queue},
                        {"ph", "C"},
                        {"pid", 3},
                        {"ts", us(s.t)},
                        {"args", {{"depth", s.depth}}}});
  for (const Marker& m : v.markers)
    events.push_back({{"name", m.event + " " + m.task},
                      {"cat", m.event},
                      {"ph", "i"},
                      {"s", "g"},
                      {"pid", 1},
                      {"tid", 0},
                      {"ts", us(m.t)}});
  // Flow arrows: a dependency from the producer's last member end to the consumer's first dispatch;
  // a group from its member 0 to each other member. Ids count up in this (sorted) order.
  std::uint64_t flow = 0;
  auto place = [&](const MemberBar& b) {
    const bool sub = b.worker.rfind("sub", 0) == 0;
    return std::make_pair(sub ? 2 : 1, tid[b.worker]);
  };
  auto arrow = [&](const std::string& name, const char* cat, const MemberBar& from, double from_t,
                   const MemberBar& to) {
    const auto [fp, ft] = place(from);
    const auto [tp, tt] = place(to);
    events.push_back({{"name", name},
                      {"cat", cat},
                      {"ph", "s"},
                      {"id", flow},
                      {"pid", fp},
                      {"tid", ft},
                      {"ts", us(from_t)}});
    events.push_back({{"name", name},
                      {"cat", cat},
                      {"ph", "f"},
                      {"bp", "e"},
                      {"id", flow},
                      {"pid", tp},
                      {"tid", tt},
                      {"ts", us(to.start)}});
    ++flow;
  };
  for (const DepEdge& d : v.deps) {
    const TaskView *a = v.find(d.producer), *b = v.find(d.consumer);
    if (!a || !b || a->runs.empty() || b->runs.empty()) continue;
    const MemberBar* last = &a->runs.front();
    for (const MemberBar& r : a->runs)
      if (r.end > last->end) last = &r;
    arrow(d.producer + " -> " + d.consumer + " (" + d.buffer + ")", "dependency", *last,
          last->end < 0 ? last->start : last->end, b->runs.front());
  }
  for (const TaskView& t : v.tasks)
    if ((t.kind == "group" || t.kind == "sub_group") && t.runs.size() > 1)
      for (std::size_t m = 1; m < t.runs.size(); ++m)
        arrow(t.name + " members", "group", t.runs.front(), t.runs.front().start, t.runs[m]);
  // Group waits as slices on a track of their own: READY until launched (or the end of the run).
  int wait_tid = 0;
  for (const TaskView& t : v.tasks) {
    if (t.kind != "group" || t.ready < 0) continue;
    const double until = t.start >= 0 ? t.start : v.end_time;
    events.push_back({{"name", t.name + " READY wait"},
                      {"cat", "group_wait"},
                      {"ph", "X"},
                      {"pid", 3},
                      {"tid", 100 + wait_tid++},
                      {"ts", us(t.ready)},
                      {"dur", us(until) - us(t.ready)},
                      {"args", {{"launched", t.start >= 0}}}});
  }
  if (wait_tid > 0)
    for (int k = 0; k < wait_tid; ++k)
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", 3},
                        {"tid", 100 + k},
                        {"args", {{"name", "group waits " + std::to_string(k)}}}});
  ordered_json doc{{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  return doc.dump() + "\n";
}

std::string report_html(const RunView& v, const record::Summary* summary,
                        const std::optional<std::string>& dag, const std::string& timeline) {
  auto strip_xml_header = [](const std::string& svg) {
    const auto at = svg.find("<svg");
    return at == std::string::npos ? svg : svg.substr(at);
  };
  const std::string title = summary ? summary->scenario : std::string("run");
  std::string o =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>dirsched report: " + esc(title) +
      "</title>\n<style>body{font-family:Helvetica,Arial,sans-serif;margin:24px;color:#222}"
      "table{border-collapse:collapse;margin:8px 0 20px}td,th{border:1px solid #ccc;padding:4px "
      "10px;text-align:left}"
      "th{background:#eef2f6}.num{text-align:right}h2{margin-top:28px}.swatch{display:inline-block;width:"
      "12px;height:12px;"
      "margin:0 4px 0 12px;border:1px solid #888;vertical-align:middle}.pic{overflow:auto;border:1px solid "
      "#ddd;padding:6px}"
      "</style></head><body>\n";
  o += "<h1>" + esc(title) + "</h1>\n";
  // The timeline comes right after the headline numbers, in the first screen (issue 55): its legend,
  // under its axis, names every mark it holds.
  bool queues = false;
  for (const LegendItem& it : timeline_legend(v)) queues |= it.kind == "area";
  const std::string timeline_section =
      "<h2 id=\"timeline\">Timeline</h2><p>Each worker's runs over time" +
      std::string(queues ? ", what waited in its queue at the bottom of its lane" : "") +
      "; the legend under the axis names every mark drawn." +
      (v.deps.empty() ? "" : " Pointing at a bar shows its dependency arrows.") + "</p>\n" +
      "<div class=\"pic timeline\">" + strip_xml_header(timeline) + "</div>\n";
  if (!summary) {
    o += "<table class=\"run\"><tr><th>outcome</th><td>?</td></tr></table>\n";
    o += timeline_section;
  } else {
    const record::Summary& s = *summary;
    if (!s.description.empty()) o += "<p class=\"description\">" + esc(s.description) + "</p>\n";
    if (s.vars) {
      std::string values;
      for (const auto& [name, value] : *s.vars) values += (values.empty() ? "" : ", ") + name + " = " + value.dump();
      o += "<p class=\"variant\"><b>" +
           (s.variant ? "Variant " + std::to_string(*s.variant) + " of the sweep"
                      : std::string("A run with sweep variables")) +
           ":</b> " + esc(values) + "</p>\n";
    }
    o += "<table class=\"run\"><tr><th>outcome</th><td>" + esc(std::string(record::to_string(s.outcome))) +
         "</td></tr>";
    if (s.stall_report_s) o += "<tr><th>stall report after</th><td>" + g6(*s.stall_report_s) + " s</td></tr>";
    o += "<tr><th>makespan</th><td>" + g6(s.makespan_s) + " s</td></tr>";
    if (s.error) o += "<tr><th>error</th><td>" + esc(*s.error) + "</td></tr>";
    o += "<tr><th>seed</th><td>" + std::to_string(s.seed) + "</td></tr>";
    o += "<tr><th>policy</th><td>" + esc(s.policy) + "</td></tr>";
    const char* clock = "";
    switch (s.engine) {
      case record::Engine::kSim: clock = " (SimGrid): times are simulated scenario seconds"; break;
      case record::Engine::kEvent:
        clock = " (the event engine, SimGrid's rules): times are simulated scenario seconds";
        break;
      case record::Engine::kThreads: break;
      case record::Engine::kStrace:
        clock = " (a real run, imported from its [STRACE] log): times are the log's, in seconds";
        break;
    }
    o += "<tr><th>engine</th><td class=\"engine\">" + esc(std::string(record::to_string(s.engine))) +
         (s.engine == record::Engine::kThreads
              ? ", time scale " + g6(s.time_scale) + ": times are wall-clock seconds (" + g6(s.time_scale) +
                    " s per scenario second), not simulated"
              : std::string(clock)) +
         "</td></tr>";
    if (!s.dirsched_version.empty()) o += "<tr><th>dirsched</th><td>" + esc(s.dirsched_version) + "</td></tr>";
    for (const auto& [state, n] : s.tasks.by_state)
      if (n > 0) o += "<tr><th>" + esc(state) + "</th><td class=\"num\">" + std::to_string(n) + "</td></tr>";
    if (s.tasks.total > 0) o += "<tr><th>total</th><td class=\"num\">" + std::to_string(s.tasks.total) + "</td></tr>";
    o += "</table>\n";
    o += timeline_section;
    if (s.ready_waits_single || s.ready_waits_group) {
      o +=
          "<h2>READY waits</h2><table><tr><th>tasks</th><th>count</th><th>mean (s)</th><th>p95 (s)</th><th>max "
          "(s)</th></tr>";
      for (const bool single : {true, false}) {
        const record::WaitStats w = (single ? s.ready_waits_single : s.ready_waits_group).value_or(record::WaitStats{});
        o += std::string("<tr><td>") + (single ? "singles" : "groups") + "</td><td class=\"num\">" +
             std::to_string(w.count) + "</td><td class=\"num\">" + g6(w.mean_s) + "</td><td class=\"num\">" +
             g6(w.p95_s) + "</td><td class=\"num\">" + g6(w.max_s) + "</td></tr>";
      }
      o += "</table>\n";
    }
    // Why tasks waited (docs/outputs.md): the longest waits with their causes, the blocking chains of the
    // groups and the critical path.
    if (s.waits) {
      o += "<h2>Longest waits</h2><p>Submit to start, split into causes (docs/outputs.md).</p>";
      for (const bool single : {true, false}) {
        const std::vector<record::LongWait>& list = single ? s.waits->longest_single : s.waits->longest_group;
        if (list.empty()) continue;
        o += std::string("<table class=\"longest\" data-kind=\"") + (single ? "single" : "group") + "\"><tr><th>" +
             (single ? "single" : "group") + "</th><th>workers</th><th>wait (s)</th><th>causes (s)</th>" +
             (single ? "<th>behind</th>" : "") + "</tr>";
        for (const record::LongWait& w : list) {
          std::string causes;
          for (const auto& [cause, t] : w.causes) causes += (causes.empty() ? "" : ", ") + esc(cause) + " " + g6(t);
          o += "<tr><td>" + esc(w.task) + "</td><td>" + esc(nlohmann::json(w.workers).dump()) +
               "</td><td class=\"num\">" + g6(w.wait_s) + "</td><td>" + causes + "</td>" +
               (single ? "<td>" + behind_text(w) + "</td>" : "") + "</tr>";
        }
        o += "</table>\n";
      }
    }
    std::string rows;
    std::size_t shown = 0;
    for (const record::GroupWait& g : s.groups) {
      if (!g.blocked_by || g.blocked_by->empty()) continue;
      if (++shown > kReportGroupRows) break;
      std::string chain;
      std::size_t k = 0;
      for (const record::BlockedBy& b : *g.blocked_by) {
        if (++k > 12) {
          chain += ", ... (" + std::to_string(g.blocked_by->size()) + " in all)";
          break;
        }
        // Worded by why.hpp, as `dirsched why` words it (with why the holder itself was late).
        chain += (chain.empty() ? "" : ", then ") + esc(held_by_text(b));
      }
      rows += "<tr><td>" + esc(g.task) + "</td><td>" + chain + "</td></tr>";
    }
    if (!rows.empty())
      o += "<h2>What held each group</h2><table class=\"blocked-by\"><tr><th>group</th><th>held by</th></tr>" + rows +
           "</table>\n";
    if (s.waits && !s.waits->critical_path.empty()) {
      const auto& path = s.waits->critical_path;
      o += "<h2>Critical path</h2><table class=\"critical\"><tr><th>task</th><th>start (s)</th><th>end (s)</th><th>why "
           "not earlier</th><th>after</th></tr>";
      std::size_t k = 0;
      for (const record::CriticalStep& c : path) {
        if (++k > 200) {
          o += "<tr><td colspan=\"5\">... " + std::to_string(path.size()) + " tasks in all (summary.json)</td></tr>";
          break;
        }
        o += "<tr><td>" + esc(c.task) + "</td><td class=\"num\">" + g6(c.start_s) + "</td><td class=\"num\">" +
             g6(c.end_s) + "</td><td>" + esc(c.why) + "</td><td>" + esc(c.after.value_or("")) + "</td></tr>";
      }
      o += "</table>\n";
    }
    o += "<h2>Workers</h2><table><tr><th>worker</th><th>kind</th><th>host</th><th>busy "
         "(s)</th><th>utilisation</th></tr>";
    // Past kMaxIdleLanes workers, only those that ran something, and a line for the rest.
    const bool only_busy = s.workers.size() > kMaxIdleLanes;
    std::size_t idle_left_out = 0;
    for (const record::WorkerUse& w : s.workers) {
      if (only_busy && !(w.busy_s > 0)) {
        ++idle_left_out;
        continue;
      }
      o += "<tr><td>" + esc(w.worker) + "</td><td>" + esc(w.kind) + "</td><td>" + esc(w.host) +
           "</td><td class=\"num\">" + g6(w.busy_s) + "</td><td class=\"num\">" + percent(w.utilisation) +
           " %</td></tr>";
    }
    o += "</table>\n";
    if (idle_left_out)
      o += "<p class=\"idle-note\">" + thousands(idle_left_out) +
           (idle_left_out == 1 ? " idle worker" : " idle workers") + " not listed (busy 0 s).</p>\n";
  }
  {
    // run_cancellation: the tasks a raising callback cancelled, under their run (a section only when any).
    std::map<std::string, std::vector<const TaskView*>> cancelled;
    for (const TaskView& t : v.tasks)
      if (t.state == "CANCELLED") cancelled[t.run].push_back(&t);
    if (!cancelled.empty()) {
      o += "<h2>Cancelled tasks</h2><table class=\"cancelled\"><tr><th>run</th><th>tasks</th><th>cause</th></tr>";
      for (const auto& [run, tasks] : cancelled) {
        std::string names;
        for (const TaskView* t : tasks) names += (names.empty() ? "" : ", ") + esc(t->name);
        o += "<tr><td>" + (run.empty() ? std::string("(the trace)") : esc(run)) + "</td><td>" + names + "</td><td>" +
             esc(tasks.front()->cause) + "</td></tr>";
      }
      o += "</table>\n";
    }
  }
  o += "<h2>Stall reports</h2>";
  if (!v.stalls.empty()) {
    o += "<table><tr><th>time (s)</th><th>event</th><th>group</th><th>busy targets</th><th>idle targets "
         "with queued singles</th><th>waited (s)</th></tr>";
    auto ids = [](const std::vector<std::string>& ws) {
      std::string s;
      for (const std::string& w : ws) s += (s.empty() ? "" : ", ") + w;
      return s;
    };
    for (const StallMark& m : v.stalls)
      o += "<tr><td class=\"num\">" + g6(m.t) + "</td><td>" + esc(m.event) + "</td><td>" + esc(m.task) +
           "</td><td>" + esc(ids(m.busy)) + "</td><td>" + esc(ids(m.idle_queued)) +
           "</td><td class=\"num\">" + g6(m.waited_s) + "</td></tr>";
    o += "</table>\n";
  } else {
    o += "<p>No stall report in this run.</p>\n";
  }
  // Groups worst wait first; past kReportGroupRows the rest are in a full table at the end of the page.
  std::vector<record::GroupWait> groups;
  if (summary) groups = summary->groups;
  std::stable_sort(groups.begin(), groups.end(), [](const record::GroupWait& a, const record::GroupWait& b) {
    return a.ready_wait_s > b.ready_wait_s;
  });
  o += "<h2>Groups: waiting and starvation</h2>";
  if (!groups.empty()) {
    const std::size_t shown = std::min(groups.size(), kReportGroupRows);
    o += "<p>" + std::to_string(groups.size()) +
         (groups.size() == 1 ? " group" : " groups, worst READY wait first") +
         (shown < groups.size()
              ? "; the " + std::to_string(shown) + " worst below, <a href=\"#all-groups\">all " +
                    std::to_string(groups.size()) + " groups</a> at the end of the page"
              : std::string()) +
         ".</p><table class=\"groups\">" + kGroupHeader;
    for (std::size_t i = 0; i < shown; ++i) o += group_row(groups[i]);
    o += "</table>\n";
  } else {
    o += "<p>No group in this run.</p>\n";
  }
  // The DAG: what it shows in one line, the shapes of the kinds it holds, and the states' colours only
  // when they differ (issue 55).
  o += "<h2>DAG</h2>";
  {
    std::set<std::string> kinds, colours;
    for (const TaskView& t : v.tasks) kinds.insert(t.kind), colours.insert(state_colour(t.state));
    if (v.deps.empty()) {
      // dag.svg says it in its first line; said here when there is no picture.
      if (!dag) o += "<p class=\"no-deps\">No dependencies: no task waits for another's output.</p>\n";
    } else {
      std::string shapes;
      for (const auto& [kind, shape] : {std::pair<const char*, const char*>{"single", "box single"},
                                        {"group", "3-D box group"},
                                        {"sub", "ellipse SUB"},
                                        {"sub_group", "double octagon SUB group"}})
        if (kinds.count(kind)) shapes += (shapes.empty() ? "" : ", ") + std::string(shape);
      o += "<p>Arrows: a task's input from the task that wrote it, named by its buffer. Shapes: " + shapes + ".</p>\n";
    }
    if (colours.size() > 1) {
      o += "<p class=\"states\">";
      for (const char* s : {"COMPLETED", "FAILED", "POISONED", "CANCELLED", "REJECTED", "NOT_SUBMITTED", "PENDING"}) {
        bool present = false;
        for (const TaskView& t : v.tasks) present |= std::string(state_colour(t.state)) == state_colour(s) &&
                                                     (t.state == s || std::string(s) == "PENDING");
        if (present)
          o += std::string("<span class=\"swatch\" style=\"background:") + state_colour(s) + "\"></span>" +
               (std::string(s) == "PENDING" ? "not finished" : s);
      }
      o += "</p>\n";
    }
  }
  if (dag)
    o += "<div class=\"pic\">" + strip_xml_header(*dag) + "</div>\n";
  else
    o +=
        "<p>" + std::to_string(v.tasks.size()) + " tasks: too many for a readable layout; see dag.dot.</p>\n";
  if (groups.size() > kReportGroupRows) {
    o += "<h2 id=\"all-groups\">All " + std::to_string(groups.size()) +
         " groups, worst READY wait first</h2><table class=\"groups-all\">" + kGroupHeader;
    for (const auto& g : groups) o += group_row(g);
    o += "</table>\n";
  }
  o += "</body></html>\n";
  return o;
}

std::map<std::string, std::string> render_all(const RunView& v, const record::Summary* summary,
                                              const std::vector<std::string>& selected, std::string* note,
                                              double budget_s) {
  auto want = [&](const char* what) {
    return selected.empty() || std::find(selected.begin(), selected.end(), what) != selected.end();
  };
  std::map<std::string, std::string> files;
  std::optional<std::string> svg;
  if (want("dag") || want("report")) {
    DagPicture d = dag_picture(v, budget_s);
    svg = std::move(d.svg);
    if (note) *note = d.note;
  }
  if (want("dag")) {
    files["dag.dot"] = dag_dot(v);
    if (svg) files["dag.svg"] = *svg;
  }
  const std::string timeline = timeline_svg(v);
  if (want("timeline")) files["timeline.svg"] = timeline;
  if (want("trace")) files["trace.json"] = chrome_trace(v);
  if (want("report")) files["report.html"] = report_html(v, summary, svg, timeline);
  return files;
}

}  // namespace dirsched::viz
