"""tb.sweep(..., executor=...): any concurrent.futures.Executor runs the variants, with results byte for
byte those of the default thread pool (issue 26)."""

import os
import shutil
import sys
import tempfile
import unittest
from concurrent.futures import ProcessPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from dirsched import CliError  # noqa: E402
from test_sweep import CANDIDATES, four_chips, make_sweep_fn  # noqa: E402


def tree(root):
    """Every file below ROOT (relative path -> bytes)."""
    out = {}
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root)] = f.read()
    return out


def sweep_with(out, executor=None):
    tb = four_chips()
    k = tb.register("k", "LOCAL_CHIP", duration_s=1)
    return tb.sweep(make_sweep_fn(k), {"group_workers": CANDIDATES}, out, jobs=2, executor=executor)


def assert_same_sweep(case, a, b):
    """Two sweep folders hold the same files, byte for byte (but metrics.json: the wall time and memory
    each run measured of itself)."""
    ta, tb = tree(a), tree(b)
    for t in (ta, tb):
        for name in [n for n in t if os.path.basename(n) == "metrics.json"]:
            del t[name]
    case.assertEqual(sorted(ta), sorted(tb))
    case.assertIn("sweep.csv", ta)
    for name in ta:
        case.assertEqual(ta[name], tb[name], name)


class ExecutorSweep(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dirsched-py-executor-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def test_a_process_pool_gives_the_default_results(self):
        default = sweep_with(os.path.join(self.tmp, "default"))
        with ProcessPoolExecutor(max_workers=2) as pool:
            pooled = sweep_with(os.path.join(self.tmp, "pool"), executor=pool)
        self.assertEqual(pooled.ranking, default.ranking)
        self.assertEqual(pooled.rows, default.rows)
        self.assertEqual(pooled.ranking_lines, default.ranking_lines)
        assert_same_sweep(self, os.path.join(self.tmp, "default"), os.path.join(self.tmp, "pool"))

    def test_optimize_on_a_process_pool_gives_the_default_result(self):
        """Testbed.optimize(executor=): the search goes batch by batch (optimize --plan-batches), its runs
        on the pool; optimize.json is the local search's (but its evaluation line), best.json the same,
        and the temporary folder of runs is gone."""
        from dirsched import Testbed

        scenario = os.path.join(HERE, "..", "..", "scenarios", "choose-worker-set.json")
        local = Testbed.optimize(scenario, os.path.join(self.tmp, "local"), budget=3, seed=5)
        with ProcessPoolExecutor(max_workers=2) as pool:
            pooled = Testbed.optimize(scenario, os.path.join(self.tmp, "pool"), budget=3, seed=5, executor=pool)
        self.assertFalse(local["exhaustive"])
        self.assertIn("--plan-batches", pooled.pop("evaluation"))
        local.pop("evaluation")
        pooled["best_file"] = local["best_file"]
        self.assertEqual(pooled, local)
        with open(os.path.join(self.tmp, "local", "best.json"), "rb") as a, \
                open(os.path.join(self.tmp, "pool", "best.json"), "rb") as b:
            self.assertEqual(a.read(), b.read())
        self.assertEqual(sorted(os.listdir(self.tmp)), ["local", "pool"], "the folder of runs is removed")

    def test_an_executor_that_runs_nothing_is_an_error_not_a_hang(self):
        """Issue 53 F9: futures that complete without running their function gave the same batch back
        forever. A batch that comes back with none of its runs done is a RuntimeError, and the temporary
        folder of runs is removed."""
        from concurrent.futures import Executor, Future

        from dirsched import Testbed

        class RunsNothing(Executor):
            def submit(self, fn, *args, **kwargs):
                f = Future()
                f.set_result(None)
                return f

        scenario = os.path.join(HERE, "..", "..", "scenarios", "choose-worker-set.json")
        with self.assertRaisesRegex(RuntimeError, "none of the runs was written"):
            Testbed.optimize(scenario, os.path.join(self.tmp, "o"), budget=3, seed=5, executor=RunsNothing())
        self.assertEqual(os.listdir(self.tmp), [], "the folder of runs is removed")

    def test_not_an_executor_is_a_type_error(self):
        with self.assertRaisesRegex(TypeError, "executor must be a concurrent.futures.Executor"):
            sweep_with(os.path.join(self.tmp, "s"), executor=map)

    def test_a_variant_the_cli_refuses_raises_through_the_executor(self):
        from dirsched import Testbed

        tb = Testbed([{"id": 0, "kind": "local_chip"}], platform="/nonexistent/platform.xml")
        out = os.path.join(self.tmp, "s")
        with ProcessPoolExecutor(max_workers=2) as pool, self.assertRaises(CliError):
            tb.sweep(lambda w: (lambda o, a, c: None), {"w": [0, 1]}, out, executor=pool)
        self.assertEqual(os.listdir(out), [".dirsched-sweep"], "no temporary scenario left behind")


if __name__ == "__main__":
    unittest.main()
