#!/usr/bin/env bash
# Limits of issue 12, refused before any work with the count or the range in the message (exit 2):
# strict whole numbers (--seed, --max-states, -j, --sample, --limit, --max-variants, the gen counts),
# gen's real numbers and its total, sweep variants counted without overflow (--max-variants), and the
# explorer's --max-memory stopping with a partial result. Usage: limits_options.sh DIRSCHED ROOT
source "$(dirname "$0")/limits_common.sh"
ok=$root/scenarios/quick-tour.json

# --- whole numbers: a sign, an exponent, past 2^64-1 or out of the range are refused
expect seed-negative 2 "--seed: '-1' is not a whole number from 0 to 18446744073709551615" \
  "$dirsched" run "$ok" --out "$tmp/never" --seed -1
expect seed-20-digits 2 "--seed: '18446744073709551616' is not a whole number" \
  "$dirsched" run "$ok" --out "$tmp/never" --seed 18446744073709551616
expect seed-exponent 2 "--seed: '1e3' is not a whole number" "$dirsched" gen stream --seed 1e3
expect sweep-seed-negative 2 "--seed: '-1' is not a whole number" "$dirsched" sweep "$ok" --out "$tmp/never" --seed -1
expect max-states-negative 2 "--max-states: '-5' is not a whole number from 1 to 4000000000" \
  "$dirsched" explore "$ok" --max-states -5
expect max-states-zero 2 "--max-states: '0' is not a whole number from 1" "$dirsched" explore "$ok" --max-states 0
expect jobs-zero 2 "--jobs: '0' is not a whole number from 1 to 256" "$dirsched" sweep "$ok" --out "$tmp/never" -j 0
expect sample-negative 2 "--sample: '-3' is not a whole number" "$dirsched" sweep "$ok" --out "$tmp/never" --sample -3
expect compare-limit-negative 2 "--limit: '-1' is not a whole number" "$dirsched" compare a b --limit -1
expect max-variants-zero 2 "--max-variants: '0' is not a whole number from 1 to 1000000" \
  "$dirsched" sweep "$ok" --out "$tmp/never" --max-variants 0

# --- gen: strict counts with ranges, real numbers finite and in range, the total bounded
expect gen-tasks-2e19 2 "--tasks: '2e19' is not a whole number from 1 to 10000000" "$dirsched" gen stream --tasks 2e19
expect gen-tasks-past-limit 2 "--tasks: '10000001' is not a whole number from 1 to 10000000" \
  "$dirsched" gen stream --tasks 10000001
expect gen-workers-zero 2 "--workers: '0' is not a whole number from 1 to 65536" "$dirsched" gen stream --workers 0
expect gen-width-fraction 2 "--width: '2.5' is not a whole number" "$dirsched" gen fork-join --width 2.5
expect gen-duration-1e400 2 "--duration-s: '1e400' is not a number from 0 to 4294967296" \
  "$dirsched" gen stream --duration-s 1e400
expect gen-duration-nan 2 "--duration-s: 'nan' is not a number" "$dirsched" gen stream --duration-s nan
expect gen-fraction-above-1 2 "--group-fraction: '1.5' is not a number from 0 to 1" "$dirsched" gen random --group-fraction 1.5
expect gen-rate-zero 2 "--arrival-rate: '0' is not a number from 1e-09 to 1e+09" "$dirsched" gen stream --arrival-rate 0
expect gen-total-tasks 2 "gen fork-join: rounds x (width + 2) = 100000020000000 tasks, more than the limit of 10000000" \
  "$dirsched" gen fork-join --rounds 10000000 --width 10000000
expect gen-total-edges 2 "gen random: tasks x edges = 10000000000 edges, more than the limit of 100000000" \
  "$dirsched" gen random --tasks 10000000 --edges 1000
# --help says what each checked option takes, never CLI11's "FLOAT:UINT" (its C++ type and the check).
expect gen-help-tasks 0 "--tasks UINT in [1, 10000000]" "$dirsched" gen --help
expect gen-help-fraction 0 "--group-fraction NUMBER in [0, 1]" "$dirsched" gen --help
expect gen-help-rate 0 "--arrival-rate NUMBER in [1e-09, 1e+09]" "$dirsched" gen --help
expect explore-help-memory 0 "--max-memory SIZE " "$dirsched" explore --help
for sub in run sweep compare check render explore gen; do
  "$dirsched" "$sub" --help >"$tmp/help" 2>&1
  if grep -E -- '--[a-z-]+ [A-Z]+:[A-Z]' "$tmp/help"; then echo "FAIL $sub --help: a type:check placeholder"; fail=1; fi
  if grep -q "see the README" "$tmp/help"; then echo "FAIL $sub --help: an option without its own help"; fail=1; fi
