#!/usr/bin/env bash
# explore agrees with run on the shipped scenarios that mark members `fail: true`: the run's end state
# (tasks.csv final_state of every task) is one of explore's terminal outcomes, without and with
# --failures, and no outcome completes a task the file makes fail. explore does not model faults, so a
# file's faults are dropped for the run it is compared with.
set -u
dirsched=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL $*"; fail=1; }
checked=0
for f in $(grep -l '"fail"' "$root"/scenarios/*.json); do
  name=$(basename "$f" .json)
  python3 - "$f" "$tmp/$name.json" <<'PY' || { no "$name: cannot copy"; continue; }
import json, sys
doc = json.load(open(sys.argv[1]))
doc.pop("faults", None)
doc.pop("expect", None)
json.dump(doc, open(sys.argv[2], "w"))
PY
  cp -r "$root/platforms" "$tmp/" 2>/dev/null
  # Exit 1 is a run whose rejected submits no expect block names (the expect block is dropped here).
  rc=0; "$dirsched" run "$tmp/$name.json" --out "$tmp/$name.run" --outputs tasks >/dev/null 2>"$tmp/err" || rc=$?
  [[ $rc -le 1 ]] || { no "$name: run: $(cat "$tmp/err")"; continue; }
  for mode in "" --failures; do
    "$dirsched" explore "$f" $mode >"$tmp/$name.explore" 2>"$tmp/err"
    [[ $? -eq 0 ]] || { no "$name: explore $mode: $(cat "$tmp/err")"; continue; }
    python3 - "$f" "$tmp/$name.run/tasks.csv" "$tmp/$name.explore" "$mode" <<'PY' || fail=1
import csv, json, sys
scenario, tasks, explored, mode = sys.argv[1:]
run = {row["job_id"]: row["final_state"] for row in csv.DictReader(open(tasks))}
r = json.load(open(explored))
outcomes = r["outcomes"]
where = f"{scenario} explore {mode}".strip()
ok = True
if r["stopped_early"]:
    print(f"FAIL {where}: stopped early"); ok = False
# explore lists at most 20 outcomes: the run's must be among them when they are all listed.
if r["terminal_outcomes"] <= len(outcomes) and run not in outcomes:
    print(f"FAIL {where}: the run's end {run} is none of {outcomes}"); ok = False
if not mode and r["terminal_outcomes"] > len(outcomes):
    print(f"FAIL {where}: {r['terminal_outcomes']} outcomes, too many to check"); ok = False
pinned = set()
for op in json.load(open(scenario))["trace"]:
    for o in op.get("ops", [op]):
        f = o.get("fail", False)
        if f is True or (isinstance(f, list) and any(f)):
            pinned.add(o["task"])
for out in outcomes:
    for t in pinned:
        if out.get(t) == "COMPLETED":
            print(f"FAIL {where}: {t} is marked fail but COMPLETED in {out}"); ok = False
sys.exit(0 if ok else 1)
PY
  done
  checked=$((checked + 1))
done
[[ $checked -ge 5 ]] || no "only $checked scenarios with fail flags checked"
exit $fail
