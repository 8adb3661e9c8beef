"""dirsched from Python: record an orchestration function written for the runtime's Python API, run it
on the testbed's simulator (the dirsched CLI), and read the outputs back.

    from dirsched import Testbed
    from dirsched.simpler import TaskArgs, TensorArgType

See docs/tutorial-python.md, docs/reference-python.md and the module comment of dirsched.testbed.
"""

from ._cli import CliError, find_cli
from .results import Result, SweepResult
from .testbed import Buffer, Handle, Testbed, dumps

__all__ = ["Testbed", "Handle", "Buffer", "Result", "SweepResult", "CliError", "find_cli", "dumps"]
__version__ = "0.1.0"
