"""The runtime's argument names, so that an orchestration function runs unchanged apart from its imports.

A tensor is whatever the caller passes to ``add_tensor``: a testbed buffer (``Testbed.buffer``,
``orch.alloc``) or any other Python object (a numpy array, a torch tensor, a plain object). The
recorder keys plain objects by identity, so one object is one buffer for the whole recording and two
equal but distinct objects are two buffers.

``TaskArgs`` keeps its entries in call order (tensors and scalars interleaved), which is the order the
core's dependency walk visits them. Misuse that the runtime's Python layer refuses before its core
raises at once: a tag that is not a ``TensorArgType`` is a ``TypeError``; ``tag(i)`` out of range is an
``IndexError``.
"""

import enum

__all__ = ["TaskArgs", "TensorArgType", "CallConfig", "make_tensor_arg"]


class TensorArgType(enum.Enum):
    """How a task uses a tensor: the five dependency tags of the contract."""

    INPUT = "INPUT"
    OUTPUT = "OUTPUT"
    INOUT = "INOUT"
    OUTPUT_EXISTING = "OUTPUT_EXISTING"
    NO_DEP = "NO_DEP"


class TaskArgs:
    """The arguments of one task (or one group member): tagged tensors and scalars, in call order."""

    def __init__(self):
        self._entries = []  # ("tensor", obj, tag) or ("scalar", value)

    def add_tensor(self, tensor, tag):
        if not isinstance(tag, TensorArgType):
            raise TypeError("add_tensor: tag must be a TensorArgType, got %r" % (tag,))
        self._entries.append(("tensor", tensor, tag))

    def add_scalar(self, value):
        self._entries.append(("scalar", value))

    def tensor_count(self):
        return sum(1 for e in self._entries if e[0] == "tensor")

    def tensor(self, i):
        return self._tensors()[i][1]

    def tag(self, i):
        return self._tensors()[i][2]

    def scalar_count(self):
        return sum(1 for e in self._entries if e[0] == "scalar")

    def _tensors(self):
        return [e for e in self._entries if e[0] == "tensor"]

    def __repr__(self):
        parts = []
        for e in self._entries:
            parts.append("%s:%s" % (e[2].name, type(e[1]).__name__) if e[0] == "tensor" else "scalar=%r" % (e[1],))
        return "TaskArgs(%s)" % ", ".join(parts)


class CallConfig:
    """A call's launch configuration. The testbed models no launch options, so it records nothing of it;
    its attributes are kept so that code that sets them (cfg.block_dim = 24) runs unchanged."""

    def __init__(self, **options):
        self.__dict__.update(options)

    def __repr__(self):
        return "CallConfig(%s)" % ", ".join("%s=%r" % kv for kv in sorted(self.__dict__.items()))


def make_tensor_arg(x):
    """The runtime wraps a framework tensor here; the testbed needs only the object's identity."""
    return x
