#!/usr/bin/env bash
# Regressing a runtime change: one starvation trace under both policies, then what moved.
#   scripts/regress-policies.sh [DIRSCHED] [OUT]   (defaults: build/bin/dirsched, out/regress-policies)
# Writes OUT/seed and OUT/head_reservation (run folders with report.html) and prints the comparison.
# Exits 0 when the comparison ran, whether the runs agree (compare's 0) or differ (compare's 1, the
# expected answer: the policies are meant to differ); any other status of a run or of compare (2: bad
# input, 3: a write error, ...) is passed on.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dirsched=${1:-$here/build/bin/dirsched}
out=${2:-out/regress-policies}
scenario=$here/scenarios/group-starvation-reserved.json
mkdir -p "$out"
for policy in seed head_reservation; do
  "$dirsched" run "$scenario" --policy "$policy" --out "$out/$policy"
done
rc=0
"$dirsched" compare "$out/seed" "$out/head_reservation" || rc=$?
if [[ $rc -gt 1 ]]; then
  echo "regress-policies.sh: compare failed (exit status $rc)" >&2
  exit "$rc"
fi
echo "open $out/seed/report.html and $out/head_reservation/report.html"
