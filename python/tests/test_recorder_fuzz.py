"""Issue 28: a fuzz target for the Python recorder's JSON. Random testbeds and orchestration functions,
built from hostile values (names with control characters and NUL, ids past 64 bits, NaN and infinite
times, wrong types, huge numbers, misused ops), go through the recorder. The property, for every one:

- the recorder either refuses with its documented errors (TypeError, ValueError, IndexError from
  TaskArgs, or its own misuse error) or returns a scenario, never anything else;
- a returned scenario serialises (``dumps``: strict JSON, no NaN) and the CLI's `check` answers it with
  0, 1 (an expectation failed) or 2 (bad input: one line naming the file), never a crash, an internal
  error (134) or a signal.

The generator is seeded: a failure names its seed and the program it ran, and ``DIRSCHED_PY_FUZZ_SEED``
and ``DIRSCHED_PY_FUZZ_COUNT`` (default 0 and 200) replay or extend it."""

import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from dirsched import Testbed  # noqa: E402
from dirsched._cli import find_cli  # noqa: E402
from dirsched.simpler import CallConfig, TaskArgs, TensorArgType  # noqa: E402
from dirsched.testbed import _Misuse, dumps  # noqa: E402

# Each list: the plain values first, then the hostile ones; `pick` takes a plain one most of the time,
# so that most programs get far enough to reach the CLI.
NAMES = (["k", "a b", "é", "名"],
         ["", "\x00", "x\x00y", "\x1b]52;c;aGk=\x07", "\x1b[2J", "\u202e", "a" * 300, "<script>", "\"q\"", "\\",
          "\ud800"])
NUMBERS = ([0, 1, 0.5, 2, 1e-9],
           [-1, -0.0, 1e300, 2 ** 32, 2 ** 63, 10 ** 400, -(10 ** 400), math.nan, math.inf, -math.inf, "1", None,
            True, [1]])
IDS = ([0, 1, 2], [3, -1, 2 ** 63 - 1, 2 ** 63, 2 ** 64, 10 ** 400, "0", 1.5, math.nan, None, True])
KINDS = (["local_chip"], ["remote", "bogus", "", 3, None])
NAMESPACES = (["LOCAL_CHIP"], ["LOCAL_PYTHON", "REMOTE", "nope", None])
MEMORIES = (["host"], ["child", "remote", "gpu"])
PREPARE = ([0, 0.5], [math.nan, -1])
SUBS = ([0, 1, 2], [-1, 2 ** 70, "2", None])
TAGS = (list(TensorArgType), [])
ALLOWED = (TypeError, ValueError, IndexError, _Misuse)


def pick(rnd, values):
    plain, hostile = values
    return rnd.choice(plain if not hostile or rnd.random() < 0.8 else hostile)


def make_testbed(rnd):
    workers = []
    for i in range(rnd.randrange(1, 4)):
        w = {"id": i if rnd.random() < 0.9 else pick(rnd, IDS), "kind": pick(rnd, KINDS)}
        if rnd.random() < 0.2:
            w["host"] = pick(rnd, NAMES)
        if rnd.random() < 0.1:
            w["frames"] = pick(rnd, NUMBERS)
        workers.append(w)
    sub = pick(rnd, SUBS)
    return Testbed(workers, sub=sub, name=pick(rnd, NAMES) or "f")


