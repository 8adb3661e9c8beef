// The decoder of one events.jsonl line (event.hpp).
#include "dirsched/record/event.hpp"

#include "reader.hpp"

namespace dirsched::record {

Event decode_event(const nlohmann::json& line, const std::string& where) {
  using J = nlohmann::json;
  using R = Reader<J>;
  const R in(where);
  in.object(line, "");
  Event e;
  const J* x = nullptr;
  if (!(x = R::field(line, "event"))) in.fail("event", "the event's name");
  e.event = in.text(*x, "event");
  if (!(x = R::field(line, "t_s"))) in.fail("t_s", "a time");
  e.t_s = in.number(*x, "t_s");
  if ((x = R::field(line, "seq"))) e.seq = in.count(*x, "seq");
  if ((x = R::field(line, "run"))) e.run = in.text(*x, "run");
  if (e.of_run()) {
    if (!R::field(line, "run")) in.fail("run", "the run's name");
  } else {
    if (!(x = R::field(line, "task"))) in.fail("task", "the task's name");
    e.task = in.text(*x, "task");
  }
  auto u32 = [&](const J& v, const char* key) {
    const std::uint64_t n = in.count(v, key);
    if (n > UINT32_MAX) in.fail(key, "an integer below 2^32");
    return static_cast<std::uint32_t>(n);
  };
  if ((x = R::field(line, "kind"))) e.kind = in.text(*x, "kind");
  if ((x = R::field(line, "op"))) e.op = in.text(*x, "op");
  if ((x = R::field(line, "callable"))) e.callable = in.text(*x, "callable");
  if ((x = R::field(line, "members"))) e.members = u32(*x, "members");
  if ((x = R::field(line, "workers"))) e.workers = in.counts(*x, "workers");
  if ((x = R::field(line, "deps")))
    e.deps = in.list<EventDep>(*x, "deps", [&](const J& d, const std::string& p) {
      in.object(d, p);
      const J* producer = R::field(d, "producer");
      const J* buffer = R::field(d, "buffer");
      if (!producer) in.fail(R::at(p, "producer"), "a task name");
      if (!buffer) in.fail(R::at(p, "buffer"), "a buffer name");
      return EventDep{in.text(*producer, R::at(p, "producer")), in.text(*buffer, R::at(p, "buffer"))};
    });
  if ((x = R::field(line, "producers"))) e.producers = in.texts(*x, "producers");
  if ((x = R::field(line, "queue"))) e.queue = in.text(*x, "queue");
  if ((x = R::field(line, "member"))) e.member = u32(*x, "member");
  if ((x = R::field(line, "worker"))) e.worker = std::to_string(in.count(*x, "worker"));
  if ((x = R::field(line, "sub_worker"))) {
    e.worker = in.text(*x, "sub_worker");
    if (e.worker.size() < 4 || e.worker.size() > 12 || e.worker.rfind("sub", 0) != 0 ||
        e.worker.find_first_not_of("0123456789", 3) != std::string::npos)
      in.fail("sub_worker", "\"subN\"");
    e.sub_worker = true;
  }
  if ((x = R::field(line, "outcome"))) e.outcome = in.text(*x, "outcome");
  if ((x = R::field(line, "code"))) e.code = in.text(*x, "code");
  if ((x = R::field(line, "message"))) e.message = in.text(*x, "message");
  if ((x = R::field(line, "reason"))) e.reason = in.text(*x, "reason");
  if ((x = R::field(line, "cause"))) e.cause = in.text(*x, "cause");
  if ((x = R::field(line, "busy"))) e.busy = in.counts(*x, "busy");
  if ((x = R::field(line, "idle_queued"))) e.idle_queued = in.counts(*x, "idle_queued");
  if ((x = R::field(line, "waited_s"))) e.waited_s = in.number(*x, "waited_s");
  if ((e.event == "dispatch" || e.event == "member_end") && (e.worker.empty() || !e.member))
    in.fail(e.worker.empty() ? "worker" : "member", e.worker.empty() ? "a worker or sub_worker" : "a member index");
  return e;
}

}  // namespace dirsched::record
