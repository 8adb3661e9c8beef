#!/usr/bin/env bash
# Issue 27's memory targets: whole `dirsched run`s whose memory follows the live window, not the trace.
# Usage: tests/bench/memory_bench.sh [BUILD_DIR]. Environment:
#   SIZES    rows "TASKS WORKERS at_once|paced" (default "10000000 4096 at_once;10000000 4096 paced;
#            30000000 4096 paced"; add "100000000 4096 paced" when there is time: about 5 minutes)
#   BASE     another dirsched binary run alternately on every row (the build before a change)
#   TRACE=1  also 10M tasks from a trace file (876 MB written to TMPDIR first)
#   RAW=1    the bare-SimGrid baseline raw_simgrid_stream on every row too (at 10M: minutes)
#   ENGINE=threads  the threads engine instead (`--engine threads`, 0 s members): THREADS_SIZES rows
#            "TASKS WORKERS paced|drained|at_once" (default "1000000 16 paced;1000000 16 drained;
#            1000000 16 at_once"), each run with reclamation and then with DIRSCHED_RECLAIM=off:
#            paced    generate stream, one submit per 50 us, --time-scale 1 (at --time-scale 0 a generate
#                     block's interval is scaled away: every op is due at once). Only while the
#                     engine keeps up: behind, the ops that came due run at once and widen the window;
#            drained  a trace file with a drain after every 1,000 submits, --time-scale 0;
#            at_once  generate stream, every submit at t=0, --time-scale 0 (the window is the trace).
#            Two more columns from metrics.json: the live window at its widest (peak_core_tasks,
#            peak_records).
# Every run: stream workload, 1 ms tasks, `--outputs summary`, peak RSS and times from /usr/bin/time -v.
# paced: one submit per microsecond (about 1,000 tasks live against 4,096 workers of 1 ms).
# Targets: 10M from generate <= 512 MiB and <= 30 s; 100M paced <= 1 GiB and within 10% of 10M's memory;
# 10M from a trace file <= 300 MiB.
set -euo pipefail
build=${1:-build}
dirsched=$build/bin/dirsched
raw=$build/bin/raw_simgrid_stream
tmp=$(mktemp -d "${TMPDIR:-/tmp}/memory-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "# $(date -u '+%F %T') UTC; load: $(uptime | sed 's/.*load average: //')"
measure() {  # label command... -> one row
  local label=$1; shift
  /usr/bin/time -v -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; return 1; }
  awk -v l="$label" -F': ' '/Elapsed \(wall/ {split($2,t,":"); w = t[1] * 60 + t[2]} /User time/ {u = $2} /System time/ {s = $2}
       /Maximum resident/ {m = $2} END {printf "%-44s %8.2f %8.2f %9.1f\n", l, w, u + s, m / 1024}' "$tmp/time"
}
if [ "${ENGINE:-sim}" = threads ]; then
  printf "%-44s %8s %8s %9s %10s %10s\n" run wall_s cpu_s rss_MiB core_tasks records
  sizes=${THREADS_SIZES:-"1000000 16 paced;1000000 16 drained;1000000 16 at_once"}
  IFS=';' read -ra rows <<<"$sizes"
  for size in "${rows[@]}"; do
    read -r n w arrivals <<<"$size"
    scale=0
    case $arrivals in
      paced) scale=1
        echo "{ \"name\": \"t-$n\", \"generate\": { \"family\": \"stream\", \"tasks\": $n, \"workers\": $w, \"duration_s\": 0, \"interval\": 5e-5 } }" >"$tmp/s.json" ;;
      at_once)
        echo "{ \"name\": \"t-$n\", \"generate\": { \"family\": \"stream\", \"tasks\": $n, \"workers\": $w, \"duration_s\": 0 } }" >"$tmp/s.json" ;;
      drained)
        python3 - "$tmp/s.json" "$n" "$w" <<'PY'
