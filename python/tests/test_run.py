"""Running through the CLI: a recording replays exactly as the same trace written by hand; rejections
come back as recorded outcomes; a failed CLI call raises with its stderr line."""

import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from dirsched import CliError, Testbed, dumps, find_cli  # noqa: E402
from dirsched.simpler import TaskArgs, TensorArgType  # noqa: E402

IN, OUT, INOUT = TensorArgType.INPUT, TensorArgType.OUTPUT, TensorArgType.INOUT
HANDWRITTEN = os.path.join(HERE, "data", "handwritten.json")


def args_of(*entries):
    a = TaskArgs()
    for e in entries:
        if isinstance(e, tuple):
            a.add_tensor(*e)
        else:
            a.add_scalar(e)
    return a


def handwritten_testbed():
    """The testbed and orchestration function of data/handwritten.json, written against the API."""
    tb = Testbed(
        [{"id": 0, "kind": "local_chip"}, {"id": 1, "kind": "local_chip"}, {"id": 7, "kind": "remote"}],
        sub=2,
        name="handwritten",
    )
    mm = tb.register("mm", "LOCAL_CHIP", duration_s=0.001)
    post = tb.register("post", "LOCAL_PYTHON", duration_s=0.0005)
    attn = tb.register("attn", "REMOTE", eligible=[7], duration_s=0.002)
    x = tb.buffer("x", bytes=1048576)
    kv = tb.buffer("kv", bytes=4096, memory="remote", owner=7)

    def orch_fn(orch, args, cfg):
        with orch.batch():  # the group launches first: the scheduler looks only after both submits
            orch.submit_next_level(mm, TaskArgs(), cfg, worker=1)
            orch.submit_next_level_group(mm, [TaskArgs(), TaskArgs()], cfg, workers=[1, 0])
        h = object()
        orch.submit_next_level(mm, args_of((x, OUT), (h, OUT), 3), cfg, worker=0)
        orch.submit_next_level_group(mm(duration_s=[0.002, 0.001]), [args_of((x, IN)), args_of((h, IN))], cfg,
                                     workers=[1, 0])  # fmt: skip
        orch.sleep(0.0005)
        orch.submit_sub(post, args_of((x, IN)))
        orch.submit_next_level(attn(fail=True), args_of((kv, INOUT)), cfg, worker=7)
        orch.submit_next_level(mm, TaskArgs(), cfg, worker=True)
        orch.submit_next_level(mm, TaskArgs(), cfg, worker="1")
        orch.submit_next_level(attn, TaskArgs(), cfg, worker=0)
        with orch.batch():
            orch.submit_next_level_group(mm, [args_of((x, INOUT))], cfg, workers=[0])
            orch.submit_sub_group(post, [args_of((x, IN)), TaskArgs()])
        orch.drain()
        orch.submit_sub(post)

    return tb, orch_fn


def cli_run(scenario_file, out, *extra):
    # 1: the run is written, and some submits were rejected (the handwritten scenario has three).
    p = subprocess.run([find_cli(), "run", scenario_file, "--out", out] + list(extra),
                       stdout=subprocess.DEVNULL)  # fmt: skip
    if p.returncode not in (0, 1):
        raise subprocess.CalledProcessError(p.returncode, p.args)


