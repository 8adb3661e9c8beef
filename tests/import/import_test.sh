#!/usr/bin/env bash
# dirsched import strace: the sample logs of tests/import/ (written by the project in the runtime's
# [STRACE] grammar) read into a scenario, an observed run folder and a report; every refusal rule of
# ../shared/docs/strace-import.md broken once (exit 2, FILE:LINE: rule, nothing written).
set -u
dirsched=$1
here=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# The basic log: singles, a group, a SUB task, a staged dispatch, a failure, two runs, noise, a device
# span, a nested span, two records on one line, a dispatch written before its submit.
"$dirsched" import strace "$here/basic.log" --out "$tmp/basic" >"$tmp/out" 2>"$tmp/err" || { echo "FAIL basic import"; cat "$tmp/err"; fail=1; }
python3 - "$tmp/basic" "$tmp/out" <<'PY' || fail=1
import json, sys
d = sys.argv[1]
sc = json.load(open(d + "/scenario.json"))
rep = json.load(open(d + "/import-report.json"))
ok = True
def want(cond, what):
    global ok
    if not cond:
        print("FAIL basic:", what); ok = False
ops = sc["trace"]
want([o["op"] for o in ops] == ["submit_next_level", "submit_next_level_group", "submit_sub", "drain",
                                "submit_next_level", "submit_next_level"], "ops %s" % [o["op"] for o in ops])
want([o.get("task") for o in ops if o["op"] != "drain"] == ["r1.t0", "r1.t1", "r1.t2", "r2.t0", "r2.t1"], "task names")
want(ops[0]["worker"] == 0 and ops[0]["callable"] == "ha1" and abs(ops[0]["at_s"] - 0.0001) < 1e-15, "single r1.t0 %s" % ops[0])
want(ops[0]["duration_s"] == 0.002, "single duration from dispatch to complete")
want(ops[1]["workers"] == [1, 0] and ops[1]["duration_s"] == [0.005, 0.003], "group targets from its members' dispatches %s" % ops[1])
want(ops[2]["callable"] == "hc3" and "at_s" not in ops[2] and ops[2]["duration_s"] == 0.001, "SUB task %s" % ops[2])
want(ops[4]["duration_s"] == 0.001, "staged dispatch starts at its activate %s" % ops[4])
want(ops[5].get("fail") is True and ops[5]["duration_s"] == 0.0005, "failure %s" % ops[5])
want(sc["workers"] == {"next_level": [{"id": 0, "kind": "local_chip"}, {"id": 1, "kind": "local_chip"}], "sub": 1}, "workers")
want(sc["callables"]["ha1"]["duration"]["empirical"] == [0.002, 0.001, 0.0005], "empirical durations of ha1")
want(sc["scheduler"]["policy"] == "seed" and sc["scheduler"]["stall_report_s"] == 5, "scheduler")
ex = sc["expect"]
want(ex["dispatch_order_per_worker"] == {"0": ["r1.t0", "r1.t1[1]", "r2.t1"], "1": ["r1.t1[0]", "r2.t0"], "sub0": ["r1.t2"]},
     "expect order %s" % ex["dispatch_order_per_worker"])
want(ex["final_state"] == {"r1.t0": "COMPLETED", "r1.t1": "COMPLETED", "r1.t2": "COMPLETED", "r2.t0": "COMPLETED", "r2.t1": "FAILED"}, "fates")
L = rep["lines"]
want(L["total"] == 28 and L["noise"] == 3 and L["device_clock_spans"] == 1 and L["other_spans"] == 2 and L["clock_anchors"] == 1,
     "line counts %s" % L)
want(rep["stall_warnings"]["count"] == 1, "stall warning counted")
want(len(rep["sub_submit_times_unknown"]) == 1 and rep["sub_submit_times_unknown"][0]["task"] == "r1.t2", "SUB interval reported")
want(any("ascending id order" in a for a in rep["assumptions"]), "registration order assumption reported")
ev = [json.loads(l) for l in open(d + "/observed/events.jsonl")]
disp = [(e["task"], e.get("member"), e.get("worker", e.get("sub_worker")), e["t_s"]) for e in ev if e["event"] == "dispatch"]
want(("r1.t1", 1, 0, 0.0023) in disp and ("r2.t0", 0, 1, 0.0062) in disp and ("r1.t2", 0, "sub0", 0.0005) in disp, "observed dispatches %s" % disp)
s = json.load(open(d + "/observed/summary.json"))
want(s["engine"] == "strace" and s["makespan_s"] == 0.0072 and s["tasks"]["COMPLETED"] == 4 and s["tasks"]["FAILED"] == 1, "observed summary")
want(json.load(open(d + "/observed/.dirsched-run"))["engine"] == "strace", "observed marker")
want("5 tasks" in open(sys.argv[2]).read(), "readable summary on stdout")
sys.exit(0 if ok else 1)
PY
# The scenario replays, and the observed folder reads as a run folder (compare, render).
"$dirsched" run "$tmp/basic/scenario.json" --out "$tmp/replay" >/dev/null 2>"$tmp/err" || { echo "FAIL replay of the imported scenario"; cat "$tmp/err"; fail=1; }
"$dirsched" compare "$tmp/basic/observed" "$tmp/replay" >"$tmp/cmp" 2>"$tmp/err"; rc=$?
[[ $rc -le 1 ]] || { echo "FAIL compare reads the observed folder (exit $rc)"; cat "$tmp/err"; fail=1; }
"$dirsched" render "$tmp/basic/observed" >/dev/null 2>"$tmp/err" || { echo "FAIL render of the observed folder"; cat "$tmp/err"; fail=1; }
[[ -s "$tmp/basic/observed/timeline.svg" ]] || { echo "FAIL no timeline drawn"; fail=1; }
# Importing again replaces the earlier import (and nothing else).
"$dirsched" import strace "$here/basic.log" --out "$tmp/basic" >/dev/null 2>&1 || { echo "FAIL re-import over an import"; fail=1; }
touch "$tmp/basic/notes.txt"
"$dirsched" import strace "$here/basic.log" --out "$tmp/basic" >/dev/null 2>&1 && { echo "FAIL an import replaced a folder holding a foreign file"; fail=1; }
[[ -e "$tmp/basic/notes.txt" ]] || { echo "FAIL notes.txt deleted"; fail=1; }
rm "$tmp/basic/notes.txt"
# Inside the observed run folder too (render's pictures, listed in its marker, are the import's), and a
# folder in place of a file the import writes.
touch "$tmp/basic/observed/notes.txt"
"$dirsched" import strace "$here/basic.log" --out "$tmp/basic" >/dev/null 2>"$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "holds observed/notes.txt, which dirsched import did not write" "$tmp/err" \
  || { echo "FAIL an import replaced an observed folder holding a foreign file (exit $rc)"; cat "$tmp/err"; fail=1; }
