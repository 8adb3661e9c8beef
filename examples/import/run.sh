#!/usr/bin/env bash
# The import loop on a log written by the project in the runtime's [STRACE] grammar
# (docs/howto-import-a-real-run.md): import with calibrated overheads, replay under each runtime version
# the testbed models and measure each replay against the log and against the run-to-run spread of two
# observed runs (host.log and host-2.log, the same workload run twice), name the runtime change that
# alters the replay (bisect), then search the group's worker set on the imported durations (optimize).
# This is the anomaly demo (README.md): both runs launch a group while one of its targets still runs
# another task, which the contract forbids; the import names it, and the replay, which launches the group
# as the contract says, ends beyond the noise floor.
# Usage: examples/import/run.sh [DIRSCHED] [WORK_DIR]
#   (defaults: the clone's build/bin/dirsched, and out/import-example in the clone, replaced on each run)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dirsched=${1:-$root/build/bin/dirsched}
work=${2:-$root/out/import-example}
"$dirsched" import strace "$here/host.log" --out "$work/imp" --calibrate-overheads
# The second run: its observed timeline only, for the noise floor.
"$dirsched" import strace "$here/host-2.log" --out "$work/imp-2"
for policy in seed head_reservation current; do
  "$dirsched" run "$work/imp/scenario.json" --out "$work/replay-$policy" --policy "$policy" --outputs events,summary,tasks
  "$dirsched" fidelity "$work/imp/observed" "$work/replay-$policy" --also-observed "$work/imp-2/observed" \
    --json "$work/fidelity-$policy.json" || true
  # The replay's report.html with the measures and the log's timeline above the replay's.
  "$dirsched" render "$work/replay-$policy" --observed "$work/imp/observed" --quiet
done
# Which runtime change, if any, alters this replay (exit 1 names it; 0: none does).
"$dirsched" bisect "$work/imp/scenario.json" --from seed --to current || true
# The group's worker set as a variable: every ordered pair of the chips, searched on the imported
# durations (the import's expect pins the logged order, which another worker set need not keep; the
# logged failure is dropped, so that the search ranks the worker sets on time alone).
python3 - "$work/imp/scenario.json" "$work/search.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
group = next(op for op in d["trace"] if op["op"] == "submit_next_level_group")
chips = [w["id"] for w in d["workers"]["next_level"]]
group["workers"] = "$g"
d["vars"] = {"g": {"choose": len(chips[:2]), "from": chips, "ordered": True}}
d.pop("expect", None)
for op in d["trace"]:
    op.pop("fail", None)  # the logged failure is not the question here: the worker set is
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
"$dirsched" optimize "$work/search.json" --out "$work/search"
echo "outputs in $work/"
