#!/usr/bin/env bash
# sweep and optimize end to end: --var outside the candidates, a var nothing uses, a mistyped "$d";
# a replicated sweep whose winner is not the single-seed winner (the ranking follows the replicates);
# a deterministic scenario runs one replicate; the heatmap's best cells are ranking.json's best;
# optimize writes optimize.json and best.json, exhaustive when the space fits, else a search that swaps
# one chip of a choose space.
set -u
d=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() {  # name status needle command...
  local name=$1 want=$2 needle=$3
  shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [[ $rc -eq $want ]] || { echo "FAIL $name: exit $rc, want $want: $(head -c 400 "$tmp/err")"; fail=1; return; }
  [[ -z "$needle" ]] || grep -qF -- "$needle" "$tmp/out" "$tmp/err" ||
    { echo "FAIL $name: no '$needle' in: $(head -c 400 "$tmp/out" "$tmp/err")"; fail=1; }
}
sg=$root/scenarios/sweep-group-worker-set.json
expect var-outside 2 "vars.group_workers: --var group_workers=[0,2] is not one of the declared candidates" \
  "$d" run "$sg" --var 'group_workers=[0,2]' --out "$tmp/never"
[[ ! -e "$tmp/never" ]] || { echo "FAIL var-outside wrote outputs"; fail=1; }
expect var-any 0 "" "$d" run "$sg" --var 'group_workers=[0,2]' --var-any --out "$tmp/any" --outputs summary
# One variable given twice: refused (the last won, the first never checked against the candidates).
expect var-twice 2 "--var group_workers: given twice" \
  "$d" run "$sg" --var 'group_workers=[9,9]' --var 'group_workers=[0,1]' --out "$tmp/never"
[[ ! -e "$tmp/never" ]] || { echo "FAIL var-twice wrote outputs"; fail=1; }

python3 - "$root/scenarios/choose-worker-set.json" "$tmp" <<'PY'
import json, sys
base = json.load(open(sys.argv[1]))
t = sys.argv[2]
u = json.loads(json.dumps(base)); u["vars"]["unused"] = [1, 2]
json.dump(u, open(t + "/unused.json", "w"))
b = json.loads(json.dumps(base)); b["vars"]["jit"] = [0.2, "lots"]
json.dump(b, open(t + "/badjit.json", "w"))
# Seed 6: [0,1,2,3] wins the single seed (15.93 s against 16.60 s), [4,5,6,7] wins 4 of the 5 paired seeds
# (the draws keyed by identity, jitter.hpp).
two = json.loads(json.dumps(base)); two["vars"]["gb"] = [[0, 1, 2, 3], [4, 5, 6, 7]]; two["seed"] = 6
json.dump(two, open(t + "/two.json", "w"))
sw = json.loads(json.dumps(two)); sw["seed"] = "$s"; sw["vars"]["s"] = [6, 7]
json.dump(sw, open(t + "/swept-seed.json", "w"))
det = json.loads(json.dumps(base)); det["vars"]["jit"] = [0]; det["vars"]["gb"] = [[0, 1, 2, 3], [4, 5, 6, 7]]
json.dump(det, open(t + "/det.json", "w"))
PY
expect unused-var 2 "vars.unused: declared, but no value of the file is \"\$unused\"" "$d" check "$tmp/unused.json"
expect mistyped-var 2 "callables.g.jitter.rel: expected a number, found a string (the value of \$jit in this variant: \"lots\")" \
  "$d" sweep "$tmp/badjit.json" --out "$tmp/badjit"
[[ ! -e "$tmp/badjit" ]] || { echo "FAIL mistyped-var: the sweep folder was made"; fail=1; }

best() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["best"], r["replicates"])' "$1"; }
expect single-seed 0 "" "$d" sweep "$tmp/two.json" --out "$tmp/s1" --replicates 1
[[ "$(best "$tmp/s1/ranking.json")" == "[0] 1" ]] || { echo "FAIL single-seed winner: $(best "$tmp/s1/ranking.json")"; fail=1; }
expect replicated 0 "ranking over 5 replicates" "$d" sweep "$tmp/two.json" --out "$tmp/s5"
[[ "$(best "$tmp/s5/ranking.json")" == "[1] 5" ]] || { echo "FAIL replicated winner: $(best "$tmp/s5/ranking.json")"; fail=1; }
grep -q "^1\. variant 1 (gb=\[4,5,6,7\]" "$tmp/out" || { echo "FAIL replicated text: $(cat "$tmp/out")"; fail=1; }
head -1 "$tmp/s5/sweep.csv" | grep -q '^variant,replicate,seed,gb,jit,clean,makespan_s' || { echo "FAIL replicated sweep.csv header"; fail=1; }
[[ $(wc -l <"$tmp/s5/sweep.csv") -eq 11 ]] || { echo "FAIL replicated sweep.csv: not 10 rows"; fail=1; }
head -1 "$tmp/s5/sweep-summary.csv" | grep -q '^variant,gb,jit,rank,' || { echo "FAIL sweep-summary.csv header"; fail=1; }
# Every chart's best is the ranking's: the heatmap (two variables here) and the bars.
for s in s1 s5; do
  want=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["best"]))' "$tmp/$s/ranking.json")
  got=$(grep -c 'class="cell best"' "$tmp/$s/sweep-heatmap.svg")
  [[ $got -eq $want ]] || { echo "FAIL $s: heatmap marks $got best cells, the ranking $want"; fail=1; }
done
expect deterministic 0 "deterministic and needs no replications" "$d" sweep "$tmp/det.json" --out "$tmp/det" --replicates 4
[[ ! -e "$tmp/det/replicates.jsonl" ]] || { echo "FAIL deterministic: replicates ran"; fail=1; }
head -1 "$tmp/det/sweep.csv" | grep -q '^variant,gb,jit,clean' || { echo "FAIL deterministic sweep.csv changed shape"; fail=1; }
expect objective-typo 2 "--objective: unknown metric 'makespn'" "$d" sweep "$tmp/det.json" --out "$tmp/det" --objective makespn

# Replicates run every variant under the same seeds: a swept seed cannot be paired, refused before anything runs.
expect swept-seed 2 'seed: the variants have different seeds' "$d" sweep "$tmp/swept-seed.json" --out "$tmp/sws" --replicates 3
[[ ! -e "$tmp/sws" ]] || { echo "FAIL swept-seed: wrote $tmp/sws"; fail=1; }
expect swept-seed-one 0 "" "$d" sweep "$tmp/swept-seed.json" --out "$tmp/sws1" --replicates 1 --outputs summary
# A plan carries the picture budget to every line and the ranking flags to the --collect line it prints;
# --collect refuses what only running means.
expect plan-flags 0 "--collect '$tmp/plan' --objective 'makespan'" \
  "$d" sweep "$tmp/det.json" --out "$tmp/plan" --plan --picture-budget 2 --objective makespan --replicates 1
grep -q -- "--picture-budget 2.0$" "$tmp/out" || { echo "FAIL plan-flags: no --picture-budget on the plan lines"; fail=1; }
for flag in "--replicates 3" "--outputs summary" "--plan" "--sample 1" "--picture-budget 1"; do
  expect "collect $flag" 2 "${flag%% *} has no effect with --collect" "$d" sweep --collect "$tmp/det" $flag
done
expect optimize 0 "exhaustive: 2 of 2 variants evaluated" "$d" optimize "$tmp/two.json" --out "$tmp/opt"
python3 - "$tmp/opt" <<'PY' || fail=1
import json, sys
o = json.load(open(sys.argv[1] + "/optimize.json"))
b = json.load(open(sys.argv[1] + "/best.json"))
ok = o["best"]["gb"] == [4, 5, 6, 7] and o["exhaustive"] is True and o["evaluations"] == 2 and "vars" not in b
ok = ok and b["trace"][-2]["workers"] == [4, 5, 6, 7] and o["replicates"] == 5
if not ok:
    print("FAIL optimize.json/best.json:", o["best"], o["exhaustive"], o["evaluations"])
    sys.exit(1)
