"""What the optimize benchmarks share (search_vs_sampling.py, racing_bench.py): one optimize run read back, and
the Wilson score interval they quote a share of seeds with."""
import json
import math
import os
import subprocess


def optimize(dirsched, space, out, *extra, quiet=False):
    """Runs `dirsched optimize SPACE --out OUT EXTRA...` (stdout dropped; stderr too when quiet) and returns
    its optimize.json."""
    subprocess.run([dirsched, "optimize", space, "--out", out, *extra], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL if quiet else None)
    with open(os.path.join(out, "optimize.json"), encoding="utf-8") as f:
        return json.load(f)


def wilson(k, n, z=1.959964):
    """The 95% Wilson score interval of k successes in n."""
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, c - h), min(1.0, c + h)
