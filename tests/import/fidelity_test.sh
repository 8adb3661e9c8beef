#!/usr/bin/env bash
# dirsched fidelity on hand-made run folders whose errors are known: the makespan error, dispatch
# errors, order agreement, Kendall's tau-b, fate mismatches, group launch error, the bound's exit 1.
set -u
dirsched=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
mk() {  # folder, makespan, then events as JSON lines on stdin
  mkdir -p "$1"
  cat >"$1/events.jsonl"
  printf '{"scenario":"hand","engine":"strace","time_scale":1,"makespan_s":%s,"outcome":"COMPLETED"}\n' "$2" >"$1/summary.json"
  printf '{"dirsched":"run","scenario":"hand","engine":"strace","time_scale":1,"files":["events.jsonl","summary.json"]}\n' >"$1/.dirsched-run"
}
# Observed: a on 0 at 0, b on 0 at 1, g (group) members on 0 and 1 at 2, c on 1 at 0; makespan 4.
mk "$tmp/obs" 4 <<'EOF2'
{"seq":0,"t_s":0,"event":"submit","task":"a","kind":"single"}
{"seq":1,"t_s":0,"event":"submit","task":"b","kind":"single"}
{"seq":2,"t_s":0,"event":"submit","task":"c","kind":"single"}
{"seq":3,"t_s":0,"event":"submit","task":"g","kind":"group"}
{"seq":4,"t_s":0,"event":"dispatch","task":"a","member":0,"worker":0}
{"seq":5,"t_s":0,"event":"dispatch","task":"c","member":0,"worker":1}
{"seq":6,"t_s":1,"event":"complete","task":"a"}
{"seq":7,"t_s":1,"event":"dispatch","task":"b","member":0,"worker":0}
{"seq":8,"t_s":2,"event":"complete","task":"b"}
{"seq":9,"t_s":2,"event":"complete","task":"c"}
{"seq":10,"t_s":2,"event":"dispatch","task":"g","member":0,"worker":0}
{"seq":11,"t_s":2,"event":"dispatch","task":"g","member":1,"worker":1}
{"seq":12,"t_s":2,"event":"group_launched","task":"g"}
{"seq":13,"t_s":4,"event":"complete","task":"g"}
EOF2
# Simulated: b before a on worker 0 (a at 1.5, b at 0.5), c as observed, g at 3 (launch error +1),
# b fails; makespan 5 (error +25%).
mk "$tmp/sim" 5 <<'EOF2'
{"seq":0,"t_s":0,"event":"submit","task":"a","kind":"single"}
{"seq":1,"t_s":0,"event":"submit","task":"b","kind":"single"}
{"seq":2,"t_s":0,"event":"submit","task":"c","kind":"single"}
{"seq":3,"t_s":0,"event":"submit","task":"g","kind":"group"}
{"seq":4,"t_s":0,"event":"dispatch","task":"c","member":0,"worker":1}
{"seq":5,"t_s":0.5,"event":"dispatch","task":"b","member":0,"worker":0}
{"seq":6,"t_s":1.5,"event":"fail","task":"b","member":0}
{"seq":7,"t_s":1.5,"event":"dispatch","task":"a","member":0,"worker":0}
{"seq":8,"t_s":2,"event":"complete","task":"c"}
{"seq":9,"t_s":2.5,"event":"complete","task":"a"}
{"seq":10,"t_s":3,"event":"dispatch","task":"g","member":0,"worker":0}
{"seq":11,"t_s":3,"event":"dispatch","task":"g","member":1,"worker":1}
{"seq":12,"t_s":3,"event":"group_launched","task":"g"}
{"seq":13,"t_s":5,"event":"complete","task":"g"}
EOF2
"$dirsched" fidelity "$tmp/obs" "$tmp/sim" --json "$tmp/f.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
[[ $rc -eq 0 ]] || { echo "FAIL no bound: exit $rc"; cat "$tmp/err"; fail=1; }
grep -q "^verdict: makespan +25.0%" "$tmp/out" || { echo "FAIL verdict line"; cat "$tmp/out"; fail=1; }
python3 - "$tmp/f.json" <<'PY' || fail=1
import json, sys
f = json.load(open(sys.argv[1]))
ok = True
def want(c, what):
    global ok
    if not c: print("FAIL", what, json.dumps(f, indent=1)[:3000]); ok = False
