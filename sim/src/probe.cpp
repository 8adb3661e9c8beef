#include "dirsched/probe.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <simgrid/s4u.hpp>
#include <stdexcept>
#include <xbt/config.hpp>

#include "dirsched/error.hpp"
#include "dirsched/generate.hpp"
#include "dirsched/platform.hpp"
#include "dirsched/trace_file.hpp"
#include "collective.hpp"

namespace sg4 = simgrid::s4u;

namespace dirsched {

namespace {

// The child's report to the parent: one line per step ("step ..." before it starts, "error ..." for a
// complaint SimGrid made as an exception), on the child's stderr, beside SimGrid's own log lines.
constexpr const char* kStep = "@@dirsched-step ";
constexpr const char* kError = "@@dirsched-error ";

void say(const char* tag, const std::string& text) {
  std::string line = tag;
  for (char c : text) line += c == '\n' ? ' ' : c;
  line += '\n';
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

std::string number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

std::vector<char*> argv_of(std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return argv;
}

bool moves_bytes(const Scenario& s) {
  for (const CallableSpec& c : s.callables)
    if (c.cost.input_bytes > 0 || c.cost.output_bytes > 0) return true;
  return false;
}

bool has_flops(const Scenario& s) {
  for (const CallableSpec& c : s.callables)
    if (c.cost.flops && *c.cost.flops > 0) return true;
  return false;
}

// Every submit op of the scenario, wherever its trace is: held, streamed from its file, or generated.
template <typename F>
void for_each_submit_op(const Scenario& s, F&& f) {
  const auto visit = [&](const OpSpec& op, auto& self) -> void {
    if (!op.task.empty()) f(op);
    for (const OpSpec& inner : op.ops) self(inner, self);
  };
  OpSpec op;
  if (s.trace_file) {
    TraceReader reader(*s.trace_file);
    while (reader.next(op)) visit(op, visit);
  } else if (s.generate) {
    OpGenerator generator(*s.generate, s, s.file);
    while (generator.next(op)) visit(op, visit);
  } else {
    s.for_each_submit(f);
  }
}

// The routes a collective crosses between two hosts: for each group op whose callable declares one,
// the member pairs of its steps on the NEXT_LEVEL workers it names (ids the scheduler would reject are
// skipped: the member never runs); a SUB group may land on any SUB host, so every pair of them. Two
// members on one host exchange at no cost and need no route. Returns 3 after an "error" line.
int probe_collective_routes(const Scenario& s) {
  bool any = false;
  for (const CallableSpec& c : s.callables) any |= c.cost.collective.kind != Collective::Kind::kNone;
  if (!any) return 0;
  std::map<std::int64_t, std::string> host_of_worker;
  for (const WorkerSpec& w : s.next_level) host_of_worker.emplace(w.id.value(), w.host);
  std::set<std::pair<std::string, std::string>> pairs;
  std::map<std::pair<std::string, std::string>, std::string> why;  // pair -> the op that needs it
  std::string sub_group;  // the first SUB group op with a collective, as messages name it
  for_each_submit_op(s, [&](const OpSpec& op) {
    const Collective& col = s.callables[op.callable].cost.collective;
    if (col.kind == Collective::Kind::kNone) return;
    if (op.kind == OpKind::kSubmitSubGroup) {
      if (sub_group.empty()) sub_group = op.path + " (task '" + op.task + "', a SUB group: any two SUB hosts)";
      return;
    }
    if (op.kind != OpKind::kSubmitGroup || !op.workers) return;
    const auto n = static_cast<std::uint32_t>(op.workers->size());
    std::vector<const std::string*> hosts(n, nullptr);
    for (std::uint32_t i = 0; i < n; ++i) {
      const WorkerArg& w = (*op.workers)[i];
      if (!w.in_range()) continue;
      const auto it = host_of_worker.find(w.value());
      if (it != host_of_worker.end()) hosts[i] = &it->second;
    }
    for (std::size_t k = 0; k < collective::steps(col.kind, n); ++k)
      for (const auto& [from, to, bytes] : collective::sends(col.kind, n, k, col.bytes)) {
        if (!hosts[from] || !hosts[to] || *hosts[from] == *hosts[to]) continue;
        const auto pair = std::make_pair(*hosts[from], *hosts[to]);
        if (pairs.insert(pair).second) why[pair] = op.path + " (task '" + op.task + "')";
      }
  });
  if (!sub_group.empty())
    for (const std::string& a : s.sub_hosts)
      for (const std::string& b : s.sub_hosts)
        if (a != b && pairs.emplace(a, b).second) why[{a, b}] = sub_group;
  for (const auto& [from_name, to_name] : pairs) {
    sg4::Host* from = sg4::Host::by_name_or_null(from_name);
    sg4::Host* to = sg4::Host::by_name_or_null(to_name);
    if (!from || !to) continue;  // a host the platform lacks: the run names it with its JSON path
    const std::string route = "'" + from_name + "' to '" + to_name + "' (the collective of " +
                              why[{from_name, to_name}] + " needs one)";
    say(kStep, "route the route from " + route);  // a Full zone crashes in route_to on a missing route
    std::vector<sg4::Link*> links;
    double latency = 0;
    from->route_to(to, links, &latency);
    if (links.empty()) {
      say(kError, "no route from " + route);
      return 3;
    }
  }
  return 0;
}

// Runs in the child: every step SimGrid might abort on, in the order a run takes them. Returns the
// exit status (0 fine, 3 after an "error" line).
int probe_child(const Scenario& s, const std::vector<std::string>& cfg) {
  try {
    std::vector<std::string> args = {"dirsched", "--log=root.thres:critical", "--log=no_loc"};
    std::vector<char*> argv = argv_of(args);
    int argc = static_cast<int>(args.size());
    say(kStep, "engine");
    sg4::Engine engine(&argc, argv.data());
    for (std::size_t i = 0; i < cfg.size(); ++i) {
      say(kStep, "cfg " + std::to_string(i));
      const std::string text = cfg[i].substr(std::strlen("--cfg="));
      const auto colon = text.find(':');
      if (colon == std::string::npos || colon == 0) {
        say(kError, "expected NAME:VALUE (dirsched run --cfg=help lists the names)");
        return 3;
      }
      const std::string name = text.substr(0, colon);
      try {
        (void)simgrid::config::is_default(name.c_str());
      } catch (const std::exception&) {
        say(kError, "SimGrid has no option '" + name + "' (dirsched run --cfg=help lists them)");
        return 3;
      }
      try {
        sg4::Engine::set_config(text);
      } catch (const std::exception& e) {
        say(kError, first_line(e.what()));
        return 3;
      }
    }
    say(kStep, "platform");
    if (s.platform.empty())
      build_default_platform(s);
    else
      engine.load_platform(s.platform);
    // Hosts the scenario names that the platform lacks are reported by the run, with their JSON path.
    sg4::Host* scheduler = sg4::Host::by_name_or_null(s.scheduler_host);
    if (!scheduler) return 0;
    std::set<std::string> hosts;
    for (const WorkerSpec& w : s.next_level) hosts.insert(w.host);
    for (const std::string& h : s.sub_hosts) hosts.insert(h);
    if (const int rc = probe_collective_routes(s); rc != 0) return rc;
    const bool bytes = moves_bytes(s), flops = has_flops(s);
    for (const std::string& name : hosts) {
      sg4::Host* h = sg4::Host::by_name_or_null(name);
      if (!h) continue;
      if (flops && !(h->get_speed() > 0)) {
        say(kError, "host '" + name + "' has speed " + number(h->get_speed()) +
                        " flop/s: a flops cost on it would never finish");
        return 3;
      }
      if (!bytes) continue;
      // Input bytes go from the scheduler's host to the worker's, output bytes back.
      for (const auto& [from, to] : {std::pair{scheduler, h}, std::pair{h, scheduler}}) {
        const std::string route = "the route from '" + from->get_name() + "' to '" + to->get_name() + "'";
        say(kStep, "route " + route);
        std::vector<sg4::Link*> links;
        double latency = 0;
        from->route_to(to, links, &latency);
        if (links.empty() && from != to) {
          say(kError, "no route from '" + from->get_name() + "' to '" + to->get_name() +
                          "' (a transfer needs one)");
          return 3;
        }
        for (const sg4::Link* l : links)
          if (!(l->get_bandwidth() > 0) || !std::isfinite(l->get_bandwidth())) {
            say(kError, "link '" + l->get_name() + "' on " + route + " has bandwidth " +
                            number(l->get_bandwidth()) + ": a transfer over it would never finish");
            return 3;
          }
        if (!(latency >= 0) || !std::isfinite(latency)) {
          say(kError, route + " has latency " + number(latency));
          return 3;
        }
      }
    }
    return 0;
  } catch (const std::exception& e) {
    say(kError, first_line(e.what()));
    return 3;
  }
}

// "[0.000000] [root/CRITICAL] text" -> "text"; other lines unchanged.
std::string strip_log_prefix(std::string line) {
  for (int i = 0; i < 2 && !line.empty() && line[0] == '['; ++i) {
    const auto close = line.find("] ");
    if (close == std::string::npos) break;
    line = line.substr(close + 2);
  }
  return line;
}

// The --cfg options dirsched passes to SimGrid: the models and their numeric knobs, and the context
// factory and stack. Everything else is refused (an allow-list: a SimGrid release may add options):
// tracing/* and model-check/* write files (tracing/filename, the default simgrid.trace) or read them
// (tracing/comment-file), `path` and `plugin` change which files are read or what runs, smpi/* and
// exception/* do not apply, contexts/nthreads and contexts/synchro would run actors in parallel over the
// driver's shared state. `min`/`max` bound a number (NaN when the value is not a number: SimGrid then
// says why); `whole` wants an integer.
struct AllowedCfg {
  const char* name;
  bool numeric;
  double min, max;
  const char* why;
  const char* values = nullptr;  // the values allowed, space-separated (nullptr: SimGrid checks them)
};
constexpr AllowedCfg kAllowedCfg[] = {
    {"network/model", false, 0, 0, "the network model"},
    {"cpu/model", false, 0, 0, "the CPU model"},
    {"host/model", false, 0, 0, "the host model"},
    {"network/optim", false, 0, 0, "the network model's optimisation"},
    {"cpu/optim", false, 0, 0, "the CPU model's optimisation"},
    {"network/maxmin-selective-update", false, 0, 0, "a solver switch"},
    {"cpu/maxmin-selective-update", false, 0, 0, "a solver switch"},
    {"network/crosstraffic", false, 0, 0, "a model switch"},
    {"network/TCP-gamma", true, 0, 1e15, "the TCP window (bytes)"},
    {"network/weight-S", true, 0, 1e15, "a model parameter"},
    {"network/latency-factor", false, 0, 0, "a model parameter"},
    {"network/bandwidth-factor", false, 0, 0, "a model parameter"},
    {"network/loopback-lat", true, 0, 1e6, "the loopback latency (s)"},
    {"network/loopback-bw", true, 1e-6, 1e15, "the loopback bandwidth (bytes/s)"},
    {"maxmin/precision", true, 1e-15, 1, "the solver's precision"},
    {"maxmin/concurrency-limit", true, -1, 1e6, "the solver's concurrency limit"},
    {"surf/precision", true, 1e-15, 1, "the simulated time's precision"},
    {"precision/work-amount", true, 1e-15, 1, "the solver's precision"},
    // SimGrid checks this one only when the first actor starts, and then aborts: its values are checked here.
    {"contexts/factory", false, 0, 0, "how actors run (thread, ucontext, raw, boost)", "thread ucontext raw boost"},
    // SimGrid crashes (SIGSEGV) on a stack too small for an actor: at least 256 KiB, at most 1 GiB.
    {"contexts/stack-size", true, 256, 1048576, "an actor's stack (KiB)"},
    {"contexts/guard-size", true, 0, 256, "the guard pages below an actor's stack"},
};

}  // namespace

std::string allowed_simgrid_options() {
  std::string o;
  for (const AllowedCfg& a : kAllowedCfg) o += (o.empty() ? "" : ", ") + std::string(a.name);
  return o;
}

void check_simgrid_cfg(const std::vector<std::string>& cfg) {
  for (const std::string& c : cfg) {
    const std::string text = c.rfind("--cfg=", 0) == 0 ? c.substr(6) : c;
    const std::string shown = "--cfg=" + text;
    const auto colon = text.find(':');
    if (colon == std::string::npos || colon == 0)
      throw BadInput(shown + ": expected NAME:VALUE (docs/limits.md lists the options allowed)");
    const std::string name = text.substr(0, colon), value = text.substr(colon + 1);
    const AllowedCfg* allowed = nullptr;
    for (const AllowedCfg& a : kAllowedCfg)
      if (name == a.name) allowed = &a;
    if (!allowed)
      throw BadInput(shown + ": '" + name +
                     "' is not an option dirsched passes to SimGrid (options that write or read "
                     "files, or run actors in parallel, are refused; allowed: " +
                     allowed_simgrid_options() + "; docs/limits.md says why)");
    if (allowed->values) {
      const std::string list = std::string(" ") + allowed->values + " ";
      if (value.empty() || value.find(' ') != std::string::npos || list.find(" " + value + " ") == std::string::npos)
        throw BadInput(shown + ": " + allowed->why + ": '" + value + "' is not one of them");
    }
    if (!allowed->numeric) continue;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size()) continue;  // not a number: SimGrid says so
    if (!(v >= allowed->min && v <= allowed->max))
      throw BadInput(shown + ": " + allowed->why + " must be in [" + number(allowed->min) + ", " +
                     number(allowed->max) + "]");
  }
}

void probe_simgrid(const Scenario& s, const std::vector<std::string>& simgrid_args) {
  std::vector<std::string> cfg;
  for (const std::string& a : simgrid_args)
    if (a.rfind("--cfg=", 0) == 0) cfg.push_back(a);
  check_simgrid_cfg(cfg);
  // The platform this code builds always has its routes: without --cfg nothing can go wrong there.
  if (s.platform.empty() && cfg.empty()) return;
  const std::string platform = s.platform.empty() ? "the default platform" : s.platform;
  if (!s.platform.empty()) {
    std::error_code ec;
    const auto st = std::filesystem::status(s.platform, ec);
    if (std::filesystem::is_directory(st))
      throw ScenarioError(s.file, "platform", s.platform + " is a directory, not a platform file");
    if (!std::filesystem::is_regular_file(st))
      throw ScenarioError(s.file, "platform", s.platform + ": not a readable platform file");
  }

  int fds[2];
  if (pipe(fds) != 0) throw BadInput("cannot check the platform: pipe failed");
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) throw BadInput("cannot check the platform: fork failed");
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    dup2(fds[1], STDOUT_FILENO);
    close(fds[1]);
    _exit(probe_child(s, cfg));
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (out.size() < (1u << 20)) out.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;

