#!/usr/bin/env bash
# The two policies end to end: --policy overrides scheduler.policy on run, check and sweep; a sweep
# variable can name the policy; summary.json and events.jsonl carry the policy and its stall reports.
set -u
dirsched=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL $*"; fail=1; }
starve=$root/scenarios/group-starvation.json
reserved=$root/scenarios/group-starvation-reserved.json

# check --policy overrides the file: each expect block holds only under its own policy.
"$dirsched" check "$starve" >/dev/null || no "seed scenario under its own policy"
"$dirsched" check --policy head_reservation "$starve" >"$tmp/out" && no "seed expectations held under head_reservation"
grep -q "dispatch_order\[1\]: expected b0@1, got g\[0\]@0" "$tmp/out" || { no "divergence under --policy"; cat "$tmp/out"; }
"$dirsched" check --policy seed "$reserved" >/dev/null && no "head_reservation expectations held under seed"

# run --policy: the seed file replays as the reserved one (same dispatches), and says so.
"$dirsched" run "$starve" --policy head_reservation --out "$tmp/hr" --outputs events,summary >/dev/null || no "run --policy"
"$dirsched" run "$reserved" --out "$tmp/file" --outputs events,summary >/dev/null || no "run reserved"
order() { grep '"event":"dispatch"' "$1/events.jsonl" | sed 's/.*"task":"\([^"]*\)","member":\([0-9]*\),"worker":\([0-9]*\).*/\1[\2]@\3/' | tr '\n' ' '; }
[[ "$(order "$tmp/hr")" == "$(order "$tmp/file")" ]] || no "run --policy head_reservation dispatches differ from the file's policy: $(order "$tmp/hr") vs $(order "$tmp/file")"
grep -q '"policy": "head_reservation"' "$tmp/hr/summary.json" || no "summary names the policy"
grep -q '"overtakes": 0' "$tmp/hr/summary.json" || no "no overtakes under head_reservation"

# Stall reports: group_stall under seed at 0.5 + 5 s; reservation_stall at 1 + 0.5 s in the reserved file.
"$dirsched" run "$starve" --out "$tmp/seed" --outputs events,summary >/dev/null || no "run seed"
grep -q '"t_s":5.5,"event":"group_stall","task":"g","busy":\[0,1\],"waited_s":5}' "$tmp/seed/events.jsonl" ||
  no "group_stall at 5.5: $(grep stall "$tmp/seed/events.jsonl")"
grep -q '"t_s":1.5,"event":"reservation_stall","task":"g","busy":\[0\],"idle_queued":\[1\],"waited_s":1}' \
  "$tmp/file/events.jsonl" || no "reservation_stall at 1.5: $(grep stall "$tmp/file/events.jsonl")"
[[ $(grep -c stall "$tmp/file/events.jsonl") -eq 1 ]] || no "one stall report per episode"

# compare across the two policies: per group launch and wait side by side, and what moved (diff(1) exit codes).
"$dirsched" compare "$tmp/seed" "$tmp/hr" >"$tmp/cmp"
[[ $? -eq 1 ]] || no "compare of two policies exits 1 (different)"
grep -q '^A: .*policy seed' "$tmp/cmp" && grep -q '^B: .*policy head_reservation' "$tmp/cmp" ||
  no "compare names both policies"
grep -Eq '^  g +t=7 +t=2 +6.5 s +1.5 s +-5 s +5 +0$' "$tmp/cmp" || { no "compare per-group row (with overtakes)"; cat "$tmp/cmp"; }
grep -q '^policies: A seed, B head_reservation$' "$tmp/cmp" || no "compare says the policies differ"
grep -Eq '^  group_stall reports +1 +0 ' "$tmp/cmp" || no "compare counts the group_stall reports"
grep -q '^dispatches that moved (worker or time): 7$' "$tmp/cmp" || no "compare counts the moved dispatches"
grep -q '^  g\[0\]: seed g\[0\]@0 t=7, hr g\[0\]@0 t=2$' "$tmp/cmp" || no "compare shows g[0] moving from 7 to 2"
# hr (stall_report_s 5) and file (0.5) dispatch the same, but only file logs a reservation_stall.
"$dirsched" compare "$tmp/hr" "$tmp/file" >"$tmp/cmp"
[[ $? -eq 1 ]] || no "identical dispatches, different stall reports: compare exits 1"
grep -q '^dispatches that moved (worker or time): [1-9]' "$tmp/cmp" && no "identical dispatches: nothing moved"
grep -q '^policies:' "$tmp/cmp" && no "same policy: no policies line"
grep -Eq '^  reservation_stall reports +0 +1 ' "$tmp/cmp" || { no "compare counts the reservation_stall reports"; cat "$tmp/cmp"; }
grep -q '^different: 0 order position(s), 0 moved dispatch(es), metrics differ$' "$tmp/cmp" || no "only the stall count differs"

