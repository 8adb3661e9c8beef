#!/usr/bin/env bash
# The installed tree works from another project: `cmake --install` into a temporary prefix, then
# examples/consumer/ configured with find_package(dirsched) against that prefix only, built and run.
# Usage: consumer_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for f in lib/cmake/dirsched/dirschedConfig.cmake lib/cmake/dirsched/dirschedConfigVersion.cmake \
         include/dirsched/scheduler.hpp include/dirsched/runtime.hpp include/dirsched/outputs.hpp; do
  [ -f "$tmp/prefix/$f" ] || { echo "FAIL: the install has no $f" >&2; exit 1; }
done
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S "$src/examples/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
"$tmp/consumer/consumer"
# The consumer saw no source-tree header: every include path of its build is under the prefix.
if grep -rq -- "-I$src" "$tmp/consumer/CMakeFiles" 2>/dev/null; then
  echo "FAIL: the consumer build reads headers from the source tree" >&2
  exit 1
fi
echo "consumer: built and ran against $tmp/prefix"
