#!/usr/bin/env bash
# CLI contract: bad input exits 2 with one line on stderr naming the JSON path and writes nothing;
# the same scenario and seed give byte-identical outputs; a check over several files reports each.
set -u
dirsched=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect_status() {  # expected, description, command...
  local want=$1 what=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [[ $got -ne $want ]]; then
    echo "FAIL $what: exit $got, expected $want"; cat "$tmp/err"; fail=1
  fi
}

cat >"$tmp/bad.json" <<'JSON'
{ "name": "bad", "workers": { "next_level": [ { "id": 0, "kind": "local_chip" } ] },
  "callables": { "k": { "namespace": "LOCAL_CHIP", "duration_s": 1 } },
  "trace": [ { "op": "submit_next_level", "task": "a", "callable": "k", "worker": 0 },
             { "op": "submit_next_level", "task": "b", "callable": "k", "worker": 0, "args": [ { "buffer": "nope", "tag": "INPUT" } ] } ] }
JSON
expect_status 2 "malformed scenario" "$dirsched" run "$tmp/bad.json" --out "$tmp/bad-out"
grep -q "trace\[1\].args\[0\].buffer: unknown buffer 'nope'" "$tmp/err" || { echo "FAIL error names the JSON path:"; cat "$tmp/err"; fail=1; }
[[ $(wc -l <"$tmp/err") -eq 1 ]] || { echo "FAIL error is one line"; fail=1; }
[[ ! -e "$tmp/bad-out" ]] || { echo "FAIL a malformed scenario wrote outputs"; fail=1; }

expect_status 2 "missing file" "$dirsched" run "$tmp/none.json" --out "$tmp/none-out"
expect_status 2 "unknown output" "$dirsched" run "$root/scenarios/quick-tour.json" --out "$tmp/x" --outputs events,pictures
[[ ! -e "$tmp/x" ]] || { echo "FAIL a bad option wrote outputs"; fail=1; }

for i in 1 2; do
  expect_status 0 "run $i" "$dirsched" run "$root/scenarios/group-starvation.json" --out "$tmp/run$i" --seed 3
done
for f in events.jsonl summary.json tasks.csv; do
  cmp -s "$tmp/run1/$f" "$tmp/run2/$f" || { echo "FAIL $f differs between two runs of one seed"; fail=1; }
done

# The summary and the report say what ran: scenario, description, seed, version (and the variant).
expect_status 0 "--version" "$dirsched" --version
version=$(sed -n 's/^dirsched \(.*\)$/\1/p' "$tmp/out")
[[ -n "$version" ]] || { echo "FAIL --version prints 'dirsched VERSION'"; cat "$tmp/out"; fail=1; }
python3 - "$tmp/run1/summary.json" "$version" <<'PY' || fail=1
import json, sys
s = json.load(open(sys.argv[1]))
want = {"scenario": "group-starvation", "seed": 3, "dirsched_version": sys.argv[2]}
bad = [k for k, v in want.items() if s.get(k) != v] + ([] if s.get("description") else ["description"])
bad += [k for k in ("single", "group") if "mean_s" not in s.get("ready_waits", {}).get(k, {})]
if bad: print("FAIL summary.json fields", bad); sys.exit(1)
PY
grep -q "<th>seed</th><td>3</td>" "$tmp/run1/report.html" || { echo "FAIL report.html shows the seed"; fail=1; }
expect_status 0 "run a variant" "$dirsched" run "$root/scenarios/sweep-group-worker-set.json" --var 'group_workers=[0,3]' --out "$tmp/variant" --outputs summary,report
grep -q '"variant": 2' "$tmp/variant/summary.json" || { echo "FAIL summary.json names the variant"; fail=1; }
grep -q 'Variant 2 of the sweep:</b> group_workers = \[0,3\]' "$tmp/variant/report.html" || { echo "FAIL report.html names the variant"; fail=1; }

expect_status 0 "summary only" "$dirsched" run "$root/scenarios/quick-tour.json" --out "$tmp/only" --outputs summary
[[ -f "$tmp/only/summary.json" && ! -e "$tmp/only/events.jsonl" ]] || { echo "FAIL --outputs summary"; fail=1; }