# A switch flipped over a preset: compare names the effective switches, not the preset alone.
"$dirsched" run "$starve" --policy head_reservation --switch group_reservation=off --out "$tmp/nr" --outputs events,summary >/dev/null ||
  no "run --switch group_reservation=off"
"$dirsched" compare "$tmp/seed" "$tmp/nr" >"$tmp/cmp"
[[ $? -eq 0 ]] || no "head_reservation without group_reservation dispatches as seed: compare exits 0"
grep -q '^B: .*, policy head_reservation with group_reservation=off, seed 0)$' "$tmp/cmp" ||
  { no "compare's header names the switch that differs from the preset"; cat "$tmp/cmp"; }
grep -q '^policies: A seed, B head_reservation with group_reservation=off$' "$tmp/cmp" || no "policies line with the switch"
"$dirsched" run "$starve" --policy current --switch staging=off --switch view_deps=off --out "$tmp/cur" --outputs events,summary >/dev/null ||
  no "run current with two switches off"
"$dirsched" compare "$tmp/cur" "$tmp/hr" >"$tmp/cmp"
grep -q '^A: .*, policy current with staging=off and view_deps=off, seed 0)$' "$tmp/cmp" || { no "two switches, in table order"; cat "$tmp/cmp"; }
grep -q '^B: .*, policy head_reservation, seed 0)$' "$tmp/cmp" || no "a preset as it is: its name alone"

# Bad names stop before anything runs (exit 2, one line, nothing written).
"$dirsched" run "$starve" --policy fifo --out "$tmp/bad" >"$tmp/out" 2>"$tmp/err"
[[ $? -eq 2 && ! -e "$tmp/bad" ]] || no "unknown --policy exits 2 and writes nothing"
grep -q "unknown policy 'fifo' (seed, head_reservation, current, or upto:N with N one of 1565, " "$tmp/err" || no "--policy error names the choices"
sed 's/"head_reservation"/"reserve"/' "$reserved" >"$tmp/typo.json"
"$dirsched" run "$tmp/typo.json" --out "$tmp/bad" >"$tmp/out" 2>"$tmp/err"
[[ $? -eq 2 ]] || no "unknown scheduler.policy exits 2"
grep -q "scheduler.policy: unknown policy 'reserve'" "$tmp/err" || { no "error names scheduler.policy"; cat "$tmp/err"; }

# A sweep over the policy: sweep.csv has a column p with both names.
python3 - "$starve" "$tmp/sweep.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s.pop("expect")
s["scheduler"] = {"policy": "$p"}
s["vars"] = {"p": ["seed", "head_reservation"]}
json.dump(s, open(sys.argv[2], "w"))
PY
"$dirsched" sweep "$tmp/sweep.json" --out "$tmp/sw" -j 1 >"$tmp/out" 2>&1 || { no "policy sweep"; cat "$tmp/out"; }
head -1 "$tmp/sw/sweep.csv" | grep -q '^variant,p,' || no "sweep.csv has a column p: $(head -1 "$tmp/sw/sweep.csv")"
grep -q '^0,seed,true,8,' "$tmp/sw/sweep.csv" && grep -q '^1,head_reservation,true,9,' "$tmp/sw/sweep.csv" ||
  { no "sweep rows per policy"; cat "$tmp/sw/sweep.csv"; }
# --policy on sweep overrides the variable in every variant.
"$dirsched" sweep "$tmp/sweep.json" --out "$tmp/sw2" -j 1 --policy seed >/dev/null 2>&1 || no "sweep --policy"
grep -q '"policy": "seed"' "$tmp/sw2/variant-0001/summary.json" || no "sweep --policy reaches every variant"

[[ $fail -eq 0 ]] && echo "policy CLI: all checks passed"
exit $fail
