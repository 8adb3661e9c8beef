#!/usr/bin/env python3
"""Runs spent by optimize's racing, against --no-racing, and how often it drops an equal variant (issue 50).

1. The 70 sets of choose 4 of 8 (scenarios/choose-worker-set.json, as tests/bench/search_vs_sampling.py
   builds it): exhaustive at 5 replicates, then --budget 40 and 20 at 3 and 5 replicates over search seeds
   0..19; for each, the runs summed over the seeds and the seeds whose best is the exhaustive optimum,
   racing and --no-racing.
2. Four variants equal in distribution (a fifth single on one of four interchangeable chips, 10
   replicates), seeds 1, 101, ... (100 of them): the comparisons against the incumbent that dropped a
   variant, with a 95% Wilson interval (each is a paired test at 5%).

Usage: tests/bench/racing_bench.py DIRSCHED
"""
import json
import os
import sys
import tempfile

from optimize_runs import optimize, wilson

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    dirsched = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="dirsched-racing-")
    with open(os.path.join(ROOT, "scenarios", "choose-worker-set.json"), encoding="utf-8") as f:
        doc = json.load(f)
    doc["vars"]["gb"] = {"choose": 4, "from": list(range(8)), "ordered": False}
    space = os.path.join(tmp, "space.json")
    with open(space, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    for racing in ([], ["--no-racing"]):
        o = optimize(dirsched, space, os.path.join(tmp, "all"), "--replicates", "5", *racing, quiet=True)
        print(f"exhaustive, 5 replicates{' --no-racing' if racing else ''}: {o['runs']} runs, "
              f"{o['racing']['dropped']} dropped, best {o['variant']} makespan {o['objective']['makespan']:.6g}")
    truth = o["variant"]
    for reps, budget in ((3, 40), (5, 40), (3, 20)):
        for racing in ([], ["--no-racing"]):
            runs = found = 0
            for seed in range(20):
                o = optimize(dirsched, space, os.path.join(tmp, "s"), "--replicates", str(reps), "--budget", str(budget),
                             "--seed", str(seed), *racing, quiet=True)
                runs += o["runs"]
                found += o["variant"] == truth
            print(f"--budget {budget} --replicates {reps}{' --no-racing' if racing else ''}: {runs} runs over 20 "
                  f"seeds, the optimum found with {found} of 20")
    drops = comparisons = 0
    for k in range(100):
        d = {"name": "fifth-single", "description": "Four interchangeable chips, a 1 s single each, and a fifth on chip $x.",
             "workers": {"next_level": [{"id": i, "kind": "local_chip"} for i in range(4)]},
             "callables": {"k": {"namespace": "LOCAL_CHIP", "duration_s": 1, "jitter": {"kind": "uniform", "rel": 0.3}}},
             "vars": {"x": [0, 1, 2, 3]}, "replicates": 10, "seed": 1 + 100 * k,
             "trace": [{"op": "submit_next_level", "task": "s%d" % i, "callable": "k", "worker": i} for i in range(4)] +
                      [{"op": "submit_next_level", "task": "fifth", "callable": "k", "worker": "$x"}, {"op": "drain"}]}
        path = os.path.join(tmp, "equal.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(d, f)
        o = optimize(dirsched, path, os.path.join(tmp, "equal"), quiet=True)
        drops += o["racing"]["dropped"]
        comparisons += 3  # the first variant is the incumbent; the other three are each compared once
    lo, hi = wilson(drops, comparisons)
    print(f"equal variants: {drops} of {comparisons} comparisons dropped one ({drops / comparisons:.3f}, 95% Wilson "
          f"[{lo:.3f}, {hi:.3f}])")
    return 0


if __name__ == "__main__":
    sys.exit(main())
