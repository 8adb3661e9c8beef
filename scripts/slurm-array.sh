#!/usr/bin/env bash
# One Slurm array task of a sweep plan (docs/howto-run-on-a-cluster.md):
#   sbatch --array=1-M scripts/slurm-array.sh PLAN [K]      M = ceil(plan lines / K)
# Array task T (1-based: SLURM_ARRAY_TASK_ID) runs plan lines (T-1)*K+1 .. T*K, one after another, each
# in its own bash with pipefail; the task exits with the worst status of its lines (so afterok holds
# back the collect step when any line failed). A task id of 0 or past the plan's end is an error, not
# an empty success. The plan is passed as an argument (not through --export).
set -uo pipefail
plan=${1:-}
k=${2:-1}
task=${SLURM_ARRAY_TASK_ID:-}
die() { echo "slurm-array.sh: $*" >&2; exit 2; }
[[ -n $plan ]] || die "usage: sbatch --array=1-M slurm-array.sh PLAN [K]"
[[ -f $plan && -r $plan ]] || die "$plan: no such plan file"
[[ $k =~ ^[1-9][0-9]{0,8}$ ]] || die "K: expected a whole number of plan lines per task, got '$k'"
[[ $task =~ ^[0-9]+$ ]] || die "SLURM_ARRAY_TASK_ID is not set: submit with sbatch --array=1-M"
# Decimal, whatever its leading zeros (bash reads 08 as a bad octal number); at most 9 digits after them.
[[ $task =~ ^0*([0-9]{1,9})$ ]] || die "array task $task: more than a plan's lines can number"
task=$((10#${BASH_REMATCH[1]}))
# Every line, the last one too when no newline ends it (wc -l counts newlines only).
lines=$(wc -l <"$plan")
[[ -s $plan && -n $(tail -c 1 "$plan") ]] && lines=$((lines + 1))
tasks=$(((lines + k - 1) / k))
((task >= 1)) || die "array task $task: the task ids are 1-based (--array=1-$tasks for $lines lines, $k per task)"
((task <= tasks)) || die "array task $task: the plan has $lines lines, $k per task: --array=1-$tasks"
first=$(((task - 1) * k + 1))
last=$((first + k - 1))
((last <= lines)) || last=$lines
worst=0
for ((i = first; i <= last; i++)); do
  line=$(sed -n "${i}p" "$plan")
  bash -o pipefail -c "$line"
  rc=$?
  if ((rc != 0)); then
    echo "slurm-array.sh: $plan line $i exited $rc" >&2
    ((rc > worst)) && worst=$rc
  fi
done
exit $worst
