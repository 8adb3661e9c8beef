"""tb.sweep numbers, runs and ranks variants as `dirsched sweep` does."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, ".."))

from dirsched import CliError, Testbed, find_cli  # noqa: E402
from dirsched._cli import call_cli  # noqa: E402
from dirsched.simpler import TaskArgs  # noqa: E402

SCENARIO = os.path.join(ROOT, "scenarios", "sweep-group-worker-set.json")
CANDIDATES = [[0, 1], [2, 3], [0, 3], [1, 3]]


def four_chips():
    return Testbed([{"id": i, "kind": "local_chip"} for i in range(4)], name="sweep-group-worker-set")


def make_sweep_fn(k):
    """scenarios/sweep-group-worker-set.json as an orchestration function of the group's workers."""

    def make(group_workers):
        def fn(orch, args, cfg):
            for _ in range(3):
                orch.submit_next_level(k(duration_s=2), TaskArgs(), worker=0)
            orch.submit_next_level(k(duration_s=1.5), TaskArgs(), worker=2)
            orch.sleep(0.5)
            orch.submit_next_level_group(k, [TaskArgs(), TaskArgs()], workers=group_workers)
            orch.sleep(0.5)
            for _ in range(3):
                orch.submit_next_level(k(duration_s=2), TaskArgs(), worker=1)
            orch.drain()

        return fn

    return make


class _InATemporaryFolder(unittest.TestCase):
    """setUpClass makes cls.tmp; it goes at the end; read() gives a file of it."""

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def read(self, *parts):
        with open(os.path.join(self.tmp, *parts), "rb") as f:
            return f.read()


class SweepRanksLikeTheCli(_InATemporaryFolder):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dirsched-py-sweep-")
        cli_out = os.path.join(cls.tmp, "cli")
        cls.cli_stdout = subprocess.run(
            [find_cli(), "sweep", SCENARIO, "--out", cli_out, "-j", "2"], check=True, stdout=subprocess.PIPE,
            universal_newlines=True,
        ).stdout  # fmt: skip
        tb = four_chips()
        k = tb.register("k", "LOCAL_CHIP", duration_s=1)
        cls.result = tb.sweep(make_sweep_fn(k), {"group_workers": CANDIDATES}, os.path.join(cls.tmp, "py"), jobs=2)

    def test_the_ranking_is_the_clis(self):
        cli_lines = [l for l in self.cli_stdout.splitlines() if l[:1].isdigit()]
        self.assertEqual(len(cli_lines), 4)
        self.assertEqual(self.result.ranking_lines, cli_lines)
        self.assertEqual(self.result.ranking, [1, 2, 3, 0])
        self.assertEqual(self.result.best, {"group_workers": [2, 3]})

    def test_the_ranking_comes_from_ranking_json(self):
        self.assertEqual(self.result.ranking_data["best"], [1])
        self.assertEqual([r["rank"] for r in self.result.ranked], [1, 2, 3, 4])
        self.assertEqual(self.result.replicates, 1)
        self.assertEqual(self.result.tied_best, [{"group_workers": [2, 3]}])
        stats = self.result.stats(1)
        self.assertEqual((stats["ci_low"], stats["ci_high"]), (stats["mean"], stats["mean"]))

    def test_optimize_finds_the_sweeps_best(self):
        out = os.path.join(self.tmp, "opt")
        o = Testbed.optimize(SCENARIO, out)
        self.assertEqual(o["best"], {"group_workers": [2, 3]})
        self.assertTrue(o["exhaustive"])
        self.assertEqual(o["evaluations"], 4)
        with open(o["best_file"], encoding="utf-8") as f:
            self.assertNotIn("vars", json.load(f))

    def test_sweep_csv_and_chart_are_byte_identical(self):
        self.assertEqual(self.read("py", "sweep.csv"), self.read("cli", "sweep.csv"))
        self.assertEqual(self.read("py", "sweep.svg"), self.read("cli", "sweep.svg"))
        self.assertEqual([r["group_workers"] for r in self.result.rows], CANDIDATES)
        self.assertEqual(self.result.rows[1]["makespan_s"], 7)

    def test_each_variant_is_a_full_run_with_its_scenario(self):
        for i, values in enumerate(self.result.variants):
            r = self.result.result(i)
            self.assertTrue(os.path.isfile(r.report))
            with open(r.scenario) as f:
                s = json.load(f)
            # The recorded scenario is concrete (no vars: the CLI refuses a var nothing uses); the
            # variant's values are in its variant.json, as the CLI's sweep writes it.
            self.assertNotIn("vars", s)
            self.assertEqual(self.read("py", "variant-%04d" % i, "variant.json"),
                             self.read("cli", "variant-%04d" % i, "variant.json"))
            group = next(op for op in s["trace"] if op["op"] == "submit_next_level_group")
            self.assertEqual(group["workers"], values["group_workers"])
            # The same run but for task names (a0, g there; k#0, k#4 here).
            py, cli = (json.loads(self.read(d, "variant-%04d" % i, "summary.json")) for d in ("py", "cli"))
            for summary in (py, cli):
                summary.pop("description", None)  # the recorded scenario describes itself differently
                summary.pop("vars", None), summary.pop("variant", None)  # the CLI's: from its vars
                for g in summary["groups"]:
                    del g["task"], g["overtaken_by"]
                    for b in g.get("blocked_by", []):  # what held the group names tasks too
                        b.pop("task", None)
                # The longest waits and the critical path list tasks by name: compared without them.
                summary.pop("longest_waits", None), summary.pop("critical_path", None)
                for st in summary.get("stalls", []):  # stall reports name the group too
                    del st["task"]
            self.assertEqual(py, cli)


