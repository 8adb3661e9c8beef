// `dirsched import strace`: the runtime's [STRACE] host log in, a scenario, an observed run folder and
// a report out (see strace_import.hpp and ../shared/docs/strace-import.md).
#include "dirsched/strace_import.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "dirsched/error.hpp"
#include "dirsched/json_reader.hpp"
#include "dirsched/output_folder.hpp"
#include "dirsched/outputs.hpp"
#include "dirsched/record/task_row.hpp"
#include "dirsched/registry.hpp"
#include "dirsched/scenario.hpp"
#include "line_reader.hpp"

namespace dirsched {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

// ---------------------------------------------------------------------------------------------------
// Lines and records.

enum class SpanKind : std::uint8_t { kGraphBuild, kSubmit, kDispatch, kFrameSubmit, kActivate, kComplete, kRetire };
constexpr const char* kSpanNames[] = {"graph_build", "submit",   "dispatch",
                                      "frame_submit", "activate", "complete", "post_fence_retirement"};
// The level words of the scheduler spans, newest first; `l3` and `host` are older logs' names.
constexpr const char* kLevelWords[] = {"node", "network1", "network2", "network3", "l3", "host"};

// Identity attributes: their values must be integers, never capped.
enum Attr : std::uint8_t { kRunId, kTaskSlot, kGroupIndex, kGroupSize, kWorkerId, kDispatchId, kOutcome, kPrepareOnly, kAttrCount };
constexpr const char* kAttrNames[] = {"run_id",    "task_slot",   "group_index",  "group_size",
                                      "worker_id", "dispatch_id", "outcome",      "prepare_only"};

// One scheduler span of a process, as much as the import needs of it.
struct Span {
  SpanKind kind;
  std::uint8_t word;      // index into kLevelWords
  std::int8_t endpoint;   // 0 local_mailbox, 1 remote_l3, -1 absent (any other value is refused)
  std::uint8_t has = 0;   // bit i: attribute i given
  std::uint32_t hid = 0;  // index into Parsed::hids (submits)
  long long ts = 0, dur = 0;
  std::uint64_t line = 0;
  long long attr[kAttrCount] = {};
  std::uint64_t seq = 0;  // its place among the scheduler spans of the file
  bool given(Attr a) const { return (has >> a) & 1u; }
};

// One dispatch of a member, and its end.
struct Attempt {
  std::uint32_t task = 0;  // index into Builder::tasks_
  int member = 0;
  bool staged = false, activated = false, completed = false;
  bool bad_index = false;  // its group_index did not fit a member index (refused; kept out of the pairing)
  std::int8_t endpoint = -1;
  std::uint32_t hid = 0;
  long long worker = 0, dispatch_id = 0;
  long long dispatch_ts = 0, dispatch_dur = 0;
  long long activate_ts = 0, complete_ts = 0, complete_dur = 0;
  long long outcome = -1;
  std::uint64_t line = 0, complete_line = 0;
  std::uint64_t seq = 0;  // the dispatch span's place in the file
  long long start() const { return staged && activated ? activate_ts : dispatch_ts; }
  long long end_or_max() const { return completed ? complete_ts : std::numeric_limits<long long>::max(); }
};

// The scheduler spans of the process imported, as the second reading keeps them: each kind in file
// order, the dispatches already as attempts; every vector reserved at the count of the first reading.
struct Process {
  std::vector<Span> submits, ends, others;  // ends: activates and completes; others: graph_build, retirement
  std::vector<Attempt> attempts;            // the dispatches
  std::vector<std::pair<long long, long long>> attempt_keys;  // their (run_id, task_slot)
  // Dispatches whose group_index is outside [-1, 2^30] (an int member cannot hold it): index, value.
  std::vector<std::pair<std::size_t, long long>> bad_group_index;
  void add(const Span& s) {
    switch (s.kind) {
      case SpanKind::kSubmit: submits.push_back(s); return;
      case SpanKind::kActivate:
      case SpanKind::kComplete: ends.push_back(s); return;
      case SpanKind::kDispatch: break;
      default: others.push_back(s); return;
    }
    Attempt a;
    a.worker = s.attr[kWorkerId];
    a.dispatch_id = s.attr[kDispatchId];
    a.member = static_cast<int>(s.attr[kGroupIndex]);
    a.dispatch_ts = s.ts;
    a.dispatch_dur = s.dur;
    a.line = s.line;
    a.seq = s.seq;
    a.staged = s.given(kPrepareOnly) && s.attr[kPrepareOnly] != 0;
    a.endpoint = s.endpoint;
    a.hid = s.hid;
    if (s.attr[kGroupIndex] < -1 || s.attr[kGroupIndex] > (1LL << 30)) {
      bad_group_index.emplace_back(attempts.size(), s.attr[kGroupIndex]);
      a.bad_index = true;
    }
    attempts.push_back(a);
    attempt_keys.emplace_back(s.attr[kRunId], s.attr[kTaskSlot]);
  }
};


struct Candidate {
  std::set<std::string> words;
  std::set<long long> runs;
  std::uint64_t first_line = 0, spans = 0;
  std::uint64_t submits = 0, dispatches = 0, ends = 0;  // of its spans
  // Its tasks, (run_id, task_slot): appended per span, made unique whenever half could be repeats (a task
  // has a few spans), so that they take a few words a task.
  std::vector<std::pair<long long, long long>> tasks;
  std::size_t unique = 0;
  void add_task(long long run, long long slot) {
    tasks.emplace_back(run, slot);
    if (tasks.size() >= 2 * unique + 4096) make_unique();
  }
  void make_unique() {
    std::sort(tasks.begin(), tasks.end());
    tasks.erase(std::unique(tasks.begin(), tasks.end()), tasks.end());
    unique = tasks.size();
  }
  std::size_t task_count() const { return unique; }  // after make_unique()
  void make_unique_and_fit() {
    make_unique();
    tasks.shrink_to_fit();
  }
};

// The first problem found in a process while reading (a torn record, a capped or non-integer identity).
struct Problem {
  std::uint64_t line = 0;
  std::string rule;
};

// The stall warnings read into the report (fidelity compares them with a replay's stall reports); the
// rest are counted.
constexpr std::size_t kMaxStallsKept = 10'000;

// A whole number after `key` in `text` (its first occurrence), or nullopt.
std::optional<long long> number_after(std::string_view text, std::string_view key) {
  const std::size_t at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  const char* first = text.data() + at + key.size();
  long long v = 0;
  const auto r = std::from_chars(first, text.data() + text.size(), v);
  return r.ec == std::errc() ? std::optional<long long>(v) : std::nullopt;
}

// The list after `key=[` up to its `]` (empty when absent), items split at commas.
std::vector<std::string_view> list_after(std::string_view text, std::string_view key) {
  std::vector<std::string_view> items;
  const std::size_t at = text.find(key);
  if (at == std::string_view::npos) return items;
  std::string_view rest = text.substr(at + key.size());
  rest = rest.substr(0, rest.find(']'));
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    if (std::string_view item = rest.substr(0, comma); !item.empty()) items.push_back(item);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return items;
}

// `[WARN] NEXT_LEVEL group reservation stalled: group_slot=S busy_target_ids=[..]
// idle_targets_with_queued_singles=[w:head_slot=h,..]` as JSON; a field that does not read is null.
nlohmann::ordered_json read_stall_warning(std::string_view text, std::uint64_t line) {
  using oj = nlohmann::ordered_json;
  const auto or_null = [](std::optional<long long> v) { return v ? oj(*v) : oj(nullptr); };
  oj busy = oj::array(), idle = oj::array();
  for (std::string_view b : list_after(text, "busy_target_ids=[")) busy.push_back(or_null(number_after(b, "")));
  for (std::string_view i : list_after(text, "idle_targets_with_queued_singles=["))
    idle.push_back({{"worker", or_null(number_after(i, ""))}, {"head_slot", or_null(number_after(i, "head_slot="))}});
  return {{"line", line},
          {"group_slot", or_null(number_after(text, "group_slot="))},
          {"busy_target_ids", busy},
          {"idle_targets_with_queued_singles", idle}};
}

struct Parsed {
  std::uint64_t lines = 0, noise = 0, other_records = 0, other_spans = 0, device_spans = 0, anchors = 0,
                stall_warnings = 0, torn = 0, frame_submits = 0;
  std::vector<std::string> stall_lines;  // the first few, as logged
  nlohmann::ordered_json stall_parsed = nlohmann::ordered_json::array();  // the first kMaxStallsKept, read
  std::map<long long, Candidate> candidates;
  std::map<long long, Problem> problems;  // pid -> its first problem
  std::optional<Problem> torn_unknown;    // a torn record whose pid cannot be read
  std::uint64_t spans = 0;  // scheduler spans of the candidates, in file order
  std::vector<std::string> hids;
  std::unordered_map<std::string, std::uint32_t> hid_index;
};

// Text of the log as a JSON string can hold it: valid UTF-8 is kept, every byte that is not part of
// a valid sequence (a log is bytes: \xff\xfe in a warning) is written as the text \xNN. (The report's
// dump threw on them: "invalid UTF-8 byte", without the file or the line.)
std::string json_safe_text(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 && c >= 0xc2 ? 2 : (c >> 4) == 0xe ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n > 1) {
      if (i + n > s.size()) n = 0;
      for (std::size_t k = 1; n && k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) n = 0;
      if (n) {  // no overlong 3- and 4-byte forms, no surrogates, nothing past U+10FFFF
        const auto c1 = static_cast<unsigned char>(s[i + 1]);
        if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0) || (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90))
          n = 0;
      }
    }
    if (n == 0) {
      static const char* const kHex = "0123456789abcdef";
      o += "\\x";
      o += kHex[c >> 4];
      o += kHex[c & 0xf];
      ++i;
      continue;
    }
    o.append(s.data() + i, n);
    i += n;
  }
  return o;
}

bool parse_ll(std::string_view s, long long& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_hex(std::string_view s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty()) return false;
  for (char c : s)
    if (hex_value(c) < 0) return false;
  return true;
}

using strace_lines::kRecordHead;  // the line reader is in line_reader.hpp (its fuzz target reads it too)
using strace_lines::kStallText;
using strace_lines::LineReader;

// Reads the log once. The first reading (no `keep`) counts and checks; the second keeps the spans of
// the process chosen (`keep_pid`) in `keep`, and reads no more than the first reading's lines.
class LogReader {
 public:
  LogReader(const ImportOptions& o, Parsed& p, Process* keep = nullptr, long long keep_pid = 0,
            std::uint64_t max_lines = std::numeric_limits<std::uint64_t>::max())
      : o_(o), p_(p), keep_(keep), keep_pid_(keep_pid), max_lines_(max_lines) {}

  void read() {
    // Opened without blocking and checked on the descriptor (a FIFO blocked the open forever): the log
    // is read twice, so only a regular file.
    struct stat st {};
    const int fd = open_user_file(o_.log, &st);
    if (fd < 0) throw BadInput(o_.log + ": cannot read the log (" + std::strerror(errno) + ")");
    LineReader in(fd);
    if (!S_ISREG(st.st_mode))
      throw BadInput(o_.log + ": cannot read the log (not a regular file: a FIFO, a device, a socket or a folder)");
    const double total = static_cast<double>(st.st_size);
    std::string line;
    LineReader::Long skipped;
    double done = 0;
    int shown = -1;
    const bool progress = o_.progress && st.st_size > (16 << 20);
    while (p_.lines < max_lines_ && in.next(line, skipped)) {
      ++p_.lines;
      done += static_cast<double>(line.size() + skipped.bytes + 1);
      if (progress) {
        const int pct = static_cast<int>(100 * done / total);
        if (pct != shown) {
          std::fprintf(stderr, "\rimport: %s, reading %d of 2: %3d%% (%llu lines)", o_.log.c_str(), keep_ ? 2 : 1,
                       pct, static_cast<unsigned long long>(p_.lines));
          shown = pct;
        }
      }
      if (skipped.bytes == 0) {
        take_line(line);
      } else if (line.empty()) {  // a long line without a record: noise, or a stall warning, of any length
        if (skipped.stall)
          stall("(a line of " + std::to_string(skipped.bytes) + " bytes holding a stall warning, not kept)");
        else
          ++p_.noise;
      } else {  // long text, then a record: the text is noise, as before a record on a short line
        ++p_.noise;
        take_line(line);
      }
    }
    if (progress) std::fprintf(stderr, "\n");
    if (in.error())
      throw BadInput(o_.log + ": read error after line " + std::to_string(p_.lines) + " (" + std::strerror(in.error()) + ")");
    for (auto& [pid, c] : p_.candidates) c.make_unique_and_fit();
  }

 private:
  [[noreturn]] void refuse(const std::string& rule) const {
    throw ImportError(o_.log + ":" + std::to_string(p_.lines) + ": " + rule);
  }

