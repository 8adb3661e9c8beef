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
# bisect_exits WANT ARGS...: `dirsched bisect ARGS` into $tmp/out, exit WANT. has PATTERN WHAT: a line of
# that report matches PATTERN (grep's basic regex); the report is shown when it does not.
bisect_exits() {
  local want=$1
  shift
  "$dirsched" bisect "$@" >"$tmp/out" 2>&1
  local rc=$?
  [[ $rc == "$want" ]] || { no "bisect ${*##*/}: exit $rc, not $want"; cat "$tmp/out"; }
}
has() { grep -q -- "$1" "$tmp/out" || { no "$2"; cat "$tmp/out"; }; }

# group_reservation (#1565) moves the group ahead of b0: the one change from seed to head_reservation.
bisect_exits 1 "$sc/group-starvation.json" --to head_reservation
has "^first change that alters the run: #1565 (group_reservation)$" "names #1565"
has "dispatch order from position 1: seed b0@1, a1@0, b1@1, a2@0, ...; #1565 g\[0\]@0, g\[1\]@1, a1@0, b0@1, ..." \
  "the first dispatch that differs"
has "^  group_reservation  *differs, as the whole change does$" "the switch alone"

# No group: nothing between seed and head_reservation alters the run (exit 0).
bisect_exits 0 "$sc/fail-fast.json" --to head_reservation
has "^no change from seed to head_reservation (upto:1565) alters the run" "says none"

# view_deps (#1902), the last change: the points between are the same, the unbuilt ones say so.
bisect_exits 1 "$sc/ladder-view-deps.json"
has "^first change that alters the run: #1902 (view_deps)$" "names #1902"
has "dispatch order from position 2: #1624 c@2, d@3; #1902 d@3, c@2" "view_deps order"
has "^  #1583 staging  *same$" "#1583 (staging, built) is run"
has "^  #1541 whole_run_fifo, run_cancellation *same$" "#1541 (both switches built) is run"
grep -q "not built" "$tmp/out" && no "every switch is built: bisect names none as not built"

# staging (#1583): from the runtime just before it, the first change is staging, with its order and makespan.
bisect_exits 1 "$sc/ladder-staging.json" --from upto:1541
has "^first change that alters the run: #1583 (staging)$" "names #1583"
has "^  #1583 staging  *DIFFERS: 3 dispatches, COMPLETED, makespan 4.5 s, expect PASS$" "staging's makespan"
has "dispatch order from position 1: upto:1541 e@1, c@0; #1583 c@0, e@1" "staging's order"

# mpi_group_lane (#1624): the lane delays s3, so x (another worker) is dispatched first.
bisect_exits 1 "$sc/ladder-mpi-group-lane.json" --from upto:1754
has "^first change that alters the run: #1624 (mpi_group_check, mpi_group_lane)$" "names #1624"
has "^  mpi_group_lane  *differs, as the whole change does$" "the lane alone"
has "dispatch order from position 2: upto:1754 s3@10, x@0, s1@10, s2@11; upto:1754 + mpi_group_lane x@0, s3@10, s1@10, s2@11" "the lane's order"

# arg_guard (#1729): final states differ, with the codes.
bisect_exits 1 "$sc/ladder-arg-guard.json"
has "^first change that alters the run: #1729 (arg_guard)$" "names #1729"
has "final states of 2: write_then_read: COMPLETED -> REJECTED (overlapping_writes); sub_on_device: COMPLETED -> REJECTED (sub_child_buffer)" \
  "final states"

# mpi_group_check (#1624): the change's unbuilt switch is listed, not run; the built one alone is.
# Between #1612 and #1729 the loader checks by_policy blocks at exact presets and the top-level block
# elsewhere: the verdict changes with its block there, which is no difference of the run.
bisect_exits 1 "$sc/ladder-mpi-group-check.json"
has "^first change that alters the run: #1624 (mpi_group_check, mpi_group_lane)$" \
  "names #1624, not an expect block change"