done
# --edges and generate.edges share one bound (kMaxGenEdges, 1,024): gen accepts what the block accepts.
expect gen-edges-past-limit 2 "--edges: '1025' is not a whole number from 0 to 1024" "$dirsched" gen random --tasks 10 --edges 1025
echo '{"name":"e","generate":{"family":"random","tasks":10,"edges":1025}}' >"$tmp/edges.json"
expect generate-edges-past-limit 2 "edges.json: generate.edges: must be a number from 0 to 1024, found 1025" \
  "$dirsched" check "$tmp/edges.json"
expect gen-edges-1024 0 "" "$dirsched" gen random --tasks 10 --edges 1024 --seed 3
# What a block pays for before its first op is bounded as gen bounds it: tasks x edges, groups x size.
echo '{"name":"e","generate":{"family":"random","tasks":1000000,"edges":1000}}' >"$tmp/product.json"
expect generate-tasks-x-edges 2 "product.json: generate: the family 'random' would make 1000000000 edges (tasks x edges), more than the limit of 100000000" \
  timeout 20 "$dirsched" run "$tmp/product.json" --out "$tmp/never"
echo '{"name":"m","generate":{"family":"tp-groups","groups":10000000,"size":65536,"workers":65536,"singles_per_group":0}}' >"$tmp/members.json"
expect generate-members 2 "members.json: generate: the family 'tp-groups' would make 655360000000 group members (groups x size)" \
  timeout 20 "$dirsched" run "$tmp/members.json" --out "$tmp/never"
# A trace's group members in all (100,000,000), as generate's groups x size: a 300 MB trace file of 1,526
# groups of 65,536 members, past the whole-read limit, so the streamed check words it; refused at the
# group that passes it, before any run (before the limit, all 1e8 members were taken on).
python3 - "$in/members-file.json" <<'PY'
import sys
members = "[" + ",".join(["[]"] * 65536) + "]"
with open(sys.argv[1], "w") as f:
    f.write('{"name":"m","callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":1}},"workers":{"next_level":[{"id":0,"kind":"local_chip"}]},"trace":[')
    for i in range(1526):
        f.write('%s{"op":"submit_next_level_group","task":"g%d","callable":"k","args_list":%s}' % ("," if i else "", i, members))
    f.write("]}")
PY
expect trace-file-members 2 "members-file.json: trace[1525]: the trace's groups have 100007936 members up to this one, more than the limit of 100000000 group members in all" \
  "$dirsched" run "$in/members-file.json" --out "$tmp/never"
rm -f "$in/members-file.json"
echo '{"name":"e","seed":3,"generate":{"family":"random","tasks":10,"edges":1024}}' >"$tmp/edges.json"
expect generate-edges-1024 5 "" "$dirsched" explore "$tmp/edges.json" --max-states 1
# At the bounds the values are accepted (stdout only, nothing written).
expect gen-seed-2p64m1 0 "" "$dirsched" gen stream --tasks 3 --seed 18446744073709551615
grep -q '"seed": 18446744073709551615' "$tmp/out" || { echo "FAIL gen-seed-2p64m1: seed not kept"; fail=1; }

# --- sweep variants: counted without overflow, refused before any work, the count in the message
vars() {  # n variables of k candidates each (every one used: a var nothing uses is refused)
  local n=$1 k=$2 s="" t="" i j c
  for ((i = 0; i < n; i++)); do
    c=""
    for ((j = 0; j < k; j++)); do c+="${c:+,}$j"; done
    s+="${s:+,}\"v$(printf %02d "$i")\":[$c]"
    t+="${t:+,}{\"op\":\"submit_next_level\",\"task\":\"a$i\",\"callable\":\"k\",\"worker\":\"\$v$(printf %02d "$i")\"}"
  done
  printf '{"name":"many","workers":{"next_level":[{"id":0,"kind":"local_chip"}]},"callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":1}},"vars":{%s},"trace":[%s]}' "$s" "$t"
}
vars 10 10 >"$in/ten-by-ten.json"
vars 64 2 >"$in/sixty-four-by-two.json"
vars 2 3 >"$in/three-by-three.json"
start=$(date +%s)
expect sweep-10-vars-10-candidates 2 "vars: 10 variables give 10000000000 variants, more than --max-variants 10000" \
  "$dirsched" sweep "$in/ten-by-ten.json" --out "$tmp/never"
[ $(($(date +%s) - start)) -le 5 ] || { echo "FAIL sweep-10-vars-10-candidates: not refused quickly"; fail=1; }
expect sweep-64-vars-2-candidates 2 "vars: 64 variables give 18446744073709551616 variants, more than a sweep can number" \
  "$dirsched" sweep "$in/sixty-four-by-two.json" --out "$tmp/never"
