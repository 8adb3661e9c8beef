#!/usr/bin/env bash
# The Recorder's group-waiting bookkeeping at scale: whole runs of two dirsched binaries (a baseline
# and a candidate, e.g. main's build and this one) on generated random DAGs with 20% groups, in the
# same run of this script, so that both see the same machine load. Two shapes:
#   deps:   `gen random` as it comes (2 dependencies per task): groups wait a while, some at once;
#   at_once: --edges 0, every task READY at t=0: every group waits at once (the worst case for a
#            bookkeeping that walks the waiting groups per dispatch).
# Each run writes summary.json and tasks.csv (--outputs summary,tasks); the two builds' files are
# compared byte for byte (column "same"). One row per size and shape (median of REPEATS):
#   shape tasks before_wall_s before_cpu_s before_MiB after_wall_s after_cpu_s after_MiB cpu_ratio same
# Usage: tests/bench/recorder_bench.sh BEFORE_BIN AFTER_BIN [REPEATS]. Environment: SIZES (default
# "10000 20000 40000 80000"), SHAPES (default "deps at_once").
set -euo pipefail
before=$1 after=$2
repeats=${3:-1}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/recorder-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
measure() {  # out_dir command... -> "wall cpu kib"
  local out=$1; shift
  rm -rf "$out"
  /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$@" --out "$out" --outputs summary,tasks --quiet \
    >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; return 1; }
  awk '{printf "%s %.2f %s\n", $1, $2 + $3, $4}' "$tmp/time"
}
printf "%-8s %6s %13s %12s %10s %12s %11s %9s %9s %4s\n" shape tasks before_wall_s before_cpu_s before_MiB \
  after_wall_s after_cpu_s after_MiB cpu_ratio same
for shape in ${SHAPES:-deps at_once}; do
  for n in ${SIZES:-10000 20000 40000 80000}; do
    edges=(); [ "$shape" = at_once ] && edges=(--edges 0)
    "$after" gen random --tasks "$n" --group-fraction 0.2 --workers 8 "${edges[@]}" >"$tmp/s.json"
    for side in before after; do
      bin=$before; [ $side = after ] && bin=$after
      : >"$tmp/$side.wall"; : >"$tmp/$side.cpu"; : >"$tmp/$side.rss"
      for _ in $(seq "$repeats"); do
        read -r s c kib < <(measure "$tmp/out-$side" "$bin" run "$tmp/s.json")
        echo "$s" >>"$tmp/$side.wall"; echo "$c" >>"$tmp/$side.cpu"; echo "$kib" >>"$tmp/$side.rss"
      done
    done
    same=yes
    for f in summary.json tasks.csv; do cmp -s "$tmp/out-before/$f" "$tmp/out-after/$f" || same=NO; done
    bw=$(median <"$tmp/before.wall") bc=$(median <"$tmp/before.cpu") br=$(median <"$tmp/before.rss")
    aw=$(median <"$tmp/after.wall") ac=$(median <"$tmp/after.cpu") ar=$(median <"$tmp/after.rss")
    printf "%-8s %6s %13s %12s %10.0f %12s %11s %9.0f %9.2f %4s\n" "$shape" "$n" "$bw" "$bc" \
      "$(echo "$br / 1024" | bc -l)" "$aw" "$ac" "$(echo "$ar / 1024" | bc -l)" "$(echo "$bc / $ac" | bc -l)" "$same"
  done
done