# The best's interval per metric, keyed as objective (its metrics), each [low, high] around the mean and
# never below 0; tied_with lists other evaluated variants; the evaluation says what ran.
ci = o["objective_ci"]
bad = [k for k in o["objective"] if k != "clean" and not (0 <= ci[k][0] <= o["objective"][k] <= ci[k][1])]
if bad or set(ci) != set(o["objective"]) - {"clean"} or o["variant"] in o["tied_with"] or "Holm" not in o["tied_method"]:
    print("FAIL optimize.json objective_ci/tied_with:", ci, o["tied_with"], bad)
    sys.exit(1)
if "event engine" not in o["evaluation"] or "SimGrid in a process" in o["evaluation"]:
    print("FAIL optimize.json evaluation:", o["evaluation"])
    sys.exit(1)
PY
grep -q "95% intervals of the best's means: makespan \[" "$tmp/out" || { echo "FAIL optimize: no interval printed"; fail=1; }
grep -qE "^(separated from every other evaluated variant|not separated from the best)" "$tmp/out" ||
  { echo "FAIL optimize: the answer does not say what it is not separated from: $(cat "$tmp/out")"; fail=1; }
# --select-best: KN picks [4,5,6,7] (the replicated winner, 2 s ahead) with fewer runs than the fixed-N
# design; selection.json says what it did; a deterministic scenario needs no selection (exit 2, no folder).
expect select-best 0 "selected: variant 0 (gb=[4,5,6,7]" "$d" sweep "$root/scenarios/choose-worker-set.json" --out "$tmp/sel" --select-best 0.5
python3 - "$tmp/sel/selection.json" <<'PY' || fail=1
import json, sys
s = json.load(open(sys.argv[1]))
ok = s["best"] == 0 and s["vars"]["gb"] == [4, 5, 6, 7] and s["pcs"] == 0.95 and s["indifference"] == 0.5
ok = ok and "Kim and Nelson" in s["method"] and s["runs"] == sum(v["replicates"] for v in s["replicates"])
ok = ok and s["runs"] < s["fixed_n"]["runs"] and len(s["replicates"]) == 6
if not ok:
    print("FAIL selection.json:", s)
    sys.exit(1)
PY
expect select-deterministic 2 "deterministic and one run per variant tells the best exactly" "$d" sweep "$tmp/det.json" --out "$tmp/never" --select-best 0.5
expect select-pcs-alone 2 "--pcs goes with --select-best" "$d" sweep "$tmp/det.json" --out "$tmp/never" --pcs 0.9
expect select-replicates 2 "--replicates has no effect with --select-best" "$d" sweep "$tmp/two.json" --out "$tmp/never" --select-best 1 --replicates 3
[[ ! -e "$tmp/never" ]] || { echo "FAIL --select-best refusals wrote $tmp/never"; fail=1; }
# optimize's own errors say optimize; an empty --objective is refused, not the default.
expect optimize-objective-empty 2 "dirsched optimize: --objective: an empty list" "$d" optimize "$tmp/two.json" --out "$tmp/never" --objective ''
expect optimize-objective-typo 2 "dirsched optimize: --objective: unknown metric 'makespn'" "$d" optimize "$tmp/two.json" --out "$tmp/never" --objective makespn
[[ ! -e "$tmp/never" ]] || { echo "FAIL optimize --objective refusals wrote $tmp/never"; fail=1; }
# optimize's folder follows the folder rule: a folder it did not write is refused, its own is replaced whole.
mkdir -p "$tmp/mine" && echo keep >"$tmp/mine/best.json"
expect optimize-foreign 2 "exists and is not a dirsched optimize folder" "$d" optimize "$tmp/two.json" --out "$tmp/mine"
[[ $(cat "$tmp/mine/best.json") == keep ]] || { echo "FAIL optimize-foreign: the user's best.json changed"; fail=1; }
[[ -f "$tmp/opt/.dirsched-optimize" ]] || { echo "FAIL optimize: no .dirsched-optimize marker"; fail=1; }
expect optimize-again 0 "exhaustive" "$d" optimize "$tmp/two.json" --out "$tmp/opt"
# A user's file inside an optimize folder, or a marker optimize did not write: refused, nothing deleted
# (both folders were replaced whole, the user's files with them).
echo mine >"$tmp/opt/notes.txt"
expect optimize-user-file 2 "holds 1 entry dirsched did not write (notes.txt)" "$d" optimize "$tmp/two.json" --out "$tmp/opt"
[[ $(cat "$tmp/opt/notes.txt" 2>/dev/null) == mine ]] || { echo "FAIL optimize-user-file: the user's notes.txt is gone"; fail=1; }
rm -f "$tmp/opt/notes.txt"
mkdir -p "$tmp/fake" && echo thesis >"$tmp/fake/thesis.tex" && : >"$tmp/fake/.dirsched-optimize"
expect optimize-empty-marker 2 ".dirsched-optimize: not a marker dirsched wrote" "$d" optimize "$tmp/two.json" --out "$tmp/fake"
[[ $(cat "$tmp/fake/thesis.tex" 2>/dev/null) == thesis ]] || { echo "FAIL optimize-empty-marker: the user's thesis.tex is gone"; fail=1; }
# best.json is written in DIR: a relative platform path still names the platform from there.
python3 - "$root/scenarios/transfer-cost.json" "$root" "$tmp/sub" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
d["platform"] = os.path.relpath(sys.argv[2] + "/platforms/four-chips-four-remote.xml", sys.argv[3])
d.setdefault("vars", {})["unused_is_refused"] = [1]
d["vars"] = {"dur": [1, 2]}
for c in d["callables"].values():
    c["duration_s"] = "$dur"
    break
