#!/usr/bin/env python3
"""`dynscope --run --trace-steps` and `--break` on the debug cursor, end to end.

Prints TAP. The trace of the cond-in-loop sample is checked line by line against
the branches NumPy says each row takes; the nested while loop's trace against
MXNet's loop counts; statistics printed at breakpoints inside the LSTM's third
iteration and after its loop against the NumPy LSTM; repeated breakpoints,
outputs saved after a debugged run, and the regions of a saved partition as
frames.

Environment: DS_SOURCE_DIR, DS_BUILD_DIR (set by meson).
"""

import json
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("DS_SOURCE_DIR") or os.path.dirname(HERE)
BUILD = os.environ.get("DS_BUILD_DIR") or os.path.join(SRC, "build")
EXE = os.path.join(BUILD, "app", "dynscope")

sys.path.insert(0, HERE)
import tap  # noqa: E402
from tap import Failure  # noqa: E402

sys.path.insert(0, os.path.join(SRC, "tools"))
import control_flow_cases as cases  # noqa: E402


def write_inputs(inputs, tmp):
    args = []
    for name, value in inputs.items():
        path = os.path.join(tmp, name + ".npy")
        np.save(path, np.asarray(value, dtype=np.float32))
        args += ["--input", "%s=%s" % (name, path)]
    return args


