#!/usr/bin/env bash
# Collectives (docs/simulation.md, "Collectives"): a group's members exchange data among their hosts
# after computing, and the times match a hand computation on tests/sim/collective/two-hosts.xml (link
# a-b: 100 MB/s, 1 ms, one link for both directions; CM02 without cross traffic, so a transfer of S
# bytes alone takes 1 ms + S / 100 MB/s, and two opposite transfers share the link at 50 MB/s each).
# Members on one host exchange at no cost; a missing route is refused before the run; a fault during
# the exchange fails the group without a deadlock; the threads engine refuses a collective.
set -u
dirsched=$1
root=$(cd "$2" && pwd)
here=$root/tests/sim/collective
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL $*"; fail=1; }
cm02=(--cfg=network/model:CM02 --cfg=network/crosstraffic:0)

# A scenario from allreduce.json with edits (python expressions on d, the document).
variant() {
  local name=$1 edit=$2
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['platform']=sys.argv[3]; $edit; json.dump(d, open(sys.argv[2],'w'))" \
    "$here/allreduce.json" "$tmp/$name.json" "$here/two-hosts.xml"
}
makespan() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]+'/summary.json'))['makespan_s'])" "$1"; }
# Within 1e-7 relative: SimGrid solves the sharing numerically (3.67066664 s for the hand 3.6706667 s).
near() { python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); sys.exit(0 if abs(a-b) <= 1e-7*max(1,abs(b)) else 1)" "$1" "$2"; }
run_case() {
  local name=$1 want=$2
  "$dirsched" run "$tmp/$name.json" --out "$tmp/$name" --outputs summary "${cm02[@]}" >/dev/null 2>"$tmp/err" ||
    { no "$name ran"; cat "$tmp/err"; return; }
  local got
  got=$(makespan "$tmp/$name")
  near "$got" "$want" || no "$name: makespan $got, by hand $want"
}

# 1 s of compute, then the exchange of 100 MB between a and b (two members):
# allreduce: 2 steps, each member sends 50 MB to the other at once: 2 x (0.001 + 50e6 / 50e6) = 2.002
variant allreduce 'pass'
run_case allreduce 3.002
# allgather: 1 step of the same = 1.001
variant allgather 'd["callables"]["ar"]["collective"]["kind"] = "allgather"'
run_case allgather 2.001
# broadcast: 1 step, member 0 sends the whole 100 MB alone on the link: 0.001 + 100e6 / 100e6 = 1.001
variant broadcast 'd["callables"]["ar"]["collective"]["kind"] = "broadcast"'
run_case broadcast 2.001
# Three members on a, b, a: a ring of 4 steps; each step 0->1 (a->b) and 1->2 (b->a) share the link,
# 2->0 stays on a (free): 4 x (0.001 + 33.333e6 / 50e6) = 4 x 0.667667 = 2.670667
variant ring3 'd["trace"][0]["workers"] = [0, 1, 2]; d["trace"][0]["args_list"] = [[], [], []]'
run_case ring3 3.670666666666667
# 0 bytes: the members meet and go on, no transfer (SimGrid never ends a 0-byte comm).
variant zero 'd["callables"]["ar"]["collective"]["bytes"] = 0; d["trace"][0]["duration_s"] = [1, 2]'
run_case zero 2
# Both members on host a: no transfer, the group ends with its compute.
variant onehost 'd["trace"][0]["workers"] = [0, 2]'
run_case onehost 1

# The default network model (LV08) applies its own factors: slower than CM02's hand figure, never faster.
"$dirsched" run "$tmp/allreduce.json" --out "$tmp/lv08" --outputs summary >/dev/null 2>&1 || no "allreduce under LV08"
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > 3.002 else 1)" "$(makespan "$tmp/lv08")" || no "LV08 slower"

# A route the exchange needs and the platform lacks: exit 2 before the run, naming the op.
variant island 'd["workers"]["next_level"][1]["host"] = "island"'
"$dirsched" run "$tmp/island.json" --out "$tmp/island" >"$tmp/out" 2>&1
rc=$?
[[ $rc == 2 && ! -e $tmp/island ]] || no "no route: exit $rc"
grep -q "no route from 'a' to 'island' (the collective of trace\[0\] (task 'g') needs one)" "$tmp/out" ||
  { no "no route message"; cat "$tmp/out"; }

# Host b goes off during the exchange (at 1.5 s): the member on a, waiting in it, fails at once too.
variant hostfault 'd["faults"] = [{"host": "b", "off_at_s": 1.5}]; d["expect"] = {"final_state": {"g": "FAILED"}, "makespan_s": {"approx": 1.5}}'
"$dirsched" check "$tmp/hostfault.json" "${cm02[@]}" >"$tmp/out" 2>&1 || { no "host fault in a collective"; cat "$tmp/out"; }
# The link between the nodes goes off during the exchange: the group fails then.
variant linkfault 'd["faults"] = [{"link": "ab", "off_at_s": 1.5}]; d["expect"] = {"final_state": {"g": "FAILED"}, "makespan_s": {"approx": 1.5}}'
"$dirsched" check "$tmp/linkfault.json" "${cm02[@]}" >"$tmp/out" 2>&1 || { no "link fault in a collective"; cat "$tmp/out"; }
# A host that is off before the group launches: its member fails at dispatch, the other does not wait.
variant offbefore 'd["faults"] = [{"host": "b", "off_at_s": 0}]; d["trace"].insert(0, {"op": "sleep", "s": 0.5}); d["expect"] = {"final_state": {"g": "FAILED"}}'
"$dirsched" check "$tmp/offbefore.json" "${cm02[@]}" >"$tmp/out" 2>&1 || { no "host off before the launch"; cat "$tmp/out"; }

# Load errors and the threads engine.
variant badkind 'd["callables"]["ar"]["collective"]["kind"] = "alltoall"'
"$dirsched" run "$tmp/badkind.json" --out "$tmp/bk" >"$tmp/out" 2>&1
[[ $? == 2 ]] && grep -q "callables.ar.collective.kind: unknown collective 'alltoall' (allreduce, allgather, broadcast)" "$tmp/out" ||
  { no "unknown kind"; cat "$tmp/out"; }
variant nobytes 'del d["callables"]["ar"]["collective"]["bytes"]'
"$dirsched" run "$tmp/nobytes.json" --out "$tmp/nb" >"$tmp/out" 2>&1
[[ $? == 2 ]] && grep -q "callables.ar.collective: missing required key 'bytes'" "$tmp/out" || { no "bytes required"; cat "$tmp/out"; }
variant badbytes 'd["callables"]["ar"]["collective"]["bytes"] = -1'
"$dirsched" run "$tmp/badbytes.json" --out "$tmp/bb" >"$tmp/out" 2>&1
[[ $? == 2 ]] && grep -q "callables.ar.collective.bytes" "$tmp/out" || { no "negative bytes"; cat "$tmp/out"; }
"$dirsched" run "$tmp/allreduce.json" --out "$tmp/thr" --engine threads >"$tmp/out" 2>&1
[[ $? == 2 ]] && grep -q "callables.ar.collective: a collective (transfers) needs the simulated platform" "$tmp/out" ||
  { no "threads engine"; cat "$tmp/out"; }

((fail == 0)) && echo "collectives: all checks passed"
exit $fail