  void take_line(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    static constexpr std::string_view kHead = kRecordHead;
    std::size_t at = line.find(kHead);
    if (at == std::string_view::npos) {
      if (line.find(kStallText) != std::string_view::npos)
        stall(line);
      else
        ++p_.noise;
      return;
    }
    if (line.substr(0, at).find_first_not_of(" \t") != std::string_view::npos) ++p_.noise;  // harness text before it
    // Two records can share a line: each runs up to the next record head (a '[' inside a value is
    // always escaped, so the head cannot occur inside a record).
    while (at != std::string_view::npos) {
      const std::size_t next = line.find(kHead, at + 1);
      record(line.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at));
      at = next;
    }
  }

  void stall(std::string_view text) {
    ++p_.stall_warnings;
    if (p_.stall_lines.size() < 20) p_.stall_lines.push_back(json_safe_text(text));
    if (p_.stall_parsed.size() < kMaxStallsKept) p_.stall_parsed.push_back(read_stall_warning(text, p_.lines));
  }

  // `[mono_ns=<ns>][T0x<hex>][<LEVEL>] <func>: <message>`
  void record(std::string_view r) {
    auto take = [&r](std::string_view open, char close, std::string_view& out) {
      if (r.substr(0, open.size()) != open) return false;
      const std::size_t end = r.find(close, open.size());
      if (end == std::string_view::npos) return false;
      out = r.substr(open.size(), end - open.size());
      r.remove_prefix(end + 1);
      return true;
    };
    std::string_view mono, thread, level, func;
    long long ns = 0;
    if (!take("[mono_ns=", ']', mono) || !parse_ll(mono, ns) || !take("[T0x", ']', thread) || !take("[", ']', level) ||
        !take(" ", ':', func)) {
      ++p_.noise;
      return;
    }
    if (!r.empty() && r.front() == ' ') r.remove_prefix(1);
    while (!r.empty() && (r.back() == ' ' || r.back() == '\t')) r.remove_suffix(1);
    if (r.substr(0, 9) == "[STRACE] ") return span(r.substr(9));
    if (r.substr(0, 15) == "[CLOCK_ANCHOR] ") {
      ++p_.anchors;
      return;
    }
    if (r.find("NEXT_LEVEL group reservation stalled") != std::string_view::npos) return stall(r);
    ++p_.other_records;
  }

  void torn(std::optional<long long> pid, const std::string& why) {
    ++p_.torn;
    const std::string rule = "a torn [STRACE] record (" + why + "): a span was lost";
    if (!pid) {
      if (!p_.torn_unknown) p_.torn_unknown = Problem{p_.lines, rule};
      return;
    }
    problem(*pid, rule);
  }
  void problem(long long pid, const std::string& rule) {
    if (!p_.problems.count(pid)) p_.problems[pid] = Problem{p_.lines, rule};
  }

  // The rule an identity attribute's value breaks, or "": values the runtime never writes, refused at
  // their line rather than imported into a scenario or an observed run the testbed's tools refuse.
  static std::string out_of_range(const Span& sp) {
    auto text = [&](Attr a) { return std::string(kAttrNames[a]) + "=" + std::to_string(sp.attr[a]); };
    if (sp.given(kRunId) && sp.attr[kRunId] == 0) return "run_id=0 (run ids count from 1; 0 is invalid)";
    if (sp.given(kRunId) && sp.attr[kRunId] < 0) return text(kRunId) + " is negative (run ids count from 1)";
    for (Attr a : {kTaskSlot, kWorkerId, kDispatchId})
      if (sp.given(a) && sp.attr[a] < 0) return text(a) + " is negative";
    if (sp.kind == SpanKind::kComplete && sp.given(kOutcome) && (sp.attr[kOutcome] < 0 || sp.attr[kOutcome] > 3))
      return text(kOutcome) + " is not an outcome (0 success, 1 task failure, 2 endpoint failure, 3 skipped)";
    if (sp.given(kPrepareOnly) && sp.attr[kPrepareOnly] != 0 && sp.attr[kPrepareOnly] != 1)
      return text(kPrepareOnly) + " is neither 0 nor 1";
    return "";
  }

  // The attributes a span's import reads, each its first value (as a map's emplace kept it). The others
  // are checked (each has a value) but not kept: memory is the line's whatever the attribute count (100 MB
  // of `a=1` attributes took ten times the line as tokens and a map, then bad_alloc; issue 53 F7).
  struct KnownAttrs {
    std::optional<std::string_view> clk, endpoint_kind, id[kAttrCount];
    void take(std::string_view key, std::string_view value) {
      std::optional<std::string_view>* slot = key == "clk" ? &clk : key == "endpoint_kind" ? &endpoint_kind : nullptr;
      for (std::uint8_t a = 0; !slot && a < kAttrCount; ++a)
        if (key == kAttrNames[a]) slot = &id[a];
      if (slot && !*slot) *slot = value;
    }
  };

  // The next space-separated word of `s` from `i` (runs of spaces skipped); empty at the end.
  static std::string_view next_token(std::string_view s, std::size_t& i) {
    while (i < s.size() && s[i] == ' ') ++i;
    const std::size_t from = i;
    while (i < s.size() && s[i] != ' ') ++i;
    return s.substr(from, i - from);
  }

  // `v=1 pid= tid= inv= hid= depth= name= ts= dur= [k=v ...]`
  void span(std::string_view s) {
    std::size_t at = 0;
    std::string_view tokens[9];
    std::size_t heads = 0;
    while (heads < std::size(tokens)) {
      const std::string_view t = next_token(s, at);
      if (t.empty()) break;
      tokens[heads++] = t;
    }
    auto value = [&](std::size_t i, std::string_view key) -> std::optional<std::string_view> {
      if (i >= heads || tokens[i].size() < key.size() + 1 || tokens[i].substr(0, key.size()) != key ||
          tokens[i][key.size()] != '=')
        return std::nullopt;
      return tokens[i].substr(key.size() + 1);
    };
    long long v = 0;
    const auto vtext = value(0, "v");
    if (!vtext || !parse_ll(*vtext, v)) return torn(std::nullopt, "no v=");
    if (v != 1) refuse("record version v=" + std::string(*vtext) + ": only v=1 is read");
    long long pid = 0, tid = 0, depth = 0, ts = 0, dur = 0;
    std::uint64_t inv = 0;
    const auto pidt = value(1, "pid");
    if (!pidt || !parse_ll(*pidt, pid)) return torn(std::nullopt, "no pid");
    const auto tidt = value(2, "tid"), invt = value(3, "inv"), hidt = value(4, "hid"), deptht = value(5, "depth"),
               namet = value(6, "name"), tst = value(7, "ts"), durt = value(8, "dur");
    if (!tidt || !parse_ll(*tidt, tid)) return torn(pid, "no tid");
    if (!invt || std::from_chars(invt->data(), invt->data() + invt->size(), inv).ptr != invt->data() + invt->size() ||
        invt->empty())
      return torn(pid, "no inv");
    if (!hidt || !is_hex(*hidt)) return torn(pid, "no hid");
    if (!deptht || !parse_ll(*deptht, depth)) return torn(pid, "no depth");
    if (!namet || namet->empty()) return torn(pid, "no name");
    if (!tst || !parse_ll(*tst, ts)) return torn(pid, "no ts");
    if (!durt || !parse_ll(*durt, dur)) return torn(pid, "no dur");
    KnownAttrs attrs;
    for (std::string_view t = next_token(s, at); !t.empty(); t = next_token(s, at)) {
      const std::size_t eq = t.find('=');
      if (eq == std::string_view::npos || eq == 0) return torn(pid, "attribute '" + std::string(t) + "' has no value");
      attrs.take(t.substr(0, eq), t.substr(eq + 1));
    }
    // Attributes: the clock domain first (a device clock never mixes with host times).
    if (attrs.clk == "dev") {
      ++p_.device_spans;
      return;
    }
    const std::string name = strace_decode(std::string(*namet));
    const std::size_t dot = name.find('.');
    std::optional<std::uint8_t> word;
    std::optional<SpanKind> kind;
    if (depth == 0 && dot != std::string::npos) {
      for (std::uint8_t w = 0; w < std::size(kLevelWords); ++w)
        if (name.compare(0, dot, kLevelWords[w]) == 0 && dot == std::strlen(kLevelWords[w])) word = w;
      for (std::uint8_t k = 0; k < std::size(kSpanNames); ++k)
        if (name.compare(dot + 1, std::string::npos, kSpanNames[k]) == 0) kind = static_cast<SpanKind>(k);
    }
    if (!word || !kind) {
      ++p_.other_spans;
      return;
    }
    if (*kind == SpanKind::kFrameSubmit) {  // nested in its dispatch: it says nothing the dispatch does not
      ++p_.frame_submits;
      return;
    }
    if (o_.pid && *o_.pid != pid) return;
    if (o_.level && *o_.level != kLevelWords[*word]) return;
    Span sp;
    sp.kind = *kind;
    sp.word = *word;
    sp.ts = ts;
    sp.dur = dur;
    sp.line = p_.lines;
    sp.endpoint = -1;
    for (std::uint8_t a = 0; a < kAttrCount; ++a) {
      if (!attrs.id[a]) continue;
      const std::string_view text = *attrs.id[a];
      if (!text.empty() && text.back() == '~') {
        problem(pid, "identity attribute " + std::string(kAttrNames[a]) + "=" + std::string(text) +
                         " is capped (ends in ~): its value is lost");
        return;
      }
      if (!parse_ll(text, sp.attr[a])) {
        problem(pid, "identity attribute " + std::string(kAttrNames[a]) + "=" + std::string(text) +
                         " is not an integer");
        return;
      }
      sp.has |= static_cast<std::uint8_t>(1u << a);
    }
    if (ts < 0 || dur < 0) {  // CLOCK_MONOTONIC nanoseconds and a span's length are never negative
      problem(pid, std::string(ts < 0 ? "ts=" + std::to_string(ts) : "dur=" + std::to_string(dur)) +
                       " is negative (nanoseconds of CLOCK_MONOTONIC)");
      return;
    }
    if (std::string rule = out_of_range(sp); !rule.empty()) {
      problem(pid, rule);
      return;
    }
    if (const auto e = attrs.endpoint_kind) {
      sp.endpoint = *e == "local_mailbox" ? 0 : *e == "remote_l3" ? 1 : -1;
      if (sp.endpoint < 0) {  // a worker kind the import would otherwise have to guess
        problem(pid, "endpoint_kind=" + std::string(*e) + " is neither local_mailbox nor remote_l3");
        return;
      }
    }
    if (sp.kind != SpanKind::kGraphBuild && sp.kind != SpanKind::kRetire) {
      const std::string h = strace_decode(std::string(*hidt));
      auto [it, inserted] = p_.hid_index.emplace(h, static_cast<std::uint32_t>(p_.hids.size()));
      if (inserted) p_.hids.push_back(h);
      sp.hid = it->second;
    }
    // What a task needs: submit and dispatch-like spans carry run_id and task_slot.
    const bool per_task = sp.kind != SpanKind::kGraphBuild && sp.kind != SpanKind::kRetire;
    if (per_task && !(sp.given(kRunId) && sp.given(kTaskSlot))) {
      problem(pid, std::string("identity attribute ") + (sp.given(kRunId) ? "task_slot" : "run_id") +
                       " missing from " + name);
      return;
    }
    if (sp.kind != SpanKind::kGraphBuild && sp.kind != SpanKind::kRetire && sp.kind != SpanKind::kSubmit) {
      for (Attr a : {kGroupIndex, kWorkerId, kDispatchId})
        if (!sp.given(a)) {
          problem(pid, std::string("identity attribute ") + kAttrNames[a] + " missing from " + name);
          return;
        }
      if (sp.kind == SpanKind::kComplete && !sp.given(kOutcome)) {
        problem(pid, "outcome missing from " + name);
        return;
      }
    }
    Candidate& c = p_.candidates[pid];
    if (c.spans++ == 0) c.first_line = p_.lines;
    c.words.insert(kLevelWords[*word]);
    if (sp.given(kRunId)) c.runs.insert(sp.attr[kRunId]);
    if (per_task) c.add_task(sp.attr[kRunId], sp.attr[kTaskSlot]);
    c.submits += sp.kind == SpanKind::kSubmit;
    c.dispatches += sp.kind == SpanKind::kDispatch;
    c.ends += sp.kind == SpanKind::kActivate || sp.kind == SpanKind::kComplete;
    sp.seq = p_.spans++;
    if (keep_ && pid == keep_pid_) keep_->add(sp);
  }

  const ImportOptions& o_;
  Parsed& p_;
  Process* keep_;
  long long keep_pid_;
  std::uint64_t max_lines_;
};

// ---------------------------------------------------------------------------------------------------
// The run of one process.
//
// Memory follows the tasks, in flat tables: a task is a TaskObs (no strings: its name, callable and
// kind are made when they are written), its dispatches are Attempts in one vector, sorted by task,
// member and dispatch ts. The spans are dropped once paired (a submit is kept: the task's identity),
// and the outputs are written as they are made (StreamedFile), never held whole.

// The dispatches of one member of a task, in dispatch order.
struct Member {
  int index;
  Attempt* first;
  Attempt* last;  // one past
  Attempt& front() const { return *first; }
  std::size_t size() const { return static_cast<std::size_t>(last - first); }
  Attempt* begin() const { return first; }
  Attempt* end() const { return last; }
};

// A task's dispatched members in member order: a view of its attempts.
class Members {
 public:
  Members(Attempt* first, Attempt* last) : first_(first), last_(last) {}
  struct Iterator {
    Attempt* at;
    Attempt* last;
    Member operator*() const {
      Attempt* q = at;
      while (q != last && q->member == at->member) ++q;
      return {at->member, at, q};
    }
    Iterator& operator++() {
      const int m = at->member;
      while (at != last && at->member == m) ++at;
      return *this;
    }
    bool operator!=(const Iterator& o) const { return at != o.at; }
  };
  Iterator begin() const { return {first_, last_}; }
  Iterator end() const { return {last_, last_}; }
  bool empty() const { return first_ == last_; }
  // The first dispatch of member m, or nullptr.
  // The first dispatch of member m, or nullptr (the attempts are sorted by member: a binary search, so a
  // group of 65,536 members costs no more than its size times a logarithm).
  Attempt* find(int m) const {
    const auto [first, last] = all_of(m);
    return first != last ? first : nullptr;
  }
  // Every dispatch of member m: [first, last).
  std::pair<Attempt*, Attempt*> all_of(int m) const {
    return std::equal_range(first_, last_, m, [](const auto& x, const auto& y) { return member_of(x) < member_of(y); });
  }

 private:
  static int member_of(const Attempt& a) { return a.member; }
  static int member_of(int m) { return m; }

 public:

 private:
  Attempt* first_;
  Attempt* last_;
};

enum class Kind : std::uint8_t { kNone, kSingle, kGroup, kSub, kSubGroup };
const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kSingle: return "single";
    case Kind::kGroup: return "group";
    case Kind::kSub: return "sub";
    case Kind::kSubGroup: return "sub_group";
    case Kind::kNone: break;
  }
  return "";
}
const char* op_name(Kind k) {
  return k == Kind::kSingle ? "submit_next_level"
         : k == Kind::kGroup ? "submit_next_level_group"
         : k == Kind::kSub   ? "submit_sub"
                             : "submit_sub_group";
}

// The namespaces of callables; a hid run in two of them is a callable per namespace.
constexpr const char* kNamespaces[] = {"LOCAL_CHIP", "REMOTE", "LOCAL_PYTHON"};
std::uint8_t ns_index(const std::string& ns) {
  for (std::uint8_t i = 0; i < std::size(kNamespaces); ++i)
    if (ns == kNamespaces[i]) return i;
  return 2;
}

