// dag.dot through libcgraph and dag.svg through libgvc.
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "dirsched/escape.hpp"
#include "dirsched/viz.hpp"

namespace dirsched::viz {
namespace {

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", std::round(v * 1e12) / 1e12);
  return b;
}

// Names in natural order: s2 before s10, digits compared as numbers.
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t i2 = i, j2 = j;
      while (i2 < a.size() && a[i2] == '0') ++i2;
      while (j2 < b.size() && b[j2] == '0') ++j2;
      std::size_t ie = i2, je = j2;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      if (ie - i2 != je - j2) return ie - i2 < je - j2;
      const int cmp = a.compare(i2, ie - i2, b, j2, je - j2);
      if (cmp != 0) return cmp < 0;
      i = ie, j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i, ++j;
  }
  if ((a.size() - i) != (b.size() - j)) return a.size() - i < b.size() - j;
  return a < b;
}

char* c(const std::string& s) {
  return const_cast<char*>(s.c_str());
}

const char* shape_of(const std::string& kind) {
  if (kind == "group") return "box3d";
  if (kind == "sub") return "ellipse";
  if (kind == "sub_group") return "doubleoctagon";
  return "box";
}

struct Graph {
  Agraph_t* g;
  ~Graph() { agclose(g); }
};

// A graph before Graphviz sees it: nodes and edges in drawing order, each with its attributes. dag.dot
// is all of it as one graph; dag.svg lays out each connected component alone and places the
// drawings itself (see compose below).
struct Spec {
  using Attrs = std::vector<std::pair<std::string, std::string>>;
  struct Node {
    std::string name;
    Attrs attrs;
  };
  struct Edge {
    std::size_t from, to;
    std::string key;
    Attrs attrs;
  };
  Attrs graph_attrs;  // beyond the defaults below
  Attrs node_defaults, edge_defaults;
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::map<std::string, std::size_t> index;
  std::size_t add_node(const std::string& name) {
    auto [it, fresh] = index.emplace(name, nodes.size());
    if (fresh) nodes.push_back({name, {}});
    return it->second;
  }
};

// The graph of `spec` restricted to the nodes with keep[i] (all of them when keep is empty).
std::unique_ptr<Graph> materialise(const Spec& spec, const std::vector<bool>& keep) {
  auto graph = std::make_unique<Graph>();
  graph->g = agopen(c("dag"), Agdirected, nullptr);
  Agraph_t* g = graph->g;
  agattr(g, AGRAPH, c("rankdir"), c("LR"));
  agattr(g, AGRAPH, c("fontname"), c("Helvetica"));
  for (const auto& [k, val] : spec.graph_attrs) agattr(g, AGRAPH, c(k), c(val));
  for (const auto& [k, val] : spec.node_defaults) agattr(g, AGNODE, c(k), c(val));
  for (const auto& [k, val] : spec.edge_defaults) agattr(g, AGEDGE, c(k), c(val));
  std::vector<Agnode_t*> made(spec.nodes.size(), nullptr);
  for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
    if (!keep.empty() && !keep[i]) continue;
    // The id as labels are written (dot_escape): cgraph's writer quotes an id and escapes its '"', never
    // a backslash, so a name ending in '\' closed its own quote (`"a\"`) and dot could not read
    // dag.dot. Doubling each backslash keeps distinct names distinct.
    made[i] = agnode(g, c(dot_escape(spec.nodes[i].name)), 1);
    for (const auto& [k, val] : spec.nodes[i].attrs) agsafeset(made[i], c(k), c(val), c(""));
  }
  for (const Spec::Edge& e : spec.edges) {
    if (!made[e.from] || !made[e.to]) continue;
    Agedge_t* edge = agedge(g, made[e.from], made[e.to], e.key.empty() ? nullptr : c(dot_escape(e.key)), 1);
    for (const auto& [k, val] : e.attrs) agsafeset(edge, c(k), c(val), c(""));
  }
  return graph;
}

const Spec::Attrs kNodeDefaults = {{"shape", "box"},           {"style", "filled"}, {"fillcolor", "white"},
                                   {"fontname", "Helvetica"}, {"label", ""},       {"tooltip", ""}};
const Spec::Attrs kEdgeDefaults = {{"label", ""}, {"fontname", "Helvetica"}, {"fontsize", "10"}};

