#!/usr/bin/env bash
# Slot reclamation changes no output: generated workloads with dependencies, failures and groups run on
# SimGrid with the core reclaiming ended tasks (the default) and with DIRSCHED_RECLAIM=off; summary.json,
# tasks.csv and events.jsonl must be byte-identical (the shipped scenarios are compared so by the scenario
# matrix, tests/sim/matrix_test.py). Then the same on the threads engine, on the generated workloads and
# every shipped scenario (its expect block taken out, since an expect block turns reclamation off), where
# what does not depend on the threads' timing must agree (see below).
# Usage: reclaim_outputs_test.sh DIRSCHED_BIN SOURCE_DIR
set -euo pipefail
bin=$1 src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/in"
ln -s "$src/platforms" "$tmp/platforms"
for f in "$src"/scenarios/*.json; do
  python3 - "$f" "$tmp/in/$(basename "$f")" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d.pop("expect", None)
json.dump(d, open(sys.argv[2], "w"))
PY
done
cp "$src"/tests/runtime/spaced-*.json "$tmp/in/"  # made for the threads engine's dispatch order (below)
"$bin" gen random --seed 3 --tasks 3000 --workers 6 --edges 3 --group-fraction 0.2 >"$tmp/in/gen-random.json"
"$bin" gen chains --workers 4 --chains 40 --length 60 --interval 0.0001 >"$tmp/in/gen-chains.json"
"$bin" gen fork-join --workers 8 --rounds 300 >"$tmp/in/gen-fork-join.json"
"$bin" gen tp-groups --workers 8 --groups 800 --size 4 >"$tmp/in/gen-tp-groups.json"
# A fail in the middle of a dependency chain with fail-fast off: poisoned consumers, failed last writers.
python3 - "$tmp/in/gen-random.json" "$tmp/in/gen-random-fail.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d.setdefault("scheduler", {})["fail_fast"] = False
n = 0
for op in d["trace"]:
    if op.get("op", "").startswith("submit") and "task" in op:
        n += 1
        if n % 97 == 0:
            op["fail"] = True if op["op"] in ("submit_next_level", "submit_sub") else [True] * len(op.get("args_list", [[]]))
json.dump(d, open(sys.argv[2], "w"))
PY
diffs=0 n=0
for f in "$tmp"/in/*.json; do
  name=$(basename "$f" .json)
  set +e
  "$bin" run "$f" --out "$tmp/on-$name" --outputs events,summary,tasks --quiet >/dev/null 2>"$tmp/on.err"
  a=$?
  # A shipped scenario's SimGrid run with reclamation off is the scenario matrix's (tests/sim/matrix_test.py);
  # its run above is kept for the threads engine's time scale (below).
  if [ -f "$src/scenarios/$name.json" ]; then
    set -e
    [ $a -lt 2 ] || { echo "FAIL $name: exit $a"; cat "$tmp/on.err"; diffs=$((diffs + 1)); }
    continue
  fi
  DIRSCHED_RECLAIM=off "$bin" run "$f" --out "$tmp/off-$name" --outputs events,summary,tasks --quiet >/dev/null 2>"$tmp/off.err"
  b=$?
  set -e
  n=$((n + 1))
  if [ $a -ne $b ] || [ $a -ge 2 ]; then
    echo "FAIL $name: exit $a (reclaiming) vs $b (not)"; cat "$tmp/on.err" "$tmp/off.err"; diffs=$((diffs + 1)); continue
  fi
  for out in summary.json tasks.csv events.jsonl; do
    if ! cmp -s "$tmp/on-$name/$out" "$tmp/off-$name/$out"; then
      echo "FAIL $name/$out differs with reclamation"; diffs=$((diffs + 1))
    fi
  done
done
echo "$n scenarios, $diffs differences"

# The threads engine (issue 27: its memory follows the live window too), on every scenario above it
# can run (it refuses faults, transfers, flops and scheduler costs: exit 2 both ways). Real threads and
# wall-clock time, so nothing byte for byte; with and without reclamation these must agree:
# - at --time-scale 0 (members take no time), the outcome (summary.json) and each task's row of
#   tasks.csv in record order without its times: job_id, kind, callable, final_state, run. The ops of
#   an instant all run before an end is taken, and these did not follow the threads' timing in 14 runs
#   of every shipped scenario (8 of them beside two CPU hogs); the dispatch order did;
# - on the shipped scenarios whose SimGrid run never has two member ends, or an end and an op, in one
#   instant (those race on threads, whatever the time scale), and on tests/runtime/spaced-*.json, at a
#   time scale that puts the distinct instants 100 ms of wall time apart or more (the premise of
#   runtime.engines-match-sim, doubled), also the dispatch order (task, member, worker: events.jsonl)
#   and allocated_resources, which that test compares to SimGrid's.
# The extraction is the same both ways: a difference is reclamation's.
extract() {  # DIR WITH_ORDER: DIR/plain.txt (and DIR/order.txt)
  python3 - "$1" "$2" <<'PY'
import csv, json, os, sys
d, with_order = sys.argv[1], sys.argv[2] == "1"
cols = ["job_id", "kind", "callable", "final_state", "run"] + (["allocated_resources"] if with_order else [])
with open(os.path.join(d, "plain.txt"), "w") as out:
    out.write(json.load(open(os.path.join(d, "summary.json")))["outcome"] + "\n")
    for row in csv.DictReader(open(os.path.join(d, "tasks.csv"))):
        out.write(",".join(row.get(c, "") for c in cols) + "\n")
if with_order:
    with open(os.path.join(d, "events.jsonl")) as f, open(os.path.join(d, "order.txt"), "w") as out:
        for line in f:
            e = json.loads(line)
            if e["event"] == "dispatch":
                out.write("%s %s %s\n" % (e["task"], e["member"], e.get("worker", e.get("sub_worker"))))
PY
}
# The wall seconds per scenario second that put the SimGrid run's distinct instants 100 ms apart, or
# "race" when an instant has two member ends, or an end and an op (a submit, reject or not_submitted),
# or "long" when the run would take more than 5 s.
ordered_scale() {
  python3 - "$1" <<'PY'
import collections, json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
at = collections.defaultdict(lambda: [0, 0])
for e in events:
    if e["event"] == "member_end":
        at[e["t_s"]][0] += 1
    elif e["event"] in ("submit", "reject", "not_submitted"):
        at[e["t_s"]][1] += 1
ts = sorted(at)
gaps = [b - a for a, b in zip(ts, ts[1:])]
scale = 0.1 / min(gaps) if gaps else 1
if any(ends >= 2 or (ends and ops) for ends, ops in at.values()):
    print("race")
elif ts and ts[-1] * scale > 5:
    print("long")  # more than 5 s of wall time a run (choose-worker-set: 18 s)
else:
    print(scale)
PY
}
threads_run() {  # on|off SCENARIO OUT TIME_SCALE OUTPUTS
  local reclaim=$1
  shift
  if [ "$reclaim" = off ]; then
    DIRSCHED_RECLAIM=off "$bin" run "$1" --engine threads --time-scale "$3" --out "$2" --outputs "$4" --quiet >/dev/null 2>"$2.err"
  else
    "$bin" run "$1" --engine threads --time-scale "$3" --out "$2" --outputs "$4" --quiet >/dev/null 2>"$2.err"
  fi
}
# both SCENARIO OUT_ON OUT_OFF TIME_SCALE OUTPUTS: the two runs at once (a = reclaiming, b = not). At a
# time scale their threads mostly sleep, so running them side by side halves the wall time; at 0 they are
# short.
both() {
  threads_run on "$1" "$2" "$4" "$5" &
  local p=$!
  threads_run off "$1" "$3" "$4" "$5"
  b=$?
  wait $p
  a=$?
}
tdiffs=0 tn=0 ordered=0 refused=0
for f in "$tmp"/in/*.json; do
  name=$(basename "$f" .json)
  set +e
  both "$f" "$tmp/t-on-$name" "$tmp/t-off-$name" 0 summary,tasks
  set -e
  if [ $a -eq 2 ] && [ $b -eq 2 ] && grep -q "the threads engine cannot run it" "$tmp/t-on-$name.err"; then
    refused=$((refused + 1))
    continue
  fi
  tn=$((tn + 1))
  if [ $a -ne $b ] || [ $a -ge 2 ]; then
    echo "FAIL threads $name: exit $a (reclaiming) vs $b (not)"; cat "$tmp/t-on-$name.err" "$tmp/t-off-$name.err"
    tdiffs=$((tdiffs + 1)); continue
  fi
  extract "$tmp/t-on-$name" 0
  extract "$tmp/t-off-$name" 0
  if ! diff -u "$tmp/t-off-$name/plain.txt" "$tmp/t-on-$name/plain.txt" >&2; then
    echo "FAIL threads $name (time scale 0): the outcome or tasks.csv's states differ with reclamation"
    tdiffs=$((tdiffs + 1))
  fi
  # The dispatch order too, where nothing races (the shipped scenarios: short).
  [ -f "$src/scenarios/$name.json" ] || [ -f "$src/tests/runtime/$name.json" ] || continue
  [ -s "$tmp/on-$name/events.jsonl" ] || continue
  scale=$(ordered_scale "$tmp/on-$name/events.jsonl")
  [ "$scale" != race ] && [ "$scale" != long ] || continue
  set +e
  both "$f" "$tmp/ts-on-$name" "$tmp/ts-off-$name" "$scale" events,summary,tasks
  set -e
  if [ $a -ne $b ] || [ $a -ge 2 ]; then
    echo "FAIL threads $name (time scale $scale): exit $a (reclaiming) vs $b (not)"; tdiffs=$((tdiffs + 1)); continue
  fi
  extract "$tmp/ts-on-$name" 1
  extract "$tmp/ts-off-$name" 1
  for out in plain.txt order.txt; do
    if ! diff -u "$tmp/ts-off-$name/$out" "$tmp/ts-on-$name/$out" >&2; then
      echo "FAIL threads $name (time scale $scale): $out differs with reclamation"; tdiffs=$((tdiffs + 1))
    fi
  done
  ordered=$((ordered + 1))
done
# And the threads engine does reclaim: 20,000 tasks (a chain per buffer, a group in 25) with a drain
# after every 100 submits hold at most 4,096 + 200 task entries in the core and 200 records at once
# (metrics.json; the core compacts its reclaimed front past 4,096), every task without reclamation.
python3 - "$tmp/drained.json" <<'PY'
import json, sys
trace = []
for i in range(20000):
    arg = {"buffer": "b%d" % (i % 4), "tag": "INOUT"}
    if i % 25 == 24:
        trace.append({"op": "submit_next_level_group", "task": "g%d" % i, "callable": "k", "workers": [0, 1],
                      "args_list": [[arg], []]})
    else:
        trace.append({"op": "submit_next_level", "task": "t%d" % i, "callable": "k", "worker": i % 2, "args": [arg]})
    if i % 100 == 99:
        trace.append({"op": "drain"})
json.dump({"name": "drained", "workers": {"next_level": [{"id": 0, "kind": "local_chip"}, {"id": 1, "kind": "local_chip"}]},
           "callables": {"k": {"namespace": "LOCAL_CHIP", "duration_s": 0}},
           "buffers": {"b%d" % i: {"bytes": 0} for i in range(4)}, "trace": trace}, open(sys.argv[1], "w"))
PY
threads_run on "$tmp/drained.json" "$tmp/t-on-drained" 0 summary,tasks,metrics || { cat "$tmp/t-on-drained.err"; exit 1; }
threads_run off "$tmp/drained.json" "$tmp/t-off-drained" 0 summary,tasks,metrics || { cat "$tmp/t-off-drained.err"; exit 1; }
extract "$tmp/t-on-drained" 0
extract "$tmp/t-off-drained" 0
if ! diff -u "$tmp/t-off-drained/plain.txt" "$tmp/t-on-drained/plain.txt" >&2; then
  echo "FAIL threads drained: the outcome or tasks.csv's states differ with reclamation"; tdiffs=$((tdiffs + 1))
fi
if ! python3 - "$tmp/t-on-drained/metrics.json" "$tmp/t-off-drained/metrics.json" "$tmp/t-on-drained/plain.txt" <<'PY'
import json, sys
on, off = (json.load(open(p)) for p in sys.argv[1:3])
rows = open(sys.argv[3]).read().splitlines()
bad = []
if not 0 < on["peak_core_tasks"] <= 4096 + 200:
    bad.append("reclaiming, the core held %d task entries" % on["peak_core_tasks"])
if not 0 < on["peak_records"] <= 200:
    bad.append("reclaiming, the Recorder held %d records" % on["peak_records"])
if off["peak_core_tasks"] != 20000:
    bad.append("without reclamation, the core held %d task entries, not 20000" % off["peak_core_tasks"])
if rows[0] != "COMPLETED" or len(rows) != 20001 or any(",COMPLETED," not in r for r in rows[1:]):
    bad.append("not 20000 COMPLETED rows in tasks.csv")
sys.exit("; ".join(bad) or None)
PY
then
  echo "FAIL threads drained: its memory does not follow the live window"; tdiffs=$((tdiffs + 1))
fi
echo "threads engine: $tn scenarios ($ordered with the dispatch order too, $refused refused) and a drained trace, $tdiffs differences"
[ $diffs -eq 0 ] && [ $tdiffs -eq 0 ] && [ "$ordered" -ge 20 ]
