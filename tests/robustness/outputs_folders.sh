#!/usr/bin/env bash
# The output-folder rule: a command writes only into a new path or into a folder a dirsched command
# wrote (its marker); everything else is refused with exit 2 and left exactly as it was.
DIRSCHED=$1 ROOT=$2
source "$(dirname "$0")/outputs_lib.sh"
d=$DIRSCHED
s=$ROOT/scenarios/quick-tour.json
sweep_s=$ROOT/scenarios/sweep-group-worker-set.json
w=$sandbox/work
mkdir -p "$w/deep/er" "$w/home" "$w/plain"
echo keep >"$w/plain/notes.txt"
echo "a file" >"$w/a-file"
ln -s "$w/plain" "$w/link"
export HOME=$w/home
echo "home's own" >"$HOME/.profile"
cd "$w/deep/er"

refused_untouched "$w" 2 "--out \.: is the current folder or one of its parents" "--out ." "$d" run "$s" --out .
refused_untouched "$w" 2 "--out \.\.: is the current folder or one of its parents" "--out .." "$d" run "$s" --out ..
refused_untouched "$w" 2 "--out \.\./\.\./\.\.: is the current folder or one of its parents" "--out an ancestor" "$d" run "$s" --out ../../..
refused_untouched "$w" 2 "--out /: is the current folder" "--out /" "$d" run "$s" --out /
refused_untouched "$w" 2 "--out $HOME: is the home folder" "--out \$HOME" "$d" run "$s" --out "$HOME"
refused_untouched "$w" 2 "--out $HOME/: is the home folder" "--out \$HOME/" "$d" run "$s" --out "$HOME/"
refused_untouched "$w" 2 "--out $w/a-file: is a file, not a dirsched run folder" "--out a regular file" "$d" run "$s" --out "$w/a-file"
refused_untouched "$w" 2 "--out $w/plain: exists and is not a dirsched run folder \(no \.dirsched-run" "--out a folder no run wrote" "$d" run "$s" --out "$w/plain"
refused_untouched "$w" 2 "--out $w/plain/: exists and is not a dirsched run folder" "--out a foreign folder/" "$d" run "$s" --out "$w/plain/"
refused_untouched "$w" 2 "--out $w/link: is a symbolic link" "--out a symbolic link" "$d" run "$s" --out "$w/link"
refused_untouched "$w" 2 "$w/a-file is not a folder" "--out below a file" "$d" run "$s" --out "$w/a-file/x"
refused_untouched "$w" 2 "--out $w/plain: exists and is not a dirsched sweep folder \(no \.dirsched-sweep" "sweep --out a foreign folder" "$d" sweep "$sweep_s" --out "$w/plain"
refused_untouched "$w" 2 "--out \.: is the current folder" "sweep --out ." "$d" sweep "$sweep_s" --out . --plan
echo '{"seq":0,"t_s":0,"event":"submit","task":"a","kind":"single","callable":"k","members":1,"workers":[0]}' >"$w/plain/events.jsonl"
refused_untouched "$w" 2 "render $w/plain: not a dirsched run folder" "render a folder no run wrote" "$d" render "$w/plain"

# A new path is written (parents included), with its marker; DIR/ is DIR; a run folder is replaced
# (and keeps nothing of the old one), a run folder is not a sweep folder and the other way round.
run_case 0 "" "--out a new nested path" "$d" run "$s" --out "$w/new/run/"
[[ -f "$w/new/run/.dirsched-run" && -f "$w/new/run/summary.json" ]] || { echo "FAIL a new run folder has its marker and outputs"; fail=1; }
grep -q "^outputs in $w/new/run/ " "$sandbox/out" || { echo "FAIL outputs line:"; cat "$sandbox/out"; fail=1; }
python3 - "$w/new/run/.dirsched-run" <<'PY' || fail=1
import json, os, sys
m = json.load(open(sys.argv[1]))
have = sorted(f for f in os.listdir(os.path.dirname(sys.argv[1])) if f != ".dirsched-run")
if m.get("files") != have: print("FAIL the run marker lists", m.get("files"), "not", have); sys.exit(1)
PY
# A file, a folder or a link the user added inside a run folder: the replace refuses and deletes nothing.
echo "the user's notes" >"$w/new/run/notes.txt"
refused_untouched "$w" 2 "--out $w/new/run/: holds 1 entry dirsched did not write \(notes\.txt\); replacing the folder would delete it: move it out, or give a new path" \
  "replacing a run folder holding the user's file" "$d" run "$s" --out "$w/new/run/" --outputs summary
