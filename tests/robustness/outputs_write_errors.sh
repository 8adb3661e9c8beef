#!/usr/bin/env bash
# Write errors: a read-only folder (chattr +i: we may be root) and a full disk (a tiny tmpfs) end with
# exit 3 and "cannot write PATH: REASON", claim no outputs, leave no temporary and no 0-byte file, and
# leave the run folder being replaced whole. Skips (77) what this machine cannot set up.
DIRSCHED=$1 ROOT=$2
source "$(dirname "$0")/outputs_lib.sh"
d=$DIRSCHED
s=$ROOT/scenarios/quick-tour.json
w=$sandbox/work
ran=0

mkdir -p "$w/ro"
if chattr +i "$w/ro" 2>/dev/null; then
  ran=1
  cleanup_hooks+=("chattr -i '$w/ro' '$w/old' 2>/dev/null")
  refused_untouched "$w" 3 "cannot write $w/ro/x/events.jsonl: Operation not permitted" "a read-only folder" "$d" run "$s" --out "$w/ro/x"
  refused_untouched "$w" 3 "cannot write $w/ro/y: Operation not permitted" "a read-only folder, no events" "$d" run "$s" --out "$w/ro/y" --outputs summary
  chattr -i "$w/ro"
  run_case 0 "" "the old run" "$d" run "$s" --out "$w/old"
  chattr +i "$w/old"
  refused_untouched "$w" 3 "cannot write $w/old: Operation not permitted" "replacing a read-only run folder" "$d" run "$s" --out "$w/old"
  chattr -i "$w/old"
  no_temps "$w" "read-only"
else
  echo "note: chattr +i is not available here; read-only cases skipped"
fi

mkdir -p "$sandbox/full"
if mount -t tmpfs -o size=64k tmpfs "$sandbox/full" 2>/dev/null; then
  ran=1
  cleanup_hooks=("umount '$sandbox/full'" "${cleanup_hooks[@]}")
  f=$sandbox/full
  echo "the user's own file" >"$f/mine.txt"
  "$d" gen stream --tasks 2000 --workers 4 >"$sandbox/mid.json"
  # The event log outgrows the disk while it streams.
  refused_untouched "$f" 3 "cannot write $f/x/events.jsonl: No space left on device" "a full disk (event log)" "$d" run "$sandbox/mid.json" --out "$f/x" --outputs events,summary
  # A run folder to replace, then a disk with no byte left: tasks.csv (streamed as tasks retire, so
  # written first) cannot be written, nor summary.json.
  run_case 0 "" "a small run on the tmpfs" "$d" run "$s" --out "$f/old" --outputs summary,tasks
  dd if=/dev/zero of="$f/filler" bs=4k >/dev/null 2>&1
  refused_untouched "$f" 3 "cannot write $f/old/tasks.csv: No space left on device" "a full disk (tasks.csv)" "$d" run "$s" --out "$f/old" --outputs summary,tasks
  refused_untouched "$f" 3 "cannot write $f/old/summary.json: No space left on device" "a full disk (summary.json)" "$d" run "$s" --out "$f/old" --outputs summary
  refused_untouched "$f" 3 "cannot write $f/new/summary.json: No space left on device" "a full disk (a new folder)" "$d" run "$s" --out "$f/new" --outputs summary
  [[ -z $(find "$f" -size 0 -type f) ]] || { echo "FAIL 0-byte files left:"; find "$f" -size 0; fail=1; }
else
  echo "note: cannot mount a tmpfs here; full-disk cases skipped"
fi
# /dev/full as an output is a file: refused before anything is written.
run_case 2 "--out /dev/full: is a file" "/dev/full as --out" "$d" run "$s" --out /dev/full
[[ $ran -eq 1 ]] || exit 77
finish "outputs write errors"
