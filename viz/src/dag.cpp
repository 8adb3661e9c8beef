// dag.dot through libcgraph and dag.svg through libgvc.
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

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

// Builds the graph: nodes in name order, edges in (producer, consumer, buffer) order.
std::unique_ptr<Graph> build(const RunView& v) {
  auto graph = std::make_unique<Graph>();
  graph->g = agopen(c("dag"), Agdirected, nullptr);
  Agraph_t* g = graph->g;
  agattr(g, AGRAPH, c("rankdir"), c("LR"));
  agattr(g, AGRAPH, c("fontname"), c("Helvetica"));
  // Independent components (a pile of singles, two chains) are laid out one by one and packed into a
  // roughly square array, instead of one column thousands of points tall.
  agattr(g, AGRAPH, c("pack"), c("true"));
  agattr(g, AGRAPH, c("packmode"), c("array_u"));
  agattr(g, AGNODE, c("shape"), c("box"));
  agattr(g, AGNODE, c("style"), c("filled"));
  agattr(g, AGNODE, c("fillcolor"), c("white"));
  agattr(g, AGNODE, c("fontname"), c("Helvetica"));
  agattr(g, AGNODE, c("label"), c(""));
  agattr(g, AGNODE, c("tooltip"), c(""));
  agattr(g, AGEDGE, c("label"), c(""));
  agattr(g, AGEDGE, c("fontname"), c("Helvetica"));
  agattr(g, AGEDGE, c("fontsize"), c("10"));
  std::vector<const TaskView*> sorted;
  for (const TaskView& t : v.tasks) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(),
            [](const TaskView* a, const TaskView* b) { return natural_less(a->name, b->name); });
  for (const TaskView* t : sorted) {
    Agnode_t* n = agnode(g, c(t->name), 1);
    std::string label = t->name + "\n" + t->state;
    if (t->kind == "group" || t->kind == "sub_group") {
      for (std::uint32_t m = 0; m < t->members; ++m) {
        std::string where = m < t->workers.size() ? t->workers[m] : "";
        for (const MemberBar& b : t->runs)
          if (b.member == m) where = b.worker;
        label += "\n[" + std::to_string(m) + "]@" + (where.empty() ? "?" : where);
      }
    } else if (!t->runs.empty()) {
      label += "\n@" + t->runs.front().worker;
    } else if (!t->workers.empty()) {
      label += "\n@" + t->workers.front();
    }
    if (!t->code.empty()) label += "\n" + t->code;
    std::string tip = t->kind + " " + t->name + ": " + t->state;
    if (t->submit >= 0) tip += ", submit " + fmt(t->submit) + " s";
    if (t->ready >= 0) tip += ", ready " + fmt(t->ready) + " s";
    if (t->start >= 0) tip += ", start " + fmt(t->start) + " s";
    if (t->end >= 0) tip += ", end " + fmt(t->end) + " s";
    if (!t->cause.empty()) tip += ", poisoned by " + t->cause;
    agsafeset(n, c("label"), c(label), c(""));
    agsafeset(n, c("shape"), c(shape_of(t->kind)), c("box"));
    agsafeset(n, c("fillcolor"), c(state_colour(t->state)), c("white"));
    agsafeset(n, c("tooltip"), c(tip), c(""));
    if (t->state == "NOT_SUBMITTED") agsafeset(n, c("style"), c("dashed"), c("filled"));
  }
  for (const DepEdge& d : v.deps) {
    Agnode_t* a = agnode(g, c(d.producer), 0);
    Agnode_t* b = agnode(g, c(d.consumer), 0);
    if (!a || !b) continue;
    Agedge_t* e = agedge(g, a, b, c(d.buffer), 1);
    agsafeset(e, c("label"), c(d.buffer), c(""));
  }
  return graph;
}

// Past kMaxDagSvgNodes: one node per (callable, worker) with its task count and final states, one
// edge per pair of such nodes with the number of dependencies it stands for. A group sits under its
// first target; SUB tasks under "SUB".
std::unique_ptr<Graph> build_condensed(const RunView& v) {
  auto graph = std::make_unique<Graph>();
  graph->g = agopen(c("dag"), Agdirected, nullptr);
  Agraph_t* g = graph->g;
  agattr(g, AGRAPH, c("rankdir"), c("LR"));
  agattr(g, AGRAPH, c("fontname"), c("Helvetica"));
  agattr(g, AGRAPH, c("pack"), c("true"));
  agattr(g, AGRAPH, c("packmode"), c("array_u"));
  agattr(g, AGRAPH, c("label"),
         c("condensed: " + std::to_string(v.tasks.size()) + " tasks merged by callable and worker"));
  agattr(g, AGNODE, c("shape"), c("box"));
  agattr(g, AGNODE, c("style"), c("filled"));
  agattr(g, AGNODE, c("fillcolor"), c("white"));
  agattr(g, AGNODE, c("fontname"), c("Helvetica"));
  agattr(g, AGNODE, c("label"), c(""));
  agattr(g, AGEDGE, c("label"), c(""));
  agattr(g, AGEDGE, c("fontname"), c("Helvetica"));
  agattr(g, AGEDGE, c("fontsize"), c("10"));
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
  if (clusters.size() > kMaxDagSvgNodes) return nullptr;  // even condensed, too many to lay out
  for (const auto& [k, cl] : clusters) {
    std::string label = k + "\n" + std::to_string(cl.tasks) + (cl.tasks == 1 ? " task" : " tasks");
    std::string worst = "COMPLETED";
    for (const auto& [state, n] : cl.states) {
      if (state != "COMPLETED") worst = state;
      label += "\n" + std::to_string(n) + " " + state;
    }
    Agnode_t* n = agnode(g, c(k), 1);
    agsafeset(n, c("label"), c(label), c(""));
    agsafeset(n, c("fillcolor"), c(state_colour(worst)), c("white"));
  }
  std::map<std::pair<std::string, std::string>, std::size_t> edges;
  for (const DepEdge& d : v.deps) {
    auto a = cluster_of.find(d.producer), b = cluster_of.find(d.consumer);
    if (a != cluster_of.end() && b != cluster_of.end()) ++edges[{a->second, b->second}];
  }
  for (const auto& [ends, n] : edges) {
    Agedge_t* e = agedge(g, agnode(g, c(ends.first), 0), agnode(g, c(ends.second), 0), nullptr, 1);
    agsafeset(e, c("label"), c(std::to_string(n)), c(""));
  }
  return graph;
}

}  // namespace

std::string dag_dot(const RunView& v) {
  auto graph = build(v);
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

std::optional<std::string> dag_svg(const RunView& v) {
  auto graph = v.tasks.size() > kMaxDagSvgNodes ? build_condensed(v) : build(v);
  if (!graph) return std::nullopt;
  GVC_t* gvc = graphviz_context();
  gvLayout(gvc, graph->g, "dot");
  char* data = nullptr;
  unsigned int len = 0;
  gvRenderData(gvc, graph->g, "svg", &data, &len);
  std::string out(data, len);
  gvFreeRenderData(data);
  gvFreeLayout(gvc, graph->g);
  return out;
}

}  // namespace dirsched::viz
