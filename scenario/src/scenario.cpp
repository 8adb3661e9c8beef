#include "dirsched/scenario.hpp"

#include <algorithm>

#include <cmath>
#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "dirsched/error.hpp"
#include "dirsched/generate.hpp"
#include "dirsched/platform_file.hpp"
#include "dirsched/suggest.hpp"
#include "dirsched/trace_file.hpp"
#include "op_reader.hpp"

namespace dirsched {
namespace detail {

using nlohmann::json;

// Walks one JSON object, remembering its path and which keys were read, so that unknown keys fail.
class Obj {
 public:
  Obj(const json& j, std::string path, const std::string& file) : j_(j), path_(std::move(path)), file_(file) {
    if (!j.is_object()) fail("expected an object, found " + type_of(j));
  }
  [[noreturn]] void fail(const std::string& what, const std::string& key = "") const {
    throw ScenarioError(file_, key.empty() ? path_ : at(key), what);
  }
  std::string at(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  static std::string type_of(const json& j) {
    if (j.is_boolean()) return "a boolean";
    if (j.is_number_integer()) return "an integer";
    if (j.is_number()) return "a number";
    if (j.is_string()) return "a string";
    if (j.is_array()) return "an array";
    if (j.is_null()) return "null";
    return "an object";
  }
  bool has(const std::string& key) const { return j_.contains(key); }
  const json* get(const std::string& key) {
    seen_.insert(key);
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  const json& need(const std::string& key) {
    const json* v = get(key);
    if (!v) fail("missing required key '" + key + "'");
    return *v;
  }
  std::string str(const std::string& key, std::optional<std::string> fallback = std::nullopt) {
    const json* v = get(key);
    if (!v) {
      if (!fallback) fail("missing required key '" + key + "'");
      return *fallback;
    }
    if (!v->is_string()) fail("expected a string, found " + type_of(*v), key);
    std::string text = v->get<std::string>();
    // Names are data: a control character would reach a terminal, a C string would cut at a NUL. A
    // description may hold newlines and tabs.
    if (const std::string bad = control_character(text, key == "description"); !bad.empty())
      fail("holds the control character " + bad + " (names and values may not)", key);
    return text;
  }
  // The first control character of `s` as text (\x00-\x1f, \x7f, or \u0080-\u009f), or "". With
  // `layout`, newline and tab are allowed.
  static std::string control_character(const std::string& s, bool layout = false) {
    for (std::size_t i = 0; i < s.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(s[i]);
      char b[12] = "";
      if ((c < 0x20 && !(layout && (c == '\n' || c == '\t'))) || c == 0x7f)
        std::snprintf(b, sizeof b, "\\x%02x", c);
      else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(s[i + 1]) <= 0x9F)
        std::snprintf(b, sizeof b, "\\u%04x", static_cast<unsigned char>(s[i + 1]));
      if (b[0]) return b;
    }
    return "";
  }
  double num(const std::string& key, double fallback, bool non_negative = true) {
    const json* v = get(key);
    if (!v) return fallback;
    return number(*v, at(key), non_negative);
  }
  double number(const json& v, const std::string& path, bool non_negative = true) const {
    if (!v.is_number()) throw ScenarioError(file_, path, "expected a number, found " + type_of(v));
    const double d = v.get<double>();
    if (!std::isfinite(d)) throw ScenarioError(file_, path, "expected a finite number");
    if (non_negative && d < 0) throw ScenarioError(file_, path, "must not be negative");
    return d;
  }
  // A simulated time (seconds): finite, non-negative, at most kMaxTimeS.
  double time(const std::string& key, double fallback) {
    const json* v = get(key);
    return v ? time_value(*v, at(key)) : fallback;
  }
  double time_value(const json& v, const std::string& path) const {
    return at_most(number(v, path), kMaxTimeS, path, "s", "2^32 s, the bound of every simulated time");
  }
  // A number at most `max`; `unit` and `limit` word the message.
  double bounded(const std::string& key, double fallback, double max, const char* unit, const char* limit) {
    const json* v = get(key);
    return v ? at_most(number(*v, at(key)), max, at(key), unit, limit) : fallback;
  }
  double at_most(double d, double max, const std::string& path, const char* unit, const char* limit) const {
    if (d > max)
      throw ScenarioError(file_, path,
                          number_text(d) + " " + unit + " is more than the limit of " + number_text(max) +
                              " " + unit + " (" + limit + ")");
    return d;
  }
  // Call after reading every key this object may hold.
  void done() const {
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (!seen_.count(it.key())) {
        // The keys this object may hold are the ones read: the closest are named.
        const std::string near = did_you_mean(it.key(), std::vector<std::string>(seen_.begin(), seen_.end()), true);
        fail("unknown key '" + it.key() + "'" + (near.empty() ? "" : "; " + near), it.key());
      }
  }
  const std::string& path() const { return path_; }

 private:
  const json& j_;
  std::string path_;
  const std::string& file_;
  std::set<std::string> seen_;
};

}  // namespace detail

namespace {

// A `choose` space's lists depend on K, ordered, the ids and which ids the contract allows: a sweep or
// optimize parses its document once per variant, and each parse takes the lists from here instead of
// walking a space of up to 1,000,000 lists again. The last few spaces are kept, per process.
struct ChooseKey {
  std::size_t k = 0;
  bool ordered = false;
  std::vector<std::int64_t> ids;
  std::vector<bool> allowed;
  bool operator==(const ChooseKey& o) const {
    return k == o.k && ordered == o.ordered && ids == o.ids && allowed == o.allowed;
  }
};
struct ChooseLists {
  std::vector<nlohmann::json> lists;
  std::size_t left_out = 0;
};

ChooseLists expand_choose(const ChooseKey& key) {
  ChooseLists out;
  std::vector<std::size_t> pick(key.k);
  std::vector<bool> taken(key.ids.size(), false);
  std::function<void(std::size_t, std::size_t)> rec = [&](std::size_t depth, std::size_t start) {
    if (depth == key.k) {
      nlohmann::json list = nlohmann::json::array();
      bool ok = true;
      for (std::size_t i : pick) list.push_back(key.ids[i]), ok = ok && key.allowed[i];
      if (ok)
        out.lists.push_back(std::move(list));
      else
        ++out.left_out;
      return;
    }
    // Unordered, a pick at i leaves ids.size() - i - 1 ids for the k - depth - 1 picks still to make:
    // past that no list can be completed, and walking there anyway visits every increasing sequence
    // (2^30 calls for `choose 30 from` 30 ids, a space of one list). Ordered, every prefix completes.
    const std::size_t end = key.ordered ? key.ids.size() : key.ids.size() - (key.k - depth - 1);
    for (std::size_t i = key.ordered ? 0 : start; i < end; ++i) {
      if (taken[i]) continue;
      taken[i] = true;
      pick[depth] = i;
      rec(depth + 1, i + 1);
      taken[i] = false;
    }
  };
  rec(0, 0);
  return out;
}

std::shared_ptr<const ChooseLists> choose_lists(ChooseKey key) {
  static std::mutex mutex;
  static std::vector<std::pair<ChooseKey, std::shared_ptr<const ChooseLists>>> kept;  // newest last
  constexpr std::size_t kKept = 4;
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (const auto& [k, lists] : kept)
      if (k == key) return lists;
  }
  auto lists = std::make_shared<const ChooseLists>(expand_choose(key));
  std::lock_guard<std::mutex> lock(mutex);
  if (kept.size() >= kKept) kept.erase(kept.begin());
  kept.emplace_back(std::move(key), lists);
  return lists;
}


using detail::Obj;
using detail::OpReader;
using detail::TimeBudget;
using nlohmann::json;

constexpr const char* kBytesLimit = "2^53, the largest byte count a double holds exactly";

std::string count_limit(std::size_t n, std::size_t max, const std::string& what) {
  return std::to_string(n) + " " + what + " is more than the limit of " + std::to_string(max);
}

std::string index_path(const std::string& base, std::size_t i) {
  return base + "[" + std::to_string(i) + "]";
}

const json& array_at(Obj& o, const std::string& key) {
  const json& v = o.need(key);
  if (!v.is_array()) o.fail("expected an array, found " + Obj::type_of(v), key);
  return v;
}

// nlohmann keeps integers from 2^63 to 2^64-1 as unsigned: too large for a worker id.
bool beyond_id_range(const json& v) {
  return v.is_number_unsigned() &&
         v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
}

std::int64_t integer_id(const json& v, const std::string& path, const std::string& file) {
  if (!v.is_number_integer())
    throw ScenarioError(file, path, "expected an integer worker id, found " + Obj::type_of(v));
  if (beyond_id_range(v))
    throw ScenarioError(file, path,
                        "worker id " + v.dump() + " is larger than the largest worker id (2^63-1)");
  return v.get<std::int64_t>();
}

// A worker id as the caller wrote it: an integer (in the id type's range or not), or anything
// else, which the core refuses. An integer beyond the range stays an integer that names no worker.
WorkerArg worker_arg(const json& v) {
  if (beyond_id_range(v)) return WorkerArg::out_of_range(v.dump(), false);
  if (v.is_number_integer()) return WorkerArg(WorkerId(v.get<std::int64_t>()));
  return WorkerArg::not_integer(v.dump());
}

// A value or a per-member list of values.
template <typename T, typename Read>
std::vector<T> per_member(Obj& o, const std::string& key, std::size_t members, T fallback, Read read) {
  std::vector<T> out(members, fallback);
  const json* v = o.get(key);
  if (!v) return out;
  if (v->is_array()) {
    if (v->size() != members)
      o.fail("a per-member list needs " + std::to_string(members) + " entries, found " +
                 std::to_string(v->size()),
             key);
    for (std::size_t i = 0; i < members; ++i) out[i] = read((*v)[i], index_path(o.at(key), i));
  } else {
    std::fill(out.begin(), out.end(), read(*v, o.at(key)));
  }
  return out;
}


// The value a "$NAME" stands for in this variant, or `v` itself.
const json& resolve_var(const std::map<std::string, json>& assigned, const std::string& file, const json& v,
                        const std::string& path) {
  if (!v.is_string()) return v;
  const std::string& text = v.get_ref<const std::string&>();
  if (text.empty() || text[0] != '$') return v;
  auto it = assigned.find(text.substr(1));
  if (it == assigned.end()) throw ScenarioError(file, path, "unknown variable '" + text + "' (see vars)");
  return it->second;
}

}  // namespace

namespace detail {

bool substitute_vars(json& j, const std::map<std::string, json>& assigned, const std::string& path,
                     std::set<std::string>& used, std::map<std::string, std::string>* where) {
  bool any = false;
  if (j.is_string()) {
    const std::string& text = j.get_ref<const std::string&>();
    if (text.size() < 2 || text[0] != '$') return false;
    auto it = assigned.find(text.substr(1));
    if (it == assigned.end()) return false;
    used.insert(it->first);
    if (where) (*where)[path] = it->first;
    j = it->second;  // a value is literal: a "$x" inside it is not substituted again
    return true;
  }
  if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) any |= substitute_vars(j[i], assigned, index_path(path, i), used, where);
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      any |= substitute_vars(it.value(), assigned, path.empty() ? it.key() : path + "." + it.key(), used, where);
  }
  return any;
}

