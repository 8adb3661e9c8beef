#!/usr/bin/env bash
# `dirsched whynot FILE --task NAME --goal GOAL --out DIR` (docs/why-it-waited.md): on the demo and on the
# #1551 trace (scenarios/group-starvation-tp.json) the change found meets the goal and `dirsched run` on
# DIR/scenario.json reproduces whynot.json's `after`; the guided search replays at most half of the
# one-edit candidates there; few candidates are searched exhaustively; nothing met is exit 1 with the
# closest change; bad input is exit 2 naming it, with nothing written; the input's folder is untouched.
set -u
dirsched=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
mkdir "$tmp/in"
cp "$root/scenarios/group-starvation.json" "$root/scenarios/group-starvation-tp.json" \
  "$root/scenarios/sweep-group-worker-set.json" "$tmp/in/"
demo=$tmp/in/group-starvation.json
tp=$tmp/in/group-starvation-tp.json
before=$(ls -lA --time-style=full-iso "$tmp/in")

# whynot DIR EXPECTED_STATUS ARGS...: runs it; then `dirsched run DIR/scenario.json` must give `after`.
whynot() {
  local out=$1 want=$2
  shift 2
  "$dirsched" whynot "$@" --out "$out" >"$out.txt" 2>"$out.err"
  local rc=$?
  [[ $rc == "$want" ]] || { no "whynot $* exited $rc, not $want"; cat "$out.txt" "$out.err"; return; }
  "$dirsched" run "$out/scenario.json" --out "$out.run" --outputs summary,tasks >/dev/null 2>&1 ||
    no "dirsched run $out/scenario.json"
  python3 - "$out" <<'PY' || fail=1
import csv, json, sys
out = sys.argv[1]
w = json.load(open(out + "/whynot.json"))
s = json.load(open(out + ".run/summary.json"))
rows = list(csv.DictReader(open(out + ".run/tasks.csv")))
ok = True
def check(cond, what):
    global ok
    if not cond:
        print("FAIL %s: %s" % (out, what)); ok = False
check(list(w)[:9] == ["task", "goal", "found", "edits", "before", "after", "replays", "candidates",
                      "one_edit_candidates"], "keys %s" % list(w))
for e in w["edits"]:
    check(list(e) == ["kind", "op", "task", "from", "to"], "edit keys %s" % e)
a = w["after"]
task = w["task"]
row = next(r for r in rows if r["job_id"] == task)
check(abs(s["makespan_s"] - a["run"]["makespan_s"]) < 1e-9, "makespan %s, after says %s" % (s["makespan_s"], a["run"]["makespan_s"]))
check(float(row["starting_time"]) == a["task"]["start_s"], "start %s, after says %s" % (row["starting_time"], a["task"]["start_s"]))
check(abs(float(row["starting_time"]) - float(row["ready_time"]) - a["task"]["wait_s"]) < 1e-9, "READY wait")
others = sum(float(r["starting_time"]) - float(r["ready_time"]) for r in rows if r["job_id"] != task and r["starting_time"])
check(abs(others - a["run"]["others_wait_s"]) < 1e-9, "others' waits %s, after says %s" % (others, a["run"]["others_wait_s"]))
g = [x for x in s["groups"] if x["task"] == task]
if g:
    check(g[0]["overtakes"] == a["task"]["overtakes"], "overtakes %s, after says %s" % (g[0]["overtakes"], a["task"]["overtakes"]))
check(a["task"]["meets_goal"] == w["found"], "found %s but meets_goal %s" % (w["found"], a["task"]["meets_goal"]))
check(w["replays"] <= w["candidates"], "replays %d of %d candidates" % (w["replays"], w["candidates"]))
sys.exit(0 if ok else 1)
PY
}

# The demo: g overtaken by 5 singles; its own set moved to idle chips meets the goal in one edit.
whynot "$tmp/demo" 0 "$demo" --task g --goal no-overtakes
grep -qx '  placement of g (trace\[3\]): workers \[0,1\] -> \[1,2\]' "$tmp/demo.txt" || { no "demo's edit"; cat "$tmp/demo.txt"; }
"$dirsched" whynot "$demo" --task g --goal no-overtakes --out "$tmp/demo-again" --json >"$tmp/demo.json" || no "--json"
cmp -s "$tmp/demo.json" "$tmp/demo/whynot.json" || no "--json prints something else than whynot.json"
cmp -s "$tmp/demo-again/whynot.json" "$tmp/demo/whynot.json" && cmp -s "$tmp/demo-again/scenario.json" "$tmp/demo/scenario.json" ||
  no "the same question twice gave different files"

# #1551: a TP-4 group behind a dozen singles. Guided: at most half of the one-edit candidates replayed.
whynot "$tmp/tp" 0 "$tp" --task tp --goal no-overtakes
python3 - "$tmp/tp/whynot.json" <<'PY' || fail=1
import json, sys
w = json.load(open(sys.argv[1]))
ok = w["found"] and w["method"].startswith("guided") and 2 * w["replays"] <= w["one_edit_candidates"]
print("" if ok else "FAIL tp: found %s, method %s, %d replays of %d one-edit candidates"
      % (w["found"], w["method"][:40], w["replays"], w["one_edit_candidates"]), end="")