[[ -e "$tmp/basic/observed/notes.txt" ]] || { echo "FAIL observed/notes.txt deleted"; fail=1; }
rm "$tmp/basic/observed/notes.txt"
rm "$tmp/basic/import-report.json" && mkdir "$tmp/basic/import-report.json" && touch "$tmp/basic/import-report.json/mine"
"$dirsched" import strace "$here/basic.log" --out "$tmp/basic" >/dev/null 2>"$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "holds import-report.json/, which" "$tmp/err" \
  || { echo "FAIL an import replaced a folder named as its report (exit $rc)"; cat "$tmp/err"; fail=1; }
[[ -e "$tmp/basic/import-report.json/mine" ]] || { echo "FAIL import-report.json/mine deleted"; fail=1; }

# Several processes: refused without a choice (listing the candidates), chosen by --pid or --level.
"$dirsched" import strace "$here/two-processes.log" --out "$tmp/two" >/dev/null 2>"$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "two-processes.log:[0-9]*: several scheduler processes and no choice" "$tmp/err" && grep -q "pid 4242 (level node" "$tmp/err" && grep -q "pid 5151 (level network1" "$tmp/err" \
  || { echo "FAIL several processes (exit $rc)"; cat "$tmp/err"; fail=1; }
[[ ! -e "$tmp/two" ]] || { echo "FAIL a refused import wrote"; fail=1; }
"$dirsched" import strace "$here/two-processes.log" --out "$tmp/two-l4" --level network1 >/dev/null 2>"$tmp/err" || { echo "FAIL --level network1"; cat "$tmp/err"; fail=1; }
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); w=s["workers"]["next_level"]; sys.exit(0 if w==[{"id":7,"kind":"local_worker"},{"id":9,"kind":"remote"}] and s["callables"]["hf00d"]["namespace"]=="LOCAL_PYTHON" else 1)' "$tmp/two-l4/scenario.json" || { echo "FAIL network1 workers and kinds"; cat "$tmp/two-l4/scenario.json"; fail=1; }
"$dirsched" import strace "$here/two-processes.log" --out "$tmp/two-pid" --pid 4242 >/dev/null 2>"$tmp/err" || { echo "FAIL --pid 4242"; cat "$tmp/err"; fail=1; }
"$dirsched" import strace "$here/basic.log" --out "$tmp/run2" --run 2 >/dev/null 2>"$tmp/err" || { echo "FAIL --run 2"; fail=1; }
# Tasks the import leaves out (dispatches with no submit in a run whose graph_build is lost: the log's start
# cut off) are not held to t0: run 2 imports as before.
grep -v 'name=node.graph_build ts=1000000000\|run_id=1 task_slot=0 group_index=0 group_size\|run_id=1 task_slot=1 group_index=-1' \
  "$here/basic.log" >"$tmp/cut-start.log"
"$dirsched" import strace "$tmp/cut-start.log" --out "$tmp/cut-start" >/dev/null 2>"$tmp/err" \
  || { echo "FAIL a log whose first run lost its graph_build"; cat "$tmp/err"; fail=1; }
# --pid of a process the log does not have: "no scheduler span of pid N", not another process's torn record.
python3 - "$here/basic.log" "$tmp/torn-other.log" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
i = next(k for k, l in enumerate(lines) if "node.submit " in l and "task_slot=1 " in l)
lines[i] = lines[i][:lines[i].index("name=node.sub") + 10]
open(sys.argv[2], "w").write("\n".join(lines))
PY
"$dirsched" import strace "$tmp/torn-other.log" --out "$tmp/torn-other" --pid 9999 >/dev/null 2>"$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "torn-other.log:[0-9]*: no scheduler span of pid 9999" "$tmp/err" \
  || { echo "FAIL --pid 9999 (exit $rc)"; cat "$tmp/err"; fail=1; }
# A run the log does not have, and a pid past the integers: refused (exit 0 with an empty scenario, and a
# pid clamped to 2^63-1, before).
"$dirsched" import strace "$here/basic.log" --out "$tmp/run5" --run 5 >/dev/null 2>"$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -qF "basic.log: --run 5: no span of pid 4242 has run_id 5 (its runs: 1, 2)" "$tmp/err" && [[ ! -e "$tmp/run5" ]] \
  || { echo "FAIL --run 5 not in the log (exit $rc)"; cat "$tmp/err"; fail=1; }
"$dirsched" import strace "$here/basic.log" --out "$tmp/pidbig" --pid 99999999999999999999 >/dev/null 2>"$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -qF -- "--pid: '99999999999999999999' is not a whole number" "$tmp/err" && [[ ! -e "$tmp/pidbig" ]] \
  || { echo "FAIL --pid past the integers (exit $rc)"; cat "$tmp/err"; fail=1; }
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); sys.exit(0 if [o["task"] for o in s["trace"]]==["r2.t0","r2.t1"] else 1)' "$tmp/run2/scenario.json" || { echo "FAIL --run 2 keeps run 2 only"; fail=1; }

