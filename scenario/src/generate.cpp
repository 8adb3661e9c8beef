#include "dirsched/generate.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

namespace dirsched {
namespace {

struct Params {
  const GenerateSpec& spec;
  const std::string& file;
  std::set<std::string> used;

  double get(const std::string& key, double fallback, double min = 0, double max = kMaxTimeS) {
    used.insert(key);
    auto it = spec.params.find(key);
    const double v = it == spec.params.end() ? fallback : it->second;
    if (!std::isfinite(v) || v < min || v > max)
      throw ScenarioError(file, "generate." + key,
                          "must be a number from " + number_text(min) + " to " + number_text(max) +
                              ", found " + number_text(v));
    return v;
  }
  // A whole number in [min, max] (checked before the cast: 2e19 must not wrap).
  std::size_t count(const std::string& key, double fallback, double min = 1,
                    double max = static_cast<double>(kMaxTasks)) {
    const double v = get(key, fallback, min, max);
    if (v != std::floor(v)) throw ScenarioError(file, "generate." + key, "must be a whole number");
    return static_cast<std::size_t>(v);
  }
  // The number of tasks a family makes, computed in double (no overflow), within kMaxTasks.
  void total(double tasks) const {
    if (tasks > static_cast<double>(kMaxTasks))
      throw ScenarioError(file, "generate",
                          "the family '" + spec.family + "' would make " + number_text(tasks) +
                              " tasks, more than the limit of " + std::to_string(kMaxTasks));
  }
  void done() const {
    for (const auto& [k, v] : spec.params)
      if (!used.count(k))
        throw ScenarioError(file, "generate." + k, "unknown option for family '" + spec.family + "'");
  }
};

class Builder {
 public:
  Builder(Scenario& s, std::size_t workers, double duration) : s_(s) {
    if (s_.next_level.empty())
      for (std::size_t i = 0; i < workers; ++i)
        s_.next_level.push_back(
            {WorkerId(static_cast<std::int64_t>(i)), WorkerKind::kLocalChip, "chip" + std::to_string(i)});
    if (s_.callables.empty()) {
      CallableSpec c;
      c.name = "k";
      c.ns = Namespace::kLocalChip;
      c.cost.duration_s = duration;
      s_.callables.push_back(c);
    }
  }
  std::size_t buffer(const std::string& name) {
    s_.buffers.push_back({name, 0, Memory::kHost, std::nullopt});
    return s_.buffers.size() - 1;
  }
  OpSpec& single(const std::string& task, std::size_t worker) {
    OpSpec op = base(OpKind::kSubmitNextLevel, task, 1);
    op.worker = WorkerArg(WorkerId(static_cast<std::int64_t>(worker)));
    s_.trace.push_back(std::move(op));
    return s_.trace.back();
  }
  OpSpec& group(const std::string& task, const std::vector<std::size_t>& workers) {
    OpSpec op = base(OpKind::kSubmitGroup, task, workers.size());
    op.workers.emplace();
    for (std::size_t w : workers) op.workers->push_back(WorkerArg(WorkerId(static_cast<std::int64_t>(w))));
    s_.trace.push_back(std::move(op));
    return s_.trace.back();
  }
  void drain() { s_.trace.push_back(base(OpKind::kDrain, "", 0)); }

