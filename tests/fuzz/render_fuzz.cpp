// Fuzz target: render's reader (issue 28). `dirsched render DIR` reads a run folder that anyone may have
// edited; whatever summary.json and events.jsonl hold, the pictures' reader must refuse with its own
// error (record::RecordError, viz::VizError, a JSON parse error: exit 2 naming the file and line) or
// draw, and never crash, hang or throw anything else.
//
// An input is summary.json's bytes, a 0x1E byte, then events.jsonl's bytes (no 0x1E: no summary).
// Both readers run on it: the full one (parse_run, then the timeline, trace.json, the Paje trace,
// report.html and dag.dot: Graphviz's own layout is left out, render runs it in a killed child) and the
// streaming one that render uses past 100,000 tasks (aggregate_run and its two pictures).
//
// Built as `render_fuzz` with DIRSCHED_FUZZ=ON (clang, libFuzzer), and in every build with the pictures
// as `render_fuzz_replay` over tests/fuzz/render-corpus/ (made from the golden run folders).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "dirsched/record/summary.hpp"
#include "dirsched/viz.hpp"

namespace {

// One file per process, rewritten for each input (aggregate_run reads a file), removed at exit. A
// plain array: it outlives every destructor, so the atexit handler can still read it.
char g_events_path[] = "/tmp/dirsched-render-fuzz-XXXXXX";
const char* events_path() {
  static const bool made = [] {
    const int fd = ::mkstemp(g_events_path);
    if (fd < 0) std::abort();
    ::close(fd);
    std::atexit([] { ::unlink(g_events_path); });
    return true;
  }();
  (void)made;
  return g_events_path;
}

// Every picture of a parsed run: a throw here is a finding (the reader accepted what a picture cannot draw).
void draw(const dirsched::viz::RunView& v, const dirsched::record::Summary* summary) {
  const std::string timeline = dirsched::viz::timeline_svg(v);
  (void)dirsched::viz::chrome_trace(v);
  (void)dirsched::viz::paje_trace(v);
  (void)dirsched::viz::dag_dot(v);
  (void)dirsched::viz::report_html(v, summary, std::nullopt, timeline);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dirsched;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::size_t cut = input.find('\x1e');
  const std::string summary_text = cut == std::string::npos ? std::string() : input.substr(0, cut);
  const std::string events = cut == std::string::npos ? input : input.substr(cut + 1);

  std::optional<record::Summary> summary;
  if (!summary_text.empty()) {
    try {
      summary = record::decode(nlohmann::ordered_json::parse(summary_text), "summary.json");
    } catch (const nlohmann::json::exception&) {
      return 0;  // render refuses the folder: exit 2 naming summary.json
    } catch (const record::RecordError&) {
      return 0;
    }
  }
  const record::Summary* s = summary ? &*summary : nullptr;

  bool parsed = true;
  viz::RunView v;
  try {
    v = viz::parse_run(events, s);
  } catch (const viz::VizError&) {
    parsed = false;
  }
  if (parsed) draw(v, s);

  std::FILE* f = std::fopen(events_path(), "wb");
  if (!f) std::abort();
  if (!events.empty() && std::fwrite(events.data(), 1, events.size(), f) != events.size()) std::abort();
  std::fclose(f);
  try {
    const viz::Aggregate a = viz::aggregate_run(events_path(), s, 64, 100);
    (void)viz::aggregate_timeline_svg(a);
    (void)viz::aggregate_trace(a);
  } catch (const viz::VizError&) {
  }
  return 0;
}
