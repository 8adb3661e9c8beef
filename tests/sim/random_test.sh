#!/usr/bin/env bash
# Random DAGs from `dirsched gen random` (groups, singles, dependencies) on the SimGrid driver, with
# the invariant checker on: every seed must run clean, and run the same twice.
set -u
dirsched=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for seed in $(seq 1 12); do
  "$dirsched" gen random --seed "$seed" --tasks 60 --workers 5 --edges 2 --group-fraction 0.3 >"$tmp/s.json"
  for i in 1 2; do
    "$dirsched" run "$tmp/s.json" --out "$tmp/r$i" --outputs events,summary --check-invariants >/dev/null 2>"$tmp/err" ||
      { echo "FAIL seed $seed:"; cat "$tmp/err"; fail=1; }
  done
  cmp -s "$tmp/r1/events.jsonl" "$tmp/r2/events.jsonl" || { echo "FAIL seed $seed: two runs differ"; fail=1; }
  grep -q '"outcome": "COMPLETED"' "$tmp/r1/summary.json" || { echo "FAIL seed $seed: not COMPLETED"; fail=1; }
done
[[ $fail -eq 0 ]] && echo "random DAGs: 12 seeds clean and reproducible"
exit $fail
