#!/usr/bin/env bash
# The main command: install what is missing, build, and run the core benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target core_bench
build/bin/core_bench
