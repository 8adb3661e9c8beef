"""Policies: a non-default policy reaches the CLI as scheduler.policy (Testbed(policy=...)) or as
--policy (tb.run(policy=...)); the default writes neither."""

import filecmp
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))

from test_run import TempDir, cli_supports, starvation  # noqa: E402

from dirsched import Testbed  # noqa: E402


STARVATION_POLICY = "head_reservation"


class Policies(TempDir):
    """The starvation trace of scenarios/group-starvation.json, recorded from Python, under two policies."""

    @unittest.skipUnless(
        cli_supports("run", "--policy"),
        "issue 11 (dirsched run --policy, scenario key scheduler.policy) is not on this branch yet",
    )
    def test_a_non_default_policy_reaches_the_cli_both_ways(self):
        seed_tb = Testbed([{"id": i, "kind": "local_chip"} for i in range(4)])
        seed_order = seed_tb.run(starvation(seed_tb), self.path("seed")).dispatch_order
        tb = Testbed([{"id": i, "kind": "local_chip"} for i in range(4)], policy=STARVATION_POLICY)
        by_key = tb.run(starvation(tb), self.path("key"))
        self.assertEqual(json.load(open(by_key.scenario))["scheduler"], {"policy": STARVATION_POLICY})
        plain = Testbed([{"id": i, "kind": "local_chip"} for i in range(4)])
        by_flag = plain.run(starvation(plain), self.path("flag"), policy=STARVATION_POLICY)
        self.assertNotIn("scheduler", json.load(open(by_flag.scenario)))
        for r in (by_key, by_flag):
            self.assertEqual(r.summary.get("policy"), STARVATION_POLICY)
            self.assertNotEqual(r.dispatch_order, seed_order)
            self.assertLess(r.groups[0]["overtakes"], 5)
        self.assertTrue(filecmp.cmp(self.path("key", "events.jsonl"), self.path("flag", "events.jsonl"), False))


if __name__ == "__main__":
    unittest.main()
