"""Record an orchestration function written for the runtime's Python API, then simulate it.

How recording works: ``Testbed.record(fn)`` calls ``fn(orch, args, cfg)`` with a recording orchestrator
whose submit methods have the runtime's signatures. Each call appends one op to a scenario trace in the
documented format (docs/scenario-format.md) and returns at once; nothing is simulated while
the function runs, so a submit never blocks and never raises a contract rejection. The CLI replays the
trace, and its core accepts or rejects each submit exactly as it would a hand-written file.

- Task names are NAME#K: the registered callable's name and the 0-based index of the recorded submit
  call in the function (every submit kind counts, rejected ones and those inside a batch included).
- Worker ids are recorded as given, so that the core's rejection replays exactly: True stays true, 1.0
  stays 1.0, "1" stays "1", None is null. Integers of any integer type (numpy's too) are integers; a
  sequence (a tuple, a range, a numpy array) is a list of its values; an object with no JSON form is
  recorded as its repr, a string, which the core refuses as not an integer.
  (A string starting with "$" names a sweep variable in a scenario file: the CLI refuses it as bad input.)
- Tensors: a Buffer of this testbed is its name; any other object is one buffer per identity for the
  whole recording, named TYPE#N, with its ``nbytes`` as bytes when it has one. The recorder keeps a
  reference to each, so an id is never reused while recording.
- Raised at once, as the runtime's Python layer refuses them before its core: TypeError when args is not
  a TaskArgs (args_list not a list or tuple of TaskArgs; config not a CallConfig or None; the handle not a
  Handle); ValueError for a handle or buffer that this testbed did not make. Testbed-op misuse
  (sleep or drain inside a batch, a nested batch, using the orchestrator after record returned) is a
  RuntimeError.
- ``orch.scope()`` records nothing: the contract has no scope semantics. A submit returns the task's
  recorded name.
- Runs: the orchestrator also plays the runtime's ``Worker``. ``orch.run(orch_fn, args=None, cfg=None)``
  and ``orch.submit(orch_fn, args=None, cfg=None)`` call ``orch_fn(orch, args, cfg)`` at once and record
  one `run` op (named after the function, made unique in the file: orch, orch_2, ...) holding the
  submits, batches and sleeps made while it runs. An exception raised out of orch_fn is recorded as a
  `raise` op ("ValueError: bad shape") at the end of the run's ops, then propagates out of run/submit,
  as upstream's ``Worker.run`` re-raises the callback's exception once it has drained: catch it to go on
  recording. A recording with runs holds only runs, sleeps and drains at its top level (a submit or batch
  next to a run is a RuntimeError, as is drain or a run inside a run); one without runs is unchanged.
"""

import collections.abc
import contextlib
import itertools
import json
import math
import numbers
import os
import shlex
import shutil
import subprocess
import tempfile
import threading
import warnings
from concurrent.futures import FIRST_EXCEPTION, Executor, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures

from ._cli import CliError, call_cli, find_cli, interrupt_children
from .results import Result, SweepResult
from .simpler import CallConfig, TaskArgs


def _without_temp(error, tmp, label):
    """The CliError ERROR with the name of the deleted temporary scenario TMP replaced by LABEL (what
    the user can act on): the file it names no longer exists."""
    if not isinstance(error, CliError):
        return error
    command = [str(a).replace(tmp, label) for a in error.command]
    fixed = CliError(command, error.returncode, error.stderr.replace(tmp, label), error.stdout.replace(tmp, label))
    return fixed


def _run_variant(cli, out, index, scenario, chosen, policy_args, stop=None):
    """One variant of Testbed.sweep: `dirsched run` of the recorded scenario into OUT/variant-NNNN, the
    scenario kept there as scenario.json and the variant's values as variant.json. Module level, so
    that any executor can pickle it. STOP (a threading.Event, local pools only) set: do not start."""
    if stop is not None and stop.is_set():
        return
    folder = os.path.join(out, "variant-%04d" % index)
    tmp = Testbed._write_beside(folder, scenario)
    # The variant's values, as the CLI writes a variant.json; the run keeps both files in its folder
    # (--attach): no program but dirsched writes into a run folder.
    vtmp = Testbed._write_beside(folder, {"variant": index, "vars": chosen}, "variant")
    cmd = ["run", tmp, "--out", folder, "--attach", "scenario.json=" + tmp, "--attach", "variant.json=" + vtmp]
    try:
        call_cli(cmd + list(policy_args), cli, ok=_RUN_WRITTEN)
    except BaseException as e:
        fixed = _without_temp(e, tmp, "the scenario of variant %d" % index)
        if fixed is e:
            raise
        raise fixed from None
    finally:
        os.unlink(tmp)
        os.unlink(vtmp)


# `dirsched run` exit statuses with the run folder written: 0, and 1 (submits rejected or a STUCK end the
# scenario's expect block does not expect: the Result says which).
_RUN_WRITTEN = (0, 1)


def _run_plan_line(line):
    """One line of a plan the CLI printed (`optimize --plan-batches`): a self-contained `dirsched run`
    command, split as the shell would and run without one. Module level, so that any executor can pickle
    it; a failure is a CliError naming the command."""
    argv = shlex.split(line)
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          encoding="utf-8", errors="surrogateescape")
    if proc.returncode not in _RUN_WRITTEN:
        raise CliError(argv, proc.returncode, proc.stderr, proc.stdout)


__all__ = ["Testbed", "Handle", "Buffer"]

