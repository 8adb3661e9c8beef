// Pictures of a run, drawn from what it recorded: events.jsonl (and summary.json for lane order).
//
// parse_run() turns the event log into a RunView: one TaskView per task name, the dependency edges
// (from the `deps` of submit events), member runs per worker, the depth of every queue over time, and
// the intervals in which a READY group waited while at least one of its targets sat idle (the
// starvation of the contract notes). The writers below only read a RunView:
// - dag_dot / dag_svg: Graphviz through libcgraph (the graph) and libgvc (dot layout, SVG render);
// - timeline_svg: one lane per NEXT_LEVEL worker in registration order, then SUB workers, then the
//   group and SUB FIFOs; bars closer than a pixel are merged, so 10 or 10,000 tasks both read;
// - chrome_trace: Chrome trace events (Perfetto, chrome://tracing);
// - report_html: one self-contained page with the summary, the starvation table and both pictures.
// Output order is sorted or follows the log, so the same run draws the same bytes.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dirsched/error.hpp"
#include "dirsched/record/summary.hpp"

namespace dirsched::viz {

struct MemberBar {
  std::string task;
  std::uint32_t member = 0;
  std::string kind;    // single, group, sub, sub_group
  std::string worker;  // "3" or "sub1"
  double start = 0;
  double end = -1;  // -1: never ended
  bool failed = false;
  std::uint64_t seq = 0;  // the dispatch event's seq: orders a lane
  double staged = -1;     // staging (#1583): when it was staged on this worker (-1: it was not)
};

struct TaskView {
  std::string name;
  std::string kind = "single";
  std::string state = "PENDING";
  std::string callable;
  std::vector<std::string> workers;  // NEXT_LEVEL targets
  std::uint32_t members = 1;
  double submit = -1, ready = -1, start = -1, end = -1;
  double staged_at = -1;  // staging (#1583): when it was staged (its dispatch with prepare_only)
  std::string code;   // REJECTED
  std::string cause;  // POISONED: the producer that poisoned it; CANCELLED: its run's error
  std::string run;    // its run, in a trace with runs (events name it); empty otherwise
  std::vector<MemberBar> runs;
};

struct DepEdge {
  std::string producer, consumer, buffer;
  bool operator<(const DepEdge& o) const {
    return std::tie(producer, consumer, buffer) < std::tie(o.producer, o.consumer, o.buffer);
  }
};

struct DepthStep {
  double t;
  int depth;
};

struct StarvedInterval {
  std::string group;
  std::vector<std::string> targets;
  double from, to;
};

// A group's span on one worker: under head_reservation a worker held idle for the blocked group FIFO
// head (RunView::reserved); a target idle while its group sat READY (RunView::idle_targets).
struct ReservedInterval {
  std::string group;
  std::string worker;
  double from, to;
};
// One link of a waiting group's blocking chain, from summary.json's `groups[].blocked_by`: a target
// busy with `task` (worker set), or a group ahead of it in the FIFO (worker empty).
struct HeldInterval {
  std::string group, worker, task;
  double from, to;
};
// A single that overtook a READY group (summary.json's `groups[].overtaken_by`).
struct Overtake {
  std::string single, group;
};
// A stall report (group_stall / reservation_stall) as logged.
struct StallMark {
  double t;
  std::string event;
  std::string task;
  std::vector<std::string> busy, idle_queued;
  double waited_s = 0;
};
struct Marker {
  double t;
  std::string event;  // reject, fail, poison
  std::string task;
};

struct RunView {
  std::vector<TaskView> tasks;  // first-seen order
  std::map<std::string, std::size_t> index;
  std::vector<DepEdge> deps;       // sorted
  std::vector<std::string> lanes;  // NEXT_LEVEL worker ids (registration order), then "subN"
  std::map<std::string, std::vector<MemberBar>> bars;   // per lane, in dispatch order (from tasks' runs)
  std::map<std::string, std::vector<DepthStep>> depth;  // "worker:ID", "group", "sub"
  std::vector<StarvedInterval> starved;
  std::string policy = "seed";             // from the summary; the bands below need head_reservation
  std::vector<ReservedInterval> reserved;  // in group FIFO order, then by target
  // Each group that sat READY, each of its targets: the spans that target was idle (task order, then
  // target order). The timeline shades these on the target's lane; busy targets get `held` instead.
  std::vector<ReservedInterval> idle_targets;
  std::vector<HeldInterval> held;     // from the summary (none without one), in its order
  std::vector<Overtake> overtakes;    // from the summary, in its order
  std::vector<StallMark> stalls;           // in log order
  std::vector<Marker> markers;
  std::set<std::string> critical;  // the tasks of summary.json's critical_path (outlined in the timeline)
  // A trace with runs: each run from its first event to its run_end (end_time when it never ended), in
  // order of first appearance.
  struct RunSpan {
    std::string run;
    double from = 0, to = -1;
  };
  std::vector<RunSpan> run_spans;
  double end_time = 0;
  const TaskView* find(const std::string& name) const;
};

// When a READY task's wait ends: its start, its cancellation, or the end of the run.
double ready_wait_end(const RunView& v, const TaskView& t);

class VizError : public BadInput {
 public:
  using BadInput::BadInput;
};

// `summary` (optional: the run record, record/summary.hpp, whose decoder checked its types) gives the
// registration order of the workers; without it NEXT_LEVEL lanes are sorted by id. Throws VizError naming the line of a malformed event.
RunView parse_run(const std::string& events_jsonl, const record::Summary* summary);

// Graphviz: measured here, dot lays out 1,000 dependent tasks in about 0.9 s and 1,500 in 3.2 s,
// so past 1,000 tasks dag_svg draws a condensed DAG instead: one node per (callable, worker) with its
// task count and final states, edges labelled with the dependencies they stand for (nothing when
// even that has more than 1,000 nodes). dag.dot lists nodes in submit order. dag.svg lays out each
// connected component alone (dot drops edge labels when it packs) and places them row by row in the
// order their first task was submitted; dot ranks a component's nodes by dependency depth.
constexpr std::size_t kMaxDagSvgNodes = 1000;
std::string dag_dot(const RunView& run);
std::optional<std::string> dag_svg(const RunView& run);

// dag.svg under a time budget (the pictures never hold the data back: the CLI writes the data files
// first). Graphviz is given only graphs it can lay out quickly, decided up front on their shape (at
// most kMaxDagSvgNodes nodes and kMaxDagCycleRank edges beyond a spanning forest: dot's crossing
// minimisation is what takes minutes on random DAGs, chains cost nothing), so the same run draws the
// same bytes; and each layout runs in a forked child killed when the budget runs out, the safety net
// for a machine slower than the bound assumed. In order: the full DAG; the tasks merged by callable
// and worker; a window of the first tasks in submit order; a grid of the merged tasks drawn without
// Graphviz (always within budget). Anything short of the full DAG carries a caption in the picture
// and `note` says what was drawn and why (empty when the full DAG was drawn).
constexpr std::size_t kMaxDagCycleRank = 60;
constexpr std::size_t kDagWindowTasks = 300;
constexpr double kDefaultPictureBudget = 5;
struct DagPicture {
  std::optional<std::string> svg;
  std::string note;
};
DagPicture dag_picture(const RunView& run, double budget_s);

struct TimelineOptions {
  double width_px = 1200;
};
// One entry of the timeline's own legend. timeline_legend() lists what the drawing uses; a feature
// that draws something new (a reserved band, a stall mark) appends its entry there.
// Each swatch is drawn as the mark it names is (timeline_svg draws both): an entry only when that mark
// is in the picture (a merged run only when some runs are thinner than a pixel at this width).
struct LegendItem {
  // "bar" (filled box), "shade" (translucent box), "outline", "line", "strip" (thin box), "mark"
  // (triangle), "area" (a queue's depth: filled steps), "span" (a group's READY wait), "reserved"
  // (dashed band), "staged" (dashed box), "stall" (diamond)
  std::string kind;
  std::string colour;
  std::string text;
};
std::vector<LegendItem> timeline_legend(const RunView& run, const TimelineOptions& options = {});
// Past this many workers, the timeline draws only the lanes with something on them (a run, a queued
// single, a reservation, a starved group's or a stall report's target), the report lists only the workers
// that ran something, and trace.json names only the threads that hold a run; each says how many idle
// workers it left out. Up to it, every worker is drawn.
constexpr std::size_t kMaxIdleLanes = 200;
// The worker lanes the timeline draws, in lane order; `hidden` gets how many were left out.
std::vector<std::string> drawn_lanes(const RunView& run, std::size_t* hidden);
std::string timeline_svg(const RunView& run, const TimelineOptions& options = {});
// Timelines one above the other on one time axis (the latest end of them all), each under its title
// (`fidelity --svg`: a replay under the run it replays). Each keeps its lanes, legend and marks.
std::string stacked_timelines_svg(const std::vector<std::pair<std::string, RunView>>& runs,
                                  const TimelineOptions& options = {});
std::string chrome_trace(const RunView& run);
// trace.paje, for ViTE (and other Paje readers): one container per worker (NEXT_LEVEL, then SUB) under
// one for the run; the worker state "running" while a member runs on it, "reserved" while it is held
// idle for a blocked group head (head_reservation), "idle" otherwise; one link per dependency whose
// both ends ran, from the producer's worker at its end to the consumer's at its start, named
// "producer -> consumer (buffer)". Events in time order (at one instant: idle, reserved, running, link
// starts, link ends), times in seconds with nine decimals. Drawn only when asked (--outputs paje).
std::string paje_trace(const RunView& run);
// The report's group table shows this many groups, worst READY wait first; all of them follow at the end.
constexpr std::size_t kReportGroupRows = 50;
std::string report_html(const RunView& run, const record::Summary* summary,
                        const std::optional<std::string>& dag, const std::string& timeline);

// Runs past kMaxPictureTasks tasks are drawn from one streaming pass over events.jsonl, never a
// RunView (which holds every task): memory O(workers x buckets + READY singles and running members +
// the window), time
// linear in the log with no JSON parse per line. aggregate_timeline_svg: one row per worker (past
// kAggregateRows, consecutive workers merged into a row, averaged), its utilisation in each of
// `buckets` intervals as shading and its READY queue's greatest depth in the interval as a line; below,
// the longest groups' READY waits (ready to launch) as spans. aggregate_trace: Chrome trace JSON for
// Perfetto, windowed: utilisation and queue-depth counters per row over the whole run, the longest
// group waits as slices, and the member runs of the first `window_runs` dispatches only, so its size is
// bounded (a few MB) whatever the run's.
constexpr std::size_t kMaxPictureTasks = 100000;
constexpr std::size_t kAggregateRows = 128;
constexpr std::size_t kAggregateGroupWaits = 1000;
constexpr std::size_t kAggregateMaxLanes = 65536 + 4096;  // NEXT_LEVEL and SUB workers a run can have
struct GroupWait {
  std::string group;
  double from, to;
};
struct RunSlice {
  std::string task, member, worker;
  double start, end;
};
struct Aggregate {
  std::size_t buckets = 400;
  double end_time = 0;
  std::size_t tasks = 0, runs = 0, events = 0, groups_waited = 0;
  std::vector<std::string> lanes;
  std::vector<std::vector<float>> busy, depth;  // per lane, per bucket: busy seconds, greatest depth
  std::vector<long long> depth_now;
  long long max_depth = 0;
  std::vector<GroupWait> group_waits;  // the kAggregateGroupWaits longest, by ready time
  std::vector<RunSlice> window;
};
Aggregate aggregate_run(const std::string& events_path, const record::Summary* summary, std::size_t buckets = 400,
                        std::size_t window_runs = 20000);
std::string aggregate_timeline_svg(const Aggregate& a);
std::string aggregate_trace(const Aggregate& a);

// Colour of a final state in every picture.
const char* state_colour(const std::string& state);

// Every picture as file name -> contents: dag.dot, dag.svg (when small enough), timeline.svg,
// trace.json, report.html. `selected` filters by "dag", "timeline", "trace", "report" (empty: all).
// The DAG is drawn by dag_picture under `budget_s`.
std::map<std::string, std::string> render_all(const RunView& run, const record::Summary* summary,
                                              const std::vector<std::string>& selected, std::string* note,
                                              double budget_s = kDefaultPictureBudget);

}  // namespace dirsched::viz
