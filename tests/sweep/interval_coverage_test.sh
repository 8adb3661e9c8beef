#!/usr/bin/env bash
# Interval coverage on a shipped scenario against a held-out truth: choose-worker-set.json's sets
# [0,1,2,3] and [4,5,6,7], 2000 replicates each; the truth of each metric is its mean over all 2000.
# Then 99 disjoint groups of 20 replicates (replicate 0, the variant folder, and 19 of the others) are
# ranked by `sweep --collect` as 20-replicate sweeps, and the share of their 95% intervals that hold the
# truth is counted per metric, with the method ranking.json names. Prints every figure; fails when an
# interval goes below 0 or when makespan (Student t) or the bootstrap's metrics cover less than 88%.
set -u
d=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$root/scenarios/choose-worker-set.json" "$tmp/two.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["vars"]["gb"] = [[0, 1, 2, 3], [4, 5, 6, 7]]
json.dump(d, open(sys.argv[2], "w"))
PY
"$d" sweep "$tmp/two.json" --out "$tmp/all" --outputs summary --replicates 2000 >/dev/null 2>"$tmp/err" ||
  { echo "FAIL the 2000-replicate sweep: $(head -c 400 "$tmp/err")"; exit 1; }
python3 - "$d" "$tmp" <<'PY'
import json, os, shutil, subprocess, sys
d, tmp = sys.argv[1], sys.argv[2]
lines = open(os.path.join(tmp, "all", "replicates.jsonl")).read().splitlines()
rows = [json.loads(l) for l in lines[1:]]
by = {}
for r in rows:
    by.setdefault(r["variant"], {})[r["replicate"]] = r
metrics = ["makespan", "idle_target_wait", "group_wait_max", "group_wait_p95", "group_wait_sum",
           "overtakes", "single_wait_mean", "single_wait_p95", "single_wait_max"]
full = json.load(open(os.path.join(tmp, "all", "ranking.json")))
truth = {(v["variant"], m): v["metrics"][m]["mean"] for v in full["ranking"] for m in metrics}
hits, count, methods, below = {}, 0, {}, 0
for g in range(99):
    folder = os.path.join(tmp, "g")
    if os.path.exists(folder):
        shutil.rmtree(folder)
    shutil.copytree(os.path.join(tmp, "all"), folder)
    os.remove(os.path.join(folder, "replicates.jsonl"))
    pick = range(1 + 19 * g, 20 + 19 * g)
    text = json.dumps({"dirsched": "replicates", "replicates": 20, "seeds": list(range(20))}) + "\n"
    for v in sorted(by):
        for k, r in enumerate(pick, start=1):
            text += json.dumps({"variant": v, "replicate": k, "seed": k, "metrics": by[v][r]["metrics"]}) + "\n"
    open(os.path.join(folder, "replicates.jsonl"), "w").write(text)
    subprocess.run([d, "sweep", "--collect", folder], check=True, stdout=subprocess.DEVNULL)
    rk = json.load(open(os.path.join(folder, "ranking.json")))
    for v in rk["ranking"]:
        for m in metrics:
            s = v["metrics"][m]
            hits[m] = hits.get(m, 0) + (s["ci_low"] <= truth[(v["variant"], m)] <= s["ci_high"])
            below += s["ci_low"] < 0
    for m in metrics:  # the rule is per sweep: a group's data may pick another method
        methods.setdefault(m, set()).add(rk["intervals"]["by_metric"][m])
    count += len(rk["ranking"])
fail = below > 0
for m in metrics:
    share = hits[m] / count
    method = "/".join(sorted(methods[m]))
    print("%-17s %-18s coverage %.3f (%d of %d intervals of 20 replicates)" % (m, method, share, hits[m], count))
    degenerate = all(truth[(v, m)] == 0 for v in by)  # never other than 0: every interval is [0, 0]
    if not degenerate and share < 0.88 and (m == "makespan" or "bootstrap" in methods[m]):
        print("FAIL %s covers %.3f" % (m, share))
        fail = True
if below:
    print("FAIL %d intervals below 0" % below)
sys.exit(1 if fail else 0)
PY
