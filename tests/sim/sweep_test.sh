#!/usr/bin/env bash
# sweep ranks the worker-set candidates of scenarios/sweep-group-worker-set.json as expected; --plan
# and --collect reproduce it; compare names the first divergence.
set -u
dirsched=$1
root=$2
scenario=$root/scenarios/sweep-group-worker-set.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$dirsched" sweep "$scenario" --out "$tmp/sweep" -j 2 >"$tmp/ranking" || { echo "FAIL sweep exited $?"; fail=1; }
# [2,3] never waits behind a single; [0,3] waits for chip 0 a little longer; [1,3] launches at once but
# delays chip 1's singles; [0,1] starves behind them.
expected="group_workers=[2,3]
group_workers=[0,3]
group_workers=[1,3]
group_workers=[0,1]"
got=$(grep -o 'group_workers=\[[0-9],[0-9]\]' "$tmp/ranking")
[[ "$got" == "$expected" ]] || { echo "FAIL ranking:"; cat "$tmp/ranking"; fail=1; }
[[ $(wc -l <"$tmp/sweep/sweep.csv") -eq 5 ]] || { echo "FAIL sweep.csv rows"; fail=1; }
head -1 "$tmp/sweep/sweep.csv" | grep -q '^variant,group_workers,makespan_s,' || { echo "FAIL sweep.csv header"; fail=1; }
grep -q '^1,"\[2,3\]",7,' "$tmp/sweep/sweep.csv" || { echo "FAIL sweep.csv row of [2,3]"; cat "$tmp/sweep/sweep.csv"; fail=1; }
grep -q 'class="best"' "$tmp/sweep/sweep.svg" || { echo "FAIL sweep.svg highlights the best"; fail=1; }
[[ -f "$tmp/sweep/variant-0003/report.html" ]] || { echo "FAIL a variant's full run folder"; fail=1; }

# The plan: one self-contained command per variant; running them and collecting gives the same table.
"$dirsched" sweep "$scenario" --out "$tmp/planned" --plan >"$tmp/plan" 2>/dev/null
[[ $(wc -l <"$tmp/plan") -eq 4 ]] || { echo "FAIL plan lines"; cat "$tmp/plan"; fail=1; }
bash "$tmp/plan" >/dev/null || { echo "FAIL running the plan"; fail=1; }
"$dirsched" sweep --collect "$tmp/planned" >/dev/null || { echo "FAIL collect"; fail=1; }
cmp -s "$tmp/sweep/sweep.csv" "$tmp/planned/sweep.csv" || { echo "FAIL collected sweep.csv differs"; diff "$tmp/sweep/sweep.csv" "$tmp/planned/sweep.csv"; fail=1; }

"$dirsched" compare "$tmp/sweep/variant-0000" "$tmp/sweep/variant-0001" >"$tmp/compare"
grep -q "worker 0: first divergence at dispatch #3: A g\[0\]@7, B (none)" "$tmp/compare" || { echo "FAIL compare:"; cat "$tmp/compare"; fail=1; }
grep -q "makespan_s .* 8 .* 7 .*0.875" "$tmp/compare" || { echo "FAIL compare metrics"; fail=1; }

"$dirsched" sweep "$root/scenarios/quick-tour.json" --out "$tmp/none" >/dev/null 2>&1
[[ $? -eq 2 ]] || { echo "FAIL sweep without vars exits 2"; fail=1; }
[[ $fail -eq 0 ]] && echo "sweep: all checks passed"
exit $fail
