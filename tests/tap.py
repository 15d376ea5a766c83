"""The TAP runner the script-driven suites share.

Each test is a function of a fresh temporary folder that returns a short detail for the
`ok` line, or raises Failure (or anything else) with the reason for `not ok`.
"""

import sys
import tempfile


class Failure(Exception):
    """A test failed; the message is the TAP reason."""


def run(tests):
    """Runs (title, fn) pairs, prints TAP, and returns the exit status."""
    print("1..%d" % len(tests))
    failed = 0
    for number, (title, fn) in enumerate(tests, 1):
        with tempfile.TemporaryDirectory() as tmp:
            try:
                detail = fn(tmp)
                print("ok %d - %s%s" % (number, title, " # %s" % detail if detail else ""))
            except Exception as e:  # a broken test is a failing test, not a stopped run
                failed += 1
                reason = str(e).splitlines()[0] if str(e) else repr(e)
                print("not ok %d - %s # %s" % (number, title, reason))
        sys.stdout.flush()
    return 1 if failed else 0