namespace {
bool has_var_text(const json& j) {
  if (j.is_string()) {
    const std::string& t = j.get_ref<const std::string&>();
    return t.size() > 1 && t[0] == '$';
  }
  if (j.is_array() || j.is_object())
    for (const json& x : j)
      if (has_var_text(x)) return true;
  return false;
}
}  // namespace

std::vector<ArgSpec> OpReader::arg_list(const json& v, const std::string& path) const {
  if (!v.is_array()) throw ScenarioError(file_, path, "expected an array of args, found " + Obj::type_of(v));
  std::vector<ArgSpec> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    Obj o(v[i], index_path(path, i), file_);
    ArgSpec a;
    if (o.has("scalar")) {
      o.get("scalar");
    } else {
      const std::string b = o.str("buffer");
      auto it = buffer_index_.find(b);
      if (it == buffer_index_.end()) o.fail("unknown buffer '" + b + "'", "buffer");
      a.buffer = it->second;
      const std::string tag = o.str("tag");
      auto t = tag_from_string(tag);
      if (!t) o.fail("unknown tag '" + tag + "' (INPUT, OUTPUT, INOUT, OUTPUT_EXISTING, NO_DEP)", "tag");
      a.tag = *t;
      if (const json* rv = o.get("range")) {
        // [begin, end): integers, 0 <= begin < end <= the buffer's bytes.
        const std::string at = o.at("range");
        const json& r = var_or(*rv, at);
        auto bound = [](const json& x) {
          return x.is_number_unsigned() || (x.is_number_integer() && x.get<std::int64_t>() >= 0);
        };
        if (!r.is_array() || r.size() != 2 || !bound(r[0]) || !bound(r[1]))
          throw ScenarioError(file_, at, "expected [begin, end], two non-negative integers, found " + r.dump());
        const std::uint64_t begin = r[0].get<std::uint64_t>(), end = r[1].get<std::uint64_t>();
        const double bytes = buffer_bytes_[it->second];
        if (!(bytes > 0)) throw ScenarioError(file_, at, "range on buffer '" + b + "' needs its bytes > 0");
        const std::string shown = "[" + std::to_string(begin) + ", " + std::to_string(end) + "]";
        if (begin >= end) throw ScenarioError(file_, at, shown + " is empty");
        if (static_cast<double>(end) > bytes)
          throw ScenarioError(file_, at, shown + " ends at " + std::to_string(end) + ", past the buffer's " +
                                             std::to_string(static_cast<std::uint64_t>(bytes)) + " bytes");
        a.range = ByteRange{begin, end};
        saw_range_ = true;
      }
    }
    o.done();
    out.push_back(a);
  }
  return out;
}

OpReader::OpReader(const Scenario& header) : file_(header.file), assigned_(header.assigned) {
  for (std::size_t i = 0; i < header.callables.size(); ++i) callable_index_[header.callables[i].name] = i;
  for (std::size_t i = 0; i < header.buffers.size(); ++i) buffer_index_[header.buffers[i].name] = i;
  for (const BufferSpec& b : header.buffers) buffer_bytes_.push_back(b.bytes);
}

std::optional<std::size_t> OpReader::callable(std::string_view name) const {
  auto it = callable_index_.find(name);
  return it == callable_index_.end() ? std::nullopt : std::optional<std::size_t>(it->second);
}

std::optional<std::size_t> OpReader::buffer(std::string_view name) const {
  auto it = buffer_index_.find(name);
  return it == buffer_index_.end() ? std::nullopt : std::optional<std::size_t>(it->second);
}

const json& OpReader::var_or(const json& v, const std::string& path) const {
  return resolve_var(assigned_, file_, v, path);
}

OpSpec OpReader::op(const json& raw, const std::string& path, bool in_batch, std::set<std::string>* names,
                    bool in_run) const {
  // An op of a streamed trace still holds its "$NAME" values (a full read substituted the whole file).
  json copy;
  const json* src = &raw;
  if (!in_batch && !in_run && !assigned_.empty() && has_var_text(raw)) {
    copy = raw;
    substitute_vars(copy, assigned_, path, used_, nullptr);
    src = &copy;
  }
  const json& v = *src;
  Obj o(v, path, file_);
  OpSpec op;
  op.path = path;
  const std::string kind = o.str("op");
  static const std::map<std::string, OpKind> kinds = {{"submit_next_level", OpKind::kSubmitNextLevel},
                                                      {"submit_next_level_group", OpKind::kSubmitGroup},
                                                      {"submit_sub", OpKind::kSubmitSub},
                                                      {"submit_sub_group", OpKind::kSubmitSubGroup},
                                                      {"batch", OpKind::kBatch},
                                                      {"sleep", OpKind::kSleep},
                                                      {"drain", OpKind::kDrain},
                                                      {"run", OpKind::kRun},
                                                      {"raise", OpKind::kRaise}};
  auto k = kinds.find(kind);
  if (k == kinds.end())
    o.fail("unknown op '" + kind +
               "' (submit_next_level, submit_next_level_group, submit_sub, "
               "submit_sub_group, batch, sleep, drain, run, raise)",
           "op");
  op.kind = k->second;
  if (o.has("at_s")) {
    if (in_batch) o.fail("ops inside a batch run at the batch's instant: at_s is not allowed", "at_s");
    op.at_s = o.time("at_s", 0);
  }
  switch (op.kind) {
    case OpKind::kSleep:
      if (in_batch) o.fail("a batch holds submits only", "op");
      op.sleep_s = o.time("s", 0);
      if (!o.has("s")) o.fail("missing required key 's'");
      break;
    case OpKind::kDrain:
      if (in_batch) o.fail("a batch holds submits only", "op");
      if (in_run)
        throw ScenarioError(file_, path, "drain is not allowed inside a run (a callback cannot wait for its own tasks)");
      break;
    case OpKind::kBatch: {
      if (in_batch) o.fail("a batch holds submits only", "op");
      const json& ops = array_at(o, "ops");
      for (std::size_t i = 0; i < ops.size(); ++i)
        op.ops.push_back(this->op(ops[i], index_path(o.at("ops"), i), true, names));
      // A batch racing the scheduler: its submits land between the passes of the next iteration.
      if (const json* between = o.get("between_passes")) {
        if (!between->is_boolean()) o.fail("expected a boolean, found " + Obj::type_of(*between), "between_passes");
        op.between_passes = between->get<bool>();
        if (op.between_passes && op.ops.empty())
          o.fail("a between_passes batch needs at least one submit", "ops");
      }
      break;
    }
    case OpKind::kRun: {
      // One orchestration callback: its ops are submits, batches, sleeps and raises (runs.md rules).
      if (in_batch) o.fail("a batch holds submits only", "op");
      if (in_run) throw ScenarioError(file_, path, "a run cannot hold another run (a callback is not nested)");
      op.run = o.str("run");
      if (op.run.empty()) o.fail("a run name must not be empty", "run");
      const json& ops = array_at(o, "ops");
      for (std::size_t i = 0; i < ops.size(); ++i)
        op.ops.push_back(this->op(ops[i], index_path(o.at("ops"), i), false, names, true));
      break;
    }
    case OpKind::kRaise:
      if (in_batch) o.fail("a batch holds submits only", "op");
      op.message = o.has("message") ? o.str("message") : "orchestration failed";
      break;
    default:
      submit(o, op, names);
  }
  o.done();
  return op;
}

