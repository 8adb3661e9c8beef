"""Runs the named unittest modules; exit status 0 when they pass, 77 when every test was skipped (ctest's
SKIP_RETURN_CODE, so that a skip shows as one), 1 otherwise. Usage: run.py MODULE..."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main(names):
    suite = unittest.defaultTestLoader.loadTestsFromNames(names)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    if not result.wasSuccessful():
        return 1
    if result.testsRun and len(result.skipped) == result.testsRun:
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
