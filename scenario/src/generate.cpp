#include "dirsched/generate.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "dirsched/trace_file.hpp"

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
  // A whole number in [min, max] (checked before the cast: 2e19 must not wrap); max defaults to the
  // spec's task limit.
  std::size_t count(const std::string& key, double fallback, double min = 1, double max = -1) {
    const double v = get(key, fallback, min, max < 0 ? static_cast<double>(spec.max_tasks) : max);
    if (v != std::floor(v)) throw ScenarioError(file, "generate." + key, "must be a whole number");
    return static_cast<std::size_t>(v);
  }
  // The number of tasks a family makes, computed in double (no overflow), within the task limit.
  void total(double tasks) const {
    if (tasks > static_cast<double>(spec.max_tasks))
      throw ScenarioError(file, "generate",
                          "the family '" + spec.family + "' would make " + number_text(tasks) +
                              " tasks, more than the limit of " + std::to_string(spec.max_tasks));
  }
  // A product the family pays for before its first op (edges, members), within the task limit.
  void product(double value, const std::string& what, const std::string& of) const {
    if (value > static_cast<double>(spec.max_tasks))
      throw ScenarioError(file, "generate",
                          "the family '" + spec.family + "' would make " + number_text(value) + " " + what + " (" + of +
                              "), more than the limit of " + std::to_string(spec.max_tasks));
  }
  void done() const {
    for (const auto& [k, v] : spec.params)
      if (!used.count(k))
        throw ScenarioError(file, "generate." + k, "unknown option for family '" + spec.family + "'");
  }
};

ArgSpec arg(std::size_t buffer, Tag tag) {
  return ArgSpec{buffer, tag, std::nullopt};
}

}  // namespace

// The families as state machines over the op index: next() makes op `op_` from the counters alone
// and the draws of rng_, in the order the old whole-trace builder drew them, so a seed gives the
// same trace either way (generate_into() is next() in a loop).
OpGenerator::OpGenerator(const GenerateSpec& spec, const Scenario& s, const std::string& file)
    : spec_(std::make_shared<const GenerateSpec>(spec)),
      rng_(spec.seed),
      arrivals_(spec.seed ^ 0x9e3779b97f4a7c15ULL) {
  Params p{spec, file, {}};
  workers_ = p.count("workers", 8, 1, static_cast<double>(kMaxWorkers));
  duration_ = p.get("duration_s", 0.001);
  // Arrivals: every family submits all at t=0 unless a rate (Poisson) or an interval spaces the submits.
  poisson_ = spec.params.count("arrival_rate") > 0;
  spaced_ = spec.params.count("interval") > 0;
  if (poisson_ && spaced_)
    throw ScenarioError(file, "generate.interval", "give arrival_rate or interval, not both");
  rate_ = poisson_ ? p.get("arrival_rate", 1, 0, 1e300) : 0;
  interval_ = spaced_ ? p.get("interval", 0) : 0;
  if (poisson_ && rate_ <= 0) throw ScenarioError(file, "generate.arrival_rate", "must be greater than 0");
  gap_ = std::exponential_distribution<double>(poisson_ ? rate_ : 1.0);
  if (!s.next_level.empty() && s.next_level.size() < workers_)
    throw ScenarioError(file, "generate.workers",
                        "more workers than the scenario's workers.next_level lists");
  buffer_base_ = spec.buffer_base;
  if (spec.family == "stream") {
    family_ = Family::kStream;
    a_ = p.count("tasks", 1000);
    submits_ = a_;
  } else if (spec.family == "fork-join") {
    family_ = Family::kForkJoin;
    a_ = p.count("rounds", 10);
    b_ = p.count("width", static_cast<double>(workers_));
    p.total(static_cast<double>(a_) * (static_cast<double>(b_) + 2));
    submits_ = a_ * (b_ + 2);
  } else if (spec.family == "chains") {
    family_ = Family::kChains;
    a_ = p.count("chains", static_cast<double>(workers_));
    b_ = p.count("length", 10);
    p.total(static_cast<double>(a_) * static_cast<double>(b_));
    submits_ = a_ * b_;
  } else if (spec.family == "tp-groups") {
    family_ = Family::kTpGroups;
    a_ = p.count("groups", 10);
    b_ = p.count("size", 2);
    c_ = p.count("singles_per_group", 2, 0);
    p.total(static_cast<double>(a_) * (1 + static_cast<double>(c_)));
    if (b_ > workers_)
      throw ScenarioError(file, "generate.size", "a group cannot be larger than the worker count");
    p.product(static_cast<double>(a_) * static_cast<double>(b_), "group members", "groups x size");
    submits_ = a_ * (1 + c_);
  } else if (spec.family == "random") {
    family_ = Family::kRandom;
    a_ = p.count("tasks", 100);
    b_ = p.count("edges", 2, 0, static_cast<double>(kMaxGenEdges));
    p.product(static_cast<double>(a_) * static_cast<double>(b_), "edges", "tasks x edges");
    fraction_ = p.get("group_fraction", 0.1);
    if (fraction_ > 1) throw ScenarioError(file, "generate.group_fraction", "must be at most 1");
    submits_ = a_;
  } else {
    throw ScenarioError(
        file, "generate.family",
        "unknown family '" + spec.family + "' (stream, fork-join, chains, tp-groups, random)");
  }
  p.done();
}

