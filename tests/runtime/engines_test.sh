#!/usr/bin/env bash
# The threads engine against the simulation: on scenarios whose member ends and op instants are at
# least 20 ms apart (checked here on the simulated run), `dirsched run --engine threads` dispatches
# the same (task, member, worker) sequence as `dirsched run` on SimGrid, and ends every task in the
# same state. Also: what the threads engine refuses (exit 2, nothing written) and its options.
# Usage: engines_test.sh DIRSCHED SOURCE_DIR
set -euo pipefail
dirsched=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# dispatches.txt: one "task member worker" line per dispatch; states.txt: task,state per task;
# instants.txt: every time something the scheduler must look at happens (member ends, submits).
extract() {
  python3 - "$1" <<'PY'
import csv, json, os, sys
d = sys.argv[1]
with open(os.path.join(d, "events.jsonl")) as f, open(os.path.join(d, "dispatches.txt"), "w") as out, \
     open(os.path.join(d, "instants.txt"), "w") as inst:
    for line in f:
        e = json.loads(line)
        if e["event"] == "dispatch":
            out.write("%s %s %s\n" % (e["task"], e["member"], e.get("worker", e.get("sub_worker"))))
        if e["event"] in ("member_end", "submit"):
            inst.write("%r\n" % e["t_s"])
with open(os.path.join(d, "tasks.csv")) as f, open(os.path.join(d, "states.txt"), "w") as out:
    for row in csv.DictReader(f):
        out.write("%s,%s\n" % (row["job_id"], row["final_state"]))
PY
}

# The premise: distinct instants of the simulated run are 20 ms apart or more.
spaced() {
  python3 - "$1" <<'PY'
import sys
ts = sorted({float(l) for l in open(sys.argv[1])})
gaps = [b - a for a, b in zip(ts, ts[1:])]
if gaps and min(gaps) < 0.02 - 1e-9:
    sys.exit("instants %.3f s apart" % min(gaps))
PY
}

