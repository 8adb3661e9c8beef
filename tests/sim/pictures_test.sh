#!/usr/bin/env bash
# Pictures never block the data (docs/pictures-and-progress.md): a 5,000-task random DAG is drawn
# within its picture budget (the full layout refused up front and replaced, noted; a layout past a tiny
# budget killed and replaced by the grid, noted) with its data files intact; Ctrl-C while the pictures
# are drawn keeps the data files and says so; the progress line shows on a terminal only; explore that
# stops early exits 5 and says so on stderr. Usage: pictures_test.sh DIRSCHED ROOT
set -u
d=$1 ROOT=$2
t=$(mktemp -d "${TMPDIR:-/tmp}/dirsched-pictures.XXXXXX")
trap 'rm -rf "$t"' EXIT
fail=0
no() { echo "FAIL $*"; fail=1; }

# --- a 5,000-task random DAG: data first, pictures bounded -------------------------------------------
"$d" gen random --tasks 5000 --workers 8 --seed 1 >"$t/r5k.json" || no "gen"
start=$(date +%s.%N)
"$d" run "$t/r5k.json" --out "$t/a" >"$t/out" 2>"$t/err" || no "run 5k: $(cat "$t/err")"
took=$(echo "$(date +%s.%N) - $start" | bc)
for f in events.jsonl summary.json tasks.csv metrics.json dag.dot dag.svg timeline.svg trace.json report.html; do
  [[ -s $t/a/$f ]] || no "5k: $f missing"
done
[[ -e $t/a/pictures-interrupted.txt ]] && no "5k: pictures-interrupted.txt after a finished run"
# The full layout (5,000 tasks, about 10,000 dependencies) is refused up front: condensed, noted in the
# summary and in the picture.
grep -q '"dag.svg condensed: 5000 tasks and' "$t/a/summary.json" || no "5k: no condensed note in summary.json"
grep -q 'condensed: 5000 tasks merged by callable and worker' "$t/a/dag.svg" || no "5k: no caption in dag.svg"
python3 - "$t/a/metrics.json" <<'PY' || no "5k: metrics.json phases"
import json, sys
m = json.load(open(sys.argv[1]))
p = m["phases_s"]
assert list(p) == ["load", "simulate", "write", "pictures"], p
assert abs(sum(p.values()) - m["wall_s"]) < 0.5 * m["wall_s"] + 0.2, (p, m["wall_s"])
assert m["wall_s"] >= max(p.values())
PY
# A budget too small for any layout: the picture is the grid drawn without Graphviz, noted; the data
# files are the same bytes.
"$d" run "$t/r5k.json" --out "$t/b" --picture-budget 0.001 >"$t/out" 2>"$t/err" || no "run 5k budget: $(cat "$t/err")"
grep -q 'did not finish within the picture budget (0.001 s' "$t/b/summary.json" || no "5k budget: no budget note: $(grep -A3 notes "$t/b/summary.json")"
grep -q 'class="note"' "$t/b/dag.svg" || no "5k budget: dag.svg is not the noted grid"
for f in events.jsonl tasks.csv; do cmp -s "$t/a/$f" "$t/b/$f" || no "5k budget: $f differs"; done
# The same run twice draws the same bytes (the bound is on the graph's shape, not on time).
"$d" run "$t/r5k.json" --out "$t/c" >/dev/null 2>&1
for f in summary.json dag.svg timeline.svg report.html; do cmp -s "$t/a/$f" "$t/c/$f" || no "5k: $f not reproducible"; done
echo "ok   5,000-task random DAG in ${took} s"

# --- Ctrl-C while the pictures are drawn keeps the data ---------------------------------------------
# One chain of 1,000 tasks: the full layout is allowed (nothing to uncross) and takes a second or more.
"$d" gen chains --chains 1 --length 1000 --seed 1 >"$t/chain.json"
"$d" run "$t/chain.json" --out "$t/i" --picture-budget 600 >"$t/out" 2>"$t/err" &
pid=$!
for _ in $(seq 400); do
  grep -q dag.svg "$t/i/.dirsched-run" 2>/dev/null && break
  sleep 0.02
done
kill -INT $pid
wait $pid
rc=$?
[[ $rc -eq 130 ]] || no "SIGINT during pictures: exit $rc, expected 130 ($(cat "$t/err"))"
for f in events.jsonl summary.json tasks.csv metrics.json pictures-interrupted.txt; do
  [[ -s $t/i/$f ]] || no "SIGINT during pictures: $f missing"