# Refusals: each rule broken once in a copy of basic.log. Columns: name, rule text expected, then a
# Python expression over `lines` (the log as a list) that breaks it and sets `at` (1-based line).
refuse() {  # name, expected text, python edit, [extra option]
  local name=$1 text=$2 edit=$3 opt=${4:-}
  python3 - "$here/basic.log" "$tmp/$name.log" "$tmp/$name.line" <<PY || { echo "FAIL $name: cannot make the log"; fail=1; return; }
import sys, re
lines = open(sys.argv[1]).read().split("\n")
def find(*words):
    for i, l in enumerate(lines):
        if all(w in l for w in words): return i
    raise SystemExit("no line with %s" % (words,))
at = None
$edit
open(sys.argv[2], "w").write("\n".join(lines))
open(sys.argv[3], "w").write(str(at))
PY
  local line; line=$(cat "$tmp/$name.line")
  "$dirsched" import strace "$tmp/$name.log" --out "$tmp/$name.out" $opt >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [[ $rc -ne 2 ]]; then echo "FAIL $name: exit $rc, expected 2"; cat "$tmp/err"; fail=1; fi
  if ! grep -qF "$tmp/$name.log:$line: $text" "$tmp/err"; then echo "FAIL $name: expected '$name.log:$line: $text' on stderr, got:"; cat "$tmp/err"; fail=1; fi
  [[ ! -e "$tmp/$name.out" ]] || { echo "FAIL $name: wrote $name.out"; fail=1; }
  [[ -z $(ls "$tmp" | grep tmp-dirsched) ]] || { echo "FAIL $name: left a temporary"; fail=1; }
}
refuse no-span "no scheduler span" 'lines = [l for l in lines if "[STRACE]" not in l or "depth=0 name=node." not in l]; at = len(lines) - (lines[-1] == "")'
refuse version "record version v=2: only v=1 is read" 'at = find("node.submit ", "task_slot=1 "); lines[at] = lines[at].replace("v=1 pid", "v=2 pid"); at += 1'
refuse torn "a torn [STRACE] record" 'at = find("node.dispatch ", "task_slot=1 group_index=0"); lines[at] = lines[at][:lines[at].index("name=node.disp") + 14]; at += 1'
refuse capped "identity attribute task_slot=1~ is capped" 'at = find("node.submit ", "task_slot=1 "); lines[at] = lines[at].replace("task_slot=1 ", "task_slot=1~ "); at += 1'
refuse non-integer "identity attribute worker_id=w1 is not an integer" 'at = find("node.dispatch ", "task_slot=1 group_index=0"); lines[at] = lines[at].replace("worker_id=1", "worker_id=w1"); at += 1'
refuse run-id-0 "run_id=0 (run ids count from 1" 'at = find("node.submit ", "run_id=2 task_slot=1 "); lines[at] = lines[at].replace("run_id=2", "run_id=0"); at += 1'
# Values the runtime never writes: refused at their line (each was imported with exit 0 into a scenario or
# an observed run the testbed's own tools then refused, or taken as something else).
refuse run-id-negative "run_id=-2 is negative (run ids count from 1)" 'at = find("node.submit ", "run_id=2 task_slot=1 "); lines[at] = lines[at].replace("run_id=2", "run_id=-2"); at += 1'
refuse slot-negative "task_slot=-1 is negative" 'at = find("node.submit ", "run_id=2 task_slot=1 "); lines[at] = lines[at].replace("task_slot=1", "task_slot=-1"); at += 1'
refuse worker-negative "worker_id=-1 is negative" 'at = find("node.submit ", "run_id=1 task_slot=0 "); lines[at] = lines[at].replace("worker_id=0", "worker_id=-1"); at += 1'
refuse dispatch-id-negative "dispatch_id=-3 is negative" 'at = find("node.dispatch ", "run_id=2 task_slot=1 "); lines[at] = lines[at].replace("dispatch_id=2", "dispatch_id=-3"); at += 1'
refuse outcome-unknown "outcome=7 is not an outcome (0 success" 'at = find("node.complete ", "run_id=2 task_slot=1 "); lines[at] = lines[at].replace("outcome=1", "outcome=7"); at += 1'
refuse prepare-only-7 "prepare_only=7 is neither 0 nor 1" 'at = find("node.dispatch ", "run_id=2 task_slot=0 "); lines[at] = lines[at].replace("prepare_only=1", "prepare_only=7"); at += 1'
refuse endpoint-unknown "endpoint_kind=weird is neither local_mailbox nor remote_l3" 'at = find("node.dispatch ", "run_id=2 task_slot=1 "); lines[at] = lines[at].replace("endpoint_kind=local_mailbox", "endpoint_kind=weird"); at += 1'
refuse ts-negative "ts=-5 is negative" 'at = find("node.complete ", "run_id=2 task_slot=0 "); lines[at] = lines[at].replace("ts=1007200000", "ts=-5"); at += 1'
refuse before-t0 "a submit at ts 10000, before the time origin t0 (ts 1000000000" 'at = find("node.submit ", "run_id=1 task_slot=0 "); lines[at] = lines[at].replace("ts=1000100000", "ts=10000"); at += 1'
refuse past-limit "a completion at ts 9000000000000000000, more than 2^32 s after the time origin t0" 'at = find("node.complete ", "run_id=2 task_slot=0 "); lines[at] = lines[at].replace("ts=1007200000", "ts=9000000000000000000"); at += 1'
refuse sub-pool "SUB worker_id=999999999: a SUB pool of more than 65536 workers" 'lines = [l.replace("worker_id=0", "worker_id=999999999") if "run_id=1 task_slot=2 " in l else l for l in lines]; at = find("node.dispatch ", "run_id=1 task_slot=2 ") + 1'
# 65,536 hids are 65,536 callables, one more than the testbed's core holds (Registry::kMaxCallables):
# refused at the submit of the task whose callable is the 65,536th, not written for `run` to refuse.
refuse callables "callable h10fff: more than 65535 callables (the testbed's limit)" 'lines = lines[:3] + ["[mono_ns=%d][T0x7f0001][TIMING] submit: [STRACE] v=1 pid=4242 tid=4243 inv=1 hid=%x depth=0 name=node.submit ts=%d dur=1000 run_id=1 task_slot=%d group_index=0 group_size=1 worker_id=%d" % (1000100000 + 10000 * i, i + 4096, 1000100000 + 10000 * i, i, i % 2) for i in range(65536)]; at = 4 + 65535'
# Every span refused (run_id 0 throughout): that rule, not "no scheduler span".
refuse all-run-id-0 "run_id=0 (run ids count from 1" 'lines = [re.sub("run_id=[0-9]+", "run_id=0", l) for l in lines]; at = find("node.graph_build") + 1'
refuse two-submits "two submits for one task" 'i = find("node.submit ", "task_slot=1 "); lines.insert(i + 1, lines[i]); at = i + 2'
refuse single-elsewhere "a single dispatched to another worker than its submit named" 'i = find("node.submit ", "run_id=1 task_slot=0 "); lines[i] = lines[i].replace("worker_id=0", "worker_id=1"); at = find("node.dispatch ", "run_id=1 task_slot=0 ") + 1'
refuse group-index "group_index 2 outside [0, group_size)" 'at = find("node.dispatch ", "task_slot=1 group_index=1"); lines[at] = lines[at].replace("group_index=1", "group_index=2"); c = find("node.complete ", "task_slot=1 group_index=1"); lines[c] = lines[c].replace("group_index=1", "group_index=2"); at += 1'
# A group_index too large for a member index, on a copy of a dispatch that is otherwise the same: its own
# refusal (not "dispatched twice" for the member it would wrap to).
refuse group-index-huge "group_index 4294967296 outside [0, group_size)" 'i = find("node.dispatch ", "run_id=1 task_slot=0 "); lines.insert(i + 1, lines[i].replace("group_index=0", "group_index=4294967296")); at = i + 2'
refuse twice "a member dispatched twice without an end between" 'i = find("node.dispatch ", "run_id=1 task_slot=0 "); lines.insert(i + 1, lines[i].replace("dispatch_id=0", "dispatch_id=7").replace("ts=1000200000", "ts=1000250000")); at = i + 2'
# The same dispatch record twice (a capture that repeats a line): refused, not a crash (it was a null
# dereference before the pairing was rewritten).
refuse same-dispatch "a member dispatched twice without an end between" 'i = find("node.dispatch ", "run_id=1 task_slot=0 "); lines.insert(i + 1, lines[i]); at = i + 2'
refuse overlap "two overlapping dispatches on one worker" 'lines = [l.replace("worker_id=0", "worker_id=1") if "run_id=2 task_slot=1 " in l else l for l in lines]; at = find("node.dispatch ", "run_id=2 task_slot=1 ") + 1'
refuse complete-early "a completion before its dispatch" 'at = find("node.complete ", "run_id=1 task_slot=0 "); lines[at] = lines[at].replace("ts=1002200000", "ts=1000100000"); at += 1'
# A completion whose dispatch is not in the log at all (refused with or without --accept-anomalies).
refuse complete-no-dispatch "a completion before its dispatch (no dispatch of run_id 1 task_slot 0" 'del lines[find("node.dispatch ", "run_id=1 task_slot=0 ")]; at = find("node.complete ", "run_id=1 task_slot=0 ") + 1'
refuse no-activate "prepare_only=1 with no activate" 'del lines[find("node.activate ")]; at = find("node.dispatch ", "run_id=2 task_slot=0 ") + 1'
refuse no-complete "a dispatch without a completion" 'del lines[find("node.complete ", "run_id=2 task_slot=1 ")]; at = find("node.dispatch ", "run_id=2 task_slot=1 ") + 1'

