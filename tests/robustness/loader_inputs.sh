#!/usr/bin/env bash
# Hostile scenario files, made here at test time, through `run`, `check`, `explore` and `sweep`: each
# must exit 2 with one message naming the file and the JSON path, and leave a sandbox folder (which
# holds a file of its own, and is the working directory) exactly as it was.
set -u
dirsched=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
in=$tmp/inputs sandbox=$tmp/sandbox
mkdir -p "$in" "$sandbox"
echo "the user's own data" >"$sandbox/mine.txt"
fail=0

repeat() { head -c "$2" /dev/zero | tr '\0' "$1"; }  # a character, n times
zeros() { local s="" i; for ((i = 0; i < $1; i++)); do s+="[0]"; done; printf '%s' "$s"; }

head='"name":"h","workers":{"next_level":[{"id":0,"kind":"local_chip"}]},"callables":{"k":{"namespace":"LOCAL_CHIP","duration_s":1}}'
op_a='{"op":"submit_next_level","task":"a","callable":"k","worker":0}'
op_b='{"op":"submit_next_level","task":"b","callable":"k","worker":0}'
# name, then the file's text; the expected "path: message" follows in `want`.
declare -A want
make() { printf '%s' "$2" >"$in/$1.json"; want[$1]=$3; }

make deep-worker "{$head,\"trace\":[{\"op\":\"submit_next_level\",\"task\":\"a\",\"callable\":\"k\",\"worker\":$(repeat '[' 100000)$(repeat ']' 100000)}]}" \
  "trace[0].worker$(zeros 61): nested deeper than 64 levels (the limit)"
make deep-vars "{$head,\"vars\":{\"x\":[$(repeat '[' 100000)$(repeat ']' 100000)]},\"trace\":[$op_a]}" \
  "vars.x$(zeros 62): nested deeper than 64 levels (the limit)"
make deep-expect "{$head,\"trace\":[$op_a],\"expect\":{\"order\":$(repeat '[' 100000)$(repeat ']' 100000)}}" \
  "expect.order$(zeros 62): nested deeper than 64 levels (the limit)"
make number-1e400 "{$head,\"trace\":[{\"op\":\"sleep\",\"s\":1e400}]}" \
  "trace[0].s: number 1e400 does not fit in a double (at most about 1.8e308)"
make duplicate-key "{$head,\"trace\":[{\"op\":\"submit_next_level\",\"task\":\"a\",\"task\":\"b\",\"callable\":\"k\",\"worker\":0}]}" \
  "trace[0].task: duplicate key 'task'"
make trailing-text "{$head,\"trace\":[$op_a]} {}" "unexpected text after the document at line 1, column"
printf '{%s,"trace":[%s]}\n\0garbage after a NUL' "$head" "$op_a" >"$in/trailing-nul.json"
want[trailing-nul]="a NUL byte after the document at line 2, column 1"
printf '{%s,"description":"caf\xe9","trace":[%s]}' "$head" "$op_a" >"$in/bad-utf8.json"  # Latin-1, not UTF-8
want[bad-utf8]="description: invalid UTF-8 at line 1, column"
make sleep-1e308 "{$head,\"trace\":[{\"op\":\"sleep\",\"s\":1e308},{\"op\":\"sleep\",\"s\":1e308}]}" \
  "trace[0].s: 1e+308 s is more than the limit of 4294967296 s (2^32 s, the bound of every simulated time)"
make sum-overflow "{${head/\"duration_s\":1/\"duration_s\":3e9},\"trace\":[$op_a,$op_b]}" \
  "trace[1]: the trace's times add up to more than the limit of 2^32 s"
make time-1e17 "{$head,\"trace\":[{\"op\":\"sleep\",\"s\":1e17},$op_a]}" \
  "trace[0].s: 1e+17 s is more than the limit of 4294967296 s"
make id-2p63 "{${head/\"id\":0/\"id\":9223372036854775808},\"trace\":[]}" \
  "workers.next_level[0].id: worker id 9223372036854775808 is larger than the largest worker id (2^63-1)"
