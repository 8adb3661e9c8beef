#!/usr/bin/env bash
# Installs the Debian packages dirsched builds and tests with, where any is missing.
set -euo pipefail
packages=(cmake g++ make pkg-config libgtest-dev libbenchmark-dev libsimgrid-dev libgraphviz-dev graphviz
          nlohmann-json3-dev libcli11-dev chromium python3 python3-venv python3-setuptools python3-wheel
          clang libclang-rt-14-dev strace
          slurmctld slurmd slurm-client munge parallel python3-distributed)  # tests/scaleout: the engines
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi
