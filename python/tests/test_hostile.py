"""Issue 28 (hostile inputs, round 3) on the Python front end: a stale variant folder holding a user's
file is never removed, a CliError names no deleted temporary, a worker id past 64 bits is recorded as a
rejection, and an interrupt reaches the CLI children as SIGINT, stops queued variants and leaves no
temporaries."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "..")
sys.path.insert(0, PACKAGE)

from dirsched import CliError, Testbed  # noqa: E402
from dirsched.simpler import TaskArgs  # noqa: E402


def two_chips():
    return Testbed([{"id": 0, "kind": "local_chip"}, {"id": 1, "kind": "local_chip"}])


class StaleVariantFolders(unittest.TestCase):
    def test_a_users_file_in_a_stale_variant_folder_stops_the_sweep(self):
        tb = two_chips()
        k = tb.register("k", "LOCAL_CHIP")
        tmp = tempfile.mkdtemp(prefix="dirsched-py-hostile-")
        self.addCleanup(shutil.rmtree, tmp)
        out = os.path.join(tmp, "s")

        def make(w):
            return lambda orch, args, cfg: orch.submit_next_level(k, TaskArgs(), worker=w)

        tb.sweep(make, {"w": [0, 1]}, out)
        mine = os.path.join(out, "variant-0001", "notes.txt")
        with open(mine, "w") as f:
            f.write("the user's notes")
        with self.assertRaisesRegex(FileExistsError, "variant-0001: holds 1 entry dirsched did not write \\(notes.txt\\)"):
            tb.sweep(make, {"w": [1]}, out)  # fewer variants: variant-0001 is stale
        with open(mine) as f:
            self.assertEqual(f.read(), "the user's notes")


class Messages(unittest.TestCase):
    def test_cli_error_names_no_deleted_temporary(self):
        tb = Testbed([{"id": 0, "kind": "local_chip"}], platform="/nonexistent/platform.xml")
        tmp = tempfile.mkdtemp(prefix="dirsched-py-hostile-")
        self.addCleanup(shutil.rmtree, tmp)

        def fn(orch, args, cfg):
            orch.drain()

        with self.assertRaises(CliError) as caught:
            tb.run(fn, os.path.join(tmp, "r"))
        text = str(caught.exception) + " ".join(caught.exception.command)
        self.assertNotIn(".tmp-dirsched", text)
        self.assertIn("the scenario recorded from", text)
        self.assertEqual(os.listdir(tmp), [], "no temporary left")

    def test_a_worker_id_past_64_bits_is_a_rejection(self):
        tb = two_chips()
        k = tb.register("k", "LOCAL_CHIP")
        tmp = tempfile.mkdtemp(prefix="dirsched-py-hostile-")
        self.addCleanup(shutil.rmtree, tmp)

        def fn(orch, args, cfg):
            orch.submit_next_level(k, TaskArgs(), worker=10**400)
            orch.submit_next_level(k, TaskArgs(), worker=-(10**400))
            orch.drain()

        result = tb.run(fn, os.path.join(tmp, "r"))
        self.assertEqual(sorted(result.rejected), ["k#0", "k#1"])


# A stand-in CLI: makes the sweep folder it is asked to prepare; records each run, and on SIGINT records
# that too, removes nothing and exits 130.
FAKE_CLI = textwrap.dedent(
    """\
    #!/usr/bin/env python3
    import os, signal, sys, time
    if sys.argv[1:3] == ["sweep", "--prepare"]:
        os.makedirs(sys.argv[3], exist_ok=True)
        sys.exit(0)
    log = os.environ["FAKE_CLI_LOG"]
    with open(log, "a") as f:
        f.write("start %d\\n" % os.getpid())
    def interrupted(signum, frame):
        with open(log, "a") as f:
            f.write("SIGINT %d\\n" % os.getpid())
        sys.exit(130)
    signal.signal(signal.SIGINT, interrupted)
    time.sleep(60)
    """
)

DRIVER = textwrap.dedent(
    """\
    import os, sys
    sys.path.insert(0, %r)
    from dirsched import Testbed
    from dirsched.simpler import TaskArgs
    tb = Testbed([{"id": 0, "kind": "local_chip"}])
    k = tb.register("k", "LOCAL_CHIP")
    def make(w):
        return lambda orch, args, cfg: orch.submit_next_level(k, TaskArgs(), worker=0)
    try:
        tb.sweep(make, {"w": list(range(6))}, sys.argv[1], jobs=2)
    except KeyboardInterrupt:
        print("KeyboardInterrupt raised")
        sys.exit(130)
    """
)


class Interrupts(unittest.TestCase):
    def test_ctrl_c_reaches_the_children_and_stops_queued_variants(self):
        tmp = tempfile.mkdtemp(prefix="dirsched-py-hostile-")
        self.addCleanup(shutil.rmtree, tmp)
        fake = os.path.join(tmp, "fake-dirsched")
        with open(fake, "w") as f:
            f.write(FAKE_CLI)
        os.chmod(fake, 0o755)
        log = os.path.join(tmp, "calls.log")
        env = dict(os.environ, DIRSCHED_BIN=fake, FAKE_CLI_LOG=log)
        out = os.path.join(tmp, "s")
        # A process group of its own: the SIGINT goes to the Python process alone (as a Jupyter
        # interrupt does), not to the children; forwarding it is the front end's job.
        proc = subprocess.Popen([sys.executable, "-c", DRIVER % PACKAGE, out], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, universal_newlines=True, start_new_session=True)
        deadline = time.time() + 20
        while time.time() < deadline:
            if os.path.exists(log) and open(log).read().count("start") == 2:
                break
            time.sleep(0.05)
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
        lines = open(log).read().split()
        starts = [lines[i + 1] for i in range(0, len(lines), 2) if lines[i] == "start"]
        sigints = [lines[i + 1] for i in range(0, len(lines), 2) if lines[i] == "SIGINT"]
        self.assertEqual(proc.returncode, 130, stderr)
        self.assertIn("KeyboardInterrupt raised", stdout)
        self.assertEqual(len(starts), 2, "queued variants must not start: %s" % lines)
        self.assertEqual(sorted(sigints), sorted(starts), "each running child gets SIGINT")
        left = [e for e in os.listdir(out) if ".tmp-dirsched" in e]
        self.assertEqual(left, [], "temporaries left")


if __name__ == "__main__":
    unittest.main()
