#!/usr/bin/env python3
"""Does optimize's budgeted search beat a random sample of its budget? (issue 50)

The space: scenarios/choose-worker-set.json with B's workers a `choose 4 of 8` variable (70 sets), 3
replicates per evaluation. The truth is optimize's exhaustive answer (all 70 sets, the same replicates);
then optimize --budget B --seed S for S = 0..SEEDS-1 and the count of seeds whose best is the truth. A
random sample of B distinct sets of the 70 holds the truth with probability B / 70 (hypergeometric, one
success); the script prints it beside the search's rate, with a 95% Wilson interval on the rate.

Usage: tests/bench/search_vs_sampling.py DIRSCHED [BUDGET...]   (default budgets: 20 40; 20 seeds)
       tests/bench/search_vs_sampling.py --check DIRSCHED   (bench.search-vs-sampling: exit 1 unless the
       search finds the optimum with at least 18 of the 20 seeds at budget 40, issue 50's 90%)
"""
import json
import os
import sys
import tempfile

from optimize_runs import optimize, wilson

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEEDS = 20


def main():
    args = sys.argv[1:]
    check = args[:1] == ["--check"]
    if check:
        args = args[1:]
    dirsched = args[0]
    budgets = [40] if check else [int(b) for b in args[1:]] or [20, 40]
    tmp = tempfile.mkdtemp(prefix="dirsched-search-")
    with open(os.path.join(ROOT, "scenarios", "choose-worker-set.json"), encoding="utf-8") as f:
        doc = json.load(f)
    doc["vars"]["gb"] = {"choose": 4, "from": list(range(8)), "ordered": False}
    space = os.path.join(tmp, "space.json")
    with open(space, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    truth = optimize(dirsched, space, os.path.join(tmp, "all"), "--replicates", "3")
    assert truth["exhaustive"], "the 70 sets must fit the default budget"
    size = truth["evaluations"]
    print(f"truth: variant {truth['variant']} {truth['best']} (exhaustive, {size} sets, 3 replicates)")
    for budget in budgets:
        found, evals = 0, []
        for seed in range(SEEDS):
            got = optimize(dirsched, space, os.path.join(tmp, f"b{budget}-s{seed}"), "--replicates", "3",
                           "--budget", str(budget), "--seed", str(seed))
            found += got["variant"] == truth["variant"]
            evals.append(got["evaluations"])
        lo, hi = wilson(found, SEEDS)
        print(f"budget {budget}: search found it with {found} of {SEEDS} seeds ({found / SEEDS:.2f}, 95% Wilson "
              f"[{lo:.2f}, {hi:.2f}]; {min(evals)}-{max(evals)} evaluations); a random sample of {budget} holds it "
              f"with probability {min(budget, size) / size:.2f}")
        if check and found < 18:
            print(f"FAIL the search found the optimum with {found} of {SEEDS} seeds at budget {budget}, fewer than 18")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
