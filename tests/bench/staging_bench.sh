#!/usr/bin/env bash
# The staging pass on a long preparable run with nothing to stage: r1 runs N singles one after another
# on worker 1 (N iterations) while r2, admitted and preparable, holds N READY singles on worker 2 (one
# frame); worker 0 has two frames, so staging is not inert. Before the pass remembered what it had
# looked at, every iteration rescanned r2's N parked entries (N^2). Runs BEFORE and AFTER on the same
# file and compares their events byte for byte.
# Usage: staging_bench.sh BEFORE_DIRSCHED AFTER_DIRSCHED [N]   (not a ctest: a benchmark)
set -eu
before=$1 after=$2 n=${3:-20000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp/s.json" "$n" <<'PY'
import json, sys
n = int(sys.argv[2])
json.dump({"name": "staging-bench", "scheduler": {"policy": "upto:1583"},
           "workers": {"next_level": [{"id": 0, "kind": "local_chip", "frames": 2},
                                      {"id": 1, "kind": "local_chip"}, {"id": 2, "kind": "local_chip"}]},
           "callables": {"k": {"namespace": "LOCAL_CHIP", "duration_s": 0.001}},
           "trace": [{"op": "run", "run": "r1", "ops": [{"op": "submit_next_level", "task": "a%d" % i, "callable": "k", "worker": 1} for i in range(n)]},
                     {"op": "run", "run": "r2", "ops": [{"op": "submit_next_level", "task": "b%d" % i, "callable": "k", "worker": 2} for i in range(n)]},
                     {"op": "drain"}]}, open(sys.argv[1], "w"))
PY
for which in before after; do
  bin=$before; [[ $which == after ]] && bin=$after
  start=$(date +%s.%N)
  "$bin" run "$tmp/s.json" --out "$tmp/$which" --outputs events >/dev/null
  end=$(date +%s.%N)
  echo "$which: $(python3 -c "print('%.2f' % ($end - $start))") s"
done
cmp -s "$tmp/before/events.jsonl" "$tmp/after/events.jsonl" && echo "same events" || { echo "events differ"; exit 1; }
