#!/usr/bin/env bash
# Byte-compare check for the policy layer: runs every scenario of scenarios/ and tests/ under the
# given policies and keeps the outputs, so that two builds can be compared file by file.
#   scripts/policy-outputs.sh DIRSCHED OUT [POLICY ...]   (default: file seed head_reservation; `file` = no
#   --policy flag, the scenario's own scheduler.policy)
# Writes OUT/<scenario path with / as _>/<policy>/ (a run folder, or exit.txt with the exit status and
# stderr of a run that did not complete). Compare two OUT folders with `diff -r` (summary.json:
# see scripts/policy-compare.sh, which leaves out the fields added on purpose).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dirsched=$1; out=$2; shift 2
policies=("$@"); [[ ${#policies[@]} -eq 0 ]] && policies=(file seed head_reservation)
mkdir -p "$out"
cd "$here"
# Every scenario of scenarios/ and tests/ but tests/fuzz/ (the fuzz corpus), whose inputs are
# built to be large (generate-1e8-tasks.json asks for 100M tasks: 23 GB resident, the machine swaps).
for f in $(find scenarios tests -name '*.json' -not -path 'tests/fuzz/*' | sort); do
  grep -q '"trace"\|"generate"' "$f" || continue
  key=${f//\//_}
  for p in "${policies[@]}"; do
    d="$out/$key/$p"; mkdir -p "$(dirname "$d")"
    rm -rf "$d"
    flag=(--policy "$p"); [[ $p == file ]] && flag=()
    "$dirsched" run "$f" "${flag[@]}" --quiet --out "$d" --outputs events,summary,tasks,dag,trace \
      >/dev/null 2>"$out/$key/$p.stderr"; rc=$?
    echo "$rc" > "$out/$key/$p.rc"
    sed -i "s#$here#HERE#g" "$out/$key/$p.stderr"
  done
done