make id-2p64m1 "{${head/\"id\":0/\"id\":18446744073709551615},\"trace\":[]}" \
  "workers.next_level[0].id: worker id 18446744073709551615 is larger than the largest worker id (2^63-1)"
make empty-name "{$head,\"trace\":[{\"op\":\"submit_next_level\",\"task\":\"\",\"callable\":\"k\",\"worker\":0}]}" \
  "trace[0].task: a task name must not be empty"
make sub-1e9 "{${head/\}\]\}/\}\],\"sub\":1000000000\}},\"trace\":[]}" \
  "workers.sub: 1000000000 SUB workers is more than the limit of 65536"
make expect-type "{$head,\"trace\":[$op_a],\"expect\":{\"overtakes\":{\"a\":\"two\"}}}" \
  "expect.overtakes.a: expected a count of singles (a non-negative integer), found a string"

snapshot() { (cd "$sandbox" && find . -printf '%p %s %T@\n' | sort && cat mine.txt) | md5sum; }
before=$(snapshot)

check_case() {  # name, command words...
  local name=$1
  shift
  local f=$in/$name.json
  (cd "$sandbox" && "$@") >"$tmp/out" 2>&1
  local rc=$?
  local line="$f: ${want[$name]}"
  if [[ $rc -ne 2 ]]; then
    echo "FAIL $name, $1 $2: exit $rc, expected 2"; head -c 400 "$tmp/out"; echo; fail=1
  elif ! grep -qF -- "$line" "$tmp/out"; then
    echo "FAIL $name, $1 $2: the message does not name the file and path"; echo "  wanted: $line"
    echo "  got:    $(head -c 400 "$tmp/out")"; fail=1
  elif [[ $(snapshot) != "$before" ]]; then
    echo "FAIL $name, $1 $2: the sandbox changed"; ls -la "$sandbox"; fail=1
  fi
}

n=0
for name in "${!want[@]}"; do
  f=$in/$name.json
  check_case "$name" "$dirsched" run "$f" --out "$sandbox/out"
  check_case "$name" "$dirsched" check "$f"
  check_case "$name" "$dirsched" explore "$f"
  check_case "$name" "$dirsched" sweep "$f" --out "$sandbox/sweep"
  n=$((n + 4))
done

# A --var value goes through the same reader (60,000 levels: below the kernel's 128 KiB per argument).
ok=$in/ok.json
printf '{%s,"seed":"$x","vars":{"x":[1]},"trace":[%s]}' "$head" "$op_a" >"$ok"  # x is used: a var nothing uses is refused
for cmd in run check explore; do
  args=("$dirsched" "$cmd" "$ok" --var "x=$(repeat '[' 60000)$(repeat ']' 60000)")
  [[ $cmd == run ]] && args+=(--out "$sandbox/out")
  (cd "$sandbox" && "${args[@]}") >"$tmp/out" 2>&1
  rc=$?
  if [[ $rc -ne 2 ]] || ! grep -qF -- "--var x: $(zeros 64): nested deeper than 64 levels (the limit)" "$tmp/out"; then
    echo "FAIL deep --var, $cmd: exit $rc: $(head -c 300 "$tmp/out")"; fail=1
  fi
  [[ $(snapshot) == "$before" ]] || { echo "FAIL deep --var, $cmd: the sandbox changed"; fail=1; }
  n=$((n + 1))
done

# The control: the same commands on a good file do run (so the refusals above are the inputs' doing).
(cd "$sandbox" && "$dirsched" check "$ok") >"$tmp/out" 2>&1
[[ $? -eq 1 ]] && grep -q "NO EXPECT" "$tmp/out" || { echo "FAIL the good file does not run: $(cat "$tmp/out")"; fail=1; }

[[ $fail -eq 0 ]] && echo "robustness.loader: $n hostile runs refused with exit 2, file and path; sandbox untouched"
exit $fail
