#!/usr/bin/env bash
# What a front end (Python's Testbed) asks of the CLI instead of writing into folders itself:
# `run --attach NAME=FILE` keeps the caller's file in the run folder, written and listed with the run's
# own; `sweep --prepare DIR --name --origin --variants` makes DIR a sweep folder under `sweep`'s rules;
# `sweep --replicate DIR --replicates N` adds the replicates of the variants the front end ran.
# Every refusal exits 2 and leaves the folder as it was.
DIRSCHED=$1 ROOT=$2
source "$(dirname "$0")/outputs_lib.sh"
d=$DIRSCHED
s=$ROOT/scenarios/group-of-one-is-a-single.json  # a clean run: --collect ranks it
w=$sandbox/work
cd "$w"
printf '{"variant": 3, "vars": {"w": [0]}}\n' >"$w/v.json"
echo "the scenario as recorded" >"$w/sc.txt"

# --attach: both files in the folder, byte for byte, and in the marker's "files".
run_case 0 "" "run --attach" "$d" run "$s" --out "$w/r" --outputs summary --attach "variant.json=$w/v.json" \
  --attach "scenario.json=$w/sc.txt"
cmp -s "$w/v.json" "$w/r/variant.json" || { echo "FAIL --attach: variant.json differs"; fail=1; }
cmp -s "$w/sc.txt" "$w/r/scenario.json" || { echo "FAIL --attach: scenario.json differs"; fail=1; }
python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["files"]; sys.exit(0 if "variant.json" in f and "scenario.json" in f else 1)' \
  "$w/r/.dirsched-run" || { echo "FAIL --attach: the marker does not list the attached files"; fail=1; }
# ... so that the next run replaces the folder (its files are all dirsched's), and drops them.
run_case 0 "" "run over an attached folder" "$d" run "$s" --out "$w/r" --outputs summary
[[ ! -e "$w/r/variant.json" ]] || { echo "FAIL: the replacing run kept the earlier attachment"; fail=1; }

refused_untouched "$w" 2 "--attach summary.json: the run writes a file of that name itself" "--attach over the run's own file" \
  "$d" run "$s" --out "$w/r" --attach "summary.json=$w/v.json"
refused_untouched "$w" 2 "--attach report.html: the run writes a file of that name itself" "--attach over a picture" \
  "$d" run "$s" --out "$w/r" --outputs summary --attach "report.html=$w/v.json"
refused_untouched "$w" 2 "--attach \"\.\./x=.*\": expected NAME=FILE, NAME a plain file name" "--attach a path" \
  "$d" run "$s" --out "$w/r" --attach "../x=$w/v.json"
refused_untouched "$w" 2 "--attach \"\.dirsched-run=.*\": expected NAME=FILE" "--attach over the marker" \
  "$d" run "$s" --out "$w/r" --attach ".dirsched-run=$w/v.json"
refused_untouched "$w" 2 '--attach "a\\nb=x": expected NAME=FILE, NAME a plain file name \(UTF-8 without control characters' \
  "--attach a name with a newline" "$d" run "$s" --out "$w/r" --attach $'a\nb=x'
refused_untouched "$w" 2 "--attach .*: expected NAME=FILE" "--attach a name past 200 bytes" \
  "$d" run "$s" --out "$w/r" --attach "$(printf 'n%.0s' $(seq 1 201))=$w/v.json"
refused_untouched "$w" 2 "--attach .*: expected NAME=FILE" "--attach a name of bad UTF-8" \
  "$d" run "$s" --out "$w/r" --attach $'bad\xff=x'
refused_untouched "$w" 2 '--attach "x=": expected NAME=FILE' "--attach without a file" "$d" run "$s" --out "$w/r" --attach "x="
refused_untouched "$w" 2 "--attach variant.json: the run writes a file of that name itself \(the scenario has vars\)" \
  "--attach variant.json to a run with vars" "$d" run "$ROOT/scenarios/sweep-group-worker-set.json" --out "$w/r" \
  --attach "variant.json=$w/v.json"
refused_untouched "$w" 2 "--attach v.json: given twice" "--attach twice" \
  "$d" run "$s" --out "$w/r" --attach "v.json=$w/v.json" --attach "v.json=$w/sc.txt"