constexpr std::uint32_t kNoSubmit = 0xffffffffu;

struct TaskObs {
  long long run = 0, slot = 0;
  std::uint32_t submit = kNoSubmit;    // index into Builder::submits_
  std::uint32_t first = 0, count = 0;  // its attempts: Builder::attempts_[first, first + count)
  std::uint32_t members = 0;           // distinct members dispatched
  std::uint32_t hid = 0;               // its callable is h<hid>
  std::uint8_t renamed = 0;            // or, when not 0, h<hid>.<kNamespaces[renamed - 1]>
  Kind kind = Kind::kNone;
  bool left_out = false;
  std::uint8_t fate = 0;  // in the scenario's expect: 0 unknown, 1 COMPLETED, 2 FAILED
  double at_s = 0;
};

std::string num(double v) {
  return format_number(v);
}

// A string as nlohmann's dump writes it.
std::string jstr(const std::string& s) {
  return ojson(s).dump();
}

// `text` with every line after the first indented by `pad` more spaces: an element dumped alone with
// dump(2), as it stands inside its parent's dump(2). A JSON text has no raw newline inside a string.
std::string indented(const std::string& text, std::size_t pad) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  for (char c : text) {
    out += c;
    if (c == '\n') out.append(pad, ' ');
  }
  return out;
}

class Builder {
 public:
  Builder(const ImportOptions& o, Parsed& p, Process process = {}) : o_(o), p_(p), process_(std::move(process)) {}

  // Everything that can refuse the log, before anything is written.
  void check_log() {
    choose();
    if (auto it = p_.problems.find(pid_); it != p_.problems.end()) refuse(it->second.line, it->second.rule);
    const Candidate& chosen = p_.candidates.at(pid_);
    for (long long run : o_.runs)
      if (!chosen.runs.count(run)) {
        std::string runs;
        for (long long r : chosen.runs) runs += (runs.empty() ? "" : ", ") + std::to_string(r);
        throw ImportError(o_.log + ": --run " + std::to_string(run) + ": no span of pid " + std::to_string(pid_) +
                          " has run_id " + std::to_string(run) + " (its runs: " + runs + ")");
      }
    if (p_.torn_unknown)
      refuse(p_.torn_unknown->line, p_.torn_unknown->rule + " (its pid cannot be read, so it may be this process's)");
    pair();
    check();
    model();
    if (!o_.deps_file.empty()) join_deps();
  }

  // The scenario, the observed run folder and the report into the temporary folder `dir`, each file
  // as it is made; returns the readable summary.
  std::string write(const fs::path& dir);
  const std::string& scenario_name() const { return scenario_name_; }
  long long pid() const { return pid_; }

  // The process to import: the one there is, or the one --pid / --level names (refused otherwise).
  void choose() {
    std::vector<long long> pids;
    for (const auto& [pid, c] : p_.candidates) pids.push_back(pid);
    auto describe = [&](long long pid) {
      const Candidate& c = p_.candidates.at(pid);
      std::string words;
      for (const std::string& w : c.words) words += (words.empty() ? "" : "/") + w;
      return "pid " + std::to_string(pid) + " (level " + words + ", " + std::to_string(c.runs.size()) + " runs, " +
             std::to_string(c.task_count()) + " tasks)";
    };
    if (pids.empty()) {  // every span of the process refused: say why (the first in the file), not "none"
      const Problem* first = nullptr;
      for (const auto& [pid, problem] : p_.problems)
        if ((!o_.pid || pid == *o_.pid) && (!first || problem.line < first->line)) first = &problem;
      if (first) refuse(first->line, first->rule);
    }
    if (pids.empty()) {
      std::string what = o_.pid ? " of pid " + std::to_string(*o_.pid) : o_.level ? " at level " + *o_.level : "";
      refuse(p_.lines, "no scheduler span" + what +
                           " (<level>.submit, .dispatch, .complete, ... at depth 0): nothing to import");
    }
    if (pids.size() > 1) {
      // The first few by pid, and how many there are: a log of 20,000 processes made one 0.8 MB line.
      constexpr std::size_t kShown = 5;
      std::string list;
      for (std::size_t i = 0; i < pids.size() && i < kShown; ++i) list += (list.empty() ? "" : "; ") + describe(pids[i]);
      if (pids.size() > kShown) list += "; and " + std::to_string(pids.size() - kShown) + " more";
      refuse(p_.candidates.at(pids[1]).first_line, "several scheduler processes and no choice: give --pid N or --level WORD (" +
                                                       std::to_string(pids.size()) + " processes: " + list + ")");
    }
    pid_ = pids[0];
    const Candidate& c = p_.candidates.at(pid_);
    for (const std::string& w : c.words) words_ += (words_.empty() ? "" : "/") + w;
    chosen_ = describe(pid_);
  }

 private:
  [[noreturn]] void refuse(std::uint64_t line, const std::string& rule) const {
    throw ImportError(o_.log + ":" + std::to_string(line) + ": " + rule);
  }
  // A break of the runtime-log contract the shared spec refuses (a single elsewhere, two members at once
  // on one worker, a completion before its dispatch): refused unless --accept-anomalies, which imports it
  // named in import-report.json `anomalies`.
  void refuse_unless_accepted(std::uint64_t line, const std::string& rule) const {
    if (!o_.accept_anomalies)
      refuse(line, rule + "; give --accept-anomalies to import it anyway, named in import-report.json anomalies");
  }

  bool wanted(long long run) const {
    return o_.runs.empty() || std::find(o_.runs.begin(), o_.runs.end(), run) != o_.runs.end();
  }

  const Span* submit_of(const TaskObs& t) const { return t.submit == kNoSubmit ? nullptr : &submits_[t.submit]; }
  Members members(const TaskObs& t) const {
    Attempt* first = const_cast<Attempt*>(attempts_.data()) + t.first;
    return {first, first + t.count};
  }
  static std::string name_of(const TaskObs& t) { return "r" + std::to_string(t.run) + ".t" + std::to_string(t.slot); }
  std::string callable_of(const TaskObs& t) const {
    std::string c = "h" + p_.hids[t.hid];
    if (t.renamed) c += std::string(".") + kNamespaces[t.renamed - 1];
    return c;
  }
  // A single's worker in the scenario: where it ran (its first dispatch), or, never dispatched, the one its
  // submit named (they differ only in a `single_elsewhere` anomaly).
  long long single_target(const TaskObs& t) const {
    const Attempt* a = members(t).find(0);
    return a ? a->worker : submit_of(t)->attr[kWorkerId];
  }
  bool is_group(const TaskObs& t) const { return t.kind == Kind::kGroup || t.kind == Kind::kSubGroup; }
  // The member indices of an imported task: a single's 0, a group's 0..size-1, a SUB task's as dispatched.
  std::vector<int> member_list(const TaskObs& t) const {
    std::vector<int> list;
    if (t.kind == Kind::kSingle) return {0};
    if (t.kind == Kind::kGroup) {
      for (long long m = 0; m < submit_of(t)->attr[kGroupSize]; ++m) list.push_back(static_cast<int>(m));
      return list;
    }
    for (const Member& m : members(t)) list.push_back(m.index);
    return list;
  }

  // A rule broken while the spans are paired: the one earliest in the file is refused (as a reading in
  // file order would), after the pairing. `seq` orders the spans, `rank` the rules of one span.
  void refuse_first(std::uint64_t seq, int rank, std::uint64_t line, std::string rule) {
    if (!first_refusal_ || std::tie(seq, rank) < std::tie(first_refusal_->seq, first_refusal_->rank))
      first_refusal_ = Refusal{seq, rank, line, std::move(rule)};
  }

  using MemberKey = std::tuple<long long, long long, long long, long long, long long>;  // run slot gi worker did

  // Spans into tasks and attempts; the spans are dropped after. The tasks are the chosen process's
  // (run_id, task_slot) pairs, sorted and unique since the reading (its Candidate), of the runs
  // imported; the submits and the attempts are the second reading's vectors, kept in place.
  void pair() {
    Process pr = std::move(process_);
    {
      const std::vector<std::pair<long long, long long>>& keys = p_.candidates.at(pid_).tasks;
      std::size_t n = 0;
      for (const auto& k : keys) n += wanted(k.first);
      tasks_.reserve(n);
      for (const auto& [run, slot] : keys)
        if (wanted(run)) {
          TaskObs t;
          t.run = run, t.slot = slot;
          tasks_.push_back(t);
        }
    }
    const auto task = [&](long long run, long long slot) {
      return static_cast<std::uint32_t>(std::lower_bound(tasks_.begin(), tasks_.end(), std::make_pair(run, slot),
                                                         [](const TaskObs& x, const std::pair<long long, long long>& k) {
                                                           return std::tie(x.run, x.slot) < std::tie(k.first, k.second);
                                                         }) -
                                        tasks_.begin());
    };
    earliest_ = std::numeric_limits<long long>::max();
    const auto early = [&](const Span& s) {
      if (wanted(s.given(kRunId) ? s.attr[kRunId] : 0) || !s.given(kRunId)) earliest_ = std::min(earliest_, s.ts);
    };
    for (const Span& s : pr.submits) early(s);
    for (const Span& s : pr.ends) early(s);
    for (std::size_t i = 0; i < pr.attempts.size(); ++i)
      if (wanted(pr.attempt_keys[i].first)) earliest_ = std::min(earliest_, pr.attempts[i].dispatch_ts);
    for (const Span& s : pr.others) {
      early(s);
      if (s.kind == SpanKind::kGraphBuild) {
        if (!s.given(kRunId)) {
          note("graph_build at line " + std::to_string(s.line) + " has no run_id: ignored");
          continue;
        }
        if (!wanted(s.attr[kRunId])) continue;
        auto [it, inserted] = graph_build_.emplace(s.attr[kRunId], s.ts);
        if (!inserted) it->second = std::min(it->second, s.ts);
      } else if (s.kind == SpanKind::kRetire) {
        ++retirements_;
      }
    }
    // Submits, in file order: the first of a task is its own.
    submits_ = std::move(pr.submits);
    std::size_t kept = 0;
    for (std::size_t i = 0; i < submits_.size(); ++i) {
      const Span& s = submits_[i];
      if (!wanted(s.attr[kRunId])) continue;
      TaskObs& t = tasks_[task(s.attr[kRunId], s.attr[kTaskSlot])];
      if (t.submit != kNoSubmit) {
        refuse_first(s.seq, 0, s.line,
                     "two submits for one task (run_id " + std::to_string(t.run) + ", task_slot " +
                         std::to_string(t.slot) + "; the first at line " + std::to_string(submits_[t.submit].line) +
                         ")");
        continue;
      }
      t.submit = static_cast<std::uint32_t>(kept);
      submits_[kept++] = s;
    }
    submits_.resize(kept);
    // Dispatches.
    for (const auto& [i, value] : pr.bad_group_index)
      if (wanted(pr.attempt_keys[i].first))
        refuse_first(pr.attempts[i].seq, 1, pr.attempts[i].line,
                     "group_index " + std::to_string(value) + " outside [0, group_size)");
    attempts_ = std::move(pr.attempts);
    kept = 0;
    for (std::size_t i = 0; i < attempts_.size(); ++i) {
      const auto [run, slot] = pr.attempt_keys[i];
      if (!wanted(run)) continue;
      Attempt a = attempts_[i];
      a.task = task(run, slot);
      attempts_[kept++] = a;
    }
    attempts_.resize(kept);
    std::vector<std::pair<long long, long long>>().swap(pr.attempt_keys);
    // Attempts by task, member, then dispatch ts (ties in file order).
    std::stable_sort(attempts_.begin(), attempts_.end(), [](const Attempt& a, const Attempt& b) {
      return std::tie(a.task, a.member, a.dispatch_ts) < std::tie(b.task, b.member, b.dispatch_ts);
    });
    for (std::size_t i = 0; i < attempts_.size();) {
      TaskObs& t = tasks_[attempts_[i].task];
      t.first = static_cast<std::uint32_t>(i);
      int member = attempts_[i].member;
      t.members = 1;
      for (; i < attempts_.size() && attempts_[i].task == attempts_[t.first].task; ++i) {
        if (attempts_[i].member != member) member = attempts_[i].member, ++t.members;
        ++t.count;
      }
    }
    // A member dispatched twice with one identity (worker and dispatch_id), no end told between: at the
    // second of the two in the file.
    for (const TaskObs& t : tasks_)
      for (const Member& m : members(t))
        for (const Attempt* a = m.first; a != m.last; ++a)
          for (const Attempt* b = a + 1; b != m.last; ++b) {
            if (a->worker != b->worker || a->dispatch_id != b->dispatch_id || a->bad_index || b->bad_index) continue;
            const Attempt& one = a->seq < b->seq ? *a : *b;
            const Attempt& two = a->seq < b->seq ? *b : *a;
            refuse_first(two.seq, 0, two.line,
                         "a member dispatched twice without an end between (" + member_text(t, m.index) +
                             " on worker " + std::to_string(two.worker) + " with dispatch_id " +
                             std::to_string(two.dispatch_id) + ", first at line " + std::to_string(one.line) + ")");
          }
    if (first_refusal_) refuse(first_refusal_->line, first_refusal_->rule);
    for (const Span& end : pr.ends) {
      const Span* s = &end;
      if (!wanted(s->attr[kRunId])) continue;
      const TaskObs& t = tasks_[task(s->attr[kRunId], s->attr[kTaskSlot])];
      Attempt* found = nullptr;
      const long long gi = s->attr[kGroupIndex];
      if (gi >= -1 && gi <= (1LL << 30)) {  // a member index an attempt can hold
        const auto [first, last] = members(t).all_of(static_cast<int>(gi));
        for (Attempt* a = first; a != last; ++a)
          if (!a->bad_index && a->worker == s->attr[kWorkerId] && a->dispatch_id == s->attr[kDispatchId]) found = a;
      }
      const std::string who = member_text(t, s->attr[kGroupIndex]) + " on worker " +
                              std::to_string(s->attr[kWorkerId]) + " (dispatch_id " +
                              std::to_string(s->attr[kDispatchId]) + ")";
      if (s->kind == SpanKind::kActivate) {
        if (!found) refuse(s->line, "an activate with no dispatch before it: " + who);
        if (found->activated) refuse(s->line, "a second activate of one dispatch: " + who);
        found->activated = true;
        found->activate_ts = s->ts;
        continue;
      }
      if (!found) refuse(s->line, "a completion before its dispatch (no dispatch of " + who + ")");
      Attempt& a = *found;
      if (a.completed)
        refuse(s->line, "a completion before its dispatch (" + who + " completed already at line " +
                            std::to_string(a.complete_line) + ")");
      // A complete ts before its dispatch's (or activate's) is an anomaly, named in check().
      a.completed = true;
      a.complete_ts = s->ts;
      a.complete_dur = s->dur;
      a.complete_line = s->line;
      a.outcome = s->attr[kOutcome];
    }
  }

