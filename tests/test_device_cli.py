#!/usr/bin/env python3
"""`dynscope --run --device cuda`, end to end, on whatever machine runs it.

Prints TAP. Without a CUDA build or a CUDA device, --device cuda must fail with exit 2 and
one line naming the option, before reading anything. With a device, the boolean-mask model
must run with mixed CPU/CUDA placement (the run prints its placement line), give the CPU's
outputs within float32 rounding, and --report must carry per-node GPU times from CUPTI.

Environment: DS_SOURCE_DIR, DS_BUILD_DIR (set by meson).
"""

import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("DS_SOURCE_DIR") or os.path.dirname(HERE)
BUILD = os.environ.get("DS_BUILD_DIR") or os.path.join(SRC, "build")
EXE = os.path.join(BUILD, "app", "dynscope")
MASK_MODEL = os.path.join(SRC, "data", "dynamic", "boolean-mask-symbol.json")

sys.path.insert(0, HERE)
import tap  # noqa: E402
from tap import Failure  # noqa: E402

BASE = ["--run", MASK_MODEL, "--random-inputs", "--seed", "7", "--input-shape",
        "data=(64,8)", "--threads", "1"]


def device_state():
    """'absent' (with the one-line message) or 'present'."""
    proc = subprocess.run([EXE] + BASE + ["--device", "cuda"], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode == 0:
        return "present", proc
    return "absent", proc


def test_refused_without_device():
    state, proc = device_state()
    if state == "present":
        return "skipped: this machine has a CUDA device"
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    if proc.returncode != 2:
        raise Failure("exit %d, expected 2: %s" % (proc.returncode, proc.stderr.strip()[:300]))
    if len(lines) != 1 or not lines[0].startswith("dynscope: --device cuda: "):
        raise Failure("expected one line naming --device cuda, got %r" % proc.stderr[:300])
    return lines[0]


def save_outputs(args, folder):
    proc = subprocess.run([EXE] + BASE + args + ["--save-outputs", folder], capture_output=True,
                          text=True, timeout=300)
    if proc.returncode != 0:
        raise Failure("exit %d: %s" % (proc.returncode, proc.stderr.strip()[:300]))
    with open(os.path.join(folder, "outputs.json"), encoding="utf-8") as f:
        listed = json.load(f)["outputs"]
    return proc.stdout, [np.load(os.path.join(folder, o["file"])) for o in listed]


def test_mixed_placement_matches_cpu(tmp):
    state, run = device_state()
    if state == "absent":
        return "skipped: no CUDA device"
    # --save-outputs prints no summary, so the placement line is read from a plain run.
    placement = [line for line in run.stdout.splitlines() if line.startswith("placement: ")]
    if not placement or " on cuda " not in placement[0]:
        raise Failure("no placement line in the run's summary")
    _, want = save_outputs([], os.path.join(tmp, "cpu"))
    _, got = save_outputs(["--device", "cuda"], os.path.join(tmp, "cuda"))
    for w, g in zip(want, got):
        if w.shape != g.shape or not np.allclose(w, g, rtol=1e-4, atol=1e-5):
            raise Failure("outputs differ from the CPU's")
    return "%s; %d outputs match the CPU" % (placement[0], len(want))


def test_report_has_gpu_times(tmp):
    state, _ = device_state()
    if state == "absent":
        return "skipped: no CUDA device"
    report = os.path.join(tmp, "r.json")
    proc = subprocess.run([EXE] + BASE + ["--device", "cuda", "--report", report],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise Failure("exit %d: %s" % (proc.returncode, proc.stderr.strip()[:300]))
    with open(report, encoding="utf-8") as f:
        events = json.load(f)["events"]
    events = events.values() if isinstance(events, dict) else events
    timed = [e for e in events if e.get("backend") == "cuda" and (e.get("gpu_ns") or 0) > 0]
    if not timed:
        raise Failure("no event on cuda has a GPU time")
    return "%d events with GPU times" % len(timed)


if __name__ == "__main__":
    sys.exit(tap.run([
        ("--device cuda without a device exits 2 with one line", test_refused_without_device),
        ("boolean mask, mixed CPU/CUDA placement, CPU's outputs", test_mixed_placement_matches_cpu),
        ("--report gives per-node GPU times from CUPTI", test_report_has_gpu_times),
    ]))