void OpReader::submit(Obj& o, OpSpec& op, std::set<std::string>* names) const {
  op.task = o.str("task");
  if (op.task.empty()) o.fail("a task name must not be empty", "task");
  if (names && !names->insert(op.task).second) o.fail("duplicate task name '" + op.task + "'", "task");
  const std::string callable = o.str("callable");
  auto c = callable_index_.find(callable);
  if (c == callable_index_.end()) o.fail("unknown callable '" + callable + "'", "callable");
  op.callable = c->second;
  const bool group = op.kind == OpKind::kSubmitGroup || op.kind == OpKind::kSubmitSubGroup;
  if (group) {
    const json& list = array_at(o, "args_list");
    if (list.size() > kMaxMembers) o.fail(count_limit(list.size(), kMaxMembers, "members"), "args_list");
    for (std::size_t i = 0; i < list.size(); ++i)
      op.args.push_back(arg_list(list[i], index_path(o.at("args_list"), i)));
    if (o.has("args")) o.fail("a group takes args_list, not args", "args");
  } else {
    const json* args = o.get("args");
    op.args.push_back(args ? arg_list(*args, o.at("args")) : std::vector<ArgSpec>{});
    if (o.has("args_list")) o.fail("a single takes args, not args_list", "args_list");
  }
  // Worker ids are validated by the core, not here: see the header. "$NAME" is a sweep variable.
  if (const json* w = o.get("worker")) op.worker = worker_arg(var_or(*w, o.at("worker")));
  if (const json* raw = o.get("workers")) {
    const json& resolved = var_or(*raw, o.at("workers"));
    const json* ws = &resolved;
    if (ws->is_array()) {
      if (ws->size() > kMaxMembers) o.fail(count_limit(ws->size(), kMaxMembers, "workers"), "workers");
      op.workers.emplace();
      for (const json& x : *ws) op.workers->push_back(worker_arg(x));
    }
    // A workers value that is not a list is a group "without a workers list": missing_worker.
  }
  const std::size_t members = op.args.size();
  const std::string file_name = file_;
  op.duration_s = per_member<std::optional<double>>(
      o, "duration_s", members, std::nullopt,
      [&](const json& v, const std::string& p) { return std::optional<double>(o.time_value(v, p)); });
  op.prepare_s = per_member<std::optional<double>>(
      o, "prepare_s", members, std::nullopt,
      [&](const json& v, const std::string& p) { return std::optional<double>(o.time_value(v, p)); });
  if (std::none_of(op.prepare_s.begin(), op.prepare_s.end(), [](const auto& p) { return p.has_value(); }))
    op.prepare_s.clear();  // none given: the callable's (no allocation kept)
  op.fail = per_member<bool>(o, "fail", members, false, [&](const json& v, const std::string& p) {
    if (!v.is_boolean()) throw ScenarioError(file_name, p, "expected a boolean, found " + Obj::type_of(v));
    return v.get<bool>();
  });
}


// A serial upper bound of the makespan, op by op: the latest at_s so far, plus every sleep, plus every
// member run one after another at its largest jittered duration, plus a scheduler iteration per op and
// an iteration and a dispatch cost per member. Every time the run can reach is below it, so keeping it
// within kMaxTimeS keeps 1 us resolved to the end. Costs in flops or bytes depend on the platform's
// speeds, which the loader does not read: each is bounded on its own instead.
void TimeBudget::members(const OpSpec& op) {
  if (op.task.empty()) return;
  const CallableSpec& c = s_.callables[op.callable];
  const double factor = c.cost.jitter.kind == Jitter::Kind::kNone      ? 1
                        : c.cost.jitter.kind == Jitter::Kind::kUniform ? 1 + c.cost.jitter.rel
                                                                       : 1 + kNormalJitterSigmas * c.cost.jitter.rel;
  for (std::size_t m = 0; m < op.args.size(); ++m)
    serial_ += op.member_prepare(m).value_or(c.cost.prepare_s) +
               op.member_duration(m).value_or(c.cost.duration_s.value_or(
                   c.cost.empirical.empty() ? 0 : *std::max_element(c.cost.empirical.begin(), c.cost.empirical.end()))) *
                   factor +
               s_.iteration_cost_s +
               s_.largest_dispatch_cost_s();
}

void TimeBudget::visit(const OpSpec& op) {
  if (op.kind == OpKind::kRun) {  // a run's callback: its ops one after another
    if (op.at_s) latest_at_ = std::max(latest_at_, *op.at_s);
    for (const OpSpec& inner : op.ops) visit(inner);
    return;
  }
  if (op.at_s) latest_at_ = std::max(latest_at_, *op.at_s);
  serial_ += s_.iteration_cost_s + op.sleep_s;
  members(op);
  for (const OpSpec& inner : op.ops) members(inner);
  if (latest_at_ + serial_ > kMaxTimeS)
    throw ScenarioError(s_.file, generated_ ? "generate" : op.path,
                        std::string(generated_ ? "at " + op.path + ", the generated" : "the") +
                            " trace's times add up to more than the limit of 2^32 s (latest at_s " +
                            number_text(latest_at_) + " s, then " + number_text(serial_) +
                            " s of sleeps, durations and scheduler costs one after another): a run "
                            "that long would lose microseconds to rounding");
}

void MemberCount::add(const OpSpec& op) {
  if (op.kind == OpKind::kSubmitGroup || op.kind == OpKind::kSubmitSubGroup) {
    total_ += op.args.size();  // each at most kMaxMembers: no overflow
    if (total_ > max_)
      throw ScenarioError(file_, op.path,
                          "the trace's groups have " + std::to_string(total_) +
                              " members up to this one, more than the limit of " + std::to_string(max_) +
                              " group members in all");
  }
  for (const OpSpec& inner : op.ops) add(inner);
}

}  // namespace detail

namespace {

struct NotStreamed {};  // the streamed load passes the file on to the full read

struct Loader {
  const std::string& file;
  std::string base_dir;
  const VarAssignment& assignment;
  const detail::TraceScan* streamed = nullptr;  // the streamed load's scan, or null for a full read
  Scenario s;
  Registry registry;  // the workers as the core will see them: its checks are the loader's checks
  std::set<std::string> task_names;
  std::set<std::string> run_names;  // the trace's run ops, for duplicates and expect.runs