expect_status 1 "check with one failing file" "$dirsched" check "$root/scenarios/quick-tour.json" "$root/tests/sim/must-fail.json"
grep -q "^1 passed, 1 failed$" "$tmp/out" || { echo "FAIL check summary line:"; cat "$tmp/out"; fail=1; }
grep -q "^FAIL .*must-fail.json: makespan_s" "$tmp/out" || { echo "FAIL check names the divergence"; fail=1; }
expect_status 1 "check with a wrong order pair" "$dirsched" check "$root/tests/sim/must-fail-order.json"
grep -q "^FAIL .*must-fail-order.json: order\[0\] (b@1 before a@0)" "$tmp/out" || { echo "FAIL check names the order pair"; cat "$tmp/out"; fail=1; }

# A file without expect is reported as such, not counted as a pass, and fails the check.
expect_status 1 "check of a file without expect" "$dirsched" check "$root/tests/sim/sweep-rejected-variant.json"
grep -q "^NO EXPECT .*sweep-rejected-variant.json (sweep-rejected-variant, gw=\[0,1\] sw=0 (the first candidates))" "$tmp/out" || { echo "FAIL check says there is no expect:"; cat "$tmp/out"; fail=1; }
grep -q "^0 passed, 0 failed, 1 without expect" "$tmp/out" || { echo "FAIL check counts a file without expect:"; cat "$tmp/out"; fail=1; }
# check and explore take --var and say which candidate they ran.
expect_status 1 "check of another candidate" "$dirsched" check "$root/scenarios/sweep-group-worker-set.json" --var 'group_workers=[2,3]'
grep -q "^FAIL .* (group_workers=\[2,3\]): makespan_s" "$tmp/out" || { echo "FAIL check names the candidate:"; cat "$tmp/out"; fail=1; }
expect_status 0 "explore --var" "$dirsched" explore "$root/tests/sim/sweep-rejected-variant.json" --var 'gw=[2,3]'
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["vars"]["gw"]==[2,3] else 1)' "$tmp/out" || { echo "FAIL explore --var"; fail=1; }
# A --var that names no variable of the file is bad input (exit 2, nothing written), for every command.
vfile=$root/tests/sim/sweep-rejected-variant.json
novars=$root/scenarios/group-starvation.json
for cmd in run check explore; do
  out=(); [[ $cmd == run ]] && out=(--out "$tmp/var-typo")
  expect_status 2 "$cmd --var typo" "$dirsched" $cmd "$vfile" --var 'gv=[2,3]' "${out[@]}"
  grep -qF -- "sweep-rejected-variant.json: --var gv: no such sweep variable (vars: gw, sw)" "$tmp/err" "$tmp/out" ||
    { echo "FAIL $cmd --var typo: $(cat "$tmp/err" "$tmp/out")"; fail=1; }
  expect_status 2 "$cmd --var without vars" "$dirsched" $cmd "$novars" --var 'nope=1' "${out[@]}"
  grep -qF -- "group-starvation.json: --var nope: no such sweep variable (the scenario declares no vars)" "$tmp/err" "$tmp/out" ||
    { echo "FAIL $cmd --var without vars: $(cat "$tmp/err" "$tmp/out")"; fail=1; }
  [[ ! -e "$tmp/var-typo" ]] || { echo "FAIL $cmd --var typo wrote outputs"; fail=1; }
done

# render redraws the same pictures from the run folder alone.
mkdir -p "$tmp/redraw"
cp "$tmp/run1/events.jsonl" "$tmp/run1/summary.json" "$tmp/run1/.dirsched-run" "$tmp/redraw/"
expect_status 0 "render" "$dirsched" render "$tmp/redraw"
for f in dag.dot dag.svg timeline.svg trace.json report.html; do
  cmp -s "$tmp/run1/$f" "$tmp/redraw/$f" || { echo "FAIL render: $f differs from the run's"; fail=1; }
done
expect_status 2 "render without events" "$dirsched" render "$tmp/none"

if [[ $fail -eq 0 ]]; then echo "cli contract: all checks passed"; fi
exit $fail
