#!/usr/bin/env bash
# A sweep plan on a real single-node Slurm started here (docs/howto-run-on-a-cluster.md): a job array of
# the sixteen-variant plan through scripts/slurm-array.sh with K=1 and K=8, the collect step held back by
# --dependency=afterok, and sweep.csv byte for byte the local sweep's; a plan line that fails makes its
# array task fail and the collect step never run. Usage: slurm_test.sh DIRSCHED ROOT
d=$1 ROOT=$2
source "$(dirname "$0")/lib.sh"
array=$ROOT/scripts/slurm-array.sh

# The script alone: ids are 1-based, and a task past the plan's end is an error, not an empty success.
printf 'true\ntrue\ntrue\n' >"$tmp/three"
for id in 0 3; do
  SLURM_ARRAY_TASK_ID=$id bash "$array" "$tmp/three" 2 >/dev/null 2>"$tmp/err"
  rc=$?
  [[ $rc -eq 2 ]] && grep -q -- "--array=1-2" "$tmp/err" || { no "array task $id of 2: exit $rc"; cat "$tmp/err"; }
done
printf 'true\nexit 3\nfalse | true\ntrue\nfalse | true | true\n' >"$tmp/worst"
SLURM_ARRAY_TASK_ID=1 bash "$array" "$tmp/worst" 2 2>/dev/null
[[ $? -eq 3 ]] || no "a task exits with the worst status of its lines"
SLURM_ARRAY_TASK_ID=2 bash "$array" "$tmp/worst" 2 2>/dev/null
[[ $? -eq 1 ]] || no "pipefail: a failing stage of a line fails the task"
SLURM_ARRAY_TASK_ID=3 bash "$array" "$tmp/worst" 2 2>/dev/null
[[ $? -eq 1 ]] || no "the last task runs the remaining line (pipefail)"

local_sweep
start_slurm
cd "$tmp" || exit 1
for k in 1 8; do
  out=$tmp/k$k
  "$d" sweep "$s" --out "$out" --plan --lines-per-task $k >"$tmp/plan$k" 2>"$tmp/err$k" || no "--plan K=$k"
  m=$(grep -o -- '--array=1-[0-9]*' "$tmp/err$k" | cut -d- -f4)
  [[ $m -eq $(((16 + k - 1) / k)) ]] || { no "the sbatch line of K=$k"; cat "$tmp/err$k"; }
  job=$(sbatch --parsable --array=1-"$m" -o "$tmp/slurm-%A_%a.out" "$array" "$tmp/plan$k" $k) || no "sbatch K=$k"
  collect=$(sbatch --parsable --dependency=afterok:"$job" -o "$tmp/collect$k.out" --wrap "'$d' sweep --collect '$out'") ||
    no "sbatch the collect step K=$k"
  st=$(wait_job "$collect")
  [[ $st == COMPLETED ]] || { no "K=$k: the collect step ended $st"; cat "$tmp/collect$k.out" "$tmp"/slurm-"$job"_*.out; }
  cmp -s "$tmp/local/sweep.csv" "$out/sweep.csv" ||
    { no "K=$k: sweep.csv collected on Slurm differs from the local sweep's"; diff "$tmp/local/sweep.csv" "$out/sweep.csv"; }
  n=$(ls "$tmp"/slurm-"$job"_*.out 2>/dev/null | wc -l)
  [[ $n -eq $m ]] || no "K=$k: $n array tasks ran, expected $m"
done

# A failing plan line: its array task fails, afterok is never satisfied, the collect step does not run.
"$d" sweep "$s" --out "$tmp/bad" --plan --sample 4 >"$tmp/plan-bad" 2>/dev/null || no "--plan (bad)"
sed -i "1s/--var 'c_worker=/--var 'nope=1' --var 'c_worker=/" "$tmp/plan-bad"
grep -q "nope=1" "$tmp/plan-bad" || no "the broken plan line"
job=$(sbatch --parsable --array=1-2 -o "$tmp/bad-%A_%a.out" "$array" "$tmp/plan-bad" 2) || no "sbatch (bad)"
collect=$(sbatch --parsable --dependency=afterok:"$job" -o "$tmp/collect-bad.out" --wrap "'$d' sweep --collect '$tmp/bad'")
for _ in $(seq 300); do [[ -z "$(squeue -h -j "$job" 2>/dev/null)" ]] && break; sleep 0.2; done
# The collect step never becomes eligible: cancelled (kill_invalid_depend) or held with that reason.
for _ in $(seq 50); do
  st=$(job_state "$collect")
  [[ $st == CANCELLED ]] || scontrol show job "$collect" | grep -q "Reason=DependencyNeverSatisfied" && break
  sleep 0.2
done
[[ $st == CANCELLED ]] || scontrol show job "$collect" | grep -q "Reason=DependencyNeverSatisfied" ||
  { no "the collect step after a failed line: $st, expected CANCELLED or held (dependency never satisfied)"; scontrol show job "$collect"; }
scancel "$collect" 2>/dev/null
[[ ! -e $tmp/collect-bad.out && ! -e $tmp/bad/sweep.csv ]] || no "the collect step ran after a failed line"
[[ "$(scontrol show job "${job}_1" | grep -o 'JobState=[A-Z]*')" == JobState=FAILED ]] ||
  { no "array task 1 (line 1 failed) is not FAILED"; scontrol show job "${job}_1"; }
[[ "$(scontrol show job "${job}_2" | grep -o 'JobState=[A-Z]*')" == JobState=COMPLETED ]] || no "array task 2 is not COMPLETED"
grep -q "plan-bad line 1 exited 2" "$tmp/bad-${job}_1.out" || { no "the task names the failed line"; cat "$tmp/bad-${job}_1.out"; }
# --missing gives the line to fix and run again.
[[ "$("$d" sweep --collect "$tmp/bad" --missing 2>/dev/null | wc -l)" -eq 1 ]] || no "--missing after the failed line"
finish "scaleout slurm"
