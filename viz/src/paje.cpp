// trace.paje: the run as a Paje trace for ViTE (see viz.hpp).
#include <algorithm>
#include <cstdio>

#include "dirsched/viz.hpp"

namespace dirsched::viz {
namespace {

// The event definitions of the Paje format (the fields each event line carries, in order).
constexpr const char* kHeader =
    "%EventDef PajeDefineContainerType 0\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n"
    "%EventDef PajeDefineStateType 1\n% Alias string\n% Type string\n% Name string\n%EndEventDef\n"
    "%EventDef PajeDefineEntityValue 2\n% Alias string\n% Type string\n% Name string\n% Color color\n%EndEventDef\n"
    "%EventDef PajeDefineLinkType 3\n% Alias string\n% Type string\n% StartContainerType string\n"
    "% EndContainerType string\n% Name string\n%EndEventDef\n"
    "%EventDef PajeCreateContainer 4\n% Time date\n% Alias string\n% Type string\n% Container string\n"
    "% Name string\n%EndEventDef\n"
    "%EventDef PajeDestroyContainer 5\n% Time date\n% Type string\n% Name string\n%EndEventDef\n"
    "%EventDef PajeSetState 6\n% Time date\n% Type string\n% Container string\n% Value string\n%EndEventDef\n"
    "%EventDef PajeStartLink 7\n% Time date\n% Type string\n% Container string\n% Value string\n"
    "% StartContainer string\n% Key string\n%EndEventDef\n"
    "%EventDef PajeEndLink 8\n% Time date\n% Type string\n% Container string\n% Value string\n"
    "% EndContainer string\n% Key string\n%EndEventDef\n";

std::string date(double t) {
  char b[40];
  std::snprintf(b, sizeof b, "%.9f", t < 0 ? 0.0 : t);
  return b;
}

// A Paje string field: quoted, with the characters that would end it replaced.
std::string quoted(const std::string& s) {
  std::string o = "\"";
  for (char c : s) o += (c == '"' || c == '\n' || c == '\r' || c == '\\') ? '_' : c;
  return o + "\"";
}

struct Line {
  double t;
  int rank;  // at one instant: idle first, then reserved, running, link starts, link ends
  std::size_t order;
  std::string text;
};

}  // namespace

std::string paje_trace(const RunView& v) {
  std::vector<std::string> lanes = v.lanes;
  for (const auto& [lane, bars] : v.bars)
    if (!bars.empty() && std::find(lanes.begin(), lanes.end(), lane) == lanes.end()) lanes.push_back(lane);
  auto alias = [](const std::string& lane) { return "w" + lane; };
  std::string out = kHeader;
  out += "0 CT_Run 0 \"Run\"\n0 CT_Worker CT_Run \"Worker\"\n1 ST_Worker CT_Worker \"Worker state\"\n";
  out += "2 idle ST_Worker \"idle\" \"0.9 0.9 0.9\"\n2 running ST_Worker \"running\" \"0.2 0.6 0.9\"\n";
  out += "2 reserved ST_Worker \"reserved\" \"1.0 0.6 0.1\"\n";
  out += "3 LT_Dep CT_Run CT_Worker CT_Worker \"dependency\"\n";
  out += "4 " + date(0) + " run CT_Run 0 \"dirsched run\"\n";
  for (const std::string& lane : lanes) {
    out += "4 " + date(0) + " " + alias(lane) + " CT_Worker run " +
           quoted(lane.rfind("sub", 0) == 0 ? "SUB " + lane.substr(3) : "worker " + lane) + "\n";
    out += "6 " + date(0) + " ST_Worker " + alias(lane) + " idle\n";
  }
  std::vector<Line> lines;
  auto add = [&](double t, int rank, std::string text) { lines.push_back({t, rank, lines.size(), std::move(text)}); };
  for (const auto& [lane, bars] : v.bars)
    for (const MemberBar& b : bars) {
      const double end = b.end < 0 ? v.end_time : b.end;
      add(b.start, 2, "6 " + date(b.start) + " ST_Worker " + alias(lane) + " running");
      add(end, 0, "6 " + date(end) + " ST_Worker " + alias(lane) + " idle");
    }
  for (const ReservedInterval& r : v.reserved) {
    add(r.from, 1, "6 " + date(r.from) + " ST_Worker " + alias(r.worker) + " reserved");
    add(r.to, 0, "6 " + date(r.to) + " ST_Worker " + alias(r.worker) + " idle");
  }
  // A dependency is a link from the producer's worker when it ended to the consumer's when it started.
  std::size_t key = 0;
  for (const DepEdge& d : v.deps) {
    const TaskView* p = v.find(d.producer);
    const TaskView* c = v.find(d.consumer);
    if (!p || !c || p->runs.empty() || c->runs.empty() || p->end < 0 || c->start < 0) continue;
    const std::string k = "d" + std::to_string(key++);
    const std::string value = quoted(d.producer + " -> " + d.consumer + (d.buffer.empty() ? "" : " (" + d.buffer + ")"));
    add(p->end, 3, "7 " + date(p->end) + " LT_Dep run " + value + " " + alias(p->runs.back().worker) + " " + k);
    add(c->start, 4, "8 " + date(c->start) + " LT_Dep run " + value + " " + alias(c->runs.front().worker) + " " + k);
  }
  std::sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
    return a.t != b.t ? a.t < b.t : a.rank != b.rank ? a.rank < b.rank : a.order < b.order;
  });
  for (const Line& l : lines) out += l.text + "\n";
  for (const std::string& lane : lanes) out += "5 " + date(v.end_time) + " CT_Worker " + alias(lane) + "\n";
  out += "5 " + date(v.end_time) + " CT_Run run\n";
  return out;
}

}  // namespace dirsched::viz