os.makedirs(sys.argv[3], exist_ok=True)
json.dump(d, open(sys.argv[3] + "/plat.json", "w"))
PY
expect optimize-platform 0 "exhaustive" "$d" optimize "$tmp/sub/plat.json" --out "$tmp/opt2/deeper"
(cd "$tmp" && "$d" run "$tmp/opt2/deeper/best.json" --out "$tmp/bestrun" --outputs summary >/dev/null 2>"$tmp/err") ||
  { echo "FAIL optimize-platform: best.json does not run: $(cat "$tmp/err")"; fail=1; }
# A choose space under a budget is searched by swapping one chip: a group on 4 of 12 chips delays the
# singles queued on its chips (chip i holds 11 - i), so the best set is the last list, [8,9,10,11], found
# with 120 of 495 evaluations whatever the seed (a budget over the whole list at once is a sample).
python3 - "$tmp/space.json" <<'PY'
import json, sys
trace = [{"op": "submit_next_level_group", "task": "g", "callable": "k", "workers": "$gb",
          "args_list": [[], [], [], []], "duration_s": 10}]
trace += [{"op": "submit_next_level", "task": "s%d_%d" % (i, j), "callable": "k", "worker": i}
          for i in range(12) for j in range(11 - i)]
json.dump({"name": "swap-search", "workers": {"next_level": [{"id": i, "kind": "local_chip"} for i in range(12)]},
           "callables": {"k": {"namespace": "LOCAL_CHIP", "duration_s": 1}},
           "vars": {"gb": {"choose": 4, "from": list(range(12)), "ordered": False}},
           "trace": trace + [{"op": "drain"}]}, open(sys.argv[1], "w"))
PY
for seed in 0 1 2 3; do
  expect "optimize-swap-$seed" 0 "search (main-effects surrogate search, seed $seed): 120 of 495 variants" \
    "$d" optimize "$tmp/space.json" --out "$tmp/swap$seed" --budget 120 --seed "$seed" --objective single_wait_mean
  python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); sys.exit(0 if o["best"]=={"gb":[8,9,10,11]} and not o["exhaustive"] else 1)' \
    "$tmp/swap$seed/optimize.json" || { echo "FAIL optimize-swap-$seed: best $(head -c 300 "$tmp/swap$seed/optimize.json")"; fail=1; }
