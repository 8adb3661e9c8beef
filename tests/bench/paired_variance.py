#!/usr/bin/env python3
"""How much pairing buys: the variance of paired differences against the unpaired one, on the shipped
sweep scenarios, for two dirsched binaries (say, before and after the draws keyed by identity).

For every pair of variants (a, b) of a sweep of N replicates (seeds 0..N-1, the same for every
variant), the ratio var(a_i - b_i) / (var(a_i) + var(b_i)) on makespan: 1 when the replicates of two
variants are independent, below 1 when common random numbers correlate them positively (the smaller,
the fewer replicates a paired comparison needs: N x ratio runs give the unpaired width). Pairs whose
makespans never differ (equal variants) are left out. Prints, per binary, scenario and N, the median,
smallest and largest ratio over the pairs, how many pairs exceed 1 (a negative correlation), and the
pair the docs follow, variants 0 and 2 of choose-worker-set ([4,5,6,7] against [0,1,2,3]).

Scenarios: scenarios/choose-worker-set.json (6 worker sets, 20% uniform jitter) and
scenarios/sweep-group-worker-set.json with a 20% uniform jitter on its callable (it ships without one:
then every ratio is 0/0).

Usage: tests/bench/paired_variance.py BEFORE_BIN AFTER_BIN [N...]   (default N: 20 50 200)
"""
import csv
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def scenarios(tmp):
    yield "choose-worker-set", os.path.join(ROOT, "scenarios", "choose-worker-set.json")
    with open(os.path.join(ROOT, "scenarios", "sweep-group-worker-set.json"), encoding="utf-8") as f:
        s = json.load(f)
    for c in s["callables"].values():
        c["jitter"] = {"kind": "uniform", "rel": 0.2}
    path = os.path.join(tmp, "sweep-group-worker-set-jitter.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(s, f)
    yield "sweep-group-worker-set + 20% jitter", path


def ratios(binary, scenario, n, out):
    subprocess.run([binary, "sweep", scenario, "--out", out, "--replicates", str(n), "-j", "2"], check=True,
                   stdout=subprocess.DEVNULL)
    by_variant = {}
    with open(os.path.join(out, "sweep.csv"), encoding="utf-8") as f:
        for row in csv.DictReader(f):
            by_variant.setdefault(int(row["variant"]), {})[int(row["replicate"])] = float(row["makespan_s"])
    got = {}
    for a, b in itertools.combinations(sorted(by_variant), 2):
        xa = [by_variant[a][r] for r in range(n)]
        xb = [by_variant[b][r] for r in range(n)]
        diff = [p - q for p, q in zip(xa, xb)]
        unpaired = statistics.variance(xa) + statistics.variance(xb)
        if max(abs(d) for d in diff) == 0 or unpaired == 0:
            continue
        got[(a, b)] = statistics.variance(diff) / unpaired
    return got


def main():
    binaries = {"before": sys.argv[1], "after": sys.argv[2]}
    ns = [int(x) for x in sys.argv[3:]] or [20, 50, 200]
    tmp = tempfile.mkdtemp(prefix="dirsched-paired-")
    print("binary  scenario                              N   pairs  median  min     max    >1  v0-v2")
    for label, binary in binaries.items():
        for name, path in scenarios(tmp):
            for n in ns:
                got = ratios(binary, path, n, os.path.join(tmp, f"{label}-{len(name)}-{n}"))
                r = list(got.values())
                key = f"{got[(0, 2)]:.3f}" if (0, 2) in got else "-"
                print(f"{label:7} {name:37} {n:3} {len(r):6}  {statistics.median(r):.3f}   {min(r):.3f}   {max(r):.3f}"
                      f"  {sum(x > 1 for x in r):2}  {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
