#!/usr/bin/env bash
# Issue 28, hostile inputs round 3: SimGrid options that write or read files or crash it are refused
# (an allow-list), names are data (control characters refused at load, escaped everywhere they are
# shown), a tampered summary.json cannot put markup in report.html, and output lost on stdout is an
# error (exit 3). The sandbox (the working directory of every command) must be left as it was: no
# simgrid.trace, no file of the user's overwritten.
# Usage: hostile_round3.sh DIRSCHED ROOT
source "$(dirname "$0")/limits_common.sh"
ok=$root/scenarios/quick-tour.json
victim=$tmp/victim.txt
echo "the user's other file" >"$victim"
victim_sum=$(md5sum <"$victim")

# 1. --cfg: options that write or read files are refused, for run, check and sweep alike.
for opt in "tracing/filename:$victim" "tracing:yes" "tracing/comment-file:/etc/hostname" "tracing/platform:yes" \
  "path:/tmp" "plugin:host_energy" "model-check/record:1" "contexts/nthreads:4"; do
  name=${opt%%:*}
  expect "cfg-refused-run-${name//\//-}" 2 "--cfg=$opt: '$name' is not an option dirsched passes to SimGrid" \
    "$dirsched" run "$ok" --out out --cfg="$opt"
done
expect cfg-refused-check 2 "'tracing/filename' is not an option dirsched passes to SimGrid" \
  "$dirsched" check "$ok" --cfg="tracing/filename:$victim"
printf '{"name":"sw","vars":{"W":[1,2]},"workers":{"next_level":[{"id":0,"kind":"local_chip"},{"id":1,"kind":"local_chip"}]},"callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":0.1}},"trace":[{"op":"submit_next_level","task":"t","callable":"k","worker":"$W"},{"op":"drain"}]}' >"$in/sweep.json"
expect cfg-refused-sweep 2 "'tracing/filename' is not an option dirsched passes to SimGrid" \
  "$dirsched" sweep "$in/sweep.json" --out sw --cfg="tracing/filename:$victim"
expect cfg-refused-sweep-plan 2 "'tracing' is not an option dirsched passes to SimGrid" \
  "$dirsched" sweep "$in/sweep.json" --out sw --plan --cfg=tracing:yes
[ "$(md5sum <"$victim")" = "$victim_sum" ] || { echo "FAIL the victim file changed"; fail=1; }
# An allowed option still runs.
expect cfg-allowed 0 "" "$dirsched" run "$ok" --out "$tmp/cm02" --cfg=network/model:CM02

# 3. Bounds: a stack SimGrid would crash on is refused with exit 2, not SIGSEGV.
for v in 0 1 16 2000000; do
  expect "cfg-stack-size-$v" 2 "--cfg=contexts/stack-size:$v: an actor's stack (KiB) must be in [256, 1.04858e+06]" \
    "$dirsched" run "$ok" --out out --cfg=contexts/stack-size:$v
done
expect cfg-stack-size-check 2 "an actor's stack (KiB) must be in" "$dirsched" check "$ok" --cfg=contexts/stack-size:1
expect cfg-precision-zero 2 "--cfg=maxmin/precision:0: the solver's precision must be in" \
  "$dirsched" run "$ok" --out out --cfg=maxmin/precision:0
# A context factory SimGrid does not know: refused with exit 2 before anything is written (SimGrid checks
# it only when the first actor starts, and aborted: 134; a sweep exited 1 and left its folder claimed).
for cmd in run sweep; do
  what=$ok; [[ $cmd == sweep ]] && what=$in/sweep.json
  expect "cfg-factory-$cmd" 2 "--cfg=contexts/factory:nope: how actors run (thread, ucontext, raw, boost): 'nope' is not one of them" \
    "$dirsched" $cmd "$what" --out "$tmp/factory-$cmd" --cfg=contexts/factory:nope
  [[ ! -e "$tmp/factory-$cmd" ]] || { echo "FAIL cfg-factory-$cmd: wrote $tmp/factory-$cmd"; fail=1; }
