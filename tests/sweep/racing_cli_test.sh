#!/usr/bin/env bash
# Racing over replications end to end (optimize): on choose-worker-set's six sets at 5 replicates, some
# sets are dropped after 3, fewer runs are spent, and the answer (best, its means, its intervals) is the
# one every set run in full gives; on four variants equal in distribution (a fifth single on one of four
# interchangeable chips), none is dropped (a drop needs a paired Holm test to separate it).
set -u
d=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL $*"; exit 1; }
field() { python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"o": o}))' "$@"; }

scn=$src/scenarios/choose-worker-set.json
"$d" optimize "$scn" --out "$tmp/race" --replicates 5 >"$tmp/race.out" 2>&1 || fail "optimize: $(head -c 300 "$tmp/race.out")"
"$d" optimize "$scn" --out "$tmp/full" --replicates 5 --no-racing >"$tmp/full.out" 2>&1 || fail "optimize --no-racing"
dropped=$(field "$tmp/race/optimize.json" 'o["racing"]["dropped"]')
[ "$dropped" -gt 0 ] || fail "racing dropped no set of choose-worker-set"
[ "$(field "$tmp/race/optimize.json" 'o["runs"] == o["racing"]["runs_without_racing"] - 2 * '"$dropped"'')" = True ] ||
  fail "runs: $(field "$tmp/race/optimize.json" 'o["runs"], o["racing"]')"
for k in variant objective objective_ci; do
  [ "$(field "$tmp/race/optimize.json" "o['$k']")" = "$(field "$tmp/full/optimize.json" "o['$k']")" ] || fail "$k differs from --no-racing"
done
grep -q "dropped after 3 (racing)" "$tmp/race.out" || fail "the printed line: $(head -1 "$tmp/race.out")"
[ "$(field "$tmp/full/optimize.json" 'o["racing"]["applied"], o["racing"]["dropped"]')" = "(False, 0)" ] || fail "--no-racing raced"

python3 - "$tmp/equal.json" <<'PY'
import json, sys
d = {"name": "fifth-single", "description": "Four interchangeable chips, a 1 s single each, and a fifth on chip $x.",
     "workers": {"next_level": [{"id": i, "kind": "local_chip"} for i in range(4)]},
     "callables": {"k": {"namespace": "LOCAL_CHIP", "duration_s": 1, "jitter": {"kind": "uniform", "rel": 0.3}}},
     "vars": {"x": [0, 1, 2, 3]}, "replicates": 10, "seed": 1,
     "trace": [{"op": "submit_next_level", "task": "s%d" % i, "callable": "k", "worker": i} for i in range(4)] +
              [{"op": "submit_next_level", "task": "fifth", "callable": "k", "worker": "$x"}, {"op": "drain"}]}
json.dump(d, open(sys.argv[1], "w"))
PY
"$d" optimize "$tmp/equal.json" --out "$tmp/equal" >"$tmp/equal.out" 2>&1 || fail "optimize equal: $(head -c 300 "$tmp/equal.out")"
[ "$(field "$tmp/equal/optimize.json" 'o["racing"]["applied"], o["racing"]["dropped"]')" = "(True, 0)" ] ||
  fail "equal variants were dropped: $(field "$tmp/equal/optimize.json" 'o["racing"]')"
echo "ok: $dropped of 6 sets dropped, the --no-racing answer kept; no equal variant dropped"