runs=0
for scenario in "$src"/tests/runtime/spaced-*.json; do
  name=$(basename "$scenario" .json)
  # Time scales of 2 and 2.5 turn the 20 ms premise into 40 ms or more of wall time between instants:
  # room for a loaded machine's scheduling delays (at scale 1, 1 run in 8 diverged at load 17 on 2 cores).
  for policy_scale in seed:2 head_reservation:2.5; do
    policy=${policy_scale%%:*}
    scale=${policy_scale##*:}
    sim=$tmp/$name-$policy-sim
    thr=$tmp/$name-$policy-threads
    "$dirsched" run "$scenario" --policy "$policy" --out "$sim" --outputs events,tasks,summary >/dev/null
    "$dirsched" run "$scenario" --policy "$policy" --engine threads --time-scale "$scale" --out "$thr" \
      --outputs events,tasks,summary >/dev/null
    extract "$sim"
    extract "$thr"
    spaced "$sim/instants.txt" || fail "$name ($policy): the scenario's instants are too close for this test"
    [ -s "$sim/dispatches.txt" ] || fail "$name ($policy): no dispatch"
    diff -u "$sim/dispatches.txt" "$thr/dispatches.txt" >&2 ||
      fail "$name ($policy, time scale $scale): the threads engine dispatched in another order"
    diff -u "$sim/states.txt" "$thr/states.txt" >&2 || fail "$name ($policy): final states differ"
    # compare across engines: the order agrees, the times are said to be of different clocks.
    set +e
    "$dirsched" compare "$sim" "$thr" >"$tmp/cmp"
    rc=$?
    set -e
    grep -qF "note: different engines or time scales ($name-$policy-sim sim x1, $name-$policy-threads threads x$scale): times are not comparable" \
      "$tmp/cmp" || fail "compare of sim and threads does not say the times are not comparable: $(cat "$tmp/cmp")"
    grep -q "^dispatches that moved (worker): 0$" "$tmp/cmp" && [ "$rc" -eq 0 ] ||
      fail "compare of sim and threads: same order should be exit 0, got $rc: $(cat "$tmp/cmp")"
    runs=$((runs + 1))
  done
done
[ "$runs" -ge 2 ] || fail "no spaced scenario found"

# The threads engine writes every output the simulation writes, pictures included.
"$dirsched" run "$src/tests/runtime/spaced-mixed.json" --engine threads --time-scale 0 --out "$tmp/all" >/dev/null
for f in events.jsonl summary.json tasks.csv metrics.json report.html timeline.svg dag.svg trace.json; do
  [ -s "$tmp/all/$f" ] || fail "threads engine: no $f"
done

# A threads run says so: engine and time scale in summary.json, the marker and the report's header.
grep -q '"engine": "threads",' "$tmp/all/summary.json" && grep -q '"time_scale": 0.0,' "$tmp/all/summary.json" ||
  fail "threads run: summary.json does not name the engine and time scale"
grep -q '"engine":"threads","time_scale":0.0' "$tmp/all/.dirsched-run" || fail "threads run: marker: $(cat "$tmp/all/.dirsched-run")"
grep -q '<th>engine</th><td class="engine">threads, time scale 0: times are wall-clock seconds' "$tmp/all/report.html" ||
  fail "threads run: report.html does not name the engine"
grep -q '"engine": "sim",' "$sim/summary.json" && grep -q '"time_scale": 1.0,' "$sim/summary.json" ||
  fail "sim run: summary.json does not name the engine and time scale"

# A `generate` block keeps no ops (the replay makes them as it goes): the threads engine reads each
# member's duration and failure through the replay, and runs every generated task.
cat >"$tmp/gen.json" <<'JSON'
{"name": "generated-on-threads", "generate": {"family": "fork-join", "rounds": 3, "width": 4, "workers": 4}}
JSON
"$dirsched" run "$tmp/gen.json" --engine threads --time-scale 0 --out "$tmp/gen" --outputs tasks >/dev/null ||
  fail "threads engine on a generate block"
[ "$(cut -d, -f11 "$tmp/gen/tasks.csv" | grep -c '^COMPLETED$')" -eq 18 ] || fail "generate block: not 18 COMPLETED tasks"

# Refusals: exit 2, one line naming file and key, nothing written.
expect_refusal() {
  local want=$1
  shift
  set +e
  "$dirsched" run "$@" --engine threads --out "$tmp/refused" 2>"$tmp/err" >/dev/null
  local rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "expected exit 2 for $*, got $rc"
  grep -qF -- "$want" "$tmp/err" || fail "expected '$want' in: $(cat "$tmp/err")"
  [ ! -e "$tmp/refused" ] || fail "a refused run wrote $tmp/refused"
}
expect_refusal "quick-tour.json: faults[0]: a host fault needs the simulated platform" "$src/scenarios/quick-tour.json"
expect_refusal "link-failure.json: faults[0]: a link fault" "$src/scenarios/link-failure.json"
expect_refusal "transfer-cost.json: callables." "$src/scenarios/transfer-cost.json"
expect_refusal "scheduler-costs.json: scheduler.iteration_cost_s" "$src/scenarios/scheduler-costs.json"
set +e
"$dirsched" run "$src/tests/runtime/spaced-mixed.json" --time-scale 2 --out "$tmp/x" 2>"$tmp/err" >/dev/null
rc=$?
"$dirsched" run "$src/tests/runtime/spaced-mixed.json" --engine threads --time-scale -1 --out "$tmp/x" 2>>"$tmp/err" >/dev/null
rc2=$?
set -e
[ "$rc" -eq 2 ] && grep -q "time-scale applies to --engine threads only" "$tmp/err" || fail "--time-scale without threads: $rc"
[ "$rc2" -eq 2 ] || fail "--time-scale -1: exit $rc2"
[ ! -e "$tmp/x" ] || fail "a refused run wrote $tmp/x"
echo "engines: $runs runs matched the simulation's dispatch order"
