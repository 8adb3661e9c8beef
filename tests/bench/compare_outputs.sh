#!/usr/bin/env bash
# Runs every shipped scenario (scenarios/*.json) with two dirsched binaries and compares summary.json,
# tasks.csv and events.jsonl byte for byte (metrics.json and the pictures hold wall times and are left
# out). Exit 0 when every file is identical, 1 otherwise (naming each difference).
# Usage: tests/bench/compare_outputs.sh BEFORE_BIN AFTER_BIN [SCENARIO...]
#   ENV_B="DIRSCHED_X=1" adds environment to the second binary's runs only.
set -u
before=$1 after=$2
shift 2
root=$(cd "$(dirname "$0")/../.." && pwd)
scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=("$root"/scenarios/*.json)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
diffs=0 n=0
for sc in "${scenarios[@]}"; do
  name=$(basename "$sc" .json)
  "$before" run "$sc" --out "$tmp/a-$name" --outputs events,summary,tasks --quiet >/dev/null 2>"$tmp/a.err"
  ra=$?
  env ${ENV_B:-} "$after" run "$sc" --out "$tmp/b-$name" --outputs events,summary,tasks --quiet >/dev/null 2>"$tmp/b.err"
  rb=$?
  n=$((n + 1))
  if [ $ra -ne $rb ]; then echo "DIFF $name: exit $ra vs $rb"; diffs=$((diffs + 1)); continue; fi
  for f in summary.json tasks.csv events.jsonl; do
    [ -e "$tmp/a-$name/$f" ] || [ -e "$tmp/b-$name/$f" ] || continue
    if ! cmp -s "$tmp/a-$name/$f" "$tmp/b-$name/$f"; then
      echo "DIFF $name/$f"
      diffs=$((diffs + 1))
    fi
  done
done
echo "$n scenarios, $diffs differences"
[ $diffs -eq 0 ]
