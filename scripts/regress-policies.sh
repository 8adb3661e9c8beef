#!/usr/bin/env bash
# Regressing a runtime change: one starvation trace under both policies, then what moved.
#   scripts/regress-policies.sh [DIRSCHED] [OUT]
# Writes OUT/seed and OUT/head_reservation (run folders with report.html) and prints the comparison.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dirsched=${1:-$here/build/bin/dirsched}
out=${2:-regress-policies}
scenario=$here/scenarios/group-starvation-reserved.json
mkdir -p "$out"
for policy in seed head_reservation; do
  "$dirsched" run "$scenario" --policy "$policy" --out "$out/$policy"
done
"$dirsched" compare "$out/seed" "$out/head_reservation"
echo "open $out/seed/report.html and $out/head_reservation/report.html"