  void workers(Obj& top) {
    Obj w(top.need("workers"), "workers", file);
    const json& nl = array_at(w, "next_level");
    if (nl.size() > kMaxWorkers)
      w.fail(count_limit(nl.size(), kMaxWorkers, "NEXT_LEVEL workers"), "next_level");
    for (std::size_t i = 0; i < nl.size(); ++i) {
      Obj o(nl[i], index_path("workers.next_level", i), file);
      WorkerSpec spec;
      const std::int64_t id = integer_id(o.need("id"), o.at("id"), file);
      spec.id = WorkerId(id);
      const std::string kind = o.str("kind");
      auto k = worker_kind_from_string(kind);
      if (!k) o.fail("unknown worker kind '" + kind + "' (local_chip, local_worker, remote)", "kind");
      spec.kind = *k;
      // staging (#1583): mailbox frames, and (#1587) a staged member's preparation overlapping the
      // running member's execution.
      if (const json* fr = o.get("frames")) {
        const json& f = resolve_var(s.assigned, file, *fr, o.at("frames"));
        if (!f.is_number_integer() || f.get<std::int64_t>() < 1 || f.get<std::int64_t>() > 2)
          o.fail("expected 1 or 2 (mailbox frames), found " +
                     (f.is_number_integer() ? std::to_string(f.get<std::int64_t>()) : Obj::type_of(f)),
                 "frames");
        spec.frames = static_cast<std::uint32_t>(f.get<std::int64_t>());
        if (spec.frames == 2 && spec.kind == WorkerKind::kRemote) o.fail("a remote worker has one frame", "frames");
      }
      if (const json* po = o.get("prepare_overlap")) {
        const json& v = resolve_var(s.assigned, file, *po, o.at("prepare_overlap"));
        if (!v.is_boolean()) o.fail("expected a boolean, found " + Obj::type_of(v), "prepare_overlap");
        spec.prepare_overlap = v.get<bool>();
        if (spec.prepare_overlap && spec.frames != 2)
          o.fail("needs \"frames\": 2 (only a staged member prepares while another runs)", "prepare_overlap");
      }
      try {  // negative and duplicate ids
        registry.add_next_level(spec.id, spec.kind, spec.frames);
      } catch (const RegistryError& e) {
        o.fail(e.what(), "id");
      }
      const char* prefix = *k == WorkerKind::kLocalChip     ? "chip"
                           : *k == WorkerKind::kLocalWorker ? "worker"
                                                            : "remote";
      spec.host = o.str("host", prefix + std::to_string(id));
      o.done();
      s.next_level.push_back(spec);
    }
    if (const json* sub = w.get("sub")) {
      if (sub->is_number_integer()) {
        if (!sub->is_number_unsigned() && sub->get<std::int64_t>() < 0) w.fail("must not be negative", "sub");
        const std::uint64_t n = sub->get<std::uint64_t>();
        if (n > kMaxWorkers)
          w.fail(sub->dump() + " SUB workers is more than the limit of " + std::to_string(kMaxWorkers),
                 "sub");
        s.sub_hosts.assign(static_cast<std::size_t>(n), "");
      } else if (sub->is_array()) {
        if (sub->size() > kMaxWorkers) w.fail(count_limit(sub->size(), kMaxWorkers, "SUB workers"), "sub");
        for (std::size_t i = 0; i < sub->size(); ++i) {
          Obj o((*sub)[i], index_path("workers.sub", i), file);
          s.sub_hosts.push_back(o.str("host"));
          o.done();
        }
      } else {
        w.fail("expected a count or a list of {\"host\": ...}, found " + Obj::type_of(*sub), "sub");
      }
    }
    if (const json* groups = w.get("mpi_groups")) {
      // { "name": string, "ranks": [id, ...] }: registered remote ids, rank order, no id in two groups.
      if (!groups->is_array()) w.fail("expected a list of {\"name\": ..., \"ranks\": [...]}", "mpi_groups");
      std::set<std::string> names;
      std::map<std::int64_t, std::string> in_group;
      for (std::size_t i = 0; i < groups->size(); ++i) {
        const std::string at = index_path("workers.mpi_groups", i);
        Obj o((*groups)[i], at, file);
        MpiGroupSpec g;
        g.name = o.str("name");
        if (!names.insert(g.name).second) o.fail("duplicate MPI group name '" + g.name + "'", "name");
        const json& ranks = array_at(o, "ranks");
        if (ranks.empty()) o.fail("an MPI group needs at least one rank", "ranks");
        for (std::size_t k = 0; k < ranks.size(); ++k) {
          const std::string rp = index_path(at + ".ranks", k);
          const std::int64_t id = integer_id(ranks[k], rp, file);
          if (!registry.is_remote(WorkerId(id)))
            throw ScenarioError(file, rp, std::to_string(id) + " is not a registered remote worker");
          if (in_group.count(id))
            throw ScenarioError(file, rp, std::to_string(id) + " is in two groups ('" + in_group[id] + "' and '" +
                                              g.name + "')");
          in_group[id] = g.name;
          g.ranks.push_back(WorkerId(id));
        }
        o.done();
        registry.add_mpi_group(g.name, g.ranks);  // the same checks, passed above
        s.mpi_groups.push_back(std::move(g));
      }
    }
    w.done();
    for (std::string& h : s.sub_hosts)
      if (h.empty()) h = s.scheduler_host;
  }

  Jitter jitter(const json& v, const std::string& path) {
    Obj o(v, path, file);
    Jitter j;
    const std::string kind = o.str("kind");
    if (kind == "uniform")
      j.kind = Jitter::Kind::kUniform;
    else if (kind == "normal")
      j.kind = Jitter::Kind::kNormal;
    else
      o.fail("unknown jitter kind '" + kind + "' (uniform, normal)", "kind");
    j.rel = o.num("rel", 0);
    if (j.kind == Jitter::Kind::kUniform && j.rel > 1)
      o.fail("a uniform jitter's rel must be at most 1", "rel");
    o.done();
    return j;
  }

  void callables(Obj& top) {
    const json* c = top.get("callables");
    if (!c) return;
    if (!c->is_object()) top.fail("expected an object, found " + Obj::type_of(*c), "callables");
    if (c->size() > Registry::kMaxCallables)
      top.fail(std::to_string(c->size()) + " callables; at most " + std::to_string(Registry::kMaxCallables), "callables");
    for (auto it = c->begin(); it != c->end(); ++it) {
      Obj o(it.value(), "callables." + it.key(), file);
      if (const std::string bad = Obj::control_character(it.key()); !bad.empty())
        o.fail("the callable's name holds the control character " + bad + " (names may not)");
      CallableSpec spec;
      spec.name = it.key();
      const std::string ns = o.str("namespace");
      auto n = namespace_from_string(ns);
      if (!n) o.fail("unknown namespace '" + ns + "' (LOCAL_CHIP, LOCAL_PYTHON, REMOTE)", "namespace");
      spec.ns = *n;
      if (const json* e = o.get("eligible")) {
        if (spec.ns != Namespace::kRemote) o.fail("only REMOTE callables take an eligible set", "eligible");
        if (!e->is_array()) o.fail("expected an array of worker ids", "eligible");
        spec.eligible.emplace();
        for (std::size_t i = 0; i < e->size(); ++i) {
          const std::string p = index_path(o.at("eligible"), i);
          const std::int64_t id = integer_id((*e)[i], p, file);
          if (!registry.is_remote(WorkerId(id)))
            throw ScenarioError(file, p,
                                "worker " + std::to_string(id) + " is not a registered remote worker");
          spec.eligible->push_back(WorkerId(id));
        }
      }
      if ((o.has("duration_s") + o.has("flops") + o.has("duration")) > 1)
        o.fail(o.has("duration") ? "give one of duration_s, duration and flops" : "give duration_s or flops, not both");
      if (const json* d = o.get("duration")) {
        Obj dur(*d, o.at("duration"), file);
        const json& list = dur.need("empirical");
        const std::string lp = dur.at("empirical");
        if (!list.is_array() || list.empty())
          throw ScenarioError(file, lp, "expected a non-empty array of seconds, found " + Obj::type_of(list));
        if (list.size() > kMaxTasks) throw ScenarioError(file, lp, "more than 100,000,000 values");
        for (std::size_t i = 0; i < list.size(); ++i)
          spec.cost.empirical.push_back(dur.time_value(list[i], index_path(lp, i)));
        dur.done();
      }
      if (o.has("duration_s")) spec.cost.duration_s = o.time("duration_s", 0);
      spec.cost.prepare_s = o.time("prepare_s", 0);  // staging (#1583): before the duration
      if (o.has("flops")) spec.cost.flops = o.bounded("flops", 0, kMaxFlops, "flops", "per callable");
      if (const json* j = o.get("jitter")) spec.cost.jitter = jitter(*j, o.at("jitter"));
      spec.cost.input_bytes = o.bounded("input_bytes", 0, kMaxBytes, "bytes", kBytesLimit);
      spec.cost.output_bytes = o.bounded("output_bytes", 0, kMaxBytes, "bytes", kBytesLimit);
      if (const json* cj = o.get("collective")) {
        Obj col(*cj, o.at("collective"), file);
        const std::string kind = col.str("kind");
        if (kind == "allreduce") spec.cost.collective.kind = Collective::Kind::kAllreduce;
        else if (kind == "allgather") spec.cost.collective.kind = Collective::Kind::kAllgather;
        else if (kind == "broadcast") spec.cost.collective.kind = Collective::Kind::kBroadcast;
        else col.fail("unknown collective '" + kind + "' (allreduce, allgather, broadcast)", "kind");
        (void)col.need("bytes");  // no default: a collective moves a size the file says
        spec.cost.collective.bytes = col.bounded("bytes", 0, kMaxBytes, "bytes", kBytesLimit);
        col.done();
      }
      o.done();
      s.callables.push_back(std::move(spec));
    }
  }

