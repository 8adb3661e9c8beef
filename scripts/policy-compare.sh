#!/usr/bin/env bash
# Compares two folders written by scripts/policy-outputs.sh: every file byte for byte, except that
# metrics.json (wall times) is left out and summary.json is compared without the fields the version ladder added (switches, inert).
#   scripts/policy-compare.sh BEFORE AFTER
set -uo pipefail
a=$1; b=$2; bad=0
while IFS= read -r rel; do
  if [[ ! -e "$b/$rel" ]]; then echo "missing in $b: $rel"; bad=1; continue; fi
  if [[ $rel == */summary.json ]]; then
    if ! cmp -s <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [d.pop(k,None) for k in ("switches","inert")]; print(json.dumps(d))' "$a/$rel") \
                <(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [d.pop(k,None) for k in ("switches","inert")]; print(json.dumps(d))' "$b/$rel"); then
      echo "differs: $rel"; bad=1; fi
    # the fields before the new ones keep their bytes: the old file is a prefix of the new one's lines
  elif ! cmp -s "$a/$rel" "$b/$rel"; then echo "differs: $rel"; bad=1; fi
done < <(cd "$a" && find . -type f ! -name metrics.json | sort)
n=$(cd "$a" && find . -type f ! -name metrics.json | wc -l)
echo "compared $n files: $([[ $bad == 0 ]] && echo identical || echo DIFFERENT)"
exit $bad
