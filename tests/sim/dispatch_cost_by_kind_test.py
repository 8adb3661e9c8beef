#!/usr/bin/env python3
"""scheduler.dispatch_cost_by_kind_s: the members an iteration dispatches go out one after another on the
scheduler, each after the dispatch cost of its target's kind (dispatch_cost_s for a kind not given).

A group on two chips and a remote single submitted in one batch: the group pass dispatches g[0] and
g[1], then the singles pass r; every member runs 1 s, so its end is its start plus 1 s. Also: the
loader's refusals (exit 2, JSON path), the event engine's refusal, and no cost at all (every member at
0, as without the key).

Usage: dispatch_cost_by_kind_test.py DIRSCHED
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

DIRSCHED = sys.argv[1]

SCENARIO = {
    "name": "dispatch-cost-by-kind",
    "description": "A group on two chips and a remote single in one batch.",
    "workers": {"next_level": [{"id": 0, "kind": "local_chip"}, {"id": 1, "kind": "local_chip"},
                               {"id": 7, "kind": "remote"}]},
    "callables": {"k": {"namespace": "LOCAL_CHIP", "duration_s": 1},
                  "attn": {"namespace": "REMOTE", "duration_s": 1}},
    "trace": [
        {"op": "batch", "ops": [
            {"op": "submit_next_level", "task": "r", "callable": "attn", "worker": 7, "args": []},
            {"op": "submit_next_level_group", "task": "g", "callable": "k", "workers": [0, 1],
             "args_list": [[], []]}]},
        {"op": "drain"}],
}

# scheduler block -> each member's end (its start + 1 s): g[0], g[1], r.
CASES = [
    ({"dispatch_cost_s": 0.001}, [1.001, 1.002, 1.003]),
    ({"dispatch_cost_s": 0.001, "dispatch_cost_by_kind_s": {"remote": 0.01}}, [1.001, 1.002, 1.012]),
    ({"dispatch_cost_s": 0.001, "dispatch_cost_by_kind_s": {"local_chip": 0.002, "remote": 0}}, [1.002, 1.004, 1.004]),
    ({"dispatch_cost_by_kind_s": {"remote": 0}}, [1.0, 1.0, 1.0]),
]

REFUSED = [
    ({"dispatch_cost_by_kind_s": {"gpu": 1}}, "scheduler.dispatch_cost_by_kind_s.gpu: unknown key 'gpu'", []),
    ({"dispatch_cost_by_kind_s": {"remote": -1}}, "scheduler.dispatch_cost_by_kind_s.remote: must not be negative", []),
    ({"dispatch_cost_by_kind_s": []}, "scheduler.dispatch_cost_by_kind_s: expected an object", []),
    ({"dispatch_cost_by_kind_s": {"remote": 0.01}}, "scheduler.dispatch_cost_by_kind_s: a scheduler cost needs SimGrid",
     ["--engine", "event"]),
]


def write(tmp, scheduler):
    path = os.path.join(tmp, "s.json")
    with open(path, "w") as f:
        json.dump(dict(SCENARIO, scheduler=scheduler), f)
    return path


class DispatchCostByKind(unittest.TestCase):
    def test_each_member_after_its_kinds_cost(self):
        for scheduler, ends in CASES:
            with self.subTest(scheduler=scheduler), tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "out")
                run = subprocess.run([DIRSCHED, "run", write(tmp, scheduler), "--out", out, "--quiet"],
                                     capture_output=True, text=True)
                self.assertEqual(run.returncode, 0, run.stderr)
                with open(os.path.join(out, "events.jsonl")) as f:
                    got = {"%s[%s]" % (e["task"], e["member"]): e["t_s"] for e in map(json.loads, f)
                           if e["event"] == "member_end"}
                for label, end in zip(["g[0]", "g[1]", "r[0]"], ends):
                    self.assertAlmostEqual(got[label], end, delta=1e-9, msg=label)

    def test_refused(self):
        for scheduler, message, extra in REFUSED:
            with self.subTest(scheduler=scheduler), tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "out")
                run = subprocess.run([DIRSCHED, "run", write(tmp, scheduler), "--out", out, *extra],
                                     capture_output=True, text=True)
                self.assertEqual(run.returncode, 2, run.stderr)
                self.assertIn(message, run.stderr)
                self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
