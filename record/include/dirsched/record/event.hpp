// One line of events.jsonl as a typed record, and its decoder: what every reader of a run's event log
// (the pictures, compare, fidelity) takes from a line.
//
// The writer is the EventLog observer (outputs/src/event_log.cpp), which builds each line by hand
// because it runs once per event of a run of millions; the field names below are its. A run folder's
// files share one schema, summary.json's "schema" (summary.hpp): a change to a line's fields raises it.
//
// Decoding is strict about types (an error names where the line is and its field) and lenient about
// presence: an event carries only its own fields (docs/scenario-format.md, "What a run writes"), and a
// field it does not carry keeps its default. An event name this build does not know is kept as its
// name, so that a reader may skip it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dirsched::record {

struct EventDep {
  std::string producer, buffer;
};

struct Event {
  std::uint64_t seq = 0;
  double t_s = 0;
  std::string event;  // submit, reject, not_submitted, pending, ready, dispatch, activate, member_end, complete,
                      // fail, poison, cancel, group_blocked, group_stall, reservation_stall,
                      // group_launched; run_raise and run_end (a run's own: `task` empty)
  std::string task;
  std::string run;  // the task's run in a trace with runs; the run of run_raise and run_end
  // submit
  std::string kind, op, callable;
  std::uint32_t members = 1;
  std::vector<std::uint64_t> workers;  // the named workers (NEXT_LEVEL tasks)
  std::vector<EventDep> deps;
  // pending
  std::vector<std::string> producers;
  // ready: "worker:ID", "group" or "sub"
  std::string queue;
  // dispatch, member_end, fail
  std::optional<std::uint32_t> member;
  // dispatch, member_end: the worker as a lane name, "3" or "subN"
  std::string worker;
  bool sub_worker = false;
  // dispatch: a staging (staging, #1583): the member starts at its `activate` event, not here
  bool prepare_only = false;
  // member_end: success or failure; run_end: COMPLETED or FAILED
  std::string outcome;
  // reject: code and message; run_raise: message; not_submitted: reason; poison, cancel: cause
  std::string code, message, reason, cause;
  // group_blocked, group_stall, reservation_stall
  std::vector<std::uint64_t> busy, idle_queued;
  double waited_s = 0;

  bool of_run() const { return event == "run_raise" || event == "run_end"; }
};

// A line's event from its parsed JSON; `where` ("out/events.jsonl line 12") begins every error:
// "WHERE: FIELD: expected ...". Throws RecordError (summary.hpp).
Event decode_event(const nlohmann::json& line, const std::string& where);
// The same into `out`, whose strings and lists keep their storage: a reader of a long log decodes every
// line into one Event.
void decode_event(const nlohmann::json& line, const std::string& where, Event& out);

}  // namespace dirsched::record
