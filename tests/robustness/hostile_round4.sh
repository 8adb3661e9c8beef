#!/usr/bin/env bash
# Issue 53, hostile inputs round 4: what the import, the folder rule and the readers of user files
# did with hostile inputs (each case failed before its fix: data loss, a hang, bad_alloc, exit 0 on a
# value `run` refuses, a message without its file and line). Every case runs in a sandbox (the working
# directory, holding a file of its own) that must be left as it was; outputs go to $tmp.
# Usage: hostile_round4.sh DIRSCHED ROOT
source "$(dirname "$0")/limits_common.sh"
ok=$root/scenarios/quick-tour.json
logs=$root/tests/import

# kept PATH CASE: PATH (a user's entry) must still be there.
kept() {
  if [ -e "$1" ]; then echo "ok   $2: $1 kept"; else echo "FAIL $2: $1 was deleted"; fail=1; fi
}

# F1. A user's entry whose name merely holds ".tmp-dirsched-<digits>-" inside a run or import folder
# was taken for a temporary of dirsched's and deleted with the old folder (exit 0). Only exactly a
# temporary of one of the folder's own names (NAME.tmp-dirsched-PID-8HEX) left by a process that is
# gone is garbage; anything else is the user's (exit 2, kept).
"$dirsched" run "$ok" --out "$tmp/f1run" >/dev/null 2>&1 || { echo "FAIL f1: the first run"; fail=1; }
mkdir "$tmp/f1run/results.tmp-dirsched-1-keep" && echo "user data" >"$tmp/f1run/results.tmp-dirsched-1-keep/data.txt"
expect f1-run-user-folder 2 "holds 1 entry dirsched did not write (results.tmp-dirsched-1-keep/)" \
  "$dirsched" run "$ok" --out "$tmp/f1run"
kept "$tmp/f1run/results.tmp-dirsched-1-keep/data.txt" f1-run-user-folder
rm -r "$tmp/f1run/results.tmp-dirsched-1-keep"
echo "draft" >"$tmp/f1run/draft.tmp-dirsched-42-x"
expect f1-run-user-file 2 "holds 1 entry dirsched did not write (draft.tmp-dirsched-42-x)" \
  "$dirsched" run "$ok" --out "$tmp/f1run"
kept "$tmp/f1run/draft.tmp-dirsched-42-x" f1-run-user-file
rm "$tmp/f1run/draft.tmp-dirsched-42-x"
# The exact shape, but of a name the folder does not own: the user's too.
echo "notes" >"$tmp/f1run/notes.tmp-dirsched-999999-0badf00d"
expect f1-run-user-exact-shape 2 "holds 1 entry dirsched did not write (notes.tmp-dirsched-999999-0badf00d)" \
  "$dirsched" run "$ok" --out "$tmp/f1run"
kept "$tmp/f1run/notes.tmp-dirsched-999999-0badf00d" f1-run-user-exact-shape
rm "$tmp/f1run/notes.tmp-dirsched-999999-0badf00d"
# A temporary of the folder's own summary.json by a live process: not ours to delete.
echo "{}" >"$tmp/f1run/summary.json.tmp-dirsched-$$-0badf00d"
expect f1-run-live-temporary 2 "summary.json.tmp-dirsched-$$-0badf00d: a temporary of a dirsched still running (process $$)" \
  "$dirsched" run "$ok" --out "$tmp/f1run"
kept "$tmp/f1run/summary.json.tmp-dirsched-$$-0badf00d" f1-run-live-temporary
rm "$tmp/f1run/summary.json.tmp-dirsched-$$-0badf00d"
# One a killed render left (a process that is gone): garbage, replaced with the folder.
echo "{}" >"$tmp/f1run/report.html.tmp-dirsched-999999-0badf00d"
expect f1-run-dead-temporary 0 "" "$dirsched" run "$ok" --out "$tmp/f1run"
if [ -e "$tmp/f1run/report.html.tmp-dirsched-999999-0badf00d" ]; then
  echo "FAIL f1-run-dead-temporary: the dead render's temporary stayed"; fail=1
fi
# The import folder: the same rule.
"$dirsched" import strace "$logs/basic.log" --out "$tmp/f1imp" >/dev/null 2>&1 || { echo "FAIL f1: the first import"; fail=1; }
mkdir "$tmp/f1imp/results.tmp-dirsched-1-keep" && echo "user data" >"$tmp/f1imp/results.tmp-dirsched-1-keep/data.txt"
expect f1-import-user-folder 2 "holds results.tmp-dirsched-1-keep/, which dirsched import did not write" \
  "$dirsched" import strace "$logs/basic.log" --out "$tmp/f1imp"