void OpGenerator::setup(Scenario& s) const {
  if (s.next_level.empty())
    for (std::size_t i = 0; i < workers_; ++i)
      s.next_level.push_back(
          {WorkerId(static_cast<std::int64_t>(i)), WorkerKind::kLocalChip, "chip" + std::to_string(i)});
  if (s.callables.empty()) {
    CallableSpec c;
    c.name = "k";
    c.ns = Namespace::kLocalChip;
    c.cost.duration_s = duration_;
    s.callables.push_back(c);
  }
  auto buffer = [&](std::string name) {
    s.buffers.push_back({std::move(name), 0, Memory::kHost, std::nullopt});
  };
  switch (family_) {
    case Family::kForkJoin:
      for (std::size_t r = 0; r < a_; ++r) {
        const std::string R = std::to_string(r);
        buffer("fork" + R);
        for (std::size_t k = 0; k < b_; ++k) buffer("part" + R + "_" + std::to_string(k));
        buffer("join" + R);
      }
      break;
    case Family::kChains:
      for (std::size_t c = 0; c < a_; ++c) buffer("chain" + std::to_string(c));
      break;
    case Family::kRandom:
      for (std::size_t i = 0; i < a_; ++i) buffer("b" + std::to_string(i));
      break;
    default:
      break;
  }
}

void OpGenerator::submit(OpSpec& op, OpKind kind, std::string task, std::size_t members) {
  op = OpSpec();
  op.kind = kind;
  op.path = "trace[" + std::to_string(op_) + "]";
  op.task = std::move(task);
  op.args.resize(members);  // duration_s and fail stay empty: the callable's cost, no failure
}

void OpGenerator::single(OpSpec& op, std::string task, std::size_t worker) {
  submit(op, OpKind::kSubmitNextLevel, std::move(task), 1);
  op.worker = WorkerArg(WorkerId(static_cast<std::int64_t>(worker)));
}

void OpGenerator::group(OpSpec& op, std::string task, const std::vector<std::size_t>& workers) {
  submit(op, OpKind::kSubmitGroup, std::move(task), workers.size());
  op.workers.emplace();
  for (std::size_t w : workers) op.workers->push_back(WorkerArg(WorkerId(static_cast<std::int64_t>(w))));
}

