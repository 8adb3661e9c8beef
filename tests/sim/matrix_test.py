#!/usr/bin/env python3
"""One scenario through every combination that must not change its outputs (the scenario matrix).

Each shipped scenario is read once here and run through:
  check   its expect block holds (`dirsched check FILE`), unless --no-check;
  A       `run` on SimGrid, streamed load, slot reclamation on: the reference. The expect block is taken
          out first, since an expect block turns reclamation off;
  B       the full read (DIRSCHED_TRACE_READ=full), for a file with a trace: the same exit status and
          message, and A's summary.json, tasks.csv and events.jsonl byte for byte;
  C       reclamation off (DIRSCHED_RECLAIM=off): A's three files byte for byte;
  D, E    the event engine (--engine event), reclaiming and not: A's events.jsonl and tasks.csv byte for
          byte and its summary.json but for "engine"; or refused, naming what needs SimGrid.
A is compared with B and C only when it ran (exit 0 or 1); a refused run (exit 2) must be refused the
same way by B and C. This replaces the per-scenario loops that the streamed-load, reclamation and
event-engine tests each ran (three separate passes over scenarios/).

Usage: matrix_test.py DIRSCHED FILE [--no-check] [RUN ARGS...]
Exit 0 when every comparison holds, 1 otherwise (each difference named).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

OUTPUTS = ("summary.json", "tasks.csv", "events.jsonl")
# What a sanitizer adds to a message: lines naming a process id.
NOISE = re.compile(r"^==\d+==|^False positive error reports|^For details see https://github.com/google/sanitizers")


def main():
    dirsched, scenario = sys.argv[1], os.path.abspath(sys.argv[2])
    extra = sys.argv[3:]
    check = "--no-check" not in extra
    extra = [a for a in extra if a != "--no-check"]
    name = os.path.basename(scenario)
    failures = []
    tmp = tempfile.mkdtemp(prefix="matrix-")
    try:
        if check:
            c = subprocess.run([dirsched, "check", scenario] + extra, capture_output=True, text=True)
            if c.returncode != 0:
                failures.append("check exited %d:\n%s%s" % (c.returncode, c.stdout, c.stderr))
        doc = json.load(open(scenario))
        doc.pop("expect", None)
        # The copy sits where relative references still resolve: ../platforms/ beside the scenario's folder.
        stripped = os.path.join(tmp, "in", name)
        os.makedirs(os.path.dirname(stripped))
        platforms = os.path.join(os.path.dirname(os.path.dirname(scenario)), "platforms")
        if os.path.isdir(platforms):
            os.symlink(platforms, os.path.join(tmp, "platforms"))
        with open(stripped, "w") as f:
            json.dump(doc, f)

        def run(label, env=None, args=()):
            out = os.path.join(tmp, label)
            e = dict(os.environ)
            e.update(env or {})
            p = subprocess.run([dirsched, "run", stripped, "--out", out, "--outputs", "events,summary,tasks", "--quiet"]
                               + list(args) + extra, capture_output=True, text=True, env=e)
            said = "\n".join(l for l in (p.stdout + p.stderr).replace(out, "OUT").splitlines() if not NOISE.search(l))
            return p.returncode, out, said

        def same_files(label, a, b, files=OUTPUTS):
            for f in files:
                pa, pb = os.path.join(a, f), os.path.join(b, f)
                if not os.path.exists(pa) and not os.path.exists(pb):
                    continue
                if not (os.path.exists(pa) and os.path.exists(pb)) or open(pa, "rb").read() != open(pb, "rb").read():
                    failures.append("%s: %s differs from the reference run's" % (label, f))

        ra, a, said_a = run("A")
        if ra > 2:
            failures.append("A: run exited %d:\n%s" % (ra, said_a))
        has_trace = isinstance(doc.get("trace"), list)
        variants = [("C reclamation off", {"DIRSCHED_RECLAIM": "off"}, ())]
        if has_trace:
            variants.insert(0, ("B full read", {"DIRSCHED_TRACE_READ": "full"}, ()))
        for label, env, args in variants:
            r, out, said = run(label.split()[0], env, args)
            if r != ra or said != said_a:
                failures.append("%s: exit %d and message %r, the reference %d and %r" % (label, r, said, ra, said_a))
            elif ra < 2:
                same_files(label, a, out)
        if ra < 2:
            for label, env in (("D event engine", {}), ("E event engine, reclamation off", {"DIRSCHED_RECLAIM": "off"})):
                r, out, said = run(label.split()[0], env, ("--engine", "event"))
                if r != 0 and "needs SimGrid: the event engine cannot run it" in said:
                    continue
                if r != ra:
                    failures.append("%s: exit %d, SimGrid's %d:\n%s" % (label, r, ra, said))
                    continue
                same_files(label, a, out, ("events.jsonl", "tasks.csv"))
                sa, sb = (json.load(open(os.path.join(d, "summary.json"))) for d in (a, out))
                if sa.pop("engine", None) != "sim" or sb.pop("engine", None) != "event" or sa != sb:
                    failures.append("%s: summary.json differs from SimGrid's (but for engine)" % label)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL %s: %s" % (name, f))
    if not failures:
        print("matrix %s: check, streamed/full read, reclamation on/off, SimGrid/event engine agree" % name)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