want(f["makespan_error"] == 0.25, "makespan error +0.25")
d = f["dispatch_error_s"]
# |errors|: a 1.5, b 0.5, c 0, g[0] 1, g[1] 1 -> sorted 0, .5, 1, 1, 1.5: median (nearest rank) 1, max 1.5
want(d["members"] == 5 and d["median"] == 1 and d["max"] == 1.5 and d["p95"] == 1.5, "dispatch errors")
want(d["share_of_observed_makespan"]["max"] == 0.375, "max as a share of the observed makespan")
want(f["order_agreement"]["share"] == 0.5 and f["order_agreement"]["differing"] == ["0"], "order agreement: worker 0 differs")
# observed times a0 b1 c0 g0 2 g1 2 vs simulated a1.5 b.5 c0 g0 3 g1 3: tau-b = (n0-n1-n2+n3-2*swaps)/sqrt((n0-n1)(n0-n2))
# n0=10, ties x: (a,c)=1 + (g0,g1)=1 -> n1=2; ties y: c? no: (g0,g1)=1 -> n2=1; joint (g0,g1)=1 -> n3=1
# discordant: (a,b) only -> tau = (10-2-1+1-2)/sqrt(8*9) = 6/sqrt(72)
want(abs(f["kendall_tau"]["tau_b"] - 6 / 72 ** 0.5) < 1e-12, "kendall tau-b %s" % f["kendall_tau"])
want(f["fate_mismatches"]["count"] == 1 and f["fate_mismatches"]["tasks"][0] == {"task": "b", "observed": "COMPLETED", "simulated": "FAILED"}, "fate mismatch b")
want(f["group_launch_error_s"]["max"] == 1 and f["group_launch_error_s"]["groups"][0]["error_s"] == 1, "group launch error")
sys.exit(0 if ok else 1)
PY
"$dirsched" fidelity "$tmp/obs" "$tmp/sim" --max-makespan-error 0.3 >"$tmp/out" 2>&1; rc=$?
[[ $rc -eq 0 ]] && grep -q "within the bound of 30.0%" "$tmp/out" || { echo "FAIL within bound: exit $rc"; cat "$tmp/out"; fail=1; }
"$dirsched" fidelity "$tmp/obs" "$tmp/sim" --max-makespan-error 0.2 >"$tmp/out" 2>&1; rc=$?
[[ $rc -eq 1 ]] && grep -q "BEYOND the bound of 20.0%" "$tmp/out" || { echo "FAIL beyond bound: exit $rc"; cat "$tmp/out"; fail=1; }
"$dirsched" fidelity "$tmp/obs" "$tmp/obs" --max-makespan-error 0 >"$tmp/out" 2>&1 || { echo "FAIL a run against itself"; cat "$tmp/out"; fail=1; }
grep -q "order: 2 of 2 workers" "$tmp/out" || { echo "FAIL itself: order"; cat "$tmp/out"; fail=1; }
"$dirsched" fidelity "$tmp/obs" "$tmp/nope" >"$tmp/out" 2>"$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "nope: no such run folder" "$tmp/err" || { echo "FAIL a missing folder: exit $rc"; fail=1; }
# --svg: the observed timeline above the simulated one, on one time axis (the later end of the two).
"$dirsched" fidelity "$tmp/obs" "$tmp/sim" --svg "$tmp/both.svg" >/dev/null 2>&1 || { echo "FAIL --svg"; fail=1; }
python3 - "$tmp/both.svg" "$tmp/obs" "$tmp/sim" <<'PY' || fail=1
import re, sys, xml.etree.ElementTree as ET
text = open(sys.argv[1]).read()
root = ET.fromstring(text)
ns = "{http://www.w3.org/2000/svg}"
inner = root.findall(ns + "svg")
titles = [t.text for t in root.findall(ns + "text")]
axes = re.findall(r"Dispatch timeline \(([^)]*) s\)", text)
ok = (len(inner) == 2 and titles[0].startswith("observed: " + sys.argv[2]) and titles[1].startswith("simulated: " + sys.argv[3])
      and len(axes) == 2 and axes[0] == axes[1] and float(inner[1].get("y")) > float(inner[0].get("y")))
