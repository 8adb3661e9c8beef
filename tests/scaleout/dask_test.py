"""Sweeps on Dask (issue 26, docs/howto-run-on-a-cluster.md): a LocalCluster of two worker processes,
started here and stopped here (their pids checked gone). The plan's lines run as Dask tasks and collect
to the local sweep's sweep.csv byte for byte; Testbed.sweep with the client's executor writes the files
of the default thread pool. Dask missing is a failure, not a skip (scripts/install-deps.sh installs it).
Usage: dask_test.py DIRSCHED ROOT"""

import filecmp
import os
import shutil
import subprocess
import sys
import tempfile
import time

DIRSCHED, ROOT = sys.argv[1], sys.argv[2]
os.environ["DIRSCHED_BIN"] = DIRSCHED
# The worker processes import dirsched (the executor's tasks are its functions) and the sweep tests.
paths = [os.path.join(ROOT, "python"), os.path.join(ROOT, "python", "tests")]
os.environ["PYTHONPATH"] = os.pathsep.join(paths + [os.environ.get("PYTHONPATH", "")])
sys.path[:0] = paths

from dask.distributed import Client, LocalCluster  # noqa: E402  (ImportError: the test fails)

from test_executor import assert_same_sweep, sweep_with  # noqa: E402

SCENARIO = os.path.join(ROOT, "tests", "scaleout", "sixteen.json")


def run_line(line):
    return subprocess.run(line, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode


class Check:
    def __init__(self):
        self.failed = 0

    def __call__(self, ok, what):
        if not ok:
            print("FAIL " + what)
            self.failed = 1


def main():
    check = Check()
    tmp = tempfile.mkdtemp(prefix="dirsched-scaleout-dask-")
    cluster = client = None
    pids = []
    try:
        subprocess.run([DIRSCHED, "sweep", SCENARIO, "--out", os.path.join(tmp, "local"), "-j", "4"],
                       check=True, stdout=subprocess.DEVNULL)
        plan = subprocess.run([DIRSCHED, "sweep", SCENARIO, "--out", os.path.join(tmp, "dask"), "--plan"],
                              check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              universal_newlines=True).stdout.splitlines()
        check(len(plan) == 16, "16 plan lines")
        cluster = LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None,
                               host="127.0.0.1")
        client = Client(cluster)
        pids = list(client.run(os.getpid).values())
        check(len(pids) == 2 and os.getpid() not in pids, "two Dask worker processes")
        # The recipe of the how-to: each plan line a task, then the collect step.
        codes = client.gather(client.map(run_line, plan, pure=False))
        check(codes == [0] * 16, "every plan line ran on Dask: %s" % codes)
        subprocess.run([DIRSCHED, "sweep", "--collect", os.path.join(tmp, "dask")], check=True,
                       stdout=subprocess.DEVNULL)
        check(filecmp.cmp(os.path.join(tmp, "local", "sweep.csv"), os.path.join(tmp, "dask", "sweep.csv"),
                          shallow=False), "sweep.csv collected after Dask differs from the local sweep's")
        # The Python front end: the client's executor runs the variants.
        sweep_with(os.path.join(tmp, "py-default"))
        sweep_with(os.path.join(tmp, "py-dask"), executor=client.get_executor())

        class Case:
            def assertEqual(self, a, b, msg=None):
                check(a == b, "Testbed.sweep on Dask: %s differs from the default's" % (msg or "the file list"))

            def assertIn(self, a, b):
                check(a in b, "Testbed.sweep on Dask: no %s" % a)

        assert_same_sweep(Case(), os.path.join(tmp, "py-default"), os.path.join(tmp, "py-dask"))
        # Testbed.optimize on Dask: a search (budget under the space) batch by batch on the client.
        from dirsched import Testbed

        choose = os.path.join(ROOT, "scenarios", "choose-worker-set.json")
        local = Testbed.optimize(choose, os.path.join(tmp, "opt-local"), budget=3, seed=5)
        on_dask = Testbed.optimize(choose, os.path.join(tmp, "opt-dask"), budget=3, seed=5,
                                   executor=client.get_executor())
        for r in (local, on_dask):
            r.pop("evaluation")
            r.pop("best_file")
        check(not local["exhaustive"], "optimize on Dask: the case is a search")
        check(on_dask == local, "Testbed.optimize on Dask differs from the local search: %s vs %s" % (on_dask, local))
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
        shutil.rmtree(tmp, ignore_errors=True)
    # Stopped: no worker process of this test is left.
    for _ in range(100):
        alive = [p for p in pids if os.path.exists("/proc/%d" % p)]
        if not alive:
            break
        time.sleep(0.1)
    check(not alive, "Dask workers still running after close: %s" % alive)
    if not check.failed:
        print("scaleout dask: all checks passed")
    return check.failed


if __name__ == "__main__":
    sys.exit(main())
