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
head -1 "$tmp/sweep/sweep.csv" | grep -q '^variant,group_workers,clean,makespan_s,' || { echo "FAIL sweep.csv header"; fail=1; }
grep -q '^1,"\[2,3\]",true,7,' "$tmp/sweep/sweep.csv" || { echo "FAIL sweep.csv row of [2,3]"; cat "$tmp/sweep/sweep.csv"; fail=1; }
grep -q 'class="best"' "$tmp/sweep/sweep.svg" || { echo "FAIL sweep.svg highlights the best"; fail=1; }
[[ -f "$tmp/sweep/variant-0003/report.html" ]] || { echo "FAIL a variant's full run folder"; fail=1; }

# The plan: one self-contained command per variant; running them and collecting gives the same table.
# (--outputs: compare below reads the events of a planned variant; a plan's default is summary only.)
"$dirsched" sweep "$scenario" --out "$tmp/planned" --plan --outputs events,summary >"$tmp/plan" 2>/dev/null
[[ $(wc -l <"$tmp/plan") -eq 4 ]] || { echo "FAIL plan lines"; cat "$tmp/plan"; fail=1; }
bash "$tmp/plan" >/dev/null || { echo "FAIL running the plan"; fail=1; }
"$dirsched" sweep --collect "$tmp/planned" >/dev/null || { echo "FAIL collect"; fail=1; }
cmp -s "$tmp/sweep/sweep.csv" "$tmp/planned/sweep.csv" || { echo "FAIL collected sweep.csv differs"; diff "$tmp/sweep/sweep.csv" "$tmp/planned/sweep.csv"; fail=1; }

# compare exits as diff(1) does: 1 when the runs differ, 0 when they are the same, 2 on trouble.
"$dirsched" compare "$tmp/sweep/variant-0000" "$tmp/sweep/variant-0001" >"$tmp/compare"
rc=$?
[[ $rc -eq 1 ]] || { echo "FAIL compare of two different variants exited $rc"; fail=1; }
grep -q "^A: $tmp/sweep/variant-0000 (scenario sweep-group-worker-set, group_workers=\[0,1\]" "$tmp/compare" || { echo "FAIL compare names A"; cat "$tmp/compare"; fail=1; }
grep -q "#3: variant-0000 g\[0\]@0 t=7, variant-0001 (none)" "$tmp/compare" || { echo "FAIL compare:"; cat "$tmp/compare"; fail=1; }
grep -q "g\[0\]: variant-0000 g\[0\]@0 t=7, variant-0001 g\[0\]@2 t=1.5" "$tmp/compare" || { echo "FAIL compare moved dispatches"; fail=1; }
grep -Eq "^  g +t=7 +t=1.5 +6.5 s +1 s +-5.5 s" "$tmp/compare" || { echo "FAIL compare group table"; cat "$tmp/compare"; fail=1; }
grep -q "makespan (s) .* 8 .* 7 .*0.875" "$tmp/compare" || { echo "FAIL compare metrics"; fail=1; }
grep -q "single READY wait max (s)" "$tmp/compare" || { echo "FAIL compare single waits"; fail=1; }
"$dirsched" compare "$tmp/sweep/variant-0002" "$tmp/planned/variant-0002" >"$tmp/compare-same"
rc=$?
[[ $rc -eq 0 ]] || { echo "FAIL compare of the same variant twice exited $rc"; cat "$tmp/compare-same"; fail=1; }
"$dirsched" compare "$tmp/sweep/variant-0002" "$tmp/no-such-run" >/dev/null 2>&1
rc=$?
[[ $rc -eq 2 ]] || { echo "FAIL compare with a missing folder exited $rc"; fail=1; }

# A variant whose group is REJECTED finishes soonest; it must rank after every clean variant, be marked
# so in the ranking, sweep.csv and sweep.svg, and two variables draw sweep-heatmap.svg.
"$dirsched" sweep "$root/tests/sim/sweep-rejected-variant.json" --out "$tmp/rejected" >"$tmp/rejected-ranking" || { echo "FAIL sweep with a rejected variant exited $?"; fail=1; }
tail -n +5 "$tmp/rejected-ranking" | head -2 | grep -c 'gw=\[2,2\].*NOT CLEAN (1 rejected)' | grep -q '^2$' || { echo "FAIL rejected variants rank last:"; cat "$tmp/rejected-ranking"; fail=1; }
head -4 "$tmp/rejected-ranking" | grep -q 'NOT CLEAN' && { echo "FAIL a not-clean variant among the first four"; fail=1; }
grep -q '^3,"\[2,2\]",3,false,' "$tmp/rejected/sweep.csv" || { echo "FAIL sweep.csv clean=false"; cat "$tmp/rejected/sweep.csv"; fail=1; }
[[ $(grep -c 'class="unclean"' "$tmp/rejected/sweep.svg") -eq 2 ]] || { echo "FAIL sweep.svg marks the not-clean variants"; fail=1; }
[[ $(grep -c 'class="cell' "$tmp/rejected/sweep-heatmap.svg") -eq 6 ]] || { echo "FAIL sweep-heatmap.svg cells"; fail=1; }
"$dirsched" run "$root/tests/sim/sweep-rejected-variant.json" --var 'gw=[2,2]' --out "$tmp/one" >"$tmp/one-run"
grep -q "COMPLETED with problems: 1 of 4 tasks REJECTED" "$tmp/one-run" || { echo "FAIL run says tasks were rejected:"; cat "$tmp/one-run"; fail=1; }

"$dirsched" sweep "$root/scenarios/quick-tour.json" --out "$tmp/none" >/dev/null 2>&1
[[ $? -eq 2 ]] || { echo "FAIL sweep without vars exits 2"; fail=1; }
[[ $fail -eq 0 ]] && echo "sweep: all checks passed"
exit $fail
