#!/usr/bin/env bash
# Pictures never block the data (issue 24): wall time of a whole `dirsched run` with every output
# (data files and pictures) on seeded random DAGs, against the targets:
#   20,000 random tasks on 64 workers: every output in <= 15 s
#    1,000 random tasks on  8 workers: every output in <= 2 s
# and the same run's phases from metrics.json (load, simulate, write, pictures). cpu_s (user + system,
# the forked layout children included) shows what the machine's load hides in wall_s.
# Usage: tests/bench/pictures_bench.sh [BUILD_DIR] [REPEATS]. One row per size (median of REPEATS).
set -euo pipefail
build=${1:-build}
repeats=${2:-3}
dirsched=$build/bin/dirsched
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pictures-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
printf "%7s %7s %8s %7s %7s  %-58s %s\n" tasks workers wall_s cpu_s target phases_s "dag.svg"
for size in "1000 8 2" "20000 64 15"; do
  read -r n w target <<<"$size"
  "$dirsched" gen random --tasks "$n" --workers "$w" --seed 1 >"$tmp/s.json"
  walls=() cpus=()
  for _ in $(seq "$repeats"); do
    rm -rf "$tmp/out"
    /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$dirsched" run "$tmp/s.json" --out "$tmp/out" --quiet >/dev/null
    read -r w_s u_s s_s <"$tmp/time"
    walls+=("$w_s")
    cpus+=("$(awk -v u="$u_s" -v s="$s_s" 'BEGIN {printf "%.2f", u + s}')")
  done
  wall=$(printf "%s\n" "${walls[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  cpu=$(printf "%s\n" "${cpus[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  phases=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(" ".join("%s=%.2f" % kv for kv in m["phases_s"].items()))' "$tmp/out/metrics.json")
  dag=$(python3 -c 'import json,sys; n=[x for x in json.load(open(sys.argv[1])).get("notes", []) if x.startswith("dag.svg")]; print(n[0].split(":")[0] if n else "full")' "$tmp/out/summary.json")
  verdict=$(awk -v a="$wall" -v b="$target" 'BEGIN {print (a <= b) ? "ok" : "OVER"}')
  printf "%7s %7s %8s %7s %5s %s  %-58s %s\n" "$n" "$w" "$wall" "$cpu" "$target" "$verdict" "$phases" "$dag"
done
