#!/usr/bin/env python3
"""The NumPy reference's control-flow ops (_foreach, _while_loop, _cond) against
MXNet's documented results and direct NumPy loops.

Prints TAP. The cases come from tools/control_flow_cases.py: MXNet's acceptance
examples (while_loop stopping by its condition, at max_iterations, after zero
iterations, nested; foreach's exact values; cond's two branches) and the sample
models of data/control, each with its expected outputs. Further tests check that
the sample files are what tools/make_control_flow_models.py writes, the LSTM
through _foreach against the same LSTM unrolled, and the reference's refusals.

Environment: DS_SOURCE_DIR (set by meson); without it the paths are taken
relative to this file.
"""

import copy
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("DS_SOURCE_DIR") or os.path.dirname(HERE)
CONTROL = os.path.join(SRC, "data", "control")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402
from tap import Failure  # noqa: E402
sys.path.insert(0, os.path.join(SRC, "tools"))
import control_flow_cases as cases  # noqa: E402
import make_control_flow_models as models  # noqa: E402
import mxnet_reference as ref  # noqa: E402

RTOL = 1e-9
ATOL = 1e-12


def check_outputs(label, got, want):
    if len(got) != len(want):
        raise Failure("%s: %d outputs, %d expected" % (label, len(got), len(want)))
    for k, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape:
            raise Failure("%s: output %d has shape %s, %s expected" % (label, k, g.shape, w.shape))
        if not np.allclose(g, w, rtol=RTOL, atol=ATOL):
            worst = float(np.max(np.abs(g - w))) if g.size else 0.0
            raise Failure("%s: output %d differs by up to %g" % (label, k, worst))


def run_case(build):
    graph, inputs, expected = build()
    # Through JSON text, as a file would give it.
    loaded = ref.load_graph(json.loads(cases.dumps(graph)))
    check_outputs(build.__name__, ref.run_graph(loaded, inputs), expected)


def test_sample_files(notes):
    """data/control holds exactly what the script writes (regenerate it otherwise)."""
    for name, build in models.MODELS:
        path = os.path.join(CONTROL, name)
        with open(path) as f:
            text = f.read()
        if text != cases.dumps(build()) + "\n":
            raise Failure("%s is not what tools/make_control_flow_models.py writes" % name)
        graph = ref.load_graph(path)
        subs = [n for n in graph.nodes if n.subgraphs]
        if not subs or any(s.version != graph.version for n in subs for s in n.subgraphs):
            raise Failure("%s: subgraphs not loaded with the file's version" % name)
        notes.append("%s: %d nodes, %d with subgraphs" % (name, len(graph.nodes), len(subs)))


def test_lstm_unrolled(notes):
    """The foreach LSTM and the same cell unrolled give the same values."""
    for length in (1, 3):
        inputs = cases.lstm_inputs(length, seed=20 + length)
        looped = ref.run_graph(ref.load_graph(cases.lstm_foreach_graph()), inputs)
        unrolled = ref.run_graph(ref.load_graph(cases.lstm_unrolled_graph(length)), inputs)
        check_outputs("length %d" % length, looped, unrolled)
        check_outputs("length %d against NumPy" % length, looped, cases.lstm_numpy(inputs))
    notes.append("lengths 1 and 3 agree")


def test_lstm_empty(notes):
    """An empty sequence: no rows stacked, the states come back unchanged."""
    inputs = cases.lstm_inputs(0)
    out = ref.run_graph(ref.load_graph(cases.lstm_foreach_graph()), inputs)
    check_outputs("T = 0", out, [np.zeros((0, cases.LSTM_BATCH, cases.LSTM_HIDDEN)),
                                 inputs["h0"], inputs["c0"]])


def test_one_dim_rows(notes):
    """A 1-D data array's rows have shape (1,), as MXNet's NDArray::At gives them, so the
    stacked output is (T, 1)."""
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
    got = ref.run_graph(ref.load_graph(g.graph(out, top=True)),
                        {"data": values, "s0": np.array([10.0])})
    check_outputs("1-D data", got, [(10.0 + np.cumsum(values)).reshape(4, 1), np.array([20.0])])


def expect_error(label, graph, inputs, text):
    try:
        ref.run_graph(ref.load_graph(graph), inputs)
    except Exception as exc:  # the reference raises ValueError with the node's name
        if text not in str(exc):
            raise Failure("%s: error '%s' does not mention '%s'" % (label, exc, text))
        return
    raise Failure("%s: no error" % label)


def test_refusals(notes):
    """A while_loop without max_iterations, data arrays of different lengths and a condition
    of several values are refused."""
    graph, inputs, _ = cases.case_while_by_condition()
    broken = copy.deepcopy(graph)
    loop = next(n for n in broken["nodes"] if n["op"] == "_while_loop")
    del loop["attrs"]["max_iterations"]
    expect_error("no max_iterations", broken, inputs, "max_iterations")

    graph, inputs, _ = cases.case_foreach_multi()
    inputs = dict(inputs, b=inputs["b"][:3])
    expect_error("lengths", graph, inputs, "different lengths")

    graph, inputs, _ = cases.case_cond_then()
    inputs = {"a": np.array([1.0, 1.0]), "b": np.array([2.0, 2.0])}
    expect_error("cond of two values", graph, inputs, "one value")
    notes.append("three refusals")


def main():
    tests = [("case: " + name, lambda notes, fn=fn: run_case(fn)) for name, fn in cases.CASES]
    tests += [
        ("sample files are what the script writes", test_sample_files),
        ("LSTM: foreach against the unrolled cell", test_lstm_unrolled),
        ("LSTM: an empty sequence", test_lstm_empty),
        ("foreach: a 1-D array's rows are (1,)", test_one_dim_rows),
        ("refusals", test_refusals),
    ]
    return tap.run_with_notes(tests)


if __name__ == "__main__":
    sys.exit(main())
