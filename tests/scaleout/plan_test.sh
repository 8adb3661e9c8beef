#!/usr/bin/env bash
# sweep --plan and --collect as an engine meets them (issue 26): the plan's --outputs (default: what
# --collect reads) and --lines-per-task; --collect --missing prints the plan lines still to run, sample
# aware; --collect names every missing variant, accepts a complete variant beside a dead process's
# temporary (and removes it), and refuses a live one. No engine needed. Usage: plan_test.sh DIRSCHED ROOT
set -u
d=$1 ROOT=$2
s=$ROOT/tests/scaleout/sixteen.json
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dirsched-plan.XXXXXX")
live=
trap '[[ -n $live ]] && kill $live 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL $*"; fail=1; }
# Runs the plan lines on stdin, four at once (a run mostly waits on its fsyncs).
run_lines() { xargs -d '\n' -r -P 4 -I{} bash -c {} >/dev/null 2>&1; }

"$d" sweep "$s" --out "$tmp/local" -j 4 >/dev/null || no "the local sweep"

# The plan's default outputs: summary.json and variant.json only, and the same sweep.csv.
"$d" sweep "$s" --out "$tmp/p" --plan >"$tmp/plan" 2>"$tmp/err" || no "--plan"
[[ $(wc -l <"$tmp/plan") -eq 16 ]] || no "16 plan lines"
grep -q -- "--array=1-16 scripts/slurm-array.sh PLAN 1 " "$tmp/err" || { no "the sbatch line of --plan"; cat "$tmp/err"; }
# Half the plan ran: --missing prints the other half, as the plan has them, in plan order.
sed -n '1,8p' "$tmp/plan" | run_lines || no "running plan lines 1-8"
[[ "$(ls -A "$tmp/p/variant-0003" | tr '\n' ' ')" == ".dirsched-run summary.json variant.json " ]] ||
  { no "a planned variant writes only what --collect reads"; ls -A "$tmp/p/variant-0003"; }
"$d" sweep --collect "$tmp/p" --missing >"$tmp/missing" 2>"$tmp/err" || no "--missing exits 0"
cmp -s "$tmp/missing" <(sed -n '9,16p' "$tmp/plan") || { no "--missing prints plan lines 9-16"; cat "$tmp/missing"; }
grep -q "^8 of 16 plan lines still to run" "$tmp/err" || { no "--missing counts on stderr"; cat "$tmp/err"; }
# --collect names every missing variant (not the first only) and changes nothing.
"$d" sweep --collect "$tmp/p" >/dev/null 2>"$tmp/err"
rc=$?
[[ $rc -eq 2 ]] || no "collect of a half-run plan exited $rc, expected 2"
grep -q "$tmp/p: 8 of 16 variants missing (not run, or did not finish): variant-0008..variant-0015; \`dirsched sweep --collect $tmp/p --missing\` prints the plan lines to run" "$tmp/err" ||
  { no "collect names every missing variant"; cat "$tmp/err"; }
[[ ! -e "$tmp/p/sweep.csv" ]] || no "a refused collect wrote sweep.csv"
"$d" sweep --collect "$tmp/p" --missing 2>/dev/null | run_lines || no "running the missing lines"
[[ -z "$("$d" sweep --collect "$tmp/p" --missing 2>/dev/null)" ]] || no "--missing prints nothing once all ran"
"$d" sweep --collect "$tmp/p" >/dev/null || no "collect of the whole plan"
cmp -s "$tmp/local/sweep.csv" "$tmp/p/sweep.csv" || { no "the plan's sweep.csv differs from the local sweep's"; diff "$tmp/local/sweep.csv" "$tmp/p/sweep.csv"; }

# A variant killed (SIGKILL leaves its temporaries) then run again: collect removes the dead process's
# leftovers. A live process's temporary is refused; a dead one's beside a missing variant is a missing variant.
sleep 60 &
live=$!
mkdir "$tmp/p/variant-0004.events.tmp-dirsched-$live-0badf00d"
"$d" sweep --collect "$tmp/p" >/dev/null 2>"$tmp/err" && no "collect beside a live temporary succeeded"
grep -q "variant-0004.events.tmp-dirsched-$live-0badf00d: a temporary of a dirsched still running (process $live)" "$tmp/err" ||
  { no "collect names the live temporary"; cat "$tmp/err"; }
[[ -d "$tmp/p/variant-0004.events.tmp-dirsched-$live-0badf00d" ]] || no "collect removed a live process's temporary"
rmdir "$tmp/p/variant-0004.events.tmp-dirsched-$live-0badf00d"
mkdir "$tmp/p/variant-0004.events.tmp-dirsched-999999-0badf00d" "$tmp/p/variant-0005.tasks.tmp-dirsched-999999-0badf00d"
mv "$tmp/p/variant-0005" "$tmp/v5"
"$d" sweep --collect "$tmp/p" >/dev/null 2>"$tmp/err" && no "collect with a variant missing succeeded"
grep -q "1 of 16 variants missing (not run, or did not finish): variant-0005;" "$tmp/err" || { no "collect names variant 5"; cat "$tmp/err"; }
[[ -d "$tmp/p/variant-0004.events.tmp-dirsched-999999-0badf00d" ]] || no "a refused collect removed a temporary"
[[ "$("$d" sweep --collect "$tmp/p" --missing 2>/dev/null)" == "$(sed -n 6p "$tmp/plan")" ]] || no "--missing prints line 6 (variant 5)"
mv "$tmp/v5" "$tmp/p/variant-0005"
"$d" sweep --collect "$tmp/p" >/dev/null 2>"$tmp/err" || { no "collect beside dead temporaries"; cat "$tmp/err"; }
[[ -z "$(find "$tmp/p" -name '*.tmp-dirsched-*')" ]] || no "collect left the dead process's temporaries"
cmp -s "$tmp/local/sweep.csv" "$tmp/p/sweep.csv" || no "sweep.csv after the temporaries went"