  void buffers(Obj& top) {
    const json* b = top.get("buffers");
    if (!b) return;
    if (!b->is_object()) top.fail("expected an object, found " + Obj::type_of(*b), "buffers");
    for (auto it = b->begin(); it != b->end(); ++it) {
      Obj o(it.value(), "buffers." + it.key(), file);
      BufferSpec spec;
      spec.name = it.key();
      spec.bytes = o.bounded("bytes", 0, kMaxBytes, "bytes", kBytesLimit);
      const std::string mem = o.str("memory", std::string("host"));
      auto m = memory_from_string(mem);
      if (!m) o.fail("unknown memory '" + mem + "' (host, child, remote)", "memory");
      spec.memory = *m;
      const json* owner = o.get("owner");
      if (owner) spec.owner = WorkerId(integer_id(*owner, o.at("owner"), file));
      try {  // the same check Scheduler::add_buffer makes
        registry.check_owner(spec.name, spec.memory, spec.owner);
      } catch (const RegistryError& e) {
        o.fail(e.what(), owner ? "owner" : "");
      }
      o.done();
      s.buffers.push_back(std::move(spec));
    }
  }

  // `{"choose": K, "from": [ids], "ordered": false}`: every K-element list of distinct ids of `from`
  // (ordered: every arrangement), in the order of their positions in `from`. A list the contract would
  // refuse is left out and counted: an id that is no NEXT_LEVEL worker, or one a REMOTE callable that
  // takes the variable as its worker(s) is not eligible for. Read from the raw file (the workers are
  // read after the vars); a malformed workers or trace block is the loader's to word later.
  std::vector<json> choose_space(Obj& top, const std::string& name, const json& spec, const std::string& path) {
    constexpr std::size_t kMaxSpace = 1000000;
    Obj o(spec, path, file);
    const json& k = o.need("choose");
    if (!k.is_number_integer() || k.get<std::int64_t>() < 1)
      o.fail("expected a positive integer, found " + (k.is_number() ? k.dump() : Obj::type_of(k)), "choose");
    const json& from = array_at(o, "from");
    bool ordered = false;
    if (const json* ord = o.get("ordered")) {
      if (!ord->is_boolean()) o.fail("expected a boolean, found " + Obj::type_of(*ord), "ordered");
      ordered = ord->get<bool>();
    }
    o.done();
    std::vector<std::int64_t> ids;
    for (std::size_t i = 0; i < from.size(); ++i) {
      const std::int64_t id = integer_id(from[i], index_path(o.at("from"), i), file);
      if (std::find(ids.begin(), ids.end(), id) != ids.end())
        throw ScenarioError(file, index_path(o.at("from"), i), "worker id " + std::to_string(id) + " listed twice");
      ids.push_back(id);
    }
    const std::size_t kk = k.get<std::size_t>();
    if (kk > ids.size())
      o.fail("choose " + std::to_string(kk) + " of " + std::to_string(ids.size()) + " ids: too few ids", "choose");
    // The size of the space, refused past kMaxSpace before anything is built, and so is a space whose
    // lists hold more than kMaxSpaceIds ids in all (lists x K: `choose 998 from` 1,000 ids is 499,500
    // lists of 998, half a billion ids, from 4 KB of file). Unordered, C(n, K) is counted as C(n, n - K)
    // when that is shorter: the partial products are then C(n, i) for i up to n / 2, which stay finite
    // where the longer way overflows (C(1414, 1412) = 998,991 went through infinity).
    constexpr double kMaxSpaceIds = 10000000;
    const std::size_t factors = ordered ? kk : std::min(kk, ids.size() - kk);
    double size = 1;
    for (std::size_t i = 0; i < factors; ++i)
      size *= static_cast<double>(ids.size() - i) / (ordered ? 1.0 : static_cast<double>(i + 1));
    if (size > static_cast<double>(kMaxSpace) + 0.5)
      o.fail("the space holds " + (std::isfinite(size) ? number_text(std::round(size)) : std::string("more than 1e308")) +
             " lists, more than the limit of " + std::to_string(kMaxSpace) + " (choose fewer, or from fewer ids)");
    const double space_ids = std::round(size) * static_cast<double>(kk);
    if (space_ids > kMaxSpaceIds)
      o.fail("the space's " + number_text(std::round(size)) + " lists of " + std::to_string(kk) + " ids hold " +
             number_text(space_ids) + " ids, more than the limit of " + number_text(kMaxSpaceIds) +
             " (choose fewer, or from fewer ids)");
    // Registered workers and the REMOTE callables' eligible ids, from the raw file. A generate block's
    // workers are the ids 0 to workers - 1, held as that bound and not id by id: the count is not
    // checked yet (OpGenerator does, later), and `"workers": 1e12` must not make a trillion ids here.
    std::set<std::int64_t> registered, remote;
    double generated_workers = 0;  // ids in [0, generated_workers) are registered
    std::map<std::string, std::set<std::int64_t>> eligible;  // REMOTE callables only
    const json* raw_workers = top.has("workers") ? top.get("workers") : nullptr;
    if (raw_workers && raw_workers->is_object() && raw_workers->contains("next_level") &&
        (*raw_workers)["next_level"].is_array()) {
      for (const json& w : (*raw_workers)["next_level"])
        if (w.is_object() && w.contains("id") && w["id"].is_number_integer()) {
          registered.insert(w["id"].get<std::int64_t>());
          if (w.value("kind", json()) == "remote") remote.insert(w["id"].get<std::int64_t>());
        }
    } else if (top.has("generate") && top.get("generate")->is_object()) {
      const json& g = *top.get("generate");
      generated_workers = g.contains("workers") && g["workers"].is_number() ? g["workers"].get<double>() : 8;
    }
    if (top.has("callables") && top.get("callables")->is_object())
      for (auto it = top.get("callables")->begin(); it != top.get("callables")->end(); ++it)
        if (const json& c = it.value(); c.is_object() && c.value("namespace", json()) == "REMOTE") {
          std::set<std::int64_t>& e = eligible[it.key()];
          if (c.contains("eligible") && c["eligible"].is_array()) {
            for (const json& x : c["eligible"])
              if (x.is_number_integer()) e.insert(x.get<std::int64_t>());
          } else {
            e = remote;
          }
        }
    // The REMOTE callables of the ops that name "$name" as their worker or workers.
    std::vector<const std::set<std::int64_t>*> must;
    const std::string ref = "$" + name;
    std::function<void(const json&)> visit = [&](const json& op) {
      if (!op.is_object()) return;
      if ((op.value("workers", json()) == ref || op.value("worker", json()) == ref) && op.contains("callable") &&
          op["callable"].is_string()) {
        auto e = eligible.find(op["callable"].get<std::string>());
        if (e != eligible.end()) must.push_back(&e->second);
      }
      if (op.contains("ops") && op["ops"].is_array())
        for (const json& inner : op["ops"]) visit(inner);
    };
    if (top.has("trace") && top.get("trace")->is_array())
      for (const json& op : *top.get("trace")) visit(op);
    auto fits = [&](std::int64_t id) {
      const bool generated = id >= 0 && static_cast<double>(id) < std::trunc(generated_workers);
      if (!generated && !registered.count(id)) return false;
      for (const auto* e : must)
        if (!e->count(id)) return false;
      return true;
    };
    ChooseKey key{kk, ordered, ids, {}};
    for (std::int64_t id : ids) key.allowed.push_back(fits(id));
    const std::shared_ptr<const ChooseLists> space = choose_lists(std::move(key));
    std::vector<json> out = space->lists;
    const std::size_t left_out = space->left_out;
    s.vars_left_out[name] = left_out;
    if (out.empty())
      o.fail("every one of the " + std::to_string(left_out) +
             " lists names a worker that is not registered or not eligible for the callable that uses it");
    return out;
  }

  void vars(Obj& top) {
    const json* v = top.get("vars");
    if (!v && !assignment.empty())
      throw ScenarioError(file, "", "--var " + assignment.begin()->first +
                                        ": no such sweep variable (the scenario declares no vars)");
    if (!v) return;
    if (!v->is_object()) top.fail("expected an object of name -> list of candidate values", "vars");
    for (auto it = v->begin(); it != v->end(); ++it) {
      const std::string path = "vars." + it.key();
      if (it->is_object()) {
        s.vars[it.key()] = choose_space(top, it.key(), *it, path);
        continue;
      }
      if (!it->is_array() || it->empty())
        throw ScenarioError(file, path,
                            "expected a non-empty list of candidate values, or {\"choose\": K, \"from\": [ids]}");
      // Each candidate once: two equal candidates would be two variants of one run, the sweep's ranking
      // and folders telling them apart by index only.
      std::map<json, std::size_t> seen;
      for (std::size_t i = 0; i < it->size(); ++i)
        if (auto [at, fresh] = seen.emplace((*it)[i], i); !fresh)
          throw ScenarioError(file, index_path(path, i),
                              "the candidate " + (*it)[i].dump() + " is listed twice (also at " +
                                  index_path(path, at->second) + ")");
      s.vars[it.key()] = it->get<std::vector<json>>();
    }
    for (const auto& [name, value] : assignment)
      if (!s.vars.count(name)) {
        std::string names;
        for (const auto& [declared, candidates] : s.vars) names += (names.empty() ? "" : ", ") + declared;
        throw ScenarioError(file, "", "--var " + name + ": no such sweep variable (vars: " + names + ")");
      }
    for (const auto& [name, candidates] : s.vars) {
      auto chosen = assignment.find(name);
      s.assigned[name] = chosen == assignment.end() ? candidates.front() : chosen->second;
    }
  }

