"""The TAP runner the script-driven suites share.

A test is a (title, function) pair. With run(), the function gets a fresh temporary folder
and may return a short detail for its `ok` line; with run_with_notes(), it gets a list to
append diagnostic lines to, printed as TAP comments under its result. Raising Failure (or
anything else) makes it `not ok` with the reason; a crashing test never stops the run.
"""

import sys
import tempfile


class Failure(Exception):
    """A test failed; the message is the TAP reason."""


def _reason(exc):
    if isinstance(exc, Failure):
        text = str(exc)
    else:
        text = "%s: %s" % (type(exc).__name__, exc)
    return " ".join(text.split()) or repr(exc)


def _report(number, title, exc, detail, notes=()):
    if exc is None:
        print("ok %d - %s%s" % (number, title, " # %s" % detail if detail else ""))
    else:
        print("not ok %d - %s # %s" % (number, title, _reason(exc)))
    for line in notes:
        print("# " + line)
    sys.stdout.flush()


def run(tests):
    """Runs (title, fn(tmp)) pairs, prints TAP, and returns the exit status. A function that
    takes no argument is called without the folder."""
    print("1..%d" % len(tests), flush=True)
    failed = 0
    for number, (title, fn) in enumerate(tests, 1):
        exc, detail = None, None
        with tempfile.TemporaryDirectory() as tmp:
            try:
                detail = fn(tmp) if fn.__code__.co_argcount else fn()
            except Exception as e:  # a broken test is a failing test, not a stopped run
                exc = e
        failed += exc is not None
        _report(number, title, exc, detail)
    return 1 if failed else 0


def run_with_notes(tests):
    """Runs (title, fn(notes)) pairs, prints TAP with each test's notes, and returns the exit
    status."""
    print("1..%d" % len(tests), flush=True)
    failed = 0
    for number, (title, fn) in enumerate(tests, 1):
        notes, exc = [], None
        try:
            fn(notes)
        except Exception as e:  # a crash in a test is a failure of that test
            exc = e
        failed += exc is not None
        _report(number, title, exc, None, notes)
    return 1 if failed else 0
