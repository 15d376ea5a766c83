#!/usr/bin/env python3
"""Every shared MXNet model and the control-flow and dynamic samples, on the CPU and with
--device cuda, from the same random inputs: the placement line of each device run, its median
time beside the CPU's, and the largest relative difference between the two backends' outputs.

Usage: tools/device_models.py BUILD OUT_DIR [NAME...]   (on a machine with a CUDA device)
With names, only the cases whose name starts with one of them.
Inputs are made as tests/test_models.py makes them (weights scaled by fan-in, so activations
stay O(1)). Prints one line per model and exits 1 when a device run fails or its outputs
differ from the CPU's by more than 1e-4 relative (detection heads excepted: near-tied random
scores may order their rows differently, so only their shapes are compared).
"""

import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SRC, "tests"))
sys.path.insert(0, HERE)
import mxnet_reference as ref  # noqa: E402
import test_models as tm  # noqa: E402

CONTROL = os.path.join(SRC, "data", "control")


def control_cases():
    normal = tm.normal
    return [
        tm.Case("lstm-foreach", os.path.join(CONTROL, "lstm-foreach-symbol.json"),
                {"data": (12, 4, 16)}, {"data": normal}),
        tm.Case("greedy-decoder", os.path.join(CONTROL, "greedy-decoder-symbol.json"),
                {"h0": (1, 8)}, {"h0": normal}),
        tm.Case("cond-in-loop", os.path.join(CONTROL, "cond-in-loop-symbol.json"),
                {"data": (9, 3)}, {"data": normal}),
        tm.Case("boolean-mask", os.path.join(SRC, "data", "dynamic", "boolean-mask-symbol.json"),
                {"data": (64, 8)}, {"data": normal}),
    ]


def run(exe, model, input_args, device, outdir):
    args = [exe, "--run", model] + input_args + ["--repeat", "3", "--threads", "1"]
    if device:
        args += ["--device", device]
    summary = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if summary.returncode != 0:
        return None, summary.stderr.strip().splitlines()[:1], None
    saved = subprocess.run(args + ["--save-outputs", outdir], capture_output=True, text=True,
                           timeout=600)
    if saved.returncode != 0:
        return None, saved.stderr.strip().splitlines()[:1], None
    return tm.engine_outputs(outdir), summary.stdout, summary.stdout


def median_ms(stdout):
    m = re.search(r"wall median ([0-9.]+) ms", stdout or "")
    return float(m.group(1)) if m else float("nan")


def main():
    build, out = sys.argv[1], sys.argv[2]
    exe = os.path.join(build, "app", "dynscope")
    failed = 0
    wanted = sys.argv[3:]
    for case in control_cases() + tm.CASES:
        if wanted and not any(case.name.startswith(w) for w in wanted):
            continue
        graph = ref.load_graph(case.path())
        info = tm.engine_info(case.path(), case.shapes) if case.shapes else None
        with tempfile.TemporaryDirectory(prefix="ds-device-") as tmp:
            _, input_args = tm.write_inputs(tmp, info, case, graph,
                                            seed=sum(map(ord, case.name)))
            cpu, _, cpu_out = run(exe, case.path(), input_args + case.args, None,
                                  os.path.join(tmp, "cpu"))
            gpu, err, gpu_out = run(exe, case.path(), input_args + case.args, "cuda",
                                    os.path.join(tmp, "cuda"))
        slug = re.sub(r"[^a-z0-9]+", "-", case.name.lower()).strip("-")
        with open(os.path.join(out, "model-%s.txt" % slug), "w", encoding="utf-8") as f:
            f.write((cpu_out or "") + "\n---- cuda ----\n" + (gpu_out or "\n".join(err or [])))
        if gpu is None or cpu is None:
            failed += 1
            print("FAIL %-36s %s" % (case.name, (err or ["cpu run failed"])[0]))
            continue
        placement = next((l for l in gpu_out.splitlines() if l.startswith("placement: ")),
                         "placement: (none printed)")
        worst = 0.0
        for (name, c), (_, g) in zip(cpu, gpu):
            if c.shape != g.shape:
                worst = float("inf")
                break
            if case.detections or c.size == 0:
                continue
            c64, g64 = c.astype(np.float64), g.astype(np.float64)
            scale = max(1e-6, float(np.max(np.abs(c64))))
            worst = max(worst, float(np.max(np.abs(c64 - g64))) / scale)
        ok = worst <= 1e-4
        failed += not ok
        print("%s %-36s cpu %8.2f ms  cuda %8.2f ms  max rel diff %.2e  %s"
              % ("ok  " if ok else "FAIL", case.name, median_ms(cpu_out), median_ms(gpu_out),
                 worst, placement), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