sys.exit(0 if ok else 1)
PY
# The same under current (reserving): no overtakes already; a READY wait of 0.5 s needs the spare chip.
whynot "$tmp/tp-current" 0 "$tp" --task tp --goal 'wait<=0.5' --policy current
grep -q '"policy": "current"' "$tmp/tp-current/scenario.json" || no "scenario.json does not name the version asked of"
# A version edit is written into scenario.json's scheduler block.
whynot "$tmp/tp-version" 0 "$tp" --task tp --goal no-overtakes --edits version
grep -q '"to": "head_reservation"' "$tmp/tp-version/whynot.json" || { no "version edit"; cat "$tmp/tp-version.txt"; }

# Sweep variables: the values the run takes are written in, so the group's own "$group_workers" is moved too.
whynot "$tmp/vars" 0 "$tmp/in/sweep-group-worker-set.json" --task g --goal no-overtakes
grep -qF 'placement of g (trace[4]): workers' "$tmp/vars.txt" || { no "vars: the group's own set was not tried"; cat "$tmp/vars.txt"; }
grep -q '"vars"' "$tmp/vars/scenario.json" && no "vars: scenario.json still declares vars"

# Few candidates: exhaustive. Nothing within K edits meets the goal: exit 1, found false, the closest change.
whynot "$tmp/order" 1 "$demo" --task g --goal 'start<=0.1' --edits order
grep -q '"method": "exhaustive' "$tmp/order/whynot.json" || no "few candidates were not searched exhaustively"
grep -q '"found": false' "$tmp/order/whynot.json" || no "found is not false"
whynot "$tmp/two" 1 "$demo" --task g --goal 'start<=0.1' --edits placement,order --max-edits 2

# Two edits: the TP trace without the spare chip; no one edit gets tp a READY wait of 6 s, two do.
python3 - "$tp" "$tmp/in/four-chips.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["workers"]["next_level"] = d["workers"]["next_level"][:4]
json.dump(d, open(sys.argv[2], "w"), indent=2)
PY
before=$(ls -lA --time-style=full-iso "$tmp/in")
whynot "$tmp/k1" 1 "$tmp/in/four-chips.json" --task tp --goal 'wait<=6'
whynot "$tmp/k2" 0 "$tmp/in/four-chips.json" --task tp --goal 'wait<=6' --max-edits 2
[[ $(grep -c '^  placement of' "$tmp/k2.txt") == 2 ]] || { no "two edits expected"; cat "$tmp/k2.txt"; }

# Bad input: exit 2, a message naming it, nothing written.
bad() {  # WHAT MESSAGE ARGS...
  local what=$1 msg=$2
  shift 2
  "$dirsched" whynot "$@" --out "$tmp/bad" >"$tmp/bad.out" 2>"$tmp/bad.err"
  local rc=$?
  [[ $rc == 2 ]] || no "$what: exit $rc, not 2"
  grep -qF -- "$msg" "$tmp/bad.err" || { no "$what: no '$msg' in:"; cat "$tmp/bad.err"; }
  [[ ! -e $tmp/bad ]] || no "$what: wrote $tmp/bad"
}
bad "unknown task" "--task \"nope\": no submit op of the trace names it" "$demo" --task nope --goal no-overtakes
bad "bad goal" "--goal \"wait<3\": expected no-overtakes, wait<=SECONDS or start<=SECONDS" "$demo" --task g --goal 'wait<3'
bad "bad seconds" "--goal \"start<=soon\": expected a number of seconds >= 0" "$demo" --task g --goal 'start<=soon'
bad "unknown edit kind" "--edits \"placement,swap\": unknown edit kind \"swap\"" "$demo" --task g --goal no-overtakes --edits placement,swap
bad "single overtaken" "--goal no-overtakes: a1 is a single" "$demo" --task a1 --goal no-overtakes
bad "missing file" "nope.json" "$tmp/in/nope.json" --task g --goal no-overtakes
# --out: never the input's folder, never a folder dirsched did not write, never a file it did not write.
"$dirsched" whynot "$demo" --task g --goal no-overtakes --out "$tmp/in" >/dev/null 2>"$tmp/err"
[[ $? == 2 ]] && grep -qF "is not a dirsched whynot folder" "$tmp/err" || { no "--out the input's folder"; cat "$tmp/err"; }
touch "$tmp/demo/notes.txt"
"$dirsched" whynot "$demo" --task g --goal no-overtakes --out "$tmp/demo" >/dev/null 2>"$tmp/err"
[[ $? == 2 ]] && grep -qF "notes.txt" "$tmp/err" || { no "--out holding a file of the user's"; cat "$tmp/err"; }
[[ -e $tmp/demo/notes.txt ]] || no "the user's file went"
[[ $(ls -lA --time-style=full-iso "$tmp/in") == "$before" ]] || no "the input folder changed"
exit $fail
