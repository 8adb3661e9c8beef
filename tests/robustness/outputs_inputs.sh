#!/usr/bin/env bash
# What runs write and read back: a valid scenario with nothing to run writes normal, empty outputs;
# tasks.csv follows RFC 4180; render and compare name the file and line (or JSON path) of a corrupt
# input with exit 2 and change nothing.
DIRSCHED=$1 ROOT=$2
source "$(dirname "$0")/outputs_lib.sh"
d=$DIRSCHED
w=$sandbox/work
head='{ "name": "nothing", "workers": { "next_level": [ { "id": 0, "kind": "local_chip" } ] },
  "callables": { "k": { "namespace": "LOCAL_CHIP", "duration_s": 1 } },'
for case in 'empty trace|[]' 'lone drain|[ { "op": "drain" } ]' 'empty batch|[ { "op": "batch", "ops": [] } ]'; do
  what=${case%%|*}
  echo "$head \"trace\": ${case#*|} }" >"$sandbox/nothing.json"
  rm -rf "$w/nothing"
  run_case 0 "" "$what" "$d" run "$sandbox/nothing.json" --out "$w/nothing"
  [[ -f "$w/nothing/events.jsonl" && ! -s "$w/nothing/events.jsonl" ]] || { echo "FAIL $what: an empty events.jsonl"; fail=1; }
  [[ $(cat "$w/nothing/tasks.csv") == job_id,kind,* && $(wc -l <"$w/nothing/tasks.csv") -eq 1 ]] || { echo "FAIL $what: tasks.csv is its header"; fail=1; }
  grep -q '"total": 0' "$w/nothing/summary.json" || { echo "FAIL $what: summary counts 0 tasks"; fail=1; }
  [[ -f "$w/nothing/report.html" ]] || { echo "FAIL $what: the pictures"; fail=1; }
  grep -q "^outputs in $w/nothing/" "$sandbox/out" || { echo "FAIL $what: outputs line"; cat "$sandbox/out"; fail=1; }
  no_temps "$w" "$what"
done

# RFC 4180: names holding a comma, a double quote or a semicolon come back whole (CR and LF are control
# characters, which the loader refuses in names since issue 28).
cat >"$sandbox/csv.json" <<'JSON'
{ "name": "csv", "workers": { "next_level": [ { "id": 0, "kind": "local_chip" } ] },
  "callables": { "k,\"x\"": { "namespace": "LOCAL_CHIP", "duration_s": 1 } },
  "trace": [ { "op": "submit_next_level", "task": "a,b", "callable": "k,\"x\"", "worker": 0 },
             { "op": "submit_next_level", "task": "say \"hi\"", "callable": "k,\"x\"", "worker": 0 },
             { "op": "submit_next_level", "task": "two lines;", "callable": "k,\"x\"", "worker": 0 },
             { "op": "submit_next_level", "task": "plain", "callable": "k,\"x\"", "worker": 0 } ] }
JSON
run_case 0 "" "a run of awkward names" "$d" run "$sandbox/csv.json" --out "$w/csv" --outputs tasks
python3 - "$w/csv/tasks.csv" <<'PY' || fail=1
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
names = [r[0] for r in rows[1:]]
if names != ["a,b", 'say "hi"', "two lines;", "plain"] or {len(r) for r in rows} != {21} or rows[1][2] != 'k,"x"':
    print("FAIL tasks.csv is not RFC 4180:", rows); sys.exit(1)
PY
grep -q '^plain,single,' "$w/csv/tasks.csv" || { echo "FAIL a plain name is not quoted"; fail=1; }

