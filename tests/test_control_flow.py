#!/usr/bin/env python3
"""The engine's control flow (_foreach, _while_loop, _cond) end to end.

Prints TAP. Every case of tools/control_flow_cases.py (MXNet's acceptance
examples: while_loop stopping by its condition -> (6, 15), at max_iterations ->
(1001, 500500), after zero iterations, nested to (2, 2, 10, 5, 3); foreach's
exact values; cond's two branches; the LSTM, greedy decoder and cond-in-loop
samples; the MXNet 1.9 exports whose subgraphs read outer values as closures,
nested up to three levels, in int64 where MXNet's examples are) is written as a
model file, run with `dynscope --run --input ... --save-outputs`, and compared
with its expected values. Then the LSTM through _foreach against the same LSTM
unrolled, on the engine, an unknown op deep in a subgraph, and the summary line.

Environment: DS_SOURCE_DIR, DS_BUILD_DIR (set by meson).
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("DS_SOURCE_DIR") or os.path.dirname(HERE)
BUILD = os.environ.get("DS_BUILD_DIR") or os.path.join(SRC, "build")
EXE = os.path.join(BUILD, "app", "dynscope")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402
from tap import Failure  # noqa: E402
sys.path.insert(0, os.path.join(SRC, "tools"))
import control_flow_cases as cases  # noqa: E402

RTOL = 1e-4


def as_fed(value):
    """A case's input as the file gives it: integers as they are (MXNet's int64 examples),
    anything else as float32."""
    value = np.asarray(value)
    return value if value.dtype.kind in "iu" else value.astype(np.float32)


def run_engine(graph, inputs, tmp, extra=()):
    """Runs `graph` (a dict) on `inputs`; returns the outputs in head order."""
    model = os.path.join(tmp, "model-symbol.json")
    with open(model, "w") as f:
        f.write(cases.dumps(graph))
    args = [EXE, "--run", model, "--threads", "1"]
    for name, value in inputs.items():
        path = os.path.join(tmp, name + ".npy")
        np.save(path, as_fed(value))
        args += ["--input", "%s=%s" % (name, path)]
    out = os.path.join(tmp, "out")
    proc = subprocess.run(args + list(extra) + ["--save-outputs", out], capture_output=True,
                          text=True, timeout=300)
    if proc.returncode != 0:
        raise Failure("--run exit %d: %s" % (proc.returncode, proc.stderr.strip()[:300]))
    with open(os.path.join(out, "outputs.json")) as f:
        listing = json.load(f)["outputs"]
    fed = {str(as_fed(v).dtype) for v in inputs.values()}
    for e in listing:
        # A loop over int64 values stays in int64, as in MXNet.
        if len(fed) == 1 and e["dtype"] not in fed:
            raise Failure("output '%s' is %s, the inputs %s" % (e["name"], e["dtype"], fed.pop()))
    return [np.load(os.path.join(out, e["file"])).astype(np.float64) for e in listing]


def compare(label, got, want):
    if len(got) != len(want):
        raise Failure("%s: %d outputs, expected %d" % (label, len(got), len(want)))
    for i, (g, w) in enumerate(zip(got, want)):
        w = np.asarray(w, dtype=np.float64)
        if g.shape != w.shape:
            raise Failure("%s: output %d has shape %s, expected %s" % (label, i, g.shape, w.shape))
        scale = max(1.0, float(np.max(np.abs(w)))) if w.size else 1.0
        if w.size and not np.allclose(g, w, rtol=RTOL, atol=RTOL * scale):
            at = np.unravel_index(np.argmax(np.abs(g - w)), w.shape)
            raise Failure("%s: output %d differs at %s: %g, expected %g"
                          % (label, i, at, g[at], w[at]))


def control_ops(graph):
    """The control-flow ops of `graph` (a dict), its subgraphs' included."""
    found = set()
    for node in graph.get("nodes", []):
        if node.get("op") in ("_foreach", "_while_loop", "_cond"):
            found.add(node["op"])
        for sub in node.get("subgraphs", []):
            found |= control_ops(sub)
    return found