mkdir "$w/new/run/plots" && ln -s "$w/a-file" "$w/new/run/summary.json.bak" && echo x >"$w/new/run/z4"
refused_untouched "$w" 2 "--out $w/new/run: holds 4 entries dirsched did not write \(notes\.txt, plots/, summary\.json\.bak/, \.\.\.\)" \
  "replacing a run folder holding a folder and a link" "$d" run "$s" --out "$w/new/run"
refused_untouched "$w" 2 "$w/new/run: holds 4 entries dirsched did not write" "the threads engine replacing a folder holding the user's files" \
  "$d" run "$ROOT/scenarios/group-all-or-nothing.json" --out "$w/new/run" --engine threads --time-scale 0
rm -r "$w/new/run/notes.txt" "$w/new/run/plots" "$w/new/run/summary.json.bak" "$w/new/run/z4"
run_case 0 "" "--out an existing run folder/" "$d" run "$s" --out "$w/new/run/" --outputs summary
[[ -f "$w/new/run/summary.json" && ! -e "$w/new/run/events.jsonl" ]] || { echo "FAIL the run folder was not replaced whole"; ls -a "$w/new/run"; fail=1; }
no_temps "$w" "after replacing a run"
# A marker written before it listed its files: a run's own names are trusted, anything else refuses.
printf '{"dirsched":"run","scenario":"quick-tour","dirsched_version":"0.1.0"}\n' >"$w/new/run/.dirsched-run"
touch "$w/new/run/report.html" "$w/new/run/results.xlsx"
refused_untouched "$w" 2 "--out $w/new/run: holds 1 entry dirsched did not write \(results\.xlsx\)" "an old marker and the user's file" "$d" run "$s" --out "$w/new/run"
rm "$w/new/run/results.xlsx"
run_case 0 "" "an old marker and a run's files" "$d" run "$s" --out "$w/new/run" --outputs summary
[[ "$(ls -A "$w/new/run" | tr '\n' ' ')" == ".dirsched-run summary.json " ]] || { echo "FAIL an old run folder was not replaced"; ls -A "$w/new/run"; fail=1; }
# A marker that is not dirsched's JSON (the strict reader: a duplicate key) is refused, file and line.
cp "$w/new/run/.dirsched-run" "$sandbox/marker.good"
printf '{"dirsched":"run",\n "files":[], "files":["x"]}\n' >"$w/new/run/.dirsched-run"
refused_untouched "$w" 2 "$w/new/run/.dirsched-run: files: duplicate key .*not a marker dirsched wrote" "a run marker with a duplicate key" "$d" run "$s" --out "$w/new/run"
printf '{"dirsched":"run","files":"summary.json"}\n' >"$w/new/run/.dirsched-run"
refused_untouched "$w" 2 "$w/new/run/.dirsched-run: files: expected an array of file names" "a run marker with files of the wrong type" "$d" run "$s" --out "$w/new/run"
cp "$sandbox/marker.good" "$w/new/run/.dirsched-run"
# render draws only over files the marker lists, and lists what it draws: a replace afterwards runs.
run_case 0 "" "a run without pictures" "$d" run "$s" --out "$w/new/run" --outputs events,summary
echo "the user's report" >"$w/new/run/report.html"
refused_untouched "$w" 2 "render $w/new/run: report\.html is a file dirsched did not write" "render over the user's report.html" "$d" render "$w/new/run"
rm "$w/new/run/report.html"
# A folder where a picture goes: refused before anything is drawn (it exited 3 with the others rewritten).
mkdir "$w/new/run/report.html"
refused_untouched "$w" 2 "render $w/new/run: report\.html is not a regular file" "render over a folder named report.html" "$d" render "$w/new/run"
rmdir "$w/new/run/report.html"
# A file that links to itself: worded as a refusal ("PATH: why"), not the library's "filesystem error:".
mv "$w/new/run/summary.json" "$sandbox/summary.keep" && ln -s summary.json "$w/new/run/summary.json"
refused_untouched "$w" 2 "^dirsched: $w/new/run/summary\.json: Too many levels of symbolic links\$" "render with summary.json a link to itself" "$d" render "$w/new/run"
rm "$w/new/run/summary.json" && mv "$sandbox/summary.keep" "$w/new/run/summary.json"
run_case 0 "" "render of a run without pictures" "$d" render "$w/new/run"
grep -q '"report.html"' "$w/new/run/.dirsched-run" || { echo "FAIL render did not list its pictures:"; cat "$w/new/run/.dirsched-run"; fail=1; }
run_case 0 "" "replacing a rendered run" "$d" run "$s" --out "$w/new/run"
# A file added while the run is going: the check under the exchange refuses, the old folder stays.
echo '{ "name": "big", "generate": { "family": "stream", "tasks": 200000, "workers": 64 } }' >"$sandbox/big.json"
"$d" run "$sandbox/big.json" --out "$w/new/run" --outputs events,summary >"$sandbox/out" 2>"$sandbox/err" &
pid=$!
for _ in $(seq 200); do compgen -G "$w/new/run.events.tmp-dirsched-$pid-*" >/dev/null && break; sleep 0.05; done
echo "written during the run" >"$w/new/run/late.txt"
before=$(snap "$w/new/run")
wait $pid
rc=$?
[[ $rc -eq 2 ]] && grep -q "$w/new/run: holds 1 entry dirsched did not write (late.txt)" "$sandbox/err" ||
  { echo "FAIL a file added during the run: exit $rc"; cat "$sandbox/err"; fail=1; }