# --deps FILE: the Python trace of the same orchestration (deps-trace.json) gives each NEXT_LEVEL submit
# its args and the scenario its buffers, joined in order; the replay passes the import's expect.
"$dirsched" import strace "$here/deps.log" --out "$tmp/joined" --deps "$here/deps-trace.json" >"$tmp/out" 2>"$tmp/err" ||
  { echo "FAIL --deps"; cat "$tmp/err"; fail=1; }
grep -q "dependencies: the args of 6 NEXT_LEVEL submits joined from" "$tmp/out" || { echo "FAIL --deps summary"; cat "$tmp/out"; fail=1; }
python3 - "$tmp/joined" <<'PY' || fail=1
import json, sys
sc = json.load(open(sys.argv[1] + "/scenario.json"))
rep = json.load(open(sys.argv[1] + "/import-report.json"))["dependencies"]
ops = {o["task"]: o for o in sc["trace"] if "task" in o}
want = {"r1.t1": [{"buffer": "x", "tag": "INPUT"}, {"buffer": "y", "tag": "OUTPUT"}],
        "r1.t5": [{"buffer": "z", "tag": "INPUT"}], "r1.t4": []}
ok = all(ops[t]["args"] == a for t, a in want.items())
ok &= ops["r1.t3"]["args_list"] == [[{"buffer": "y", "tag": "INPUT"}], [{"scalar": 3}]]
ok &= sc["buffers"] == {"x": {"bytes": 64}, "y": {"bytes": 64}, "z": {"bytes": 64}}
ok &= rep["source"] == "deps" and rep["joined"] == 6
if not ok:
    print("FAIL --deps args", sc["trace"], rep)
