#!/usr/bin/env bash
# The import loop on a log written by the project in the runtime's [STRACE] grammar
# (docs/howto-import-a-real-run.md): import, replay under each policy the testbed models, measure.
# Usage: examples/import/run.sh [DIRSCHED] [WORK_DIR]
set -eu
dirsched=${1:-dirsched}
work=${2:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
"$dirsched" import strace "$here/host.log" --out "$work/imp" --calibrate-overheads
for policy in seed head_reservation; do
  "$dirsched" run "$work/imp/scenario.json" --out "$work/replay-$policy" --policy "$policy" --outputs events,summary,tasks
  "$dirsched" fidelity "$work/imp/observed" "$work/replay-$policy" --json "$work/fidelity-$policy.json" || true
done
echo "outputs in $work/"