def dynscope(args, expect=0):
    proc = subprocess.run([EXE, "--threads", "1"] + args, capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != expect:
        raise Failure("exit %d, expected %d: %s" % (proc.returncode, expect,
                                                    proc.stderr.strip()[:300]))
    return proc.stdout


def run_model(graph, inputs, tmp, extra):
    model = os.path.join(tmp, "model-symbol.json")
    with open(model, "w") as f:
        f.write(cases.dumps(graph))
    return dynscope(["--run", model] + write_inputs(inputs, tmp) + extra)


def trace_rows(out):
    """(path, op, shapes) per trace line."""
    rows = []
    for line in out.splitlines():
        m = re.match(r"^\s*(\d+)  (\S+)\s+(\S+)\s+(.*)$", line)
        if m and not line.lstrip().startswith("step"):
            rows.append((m.group(2), m.group(3), m.group(4).strip()))
    return rows


def stats_line(out, role, index, after):
    """The numbers of `role index` in the breakpoint block starting at `after`."""
    block = out[out.index(after):]
    for line in block.splitlines()[1:]:
        m = re.match(r"^\s+%s\s+%d\s+(\S+)\s+(\S+)\s+(\(.*?\))\s+min (\S+) max (\S+) mean (\S+) "
                     r"nan (\d+) inf (\d+)" % (role, index), line)
        if m:
            return {"name": m.group(1), "dtype": m.group(2), "shape": m.group(3),
                    "min": float(m.group(4)), "max": float(m.group(5)),
                    "mean": float(m.group(6)), "nan": int(m.group(7))}
    raise Failure("no '%s %d' line after '%s'" % (role, index, after))


def check_stats(label, got, want):
    want = np.asarray(want, dtype=np.float64)
    for key, value in (("min", want.min()), ("max", want.max()), ("mean", want.mean())):
        if abs(got[key] - value) > 1e-4 * max(1.0, abs(value)):
            raise Failure("%s: %s %g, expected %g" % (label, key, got[key], value))
    shape = "(" + ", ".join(str(d) for d in want.shape) + ("," if want.ndim == 1 else "") + ")"
    if got["shape"] != shape:
        raise Failure("%s: shape %s, expected %s" % (label, got["shape"], shape))


def test_trace_cond_in_loop(tmp):
    rng = np.random.RandomState(4)
    inputs = {"data": rng.uniform(-1, 1, (6, 3)), "acc0": rng.uniform(-1, 1, (3,))}
    out = run_model(cases.cond_in_loop_graph(), inputs, tmp, ["--trace-steps"])
    want = []
    for t, row in enumerate(inputs["data"]):
        pre = "loop0/iter%d/choose0" % t
        want += [(pre + "/cond/row_sum0", "sum", "(1,)"),
                 (pre + "/cond/row_positive0", "_greater_scalar", "(1,)")]
        if row.sum() > 0:
            want.append((pre + "/then/then_add0", "elemwise_add", "(3,)"))
        else:
            want.append((pre + "/else/else_half0", "_mul_scalar", "(3,)"))
        want += [(pre, "_cond", "(3,)"), ("loop0/iter%d/body_copy0" % t, "_copy", "(3,)")]
    want.append(("loop0", "_foreach", "(6, 3), (3,)"))
    got = trace_rows(out)
    if got != want:
        for i, (g, w) in enumerate(zip(got, want)):
            if g != w:
                raise Failure("line %d: %s, expected %s" % (i + 1, g, w))
        raise Failure("%d lines, expected %d" % (len(got), len(want)))
    if "finished: %d steps, 0 breakpoint stops" % len(want) not in out:
        raise Failure("no summary line for %d steps" % len(want))
    return "%d steps in order, branches as NumPy takes them" % len(want)


def test_trace_nested_while(tmp):
    graph, inputs, _ = cases.case_while_nested()
    got = trace_rows(run_model(graph, inputs, tmp, ["--trace-steps"]))
    paths = [p for p, _, _ in got]
    # Outer: conditions for i = 0, 1, 2; bodies 0, 1 each run an inner loop of 2 iterations.
    inner_bodies = [p for p in paths if re.match(
        r"^outer_while0/iter[01]/inner_while0/iter[01]/inner_take0$", p)]
    outer_conds = [p for p in paths if re.match(r"^outer_while0/iter\d/cond/outer_lesser0$", p)]
    inner_ends = [p for p in paths if re.match(r"^outer_while0/iter\d/inner_while0$", p)]
    if (len(inner_bodies), len(outer_conds), len(inner_ends)) != (4, 3, 2):
        raise Failure("inner bodies %d, outer conditions %d, inner loops %d: expected 4, 3, 2"
                      % (len(inner_bodies), len(outer_conds), len(inner_ends)))
    # The node's outputs: the two stacked step outputs, then the loop variables.
    if paths[-1] != "outer_while0" or got[-1][2] != "(2, 2, 10, 5, 3), (2, 2, 10, 5, 3), " \
                                                     "(1,), (1,), (5, 3), (10, 10, 5, 3)":
        raise Failure("last line %s" % (got[-1],))
    return "%d steps; 3 outer conditions, 2 inner loops of 2 iterations" % len(paths)


def lstm_setup(tmp):
    inputs = cases.lstm_inputs(5)
    model = os.path.join(SRC, "data", "control", "lstm-foreach-symbol.json")
    return model, inputs, write_inputs(inputs, tmp)


def test_break_in_iteration(tmp):
    model, inputs, args = lstm_setup(tmp)
    out = dynscope(["--run", model] + args + ["--break", "lstm_i2h if iter==2"])
    head = "breakpoint 1 'lstm_i2h if iter==2' at lstm_foreach0/iter2/lstm_i2h (FullyConnected)"
    if head not in out:
        raise Failure("no line '%s'" % head)
    x = inputs["data"][2]
    check_stats("input x", stats_line(out, "input", 0, head), x)
    want = x @ inputs["i2h_weight"].T + inputs["i2h_bias"]
    check_stats("output", stats_line(out, "output", 0, head), want)
    if "1 breakpoint stop\n" not in out:
        raise Failure("expected exactly one stop")
    return "x and i2h(x) at iteration 2 match NumPy"


def test_break_after_loop_and_save(tmp):
    model, inputs, args = lstm_setup(tmp)
    saved = os.path.join(tmp, "saved")
    out = dynscope(["--run", model] + args + ["--break", "_foreach", "--break",
                                              "lstm_h2h if iter>=3", "--save-outputs", saved])
    stacked, h, c = cases.lstm_numpy(inputs)
    head = "breakpoint 1 '_foreach' at lstm_foreach0 (_foreach)"
    if head not in out:
        raise Failure("no line '%s'" % head)
    for k, want in enumerate((stacked, h, c)):
        check_stats("output %d" % k, stats_line(out, "output", k, head), want)
    hits = len(re.findall(r"^breakpoint 2 ", out, re.M))
    if hits != 2 or "3 breakpoint stops" not in out:
        raise Failure("lstm_h2h if iter>=3 stopped %d times, expected 2 (iterations 3, 4)" % hits)
    with open(os.path.join(saved, "outputs.json")) as f:
        first = json.load(f)["outputs"][0]["file"]
    got = np.load(os.path.join(saved, first))
    if not np.allclose(got, stacked, rtol=1e-4, atol=1e-5):
        raise Failure("saved outputs differ from NumPy")
    return "loop outputs at the stop match NumPy; 3 stops; outputs saved"


def test_region_frames(tmp):
    src = os.path.join(SRC, "data", "dynamic", "boolean-mask-symbol.json")
    saved = os.path.join(tmp, "partitioned-symbol.json")
    dynscope(["--partition", src, "--save", saved])
    out = dynscope(["--run", saved, "--random-inputs", "--input-shape", "data=(6,8)",
                    "--trace-steps", "--break", "static2"])
    paths = [p for p, _, _ in trace_rows(out)]
    if not paths or not paths[0].startswith("static0/") or "boolean_mask0" not in paths:
        raise Failure("paths %s" % paths)
    if "breakpoint 1 'static2' at static2 (region)" not in out:
        raise Failure("no stop after region static2")
    return "regions of a saved partition are frames: %s" % ", ".join(paths[:2])


TESTS = [
    ("--trace-steps through a cond inside a foreach", test_trace_cond_in_loop),
    ("--trace-steps through nested while loops", test_trace_nested_while),
    ("--break inside a loop iteration", test_break_in_iteration),
    ("--break repeated, after a loop, with --save-outputs", test_break_after_loop_and_save),
    ("--trace-steps and --break on partition regions", test_region_frames),
]


if __name__ == "__main__":
    sys.exit(tap.run(TESTS))
