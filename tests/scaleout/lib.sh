# Shared by the scale-out tests: a temporary folder (removed at exit), the daemons this test started
# (stopped at exit by their pids, never by name), a local sweep of sixteen.json to compare with, and a
# single-node Slurm on 127.0.0.1 (munged, slurmctld, slurmd), every file of it in the temporary folder.
# Usage: source it with d (the dirsched binary) and ROOT set.
set -u
s=$ROOT/tests/scaleout/sixteen.json
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dirsched-scaleout.XXXXXX")
chmod 755 "$tmp"
daemons=()
fail=0
stop_daemons() {
  local pid
  for pid in "${daemons[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${daemons[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
  done
  daemons=()
}
trap 'stop_daemons; rm -rf "$tmp"' EXIT
no() { echo "FAIL $*"; fail=1; }
need() {  # a missing engine fails the test: scripts/install-deps.sh installs them
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null || { echo "FAIL $c not found: run scripts/install-deps.sh (the engines are test dependencies)"; exit 1; }
  done
}
finish() {
  [[ $fail -eq 0 ]] && echo "$1: all checks passed"
  exit $fail
}

# local_sweep: $tmp/local/sweep.csv, the table every engine's collect must reproduce byte for byte.
local_sweep() {
  "$d" sweep "$s" --out "$tmp/local" -j 4 >/dev/null || { echo "FAIL the local sweep"; exit 1; }
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_slurm: munged with a fresh key, then slurmctld and slurmd (-D, in the background) on free ports;
# exports SLURM_CONF; waits until the node is idle.
start_slurm() {
  need munged slurmctld slurmd sbatch scontrol sinfo
  local sl=$tmp/slurm
  mkdir -p "$sl/munge" "$sl/state" "$sl/spool" "$sl/log"
  chmod 700 "$sl/munge"
  head -c 1024 /dev/urandom >"$sl/munge/key"
  chmod 400 "$sl/munge/key"
  munged -F -f --key-file="$sl/munge/key" --socket="$sl/munge/socket" --pid-file="$sl/munge/pid" \
    --seed-file="$sl/munge/seed" --log-file="$sl/log/munged.log" >"$sl/log/munged.out" 2>&1 &
  daemons+=($!)
  for _ in $(seq 50); do [[ -S $sl/munge/socket ]] && break; sleep 0.1; done
  [[ -S $sl/munge/socket ]] || { echo "FAIL munged did not start:"; cat "$sl/log/munged.out"; exit 1; }
  # CPUs=16 over the machine's own (config_overrides): the sixteen variants start at once.
  cat >"$sl/slurm.conf" <<EOF
ClusterName=dirsched-test
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
AuthInfo=socket=$sl/munge/socket
CredType=cred/munge
SlurmUser=$(id -un)
StateSaveLocation=$sl/state
SlurmdSpoolDir=$sl/spool
SlurmctldPidFile=$sl/slurmctld.pid
SlurmdPidFile=$sl/slurmd.pid
SlurmctldLogFile=$sl/log/slurmctld.log
SlurmdLogFile=$sl/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SchedulerParameters=kill_invalid_depend
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MaxArraySize=1001
NodeName=dirsched NodeAddr=127.0.0.1 CPUs=16 State=UNKNOWN
PartitionName=test Nodes=dirsched Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$sl/slurm.conf
  slurmctld -D -i -f "$SLURM_CONF" >"$sl/log/slurmctld.out" 2>&1 &
  daemons+=($!)
  slurmd -D -f "$SLURM_CONF" -N dirsched >"$sl/log/slurmd.out" 2>&1 &
  daemons+=($!)
  for _ in $(seq 150); do
    [[ "$(sinfo -h -o %t 2>/dev/null)" == "idle" ]] && return 0
    sleep 0.2
  done
  echo "FAIL the single-node Slurm did not come up:"; sinfo; tail -20 "$sl/log/slurmctld.out" "$sl/log/slurmd.out"
  exit 1
}

# job_state ID: the state of a job (the first task's, for an array).
job_state() { scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -1 | cut -d= -f2; }
# wait_job ID: waits (60 s at most) until the job left PENDING, CONFIGURING and RUNNING; prints its state.
wait_job() {
  local st
  for _ in $(seq 300); do
    st=$(job_state "$1")
    case $st in PENDING | RUNNING | CONFIGURING | COMPLETING | "") sleep 0.2 ;; *) echo "$st"; return ;; esac
  done
  echo "TIMEOUT"
}