has "^  #1729 arg_guard  *same$" "#1729 is the same run"
has "^  mpi_group_lane  *no difference alone$" "mpi_group_lane alone changes nothing there"
has "^  mpi_group_check  *differs, as the whole change does$" "mpi_group_check alone"
has "final states of 1: mixed: COMPLETED -> REJECTED (mpi_group_mixed)" "mixed rejected"

# run_cancellation (#1541, beside whole_run_fifo, both built): each switch alone says which one moved the run.
bisect_exits 1 "$sc/ladder-run-cancellation.json"
has "^first change that alters the run: #1541 (whole_run_fifo, run_cancellation)$" \
  "names #1541"
has "CANCELLED" "the cancelled final states"
has "^  whole_run_fifo  *no difference alone$" "whole_run_fifo alone: no difference"
has "^  run_cancellation  *differs, as the whole change does$" "run_cancellation alone"

# whole_run_fifo (#1541): the promoted run's group launches before its single; the switch alone does it.
bisect_exits 1 "$sc/ladder-whole-run-fifo.json"
has "^first change that alters the run: #1541 (whole_run_fifo, run_cancellation)$" \
  "whole_run_fifo: names #1541"
has "dispatch order from position 1: #1565 s@1, g\[0\]@1, g\[1\]@2, e@2; #1541 g\[0\]@1, g\[1\]@2, s@1, e@2" \
  "whole_run_fifo order"
has "^  whole_run_fifo  *differs, as the whole change does$" "whole_run_fifo alone"
has "^  run_cancellation  *no difference alone$" "run_cancellation alone: no difference"

# edge_triggered_wake (#1612): the SUB single waits for the next wake; #1612 is the first change; busy_poll
# (#1754, built) changes nothing more here (nothing runs when the SUB group goes back to the tail).
bisect_exits 1 "$sc/ladder-edge-triggered-wake.json"
has "^first change that alters the run: #1612 (edge_triggered_wake)$" \
  "edge_triggered_wake: names #1612"
has "dispatch order from position 0: #1583 s@sub0, a@0; #1612 a@0, s@sub0" \
  "edge_triggered_wake order"
has "^  #1754 registration_order_completions, busy_poll, group_barrier *same$" \
  "busy_poll built, same"

# registration_order_completions (#1754, with busy_poll and group_barrier): the one switch of the change
# that moves the consumers on worker 3.
bisect_exits 1 "$sc/ladder-registration-order-completions.json"
has "^first change that alters the run: #1754 (registration_order_completions, busy_poll, group_barrier)$" \
  "names #1754"
has "dispatch order from position 4: #1729 cs@3, cg@3, cp@3; #1754 cp@3, cg@3, cs@3" \
  "registration order"
has "^  registration_order_completions  *differs, as the whole change does$" "the switch alone"
has "^  busy_poll  *no difference alone$" "busy_poll alone: no difference"

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
assert d["points"][3]["tested"] is True and d["points"][2]["tested"] is True and d["points"][8]["differences"], d["points"]
assert d["not_built"] == [] and "whole_run_fifo" not in d["not_built"] and "view_deps" not in d["not_built"], d["not_built"]
PY

# Same scenario, same report (stdout only: an ASan build warns on stderr about SimGrid's contexts).
"$dirsched" bisect "$sc/ladder-view-deps.json" >"$tmp/a" 2>"$tmp/err"
"$dirsched" bisect "$sc/ladder-view-deps.json" >"$tmp/b" 2>"$tmp/err"
cmp -s "$tmp/a" "$tmp/b" || no "two bisects of one file differ"

# Bad points: exit 2, one line.
bisect_exits 2 "$sc/fail-fast.json" --from current --to seed
has "--from must come before --to" "backwards"
bisect_exits 2 "$sc/fail-fast.json" --from head_reservation --to upto:1565
has "--from must come before --to" "same point"
bisect_exits 2 "$sc/fail-fast.json" --to upto:1600
has "names no PR of the ladder" "unknown PR"
bisect_exits 2 "$sc/fail-fast.json" --from newest
has "--from: " "unknown preset"
bisect_exits 2 "$tmp/nope.json"
has "cannot open the file" "missing file"

((fail == 0)) && echo "bisect: all checks passed"
exit $fail
