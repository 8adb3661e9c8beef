#!/usr/bin/env bash
# SimGrid's complaints of issue 12 become exit 2 with one line naming the option, or the scenario, the
# platform file and the route: no route, a zero-bandwidth link, a host of speed 0, a bad --cfg name or
# value, a platform that is a directory or not XML, a transfer too large to send, a deadlock, a clock
# past 2^32 s. --cfg=help prints SimGrid's options and exits 0. Platforms are written here.
# Usage: limits_faults.sh DIRSCHED ROOT
source "$(dirname "$0")/limits_common.sh"
ok=$root/scenarios/quick-tour.json

platform() {  # file, host0-chip0 link attributes, extra XML inside the zone
  cat >"$1" <<XML
<?xml version="1.0"?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="site" routing="Full">
    <host id="host0" speed="100Gf"/>
    <host id="chip0" speed="${4:-100Tf}"/>
    <link id="pcie0" $2/>
    $3
  </zone>
</platform>
XML
}
scenario() {  # file, platform path, cost
  printf '{"name":"fault","workers":{"next_level":[{"id":0,"kind":"local_chip","host":"chip0"}]},"callables":{"k":{"namespace":"LOCAL_CHIP",%s}},"platform":"%s","trace":[{"op":"submit_next_level","task":"t","callable":"k","worker":0},{"op":"drain"}]}' "$3" "$2" >"$1"
}
route='<route src="host0" dst="chip0"><link_ctn id="pcie0"/></route>'
bytes='"duration_s":0.5,"input_bytes":1000'

platform "$in/no-route.xml" 'bandwidth="16GBps" latency="1us"' ''
scenario "$in/no-route.json" no-route.xml "$bytes"
expect no-route 2 "no-route.json: platform: $in/no-route.xml: no route from 'host0' to 'chip0' (a transfer needs one)" \
  "$dirsched" run "$in/no-route.json" --out out
expect no-route-check 2 "no route from 'host0' to 'chip0'" "$dirsched" check "$in/no-route.json"
# Without bytes to move a missing route is harmless.
scenario "$in/no-route-no-bytes.json" no-route.xml '"duration_s":0.5'
expect no-route-no-bytes 0 "" "$dirsched" run "$in/no-route-no-bytes.json" --out "$tmp/no-bytes-run"

platform "$in/zero-bw.xml" 'bandwidth="0" latency="1us"' "$route"
scenario "$in/zero-bw.json" zero-bw.xml "$bytes"
expect zero-bandwidth 2 "platform: $in/zero-bw.xml: link 'pcie0' on the route from 'host0' to 'chip0' has bandwidth 0: a transfer over it would never finish" \
  "$dirsched" run "$in/zero-bw.json" --out out

platform "$in/zero-speed.xml" 'bandwidth="16GBps" latency="1us"' "$route" 0f
scenario "$in/zero-speed.json" zero-speed.xml '"flops":1e9'
expect zero-speed 2 "platform: $in/zero-speed.xml: host 'chip0' has speed 0 flop/s" "$dirsched" run "$in/zero-speed.json" --out out

platform "$in/long-latency.xml" 'bandwidth="16GBps" latency="1e308s"' "$route"
scenario "$in/deadlock.json" long-latency.xml "$bytes"
expect deadlock 2 "deadlock.json: platform: $in/long-latency.xml: SimGrid reported a deadlock at t=0 s: 1 transfer(s)" \
  "$dirsched" run "$in/deadlock.json" --out out
platform "$in/slow-latency.xml" 'bandwidth="16GBps" latency="1e300s"' "$route"
scenario "$in/clock.json" slow-latency.xml "$bytes"
expect clock-past-2p32 2 "clock.json: platform: $in/slow-latency.xml: the simulated clock passed 2^32 s" \
  "$dirsched" run "$in/clock.json" --out out

mkdir -p "$in/platform-dir.xml"
scenario "$in/dir.json" platform-dir.xml "$bytes"
expect platform-directory 2 "dir.json: platform: $in/platform-dir.xml: not a regular file" \
  "$dirsched" run "$in/dir.json" --out out
