#!/usr/bin/env python3
"""ONNX models end to end: `dynscope` on the files tools/make_onnx_models.py writes.

Prints TAP. The generator writes an MLP, a transformer encoder block as torch.onnx.export
writes it (dynamic batch and sequence, run at another size than it was exported at), an LSTM
in a Loop whose trip count comes from the data, a boolean-mask selection (Compress) and a
chain of 1,000 Adds, each with inputs and expected outputs computed in float64 by NumPy or
PyTorch. For each model: every case through `--run --input ... --save-outputs`, each output
compared with the expected one (the LSTM at two trip counts, the mask with rows selected and
with none); `--info` succeeds and names the inputs and outputs; `--shapes` names the file's
dim_param symbols; `--render --svg` writes an SVG; `--run --report` writes a profile report.

Skips everything when `import onnx` fails, and the transformer alone when `import torch` does.

Environment: DS_SOURCE_DIR, DS_BUILD_DIR (set by meson).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("DS_SOURCE_DIR") or os.path.dirname(HERE)
BUILD = os.environ.get("DS_BUILD_DIR") or os.path.join(SRC, "build")
EXE = os.path.join(BUILD, "app", "dynscope")
GENERATOR = os.path.join(SRC, "tools", "make_onnx_models.py")

sys.path.insert(0, HERE)
import tap  # noqa: E402
from tap import Failure  # noqa: E402

TIMEOUT = 600


def dynscope(args):
    """Runs the CLI; a non-zero exit fails with its one-line error."""
    if not os.path.exists(EXE):
        raise Failure("no engine binary at " + EXE)
    try:
        proc = subprocess.run([EXE] + args, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise Failure("dynscope %s timed out after %d s" % (" ".join(args[:2]), TIMEOUT))
    if proc.returncode != 0:
        lines = [l for l in (proc.stderr or proc.stdout).splitlines() if l.strip()]
        raise Failure("exit %d: %s" % (proc.returncode, lines[0] if lines else "(no message)"))
    return proc.stdout


def input_args(models_dir, case):
    args = []
    for name, path in case["inputs"].items():
        args += ["--input", "%s=%s" % (name, os.path.join(models_dir, path))]
    return args


def compare(name, ours, want, model):
    if ours.shape != want.shape:
        raise Failure("%s: shape %s, expected %s" % (name, ours.shape, want.shape))
    if ours.dtype != want.dtype:
        raise Failure("%s: dtype %s, expected %s" % (name, ours.dtype, want.dtype))
    a, b = ours.astype(np.float64), want.astype(np.float64)
    err = np.abs(a - b)
    if not np.allclose(a, b, rtol=model["rtol"], atol=model["atol"]):
        worst = np.unravel_index(np.argmax(err - model["rtol"] * np.abs(b)), err.shape)
        raise Failure("%s differs: at %s dynscope %.7g expected %.7g (max abs err %.3g; rtol %g, "
                      "atol %g)" % (name, tuple(int(i) for i in worst), a[worst], b[worst],
                                    err.max(), model["rtol"], model["atol"]))
    return "%s %s max abs err %.2g" % (name, want.shape, err.max() if err.size else 0.0)


# ---------------------------------------------------------------------------
# The checks, one TAP line each
# ---------------------------------------------------------------------------

def check_packed(text, model):
    """The run's "packed weights:" line counts the weights its products packed once (the line
    is absent only from builds without the packed GEMM path: no AVX2 and FMA)."""
    m = re.search(r"^packed weights: .* \((\d+) weights? packed", text, re.M)
    want = model.get("packed_weights", 0)
    if m is None:
        return "no packed weights" if want == 0 else "no packed GEMM in this build"
    if int(m.group(1)) != want:
        raise Failure("%s weights packed, expected %d" % (m.group(1), want))
    return "%d weight%s packed" % (want, "" if want == 1 else "s")


def check_run(models_dir, model, case, tmp):
    out = os.path.join(tmp, "out")
    dynscope(["--run", os.path.join(models_dir, model["file"])] + input_args(models_dir, case)
             + ["--save-outputs", out])
    with open(os.path.join(out, "outputs.json")) as f:
        saved = json.load(f)["outputs"]
    names = [o["name"] for o in saved]
    if names != model["outputs"]:
        raise Failure("outputs %s, expected %s" % (names, model["outputs"]))
    details = []
    for o in saved:
        ours = np.load(os.path.join(out, o["file"]))
        want = np.load(os.path.join(models_dir, case["expected"][o["name"]]))
        details.append(compare(o["name"], ours, want, model))
    return "; ".join(details)


def check_info(models_dir, model):
    text = dynscope(["--info", os.path.join(models_dir, model["file"])])
    names = [i["name"] for i in model["inputs"]] + model["outputs"]
    missing = [n for n in names if not re.search(r"\b%s\b" % re.escape(n), text)]
    if missing:
        raise Failure("--info does not name %s" % ", ".join(missing))


def check_shapes(models_dir, model):
    text = dynscope(["--shapes", os.path.join(models_dir, model["file"])])
    missing = [s for s in model["symbols"]
               if not re.search(r"\([^()\n]*\b%s\b" % re.escape(s), text)]
    if missing:
        raise Failure("--shapes has no shape in terms of %s" % ", ".join(missing))
    return "shapes in terms of " + ", ".join(model["symbols"])


def check_render(models_dir, model, tmp):
    svg = os.path.join(tmp, model["name"] + ".svg")
    dynscope(["--render", os.path.join(models_dir, model["file"]), "--svg", svg])
    if not os.path.exists(svg):
        raise Failure("exit 0 but no SVG written")
    root = ET.parse(svg).getroot()
    if root.tag != "{http://www.w3.org/2000/svg}svg":
        raise Failure("root element %s, not svg" % root.tag)
    groups = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "node"]
    if not groups:
        raise Failure("the SVG has no node group")
    return "%d node groups, %d bytes" % (len(groups), os.path.getsize(svg))


def check_report(models_dir, model, case, tmp):
    report = os.path.join(tmp, "r.json")
    text = dynscope(["--run", os.path.join(models_dir, model["file"])]
                    + input_args(models_dir, case) + ["--repeat", "2", "--report", report])
    with open(report) as f:
        r = json.load(f)
    if r.get("schema") != "dynscope-profile":
        raise Failure("schema %r, expected 'dynscope-profile'" % r.get("schema"))
    if len(r["run"]["wall_ns"]) != 2 or not r["events"]:
        raise Failure("%d run times and %d events for --repeat 2"
                      % (len(r["run"]["wall_ns"]), len(r["events"])))
    return "%d events, format %s; %s" % (len(r["events"]), r["model"].get("format"),
                                          check_packed(text, model))


def echoing(title, fn):
    """`fn` as a test that also writes its failure to stderr, which `meson test
    --print-errorlogs` shows."""
    def test(tmp):
        try:
            return fn(tmp) if fn.__code__.co_argcount else fn()
        except Exception as e:
            print("%s: %s" % (title, e), file=sys.stderr)
            raise
    return title, test


def tests_for(models_dir, model):
    name = model["name"]
    cases = [c for c in model["cases"] if not c["bench"]]
    tests = []
    for case in cases:
        title = "%s: --run, case %s%s, matches the reference" % (
            name, case["name"], " (%s)" % case["note"] if case["note"] else "")
        tests.append((title, lambda tmp, c=case: check_run(models_dir, model, c, tmp)))
    tests += [
        ("%s: --info" % name, lambda: check_info(models_dir, model)),
        ("%s: --shapes names its dim_params" % name, lambda: check_shapes(models_dir, model)),
        ("%s: --render --svg" % name, lambda tmp: check_render(models_dir, model, tmp)),
        ("%s: --run --report" % name, lambda tmp: check_report(models_dir, model, cases[0], tmp)),
    ]
    return [echoing(title, fn) for title, fn in tests]


def skipped(reason):
    """A test that reports itself skipped (tap.run prints its detail as the directive)."""
    return lambda: "SKIP " + reason


def main():
    models_dir = tempfile.mkdtemp(prefix="ds-onnx-models-")
    try:
        gen = subprocess.run([sys.executable, GENERATOR, models_dir], capture_output=True,
                             text=True, timeout=TIMEOUT)
        if gen.returncode == 77:
            print("1..0 # SKIP %s" % (gen.stderr.strip().splitlines() or ["no onnx"])[-1])
            return 0
        if gen.returncode != 0:
            print("1..1\nnot ok 1 - tools/make_onnx_models.py # %s"
                  % " ".join(gen.stderr.strip().splitlines()[-1:]))
            return 1
        for line in gen.stdout.splitlines():
            print("# " + line)
        with open(os.path.join(models_dir, "models.json")) as f:
            listing = json.load(f)
        tests = []
        for model in listing["models"]:
            tests += tests_for(models_dir, model)
        for name, reason in listing["skipped"].items():
            tests.append(("%s: all checks" % name, skipped(reason)))
        return tap.run(tests)
    finally:
        shutil.rmtree(models_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
