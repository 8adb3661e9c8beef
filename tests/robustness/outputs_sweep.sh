#!/usr/bin/env bash
# Sweep folders: the marker records the scenario; a sweep of another scenario into it is refused;
# --collect refuses a missing variant, a duplicate index, a folder that is not one of the sweep's
# variants and a leftover temporary, each with exit 2 naming the path and nothing written.
DIRSCHED=$1 ROOT=$2
source "$(dirname "$0")/outputs_lib.sh"
d=$DIRSCHED
s=$ROOT/scenarios/sweep-group-worker-set.json
other=$ROOT/tests/sim/sweep-rejected-variant.json
w=$sandbox/work
run_case 0 "" "a sweep" "$d" sweep "$s" --out "$w/sw" -j 2
python3 - "$w/sw/.dirsched-sweep" "$s" <<'PY' || fail=1
import json, os, sys
m = json.load(open(sys.argv[1]))
want = {"dirsched": "sweep", "scenario": "sweep-group-worker-set", "file": os.path.realpath(sys.argv[2]),
        "variant_count": 4, "variants": [0, 1, 2, 3]}
if m != want: print("FAIL the sweep marker:", m); sys.exit(1)
PY
refused_untouched "$w" 2 "$w/sw: is the sweep folder of scenario 'sweep-group-worker-set' \(.*\), not of 'sweep-rejected-variant'" \
  "a sweep of another scenario" "$d" sweep "$other" --out "$w/sw"
refused_untouched "$w" 2 "is the sweep folder of scenario 'sweep-group-worker-set'" "a plan of another scenario" "$d" sweep "$other" --out "$w/sw" --plan
run_case 0 "" "collect" "$d" sweep --collect "$w/sw/"
cp "$w/sw/sweep.csv" "$sandbox/good.csv"

mv "$w/sw/variant-0002" "$sandbox/v2"
refused_untouched "$w" 2 "$w/sw: 1 of 4 variants missing \(not run, or did not finish\): variant-0002;" "collect with a missing variant" "$d" sweep --collect "$w/sw"
cp -r "$sandbox/v2" "$w/sw/variant-002"
refused_untouched "$w" 2 "$w/sw/variant-002: not a variant folder \(variant-NNNN\)" "collect with a misnamed variant" "$d" sweep --collect "$w/sw"
rm -rf "$w/sw/variant-002"
cp -r "$w/sw/variant-0001" "$w/sw/variant-0002"
refused_untouched "$w" 2 "$w/sw/variant-0002/variant.json: variant 1 twice \(also $w/sw/variant-0001\)" "collect with a duplicate index" "$d" sweep --collect "$w/sw"
rm -rf "$w/sw/variant-0002"
mv "$sandbox/v2" "$w/sw/variant-0002"
cp -r "$w/sw/variant-0001" "$w/sw/variant-0009"
refused_untouched "$w" 2 "$w/sw/variant-0009: variant 9 is not one of this sweep's 4 variants" "collect with a foreign variant" "$d" sweep --collect "$w/sw"
rm -rf "$w/sw/variant-0009"
sed -i 's/"variant": 3/"variant": 7/' "$w/sw/variant-0003/variant.json"
refused_untouched "$w" 2 "$w/sw/variant-0003/variant.json: variant: 7 in the folder of variant 3" "collect with a variant.json of another index" "$d" sweep --collect "$w/sw"
sed -i 's/"variant": 7/"variant": 3/' "$w/sw/variant-0003/variant.json"
# A corrupt summary: the file and line.
cp "$w/sw/variant-0000/summary.json" "$sandbox/summary.json"
printf '{\n  "makespan_s": 1,\n  "outcome": COMPLETED\n}\n' >"$w/sw/variant-0000/summary.json"
refused_untouched "$w" 2 "$w/sw/variant-0000/summary.json: .*not valid JSON at line 3, column [0-9]+" "collect with a corrupt summary" "$d" sweep --collect "$w/sw"
# Hostile files, read as strictly as a scenario: summary.json, variant.json and the marker.
printf '{ "makespan_s": 1,\n "makespan_s": 1 }\n' >"$w/sw/variant-0000/summary.json"
refused_untouched "$w" 2 "$w/sw/variant-0000/summary.json: makespan_s: duplicate key" "collect with a duplicate key in a summary" "$d" sweep --collect "$w/sw"
printf '{ "makespan_s": -1e400 }\n' >"$w/sw/variant-0000/summary.json"
refused_untouched "$w" 2 "$w/sw/variant-0000/summary.json: makespan_s: .*1e400" "collect with a summary number past a double" "$d" sweep --collect "$w/sw"
cp "$sandbox/summary.json" "$w/sw/variant-0000/summary.json"
cp "$w/sw/variant-0001/variant.json" "$sandbox/variant.json"
printf '{ "variant": 1, "vars": { "group_workers": [0, 1] }, "variant": 2 }\n' >"$w/sw/variant-0001/variant.json"
refused_untouched "$w" 2 "$w/sw/variant-0001/variant.json: variant: duplicate key" "collect with a duplicate key in variant.json" "$d" sweep --collect "$w/sw"
printf '{ "variant": 1, "vars": { "group_workers": "\xe2\x28" } }\n' >"$w/sw/variant-0001/variant.json"
refused_untouched "$w" 2 "$w/sw/variant-0001/variant.json: .*invalid UTF-8 at line 1" "collect with bad UTF-8 in variant.json" "$d" sweep --collect "$w/sw"
cp "$sandbox/variant.json" "$w/sw/variant-0001/variant.json"
printf '{ "makespan_s": "soon" }\n' >"$w/sw/variant-0000/summary.json"
refused_untouched "$w" 2 "$w/sw/variant-0000/summary.json: makespan_s: expected a number" "collect with a summary of the wrong types" "$d" sweep --collect "$w/sw"
cp "$sandbox/summary.json" "$w/sw/variant-0000/summary.json"
printf '{"dirsched":"sweep",\n"scenario":1}\n' >"$sandbox/marker"
cp "$w/sw/.dirsched-sweep" "$sandbox/marker.good"
cp "$sandbox/marker" "$w/sw/.dirsched-sweep"
refused_untouched "$w" 2 "$w/sw/.dirsched-sweep: scenario: expected a string" "collect with a corrupt marker" "$d" sweep --collect "$w/sw"
printf '{"dirsched":"sweep","variants":[0,1,2,3]}\n\0' >"$w/sw/.dirsched-sweep"
refused_untouched "$w" 2 "$w/sw/.dirsched-sweep: a NUL byte after the document at line 2, column 1" "collect with a NUL after the marker" "$d" sweep --collect "$w/sw"
cp "$sandbox/marker.good" "$w/sw/.dirsched-sweep"
refused_untouched "$w" 2 "not a dirsched sweep folder \(no .dirsched-sweep" "collect of a run folder" "$d" sweep --collect "$w/sw/variant-0000"