# Checked at load, before SimGrid pays for it: a *.so (SimGrid loads it as code), a FIFO, and a
# six-line cluster of 5e7 hosts (8 GB and 200 s in SimGrid before it failed).
: >"$in/code.so"
scenario "$in/so.json" code.so "$bytes"
expect platform-so 2 "so.json: platform: $in/code.so: a platform file is SimGrid XML, named *.xml" \
  "$dirsched" run "$in/so.json" --out out
mkfifo "$in/fifo.xml"
scenario "$in/fifo.json" fifo.xml "$bytes"
expect platform-fifo 2 "fifo.json: platform: $in/fifo.xml: not a regular file" timeout 20 "$dirsched" run "$in/fifo.json" --out out
cat >"$in/huge.xml" <<XML
<?xml version="1.0"?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <!-- <cluster id="commented" prefix="x" suffix="" radical="0-999999999" speed="1Gf" bw="1GBps" lat="1us"/> -->
  <cluster id="c" prefix="h" suffix="" radical="0-49999999" speed="1Gf" bw="1GBps" lat="1us"/>
</platform>
XML
scenario "$in/huge.json" huge.xml "$bytes"
expect platform-hosts 2 "huge.json: platform: $in/huge.xml: declares more than 262144 hosts" \
  timeout 20 "$dirsched" run "$in/huge.json" --out out
echo "not xml at all" >"$in/garbage.xml"
scenario "$in/garbage.json" garbage.xml "$bytes"
expect platform-not-xml 2 "garbage.json: platform: $in/garbage.xml: " "$dirsched" run "$in/garbage.json" --out out

# Bytes SimGrid cannot count (it takes a 64-bit size) are refused before the run.
scenario "$in/huge-bytes.json" zero-bw.xml '"duration_s":0.5,"input_bytes":1e20'
expect bytes-past-2p64 2 "huge-bytes.json: " "$dirsched" run "$in/huge-bytes.json" --out out

# --cfg: a bad value, a model that does not exist, an unknown name, no value; each names the option.
expect cfg-bad-model 2 "dirsched: --cfg=network/model:NOPE: Model 'NOPE' is invalid! Valid models are: LV08" \
  "$dirsched" run "$ok" --out out --cfg=network/model:NOPE
expect cfg-bad-model-check 2 "--cfg=network/model:NOPE: Model 'NOPE' is invalid!" "$dirsched" check "$ok" --cfg=network/model:NOPE
expect cfg-bad-choice 2 "--cfg=cpu/optim:NOPE: Invalid value 'NOPE' for option cpu/optim. Possible values: Full, Lazy, TI" \
  "$dirsched" run "$ok" --out out --cfg=cpu/optim:NOPE
expect cfg-unknown-name 2 "--cfg=nope:1: 'nope' is not an option dirsched passes to SimGrid" \
  "$dirsched" run "$ok" --out out --cfg=nope:1
expect cfg-no-value 2 "--cfg=network/model: expected NAME:VALUE" "$dirsched" run "$ok" --out out --cfg=network/model
expect cfg-not-a-number 2 "--cfg=network/TCP-gamma:abc: invalid double" "$dirsched" run "$ok" --out out --cfg=network/TCP-gamma:abc
expect cfg-on-platform-file 2 "--cfg=host/model:NOPE: Model 'NOPE' is invalid!" \
  "$dirsched" run "$root/scenarios/transfer-cost.json" --out out --cfg=host/model:NOPE
expect cfg-help 0 "" "$dirsched" run "$ok" --out out --cfg=help
grep -q "network/model: The model to use for the network" "$tmp/out" || { echo "FAIL cfg-help: no SimGrid help on stdout"; fail=1; }
# A good option still runs (into a folder outside the sandbox).
expect cfg-good 0 "" "$dirsched" run "$ok" --out "$tmp/good-run" --cfg=network/model:CM02
finish