expect sweep-64-vars-sampled 2 "more than a sweep can number" \
  "$dirsched" sweep "$in/sixty-four-by-two.json" --out "$tmp/never" --sample 2
expect sweep-plan-over-max 2 "vars: 2 variables give 6 variants, more than --max-variants 5" \
  "$dirsched" sweep "$root/tests/sim/sweep-rejected-variant.json" --plan --out "$tmp/never" --max-variants 5
expect sweep-sample-over-max 2 "10000000000 variants (20000 sampled), more than --max-variants 10000" \
  "$dirsched" sweep "$in/ten-by-ten.json" --out "$tmp/never" --sample 20000
# Within the limit (3 x 3 = 9, at the limit): a plan of 9 commands; a sample of a huge product is fine.
expect sweep-plan-within 0 "9 commands" "$dirsched" sweep "$in/three-by-three.json" --plan --out "$tmp/never" --max-variants 9
# (--plan writes its sweep folder and marker, which names the scenario: another folder for another one.)
expect sweep-sample-of-huge 0 "3 commands" "$dirsched" sweep "$in/ten-by-ten.json" --plan --out "$tmp/plan-sample" --sample 3

# --- explore --max-memory: a size, and a stop with the partial result
expect max-memory-bad-unit 2 "--max-memory: '2X' is not a size from 1 MiB to 1 TiB" "$dirsched" explore "$ok" --max-memory 2X
expect max-memory-too-small 2 "--max-memory: '1000' is not a size" "$dirsched" explore "$ok" --max-memory 1000
expect max-memory-past-2p64 2 "--max-memory: '99999999999999999999G' is not a size" \
  "$dirsched" explore "$ok" --max-memory 99999999999999999999G
(cd "$sandbox" && "$dirsched" gen random --tasks 3000 --workers 8 --seed 1) >"$in/random-3000.json"
expect explore-memory-bound 5 "" "$dirsched" explore "$in/random-3000.json" --max-states 100000 --max-memory 64M
python3 - "$tmp/out" <<'PY' || fail=1
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["stopped_early"] is True and "stopped at max_memory=67108864 bytes" in r.get("note", "") and r["states"] < 100000
print("ok   explore-memory-bound: partial result" if ok else "FAIL explore-memory-bound: %s" % {k: r.get(k) for k in ("states", "stopped_early", "note")})
sys.exit(0 if ok else 1)
PY
# The same exploration under a bound it does not reach is not cut short by memory.
expect explore-memory-ample 5 "" "$dirsched" explore "$in/random-3000.json" --max-states 50 --max-memory 1G
grep -q 'stopped after max_states=50' "$tmp/out" || { echo "FAIL explore-memory-ample: not stopped by max_states"; fail=1; }
# A path deeper than a recursive search's stack allowed (a 30,000-task stream: 60,000 steps; the recursive
# search stopped at depth 4,306) goes on to --max-states: the search keeps its path on the heap.
(cd "$sandbox" && "$dirsched" gen stream --tasks 30000 --workers 2) >"$in/stream-30000.json"
expect explore-deep-path 5 "" "$dirsched" explore "$in/stream-30000.json" --max-states 20000
grep -q 'stopped after max_states=20000' "$tmp/out" && grep -q '"states": 20001' "$tmp/out" &&
  ! grep -q 'overflow the stack' "$tmp/out" || { echo "FAIL explore-deep-path: not explored to max_states"; fail=1; }