  static std::string member_text(const TaskObs& t, long long gi) {
    return "run_id " + std::to_string(t.run) + " task_slot " + std::to_string(t.slot) + " group_index " +
           std::to_string(gi);
  }

  bool is_sub(const TaskObs& t) const { return t.submit == kNoSubmit && graph_build_.count(t.run); }

  void check() {
    // Per member: staging, completions, one dispatch at a time.
    for (const TaskObs& t : tasks_) {
      const Span* sub = submit_of(t);
      if (sub) {
        const long long gi = sub->given(kGroupIndex) ? sub->attr[kGroupIndex] : 0;
        const long long size = sub->given(kGroupSize) ? sub->attr[kGroupSize] : 1;
        if (size < 1 || size > 65536)
          refuse(sub->line, "group_size " + std::to_string(size) + " of run_id " + std::to_string(t.run) +
                                " task_slot " + std::to_string(t.slot) + " is not in [1, 65536]");
        if (gi != 0 && gi != -1)
          refuse(sub->line, "group_index " + std::to_string(gi) + " outside [0, group_size) on a submit (0 for a single, -1 for a group)");
        if (gi == 0 && !sub->given(kWorkerId))
          refuse(sub->line, "identity attribute worker_id missing from the submit of a single (run_id " +
                                std::to_string(t.run) + " task_slot " + std::to_string(t.slot) + ")");
      }
      for (const Member& member : members(t)) {
        const int m = member.index;
        for (const Attempt* p = member.first; p != member.last; ++p) {
          const Attempt& a = *p;
          if (p != member.first) {
            const Attempt& prev = *(p - 1);
            if (!prev.completed || prev.complete_ts > a.dispatch_ts)
              refuse(a.line, "a member dispatched twice without an end between (" + member_text(t, m) +
                                 ", first at line " + std::to_string(prev.line) + ")");
          }
          if (sub) {
            const long long gi = sub->given(kGroupIndex) ? sub->attr[kGroupIndex] : 0;
            const long long size = gi == 0 ? 1 : sub->given(kGroupSize) ? sub->attr[kGroupSize] : 1;
            if (m < 0 || m >= size)
              refuse(a.line, "group_index " + std::to_string(m) + " outside [0, group_size) (group_size " +
                                 std::to_string(size) + ", run_id " + std::to_string(t.run) + " task_slot " +
                                 std::to_string(t.slot) + ")");
            if (gi == 0 && a.worker != sub->attr[kWorkerId] && p == member.first) {
              refuse_unless_accepted(a.line, "a single dispatched to another worker than its submit named (worker " +
                                                 std::to_string(a.worker) + ", the submit at line " +
                                                 std::to_string(sub->line) + " named " +
                                                 std::to_string(sub->attr[kWorkerId]) + ")");
              anomaly("single_elsewhere", t, {sub->line, a.line},
                      "a single dispatched to worker " + std::to_string(a.worker) + ", its submit named worker " +
                          std::to_string(sub->attr[kWorkerId]),
                      "the op targets worker " + std::to_string(a.worker) + ", where it ran");
            }
          } else if (m < 0) {
            refuse(a.line, "group_index " + std::to_string(m) + " outside [0, group_size) on a dispatch");
          }
          if (a.staged && !a.activated)
            refuse(a.line, "prepare_only=1 with no activate (" + member_text(t, m) + " on worker " +
                               std::to_string(a.worker) + ")");
          if (a.completed && a.complete_ts < a.start()) {
            refuse_unless_accepted(a.complete_line,
                                   "a completion before its dispatch (" + member_text(t, m) + " on worker " +
                                       std::to_string(a.worker) + ": complete ts " + std::to_string(a.complete_ts) +
                                       " < " + (a.activated ? "activate" : "dispatch") + " ts " +
                                       std::to_string(a.start()) + ", line " + std::to_string(a.line) + ")");
            anomaly("completion_before_dispatch", t, {a.line, a.complete_line},
                    member_text(t, m) + " on worker " + std::to_string(a.worker) + ": complete ts " +
                        std::to_string(a.complete_ts) + " < " + (a.activated ? "activate" : "dispatch") + " ts " +
                        std::to_string(a.start()),
                    "duration 0: the completion is taken at the member's start, in the scenario and in observed/");
            const_cast<Attempt&>(a).complete_ts = a.start();
          }
          if (!a.completed && !o_.allow_truncated)
            refuse(a.line, "a dispatch without a completion (" + member_text(t, m) + " on worker " +
                               std::to_string(a.worker) + "); give --allow-truncated to import a log cut short");
        }
      }
    }
    busy_ = busy_per_worker();
    for (const auto& [w, list] : busy_) name_overlaps(w, list);
    name_partial_launches();
    BusyMap().swap(busy_);
  }

  // Per worker (SUB or not, id): each dispatch as an interval (a staged one from its activate), by start.
  struct Busy {
    long long start, end;
    const Attempt* a;
    long long reach = 0;  // the latest end of this one and those before it on the worker
  };
  using BusyMap = std::map<std::pair<bool, long long>, std::vector<Busy>>;
  BusyMap busy_per_worker() const {
    BusyMap per_worker;
    for (const TaskObs& t : tasks_) {
      if (t.submit == kNoSubmit && !is_sub(t)) continue;  // orphans: reported, not imported
      for (const Attempt* a = members(t).begin().at; a != members(t).end().at; ++a)
        per_worker[{is_sub(t), a->worker}].push_back({a->start(), a->end_or_max(), a});
    }
    for (auto& [w, list] : per_worker) {
      std::stable_sort(list.begin(), list.end(), [](const Busy& x, const Busy& y) { return x.start < y.start; });
      long long reach = std::numeric_limits<long long>::min();
      for (Busy& b : list) b.reach = reach = std::max(reach, b.end);
    }
    return per_worker;
  }

  // Two members at once on one worker: each dispatch that starts before the latest-ending one before it
  // has ended. The replay runs one member at a time per worker, so it waits there.
  void name_overlaps(const std::pair<bool, long long>& w, const std::vector<Busy>& list) {
    const std::string worker = (w.first ? "SUB worker " : "worker ") + std::to_string(w.second);
    std::size_t longest = 0;  // the one before i that ends last
    for (std::size_t i = 1; i < list.size(); ++i) {
      const Busy& before = list[longest];
      if (list[i].start < before.end) {
        refuse_unless_accepted(list[i].a->line, "two overlapping dispatches on one worker (" + worker +
                                                    ": this one starts before the one at line " +
                                                    std::to_string(before.a->line) + " ends)");
        const TaskObs& t = tasks_[list[i].a->task];
        const std::string other = label_of(tasks_[before.a->task], before.a->member);
        anomaly("worker_overlap", t, {before.a->line, list[i].a->line},
                worker + " runs " + label_of(t, list[i].a->member) + " from ts " + std::to_string(list[i].start) +
                    " while " + other + " still runs there (" +
                    (before.a->completed ? "until ts " + std::to_string(before.end) : std::string("no end logged")) + ")",
                "the replay runs one member at a time on " + worker + ": " + label_of(t, list[i].a->member) +
                    " starts there once " + other + " has ended");
      }
      if (list[i].end > before.end) longest = i;
    }
  }

  // A group member dispatched while another of the group's targets still runs another task: the
  // contract launches a group only when every target is idle, all members at once. Per target, only the
  // other tasks' dispatches there that overlap the window of the group's member starts are looked at, so
  // a group costs its size times a logarithm unless it has anomalies.
  void name_partial_launches() {
    constexpr std::size_t kTargetsNamed = 10;  // per member; the rest are counted
    for (const TaskObs& t : tasks_) {
      if (!submit_of(t) || submit_of(t)->attr[kGroupIndex] != -1) continue;  // NEXT_LEVEL groups (kinds come later)
      std::vector<const Attempt*> firsts;  // by start
      for (const Member& m : members(t)) firsts.push_back(&m.front());
      if (firsts.size() < 2) continue;
      std::stable_sort(firsts.begin(), firsts.end(), [](const Attempt* x, const Attempt* y) { return x->start() < y->start(); });
      struct Early {
        std::string running;
        std::vector<std::uint64_t> lines;
        std::size_t targets = 0;
      };
      std::map<const Attempt*, Early> early;
      for (const Attempt* target : firsts)
        for_other_tasks_on(target->worker, firsts.front()->start(), firsts.back()->start(), t, [&](const Busy& b) {
          const auto from = std::lower_bound(firsts.begin(), firsts.end(), b.start,
                                             [](const Attempt* x, long long ts) { return x->start() < ts; });
          for (auto a = from; a != firsts.end() && (*a)->start() < b.end; ++a) {
            if (*a == target) continue;
            Early& e = early[*a];
            if (e.targets++ >= kTargetsNamed) continue;
            e.running += (e.running.empty() ? "" : ", ") + std::string("worker ") + std::to_string(target->worker) +
                         " still runs " + label_of(tasks_[b.a->task], b.a->member);
            e.lines.push_back(b.a->line);
          }
        });
      for (const Attempt* a : firsts) {
        auto it = early.find(a);
        if (it == early.end()) continue;
        Early& e = it->second;
        if (e.targets > kTargetsNamed) e.running += ", and " + std::to_string(e.targets - kTargetsNamed) + " more";
        e.lines.push_back(a->line);
        anomaly("partial_group_launch", t, e.lines,
                label_of(t, a->member) + " dispatched on worker " + std::to_string(a->worker) + " at ts " +
                    std::to_string(a->start()) + " while " + e.running,
                "the replay launches the group as the contract says: every member at once, once all its targets "
                "are idle, so this member starts later there than it did here");
      }
    }
  }

  // Calls f on each dispatch on NEXT_LEVEL worker w of a task other than t that started at or before `hi`
  // and had not ended at `lo` (nothing runs past its end: `reach` bounds the walk back).
  template <class F>
  void for_other_tasks_on(long long w, long long lo, long long hi, const TaskObs& t, F f) const {
    auto it = busy_.find({false, w});
    if (it == busy_.end()) return;
    const std::vector<Busy>& list = it->second;
    auto at = std::upper_bound(list.begin(), list.end(), hi, [](long long x, const Busy& b) { return x < b.start; });
    while (at != list.begin() && (at - 1)->reach > lo) {
      --at;
      if (at->end > lo && &tasks_[at->a->task] != &t) f(*at);
    }
  }

  std::string label_of(const TaskObs& t, int member) const {
    const bool group = submit_of(t) ? submit_of(t)->attr[kGroupIndex] == -1 : t.members > 1;
    return name_of(t) + (group ? "[" + std::to_string(member) + "]" : "");
  }

  void anomaly(const char* kind, const TaskObs& t, std::vector<std::uint64_t> lines, std::string what,
               std::string scenario) {
    std::sort(lines.begin(), lines.end());
    anomalies_.push_back({kind, name_of(t), std::move(lines), std::move(what), std::move(scenario)});
  }

  void note(const std::string& text) { assumptions_.push_back(text); }

  // Every time the import writes is t0 or later (a graph_build opens its run, so a span before the
  // earliest one is a log from elsewhere or a clock that went back) and within the testbed's limit of
  // 2^32 s from t0; worker ids fit a scenario's worker tables.
  void check_times() const {
    const auto limit_ns = static_cast<long long>(kMaxTimeS) * 1'000'000'000LL;
    auto at = [&](long long ts, std::uint64_t line, const char* what) {
      if (ts < t0_)
        refuse(line, std::string(what) + " at ts " + std::to_string(ts) + ", before the time origin t0 (ts " +
                         std::to_string(t0_) + ", the earliest graph_build)");
      if (ts - t0_ > limit_ns)
        refuse(line, std::string(what) + " at ts " + std::to_string(ts) + ", more than 2^32 s after the time origin t0 (ts " +
                         std::to_string(t0_) + ")");
    };
    for (const TaskObs& t : tasks_) {
      if (t.submit == kNoSubmit && !is_sub(t)) continue;  // orphans: reported, never written
      if (const Span* sub = submit_of(t)) at(sub->ts, sub->line, "a submit");
      for (const Attempt* a = members(t).begin().at; a != members(t).end().at; ++a) {
        at(a->dispatch_ts, a->line, "a dispatch");
        if (a->activated) at(a->activate_ts, a->line, "the activate of the dispatch");
        if (a->completed) at(a->complete_ts, a->complete_line, "a completion");
        if (is_sub(t) && a->worker >= static_cast<long long>(kMaxWorkers))
          refuse(a->line, "SUB worker_id=" + std::to_string(a->worker) + ": a SUB pool of more than " +
                              std::to_string(kMaxWorkers) + " workers (the testbed's limit)");
      }
    }
    // A dispatch span's dur is the scheduler's cost per member (--calibrate-overheads): one that ends
    // past the limit is refused at its line, not turned into a dispatch cost `run` then refuses. Every
    // dispatch span imported counts, a retry's too (the calibration reads them all).
    for (const Attempt& a : attempts_)
      if (a.dispatch_dur > limit_ns - std::clamp(a.dispatch_ts - t0_, 0LL, limit_ns))
        refuse(a.line, "a dispatch span of dur=" + std::to_string(a.dispatch_dur) + " (ns) at ts " +
                           std::to_string(a.dispatch_ts) + " ends more than 2^32 s after the time origin t0 (ts " +
                           std::to_string(t0_) + ")");
  }

