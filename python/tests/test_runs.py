"""Runs: orch.run / orch.submit (the runtime's Worker.run / Worker.submit) record one `run` op per
orchestration function, an exception out of it a `raise` op; the CLI gives each run its outcome."""

import json
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from dirsched import Testbed  # noqa: E402
from dirsched.results import SUMMARY_SCHEMA, Result  # noqa: E402
from dirsched.simpler import TaskArgs, TensorArgType  # noqa: E402


def two_runs():
    """A driver that runs `orch` (completes), then `orch` again (raises after one submit), catching the
    exception as a researcher's driver would, then a third run of `tail`."""
    tb = Testbed([{"id": 0, "kind": "local_chip"}, {"id": 1, "kind": "local_chip"}], name="two-runs")
    mm = tb.register("mm", "LOCAL_CHIP", duration_s=0.001)
    x = tb.buffer("x", bytes=64)
    seen = []

    def orch(o, args, cfg):
        a = TaskArgs()
        a.add_tensor(x, TensorArgType.INOUT)
        o.submit_next_level(mm, a, cfg, worker=0)
        o.sleep(0.0005)
        o.submit_next_level(mm, TaskArgs(), cfg, worker=1)
        if args == "bad":
            raise ValueError("bad shape")

    def tail(o, args, cfg):
        o.submit_next_level(mm, TaskArgs(), cfg, worker=1)

    def driver(w, args, cfg):
        seen.append(w.run(orch))
        try:
            w.run(orch, "bad")
        except ValueError as e:
            seen.append(str(e))
        seen.append(w.submit(tail))
        w.drain()

    return tb, driver, seen


class RecordRuns(unittest.TestCase):
    def test_runs_and_raise_are_recorded(self):
        tb, driver, seen = two_runs()
        trace = tb.record(driver)["trace"]
        self.assertEqual(seen, ["orch", "bad shape", "tail"])
        self.assertEqual([(op["op"], op.get("run")) for op in trace],
                         [("run", "orch"), ("run", "orch_2"), ("run", "tail"), ("drain", None)])  # fmt: skip
        self.assertEqual([op["op"] for op in trace[0]["ops"]], ["submit_next_level", "sleep", "submit_next_level"])
        self.assertEqual(trace[1]["ops"][-1], {"op": "raise", "message": "ValueError: bad shape"})
        self.assertEqual([op["task"] for op in trace[2]["ops"]], ["mm#4"])

    def test_the_exception_propagates_out_of_run(self):
        tb = Testbed([{"id": 0, "kind": "local_chip"}])

        def boom(o, args, cfg):
            raise KeyError("k")

        with self.assertRaises(KeyError):
            tb.record(lambda w, a, c: w.run(boom))

    def test_no_run_keeps_the_old_trace(self):
        tb = Testbed([{"id": 0, "kind": "local_chip"}])
        mm = tb.register("mm", "LOCAL_CHIP")
        trace = tb.record(lambda o, a, c: (o.submit_next_level(mm, TaskArgs(), worker=0), o.drain()))["trace"]
        self.assertEqual([op["op"] for op in trace], ["submit_next_level", "drain"])

    def test_refusals(self):
        tb = Testbed([{"id": 0, "kind": "local_chip"}])
        mm = tb.register("mm", "LOCAL_CHIP")

        def submit(o, a, c):
            o.submit_next_level(mm, TaskArgs(), worker=0)

        def drains(o, a, c):
            o.drain()

        def nested(o, a, c):
            o.run(submit)

        cases = {
            "submit_next_level outside any run after": lambda o, a, c: (o.run(submit), submit(o, a, c)),
            "after a submit outside any run": lambda o, a, c: (submit(o, a, c), o.run(submit)),
            "drain inside a run": lambda o, a, c: o.run(drains),
            "a run cannot hold another run": lambda o, a, c: o.run(nested),
        }
        for words, fn in cases.items():
            with self.assertRaisesRegex(RuntimeError, words):
                tb.record(fn)


