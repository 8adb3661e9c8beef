#!/usr/bin/env bash
# The exit contract of main's top-level catch (cli/error_kind.hpp, docs/exit-status.md): a bug is one
# "internal error" line and exit 134 (abort), bad input 2, an unwritable output 3; in every case nothing
# is written. DIRSCHED_INTERNAL_ERROR_TEST=KIND makes the command throw as such a path would.
set -u
dirsched=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ulimit -c 0  # an abort must not leave a core file in the test folder
fail=0
check() {  # KIND STATUS PATTERN
  local kind=$1 want=$2 pattern=$3 rc
  (cd "$tmp" && DIRSCHED_INTERNAL_ERROR_TEST=$kind "$dirsched" run "$root/scenarios/quick-tour.json" --out out-$kind \
    >"$tmp/stdout" 2>"$tmp/stderr")
  rc=$?
  [[ $rc -eq $want ]] || { echo "FAIL $kind: exit $rc, expected $want"; cat "$tmp/stderr"; fail=1; }
  grep -qE "$pattern" "$tmp/stderr" || { echo "FAIL $kind: stderr does not match '$pattern':"; cat "$tmp/stderr"; fail=1; }
  [[ $(grep -c . "$tmp/stderr") -eq 1 ]] || { echo "FAIL $kind: expected one line on stderr"; cat "$tmp/stderr"; fail=1; }
  [[ -e "$tmp/out-$kind" ]] && { echo "FAIL $kind: the output folder was written"; fail=1; }
  [[ -z $(ls -A "$tmp" | grep -v '^std') ]] || { echo "FAIL $kind: left files: $(ls -A "$tmp")"; fail=1; }
}
check logic_error 134 '^dirsched: internal error \(logic error\): test: a broken internal rule; this is a bug in dirsched: please report it'
check out_of_range 134 '^dirsched: internal error \(logic error\): test: map::at; this is a bug'
check bad_alloc 134 '^dirsched: internal error \(std::bad_alloc\): out of memory; this is a bug'
check bad_optional_access 134 '^dirsched: internal error \(std::bad_optional_access\)'
check unknown 134 '^dirsched: internal error \(unknown\): an exception of unknown type'
check runtime_error 2 '^dirsched: test: a file that is not there$'
check write_error 3 '^dirsched: .*test/out.*No space left on device'
check no-such-kind 2 "^dirsched: DIRSCHED_INTERNAL_ERROR_TEST: unknown kind 'no-such-kind'$"
# A real bad input still exits 2, and the hook is off without the variable.
echo '{' >"$tmp/bad.json"
"$dirsched" run "$tmp/bad.json" --out "$tmp/o" 2>"$tmp/stderr"
rc=$?
[[ $rc -eq 2 ]] || { echo "FAIL a malformed scenario: exit $rc, expected 2"; fail=1; }
rm -f "$tmp/bad.json"
# In a forked child the kind survives the process boundary: an evaluation child of `sweep --replicates`
# (the evaluation pool) and a `check` child of several files end the command as the child's error would.
child() {  # KIND STATUS PATTERN COMMAND...
  local kind=$1 want=$2 pattern=$3 rc
  shift 3
  (cd "$tmp" && DIRSCHED_INTERNAL_ERROR_TEST_IN_CHILD=$kind "$@" >"$tmp/stdout" 2>"$tmp/stderr")
  rc=$?
  [[ $rc -eq $want ]] || { echo "FAIL child $kind ($2): exit $rc, expected $want"; cat "$tmp/stdout" "$tmp/stderr"; fail=1; }
  grep -qE "$pattern" "$tmp/stdout" "$tmp/stderr" || { echo "FAIL child $kind: no line matches '$pattern':"; cat "$tmp/stdout" "$tmp/stderr"; fail=1; }
  rm -rf "$tmp/sw"
}
sweep=("$dirsched" sweep "$root/scenarios/choose-worker-set.json" --replicates 2 --out sw --quiet)
child logic_error 134 'internal error \(logic error\): test: a broken internal rule' "${sweep[@]}"
child runtime_error 2 '^dirsched: .*test: a file that is not there' "${sweep[@]}"
checks=("$dirsched" check "$root/scenarios/quick-tour.json" "$root/scenarios/quick-tour.json")
child logic_error 134 'crashed \(signal 6\)' "${checks[@]}"
child runtime_error 2 '0 passed, 2 failed' "${checks[@]}"
# A command line the parser refuses is bad input too, worded like every other refusal: the command,
# then what is wrong (CLI11's own text came without the prefix), then where the options are.
usage() {  # EXPECTED-FIRST-LINE ARGS...
  local want=$1 rc
  shift
  (cd "$tmp" && "$dirsched" "$@" >"$tmp/stdout" 2>"$tmp/stderr")
  rc=$?
  [[ $rc -eq 2 ]] || { echo "FAIL usage $*: exit $rc, expected 2"; fail=1; }
  [[ "$(head -1 "$tmp/stderr")" == "$want" ]] || { echo "FAIL usage $*: first line is not '$want':"; cat "$tmp/stderr"; fail=1; }
  [[ ! -s "$tmp/stdout" && -z $(ls -A "$tmp" | grep -v '^std') ]] || { echo "FAIL usage $*: wrote something"; fail=1; }
}
usage "dirsched run: --seed: At Most 1 required but received 2" run "$root/scenarios/quick-tour.json" --seed 1 --seed 2
usage "dirsched: A subcommand is required"
usage "dirsched import strace: unknown option --bogus" import strace --bogus x.log --out o
usage "dirsched sweep: unknown option --bogus" sweep "$root/scenarios/choose-worker-set.json" --out sw --bogus
[[ $fail -eq 0 ]] && echo "exit status: internal errors 134, bad input 2, cannot write 3"
exit $fail