  // Workers, kinds, callables, what is left out.
  void model() {
    if (graph_build_.empty()) {
      t0_ = earliest_ == std::numeric_limits<long long>::max() ? 0 : earliest_;
      note("no graph_build span: time origin t0 is the earliest scheduler span (ts " + std::to_string(t0_) +
           "), and no task without a submit can be told SUB");
    } else {
      t0_ = graph_build_.begin()->second;
      for (const auto& [run, ts] : graph_build_) t0_ = std::min(t0_, ts);
    }
    check_times();
    // Workers: NEXT_LEVEL ids on NEXT_LEVEL dispatches (and singles' submit targets), SUB pool size.
    for (const TaskObs& t : tasks_) {
      if (const Span* sub = submit_of(t)) {
        if (sub->given(kWorkerId) && sub->attr[kGroupIndex] == 0) {
          nl_.try_emplace(sub->attr[kWorkerId], -1);
          if (nl_.size() > kMaxWorkers)
            refuse(sub->line, "worker_id=" + std::to_string(sub->attr[kWorkerId]) + ": more than " +
                                  std::to_string(kMaxWorkers) + " NEXT_LEVEL workers (the testbed's limit)");
        }
        for (const Attempt* a = members(t).begin().at; a != members(t).end().at; ++a) {
          int& e = nl_.try_emplace(a->worker, -1).first->second;
          if (a->endpoint >= 0) e = a->endpoint;
          if (nl_.size() > kMaxWorkers)
            refuse(a->line, "worker_id=" + std::to_string(a->worker) + ": more than " + std::to_string(kMaxWorkers) +
                                " NEXT_LEVEL workers (the testbed's limit)");
        }
      } else if (is_sub(t)) {
        for (const Attempt* a = members(t).begin().at; a != members(t).end().at; ++a)
          sub_pool_ = std::max(sub_pool_, a->worker + 1);
      }
    }
    const bool node = words_ == "node" || words_ == "l3" || words_ == "host";
    for (const auto& [w, e] : nl_)
      if (e < 0)
        note("worker " + std::to_string(w) + " is named by a submit but never dispatched to: its kind (" +
             (node ? "local_chip" : "local_worker") + ") is assumed");
    note("workers are registered in ascending id order: the runtime does not log its registration order");
    note("scheduler.policy is 'seed' (the runtime version the log comes from is not logged; the default of the testbed)");

    for (TaskObs& t : tasks_) {
      if (const Span* sub = submit_of(t)) {
        t.hid = sub->hid;
        const bool group = sub->attr[kGroupIndex] == -1;
        t.kind = group ? Kind::kGroup : Kind::kSingle;
        if (group) {
          const long long size = sub->attr[kGroupSize];
          const Members ms = members(t);
          std::vector<long long> missing;
          for (long long m = 0; m < size; ++m)
            if (!ms.find(static_cast<int>(m))) missing.push_back(m);
          if (!missing.empty()) {
            t.left_out = true;
            std::string list;
            for (long long m : missing) list += (list.empty() ? "" : ", ") + std::to_string(m);
            left_out_.push_back({{"task", name_of(t)},
                                 {"line", sub->line},
                                 {"why", "group never dispatched member(s) " + list + ": its targets are unknown"}});
          }
        }
      } else if (is_sub(t)) {
        t.kind = t.members > 1 ? Kind::kSubGroup : Kind::kSub;
        t.hid = attempts_[t.first].hid;
      } else {
        t.left_out = true;
        left_out_.push_back({{"task", name_of(t)},
                             {"line", attempts_[t.first].line},
                             {"why", "dispatches with no submit, and run " + std::to_string(t.run) +
                                         " has no graph_build in the log: SUB cannot be told from a lost submit"}});
      }
    }
  }

  std::string worker_kind(long long w) const {
    const int e = nl_.at(w);
    const bool node = words_ == "node" || words_ == "l3" || words_ == "host";
    if (e == 1) return "remote";
    return node ? "local_chip" : "local_worker";
  }
  static std::string ns_of_kind(const std::string& k) {
    return k == "remote" ? "REMOTE" : k == "local_chip" ? "LOCAL_CHIP" : "LOCAL_PYTHON";
  }

  double rel_s(long long ts) const { return static_cast<double>(ts - t0_) / 1e9; }

  void write_scenario(const fs::path& file);
  void write_observed(const fs::path& dir);
  ojson anomalies_json();
  std::string anomaly_counts() const;

  // --deps FILE: the args of each NEXT_LEVEL submit and the buffers, from a trace the Python front end
  // recorded of the same orchestration.
  void join_deps();
  std::unordered_map<const TaskObs*, ojson> joined_args_;  // task -> args (single) or args_list (group)
  ojson joined_buffers_;
  std::size_t joined_ = 0, deps_sub_ops_ = 0;

  // --infer-deps: a guessed edge P -> T, and how long after P's end T started.
  struct Edge {
    const TaskObs* producer;
    const TaskObs* consumer;
    long long gap_ns;
  };
  std::vector<Edge> infer_edges(long long gap_ns) const;

  struct Refusal {
    std::uint64_t seq;
    int rank;
    std::uint64_t line;
    std::string rule;
  };

  const ImportOptions& o_;
  Parsed& p_;
  Process process_;  // the second reading's spans, until pair() takes them
  long long pid_ = 0;
  std::string words_, chosen_, scenario_name_;
  std::map<long long, long long> graph_build_;  // run -> earliest ts
  std::vector<Span> submits_;                   // the NEXT_LEVEL tasks' submit spans
  std::vector<TaskObs> tasks_;                  // in (run_id, task_slot) order
  std::vector<Attempt> attempts_;               // by task, member, dispatch ts
  std::optional<Refusal> first_refusal_;
  // Where the run breaks the contract or the model's assumptions (import-report.json `anomalies`).
  struct Anomaly {
    std::string kind, task;
    std::vector<std::uint64_t> lines;
    std::string what, scenario;
  };
  std::vector<Anomaly> anomalies_;
  BusyMap busy_;  // made by check(), dropped after the anomalies are named
  std::uint64_t retirements_ = 0;
  long long earliest_ = 0;  // the earliest ts of a scheduler span of the runs imported
  long long t0_ = 0;
  std::map<long long, int> nl_;  // NEXT_LEVEL id -> endpoint (0 local, 1 remote, -1 unknown)
  long long sub_pool_ = 0;
  std::vector<std::string> assumptions_;
  std::vector<ojson> left_out_;
  // Made while the scenario is written, read by the observed run and the report.
  std::map<std::string, std::vector<double>> observed_;  // callable -> observed member durations (s)
  ojson flagged_ = ojson::array(), sub_at_ = ojson::array(), retries_ = ojson::array(),
        unknown_fates_ = ojson::array();
  std::map<std::string, std::string> callable_ns_;  // callable -> namespace
  std::vector<Edge> edges_;
  ojson overheads_ = nullptr;
};

// The Python trace's NEXT_LEVEL submits, in the order the orchestration made them (a `run` op's ops in
// place), are joined one to one with the log's NEXT_LEVEL tasks in (run_id, task_slot) order, and
// checked op by op: the same kind, a single's worker, a group's size and its members' workers (as far
// as the log saw them dispatched). The file must load as a scenario first (so every arg and buffer is
// one the loader takes). SUB submits are not joined: the log has no SUB submit span to join them on.
void Builder::join_deps() {
  const std::string& file = o_.deps_file;
  (void)load_scenario(file, {}, TraceRead::kFull);  // a file the loader refuses: its error, exit 2
  const ojson doc = ojson::parse(read_json_file(file).dump());
  if (!doc.contains("trace"))
    throw ImportError(file + ": generates its trace (generate): --deps needs a recorded trace (ops with args)");
  if (doc.contains("vars"))
    throw ImportError(file + ": vars: --deps needs a recording with its values in place, not sweep variables "
                             "(record it again with the values chosen)");
  struct PyOp {
    const ojson* op;
    std::string path;
    long long run;  // the ordinal of its `run` op (1, 2, ...), 0 in a trace without runs
  };
  std::vector<PyOp> ops;
  long long runs = 0;
  // Submits in the order the orchestration made them: a run's or a batch's ops in place.
  const std::function<void(const ojson&, const std::string&, long long)> add = [&](const ojson& op,
                                                                                     const std::string& path,
                                                                                     long long run) {
    const std::string kind = op.value("op", "");
    if (kind == "submit_next_level" || kind == "submit_next_level_group") ops.push_back({&op, path, run});
    if (kind == "submit_sub" || kind == "submit_sub_group") ++deps_sub_ops_;
    if (kind == "run") run = ++runs;
    if (const auto inner = op.find("ops"); inner != op.end() && inner->is_array())
      for (std::size_t j = 0; j < inner->size(); ++j) add((*inner)[j], path + ".ops[" + std::to_string(j) + "]", run);
  };
  const ojson& trace = doc.at("trace");
  for (std::size_t i = 0; i < trace.size(); ++i) add(trace[i], "trace[" + std::to_string(i) + "]", 0);
  std::vector<const TaskObs*> logged;
  for (const TaskObs& t : tasks_)
    if (t.submit != kNoSubmit) logged.push_back(&t);
  if (ops.size() != logged.size())
    throw ImportError(file + ": " + std::to_string(ops.size()) + " NEXT_LEVEL submits, but " + o_.log + " has " +
                      std::to_string(logged.size()) +
                      " NEXT_LEVEL tasks with a submit: --deps needs a trace recorded from the same orchestration");
  std::map<long long, long long> log_run_ordinal;  // run_id -> 1, 2, ... in the log's order
  for (const TaskObs* t : logged) log_run_ordinal.emplace(t->run, 0);
  long long ordinal = 0;
  for (auto& [run_id, n] : log_run_ordinal) n = ++ordinal;
  if (runs > 0 && runs != static_cast<long long>(log_run_ordinal.size()))
    throw ImportError(file + ": " + std::to_string(runs) + " runs, but " + o_.log + " has " +
                      std::to_string(log_run_ordinal.size()) +
                      " runs with NEXT_LEVEL submits: --deps needs a trace recorded from the same orchestration");
  const auto log_side = [&](const TaskObs& t, const std::string& what) {
    return o_.log + ":" + std::to_string(submit_of(t)->line) + " (" + name_of(t) + "): " + what;
  };
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const ojson& op = *ops[i].op;
    const TaskObs& t = *logged[i];
    const std::string py = file + ": " + ops[i].path + " (task '" + op.value("task", "") + "'): ";
    const bool py_group = op.at("op") == "submit_next_level_group";
    const auto mismatch = [&](const std::string& py_what, const std::string& log_what) {
      throw ImportError("--deps: submit " + std::to_string(i) + " does not match: " + py + py_what + "; " +
                        log_side(t, log_what));
    };
    if (py_group != (t.kind == Kind::kGroup))
      mismatch(py_group ? "a group" : "a single", t.kind == Kind::kGroup ? "a group" : "a single");
    // With runs, the n-th run of the file is the n-th run of the log: a tensor map is per run.
    if (runs > 0 && ops[i].run != log_run_ordinal.at(t.run))
      mismatch("in run " + std::to_string(ops[i].run) + " of the file",
               "in run " + std::to_string(log_run_ordinal.at(t.run)) + " of the log (run_id " + std::to_string(t.run) + ")");
    if (!py_group) {
      const ojson& w = op.at("worker");
      const long long logged_worker = submit_of(t)->attr[kWorkerId];
      if (!w.is_number_integer() || w.get<long long>() != logged_worker)
        mismatch("worker " + w.dump(), "worker " + std::to_string(logged_worker));
      joined_args_[&t] = op.value("args", ojson::array());
    } else {
      const ojson& list = op.at("args_list");
      const long long size = submit_of(t)->attr[kGroupSize];
      if (static_cast<long long>(list.size()) != size)
        mismatch(std::to_string(list.size()) + " members", std::to_string(size) + " members");
      const ojson& workers = op.at("workers");
      for (const Member& m : members(t)) {
        const long long seen = m.front().worker;
        const auto mi = static_cast<std::size_t>(m.index);
        if (mi >= workers.size() || !workers[mi].is_number_integer() || workers[mi].get<long long>() != seen)
          mismatch("member " + std::to_string(m.index) + " on worker " + (mi < workers.size() ? workers[mi].dump() : "(none)"),
                   "member " + std::to_string(m.index) + " dispatched to worker " + std::to_string(seen));
      }
      joined_args_[&t] = list;
    }
    ++joined_;
  }
  joined_buffers_ = doc.value("buffers", ojson::object());
}

// P -> T is guessed when T waited for nothing but P: T was submitted before P ended, every target of T
// was idle from just before P's end until T's first dispatch (so T was not queued behind work on its
// workers), and T started within `gap_ns` of P's end; P and T are in one run, P before T in submit order
// (a consumer is submitted after its producer), and P completed (a failed P would have poisoned T).
// Consequences, said in the report: a true edge between two tasks on one worker is never guessed (the
// worker was busy with P), and a task that started late for another reason (the scheduler's own delay)
// may get a false one.
std::vector<Builder::Edge> Builder::infer_edges(long long gap_ns) const {
  struct Ended {
    long long end;
    const TaskObs* task;
  };
  std::vector<Ended> ended;  // imported tasks that completed, by end
  std::map<std::pair<bool, long long>, std::vector<std::pair<long long, long long>>> busy;  // worker -> [start, end]
  for (const TaskObs& t : tasks_) {
    // Every member that ran kept its worker busy, a left-out task's and a retried one's included.
    for (const Attempt* a = members(t).begin().at; a != members(t).end().at; ++a)
      busy[{is_sub(t), a->worker}].push_back({a->start(), a->end_or_max()});
    if (t.left_out) continue;
    long long end = 0;
    bool completed = t.count > 0;
    for (const Member& m : members(t)) {
      const Attempt& a = m.front();
      if (!a.completed || a.outcome != 0) completed = false;
      end = std::max(end, a.end_or_max());
    }
    if (t.kind == Kind::kGroup && static_cast<long long>(t.members) != submit_of(t)->attr[kGroupSize]) completed = false;
    if (completed) ended.push_back({end, &t});
  }
  std::sort(ended.begin(), ended.end(), [](const Ended& a, const Ended& b) {
    return a.end != b.end ? a.end < b.end : std::tie(a.task->run, a.task->slot) < std::tie(b.task->run, b.task->slot);
  });
  for (auto& [w, list] : busy) std::sort(list.begin(), list.end());
  // Whether NEXT_LEVEL worker w ran anything in [from, to): a member running at `from` (ending at or
  // after it) or starting before `to`. One member at a time per worker (checked), so ends are sorted too.
  const auto busy_between = [&](long long w, long long from, long long to) {
    const auto it = busy.find({false, w});
    if (it == busy.end()) return false;
    const auto& list = it->second;
    const auto first = std::lower_bound(list.begin(), list.end(), from,
                                        [](const std::pair<long long, long long>& iv, long long x) { return iv.second < x; });
    return first != list.end() && first->first < to;
  };
  std::vector<Edge> edges;
  for (const TaskObs& t : tasks_) {
    if (t.left_out || t.submit == kNoSubmit || t.count == 0) continue;  // SUB: its submit time is not logged
    long long first = std::numeric_limits<long long>::max();
    std::vector<long long> targets;
    for (const Member& m : members(t)) {
      first = std::min(first, m.front().start());
      targets.push_back(m.front().worker);
    }
    const auto lo = std::lower_bound(ended.begin(), ended.end(), first - gap_ns,
                                     [](const Ended& e, long long x) { return e.end < x; });
    for (auto it = lo; it != ended.end() && it->end <= first; ++it) {
      const TaskObs& p = *it->task;
      if (p.run != t.run || p.slot >= t.slot || submit_of(t)->ts >= it->end) continue;
      if (std::any_of(targets.begin(), targets.end(), [&](long long w) { return busy_between(w, it->end, first); }))
        continue;
      if (edges.size() == kMaxInferredEdges)
        refuse(members(t).begin().at->line,
               "--infer-deps " + human_number(*o_.infer_gap_us) + ": more than " + std::to_string(kMaxInferredEdges) +
                   " inferred dependencies (the import's bound on guessed edges, docs/limits.md), passed at task " +
                   name_of(t) + "; give a smaller gap");
      edges.push_back({&p, &t, first - it->end});
    }
  }
  return edges;
}

