#!/usr/bin/env bash
# Wait attribution (docs/why-it-waited.md): hand-worked causes, blocking chains and critical
# paths, then every shipped scenario and random DAGs: each started task's causes add up to its wait.
# Exactness is checked inside the run on exact sums (summary.json wait_check: exact == started); the
# tasks.csv columns are rounded to 1e-12 s like every time there, so their sum is compared to
# waiting_time within 1e-9 s.
# Usage: waits_test.sh DIRSCHED REPO
set -u
dirsched=$1
repo=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {  # folder: wait_check and the tasks.csv sums
  python3 - "$1" <<'PY' || return 1
import csv, json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
rows = list(csv.DictReader(open(d + "/tasks.csv")))
started = [r for r in rows if r["starting_time"] != ""]
wc = s["wait_check"]
ok = wc["started"] == wc["exact"] == len(started)
if not ok:
    print("wait_check", wc, "rows started", len(started))
causes = [c for c in rows[0].keys() if c.startswith("wait_")] if rows else []
for r in started:
    total = sum(float(r[c]) for c in causes)
    if abs(total - float(r["waiting_time"])) > 1e-9:
        print("row", r["job_id"], "causes add to", total, "not", r["waiting_time"]); ok = False
tot = {c: 0.0 for c in causes}
for r in started:
    for c in causes: tot[c] += float(r[c])
for c in causes:
    if abs(tot[c] - s["wait_causes"][c[len("wait_"):]]) > 1e-6 * max(1, len(started)):
        print("total", c, tot[c], s["wait_causes"][c[len("wait_"):]]); ok = False
sys.exit(0 if ok else 1)
PY
}

# 1. Hand-worked (the values are derived in docs/outputs.md).
for name in seed-chain reservation; do
  "$dirsched" run "$here/waits/$name.json" --out "$tmp/$name" --outputs summary,tasks >/dev/null ||
    { echo "FAIL $name: run exited $?"; fail=1; continue; }
  cut -d, -f1,12- "$tmp/$name/tasks.csv" | diff "$here/waits/$name.expected.csv" - ||
    { echo "FAIL $name: wait columns differ from the hand-worked ones"; fail=1; }
  python3 - "$tmp/$name/summary.json" "$here/waits/$name.expected.json" <<'PY' || { echo "FAIL $name: chains or critical path"; fail=1; }
import json, sys
s = json.load(open(sys.argv[1])); e = json.load(open(sys.argv[2]))
got = {"blocked_by": {g["task"]: g["blocked_by"] for g in s["groups"]}, "critical_path": s["critical_path"],
       "ahead": {w["task"]: w.get("ahead") for w in s["longest_waits"]["single"]}}
for k in e:
    if got[k] != e[k]:
        print(k, "got", json.dumps(got[k]), "expected", json.dumps(e[k])); sys.exit(1)
PY
  check "$tmp/$name" || { echo "FAIL $name: causes do not add up"; fail=1; }
done

# 1b. A READY group cancelled before its launch (run_cancellation): g (targets 0 and 2) was the head from
# READY at 0 until r1 raised at 0.5, with a running on 0 all that time: its chain is that one link.
"$dirsched" run "$repo/scenarios/ladder-run-cancellation.json" --out "$tmp/cancel" --outputs summary,tasks >/dev/null 2>&1
python3 - "$tmp/cancel/summary.json" <<'PY' || { echo "FAIL cancelled group: blocking chain"; fail=1; }
import json, sys
g = {x["task"]: x for x in json.load(open(sys.argv[1]))["groups"]}["g"]
want = [{"from_s": 0.0, "to_s": 0.5, "worker": 0, "task": "a"}]
if g.get("launched_s") is not None or g["blocked_by"] != want:
    print("got", json.dumps(g)); sys.exit(1)
PY

# 1b'. The head cancelled: g2 waited behind g (the head, cancelled at 0.5), not behind g0 (the last group
# that launched, at 0); g2's chain is that one link, g's is a on worker 0.
"$dirsched" run "$here/waits/cancelled-head.json" --out "$tmp/cancelled-head" --outputs summary >/dev/null 2>&1
python3 - "$tmp/cancelled-head/summary.json" <<'PY' || { echo "FAIL cancelled head: the group ahead of g2"; fail=1; }
import json, sys
g = {x["task"]: x for x in json.load(open(sys.argv[1]))["groups"]}
want = {"g": [{"from_s": 0.0, "to_s": 0.5, "worker": 0, "task": "a"}],
        "g2": [{"from_s": 0.0, "to_s": 0.5, "worker": None, "task": "g"}]}
for name, chain in want.items():
    if g[name]["blocked_by"] != chain:
        print(name, "got", json.dumps(g[name]["blocked_by"])); sys.exit(1)
