// dag.dot through libcgraph and dag.svg through libgvc.
#include <cctype>
#include <cmath>
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <algorithm>
#include <cstdio>
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
  if (v.tasks.size() > kMaxDagSvgNodes) return std::nullopt;
  auto graph = build(v);
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
