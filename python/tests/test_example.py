"""examples/ffn_tp.py runs on four chips and prints its dispatch table and report path."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(os.path.dirname(HERE), "examples", "ffn_tp.py")


class FfnTensorParallelExample(unittest.TestCase):
    def test_it_prints_the_dispatch_table_and_the_report(self):
        tmp = tempfile.mkdtemp(prefix="dirsched-py-example-")
        self.addCleanup(shutil.rmtree, tmp)
        out = os.path.join(tmp, "ffn")
        proc = subprocess.run([sys.executable, EXAMPLE, out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, cwd=tmp)  # fmt: skip
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertEqual(lines[0].split(), ["task", "member", "worker", "t_s"])
        rows = [l.split() for l in lines[1:] if re.match(r"^\S+#\d+ ", l)]
        # Two layers of four per-rank singles and one four-member group, then the SUB step.
        self.assertEqual(len(rows), 2 * (4 + 4) + 1)
        for layer in range(2):
            singles = rows[layer * 8 : layer * 8 + 4]
            group = rows[layer * 8 + 4 : layer * 8 + 8]
            self.assertEqual([r[2] for r in singles], ["0", "1", "2", "3"])
            self.assertEqual({r[0] for r in group}, {group[0][0]})
            self.assertEqual([(r[1], r[2]) for r in group], [("0", "0"), ("1", "1"), ("2", "2"), ("3", "3")])
            self.assertEqual(len({r[3] for r in group}), 1, "the group launches its members at one instant")
        self.assertEqual(rows[-1][0].split("#")[0], "log_step")
        self.assertEqual(rows[-1][2], "sub0")
        self.assertIn("outcome COMPLETED", proc.stdout)
        report = lines[-1].split("report: ", 1)[1]
        self.assertEqual(report, os.path.join(out, "report.html"))
        self.assertTrue(os.path.isfile(report))


if __name__ == "__main__":
    unittest.main()