class SweepNumbering(unittest.TestCase):
    def test_names_in_order_and_the_last_varying_fastest(self):
        tb = Testbed([{"id": i, "kind": "local_chip"} for i in range(3)])
        k = tb.register("k", "LOCAL_CHIP")

        def make(w, d):
            def fn(orch, args, cfg):
                orch.submit_next_level(k(duration_s=d), TaskArgs(), worker=w)

            return fn

        tmp = tempfile.mkdtemp(prefix="dirsched-py-sweep-")
        self.addCleanup(shutil.rmtree, tmp)
        r = tb.sweep(make, {"w": [0, 2], "d": [1, 2, 3]}, os.path.join(tmp, "s"), jobs=2)
        expected = [{"d": d, "w": w} for d in (1, 2, 3) for w in (0, 2)]
        self.assertEqual(r.variants, expected)
        for i, values in enumerate(expected):
            with open(os.path.join(tmp, "s", "variant-%04d" % i, "variant.json")) as f:
                self.assertEqual(json.load(f), {"variant": i, "vars": values})
            self.assertEqual(r.result(i).makespan_s, values["d"])
        self.assertEqual(r.ranking, [0, 1, 2, 3, 4, 5])

    def test_bad_values_raise_before_anything_runs(self):
        tb = Testbed([{"id": 0, "kind": "local_chip"}])
        tmp = tempfile.mkdtemp(prefix="dirsched-py-sweep-")
        self.addCleanup(shutil.rmtree, tmp)
        for values in ({}, {"w": []}, {"w": [0, 0]}, {"a=b": [1]}):
            with self.assertRaises(ValueError):
                tb.sweep(lambda **kw: (lambda o, a, c: None), values, tmp)
        self.assertEqual(os.listdir(tmp), [])

    def test_a_variant_the_cli_refuses_raises_cli_error(self):
        tb = Testbed([{"id": 0, "kind": "local_chip"}], platform="/nonexistent/platform.xml")
        tmp = tempfile.mkdtemp(prefix="dirsched-py-sweep-")
        self.addCleanup(shutil.rmtree, tmp)
        with self.assertRaises(CliError):
            tb.sweep(lambda w: (lambda o, a, c: None), {"w": [0, 1]}, os.path.join(tmp, "s"))
        self.assertEqual(os.listdir(os.path.join(tmp, "s")), [".dirsched-sweep"], "no temporary scenario left behind")

    def test_it_writes_only_into_a_new_folder_or_a_sweep_folder(self):
        tb = Testbed([{"id": 0, "kind": "local_chip"}, {"id": 1, "kind": "local_chip"}])
        k = tb.register("k", "LOCAL_CHIP")
        tmp = tempfile.mkdtemp(prefix="dirsched-py-sweep-")
        self.addCleanup(shutil.rmtree, tmp)
        with open(os.path.join(tmp, "mine.txt"), "w") as f:
            f.write("the user's")
        with self.assertRaises(FileExistsError):
            tb.sweep(lambda w: (lambda o, a, c: None), {"w": [0]}, tmp)
        self.assertEqual(os.listdir(tmp), ["mine.txt"])
        out = os.path.join(tmp, "s")

        def make(w):
            return lambda orch, args, cfg: orch.submit_next_level(k, TaskArgs(), worker=w)

        first = tb.sweep(make, {"w": [0, 1]}, out)
        again = tb.sweep(make, {"w": [0, 1]}, out)  # its own folder: replaced
        self.assertEqual((first.ranking, again.ranking), ([0, 1], [0, 1]))
        with open(os.path.join(out, ".dirsched-sweep")) as f:
            self.assertEqual(json.load(f)["variants"], [0, 1])
        one = tb.sweep(make, {"w": [1]}, out)  # fewer variants: the earlier sweep's variant-0001 goes
        self.assertEqual((one.ranking, sorted(e for e in os.listdir(out) if e.startswith("variant-"))),
                         ([0], ["variant-0000"]))

        def other(w):
            return lambda orch, args, cfg: orch.submit_next_level(k, TaskArgs(), worker=w)

        before = sorted(os.listdir(out))
        with self.assertRaisesRegex(FileExistsError, "sweep folder of scenario 'python' \\(python:.*make\\)"):
            tb.sweep(other, {"w": [0, 1]}, out)  # another function: another scenario
        self.assertEqual(sorted(os.listdir(out)), before)
        with self.assertRaises(FileExistsError):
            tb.sweep(make, {"w": [0]}, os.getcwd())