# --missing with --sample: plan line i is not variant i-1; the lines printed are those of the folders missing.
"$d" sweep "$s" --out "$tmp/sample" --plan --sample 5 --seed 7 >"$tmp/splan" 2>/dev/null || no "--plan --sample"
[[ $(wc -l <"$tmp/splan") -eq 5 ]] || no "5 sampled plan lines"
run_lines <"$tmp/splan" || no "running the sampled plan"
mapfile -t folders < <(cd "$tmp/sample" && ls -d variant-*)
[[ ${#folders[@]} -eq 5 ]] || no "5 sampled variant folders"
rm -rf "$tmp/sample/${folders[1]}" "$tmp/sample/${folders[3]}"
"$d" sweep --collect "$tmp/sample" --missing >"$tmp/smissing" 2>/dev/null || no "--missing of a sample"
cmp -s "$tmp/smissing" <(grep -e "/${folders[1]}'" -e "/${folders[3]}'" "$tmp/splan") ||
  { no "--missing of a sample prints the lines of ${folders[1]} and ${folders[3]}"; cat "$tmp/smissing"; }
[[ "$(sed -n 2p "$tmp/splan")" == *"/${folders[1]}'"* ]] || no "sampled plan line 2 is ${folders[1]}"
"$d" sweep --collect "$tmp/sample" >/dev/null 2>"$tmp/err"
grep -q "2 of 5 variants missing (not run, or did not finish): ${folders[1]}, ${folders[3]};" "$tmp/err" ||
  { no "collect of a sample names both missing variants"; cat "$tmp/err"; }
# The folder swept again with another sample: the kept plan is of other variants.
"$d" sweep "$s" --out "$tmp/sample" --sample 3 --seed 1 >/dev/null 2>&1 || no "a sample into the planned folder"
"$d" sweep --collect "$tmp/sample" --missing >/dev/null 2>"$tmp/err"
rc=$?
[[ $rc -eq 2 ]] && grep -q "$tmp/sample/.dirsched-plan: the plan is of other variants than the sweep folder's" "$tmp/err" ||
  { no "--missing with a stale plan (exit $rc)"; cat "$tmp/err"; }
"$d" sweep --collect "$tmp/local" --missing >/dev/null 2>"$tmp/err"
rc=$?
[[ $rc -eq 2 ]] && grep -q "$tmp/local/.dirsched-plan: no such file: the folder has no plan" "$tmp/err" ||
  { no "--missing of a folder without a plan (exit $rc)"; cat "$tmp/err"; }

# --outputs and --lines-per-task: checked, and the sbatch line and the MaxArraySize warning follow K.
"$d" sweep "$s" --out "$tmp/k" --plan --lines-per-task 8 >/dev/null 2>"$tmp/err" || no "--lines-per-task 8"
grep -q -- "--array=1-2 scripts/slurm-array.sh PLAN 8 (8 lines per array task)" "$tmp/err" || { no "the sbatch line of K=8"; cat "$tmp/err"; }
"$d" sweep "$s" --out "$tmp/k" --plan --outputs events,summary >"$tmp/kplan" 2>/dev/null || no "--plan --outputs events,summary"
grep -q -- "--outputs 'events,summary'" "$tmp/kplan" || no "the plan passes --outputs"
for bad in "--plan --outputs events|--outputs events: a sweep ranks its variants by their summary.json" \
           "--plan --outputs pie|--outputs: unknown output 'pie'" \
           "--lines-per-task 2|--lines-per-task goes with --plan" \
           "--plan --lines-per-task 0|--lines-per-task" \
           "--missing|--missing goes with --collect DIR"; do
  read -ra args <<<"${bad%%|*}"
  "$d" sweep "$s" --out "$tmp/bad" "${args[@]}" >/dev/null 2>"$tmp/err"
  rc=$?
  [[ $rc -eq 2 ]] && grep -q -- "${bad#*|}" "$tmp/err" || { no "sweep ${bad%%|*}: exit $rc"; cat "$tmp/err"; }
  [[ ! -e "$tmp/bad" ]] || no "sweep ${bad%%|*} wrote $tmp/bad"
done
# Past a default Slurm's 1,000 array ids: a warning naming the K that fits.
python3 - "$s" "$tmp/big.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["name"] = "big"
s["workers"]["next_level"] = [{"id": i, "kind": "local_chip"} for i in range(40)]
s["vars"]["c_worker"] = list(range(40))
s["vars"]["group_workers"] = [[a, a + 1] for a in range(39)]
json.dump(s, open(sys.argv[2], "w"))
PY
"$d" sweep "$tmp/big.json" --out "$tmp/big" --plan >/dev/null 2>"$tmp/err" || { no "a plan of 1560 variants"; cat "$tmp/err"; }
grep -q "warning: 1560 array tasks: a default Slurm (MaxArraySize 1001) takes ids up to 1000; give --lines-per-task 2 or more" "$tmp/err" ||
  { no "the MaxArraySize warning"; cat "$tmp/err"; }
"$d" sweep "$tmp/big.json" --out "$tmp/big" --plan --lines-per-task 2 >/dev/null 2>"$tmp/err"
grep -q "warning" "$tmp/err" && no "a warning with K=2 (780 array tasks)"
[[ $fail -eq 0 ]] && echo "plan: all checks passed"
exit $fail
