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
echo old >"$w/new/run/stale-output.txt"
run_case 0 "" "--out an existing run folder/" "$d" run "$s" --out "$w/new/run/" --outputs summary
[[ -f "$w/new/run/summary.json" && ! -e "$w/new/run/stale-output.txt" && ! -e "$w/new/run/events.jsonl" ]] || { echo "FAIL the run folder was not replaced whole"; ls -a "$w/new/run"; fail=1; }
no_temps "$w" "after replacing a run"
refused_untouched "$w" 2 "exists and is not a dirsched sweep folder" "sweep --out a run folder" "$d" sweep "$sweep_s" --out "$w/new/run"
run_case 0 "" "sweep --plan into a new folder" "$d" sweep "$sweep_s" --out "$w/sw" --plan
refused_untouched "$w" 2 "exists and is not a dirsched run folder" "run --out a sweep folder" "$d" run "$s" --out "$w/sw"
# A bad scenario or option, with a new nested --out, leaves not even the parents.
run_case 2 "" "a missing scenario" "$d" run "$w/none.json" --out "$w/n1/n2/out"
[[ ! -e "$w/n1" ]] || { echo "FAIL a failed run left its parent folders"; fail=1; }

# The replace is one atomic exchange: the path always holds a whole folder (Linux renameat2).
if command -v strace >/dev/null; then
  # (A sanitizer build's warnings go to their own file, not into the middle of the trace.)
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$sandbox/asan-log" \
    strace -f -e trace=renameat2,rename,unlink,unlinkat,rmdir -o "$sandbox/trace" "$d" run "$s" --out "$w/new/run" >/dev/null 2>&1
  grep -q "renameat2(AT_FDCWD, \"$w/new/run.tmp-dirsched-[0-9]*-[0-9a-f]*\", AT_FDCWD, \"$w/new/run\", RENAME_EXCHANGE) = 0" "$sandbox/trace" ||
    { echo "FAIL the replace is not one RENAME_EXCHANGE:"; cat "$sandbox/trace"; fail=1; }
  # Nothing of the old folder goes before the exchange.
  sed -n '/RENAME_EXCHANGE/q;p' "$sandbox/trace" | grep -E "unlink.*\"$w/new/run/|rmdir\(\"$w/new/run\"" &&
    { echo "FAIL the old run was deleted before the exchange"; fail=1; }
fi
finish "outputs folders"
