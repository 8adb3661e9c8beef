#!/usr/bin/env python3
"""docs.commands: every fenced ```sh block of README.md and docs/*.md runs as written.

    docs_commands_test.py SOURCE_DIR BUILD_DIR [FILE.md ...]

For each file (README.md first, then docs/*.md in name order, or the files named), a scratch copy of the
repository is made (the files git tracks, and the untracked ones it does not ignore) with BUILD_DIR
linked in as build/, so build/bin/dirsched is the build's binary. The file's ```sh blocks then run in
order, each as `bash -e -c BLOCK` from the copy's root: the first command that fails ends the block, files
carry over to the next block of the same file, shell variables do not. A block fails the test when its
exit status is not 0 (or the N of a ```sh exit=N fence: a command whose answer is "no" by design), naming
the file and the line of its fence.

An ```output fence right after a block (blank lines between allowed) is what the block prints on stdout,
checked: every line must appear in order, a `...` line marks lines left out, and the lines between two
`...` are contiguous; within a line, `(...)` stands for any text in parentheses (a long detail the docs
leave out). Leading and trailing whitespace of each line is not compared.

What is skipped, and why: a ```sh no-run block is not run. The docs mark so what cannot run in a scratch
copy within CI's budget (about 2 minutes on 2 cores): builds and installs (`scripts/demo.sh`,
`scripts/test.sh`, cmake), whole test-suite runs (ctest), benchmarks, cluster commands (Slurm, ssh,
Dask) and placeholders (FILE, DIR). Every no-run block is listed in the test's output, with its
reason: the text that follows `no-run` in the fence, which the test requires. Any other word in a sh
fence is an error, so that a misspelt annotation cannot skip a block. Fences written as ```bash or
```shell are refused too (they would not be run): write ```sh.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
BLOCK_TIMEOUT_S = 90


def blocks_of(path):
    """(line of the fence, info string, body lines) of every fenced block, in order."""
    out, lines = [], open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3).strip()
        body, j = [], i + 1
        while j < len(lines):
            e = FENCE.match(lines[j])
            if e and e.group(2).startswith(fence[0] * len(fence)) and not e.group(3).strip():
                break
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        out.append((i + 1, info, body, j))
        i = j + 1
    return out, lines


def parse_info(info):
    """('sh', exit status or None for no-run, no-run reason) or None for a block that is not shell."""
    words = info.split()
    if not words:
        return None
    if words[0] in ("bash", "shell", "console", "shell-session"):
        raise ValueError("write ```sh, not ```%s (a block so fenced would not be run)" % words[0])
    if words[0] != "sh":
        return None
    rest = words[1:]
    if rest and rest[0] in ("no-run", "no-run:"):
        reason = " ".join(rest[1:])
        if not reason:
            raise ValueError("```sh no-run needs a reason after it (```sh no-run: builds, ...)")
        return ("sh", None, reason.lstrip(":").strip())
    status = 0
    for w in rest:
        m = re.fullmatch(r"exit=(\d+)", w)
        if not m:
            raise ValueError("unknown word %r in the fence (known: no-run REASON, exit=N)" % w)
        status = int(m.group(1))
    return ("sh", status, "")


def check_output(expected, actual):
    """None when every line of expected appears in actual as described in the module's text."""
    want = [l.strip() for l in expected]
    have = [l.strip() for l in actual.split("\n")]

    def same(w, h):
        if "(...)" not in w:
            return w == h
        return re.fullmatch(r"\(.*\)".join(re.escape(p) for p in w.split("(...)")), h) is not None

    chunks, cur = [], []
    for l in want + ["..."]:
        if l == "...":
            if cur:
                chunks.append(cur)
            cur = []
        else:
            cur.append(l)
    pos = 0
    for c in chunks:
        found = next((i for i in range(pos, len(have) - len(c) + 1) if all(same(w, h) for w, h in zip(c, have[i:i + len(c)]))), None)
        if found is None:
            return "printed an output without these lines (in this order):\n" + "\n".join("    " + l for l in c)
        pos = found + len(c)
    return None