_NAMESPACES = ("LOCAL_CHIP", "LOCAL_PYTHON", "REMOTE")
_MAX_CALLABLES = 65535  # Registry::kMaxCallables: the core holds a task's callable in 16 bits
_MEMORIES = ("host", "child", "remote")
_ITEMSIZE = {
    "bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "float16": 2, "half": 2, "fp16": 2,
    "bfloat16": 2, "bf16": 2, "int32": 4, "uint32": 4, "float32": 4, "float": 4, "fp32": 4,
    "int64": 8, "uint64": 8, "float64": 8, "double": 8, "fp64": 8,
}  # fmt: skip


def _number(value, what):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError("%s must be a number, got %r" % (what, value))
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an int past a double's range (10**400)
        raise ValueError("%s must be a finite non-negative number, got an integer of %d digits"
                         % (what, len(str(abs(value))))) from None
    if not finite or value < 0:
        raise ValueError("%s must be a finite non-negative number, got %r" % (what, value))
    return int(value) if isinstance(value, numbers.Integral) else float(value)


def _as_given(value):
    """A worker id (or scalar) as JSON, without coercion: the core decides what it accepts."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        value = int(value)
        try:
            float(value)
        except OverflowError:
            # Past a double's range (10**400) no JSON reader holds the number: recorded as its digits,
            # a string, which the core rejects (not an integer) instead of the CLI refusing the file.
            return str(value)
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, dict):
        return {str(k): _as_given(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, range)) or (
        isinstance(value, collections.abc.Sequence) and not isinstance(value, (bytes, bytearray))
    ):
        return [_as_given(v) for v in value]
    if isinstance(value, numbers.Real):  # numpy floating types that are not float subclasses
        f = float(value)
        return f if math.isfinite(f) else repr(f)
    tolist = getattr(value, "tolist", None)  # a numpy array (or scalar) as the Python values it holds
    if callable(tolist):
        plain = tolist()
        if plain is not value and not hasattr(plain, "tolist"):
            return _as_given(plain)
    return repr(value)


class Handle:
    """A registered callable. ``handle(duration_s=..., fail=..., prepare_s=...)`` gives the same callable with per-submit
    overrides (a value, or a list per group member), recorded on the ops that use it."""

    def __init__(self, testbed, name, overrides=None):
        self._testbed = testbed
        self.name = name
        self.overrides = dict(overrides or {})

    def __call__(self, duration_s=None, fail=None, prepare_s=None):
        o = dict(self.overrides)
        if duration_s is not None:
            o["duration_s"] = duration_s
        if prepare_s is not None:
            o["prepare_s"] = prepare_s
        if fail is not None:
            o["fail"] = fail
        return Handle(self._testbed, self.name, o)

    def __repr__(self):
        return "Handle(%r%s)" % (self.name, ", %r" % self.overrides if self.overrides else "")


class Buffer:
    """A testbed buffer: a name in the scenario's `buffers`, with bytes, memory and owner."""

    def __init__(self, testbed, name, bytes=0, memory="host", owner=None):
        self._testbed = testbed
        self.name = name
        self.bytes = bytes
        self.memory = memory
        self.owner = owner

    def spec(self):
        s = {"bytes": self.bytes}
        if self.memory != "host":
            s["memory"] = self.memory
        if self.owner is not None:
            s["owner"] = self.owner
        return s

    def view(self, begin, end):
        """The bytes [begin, end) of this buffer: an arg on it is recorded with `range` (view_deps)."""
        for what, v in (("begin", begin), ("end", end)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral):
                raise TypeError("Buffer.view: %s must be an integer, got %r" % (what, v))
        return BufferView(self, int(begin), int(end))

    def __repr__(self):
        return "Buffer(%r, bytes=%r, memory=%r, owner=%r)" % (self.name, self.bytes, self.memory, self.owner)


class BufferView:
    """Bytes [begin, end) of a testbed buffer (Buffer.view); the loader checks them against its bytes."""

    def __init__(self, buffer, begin, end):
        self.buffer, self.begin, self.end = buffer, begin, end

    def __repr__(self):
        return "BufferView(%r, %d, %d)" % (self.buffer.name, self.begin, self.end)


def _array_view_range(obj):
    """A view of an array (numpy's shape of things: ``base`` and ``__array_interface__``): its root base
    and the bytes [begin, end) of the base it spans (strides included); None when OBJ is no such view or
    the span does not fit in its base (then OBJ is recorded as a buffer of its own, as before)."""
    base = getattr(obj, "base", None)
    if base is None or not hasattr(obj, "__array_interface__"):
        return None
    while getattr(base, "base", None) is not None and hasattr(base.base, "__array_interface__"):
        base = base.base
    if not hasattr(base, "__array_interface__"):
        return None
    try:
        ai, bi = obj.__array_interface__, base.__array_interface__
        ptr, bptr = int(ai["data"][0]), int(bi["data"][0])
        shape, itemsize, size = tuple(ai["shape"]), int(obj.itemsize), int(base.nbytes)
        if any(n == 0 for n in shape):
            return None
        strides = ai.get("strides")
        if strides is None:
            lo, hi = ptr, ptr + int(obj.nbytes)
        else:
            lo = ptr + sum(min(0, (n - 1) * st) for n, st in zip(shape, strides))
            hi = ptr + sum(max(0, (n - 1) * st) for n, st in zip(shape, strides)) + itemsize
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
    begin, end = lo - bptr, hi - bptr
    if not 0 <= begin < end <= size:
        return None
    return base, (begin, end)