  // Which step it was in, SimGrid's error line and its complaint (the first log line it printed).
  std::string step, error, complaint;
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < out.size();) {
    const auto end = out.find('\n', at);
    lines.push_back(out.substr(at, end == std::string::npos ? std::string::npos : end - at));
    at = end == std::string::npos ? out.size() : end + 1;
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l.rfind(kStep, 0) == 0) {
      step = l.substr(std::strlen(kStep));
    } else if (l.rfind(kError, 0) == 0) {
      error = l.substr(std::strlen(kError));
    } else if (complaint.empty() && l.find("/CRITICAL]") != std::string::npos) {
      complaint = strip_log_prefix(l);
      // A complaint may start on the next line, and end with a list ("Possible values:" then "- 'X': ...").
      for (std::size_t j = i + 1; complaint.empty() && j < lines.size(); ++j) complaint = lines[j], i = j;
      if (!complaint.empty() && complaint.back() == ':') {
        std::string values;
        for (std::size_t j = i + 1; j < lines.size(); ++j) {
          const auto q = lines[j].find("- '");
          if (q == std::string::npos) continue;
          const auto q2 = lines[j].find('\'', q + 3);
          if (q2 == std::string::npos) continue;
          values += (values.empty() ? " " : ", ") + lines[j].substr(q + 3, q2 - q - 3);
        }
        complaint += values;
      }
    }
  }
  std::string why = !error.empty() ? error : !complaint.empty() ? complaint : "";
  if (why.empty()) {
    why = WIFSIGNALED(status) ? std::string("SimGrid crashed (") + strsignal(WTERMSIG(status)) + ")"
                              : "SimGrid stopped with status " + std::to_string(WEXITSTATUS(status));
  }
  if (step.rfind("cfg ", 0) == 0) {
    const std::size_t i = std::stoul(step.substr(4));
    throw BadInput(cfg.at(i) + ": " + why);
  }
  std::string with;
  for (const std::string& c : cfg) with += (with.empty() ? " (with " : " ") + c;
  if (!with.empty()) with += ")";
  if (step.rfind("route ", 0) == 0 && error.empty())  // SimGrid 3.32 crashes on a missing route of a Full zone
    why = "no route from " + step.substr(std::strlen("route the route from ")) +
          (step.find(" needs one)") == std::string::npos ? " (a transfer needs one)" : "");
  throw ScenarioError(s.file, "platform", platform + with + ": " + why);
}

void print_simgrid_help() {
  std::vector<std::string> args = {"dirsched", "--log=root.thres:critical"};
  std::vector<char*> argv = argv_of(args);
  int argc = static_cast<int>(args.size());
  sg4::Engine engine(&argc, argv.data());
  simgrid::config::help();
  std::fflush(stdout);
}

}  // namespace dirsched
