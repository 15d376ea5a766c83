#!/usr/bin/env python3
"""Prints the closing 'N passed, N failed[, N skipped]' line from meson test logs.

Usage: test-summary.py TESTLOG.json [TESTLOG.json ...]
Each line of a meson testlog.json is one test program's result. Exits 1 if any failed.
"""
import json
import sys

passed = failed = skipped = 0
for path in sys.argv[1:]:
    try:
        with open(path, encoding="utf-8") as f:
            lines = [json.loads(line) for line in f if line.strip()]
    except OSError as e:
        print(f"test-summary: {path}: {e.strerror}", file=sys.stderr)
        failed += 1
        continue
    for entry in lines:
        result = entry.get("result", "FAIL")
        if result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif result == "SKIP":
            skipped += 1
        else:
            failed += 1
            print(f"FAILED: {entry.get('name')} ({result})")

line = f"{passed} passed, {failed} failed"
if skipped:
    line += f", {skipped} skipped"
print(line)
sys.exit(1 if failed or passed == 0 else 0)