done
# optimize --plan-batches: the same search, its runs printed batch by batch (exit 6) and run here by bash
# (any engine would do), gives the same optimize.json (but its `evaluation` line) and best.json.
"$d" optimize "$tmp/space.json" --out "$tmp/swap-batched" --budget 40 --seed 1 --objective single_wait_mean >/dev/null 2>&1 ||
  { echo "FAIL optimize-batches: the local search"; fail=1; }
mv "$tmp/swap-batched" "$tmp/swap-local"
batches=0
while true; do
  "$d" optimize "$tmp/space.json" --out "$tmp/swap-batched" --budget 40 --seed 1 --objective single_wait_mean \
    --plan-batches "$tmp/evals" >"$tmp/batch.plan" 2>"$tmp/err"
  rc=$?
  [[ $rc == 6 ]] || break
  batches=$((batches + 1))
  grep -q "of the search's next batch to do" "$tmp/err" || { echo "FAIL optimize-batches: message $(cat "$tmp/err")"; fail=1; }
  cmp -s "$tmp/batch.plan" "$tmp/evals/pending.plan" || { echo "FAIL optimize-batches: pending.plan differs from stdout"; fail=1; }
  bash "$tmp/batch.plan" >/dev/null 2>&1 || { echo "FAIL optimize-batches: a plan line failed"; fail=1; break; }
  (( batches < 60 )) || { echo "FAIL optimize-batches: no end after 60 batches"; fail=1; break; }
done
[[ $rc == 0 ]] || { echo "FAIL optimize-batches: last exit $rc: $(head -c 300 "$tmp/err")"; fail=1; }
(( batches > 2 )) || { echo "FAIL optimize-batches: only $batches batches (a search has several)"; fail=1; }
[[ -e "$tmp/evals/pending.plan" ]] && { echo "FAIL optimize-batches: pending.plan left after the end"; fail=1; }
python3 - "$tmp/swap-local/optimize.json" "$tmp/swap-batched/optimize.json" <<'PY' || { echo "FAIL optimize-batches: results differ"; fail=1; }
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert "--plan-batches" in b.pop("evaluation") and a.pop("evaluation")
assert a == b, (a, b)
PY
cmp -s "$tmp/swap-local/best.json" "$tmp/swap-batched/best.json" || { echo "FAIL optimize-batches: best.json differs"; fail=1; }
# Each run folder of --plan-batches holds the run its name says: two swapped are refused (each was scored
# as the other's variant, and the search named the slower variant best).
first=$(ls -d "$tmp/evals"/v*-s* | sed -n 1p) second=$(ls -d "$tmp/evals"/v*-s* | sed -n 2p)
mv "$first" "$tmp/swap-held" && mv "$second" "$first" && mv "$tmp/swap-held" "$second"
expect optimize-batches-swapped 2 "in the folder of variant" \
  "$d" optimize "$tmp/space.json" --out "$tmp/swap-batched" --budget 40 --seed 1 --objective single_wait_mean --plan-batches "$tmp/evals"
mv "$first" "$tmp/swap-held" && mv "$second" "$first" && mv "$tmp/swap-held" "$second"
# The folder holds this search's evaluations only: another document, or a folder of the user's, is refused.
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["name"]="other"; json.dump(d, open(sys.argv[2], "w"))' \
  "$tmp/space.json" "$tmp/space2.json"
expect optimize-batches-other 2 "its evaluations were run for another scenario document" \
  "$d" optimize "$tmp/space2.json" --out "$tmp/x" --budget 40 --plan-batches "$tmp/evals"
mkdir "$tmp/users" && echo keep >"$tmp/users/notes.txt"
expect optimize-batches-foreign 2 "holds files dirsched did not write" \
  "$d" optimize "$tmp/space.json" --out "$tmp/x" --budget 40 --plan-batches "$tmp/users"
[[ $(cat "$tmp/users/notes.txt") == keep ]] || { echo "FAIL optimize-batches-foreign: the user's file changed"; fail=1; }
# A candidate listed twice is refused at load, naming it (the sweep ran both, then refused its own folder).
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["vars"]["gb"] = [[0, 1, 2, 3], [4, 5, 6, 7], [0, 1, 2, 3]]; json.dump(d, open(sys.argv[2], "w"))' \
  "$tmp/two.json" "$tmp/dup.json"
