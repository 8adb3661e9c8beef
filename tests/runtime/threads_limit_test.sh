#!/usr/bin/env bash
# The threads engine when the system cannot start its threads (issue 28): a run of 64 workers (65
# threads) under a limit of processes and threads (RLIMIT_NPROC, ulimit -u) stops with exit 2 and one
# line naming the threads asked for and the limit, never a bare "Resource temporarily unavailable",
# and writes nothing. The limit does not bind root: as root the run is made as nobody (setpriv), with a
# limit of 16; otherwise as the user, 16 above the threads the user runs already.
# Usage: threads_limit_test.sh DIRSCHED
set -u
dirsched=$(realpath "$1")  # run from another folder
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v prlimit >/dev/null || { echo "skip: no prlimit"; exit 77; }
as=()
if [ "$(id -u)" = 0 ]; then
  command -v setpriv >/dev/null && id nobody >/dev/null 2>&1 || { echo "skip: root, and no setpriv or nobody"; exit 77; }
  as=(setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups)
  limit=$(($(ps -L -u nobody --no-headers 2>/dev/null | wc -l) + 16))
  chmod 755 "$tmp"  # nobody reads the scenario and the working folder
else
  limit=$(($(ps -L -u "$(id -u)" --no-headers | wc -l) + 16))
fi
mkdir "$tmp/work" && chmod 777 "$tmp/work"
"$dirsched" gen stream --tasks 64 --workers 64 >"$tmp/wide.json" && chmod 644 "$tmp/wide.json"
rc=0
(cd "$tmp/work" && prlimit --nproc="$limit" "${as[@]}" "$dirsched" run "$tmp/wide.json" --engine threads \
  --time-scale 0 --out "$tmp/work/out" >"$tmp/out" 2>"$tmp/err") || rc=$?
fail=0
want="the threads engine needs 65 threads (one per worker and the scheduler's) and could start only"
if [ "$rc" != 2 ]; then echo "FAIL threads-cannot-start: exit $rc, wanted 2"; fail=1
elif ! grep -qF "$want" "$tmp/err"; then echo "FAIL threads-cannot-start: the message lacks: $want"; fail=1
elif ! grep -qF "ulimit -u, is $limit," "$tmp/err"; then echo "FAIL threads-cannot-start: the message lacks the limit $limit"; fail=1
elif [ "$(wc -l <"$tmp/err")" != 1 ]; then echo "FAIL threads-cannot-start: not one line"; fail=1
elif [ -n "$(ls -A "$tmp/work")" ]; then echo "FAIL threads-cannot-start: wrote $(ls -A "$tmp/work")"; fail=1
else echo "ok   threads-cannot-start"; fi
[ "$fail" = 0 ] || sed 's/^/  | /' "$tmp/err" | head -3
exit "$fail"
