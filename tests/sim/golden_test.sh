#!/usr/bin/env bash
# Outputs pinned byte for byte: summary.json, tasks.csv and events.jsonl of small generate blocks (every
# family, arrivals, a host fault with failures, poison and not-submitted tasks) and of some shipped
# scenarios, against the files the build before issue 15's streaming work wrote (golden/NAME/). The
# streaming recorder, the lazy generator and tasks.csv written as tasks retire must change none of it.
# Usage: golden_test.sh DIRSCHED REPO
set -u
dirsched=$1
repo=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for expected in "$here"/golden/*/; do
  name=$(basename "$expected")
  scenario="$here/golden/$name.json"
  [ -f "$scenario" ] || scenario="$repo/scenarios/$name.json"
  "$dirsched" run "$scenario" --out "$tmp/$name" --outputs events,summary,tasks >/dev/null ||
    { echo "FAIL $name: run exited $?"; fail=1; continue; }
  for f in summary.json tasks.csv events.jsonl; do
    cmp -s "$expected/$f" "$tmp/$name/$f" ||
      { echo "FAIL $name/$f differs from the pinned file"; diff "$expected/$f" "$tmp/$name/$f" | head -5; fail=1; }
  done
  # Asked for alone, summary.json is the same file (the run keeps no events then).
  "$dirsched" run "$scenario" --out "$tmp/$name-summary" --outputs summary >/dev/null
  cmp -s "$expected/summary.json" "$tmp/$name-summary/summary.json" ||
    { echo "FAIL $name: summary.json alone differs"; fail=1; }
done
[ "$fail" = 0 ] && echo "golden outputs: all identical"
exit "$fail"