  void trace(Obj& top) {
    const json& t = array_at(top, "trace");
    double last_at = 0;
    std::size_t submits = 0;
    const OpReader reader(s);
    detail::MemberCount members(file, std::min(max_tasks, kMaxTotalMembers));
    for (std::size_t i = 0; i < t.size(); ++i) {
      submits += t[i].is_object() && t[i].contains("ops") && t[i]["ops"].is_array() ? t[i]["ops"].size() : 1;
      if (submits > max_tasks)
        throw ScenarioError(
            file, index_path("trace", i),
            "the trace submits more than the limit of " + std::to_string(max_tasks) + " tasks");
      s.trace.push_back(reader.op(t[i], index_path("trace", i), false, &task_names));
      const OpSpec& op = s.trace.back();
      members.add(op);
      // at_s never goes back, a run's own and its callback's ops' included (one orchestrator thread).
      auto at = [&](const OpSpec& x) {
        if (!x.at_s) return;
        if (*x.at_s < last_at) throw ScenarioError(file, x.path + ".at_s", "at_s is earlier than a previous op's at_s");
        last_at = *x.at_s;
      };
      at(op);
      if (op.kind == OpKind::kRun) {
        for (const OpSpec& inner : op.ops) at(inner);
        if (!run_names.insert(op.run).second)
          throw ScenarioError(file, op.path + ".run", "duplicate run name '" + op.run + "'");
        s.has_runs = true;
      }
    }
    // A file has either no run op or only run, sleep and drain ops at its top level.
    if (s.has_runs)
      for (const OpSpec& op : s.trace) {
        if (op.kind == OpKind::kRaise) throw ScenarioError(file, op.path, "a raise outside a run in a file with runs");
        if (op.kind != OpKind::kRun && op.kind != OpKind::kSleep && op.kind != OpKind::kDrain)
          throw ScenarioError(file, op.path, "a submit outside a run in a file with runs");
      }
    s.any_range = reader.saw_range();
  }

  // The time budget (TimeBudget) over every op: the generated ones, made one at a time, or the trace's.
  void time_budget(bool generated, std::set<std::string>* names = nullptr) {
    TimeBudget budget(s, generated);
    if (generated) {
      OpGenerator gen(*s.generate, s, file);
      for (OpSpec op; gen.next(op);) {
        if (names) names->insert(op.task);
        budget.visit(op);
      }
    } else {
      for (const OpSpec& op : s.trace) budget.visit(op);
    }
  }

  void faults(Obj& top) {
    const json* f = top.get("faults");
    if (!f) return;
    if (!f->is_array()) top.fail("expected an array, found " + Obj::type_of(*f), "faults");
    for (std::size_t i = 0; i < f->size(); ++i) {
      Obj o((*f)[i], index_path("faults", i), file);
      FaultSpec spec;
      spec.path = o.path();
      if (o.has("host") == o.has("link")) o.fail("a fault names exactly one of host and link");
      if (o.has("host")) spec.host = o.str("host");
      if (o.has("link")) spec.link = o.str("link");
      if (!o.has("off_at_s")) o.fail("missing required key 'off_at_s'");
      spec.off_at_s = o.time("off_at_s", 0);
      if (spec.host == s.scheduler_host) o.fail("the scheduler's host cannot be turned off", "host");
      o.done();
      s.faults.push_back(spec);
    }
  }

  // Every key check_expectations (outputs/src/outputs.cpp) reads, with the type it reads it as, so
  // that a wrong type is a load error with its path and never an exception in `check`.
  void expect(Obj& top) {
    const json* e = top.get("expect");
    if (!e) return;
    expect_block(*e, "expect", true);
    // expect.by_policy: preset name -> an expect block, checked instead when the run uses that preset:
    // its effective switches are exactly the preset's (a key naming the run's policy first, then the
    // first key in file order with the same switches: upto:1565 runs by_policy.head_reservation).
    // Otherwise the top-level block.
    json chosen = *e;
    chosen.erase("by_policy");
    if (const auto by = e->find("by_policy"); by != e->end()) {
      const json* same_name = nullptr;
      const json* same_set = nullptr;
      for (auto it = by->begin(); it != by->end(); ++it) {
        const std::string at = "expect.by_policy." + it.key();
        std::string error;
        const std::optional<Switches> set = preset(it.key(), &error);
        if (!set) throw ScenarioError(file, at, error);
        expect_block(it.value(), at, false);
        if (*set != s.switches) continue;
        if (canonical_policy_name(it.key()) == s.policy && !same_name) same_name = &it.value();
        if (!same_set) same_set = &it.value();
      }
      if (same_name || same_set) chosen = *(same_name ? same_name : same_set);
    }
    s.expect = std::move(chosen);
  }

  void expect_block(const json& block, const std::string& where, bool top_level) {
    const json* e = &block;
    Obj o(*e, where, file);
    static const char* keys[] = {"dispatch_order", "dispatch_order_per_worker",
                                 "final_state",    "rejected",
                                 "makespan_s",     "outcome",
                                 "overtakes",      "order",
                                 "runs",           "staged"};
    for (const char* k : keys) o.get(k);
    if (top_level)
      if (const json* by = o.get("by_policy"); by && !by->is_object())
        o.fail("expected an object of policy name -> expect block, found " + Obj::type_of(*by), "by_policy");
    o.done();  // unknown keys first, as everywhere
    auto fail_at = [&](const std::string& path, const std::string& what) -> void {
      throw ScenarioError(file, path, what);
    };
    auto object_at = [&](const char* key) -> const json* {
      const json* m = o.get(key);
      if (m && !m->is_object()) o.fail("expected an object, found " + Obj::type_of(*m), key);
      return m;
    };
    // A dispatch label: task@worker, task[member]@worker or task@subN, naming a task of the trace.
    auto label = [&](const json& v, const std::string& path) {
      if (!v.is_string())
        fail_at(path, "expected a dispatch label \"task@worker\", found " + Obj::type_of(v));
      const std::string& text = v.get_ref<const std::string&>();
      const auto at = text.rfind('@');
      if (at == std::string::npos || at == 0 || at + 1 == text.size())
        fail_at(path, "expected a dispatch label task@worker, found '" + text + "'");
      const std::string task = text.substr(0, std::min(text.find('['), at));
      if (!task_names.count(task)) fail_at(path, "names no task of the trace: '" + task + "'");
    };
    auto labels = [&](const json& v, const std::string& path) {
      if (!v.is_array()) fail_at(path, "expected an array of \"task@worker\", found " + Obj::type_of(v));
      for (std::size_t i = 0; i < v.size(); ++i) label(v[i], index_path(path, i));
    };
    // An object whose keys are task names and whose values `check` reads with `value`.
    auto per_task = [&](const char* key, const auto& value) {
      const json* m = object_at(key);
      if (!m) return;
      for (auto it = m->begin(); it != m->end(); ++it) {
        const std::string path = where + "." + std::string(key) + "." + it.key();
        if (!task_names.count(it.key())) fail_at(path, "names no task of the trace: '" + it.key() + "'");
        value(it.value(), path);
      }
    };
    if (const json* d = o.get("dispatch_order")) labels(*d, where + ".dispatch_order");
    if (const json* d = o.get("staged")) labels(*d, where + ".staged");  // the stagings, in order
    if (const json* per = object_at("dispatch_order_per_worker"))
      for (auto it = per->begin(); it != per->end(); ++it) {
        // Keys are workers as dispatch labels name them ("0", "sub1"); entries "task" or "task@worker".
        const std::string path = where + ".dispatch_order_per_worker." + it.key();
        if (!it->is_array()) fail_at(path, "expected an array of tasks, found " + Obj::type_of(*it));
        for (std::size_t i = 0; i < it->size(); ++i)
          if (!(*it)[i].is_string())
            fail_at(index_path(path, i), "expected a task (a string), found " + Obj::type_of((*it)[i]));
      }
    if (const json* pairs = o.get("order")) {
      // A list of pairs ["a@0", "b[1]@2"]: the first dispatch happens before the second.
      if (!pairs->is_array())
        o.fail("expected an array of pairs [\"task@worker\", \"task@worker\"]", "order");
      for (std::size_t i = 0; i < pairs->size(); ++i) {
        const std::string p = index_path(where + ".order", i);
        const json& pair = (*pairs)[i];
        if (!pair.is_array() || pair.size() != 2)
          fail_at(p, "expected a pair of dispatch labels [\"task@worker\", \"task@worker\"]");
        for (std::size_t k = 0; k < 2; ++k) label(pair[k], index_path(p, k));
      }
    }
    per_task("final_state", [&](const json& v, const std::string& path) {
      // Every state a run can end in; RUNNING cannot (a run ends with nothing running).
      const auto st = v.is_string() ? task_state_from_string(v.get<std::string>()) : std::nullopt;
      if (!st || *st == TaskState::kRunning)
        fail_at(path,
                "unknown final state (COMPLETED, FAILED, POISONED, CANCELLED, REJECTED, NOT_SUBMITTED, READY, PENDING)");
    });
    per_task("rejected", [&](const json& v, const std::string& path) {
      if (!v.is_string() || !error_code_from_string(v.get<std::string>()))
        fail_at(path, "unknown error code");
    });
    per_task("overtakes", [&](const json& v, const std::string& path) {
      if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
        fail_at(path, "expected a count of singles (a non-negative integer), found " + Obj::type_of(v));
    });
    if (const json* m = o.get("makespan_s")) {
      Obj ms(*m, where + ".makespan_s", file);
      ms.num("max", 0), ms.num("min", 0), ms.num("approx", 0), ms.num("rel", 0);
      ms.done();
    }
    if (const json* m = object_at("runs"))
      // Run name -> its outcome; a file without run ops has the one run "main".
      for (auto it = m->begin(); it != m->end(); ++it) {
        const std::string path = "expect.runs." + it.key();
        if (s.has_runs ? !run_names.count(it.key()) : it.key() != "main") fail_at(path, "no such run");
        static const std::set<std::string> outcomes = {"COMPLETED", "FAILED", "STUCK"};
        if (!it->is_string() || !outcomes.count(it->get<std::string>()))
          fail_at(path, "expected \"COMPLETED\", \"FAILED\" or \"STUCK\"");
      }
    if (const json* out = o.get("outcome")) {
      // A run with a broken invariant fails `check` before its expectations are read: no VIOLATION.
      static const std::set<std::string> outcomes = {"COMPLETED", "FAILED", "STUCK"};
      if (!out->is_string() || !outcomes.count(out->get<std::string>()))
        o.fail("expected \"COMPLETED\", \"FAILED\" or \"STUCK\"", "outcome");
    }
  }