def cover(graph):
    """Notes, for the registry's coverage test (tests/test_op_coverage.py), that the engine's
    run of these control-flow ops matched the NumPy reference."""
    path = os.environ.get("DS_OP_COVERAGE_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.writelines("cpu %s\n" % op for op in sorted(control_ops(graph)))


def case_test(build):
    def test(notes):
        graph, inputs, want = build()
        with tempfile.TemporaryDirectory(prefix="ds-control-") as tmp:
            got = run_engine(graph, inputs, tmp)
        compare("engine", got, want)
        cover(graph)
        notes.append("outputs %s" % ", ".join(str(g.shape) for g in got))
    return test


def test_lstm_unrolled(notes):
    for length in (1, 7, 33):
        inputs = cases.lstm_inputs(length, seed=40 + length)
        with tempfile.TemporaryDirectory(prefix="ds-lstm-") as tmp:
            looped = run_engine(cases.lstm_foreach_graph(), inputs, tmp)
        with tempfile.TemporaryDirectory(prefix="ds-lstm-") as tmp:
            unrolled = run_engine(cases.lstm_unrolled_graph(length), inputs, tmp)
        compare("length %d, foreach against unrolled" % length, looped, unrolled)
    notes.append("lengths 1, 7, 33: foreach equals the unrolled graph")


def test_one_dim_rows(notes):
    """A 1-D data array's rows are (1,), as MXNet gives them: the stack is (T, 1)."""
    body = cases.Builder()
    x = body.var("x")
    s = body.var("s")
    o = body.op("elemwise_add", "add0", [x, s])
    heads = body.outputs([o, o], "body")
    g = cases.Builder()
    data = g.var("data", (4,))
    s0 = g.var("s0", (1,))
    out = cases.foreach(g, "foreach0", body, heads, 1, [data], [s0], [], [0], [1], [])
    values = np.array([1.0, 2.0, 3.0, 4.0])
    with tempfile.TemporaryDirectory(prefix="ds-control-") as tmp:
        got = run_engine(g.graph(out, top=True), {"data": values, "s0": np.array([10.0])}, tmp)
    compare("1-D data", got, [(10.0 + np.cumsum(values)).reshape(4, 1), np.array([20.0])])
    notes.append("stacked %s, final state %s" % (got[0].shape, got[1].shape))


def test_unbounded_while_loop(notes):
    """A _while_loop without max_iterations (MXNet always writes one) and a condition that is
    always true stops at the documented default bound, 100000 iterations."""
    graph, inputs = cases._counter_loop(None, 1000, flag=1)
    for node in graph["nodes"]:
        if node["op"] == "_while_loop":
            del node["attrs"]["max_iterations"]
    n = 100000
    with tempfile.TemporaryDirectory(prefix="ds-control-") as tmp:
        got = run_engine(graph, inputs, tmp)
    compare("unbounded", got, [np.array([n + 1.0]), np.array([n * (n + 1) / 2.0]),
                               np.array([1.0])])
    notes.append("stopped after %d iterations: i = %d" % (n, got[0][0]))


def rename_op(graph, name, op):
    """Gives node `name`, wherever it sits in `graph`'s subgraphs, the op `op`."""
    for node in graph["nodes"]:
        if node["name"] == name:
            node["op"] = op
        for sub in node.get("subgraphs", []):
            rename_op(sub, name, op)


def test_unknown_op_in_subgraph(notes):
    """An op this build does not know, in a branch nested in a loop's body, refuses the run
    before it starts (not when an iteration reaches it, as an unknown dtype): exit 2, the path
    to the node and the op named, nothing written."""
    graph, inputs, _ = cases.case_collatz()
    rename_op(graph, "_div_scalar0", "_no_such_op")
    with tempfile.TemporaryDirectory(prefix="ds-control-") as tmp:
        try:
            run_engine(graph, inputs, tmp)
        except Failure as exc:
            message = str(exc)
        else:
            raise Failure("the run succeeded")
        if os.path.exists(os.path.join(tmp, "out")):
            raise Failure("--save-outputs wrote %s" % os.listdir(os.path.join(tmp, "out")))
    want = ("--run exit 2: dynscope: node '_while_loop0' (_while_loop), func: node '_cond0' "
            "(_cond), then: node '_div_scalar0': op '_no_such_op' is not supported")
    if message != want:
        raise Failure("got: %s" % message)
    notes.append(message)


def test_summary_line(notes):
    graph, inputs, _ = cases.case_while_by_condition()
    with tempfile.TemporaryDirectory(prefix="ds-control-") as tmp:
        model = os.path.join(tmp, "model-symbol.json")
        with open(model, "w") as f:
            f.write(cases.dumps(graph))
        args = [EXE, "--run", model]
        for name, value in inputs.items():
            path = os.path.join(tmp, name + ".npy")
            np.save(path, np.asarray(value, dtype=np.float32))
            args += ["--input", "%s=%s" % (name, path)]
        proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
        static = subprocess.run(args + ["--executor", "static"], capture_output=True, text=True,
                                timeout=300)
    if proc.returncode != 0 or "executor: dynamic" not in proc.stdout:
        raise Failure("--run did not say the dynamic executor ran: %s" % proc.stderr.strip())
    if static.returncode != 2 or "runs its own subgraphs" not in static.stderr:
        raise Failure("--executor static on a loop: exit %d, %s"
                      % (static.returncode, static.stderr.strip()))
    notes.append(static.stderr.strip())


def main():
    tests = [(title, case_test(build)) for title, build in cases.CASES]
    tests.append(("LSTM through foreach equals the unrolled LSTM on the engine", test_lstm_unrolled))
    tests.append(("foreach over 1-D data: rows of shape (1,)", test_one_dim_rows))
    tests.append(("while_loop without max_iterations stops at the default bound",
                  test_unbounded_while_loop))
    tests.append(("an unknown op deep in a subgraph is refused before the run",
                  test_unknown_op_in_subgraph))
    tests.append(("--run names the dynamic executor; the static one refuses loops",
                  test_summary_line))
    return tap.run_with_notes(tests)


if __name__ == "__main__":
    sys.exit(main())