// Nodes in submit order (the order the log first names each task), edges in (producer, consumer,
// buffer) order.
Spec build(const RunView& v) {
  Spec spec;
  spec.node_defaults = kNodeDefaults;
  spec.edge_defaults = kEdgeDefaults;
  for (const TaskView& task : v.tasks) {
    const TaskView* t = &task;
    Spec::Node& n = spec.nodes[spec.add_node(t->name)];
    std::string label = dot_escape(t->name) + "\n" + t->state;
    if (t->kind == "group" || t->kind == "sub_group") {
      for (std::uint32_t m = 0; m < t->members; ++m) {
        std::string where = m < t->workers.size() ? t->workers[m] : "";
        for (const MemberBar& b : t->runs)
          if (b.member == m) where = b.worker;
        label += "\n[" + std::to_string(m) + "]@" + (where.empty() ? "?" : dot_escape(where));
      }
    } else if (!t->runs.empty()) {
      label += "\n@" + dot_escape(t->runs.front().worker);
    } else if (!t->workers.empty()) {
      label += "\n@" + dot_escape(t->workers.front());
    }
    if (!t->code.empty()) label += "\n" + dot_escape(t->code);
    std::string tip = t->kind + " " + dot_escape(t->name) + ": " + t->state;
    if (t->submit >= 0) tip += ", submit " + fmt(t->submit) + " s";
    if (t->ready >= 0) tip += ", ready " + fmt(t->ready) + " s";
    if (t->start >= 0) tip += ", start " + fmt(t->start) + " s";
    if (t->end >= 0) tip += ", end " + fmt(t->end) + " s";
    if (!t->cause.empty())
      tip += (t->state == "CANCELLED" ? ", cancelled: " : ", poisoned by ") + dot_escape(t->cause);
    n.attrs = {{"label", label}, {"shape", shape_of(t->kind)}, {"fillcolor", state_colour(t->state)},
               {"tooltip", tip}};
    if (t->state == "NOT_SUBMITTED") n.attrs.push_back({"style", "dashed"});
  }
  for (const DepEdge& d : v.deps) {
    auto a = spec.index.find(d.producer), b = spec.index.find(d.consumer);
    if (a == spec.index.end() || b == spec.index.end()) continue;
    spec.edges.push_back({a->second, b->second, d.buffer, {{"label", dot_escape(d.buffer)}}});
  }
  return spec;
}

// Past kMaxDagSvgNodes: one node per (callable, worker) with its task count and final states, one
// edge per pair of such nodes with the number of dependencies it stands for. A group sits under its
// first target; SUB tasks under "SUB". Nodes in natural name order.
std::optional<Spec> build_condensed(const RunView& v) {
  Spec spec;
  spec.graph_attrs = {
      {"label", "condensed: " + std::to_string(v.tasks.size()) + " tasks merged by callable and worker"}};
  spec.node_defaults = {{"shape", "box"}, {"style", "filled"}, {"fillcolor", "white"},
                        {"fontname", "Helvetica"}, {"label", ""}};
  spec.edge_defaults = kEdgeDefaults;
  auto key_of = [](const TaskView& t) {
    const bool sub = t.kind == "sub" || t.kind == "sub_group";
    const std::string where = sub ? "SUB" : t.workers.empty() ? "?" : "worker " + t.workers.front();
    return (t.callable.empty() ? std::string("?") : t.callable) + " @ " + where;
  };
  struct Cluster {
    std::size_t tasks = 0;
    std::map<std::string, std::size_t> states;
  };
  std::map<std::string, Cluster, bool (*)(const std::string&, const std::string&)> clusters(natural_less);
  std::map<std::string, std::string> cluster_of;
  for (const TaskView& t : v.tasks) {
    const std::string k = key_of(t);
    cluster_of[t.name] = k;
    ++clusters[k].tasks;
    ++clusters[k].states[t.state];
  }
  if (clusters.size() > kMaxDagSvgNodes) return std::nullopt;  // even condensed, too many to lay out
  for (const auto& [k, cl] : clusters) {
    std::string label = dot_escape(k) + "\n" + std::to_string(cl.tasks) + (cl.tasks == 1 ? " task" : " tasks");
    std::string worst = "COMPLETED";
    for (const auto& [state, n] : cl.states) {
      if (state != "COMPLETED") worst = state;
      label += "\n" + std::to_string(n) + " " + state;
    }
    spec.nodes[spec.add_node(k)].attrs = {{"label", label}, {"fillcolor", state_colour(worst)}};
  }
  std::map<std::pair<std::string, std::string>, std::size_t> edges;
  for (const DepEdge& d : v.deps) {
    auto a = cluster_of.find(d.producer), b = cluster_of.find(d.consumer);
    if (a != cluster_of.end() && b != cluster_of.end()) ++edges[{a->second, b->second}];
  }
  for (const auto& [ends, n] : edges)
    spec.edges.push_back(
        {spec.index.at(ends.first), spec.index.at(ends.second), "", {{"label", std::to_string(n)}}});
  return spec;
}