sys.exit(0 if ok else 1)
PY
"$dirsched" check "$tmp/joined/scenario.json" >"$tmp/out" 2>&1 || { echo "FAIL the replay with joined deps"; cat "$tmp/out"; fail=1; }
# A trace that does not match the log: exit 2 naming both sides, nothing written.
deps_refused() {
  local name=$1 pattern=$2 edit=$3
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); ops=d['trace'][0]['ops']; $edit; json.dump(d, open(sys.argv[2],'w'))" \
    "$here/deps-trace.json" "$tmp/$name.json"
  "$dirsched" import strace "$here/deps.log" --out "$tmp/nojoin" --deps "$tmp/$name.json" >/dev/null 2>"$tmp/err"
  local rc=$?
  [[ $rc -eq 2 && ! -e $tmp/nojoin ]] && grep -q -- "$pattern" "$tmp/err" ||
    { echo "FAIL --deps $name refused (exit $rc)"; cat "$tmp/err"; fail=1; }
}
deps_refused count "count.json: 5 NEXT_LEVEL submits, but .*deps.log has 6" 'del ops[4]'
deps_refused worker "submit 1 does not match: .*worker.json: trace\[0\].ops\[1\] (task 'b'): worker 2; .*deps.log:[0-9]* (r1.t1): worker 1" 'ops[1]["worker"] = 2'
deps_refused kind "submit 3 does not match: .*(task 'g'): a single; .*(r1.t3): a group" 'ops[3] = {"op": "submit_next_level", "task": "g", "callable": "mm", "worker": 2, "args": []}'
deps_refused member "member 1 on worker 1; .*(r1.t3): member 1 dispatched to worker 3" 'ops[3]["workers"] = [2, 1]'
deps_refused size "(task 'g'): 3 members; .*(r1.t3): 2 members" 'ops[3]["workers"] = [2, 3, 0]; ops[3]["args_list"].append([])'
deps_refused vars "vars.json: vars: --deps needs a recording with its values in place" 'd["vars"] = {"w": [1, 2]}; ops[1]["worker"] = "$w"'
deps_refused runs "runs.json: 2 runs, but .*deps.log has 1 runs" 'd["trace"] = [{"op": "run", "run": "r1", "ops": ops[:1]}, {"op": "run", "run": "r2", "ops": ops[1:]}]'
deps_refused owner "the joined scenario would not load (scenario.json: buffers.w.owner" 'd["workers"]["next_level"] += [{"id": i, "kind": "local_chip"} for i in range(4, 8)]; d["buffers"]["w"] = {"bytes": 8, "memory": "child", "owner": 7}; ops[4]["args"] = [{"buffer": "w", "tag": "INPUT"}]'
deps_refused generate "generate.json: generates its trace (generate): --deps needs a recorded trace" 'del d["trace"]; d["generate"] = {"family": "stream", "tasks": 6, "workers": 4}'
# Submits inside a batch are joined in place (Python's `with orch.batch():` records one).
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); ops=d['trace'][0]['ops']; d['trace'][0]['ops'] = ops[:1] + [{'op': 'batch', 'ops': ops[1:3]}] + ops[3:]; json.dump(d, open(sys.argv[2],'w'))" \
  "$here/deps-trace.json" "$tmp/batch.json"
"$dirsched" import strace "$here/deps.log" --out "$tmp/batched" --deps "$tmp/batch.json" >/dev/null 2>"$tmp/err" ||
  { echo "FAIL --deps with a batch"; cat "$tmp/err"; fail=1; }