done
grep -q "pictures interrupted" "$t/err" || no "SIGINT during pictures: stderr says $(cat "$t/err")"
grep -q "stopped by SIGINT" "$t/i/pictures-interrupted.txt" || no "SIGINT: the note does not say so"
compgen -G "$t/i*tmp-dirsched*" >/dev/null && no "SIGINT during pictures: temporaries left: $(ls -a "$t" "$t/i")"
compgen -G "$t/i/*tmp-dirsched*" >/dev/null && no "SIGINT during pictures: temporaries left in the folder"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$t/i/summary.json" || no "SIGINT: summary.json unreadable"
# render draws them afterwards and takes the note away; the folder can be replaced by a new run.
"$d" render "$t/i" --picture-budget 600 >/dev/null 2>"$t/err" || no "render after SIGINT: $(cat "$t/err")"
[[ -e $t/i/pictures-interrupted.txt ]] && no "render left pictures-interrupted.txt"
[[ -s $t/i/dag.svg ]] || no "render after SIGINT: no dag.svg"
"$d" run "$t/chain.json" --out "$t/i" --outputs summary >/dev/null 2>"$t/err" || no "replace after SIGINT: $(cat "$t/err")"
echo "ok   SIGINT during pictures"

# --- progress: on a terminal only, never in a pipe, not with --quiet ---------------------------------
script -qec "'$d' run '$ROOT/scenarios/quick-tour.json' --out '$t/p' --outputs summary,dag" /dev/null >"$t/tty" 2>&1
grep -q '\[dirsched\] pictures:' "$t/tty" || no "tty: no pictures progress line: $(tr '\r' '\n' <"$t/tty" | head -5)"
grep -q '\[dirsched\] write:' "$t/tty" || no "tty: no write progress line"
script -qec "'$d' run '$ROOT/scenarios/quick-tour.json' --out '$t/p' --outputs summary,dag --quiet" /dev/null >"$t/tty" 2>&1
grep -q '\[dirsched\]' "$t/tty" && no "--quiet on a tty still shows progress"
"$d" run "$ROOT/scenarios/quick-tour.json" --out "$t/p" --outputs summary,dag 2>"$t/err" >/dev/null
grep -q '\[dirsched\]' "$t/err" && no "a pipe got the progress line"
echo "ok   progress on a tty only"

# --- explore stopped early: its own status, and a line on stderr ------------------------------------
"$d" explore "$ROOT/scenarios/explore-twelve-tasks.json" --max-states 5 >"$t/x" 2>"$t/err"
rc=$?
[[ $rc -eq 5 ]] || no "explore stopped early: exit $rc, expected 5"
grep -q "stopped early" "$t/err" || no "explore stopped early: stderr says $(cat "$t/err")"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["stopped_early"] is True' "$t/x" || no "explore: JSON"
"$d" explore "$ROOT/scenarios/explore-twelve-tasks.json" >"$t/x" 2>"$t/err" || no "explore to the end: exit $?"
echo "ok   explore early stop"

# --- past 100,000 tasks: the aggregated timeline and a windowed trace, and the run says which to open --
"$d" gen stream --tasks 100001 --workers 64 >"$t/big.json" || no "gen big"
"$d" run "$t/big.json" --out "$t/big" >"$t/out" 2>"$t/err" || no "run 100,001 tasks: $(cat "$t/err")"
grep -q "(open timeline.svg: aggregated past 100000 tasks, no report.html)" "$t/out" || no "big: run names report.html: $(cat "$t/out")"
for f in timeline.svg trace.json; do [[ -s $t/big/$f ]] || no "big: $f missing"; done
for f in report.html dag.svg; do [[ -e $t/big/$f ]] && no "big: $f drawn past the full-drawing limit"; done
grep -q "Aggregated timeline: 100001 tasks" "$t/big/timeline.svg" || no "big: timeline.svg is not the aggregated one"
python3 - "$t/big" <<'PY' || no "big: summary note or trace.json"
import json, os, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
assert any(n.startswith("pictures aggregated: 100001 tasks exceed 100000") for n in s["notes"]), s["notes"]
t = json.load(open(d + "/trace.json"))
assert "windowed" in t["otherData"]["note"], t["otherData"]
assert os.path.getsize(d + "/trace.json") < 16 << 20  # bounded, whatever the run's size
PY
echo "ok   aggregated pictures past 100,000 tasks"
exit $fail
