#!/usr/bin/env bash
# SIGINT and SIGTERM during a large run: exit 130 / 143, every temporary removed (the streamed event
# log of hundreds of MB included), and the run folder it was replacing left whole; a sweep passes the
# signal on to its variants.
DIRSCHED=$1 ROOT=$2
source "$(dirname "$0")/outputs_lib.sh"
d=$DIRSCHED
w=$sandbox/work
# Large to run, small to load: the trace is generated in memory (200,000 tasks, about 3 s here).
echo '{ "name": "big", "generate": { "family": "stream", "tasks": 200000, "workers": 64 } }' >"$sandbox/big.json"
run_case 0 "" "the old run" "$d" run "$ROOT/scenarios/quick-tour.json" --out "$w/out"

for sig in INT TERM; do
  want=$([[ $sig == INT ]] && echo 130 || echo 143)
  before=$(snap "$w")
  "$d" run "$sandbox/big.json" --out "$w/out" --outputs events,summary,tasks >"$sandbox/out" 2>"$sandbox/err" &
  pid=$!
  # Stop it once the event log is streaming into its temporary beside the folder.
  for _ in $(seq 200); do
    compgen -G "$w/out.events.tmp-dirsched-$pid-*" >/dev/null && [[ -s $(compgen -G "$w/out.events.tmp-dirsched-$pid-*" | head -1) ]] && break
    sleep 0.05
  done
  compgen -G "$w/out.events.tmp-dirsched-$pid-*" >/dev/null || echo "note: SIG$sig came before the log was streaming"
  kill -$sig $pid
  wait $pid
  rc=$?
  [[ $rc -eq $want ]] || { echo "FAIL SIG$sig: exit $rc, expected $want"; cat "$sandbox/err"; fail=1; }
  grep -q "stopped by SIG$sig; temporary files removed" "$sandbox/err" || { echo "FAIL SIG$sig message:"; cat "$sandbox/err"; fail=1; }
  no_temps "$w" "SIG$sig"
  [[ "$(snap "$w")" == "$before" ]] || { echo "FAIL SIG$sig: the old run folder changed"; diff <(echo "$before") <(snap "$w"); fail=1; }
  grep -q "outputs in" "$sandbox/out" && { echo "FAIL SIG$sig: claimed outputs"; fail=1; }
done
# kill -9 leaves its temporaries (nothing can catch it); the next run into the same path removes them
# once its own folder is in place, and touches nothing else: not a live process's temporary, not another
# path's, not a file of the user's.
"$d" run "$sandbox/big.json" --out "$w/out" --outputs events,summary,tasks >/dev/null 2>&1 &
pid=$!
for _ in $(seq 200); do
  compgen -G "$w/out.events.tmp-dirsched-$pid-*" >/dev/null && [[ -s $(compgen -G "$w/out.events.tmp-dirsched-$pid-*" | head -1) ]] && break
  sleep 0.05
done
kill -KILL $pid
wait $pid 2>/dev/null
compgen -G "$w/out*.tmp-dirsched-$pid-*" >/dev/null || echo "note: SIGKILL came before any temporary was made"
sleep 1000 &
live=$!
mkdir "$w/out.tmp-dirsched-$live-0badf00d" "$w/other.tmp-dirsched-999999-0badf00d"
echo mine >"$w/out.notes.tmp-dirsched-keep"
run_case 0 "" "a run after kill -9" "$d" run "$ROOT/scenarios/quick-tour.json" --out "$w/out"
compgen -G "$w/out*.tmp-dirsched-$pid-*" >/dev/null && { echo "FAIL kill -9: the dead run's temporaries stayed"; ls -A "$w"; fail=1; }
[[ -d "$w/out.tmp-dirsched-$live-0badf00d" && -d "$w/other.tmp-dirsched-999999-0badf00d" && -f "$w/out.notes.tmp-dirsched-keep" ]] ||
  { echo "FAIL kill -9: the next run removed what was not a dead run's temporary of its path"; ls -A "$w"; fail=1; }
kill $live
rm -rf "$w/out.tmp-dirsched-$live-0badf00d" "$w/other.tmp-dirsched-999999-0badf00d" "$w/out.notes.tmp-dirsched-keep"
# A sweep stopped by SIGTERM: the parent forwards it to its variants, waits for them, exits 143, and
# the sweep folder holds nothing but its marker (no variant half-written, no temporary).
echo '{ "name": "big-sweep", "generate": { "family": "stream", "tasks": 200000, "workers": 64, "seed": "$w" }, "vars": { "w": [0, 1] } }' >"$sandbox/big-sweep.json"
"$d" sweep "$sandbox/big-sweep.json" --out "$w/sw" -j 2 >"$sandbox/out" 2>"$sandbox/err" &
pid=$!
for _ in $(seq 300); do
  [[ $(compgen -G "$w/sw/variant-000?.events.tmp-dirsched-*" | wc -l) -eq 2 ]] && break
  sleep 0.05
done
children=$(pgrep -P $pid | tr '\n' ' ')
kill -TERM $pid
wait $pid
rc=$?
[[ $rc -eq 143 ]] || { echo "FAIL sweep SIGTERM: exit $rc, expected 143"; cat "$sandbox/err"; fail=1; }
for c in $children; do kill -0 "$c" 2>/dev/null && { echo "FAIL sweep SIGTERM: variant process $c still runs"; fail=1; }; done
[[ "$(ls -A "$w/sw")" == ".dirsched-sweep" ]] || { echo "FAIL sweep SIGTERM left:"; ls -A "$w/sw"; fail=1; }
finish "outputs signals"