class ReplicatedSweepRanksLikeTheCli(_InATemporaryFolder):
    """tb.sweep(replicates=3) on a jittered callable is `dirsched sweep --replicates 3` of the same file:
    the same seeds per variant, the same replicate rows, the same paired ranking."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dirsched-py-sweep-rep-")
        with open(SCENARIO, encoding="utf-8") as f:
            scenario = json.load(f)
        scenario["callables"]["k"]["jitter"] = {"kind": "uniform", "rel": 0.2}
        scenario["replicates"] = 3
        jittered = os.path.join(cls.tmp, "jittered.json")
        with open(jittered, "w", encoding="utf-8") as f:
            json.dump(scenario, f)
        subprocess.run([find_cli(), "sweep", jittered, "--out", os.path.join(cls.tmp, "cli"), "-j", "2"], check=True,
                       stdout=subprocess.DEVNULL)
        tb = four_chips()
        k = tb.register("k", "LOCAL_CHIP", duration_s=1, jitter=("uniform", 0.2))
        cls.result = tb.sweep(make_sweep_fn(k), {"group_workers": CANDIDATES}, os.path.join(cls.tmp, "py"), jobs=2,
                              replicates=3)

    def test_replicates_ranking_and_tables_are_the_clis(self):
        self.assertEqual(self.result.replicates, 3)
        self.assertEqual(self.result.ranking_data["seeds"], [0, 1, 2])
        for name in ("sweep.csv", "sweep-summary.csv", "ranking.json", "sweep.svg"):
            self.assertEqual(self.read("py", name), self.read("cli", name), name)
        self.assertEqual(len(self.result.rows), 3 * len(CANDIDATES), "one sweep.csv row per variant and replicate")
        stats = self.result.stats(self.result.ranking[0])
        self.assertLess(stats["ci_low"], stats["ci_high"], "three jittered replicates give an interval")

    def test_select_best_is_the_clis(self):
        # Kim and Nelson's KN over the same variants and seeds as `dirsched sweep --select-best`.
        jittered = os.path.join(self.tmp, "jittered.json")
        subprocess.run([find_cli(), "sweep", jittered, "--out", os.path.join(self.tmp, "cli-sel"), "--select-best", "0.2"],
                       check=True, stdout=subprocess.DEVNULL)
        tb = four_chips()
        k = tb.register("k", "LOCAL_CHIP", duration_s=1, jitter=("uniform", 0.2))
        r = tb.sweep(make_sweep_fn(k), {"group_workers": CANDIDATES}, os.path.join(self.tmp, "py-sel"), select_best=0.2)
        with open(os.path.join(self.tmp, "cli-sel", "selection.json"), encoding="utf-8") as f:
            cli = json.load(f)
        for key in ("best", "vars", "pcs", "indifference", "replicates", "runs", "fixed_n"):
            self.assertEqual(r.selection[key], cli[key], key)
        self.assertIn("Kim and Nelson", r.selection["method"])
        for bad in ({"select_best": 0}, {"select_best": True}, {"select_best": 0.2, "replicates": 3},
                    {"pcs": 0.9}, {"select_best": 0.2, "pcs": 1.0}):
            with self.assertRaises(ValueError):
                tb.sweep(make_sweep_fn(k), {"group_workers": CANDIDATES}, os.path.join(self.tmp, "never"), **bad)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "never")))

    def test_a_deterministic_sweep_runs_one_replicate(self):
        tb = four_chips()
        k = tb.register("k", "LOCAL_CHIP", duration_s=1)
        with self.assertWarnsRegex(UserWarning, "deterministic and need no replications"):
            r = tb.sweep(make_sweep_fn(k), {"group_workers": CANDIDATES[:2]}, os.path.join(self.tmp, "det"),
                         replicates=3)
        self.assertEqual(r.replicates, 1)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "det", "replicates.jsonl")))

    def test_bad_replicates_and_jitter_raise_before_anything_runs(self):
        tb = four_chips()
        k = tb.register("k", "LOCAL_CHIP")
        out = os.path.join(self.tmp, "never")
        for bad in (0, -1, 2.5, True, "3", 10001):
            with self.assertRaises(ValueError):
                tb.sweep(make_sweep_fn(k), {"group_workers": CANDIDATES}, out, replicates=bad)
        self.assertFalse(os.path.exists(out))
        for bad, error in ((("uniform", 1.5), ValueError), (("gauss", 0.1), ValueError), (0.2, TypeError),
                           (("normal", -0.1), ValueError)):
            with self.assertRaises(error):
                tb.register("j%d" % len(tb._callables), "LOCAL_CHIP", jitter=bad)


class SweepHostile(unittest.TestCase):
    """Issue 53: values that are not numbers come back as given; a bad argument claims no folder."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dirsched-py-sweep-")
        self.addCleanup(shutil.rmtree, self.tmp)
        self.tb = Testbed([{"id": 0, "kind": "local_chip"}, {"id": 1, "kind": "local_chip"}])
        self.k = self.tb.register("k", "LOCAL_CHIP")

    def make(self, mode, flag):
        k = self.k

        def fn(orch, args, cfg):
            orch.submit_next_level(k(duration_s=1 if mode == "fast" else 2), TaskArgs(), worker=0)

        return fn

    def test_string_values_come_back_as_given(self):
        # sweep.csv writes the string fast bare and "true"/"1" as true/1: every variant ran, then
        # reading the rows raised JSONDecodeError, or gave True and 1 for "true" and "1".
        values = {"mode": ["fast", "slow"], "flag": ["true", "1", True]}
        r = self.tb.sweep(self.make, values, os.path.join(self.tmp, "s"), jobs=2)
        self.assertEqual(len(r.rows), 6)
        got = sorted((row["variant"], row["flag"], row["mode"]) for row in r.rows)
        want = [(i, v["flag"], v["mode"]) for i, v in enumerate(r.variants)]
        self.assertEqual(got, want)
        for row in r.rows:
            self.assertIs(type(row["flag"]), type(r.variants[row["variant"]]["flag"]))
        self.assertEqual(r.result(r.ranking[0]).makespan_s, 1)

    def test_a_bad_executor_claims_no_folder(self):
        out = os.path.join(self.tmp, "never")
        with self.assertRaises(TypeError):
            self.tb.sweep(self.make, {"mode": ["fast"], "flag": [1]}, out, executor=object())
        self.assertFalse(os.path.exists(out), "an empty sweep folder left behind")

    def test_its_temporaries_are_named_as_the_clis(self):
        # The CLI takes only NAME.tmp-dirsched-PID-8HEX for a temporary (issue 53 F1: any other name
        # holding ".tmp-dirsched-" is a user's); the front end's scenario files beside a variant folder
        # ended in mkstemp's "XXXXXXXX.json", so `--collect` took a live one for a stray folder.
        out = os.path.join(self.tmp, "s")
        self.tb.sweep(self.make, {"mode": ["fast"], "flag": [1]}, out)
        tmp = Testbed._write_beside(os.path.join(out, "variant-0000"), {"x": 1}, "variant")
        self.addCleanup(os.unlink, tmp)
        with self.assertRaises(CliError) as e:
            call_cli(["sweep", "--collect", out], find_cli())
        self.assertIn("a temporary of a dirsched still running (process %d)" % os.getpid(), e.exception.stderr)


if __name__ == "__main__":
    unittest.main()
