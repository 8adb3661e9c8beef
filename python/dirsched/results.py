"""A run folder and a sweep folder, read back into Python.

Result reads what `dirsched run` wrote: summary.json at once, events.jsonl and tasks.csv when first
asked for (a million-task log is large). Every list keeps the file's order, so ``dispatches`` is in
dispatch order. SweepResult reads sweep.csv and the ranking that `dirsched sweep --collect` printed; the
ranking is the CLI's own, never recomputed here.
"""

import csv
import json
import os
import re

try:
    from functools import cached_property
except ImportError:  # Python < 3.8

    def cached_property(f):
        name = "_cached_" + f.__name__

        def get(self):
            if not hasattr(self, name):
                setattr(self, name, f(self))
            return getattr(self, name)

        return property(get)


__all__ = ["Result", "SweepResult", "SUMMARY_SCHEMA"]

# The newest summary.json schema this package reads (record/include/dirsched/record/summary.hpp,
# kSummarySchema); a summary without "schema" is from an older dirsched (schema 0) and reads the same.
SUMMARY_SCHEMA = 1


def _read_summary(path):
    with open(path, encoding="utf-8") as f:
        summary = json.load(f)
    if not isinstance(summary, dict):
        raise ValueError("%s: expected a JSON object" % path)
    schema = summary.get("schema", 0)  # none: an older dirsched's (schema 0)
    if "schema" in summary and (isinstance(schema, bool) or not isinstance(schema, int) or schema < 1):
        raise ValueError("%s: schema: expected a schema number >= 1" % path)
    if schema > SUMMARY_SCHEMA:
        raise ValueError(
            "%s: schema %d: written by a newer dirsched; this package reads summaries up to schema %d"
            % (path, schema, SUMMARY_SCHEMA)
        )
    return summary

_TIME_COLUMNS = (
    "submission_time",
    "ready_time",
    "starting_time",
    "finish_time",
    "waiting_time",
    "execution_time",
)


def _float_or_none(text):
    return float(text) if text != "" else None