 private:
  OpSpec base(OpKind kind, const std::string& task, std::size_t members) {
    OpSpec op;
    op.kind = kind;
    op.path = "trace[" + std::to_string(s_.trace.size()) + "]";
    op.task = task;
    op.args.resize(members);  // duration_s and fail stay empty: the callable's cost, no failure
    return op;
  }
  Scenario& s_;
};

ArgSpec arg(std::size_t buffer, Tag tag) {
  return ArgSpec{buffer, tag};
}

}  // namespace

void generate_into(const GenerateSpec& spec, Scenario& s, const std::string& file) {
  Params p{spec, file, {}};
  std::mt19937_64 rng(spec.seed);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const std::size_t workers = p.count("workers", 8, 1, static_cast<double>(kMaxWorkers));
  const double duration = p.get("duration_s", 0.001);
  // Arrivals: every family submits all at t=0 unless a rate (Poisson) or an interval spaces the submits.
  const bool poisson = spec.params.count("arrival_rate") > 0, spaced = spec.params.count("interval") > 0;
  if (poisson && spaced)
    throw ScenarioError(file, "generate.interval", "give arrival_rate or interval, not both");
  const double rate = poisson ? p.get("arrival_rate", 1, 0, 1e300) : 0,
               interval = spaced ? p.get("interval", 0) : 0;
  if (poisson && rate <= 0) throw ScenarioError(file, "generate.arrival_rate", "must be greater than 0");
  if (!s.next_level.empty() && s.next_level.size() < workers)
    throw ScenarioError(file, "generate.workers",
                        "more workers than the scenario's workers.next_level lists");
  Builder b(s, workers, duration);
  if (spec.family == "stream") {
    const std::size_t n = p.count("tasks", 1000);
    s.trace.reserve(n + 1);
    for (std::size_t i = 0; i < n; ++i) b.single("t" + std::to_string(i), i % workers);
  } else if (spec.family == "fork-join") {
    const std::size_t rounds = p.count("rounds", 10), width = p.count("width", static_cast<double>(workers));
    p.total(static_cast<double>(rounds) * (static_cast<double>(width) + 2));
    std::size_t prev = 0;
    bool has_prev = false;
    for (std::size_t r = 0; r < rounds; ++r) {
      const std::string R = std::to_string(r);
      const std::size_t root = b.buffer("fork" + R);
      OpSpec& fork = b.single("fork" + R, pick(workers));
      if (has_prev) fork.args[0].push_back(arg(prev, Tag::kInput));
      fork.args[0].push_back(arg(root, Tag::kOutput));
      std::vector<std::size_t> parts;
      for (std::size_t k = 0; k < width; ++k) {
        parts.push_back(b.buffer("part" + R + "_" + std::to_string(k)));
        OpSpec& t = b.single("work" + R + "_" + std::to_string(k), k % workers);
        t.args[0] = {arg(root, Tag::kInput), arg(parts.back(), Tag::kOutput)};
      }
      prev = b.buffer("join" + R);
      OpSpec& join = b.single("join" + R, pick(workers));
      for (std::size_t part : parts) join.args[0].push_back(arg(part, Tag::kInput));
      join.args[0].push_back(arg(prev, Tag::kOutput));
      has_prev = true;
    }
  } else if (spec.family == "chains") {
    const std::size_t chains = p.count("chains", static_cast<double>(workers)),
                      length = p.count("length", 10);
    p.total(static_cast<double>(chains) * static_cast<double>(length));
    std::vector<std::size_t> bufs;
    for (std::size_t c = 0; c < chains; ++c) bufs.push_back(b.buffer("chain" + std::to_string(c)));
    for (std::size_t k = 0; k < length; ++k)
      for (std::size_t c = 0; c < chains; ++c) {
        OpSpec& t = b.single("c" + std::to_string(c) + "_" + std::to_string(k), (c + k) % workers);
        t.args[0].push_back(arg(bufs[c], Tag::kInOut));
      }
  } else if (spec.family == "tp-groups") {
    const std::size_t groups = p.count("groups", 10), size = p.count("size", 2);
    const std::size_t singles = p.count("singles_per_group", 2, 0);
    p.total(static_cast<double>(groups) * (1 + static_cast<double>(singles)));
    if (size > workers)
      throw ScenarioError(file, "generate.size", "a group cannot be larger than the worker count");
    for (std::size_t g = 0; g < groups; ++g) {
      std::vector<std::size_t> ws;
      for (std::size_t m = 0; m < size; ++m) ws.push_back((g * size + m) % workers);
      b.group("g" + std::to_string(g), ws);
      for (std::size_t k = 0; k < singles; ++k)
        b.single("s" + std::to_string(g) + "_" + std::to_string(k), pick(workers));
    }
  } else if (spec.family == "random") {
    const std::size_t n = p.count("tasks", 100), edges = p.count("edges", 2, 0, 1024);
    const double fraction = p.get("group_fraction", 0.1);
    if (fraction > 1) throw ScenarioError(file, "generate.group_fraction", "must be at most 1");
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t out = b.buffer("b" + std::to_string(i));
      const bool group = workers >= 2 && static_cast<double>(rng() >> 11) * 0x1.0p-53 < fraction;
      OpSpec* op;
      if (group) {
        const std::size_t k = 2 + pick(std::min<std::size_t>(3, workers - 1));
        std::vector<std::size_t> ws;
        while (ws.size() < k) {
          const std::size_t w = pick(workers);
          if (std::find(ws.begin(), ws.end(), w) == ws.end()) ws.push_back(w);
        }
        op = &b.group("t" + std::to_string(i), ws);
      } else {
        op = &b.single("t" + std::to_string(i), pick(workers));
      }
      if (i > 0)
        for (std::size_t e = 0; e < edges; ++e) op->args[0].push_back(arg(pick(i), Tag::kInput));
      op->args[0].push_back(arg(out, Tag::kOutput));
    }
  } else {
    throw ScenarioError(
        file, "generate.family",
        "unknown family '" + spec.family + "' (stream, fork-join, chains, tp-groups, random)");
  }
  p.done();
  if (poisson || spaced) {
    // A stream of its own, so that the same seed gives the same DAG with or without arrivals.
    std::mt19937_64 arrivals(spec.seed ^ 0x9e3779b97f4a7c15ULL);
    std::exponential_distribution<double> gap(poisson ? rate : 1.0);
    double t = 0;
    std::size_t k = 0;
    for (OpSpec& op : s.trace) {
      if (op.task.empty()) continue;
      t = poisson ? t + gap(arrivals) : interval * static_cast<double>(k);
      op.at_s = t;
      ++k;
    }
  }
  b.drain();
}