# Corrupt inputs of render, compare: the file and line, or the file and JSON path; exit 2.
run_case 0 "" "a run to corrupt" "$d" run "$ROOT/scenarios/group-starvation.json" --out "$w/r"
run_case 0 "" "a run to compare with" "$d" run "$ROOT/scenarios/group-starvation.json" --out "$w/good"
cp "$w/r/summary.json" "$sandbox/summary.json"
printf '{\n  "scenario": "x",\n  "workers": [ { "worker": 0, }\n}\n' >"$w/r/summary.json"
refused_untouched "$w" 2 "$w/r/summary.json: .*not valid JSON at line 3, column [0-9]+" "render of a corrupt summary" "$d" render "$w/r"
refused_untouched "$w" 2 "$w/r/summary.json: .*not valid JSON at line 3, column [0-9]+" "compare with a corrupt summary" "$d" compare "$w/good" "$w/r"
# Hostile summaries are read as strictly as a scenario (the loader's reader): file, JSON path or line.
nest=$(printf '%0.s[' $(seq 100))$(printf '%0.s]' $(seq 100))
hostile=(
  'a duplicate key|{ "makespan_s": 1,\n  "makespan_s": 2 }|makespan_s: duplicate key .makespan_s.'
  'nesting 100 deep|{ "groups": '"$nest"' }|groups(\[0\])+: nested deeper than 64 levels'
  'a number past a double|{ "makespan_s": 1e400 }|makespan_s: .*1e400'
  'a number that reads as 0|{ "makespan_s": 1e-400 }|makespan_s: number 1e-400 is too small for a double'
  'NaN|{ "makespan_s": NaN }|makespan_s: not valid JSON at line 1, column 17: .*invalid literal'
  'text after the document|{ "makespan_s": 1 }\n{ }|unexpected text after the document at line 2'
  'a NUL after the document|{ "makespan_s": 1 }\n\0|a NUL byte after the document at line 2, column 1'
  'bad UTF-8|{ "scenario": "\xff\xfe" }|scenario: invalid UTF-8 at line 1, column 16'
)
for case in "${hostile[@]}"; do
  IFS='|' read -r what text want <<<"$case"
  printf "$text\n" >"$w/r/summary.json"
  refused_untouched "$w" 2 "$w/r/summary.json: $want" "render of a summary with $what" "$d" render "$w/r"
  refused_untouched "$w" 2 "$w/r/summary.json: $want" "compare with a summary with $what" "$d" compare "$w/good" "$w/r"
done
printf '{ "workers": [ { "worker": 0, "kind": "local_chip" }, { "worker": "1x", "kind": "local_chip" } ] }\n' >"$w/r/summary.json"
refused_untouched "$w" 2 "$w/r/summary.json: workers\[1\].worker: expected an integer" "render of a summary with a wrong type" "$d" render "$w/r"
printf '{ "makespan_s": "long", "groups": [] }\n' >"$w/r/summary.json"
refused_untouched "$w" 2 "$w/r/summary.json: makespan_s: expected a number" "render of a summary with a string makespan" "$d" render "$w/r"
refused_untouched "$w" 2 "$w/r/summary.json: makespan_s: expected a number" "compare with a summary of the wrong types" "$d" compare "$w/good" "$w/r"
cp "$sandbox/summary.json" "$w/r/summary.json"
cp "$w/r/events.jsonl" "$sandbox/events.jsonl"
sed -i '4s/.*/{"seq":3,"t_s":0,"event":"dispatch","task":"a0","member":0,"sub_worker":"subway"}/' "$w/r/events.jsonl"
refused_untouched "$w" 2 "$w/r/events.jsonl line 4: sub_worker: expected \"subN\"" "render of a corrupt event" "$d" render "$w/r"
sed -i '4s/.*/{"seq":3, "t_s":/' "$w/r/events.jsonl"
refused_untouched "$w" 2 "$w/r/events.jsonl line 4: t_s: not valid JSON at column 16: .*unexpected end of input" "render of a truncated event" "$d" render "$w/r"
refused_untouched "$w" 2 "$w/r/events.jsonl line 4: t_s: not valid JSON at column 16: .*unexpected end of input" "compare with a truncated event" "$d" compare "$w/good" "$w/r"
# Hostile event lines, as strictly: a duplicate key, a number past a double, bad UTF-8, deep nesting.
for case in 'a duplicate key|{"seq":3,"t_s":0,"t_s":1,"event":"dispatch","task":"a0"}|t_s: duplicate key .t_s.' \
            'a number past a double|{"seq":3,"t_s":1e999,"event":"dispatch","task":"a0"}|t_s: .*1e999' \
            'bad UTF-8|{"seq":3,"t_s":0,"event":"dispatch","task":"a\xc0"}|task: invalid UTF-8 at column 46' \
            'nesting 100 deep|{"seq":3,"t_s":0,"event":"submit","task":"x","deps":'"$nest"'}|deps(\[0\])+: nested deeper than 64'; do
  IFS='|' read -r what text want <<<"$case"
  cp "$sandbox/events.jsonl" "$w/r/events.jsonl"
  printf '%s\n' "$(sed -n 1,3p "$sandbox/events.jsonl")" >"$w/r/events.jsonl"
  printf "$text\n" >>"$w/r/events.jsonl"
  refused_untouched "$w" 2 "$w/r/events.jsonl line 4: $want" "render of an event with $what" "$d" render "$w/r"
  refused_untouched "$w" 2 "$w/r/events.jsonl line 4: $want" "compare with an event with $what" "$d" compare "$w/good" "$w/r"
done
cp "$sandbox/events.jsonl" "$w/r/events.jsonl"
run_case 0 "" "render of the repaired folder" "$d" render "$w/r/"
no_temps "$w" "render"
finish "outputs inputs"