class Result:
    """One run folder: ``outcome``, ``makespan_s``, ``dispatches``, ``rejected``, ``tasks``, ``events``,
    ``groups``, ``report``; ``dataframe(name)`` when pandas is installed."""

    def __init__(self, folder, stdout=""):
        self.folder = os.path.abspath(folder)
        self.stdout = stdout
        self.summary = _read_summary(os.path.join(self.folder, "summary.json"))
        self.outcome = self.summary["outcome"]
        self.makespan_s = self.summary["makespan_s"]
        self.error = self.summary.get("error")
        self.groups = self.summary.get("groups", [])

    @property
    def report(self):
        return os.path.join(self.folder, "report.html")

    @property
    def scenario(self):
        return os.path.join(self.folder, "scenario.json")

    @cached_property
    def events(self):
        out = []
        with open(os.path.join(self.folder, "events.jsonl"), encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    out.append(json.loads(line))
        return out

    @cached_property
    def dispatches(self):
        """Each dispatch: ``task``, ``member``, ``t_s`` and ``worker`` (an id) or ``sub_worker`` ("sub0")."""
        out = []
        for e in self.events:
            if e["event"] == "dispatch":
                d = {"task": e["task"], "member": e["member"], "t_s": e["t_s"]}
                if e.get("prepare_only"):  # a staging (#1583): the member starts at its "activate" event
                    d["prepare_only"] = True
                if "sub_worker" in e:
                    d["sub_worker"] = e["sub_worker"]
                else:
                    d["worker"] = e["worker"]
                out.append(d)
        return out

    @cached_property
    def dispatch_order(self):
        """The dispatches as `expect.dispatch_order` writes them: "a@0", "g[1]@2", "s@sub0"."""
        groups = {e["task"] for e in self.events if e["event"] == "submit" and e.get("kind") == "group"}
        out = []
        for d in self.dispatches:
            name = "%s[%d]" % (d["task"], d["member"]) if d["task"] in groups else d["task"]
            out.append("%s@%s" % (name, d.get("sub_worker", d.get("worker"))))
        return out

    @cached_property
    def rejected(self):
        """Task name to error code, for every rejected submit."""
        return {e["task"]: e["code"] for e in self.events if e["event"] == "reject"}

    @cached_property
    def tasks(self):
        """tasks.csv rows as dicts; the time columns as floats (None where the CSV cell is empty)."""
        with open(os.path.join(self.folder, "tasks.csv"), encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
        for r in rows:
            for c in _TIME_COLUMNS:
                if c in r:
                    r[c] = _float_or_none(r[c])
        return rows

    @cached_property
    def final_state(self):
        return {r["job_id"]: r["final_state"] for r in self.tasks}

    def dataframe(self, name="tasks"):
        """``tasks``, ``events``, ``dispatches`` or ``groups`` as a pandas DataFrame."""
        try:
            import pandas
        except ImportError:
            raise ImportError("Result.dataframe needs pandas (Debian: apt-get install python3-pandas)") from None
        tables = {"tasks": "tasks", "events": "events", "dispatches": "dispatches", "groups": "groups"}
        if name not in tables:
            raise ValueError("dataframe: unknown table %r (tasks, events, dispatches, groups)" % (name,))
        return pandas.DataFrame(getattr(self, tables[name]))

    def __repr__(self):
        return "Result(%s: %s, makespan %g s)" % (self.folder, self.outcome, self.makespan_s)


_RANK_LINE = re.compile(r"^\d+=?\. variant (\d+) ")  # "1=." for a tied place


class SweepResult:
    """A sweep folder: ``rows`` (sweep.csv), ``ranking`` (variant indices, best first, as the CLI ranked
    them), ``best`` (the best variant's values), ``result(i)`` (variant i's run)."""

    def __init__(self, folder, names, variants, stdout):
        self.folder = os.path.abspath(folder)
        self.names = list(names)
        self.variants = list(variants)  # index -> {name: value}
        self.stdout = stdout
        self.ranking_lines = [l for l in stdout.splitlines() if _RANK_LINE.match(l)]
        # The ranking itself comes from ranking.json (machine-readable; never scraped from stdout):
        # ``ranked`` holds per variant its rank (tied variants share one), whether it is tied, the key
        # that decided and whether that was a tie-breaker, and per metric mean, sd, ci_low, ci_high
        # (95%: Student t or the BCa bootstrap, as ranking_data["intervals"] says per metric) and best_in.
        # Places are family-wise (Holm over every pair and key: ranking_data["places"]).
        with open(os.path.join(self.folder, "ranking.json"), encoding="utf-8") as f:
            self.ranking_data = json.load(f)
        self.ranked = self.ranking_data["ranking"]
        self.ranking = [r["variant"] for r in self.ranked]
        self.replicates = self.ranking_data["replicates"]
        # Testbed.sweep(..., select_best=DELTA): selection.json (best, vars, pcs, indifference, method,
        # replicates per variant, runs, fixed_n), else None.
        selection = os.path.join(self.folder, "selection.json")
        self.selection = None
        if os.path.exists(selection):
            with open(selection, encoding="utf-8") as f:
                self.selection = json.load(f)
        with open(self.csv, encoding="utf-8", newline="") as f:
            self.rows = list(csv.DictReader(f))
        for r in self.rows:
            index = int(r["variant"]) if r.get("variant", "").isdigit() else None
            for k, v in list(r.items()):
                if k in self.names:
                    # The value as given to sweep (variants[index]): sweep.csv writes a string bare
                    # (fast, not "fast") and cannot tell "true" or "1" from true or 1.
                    r[k] = self.variants[index][k] if index is not None and index < len(self.variants) else v
                elif k == "variant":
                    r[k] = int(v)
                elif k != "outcome":
                    try:
                        r[k] = float(v) if any(c in v for c in ".eE") else int(v)
                    except ValueError:
                        pass

    @property
    def csv(self):
        return os.path.join(self.folder, "sweep.csv")

    @property
    def svg(self):
        return os.path.join(self.folder, "sweep.svg")

    @property
    def best(self):
        return dict(self.variants[self.ranking[0]]) if self.ranking else None

    @property
    def tied_best(self):
        """Every variant ranked first (more than one when no key tells them apart at 95%)."""
        return [dict(self.variants[i]) for i in self.ranking_data["best"]]

    def stats(self, index, metric="makespan"):
        """{mean, sd, ci_low, ci_high, best_in} of a variant's metric over the replicates."""
        for r in self.ranked:
            if r["variant"] == index:
                return dict(r["metrics"][metric])
        raise KeyError(index)

    def result(self, index):
        return Result(os.path.join(self.folder, "variant-%04d" % index))

    def __repr__(self):
        return "SweepResult(%s: %d variants, best %r)" % (self.folder, len(self.variants), self.best)
