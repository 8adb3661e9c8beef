#!/usr/bin/env bash
# Set-up and memory of optimize and sweep on large `choose` spaces (issue 50, "spaces that stream"):
#   optimize: choose-worker-set's group B on `choose 4 of 64` chips (635,376 lists), --budget 200,
#             --replicates 1 (target: within 60 s and 1 GiB);
#   sweep:    `choose 3 of 32` chips (4,960 variants), --replicates 1, summary outputs only.
# Each under /usr/bin/time -v: wall time and maximum resident set size.
# Usage: tests/bench/space_stream_bench.sh DIRSCHED
set -eu
d=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$root/scenarios/choose-worker-set.json" "$tmp" <<'PY'
import json, sys
base = json.load(open(sys.argv[1]))
for n, k, name in ((64, 4, "c64"), (32, 3, "c32")):
    d = json.loads(json.dumps(base))
    d["workers"]["next_level"] = [{"id": i, "kind": "local_chip"} for i in range(n)]
    d["vars"]["gb"] = {"choose": k, "from": list(range(n)), "ordered": False}
    if k == 3:  # B takes three chips
        for op in d["trace"]:
            if op.get("task") == "B":
                op["args_list"] = op["args_list"][:3]
    json.dump(d, open(f"{sys.argv[2]}/{name}.json", "w"))
PY
measure() {  # LABEL COMMAND...
  local label=$1
  shift
  /usr/bin/time -v "$@" >"$tmp/out" 2>"$tmp/time" || { echo "FAIL $label: exit $?"; tail -3 "$tmp/time"; return 1; }
  local wall rss
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tmp/time")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time")
  echo "$label: wall $wall, max RSS $((rss / 1024)) MiB"
}
measure "optimize choose 4 of 64, budget 200" "$d" optimize "$tmp/c64.json" --out "$tmp/o64" --budget 200 --replicates 1
measure "sweep choose 3 of 32 (4,960 variants)" "$d" sweep "$tmp/c32.json" --out "$tmp/s32" --replicates 1 --outputs summary