PY

# 1d. Memory: every task of a drained trace of 0 s tasks ends in one instant (t = 0). A task starting
# later in that instant can name only a few of the ended as its predecessor, so the critical-path nodes
# held stay bounded (about 4,096) instead of one per task; the outputs are those of the unpruned
# attribution (checked against the build before on 300,000 tasks: byte-identical).
python3 - "$tmp/zero.json" <<'PY'
import json, sys
trace = []
for i in range(20000):
    trace.append({"op": "submit_next_level", "task": "t%d" % i, "callable": "k", "worker": i % 16})
    if i % 1000 == 999:
        trace.append({"op": "drain"})
json.dump({"name": "zero", "workers": {"next_level": [{"id": i, "kind": "local_chip"} for i in range(16)], "sub": 1},
           "callables": {"k": {"namespace": "LOCAL_CHIP", "duration_s": 0}}, "trace": trace}, open(sys.argv[1], "w"))
PY
"$dirsched" run "$tmp/zero.json" --out "$tmp/zero" --engine event --outputs summary,metrics --quiet >/dev/null 2>&1
python3 - "$tmp/zero/metrics.json" "$tmp/zero/summary.json" <<'PY' || { echo "FAIL one instant: wait nodes not bounded"; fail=1; }
import json, sys
m, s = (json.load(open(p)) for p in sys.argv[1:3])
if not 0 < m["peak_wait_nodes"] <= 8192 or s["wait_check"] != {"started": 20000, "exact": 20000}:
    print("peak_wait_nodes", m["peak_wait_nodes"], "wait_check", s["wait_check"]); sys.exit(1)
PY

# 1d'. A READY task names its producer's node even when it starts thousands of ends later in the same
# instant. p (worker 1), b (worker 0) and q (worker 2) run from 0 to 0.5. At 0.5 p's completion makes c
# READY behind 6,000 0 s singles queued on worker 0 after b, which all end at 0.5 (enough ends to prune);
# q's completion makes g READY on worker 1, where it runs at once for 0 s, naming q: worker 1's last end
# is then g, so only c's ready_node still names p when c starts at 0.5. c runs 1 s and ends last: the
# critical path is p, then c after p.
python3 - "$tmp/ready-node.json" <<'PY'
import json, sys
trace = [{"op": "submit_next_level", "task": "b", "callable": "half", "worker": 0},
         {"op": "submit_next_level", "task": "p", "callable": "half", "worker": 1,
          "args": [{"buffer": "x", "tag": "OUTPUT"}]},
         {"op": "submit_next_level", "task": "q", "callable": "half", "worker": 2,
          "args": [{"buffer": "y", "tag": "OUTPUT"}]}]
trace += [{"op": "submit_next_level", "task": "f%d" % i, "callable": "zero", "worker": 0} for i in range(6000)]
trace += [{"op": "submit_next_level", "task": "g", "callable": "zero", "worker": 1,
           "args": [{"buffer": "y", "tag": "INPUT"}]},
          {"op": "submit_next_level", "task": "c", "callable": "one", "worker": 0,
           "args": [{"buffer": "x", "tag": "INPUT"}]}, {"op": "drain"}]
json.dump({"name": "ready-node", "workers": {"next_level": [{"id": i, "kind": "local_chip"} for i in range(16)], "sub": 1},
           "callables": {"zero": {"namespace": "LOCAL_CHIP", "duration_s": 0},
                         "half": {"namespace": "LOCAL_CHIP", "duration_s": 0.5},
                         "one": {"namespace": "LOCAL_CHIP", "duration_s": 1}},
           "buffers": {"x": {"bytes": 0}, "y": {"bytes": 0}}, "trace": trace}, open(sys.argv[1], "w"))
PY
"$dirsched" run "$tmp/ready-node.json" --out "$tmp/ready-node" --engine event --outputs summary --quiet >/dev/null 2>&1
python3 - "$tmp/ready-node/summary.json" <<'PY' || { echo "FAIL ready node: the producer named after a pruning"; fail=1; }
import json, sys
cp = [(s["task"], s["start_s"], s["end_s"], s["why"], s.get("after")) for s in json.load(open(sys.argv[1]))["critical_path"]]
if cp != [("p", 0.0, 0.5, "submitted", None), ("c", 0.5, 1.5, "producer", "p")]:
    print("got", len(cp), "steps:", cp[:2], "...", cp[-2:]); sys.exit(1)
PY

