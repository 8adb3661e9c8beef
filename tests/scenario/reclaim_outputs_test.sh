#!/usr/bin/env bash
# Slot reclamation changes no output: every shipped scenario (its expect block taken out, since an
# expect block turns reclamation off) and generated workloads with dependencies, failures and groups
# run with the core reclaiming ended tasks (the default) and with DIRSCHED_RECLAIM=off; summary.json,
# tasks.csv and events.jsonl must be byte-identical.
# Usage: reclaim_outputs_test.sh DIRSCHED_BIN SOURCE_DIR
set -euo pipefail
bin=$1 src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/in"
ln -s "$src/platforms" "$tmp/platforms"
for f in "$src"/scenarios/*.json; do
  python3 - "$f" "$tmp/in/$(basename "$f")" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d.pop("expect", None)
json.dump(d, open(sys.argv[2], "w"))
PY
done
"$bin" gen random --seed 3 --tasks 3000 --workers 6 --edges 3 --group-fraction 0.2 >"$tmp/in/gen-random.json"
"$bin" gen chains --workers 4 --chains 40 --length 60 --interval 0.0001 >"$tmp/in/gen-chains.json"
"$bin" gen fork-join --workers 8 --rounds 300 >"$tmp/in/gen-fork-join.json"
"$bin" gen tp-groups --workers 8 --groups 800 --size 4 >"$tmp/in/gen-tp-groups.json"
# A fail in the middle of a dependency chain with fail-fast off: poisoned consumers, failed last writers.
python3 - "$tmp/in/gen-random.json" "$tmp/in/gen-random-fail.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d.setdefault("scheduler", {})["fail_fast"] = False
n = 0
for op in d["trace"]:
    if op.get("op", "").startswith("submit") and "task" in op:
        n += 1
        if n % 97 == 0:
            op["fail"] = True if op["op"] in ("submit_next_level", "submit_sub") else [True] * len(op.get("args_list", [[]]))
json.dump(d, open(sys.argv[2], "w"))
PY
diffs=0 n=0
for f in "$tmp"/in/*.json; do
  name=$(basename "$f" .json)
  set +e
  "$bin" run "$f" --out "$tmp/on-$name" --outputs events,summary,tasks --quiet >/dev/null 2>"$tmp/on.err"
  a=$?
  DIRSCHED_RECLAIM=off "$bin" run "$f" --out "$tmp/off-$name" --outputs events,summary,tasks --quiet >/dev/null 2>"$tmp/off.err"
  b=$?
  set -e
  n=$((n + 1))
  if [ $a -ne $b ] || [ $a -ge 2 ]; then
    echo "FAIL $name: exit $a (reclaiming) vs $b (not)"; cat "$tmp/on.err" "$tmp/off.err"; diffs=$((diffs + 1)); continue
  fi
  for out in summary.json tasks.csv events.jsonl; do
    if ! cmp -s "$tmp/on-$name/$out" "$tmp/off-$name/$out"; then
      echo "FAIL $name/$out differs with reclamation"; diffs=$((diffs + 1))
    fi
  done
done
echo "$n scenarios, $diffs differences"
[ $diffs -eq 0 ]
