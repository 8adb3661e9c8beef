#!/usr/bin/env bash
# The main command: install what is missing, build, and replay the group-starvation demo scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target dirsched
build/bin/dirsched run scenarios/group-starvation.json --out out/group-starvation
echo "summary: out/group-starvation/summary.json (groups[].overtakes, idle_target_s), events: out/group-starvation/events.jsonl"