deps_refused invalid "invalid.json: trace\[0\].ops\[0\].args\[0\].buffer" 'ops[0]["args"][0]["buffer"] = "nope"'

# --infer-deps GAP_US on deps.log: r1.t1 starts 50 us after r1.t0 ends, on an idle chip (an edge); the
# group r1.t3 60 us after r1.t1 (an edge) and 260 us after r1.t2 (an edge only within 300 us); r1.t2
# queues behind r1.t0 on chip 0 (its worker was busy: never an edge); r1.t4 and r1.t5 are submitted after
# the tasks before them ended (no edge). Each edge is a 0-byte buffer the producer writes and the consumer
# reads, the report lists it as a guess, and the replay keeps the observed orders (its expect passes).
for gap in 100 300; do
  "$dirsched" import strace "$here/deps.log" --out "$tmp/deps$gap" --infer-deps $gap >"$tmp/out" 2>"$tmp/err" ||
    { echo "FAIL --infer-deps $gap"; cat "$tmp/err"; fail=1; }
done
grep -q "dependencies: 3 inferred within 300 us (guesses" "$tmp/out" || { echo "FAIL the summary counts the edges"; cat "$tmp/out"; fail=1; }
python3 - "$tmp/deps100" "$tmp/deps300" <<'PY' || fail=1
import json, sys
def edges(d):
    r = json.load(open(d + "/import-report.json"))["dependencies"]
    assert r["source"] == "inferred" and all(e["guess"] for e in r["edges"]), r
    return [(e["producer"], e["consumer"], e["gap_us"]) for e in r["edges"]]
ok = True
got = edges(sys.argv[1])
if got != [("r1.t0", "r1.t1", 50.0), ("r1.t1", "r1.t3", 60.0)]:
    print("FAIL --infer-deps 100 edges", got); ok = False
got = edges(sys.argv[2])
if got != [("r1.t0", "r1.t1", 50.0), ("r1.t2", "r1.t3", 260.0), ("r1.t1", "r1.t3", 60.0)]:
    print("FAIL --infer-deps 300 edges", got); ok = False
sc = json.load(open(sys.argv[1] + "/scenario.json"))
ops = {o["task"]: o for o in sc["trace"] if "task" in o}
if sc.get("buffers") != {"dep.r1.t0": {"bytes": 0}, "dep.r1.t1": {"bytes": 0}}:
    print("FAIL buffers", sc.get("buffers")); ok = False
if ops["r1.t1"]["args"] != [{"buffer": "dep.r1.t0", "tag": "INPUT"}, {"buffer": "dep.r1.t1", "tag": "OUTPUT"}]:
    print("FAIL r1.t1 args", ops["r1.t1"]["args"]); ok = False
if ops["r1.t3"]["args_list"] != [[{"buffer": "dep.r1.t1", "tag": "INPUT"}], []]:
    print("FAIL the group reads through member 0", ops["r1.t3"]["args_list"]); ok = False
if ops["r1.t2"]["args"] != []:
    print("FAIL r1.t2 has no edge", ops["r1.t2"]); ok = False
sys.exit(0 if ok else 1)
PY
"$dirsched" check "$tmp/deps100/scenario.json" >"$tmp/out" 2>&1 || { echo "FAIL the replay with inferred deps"; cat "$tmp/out"; fail=1; }
# The edges bring the replay closer to the log: without them r1.t1 and r1.t3 start at their submits,
# about 2 ms early (max dispatch error 2.56 ms); with them 0.21 ms.
"$dirsched" import strace "$here/deps.log" --out "$tmp/deps0" >/dev/null 2>&1
for d in deps0 deps100; do
  "$dirsched" run "$tmp/$d/scenario.json" --out "$tmp/$d-run" --outputs events,summary >/dev/null 2>&1
  "$dirsched" fidelity "$tmp/$d/observed" "$tmp/$d-run" --json "$tmp/$d.fid" >/dev/null 2>&1
done
python3 -c 'import json,sys; a,b=(json.load(open(p))["dispatch_error_s"]["max"] for p in sys.argv[1:3]); sys.exit(0 if b < a / 5 else 1)' \
  "$tmp/deps0.fid" "$tmp/deps100.fid" || { echo "FAIL inferred deps do not bring the replay closer"; fail=1; }

# --allow-truncated imports the cut log; the member has no observed end and its fate is unknown.
"$dirsched" import strace "$tmp/no-complete.log" --out "$tmp/trunc" --allow-truncated >/dev/null 2>"$tmp/err" || { echo "FAIL --allow-truncated"; cat "$tmp/err"; fail=1; }
python3 -c 'import json,sys; r=json.load(open(sys.argv[1]+"/import-report.json")); s=json.load(open(sys.argv[1]+"/observed/summary.json")); sys.exit(0 if [f["task"] for f in r["fates_unknown"]]==["r2.t1"] and s["outcome"]=="TRUNCATED" and s["tasks"]["RUNNING"]==1 else 1)' "$tmp/trunc" \
  || { echo "FAIL truncated member reported"; fail=1; }

