#!/usr/bin/env bash
# Byte-compare check for the Recorder: runs two dirsched binaries on every runnable scenario of
# scenarios/ and tests/ and on generated traces rich in waiting groups (random with groups, tp-groups,
# fork-join, chains, stream; spaced and Poisson arrivals, long members), under the scenario's own
# policy and under seed, head_reservation and current, and compares summary.json, tasks.csv and
# events.jsonl byte for byte (and the exit status). Exit 0 when all are identical, 1 otherwise (each
# difference named).
# Usage: tests/bench/recorder_outputs.sh BEFORE_BIN AFTER_BIN [--quick]
#   --quick: the scenario's own policy only, and the smaller generated traces.
set -u
before=$1 after=$2
quick=${3:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Generated traces: family and options, one a line.
gens=(
  "random --tasks 2000 --group-fraction 0.2 --workers 8 --seed 1"
  "random --tasks 2000 --group-fraction 0.5 --workers 4 --seed 2"
  "random --tasks 3000 --group-fraction 0.3 --workers 8 --seed 3 --arrival-rate 2000"
  "random --tasks 3000 --group-fraction 0.2 --workers 16 --seed 4 --interval 0.0003 --duration-s 0.0017"
  "random --tasks 2000 --group-fraction 0.9 --workers 3 --seed 5 --edges 0"
  "random --tasks 2000 --group-fraction 0.1 --workers 8 --seed 6 --edges 5 --arrival-rate 500"
  "tp-groups --groups 400 --size 2 --singles-per-group 3 --workers 8 --seed 7"
  "tp-groups --groups 300 --size 4 --singles-per-group 8 --workers 8 --seed 8 --arrival-rate 3000"
  "tp-groups --groups 200 --size 3 --singles-per-group 0 --workers 5 --seed 9 --interval 0.0005"
  "fork-join --rounds 50 --workers 8 --seed 10"
  "chains --chains 8 --length 200 --workers 8 --seed 11"
  "stream --tasks 3000 --workers 8 --seed 12 --arrival-rate 5000"
)
[ "$quick" != --quick ] && gens+=(
  "random --tasks 40000 --group-fraction 0.2 --workers 8 --seed 13"
  "random --tasks 20000 --group-fraction 0.3 --workers 8 --seed 14 --arrival-rate 4000"
  "tp-groups --groups 5000 --size 3 --singles-per-group 4 --workers 8 --seed 15"
)
inputs=()
for f in $(cd "$root" && find scenarios tests -name '*.json' | sort); do
  grep -q '"trace"\|"generate"' "$root/$f" && inputs+=("$root/$f")
done
k=0
for g in "${gens[@]}"; do
  k=$((k + 1))
  # shellcheck disable=SC2086
  "$after" gen $g > "$tmp/gen-$k.json" || { echo "gen failed: $g"; exit 2; }
  inputs+=("$tmp/gen-$k.json")
done
policies=(file seed head_reservation current)
[ "$quick" = --quick ] && policies=(file)

diffs=0 n=0
for sc in "${inputs[@]}"; do
  name=$(basename "$sc" .json)
  for p in "${policies[@]}"; do
    flag=(--policy "$p"); [ "$p" = file ] && flag=()
    rm -rf "$tmp/a" "$tmp/b"
    "$before" run "$sc" "${flag[@]}" --out "$tmp/a" --outputs events,summary,tasks --quiet >/dev/null 2>&1
    ra=$?
    "$after" run "$sc" "${flag[@]}" --out "$tmp/b" --outputs events,summary,tasks --quiet >/dev/null 2>&1
    rb=$?
    n=$((n + 1))
    if [ $ra -ne $rb ]; then echo "DIFF $name ($p): exit $ra vs $rb"; diffs=$((diffs + 1)); continue; fi
    for f in summary.json tasks.csv events.jsonl; do
      [ -e "$tmp/a/$f" ] || [ -e "$tmp/b/$f" ] || continue
      if ! cmp -s "$tmp/a/$f" "$tmp/b/$f"; then echo "DIFF $name ($p)/$f"; diffs=$((diffs + 1)); fi
    done
  done
done
echo "$n runs ($((${#inputs[@]})) inputs x ${#policies[@]} policies), $diffs differences"
[ $diffs -eq 0 ]