// Median of a list (sorted copy; the mean of the two middle values for an even count).
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string Builder::write(const fs::path& dir) {
  const std::string stem = fs::path(o_.log).stem().string();
  scenario_name_ = "import-" + (stem.empty() ? std::string("log") : stem);

  // Callables: h<hid> in the namespace of the workers that ran it; SUB callables LOCAL_PYTHON.
  std::set<std::string> renamed;
  for (TaskObs& t : tasks_) {
    if (t.left_out) continue;
    std::string ns = "LOCAL_PYTHON";
    if (submit_of(t)) {
      const long long w = t.kind == Kind::kSingle ? single_target(t) : attempts_[t.first].worker;
      ns = ns_of_kind(worker_kind(w));
    }
    const std::string plain = callable_of(t);
    auto [it, inserted] = callable_ns_.emplace(plain, ns);
    if (!inserted && it->second != ns) {
      // One hid on two kinds of worker: a callable per namespace.
      const std::string other = plain + "." + ns;
      if (renamed.insert(other).second)
        note("callable " + plain + " ran on " + it->second + " and " + ns + " workers: the " + ns +
             " runs are callable " + other);
      t.renamed = static_cast<std::uint8_t>(ns_index(ns) + 1);
      callable_ns_.emplace(other, ns);
    }
    if (callable_ns_.size() > Registry::kMaxCallables) {
      const Span* sub = submit_of(t);
      refuse(sub ? sub->line : attempts_[t.first].line,
             "callable " + plain + ": more than " + std::to_string(Registry::kMaxCallables) +
                 " callables (the testbed's limit)");
    }
    const std::string callable = callable_of(t);
    for (const Member& m : members(t)) {
      const Attempt& a = m.front();
      if (a.completed && a.outcome != 3) observed_[callable].push_back(static_cast<double>(a.complete_ts - a.start()) / 1e9);
      if (m.size() > 1)
        retries_.push_back({{"task", name_of(t)}, {"member", m.index}, {"dispatches", m.size()},
                            {"note", "the first dispatch is imported; the others are ignored"}});
    }
  }
  write_scenario(dir / "scenario.json");
  if (!o_.deps_file.empty()) {
    // The file's buffers next to the log's workers: a buffer owned by a worker the log never saw, for
    // one, makes a scenario nothing could run. Refused here, not written.
    try {
      std::ifstream in(dir / "scenario.json", std::ios::binary);  // no size limit: the import wrote it
      (void)parse_scenario(nlohmann::json::parse(in), "scenario.json", ".");
    } catch (const ScenarioError& e) {
      throw ImportError("--deps " + o_.deps_file + ": the joined scenario would not load (" + e.what() +
                        "): the file does not fit the log's workers");
    }
  }
  const fs::path obs = dir / "observed";
  if (mkdir(obs.c_str(), 0755) != 0) throw_write_error(obs, errno);
  write_observed(obs);

  // The report.
  ojson rep;
  rep["log"] = o_.log;
  rep["process"] = {{"pid", pid_}, {"level", words_}};
  ojson cands = ojson::array();
  for (const auto& [pid, c] : p_.candidates) {
    std::string w;
    for (const std::string& x : c.words) w += (w.empty() ? "" : "/") + x;
    cands.push_back({{"pid", pid}, {"level", w}, {"runs", c.runs.size()}, {"tasks", c.task_count()}});
  }
  rep["candidates"] = cands;
  ojson runs = ojson::array();
  for (const auto& [run, ts] : graph_build_) runs.push_back(run);
  rep["runs"] = runs;
  rep["t0_ns"] = t0_;
  std::size_t imported = 0, members = 0;
  for (const TaskObs& t : tasks_)
    if (!t.left_out) ++imported, members += t.members;
  rep["tasks"] = {{"seen", tasks_.size()}, {"imported", imported}, {"left_out", left_out_.size()}};
  rep["members_dispatched"] = members;
  rep["lines"] = {{"total", p_.lines},
                  {"noise", p_.noise},
                  {"other_log_records", p_.other_records},
                  {"other_spans", p_.other_spans},
                  {"device_clock_spans", p_.device_spans},
                  {"frame_submit_spans", p_.frame_submits},
                  {"clock_anchors", p_.anchors},
                  {"torn_records_other_processes", p_.torn},
                  {"post_fence_retirements", retirements_}};
  rep["stall_warnings"] = {{"count", p_.stall_warnings}, {"lines", p_.stall_lines}, {"warnings", p_.stall_parsed},
                           {"note", "the warning has no time of its own: it is counted, not placed; the first " +
                                        std::to_string(kMaxStallsKept) + " are read (fidelity compares them "
                                        "with a replay's stall reports)"}};
  rep["assumptions"] = assumptions_;
  rep["anomalies"] = anomalies_json();
  rep["left_out"] = left_out_;
  rep["no_observed_duration"] = flagged_;
  rep["sub_submit_times_unknown"] = sub_at_;
  rep["retried_members"] = retries_;
  rep["fates_unknown"] = unknown_fates_;
  if (!o_.deps_file.empty()) {
    rep["dependencies"] = {
        {"source", "deps"},
        {"file", o_.deps_file},
        {"joined", joined_},
        {"rule", "the file's NEXT_LEVEL submits, in order, joined one to one with the log's NEXT_LEVEL tasks in "
                 "(run_id, task_slot) order, each checked: kind, a single's worker, a group's size and members' "
                 "workers; their args and the file's buffers are the scenario's"},
        {"sub_submits_not_joined", deps_sub_ops_},
        {"note", "SUB submits are not joined (the log has no SUB submit span): imported SUB tasks have no args, "
                 "so a dependency through one is not in the scenario"}};
  } else if (o_.infer_gap_us) {
    ojson list = ojson::array();
    for (const Edge& e : edges_)
      list.push_back({{"producer", name_of(*e.producer)},
                      {"consumer", name_of(*e.consumer)},
                      {"gap_us", static_cast<double>(e.gap_ns) / 1e3},
                      {"guess", true}});
    rep["dependencies"] = {
        {"source", "inferred"},
        {"gap_us", *o_.infer_gap_us},
        {"rule", "P -> T when T was submitted before P ended, every target of T was idle from P's end until T's "
                 "first dispatch, T started within gap_us of P's end, P completed, and P comes before T in the "
                 "same run"},
        {"edges", list},
        {"note", "every edge is a guess: an edge between two tasks on one worker is never inferred (the worker "
                 "was busy with P), and a task that started late for another reason may get a false one; each "
                 "producer writes a 0-byte buffer dep.<task> its consumers read"}};
  } else {
    rep["dependencies"] = {{"source", "none"},
                           {"note", "no dependencies were given: every task is independent in the scenario"}};
  }
  if (!overheads_.is_null()) rep["overheads"] = overheads_;
  rep["calibrated"] = {{"durations", "per callable: the observed member durations as duration.empirical"},
                       {"ops", o_.sample_durations ? "ops carry no duration: each member draws from its callable"
                                                   : "each op carries its members' observed durations"}};
  write_file(dir / "import-report.json", rep.dump(2) + "\n");

  std::ostringstream txt;
  txt << "imported " << o_.log << ": " << chosen_ << "\n";
  txt << "  " << imported << " tasks (" << members << " members dispatched) in " << graph_build_.size()
      << " runs; " << left_out_.size() << " left out, " << flagged_.size() << " without an observed duration, "
      << unknown_fates_.size() << " with a fate the log cannot tell\n";
  txt << "  workers: " << nl_.size() << " NEXT_LEVEL, " << sub_pool_ << " SUB; callables: " << callable_ns_.size()
      << "\n";
  txt << "  lines: " << p_.lines << " (" << p_.noise << " noise, " << p_.other_records << " other log records, "
      << p_.other_spans << " other spans, " << p_.device_spans << " device-clock spans, " << p_.stall_warnings
      << " stall warnings)\n";
  txt << "  anomalies: " << anomaly_counts()
      << (anomalies_.empty() ? "\n"
                             : ": the observed run breaks the contract or the model's assumptions there "
                               "(import-report.json anomalies: each with its lines and what the scenario does)\n");
  if (!o_.deps_file.empty())
    txt << "  dependencies: the args of " << joined_ << " NEXT_LEVEL submits joined from " << o_.deps_file << "\n";
  if (o_.infer_gap_us)
    txt << "  dependencies: " << edges_.size() << " inferred within " << human_number(*o_.infer_gap_us)
        << " us (guesses: import-report.json lists each)\n";
  if (!overheads_.is_null())
    txt << "  dispatch cost (median dispatch span): " << human_number(overheads_["dispatch_cost_s"].get<double>())
        << " s\n";
  for (const std::string& a : assumptions_) txt << "  assumed: " << a << "\n";
  return txt.str();
}

// The anomalies by their first line in the log.
ojson Builder::anomalies_json() {
  std::stable_sort(anomalies_.begin(), anomalies_.end(),
                   [](const Anomaly& a, const Anomaly& b) { return a.lines.front() < b.lines.front(); });
  ojson list = ojson::array();
  for (const Anomaly& a : anomalies_)
    list.push_back({{"kind", a.kind}, {"task", a.task}, {"lines", a.lines}, {"what", a.what}, {"scenario", a.scenario}});
  return list;
}

// "none", or "N (k kind, ...)".
std::string Builder::anomaly_counts() const {
  if (anomalies_.empty()) return "none";
  std::map<std::string, std::size_t> by_kind;
  for (const Anomaly& a : anomalies_) ++by_kind[a.kind];
  std::string text = std::to_string(anomalies_.size()) + " (";
  for (const auto& [kind, n] : by_kind) text += (text.back() == '(' ? "" : ", ") + std::to_string(n) + " " + kind;
  return text + ")";
}