import sys
n, w = int(sys.argv[2]), int(sys.argv[3])
with open(sys.argv[1], "w") as f:
    f.write('{"name": "drained", "workers": {"next_level": [%s]},\n' %
            ", ".join('{"id": %d, "kind": "local_chip"}' % i for i in range(w)))
    f.write('"callables": {"k": {"namespace": "LOCAL_CHIP", "duration_s": 0}},\n"trace": [\n')
    for i in range(n):
        f.write('{"op": "submit_next_level", "task": "t%d", "callable": "k", "worker": %d},\n' % (i, i % w))
        if i % 1000 == 999:
            f.write('{"op": "drain"},\n')
    f.write('{"op": "drain"}\n]}\n')
PY
        ;;
      *) echo "unknown arrivals '$arrivals' (paced, drained, at_once)" >&2; exit 2 ;;
    esac
    for reclaim in on off; do
      row=$(DIRSCHED_RECLAIM=$reclaim measure "threads $n/$w $arrivals reclaim=$reclaim" "$dirsched" run "$tmp/s.json" \
              --engine threads --time-scale "$scale" --out "$tmp/out" --outputs summary,metrics --quiet)
      python3 - "$row" "$tmp/out/metrics.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[2]))
print("%s %10d %10d" % (sys.argv[1], m["peak_core_tasks"], m["peak_records"]))
PY
      rm -rf "$tmp/out"
    done
  done
  exit 0
fi
printf "%-44s %8s %8s %9s\n" run wall_s cpu_s rss_MiB
sizes=${SIZES:-"10000000 4096 at_once;10000000 4096 paced;30000000 4096 paced"}
IFS=';' read -ra rows <<<"$sizes"
for size in "${rows[@]}"; do
  read -r n w arrivals <<<"$size"
  extra=""
  [ "$arrivals" = paced ] && extra=', "interval": 1e-6'
  echo "{ \"name\": \"m-$n\", \"generate\": { \"family\": \"stream\", \"tasks\": $n, \"workers\": $w, \"duration_s\": 0.001$extra } }" >"$tmp/s.json"
  measure "dirsched $n/$w $arrivals" "$dirsched" run "$tmp/s.json" --out "$tmp/out" --outputs summary --quiet
  rm -rf "$tmp/out"
  if [ -n "${BASE:-}" ]; then
    measure "base     $n/$w $arrivals" "$BASE" run "$tmp/s.json" --out "$tmp/out" --outputs summary --quiet
    rm -rf "$tmp/out"
  fi
  if [ "${RAW:-0}" = 1 ]; then measure "raw_simgrid_stream $n $w" "$raw" "$n" "$w" 0.001; fi
done
if [ "${TRACE:-0}" = 1 ]; then
  # gen writes at most 256 MiB: the 10M file is written by the same generator at 1M tasks a piece
  # (names t0..t9999999, task i on worker i mod 4096, as `gen stream --tasks 10000000` would).
  python3 - "$tmp/t.json" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write('{\n  "name": "stream",\n  "workers": {\n    "next_level": [\n')
    f.write(",\n".join('      { "id": %d, "kind": "local_chip", "host": "chip%d" }' % (i, i) for i in range(4096)))
    f.write('\n    ],\n    "sub": 0\n  },\n  "callables": {\n    "k": { "namespace": "LOCAL_CHIP", "duration_s": 0.001 }\n  },\n')
    f.write('  "buffers": {\n  },\n  "trace": [\n')
    for i in range(10000000):
        f.write('    { "op": "submit_next_level", "task": "t%d", "callable": "k", "worker": %d },\n' % (i, i % 4096))
    f.write('    { "op": "drain" }\n  ]\n}\n')
PY
  echo "# trace file: $(stat -c %s "$tmp/t.json") bytes"
  measure "dirsched 10M trace file (streamed)" "$dirsched" run "$tmp/t.json" --out "$tmp/out" --outputs summary --quiet
  rm -rf "$tmp/out"
  if [ -n "${BASE:-}" ]; then
    measure "base     10M trace file" "$BASE" run "$tmp/t.json" --out "$tmp/out" --outputs summary --quiet || true
    rm -rf "$tmp/out"
  fi
fi
