#!/usr/bin/env python3
"""Runs the malformed-input suite (tests/bad-input/cases.txt) against the dynscope binary.

Each case must exit with the expected status within a few seconds, print exactly one line on
stderr containing the expected text, never crash (no signal), and leave no new file or folder
behind anywhere in the scratch folder. Output is TAP. A case on @READONLY@ (a folder without
write permission) is skipped when run as root, whom permissions do not stop.
"""
import os
import shlex
import struct
import subprocess
import sys
import tempfile

SOURCE = os.environ.get("DS_SOURCE_DIR", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DS_BUILD_DIR", os.path.join(SOURCE, "build"))
SHARED = os.environ.get("DS_SHARED_DIR", os.path.join(SOURCE, "..", "shared"))
DYNSCOPE = os.path.join(BUILD, "app", "dynscope")
TIMEOUT_S = 20


def npy_bytes(descr, shape, payload=b""):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload


def make_generated(tmp):
    with open(os.path.join(tmp, "deep.json"), "w") as f:
        f.write("[" * 100000)
    with open(os.path.join(tmp, "huge.npy"), "wb") as f:
        f.write(npy_bytes("<f4", "(1099511627776, 1099511627776)"))
    with open(os.path.join(tmp, "wrong-shape.npy"), "wb") as f:
        f.write(npy_bytes("<f4", "(1, 1, 14, 14)", b"\0" * 4 * 14 * 14))
    with open(os.path.join(tmp, "int-input.npy"), "wb") as f:
        f.write(npy_bytes("<i4", "(1, 1, 28, 28)", b"\0" * 4 * 28 * 28))
    # --save-outputs into a folder where the listing it writes would go is taken by a folder.
    os.makedirs(os.path.join(tmp, "blocked", "outputs.json"))
    read_only = os.path.join(tmp, "read-only")
    os.mkdir(read_only)
    os.chmod(read_only, 0o555)
    with open(os.path.join(SOURCE, "data", "sample", "sample.params"), "rb") as f:
        params = f.read()
    with open(os.path.join(tmp, "truncated.params"), "wb") as f:
        f.write(params[: len(params) // 2])


def tree(top):
    """Every file and folder under `top`, as paths relative to it."""
    found = set()
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            found.add(os.path.relpath(os.path.join(folder, name), top))
    return found


def load_cases():
    cases = []
    with open(os.path.join(SOURCE, "tests", "bad-input", "cases.txt"), encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            name, status, needle, args = (part.strip() for part in line.split("|", 3))
            cases.append((name, int(status), needle, args))
    return cases


def main():
    cases = load_cases()
    print(f"1..{len(cases)}")
    failures = 0
    for number, (name, status, needle, args) in enumerate(cases, 1):
        if "@READONLY@" in args and os.geteuid() == 0:
            print(f"ok {number} - {name} # SKIP root writes into read-only folders")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            make_generated(tmp)
            before = tree(tmp)
            argv = [DYNSCOPE] + [
                a.replace("@FILES@", os.path.join(SOURCE, "tests", "bad-input", "files"))
                .replace("@READONLY@", os.path.join(tmp, "read-only"))
                .replace("@SAMPLE@", os.path.join(SOURCE, "data", "sample"))
                .replace("@SOURCE@", SOURCE)
                .replace("@SHARED@", SHARED)
                .replace("@TMP@", tmp)
                for a in shlex.split(args)
            ]
            problem = None
            try:
                proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired:
                problem = f"did not finish within {TIMEOUT_S} s"
            else:
                lines = [l for l in proc.stderr.splitlines() if l.strip()]
                if proc.returncode < 0:
                    problem = f"killed by signal {-proc.returncode}"
                elif proc.returncode != status:
                    problem = f"exit {proc.returncode}, expected {status}: {proc.stderr.strip()[:300]}"
                elif len(lines) != 1:
                    problem = f"expected one line on stderr, got {len(lines)}: {proc.stderr[:300]!r}"
                elif needle not in lines[0]:
                    problem = f"error does not mention {needle!r}: {lines[0]}"
                elif tree(tmp) - before:
                    problem = f"left files behind: {sorted(tree(tmp) - before)}"
            if problem:
                failures += 1
                print(f"not ok {number} - {name} # {problem}")
            else:
                print(f"ok {number} - {name}")
                print(f"# {lines[0]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