expect candidate-twice 2 "dup.json: vars.gb[2]: the candidate [0,1,2,3] is listed twice (also at vars.gb[0])" \
  "$d" sweep "$tmp/dup.json" --out "$tmp/dup-sweep" --replicates 1
[[ ! -e "$tmp/dup-sweep" ]] || { echo "FAIL candidate-twice wrote the sweep folder"; fail=1; }
# Where a variant's run goes, a file (or a link, or a folder no run wrote) is refused before any run, and
# the sweep folder is left as it was (variant 0 was re-run and the marker rewritten, then exit 1).
expect resweep 0 "" "$d" sweep "$tmp/two.json" --out "$tmp/s-user" --replicates 1 --outputs summary
rm -rf "$tmp/s-user/variant-0001" && echo mine >"$tmp/s-user/variant-0001"
before=$(cd "$tmp/s-user" && find . -printf '%p %s %T@\n' | sort)
expect variant-slot-taken 2 "variant-0001: a file where this sweep's variant 1 goes" \
  "$d" sweep "$tmp/two.json" --out "$tmp/s-user" --replicates 1 --outputs summary
[[ "$(cd "$tmp/s-user" && find . -printf '%p %s %T@\n' | sort)" == "$before" ]] || { echo "FAIL variant-slot-taken changed the folder"; fail=1; }
# A plan is one command per line: a path with a line break is refused (it split the commands).
mkdir -p "$tmp/nl"$'\n'"dir"
expect plan-newline 2 "has a line break: a plan's commands are one line each" \
  "$d" sweep "$tmp/two.json" --out "$tmp/nl"$'\n'"dir/plan" --plan --replicates 1
[[ ! -e "$tmp/nl"$'\n'"dir/plan" ]] || { echo "FAIL plan-newline claimed the folder"; fail=1; }
# --plan-batches names a folder of its own: empty (it ran the search here), --out's own folder (replaced
# at the end, evaluations with it), or a file (a misleading "holds files") are refused before any work.
expect batches-empty 2 "--plan-batches: an empty path" "$d" optimize "$tmp/two.json" --out "$tmp/ob" --plan-batches ""
expect batches-same 2 "the same folder as --out; give two folders" "$d" optimize "$tmp/two.json" --out "$tmp/ob" --plan-batches "$tmp/ob/"
expect batches-file 2 "is a file, not a folder" "$d" optimize "$tmp/two.json" --out "$tmp/ob" --plan-batches "$tmp/two.json"
[[ ! -e "$tmp/ob" ]] || { echo "FAIL a refused --plan-batches wrote --out"; fail=1; }
# --outputs that names nothing is refused (it read as not given: every output).
for o in "" ","; do
  expect "outputs-none-'$o'" 2 "names no output" "$d" run "$tmp/two.json" --out "$tmp/on" --outputs "$o"
  expect "sweep-outputs-none-'$o'" 2 "names no output" "$d" sweep "$tmp/two.json" --out "$tmp/on" --outputs "$o"
done
[[ ! -e "$tmp/on" ]] || { echo "FAIL --outputs '' wrote"; fail=1; }
# A scenario named "" is refused at load (its run printed ": COMPLETED"); compare and fidelity given a file
# say it is not a folder (they said "no such run folder" of a file that is there).
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["name"]=""; json.dump(d, open(sys.argv[2], "w"))' "$tmp/two.json" "$tmp/noname.json"
expect name-empty 2 "noname.json: name: expected a non-empty name" "$d" run "$tmp/noname.json" --out "$tmp/nn"
expect compare-file 2 "two.json: not a folder" "$d" compare "$tmp/two.json" "$tmp/two.json"
expect fidelity-file 2 "two.json: not a folder" "$d" fidelity "$tmp/two.json" "$tmp/two.json"
[[ $fail -eq 0 ]] && echo "sweep and optimize: all cases pass"
exit $fail
