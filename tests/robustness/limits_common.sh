# Shared by limits_options.sh and limits_faults.sh: a sandbox folder (the working directory of every
# command, holding a file of its own) that must be left exactly as it was, and one case per call.
set -u
dirsched=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
in=$tmp/inputs sandbox=$tmp/sandbox
mkdir -p "$in" "$sandbox"
echo "the user's own data" >"$sandbox/mine.txt"
fail=0

# Every entry with its size and time, and the file's text. The folder's own time is left out: a run
# that fails after the simulation has created and removed its temp file beside the output (12a's).
snapshot() { (cd "$sandbox" && find . -mindepth 1 -printf '%p %s %T@\n' | sort && cat mine.txt) | md5sum; }
before=$(snapshot)

# expect NAME STATUS MESSAGE COMMAND...: runs COMMAND in the sandbox; the exit status must be STATUS,
# its output (stderr, or stdout for `check`) must hold MESSAGE (a fixed string; "" for none) on one
# line, nothing may have crashed, and the sandbox must be unchanged.
expect() {
  local name=$1 status=$2 message=$3
  shift 3
  local rc=0
  (cd "$sandbox" && timeout 60 "$@" >"$tmp/out" 2>"$tmp/err") || rc=$?
  if [ "$rc" != "$status" ]; then
    echo "FAIL $name: exit $rc, wanted $status"; sed 's/^/  | /' "$tmp/err" | head -5; fail=1; return
  fi
  if [ -n "$message" ] && ! cat "$tmp/err" "$tmp/out" | grep -qF -- "$message"; then
    echo "FAIL $name: stderr lacks: $message"; sed 's/^/  | /' "$tmp/err" | head -5; fail=1; return
  fi
  if grep -qE 'Aborted|Backtrace|terminate called|bad_alloc|Segmentation' "$tmp/err"; then
    echo "FAIL $name: a crash reached the user"; sed 's/^/  | /' "$tmp/err" | head -5; fail=1; return
  fi
  local now
  now=$(snapshot)
  if [ "$now" != "$before" ]; then
    echo "FAIL $name: the sandbox changed"; (cd "$sandbox" && find . | sort | sed 's/^/  | /'); fail=1
    rm -rf "${sandbox:?}"/* && echo "the user's own data" >"$sandbox/mine.txt" && before=$(snapshot)
    return
  fi
  echo "ok   $name"
}

finish() {
  [ "$fail" = 0 ] && echo "all cases passed"
  exit "$fail"
}
