#!/usr/bin/env python3
"""The headless build (-Dgtk=disabled): dynscope with every CLI mode and no desktop stack.

Registered only in a build without GTK. The binary must load no GTK, GDK, cairo or Pango
library (ldd), must say in one line that the desktop app is not in this build when started
without a mode (exit 2), and must still print its version with one line per backend.

Prints TAP. Environment: DS_SOURCE_DIR, DS_BUILD_DIR (set by meson).
"""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402
from tap import Failure  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("DS_SOURCE_DIR") or os.path.dirname(HERE)
BUILD = os.environ.get("DS_BUILD_DIR") or os.path.join(SRC, "build")
EXE = os.path.join(BUILD, "app", "dynscope")

DESKTOP_LIBRARIES = re.compile(r"lib(gtk|gdk|cairo|pango|graphene|harfbuzz|epoxy)[-.\w]*\.so")


def test_links_no_desktop_library():
    proc = subprocess.run(["ldd", EXE], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise Failure("ldd failed: %s" % proc.stderr.strip()[:200])
    found = sorted({m.group(0) for m in DESKTOP_LIBRARIES.finditer(proc.stdout)})
    if found:
        raise Failure("the headless binary loads %s" % ", ".join(found))
    return "%d libraries, none of the desktop stack" % len(proc.stdout.splitlines())


def test_no_mode_says_no_desktop_app():
    proc = subprocess.run([EXE], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    if proc.returncode != 2:
        raise Failure("exit %d, expected 2" % proc.returncode)
    if len(lines) != 1 or "desktop app is not in this build" not in lines[0]:
        raise Failure("expected one line saying so, got %r" % proc.stderr[:300])
    if proc.stdout:
        raise Failure("printed to stdout: %r" % proc.stdout[:200])
    return lines[0]


def test_version_names_backends():
    proc = subprocess.run([EXE, "--version"], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise Failure("exit %d: %s" % (proc.returncode, proc.stderr.strip()[:200]))
    lines = proc.stdout.splitlines()
    if not lines or not lines[0].startswith("dynscope "):
        raise Failure("first line %r" % (lines[:1],))
    if not any(line.startswith("cpu: ") for line in lines[1:]):
        raise Failure("no cpu line in %r" % lines)
    return "; ".join(lines)


if __name__ == "__main__":
    sys.exit(tap.run([
        ("ldd shows no GTK, cairo or Pango", test_links_no_desktop_library),
        ("no mode: one line, exit 2", test_no_mode_says_no_desktop_app),
        ("--version names the backends", test_version_names_backends),
    ]))