done
expect cfg-factory-raw 0 "" "$dirsched" run "$ok" --out "$tmp/factory-raw" --cfg=contexts/factory:raw

# 2. Names: a control character (NUL, ESC, a C1 CSI) in a name is refused at load with its JSON path.
name_scenario() {  # file, task name (JSON text), callable name (JSON text)
  printf '{"name":"n","workers":{"next_level":[{"id":0,"kind":"local_chip"}]},"callables":{%s:{"namespace":"LOCAL_CHIP","duration_s":0.1}},"trace":[{"op":"submit_next_level","task":%s,"callable":%s,"worker":0},{"op":"submit_next_level","task":"a","callable":%s,"worker":0},{"op":"drain"}]}' \
    "$3" "$2" "$3" "$3" >"$1"
}
name_scenario "$in/nul.json" '"a\u0000b"' '"k"'
expect name-nul 2 "nul.json: trace[0].task: holds the control character \\x00" "$dirsched" run "$in/nul.json" --out out
name_scenario "$in/esc.json" '"\u001b]52;c;aGk=\u0007"' '"k"'
expect name-escape 2 "esc.json: trace[0].task: holds the control character \\x1b" "$dirsched" check "$in/esc.json"
name_scenario "$in/csi.json" '"t\u009b2J"' '"k"'
expect name-c1 2 "csi.json: trace[0].task: holds the control character \\u009b" "$dirsched" explore "$in/csi.json"
name_scenario "$in/callable.json" '"t"' '"k\u001b[2J"'
expect name-callable 2 "callable.json: callables.k" "$dirsched" run "$in/callable.json" --out out
printf '{"name":"n\\u001b[2J","workers":{"next_level":[{"id":0,"kind":"local_chip"}]},"callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":0.1}},"trace":[{"op":"drain"}]}' >"$in/scenario-name.json"
expect name-scenario 2 "scenario-name.json: name: holds the control character \\x1b" "$dirsched" run "$in/scenario-name.json" --out out

# Nothing raw reaches the terminal: a file name with an escape sequence is shown as text.
esc_file="$in/"$'\e]0;pwned\a'".json"
cp "$ok" "$esc_file"
(cd "$sandbox" && "$dirsched" run "$esc_file.missing" --out out >"$tmp/out" 2>"$tmp/err")
if grep -q $'\e' "$tmp/err" "$tmp/out"; then echo "FAIL terminal-raw-escape: an ESC byte reached stderr"; fail=1
elif ! grep -qF '\x1b]0;pwned\x07' "$tmp/err"; then echo "FAIL terminal-raw-escape: the name is not shown as text"; cat "$tmp/err"; fail=1
else echo "ok   terminal-raw-escape"; fi

# A tampered summary.json: markup in report.html is escaped, a seed that is no integer is refused.
"$dirsched" run "$ok" --out "$tmp/run" >/dev/null 2>&1 || { echo "FAIL setup run"; fail=1; }
python3 - "$tmp/run/summary.json" <<'PY'
import json, sys
p = sys.argv[1]
s = json.load(open(p))
s["scenario"] = "<script>alert(1)</script>"
s["description"] = "<img src=x onerror=alert(2)>"
json.dump(s, open(p, "w"))
PY
expect render-markup 0 "" "$dirsched" render "$tmp/run"
if grep -q '<script>alert\|<img src=x' "$tmp/run/report.html"; then echo "FAIL render-markup: markup reached report.html"; fail=1; fi
python3 - "$tmp/run/summary.json" <<'PY'
import json, sys
p = sys.argv[1]
s = json.load(open(p))
s["seed"] = "</td><script>alert(3)</script>"
json.dump(s, open(p, "w"))
PY
expect render-seed 2 "summary.json: seed: expected an integer" "$dirsched" render "$tmp/run"
if grep -q 'alert(3)' "$tmp/run/report.html"; then echo "FAIL render-seed: the seed reached report.html"; fail=1; fi

