#!/usr/bin/env python3
"""dirsched fidelity against run-to-run noise, and against the runtime's own diagnosis.

- tests/import/noise/run-{a,b,c}.log: three runs of one workload. `fidelity` of run a's replay with
  `--also-observed` b and c: every noise_floor measure recomputed here from the folders' events.jsonl
  (spread: the largest difference between two observed runs; error: the replay against run a; within:
  error <= spread), the group start skew measure, and the verdict line. Run b given as the "replay" of
  run a is within the floor on every measure (its error is one of the spread's pairs).
- Without --also-observed the verdict says there is no noise floor and claims no "few percent".
- tests/import/noise/stall.log: a group waits 6 s for worker 0 and the log holds the runtime's
  `reservation stalled` warning: the replay's group_stall matches it (group, busy, idle); an edited
  warning naming another busy target does not.

Usage: fidelity_noise_test.py DIRSCHED NOISE_DIR
"""
import itertools
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

DIRSCHED, HERE = sys.argv[1], sys.argv[2]


def dirsched(*args, ok=(0,)):
    run = subprocess.run([DIRSCHED, *args], capture_output=True, text=True)
    if run.returncode not in ok:
        raise AssertionError("dirsched %s: exit %d\n%s" % (" ".join(args), run.returncode, run.stderr))
    return run.stdout


def load(path):
    with open(path) as f:
        return json.load(f)


def timeline(folder):
    """The measures' inputs, read from a run folder's events (independently of dirsched's reader)."""
    with open(os.path.join(folder, "events.jsonl")) as f:
        ev = [json.loads(line) for line in f if line.strip()]
    kind, disp, per_worker, ready, launched, starts = {}, {}, {}, {}, {}, {}
    for e in ev:
        task = e.get("task")
        if e["event"] == "submit":
            kind[task] = e.get("kind", "single")
        elif e["event"] == "ready":
            ready.setdefault(task, e["t_s"])
        elif e["event"] == "group_launched":
            launched[task] = e["t_s"]
        elif e["event"] == "dispatch":
            label = "%s[%d]" % (task, e["member"]) if kind[task] in ("group", "sub_group") else task
            if label not in disp:
                disp[label] = e["t_s"]
                if kind[task] == "group":
                    starts.setdefault(task, []).append(e["t_s"])
            per_worker.setdefault(str(e["worker"]), []).append(label)
    makespan = load(os.path.join(folder, "summary.json"))["makespan_s"]
    return {"makespan": makespan, "disp": disp, "per_worker": per_worker, "launched": launched,
            "wait": {g: t - ready[g] for g, t in launched.items()},
            "skew": {g: max(starts[g]) - min(starts[g]) for g in launched}}


def largest(a, b):
    return max([abs(a[k] - b[k]) for k in a if k in b], default=0)


def p95(values):
    values = sorted(values)
    return values[max(math.ceil(0.95 * len(values)), 1) - 1] if values else 0


def order_diff(a, b):
    workers = set(a["per_worker"]) | set(b["per_worker"])
    differ = sum(a["per_worker"].get(w, []) != b["per_worker"].get(w, []) for w in workers)
    return differ / len(workers) if workers else 0


DISTANCES = {
    "makespan_s": lambda a, b: abs(a["makespan"] - b["makespan"]),
    "group_ready_wait_s": lambda a, b: largest(a["wait"], b["wait"]),
    "group_launch_s": lambda a, b: largest(a["launched"], b["launched"]),
    "group_start_skew_s": lambda a, b: largest(a["skew"], b["skew"]),
    "worker_order": order_diff,
    "dispatch_s": lambda a, b: p95([abs(a["disp"][k] - b["disp"][k]) for k in a["disp"] if k in b["disp"]]),
}


