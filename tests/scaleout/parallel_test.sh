#!/usr/bin/env bash
# A sweep plan on GNU parallel (docs/howto-run-on-a-cluster.md): parallel is SIGKILLed midway with its
# running variants (their temporaries left behind), resumed with --joblog and --resume-failed, and the
# collected sweep.csv is byte for byte the local sweep's. Then one variant SIGKILLed mid-run on its own:
# --collect refuses and names it, --missing prints its line, the line run again removes the
# dead process's temporaries. Usage: parallel_test.sh DIRSCHED ROOT
d=$1 ROOT=$2
source "$(dirname "$0")/lib.sh"
need parallel setsid strace
local_sweep

"$d" sweep "$s" --out "$tmp/p" --plan --outputs events,summary >"$tmp/plan" 2>/dev/null || no "--plan"
# The processes below PID (parallel runs each job in a process group of its own).
descendants() {
  local c
  for c in $(ps -o pid= --ppid "$1"); do echo "$c"; descendants "$c"; done
}
parallel -j 2 --joblog "$tmp/joblog" --retries 2 <"$tmp/plan" >/dev/null 2>&1 &
pp=$!
daemons+=("$pp")
for _ in $(seq 1200); do
  (($(ls -d "$tmp/p"/variant-???? 2>/dev/null | wc -l) >= 4)) && break
  sleep 0.05
done
# SIGKILL, as a lost node: parallel first (it starts nothing more), then the variants it was running.
kill -STOP "$pp"  # it starts nothing more while its children are listed
kids=$(descendants "$pp")
kill -KILL "$pp"
for k in $kids; do kill -KILL "$k" 2>/dev/null; done
wait "$pp" 2>/dev/null
sleep 0.2
done_before=$(ls -d "$tmp/p"/variant-???? 2>/dev/null | wc -l)
((done_before >= 4 && done_before < 16)) || no "parallel killed midway: $done_before of 16 variants done"
"$d" sweep --collect "$tmp/p" >/dev/null 2>"$tmp/err" && no "collect of a killed run succeeded"
grep -q "$((16 - done_before)) of 16 variants missing" "$tmp/err" || { no "collect counts the missing variants"; cat "$tmp/err"; }
# Resume: the lines the joblog has as done are not run again.
parallel -j 2 --joblog "$tmp/joblog" --resume-failed --retries 2 <"$tmp/plan" >/dev/null 2>"$tmp/err" ||
  { no "parallel --resume-failed"; cat "$tmp/err"; }
runs=$(($(wc -l <"$tmp/joblog") - 1))
((runs < 16 + 16)) || no "the resumed run ran every line again ($runs joblog lines)"
"$d" sweep --collect "$tmp/p" >/dev/null 2>"$tmp/err" || { no "collect after the resume"; cat "$tmp/err"; }
cmp -s "$tmp/local/sweep.csv" "$tmp/p/sweep.csv" ||
  { no "sweep.csv from GNU parallel differs from the local sweep's"; diff "$tmp/local/sweep.csv" "$tmp/p/sweep.csv"; }
[[ -z "$(find "$tmp/p" -name '*.tmp-dirsched-*')" ]] || no "temporaries left after collect"

# One variant SIGKILLed while it writes. No race with the run's speed: strace holds every fsync of
# the run for 1 s (the files are written, not yet renamed into place), so the kill always lands mid-run.
line=$(sed -n 7p "$tmp/plan")
rm -rf "$tmp/p/variant-0006" "$tmp/p/sweep.csv"
strace -f -qq -o /dev/null -e trace=fsync -e inject=fsync:delay_enter=1000000 bash -c "exec $line" >/dev/null 2>&1 &
tracer=$!
daemons+=("$tracer")
victim=
for _ in $(seq 4000); do
  if f=$(compgen -G "$tmp/p/variant-0006.*tmp-dirsched-*"); then
    victim=$(sed -n 's/.*\.tmp-dirsched-\([0-9]*\)-.*/\1/p' <<<"$f" | head -n1)
    break
  fi
  kill -0 "$tracer" 2>/dev/null || break
  sleep 0.005
done
[[ -n $victim ]] && kill -KILL "$victim" 2>/dev/null
wait "$tracer" 2>/dev/null
if [[ -n $victim ]] && compgen -G "$tmp/p/variant-0006.*tmp-dirsched-$victim-*" >/dev/null; then
  [[ ! -d $tmp/p/variant-0006 ]] || no "the killed variant's folder exists"
  "$d" sweep --collect "$tmp/p" >/dev/null 2>"$tmp/err" && no "collect with a killed variant succeeded"
  grep -q "1 of 16 variants missing (not run, or did not finish): variant-0006;" "$tmp/err" ||
    { no "collect names the killed variant"; cat "$tmp/err"; }
  [[ "$("$d" sweep --collect "$tmp/p" --missing 2>/dev/null)" == "$line" ]] || no "--missing prints the killed variant's line"
  bash -c "$line" >/dev/null 2>"$tmp/err" || no "the killed variant's line run again"
  # The rerun, once its folder is in place, removes what the killed process left beside it.
  compgen -G "$tmp/p/variant-0006.*tmp-dirsched-$victim-*" >/dev/null && no "the rerun left the dead process's temporary"
  grep -q "removed .*variant-0006.*tmp-dirsched-$victim-.*left by a process that was killed" "$tmp/err" ||
    { no "the rerun names what it removed"; cat "$tmp/err"; }
  "$d" sweep --collect "$tmp/p" >/dev/null 2>"$tmp/err" || { no "collect after the rerun"; cat "$tmp/err"; }
  [[ -z "$(find "$tmp/p" -name '*.tmp-dirsched-*')" ]] || no "collect left the killed variant's temporaries"
  cmp -s "$tmp/local/sweep.csv" "$tmp/p/sweep.csv" || no "sweep.csv after the rerun"
else
  no "the variant finished before it could be killed (no event log temporary seen)"
fi
finish "scaleout parallel"