def cli_supports(subcommand, flag):
    help_text = subprocess.run([find_cli(), subcommand, "--help"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, universal_newlines=True).stdout  # fmt: skip
    return flag in help_text


class TempDir(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dirsched-py-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)


class SameEventsAsTheCli(TempDir):
    def test_record_then_dirsched_run_gives_the_bytes_of_tb_run(self):
        tb, fn = handwritten_testbed()
        with open(self.path("recorded.json"), "w") as f:
            f.write(dumps(tb.record(fn)))
        cli_run(self.path("recorded.json"), self.path("cli"))
        result = tb.run(fn, self.path("py"))
        for name in ("events.jsonl", "summary.json", "tasks.csv"):
            self.assertTrue(filecmp.cmp(self.path("cli", name), self.path("py", name), shallow=False), name)
        with open(self.path("recorded.json")) as a, open(result.scenario) as b:
            self.assertEqual(a.read(), b.read(), "tb.run keeps the scenario it ran")

    def test_the_trace_written_by_hand_and_recorded_from_python_give_the_same_events(self):
        tb, fn = handwritten_testbed()
        cli_run(HANDWRITTEN, self.path("hand"))
        tb.run(fn, self.path("py"))
        with open(self.path("hand", "events.jsonl"), "rb") as a, open(self.path("py", "events.jsonl"), "rb") as b:
            hand, py = a.read(), b.read()
        self.assertGreater(hand.count(b"\n"), 40)
        self.assertEqual(hand, py)

    def test_a_seed_is_recorded_in_the_scenario_so_the_file_alone_replays_the_run(self):
        tb, fn = handwritten_testbed()
        r = tb.run(fn, self.path("py"), seed=5)
        self.assertEqual(r.summary["seed"], 5)
        cli_run(r.scenario, self.path("again"))
        self.assertTrue(filecmp.cmp(self.path("again", "events.jsonl"), self.path("py", "events.jsonl"), False))


class ResultReadsTheOutputs(TempDir):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="dirsched-py-")
        tb, fn = handwritten_testbed()
        cls.result = tb.run(fn, os.path.join(cls.dir, "run"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_rejections_are_recorded_outcomes_not_exceptions(self):
        r = self.result
        self.assertEqual(
            r.rejected, {"mm#6": "worker_not_integer", "mm#7": "worker_not_integer", "attn#8": "target_not_eligible"}
        )
        self.assertEqual(r.final_state["mm#6"], "REJECTED")
        self.assertIn("mm#9", r.final_state)  # the replay went on past them

    def test_outcome_makespan_and_dispatches_in_dispatch_order(self):
        r = self.result
        self.assertEqual(r.outcome, "FAILED")  # attn#5 fails on purpose
        self.assertEqual(r.summary["error"], r.error)
        self.assertGreater(r.makespan_s, 0)
        self.assertEqual(r.dispatches[0], {"task": "mm#1", "member": 0, "t_s": 0, "worker": 1})
        self.assertEqual([d["t_s"] for d in r.dispatches], sorted(d["t_s"] for d in r.dispatches))
        subs = [d for d in r.dispatches if "sub_worker" in d]
        self.assertTrue(subs and all("worker" not in d and d["sub_worker"].startswith("sub") for d in subs))
        # The batch let the group launch before the single submitted ahead of it.
        self.assertEqual(r.dispatch_order[:5], ["mm#1[0]@1", "mm#1[1]@0", "attn#5@7", "mm#2@0", "mm#0@1"])
        self.assertEqual(len(r.dispatch_order), len(r.dispatches))

    def test_tasks_groups_events_and_report(self):
        r = self.result
        self.assertEqual([t["job_id"] for t in r.tasks][:2], ["mm#0", "mm#1"])
        self.assertEqual(r.tasks[1]["finish_time"], 0.001)
        self.assertIsNone(next(t for t in r.tasks if t["job_id"] == "mm#6")["starting_time"])
        self.assertIn("mm#3", [g["task"] for g in r.groups])
        self.assertTrue({"ready_wait_s", "idle_target_s", "overtakes"} <= set(r.groups[0]))
        self.assertEqual([e["seq"] for e in r.events], list(range(len(r.events))))
        self.assertTrue(os.path.isfile(r.report))

    def test_dataframe_needs_pandas(self):
        try:
            import pandas  # noqa: F401
        except ImportError:
            with self.assertRaisesRegex(ImportError, "pandas"):
                self.result.dataframe("tasks")
        else:
            self.assertEqual(list(self.result.dataframe("tasks")["job_id"])[:1], ["mm#0"])
        with self.assertRaises((ValueError, ImportError)):
            self.result.dataframe("nope")

    def test_dataframe_hands_pandas_the_rows_of_the_table(self):
        class FakeDataFrame:
            def __init__(self, rows):
                self.rows = rows

        fake = type(sys)("pandas")
        fake.DataFrame = FakeDataFrame
        saved = sys.modules.get("pandas")
        sys.modules["pandas"] = fake
        try:
            self.assertEqual(self.result.dataframe().rows, self.result.tasks)
            self.assertEqual(self.result.dataframe("dispatches").rows, self.result.dispatches)
            self.assertEqual(self.result.dataframe("groups").rows, self.result.groups)
            self.assertEqual(self.result.dataframe("events").rows, self.result.events)
            with self.assertRaises(ValueError):
                self.result.dataframe("nope")
        finally:
            if saved is None:
                del sys.modules["pandas"]
            else:
                sys.modules["pandas"] = saved


class GroupOfOneRuns(TempDir):
    def test_a_group_of_one_runs_on_its_named_worker(self):
        tb = Testbed([{"id": 0, "kind": "local_chip"}, {"id": 3, "kind": "local_chip"}], sub=1)
        k = tb.register("k", "LOCAL_CHIP")
        p = tb.register("p", "LOCAL_PYTHON")

        def fn(orch, args, cfg):
            orch.submit_next_level_group(k, [TaskArgs()], workers=[3])
            orch.submit_sub_group(p, [TaskArgs()])

        r = tb.run(fn, self.path("one"))
        self.assertEqual(r.outcome, "COMPLETED")
        self.assertEqual(
            [(d["task"], d["member"], d.get("worker", d.get("sub_worker"))) for d in r.dispatches],
            [("k#0", 0, 3), ("p#1", 0, "sub0")],
        )


class CliFailures(TempDir):
    def test_a_failed_cli_call_raises_with_its_stderr_line_and_writes_nothing(self):
        tb = Testbed([{"id": 0, "kind": "local_chip"}], platform=self.path("missing.xml"))
        tb.register("k", "LOCAL_CHIP")
        with self.assertRaises(CliError) as ctx:
            tb.run(lambda orch, a, c: None, self.path("out"))
        e = ctx.exception
        self.assertEqual(e.returncode, 2)
        self.assertIn("platform", str(e))
        self.assertEqual(len(e.stderr.strip().splitlines()), 1)
        self.assertEqual(os.listdir(self.tmp), [], "no output folder and no temporary scenario left behind")

    def test_the_cli_is_found_through_dirsched_bin_first(self):
        saved = dict(os.environ)
        self.addCleanup(lambda: (os.environ.clear(), os.environ.update(saved)))
        fake = self.path("fake-dirsched")
        with open(fake, "w") as f:
            f.write("#!/bin/sh\necho 'dirsched: fake says no' >&2\nexit 2\n")
        os.chmod(fake, 0o755)
        os.environ["DIRSCHED_BIN"] = fake
        self.assertEqual(find_cli(), fake)
        tb = Testbed([{"id": 0, "kind": "local_chip"}])
        with self.assertRaisesRegex(CliError, "fake says no"):
            tb.run(lambda orch, a, c: None, self.path("out"))
        os.environ["DIRSCHED_BIN"] = self.path("nothing-here")
        with self.assertRaises(FileNotFoundError):
            find_cli()


def starvation(tb):
    """scenarios/group-starvation.json as an orchestration function (task names k#K for a0, g, b0, ...)."""
    k = tb.register("k", "LOCAL_CHIP", duration_s=1)

    def fn(orch, args, cfg):
        for _ in range(3):
            orch.submit_next_level(k(duration_s=2), TaskArgs(), worker=0)
        orch.sleep(0.5)
        orch.submit_next_level_group(k, [TaskArgs(), TaskArgs()], workers=[0, 1])
        orch.sleep(0.5)
        for _ in range(3):
            orch.submit_next_level(k(duration_s=2), TaskArgs(), worker=1)
        orch.drain()

    return fn


class DefaultPolicy(TempDir):
    def test_the_default_policy_reproduces_the_starvation_scenario(self):
        tb = Testbed([{"id": i, "kind": "local_chip"} for i in range(4)])
        r = tb.run(starvation(tb), self.path("seed"))
        with open(r.scenario) as f:
            self.assertNotIn("scheduler", json.load(f), "the default policy is not written")
        # scenarios/group-starvation.json expects these dispatches (task names a0.. there, k#K here).
        self.assertEqual(
            r.dispatch_order, ["k#0@0", "k#4@1", "k#1@0", "k#5@1", "k#2@0", "k#6@1", "k#3[0]@0", "k#3[1]@1"]
        )
        self.assertEqual(r.groups[0]["overtakes"], 5)


class PathsThatAreNotUtf8(TempDir):
    """Issue 53 F16: a path with bytes that are not UTF-8 (as os.listdir gives it, with surrogate escapes,
    or as bytes): the run was written, then decoding the CLI's output raised UnicodeDecodeError."""

    def one_task(self):
        tb = Testbed([{"id": 0, "kind": "local_chip"}])
        k = tb.register("k", "LOCAL_CHIP")

        def fn(orch, args, cfg):
            orch.submit_next_level(k(duration_s=1), TaskArgs(), worker=0)

        return tb, fn

    def test_run_into_a_path_that_is_not_utf8(self):
        tb, fn = self.one_task()
        out = os.path.join(self.tmp, os.fsdecode(b"run-\xff\xfe"))
        r = tb.run(fn, out)
        self.assertEqual(r.makespan_s, 1)
        self.assertIn(out, r.stdout)  # the path as Python names it (surrogate escapes), byte for byte
        self.assertTrue(os.path.isfile(os.path.join(out, "summary.json")))

    def test_run_into_a_bytes_path(self):
        tb, fn = self.one_task()
        out = os.path.join(os.fsencode(self.tmp), b"run-\xff")
        r = tb.run(fn, out)
        self.assertEqual(r.makespan_s, 1)
        self.assertTrue(os.path.isfile(os.path.join(out, b"summary.json")))

    def test_sweep_into_a_path_that_is_not_utf8(self):
        tb, _ = self.one_task()
        k = tb.register("k2", "LOCAL_CHIP")

        def make(d):
            def fn(orch, args, cfg):
                orch.submit_next_level(k(duration_s=d), TaskArgs(), worker=0)

            return fn

        out = os.path.join(self.tmp, os.fsdecode(b"sweep-\xff"))
        r = tb.sweep(make, {"d": [1, 2]}, out, jobs=1)
        self.assertEqual(r.ranking, [0, 1])
        self.assertEqual(r.result(1).makespan_s, 2)


if __name__ == "__main__":
    unittest.main()
