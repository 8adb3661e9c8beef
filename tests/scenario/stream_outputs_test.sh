#!/usr/bin/env bash
# Whole runs, streamed load against the full read (DIRSCHED_TRACE_READ=full): summary.json, tasks.csv
# and events.jsonl byte for byte on tests/scenario/inputs/
# (batches, sleeps, per-member durations and failures, rejected submits, unwinding, the trace before
# its header) and on traces `dirsched gen` writes (groups, chains, arrivals); and on bad files the same
# message, exit 2 and no output folder. The shipped scenarios are compared so by the scenario matrix
# (tests/sim/matrix_test.py, ctest scenario.NAME).
# Usage: stream_outputs_test.sh DIRSCHED REPO
set -u
dirsched=$1
repo=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
# The messages of a run, without the folder's name and the sanitizer's notes (they name a process id).
said() { grep -vE '^==[0-9]+==|^False positive error reports|^For details see https://github.com/google/sanitizers' "$1" | sed "s#$tmp/[sf]-#OUT-#"; }
"$dirsched" gen tp-groups --seed 4 --groups 40 --size 4 --singles-per-group 3 --workers 8 >"$tmp/gen-tp-groups.json"
"$dirsched" gen random --seed 5 --tasks 400 --edges 3 --group-fraction 0.3 --workers 6 >"$tmp/gen-random.json"
"$dirsched" gen fork-join --seed 1 --rounds 6 --width 5 --workers 4 --arrival-rate 2000 >"$tmp/gen-fork-join.json"
"$dirsched" gen chains --seed 2 --chains 5 --length 12 --workers 3 --interval 0.0003 >"$tmp/gen-chains.json"
"$dirsched" gen stream --tasks 3000 --workers 16 >"$tmp/gen-stream.json"
for f in "$here"/inputs/*.json "$tmp"/gen-*.json; do  # scenarios/: the matrix (tests/sim/matrix_test.py)
  grep -q '"trace"' "$f" || continue  # a generate block: no trace to stream
  name=$(basename "$f" .json)
  "$dirsched" run "$f" --out "$tmp/s-$name" --outputs events,summary,tasks >"$tmp/s.out" 2>&1
  rs=$?
  DIRSCHED_TRACE_READ=full "$dirsched" run "$f" --out "$tmp/f-$name" --outputs events,summary,tasks >"$tmp/f.out" 2>&1
  rf=$?
  n=$((n + 1))
  if [[ $rs -ne $rf ]] || ! cmp -s <(said "$tmp/s.out") <(said "$tmp/f.out"); then
    echo "FAIL $name: streamed exit $rs, full read exit $rf"; diff "$tmp/s.out" "$tmp/f.out" | head -5; fail=1; continue
  fi
  [[ $rs -eq 0 ]] || continue
  for x in summary.json tasks.csv events.jsonl; do
    cmp -s "$tmp/s-$name/$x" "$tmp/f-$name/$x" ||
      { echo "FAIL $name/$x: the streamed load's run differs"; diff "$tmp/s-$name/$x" "$tmp/f-$name/$x" | head -5; fail=1; }
  done
done
# A sweep variable's other value, streamed.
for w in 0 2; do
  "$dirsched" run "$here/inputs/trace-first-mix.json" --var "w=$w" --out "$tmp/sv$w" --outputs events,summary,tasks >/dev/null
  DIRSCHED_TRACE_READ=full "$dirsched" run "$here/inputs/trace-first-mix.json" --var "w=$w" --out "$tmp/fv$w" \
    --outputs events,summary,tasks >/dev/null
  for x in summary.json tasks.csv events.jsonl; do
    cmp -s "$tmp/sv$w/$x" "$tmp/fv$w/$x" || { echo "FAIL --var w=$w: $x differs"; fail=1; }
  done
done

# Bad files: the same one-line message, exit 2, nothing written.
head='"name":"h","workers":{"next_level":[{"id":0,"kind":"local_chip"}]},"callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":1}}'
a='{"op":"submit_next_level","task":"a","callable":"k","worker":0}'
bad=(
  "{$head,\"trace\":[$a,$a]}"
  "{$head,\"trace\":[$a,{\"op\":\"batch\",\"ops\":[{\"op\":\"submit_next_level\",\"task\":\"a\",\"callable\":\"k\",\"worker\":0}]}]}"
  "{\"trace\":[$a,{\"op\":\"submit_next_level\",\"task\":\"b\",\"callable\":\"zz\",\"worker\":0}],$head}"
  "{$head,\"trace\":[$a,]}"
  "{$head,\"trace\":[$a,{\"op\":\"sleep\",\"s\":-1}]}"
  "{$head,\"trace\":[$a],\"expect\":{\"final_state\":{\"b\":\"COMPLETED\"}}}"
  "{$head,\"trace\":[$a,{\"op\":\"sleep\",\"s\":4294967296},{\"op\":\"sleep\",\"s\":1}]}"
)
for i in "${!bad[@]}"; do
  f=$tmp/bad$i.json
  printf '%s' "${bad[$i]}" >"$f"
  for cmd in run check; do
    args=("$cmd" "$f")
    [[ $cmd == run ]] && args+=(--out "$tmp/bad-out")
    "$dirsched" "${args[@]}" >"$tmp/s.err" 2>&1
    rs=$?
    DIRSCHED_TRACE_READ=full "$dirsched" "${args[@]}" >"$tmp/f.err" 2>&1
    rf=$?
    n=$((n + 1))
    if [[ $rs -ne 2 || $rf -ne 2 ]] || ! cmp -s <(said "$tmp/s.err") <(said "$tmp/f.err") || [[ -e $tmp/bad-out ]]; then
      echo "FAIL bad$i ($cmd): streamed exit $rs, full exit $rf"; cat "$tmp/s.err" "$tmp/f.err"; fail=1
    fi
  done
done
[[ $fail -eq 0 ]] && echo "scenario.stream-outputs: $n runs, streamed load and full read identical"
exit $fail
