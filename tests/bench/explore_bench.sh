#!/usr/bin/env bash
# Explorer speed and memory, the build before against the build after, in one run (issue 52).
#
# Scenarios: tests/bench/explore-random-60.json (`gen random --tasks 60 --workers 4 --seed 1`) and
# `gen random --tasks 60 --workers 4 --seed S` for each S in SEEDS. For each scenario and each binary:
#   states/s    states of a run capped at BIG states over its wall time, and over its user CPU time
#               (the steadier of the two on a shared machine); medians of REPEATS, the two binaries
#               run in turn (before, after, before, after...) so that load from others falls on both;
#   bytes/state as the explorer accounts them (`bytes_per_state`: visited set + node tables), and as
#               peak RSS grows between a run capped at SMALL states and one capped at BIG (fixed costs
#               cancel out);
#   Ir          with CALLGRIND=1: valgrind's instruction count of a run capped at CG_STATES states
#               (repeatable under load), per state.
# Both binaries must give the same result: the script compares their JSON (bytes_per_state aside) on
# every BIG run and says so.
#
# Usage: tests/bench/explore_bench.sh [BUILD_DIR] [BASELINE] [REPEATS] [SMALL] [BIG]
#   BUILD_DIR  the build after (default build): BUILD_DIR/bin/dirsched
#   BASELINE   the build before: a dirsched binary, or a git revision (default main) that the script
#              builds into BUILD_DIR-baseline (a worktree of it in BUILD_DIR-baseline-src; ccache helps)
#   environment: SEEDS (default "2 3"), CALLGRIND=1, CG_STATES (default 20000), EXTRA (more explore
#   options, e.g. --no-por)
set -euo pipefail
build=${1:-build}
baseline=${2:-main}
repeats=${3:-3}
small=${4:-100000}
big=${5:-300000}
seeds=${SEEDS:-2 3}
cg_states=${CG_STATES:-20000}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
after=$build/bin/dirsched
[ -x "$after" ] || { echo "no $after: build it first" >&2; exit 2; }

if [ -x "$baseline" ] && [ ! -d "$baseline" ]; then
  before=$baseline
else
  rev=$baseline
  src=$build-baseline-src
  out=$build-baseline
  if [ ! -d "$src" ]; then git -C "$root" worktree add --detach "$src" "$rev" >&2; fi
  git -C "$src" checkout -q --detach "$rev"
  cmake -S "$src" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  nice -n 10 cmake --build "$out" -j2 --target dirsched >&2
  before=$out/bin/dirsched
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run() {  # binary scenario max_states out -> "wall user kib states bytes_per_state"
  # exit status 5 (stopped early at the cap) is the expected end; time then writes a line before its own
  /usr/bin/time -f "%e %U %M" -o "$tmp/time" "$1" explore "$2" --max-states "$3" --quiet ${EXTRA:-} >"$4" 2>/dev/null || true
  read -r s u kib < <(tail -n 1 "$tmp/time")
  states=$(grep -m1 '"states"' "$4" | tr -dc 0-9)
  bps=$(grep -m1 '"bytes_per_state"' "$4" | tr -dc 0-9)
  echo "$s $u $kib $states $bps"
}

scenarios=("$here/explore-random-60.json")
for s in $seeds; do
  "$after" gen random --tasks 60 --workers 4 --seed "$s" >"$tmp/random-60-seed$s.json"
  scenarios+=("$tmp/random-60-seed$s.json")
done

printf "%-26s %-6s %12s %12s %10s %10s %12s\n" scenario build states/s states/cpu-s B/st_rss B/st_acct Ir/state
for sc in "${scenarios[@]}"; do
  name=$(basename "$sc" .json)
  for which in before after; do
    for f in rate cpu rss acct; do : >"$tmp/$which.$f"; done
  done
  same=yes
  for _ in $(seq "$repeats"); do
    for which in before after; do
      bin=$before; [ "$which" = after ] && bin=$after
      read -r _ _ k1 n1 _ < <(run "$bin" "$sc" "$small" "$tmp/small.json")
      read -r s2 u2 k2 n2 b2 < <(run "$bin" "$sc" "$big" "$tmp/$which.json")
      awk -v n="$n2" -v s="$s2" 'BEGIN { printf "%.0f\n", n / s }' >>"$tmp/$which.rate"
      awk -v n="$n2" -v s="$u2" 'BEGIN { printf "%.0f\n", n / s }' >>"$tmp/$which.cpu"
      awk -v a="$k1" -v b="$k2" -v m="$n1" -v n="$n2" 'BEGIN { printf "%.0f\n", (b - a) * 1024 / (n - m) }' >>"$tmp/$which.rss"
      echo "$b2" >>"$tmp/$which.acct"
    done
    cmp -s <(grep -v bytes_per_state "$tmp/before.json") <(grep -v bytes_per_state "$tmp/after.json") || same=no
  done
  for which in before after; do
    bin=$before; [ "$which" = after ] && bin=$after
    ir=-
    if [ "${CALLGRIND:-0}" = 1 ]; then
      valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" explore "$sc" --max-states "$cg_states" --quiet \
        ${EXTRA:-} >"$tmp/cg.json" 2>"$tmp/cg.err" || true
      total=$(grep -m1 'I *refs:' "$tmp/cg.err" | sed 's/.*refs: *//' | tr -dc 0-9)
      n=$(grep -m1 '"states"' "$tmp/cg.json" | tr -dc 0-9)
      ir=$(awk -v t="$total" -v n="$n" 'BEGIN { printf "%.0f", t / n }')
      echo "$name $which: $total instructions for $n states (callgrind)" >>"$tmp/cg.log"
    fi
    printf "%-26s %-6s %12s %12s %10s %10s %12s\n" "$name" "$which" "$(median <"$tmp/$which.rate")" \
      "$(median <"$tmp/$which.cpu")" "$(median <"$tmp/$which.rss")" "$(median <"$tmp/$which.acct")" "$ir"
  done
  echo "$name: same result before and after (JSON but bytes_per_state, capped at $big states): $same"
done
[ -f "$tmp/cg.log" ] && cat "$tmp/cg.log"
echo "before: $before; after: $after; $big states per timed run (RSS: $big minus $small), $repeats repeats, medians"