refused_untouched "$w" 2 "$w/missing.json" "--attach a missing file" \
  "$d" run "$s" --out "$w/r" --attach "v.json=$w/missing.json"
mkfifo "$w/fifo"
refused_untouched "$w" 2 "$w/fifo: not a regular file" "--attach a FIFO (never blocks)" \
  timeout 20 "$d" run "$s" --out "$w/r" --attach "v.json=$w/fifo"
rm -f "$w/fifo"

# --prepare: a new folder gets the marker; a run per variant, then --collect ranks them.
run_case 0 "" "sweep --prepare" "$d" sweep --prepare "$w/sw" --name py --origin python:make --variants 3
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); sys.exit(0 if m["variants"]==[0,1,2] and m["scenario"]=="py" and m["file"]=="python:make" else 1)' \
  "$w/sw/.dirsched-sweep" || { echo "FAIL --prepare: marker"; cat "$w/sw/.dirsched-sweep"; fail=1; }
for i in 0 1 2; do
  printf '{"variant": %d, "vars": {"w": [%d]}}\n' $i $i >"$w/v$i.json"
  run_case 0 "" "variant $i" "$d" run "$s" --out "$w/sw/variant-000$i" --outputs summary --attach "variant.json=$w/v$i.json"
done
run_case 0 "" "--collect after --prepare" "$d" sweep --collect "$w/sw"
# Fewer variants: the stale folder goes; with a file of the user's in it, nothing goes.
echo "mine" >"$w/sw/variant-0002/notes.txt"
refused_untouched "$w" 2 "variant-0002: holds 1 entry dirsched did not write \(notes.txt\)" "--prepare over a user's file" \
  "$d" sweep --prepare "$w/sw" --name py --origin python:make --variants 2
rm "$w/sw/variant-0002/notes.txt"
run_case 0 "" "--prepare fewer variants" "$d" sweep --prepare "$w/sw" --name py --origin python:make --variants 2
[[ ! -e "$w/sw/variant-0002" ]] || { echo "FAIL --prepare: the stale variant folder stayed"; fail=1; }
refused_untouched "$w" 2 "is the sweep folder of scenario 'py' \(python:make\), not of 'other'" "--prepare another scenario's folder" \
  "$d" sweep --prepare "$w/sw" --name other --origin python:make --variants 2
refused_untouched "$w" 2 "exists and is not a dirsched sweep folder" "--prepare a folder no sweep wrote" \
  "$d" sweep --prepare "$w/r" --name py --origin python:make --variants 2
refused_untouched "$w" 2 "is the current folder" "--prepare ." "$d" sweep --prepare . --name py --origin o --variants 1
refused_untouched "$w" 2 "sweep --prepare --name \"\": expected a non-empty text" "--prepare an empty name (nothing created)" \
  "$d" sweep --prepare "$w/new/deep" --name "" --origin o --variants 1
refused_untouched "$w" 2 "sweep --prepare --origin .*: expected a non-empty text" "--prepare a bad origin (nothing created)" \
  "$d" sweep --prepare "$w/new/deep" --name n --origin $'o\xc3' --variants 1
refused_untouched "$w" 2 "--prepare DIR goes with --name, --origin and --variants" "--prepare without --variants" \
  "$d" sweep --prepare "$w/sw" --name py --origin python:make
refused_untouched "$w" 2 "--prepare DIR goes with --name, --origin and --variants" "--prepare with a scenario" \
  "$d" sweep "$s" --prepare "$w/sw" --name py --origin python:make --variants 2

# --replicate: replicates 1..N-1 of variants the front end ran, from the scenario.json each keeps.
refused_untouched "$w" 2 "variant-0000/scenario.json: no such file: --replicate runs the scenario each variant folder keeps" \
  "--replicate variants that keep no scenario" "$d" sweep --replicate "$w/sw" --replicates 3
refused_untouched "$w" 2 "--replicate DIR goes with --replicates N" "--replicate without --replicates" \
  "$d" sweep --replicate "$w/sw"
refused_untouched "$w" 2 "--replicate DIR goes with --replicates N" "--replicate with --collect" \
  "$d" sweep --replicate "$w/sw" --replicates 3 --collect "$w/sw"
refused_untouched "$w" 2 "--plan has no effect with --replicate" "--replicate with --plan" \
  "$d" sweep --replicate "$w/sw" --replicates 3 --plan