// scenario.json as `ojson::dump(2)` would write the whole document, the trace and the expect block
// written op by op.
void Builder::write_scenario(const fs::path& file) {
  ojson sc;
  sc["name"] = scenario_name_;
  sc["description"] = "Imported by dirsched import strace from " + fs::path(o_.log).filename().string() + " (pid " +
                      std::to_string(pid_) + ", level " + words_ + ")";
  sc["seed"] = 0;
  ojson sched = {{"policy", "seed"}, {"stall_report_s", 5}};
  // Overheads: the dispatch span's own duration is what the scheduler spends per member.
  if (o_.calibrate_overheads) {
    std::vector<double> dispatch_durs, gaps, busy_gaps;  // ns
    std::map<std::string, std::vector<double>> durs_by_kind;  // target kind -> dispatch durs (ns)
    struct Run {
      long long start, complete, submit;  // submit -1: none logged (SUB)
      bool staged;
    };
    std::map<std::pair<bool, long long>, std::vector<Run>> per_worker;
    std::vector<std::pair<long long, long long>> dispatches;  // (ts, dur) of every member imported, by ts
    for (const TaskObs& t : tasks_) {
      if (t.left_out) continue;
      for (const Member& m : members(t)) {
        const Attempt& a = m.front();
        dispatch_durs.push_back(static_cast<double>(a.dispatch_dur));
        durs_by_kind[t.submit == kNoSubmit ? std::string("sub") : worker_kind(a.worker)].push_back(
            static_cast<double>(a.dispatch_dur));
        if (a.completed)
          per_worker[{t.submit == kNoSubmit, a.worker}].push_back(
              {a.start(), a.complete_ts, t.submit != kNoSubmit ? submit_of(t)->ts : -1, a.staged});
      }
    }
    // The scheduler's time on other dispatches in [from, to): what a gap holds beyond its own overhead
    // when the member was not the first its iteration dispatched. Every dispatch span of the runs
    // imported counts (a left-out task's and a retry's too: the scheduler spent that time).
    for (const Attempt& a : attempts_) dispatches.emplace_back(a.dispatch_ts, a.dispatch_dur);
    std::sort(dispatches.begin(), dispatches.end());
    // before[i]: the durs of dispatches[0, i), in double: a sum of many long spans does not overflow.
    std::vector<double> before(dispatches.size() + 1, 0);
    for (std::size_t i = 0; i < dispatches.size(); ++i) before[i + 1] = before[i] + static_cast<double>(dispatches[i].second);
    const auto dispatching = [&](long long from, long long to) {
      const auto at = [&](long long ts) {
        return static_cast<std::size_t>(
            std::lower_bound(dispatches.begin(), dispatches.end(), std::make_pair(ts, std::numeric_limits<long long>::min())) -
            dispatches.begin());
      };
      return before[at(to)] - before[at(from)];
    };
    for (auto& [w, list] : per_worker) {
      std::sort(list.begin(), list.end(), [](const Run& x, const Run& y) { return x.start < y.start; });
      for (std::size_t i = 1; i < list.size(); ++i) {
        const double gap = static_cast<double>(list[i].start - list[i - 1].complete);
        gaps.push_back(gap);
        // The next task was submitted before the completion, so work was waiting: the gap is the
        // scheduler's own, from the completion to the next dispatch span. Only without dependencies
        // (--deps, --infer-deps): then submitted is READY; with them a task submitted early may still
        // have waited for a producer. A staged member starts at its activation, which pays no dispatch
        // cost: it is left out.
        // Less the other members the scheduler dispatched in the gap (the replay's k-th dispatch of an
        // iteration starts after k dispatch costs, the log's at its span).
        if (o_.deps_file.empty() && !o_.infer_gap_us && !list[i].staged && list[i].submit >= 0 &&
            list[i].submit <= list[i - 1].complete)
          busy_gaps.push_back(gap - dispatching(list[i - 1].complete, list[i].start));
      }
    }
    const double dispatch_ns = median(dispatch_durs);
    const double dispatch_cost = dispatch_ns / 1e9;
    sched["dispatch_cost_s"] = dispatch_cost;
    // Per target kind, when the kinds' medians differ (a remote endpoint's dispatch costs more).
    ojson by_kind = ojson::object();
    bool kinds_differ = false;
    for (auto& [kind, durs] : durs_by_kind) {
      by_kind[kind] = median(durs) / 1e9;
      kinds_differ |= by_kind[kind].get<double>() != by_kind.begin().value().get<double>();
    }
    if (kinds_differ) sched["dispatch_cost_by_kind_s"] = by_kind;
    // The replay starts a member after iteration_cost_s + dispatch_cost_s from the completion that let it
    // go (docs/simulation.md), the log starts it at its dispatch span: the iteration cost is what the busy
    // gap has beyond the dispatch cost.
    const double iteration_cost = busy_gaps.empty() ? 0 : std::max(0.0, median(busy_gaps) - dispatch_ns) / 1e9;
    if (!busy_gaps.empty()) sched["iteration_cost_s"] = iteration_cost;
    overheads_ = {{"dispatch_cost_s", dispatch_cost},
                  {"method", "median of the dispatch spans' dur over the members imported"},
                  {"dispatch_spans", dispatch_durs.size()},
                  {"dispatch_cost_by_kind_s", kinds_differ ? by_kind : ojson(nullptr)},
                  {"by_kind_method", "median of the dispatch spans' dur per target kind (local_chip, local_worker, "
                                     "remote, sub), written to scheduler.dispatch_cost_by_kind_s when the kinds' "
                                     "medians differ"},
                  {"iteration_cost_s", iteration_cost},
                  {"iteration_method",
                   !o_.deps_file.empty() || o_.infer_gap_us
                       ? "not calibrated with --deps or --infer-deps (a task submitted before a completion may "
                         "still have waited for a producer): iteration_cost_s left at 0"
                   : busy_gaps.empty()
                       ? "no completion was followed on its worker by a task already submitted: iteration_cost_s "
                         "left at 0"
                       : "median gap from a completion to the next dispatch on the same worker, over the gaps where "
                         "that next task was submitted before the completion (work was waiting), each less the dur of "
                         "the other dispatch spans that started within it, less the dispatch cost"},
                  {"busy_gaps", busy_gaps.size()},
                  {"completion_to_next_dispatch_s",
                   {{"median", median(gaps) / 1e9}, {"count", gaps.size()},
                    {"note", "every gap from a completion to the next dispatch on the same worker (also those that "
                             "waited for work)"}}}};
  }
  sc["scheduler"] = sched;
  ojson nl = ojson::array();
  for (const auto& [w, e] : nl_) nl.push_back({{"id", w}, {"kind", worker_kind(w)}});
  sc["workers"] = {{"next_level", nl}, {"sub", sub_pool_}};
  ojson callables = ojson::object();
  for (const auto& [name, ns] : callable_ns_) {
    const std::vector<double>& obs = observed_[name];
    ojson c = {{"namespace", ns}};
    if (obs.empty()) {
      c["duration_s"] = 0;
    } else {
      c["duration"] = {{"empirical", obs}};
    }
    callables[name] = c;
  }
  sc["callables"] = callables;

  // Inferred dependencies: the producer writes a buffer of its own ("dep.<task>", 0 bytes, host memory),
  // each consumer reads it (a group: through member 0).
  std::map<const TaskObs*, std::vector<std::string>> reads;
  std::set<const TaskObs*> writes;
  if (o_.infer_gap_us) {
    edges_ = infer_edges(std::llround(*o_.infer_gap_us * 1e3));
    ojson buffers = ojson::object();
    for (const Edge& e : edges_) {
      const std::string buffer = "dep." + name_of(*e.producer);
      buffers[buffer] = {{"bytes", 0}};
      writes.insert(e.producer);
      reads[e.consumer].push_back(buffer);
    }
    if (!buffers.empty()) sc["buffers"] = buffers;
  }
  if (!o_.deps_file.empty() && !joined_buffers_.empty()) sc["buffers"] = joined_buffers_;

  // The head as dump(2) writes it, less its closing brace; then the trace, op by op, and the expect block.
  StreamedFile out(file);
  std::string head = sc.dump(2);
  head.resize(head.size() - 2);  // "\n}"
  out << head << ",\n  \"trace\": [";
  bool first_op = true;
  const auto put_op = [&](const ojson& op) {
    out << (first_op ? "\n    " : ",\n    ") << indented(op.dump(2), 4);
    first_op = false;
  };
  double last_at = 0;
  long long prev_run = -1;
  long long prev_submit_ts = t0_;
  struct Disp {
    long long ts;
    bool sub;
    long long worker;
    std::uint32_t task;
    std::uint32_t member;  // its place among the task's members
  };
  std::vector<Disp> disps;
  for (TaskObs& t : tasks_) {
    if (t.left_out) continue;
    if (prev_run != -1 && t.run != prev_run) put_op({{"op", "drain"}});
    prev_run = t.run;
    const std::string name = name_of(t);
    const Span* sub = submit_of(t);
    const bool group = is_group(t);
    ojson op;
    op["op"] = op_name(t.kind);
    op["task"] = name;
    op["callable"] = callable_of(t);
    if (sub) {
      double at = rel_s(sub->ts);
      if (at < last_at) {
        note("task " + name + " was submitted (ts) before the task before it in (run_id, task_slot) order: at_s " +
             num(at) + " is kept at " + num(last_at));
        at = last_at;
      }
      op["at_s"] = at;
      t.at_s = at;
      last_at = at;
      prev_submit_ts = sub->ts;
    } else {
      long long first = std::numeric_limits<long long>::max();
      for (const Member& m : members(t)) first = std::min(first, m.front().dispatch_ts);
      sub_at_.push_back({{"task", name}, {"after_s", rel_s(prev_submit_ts)}, {"before_s", rel_s(first)},
                         {"note", "a SUB task writes no submit span: its submit time is unknown; the op follows the previous one"}});
      t.at_s = last_at;
    }
    // Members: group members 0..n-1; SUB group members by distinct group_index, in order.
    const std::vector<int> list = member_list(t);
    const Members ms = members(t);
    ojson durations = ojson::array(), fails = ojson::array(), workers = ojson::array();
    bool any_fail = false, all_known = true, unknown = false;
    ojson args = ojson::array();
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Attempt* a = ms.find(list[i]);
      if (t.kind == Kind::kGroup && a) workers.push_back(a->worker);
      args.push_back(ojson::array());
      if (!a) {
        durations.push_back(nullptr);
        fails.push_back(false);
        all_known = false;
        continue;
      }
      disps.push_back({a->start(), !sub, a->worker, static_cast<std::uint32_t>(&t - tasks_.data()),
                       static_cast<std::uint32_t>(i)});
      if (!a->completed || a->outcome == 3) {
        durations.push_back(nullptr);
        fails.push_back(false);
        unknown = true;
        continue;
      }
      durations.push_back(static_cast<double>(a->complete_ts - a->start()) / 1e9);
      const bool f = a->outcome == 1 || a->outcome == 2;
      any_fail |= f;
      fails.push_back(f);
    }
    if (t.kind == Kind::kSingle) op["worker"] = single_target(t);
    if (t.kind == Kind::kGroup) op["workers"] = workers;
    if (auto it = joined_args_.find(&t); it != joined_args_.end()) {
      if (group) args = it->second;
      else args = ojson::array({it->second});
    }
    if (auto it = reads.find(&t); it != reads.end())
      for (const std::string& b : it->second) args[0].push_back({{"buffer", b}, {"tag", "INPUT"}});
    if (writes.count(&t)) args[0].push_back({{"buffer", "dep." + name}, {"tag", "OUTPUT"}});
    if (group)
      op["args_list"] = args;
    else
      op["args"] = args[0];
    bool has_null = false;
    for (const auto& d : durations) has_null |= d.is_null();
    if (!o_.sample_durations && !has_null) op["duration_s"] = group ? durations : durations[0];
    if (has_null && !o_.sample_durations) {
      // The members the log saw keep their times; the others take the callable's (its empirical list).
      bool any = false;
      for (const auto& d : durations) any |= !d.is_null();
      if (any) {
        ojson filled = ojson::array();
        const std::vector<double>& obs = observed_[callable_of(t)];
        for (const auto& d : durations) filled.push_back(d.is_null() ? ojson(obs.empty() ? 0.0 : median(obs)) : d);
        op["duration_s"] = group ? filled : filled[0];
      }
      flagged_.push_back({{"task", name},
                          {"why", ms.empty() ? "never dispatched: no observed duration (its target is kept)"
                                             : "a member has no observed end (truncated or skipped): it takes the "
                                               "median of its callable's observed durations"}});
    }
    bool fail_any = false;
    for (const auto& f : fails) fail_any |= f.get<bool>();
    if (fail_any) op["fail"] = group ? fails : fails[0];
    put_op(op);
    if (all_known && !unknown && !ms.empty())
      t.fate = any_fail ? 2 : 1;
    else
      unknown_fates_.push_back({{"task", name}, {"why", ms.empty() ? "never dispatched" : "a member has no observed end"}});
  }
  out << (first_op ? "]" : "\n  ]");

  // expect: each worker's dispatch order (workers in the order of their first dispatch), then the fates.
  std::stable_sort(disps.begin(), disps.end(), [](const Disp& a, const Disp& b) { return a.ts < b.ts; });
  {
    std::map<std::pair<bool, long long>, std::size_t> rank;
    for (const Disp& d : disps) rank.emplace(std::make_pair(d.sub, d.worker), rank.size());
    std::stable_sort(disps.begin(), disps.end(), [&](const Disp& a, const Disp& b) {
      return rank.at({a.sub, a.worker}) < rank.at({b.sub, b.worker});
    });
  }
  bool any_fate = false;
  for (const TaskObs& t : tasks_) any_fate |= !t.left_out && t.fate != 0;
  if (!disps.empty() || any_fate) {
    out << ",\n  \"expect\": {";
    if (!disps.empty()) {
      out << "\n    \"dispatch_order_per_worker\": {";
      for (std::size_t i = 0; i < disps.size(); ++i) {
        const Disp& d = disps[i];
        const bool new_worker = i == 0 || d.sub != disps[i - 1].sub || d.worker != disps[i - 1].worker;
        if (new_worker) {
          if (i > 0) out << "\n      ],";
          out << "\n      " << jstr(d.sub ? "sub" + std::to_string(d.worker) : std::to_string(d.worker)) << ": [";
        } else {
          out << ",";
        }
        const TaskObs& t = tasks_[d.task];
        out << "\n        " << jstr(name_of(t) + (is_group(t) ? "[" + std::to_string(d.member) + "]" : ""));
      }
      out << "\n      ]\n    }";
    }
    if (any_fate) {
      out << (disps.empty() ? "" : ",") << "\n    \"final_state\": {";
      bool first = true;
      for (const TaskObs& t : tasks_) {
        if (t.left_out || t.fate == 0) continue;
        out << (first ? "\n      " : ",\n      ") << jstr(name_of(t)) << ": " << (t.fate == 2 ? "\"FAILED\"" : "\"COMPLETED\"");
        first = false;
      }
      out << "\n    }";
    }
    out << "\n  }";
  }
  out << "\n}\n";
  out.close();
}