void write_scenario_json(const Scenario& s, std::ostream& out) {
  using nlohmann::json;
  auto q = [](const std::string& v) { return json(v).dump(); };
  out << "{\n  \"name\": " << q(s.name) << ",\n";
  if (!s.description.empty()) out << "  \"description\": " << q(s.description) << ",\n";
  out << "  \"seed\": " << s.seed << ",\n  \"workers\": {\n    \"next_level\": [";
  for (std::size_t i = 0; i < s.next_level.size(); ++i)
    out << (i ? ",\n      " : "\n      ") << "{ \"id\": " << s.next_level[i].id.value() << ", \"kind\": \""
        << to_string(s.next_level[i].kind) << "\", \"host\": " << q(s.next_level[i].host) << " }";
  out << "\n    ],\n    \"sub\": " << s.sub_hosts.size() << "\n  },\n  \"callables\": {";
  for (std::size_t i = 0; i < s.callables.size(); ++i) {
    const CallableSpec& c = s.callables[i];
    out << (i ? ",\n    " : "\n    ") << q(c.name) << ": { \"namespace\": \"" << to_string(c.ns) << "\"";
    if (c.cost.duration_s) out << ", \"duration_s\": " << json(*c.cost.duration_s).dump();
    if (c.cost.flops) out << ", \"flops\": " << json(*c.cost.flops).dump();
    out << " }";
  }
  out << "\n  },\n  \"buffers\": {";
  for (std::size_t i = 0; i < s.buffers.size(); ++i)
    out << (i ? ",\n    " : "\n    ") << q(s.buffers[i].name)
        << ": { \"bytes\": " << json(s.buffers[i].bytes).dump() << " }";
  out << "\n  },\n  \"trace\": [";
  static const char* names[] = {"submit_next_level",
                                "submit_next_level_group",
                                "submit_sub",
                                "submit_sub_group",
                                "batch",
                                "sleep",
                                "drain"};
  for (std::size_t i = 0; i < s.trace.size(); ++i) {
    const OpSpec& op = s.trace[i];
    out << (i ? ",\n    " : "\n    ") << "{ \"op\": \"" << names[static_cast<int>(op.kind)] << "\"";
    if (op.at_s) out << ", \"at_s\": " << json(*op.at_s).dump();
    if (!op.task.empty())
      out << ", \"task\": " << q(op.task) << ", \"callable\": " << q(s.callables[op.callable].name);
    if (op.worker) out << ", \"worker\": " << op.worker->value();
    if (op.workers) {
      out << ", \"workers\": [";
      for (std::size_t w = 0; w < op.workers->size(); ++w) out << (w ? ", " : "") << (*op.workers)[w].value();
      out << "]";
    }
    auto args = [&](const std::vector<ArgSpec>& list) {
      out << "[";
      for (std::size_t a = 0; a < list.size(); ++a)
        out << (a ? ", " : "") << "{ \"buffer\": " << q(s.buffers[*list[a].buffer].name) << ", \"tag\": \""
            << to_string(list[a].tag) << "\" }";
      out << "]";
    };
    if (op.kind == OpKind::kSubmitNextLevel && !op.args[0].empty()) {
      out << ", \"args\": ";
      args(op.args[0]);
    }
    if (op.kind == OpKind::kSubmitGroup) {
      out << ", \"args_list\": [";
      for (std::size_t m = 0; m < op.args.size(); ++m) {
        if (m) out << ", ";
        args(op.args[m]);
      }
      out << "]";
    }
    out << " }";
  }
  out << "\n  ]\n}\n";
}

}  // namespace dirsched
