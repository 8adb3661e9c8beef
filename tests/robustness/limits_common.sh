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
  local rc=0 why=""
  (cd "$sandbox" && timeout 60 "$@" >"$tmp/out" 2>"$tmp/err") || rc=$?
  if [ "$rc" != "$status" ]; then
    why="exit $rc, wanted $status"
  elif [ -n "$message" ] && ! cat "$tmp/err" "$tmp/out" | grep -qF -- "$message"; then
    why="its output lacks: $message"
  elif grep -qE 'Aborted|Backtrace|terminate called|bad_alloc|Segmentation' "$tmp/err"; then
    why="a crash reached the user"
  fi
  if [ "$(snapshot)" != "$before" ]; then
    why="${why:+$why; }the sandbox changed: $(cd "$sandbox" && find . -mindepth 1 | sort | tr '\n' ' ')"
    # Put it back, so that the next case starts from the same sandbox.
    rm -rf "${sandbox:?}"/* && echo "the user's own data" >"$sandbox/mine.txt" && before=$(snapshot)
  fi
  if [ -n "$why" ]; then
    echo "FAIL $name: $why"; cut -c1-300 "$tmp/err" | sed "s/^/  | /" | head -5; fail=1
  else
    echo "ok   $name"
  fi
}

finish() {
  [ "$fail" = 0 ] && echo "all cases passed"
  exit "$fail"
}
