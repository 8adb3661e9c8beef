"""Recording: each API call becomes the documented JSON; plain objects are buffers by identity; what the
runtime's Python layer refuses raises at once, and everything else is recorded for the core to judge."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from dirsched import Testbed, dumps  # noqa: E402
from dirsched.simpler import CallConfig, TaskArgs, TensorArgType, make_tensor_arg  # noqa: E402

IN, OUT, INOUT = TensorArgType.INPUT, TensorArgType.OUTPUT, TensorArgType.INOUT


def chips(n):
    return [{"id": i, "kind": "local_chip"} for i in range(n)]


def args_of(*pairs):
    a = TaskArgs()
    for t, tag in pairs:
        a.add_tensor(t, tag)
    return a


class RecordEachCall(unittest.TestCase):
    def setUp(self):
        self.tb = Testbed(chips(2) + [{"id": 7, "kind": "remote"}], sub=2, name="calls")
        self.mm = self.tb.register("mm", "LOCAL_CHIP", duration_s=0.5)
        self.post = self.tb.register("post", "LOCAL_PYTHON", duration_s=0.25, input_bytes=64)
        self.attn = self.tb.register("attn", "REMOTE", eligible=[7], fail=True)
        self.x = self.tb.buffer("x", bytes=1024)
        self.kv = self.tb.buffer("kv", bytes=16, memory="remote", owner=7)

    def trace(self, fn, **kw):
        return self.tb.record(fn, **kw)["trace"]

    def test_the_scenario_head_names_workers_callables_and_buffers(self):
        s = self.tb.record(lambda orch, args, cfg: None)
        self.assertEqual(
            s,
            {
                "name": "calls",
                "description": "Recorded from Python: RecordEachCall.test_the_scenario_head_names_workers_"
                "callables_and_buffers.<locals>.<lambda>",
                "workers": {"next_level": chips(2) + [{"id": 7, "kind": "remote"}], "sub": 2},
                "callables": {
                    "mm": {"namespace": "LOCAL_CHIP", "duration_s": 0.5},
                    "post": {"namespace": "LOCAL_PYTHON", "duration_s": 0.25, "input_bytes": 64},
                    "attn": {"namespace": "REMOTE", "duration_s": 1.0, "eligible": [7]},
                },
                "buffers": {"x": {"bytes": 1024}, "kv": {"bytes": 16, "memory": "remote", "owner": 7}},
                "trace": [],
            },
        )

    def test_a_collective_is_recorded_on_its_callable(self):
        tb = Testbed(chips(2), name="coll")
        tb.register("ar", "LOCAL_CHIP", duration_s=0.5, collective=("allreduce", 1 << 20))
        self.assertEqual(tb.record(lambda o, a, c: None)["callables"]["ar"]["collective"],
                         {"kind": "allreduce", "bytes": 1 << 20})
        with self.assertRaises(ValueError):
            tb.register("x", "LOCAL_CHIP", collective=("alltoall", 1))
        with self.assertRaises(TypeError):
            tb.register("y", "LOCAL_CHIP", collective="allreduce")

    def test_submit_next_level_records_worker_args_and_scalars_in_call_order(self):
        def fn(orch, args, cfg):
            a = TaskArgs()
            a.add_tensor(self.x, OUT)
            a.add_scalar(3)
            a.add_tensor(self.x, IN)
            orch.submit_next_level(self.mm, a, cfg, worker=1)

        self.assertEqual(
            self.trace(fn, cfg=CallConfig(block_dim=24)),
            [
                {
                    "op": "submit_next_level",
                    "task": "mm#0",
                    "callable": "mm",
                    "worker": 1,
                    "args": [{"buffer": "x", "tag": "OUTPUT"}, {"scalar": 3}, {"buffer": "x", "tag": "INPUT"}],
                }
            ],
        )

    def test_group_sub_and_sub_group_record_their_ops(self):
        def fn(orch, args, cfg):
            orch.submit_next_level_group(self.mm, [args_of((self.x, IN)), TaskArgs()], cfg, workers=[1, 0])
            orch.submit_sub(self.post)
            orch.submit_sub(self.post, args_of((self.x, INOUT)))
            orch.submit_sub_group(self.post, [TaskArgs(), args_of((self.x, TensorArgType.NO_DEP))])

        self.assertEqual(
            self.trace(fn),
            [
                {"op": "submit_next_level_group", "task": "mm#0", "callable": "mm", "workers": [1, 0],
                 "args_list": [[{"buffer": "x", "tag": "INPUT"}], []]},
                {"op": "submit_sub", "task": "post#1", "callable": "post", "args": []},
                {"op": "submit_sub", "task": "post#2", "callable": "post", "args": [{"buffer": "x", "tag": "INOUT"}]},
                {"op": "submit_sub_group", "task": "post#3", "callable": "post",
                 "args_list": [[], [{"buffer": "x", "tag": "NO_DEP"}]]},
            ],
        )  # fmt: skip

    def test_task_names_count_every_submit_kind_and_batched_submits(self):
        def fn(orch, args, cfg):
            orch.submit_sub(self.post)
            orch.sleep(0.5)
            with orch.batch():
                orch.submit_next_level(self.mm, TaskArgs(), worker=0)
                orch.submit_next_level(self.mm, TaskArgs(), worker=1)
            orch.drain()
            orch.submit_sub(self.post)

        t = self.trace(fn)
        self.assertEqual([op["op"] for op in t], ["submit_sub", "sleep", "batch", "drain", "submit_sub"])
        self.assertEqual(t[1], {"op": "sleep", "s": 0.5})
        self.assertEqual([op["task"] for op in t[2]["ops"]], ["mm#1", "mm#2"])
        self.assertEqual(t[4]["task"], "post#3")

    def test_scope_records_nothing_and_alloc_gives_a_fresh_buffer(self):
        def fn(orch, args, cfg):
            with orch.scope():
                b = orch.alloc((4, 8), "float16")
                c = orch.alloc([2], "float32")
                self.assertEqual((b.shape, b.dtype, c.shape), ((4, 8), "float16", (2,)))
                orch.submit_next_level(self.mm, args_of((b, OUT), (c, OUT)), worker=0)

        s = self.tb.record(fn)
        self.assertEqual(s["buffers"]["alloc#0"], {"bytes": 64})
        self.assertEqual(s["buffers"]["alloc#1"], {"bytes": 8})
        self.assertEqual([op["op"] for op in s["trace"]], ["submit_next_level"])

    def test_handle_overrides_and_registered_failures_are_recorded_per_op(self):
        def fn(orch, args, cfg):
            orch.submit_next_level(self.mm(duration_s=2), TaskArgs(), worker=0)
            orch.submit_next_level_group(self.mm(duration_s=[1, 3], fail=[False, True]), [TaskArgs()] * 2,
                                         workers=[0, 1])  # fmt: skip
            orch.submit_next_level(self.attn, args_of((self.kv, IN)), worker=7)

        t = self.trace(fn)
        self.assertEqual(t[0]["duration_s"], 2)
        self.assertNotIn("fail", t[0])
        self.assertEqual((t[1]["duration_s"], t[1]["fail"]), ([1, 3], [False, True]))
        self.assertIs(t[2]["fail"], True)

    def test_policy_is_written_only_when_it_is_not_the_default(self):
        def fn(orch, args, cfg):
            return None

        self.assertNotIn("scheduler", Testbed(chips(1)).record(fn))
        self.assertNotIn("scheduler", Testbed(chips(1), policy="seed").record(fn))
        self.assertEqual(
            Testbed(chips(1), policy="head_reservation").record(fn)["scheduler"], {"policy": "head_reservation"}
        )

    def test_platform_is_recorded_as_an_absolute_path(self):
        s = Testbed(chips(1), platform="platforms/x.xml").record(lambda o, a, c: None)
        self.assertEqual(s["platform"], os.path.abspath("platforms/x.xml"))

    def test_dumps_writes_json_that_reads_back_as_the_record(self):
        def fn(orch, args, cfg):
            orch.submit_next_level(self.mm, args_of((self.x, OUT)), worker=True)
            with orch.batch():
                orch.submit_sub(self.post)

        s = self.tb.record(fn)
        text = dumps(s)
        self.assertEqual(json.loads(text), s)
        self.assertIn('\n    {"op": "submit_next_level", "task": "mm#0"', text)  # one op per line


class PlainObjectsAreBuffersByIdentity(unittest.TestCase):
    def setUp(self):
        self.tb = Testbed(chips(2))
        self.k = self.tb.register("k", "LOCAL_CHIP")

    def test_one_object_is_one_buffer_and_equal_objects_are_two(self):
        class Tensor:
            def __init__(self, n):
                self.nbytes = n

            def __eq__(self, other):  # equal by value, yet two tensors
                return True

            __hash__ = None  # unhashable, as numpy arrays are

        a, b = Tensor(128), Tensor(128)

        def fn(orch, args, cfg):
            orch.submit_next_level(self.k, args_of((make_tensor_arg(a), OUT)), worker=0)
            orch.submit_next_level(self.k, args_of((a, IN), (b, OUT)), worker=1)
            orch.submit_next_level(self.k, args_of((b, IN), (a, INOUT)), worker=0)

        s = self.tb.record(fn)
        self.assertEqual(s["buffers"], {"Tensor#0": {"bytes": 128}, "Tensor#1": {"bytes": 128}})
        names = [[arg["buffer"] for arg in op["args"]] for op in s["trace"]]
        self.assertEqual(names, [["Tensor#0"], ["Tensor#0", "Tensor#1"], ["Tensor#1", "Tensor#0"]])

    def test_temporaries_stay_distinct_buffers_while_recording(self):
        # Without a reference held by the recorder, CPython would reuse the id of a freed temporary.
        def fn(orch, args, cfg):
            for i in range(3):
                orch.submit_next_level(self.k, args_of((object(), OUT)), worker=0)

        s = self.tb.record(fn)
        self.assertEqual(sorted(s["buffers"]), ["object#0", "object#1", "object#2"])

    def test_a_declared_name_is_never_reused_for_an_object(self):
        self.tb.buffer("object#0")

        def fn(orch, args, cfg):
            orch.submit_next_level(self.k, args_of((object(), OUT)), worker=0)

        s = self.tb.record(fn)
        self.assertEqual(s["trace"][0]["args"], [{"buffer": "object#1", "tag": "OUTPUT"}])

    def test_each_recording_starts_a_fresh_identity_map(self):
        t = object()

        def fn(orch, args, cfg):
            orch.submit_next_level(self.k, args_of((args, OUT)), worker=0)

        first = self.tb.record(fn, args=t)
        second = self.tb.record(fn, args=object())
        self.assertEqual(first["buffers"], second["buffers"])


class GroupOfOne(unittest.TestCase):
    def test_a_group_of_one_is_recorded_as_the_group_op_it_was(self):
        tb = Testbed(chips(2), sub=1)
        k = tb.register("k", "LOCAL_CHIP")
        p = tb.register("p", "LOCAL_PYTHON")

        def fn(orch, args, cfg):
            orch.submit_next_level_group(k, [TaskArgs()], workers=[1])
            orch.submit_sub_group(p, [TaskArgs()])

        t = tb.record(fn)["trace"]
        self.assertEqual(
            t,
            [
                {"op": "submit_next_level_group", "task": "k#0", "callable": "k", "workers": [1], "args_list": [[]]},
                {"op": "submit_sub_group", "task": "p#1", "callable": "p", "args_list": [[]]},
            ],
        )


class WorkerIdsAsGiven(unittest.TestCase):
    def test_contract_breaking_ids_are_recorded_not_raised_or_coerced(self):
        tb = Testbed(chips(2))
        k = tb.register("k", "LOCAL_CHIP")

        class FakeArray:  # numpy's shape of things: tolist() gives the plain values
            def __init__(self, values):
                self.values = values

            def tolist(self):
                return self.values

        class Opaque:
            def __repr__(self):
                return "<opaque>"

        given = [True, 1.0, "1", None, -1, 99, {"id": 1}, [0], float("nan"), Opaque(), 2**70]

        def fn(orch, args, cfg):
            for w in given:
                orch.submit_next_level(k, TaskArgs(), worker=w)
            orch.submit_next_level_group(k, [TaskArgs(), TaskArgs()], workers=[0, True])
            orch.submit_next_level_group(k, [TaskArgs()], workers=None)
            orch.submit_next_level_group(k, [TaskArgs(), TaskArgs()], workers=(1, 0))
            orch.submit_next_level_group(k, [TaskArgs(), TaskArgs()], workers=range(2))
            orch.submit_next_level_group(k, [TaskArgs(), TaskArgs()], workers=FakeArray([1, True]))
            orch.submit_next_level(k, TaskArgs(), worker=FakeArray(1))

        t = tb.record(fn)["trace"]
        self.assertEqual(
            [op.get("worker", op.get("workers")) for op in t],
            [True, 1.0, "1", None, -1, 99, {"id": 1}, [0], "nan", "<opaque>", 2**70, [0, True], None, [1, 0],
             [0, 1], [1, True], 1],
        )
        self.assertIs(t[0]["worker"], True)
        self.assertIsInstance(t[1]["worker"], float)
        self.assertIn('"worker": true', dumps({"trace": t}))


class RefusedAtOnce(unittest.TestCase):
    def setUp(self):
        self.tb = Testbed(chips(2))
        self.k = self.tb.register("k", "LOCAL_CHIP")

    def record_raising(self, exc, call):
        seen = []

        def fn(orch, args, cfg):
            with self.assertRaises(exc) as ctx:
                call(orch)
            seen.append(str(ctx.exception))
            orch.submit_next_level(self.k, TaskArgs(), worker=0)

        trace = self.tb.record(fn)["trace"]
        tasks = [op["task"] for op in trace if "task" in op]
        self.assertEqual(tasks, ["k#0"], "the refused call is not recorded")
        return seen[0]

    def test_args_that_are_not_a_task_args_raise_type_error(self):
        self.record_raising(TypeError, lambda o: o.submit_next_level(self.k, [], worker=0))
        self.record_raising(TypeError, lambda o: o.submit_sub(self.k, {"x": 1}))
        self.record_raising(TypeError, lambda o: o.submit_next_level_group(self.k, TaskArgs(), workers=[0]))
        self.record_raising(TypeError, lambda o: o.submit_sub_group(self.k, [TaskArgs(), None]))

    def test_a_handle_that_is_not_one_raises_type_error_and_a_foreign_one_value_error(self):
        self.record_raising(TypeError, lambda o: o.submit_next_level("k", TaskArgs(), worker=0))
        other = Testbed(chips(2)).register("k", "LOCAL_CHIP")
        msg = self.record_raising(ValueError, lambda o: o.submit_next_level(other, TaskArgs(), worker=0))
        self.assertIn("unknown handle", msg)

    def test_a_foreign_buffer_and_a_bad_tag_or_config_raise(self):
        foreign = Testbed(chips(1)).buffer("x")
        self.record_raising(ValueError, lambda o: o.submit_next_level(self.k, args_of((foreign, IN)), worker=0))
        self.record_raising(TypeError, lambda o: TaskArgs().add_tensor(object(), "INPUT"))
        self.record_raising(TypeError, lambda o: o.submit_next_level(self.k, TaskArgs(), {"block": 1}, worker=0))

    def test_a_missing_worker_keyword_is_pythons_own_type_error(self):
        self.record_raising(TypeError, lambda o: o.submit_next_level(self.k, TaskArgs()))
        self.record_raising(TypeError, lambda o: o.submit_sub(self.k, TaskArgs(), worker=0))

    def test_testbed_op_misuse_raises_runtime_error(self):
        def in_batch(call):
            def go(o):
                with o.batch():
                    call(o)

            return go

        self.record_raising(RuntimeError, in_batch(lambda o: o.sleep(1)))
        self.record_raising(RuntimeError, in_batch(lambda o: o.drain()))
        self.record_raising(RuntimeError, in_batch(lambda o: o.batch().__enter__()))
        kept = []
        self.tb.record(lambda orch, a, c: kept.append(orch))
        with self.assertRaises(RuntimeError):
            kept[0].submit_next_level(self.k, TaskArgs(), worker=0)

    def test_task_args_reports_its_tensors(self):
        a = args_of((1, IN), (2, OUT))
        a.add_scalar(5)
        self.assertEqual((a.tensor_count(), a.tag(0), a.tag(1), a.tensor(1)), (2, IN, OUT, 2))
        with self.assertRaises(IndexError):
            a.tag(2)


if __name__ == "__main__":
    unittest.main()
