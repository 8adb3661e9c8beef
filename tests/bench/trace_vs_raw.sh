#!/usr/bin/env bash
# Issue 15's trace-file target: 1M independent tasks on 1,024 workers read from a trace file (`dirsched
# gen stream ... > big.json`, every submit at t=0, `--outputs summary`), against raw_simgrid_stream (bare
# SimGrid message passing of the same workload), alternating runs on one machine; the same workload from
# a `generate` block runs alongside, so that what the streamed load costs shows as the difference.
# Prints the medians and whether the targets hold: peak RSS <= 300 MiB, and throughput (wall time of the
# whole process, load included) >= 8x the baseline's (issue 15) and >= 15x (issue 27 raised it).
# Usage: tests/bench/trace_vs_raw.sh [BUILD_DIR] [REPEATS]   (TASKS=..., WORKERS=... for other sizes)
set -euo pipefail
build=${1:-build}
repeats=${2:-3}
n=${TASKS:-1000000}
w=${WORKERS:-1024}
dirsched=$build/bin/dirsched
raw=$build/bin/raw_simgrid_stream
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
measure() {  # label, command... -> appends "seconds kib" to $tmp/label
  local label=$1
  shift
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$@" >/dev/null 2>&1
  cat "$tmp/time" >>"$tmp/$label"
}
"$dirsched" gen stream --tasks "$n" --workers "$w" >"$tmp/big.json"
echo "{\"name\":\"s\",\"generate\":{\"family\":\"stream\",\"tasks\":$n,\"workers\":$w,\"duration_s\":0.001}}" >"$tmp/gen.json"
for _ in $(seq "$repeats"); do
  measure trace "$dirsched" run "$tmp/big.json" --out "$tmp/out" --outputs summary
  measure raw "$raw" "$n" "$w" 0.001
  measure generate "$dirsched" run "$tmp/gen.json" --out "$tmp/out" --outputs summary
done
col() { awk -v c="$2" '{print $c}' "$tmp/$1" | median; }
trace_s=$(col trace 1) trace_kib=$(col trace 2) raw_s=$(col raw 1) gen_s=$(col generate 1) gen_kib=$(col generate 2)
file_mib=$(($(stat -c %s "$tmp/big.json") / 1048576))
awk -v n="$n" -v w="$w" -v t="$trace_s" -v tk="$trace_kib" -v r="$raw_s" -v g="$gen_s" -v gk="$gen_kib" -v fm="$file_mib" 'BEGIN {
  printf "%d tasks, %d workers, trace file %d MiB, median of runs alternating with the baseline\n", n, w, fm
  printf "%-16s %8s %12s %10s\n", "", "wall_s", "tasks/s", "rss_MiB"
  printf "%-16s %8.2f %12.0f %10.0f\n", "trace file", t, n / t, tk / 1024
  printf "%-16s %8.2f %12.0f %10.0f\n", "generate block", g, n / g, gk / 1024
  printf "%-16s %8.2f %12.0f %10s\n", "raw SimGrid", r, n / r, "-"
  speed = r / t
  printf "throughput: %.2fx the baseline (issue 15: >= 8x): %s\n", speed, (speed >= 8 ? "met" : "MISSED")
  printf "throughput: %.2fx the baseline (issue 27: >= 15x): %s\n", speed, (speed >= 15 ? "met" : "MISSED")
  printf "peak RSS: %.0f MiB (target <= 300 MiB): %s\n", tk / 1024, (tk / 1024 <= 300 ? "met" : "MISSED")
  printf "the streamed load costs %+.2f s and %+.0f MiB over the generate block\n", t - g, (tk - gk) / 1024
}'