# Round trip: a replay written out in the [STRACE] grammar (run --outputs strace), imported again and
# replayed, gives the same dispatches (task, member, worker, in order) at the same times (to 1 ns, the
# grammar's resolution).
"$dirsched" run "$tmp/basic/scenario.json" --out "$tmp/rt1" --outputs events,summary,tasks,strace >/dev/null 2>"$tmp/err" || { echo "FAIL run --outputs strace"; cat "$tmp/err"; fail=1; }
"$dirsched" import strace "$tmp/rt1/strace.log" --out "$tmp/rt-imp" >/dev/null 2>"$tmp/err" || { echo "FAIL import of strace.log"; cat "$tmp/err"; fail=1; }
"$dirsched" run "$tmp/rt-imp/scenario.json" --out "$tmp/rt2" --outputs events,summary,tasks >/dev/null 2>"$tmp/err" || { echo "FAIL replay of the re-import"; cat "$tmp/err"; fail=1; }
"$dirsched" check "$tmp/rt-imp/scenario.json" >"$tmp/out" 2>&1 || { echo "FAIL the re-import's expect (orders, fates) does not hold on its replay"; cat "$tmp/out"; fail=1; }
python3 - "$tmp/rt1" "$tmp/rt2" "$tmp/rt-imp/observed" <<'PY' || fail=1
import json, sys
def disp(d):
    out = []
    for l in open(d + "/events.jsonl"):
        e = json.loads(l)
        if e["event"] in ("dispatch", "member_end"):
            out.append((e["event"], e["task"], e["member"], e.get("worker", e.get("sub_worker")), e["t_s"]))
    return out
a, b, o = disp(sys.argv[1]), disp(sys.argv[2]), disp(sys.argv[3])
ok = len(a) == len(b) == len(o) and len(a) == 12
for x, y, z in zip(a, b, o):
    ok &= x[:4] == y[:4] and abs(x[4] - y[4]) < 1e-9 and abs(x[4] - z[4]) < 1e-9
if not ok:
    print("FAIL round trip:\n", a, "\n", b, "\n", o)
sys.exit(0 if ok else 1)
PY
grep -q "^\[mono_ns=1000000100000\]\[T0x2\]\[TIMING\] submit: \[STRACE\] v=1 pid=1 tid=2 inv=1 hid=a1 depth=0 name=node.submit ts=1000000100000 dur=0 run_id=1 task_slot=0 group_index=0 group_size=1 worker_id=0 role=facade$" "$tmp/rt1/strace.log" \
  || { echo "FAIL strace.log's submit line"; head -3 "$tmp/rt1/strace.log"; fail=1; }
# As the runtime writes them (worker_manager.cpp, orchestrator.cpp at #1933): a worker's first dispatch
# is dispatch_id 1 (0 means none), the scheduler thread's spans say role=scheduler (dispatch) or
# role=worker (activate, complete), the facade's role=facade; its own strace_timing.py names the lanes
# by these roles.
grep -q " name=node.dispatch .* worker_id=0 dispatch_id=1 endpoint_kind=local_mailbox prepare_only=0 role=scheduler$" \
  "$tmp/rt1/strace.log" || { echo "FAIL strace.log: the first dispatch on worker 0 is not dispatch_id 1, role=scheduler"; fail=1; }
grep -q " name=node.complete .* worker_id=0 dispatch_id=1 .* role=worker outcome=0$" "$tmp/rt1/strace.log" \
  || { echo "FAIL strace.log: no complete of dispatch_id 1 with role=worker"; fail=1; }
grep -q " dispatch_id=0 " "$tmp/rt1/strace.log" && { echo "FAIL strace.log: a dispatch_id 0"; fail=1; }
# A scenario's runs are the log's runs: run_id and inv 1, 2 (slots from 0 in each), a graph_build per run
# and a post_fence_retirement at each run's end; the import reads two runs back.
"$dirsched" run "$here/../../scenarios/runs-failure-stays-in-its-run.json" --out "$tmp/runs" --outputs strace --quiet >/dev/null
grep -q " inv=2 hid=[0-9a-f]* depth=0 name=node.submit .* run_id=2 task_slot=0 group_index=0 " "$tmp/runs/strace.log" \
  || { echo "FAIL strace.log of two runs: no submit of run_id 2 slot 0 (inv=2)"; cat "$tmp/runs/strace.log"; fail=1; }
[ "$(grep -c "name=node.post_fence_retirement ts=[0-9]* dur=0 run_id=[12] role=facade$" "$tmp/runs/strace.log")" = 2 ] \
  || { echo "FAIL strace.log of two runs: not one post_fence_retirement per run"; fail=1; }
"$dirsched" import strace "$tmp/runs/strace.log" --out "$tmp/runs-imp" | grep -q "in 2 runs;" \
  || { echo "FAIL the import of a log of two runs does not read two runs"; fail=1; }

