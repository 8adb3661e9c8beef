#!/usr/bin/env bash
# Memory and time at scale: whole runs of `dirsched run` on a `generate` stream, against the issue-15
# targets, alternating with raw_simgrid_stream (bare SimGrid message passing of the same workload).
# Usage: tests/bench/scale_bench.sh [BUILD_DIR] [REPEATS]. Environment: SIZES (default "1000000 1024
# at_once" and "10000000 4096 paced"), RAW_BIG=1 to run the baseline at 10M too (about 4 minutes).
#   at_once: every submit at t=0, so the live window is the whole trace (the worst case);
#   paced:   submits every 1 us (1M/s against 4,096 workers of 1 ms: about 1,000 tasks live).
# Each size runs with `--outputs summary` and with every data file (events,summary,tasks: events.jsonl
# and tasks.csv streamed to disk). One row per run (median of REPEATS):
#   tasks workers arrivals outputs wall_s cpu_s rss_MiB B/task raw_s raw/ours target
set -euo pipefail
build=${1:-build}
repeats=${2:-1}
dirsched=$build/bin/dirsched
raw=$build/bin/raw_simgrid_stream
tmp=$(mktemp -d "${TMPDIR:-/tmp}/scale-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
measure() {  # command... -> "wall cpu kib"
  /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; return 1; }
  awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$tmp/time"
}
sizes=${SIZES:-"1000000 1024 at_once;10000000 4096 paced"}
printf "%9s %7s %8s %22s %7s %7s %8s %7s %7s %8s %s\n" tasks workers arrivals outputs wall_s cpu_s rss_MiB B/task raw_s raw/ours target
IFS=';' read -ra rows <<<"$sizes"
for size in "${rows[@]}"; do
  read -r n w arrivals <<<"$size"
  extra=""
  [ "$arrivals" = paced ] && extra=', "interval": 1e-6'
  cat >"$tmp/s.json" <<JSON
{ "name": "scale-$n", "generate": { "family": "stream", "tasks": $n, "workers": $w, "duration_s": 0.001$extra } }
JSON
  raw_on=1
  [ "$n" -gt 1000000 ] && [ "${RAW_BIG:-0}" != 1 ] && raw_on=0
  for outputs in summary events,summary,tasks; do
    : >"$tmp/wall"; : >"$tmp/cpu"; : >"$tmp/rss"; : >"$tmp/raw"
    for _ in $(seq "$repeats"); do
      read -r s c kib < <(measure "$dirsched" run "$tmp/s.json" --out "$tmp/out" --outputs "$outputs")
      echo "$s" >>"$tmp/wall"; echo "$c" >>"$tmp/cpu"; echo "$kib" >>"$tmp/rss"
      rm -rf "$tmp/out"
      if [ "$raw_on" = 1 ] && [ "$outputs" = summary ]; then
        read -r s _ _ < <(measure "$raw" "$n" "$w" 0.001)
        echo "$s" >>"$tmp/raw"
      fi
    done
    wall=$(median <"$tmp/wall"); cpu=$(median <"$tmp/cpu"); rss=$(median <"$tmp/rss")
    rawm=$( [ -s "$tmp/raw" ] && median <"$tmp/raw" || echo -)
    awk -v n="$n" -v w="$w" -v a="$arrivals" -v o="$outputs" -v s="$wall" -v c="$cpu" -v k="$rss" -v r="$rawm" 'BEGIN {
      mib = k / 1024; target = "-"
      if (n >= 10000000) target = (mib <= 1536 && s <= 60) ? "met (<=1.5 GiB, <=60 s)" : "MISSED (<=1.5 GiB, <=60 s)"
      printf "%9d %7d %8s %22s %7.2f %7.2f %8.0f %7.0f %7s %8s %s\n", n, w, a, o, s, c, mib, k * 1024 / n,
        r, (r == "-" ? "-" : sprintf("%.2f", r / s)), target }'
  done
done
