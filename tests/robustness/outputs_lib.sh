# Shared by the outputs_*.sh robustness tests: a sandbox holding a file of its own, snapshots of a
# folder (every path, type, size and checksum) and checks on exit status and message.
# Usage: source it with DIRSCHED and ROOT set; it creates $sandbox (removed on exit) and sets fail=0.
set -u
sandbox=$(mktemp -d "${TMPDIR:-/tmp}/dirsched-robust.XXXXXX")
cleanup_hooks=()
trap 'for h in "${cleanup_hooks[@]}"; do eval "$h"; done; rm -rf "$sandbox"' EXIT
mkdir -p "$sandbox/work"
echo "the user's own file" >"$sandbox/work/mine.txt"
fail=0

# Every path below DIR with its type, size and checksum, sorted: equal snapshots mean nothing changed.
snap() {
  (cd "$1" && find . -printf '%p %y %s %m\n' | LC_ALL=C sort && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r md5sum)
}

# run_case WANT_STATUS WANT_MESSAGE_REGEX DESCRIPTION COMMAND...: runs it, checks status and stderr.
run_case() {
  local want=$1 pattern=$2 what=$3
  shift 3
  "$@" >"$sandbox/out" 2>"$sandbox/err"
  local got=$?
  if [[ $got -ne $want ]]; then
    echo "FAIL $what: exit $got, expected $want"; cat "$sandbox/err"; fail=1
  elif [[ -n "$pattern" ]] && ! grep -Eq -- "$pattern" "$sandbox/err"; then
    echo "FAIL $what: message does not match /$pattern/:"; cat "$sandbox/err"; fail=1
  fi
}

# refused_untouched DIR WANT_STATUS WANT_MESSAGE_REGEX DESCRIPTION COMMAND...: as run_case, and DIR is
# byte for byte as before; nothing "outputs in" was claimed.
refused_untouched() {
  local dir=$1
  shift
  local before
  before=$(snap "$dir")
  run_case "$@"
  if [[ "$(snap "$dir")" != "$before" ]]; then
    echo "FAIL $3: $dir changed:"; diff <(echo "$before") <(snap "$dir"); fail=1
  fi
  if grep -q "outputs in" "$sandbox/out"; then echo "FAIL $3: claimed outputs"; fail=1; fi
}

# No temporary of ours anywhere below DIR.
no_temps() {
  local left
  left=$(find "$1" -name '*.tmp-dirsched*')
  [[ -z "$left" ]] || { echo "FAIL $2: temporaries left: $left"; fail=1; }
}

finish() {
  [[ $fail -eq 0 ]] && echo "$1: all checks passed"
  exit $fail
}