def scratch_copy(root, build, into):
    """The repository's files (tracked, and untracked but not ignored) under `into`, build/ linked in."""
    try:
        names = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                               check=True, stdout=subprocess.PIPE).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        names = None
    if names is None:  # not a git checkout: everything but build folders and outputs
        shutil.copytree(root, into, symlinks=True,
                        ignore=lambda d, n: [x for x in n if d == root and (x.startswith("build") or x == "out")])
    else:
        for n in filter(None, names):
            src = os.path.join(root, n)
            if not os.path.lexists(src):  # deleted in the work tree, not yet in the index
                continue
            dst = os.path.join(into, n)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(src, dst, follow_symlinks=False)
    os.symlink(os.path.abspath(build), os.path.join(into, "build"))


def main():
    root, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if not os.access(os.path.join(build, "bin", "dirsched"), os.X_OK):
        sys.exit("FAIL %s/bin/dirsched is not an executable: build the target dirsched first" % build)
    files = sys.argv[3:] or (["README.md"] + sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md"))))
    env = {k: v for k, v in os.environ.items() if k not in ("DIRSCHED_BIN", "PYTHONPATH", "MAKEFLAGS")}
    tmp = tempfile.mkdtemp(prefix="dirsched-docs-")
    failures, ran, skipped, started = [], 0, [], time.monotonic()
    try:
        for rel in files:
            blocks, lines = blocks_of(os.path.join(root, rel))
            todo = []
            for k, (line, info, body, end) in enumerate(blocks):
                try:
                    kind = parse_info(info)
                except ValueError as e:
                    failures.append("%s:%d: %s" % (rel, line, e))
                    continue
                if kind is None:
                    continue
                expected = None
                if k + 1 < len(blocks) and blocks[k + 1][1].split()[:1] == ["output"]:
                    gap = lines[end + 1:blocks[k + 1][0] - 1]
                    if all(not l.strip() for l in gap):
                        expected = blocks[k + 1][2]
                todo.append((line, kind, body, expected))
            if not todo:
                continue
            where = os.path.join(tmp, re.sub(r"[^A-Za-z0-9]+", "-", rel))
            os.makedirs(where)
            scratch_copy(root, build, where)
            for line, (_, status, reason), body, expected in todo:
                if status is None:
                    skipped.append("%s:%d (%s)" % (rel, line, reason))
                    continue
                t0 = time.monotonic()
                try:
                    p = subprocess.run(["bash", "-e", "-c", "\n".join(body)], cwd=where, env=env, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=BLOCK_TIMEOUT_S)
                    rc, out, err = p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
                except subprocess.TimeoutExpired as e:
                    rc, out, err = "timeout", (e.stdout or b"").decode(errors="replace"), "(stopped after %d s)" % BLOCK_TIMEOUT_S
                ran += 1
                took = time.monotonic() - t0
                problem = None
                if rc != status:
                    problem = "exited %s, expected %d" % (rc, status)
                elif expected is not None:
                    problem = check_output(expected, out)
                print("%-4s %s:%d (%.1f s)%s" % ("FAIL" if problem else "ok", rel, line, took,
                                                  "" if expected is None else ", output checked"))
                if problem:
                    tail = lambda s: "\n".join("    | " + l for l in s.rstrip("\n").split("\n")[-25:])
                    failures.append("%s:%d: the block %s\n  stdout:\n%s\n  stderr:\n%s" % (rel, line, problem, tail(out), tail(err)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for s in skipped:
        print("no-run " + s)
    print("docs.commands: %d blocks run, %d marked no-run, %.1f s" % (ran, len(skipped), time.monotonic() - started))
    if not sys.argv[3:] and ran < 15:  # 20 on 2026-12-07: a parser that no longer finds the fences runs none
        failures.append("only %d blocks ran (expected at least 15): are the fences still found?" % ran)
    for f in failures:
        print("FAIL " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
