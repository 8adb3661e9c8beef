// The decoder of one events.jsonl line (event.hpp).
#include "dirsched/record/event.hpp"

#include <cmath>

#include "reader.hpp"

namespace dirsched::record {

Event decode_event(const nlohmann::json& line, const std::string& where) {
  Event e;
  decode_event(line, where, e);
  return e;
}

void decode_event(const nlohmann::json& line, const std::string& where, Event& e) {
  using J = nlohmann::json;
  using R = Reader<J>;
  const R in(where);
  in.object(line, "");
  // Every field back to its default, the storage kept.
  e.seq = 0, e.t_s = 0, e.members = 1, e.member.reset(), e.sub_worker = false, e.prepare_only = false, e.waited_s = 0;
  for (std::string* x : {&e.event, &e.task, &e.run, &e.kind, &e.op, &e.callable, &e.queue, &e.worker, &e.outcome,
                         &e.code, &e.message, &e.reason, &e.cause})
    x->clear();
  e.workers.clear(), e.deps.clear(), e.producers.clear(), e.busy.clear(), e.idle_queued.clear();
  auto u32 = [&](const J& v, const char* key) {
    const std::uint64_t n = in.count(v, key);
    if (n > UINT32_MAX) in.fail(key, "an integer below 2^32");
    return static_cast<std::uint32_t>(n);
  };
  // One pass over the line's fields (a handful), each by its name: a reader of millions of lines pays
  // for the fields there are, not for every field an event could have.
  bool has_event = false, has_t = false, has_task = false, has_run = false;
  for (auto it = line.begin(); it != line.end(); ++it) {
    const std::string& k = it.key();
    const J& v = it.value();
    if (k == "seq") e.seq = in.count(v, "seq");
    else if (k == "t_s") e.t_s = in.time(v, "t_s"), has_t = true;
    else if (k == "event") e.event = in.text(v, "event"), has_event = true;
    else if (k == "task") e.task = in.text(v, "task"), has_task = true;
    else if (k == "run") e.run = in.text(v, "run"), has_run = true;
    else if (k == "member") e.member = u32(v, "member");
    else if (k == "worker") e.worker = std::to_string(in.count(v, "worker"));
    else if (k == "sub_worker") {
      e.worker = in.text(v, "sub_worker");
      if (e.worker.size() < 4 || e.worker.size() > 12 || e.worker.rfind("sub", 0) != 0 ||
          e.worker.find_first_not_of("0123456789", 3) != std::string::npos)
        in.fail("sub_worker", "\"subN\"");
      e.sub_worker = true;
    } else if (k == "outcome") e.outcome = in.text(v, "outcome");
    else if (k == "queue") e.queue = in.text(v, "queue");
    else if (k == "kind") e.kind = in.text(v, "kind");
    else if (k == "op") e.op = in.text(v, "op");
    else if (k == "callable") e.callable = in.text(v, "callable");
    else if (k == "members") e.members = u32(v, "members");
    else if (k == "workers") e.workers = in.counts(v, "workers");
    else if (k == "deps")
      e.deps = in.template list<EventDep>(v, "deps", [&](const J& d, const std::string& p) {
        in.object(d, p);
        const J* producer = R::field(d, "producer");
        const J* buffer = R::field(d, "buffer");
        if (!producer) in.fail(R::at(p, "producer"), "a task name");
        if (!buffer) in.fail(R::at(p, "buffer"), "a buffer name");
        return EventDep{in.text(*producer, R::at(p, "producer")), in.text(*buffer, R::at(p, "buffer"))};
      });
    else if (k == "producers") e.producers = in.texts(v, "producers");
    else if (k == "code") e.code = in.text(v, "code");
    else if (k == "message") e.message = in.text(v, "message");
    else if (k == "reason") e.reason = in.text(v, "reason");
    else if (k == "cause") e.cause = in.text(v, "cause");
    else if (k == "busy") e.busy = in.counts(v, "busy");
    else if (k == "idle_queued") e.idle_queued = in.counts(v, "idle_queued");
    else if (k == "waited_s") e.waited_s = in.time(v, "waited_s");
    else if (k == "prepare_only") e.prepare_only = in.boolean(v, "prepare_only");
  }
  if (!has_event) in.fail("event", "the event's name");
  if (!has_t) in.fail("t_s", "a time");
  if (e.of_run()) {
    if (!has_run) in.fail("run", "the run's name");
  } else if (!has_task) {
    in.fail("task", "the task's name");
  }
  if ((e.event == "dispatch" || e.event == "activate" || e.event == "member_end") && (e.worker.empty() || !e.member))
    in.fail(e.worker.empty() ? "worker" : "member", e.worker.empty() ? "a worker or sub_worker" : "a member index");
}

}  // namespace dirsched::record