  void scheduler(const json& sch) {
    Obj o(sch, "scheduler", file);
    s.scheduler_host = o.str("host", std::string("host0"));
    s.iteration_cost_s = o.time("iteration_cost_s", 0);
    s.dispatch_cost_s = o.time("dispatch_cost_s", 0);
    if (const json* by_kind = o.get("dispatch_cost_by_kind_s")) {
      Obj kinds(*by_kind, o.at("dispatch_cost_by_kind_s"), file);
      for (std::size_t k = 0; k < std::size(Scenario::kDispatchCostKinds); ++k)
        if (kinds.get(Scenario::kDispatchCostKinds[k])) s.dispatch_cost_by_kind_s[k] = kinds.time(Scenario::kDispatchCostKinds[k], 0);
      kinds.done();
    }
    if (const json* p = o.get("policy")) {
      const json& v = resolve_var(s.assigned, file, *p, o.at("policy"));
      if (!v.is_string())
        o.fail("expected a preset name (seed, head_reservation, current) or \"upto:N\", found " + Obj::type_of(v),
               "policy");
      std::string error;
      if (!preset(v.get<std::string>(), &error)) o.fail(error, "policy");
      file_policy = v.get<std::string>();
    }
    if (const json* sw = o.get("switches")) {
      if (!sw->is_object()) o.fail("expected an object of switch name -> true/false, found " + Obj::type_of(*sw), "switches");
      for (auto it = sw->begin(); it != sw->end(); ++it) {
        const std::string path = "scheduler.switches." + it.key();
        const auto id = switch_from_string(it.key());
        if (!id) throw ScenarioError(file, path, "unknown switch (known: " + known_switch_names() + ")");
        const json& v = resolve_var(s.assigned, file, it.value(), path);
        if (!v.is_boolean()) throw ScenarioError(file, path, "expected true or false, found " + Obj::type_of(v));
        file_switches.emplace_back(*id, v.get<bool>());
      }
    }
    s.stall_report_s = o.time("stall_report_s", 5);
    if (!(s.stall_report_s > 0)) o.fail("must be positive", "stall_report_s");
    if (const json* dp = o.get("pipeline_depth")) {
      const json* d = &resolve_var(s.assigned, file, *dp, o.at("pipeline_depth"));
      // whole_run_fifo's admission (#1541): how many runs may be admitted and not terminal at once.
      if (!d->is_number_integer() || d->get<std::int64_t>() < 1 || d->get<std::int64_t>() > 2)
        o.fail("expected 1 or 2 (runs admitted and not terminal at once), found " +
                   (d->is_number_integer() ? std::to_string(d->get<std::int64_t>()) : Obj::type_of(*d)),
               "pipeline_depth");
      s.pipeline_depth = static_cast<std::uint32_t>(d->get<std::int64_t>());
    }
    if (const json* f = o.get("fail_fast")) {
      if (!f->is_boolean()) o.fail("expected a boolean, found " + Obj::type_of(*f), "fail_fast");
      s.fail_fast = f->get<bool>();
    }
    o.done();
  }

  // The document with this variant's values in place of its "$NAME" strings (when vars are declared),
  // the path of each substituted value -> its variable, and the variables something used.
  json substituted;
  std::map<std::string, std::string> var_at;
  std::set<std::string> used;

  // Any value of the file may be "$NAME": the document is read with the values substituted, so every
  // check (type, range, path) is the one a literal value gets; an error at or under a substituted value
  // names the variable. A declared variable that nothing uses makes every variant the same run: refused.
  void run(const json& raw) {
    {
      Obj pre(raw, "", file);  // "expected an object" as before
      vars(pre);
    }
    const json* doc = &raw;
    if (!s.vars.empty()) {
      substituted = raw;
      for (auto it = substituted.begin(); it != substituted.end(); ++it)
        if (it.key() != "vars") detail::substitute_vars(it.value(), s.assigned, it.key(), used, &var_at);
      doc = &substituted;
    }
    try {
      body(*doc);
    } catch (const ScenarioError& e) {
      const std::string& p = e.path();
      const std::string* name = nullptr;
      std::size_t best = 0;
      for (const auto& [at, var] : var_at)
        if ((p == at || p.rfind(at + ".", 0) == 0 || p.rfind(at + "[", 0) == 0) && at.size() >= best)
          best = at.size(), name = &var;
      if (!name) throw;
      const std::string prefix = file + ": " + (p.empty() ? "" : p + ": ");
      std::string what = e.what();
      if (what.rfind(prefix, 0) == 0) what = what.substr(prefix.size());
      std::string value = s.assigned.at(*name).dump();
      if (value.size() > 60) value = value.substr(0, 57) + "...";
      throw ScenarioError(file, p, what + " (the value of $" + *name + " in this variant: " + value + ")");
    }
    if (s.trace_file) used.insert(s.trace_file->reader().used_vars().begin(), s.trace_file->reader().used_vars().end());
    for (const auto& [name, candidates] : s.vars)
      if (!used.count(name))
        throw ScenarioError(file, "vars." + name,
                            "declared, but no value of the file is \"$" + name +
                                "\": every variant would be the same run (use it, or remove it)");
  }

