#!/usr/bin/env bash
# Symmetry classes end to end (optimize, tests/sweep/choose-spare-chips.json): four spare chips no op
# names make 495 sets fall into 163 classes; one set per class is evaluated and the optimum is the one the
# exhaustive search over all 495 finds (--no-symmetry); two sets of one class measure the same (the
# spares are interchangeable indeed); and a spare an op names is kept apart (255 classes).
set -u
d=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
scn=$src/tests/sweep/choose-spare-chips.json
fail() { echo "FAIL $*"; exit 1; }
field() { python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"o": o}))' "$@"; }

"$d" optimize "$scn" --out "$tmp/sym" --replicates 3 >"$tmp/sym.out" 2>&1 || fail "optimize: $(head -c 400 "$tmp/sym.out")"
grep -q '^symmetry: gb: 495 lists, 163 classes (interchangeable chips: \[8,9,10,11\]' "$tmp/sym.out" ||
  fail "the printed symmetry line: $(grep symmetry "$tmp/sym.out")"
[ "$(field "$tmp/sym/optimize.json" 'o["symmetry"]["classes"], o["evaluations"], o["exhaustive"]')" = "(163, 163, True)" ] ||
  fail "optimize.json symmetry/evaluations: $(field "$tmp/sym/optimize.json" 'o["symmetry"], o["evaluations"]')"

"$d" optimize "$scn" --out "$tmp/all" --replicates 3 --no-symmetry >"$tmp/all.out" 2>&1 || fail "optimize --no-symmetry"
[ "$(field "$tmp/all/optimize.json" 'o["evaluations"]')" = 495 ] || fail "--no-symmetry did not evaluate all 495 sets"
best_sym=$(field "$tmp/sym/optimize.json" 'o["objective"]')
best_all=$(field "$tmp/all/optimize.json" 'o["objective"]')
[ "$best_sym" = "$best_all" ] || fail "the optimum over one set per class ($best_sym) is not the exhaustive one ($best_all)"

# Two sets of one class, one seed: the same summary once chips 8, 9 are swapped with 10, 11 (the
# variant's number and values aside).
for s in '[0,1,8,9]' '[0,1,10,11]'; do
  "$d" run "$scn" --out "$tmp/run$s" --outputs summary --var "gb=$s" --var-any --seed 7 >/dev/null 2>&1 || fail "run gb=$s"
done
python3 - "$tmp/run[0,1,8,9]/summary.json" "$tmp/run[0,1,10,11]/summary.json" <<'PY' || fail "two sets of one class measure differently"
import json, sys
names = {}
for x, y in ((8, 10), (9, 11)):  # a permutation: 8 <-> 10, 9 <-> 11
    for f in (lambda i: i, str, lambda i: "chip%d" % i):
        names[f(x)], names[f(y)] = f(y), f(x)
def rename(v):
    if isinstance(v, dict): return {k: rename(x) for k, x in v.items()}
    if isinstance(v, list): return [rename(x) for x in v]
    return names.get(v, v) if isinstance(v, (int, str)) and not isinstance(v, bool) else v
a, b = (json.load(open(f)) for f in sys.argv[1:])
for o in (a, b):
    del o["vars"], o["variant"]
a = rename(a)
a["workers"].sort(key=lambda w: w["worker"])
sys.exit(0 if a == b else 1)
PY

# A spare an op names is a chip apart: 8, 10, 11 stay interchangeable, 9 does not. The class count,
# counted here by brute force: the 4-sets of 0..11 in `from` order, each class chip renamed position by
# position to the class's smallest unused one (member m runs on the m-th chip).
classes() {
  python3 -c 'import itertools, sys
cl = [int(x) for x in sys.argv[1].split(",")]
def canon(l):
    used = iter(cl)
    return tuple(next(used) if x in cl else x for x in l)
print(len({canon(l) for l in itertools.combinations(range(12), 4)}))' "$1"
}
[ "$(classes 8,9,10,11)" = 163 ] || fail "the brute-force count of the spare classes: $(classes 8,9,10,11)"
python3 - "$scn" "$tmp/named.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["trace"].insert(1, {"op": "submit_next_level", "task": "on9", "callable": "k", "worker": 9})
json.dump(d, open(sys.argv[2], "w"))
PY
"$d" optimize "$tmp/named.json" --out "$tmp/named" --replicates 3 >"$tmp/named.out" 2>&1 || fail "optimize named: $(head -c 300 "$tmp/named.out")"
grep -q "^symmetry: gb: 495 lists, $(classes 8,10,11) classes (interchangeable chips: \[8,10,11\]" "$tmp/named.out" ||
  fail "a named spare was merged: $(grep symmetry "$tmp/named.out")"
echo "ok: 163 classes of 495 sets, the exhaustive optimum, equal measures within a class, a named chip kept apart"