# 6. A FIFO (or any non-regular file) where a run folder holds a regular file is refused, never
# waited on: render, compare and sweep --collect.
"$dirsched" run "$ok" --out "$tmp/fifo-run" >/dev/null 2>&1 || { echo "FAIL setup fifo run"; fail=1; }
cp -r "$tmp/fifo-run" "$tmp/fifo-summary"
rm "$tmp/fifo-run/events.jsonl" && mkfifo "$tmp/fifo-run/events.jsonl"
expect fifo-render 2 "fifo-run/events.jsonl: not a regular file" "$dirsched" render "$tmp/fifo-run"
rm "$tmp/fifo-summary/summary.json" && mkfifo "$tmp/fifo-summary/summary.json"
expect fifo-compare 2 "summary.json: not a regular file" "$dirsched" compare "$tmp/cm02" "$tmp/fifo-summary"
"$dirsched" sweep "$in/sweep.json" --out "$tmp/fifo-sweep" >/dev/null 2>&1 || { echo "FAIL setup fifo sweep"; fail=1; }
rm "$tmp/fifo-sweep/variant-0001/summary.json" && mkfifo "$tmp/fifo-sweep/variant-0001/summary.json"
expect fifo-collect 2 "summary.json: not a regular file" "$dirsched" sweep --collect "$tmp/fifo-sweep"
# compare and fidelity keep every dispatch of events.jsonl: past 256 MiB the folder is refused at once
# (a sparse file: its size is what counts, nothing is read), and render still draws it (aggregated).
cp -r "$tmp/cm02" "$tmp/huge-log"
truncate -s 300M "$tmp/huge-log/events.jsonl"
expect huge-log-compare 2 "huge-log/events.jsonl: 300 MiB of events, over the 256 MiB that compare reads" \
  "$dirsched" compare "$tmp/cm02" "$tmp/huge-log"
expect huge-log-fidelity 2 "huge-log/events.jsonl: 300 MiB of events, over the 256 MiB that fidelity reads" \
  "$dirsched" fidelity "$tmp/cm02" "$tmp/huge-log"

# 5. A run folder is locked while render redraws it or a run replaces it: each waits for the other
# (here the lock is held by flock(1) for 4 s; before the locks, each replaced its files at once).
waits() {  # name, file the command replaces, command...: nothing changes while the lock is held
  local name=$1 file=$2 rc=0
  shift 2
  flock "$tmp/locked" sleep 4 &
  local holder=$!
  sleep 0.3
  local before during after
  before=$(stat -c %i "$tmp/locked/$file")
  "$@" >"$tmp/out" 2>"$tmp/err" &
  local cmd=$!
  sleep 2.5
  during=$(stat -c %i "$tmp/locked/$file")
  wait "$cmd" || rc=$?
  wait "$holder"
  after=$(stat -c %i "$tmp/locked/$file")
  if [ "$rc" != 0 ]; then echo "FAIL lock-$name: exit $rc"; sed 's/^/  | /' "$tmp/err" | head -3; fail=1
  elif [ "$during" != "$before" ]; then echo "FAIL lock-$name: $file replaced while the folder was locked"; fail=1
  elif [ "$after" = "$before" ]; then echo "FAIL lock-$name: $file never replaced"; fail=1
  else echo "ok   lock-$name"; fi
}
"$dirsched" run "$ok" --out "$tmp/locked" >/dev/null 2>&1 || { echo "FAIL setup locked run"; fail=1; }
waits run summary.json "$dirsched" run "$ok" --out "$tmp/locked"
waits render report.html "$dirsched" render "$tmp/locked"
# sweep --collect reads each variant folder under its lock: while the lock is held (flock(1), as above)
# over a summary.json half written, collect waits, then reads the folder whole (before its lock, it read
# the half file at once: exit 2).
"$dirsched" sweep "$in/sweep.json" --out "$tmp/lock-sweep" >/dev/null 2>&1 || { echo "FAIL setup lock sweep"; fail=1; }
v1=$tmp/lock-sweep/variant-0001
# The holder says when it holds the lock (a file outside the sweep folder); collect starts only then, so
# the check does not hang on timing: read before the lock was released, variant 1 would be the 20-byte
# half and collect would exit 2.
rm -f "$tmp/held"
flock "$v1" sh -c 'cp "$1/summary.json" "$1/whole"; head -c 20 "$1/whole" >"$1/summary.json"; : >"$2"; sleep 2; mv "$1/whole" "$1/summary.json"' sh "$v1" "$tmp/held" &
holder=$!
for _ in $(seq 200); do [ -e "$tmp/held" ] && break; sleep 0.05; done
rc=0
"$dirsched" sweep --collect "$tmp/lock-sweep" >"$tmp/out" 2>"$tmp/err" || rc=$?
wait "$holder"
if [ ! -e "$tmp/held" ]; then echo "FAIL lock-collect: the holder never took the lock"; fail=1
elif [ "$rc" != 0 ]; then echo "FAIL lock-collect: exit $rc"; sed 's/^/  | /' "$tmp/err" | head -3; fail=1
elif ! grep -qF "2. variant 1 (W=2) NOT CLEAN (1 rejected)" "$tmp/out"; then echo "FAIL lock-collect: variant 1 not read whole"; cat "$tmp/out"; fail=1
else echo "ok   lock-collect"; fi

