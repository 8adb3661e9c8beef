#!/usr/bin/env bash
# dirsched bisect (docs/howto-regress-a-runtime-change.md): the ladder's points in merge order, the first
# change after which the dispatch order, a final state, an outcome or the expect verdict differs, each
# switch of it alone, the switches not built yet named and never blamed, a verdict that only changes
# with its expect block not counted, --json, and bad points refused (exit 2).
set -u
dirsched=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL $*"; fail=1; }
sc=$root/scenarios

# group_reservation (#1565) moves the group ahead of b0: the one change from seed to head_reservation.
"$dirsched" bisect "$sc/group-starvation.json" --to head_reservation >"$tmp/out" 2>&1
[[ $? == 1 ]] || no "a change that alters the run: exit 1"
grep -q "^first change that alters the run: #1565 (group_reservation)$" "$tmp/out" || { no "names #1565"; cat "$tmp/out"; }
grep -q "dispatch order from position 1: seed b0@1, a1@0, b1@1, a2@0, ...; #1565 g\[0\]@0, g\[1\]@1, a1@0, b0@1, ..." \
  "$tmp/out" || { no "the first dispatch that differs"; cat "$tmp/out"; }
grep -q "^  group_reservation  *differs, as the whole change does$" "$tmp/out" || no "the switch alone"

# No group: nothing between seed and head_reservation alters the run (exit 0).
"$dirsched" bisect "$sc/fail-fast.json" --to head_reservation >"$tmp/out" 2>&1 || no "no change: exit 0"
grep -q "^no change from seed to head_reservation (upto:1565) alters the run" "$tmp/out" || { no "says none"; cat "$tmp/out"; }

# view_deps (#1902), the last change: the points between are the same, the unbuilt ones say so.
"$dirsched" bisect "$sc/ladder-view-deps.json" >"$tmp/out" 2>&1
[[ $? == 1 ]] || no "view_deps: exit 1"
grep -q "^first change that alters the run: #1902 (view_deps)$" "$tmp/out" || { no "names #1902"; cat "$tmp/out"; }
grep -q "dispatch order from position 2: #1624 c@2, d@3; #1902 d@3, c@2" "$tmp/out" || { no "view_deps order"; cat "$tmp/out"; }
grep -q "^  #1583 staging\* *not built: runs as the point before$" "$tmp/out" ||
  { no "a change made only of unbuilt switches"; cat "$tmp/out"; }
grep -q "^  #1541 whole_run_fifo, run_cancellation *same$" "$tmp/out" || { no "#1541 (both switches built) is run"; cat "$tmp/out"; }
grep -q "^\* not built in this testbed, so off at every point" "$tmp/out" || no "the unbuilt switches named"

# arg_guard (#1729): final states differ, with the codes.
"$dirsched" bisect "$sc/ladder-arg-guard.json" >"$tmp/out" 2>&1
grep -q "^first change that alters the run: #1729 (arg_guard)$" "$tmp/out" || { no "names #1729"; cat "$tmp/out"; }
grep -q "final states of 2: write_then_read: COMPLETED -> REJECTED (overlapping_writes); sub_on_device: COMPLETED -> REJECTED (sub_child_buffer)" \
  "$tmp/out" || { no "final states"; cat "$tmp/out"; }

# mpi_group_check (#1624): the change's unbuilt switch is listed, not run; the built one alone is.
# Between #1612 and #1729 the loader checks by_policy blocks at exact presets and the top-level block
# elsewhere: the verdict changes with its block there, which is no difference of the run.
"$dirsched" bisect "$sc/ladder-mpi-group-check.json" >"$tmp/out" 2>&1
grep -q "^first change that alters the run: #1624 (mpi_group_check, mpi_group_lane\*)$" "$tmp/out" ||
  { no "names #1624, not an expect block change"; cat "$tmp/out"; }
grep -q "^  #1729 arg_guard  *same$" "$tmp/out" || { no "#1729 is the same run"; cat "$tmp/out"; }
grep -q "^  mpi_group_lane  *not built$" "$tmp/out" || no "mpi_group_lane not built"
grep -q "^  mpi_group_check  *differs, as the whole change does$" "$tmp/out" || no "mpi_group_check alone"
grep -q "final states of 1: mixed: COMPLETED -> REJECTED (mpi_group_mixed)" "$tmp/out" || no "mixed rejected"

# run_cancellation (#1541, beside whole_run_fifo, both built): each switch alone says which one moved the run.
"$dirsched" bisect "$sc/ladder-run-cancellation.json" >"$tmp/out" 2>&1
grep -q "^first change that alters the run: #1541 (whole_run_fifo, run_cancellation)$" "$tmp/out" ||
  { no "names #1541"; cat "$tmp/out"; }
grep -q "CANCELLED" "$tmp/out" || { no "the cancelled final states"; cat "$tmp/out"; }
grep -q "^  whole_run_fifo  *no difference alone$" "$tmp/out" || { no "whole_run_fifo alone: no difference"; cat "$tmp/out"; }
grep -q "^  run_cancellation  *differs, as the whole change does$" "$tmp/out" || no "run_cancellation alone"

