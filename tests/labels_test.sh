#!/usr/bin/env bash
# Every ctest test carries one of the tier labels (docs/howto-run-the-tests.md): a test
# registered without one is listed here and fails this test.
set -u
build=$1
tiers='^(unit|heavy|scenario|cli|robustness|python|bench-smoke|scaleout)$'
out=$(ctest --test-dir "$build" -N -LE "$tiers" 2>&1)
total=$(sed -n 's/^Total Tests: \([0-9]*\)$/\1/p' <<<"$out")
all=$(ctest --test-dir "$build" -N 2>&1 | sed -n 's/^Total Tests: \([0-9]*\)$/\1/p')
if [[ -z "$total" || -z "$all" ]]; then echo "FAIL could not read ctest -N's count"; echo "$out"; exit 1; fi
if [[ "$all" -lt 50 ]]; then echo "FAIL ctest lists only $all tests: is $build the build folder?"; exit 1; fi
if [[ "$total" -ne 0 ]]; then
  echo "FAIL $total test(s) without a tier label:"
  grep -E '^ *Test +#' <<<"$out"
  exit 1
fi
echo "labels: all $all tests carry a tier label"