# 8. An --out name its temporaries would not fit beside: refused before the run, saying so.
long=$(printf 'x%.0s' $(seq 230))
expect out-name-too-long 2 "the folder's name is 230 bytes long, more than 215" "$dirsched" run "$ok" --out "$long"

# 8. gen writes only what the loader reads: a slow arrival rate whose times pass 2^32 s is refused.
expect gen-times-overflow 2 "would write a scenario the loader refuses" \
  "$dirsched" gen stream --tasks 100 --arrival-rate 1e-9

# 4. Every write to stdout is checked: into /dev/full is exit 3 with a message, never a silent 0.
full() {  # name, command...
  local name=$1 rc=0
  shift
  (cd "$sandbox" && timeout 60 "$@" >/dev/full 2>"$tmp/err") || rc=$?
  if [ "$rc" != 3 ]; then echo "FAIL stdout-full-$name: exit $rc, wanted 3"; sed 's/^/  | /' "$tmp/err" | head -3; fail=1
  elif ! grep -qF "cannot write to standard output" "$tmp/err"; then echo "FAIL stdout-full-$name: no message"; fail=1
  else echo "ok   stdout-full-$name"; fi
}
full gen "$dirsched" gen stream --tasks 10
full explore "$dirsched" explore "$root/scenarios/explore-twelve-tasks.json" --max-states 100
full check "$dirsched" check "$ok"
full check-two "$dirsched" check "$ok" "$ok"
full sweep-plan "$dirsched" sweep "$in/sweep.json" --out "$tmp/plan" --plan
# A plan that never reached stdout claims no folder (the marker and .dirsched-plan came before it).
if [ -e "$tmp/plan" ]; then echo "FAIL sweep-plan-unclaimed: $tmp/plan was made by a plan that was not printed"; fail=1
else echo "ok   sweep-plan-unclaimed"; fi
# A plan for a folder its claim refuses (another scenario's sweep folder) is not printed: its lines would
# replace that sweep's variant folders.
printf '{"name":"other","vars":{"W":[0,1]},"workers":{"next_level":[{"id":0,"kind":"local_chip"},{"id":1,"kind":"local_chip"}]},"callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":0.1}},"trace":[{"op":"submit_next_level","task":"t","callable":"k","worker":"$W"},{"op":"drain"}]}' >"$in/other.json"
"$dirsched" sweep "$in/sweep.json" --out "$tmp/owned" --plan >/dev/null 2>&1
rc=0; "$dirsched" sweep "$in/other.json" --out "$tmp/owned" --plan >"$tmp/plan.out" 2>"$tmp/err" || rc=$?
if [ "$rc" != 2 ] || [ -s "$tmp/plan.out" ] || ! grep -qF "is the sweep folder of scenario 'sw'" "$tmp/err"; then
  echo "FAIL sweep-plan-refused-silent: exit $rc, $(wc -l <"$tmp/plan.out") plan lines printed"; fail=1
else echo "ok   sweep-plan-refused-silent"; fi
full compare "$dirsched" compare "$tmp/cm02" "$tmp/cm02"

finish