refused_untouched "$w" 2 "/r: not a dirsched sweep folder \(no .dirsched-sweep in it" "--replicate a run folder" \
  "$d" sweep --replicate "$w/r" --replicates 3
run_case 0 "" "--prepare 3 for --replicate" "$d" sweep --prepare "$w/rep" --name py --origin python:make --variants 3
for i in 0 1; do
  run_case 0 "" "replicate variant $i" "$d" run "$s" --out "$w/rep/variant-000$i" --outputs summary \
    --attach "variant.json=$w/v$i.json" --attach "scenario.json=$s"
done
refused_untouched "$w" 2 "variant-0002 not complete: --replicate adds replicates to variants already run" \
  "--replicate with a variant not run" "$d" sweep --replicate "$w/rep" --replicates 3
run_case 0 "" "variant 2" "$d" run "$s" --out "$w/rep/variant-0002" --outputs summary --attach "variant.json=$w/v2.json" \
  --attach "scenario.json=$s"
run_case 0 "the variants are deterministic and need no replications" "--replicate deterministic variants" \
  "$d" sweep --replicate "$w/rep" --replicates 3
[[ ! -e "$w/rep/replicates.jsonl" ]] || { echo "FAIL --replicate: deterministic variants got replicates"; fail=1; }
refused_untouched "$w" 2 "--seed has no effect with --replicate" "--replicate with --seed" \
  "$d" sweep --replicate "$w/rep" --replicates 3 --seed 9
refused_untouched "$w" 2 "/nowhere: no such folder" "--replicate a missing folder" \
  "$d" sweep --replicate "$w/nowhere" --replicates 3
# With a jitter: replicates.jsonl written; a later --replicate that fails leaves it as it was; variants of
# two seeds are refused.
python3 - "$s" "$w" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["callables"].values():
    c["jitter"] = {"kind": "uniform", "rel": 0.2}
json.dump(d, open(sys.argv[2] + "/jit.json", "w"))
d["seed"] = 7
json.dump(d, open(sys.argv[2] + "/jit7.json", "w"))
PY
run_case 0 "" "--prepare jittered" "$d" sweep --prepare "$w/jit" --name py --origin python:make --variants 2
for i in 0 1; do
  run_case 0 "" "jittered variant $i" "$d" run "$w/jit.json" --out "$w/jit/variant-000$i" --outputs summary \
    --attach "variant.json=$w/v$i.json" --attach "scenario.json=$w/jit.json"
done
run_case 0 "" "--replicate jittered variants" "$d" sweep --replicate "$w/jit" --replicates 3
python3 -c 'import json,sys; l=open(sys.argv[1]).read().splitlines(); h=json.loads(l[0]); sys.exit(0 if h["seeds"]==[0,1,2] and len(l)==5 else 1)' \
  "$w/jit/replicates.jsonl" || { echo "FAIL --replicate: replicates.jsonl"; fail=1; }
refused_untouched "$w" 2 "" "--replicate whose evaluations fail keeps the earlier replicates" \
  "$d" sweep --replicate "$w/jit" --replicates 3 --cfg network/model:Bogus
run_case 0 "" "--collect replicated" "$d" sweep --collect "$w/jit"
grep -q "over 3 replicates" "$sandbox/out" || { echo "FAIL --collect: not ranked over 3 replicates"; cat "$sandbox/out"; fail=1; }
run_case 0 "" "--prepare two seeds" "$d" sweep --prepare "$w/seeds" --name py --origin python:make --variants 2
run_case 0 "" "seed 0 variant" "$d" run "$w/jit.json" --out "$w/seeds/variant-0000" --outputs summary \
  --attach "variant.json=$w/v0.json" --attach "scenario.json=$w/jit.json"
run_case 0 "" "seed 7 variant" "$d" run "$w/jit7.json" --out "$w/seeds/variant-0001" --outputs summary \
  --attach "variant.json=$w/v1.json" --attach "scenario.json=$w/jit7.json"
refused_untouched "$w" 2 "variant-0001/scenario.json: seed: 7, and variant-0000 has 0" "--replicate variants of two seeds" \
  "$d" sweep --replicate "$w/seeds" --replicates 3
no_temps "$w" "front end"
[ "$fail" = 0 ] && echo "front-end calls: all as expected"
exit "$fail"