bool OpGenerator::next(OpSpec& op) {
  if (op_ > submits_) return false;
  if (op_ == submits_) {  // the final drain
    submit(op, OpKind::kDrain, "", 0);
    ++op_;
    return true;
  }
  const std::size_t i = op_;
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng_() % n); };
  auto buf = [&](std::size_t k) { return buffer_base_ + k; };
  switch (family_) {
    case Family::kStream:
      single(op, "t" + std::to_string(i), i % workers_);
      break;
    case Family::kForkJoin: {
      const std::size_t per = b_ + 2, r = i / per, k = i % per;
      const std::string R = std::to_string(r);
      const std::size_t root = buf(r * per), join = buf(r * per + per - 1);
      if (k == 0) {
        single(op, "fork" + R, pick(workers_));
        if (r > 0) op.args[0].push_back(arg(buf(r * per - 1), Tag::kInput));  // the previous round's join
        op.args[0].push_back(arg(root, Tag::kOutput));
      } else if (k < per - 1) {
        single(op, "work" + R + "_" + std::to_string(k - 1), (k - 1) % workers_);
        op.args[0] = {arg(root, Tag::kInput), arg(buf(r * per + k), Tag::kOutput)};
      } else {
        single(op, "join" + R, pick(workers_));
        for (std::size_t part = 1; part < per - 1; ++part)
          op.args[0].push_back(arg(buf(r * per + part), Tag::kInput));
        op.args[0].push_back(arg(join, Tag::kOutput));
      }
      break;
    }
    case Family::kChains: {
      const std::size_t k = i / a_, c = i % a_;
      single(op, "c" + std::to_string(c) + "_" + std::to_string(k), (c + k) % workers_);
      op.args[0].push_back(arg(buf(c), Tag::kInOut));
      break;
    }
    case Family::kTpGroups: {
      const std::size_t per = 1 + c_, g = i / per, k = i % per;
      if (k == 0) {
        std::vector<std::size_t> ws;
        for (std::size_t m = 0; m < b_; ++m) ws.push_back((g * b_ + m) % workers_);
        group(op, "g" + std::to_string(g), ws);
      } else {
        single(op, "s" + std::to_string(g) + "_" + std::to_string(k - 1), pick(workers_));
      }
      break;
    }
    case Family::kRandom: {
      const bool is_group = workers_ >= 2 && static_cast<double>(rng_() >> 11) * 0x1.0p-53 < fraction_;
      if (is_group) {
        const std::size_t k = 2 + pick(std::min<std::size_t>(3, workers_ - 1));
        std::vector<std::size_t> ws;
        while (ws.size() < k) {
          const std::size_t w = pick(workers_);
          if (std::find(ws.begin(), ws.end(), w) == ws.end()) ws.push_back(w);
        }
        group(op, "t" + std::to_string(i), ws);
      } else {
        single(op, "t" + std::to_string(i), pick(workers_));
      }
      if (i > 0)
        for (std::size_t e = 0; e < b_; ++e) op.args[0].push_back(arg(buf(pick(i)), Tag::kInput));
      op.args[0].push_back(arg(buf(i), Tag::kOutput));
      break;
    }
  }
  if (poisson_ || spaced_) {
    // A stream of its own, so that the same seed gives the same DAG with or without arrivals.
    arrival_t_ = poisson_ ? arrival_t_ + gap_(arrivals_) : interval_ * static_cast<double>(i);
    op.at_s = arrival_t_;
  }
  ++op_;
  return true;
}

void generate_into(const GenerateSpec& spec, Scenario& s, const std::string& file) {
  GenerateSpec at = spec;
  at.buffer_base = s.buffers.size();
  OpGenerator gen(at, s, file);
  gen.setup(s);
  s.trace.reserve(gen.op_count());
  OpSpec op;
  while (gen.next(op)) s.trace.push_back(std::move(op));
}

void generate_lazily(const GenerateSpec& spec, Scenario& s, const std::string& file) {
  GenerateSpec at = spec;
  at.buffer_base = s.buffers.size();
  OpGenerator gen(at, s, file);
  gen.setup(s);
  s.generate = gen.spec();
}

void materialize_trace(Scenario& s, const std::function<void(std::size_t ops)>& every) {
  if (s.trace_file) return materialize_trace_file(s, every);
  if (!s.generate) return;
  OpGenerator gen(*s.generate, s, s.file);
  s.trace.reserve(gen.op_count());
  OpSpec op;
  while (gen.next(op)) {
    s.trace.push_back(std::move(op));
    if (every && s.trace.size() % kMaterializeEvery == 0) every(s.trace.size());
  }
  s.generate.reset();
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
