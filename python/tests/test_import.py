"""The loop a researcher with a real run follows: record the orchestration once in Python, import the
runtime's [STRACE] log with the recording as --deps (the DAG from Python, the times from the log), and
replay it: the replay keeps the log's per-worker order (the import's expect block passes)."""

import json
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from dirsched import Testbed  # noqa: E402
from dirsched._cli import CliError, call_cli  # noqa: E402
from dirsched.simpler import TaskArgs, TensorArgType  # noqa: E402

LOG = os.path.join(HERE, "..", "..", "tests", "import", "deps.log")


def recorded(second_worker=1):
    """deps.log's orchestration: b reads what a wrote, the group g what b wrote, e what c wrote."""
    tb = Testbed([{"id": i, "kind": "local_chip"} for i in range(4)], name="deps")
    mm = tb.register("mm", "LOCAL_CHIP", duration_s=1)
    x, y, z = (tb.buffer(n, bytes=64) for n in "xyz")

    def args(*pairs):
        a = TaskArgs()
        for buf, tag in pairs:
            a.add_tensor(buf, tag)
        return a

    IN, OUT = TensorArgType.INPUT, TensorArgType.OUTPUT

    def orch(o, a, cfg):
        o.submit_next_level(mm, args((x, OUT)), worker=0)
        o.submit_next_level(mm, args((x, IN), (y, OUT)), worker=second_worker)
        o.submit_next_level(mm, args((z, OUT)), worker=0)
        o.submit_next_level_group(mm, [args((y, IN)), args()], workers=[2, 3])
        o.submit_next_level(mm, args(), worker=2)
        o.submit_next_level(mm, args((z, IN)), worker=1)

    return tb.record(lambda w, a, c: w.run(orch))


class ImportWithPythonDeps(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dirsched-import-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def write(self, scenario):
        path = os.path.join(self.tmp, "recorded.json")
        with open(path, "w") as f:
            json.dump(scenario, f)
        return path

    def test_the_recording_gives_the_dag_and_the_replay_keeps_the_order(self):
        out = os.path.join(self.tmp, "imported")
        call_cli(["import", "strace", LOG, "--out", out, "--deps", self.write(recorded())])
        with open(os.path.join(out, "scenario.json")) as f:
            sc = json.load(f)
        ops = {o["task"]: o for o in sc["trace"] if "task" in o}
        self.assertEqual([a["tag"] for a in ops["r1.t1"]["args"]], ["INPUT", "OUTPUT"])
        self.assertEqual(ops["r1.t1"]["args"][0]["buffer"], ops["r1.t0"]["args"][0]["buffer"])
        self.assertEqual(sorted(sc["buffers"]), ["x", "y", "z"])
        self.assertIn("PASS", call_cli(["check", os.path.join(out, "scenario.json")]))

    def test_a_recording_of_another_orchestration_is_refused_naming_both_sides(self):
        out = os.path.join(self.tmp, "imported")
        with self.assertRaises(CliError) as e:
            call_cli(["import", "strace", LOG, "--out", out, "--deps", self.write(recorded(second_worker=2))])
        self.assertEqual(e.exception.returncode, 2)
        self.assertIn("submit 1 does not match", e.exception.stderr)
        self.assertIn("worker 2;", e.exception.stderr)
        self.assertIn("(r1.t1): worker 1", e.exception.stderr)
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main()