kept "$tmp/f1imp/results.tmp-dirsched-1-keep/data.txt" f1-import-user-folder
rm -r "$tmp/f1imp/results.tmp-dirsched-1-keep"
echo "draft" >"$tmp/f1imp/observed/draft.tmp-dirsched-42-x"
expect f1-import-observed-user-file 2 "holds observed/draft.tmp-dirsched-42-x, which dirsched import did not write" \
  "$dirsched" import strace "$logs/basic.log" --out "$tmp/f1imp"
kept "$tmp/f1imp/observed/draft.tmp-dirsched-42-x" f1-import-observed-user-file
rm "$tmp/f1imp/observed/draft.tmp-dirsched-42-x"
expect f1-import-again 0 "" "$dirsched" import strace "$logs/basic.log" --out "$tmp/f1imp"
# A sweep folder: a user's file there was removed as a dead process's temporary when swept again.
printf '{"name":"sw","vars":{"W":[0,1]},"workers":{"next_level":[{"id":0,"kind":"local_chip"},{"id":1,"kind":"local_chip"}]},"callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":0.1}},"trace":[{"op":"submit_next_level","task":"t","callable":"k","worker":"$W"},{"op":"drain"}]}' >"$in/sweep.json"
"$dirsched" sweep "$in/sweep.json" --out "$tmp/f1sw" --plan >/dev/null 2>&1 || { echo "FAIL f1: the sweep plan"; fail=1; }
echo "draft" >"$tmp/f1sw/draft.tmp-dirsched-999999-x"
expect f1-sweep-user-file 0 "" "$dirsched" sweep "$in/sweep.json" --out "$tmp/f1sw" --plan
kept "$tmp/f1sw/draft.tmp-dirsched-999999-x" f1-sweep-user-file

# F5. A FIFO given where a file is read: `import strace` opened it before its regular-file check and
# blocked forever; the scenario loader's open blocked too. Opened without blocking, refused at once.
mkfifo "$in/fifo.log" "$in/fifo.json"
expect f5-import-fifo 2 "fifo.log: cannot read the log (not a regular file" \
  timeout 20 "$dirsched" import strace "$in/fifo.log" --out "$tmp/f5"
expect f5-scenario-fifo 2 "fifo.json: not valid JSON" timeout 20 "$dirsched" run "$in/fifo.json" --out "$tmp/f5"

# F10. --calibrate-overheads on dispatch spans of dur=2^63-1: exit 0 with a dispatch cost of 9.2e9 s
# that `run` refuses. Refused at the first such dispatch span's line.
sed 's/name=node.dispatch ts=\([0-9]*\) dur=[0-9]*/name=node.dispatch ts=\1 dur=9223372036854775807/' "$logs/basic.log" >"$in/f10.log"
expect f10-dispatch-dur 2 "f10.log:6: a dispatch span of dur=9223372036854775807 (ns) at ts 1000200000 ends more than 2^32 s after the time origin t0" \
  "$dirsched" import strace "$in/f10.log" --out "$tmp/f10" --calibrate-overheads
[ -e "$tmp/f10" ] && { echo "FAIL f10-dispatch-dur: wrote $tmp/f10"; fail=1; }

# F11. A stall warning holding the bytes \xff\xfe: the report's dump threw "invalid UTF-8 byte" with
# no file or line. The bytes are kept, escaped, in the report.
sed 's/reservation stalled: group_slot=1/reservation stalled: group_slot=1 \xff\xfe/' "$logs/basic.log" >"$in/f11.log"
grep -q $'\xff\xfe' "$in/f11.log" || { echo "FAIL f11: the log lacks the bytes"; fail=1; }
expect f11-stall-bytes 0 "" "$dirsched" import strace "$in/f11.log" --out "$tmp/f11"
python3 - "$tmp/f11/import-report.json" <<'PY' || fail=1
import json, sys
lines = json.load(open(sys.argv[1]))["stall_warnings"]["lines"]
if len(lines) != 1 or "group_slot=1 \\xff\\xfe" not in lines[0]:
    print("FAIL f11-stall-bytes: the report's stall line is", lines); sys.exit(1)
print("ok   f11-stall-bytes-escaped")
PY

# F15. 20,000 scheduler processes and no --pid: the refusal listed every one (one 0.8 MB line). A few
# candidates and the count.
python3 - "$in/f15.log" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for pid in range(1, 20001):
        f.write("[mono_ns=1000000000][T0x1][TIMING] submit: [STRACE] v=1 pid=%d tid=1 inv=1 hid=a1 depth=0 name=node.submit "
                "ts=1000000000 dur=1000 run_id=1 task_slot=0 group_index=0 group_size=1 worker_id=0\n" % pid)
PY
expect f15-many-pids 2 "f15.log:2: several scheduler processes and no choice: give --pid N or --level WORD (20000 processes: pid 1 (level node" \
  "$dirsched" import strace "$in/f15.log" --out "$tmp/f15"
if [ "$(wc -c <"$tmp/err")" -gt 2000 ] || ! grep -q "; and 19995 more)" "$tmp/err"; then
  echo "FAIL f15-many-pids: $(wc -c <"$tmp/err") bytes of error, wanted a few candidates and the count"; fail=1
else echo "ok   f15-short-message"; fi

# F4. --infer-deps 1000 on 2,000 producers that end just before 2,000 consumers start: N x N edges,
# bad_alloc (exit 134) where memory is short, gigabytes and exit 0 where it is not. Refused past the
# stated bound (1,000,000 inferred edges), naming it, before anything is written.
python3 - "$in/f4.log" <<'PY'
import sys
n = 2000
head = "[mono_ns=%d][T0x1][TIMING] x: [STRACE] v=1 pid=7 tid=1 inv=1 hid=%s depth=0 name=node.%s ts=%d dur=%d "
with open(sys.argv[1], "w") as f:
    t0 = 1000000000
    f.write(head % (t0, "0", "graph_build", t0, 1000) + "run_id=1\n")
    def task(slot, worker, submit, start, end):
        ids = "run_id=1 task_slot=%d group_index=0 " % slot
        f.write(head % (submit, "a1", "submit", submit, 100) + ids + "group_size=1 worker_id=%d\n" % worker)
        d = ids + "worker_id=%d dispatch_id=0 endpoint_kind=local_mailbox prepare_only=0" % worker
        f.write(head % (start, "a1", "dispatch", start, 100) + d + "\n")
        f.write(head % (end, "a1", "complete", end, 100) + d + " outcome=0\n")
    for i in range(n):  # producers on workers 0..n-1, all ending at t0 + 20 ms
        task(i, i, t0 + 10000 + i, t0 + 5000000, t0 + 20000000)
    for j in range(n):  # consumers, submitted before that, starting 10 us after it on idle workers
        task(n + j, n + j, t0 + 3000000 + j, t0 + 20010000, t0 + 30000000)
PY
expect f4-infer-deps-bound 2 "more than 1000000 inferred dependencies (the import's bound on guessed edges, docs/limits.md)" \
  "$dirsched" import strace "$in/f4.log" --out "$tmp/f4" --infer-deps 1000
[ -e "$tmp/f4" ] && { echo "FAIL f4-infer-deps-bound: wrote $tmp/f4"; fail=1; }

# F14. Task names ending in a backslash: dag.dot's node ids were written unescaped ("a\"), so the id's
# quote was closed by the name and dot could not read the file. Ids are escaped as labels are.
printf '%s' '{"name":"bs","workers":{"next_level":[{"id":0,"kind":"local_chip"}]},"callables":{"k\\":{"namespace":"LOCAL_CHIP","duration_s":0.1}},"buffers":{"x\\":{"bytes":0}},"trace":[{"op":"submit_next_level","task":"a\\","callable":"k\\","worker":0,"args":[{"buffer":"x\\","tag":"OUTPUT"}]},{"op":"submit_next_level","task":"b\\\\","callable":"k\\","worker":0,"args":[{"buffer":"x\\","tag":"INPUT"}]},{"op":"drain"}]}' >"$in/f14.json"
expect f14-run 0 "" "$dirsched" run "$in/f14.json" --out "$tmp/f14"
if ! dot -Tsvg "$tmp/f14/dag.dot" >"$tmp/f14.svg" 2>"$tmp/f14.err"; then
  echo "FAIL f14-dag-dot-parses: dot cannot read dag.dot: $(head -c 300 "$tmp/f14.err")"; fail=1
elif [ "$(grep -c 'class="node"' "$tmp/f14.svg")" != 2 ] || [ "$(grep -c 'class="edge"' "$tmp/f14.svg")" != 1 ]; then
  echo "FAIL f14-dag-dot-parses: dot read $(grep -c 'class="node"' "$tmp/f14.svg") nodes and $(grep -c 'class="edge"' "$tmp/f14.svg") edges, wanted 2 and 1"; fail=1
else echo "ok   f14-dag-dot-parses"; fi