// Connected components (edges taken both ways), each listed in node order, ordered by their first node.
std::vector<std::vector<std::size_t>> components(const Spec& spec) {
  std::vector<std::size_t> parent(spec.nodes.size());
  for (std::size_t i = 0; i < parent.size(); ++i) parent[i] = i;
  auto root = [&](std::size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (const Spec::Edge& e : spec.edges) {
    const std::size_t a = root(e.from), b = root(e.to);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);  // the root is the component's first node
  }
  std::vector<std::vector<std::size_t>> out;
  std::map<std::size_t, std::size_t> slot;
  for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
    auto [it, fresh] = slot.emplace(root(i), out.size());
    if (fresh) out.emplace_back();
    out[it->second].push_back(i);
  }
  return out;
}

// One component drawn by dot: the inner SVG (below the <svg> element) and its size in points.
struct Piece {
  std::string prolog;  // XML declaration, doctype, generator comment
  std::string head;  // the <svg ...> start tag
  std::string body;  // up to, not including, </svg>
  double w = 0, h = 0;
};

double attr_number(const std::string& tag, const std::string& name) {
  const auto at = tag.find(" " + name + "=\"");
  return at == std::string::npos ? 0 : std::atof(tag.c_str() + at + name.size() + 3);
}

Piece lay_out(GVC_t* gvc, Agraph_t* g) {
  gvLayout(gvc, g, "dot");
  char* data = nullptr;
  unsigned int len = 0;
  gvRenderData(gvc, g, "svg", &data, &len);
  std::string svg(data, len);
  gvFreeRenderData(data);
  gvFreeLayout(gvc, g);
  Piece p;
  const auto open = svg.find("<svg");
  p.prolog = svg.substr(0, open);
  const auto open_end = svg.find('>', open);
  const auto close = svg.rfind("</svg>");
  p.head = svg.substr(open, open_end + 1 - open);
  p.body = svg.substr(open_end + 1, close - open_end - 1);
  p.w = attr_number(p.head, "width");  // "62pt": atof stops at the unit
  p.h = attr_number(p.head, "height");
  return p;
}