# 1e. The critical path's names outlive their tasks (the node table keeps them in an arena of text that
# is compacted as nodes are freed): worker 0 runs a chain of 200 one-second singles, all submitted at
# t = 0 with long names, the critical path; meanwhile 20,000 short tasks on workers 1-15, one every 5 ms,
# end and free their nodes (4 MB of names), so the text is compacted many times while the chain's nodes
# are held. Every step must name its own task, in order, with its start and end.
python3 - "$tmp/names.json" <<'PY'
import json, sys
pad = "-a-name-long-enough-to-fill-the-critical-path-text-quickly-"
trace = [{"op": "submit_next_level", "task": "chain%s%d" % (pad, i), "callable": "slow", "worker": 0}
         for i in range(200)]
trace += [{"op": "submit_next_level", "at_s": 0.005 * i, "task": "short%s%d" % (pad, i), "callable": "fast",
           "worker": 1 + i % 15} for i in range(20000)]
json.dump({"name": "names", "workers": {"next_level": [{"id": i, "kind": "local_chip"} for i in range(16)], "sub": 1},
           "callables": {"slow": {"namespace": "LOCAL_CHIP", "duration_s": 1},
                         "fast": {"namespace": "LOCAL_CHIP", "duration_s": 0.001}},
           "trace": trace + [{"op": "drain"}]}, open(sys.argv[1], "w"))
PY
"$dirsched" run "$tmp/names.json" --out "$tmp/names" --engine event --outputs summary --quiet >/dev/null 2>&1
python3 - "$tmp/names/summary.json" <<'PY' || { echo "FAIL names: the critical path after the text's compaction"; fail=1; }
import json, sys
pad = "-a-name-long-enough-to-fill-the-critical-path-text-quickly-"
cp = json.load(open(sys.argv[1]))["critical_path"]
bad = len(cp) != 200
for i, step in enumerate(cp):
    want = {"task": "chain%s%d" % (pad, i), "start_s": float(i), "end_s": float(i + 1)}
    if i: want["after"] = "chain%s%d" % (pad, i - 1)
    if any(step.get(k) != v for k, v in want.items()) or (i == 0 and step.get("after")):
        bad = True
if bad:
    print("got", len(cp), "steps:", json.dumps(cp[:3]), "...", json.dumps(cp[-2:])); sys.exit(1)
PY

# 1c. Which tasks ran ahead of a long-waiting single: t10, the last of eleven 1 s singles on one worker,
# waited behind the ten before it (t0 running when it turned READY counts); the summary names the last
# eight of them, oldest first, and counts all ten.
python3 - "$tmp/ahead.json" <<'PY'
import json, sys
trace = [{"op": "submit_next_level", "task": "t%d" % i, "callable": "k", "worker": 0} for i in range(11)]
json.dump({"name": "ahead", "workers": {"next_level": [{"id": 0, "kind": "local_chip"}], "sub": 1},
           "callables": {"k": {"namespace": "LOCAL_CHIP", "duration_s": 1}}, "buffers": {},
           "trace": trace + [{"op": "drain"}]}, open(sys.argv[1], "w"))
PY
"$dirsched" run "$tmp/ahead.json" --out "$tmp/ahead" --outputs summary >/dev/null 2>&1
python3 - "$tmp/ahead/summary.json" <<'PY' || { echo "FAIL ahead: the tasks ahead of t10"; fail=1; }
import json, sys
w = {x["task"]: x for x in json.load(open(sys.argv[1]))["longest_waits"]["single"]}["t10"]
if w["behind"] != 10 or w["ahead"] != ["t%d" % i for i in range(2, 10)]:
    print("got", json.dumps(w)); sys.exit(1)
PY

# 2. Every shipped scenario that runs, and random DAGs.
n=0
for f in "$repo"/scenarios/*.json; do
  name=$(basename "$f" .json)
  "$dirsched" run "$f" --out "$tmp/s-$name" --outputs summary,tasks >/dev/null 2>&1
  [ -f "$tmp/s-$name/summary.json" ] || continue  # a scenario whose run is refused writes nothing
  n=$((n + 1))
  check "$tmp/s-$name" || { echo "FAIL scenarios/$name: causes do not add up"; fail=1; }
done
[ "$n" -ge 40 ] || { echo "FAIL only $n shipped scenarios ran"; fail=1; }
for seed in 1 2 3; do
  "$dirsched" gen random --seed "$seed" --tasks 300 --workers 6 --edges 2 --group-fraction 0.3 >"$tmp/r.json"
  "$dirsched" run "$tmp/r.json" --out "$tmp/r$seed" --outputs summary,tasks >/dev/null ||
    { echo "FAIL random seed $seed: run exited $?"; fail=1; continue; }
  check "$tmp/r$seed" || { echo "FAIL random seed $seed: causes do not add up"; fail=1; }
done
[ "$fail" = 0 ] && echo "wait causes: hand-worked cases match, $n scenarios and 3 random DAGs add up"
exit "$fail"