if not ok:
    print("FAIL --svg: two timelines, titled, one axis", titles, axes)
sys.exit(0 if ok else 1)
PY
# render --observed (issue 25: the report of a replay): report.html gains the measures and both timelines
# (observed above simulated), fidelity.json is written and listed; a missing observed folder is exit 2
# and leaves the folder as it was.
"$dirsched" render "$tmp/sim" --observed "$tmp/obs" >/dev/null 2>"$tmp/err" || { echo "FAIL render --observed"; cat "$tmp/err"; fail=1; }
python3 - "$tmp/sim" <<'PY' || fail=1
import json, re, sys
d = sys.argv[1]
html = open(d + "/report.html").read()
at = html.find("<h2>Against the observed run</h2>")
ok = at > 0 and "verdict: makespan +25.0%" in html[at:]
titles = re.findall(r'font-weight="bold">(observed|simulated): ', html[at:])
ok &= titles == ["observed", "simulated"]
ok &= json.load(open(d + "/fidelity.json"))["makespan_error"] == 0.25
ok &= "fidelity.json" in json.load(open(d + "/.dirsched-run"))["files"]
if not ok:
    print("FAIL render --observed: section, titles", titles)
    sys.exit(1)
PY
before=$(cd "$tmp/sim" && cat report.html fidelity.json | cksum)
"$dirsched" render "$tmp/sim" --observed "$tmp/none" >/dev/null 2>"$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -q "$tmp/none" "$tmp/err" || { echo "FAIL render --observed of a missing folder: exit $rc"; cat "$tmp/err"; fail=1; }
[[ "$(cd "$tmp/sim" && cat report.html fidelity.json | cksum)" == "$before" ]] || { echo "FAIL a refused render changed the folder"; fail=1; }
# --json and --svg name files the user asked for: a regular file there is replaced, anything else is
# refused with exit 2 before anything is written (a folder, a FIFO, a link; the files fidelity reads; an
# empty path; one path for both).
refused_out() {  # what the error must say, then the options
  local want=$1
  shift
  local sums
  sums=$(cd "$tmp" && cat obs/summary.json obs/events.jsonl sim/summary.json sim/events.jsonl | cksum)
  "$dirsched" fidelity "$tmp/obs" "$tmp/sim" "$@" >/dev/null 2>"$tmp/err"; rc=$?
  [[ $rc -eq 2 ]] && grep -qF -- "$want" "$tmp/err" || { echo "FAIL fidelity $* not refused with '$want' (exit $rc)"; cat "$tmp/err"; fail=1; }
  [[ "$(cd "$tmp" && cat obs/summary.json obs/events.jsonl sim/summary.json sim/events.jsonl | cksum)" == "$sums" ]] \
    || { echo "FAIL fidelity $* changed its inputs"; fail=1; }
}
mkdir "$tmp/dir-out"
mkfifo "$tmp/fifo-out"
ln -s "$tmp/f.json" "$tmp/link-out"
refused_out "--json $tmp/obs/summary.json: is $tmp/obs/summary.json, which this command reads" --json "$tmp/obs/summary.json"
refused_out "--svg $tmp/sim/events.jsonl: is $tmp/sim/events.jsonl, which this command reads" --json "$tmp/new.json" --svg "$tmp/sim/events.jsonl"
[[ ! -e "$tmp/new.json" ]] || { echo "FAIL a refused --svg let --json be written"; fail=1; }
refused_out "--json $tmp/dir-out: a folder" --json "$tmp/dir-out"
refused_out "--svg $tmp/fifo-out: not a regular file" --svg "$tmp/fifo-out"
refused_out "--json $tmp/link-out: a link" --json "$tmp/link-out"
refused_out "--json: an empty path" --json ""
refused_out "--json and --svg: both name $tmp/same" --json "$tmp/same" --svg "$tmp/same"
[[ -d "$tmp/dir-out" && -p "$tmp/fifo-out" && -L "$tmp/link-out" ]] || { echo "FAIL a refused output path was replaced"; fail=1; }
echo old >"$tmp/mine.json"
"$dirsched" fidelity "$tmp/obs" "$tmp/sim" --json "$tmp/mine.json" >/dev/null 2>"$tmp/err" || { echo "FAIL --json over a regular file"; cat "$tmp/err"; fail=1; }
grep -q makespan_error "$tmp/mine.json" || { echo "FAIL --json did not replace the regular file it names"; fail=1; }
# Event files that are not a run's record: refused (exit 2), not measured. A file doubled or reversed (its
# events numbered 0, 1, 2, ... no longer), and an events.jsonl that holds other than the events its
# summary.json counts (an empty one beside a run's summary was measured as a run with no dispatch).
not_a_run() {  # name, what the error must say; the folder $tmp/$name is the observed side
  "$dirsched" fidelity "$tmp/$1" "$tmp/sim" >"$tmp/out" 2>"$tmp/err"; rc=$?
  [[ $rc -eq 2 ]] && grep -qF -- "$2" "$tmp/err" && [[ ! -s "$tmp/out" ]] \
    || { echo "FAIL fidelity of $1 not refused with '$2' (exit $rc)"; cat "$tmp/err" "$tmp/out"; fail=1; }
}
mkdir "$tmp/doubled" "$tmp/reversed"
cp "$tmp/obs/summary.json" "$tmp/doubled/" && cat "$tmp/obs/events.jsonl" "$tmp/obs/events.jsonl" >"$tmp/doubled/events.jsonl"
cp "$tmp/obs/summary.json" "$tmp/reversed/" && tac "$tmp/obs/events.jsonl" >"$tmp/reversed/events.jsonl"
not_a_run doubled "$tmp/doubled/events.jsonl line 15: seq 0 where 14 was expected"
not_a_run reversed "$tmp/reversed/events.jsonl line 1: seq 13 where 0 was expected"
"$dirsched" run "$root/scenarios/quick-tour.json" --out "$tmp/tour" --outputs events,summary >/dev/null 2>&1 || { echo "FAIL run quick-tour"; fail=1; }
n=$(grep -c . "$tmp/tour/events.jsonl")
: >"$tmp/tour/events.jsonl"
"$dirsched" fidelity "$tmp/tour" "$tmp/tour" >/dev/null 2>"$tmp/err"; rc=$?
[[ $rc -eq 2 ]] && grep -qF "$tmp/tour/events.jsonl: holds 0 events, but summary.json beside it counts $n (the two files are not of one run)" "$tmp/err" \
  || { echo "FAIL an empty events.jsonl beside a run's summary (exit $rc)"; cat "$tmp/err"; fail=1; }
# An observed makespan of 0: the relative error is undefined (it said +100%), JSON null, and no bound is met.
mk "$tmp/zero" 0 <"$tmp/obs/events.jsonl"
"$dirsched" fidelity "$tmp/zero" "$tmp/sim" --json "$tmp/zero.json" --max-makespan-error 0.5 >"$tmp/out" 2>"$tmp/err"; rc=$?
[[ $rc -eq 1 ]] && grep -q "^makespan error: undefined (the observed makespan is 0)" "$tmp/out" \
  && python3 -c 'import json,sys; f=json.load(open(sys.argv[1])); sys.exit(0 if f["makespan_error"] is None and f["within_bound"] is False else 1)' "$tmp/zero.json" \
  || { echo "FAIL an observed makespan of 0 (exit $rc)"; cat "$tmp/out" "$tmp/err"; fail=1; }
exit $fail