def make_program(rnd, tb, handles, buffers):
    """An orchestration function: a list of steps, kept so that a failure can print it."""
    steps = []
    for _ in range(rnd.randrange(1, 8)):
        op = rnd.choice(["single", "single", "group", "sub", "sub_group", "sleep", "drain", "batch", "run",
                         "alloc", "override"])
        steps.append((op, rnd.random(), rnd.randrange(1 << 30)))

    def args(r):
        a = TaskArgs()
        for _ in range(r.randrange(0, 3)):
            if buffers and r.random() < 0.6:
                b = r.choice(buffers)
                if r.random() < 0.3:
                    lo, hi = pick(r, NUMBERS), pick(r, NUMBERS)
                    try:
                        b = b.view(lo, hi)
                    except ALLOWED:
                        pass
                a.add_tensor(b, pick(r, TAGS))
            elif r.random() < 0.5:
                a.add_tensor(object(), pick(r, TAGS))
            else:
                a.add_scalar(pick(r, NUMBERS))
        return a

    def fn(orch, _args, _cfg):
        for op, x, seed in steps:
            r = random.Random(seed)
            h = r.choice(handles) if handles else None
            if op == "single":
                orch.submit_next_level(h, args(r), CallConfig() if x < 0.5 else None, worker=pick(r, IDS))
            elif op == "group":
                n = r.randrange(0, 4)
                orch.submit_next_level_group(h, [args(r) for _ in range(n)], workers=[pick(r, IDS) for _ in range(n)])
            elif op == "sub":
                orch.submit_sub(h, args(r))
            elif op == "sub_group":
                orch.submit_sub_group(h, [args(r) for _ in range(r.randrange(0, 3))])
            elif op == "sleep":
                orch.sleep(pick(r, NUMBERS))
            elif op == "drain":
                orch.drain()
            elif op == "batch":
                with orch.batch(between_passes=x < 0.3):
                    orch.submit_next_level(h, args(r), worker=pick(r, IDS))
            elif op == "run":
                orch.run(lambda o, a, c: o.submit_next_level(h, args(r), worker=pick(r, IDS)))
            elif op == "alloc":
                buffers.append(orch.alloc(pick(r, ([1, (2, 3), 0], [(10 ** 6, 10 ** 6), -1])),
                                          pick(r, (["float32", "int8"], ["?"]))))
            elif op == "override" and h is not None:
                orch.submit_next_level(h(duration_s=pick(r, NUMBERS), prepare_s=pick(r, PREPARE)), args(r),
                                       worker=pick(r, IDS))

    return fn, steps


class RecorderFuzz(unittest.TestCase):
    def test_the_recorder_refuses_or_writes_what_the_cli_answers_cleanly(self):
        cli = find_cli()
        first = int(os.environ.get("DIRSCHED_PY_FUZZ_SEED", "0"))
        count = int(os.environ.get("DIRSCHED_PY_FUZZ_COUNT", "200"))
        tmp = tempfile.mkdtemp(prefix="dirsched-py-fuzz-")
        self.addCleanup(shutil.rmtree, tmp, True)
        outcomes = {"refused in Python": 0, "check 0": 0, "check 1": 0, "check 2": 0}
        for seed in range(first, first + count):
            rnd = random.Random(seed)
            where = "seed %d (DIRSCHED_PY_FUZZ_SEED=%d DIRSCHED_PY_FUZZ_COUNT=1)" % (seed, seed)
            try:
                tb = make_testbed(rnd)
                handles = []
                for _ in range(rnd.randrange(1, 3)):
                    try:
                        handles.append(tb.register(pick(rnd, NAMES), pick(rnd, NAMESPACES),
                                                   duration_s=pick(rnd, NUMBERS),
                                                   prepare_s=pick(rnd, PREPARE)))
                    except ALLOWED:
                        pass
                buffers = []
                for _ in range(rnd.randrange(0, 3)):
                    try:
                        buffers.append(tb.buffer(pick(rnd, NAMES), bytes=pick(rnd, NUMBERS),
                                                 memory=pick(rnd, MEMORIES),
                                                 owner=pick(rnd, ([None], IDS[0] + IDS[1]))))
                    except ALLOWED:
                        pass
                fn, steps = make_program(rnd, tb, handles, buffers)
                scenario = tb.record(fn)
            except ALLOWED:
                outcomes["refused in Python"] += 1
                continue
            except Exception as e:  # anything else is a finding
                self.fail("%s: the recorder raised %s: %s" % (where, type(e).__name__, e))
            try:
                text = dumps(scenario)
            except Exception as e:
                self.fail("%s: a recorded scenario does not serialise: %s: %s\n%r"
                          % (where, type(e).__name__, e, scenario))
            path = os.path.join(tmp, "s%d.json" % seed)
            with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
                f.write(text)
            p = subprocess.run([cli, "check", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True, errors="replace", timeout=60)
            self.assertIn(p.returncode, (0, 1, 2), "%s: check exited %d on the recorded scenario\n%s\n%s"
                          % (where, p.returncode, p.stderr, text[:2000]))
            if p.returncode == 2:  # check's refusal: "ERROR FILE: JSON.PATH: what"
                said = p.stdout + p.stderr
                self.assertTrue(("ERROR " + path + ": ") in said or ("dirsched: " + path) in said,
                                "%s: a refusal names the file\n%s" % (where, said))
            outcomes["check %d" % p.returncode] += 1
            os.unlink(path)
        print("recorder fuzz, seeds %d..%d: %s" % (first, first + count - 1, outcomes))
        # The generator reaches both sides: some programs refused in Python, some run by the CLI.
        self.assertGreater(outcomes["refused in Python"], 0)
        self.assertGreater(outcomes["check 0"] + outcomes["check 1"], 0)


if __name__ == "__main__":
    unittest.main()
