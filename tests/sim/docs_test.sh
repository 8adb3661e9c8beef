#!/usr/bin/env bash
# docs/scenario-format.md names every key the loader reads: a key added to scenario.cpp without a line
# in the document fails here.
set -u
root=$1
doc=$root/docs/scenario-format.md
src=$root/scenario/src/scenario.cpp
[[ -f "$doc" ]] || { echo "FAIL $doc is missing"; exit 1; }
keys=$( { grep -oE '(\.(get|str|num|need|has|time|bounded)\(|array_at\([a-z]+, |per_member<[^>]*>\(o, )"[a-z_]+"' "$src"
          sed -n '/static const char\* keys\[\]/,/};/p' "$src"; } | grep -oE '"[a-z_]+"' | tr -d '"' | sort -u)
fail=0
for k in $keys; do
  grep -q "\`$k\`" "$doc" || { echo "FAIL docs/scenario-format.md does not name the key \`$k\`"; fail=1; }
done
n=$(echo "$keys" | wc -w)
[[ $n -gt 40 ]] || { echo "FAIL found only $n keys in the loader: the pattern no longer matches it"; fail=1; }
[[ $fail -eq 0 ]] && echo "docs: all $n loader keys are documented"
exit $fail
