#!/usr/bin/env bash
# The test command: install what is missing, configure a Release build in build/, build, run ctest.
# Warnings are fatal when CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
werror=OFF
[[ "${CI:-}" == "true" ]] && werror=ON
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DDIRSCHED_WERROR="$werror" >/dev/null
cmake --build build -j"$(nproc)"
# --timeout: a test with no limit of its own fails after 10 minutes rather than hang the run.
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600