// Graphviz 2.43's dot drops every edge label when it packs components (pack=true, any packmode), so
// each component is laid out alone and the drawings are placed here, in rows, first node first: a
// pile of independent singles and a few chains read as a wide block instead of one tall column. Ids
// are prefixed per piece (c3_node1) so the page keeps unique ids.
std::string compose(const std::vector<Piece>& pieces, const std::string& prolog) {
  constexpr double kGap = 12;
  double area = 0, widest = 0;
  for (const Piece& p : pieces) area += (p.w + kGap) * (p.h + kGap), widest = std::max(widest, p.w);
  // Rows about 1.6 times as wide as the block is tall.
  const double row_width = std::max(widest, std::sqrt(area * 1.6));
  struct Place {
    double x, y;
  };
  std::vector<Place> at;
  double x = 0, y = 0, row_h = 0, total_w = 0;
  for (const Piece& p : pieces) {
    if (x > 0 && x + p.w / 2 > row_width) y += row_h + kGap, x = 0, row_h = 0;  // past its middle: wrap
    at.push_back({x, y});
    x += p.w + kGap;
    row_h = std::max(row_h, p.h);
    total_w = std::max(total_w, x - kGap);
  }
  const double total_h = y + row_h;
  const long W = static_cast<long>(std::ceil(total_w)), H = static_cast<long>(std::ceil(total_h));
  std::string out = prolog;
  out += "<svg width=\"" + std::to_string(W) + "pt\" height=\"" + std::to_string(H) + "pt\"\n viewBox=\"0 0 " +
         std::to_string(W) + " " + std::to_string(H) +
         "\" xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const Piece& p = pieces[i];
    std::string body = p.body;
    const std::string prefix = " id=\"c" + std::to_string(i) + "_";
    for (auto k = body.find(" id=\""); k != std::string::npos; k = body.find(" id=\"", k + prefix.size()))
      body.replace(k, 5, prefix);
    // dot's viewBox starts at 0 0 in points, so a translation places the drawing.
    out += "<g class=\"component\" transform=\"translate(" + fmt(at[i].x) + " " + fmt(at[i].y) + ")\">" +
           body + "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace

std::string dag_dot(const RunView& v) {
  auto graph = materialise(build(v), {});
  char* buf = nullptr;
  std::size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  agwrite(graph->g, f);
  std::fclose(f);
  std::string out(buf, len);
  std::free(buf);
  return out;
}

// One Graphviz context for the process, never freed: Graphviz 2.42's pango plugin keeps font data
// across contexts, and a second context after gvFreeContext reads freed memory (ASan caught it).
GVC_t* graphviz_context() {
  static GVC_t* gvc = gvContext();
  return gvc;
}

namespace {

// Lays out every connected component of `spec` and composes the drawing (see compose).
std::string draw_spec(Spec spec) {
  GVC_t* gvc = graphviz_context();
  const auto parts = components(spec);
  // A condensed graph's caption belongs to the whole drawing, not to each piece.
  Spec::Attrs caption;
  if (parts.size() > 1) std::swap(caption, spec.graph_attrs);
  std::vector<Piece> pieces;
  for (const auto& part : parts) {
    std::vector<bool> keep(spec.nodes.size(), false);
    for (std::size_t i : part) keep[i] = true;
    auto graph = materialise(spec, parts.size() == 1 ? std::vector<bool>{} : keep);
    pieces.push_back(lay_out(gvc, graph->g));
  }
  if (!caption.empty()) {  // drawn as a piece of its own, last
    Spec only_caption;
    only_caption.graph_attrs = caption;
    auto graph = materialise(only_caption, {});
    pieces.push_back(lay_out(gvc, graph->g));
  }
  if (pieces.empty()) {  // no task: dot's own empty drawing
    auto graph = materialise(spec, {});
    pieces.push_back(lay_out(gvc, graph->g));
  }
  if (pieces.size() == 1) {
    // One component: dot's drawing as it is.
    const Piece& p = pieces.front();
    return p.prolog + p.head + p.body + "</svg>\n";
  }
  return compose(pieces, pieces.front().prolog);
}

}  // namespace

std::optional<std::string> dag_svg(const RunView& v) {
  std::optional<Spec> spec = v.tasks.size() > kMaxDagSvgNodes ? build_condensed(v) : build(v);
  if (!spec) return std::nullopt;
  return draw_spec(std::move(*spec));
}

namespace {

// What a graph costs dot: its nodes, and its cycle rank (edges beyond a spanning forest: edges - nodes
// + components). dot's crossing minimisation is what explodes, and a forest of chains has nothing to
// uncross: 1,000 chained tasks lay out in 0.9 s, while a random DAG of 80 tasks and 151 dependencies
// took 1.8 s and one of 200 tasks and 390 dependencies 12 s (Graphviz 2.42 here).
struct Cost {
  std::size_t nodes = 0, edges = 0, cycle_rank = 0;
};
Cost cost_of(const Spec& spec) {
  Cost c;
  c.nodes = spec.nodes.size();
  c.edges = spec.edges.size();
  const std::size_t parts = components(spec).size();
  c.cycle_rank = c.edges + parts > c.nodes ? c.edges + parts - c.nodes : 0;
  return c;
}
bool cheap(const Cost& c) {
  return c.nodes <= kMaxDagSvgNodes && c.cycle_rank <= kMaxDagCycleRank;
}

// The first tasks in submit order (at most kDagWindowTasks) whose graph stays cheap, with their
// dependencies among themselves.
Spec build_window(const Spec& full, std::size_t* shown) {
  std::vector<std::vector<std::size_t>> closing(full.nodes.size());  // edges by their later end
  for (std::size_t i = 0; i < full.edges.size(); ++i)
    closing[std::max(full.edges[i].from, full.edges[i].to)].push_back(i);
  std::vector<std::size_t> parent;
  auto root = [&](std::size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::size_t k = 0, edges = 0, parts = 0;
  for (; k < full.nodes.size() && k < kDagWindowTasks; ++k) {
    std::size_t e = edges, p = parts + 1;
    std::vector<std::size_t> saved = parent;
    parent.push_back(k);
    for (std::size_t i : closing[k]) {
      ++e;
      const std::size_t a = root(full.edges[i].from), b = root(full.edges[i].to);
      if (a != b) parent[std::max(a, b)] = std::min(a, b), --p;
    }
    if (e + p - (k + 1) > kMaxDagCycleRank) {
      parent = std::move(saved);
      break;
    }
    edges = e, parts = p;
  }
  Spec w;
  w.node_defaults = full.node_defaults;
  w.edge_defaults = full.edge_defaults;
  for (std::size_t i = 0; i < k; ++i) {
    w.add_node(full.nodes[i].name);
    w.nodes[i].attrs = full.nodes[i].attrs;
  }
  for (const Spec::Edge& e : full.edges)
    if (e.from < k && e.to < k) w.edges.push_back(e);
  *shown = k;
  return w;
}

// The drawing without Graphviz, when no layout fits the budget: the tasks merged by callable and
// worker as a grid of boxes (no edges), under the note that says why. Linear in the tasks.
std::string fallback_svg(const RunView& v, const std::string& why) {
  std::map<std::string, std::map<std::string, std::size_t>, bool (*)(const std::string&, const std::string&)> cl(
      natural_less);
  for (const TaskView& t : v.tasks) {
    const bool sub = t.kind == "sub" || t.kind == "sub_group";
    const std::string where = sub ? "SUB" : t.workers.empty() ? "?" : "worker " + t.workers.front();
    ++cl[(t.callable.empty() ? std::string("?") : t.callable) + " @ " + where][t.state];
  }
  auto esc = [](const std::string& s) {
    std::string o;
    for (char ch : s) o += ch == '<' ? "&lt;" : ch == '>' ? "&gt;" : ch == '&' ? "&amp;" : ch == '"' ? "&quot;" : std::string(1, ch);
    return o;
  };
  constexpr int kW = 200, kH = 64, kCols = 6;
  const std::size_t shown = std::min<std::size_t>(cl.size(), 600);
  const int rows = static_cast<int>((shown + kCols - 1) / kCols);
  const int W = kCols * (kW + 10) + 10, H = 60 + rows * (kH + 10) + 20;
  std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n<svg width=\"" + std::to_string(W) +
                  "pt\" height=\"" + std::to_string(H) + "pt\" viewBox=\"0 0 " + std::to_string(W) + " " +
                  std::to_string(H) + "\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"Helvetica\" font-size=\"11\">\n";
  o += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o += "<text class=\"note\" x=\"10\" y=\"20\" font-size=\"13\">" + esc(why) + "</text>\n";
  o += "<text x=\"10\" y=\"40\">" + std::to_string(v.tasks.size()) + " tasks, " + std::to_string(v.deps.size()) +
       " dependencies, merged by callable and worker (no edges drawn; every task and edge is in dag.dot)" +
       (shown < cl.size() ? ", first " + std::to_string(shown) + " of " + std::to_string(cl.size()) + " boxes" : "") +
       "</text>\n";
  std::size_t i = 0;
  for (const auto& [key, states] : cl) {
    if (i == shown) break;
    const int x = 10 + static_cast<int>(i % kCols) * (kW + 10), y = 60 + static_cast<int>(i / kCols) * (kH + 10);
    std::size_t n = 0;
    std::string worst = "COMPLETED", lines;
    for (const auto& [state, k] : states) {
      n += k;
      if (state != "COMPLETED") worst = state;
      lines += (lines.empty() ? "" : ", ") + std::to_string(k) + " " + state;
    }
    o += "<g class=\"node\"><rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" +
         std::to_string(kW) + "\" height=\"" + std::to_string(kH) + "\" fill=\"" + state_colour(worst) +
         "\" stroke=\"black\"/><text x=\"" + std::to_string(x + 6) + "\" y=\"" + std::to_string(y + 18) + "\">" +
         esc(key) + "</text><text x=\"" + std::to_string(x + 6) + "\" y=\"" + std::to_string(y + 36) + "\">" +
         std::to_string(n) + (n == 1 ? " task" : " tasks") + "</text><text x=\"" + std::to_string(x + 6) + "\" y=\"" +
         std::to_string(y + 54) + "\" font-size=\"9\">" + esc(lines) + "</text></g>\n";
    ++i;
  }
  return o + "</svg>\n";
}

// A layout drawn in a child: its SVG, or why not (`failure` empty: it ran out of the time it had).
struct Layout {
  std::optional<std::string> svg;
  std::string failure;  // "failed: ..." (a signal, a status, no process), said as such (issue 53 F13)
};

// Why a layout child that did not time out gave no SVG: its signal or status, and "out of memory" when
// its own messages (Graphviz's, Fontconfig's, kept from the user's terminal) say so.
std::string child_failure(int status, const std::string& said) {
  std::string why = WIFSIGNALED(status) ? "the layout process was killed by signal " + std::to_string(WTERMSIG(status)) +
                                              " (" + std::string(strsignal(WTERMSIG(status))) + ")"
                                        : "the layout process ended with status " + std::to_string(WEXITSTATUS(status));
  if (said.find("out of memory") != std::string::npos || said.find("Cannot allocate memory") != std::string::npos)
    why += ", out of memory";
  return "failed: " + why;
}

// draw_spec in a forked child, killed past `seconds`. The child dies with this process
// (PR_SET_PDEATHSIG), so a Ctrl-C never leaves a layout running; it inherits the blocked SIGINT and
// SIGTERM, and leaves with _exit. Its stderr goes to a memory file read here (a crash or a library's
// complaint under a memory limit printed raw lines on the user's terminal), its faults to the default
// action (a signal the parent names).
Layout draw_in_child(const Spec& spec, double seconds) {
  if (!(seconds > 0)) return {};
  int fds[2];
  if (pipe(fds) != 0) return {std::nullopt, std::string("failed: no pipe for the layout process: ") + std::strerror(errno)};
  const int said_fd = memfd_create("dirsched-layout-stderr", MFD_CLOEXEC);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const std::string why = std::string("failed: no layout process: ") + std::strerror(errno);
    close(fds[0]), close(fds[1]);
    if (said_fd >= 0) close(said_fd);
    return {std::nullopt, why};
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    close(fds[0]);
    if (said_fd >= 0) dup2(said_fd, STDERR_FILENO);
    for (const int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) signal(sig, SIG_DFL);
    const std::string svg = draw_spec(spec);
    for (std::size_t at = 0; at < svg.size();) {
      const ssize_t n = write(fds[1], svg.data() + at, svg.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) _exit(1);
      at += static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::string out;
  bool done = false, timed_out = false;
  char buf[65536];
  while (!done) {
    const double left = std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int r = poll(&p, 1, static_cast<int>(std::ceil(left * 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;  // the deadline is checked above
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) done = true;
    else out.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::string said;  // the first 64 KiB the child printed
  if (said_fd >= 0) {
    const ssize_t n = pread(said_fd, buf, sizeof buf, 0);
    if (n > 0) said.assign(buf, static_cast<std::size_t>(n));
    close(said_fd);
  }
  if (timed_out) return {};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {std::nullopt, child_failure(status, said)};
  return {std::move(out), {}};
}

// A run without dependencies (issue 55): a DAG of it is as many unconnected boxes as tasks, which says
// nothing. Instead, one line saying so, and the tasks grouped by worker, each worker's in the order they
// were dispatched (a group's member under each worker it ran on); the tasks that never ran in a row of
// their own. Box fill is the final state; the states' key only when they differ. Linear in the tasks.
std::string worker_rows_svg(const RunView& v) {
  constexpr int kLabelW = 90, kBoxH = 24, kGap = 6, kMaxW = 1000, kRowPad = 6;
  auto box_w = [](const std::string& label) { return std::max(40, 7 * static_cast<int>(label.size()) + 14); };
  struct Box {
    const TaskView* task;
    std::string label;
  };
  std::vector<std::pair<std::string, std::vector<Box>>> rows;
  std::map<std::string, std::size_t> row_of;
  std::vector<std::string> lanes = v.lanes;  // then any lane with runs the lane list lacks
  for (const auto& [lane, bars] : v.bars)
    if (std::find(v.lanes.begin(), v.lanes.end(), lane) == v.lanes.end()) lanes.push_back(lane);
  for (const std::string& lane : lanes) {
    auto it = v.bars.find(lane);
    if (it == v.bars.end() || it->second.empty()) continue;
    std::vector<Box> boxes;
    for (const MemberBar& b : it->second) {
      const TaskView* t = v.find(b.task);
      if (!t) continue;
      boxes.push_back({t, b.kind == "group" || b.kind == "sub_group" ? b.task + "[" + std::to_string(b.member) + "]"
                                                                      : b.task});
    }
    rows.emplace_back(lane.rfind("sub", 0) == 0 ? lane : "worker " + lane, std::move(boxes));
  }
  std::vector<Box> idle;
  for (const TaskView& t : v.tasks)
    if (t.runs.empty()) idle.push_back({&t, t.name});
  if (!idle.empty()) rows.emplace_back("never ran", std::move(idle));
  std::vector<std::string> states;  // in the order of the DAG's legend
  for (const char* st : {"COMPLETED", "FAILED", "POISONED", "CANCELLED", "REJECTED", "NOT_SUBMITTED"})
    for (const TaskView& t : v.tasks)
      if (t.state == st) {
        states.push_back(st);
        break;
      }
  for (const TaskView& t : v.tasks)
    if (std::string(state_colour(t.state)) == state_colour("PENDING")) {
      states.push_back("PENDING");  // any state short of a final one: the run left it there
      break;
    }
  // Place every box: rows wrap past kMaxW, each row framed as its worker's cluster.
  struct Placed {
    const Box* box;
    int x, y, w;
  };
  std::vector<Placed> placed;
  std::vector<std::pair<int, int>> frames;  // each row's top and height
  int y = 56;
  for (const auto& [name, boxes] : rows) {
    const int top = y;
    int x = kLabelW;
    for (const Box& b : boxes) {
      const int w = box_w(b.label);
      if (x > kLabelW && x + w > kMaxW) x = kLabelW, y += kBoxH + kGap;
      placed.push_back({&b, x, y + kRowPad, w});
      x += w + kGap;
    }
    y += kBoxH + 2 * kRowPad;
    frames.emplace_back(top, y - top);
    y += kGap;
  }
  const int legend_y = y + 10, H = legend_y + (states.size() > 1 ? 24 : 0);
  bool grouped = false;
  for (const TaskView& t : v.tasks) grouped |= t.kind == "group" || t.kind == "sub_group";
  const std::string line2 = "Tasks by worker, left to right in the order they were dispatched" +
                            (states.size() == 1 ? "; all " + states.front() : std::string()) +
                            (grouped ? "; a thick border: a group's member [index]" : "") + " (dag.dot has the graph)";
  int right = 10 + 6 * static_cast<int>(line2.size());  // the frames as wide as the widest row or the caption
  for (const Placed& p : placed) right = std::max(right, p.x + p.w + kGap);
  right = std::min(right, kMaxW + 6);
  const int W = right + 10;
  std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n<svg width=\"" +
                  std::to_string(W) + "\" height=\"" + std::to_string(H) + "\" viewBox=\"0 0 " +
                  std::to_string(W) + " " + std::to_string(H) +
                  "\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"Helvetica\" font-size=\"11\">\n";
  o += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o += "<text class=\"no-deps\" x=\"10\" y=\"20\" font-size=\"13\" font-weight=\"bold\">No dependencies: " +
       std::to_string(v.tasks.size()) + (v.tasks.size() == 1 ? " task" : " tasks") +
       ", none waits for another's output</text>\n";
  o += "<text x=\"10\" y=\"40\">" + html_escape(line2) + "</text>\n";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    o += "<g class=\"worker-row\"><rect x=\"4\" y=\"" + std::to_string(frames[r].first) + "\" width=\"" +
         std::to_string(right - 4) + "\" height=\"" + std::to_string(frames[r].second) +
         "\" fill=\"#f4f6f8\" stroke=\"#cccccc\"/><text x=\"10\" y=\"" +
         std::to_string(frames[r].first + kRowPad + 16) + "\">" + html_escape(rows[r].first) + "</text></g>\n";
  }
  for (const Placed& p : placed) {
    const TaskView& t = *p.box->task;
    const bool sub = t.kind == "sub" || t.kind == "sub_group";
    o += "<g class=\"node\"><title>" + html_escape(t.kind + " " + t.name + ": " + t.state) + "</title><rect x=\"" +
         std::to_string(p.x) + "\" y=\"" + std::to_string(p.y) + "\" width=\"" + std::to_string(p.w) +
         "\" height=\"" + std::to_string(kBoxH) + "\"" + (sub ? " rx=\"10\"" : "") + " fill=\"" +
         state_colour(t.state) + "\" stroke=\"black\"" +
         (t.kind == "group" || t.kind == "sub_group" ? " stroke-width=\"2\"" : "") + "/><text x=\"" +
         std::to_string(p.x + 7) + "\" y=\"" + std::to_string(p.y + 16) + "\">" + html_escape(p.box->label) +
         "</text></g>\n";
  }
  if (states.size() > 1) {
    o += "<g class=\"states\">";
    int x = 10;
    for (const std::string& st : states) {
      const std::string text = st == "PENDING" ? "not finished" : st;
      o += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(legend_y) +
           "\" width=\"12\" height=\"12\" fill=\"" + state_colour(st) + "\" stroke=\"black\"/><text x=\"" +
           std::to_string(x + 16) + "\" y=\"" + std::to_string(legend_y + 10) + "\">" + text + "</text>";
      x += 16 + 7 * static_cast<int>(text.size()) + 14;
    }
    o += "</g>\n";
  }
  return o + "</svg>\n";
}

std::string seconds_text(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", s);
  return b;
}

}  // namespace

DagPicture dag_picture(const RunView& v, double budget_s) {
  const auto t0 = std::chrono::steady_clock::now();
  auto left = [&] {
    return budget_s - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const std::string size = std::to_string(v.tasks.size()) + " tasks and " + std::to_string(v.deps.size()) +
                           " dependencies";
  const std::string budget = "the picture budget (" + seconds_text(budget_s) + " s, --picture-budget)";
  auto not_drawn = [&](const Layout& l) { return l.failure.empty() ? "did not finish within " + budget : l.failure; };
  DagPicture out;
  if (v.deps.empty() && !v.tasks.empty() && v.tasks.size() <= kDagWindowTasks) {
    out.svg = worker_rows_svg(v);
    return out;
  }
  std::string why;  // why the full drawing is not there
  Spec full = build(v);
  const Cost c = cost_of(full);
  if (cheap(c)) {
    Layout l = draw_in_child(full, left());
    if (l.svg) {
      out.svg = std::move(l.svg);
      return out;
    }
    why = "the layout of " + size + " " + not_drawn(l);
  } else {
    why = size + " are too many for dot to lay out in time (at most " + std::to_string(kMaxDagSvgNodes) +
          " tasks and " + std::to_string(kMaxDagCycleRank) + " dependencies beyond a forest; this has " +
          std::to_string(c.cycle_rank) + ")";
  }
  if (std::optional<Spec> condensed = build_condensed(v); condensed && cheap(cost_of(*condensed))) {
    condensed->graph_attrs = {{"label", "condensed: " + std::to_string(v.tasks.size()) +
                                            " tasks merged by callable and worker (" + why + ")"}};
    Layout l = draw_in_child(*condensed, left());
    if (l.svg) {
      out.svg = std::move(l.svg);
      out.note = "dag.svg condensed: " + why + "; tasks merged by callable and worker (dag.dot has them all)";
      return out;
    }
    why += "; the condensed layout " + not_drawn(l);
  }
  std::size_t shown = 0;
  Spec window = build_window(full, &shown);
  if (shown > 0 && shown < v.tasks.size()) {
    window.graph_attrs = {{"label", "window: the first " + std::to_string(shown) + " of " +
                                        std::to_string(v.tasks.size()) + " tasks in submit order (" + why + ")"}};
    Layout l = draw_in_child(window, left());
    if (l.svg) {
      out.svg = std::move(l.svg);
      out.note = "dag.svg windowed: " + why + "; it draws the first " + std::to_string(shown) + " of " +
                 std::to_string(v.tasks.size()) + " tasks in submit order (dag.dot has them all)";
      return out;
    }
    why += "; the window's layout " + not_drawn(l);
  }
  out.svg = fallback_svg(v, "DAG not laid out: " + why);
  out.note = "dag.svg replaced by a grid of tasks merged by callable and worker: " + why + " (dag.dot has them all)";
  return out;
}

}  // namespace dirsched::viz