// The recorded timeline as a run folder: the events a run of the testbed writes, at the logged times
// (relative to t0), so that compare, render, the report and fidelity read it as any run. tasks.csv is
// written task by task; the events are kept as small records, sorted, then written.
void Builder::write_observed(const fs::path& dir) {
  enum EvKind : std::uint8_t { kSubmitEv, kReadyEv, kDispatchEv, kMemberEndEv, kLaunchedEv, kFailEv, kCompleteEv };
  static constexpr const char* kEvNames[] = {"submit", "ready", "dispatch", "member_end", "group_launched", "fail",
                                             "complete"};
  struct Ev {  // 24 bytes
    double t;
    std::uint32_t n;       // the order it was made in
    std::uint32_t ref;     // the member's first dispatch (dispatch, member_end: its task is the attempt's), or the task
    std::uint32_t member;  // its place among the task's members
    std::uint8_t order;    // at one instant: ends, then task ends, then submits, readies, dispatches, launches
    EvKind kind;
  };
  static_assert(sizeof(Ev) <= 24, "an observed event is kept in 24 bytes");
  std::vector<Ev> evs;
  {
    std::size_t most = 0;  // at most: submit, ready, a dispatch and an end per member, a launch and an end
    for (const TaskObs& t : tasks_)
      if (!t.left_out) most += 4 + 2 * std::max<std::size_t>(t.members, t.kind == Kind::kGroup ? submit_of(t)->attr[kGroupSize] : 1);
    if (most > std::numeric_limits<std::uint32_t>::max())
      throw ImportError(o_.log + ": " + std::to_string(tasks_.size()) + " tasks: more events than an import writes (2^32)");
    evs.reserve(most);
  }
  const auto add = [&](double t, std::uint8_t order, EvKind kind, std::uint32_t task, std::uint32_t member = 0,
                       std::uint32_t attempt = 0) {
    const bool at_member = kind == kDispatchEv || kind == kMemberEndEv;
    evs.push_back({t, static_cast<std::uint32_t>(evs.size()), at_member ? attempt : task, member, order, kind});
  };
  double makespan = 0;
  std::map<std::string, double> busy;  // worker label -> busy seconds
  std::vector<double> single_waits, group_waits;
  std::vector<record::GroupWait> groups;
  std::map<std::string, long long> counts = {{"COMPLETED", 0}, {"FAILED", 0}, {"POISONED", 0}, {"REJECTED", 0},
                                             {"NOT_SUBMITTED", 0}, {"PENDING", 0}, {"READY", 0}, {"RUNNING", 0}};
  // tasks.csv through the run record's codec, without the wait causes (a log does not say why).
  const record::TaskColumns columns{false, false, false};
  StreamedFile csv_file(dir / "tasks.csv");
  std::string csv = record::tasks_csv_header(columns);
  std::size_t total = 0;
  bool truncated = false, failed = false;
  for (const TaskObs& t : tasks_) {
    if (t.left_out) continue;
    ++total;
    const std::uint32_t ti = static_cast<std::uint32_t>(&t - tasks_.data());
    const Span* submit = submit_of(t);
    const bool sub = !submit;
    const bool group = is_group(t);
    const std::vector<int> list = member_list(t);
    const Members ms = members(t);
    // The submit: at its span's ts; a SUB task's at its first dispatch (its submit is not logged).
    double submit_t = t.at_s;
    if (sub) {
      long long first = std::numeric_limits<long long>::max();
      for (const Member& m : ms) first = std::min(first, m.front().dispatch_ts);
      submit_t = rel_s(first);
    } else {
      submit_t = rel_s(submit->ts);
    }
    add(submit_t, 2, kSubmitEv, ti);
    add(submit_t, 3, kReadyEv, ti);
    double first_start = -1, last_start = -1, last_end = -1;
    bool all_ended = true, any_fail = false;
    double first_fail = -1;
    std::uint32_t first_fail_member = 0;
    std::string resources;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Attempt* a = ms.find(list[i]);
      if (!a) {
        all_ended = false;
        continue;
      }
      const std::uint32_t ai = static_cast<std::uint32_t>(a - attempts_.data());
      const std::string label = sub ? "sub" + std::to_string(a->worker) : std::to_string(a->worker);
      resources += (resources.empty() ? "" : " ") + label;
      const double start = rel_s(a->start());
      first_start = first_start < 0 ? start : std::min(first_start, start);
      last_start = std::max(last_start, start);
      add(start, 4, kDispatchEv, ti, static_cast<std::uint32_t>(i), ai);
      if (!a->completed || a->outcome == 3) {
        all_ended = false;
        truncated |= !a->completed;
        continue;
      }
      const double end = rel_s(a->complete_ts);
      const bool f = a->outcome == 1 || a->outcome == 2;
      busy[label] += end - start;
      makespan = std::max(makespan, end);
      last_end = std::max(last_end, end);
      add(end, 0, kMemberEndEv, ti, static_cast<std::uint32_t>(i), ai);
      if (f && (first_fail < 0 || end < first_fail)) first_fail = end, first_fail_member = static_cast<std::uint32_t>(i);
      any_fail |= f;
    }
    bool launched = first_start >= 0;
    for (int m : list) launched = launched && ms.find(m) != nullptr;
    if (t.kind == Kind::kGroup && launched) add(last_start, 5, kLaunchedEv, ti);
    std::string state;
    double finish = -1;
    if (any_fail) {
      add(first_fail, 1, kFailEv, ti, first_fail_member);
      state = "FAILED", finish = first_fail, failed = true;
    } else if (all_ended && launched) {
      add(last_end, 1, kCompleteEv, ti);
      state = "COMPLETED", finish = last_end;
    } else {
      state = first_start >= 0 ? "RUNNING" : "READY";
    }
    ++counts[state];
    if (first_start >= 0) (group ? group_waits : single_waits).push_back(first_start - submit_t);
    if (t.kind == Kind::kGroup) {
      record::GroupWait g;
      g.task = name_of(t);
      for (int m : list) g.workers.push_back(static_cast<std::uint64_t>(ms.find(m)->worker));
      g.ready_s = submit_t;
      if (launched) g.launched_s = last_start;
      g.ready_wait_s = (launched ? last_start : makespan) - submit_t;
      groups.push_back(std::move(g));
    }
    auto t6 = [](double v) { return v < 0 ? std::optional<double>() : std::optional<double>(v); };
    record::TaskRow row;
    row.job_id = name_of(t);
    row.kind = kind_name(t.kind);
    row.callable = callable_of(t);
    row.allocated_resources = resources;
    row.submission_time = row.ready_time = t6(submit_t);
    row.starting_time = t6(first_start);
    row.finish_time = t6(finish);
    row.waiting_time = first_start >= 0 ? t6(first_start - submit_t) : std::nullopt;
    row.execution_time = first_start >= 0 && finish >= 0 ? t6(finish - first_start) : std::nullopt;
    row.final_state = state;
    record::encode_task_row(row, columns, csv);
    if (csv.size() >= (1 << 16)) csv_file << csv, csv.clear();
  }
  csv_file << csv;
  csv_file.close();
  std::string().swap(csv);

  std::sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) {
    return a.t != b.t ? a.t < b.t : a.order != b.order ? a.order < b.order : a.n < b.n;
  });
  StreamedFile events(dir / "events.jsonl");
  std::string line;
  for (std::size_t i = 0; i < evs.size(); ++i) {
    const Ev& e = evs[i];
    const bool at_member = e.kind == kDispatchEv || e.kind == kMemberEndEv;
    const TaskObs& t = tasks_[at_member ? attempts_[e.ref].task : e.ref];
    const bool sub = t.submit == kNoSubmit;
    line = "{\"seq\":" + std::to_string(i) + ",\"t_s\":" + format_number(e.t) + ",\"event\":\"" + kEvNames[e.kind] +
           "\",\"task\":" + json_string(name_of(t));
    switch (e.kind) {
      case kSubmitEv: {
        const std::vector<int> list = member_list(t);
        line += ",\"kind\":\"" + std::string(kind_name(t.kind)) + "\",\"op\":\"" + op_name(t.kind) +
                "\",\"callable\":" + json_string(callable_of(t)) + ",\"members\":" + std::to_string(list.size());
        if (!sub) {
          line += ",\"workers\":[";
          for (std::size_t j = 0; j < list.size(); ++j) {
            const long long w = t.kind == Kind::kSingle ? submit_of(t)->attr[kWorkerId] : members(t).find(list[j])->worker;
            line += (j ? "," : "") + std::to_string(w);
          }
          line += "]";
        }
        break;
      }
      case kReadyEv:
        line += std::string(",\"queue\":\"") +
                (t.kind == Kind::kSingle ? "worker:" + std::to_string(submit_of(t)->attr[kWorkerId])
                 : t.kind == Kind::kGroup ? std::string("group")
                                          : std::string("sub")) +
                "\"";
        break;
      case kDispatchEv:
      case kMemberEndEv: {
        const Attempt& a = attempts_[e.ref];
        line += ",\"member\":" + std::to_string(e.member) +
                (sub ? ",\"sub_worker\":\"sub" + std::to_string(a.worker) + "\"" : ",\"worker\":" + std::to_string(a.worker));
        if (e.kind == kMemberEndEv)
          line += std::string(",\"outcome\":\"") + (a.outcome == 1 || a.outcome == 2 ? "failure" : "success") + "\"";
        break;
      }
      case kFailEv:
        line += ",\"member\":" + std::to_string(e.member);
        break;
      case kLaunchedEv:
      case kCompleteEv:
        break;
    }
    line += "}\n";
    events << line;
  }
  events.close();
  const std::size_t event_count = evs.size();
  std::vector<Ev>().swap(evs);

  record::Summary s;
  s.scenario = scenario_name_;
  s.description = "The timeline recorded in " + fs::path(o_.log).filename().string() + " (pid " +
                  std::to_string(pid_) + ")";
  s.stall_report_s = 5;
  s.engine = record::Engine::kStrace;
  s.dirsched_version = dirsched_version();
  s.outcome = truncated ? record::Outcome::kTruncated : failed ? record::Outcome::kFailed : record::Outcome::kCompleted;
  s.makespan_s = makespan;
  for (const char* k : {"COMPLETED", "FAILED", "POISONED", "REJECTED", "NOT_SUBMITTED", "PENDING", "READY", "RUNNING"})
    s.tasks.by_state.emplace_back(k, counts[k]);
  s.tasks.total = total;
  for (const auto& [w, e] : nl_)
    s.workers.push_back({std::to_string(w), worker_kind(w), "", busy[std::to_string(w)],
                         makespan > 0 ? busy[std::to_string(w)] / makespan : 0.0});
  for (long long i = 0; i < sub_pool_; ++i) {
    const std::string l = "sub" + std::to_string(i);
    s.workers.push_back({l, "sub", "", busy[l], makespan > 0 ? busy[l] / makespan : 0.0});
  }
  s.groups = std::move(groups);
  auto waits = [](std::vector<double> v) {
    record::WaitStats w;
    w.count = v.size();
    if (v.empty()) return w;
    std::sort(v.begin(), v.end());
    auto at = [&](double q) {
      const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
      return v[k == 0 ? 0 : k - 1];
    };
    double sum = 0;
    for (double x : v) sum += x;
    w.p50_s = at(0.5), w.p95_s = at(0.95), w.max_s = v.back(), w.mean_s = sum / static_cast<double>(v.size());
    return w;
  };
  s.ready_waits_single = waits(std::move(single_waits));
  s.ready_waits_group = waits(std::move(group_waits));
  s.events = event_count;
  s.notes = {"observed: the times are the log's (CLOCK_MONOTONIC, relative to the earliest graph_build); "
             "the stall warnings have no time and are in import-report.json"};
  write_file(dir / "summary.json", record::encode(s));
  write_file(dir / marker_name(FolderKind::kRun),
             run_marker_json({scenario_name_, dirsched_version(), "strace", 1,
                                  std::vector<std::string>{"events.jsonl", "summary.json", "tasks.csv"}}));
  if (const int e = sync_path(dir)) throw_write_error(dir, e);
}

}  // namespace

std::string strace_decode(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '%' && i + 2 < v.size() && hex_value(v[i + 1]) >= 0 &&
        hex_value(v[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(v[i + 1]) * 16 + hex_value(v[i + 2]));
      i += 2;
    } else {
      out += v[i];
    }
  }
  return out;
}

std::string strace_encode(const std::string& v) {
  std::string out;
  for (unsigned char c : v) {
    if (c <= 0x20 || c > 0x7E || c == '%' || c == '[' || c == ']') {
      char b[4];
      std::snprintf(b, sizeof b, "%%%02X", c);
      out += b;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}


std::string import_strace(const ImportOptions& options, const std::string& out_arg) {
  // Two readings of the log: the first counts and checks every process's spans and chooses the process;
  // the second keeps the chosen one's spans in vectors of the size the first counted.
  long long pid = 0;
  std::uint64_t lines = 0, spans = 0;
  Process process;
  {
    Parsed survey;
    LogReader(options, survey).read();
    Builder chooser(options, survey);
    chooser.choose();
    pid = chooser.pid();
    lines = survey.lines;
    const Candidate& c = survey.candidates.at(pid);
    spans = c.spans;
    process.submits.reserve(c.submits);
    process.attempts.reserve(c.dispatches);
    process.attempt_keys.reserve(c.dispatches);
    process.ends.reserve(c.ends);
  }
  Parsed parsed;
  LogReader(options, parsed, &process, pid, lines).read();
  if (parsed.lines != lines || parsed.candidates[pid].spans != spans)
    throw BadInput(options.log + ": the log changed while it was read (" + std::to_string(lines) + " lines and " +
                   std::to_string(spans) + " scheduler spans of pid " + std::to_string(pid) + ", then " +
                   std::to_string(parsed.lines) + " and " + std::to_string(parsed.candidates[pid].spans) + ")");
  Builder builder(options, parsed, std::move(process));
  builder.check_log();
  const fs::path out = check_output_folder(out_arg, FolderKind::kImport, "--out");
  // An earlier import is replaced only when it holds nothing but what an import writes: its two files and
  // marker (regular files), and an observed run folder holding only what a run folder's marker lists
  // (render's pictures among them).
  struct stat st {};
  if (lstat(out.c_str(), &st) == 0) {
    std::vector<std::string> foreign;
    for (const auto& e : fs::directory_iterator(out)) {
      const std::string n = e.path().filename().string();
      // Exactly a temporary of one of the import's own names, left by a process that is gone (the shared
      // predicate of the folder rule); any other name holding ".tmp-dirsched-" is the user's.
      if (const pid_t owner = temp_owner_of(n, [](const std::string& b) {
            return b == "scenario.json" || b == "import-report.json" || b == ".dirsched-import" || b == "observed";
          })) {
        if (owner == getpid() || process_gone(owner)) continue;
        throw OutputRefused("--out " + out_arg + ": holds " + n + ", a temporary of a dirsched still running (process " +
                            std::to_string(owner) + "); wait for it to finish, or stop it");
      }
      struct stat es {};
      const bool got = lstat(e.path().c_str(), &es) == 0;
      const bool dir = got && S_ISDIR(es.st_mode), file = got && S_ISREG(es.st_mode);
      if (n == "observed" && dir) {
        for (const std::string& f : foreign_entries(e.path())) foreign.push_back("observed/" + f);
      } else if (!(file && (n == "scenario.json" || n == "import-report.json" || n == ".dirsched-import"))) {
        foreign.push_back(dir ? n + "/" : n);
      }
    }
    if (!foreign.empty())
      throw OutputRefused("--out " + out_arg + ": holds " + foreign.front() +
                          ", which dirsched import did not write; replacing the folder would delete it: move it out");
  }
  NewParents parents(out);
  TempPath tmp(temp_path_beside(out));
  create_temp_dir(tmp);
  const std::string summary = builder.write(tmp.path());
  write_file(tmp.path() / marker_name(FolderKind::kImport), "{\"dirsched\":\"import\"}\n");
  replace_folder(tmp, out, FolderKind::kImport);
  parents.keep();
  return summary;
}

}  // namespace dirsched