  void body(const json& doc) {
    Obj top(doc, "", file);
    s.file = file;
    s.name = top.str("name");
    if (s.name.empty()) top.fail("expected a non-empty name (it heads the run's summary and messages)", "name");
    s.description = top.str("description", std::string());
    if (const json* seed = top.get("seed")) {
      if (!seed->is_number_unsigned() && !(seed->is_number_integer() && seed->get<std::int64_t>() >= 0))
        top.fail("expected a non-negative integer", "seed");
      s.seed = seed->get<std::uint64_t>();
    }
    if (const json* p = top.get("platform")) {
      if (!p->is_string()) top.fail("expected a string", "platform");
      std::filesystem::path path(p->get<std::string>());
      if (path.is_relative()) path = std::filesystem::path(base_dir) / path;
      if (const std::optional<std::string> problem = platform_file_problem(path.string())) top.fail(*problem, "platform");
      s.platform = path.lexically_normal().string();
    }
    top.get("vars");  // read first, by run()
    if (const json* r = top.get("replicates")) {
      if (!r->is_number_integer() || r->get<std::int64_t>() < 1 || r->get<std::int64_t>() > 10000)
        top.fail("expected a number of replicates from 1 to 10000, found " + (r->is_number() ? r->dump() : Obj::type_of(*r)),
                 "replicates");
      s.replicates = r->get<std::size_t>();
    }
    if (const json* sch = top.get("scheduler")) scheduler(*sch);
    apply_policy();
    const bool generated = top.has("generate");
    if (generated && top.has("trace")) top.fail("give either trace or generate, not both", "generate");
    if (!generated || top.has("workers")) workers(top);
    callables(top);
    buffers(top);
    const std::string on_reject = top.str("on_reject", std::string("continue"));
    if (on_reject != "continue" && on_reject != "abort")
      top.fail("expected \"continue\" or \"abort\"", "on_reject");
    s.abort_on_reject = on_reject == "abort";
    if (generated) {
      Obj g(*top.get("generate"), "generate", file);
      GenerateSpec spec;
      spec.family = g.str("family");
      spec.seed = s.seed;
      spec.max_tasks = max_tasks;
      const json& raw = *top.get("generate");
      for (auto it = raw.begin(); it != raw.end(); ++it) {
        if (it.key() == "family") continue;
        if (it.key() == "seed") {
          if (!it->is_number_unsigned()) g.fail("expected a non-negative integer", "seed");
          spec.seed = it->get<std::uint64_t>();
          g.get("seed");
          continue;
        }
        spec.params[it.key()] = g.num(it.key(), 0);
      }
      g.done();
      generate_lazily(spec, s, file);  // the ops are made as the replay goes (generate.hpp)
      // One pass over the generated ops at load: the time budget and, for expect, the task names
      // (unique by construction; expect needs them to check its keys). Nothing is kept per op.
      time_budget(true, top.has("expect") ? &task_names : nullptr);
    } else if (streamed) {
      top.get("trace");  // the header's placeholder: the ops are in the file
      s.trace_file = detail::check_trace_file(s, *streamed, top.has("expect") ? &task_names : nullptr);
      if (!s.trace_file) throw NotStreamed{};
      s.any_range = s.trace_file->reader().saw_range();  // every op was read by the check
    } else {
      trace(top);
      time_budget(false);
    }
    faults(top);
    expect(top);
    top.done();
  }

  // Members past the aggregate initialisers of parse_scenario() and load_scenario(): set after.
  // The runtime version: the file's policy and switches (scheduler()), then the command line's choice.
  // Where each switch got its value, for the message that refuses one this testbed has not built.
  std::string file_policy = "seed";
  std::vector<std::pair<Switch, bool>> file_switches = {};
  const PolicyChoice* choice = nullptr;
  std::size_t max_tasks = kMaxTasks;  // LoadLimits::max_tasks (parse_scenario), at most kMaxTasks

  void apply_policy() {
    const bool cli_policy = choice && choice->policy;
    const std::string name = cli_policy ? *choice->policy : file_policy;
    std::string error;
    const std::optional<Switches> base = preset(name, &error);
    if (!base) {
      if (cli_policy) throw BadInput("--policy: " + error);
      throw ScenarioError(file, "scheduler.policy", error);  // unreachable: scheduler() checked it
    }
    std::array<std::string, kSwitchCount> origin;
    origin.fill(cli_policy ? "--policy " + name : file + ": scheduler.policy");
    Switches eff = *base;
    if (!cli_policy)
      for (const auto& [id, on] : file_switches) {
        eff.set(id, on);
        origin[static_cast<std::size_t>(id)] = file + ": scheduler.switches." + std::string(to_string(id));
      }
    if (choice)
      for (std::size_t i = 0; i < choice->switches.size(); ++i) {
        eff.set(choice->switches[i].first, choice->switches[i].second);
        origin[static_cast<std::size_t>(choice->switches[i].first)] = "--switch " + choice->switch_flags[i];
      }
    if (const std::optional<Switch> u = eff.first_unbuilt()) {
      const std::string n(to_string(*u));
      throw BadInput(origin[static_cast<std::size_t>(*u)] + ": switch '" + n + "' (#" +
                     std::to_string(switch_info(*u).pr) +
                     ") is not built yet in this testbed; turn it off with \"switches\": {\"" + n +
                     "\": false} or --switch " + n + "=off");
    }
    s.policy = canonical_policy_name(name);
    s.switches = eff;
  }
};

}  // namespace

std::size_t Scenario::submit_count() const {
  if (generate) return OpGenerator(*generate, *this, file).submit_count();
  if (trace_file) return trace_file->submit_count();
  std::size_t n = 0;
  for_each_submit([&](const OpSpec&) { ++n; });
  return n;
}

Registry Scenario::registry() const {
  Registry r;
  for (const WorkerSpec& w : next_level) r.add_next_level(w.id, w.kind, w.frames);
  r.set_sub_workers(static_cast<std::uint32_t>(sub_hosts.size()));
  for (const CallableSpec& c : callables) r.add_callable({c.name, c.ns, c.eligible});
  for (const MpiGroupSpec& g : mpi_groups) r.add_mpi_group(g.name, g.ranks);
  return r;
}

PolicyChoice parse_policy_choice(const std::optional<std::string>& policy, const std::vector<std::string>& switch_flags) {
  PolicyChoice c;
  if (policy) {
    std::string error;
    if (!preset(*policy, &error)) throw BadInput("--policy: " + error);
    c.policy = *policy;
  }
  for (const std::string& flag : switch_flags) {
    const auto eq = flag.find('=');
    const std::string name = flag.substr(0, eq);
    const std::string value = eq == std::string::npos ? std::string() : flag.substr(eq + 1);
    const auto id = switch_from_string(name);
    if (!id)
      throw BadInput("--switch " + flag + ": unknown switch '" + name + "' (known: " + known_switch_names() +
                     ")");
    if (value != "on" && value != "off")
      throw BadInput("--switch " + flag + ": expected NAME=on or NAME=off");
    c.switches.emplace_back(*id, value == "on");
    c.switch_flags.push_back(flag);
  }
  return c;
}

std::vector<Switch> inert_switches(const Scenario& scenario) {
  const Switches& on = scenario.switches;
  std::vector<Switch> out;
  for (const SwitchInfo& row : switch_table()) {
    if (!on[row.id]) continue;
    bool inert = false;
    switch (row.id) {
      case Switch::kViewDeps:
        inert = !scenario.any_range;
        break;
      case Switch::kMpiGroupCheck:
      case Switch::kMpiGroupLane:
        inert = scenario.mpi_groups.empty();
        break;
      case Switch::kStaging:
        // Needs whole_run_fifo, declared runs and a pipeline depth of 2 (a preparable run is the second
        // of the run FIFO) and a worker with two frames.
        inert = !on[Switch::kWholeRunFifo] || !scenario.has_runs || scenario.pipeline_depth < 2 ||
                std::none_of(scenario.next_level.begin(), scenario.next_level.end(),
                             [](const WorkerSpec& w) { return w.frames == 2; });
        break;
      case Switch::kBusyPoll:
        inert = !on[Switch::kEdgeTriggeredWake];  // the seed loop repeats already
        break;
      default:
        break;
    }
    if (inert) out.push_back(row.id);
  }
  return out;
}

Scenario parse_scenario(const nlohmann::json& doc, const std::string& file, const std::string& base_dir,
                        const VarAssignment& assignment, const PolicyChoice& choice, const LoadLimits& limits) {
  Loader l{file, base_dir, assignment, nullptr, {}, {}, {}, {}, {}, {}, {}};
  l.choice = &choice;
  l.max_tasks = std::min(limits.max_tasks, kMaxTasks);
  l.run(doc);
  return std::move(l.s);
}

Scenario load_scenario(const std::string& file, const VarAssignment& assignment, TraceRead read,
                       const PolicyChoice& choice) {
  std::string base = std::filesystem::path(file).parent_path().string();
  if (base.empty()) base = ".";
  const char* env = std::getenv("DIRSCHED_TRACE_READ");
  if (read == TraceRead::kStreamed && !(env && std::string(env) == "full")) {
    // The streamed load (trace_file.hpp) decides nothing on its own: a file it does not take on, or
    // any fault in it, goes to the full read below, which words the error.
    // First as a file that ends with its trace (one scan fewer), then reading every top-level key.
    // A file past the whole-read limit has no full read to fall back on: the streamed load's own
    // error (file and JSON path) is the one reported.
    std::error_code size_error;
    const std::uintmax_t size = std::filesystem::file_size(file, size_error);
    const bool too_big_whole = !size_error && size > kMaxJsonFileBytes;
    for (const bool trace_last : {true, false}) {
      try {
        if (const std::optional<detail::TraceScan> scan = detail::scan_trace_file(file, trace_last)) {
          Loader l{file, base, assignment, &*scan, {}, {}, {}, {}, {}, {}, {}};
          l.choice = &choice;
          l.run(scan->header);
          return std::move(l.s);
        }
      } catch (const ScenarioError&) {
        if (too_big_whole && !trace_last) throw;
      } catch (const NotStreamed&) {
      }
    }
  }
  const nlohmann::json doc = read_json_file(file);  // the strict reader: depth, duplicates, numbers, ...
  return parse_scenario(doc, file, base, assignment, choice);
}

}  // namespace dirsched
