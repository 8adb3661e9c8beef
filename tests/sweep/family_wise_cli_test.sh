#!/usr/bin/env bash
# Family-wise places end to end: four variants equal in distribution (a fifth single on one of four
# interchangeable chips), 20 replicates, 60 sweeps of seeds 1, 101, 201, ...: sweep declares a
# separation (a place other than 1=) in at most 5% of them (3 of 60), and says which procedure it used.
set -u
d=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp" <<'PY'
import json, sys
d = {"name": "fifth-single", "description": "Four interchangeable chips, a 1 s single each, and a fifth on chip $x.",
     "workers": {"next_level": [{"id": i, "kind": "local_chip"} for i in range(4)]},
     "callables": {"k": {"namespace": "LOCAL_CHIP", "duration_s": 1, "jitter": {"kind": "uniform", "rel": 0.3}}},
     "vars": {"x": [0, 1, 2, 3]}, "replicates": 20, "seed": "SEED",
     "trace": [{"op": "submit_next_level", "task": "s%d" % i, "callable": "k", "worker": i} for i in range(4)] +
              [{"op": "submit_next_level", "task": "fifth", "callable": "k", "worker": "$x"}, {"op": "drain"}]}
for k in range(60):
    d["seed"] = 1 + 100 * k
    json.dump(d, open("%s/f%d.json" % (sys.argv[1], k), "w"))
PY
separated=0
for k in $(seq 0 59); do
  if ! "$d" sweep "$tmp/f$k.json" --out "$tmp/o$k" --outputs summary >"$tmp/out" 2>"$tmp/err"; then
    echo "FAIL sweep $k: $(head -c 400 "$tmp/err")"; exit 1
  fi
  places=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(max(v["rank"] for v in r["ranking"]), r["places"]["procedure"])' "$tmp/o$k/ranking.json")
  [[ "$places" == *" holm" ]] || { echo "FAIL sweep $k: ranking.json places: $places"; exit 1; }
  [[ "${places%% *}" == 1 ]] || separated=$((separated + 1))
done
grep -q "Holm's step-down procedure" "$tmp/out" || { echo "FAIL the printed ranking does not name Holm: $(head -3 "$tmp/out")"; exit 1; }
echo "equal variants: a separation declared in $separated of 60 sweeps"
[[ $separated -le 3 ]] || { echo "FAIL more than 5% of the sweeps separated equal variants"; exit 1; }