class RunRuns(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def outcomes(self, r):
        return {e["run"]: e["outcome"] for e in r.summary["runs"]}  # summary.json: one entry per run

    def test_two_runs_one_raising(self):
        tb, driver, _ = two_runs()
        r = tb.run(driver, os.path.join(self.tmp, "out"))
        self.assertEqual(self.outcomes(r), {"orch": "COMPLETED", "orch_2": "FAILED", "tail": "COMPLETED"})
        self.assertEqual((r.outcome, r.error), ("FAILED", "ValueError: bad shape"))
        raises = [(e["run"], e["message"]) for e in r.events if e["event"] == "run_raise"]
        self.assertEqual(raises, [("orch_2", "ValueError: bad shape")])
        # The raise is the callback's last op: its tasks were all submitted and run.
        self.assertEqual(set(r.final_state.values()), {"COMPLETED"})

    def test_ops_after_the_replayed_raise_are_not_submitted(self):
        """The recorder simulates nothing, so a callback that upstream would stop at fail-fast goes on
        while recording; the replay raises there, and the run's later ops, up to its recorded raise, are
        NOT_SUBMITTED (callback_raised). The other run completes."""
        tb = Testbed([{"id": 0, "kind": "local_chip"}], name="raise-mid")
        mm = tb.register("mm", "LOCAL_CHIP", duration_s=0.001)

        def ok(o, args, cfg):
            o.submit_next_level(mm, TaskArgs(), cfg, worker=0)

        def failing(o, args, cfg):
            o.submit_next_level(mm(fail=True), TaskArgs(), cfg, worker=0)  # mm#1 fails
            o.sleep(0.01)
            o.submit_next_level(mm, TaskArgs(), cfg, worker=0)  # mm#2 meets fail-fast
            o.submit_next_level(mm, TaskArgs(), cfg, worker=0)  # mm#3: the callback has raised
            o.submit_next_level(mm, TaskArgs(), cfg, worker=0)  # mm#4
            raise RuntimeError("gave up")

        def driver(w, args, cfg):
            w.run(ok)
            with self.assertRaises(RuntimeError):
                w.submit(failing)

        r = tb.run(driver, os.path.join(self.tmp, "out"))
        self.assertEqual(self.outcomes(r), {"ok": "COMPLETED", "failing": "FAILED"})
        reasons = {e["task"]: e["reason"] for e in r.events if e["event"] == "not_submitted"}
        self.assertEqual(reasons["mm#3"], "callback_raised")
        self.assertEqual(reasons["mm#4"], "callback_raised")
        self.assertNotEqual(reasons["mm#2"], "callback_raised")
        self.assertEqual(r.final_state["mm#0"], "COMPLETED")


class SummarySchema(unittest.TestCase):
    """Result reads summary.json's schema as the CLI does: none (an older dirsched) or up to
    SUMMARY_SCHEMA is read; a newer one is refused, naming the file."""

    def folder_with(self, summary):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        with open(os.path.join(d, "summary.json"), "w") as f:
            json.dump(summary, f)
        return d

    def test_an_older_summary_without_a_schema_is_read(self):
        r = Result(self.folder_with({"outcome": "COMPLETED", "makespan_s": 2.5}))
        self.assertEqual((r.outcome, r.makespan_s), ("COMPLETED", 2.5))

    def test_the_current_schema_is_read(self):
        r = Result(self.folder_with({"schema": SUMMARY_SCHEMA, "outcome": "FAILED", "makespan_s": 1}))
        self.assertEqual(r.outcome, "FAILED")

    def test_an_explicit_schema_0_is_refused_as_the_cli_refuses_it(self):
        with self.assertRaisesRegex(ValueError, "summary.json: schema: expected a schema number >= 1"):
            Result(self.folder_with({"schema": 0, "outcome": "COMPLETED", "makespan_s": 1}))

    def test_a_newer_schema_is_refused_naming_the_file(self):
        d = self.folder_with({"schema": SUMMARY_SCHEMA + 1, "outcome": "COMPLETED", "makespan_s": 1})
        with self.assertRaisesRegex(ValueError, "summary.json: schema %d: written by a newer dirsched" % (SUMMARY_SCHEMA + 1)):
            Result(d)


class StagingFromPython(unittest.TestCase):
    """Staging (#1583) and between_passes batches written from Python: two-frame workers through
    next_level, prepare_s on register() and per submit, batch(between_passes=True)."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def staging_testbed(self):
        tb = Testbed([{"id": 1, "kind": "local_chip"},
                      {"id": 0, "kind": "local_chip", "frames": 2, "prepare_overlap": True}],
                     policy="upto:1583", name="py-staging")  # fmt: skip
        k = tb.register("k", "LOCAL_CHIP", duration_s=2, prepare_s=0.5)
        q = tb.register("q", "LOCAL_CHIP", duration_s=1)

        def r1(o, args, cfg):
            o.submit_next_level(k, TaskArgs(), cfg, worker=0)

        def r2(o, args, cfg):
            o.submit_next_level(k, TaskArgs(), cfg, worker=0)
            o.submit_next_level(q(prepare_s=0.25), TaskArgs(), cfg, worker=1)

        def driver(w, args, cfg):
            w.submit(r1)
            w.submit(r2)
            w.drain()

        return tb, driver

    def test_prepare_s_is_recorded(self):
        tb, driver = self.staging_testbed()
        doc = tb.record(driver)
        self.assertEqual(doc["callables"]["k"]["prepare_s"], 0.5)
        self.assertNotIn("prepare_s", doc["callables"]["q"])
        self.assertEqual(doc["trace"][1]["ops"][1]["prepare_s"], 0.25)
        self.assertEqual(doc["workers"]["next_level"][1], {"id": 0, "kind": "local_chip", "frames": 2, "prepare_overlap": True})

    def test_a_staged_single_prepares_while_the_worker_runs(self):
        tb, driver = self.staging_testbed()
        r = tb.run(driver, os.path.join(self.tmp, "out"))
        staged = [d for d in r.dispatches if d.get("prepare_only")]
        self.assertEqual([(d["task"], d["t_s"], d["worker"]) for d in staged], [("k#1", 0, 0)])
        activated = [(e["task"], e["t_s"]) for e in r.events if e["event"] == "activate"]
        self.assertEqual(activated, [("k#1", 2.5)])
        ends = {e["task"]: e["t_s"] for e in r.events if e["event"] == "member_end"}
        # k#1 prepared during k#0's run: it runs 2.5-4.5; q#2 prepares 0.25 s then runs 1 s from 2.5
        self.assertEqual(ends, {"k#0": 2.5, "k#1": 4.5, "q#2": 3.75})

    def test_between_passes_batch(self):
        tb = Testbed([{"id": 0, "kind": "local_chip"}, {"id": 1, "kind": "local_chip"}], name="race")
        mm = tb.register("mm", "LOCAL_CHIP", duration_s=1)

        def orch(o, args, cfg):
            with o.batch(between_passes=True):
                o.submit_next_level(mm, TaskArgs(), cfg, worker=0)

        trace = tb.record(orch)["trace"]
        self.assertEqual(trace[0]["op"], "batch")
        self.assertIs(trace[0]["between_passes"], True)

        def empty(o, args, cfg):
            with o.batch(between_passes=True):
                pass

        with self.assertRaisesRegex(RuntimeError, "needs at least one submit"):
            tb.record(empty)
        with self.assertRaisesRegex(TypeError, "between_passes must be True or False"):
            tb.record(lambda o, a, c: o.batch(between_passes=1).__enter__())


class _Arr:
    """numpy's shape of things, no numpy needed: a base owns `nbytes` bytes at address 1000; a view has
    `base`, its own data address, shape, strides and itemsize (__array_interface__)."""

    def __init__(self, nbytes, ptr=1000, shape=None, strides=None, itemsize=4, base=None):
        self.base, self.itemsize = base, itemsize
        self.nbytes = nbytes
        self.__array_interface__ = {"data": (ptr, False), "shape": shape or (nbytes // itemsize,), "strides": strides}


class Views(unittest.TestCase):
    """A tensor view's byte offset and size are recorded as `range` on its base's buffer (view_deps)."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def record(self, make_args):
        tb = Testbed([{"id": 0, "kind": "local_chip"}, {"id": 1, "kind": "local_chip"}],
                     policy="upto:1902", name="views")  # fmt: skip
        mm = tb.register("mm", "LOCAL_CHIP", duration_s=1)
        x = tb.buffer("x", bytes=128)

        def orch(o, args, cfg):
            for worker, a in enumerate(make_args(x)):
                o.submit_next_level(mm, a, cfg, worker=worker)

        return tb, orch

    def test_buffer_views_are_ranges_and_disjoint_views_take_no_edge(self):
        def args(x):
            a, b = TaskArgs(), TaskArgs()
            a.add_tensor(x.view(0, 64), TensorArgType.OUTPUT)
            b.add_tensor(x.view(64, 128), TensorArgType.INPUT)
            return [a, b]

        tb, orch = self.record(args)
        trace = tb.record(orch)["trace"]
        self.assertEqual(trace[0]["args"], [{"buffer": "x", "tag": "OUTPUT", "range": [0, 64]}])
        self.assertEqual(trace[1]["args"], [{"buffer": "x", "tag": "INPUT", "range": [64, 128]}])
        r = tb.run(orch, os.path.join(self.tmp, "out"))
        starts = {d["task"]: d["t_s"] for d in r.dispatches}
        self.assertEqual(starts, {"mm#0": 0, "mm#1": 0})  # disjoint: b does not wait for a

    def test_array_views_record_their_base_and_span(self):
        base = _Arr(64)
        half = _Arr(32, ptr=1032, base=base)                                         # bytes 32..64
        column = _Arr(0, ptr=1004, shape=(4,), strides=(16,), itemsize=4, base=base)  # 4, 20, 36, 52
        column.nbytes = 16

        def args(x):
            a, b = TaskArgs(), TaskArgs()
            a.add_tensor(half, TensorArgType.INOUT)
            b.add_tensor(column, TensorArgType.INPUT)
            return [a, b]

        tb, orch = self.record(args)
        doc = tb.record(orch)
        name = doc["trace"][0]["args"][0]["buffer"]
        self.assertEqual(doc["trace"][0]["args"][0]["range"], [32, 64])
        self.assertEqual(doc["trace"][1]["args"][0], {"buffer": name, "tag": "INPUT", "range": [4, 56]})
        self.assertEqual(doc["buffers"][name]["bytes"], 64)  # the base's bytes, one buffer for both

    def test_a_view_that_does_not_fit_its_base_is_a_buffer_of_its_own(self):
        base = _Arr(64)
        odd = _Arr(32, ptr=2000, base=base)

        def args(x):
            a = TaskArgs()
            a.add_tensor(odd, TensorArgType.INPUT)
            return [a]

        tb, orch = self.record(args)
        arg = tb.record(orch)["trace"][0]["args"][0]
        self.assertNotIn("range", arg)


if __name__ == "__main__":
    unittest.main()
