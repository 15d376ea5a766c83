#!/usr/bin/env python3
"""The op registry's coverage, in the style of ggml's test-backend-ops: every registered op
must have a test of its shape rule, a CPU case checked against a reference, and, where this
build's CUDA backend has a kernel for it, a cross-backend case (which skips without a device).

Usage: test_op_coverage.py PROGRAM...
Each PROGRAM (an op test program, or a Python suite run with this interpreter) runs with
DS_OP_COVERAGE_FILE set; the shared test helpers write there which ops they exercised
(tests/ds-test-cover.h). The registry comes from `dynscope --list-ops --json`. An op needs a
CPU case when the CPU backend has a kernel for it, or when the executor runs it itself
(control flow). Prints TAP and the coverage table as comments.

Environment: DS_SOURCE_DIR, DS_BUILD_DIR (set by meson).
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("DS_SOURCE_DIR") or os.path.dirname(HERE)
BUILD = os.environ.get("DS_BUILD_DIR") or os.path.join(SRC, "build")
EXE = os.path.join(BUILD, "app", "dynscope")


def registry():
    proc = subprocess.run([EXE, "--list-ops", "--json"], capture_output=True, text=True,
                          timeout=60, check=True)
    return json.loads(proc.stdout)["ops"]


def collect(programs, notes):
    """{op name: set of "shape", "cpu", "cuda"} over every program's run."""
    covered = {}
    with tempfile.TemporaryDirectory(prefix="ds-op-coverage-") as tmp:
        log = os.path.join(tmp, "coverage.txt")
        env = dict(os.environ, DS_OP_COVERAGE_FILE=log)
        for program in programs:
            command = [sys.executable, program] if program.endswith(".py") else [program]
            proc = subprocess.run(command, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, timeout=900)
            if proc.returncode != 0:
                notes.append("%s exited %d: its own test reports why"
                             % (os.path.basename(program), proc.returncode))
        with open(log, encoding="utf-8") as f:
            for line in f:
                what, name = line.split()
                covered.setdefault(name, set()).add(what)
    return covered


def needs(op):
    wants = {"shape"}
    if "cpu" in op["kernels"] or "control-flow" in op["traits"]:
        wants.add("cpu")
    if "cuda" in op["kernels"]:
        wants.add("cuda")
    return wants


def main():
    programs = sys.argv[1:]
    if not programs:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    notes = []
    ops = registry()
    covered = collect(programs, notes)
    unknown = sorted(set(covered) - {op["name"] for op in ops})

    checks = [
        ("every op has a shape rule test", "shape"),
        ("every op with a CPU kernel, or run by the executor, has a CPU case against a reference",
         "cpu"),
        ("every op with a CUDA kernel has a cross-backend case", "cuda"),
    ]
    print("1..%d" % (len(checks) + 1))
    failed = 0
    for number, (title, what) in enumerate(checks, 1):
        missing = [op["name"] for op in ops
                   if what in needs(op) and what not in covered.get(op["name"], set())]
        failed += bool(missing)
        print("%s %d - %s" % ("not ok" if missing else "ok", number, title))
        for name in missing:
            print("# no %s case: %s" % (what, name))
    print("%s %d - every op the tests name is registered"
          % ("not ok" if unknown else "ok", len(checks) + 1))
    for name in unknown:
        print("# not in the registry: %s" % name)
    failed += bool(unknown)

    print("# %-36s %-6s %-6s %-6s" % ("op", "shape", "cpu", "cuda"))
    totals = {"shape": 0, "cpu": 0, "cuda": 0}
    for op in ops:
        row = []
        for what in ("shape", "cpu", "cuda"):
            if what not in needs(op):
                row.append("-")
            elif what in covered.get(op["name"], set()):
                row.append("yes")
                totals[what] += 1
            else:
                row.append("NO")
        print("# %-36s %-6s %-6s %-6s" % (op["name"], *row))
    print("# %d ops: %d with a shape test, %d with a CPU case, %d with a cross-backend case "
          "(of %d with a CUDA kernel)"
          % (len(ops), totals["shape"], totals["cpu"], totals["cuda"],
             sum("cuda" in op["kernels"] for op in ops)))
    for note in notes:
        print("# " + note)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
