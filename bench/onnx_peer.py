#!/usr/bin/env python3
"""`make bench`'s ONNX peer section: dynscope against ONNX Runtime on the same ONNX files.

    /usr/bin/python3 bench/onnx_peer.py [BUILD]        (default: build)

Writes the models of tools/make_onnx_models.py into BUILD/onnx-models (again when the
generator is newer) and installs onnxruntime-node into BUILD/ort-peer with npm once (its CUDA
download is skipped). Then, for each model's bench case, at 1 thread (and at every core for the
MLP): ONNX Runtime through bench/ort_peer.mjs (InferenceSession, graphOptimizationLevel 'all',
intra- and inter-op threads equal to the count, median of N runs timed in-process after
warm-up) and dynscope through `ds-bench onnx-run` (the same, no profiling hooks). Prints each
time, the ratio ORT / dynscope (> 1: dynscope is faster) beside its target, the Loop model's
cost per iteration and the add chain's per-node overhead. Asserts nothing: without node, npm,
the network or onnx it prints one line saying why the section is skipped and exits 0, and a
model that one side cannot run prints that side's error.
"""

import json
import os
import shutil
import subprocess
import sys

import numpy as np

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATOR = os.path.join(SRC, "tools", "make_onnx_models.py")
ORT_SCRIPT = os.path.join(SRC, "bench", "ort_peer.mjs")
WARMUP = 3
ROUNDS = 3
RUNS = {"add_chain": 200, "boolean_mask": 100}  # others: DEFAULT_RUNS
DEFAULT_RUNS = 30
# Targets on ORT time / dynscope time, and on the add chain's µs per node.
TARGETS = {"mlp": 1.0, "lstm_loop": 2.0}
# Models timed at every core as well as at one thread.
THREADED = {"mlp", "lstm_loop"}
NODE_TARGET_US = 0.43
TIMEOUT = 600


def skip(reason):
    print("ONNX peer section skipped: %s" % reason)
    sys.exit(0)


def shorten(text, limit=300):
    return text if len(text) <= limit else text[:limit - 3] + "..."


def last_line(text):
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    return lines[-1] if lines else "(no message)"


def ensure_models(build):
    out = os.path.join(build, "onnx-models")
    listing = os.path.join(out, "models.json")
    if (not os.path.exists(listing)
            or os.path.getmtime(listing) < os.path.getmtime(GENERATOR)):
        proc = subprocess.run([sys.executable, GENERATOR, out], capture_output=True, text=True,
                              timeout=TIMEOUT)
        if proc.returncode != 0:
            skip("tools/make_onnx_models.py failed: %s" % last_line(proc.stderr))
    with open(listing) as f:
        return out, json.load(f)