# --- explore --max-memory bounds the whole command, its set-up included (issue 28): the heap is checked
# while the scenario is loaded, the trace built and its facts read, and RLIMIT_DATA (what the process
# held + the bound + 64 MiB) makes what no check saw in time a failed allocation: the same early stop
# (exit 5, "during the set-up" on stderr, no state), never bad_alloc or 134. Peak RSS is measured
# (getrusage of the child) against what a tiny explore holds plus the bound plus the margin. A sanitizer
# build (DIRSCHED_SANITIZED) sets no data limit and its RSS is the sanitizer's: those checks are skipped.
cat >"$tmp/rss.py" <<'PY'
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024))
sys.exit(rc)
PY
sanitized=${DIRSCHED_SANITIZED:-0}
python3 "$tmp/rss.py" "$tmp/rss-base" "$dirsched" explore "$ok" --quiet >/dev/null 2>&1
base=$(cat "$tmp/rss-base")
bound=$((64 << 20)) margin=$((64 << 20))
setup_case() {  # NAME FILE: explore FILE under --max-memory 64M stops in the set-up, RSS near the bound
  local name=$1 file=$2
  expect "$name" 5 "dirsched explore: stopped early, the result covers only the states visited: stopped at max_memory=67108864 bytes during the set-up (" \
    python3 "$tmp/rss.py" "$tmp/rss-$name" "$dirsched" explore "$file" --max-memory 64M --quiet
  grep -q '"states": 0,' "$tmp/out" || { echo "FAIL $name: the JSON is not a stop with no state"; fail=1; }
  local rss
  rss=$(cat "$tmp/rss-$name")
  if [ "$sanitized" = 0 ] && [ "$rss" -gt $((base + bound + margin)) ]; then
    echo "FAIL $name: peak RSS $((rss >> 20)) MiB, more than $(((base + bound + margin) >> 20)) MiB (a tiny explore's $((base >> 20)) + the bound 64 + the margin 64)"
    fail=1
  else
    echo "     $name: peak RSS $((rss >> 20)) MiB ($(grep -o 'during the set-up ([^)]*)' "$tmp/err"))"
  fi
}
# A random block with groups (the issue's shape): 100,000 tasks need 140 MB to set up (1.3 GB when
# the trace's facts were a bit table per op position).
echo '{"name":"big","generate":{"family":"random","tasks":100000,"workers":16,"group_fraction":0.2}}' >"$in/random-block-100k.json"
setup_case explore-setup-random-block "$in/random-block-100k.json"
# What the set-up needs grows linearly: 100,000 tasks, one state, under the default bound (2G): 140 MB
# (the trace's facts as a bit table per op position made it 1.3 GB, 5.2 GB at 200,000 tasks).
expect explore-setup-linear 5 "stopped after max_states=1 states" \
  python3 "$tmp/rss.py" "$tmp/rss-linear" "$dirsched" explore "$in/random-block-100k.json" --max-states 1 --quiet
rss=$(cat "$tmp/rss-linear")
if [ "$sanitized" = 0 ] && [ "$rss" -gt $((base + (200 << 20))) ]; then
  echo "FAIL explore-setup-linear: peak RSS $((rss >> 20)) MiB, more than a tiny explore's $((base >> 20)) + 200 MiB"; fail=1
else
  echo "     explore-setup-linear: peak RSS $((rss >> 20)) MiB"
fi
# 300,000 tasks: 360 MB to set up; the trace's first allocation alone passes the data limit.
echo '{"name":"big","generate":{"family":"random","tasks":300000,"workers":16,"group_fraction":0.2}}' >"$in/random-block-300k.json"
setup_case explore-setup-random-block-300k "$in/random-block-300k.json"
# The same shape as a file (a streamed trace, read back whole by the explorer).
(cd "$sandbox" && "$dirsched" gen random --tasks 100000 --workers 16 --group-fraction 0.2 --seed 1) >"$in/random-100k.json"
setup_case explore-setup-random-file "$in/random-100k.json"
# Independent singles (no buffers at all): 300,000 of them need 190 MB to set up.
echo '{"name":"big","generate":{"family":"stream","tasks":300000,"workers":16}}' >"$in/stream-block-300k.json"
setup_case explore-setup-stream-block "$in/stream-block-300k.json"
# A 1,000,000-task block: its loaded scenario alone passes the bound.
echo '{"name":"big","generate":{"family":"random","tasks":1000000,"workers":16,"group_fraction":0.2}}' >"$in/random-block-1m.json"
setup_case explore-setup-load "$in/random-block-1m.json"
if [ "$sanitized" = 0 ]; then
  # A data limit already lower than the bound is kept: an allocation that fails under it, in the load, in
  # the set-up or while exploring, is the same stop (while exploring: the states visited, no overtakes).
  expect explore-data-limit-load 5 "during the set-up (loading the scenario), before the first state: an allocation failed at the data limit (RLIMIT_DATA) of 61440000 bytes" \
    bash -c 'ulimit -d 60000 && exec "$@"' - "$dirsched" explore "$in/random-block-1m.json" --max-memory 1G
  expect explore-data-limit-setup 5 "during the set-up (building the trace" \
    bash -c 'ulimit -d 120000 && exec "$@"' - "$dirsched" explore "$in/random-block-300k.json" --max-memory 1G
  grep -qF "before the first state: an allocation failed at the data limit (RLIMIT_DATA) of 122880000 bytes" "$tmp/err" ||
    { echo "FAIL explore-data-limit-setup: not the data limit's failure"; fail=1; }
  expect explore-data-limit-search 5 "states: an allocation failed at the data limit (RLIMIT_DATA) of 256000000 bytes; results cover only those states, without the groups' overtakes" \
    bash -c 'ulimit -d 250000 && exec "$@"' - "$dirsched" explore "$in/random-block-100k.json" --max-memory 1G
  grep -q '"stopped_early": true' "$tmp/out" || { echo "FAIL explore-data-limit-search: no early stop in the JSON"; fail=1; }
fi
finish
