#!/usr/bin/env bash
# Evaluations per second of `dirsched optimize` against the per-variant cost of `dirsched sweep`, in
# one run on one scenario: 100 tasks on 8 chips, two groups (A on [0-3], B on a worker set of 4 chosen
# from 8: 70 variants) and 98 singles. Then the same scenario with 20% jitter and 20 replicates (1,400
# evaluations) on the event engine (the default for a durations-only scenario) against the SimGrid pool
# (forced by a --cfg that changes nothing: the default network model), with the same answer.
# Usage: optimize_bench.sh path/to/dirsched [JOBS]
# Not a ctest (a speed target is a benchmark): run it by hand; about 30 s on 2 cores.
set -eu
d=$1
jobs=${2:-2}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp/bench.json" <<'PY'
import json, sys
trace = [{"op": "submit_next_level_group", "task": "A", "callable": "g", "workers": [0, 1, 2, 3],
          "args_list": [[], [], [], []]}]
for i in range(98):
    trace.append({"op": "submit_next_level", "task": "s%02d" % i, "callable": "k", "worker": (i * 3) % 8,
                  **({"args": [{"buffer": "c%d" % (i % 4), "tag": "INOUT"}]} if i % 2 else {})})
    if i == 20:
        trace.append({"op": "submit_next_level_group", "task": "B", "callable": "g", "workers": "$gb",
                      "args_list": [[], [], [], []]})
trace.append({"op": "drain"})
json.dump({"name": "optimize-bench", "workers": {"next_level": [{"id": i, "kind": "local_chip"} for i in range(8)]},
           "callables": {"g": {"namespace": "LOCAL_CHIP", "duration_s": 2},
                         "k": {"namespace": "LOCAL_CHIP", "duration_s": 0.25}},
           "buffers": {"c%d" % i: {"bytes": 0} for i in range(4)},
           "vars": {"gb": {"choose": 4, "from": list(range(8))}},
           "trace": trace}, open(sys.argv[1], "w"))
PY
python3 - "$tmp/bench.json" "$tmp/jitter.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["callables"].values():
    c["jitter"] = {"kind": "uniform", "rel": 0.2}
d["replicates"] = 20
json.dump(d, open(sys.argv[2], "w"))
PY
now() { date +%s.%N; }
t0=$(now)
"$d" optimize "$tmp/bench.json" --out "$tmp/opt" -j "$jobs" --budget 70 >"$tmp/opt.out"
t1=$(now)
"$d" sweep "$tmp/bench.json" --out "$tmp/sweep" -j "$jobs" >"$tmp/sweep.out"
t2=$(now)
python3 - "$t0" "$t1" "$t2" "$tmp/opt/optimize.json" <<'PY'
import json, sys
t0, t1, t2 = map(float, sys.argv[1:4])
o = json.load(open(sys.argv[4]))
n = o["evaluations"]
opt, sw = n / (t1 - t0), 70 / (t2 - t1)
print("optimize: %d evaluations in %.2f s: %.1f evaluations/s (whole command, parse included)" % (n, t1 - t0, opt))
print("sweep:    70 variants in %.2f s: %.1f variants/s (run folders, pictures, ranking)" % (t2 - t1, sw))
print("ratio:    %.1fx; target >= 500 evaluations/s and >= 20x" % (opt / sw))
PY
t3=$(now)
"$d" optimize "$tmp/jitter.json" --out "$tmp/ev" -j "$jobs" --budget 70 >/dev/null
t4=$(now)
"$d" optimize "$tmp/jitter.json" --out "$tmp/sg" -j "$jobs" --budget 70 --cfg=network/model:LV08 >/dev/null
t5=$(now)
python3 - "$t3" "$t4" "$t5" "$tmp/ev/optimize.json" "$tmp/sg/optimize.json" <<'PY'
import json, sys
t3, t4, t5 = map(float, sys.argv[1:4])
ev, sg = (json.load(open(p)) for p in sys.argv[4:6])
runs = ev["evaluations"] * 20
print("replicated: %d runs: event engine %.2f s (%.0f runs/s), SimGrid pool %.2f s (%.0f runs/s): %.1fx" %
      (runs, t4 - t3, runs / (t4 - t3), t5 - t4, runs / (t5 - t4), (t5 - t4) / (t4 - t3)))
same = ev["best"] == sg["best"] and ev["objective"] == sg["objective"] and ev["pareto"] == sg["pareto"]
print("same answer (best, objective, Pareto set):", "yes" if same else "NO")
sys.exit(0 if same else 1)
PY