# Calibration: --sample-durations leaves the ops without durations (members draw from their callable's
# observed list, seeded); --calibrate-overheads sets dispatch_cost_s to the median dispatch span, and
# dispatch_cost_by_kind_s to each target kind's median when they differ.
"$dirsched" import strace "$here/basic.log" --out "$tmp/cal" --sample-durations --calibrate-overheads >/dev/null 2>"$tmp/err" || { echo "FAIL calibrated import"; cat "$tmp/err"; fail=1; }
"$dirsched" import strace "$here/basic.log" --out "$tmp/samp" --sample-durations >/dev/null 2>"$tmp/err" || { echo "FAIL sampled import"; fail=1; }
python3 - "$tmp/cal/scenario.json" "$tmp/cal/import-report.json" <<'PY' || fail=1
import json, sys
s = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
# dispatch spans 9000, 7000, 6000, 4000, 5000, 5000 ns: median 5500 ns
ok = s["scheduler"]["dispatch_cost_s"] == 5.5e-06 and all("duration_s" not in o for o in s["trace"]) and r["overheads"]["dispatch_spans"] == 6
# Completions followed on their worker (NEXT_LEVEL; the SUB task r1.t2 is alone on its SUB worker): on 0,
# r1.t0 ends at 1002200000 and r1.t1[1] (submitted at 1000300000, so waiting) is dispatched at 1002300000,
# a busy gap of 100000 ns; r1.t1[1] ends at 1005300000 and r2.t1 is submitted only at 1006300000 (a gap
# of 1050000 ns, waiting for work); on 1, r1.t1[0] ends at 1005400000 and r2.t0 is submitted at
# 1006100000 and, staged, starts at its activation at 1006200000 (800000 ns, likewise; a staged member is
# never a busy gap). iteration_cost_s = 100000 - 5500 ns; the median of all three gaps is 800000 ns.
ok = ok and s["scheduler"]["iteration_cost_s"] == 9.45e-05 and r["overheads"]["busy_gaps"] == 1
ok = ok and r["overheads"]["completion_to_next_dispatch_s"]["count"] == 3 and r["overheads"]["completion_to_next_dispatch_s"]["median"] == 0.0008
# Per target kind: the chips' spans 9000, 7000, 6000, 5000, 5000 (median 6000 ns), the SUB task's 4000.
ok = ok and s["scheduler"]["dispatch_cost_by_kind_s"] == {"local_chip": 6e-06, "sub": 4e-06}
ok = ok and r["overheads"]["dispatch_cost_by_kind_s"] == {"local_chip": 6e-06, "sub": 4e-06}
if not ok: print("FAIL calibration", s["scheduler"], r.get("overheads"))
sys.exit(0 if ok else 1)
PY
# A member that is not the first its iteration dispatches: iteration.log (hand-made): t0 on 0 and t1 on 1
# both end at 1001100000; the scheduler dispatches t2 on 1 at 1001150000 (dur 20000), then t3 on 0 at
# 1001200000 (dur 5000). Busy gaps: on 1, 50000 ns; on 0, 100000 ns of which 20000 went to dispatching t2,
# so 80000. Dispatch spans 5000, 5000, 20000, 5000: median 5000 ns. iteration_cost_s = median(50000,
# 80000) - 5000 = 60000 ns (70000 if t2's dispatch were counted as overhead).
"$dirsched" import strace "$here/iteration.log" --out "$tmp/cal-it" --calibrate-overheads >/dev/null 2>"$tmp/err" || { echo "FAIL calibrated import of iteration.log"; cat "$tmp/err"; fail=1; }
python3 - "$tmp/cal-it/scenario.json" <<'PY' || { echo "FAIL calibration: the other dispatches in a gap"; fail=1; }
import json, sys
s = json.load(open(sys.argv[1]))["scheduler"]
if not (s["dispatch_cost_s"] == 5e-06 and abs(s["iteration_cost_s"] - 6e-05) < 1e-15):
    print(s); sys.exit(1)
PY
# With dependencies a task submitted before a completion may still have waited for its producer: the
# completion cost is not calibrated then.
"$dirsched" import strace "$here/deps.log" --out "$tmp/cal-deps" --infer-deps 100 --calibrate-overheads >/dev/null 2>"$tmp/err" || { echo "FAIL calibrated import with deps"; cat "$tmp/err"; fail=1; }
python3 - "$tmp/cal-deps/scenario.json" "$tmp/cal-deps/import-report.json" <<'PY' || { echo "FAIL calibration with deps"; fail=1; }
import json, sys
s = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
sys.exit(0 if "iteration_cost_s" not in s["scheduler"] and r["overheads"]["iteration_method"].startswith("not calibrated with --deps") else 1)
PY
for seed in 3 3 4; do "$dirsched" run "$tmp/samp/scenario.json" --out "$tmp/samp-$seed-$RANDOM" --seed $seed --outputs events >/dev/null 2>&1 || { echo "FAIL sampled replay"; fail=1; }; done
python3 - "$tmp" "$tmp/samp/scenario.json" <<'PY' || fail=1
import json, sys, glob
sc = json.load(open(sys.argv[2]))
lists = {n: c["duration"]["empirical"] for n, c in sc["callables"].items()}
runs = {}
for d in sorted(glob.glob(sys.argv[1] + "/samp-*")):
    start, call, durs = {}, {}, []
    for l in open(d + "/events.jsonl"):
        e = json.loads(l)
        if e["event"] == "submit": call[e["task"]] = e["callable"]
        if e["event"] == "dispatch": start[(e["task"], e["member"])] = e["t_s"]
        if e["event"] == "member_end":
            x = e["t_s"] - start[(e["task"], e["member"])]
            durs.append(x)
            if not any(abs(x - v) < 1e-12 for v in lists[call[e["task"]]]):
                print("FAIL a sampled duration not in its callable's list:", e["task"], x); sys.exit(1)
    runs.setdefault(d.split("/samp-")[1].split("-")[0], []).append(open(d + "/events.jsonl").read())
if runs["3"][0] != runs["3"][1]: print("FAIL one seed, two sampled timelines"); sys.exit(1)
PY
exit $fail