[[ "$(snap "$w/new/run")" == "$before" ]] || { echo "FAIL a file added during the run: the folder changed"; fail=1; }
no_temps "$w" "a file added during the run"
rm "$w/new/run/late.txt"
refused_untouched "$w" 2 "exists and is not a dirsched sweep folder" "sweep --out a run folder" "$d" sweep "$sweep_s" --out "$w/new/run"
run_case 0 "" "sweep --plan into a new folder" "$d" sweep "$sweep_s" --out "$w/sw" --plan
refused_untouched "$w" 2 "exists and is not a dirsched run folder" "run --out a sweep folder" "$d" run "$s" --out "$w/sw"
# A bad scenario or option, with a new nested --out, leaves not even the parents.
run_case 2 "" "a missing scenario" "$d" run "$w/none.json" --out "$w/n1/n2/out"
[[ ! -e "$w/n1" ]] || { echo "FAIL a failed run left its parent folders"; fail=1; }

# The replace is one atomic exchange: the path always holds a whole folder (Linux renameat2).
if command -v strace >/dev/null; then
  # LeakSanitizer cannot run under ptrace (it stops the process's threads with ptrace itself: under
  # strace it dies at exit with status 1), so the runs traced here check no leaks; every other test does.
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
  # (A sanitizer build's warnings go to their own file, not into the middle of the trace.)
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$sandbox/asan-log" \
    strace -f -e trace=renameat2,rename,unlink,unlinkat,rmdir -o "$sandbox/trace" "$d" run "$s" --out "$w/new/run" >/dev/null 2>&1
  grep -q "renameat2(AT_FDCWD, \"$w/new/run.tmp-dirsched-[0-9]*-[0-9a-f]*\", AT_FDCWD, \"$w/new/run\", RENAME_EXCHANGE) = 0" "$sandbox/trace" ||
    { echo "FAIL the replace is not one RENAME_EXCHANGE:"; cat "$sandbox/trace"; fail=1; }
  # Nothing of the old folder goes before the exchange.
  sed -n '/RENAME_EXCHANGE/q;p' "$sandbox/trace" | grep -E "unlink.*\"$w/new/run/|rmdir\(\"$w/new/run\"" &&
    { echo "FAIL the old run was deleted before the exchange"; fail=1; }
  # Durable before success: every file of the new folder synced, then the folder, then the exchange,
  # then the parent (strace -y names each fsync's file); render syncs each picture, renames, syncs.
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$sandbox/asan-log" \
    strace -f -y -e trace=fsync,renameat2,rename -o "$sandbox/sync" "$d" run "$s" --out "$w/new/run" >/dev/null 2>&1
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$sandbox/asan-log" \
    strace -f -y -e trace=fsync,renameat2,rename -o "$sandbox/sync-render" "$d" render "$w/new/run" >/dev/null 2>&1
  python3 - "$sandbox/sync" "$sandbox/sync-render" "$w/new/run" <<'PY' || fail=1
