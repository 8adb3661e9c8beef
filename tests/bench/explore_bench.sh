#!/usr/bin/env bash
# Explorer speed and memory on tests/bench/explore-random-60.json (`dirsched gen random --tasks 60
# --workers 4 --seed 1`): states per second of wall time and bytes per visited state, both as the
# explorer accounts them (visited set + node tables, "bytes_per_state") and as peak RSS grows between a
# run capped at SMALL states and one capped at BIG states (fixed costs cancel out). Medians of REPEATS.
# Usage: tests/bench/explore_bench.sh [BUILD_DIR] [REPEATS] [SMALL] [BIG]
set -euo pipefail
build=${1:-build}
repeats=${2:-3}
small=${3:-100000}
big=${4:-300000}
here=$(cd "$(dirname "$0")" && pwd)
scenario=$here/explore-random-60.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run() {  # max_states -> "seconds kib states bytes_per_state"
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$build/bin/dirsched" explore "$scenario" --max-states "$1" ${EXTRA:-} \
    >"$tmp/out.json"
  read -r s kib <"$tmp/time"
  states=$(grep -m1 '"states"' "$tmp/out.json" | tr -dc 0-9)
  bps=$(grep -m1 '"bytes_per_state"' "$tmp/out.json" | tr -dc 0-9)
  echo "$s $kib $states $bps"
}
: >"$tmp/rate"; : >"$tmp/rss"; : >"$tmp/acct"
for _ in $(seq "$repeats"); do
  read -r s1 k1 n1 _ < <(run "$small")
  read -r s2 k2 n2 b2 < <(run "$big")
  awk -v n="$n2" -v s="$s2" 'BEGIN { printf "%.0f\n", n / s }' >>"$tmp/rate"
  awk -v a="$k1" -v b="$k2" -v m="$n1" -v n="$n2" 'BEGIN { printf "%.0f\n", (b - a) * 1024 / (n - m) }' >>"$tmp/rss"
  echo "$b2" >>"$tmp/acct"
done
printf "states=%s states_per_s=%s bytes_per_state_rss=%s bytes_per_state_accounted=%s\n" "$n2" \
  "$(median <"$tmp/rate")" "$(median <"$tmp/rss")" "$(median <"$tmp/acct")"
