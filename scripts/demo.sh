#!/usr/bin/env bash
# The main command: install what is missing, build, and replay the group-starvation demo scenario.
# One progress line per stage, with the seconds it took. The first build compiles the whole project
# (about 10 minutes on 2 cores); later runs rebuild only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
stage() { echo "demo.sh: [$1/4] $2 ($((SECONDS - start)) s so far)"; }
stage 1 "checking the Debian packages (scripts/install-deps.sh installs what is missing)"
scripts/install-deps.sh
stage 2 "configuring build/ (Release)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
stage 3 "building build/bin/dirsched with $(nproc) jobs (the first build: about 10 minutes on 2 cores)"
cmake --build build -j"$(nproc)" --target dirsched
stage 4 "replaying scenarios/group-starvation.json into out/group-starvation"
build/bin/dirsched run scenarios/group-starvation.json --out out/group-starvation
echo "demo.sh: done in $((SECONDS - start)) s"
echo "summary: out/group-starvation/summary.json (groups[].overtakes, idle_target_s), events: out/group-starvation/events.jsonl"
