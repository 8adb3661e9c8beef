#!/usr/bin/env bash
# Whole-run speed: the full simulator (`dirsched run --outputs summary` on a `generate` stream) against
# raw_simgrid_stream (bare SimGrid message passing of the same workload), alternating, same machine.
# Usage: tests/bench/stream_vs_raw.sh [BUILD_DIR] [REPEATS]. Prints one row per size:
#   tasks workers  ours_s raw_s  ours_tasks_per_s raw_tasks_per_s ratio  ours_peak_rss_mib
set -euo pipefail
build=${1:-build}
repeats=${2:-3}
dirsched=$build/bin/dirsched
raw=$build/bin/raw_simgrid_stream
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
wall() {  # command... -> "seconds kib"
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" >/dev/null 2>&1
  cat "$tmp/time"
}
printf "%8s %7s %8s %8s %12s %12s %6s %8s\n" tasks workers ours_s raw_s ours_t/s raw_t/s ratio rss_MiB
for size in "10000 64" "100000 64" "${BIG:-1000000 1024}"; do
  read -r n w <<<"$size"
  cat >"$tmp/s.json" <<JSON
{ "name": "stream-$n", "generate": { "family": "stream", "tasks": $n, "workers": $w, "duration_s": 0.001 } }
JSON
  : >"$tmp/ours"
  : >"$tmp/raw"
  : >"$tmp/rss"
  for _ in $(seq "$repeats"); do
    read -r s kib < <(wall "$dirsched" run "$tmp/s.json" --out "$tmp/out" --outputs summary)
    echo "$s" >>"$tmp/ours"
    echo "$kib" >>"$tmp/rss"
    read -r s _ < <(wall "$raw" "$n" "$w" 0.001)
    echo "$s" >>"$tmp/raw"
  done
  ours=$(median <"$tmp/ours")
  rawm=$(median <"$tmp/raw")
  rss=$(median <"$tmp/rss")
  awk -v n="$n" -v w="$w" -v o="$ours" -v r="$rawm" -v k="$rss" 'BEGIN {
    printf "%8d %7d %8.2f %8.2f %12.0f %12.0f %6.2f %8.0f\n", n, w, o, r, n / o, n / r, r / o, k / 1024 }'
done