class Noise(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = {}
        for run in "abc":
            out = os.path.join(cls.tmp.name, run)
            dirsched("import", "strace", os.path.join(HERE, "run-%s.log" % run), "--out", out)
            cls.dir[run] = os.path.join(out, "observed")
        cls.replay = os.path.join(cls.tmp.name, "replay")
        dirsched("run", os.path.join(cls.tmp.name, "a", "scenario.json"), "--out", cls.replay)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def fidelity(self, simulated, *also):
        out = os.path.join(self.tmp.name, "f.json")
        args = ["fidelity", self.dir["a"], simulated, "--json", out]
        if also:
            args += ["--also-observed", *also]
        text = dirsched(*args)
        return load(out), text

    def test_noise_floor_measures_recomputed(self):
        j, text = self.fidelity(self.replay, self.dir["b"], self.dir["c"])
        runs = [timeline(self.dir[r]) for r in "abc"]
        sim = timeline(self.replay)
        self.assertEqual(list(j["noise_floor"]), list(DISTANCES))
        beyond = []
        for name, dist in DISTANCES.items():
            with self.subTest(measure=name):
                m = j["noise_floor"][name]
                spread = max(dist(x, y) for x, y in itertools.combinations(runs, 2))
                error = dist(runs[0], sim)
                self.assertAlmostEqual(m["observed_spread"], spread, delta=1e-12)
                self.assertAlmostEqual(m["error"], error, delta=1e-12)
                self.assertEqual(m["within"], error <= spread + 1e-9)
                if not m["within"]:
                    beyond.append(name)
        self.assertGreater(j["noise_floor"]["makespan_s"]["observed_spread"], 0)
        n = len(DISTANCES)
        self.assertIn("; %d of %d measures within the noise floor" % (n - len(beyond), n), text)
        self.assertIn("noise floor (3 observed runs", text)
        # The start skew of the group, observed against simulated.
        skew = j["group_start_skew_s"]["groups"][0]
        self.assertAlmostEqual(skew["observed_s"], runs[0]["skew"]["r1.t2"], delta=1e-12)
        self.assertAlmostEqual(skew["simulated_s"], sim["skew"]["r1.t2"], delta=1e-12)

    def test_an_observed_run_is_within_its_own_floor(self):
        j, text = self.fidelity(self.dir["b"], self.dir["b"])
        self.assertTrue(all(m["within"] for m in j["noise_floor"].values()), j["noise_floor"])
        self.assertIn(", within the noise floor", text)

    def test_beyond_the_floor(self):
        # Run b as the "replay" of run a, with only run c beside a: a and b differ by 0.1 ms at the end, a
        # and c by 0.05 ms.
        j, text = self.fidelity(self.dir["b"], self.dir["c"])
        m = j["noise_floor"]["makespan_s"]
        self.assertAlmostEqual(m["observed_spread"], 0.00005, delta=1e-12)
        self.assertAlmostEqual(m["error"], 0.0001, delta=1e-12)
        self.assertFalse(m["within"])
        self.assertIn("BEYOND the noise floor", text.splitlines()[-1])
        self.assertIn("makespan_s: error 0.0001, spread 5e-05: BEYOND", text)

    def test_no_floor_no_claim(self):
        j, text = self.fidelity(self.replay)
        verdict = text.splitlines()[-1]
        self.assertNotIn("noise_floor", j)
        self.assertIn("no noise floor: give --also-observed", verdict)
        self.assertNotIn("few percent", text)


class StallWarnings(unittest.TestCase):
    def check(self, log, same):
        with tempfile.TemporaryDirectory() as tmp:
            dirsched("import", "strace", log, "--out", os.path.join(tmp, "imp"))
            dirsched("run", os.path.join(tmp, "imp", "scenario.json"), "--out", os.path.join(tmp, "replay"))
            dirsched("fidelity", os.path.join(tmp, "imp", "observed"), os.path.join(tmp, "replay"),
                     "--json", os.path.join(tmp, "f.json"))
            w = load(os.path.join(tmp, "f.json"))["runtime_stall_warnings"]
        self.assertEqual((w["log"], w["simulated"], len(w["matched"])), (1, 1, 1), w)
        pair = w["matched"][0]
        self.assertEqual((pair["group_slot"], pair["task"], pair["line"]), (1, "r1.t1", 5))
        self.assertEqual(pair["same"], same)
        self.assertEqual(w["agree"], same)
        return pair

    def test_the_replay_reports_the_logged_stall(self):
        pair = self.check(os.path.join(HERE, "stall.log"), True)
        self.assertEqual(pair["busy"], {"log": [0], "simulated": [0]})

    def test_another_busy_target_differs(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "stall.log")
            with open(os.path.join(HERE, "stall.log")) as f, open(log, "w") as g:
                g.write(f.read().replace("busy_target_ids=[0]", "busy_target_ids=[1]"))
            pair = self.check(log, False)
        self.assertEqual(pair["busy"], {"log": [1], "simulated": [0]})


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