def ensure_ort(build):
    """The folder holding node_modules/onnxruntime-node, installed on first use."""
    ort_dir = os.path.join(build, "ort-peer")
    if os.path.exists(os.path.join(ort_dir, "node_modules", "onnxruntime-node", "package.json")):
        return ort_dir
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            skip("no %s on PATH (ONNX Runtime runs through onnxruntime-node)" % tool)
    print("installing onnxruntime-node into %s (once)" % ort_dir, flush=True)
    env = dict(os.environ, ONNXRUNTIME_NODE_INSTALL="skip", ONNXRUNTIME_NODE_INSTALL_CUDA="skip")
    try:
        proc = subprocess.run(["npm", "install", "--prefix", ort_dir, "onnxruntime-node",
                               "--no-audit", "--no-fund", "--fetch-retries=1"],
                              capture_output=True, text=True, env=env, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        skip("npm install onnxruntime-node timed out")
    if proc.returncode != 0:
        errors = [l[len("npm error"):].strip() for l in proc.stderr.splitlines()
                  if l.startswith("npm error")]
        errors = [l for l in errors if l and not l.startswith(("code ", "syscall ", "errno ",
                                                                "at ", "A complete log"))]
        skip("npm install onnxruntime-node failed: %s"
             % shorten((errors or [last_line(proc.stderr)])[0]))
    return ort_dir


def paths(models_dir, case):
    return {k: os.path.join(models_dir, v) for k, v in case["inputs"].items()}


def time_ort(ort_dir, model_path, inputs, threads, runs):
    spec = {"ort_dir": ort_dir, "model": model_path, "inputs": inputs, "threads": threads,
            "warmup": WARMUP, "runs": runs, "save_dir": None}
    try:
        proc = subprocess.run(["node", ORT_SCRIPT, json.dumps(spec)], capture_output=True,
                              text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % TIMEOUT
    if proc.returncode != 0:
        return None, last_line(proc.stderr)
    result = json.loads(last_line(proc.stdout))
    return result, None


def time_dynscope(build, model_path, inputs, threads, runs):
    args = [os.path.join(build, "bench", "ds-bench"), "onnx-run", model_path, str(threads),
            str(runs)] + ["%s=%s" % kv for kv in inputs.items()]
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT)
    except OSError as e:  # no ds-bench built
        return None, str(e)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % TIMEOUT
    if proc.returncode != 0:
        return None, (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[0]
    fields = dict(f.split("=", 1) for f in last_line(proc.stdout).split() if "=" in f)
    if "median_ms" not in fields:
        return None, "no median_ms in ds-bench's output: %s" % last_line(proc.stdout)
    return float(fields["median_ms"]), None


def fastest(best, ms):
    return ms if best is None else min(best, ms)


def label(model, case, inputs):
    shape = np.load(next(iter(inputs.values())), mmap_mode="r").shape
    text = "%s %s" % (model["name"], "x".join(str(d) for d in shape))
    if "trip_count" in case:
        text = "%s, batch %d, %d steps" % (model["name"], case["batch"], case["trip_count"])
    return text


def bench_cases(model):
    return [c for c in model["cases"] if c["bench"]] or model["cases"][:1]


def bench_model(build, ort_dir, models_dir, model, case, threads):
    inputs = paths(models_dir, case)
    path = os.path.join(models_dir, model["file"])
    runs = RUNS.get(model["name"], DEFAULT_RUNS)
    # Alternated rounds, the fastest median of each side: load on a shared machine that comes
    # and goes then hits both sides alike.
    ort_ms = ds_ms = ort_error = ds_error = None
    for _ in range(ROUNDS):
        if ort_error is None:
            ort, ort_error = time_ort(ort_dir, path, inputs, threads, runs)
            if ort is not None:
                ort_ms = fastest(ort_ms, ort["median_ms"])
        if ds_error is None:
            ms, ds_error = time_dynscope(build, path, inputs, threads, runs)
            if ms is not None:
                ds_ms = fastest(ds_ms, ms)
    target = TARGETS.get(model["name"])
    cells = ["%-30s %3d" % (label(model, case, inputs), threads),
             "%10.3f" % ort_ms if ort_ms is not None else "%10s" % "failed",
             "%12.3f" % ds_ms if ds_ms is not None else "%12s" % "failed"]
    if ort_ms is not None and ds_ms is not None:
        ratio = ort_ms / ds_ms
        cells.append("%7.2fx" % ratio)
        if target is not None:
            cells.append(" ok (>= %.1f)" % target if ratio >= target else " BELOW %.1f" % target)
    print("  " + " ".join(cells))
    if ort_error:
        print("      ONNX Runtime: %s" % shorten(ort_error))
    if ds_error:
        print("      dynscope: %s" % shorten(ds_error))
    per = [("ORT", ort_ms), ("dynscope", ds_ms)]
    if "trip_count" in case:
        n = case["trip_count"]
        print("      per iteration (%d): %s" % (n, ", ".join(
            "%s %.2f µs" % (who, ms * 1e3 / n) for who, ms in per if ms is not None) or "-"))
    if "nodes" in model:
        n = model["nodes"]
        text = ", ".join("%s %.3f µs" % (who, ms * 1e3 / n) for who, ms in per if ms is not None)
        verdict = ""
        if ds_ms is not None:
            verdict = "  ok" if ds_ms * 1e3 / n < NODE_TARGET_US else "  OVER"
        print("      per node (%d Adds): %s (target: dynscope < %.2f µs)%s"
              % (n, text or "-", NODE_TARGET_US, verdict))


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "build"))
    models_dir, listing = ensure_models(build)
    ort_dir = ensure_ort(build)
    cores = len(os.sched_getaffinity(0))
    probe, error = time_ort(ort_dir, os.path.join(models_dir, listing["models"][-1]["file"]),
                            paths(models_dir, listing["models"][-1]["cases"][0]), 1, 1)
    if probe is None:
        skip("onnxruntime-node does not run: %s" % error)
    print("\nONNX peer: ONNX Runtime %s (onnxruntime-node, graphOptimizationLevel 'all') against\n"
          "dynscope on the same files, both timed in-process: medians after %d warm-up runs, the\n"
          "fastest of %d alternated rounds; ratio = ORT time / dynscope time (> 1: dynscope is\n"
          "faster; targets: >= 1.0 on the MLP, >= 2.0 on the Loop model, < %.2f µs per node on\n"
          "the add chain)" % (probe["ort_version"], WARMUP, ROUNDS, NODE_TARGET_US))
    print("  %-30s %3s %10s %12s %8s" % ("model (bench case)", "thr", "ORT ms", "dynscope ms",
                                         "ratio"))
    for model in listing["models"]:
        for case in bench_cases(model):
            for threads in ([1, cores] if model["name"] in THREADED and cores > 1 else [1]):
                bench_model(build, ort_dir, models_dir, model, case, threads)
    for name, reason in listing["skipped"].items():
        print("  %-30s skipped: %s" % (name, reason))


if __name__ == "__main__":
    main()
