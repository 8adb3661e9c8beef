#!/usr/bin/env bash
# The event engine (eventsim/, run --engine event) against SimGrid: on every shipped scenario it can run
# (tests/sim/, each under its own policy and with DIRSCHED_RECLAIM=off; scenarios/ in the scenario matrix,
# tests/sim/matrix_test.py) and on generated
# traces with jitter and several seeds, events.jsonl and tasks.csv are byte-identical and summary.json
# differs only in "engine". A scenario it cannot run is refused (exit 2) naming the JSON path.
set -u
dirsched=$1
root=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL $*"; fail=1; }
same=0 refused=0

# compare_one NAME FILE [run args...]: both engines, the same outputs.
compare_one() {
  local name=$1 file=$2
  shift 2
  rm -rf "$tmp/sim" "$tmp/ev"
  "$dirsched" run "$file" --out "$tmp/sim" --outputs events,summary,tasks "$@" >/dev/null 2>"$tmp/err.sim" || return 0
  if ! "$dirsched" run "$file" --out "$tmp/ev" --outputs events,summary,tasks --engine event "$@" >/dev/null 2>"$tmp/err.ev"; then
    grep -q "needs SimGrid: the event engine cannot run it" "$tmp/err.ev" && { refused=$((refused + 1)); return 0; }
    no "$name: the event engine failed: $(cat "$tmp/err.ev")"
    return 0
  fi
  for f in events.jsonl tasks.csv; do
    cmp -s "$tmp/sim/$f" "$tmp/ev/$f" || { no "$name: $f differs"; diff "$tmp/sim/$f" "$tmp/ev/$f" | head -4; return 0; }
  done
  python3 - "$tmp/sim/summary.json" "$tmp/ev/summary.json" <<'PY' || { no "$name: summary.json differs"; return 0; }
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a.pop("engine") == "sim" and b.pop("engine") == "event"
sys.exit(0 if a == b else 1)
PY
  same=$((same + 1))
}

for f in "$root"/tests/sim/*.json; do  # scenarios/: the matrix (tests/sim/matrix_test.py, ctest scenario.NAME)
  compare_one "$(basename "$f")" "$f"
  DIRSCHED_RECLAIM=off compare_one "$(basename "$f") (no reclaim)" "$f"
done
# Generated traces: every family, with jitter drawn from the seed, under two seeds.
for fam in "stream --tasks 2000" "fork-join --rounds 20" "chains --length 30" "tp-groups --groups 40" \
           "random --tasks 400 --group-fraction 0.2"; do
  read -ra a <<<"$fam"
  "$dirsched" gen "${a[@]}" --workers 8 --arrival-rate 2000 >"$tmp/gen.json" 2>/dev/null || { no "gen $fam"; continue; }
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); [c.update({'jitter': {'kind': 'uniform', 'rel': 0.3}}) for c in d['callables'].values()]; json.dump(d, open(sys.argv[1], 'w'))" "$tmp/gen.json"
  for seed in 1 7; do compare_one "gen $fam seed $seed" "$tmp/gen.json" --seed "$seed"; done
done
((same >= 12)) || no "only $same runs compared: the test no longer reaches its traces"

# Refused, naming the path; nothing written.
"$dirsched" run "$root/scenarios/quick-tour.json" --out "$tmp/q" --engine event >"$tmp/out" 2>&1
[[ $? == 2 && ! -e $tmp/q ]] && grep -q "quick-tour.json: faults\[0\]: a fault needs SimGrid" "$tmp/out" ||
  { no "refusal"; cat "$tmp/out"; }
"$dirsched" run "$root/scenarios/group-starvation.json" --out "$tmp/c" --engine event --cfg=network/model:CM02 >"$tmp/out" 2>&1
[[ $? == 2 ]] && grep -q "does not apply to --engine event" "$tmp/out" || { no "--cfg refused"; cat "$tmp/out"; }

echo "event engine: $same runs identical to SimGrid's, $refused refused (they need SimGrid)"
exit $fail