# A temporary of a process still running: collect refuses it. One left by a run that was killed (its
# process is gone) beside a complete variant: collect removes it; so does a new sweep.
sleep 60 &
live=$!
cleanup_hooks+=("kill $live 2>/dev/null")
mkdir "$w/sw/variant-0001.tmp-dirsched-$live-0badf00d"
refused_untouched "$w" 2 "$w/sw/variant-0001.tmp-dirsched-$live-0badf00d: a temporary of a dirsched still running \(process $live\)" \
  "collect with a live temporary" "$d" sweep --collect "$w/sw"
rmdir "$w/sw/variant-0001.tmp-dirsched-$live-0badf00d"
mkdir "$w/sw/variant-0001.tmp-dirsched-999999-0badf00d"
run_case 0 "" "collect with a dead process's temporary" "$d" sweep --collect "$w/sw"
no_temps "$w" "collect"
mkdir "$w/sw/variant-0001.tmp-dirsched-999999-0badf00d"
# The same scenario again: the dead process's temporary goes, the table comes back the same.
run_case 0 "" "the sweep again" "$d" sweep "$s" --out "$w/sw" -j 2
no_temps "$w" "a sweep again"
cmp -s "$sandbox/good.csv" "$w/sw/sweep.csv" || { echo "FAIL sweep.csv differs after a second sweep"; fail=1; }
# A file the user added in a variant folder: a sweep that would remove or replace it refuses, and
# changes nothing (no other variant removed first).
echo "the user's notes" >"$w/sw/variant-0003/notes.txt"
refused_untouched "$w" 2 "$w/sw/variant-0003: holds 1 entry dirsched did not write \(notes\.txt\).* or give another --out" \
  "a sample over a variant holding the user's file" "$d" sweep "$s" --out "$w/sw" --sample 2 --seed 1
refused_untouched "$w" 2 "$w/sw/variant-0003: holds 1 entry dirsched did not write" "the same sweep over it" "$d" sweep "$s" --out "$w/sw"
rm "$w/sw/variant-0003/notes.txt"
# A sample of the same scenario replaces the full sweep: the variants it does not run go.
run_case 0 "" "a sample" "$d" sweep "$s" --out "$w/sw" --sample 2 --seed 1
[[ $(ls -d "$w/sw"/variant-* | wc -l) -eq 2 && $(wc -l <"$w/sw/sweep.csv") -eq 3 ]] || { echo "FAIL a sample keeps only its variants"; ls "$w/sw"; fail=1; }
# sweep.csv is RFC 4180: every row has as many fields as the header.
python3 - "$w/sw/sweep.csv" <<'PY' || fail=1
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
if len({len(r) for r in rows}) != 1 or rows[1][1] not in ("[0,1]", "[2,3]", "[1,3]", "[0,3]"):
    print("FAIL sweep.csv fields:", rows); sys.exit(1)
PY
finish "outputs sweep"
