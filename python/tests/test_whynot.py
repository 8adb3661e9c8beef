"""Testbed.whynot: `dirsched whynot` from Python, found or not, and its bad input."""

import json
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, ".."))

from dirsched import CliError, Testbed  # noqa: E402
from dirsched._cli import call_cli  # noqa: E402

TP = os.path.join(ROOT, "scenarios", "group-starvation-tp.json")
DEMO = os.path.join(ROOT, "scenarios", "group-starvation.json")


class WhynotTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="whynot-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_found_and_replayed_as_written(self):
        w = Testbed.whynot(TP, os.path.join(self.tmp, "w"), "tp", "no-overtakes")
        self.assertTrue(w["found"])
        self.assertEqual([(e["kind"], e["task"], e["to"]) for e in w["edits"]], [("placement", "tp", [1, 2, 3, 4])])
        self.assertEqual(w["before"]["task"]["overtakes"], 11)
        self.assertEqual(w["after"]["task"]["overtakes"], 0)
        self.assertLessEqual(2 * w["replays"], w["one_edit_candidates"])
        run = os.path.join(self.tmp, "run")
        call_cli(["run", w["scenario_file"], "--out", run, "--outputs", "summary"])
        with open(os.path.join(run, "summary.json"), encoding="utf-8") as f:
            s = json.load(f)
        self.assertEqual(s["makespan_s"], w["after"]["run"]["makespan_s"])
        self.assertEqual([g["overtakes"] for g in s["groups"] if g["task"] == "tp"], [0])

    def test_policy_and_switches_fix_the_version(self):
        w = Testbed.whynot(TP, os.path.join(self.tmp, "w"), "tp", "wait<=0.5", policy="seed",
                           switches={"group_reservation": True})
        self.assertTrue(w["found"])
        self.assertEqual(w["before"]["task"]["wait_s"], 1.5)  # reserving: held for a0, no overtakes
        with open(w["scenario_file"], encoding="utf-8") as f:
            self.assertEqual(json.load(f)["scheduler"], {"policy": "seed", "switches": {"group_reservation": True}})

    def test_not_found_returns_the_closest_change(self):
        w = Testbed.whynot(DEMO, os.path.join(self.tmp, "w"), "g", "start<=0.1", edits=["order"])
        self.assertFalse(w["found"])
        self.assertTrue(w["method"].startswith("exhaustive"))
        self.assertLess(w["after"]["task"]["start_s"], w["before"]["task"]["start_s"])

    def test_bad_input_raises(self):
        with self.assertRaises(CliError) as e:
            Testbed.whynot(DEMO, os.path.join(self.tmp, "w"), "nope", "no-overtakes")
        self.assertEqual(e.exception.returncode, 2)
        self.assertIn("no submit op of the trace names it", e.exception.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "w")))


if __name__ == "__main__":
    unittest.main()