# whole_run_fifo (#1541): the promoted run's group launches before its single; the switch alone does it.
"$dirsched" bisect "$sc/ladder-whole-run-fifo.json" >"$tmp/out" 2>&1
[[ $? == 1 ]] || no "whole_run_fifo: exit 1"
grep -q "^first change that alters the run: #1541 (whole_run_fifo, run_cancellation)$" "$tmp/out" ||
  { no "whole_run_fifo: names #1541"; cat "$tmp/out"; }
grep -q "dispatch order from position 1: #1565 s@1, g\[0\]@1, g\[1\]@2, e@2; #1541 g\[0\]@1, g\[1\]@2, s@1, e@2" "$tmp/out" ||
  { no "whole_run_fifo order"; cat "$tmp/out"; }
grep -q "^  whole_run_fifo  *differs, as the whole change does$" "$tmp/out" || { no "whole_run_fifo alone"; cat "$tmp/out"; }
grep -q "^  run_cancellation  *no difference alone$" "$tmp/out" || no "run_cancellation alone: no difference"

# edge_triggered_wake (#1612): the SUB single waits for the next wake; #1612 is the first change; busy_poll
# (#1754, built) changes nothing more here (nothing runs when the SUB group goes back to the tail).
"$dirsched" bisect "$sc/ladder-edge-triggered-wake.json" >"$tmp/out" 2>&1
[[ $? == 1 ]] || no "edge_triggered_wake: exit 1"
grep -q "^first change that alters the run: #1612 (edge_triggered_wake)$" "$tmp/out" ||
  { no "edge_triggered_wake: names #1612"; cat "$tmp/out"; }
grep -q "dispatch order from position 0: #1583 s@sub0, a@0; #1612 a@0, s@sub0" "$tmp/out" ||
  { no "edge_triggered_wake order"; cat "$tmp/out"; }
grep -qE "^  #1754 registration_order_completions, busy_poll, group_barrier +same$" "$tmp/out" ||
  { no "busy_poll built, same"; cat "$tmp/out"; }

# registration_order_completions (#1754, with busy_poll and group_barrier): the one switch of the change
# that moves the consumers on worker 3.
"$dirsched" bisect "$sc/ladder-registration-order-completions.json" >"$tmp/out" 2>&1
[[ $? == 1 ]] || no "registration_order_completions: exit 1"
grep -q "^first change that alters the run: #1754 (registration_order_completions, busy_poll, group_barrier)$" "$tmp/out" ||
  { no "names #1754"; cat "$tmp/out"; }
grep -q "dispatch order from position 4: #1729 cs@3, cg@3, cp@3; #1754 cp@3, cg@3, cs@3" "$tmp/out" ||
  { no "registration order"; cat "$tmp/out"; }
grep -q "^  registration_order_completions  *differs, as the whole change does$" "$tmp/out" || { no "the switch alone"; cat "$tmp/out"; }
grep -q "^  busy_poll  *no difference alone$" "$tmp/out" || { no "busy_poll alone: no difference"; cat "$tmp/out"; }

# --json: the same report as data.
"$dirsched" bisect "$sc/ladder-view-deps.json" --json >"$tmp/j" 2>"$tmp/err"
[[ $? == 1 ]] || no "--json: exit 1"
python3 - "$tmp/j" <<'PY' || no "--json report"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["from"] == "seed" and d["to"] == "upto:1902", d
assert [p["point"] for p in d["points"]] == ["seed", "upto:1565", "upto:1541", "upto:1583", "upto:1612",
                                            "upto:1729", "upto:1754", "upto:1624", "upto:1902"], d["points"]
assert d["first_change"]["pr"] == 1902 and d["first_change"]["alone"][0]["switch"] == "view_deps", d["first_change"]
assert d["points"][3]["tested"] is False and d["points"][2]["tested"] is True and d["points"][8]["differences"], d["points"]
assert "staging" in d["not_built"] and "whole_run_fifo" not in d["not_built"] and "view_deps" not in d["not_built"], d["not_built"]
PY

# Same scenario, same report (stdout only: an ASan build warns on stderr about SimGrid's contexts).
"$dirsched" bisect "$sc/ladder-view-deps.json" >"$tmp/a" 2>"$tmp/err"
"$dirsched" bisect "$sc/ladder-view-deps.json" >"$tmp/b" 2>"$tmp/err"
cmp -s "$tmp/a" "$tmp/b" || no "two bisects of one file differ"

# Bad points: exit 2, one line.
expect2() {
  local what=$1 pattern=$2; shift 2
  "$dirsched" bisect "$@" >"$tmp/out" 2>&1
  local rc=$?
  [[ $rc == 2 ]] || no "$what: exit $rc, not 2"
  grep -q -- "$pattern" "$tmp/out" || { no "$what: message"; cat "$tmp/out"; }
}
expect2 "backwards" "--from must come before --to" "$sc/fail-fast.json" --from current --to seed
expect2 "same point" "--from must come before --to" "$sc/fail-fast.json" --from head_reservation --to upto:1565
expect2 "unknown PR" "names no PR of the ladder" "$sc/fail-fast.json" --to upto:1600
expect2 "unknown preset" "--from: " "$sc/fail-fast.json" --from newest
expect2 "missing file" "cannot open the file" "$tmp/nope.json"

((fail == 0)) && echo "bisect: all checks passed"
exit $fail