# F17. scripts/slurm-array.sh: a plan whose last line has no newline lost that line (wc -l counts
# newlines), and task id 08 (as a zero-padded --array range gives it) was a bash octal error.
slurm=$root/scripts/slurm-array.sh
printf 'echo one >>%s\necho two >>%s\necho three >>%s' "$tmp/f17.out" "$tmp/f17.out" "$tmp/f17.out" >"$in/f17.plan"
rc=0; SLURM_ARRAY_TASK_ID=1 bash "$slurm" "$in/f17.plan" 3 >/dev/null 2>"$tmp/err" || rc=$?
if [ "$rc" != 0 ] || [ "$(cat "$tmp/f17.out" 2>/dev/null | tr '\n' ' ')" != "one two three " ]; then
  echo "FAIL f17-last-line-without-newline: exit $rc, ran: $(cat "$tmp/f17.out" 2>/dev/null | tr '\n' ' ')"; fail=1
else echo "ok   f17-last-line-without-newline"; fi
rm -f "$tmp/f17.out"
rc=0; SLURM_ARRAY_TASK_ID=3 bash "$slurm" "$in/f17.plan" 1 >/dev/null 2>"$tmp/err" || rc=$?
if [ "$rc" != 0 ] || [ "$(cat "$tmp/f17.out" 2>/dev/null)" != "three" ]; then
  echo "FAIL f17-last-task: exit $rc, ran: $(cat "$tmp/f17.out" 2>/dev/null)"; fail=1
else echo "ok   f17-last-task"; fi
rm -f "$tmp/f17.out"
for i in 1 2 3 4 5 6 7 8 9; do echo "echo $i >>$tmp/f17.out"; done >"$in/f17b.plan"
rc=0; SLURM_ARRAY_TASK_ID=08 bash "$slurm" "$in/f17b.plan" 1 >/dev/null 2>"$tmp/err" || rc=$?
if [ "$rc" != 0 ] || [ -s "$tmp/err" ] || [ "$(cat "$tmp/f17.out" 2>/dev/null)" != "8" ]; then
  echo "FAIL f17-task-08: exit $rc, ran: $(cat "$tmp/f17.out" 2>/dev/null), stderr: $(head -c 200 "$tmp/err")"; fail=1
else echo "ok   f17-task-08"; fi

# F7. A line is read in bounded memory: 32 MiB of NUL bytes without a newline at the end of a log was
# held whole (the issue's 1 GB one took 2.1 GB); a long line without a record is noise, counted, and a
# record after long text on its line is still read.
cp "$logs/basic.log" "$in/f7.log" && head -c 33554432 /dev/zero >>"$in/f7.log"
python3 - "$dirsched" "$logs/basic.log" "$in/f7.log" "$tmp/f7" <<'PY' || fail=1
import json, os, resource, subprocess, sys
dirsched, basic, log, out = sys.argv[1:]
# A sanitizer build's resident size is the sanitizer's (ASan's quarantine keeps freed chunks): there the
# bound is not checked, the noise count is; the plain build (CI's first stage) checks both.
sanitized = os.environ.get("DIRSCHED_SANITIZED") == "1"
def peak(args):  # the largest resident size of any child so far, KiB
    p = subprocess.run([dirsched] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
_, base = peak(["import", "strace", basic, "--out", out + "-basic"])
p, kib = peak(["import", "strace", log, "--out", out])
noise = json.load(open(out + "/import-report.json"))["lines"]["noise"] if p.returncode == 0 else None
# The same log without the long line is the baseline; the 32 MiB line held whole took 90 MiB more.
if p.returncode != 0 or noise != 4 or (kib > base + 16 * 1024 and not sanitized):
    print("FAIL f7-long-noise-line: exit %d, noise %s (wanted 4), %d KiB (wanted at most 16 MiB over basic.log's %d KiB): %s"
          % (p.returncode, noise, kib, base, p.stderr.decode(errors="replace")[:300])); sys.exit(1)
print("ok   f7-long-noise-line (%d KiB, basic.log %d KiB%s)" % (kib, base, ", not bounded: a sanitizer build" if sanitized else ""))
PY
python3 - "$logs/basic.log" "$in/f7b.log" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
at = next(i for i, l in enumerate(lines) if "name=node.submit ts=1000100000 dur=20000" in l)
lines[at] = "harness: " + "x" * (3 << 20) + " " + lines[at]  # 3 MiB of text, then the record
open(sys.argv[2], "w").write("\n".join(lines))
PY
expect f7-record-after-long-text 0 "5 tasks" "$dirsched" import strace "$in/f7b.log" --out "$tmp/f7b"

finish
