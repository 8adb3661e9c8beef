"""Finding and calling the dirsched command line.

The CLI is found through, in this order: the environment variable DIRSCHED_BIN; build/bin/dirsched of
the checkout this package lives in (python/dirsched/ -> ../../build/bin/dirsched); `dirsched` on PATH.
A call that exits non-zero raises CliError carrying the command's stderr.
"""

import os
import shutil
import signal
import subprocess
import threading
from pathlib import Path

__all__ = ["CliError", "find_cli", "call_cli", "interrupt_children"]


class CliError(RuntimeError):
    """dirsched exited non-zero. ``str(e)`` is its stderr (one line for bad input, exit status 2)."""

    def __init__(self, command, returncode, stderr, stdout=""):
        self.command = list(command)
        self.returncode = returncode
        self.stderr = stderr
        self.stdout = stdout
        text = stderr.strip() or stdout.strip() or "no output"
        super().__init__("%s (exit status %d)" % (text, returncode))

    def __reduce__(self):  # picklable, so that it crosses a process pool or a Dask worker whole
        return (CliError, (self.command, self.returncode, self.stderr, self.stdout))


def find_cli():
    env = os.environ.get("DIRSCHED_BIN")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise FileNotFoundError("DIRSCHED_BIN=%s is not an executable file" % env)
        return env
    checkout = Path(__file__).resolve().parents[2] / "build" / "bin" / "dirsched"
    if checkout.is_file() and os.access(str(checkout), os.X_OK):
        return str(checkout)
    on_path = shutil.which("dirsched")
    if on_path:
        return on_path
    raise FileNotFoundError(
        "cannot find the dirsched CLI: set DIRSCHED_BIN, build it to %s, or put it on PATH" % checkout
    )


# The CLI children running now (a sweep runs several from threads): an interrupt reaches each.
_children = set()
_children_lock = threading.Lock()
# How long an interrupted child has to remove its temporaries before it is killed.
_INTERRUPT_GRACE_S = 10


def interrupt_children():
    """Sends SIGINT to every CLI child still running (they remove their temporaries and exit 130)."""
    with _children_lock:
        children = list(_children)
    for proc in children:
        if proc.poll() is None:
            try:
                proc.send_signal(signal.SIGINT)
            except OSError:
                pass


def _arg(a):
    """One argument of the command line: a path given as bytes or a path-like object as Python names
    files (os.fsdecode: bytes that are not UTF-8 kept as surrogate escapes), anything else as str."""
    return os.fsdecode(a) if isinstance(a, (bytes, os.PathLike)) else str(a)


def call_cli(args, cli=None, ok=(0,)):
    """Runs `dirsched ARGS...`; returns its stdout, or raises CliError for an exit status not in OK
    (`dirsched run` passes (0, 1): 1 is a run written whose submits were rejected or that ended STUCK,
    which its Result reports).

    An interrupt (Ctrl-C, a Jupyter interrupt: KeyboardInterrupt) is forwarded to the child as SIGINT,
    never SIGKILL, so that it removes its temporaries; the call waits for it (SIGKILL only if it has
    not stopped after _INTERRUPT_GRACE_S seconds) and re-raises the KeyboardInterrupt."""
    command = [cli or find_cli()] + [_arg(a) for a in args]
    # A path is bytes to the system: one that is not UTF-8 comes back in the CLI's output as it went in,
    # and is decoded as Python decodes file names (surrogateescape), never a UnicodeDecodeError.
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                            encoding="utf-8", errors="surrogateescape")
    with _children_lock:
        _children.add(proc)
    try:
        try:
            stdout, stderr = proc.communicate()
        except BaseException:
            if proc.poll() is None:
                try:
                    proc.send_signal(signal.SIGINT)
                    proc.communicate(timeout=_INTERRUPT_GRACE_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.communicate()
                except BaseException:
                    proc.kill()
                    proc.wait()
            raise
    finally:
        with _children_lock:
            _children.discard(proc)
    if proc.returncode not in ok:
        raise CliError(command, proc.returncode, stderr, stdout)
    return stdout