import os, re, sys
trace, render, run = sys.argv[1], sys.argv[2], sys.argv[3]
lines = [l for l in open(trace) if "= 0" in l]
x = [i for i, l in enumerate(lines) if "RENAME_EXCHANGE" in l]
if len(x) != 1: print("FAIL durability: no single exchange in", lines); sys.exit(1)
x = x[0]
tmp = re.search(r'"([^"]*\.tmp-dirsched-[0-9]+-[0-9a-f]+)"', lines[x]).group(1)
synced = lambda path: [i for i, l in enumerate(lines) if re.search(r"fsync\([0-9]+<%s>\)" % re.escape(path), l)]
tmp_abs = os.path.join(os.path.dirname(run), tmp)
folder = synced(tmp_abs)
problems = []
if not folder or folder[-1] > x: problems.append("the new folder is not synced before the exchange")
pictures = {"dag.dot", "dag.svg", "timeline.svg", "trace.json", "report.html"}
for name in sorted(os.listdir(run)):
    if name in pictures:  # drawn after the data are in place: each synced, then renamed in
        moved = [i for i, l in enumerate(lines) if re.search(r'rename\("([^"]*)", "%s"\)' % re.escape(os.path.join(run, name)), l)]
        src = moved and re.search(r'rename\("([^"]*)"', lines[moved[-1]]).group(1)
        if not moved or moved[-1] < x or not [i for i in synced(src) if i < moved[-1]]:
            problems.append(name + " is not synced before its rename after the data")
        continue
    s = synced(os.path.join(tmp_abs, name))
    if not s or (folder and s[-1] > folder[-1]): problems.append(name + " is not synced before its folder")
parent = synced(os.path.dirname(run))
if not parent or parent[-1] < x: problems.append("the parent folder is not synced after the exchange")
rlines = [l for l in open(render) if "= 0" in l]
pictures = [l for l in rlines if re.search(r'rename\("[^"]*tmp-dirsched[^"]*", "%s/report.html"\)' % re.escape(run), l)]
if len(pictures) != 1: problems.append("render: no rename of report.html")
else:
    at = rlines.index(pictures[0])
    src = re.search(r'rename\("([^"]*)"', pictures[0]).group(1)
    if not any(re.search(r"fsync\([0-9]+<%s>" % re.escape(src), l) for l in rlines[:at]): problems.append("render: report.html not synced before its rename")
    if not any(re.search(r"fsync\([0-9]+<%s>\)" % re.escape(run), l) for l in rlines[at:]): problems.append("render: the folder not synced after the rename")
if problems: print("FAIL durability:", "; ".join(problems)); print("".join(lines)); sys.exit(1)
PY
  # A failed fsync is a write error (exit 3): the first one (a file of the new folder), and the last one
  # (the parent after the exchange, which is then undone); each time the old folder stays as it was.
  # The last fsync of the data: the parent's, right after the exchange (the pictures come after the data
  # are in place, so a failure there keeps them: docs/pictures-and-progress.md).
  nsync=$(awk '/RENAME_EXCHANGE/ {x = 1} /^[0-9]+ +fsync\(/ {n++; if (x) {print n; exit}}' "$sandbox/sync")  # strace pads the pid column
  for when in 1 "$nsync"; do
    refused_untouched "$w" 3 "cannot write $w/new/run[^:]*: Input/output error" "fsync number $when of $nsync fails" \
      env ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$sandbox/asan-log" strace -f -o /dev/null -e trace=fsync -e inject=fsync:error=EIO:when=$when "$d" run "$s" --out "$w/new/run"
    no_temps "$w" "fsync number $when fails"
  done
fi
finish "outputs folders"
