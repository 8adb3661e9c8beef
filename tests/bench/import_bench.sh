#!/usr/bin/env bash
# `import strace` at scale: two dirsched binaries (a baseline and a candidate, e.g. main's build and this
# one) import the same [STRACE] logs in the same run of this script, so that both see the same machine
# load. Each log is a simulated run written in the runtime's grammar by the candidate
# (`gen stream --tasks N --workers 64`, then `run --outputs strace`); both imports' scenario.json and
# observed/ are compared byte for byte (column "same"). One row per size:
#   tasks log_MB before_wall_s before_MiB after_wall_s after_MiB speedup same
# Usage: tests/bench/import_bench.sh BEFORE_BIN AFTER_BIN. Environment: SIZES (default "25000 50000 100000");
# RUNS=K makes each log K runs long: the simulated log repeated K times as run_id 1..K, each shifted past
# the one before (the 1 GB figure of docs/performance.md: SIZES=300000 RUNS=5, 1.18 GB, 1.5M tasks).
set -euo pipefail
before=$1 after=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/import-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
measure() {  # out_dir bin log -> "wall kib"
  local out=$1 bin=$2 log=$3
  rm -rf "$out"
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" import strace "$log" --out "$out" >/dev/null 2>"$tmp/err" ||
    { cat "$tmp/err" >&2; return 1; }
  cat "$tmp/time"
}
printf "%7s %7s %13s %10s %12s %9s %8s %4s\n" tasks log_MB before_wall_s before_MiB after_wall_s after_MiB speedup same
for n in ${SIZES:-25000 50000 100000}; do
  "$after" gen stream --tasks "$n" --workers 64 >"$tmp/s.json"
  "$after" run "$tmp/s.json" --out "$tmp/run" --outputs strace --quiet >/dev/null
  log=$tmp/run/strace.log
  if [[ "${RUNS:-1}" -gt 1 ]]; then
    python3 - "$log" "$tmp/runs.log" "$RUNS" <<'PY'
import re, sys
src, dst, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
last = 0
with open(src) as f:
    for line in f:
        m = re.search(r" ts=(\d+) dur=(\d+)", line)
        if m: last = max(last, int(m.group(1)) + int(m.group(2)))
shift = last - 1000000000000 + 1000000000  # the makespan and a second
pat = re.compile(r"(mono_ns=|ts=)(\d+)")
with open(dst, "w") as out:
    for k in range(runs):
        with open(src) as f:
            for line in f:
                line = pat.sub(lambda m: m.group(1) + str(int(m.group(2)) + k * shift), line)
                out.write(line.replace(" inv=1 ", " inv=%d " % (k + 1)).replace(" run_id=1", " run_id=%d" % (k + 1)))
PY
    log=$tmp/runs.log
  fi
  bw='' aw=''
  read -r bw bk < <(measure "$tmp/before" "$before" "$log") || true
  read -r aw ak < <(measure "$tmp/after" "$after" "$log") || true
  [[ -n "${bw:-}" && -n "${aw:-}" ]] || { echo "import_bench: an import of $n tasks failed (its error above)" >&2; exit 1; }
  same=yes
  cmp -s "$tmp/before/scenario.json" "$tmp/after/scenario.json" && diff -rq "$tmp/before/observed" "$tmp/after/observed" \
    >/dev/null || same=no
  awk -v n="$((n * ${RUNS:-1}))" -v bytes="$(stat -c %s "$log")" -v bw="$bw" -v bk="$bk" -v aw="$aw" -v ak="$ak" -v same="$same" \
    'BEGIN {printf "%7d %7.1f %13.2f %10.0f %12.2f %9.0f %7.1fx %4s\n", n, bytes/1e6, bw, bk/1024, aw, ak/1024, bw/aw, same}'
done