class _Misuse(RuntimeError):
    """A testbed op misused (the recorder's own refusal): never recorded as a run's raise."""


class _Orchestrator:
    """The recording orchestrator handed to the orchestration function (see the module comment)."""

    def __init__(self, testbed):
        self._tb = testbed
        self._trace = []
        self._batch = None
        self._closed = False
        self._submits = 0
        self._by_identity = {}  # id(obj) -> (obj, name); holding obj keeps its id unique
        self._extra = {}  # buffers made while recording: alloc and plain objects, name -> spec
        self._allocs = 0
        self._run = None  # the ops of the run being recorded (orch.run / orch.submit), else None
        self._runs = set()  # run names used
        self._top_submits = False  # a submit or batch was recorded at the top level

    # -- the runtime's methods ------------------------------------------------------------------
    def submit_next_level(self, handle, args, config=None, *, worker):
        op = self._submit("submit_next_level", handle, config)
        op["worker"] = _as_given(worker)
        op["args"] = self._args(args, "args")
        return self._finish(op, handle, 1)

    def submit_next_level_group(self, handle, args_list, config=None, *, workers):
        op = self._submit("submit_next_level_group", handle, config)
        op["workers"] = _as_given(workers)
        op["args_list"] = self._args_list(args_list)
        return self._finish(op, handle, len(op["args_list"]))

    def submit_sub(self, handle, args=None):
        op = self._submit("submit_sub", handle, None)
        op["args"] = [] if args is None else self._args(args, "args")
        return self._finish(op, handle, 1)

    def submit_sub_group(self, handle, args_list):
        op = self._submit("submit_sub_group", handle, None)
        op["args_list"] = self._args_list(args_list)
        return self._finish(op, handle, len(op["args_list"]))

    @contextlib.contextmanager
    def scope(self):
        self._open()
        yield self

    def alloc(self, shape, dtype):
        """A fresh host buffer named alloc#N; bytes from the shape and the dtype's size when known."""
        self._open()
        dims = [shape] if isinstance(shape, numbers.Integral) else list(shape)
        count = 1
        for d in dims:
            count *= int(d)
        itemsize = getattr(dtype, "itemsize", None)
        if not isinstance(itemsize, numbers.Integral):
            itemsize = _ITEMSIZE.get(str(dtype).rsplit(".", 1)[-1], 0)
        name = self._fresh_name("alloc#%d", "_allocs")
        buf = Buffer(self._tb, name, bytes=count * int(itemsize))
        buf.shape, buf.dtype = tuple(int(d) for d in dims), dtype
        self._extra[name] = buf.spec()
        return buf

    # -- the runtime's Worker: one orchestration callback, one run ------------------------------
    def run(self, orch_fn, args=None, cfg=None):
        """``Worker.run(orch_fn)``: records ``orch_fn(self, args, cfg)`` as one `run` op; returns its name.
        An exception out of orch_fn is recorded as the run's `raise` op, then propagates."""
        return self._record_run("run", orch_fn, args, cfg)

    def submit(self, orch_fn, args=None, cfg=None):
        """``Worker.submit(orch_fn)``: recorded as ``run`` is (the callback runs at once, here)."""
        return self._record_run("submit", orch_fn, args, cfg)

    def _record_run(self, kind, orch_fn, args, cfg):
        self._open()
        if self._batch is not None or self._run is not None:
            raise _Misuse("orch.%s inside %s: a run cannot hold another run"
                          % (kind, "orch.batch()" if self._batch is not None else "a run"))
        if self._top_submits:
            raise _Misuse("orch.%s after a submit outside any run: a recording with runs holds only runs, "
                          "sleeps and drains at its top level" % kind)
        if not callable(orch_fn):
            raise TypeError("orch.%s: orch_fn must be callable, got %r" % (kind, orch_fn))
        base = str(getattr(orch_fn, "__name__", None) or type(orch_fn).__name__) or "run"
        name, n = base, 1
        while name in self._runs:
            n += 1
            name = "%s_%d" % (base, n)
        self._runs.add(name)
        ops = self._run = []
        self._trace.append({"op": "run", "run": name, "ops": ops})
        try:
            orch_fn(self, args, cfg)
        except _Misuse:
            raise
        except Exception as e:
            text = str(e)
            ops.append({"op": "raise", "message": "%s: %s" % (type(e).__name__, text) if text else type(e).__name__})
            raise
        finally:
            self._run = None
        return name

    # -- testbed ops ----------------------------------------------------------------------------
    def sleep(self, s):
        self._open()
        if self._batch is not None:
            raise _Misuse("orch.sleep inside orch.batch(): a batch holds submits only")
        self._ops().append({"op": "sleep", "s": _number(s, "sleep")})

    def drain(self):
        self._open()
        if self._batch is not None:
            raise _Misuse("orch.drain inside orch.batch(): a batch holds submits only")
        if self._run is not None:
            raise _Misuse("orch.drain inside a run: a callback cannot wait for its own tasks")
        self._trace.append({"op": "drain"})

    def _ops(self):
        """Where a top-level op goes: the run being recorded, else the trace."""
        return self._trace if self._run is None else self._run

    def _top_level_submit(self, what):
        if self._run is None:
            if self._runs:
                raise _Misuse("%s outside any run after orch.run/orch.submit: a recording with runs holds only "
                              "runs, sleeps and drains at its top level" % what)
            self._top_submits = True

    @contextlib.contextmanager
    def batch(self, between_passes=False):
        """Submits inside are applied at one instant before the scheduler looks (the `batch` op). With
        ``between_passes=True`` they land inside the next scheduler iteration, after its group pass and
        before its singles pass: a submit racing the scheduler (what the group barrier reacts to)."""
        if not isinstance(between_passes, bool):
            raise TypeError("orch.batch: between_passes must be True or False, got %r" % (between_passes,))
        self._open()
        if self._batch is not None:
            raise _Misuse("orch.batch() inside orch.batch(): batches do not nest")
        self._top_level_submit("orch.batch()")
        self._batch = []
        body_ended = False
        try:
            yield self
            body_ended = True
        finally:
            ops, self._batch = self._batch, None
            if not between_passes:
                self._ops().append({"op": "batch", "ops": ops})
            elif ops:
                self._ops().append({"op": "batch", "between_passes": True, "ops": ops})
            elif body_ended:  # an exception out of the body goes on as it is
                raise _Misuse("orch.batch(between_passes=True) needs at least one submit")

    # -- recording ------------------------------------------------------------------------------
    def _open(self):
        if self._closed:
            raise _Misuse("this orchestrator's recording has ended (Testbed.record returned)")

    def _submit(self, kind, handle, config):
        self._open()
        if not isinstance(handle, Handle):
            raise TypeError("%s: expected a callable handle from Testbed.register, got %r" % (kind, handle))
        if handle._testbed is not self._tb or handle.name not in self._tb._callables:
            raise ValueError("%s: unknown handle %r (registered with another testbed)" % (kind, handle.name))
        if config is not None and not isinstance(config, CallConfig):
            raise TypeError("%s: config must be a CallConfig or None, got %r" % (kind, config))
        return {"op": kind, "task": "%s#%d" % (handle.name, self._submits), "callable": handle.name}

    def _finish(self, op, handle, members):
        fail = handle.overrides.get("fail", self._tb._callables[handle.name]["fail"])
        if "duration_s" in handle.overrides:
            op["duration_s"] = self._per_member(handle.overrides["duration_s"], members, "duration_s", True)
        if "prepare_s" in handle.overrides:
            op["prepare_s"] = self._per_member(handle.overrides["prepare_s"], members, "prepare_s", True)
        if isinstance(fail, (list, tuple)) or fail:
            op["fail"] = self._per_member(fail, members, "fail", False)
        if self._batch is None:
            self._top_level_submit(op["op"])
        (self._ops() if self._batch is None else self._batch).append(op)
        self._submits += 1
        return op["task"]

    @staticmethod
    def _per_member(value, members, what, numeric):
        def one(v):
            return _number(v, what) if numeric else bool(v)

        if isinstance(value, (list, tuple)):
            if len(value) != members:
                raise ValueError("%s: a per-member list needs %d entries, got %d" % (what, members, len(value)))
            return [one(v) for v in value]
        return one(value)

    def _args_list(self, args_list):
        if not isinstance(args_list, (list, tuple)):
            raise TypeError("args_list must be a list of TaskArgs, got %r" % (args_list,))
        return [self._args(a, "args_list[%d]" % i) for i, a in enumerate(args_list)]

    def _args(self, args, where):
        if not isinstance(args, TaskArgs):
            raise TypeError("%s must be a TaskArgs, got %r" % (where, args))
        out = []
        for e in args._entries:
            if e[0] == "tensor":
                obj, rng = e[1], None
                if isinstance(obj, BufferView):
                    obj, rng = obj.buffer, (obj.begin, obj.end)
                else:
                    view = _array_view_range(obj)
                    if view is not None:
                        obj, rng = view
                arg = {"buffer": self._buffer_name(obj), "tag": e[2].value}
                if rng is not None:  # a view: the bytes it touches (view_deps, overlapping_writes)
                    arg["range"] = [rng[0], rng[1]]
                out.append(arg)
            else:
                out.append({"scalar": _as_given(e[1])})
        return out

    def _buffer_name(self, obj):
        if isinstance(obj, Buffer):
            if obj._testbed is not self._tb:
                raise ValueError("buffer %r belongs to another testbed" % obj.name)
            return obj.name
        hit = self._by_identity.get(id(obj))
        if hit is not None:
            return hit[1]
        name = self._fresh_name(type(obj).__name__ + "#%d", None)
        nbytes = getattr(obj, "nbytes", 0)
        nbytes = int(nbytes) if isinstance(nbytes, numbers.Integral) and not isinstance(nbytes, bool) else 0
        self._by_identity[id(obj)] = (obj, name)
        self._extra[name] = {"bytes": max(nbytes, 0)}
        return name

    def _fresh_name(self, pattern, counter):
        n = getattr(self, counter) if counter else len(self._by_identity)
        while pattern % n in self._tb._buffers or pattern % n in self._extra:
            n += 1
        if counter:
            setattr(self, counter, n + 1)
        return pattern % n


class Testbed:
    """Workers, callables and buffers of a scenario, and the recording of orchestration functions on them.

    ``next_level`` is the scenario's list (``[{"id": 0, "kind": "local_chip"}, ...]``), ``sub`` a count
    or a list of ``{"host": ...}``, ``platform`` a SimGrid XML file (recorded as an absolute path),
    ``policy`` the scheduler policy (recorded as ``scheduler.policy`` unless it is the default "seed"),
    ``on_reject`` the scenario's ``on_reject`` ("continue", the default, or "abort").
    """

    def __init__(self, next_level, sub=0, platform=None, policy="seed", name="python", on_reject="continue"):
        if not isinstance(next_level, (list, tuple)):
            raise TypeError("next_level must be a list of {\"id\": ..., \"kind\": ...}")
        try:  # plain JSON values only: a NaN or an infinity here would fail only when the file is written
            self.next_level = json.loads(json.dumps(list(next_level), allow_nan=False))
            self.sub = json.loads(json.dumps(sub, allow_nan=False))
        except ValueError as e:
            raise ValueError("next_level and sub must hold finite numbers (JSON has no NaN or infinity): %s" % e) from None
        self.platform = os.path.abspath(platform) if platform is not None else None
        if not isinstance(policy, str):
            raise TypeError("policy must be a string, got %r" % (policy,))
        self.policy = policy
        self.name = name
        if on_reject not in ("continue", "abort"):
            raise ValueError("on_reject must be \"continue\" or \"abort\", got %r" % (on_reject,))
        self.on_reject = on_reject
        self._callables = {}  # name -> spec (with the testbed-only "fail" key)
        self._buffers = {}  # name -> Buffer

    def register(self, name, namespace, duration_s=1.0, eligible=None, fail=False, input_bytes=0, output_bytes=0,
                 collective=None, jitter=None, prepare_s=0):
        """A callable. ``collective=("allreduce" | "allgather" | "broadcast", BYTES)``: a group running it
        exchanges data among its members' hosts after computing (docs/simulation.md, "Collectives").
        ``jitter=("uniform" | "normal", REL)``: each member's duration scaled by a factor drawn from the
        run's seed (uniform in [1-REL, 1+REL], REL at most 1; normal with standard deviation REL).
        ``prepare_s``: seconds each member prepares on its worker before its duration (staging, #1583:
        a worker declared with ``"frames": 2, "prepare_overlap": true`` in ``next_level`` prepares a staged
        member while it runs another)."""
        if not isinstance(name, str) or not name:
            raise TypeError("register: name must be a non-empty string")
        if name in self._callables:
            raise ValueError("register: callable %r is already registered" % name)
        if len(self._callables) >= _MAX_CALLABLES:
            raise ValueError("register: at most %d callables (the testbed's limit)" % _MAX_CALLABLES)
        if namespace not in _NAMESPACES:
            raise ValueError("register: namespace must be one of %s, got %r" % (", ".join(_NAMESPACES), namespace))
        spec = {"namespace": namespace, "duration_s": _number(duration_s, "duration_s")}
        if eligible is not None:
            if namespace != "REMOTE":
                raise ValueError("register: only REMOTE callables take an eligible set")
            spec["eligible"] = [_as_given(w) for w in eligible]
        if prepare_s:
            spec["prepare_s"] = _number(prepare_s, "prepare_s")
        if input_bytes:
            spec["input_bytes"] = _number(input_bytes, "input_bytes")
        if output_bytes:
            spec["output_bytes"] = _number(output_bytes, "output_bytes")
        if collective is not None:
            if not (isinstance(collective, (tuple, list)) and len(collective) == 2):
                raise TypeError("register: collective must be (kind, bytes), got %r" % (collective,))
            kind, nbytes = collective
            if kind not in ("allreduce", "allgather", "broadcast"):
                raise ValueError("register: collective kind must be allreduce, allgather or broadcast, got %r" % (kind,))
            spec["collective"] = {"kind": kind, "bytes": _number(nbytes, "collective bytes")}
        if jitter is not None:
            if not (isinstance(jitter, (tuple, list)) and len(jitter) == 2):
                raise TypeError("register: jitter must be (kind, rel), got %r" % (jitter,))
            kind, rel = jitter
            if kind not in ("uniform", "normal"):
                raise ValueError("register: jitter kind must be uniform or normal, got %r" % (kind,))
            rel = _number(rel, "jitter rel")
            if kind == "uniform" and rel > 1:
                raise ValueError("register: a uniform jitter's rel is at most 1, got %r" % (rel,))
            spec["jitter"] = {"kind": kind, "rel": rel}
        spec["fail"] = bool(fail)
        self._callables[name] = spec
        return Handle(self, name)

    def buffer(self, name, bytes=0, memory="host", owner=None):
        if not isinstance(name, str) or not name:
            raise TypeError("buffer: name must be a non-empty string")
        if name in self._buffers:
            raise ValueError("buffer: %r is already declared" % name)
        if memory not in _MEMORIES:
            raise ValueError("buffer: memory must be one of %s, got %r" % (", ".join(_MEMORIES), memory))
        b = Buffer(self, name, _number(bytes, "bytes"), memory, _as_given(owner))
        self._buffers[name] = b
        return b

    # -- record, run, sweep ---------------------------------------------------------------------
    def record(self, orch_fn, args=None, cfg=None):
        """Calls ``orch_fn(orch, args, cfg)`` and returns the scenario it submitted, as a dict."""
        return self._record(orch_fn, args, cfg)

    def run(self, orch_fn, out, seed=0, policy=None, args=None, cfg=None):
        """Records, writes OUT/scenario.json, runs `dirsched run` into OUT and returns its Result.
        ``policy`` (when given) is passed as `--policy`; a failed CLI call raises CliError."""
        scenario = self._record(orch_fn, args, cfg, seed=seed)
        cli = find_cli()
        out = os.path.abspath(os.fsdecode(out))  # bytes or str, as Python names files (surrogateescape)
        tmp = self._write_beside(out, scenario)
        try:
            stdout = call_cli(
                ["run", tmp, "--out", out, "--attach", "scenario.json=" + tmp] + self._policy_args(policy), cli,
                ok=_RUN_WRITTEN,
            )
        except BaseException as e:
            label = "the scenario recorded from %s" % (getattr(orch_fn, "__qualname__", None) or repr(orch_fn))
            fixed = _without_temp(e, tmp, label)
            if fixed is e:
                raise
            raise fixed from None
        finally:
            os.unlink(tmp)
        return Result(out, stdout)

    def sweep(self, make_orch_fn, values, out, jobs=2, seed=0, policy=None, args=None, cfg=None, executor=None,
              replicates=None, select_best=None, pcs=None):
        """One variant per combination of ``values`` (name -> candidates), ``make_orch_fn(**combination)``
        returning its orchestration function. Variants are numbered as `dirsched sweep` numbers them
        (names in order, the last varying fastest), run into OUT/variant-NNNN, and ranked by
        `dirsched sweep --collect OUT`, which writes sweep.csv and sweep.svg.

        ``executor``: any ``concurrent.futures.Executor`` (a ProcessPoolExecutor, a Dask client's
        ``get_executor()``, mpi4py's MPIPoolExecutor) runs the variants instead of a thread pool of
        ``jobs`` threads; it is not shut down here. The variants are recorded in this process; each task
        is one `dirsched run` of a recorded scenario (a module-level function, picklable), so the results
        are the same whatever runs them. OUT must be a path every worker sees.

        ``replicates=N`` (N > 1, with a jitter somewhere): every variant runs under seeds SEED..SEED+N-1,
        the same for every variant (common random numbers), and the ranking compares variants on paired
        differences (`dirsched sweep --replicates`). Replicate 0 is the variant folder, run as above;
        replicates 1..N-1 are summary metrics only, run by `dirsched sweep --replicate OUT` in this
        machine's evaluation pool (``jobs`` processes), whatever ``executor`` ran the variants.

        ``select_best=DELTA`` (a positive number, in the first objective key's unit: seconds of makespan):
        after the variants ran, `dirsched sweep --replicate OUT --select-best DELTA` selects the best with
        Kim and Nelson's fully sequential procedure KN, with probability at least ``pcs`` (default 0.95)
        whenever it is better than every other by DELTA; the result's ``selection`` is its
        selection.json. Not with ``replicates``."""
        if select_best is not None:
            if isinstance(select_best, bool) or not isinstance(select_best, numbers.Real) or not select_best > 0:
                raise ValueError("sweep: select_best must be a positive number, got %r" % (select_best,))
            if replicates is not None:
                raise ValueError("sweep: select_best runs the replicates it needs; give it or replicates, not both")
        if pcs is not None and (select_best is None or isinstance(pcs, bool) or not isinstance(pcs, numbers.Real)
                                or not 0.5 <= pcs < 1):
            raise ValueError("sweep: pcs goes with select_best and is a probability from 0.5 to below 1, got %r" % (pcs,))
        if replicates is not None and (
            isinstance(replicates, bool) or not isinstance(replicates, numbers.Integral) or not 1 <= replicates <= 10000
        ):
            raise ValueError("sweep: replicates must be a whole number from 1 to 10000, got %r" % (replicates,))
        names, variants, candidates = self._variants(values)
        scenarios = []
        for index, (combination, as_json) in enumerate(variants):
            s = self._record(make_orch_fn(**combination), args, cfg, seed=seed)
            var_args = ["%s=%s" % (n, json.dumps(as_json[n], separators=(",", ":"))) for n in names]
            s["description"] += " (sweep variant %d: %s)" % (index, ", ".join(var_args))
            # The scenario is concrete (no "$NAME" in it, and the CLI refuses a var nothing uses): the
            # variant's values go to its variant.json, written here as the CLI writes one.
            scenarios.append((index, s, {n: as_json[n] for n in names}))
        # Every argument checked before the folder is claimed: a refusal leaves nothing behind.
        if executor is not None and not isinstance(executor, Executor):
            raise TypeError("sweep: executor must be a concurrent.futures.Executor, got %r" % (executor,))
        policy_args = self._policy_args(policy)
        cli = find_cli()
        out = os.path.abspath(os.fsdecode(out))  # bytes or str, as Python names files (surrogateescape)
        self._prepare_sweep_folder(out, make_orch_fn, len(variants), cli)

        tasks = [(cli, out, index, s, chosen, policy_args) for index, s, chosen in scenarios]
        stop = threading.Event()  # set on an interrupt: queued variants do not start
        pool = ThreadPoolExecutor(max_workers=max(1, int(jobs))) if executor is None else None
        if pool is not None:
            pending = [pool.submit(_run_variant, *t, stop) for t in tasks]
        else:
            pending = [executor.submit(_run_variant, *t) for t in tasks]
        try:
            # Waits in short steps: the main thread stays interruptible (Ctrl-C, a Jupyter interrupt).
            while not all(f.done() for f in pending):
                wait_futures(pending, timeout=0.2, return_when=FIRST_EXCEPTION)
        except BaseException:
            # Interrupted: no queued variant starts, the running ones get SIGINT (they remove their
            # temporaries), and the interrupt goes on once they have stopped.
            stop.set()
            for f in pending:
                f.cancel()
            interrupt_children()
            if pool is not None:
                pool.shutdown(wait=True)
            raise
        if pool is not None:
            pool.shutdown(wait=True)
        errors = [f.exception() for f in pending if f.exception() is not None]
        if errors:
            raise errors[0]
        if replicates is not None and replicates > 1:
            call_cli(["sweep", "--replicate", out, "--replicates", int(replicates), "-j", max(1, int(jobs))] + policy_args,
                     cli)
        if select_best is not None:
            call_cli(["sweep", "--replicate", out, "--select-best", repr(float(select_best)), "-j", max(1, int(jobs))]
                     + (["--pcs", repr(float(pcs))] if pcs is not None else []) + policy_args, cli)
        stdout = call_cli(["sweep", "--collect", out], cli)
        result = SweepResult(out, names, [c for c, _ in variants], stdout)
        if replicates is not None and replicates > 1 and result.replicates == 1:
            warnings.warn("sweep: no callable has a jitter or an empirical duration: the variants are deterministic "
                          "and need no replications (every seed gives the same run); 1 replicate", stacklevel=2)
        return result

    @staticmethod
    def optimize(scenario_file, out, budget=None, seed=0, jobs=2, replicates=None, objective=None, pareto=None,
                 cli=None, executor=None):
        """`dirsched optimize SCENARIO_FILE --out OUT`: the best variant of the file's vars (a list or a
        ``{"choose": K, "from": [...]}`` space), exhaustive when the space fits ``budget``, else a seeded
        search. Returns optimize.json as a dict (``best``, ``objective``, ``evaluations``, ``exhaustive``,
        ``pareto``, ...) with ``best_file`` (OUT/best.json, the scenario with the best values).

        ``executor``: any ``concurrent.futures.Executor`` (a Dask client's, mpi4py's pool) runs the
        evaluations instead of the CLI's own processes. The search then goes batch by batch
        (`optimize --plan-batches`): each batch's runs are submitted to the executor, and the same search
        resumes from their run folders, kept in a temporary folder beside OUT and removed at the end. The
        result is the local one (but its ``evaluation`` line)."""
        args = ["optimize", scenario_file, "--out", out, "--seed", int(seed), "-j", int(jobs)]
        if budget is not None:
            args += ["--budget", int(budget)]
        if replicates is not None:
            args += ["--replicates", int(replicates)]
        if objective is not None:
            args += ["--objective", ",".join(objective) if not isinstance(objective, str) else objective]
        if pareto is not None:
            args += ["--pareto", ",".join(pareto) if not isinstance(pareto, str) else pareto]
        if executor is None:
            call_cli(args, cli)
        else:
            work = tempfile.mkdtemp(prefix=".dirsched-optimize-", dir=os.path.dirname(os.path.abspath(out)))
            try:
                previous = None
                while True:
                    try:
                        call_cli(args + ["--plan-batches", work], cli)
                        break
                    except CliError as e:
                        if e.returncode != 6:  # 6: a batch of runs to do first
                            raise
                        lines = [line for line in e.stdout.splitlines() if line.strip()]
                        if lines == previous:  # each run written leaves the batch: the executor ran none
                            raise RuntimeError(
                                "optimize: the executor's futures for a batch of %d runs completed, but none of "
                                "the runs was written (an executor that does not call the function it is "
                                "given?); the first: %s" % (len(lines), lines[0]))
                        previous = lines
                        futures = [executor.submit(_run_plan_line, line) for line in lines]
                        for f in futures:
                            f.result()
            finally:
                shutil.rmtree(work, ignore_errors=True)
        with open(os.path.join(out, "optimize.json"), encoding="utf-8") as f:
            result = json.load(f)
        result["best_file"] = os.path.join(os.path.abspath(out), "best.json")
        return result

    @staticmethod
    def whynot(scenario_file, out, task, goal, edits=None, max_edits=None, policy=None, switches=None, cli=None):
        """`dirsched whynot SCENARIO_FILE --task TASK --goal GOAL --out OUT`: the smallest change to the
        scenario under which TASK meets GOAL (``"no-overtakes"``, ``"wait<=SECONDS"``, ``"start<=SECONDS"``),
        each candidate replayed. ``edits``: a list (or comma-separated string) of ``placement`` (the
        default), ``order``, ``version``; ``max_edits``: edits in one change at most (default 1);
        ``policy`` and ``switches`` (name -> bool) fix the version asked of. Returns whynot.json as a dict
        (``found``, ``edits``, ``before``, ``after``, ``replays``, ``candidates``, ``method``, ...) with
        ``scenario_file`` (OUT/scenario.json, the changed scenario; `dirsched run` on it gives ``after``).
        Nothing found within ``max_edits`` is no error: ``found`` is False and the closest change is
        returned. Bad input raises CliError (exit 2)."""
        args = ["whynot", scenario_file, "--task", task, "--goal", goal, "--out", out]
        if edits is not None:
            args += ["--edits", edits if isinstance(edits, str) else ",".join(edits)]
        if max_edits is not None:
            args += ["--max-edits", int(max_edits)]
        args += Testbed._policy_args(policy)
        for name, on in (switches or {}).items():
            if not isinstance(on, bool):
                raise TypeError("switches: %s must be True or False, got %r" % (name, on))
            args += ["--switch", "%s=%s" % (name, "on" if on else "off")]
        try:
            call_cli(args, cli)
        except CliError as e:
            if e.returncode != 1:  # 1: nothing met the goal; whynot.json holds the closest change
                raise
        with open(os.path.join(out, "whynot.json"), encoding="utf-8") as f:
            result = json.load(f)
        result["scenario_file"] = os.path.join(os.path.abspath(out), "scenario.json")
        return result

    # -- helpers --------------------------------------------------------------------------------
    def _prepare_sweep_folder(self, out, make_orch_fn, count, cli):
        """`dirsched sweep --prepare`: the CLI makes OUT the sweep folder of this testbed and function
        with COUNT variants, under the folder rules of `dirsched sweep` (a new folder or a sweep folder of
        the same scenario; never the current folder, a parent or home; stale variant folders removed only
        when they hold nothing of the user's). A refusal (exit 2) is a FileExistsError with its message."""
        name = getattr(make_orch_fn, "__qualname__", None) or repr(make_orch_fn)
        command = ["sweep", "--prepare", out, "--name", self.name, "--origin", "python:" + name, "--variants", count]
        try:
            call_cli(command, cli)
        except CliError as e:
            if e.returncode == 2:
                raise FileExistsError(e.stderr.strip().replace("dirsched: ", "", 1)) from None
            raise

    @staticmethod
    def _policy_args(policy):
        if policy is None:
            return []
        if not isinstance(policy, str):
            raise TypeError("policy must be a string, got %r" % (policy,))
        return ["--policy", policy]

    @staticmethod
    def _variants(values):
        if not isinstance(values, dict) or not values:
            raise ValueError("sweep: values must be a non-empty dict of name -> list of candidates")
        names = sorted(values)
        candidates = {}
        for n in names:
            if not isinstance(n, str) or not n or "=" in n:
                raise ValueError("sweep: variable names are non-empty strings without '=', got %r" % (n,))
            c = values[n]
            if not isinstance(c, (list, tuple)) or not c:
                raise ValueError("sweep: %s needs a non-empty list of candidates" % n)
            as_json = [json.loads(json.dumps(v)) for v in c]  # TypeError for a value JSON cannot hold
            if any(as_json.index(v) != i for i, v in enumerate(as_json)):
                raise ValueError("sweep: %s lists a candidate twice" % n)
            candidates[n] = as_json
        variants = []  # (the Python values, their JSON forms), in the CLI's numbering
        for picks in itertools.product(*(range(len(values[n])) for n in names)):
            variants.append(
                (
                    {n: values[n][i] for n, i in zip(names, picks)},
                    {n: candidates[n][i] for n, i in zip(names, picks)},
                )
            )
        return names, variants, candidates

    @staticmethod
    def _write_beside(folder, doc, kind="scenario"):
        parent = os.path.dirname(folder)
        os.makedirs(parent, exist_ok=True)
        # Exactly the CLI's temporary naming (NAME.TAG.tmp-dirsched-PID-8HEX, nothing after it): the CLI
        # takes only that shape for a temporary (a leftover of a process that is gone is removed, a live
        # one's waited for); any other name holding ".tmp-dirsched-" is a user's file.
        while True:
            tmp = os.path.join(
                parent, "%s.%s.tmp-dirsched-%d-%s" % (os.path.basename(folder), kind, os.getpid(), os.urandom(4).hex())
            )
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
                break
            except FileExistsError:
                continue
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(dumps(doc) if kind == "scenario" else json.dumps(doc, indent=2, sort_keys=True) + "\n")
        return tmp

    def _record(self, orch_fn, args, cfg, seed=0):
        orch = _Orchestrator(self)
        try:
            orch_fn(orch, args, cfg)
        finally:
            orch._closed = True
        fn_name = getattr(orch_fn, "__qualname__", None) or repr(orch_fn)
        s = {"name": self.name, "description": "Recorded from Python: %s" % fn_name}
        if seed:
            s["seed"] = _number(seed, "seed")
        if self.platform is not None:
            s["platform"] = self.platform
        if self.policy != "seed":
            s["scheduler"] = {"policy": self.policy}
        s["workers"] = {"next_level": json.loads(json.dumps(self.next_level))}
        if self.sub:
            s["workers"]["sub"] = json.loads(json.dumps(self.sub))
        s["callables"] = {n: {k: v for k, v in c.items() if k != "fail"} for n, c in self._callables.items()}
        buffers = {n: b.spec() for n, b in self._buffers.items()}
        buffers.update(orch._extra)
        if buffers:
            s["buffers"] = buffers
        if self.on_reject != "continue":
            s["on_reject"] = self.on_reject
        s["trace"] = orch._trace
        return s


def dumps(scenario):
    """The scenario as JSON text: objects expanded two levels deep and lists three, so that each worker,
    callable, buffer and trace op sits on one line."""

    def render(value, depth, indent):
        expand = (isinstance(value, dict) and depth < 2) or (isinstance(value, list) and depth < 3)
        if not expand or not value:
            return json.dumps(value, allow_nan=False)
        pad = indent + "  "
        if isinstance(value, dict):
            body = ",\n".join(
                "%s%s: %s" % (pad, json.dumps(k), render(v, depth + 1, pad)) for k, v in value.items()
            )
            return "{\n%s\n%s}" % (body, indent)
        body = ",\n".join(pad + render(v, depth + 1, pad) for v in value)
        return "[\n%s\n%s]" % (body, indent)

    return render(scenario, 0, "") + "\n"
