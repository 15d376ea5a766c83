#!/usr/bin/env python3
"""Writes the ONNX models that tests/test_onnx_models.py and bench/onnx_peer.py run, with
reference inputs and the outputs they must give.

    /usr/bin/python3 tools/make_onnx_models.py OUTDIR [MODEL ...]

Models (all seeded, so every run writes the same files):

  mlp                three Gemm layers of width 1024, Relu between; x is (batch, 1024)
  transformer_block  torch.nn.TransformerEncoderLayer(256, 4, 1024) as torch.onnx.export
                     writes it, dims "batch" and "seq" dynamic; exported at (2, 10), checked
                     at (3, 17) (needs torch; skipped without it)
  lstm_loop          an LSTM cell (input 64, hidden 128) in a Loop whose trip count is
                     ReduceMax(lengths) cast to int64; rows past their length keep their state
  boolean_mask       rows whose sum exceeds a threshold, selected by Compress, through a MatMul
                     and a ReduceSum; the number of rows is decided by the data
  add_chain          1,000 Adds of a (batch, 16) tensor in a chain, for the per-node overhead

For each model: OUTDIR/<model>.onnx; for each of its cases, the inputs as
OUTDIR/inputs_<model>[_<case>]/<input>.npy and the expected outputs (NumPy or PyTorch in float64,
stored as the model's dtype) as OUTDIR/expected_<model>[_<case>]/<output>.npy; the case named
"default" has no suffix. OUTDIR/models.json lists it all:

  {"models": [{"name", "file", "opset", "symbols": [dim_param, ...],
               "inputs": [{"name", "dtype", "dims": [int or dim_param]}], "outputs": [name],
               "rtol", "atol", "packed_weights"?: weights its products pack for the GEMM,
               "cases": [{"name", "bench": bool, "note", "inputs": {name: path},
                          "expected": {name: path}, "trip_count"?: int, "batch"?: int}]}],
   "skipped": {model: reason}}

with paths relative to OUTDIR. Cases marked "bench" are sized for bench/onnx_peer.py. Exits 77
when `onnx` cannot be imported.
"""

import io
import json
import os
import sys
import time

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print("make_onnx_models: cannot import onnx: %s" % e, file=sys.stderr)
    sys.exit(77)

FLOAT, INT32, INT64, BOOL = (TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64,
                             TensorProto.BOOL)
RTOL, ATOL = 1e-4, 1e-5


def finish(graph, opset):
    """A checked model of `graph` at `opset` of the default domain."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="dynscope-make_onnx_models", producer_version="1")
    onnx.checker.check_model(model, full_check=True)
    return model


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def spec(name, model, outputs, reference, cases, **extra):
    """What main() writes for one model. `reference(inputs) -> {output: array}`; `cases` is a
    list of (case name, {input: array}, extra case fields)."""
    return dict(name=name, model=model, outputs=outputs, reference=reference, cases=cases,
                rtol=extra.pop("rtol", RTOL), atol=extra.pop("atol", ATOL), **extra)


# ---------------------------------------------------------------------------
# mlp: x (batch, 1024) -> Gemm -> Relu -> Gemm -> Relu -> Gemm -> y
# ---------------------------------------------------------------------------

MLP_WIDTH = 1024


def mlp():
    rng = np.random.default_rng(1)
    nodes, weights, layers = [], [], []
    prev = "x"
    for i in range(3):
        w = (rng.standard_normal((MLP_WIDTH, MLP_WIDTH)) / np.sqrt(MLP_WIDTH)).astype(np.float32)
        b = (0.1 * rng.standard_normal(MLP_WIDTH)).astype(np.float32)
        layers.append((w, b))
        weights += [const("fc%d.weight" % i, w), const("fc%d.bias" % i, b)]
        out = "y" if i == 2 else "fc%d_out" % i
        # As torch exports nn.Linear: the weight stored (out, in), transB=1.
        nodes.append(helper.make_node("Gemm", [prev, "fc%d.weight" % i, "fc%d.bias" % i], [out],
                                      name="fc%d" % i, transB=1))
        if i < 2:
            prev = "relu%d_out" % i
            nodes.append(helper.make_node("Relu", [out], [prev], name="relu%d" % i))
    graph = helper.make_graph(
        nodes, "mlp", [helper.make_tensor_value_info("x", FLOAT, ["batch", MLP_WIDTH])],
        [helper.make_tensor_value_info("y", FLOAT, ["batch", MLP_WIDTH])], weights)

    def reference(inputs):
        h = inputs["x"].astype(np.float64)
        for i, (w, b) in enumerate(layers):
            h = h @ w.T.astype(np.float64) + b
            h = np.maximum(h, 0) if i < 2 else h
        return {"y": h}

    def x(batch):
        return {"x": np.random.default_rng(batch).standard_normal((batch, MLP_WIDTH),
                                                                  dtype=np.float32)}

    return spec("mlp", finish(graph, 13), ["y"], reference,
                [("default", x(5), {}), ("bench", x(64), {"bench": True})], packed_weights=3)


# ---------------------------------------------------------------------------
# transformer_block: torch's encoder layer, as its exporter writes it
# ---------------------------------------------------------------------------

D_MODEL, N_HEAD, D_FF = 256, 4, 1024
TRANSFORMER_OPSET = 14


def transformer_block():
    import copy

    import torch

    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(D_MODEL, N_HEAD, D_FF, dropout=0.0,
                                             batch_first=True).eval()
    buf = io.BytesIO()
    torch.onnx.export(layer, (torch.randn(2, 10, D_MODEL),), buf, input_names=["x"],
                      output_names=["y"], opset_version=TRANSFORMER_OPSET,
                      dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}})
    model = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(model)
    exact = copy.deepcopy(layer).double()

    def reference(inputs):
        with torch.no_grad():
            return {"y": exact(torch.from_numpy(inputs["x"].astype(np.float64))).numpy()}

    def x(batch, seq):
        rng = np.random.default_rng(seq)
        return {"x": rng.standard_normal((batch, seq, D_MODEL), dtype=np.float32)}

    # The reference is float64; float32 engines stay within the default tolerance (ONNX
    # Runtime: max abs error 7e-7 on outputs of size ~4).
    return spec("transformer_block", model, ["y"], reference,
                [("default", x(3, 17), {"note": "exported at (2, 10), run at (3, 17)"}),
                 ("bench", x(4, 64), {"bench": True})], packed_weights=4)


# ---------------------------------------------------------------------------
# lstm_loop: Loop(trip = Cast(ReduceMax(lengths)), h, c) over an LSTM cell
# ---------------------------------------------------------------------------

LSTM_INPUT, LSTM_HIDDEN = 64, 128


def lstm_body():
    """Loop body (i, cond, h, c) -> (cond, h, c, h): one LSTM step on xs[i]; rows whose
    length is <= i keep their h and c. Reads xs, lengths64, W, R and B from the outer graph."""
    n = helper.make_node
    nodes = [
        n("Gather", ["xs", "i"], ["x_t"], name="x_t", axis=0),
        n("MatMul", ["x_t", "W"], ["xw"], name="xw"),
        n("MatMul", ["h", "R"], ["hr"], name="hr"),
        n("Add", ["xw", "hr"], ["xwhr"], name="xwhr"),
        n("Add", ["xwhr", "B"], ["gates"], name="gates"),
        n("Split", ["gates"], ["gi", "gf", "gg", "go"], name="split", axis=1),
        n("Sigmoid", ["gi"], ["in_gate"], name="in_gate"),
        n("Sigmoid", ["gf"], ["forget_gate"], name="forget_gate"),
        n("Tanh", ["gg"], ["cell_in"], name="cell_in"),
        n("Sigmoid", ["go"], ["out_gate"], name="out_gate"),
        n("Mul", ["forget_gate", "c"], ["c_keep"], name="c_keep"),
        n("Mul", ["in_gate", "cell_in"], ["c_add"], name="c_add"),
        n("Add", ["c_keep", "c_add"], ["c_new"], name="c_new"),
        n("Tanh", ["c_new"], ["c_act"], name="c_act"),
        n("Mul", ["out_gate", "c_act"], ["h_new"], name="h_new"),
        n("Less", ["i", "lengths64"], ["running"], name="running"),
        n("Constant", [], ["axis1"], name="axis1", value=const("axis1", np.array([1], np.int64))),
        n("Unsqueeze", ["running", "axis1"], ["running_col"], name="running_col"),
        n("Where", ["running_col", "h_new", "h"], ["h_out"], name="h_out"),
        n("Where", ["running_col", "c_new", "c"], ["c_out"], name="c_out"),
        n("Identity", ["cond"], ["cond_out"], name="cond_out"),
        n("Identity", ["h_out"], ["h_step"], name="h_step"),
    ]
    state = ["batch", LSTM_HIDDEN]
    vi = helper.make_tensor_value_info
    return helper.make_graph(
        nodes, "lstm_step",
        [vi("i", INT64, []), vi("cond", BOOL, []), vi("h", FLOAT, state), vi("c", FLOAT, state)],
        [vi("cond_out", BOOL, []), vi("h_out", FLOAT, state), vi("c_out", FLOAT, state),
         vi("h_step", FLOAT, state)])


def lstm_loop():
    rng = np.random.default_rng(3)
    scale = 1 / np.sqrt(LSTM_HIDDEN)
    w = rng.uniform(-scale, scale, (LSTM_INPUT, 4 * LSTM_HIDDEN)).astype(np.float32)
    r = rng.uniform(-scale, scale, (LSTM_HIDDEN, 4 * LSTM_HIDDEN)).astype(np.float32)
    b = rng.uniform(-scale, scale, 4 * LSTM_HIDDEN).astype(np.float32)
    n = helper.make_node
    nodes = [
        n("ReduceMax", ["lengths"], ["max_length"], name="max_length", keepdims=0),
        n("Cast", ["max_length"], ["trip_count"], name="trip_count", to=INT64),
        n("Cast", ["lengths"], ["lengths64"], name="lengths64", to=INT64),
        # No condition input: a for loop of trip_count iterations.
        n("Loop", ["trip_count", "", "h0", "c0"], ["h_last", "c_last", "hs"], name="lstm_loop",
          body=lstm_body()),
    ]
    vi = helper.make_tensor_value_info
    state = ["batch", LSTM_HIDDEN]
    graph = helper.make_graph(
        nodes, "lstm_loop",
        [vi("xs", FLOAT, ["time", "batch", LSTM_INPUT]), vi("lengths", INT32, ["batch"]),
         vi("h0", FLOAT, state), vi("c0", FLOAT, state)],
        [vi("hs", FLOAT, ["steps", "batch", LSTM_HIDDEN]), vi("h_last", FLOAT, state),
         vi("c_last", FLOAT, state)],
        [const("W", w), const("R", r), const("B", b)])

    def reference(inputs):
        sigmoid = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
        xs = inputs["xs"].astype(np.float64)
        lengths = inputs["lengths"]
        h, c = inputs["h0"].astype(np.float64), inputs["c0"].astype(np.float64)
        hs = []
        for i in range(int(lengths.max())):
            gates = xs[i] @ w + h @ r + b
            gi, gf, gg, go = np.split(gates, 4, axis=1)
            c_new = sigmoid(gf) * c + sigmoid(gi) * np.tanh(gg)
            h_new = sigmoid(go) * np.tanh(c_new)
            running = (i < lengths)[:, None]
            h, c = np.where(running, h_new, h), np.where(running, c_new, c)
            hs.append(h)
        hs = np.stack(hs) if hs else np.zeros((0,) + h.shape)
        return {"hs": hs, "h_last": h, "c_last": c}

    def case(name, time_, lengths, **extra):
        rng = np.random.default_rng(len(lengths) * 100 + time_)
        batch = len(lengths)
        inputs = {"xs": rng.standard_normal((time_, batch, LSTM_INPUT), dtype=np.float32),
                  "lengths": np.array(lengths, np.int32),
                  "h0": (0.5 * rng.standard_normal((batch, LSTM_HIDDEN))).astype(np.float32),
                  "c0": (0.5 * rng.standard_normal((batch, LSTM_HIDDEN))).astype(np.float32)}
        trip = max(lengths)
        return (name, inputs, dict(trip_count=trip, batch=batch,
                                   note="trip count %d, batch %d" % (trip, batch), **extra))

    return spec("lstm_loop", finish(graph, 16), ["hs", "h_last", "c_last"], reference,
                [case("default", 8, [7, 3, 5, 1]), case("long", 30, [23, 9, 17, 4]),
                 case("bench", 64, [64] * 16, bench=True),
                 case("bench_batch1", 64, [64], bench=True)], packed_weights=2)


# ---------------------------------------------------------------------------
# boolean_mask: selected = Compress(x, ReduceSum(x, 1) > threshold) @ W; total = sum
# ---------------------------------------------------------------------------

MASK_FEATURES, MASK_OUT = 32, 16


def boolean_mask():
    w = np.random.default_rng(4).standard_normal((MASK_FEATURES, MASK_OUT)).astype(np.float32)
    n = helper.make_node
    nodes = [
        n("ReduceSum", ["x", "axis1"], ["row_sum"], name="row_sum", keepdims=0),
        n("Greater", ["row_sum", "threshold"], ["mask"], name="mask"),
        n("Compress", ["x", "mask"], ["rows"], name="rows", axis=0),
        n("MatMul", ["rows", "W"], ["selected"], name="project"),
        n("ReduceSum", ["selected", "axis0"], ["total"], name="total", keepdims=0),
    ]
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes, "boolean_mask",
        [vi("x", FLOAT, ["batch", MASK_FEATURES]), vi("threshold", FLOAT, [])],
        [vi("selected", FLOAT, ["selected_rows", MASK_OUT]), vi("total", FLOAT, [MASK_OUT])],
        [const("W", w), const("axis0", np.array([0], np.int64)),
         const("axis1", np.array([1], np.int64))])

    def reference(inputs):
        x = inputs["x"].astype(np.float64)
        selected = x[x.sum(axis=1) > inputs["threshold"]] @ w
        return {"selected": selected, "total": selected.sum(axis=0)}

    def case(name, batch, threshold, **extra):
        x = np.random.default_rng(batch).standard_normal((batch, MASK_FEATURES), dtype=np.float32)
        # No row sum so close to the threshold that float32 rounding could flip its mask bit.
        x[np.abs(x.astype(np.float64).sum(axis=1) - threshold) < 1e-3, 0] += 0.01
        inputs = {"x": x, "threshold": np.array(threshold, np.float32)}
        rows = int((x.astype(np.float64).sum(axis=1) > threshold).sum())
        return (name, inputs, dict(note="%d of %d rows selected" % (rows, batch), **extra))

    return spec("boolean_mask", finish(graph, 17), ["selected", "total"], reference,
                [case("default", 50, 0.0), case("none_selected", 7, 1e6),
                 case("bench", 4096, 0.0, bench=True)], packed_weights=1)


# ---------------------------------------------------------------------------
# add_chain: y = ((x + c) + c) ... + c, 1,000 Adds
# ---------------------------------------------------------------------------

CHAIN_LENGTH, CHAIN_WIDTH = 1000, 16


def add_chain():
    c = np.full(CHAIN_WIDTH, 1 / 64, np.float32)  # exact in binary: every partial sum is too
    nodes = []
    for i in range(CHAIN_LENGTH):
        src = "x" if i == 0 else "a%d" % (i - 1)
        dst = "y" if i == CHAIN_LENGTH - 1 else "a%d" % i
        nodes.append(helper.make_node("Add", [src, "c"], [dst], name="add%d" % i))
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(nodes, "add_chain", [vi("x", FLOAT, ["batch", CHAIN_WIDTH])],
                              [vi("y", FLOAT, ["batch", CHAIN_WIDTH])], [const("c", c)])

    def reference(inputs):
        y = inputs["x"].copy()
        for _ in range(CHAIN_LENGTH):
            y = y + c  # float32, in the graph's order
        return {"y": y}

    x = {"x": np.random.default_rng(5).integers(-8, 8, (1, CHAIN_WIDTH)).astype(np.float32)}
    return spec("add_chain", finish(graph, 13), ["y"], reference,
                [("default", x, {"nodes": CHAIN_LENGTH})], nodes=CHAIN_LENGTH)


GENERATORS = [mlp, transformer_block, lstm_loop, boolean_mask, add_chain]


# ---------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------

def np_dtype(elem_type):
    if hasattr(helper, "tensor_dtype_to_np_dtype"):  # onnx >= 1.13
        return helper.tensor_dtype_to_np_dtype(elem_type)
    return onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[elem_type]


def dims_of(value):
    dims = value.type.tensor_type.shape.dim
    return [d.dim_param if d.HasField("dim_param") else d.dim_value for d in dims]


def save_arrays(outdir, folder, arrays, dtypes):
    os.makedirs(os.path.join(outdir, folder), exist_ok=True)
    paths = {}
    for name, array in arrays.items():
        paths[name] = os.path.join(folder, name + ".npy")
        np.save(os.path.join(outdir, paths[name]), np.asarray(array).astype(dtypes[name]))
    return paths


def write_model(outdir, s):
    model = s["model"]
    onnx.save(model, os.path.join(outdir, s["name"] + ".onnx"))
    graph = model.graph
    weights = {t.name for t in graph.initializer}
    inputs = [v for v in graph.input if v.name not in weights]
    elem = {v.name: np_dtype(v.type.tensor_type.elem_type)
            for v in list(inputs) + list(graph.output)}
    entry = {
        "name": s["name"], "file": s["name"] + ".onnx",
        "opset": max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
        "symbols": sorted({d for v in inputs for d in dims_of(v) if isinstance(d, str)}),
        "inputs": [{"name": v.name, "dtype": str(elem[v.name]), "dims": dims_of(v)}
                   for v in inputs],
        "outputs": s["outputs"], "rtol": s["rtol"], "atol": s["atol"], "cases": [],
    }
    for key in ("nodes", "packed_weights"):
        if key in s:
            entry[key] = s[key]
    for case_name, case_inputs, extra in s["cases"]:
        suffix = "" if case_name == "default" else "_" + case_name
        expected = s["reference"](case_inputs)
        case = {"name": case_name, "bench": extra.pop("bench", False),
                "note": extra.pop("note", ""),
                "inputs": save_arrays(outdir, "inputs_" + s["name"] + suffix, case_inputs, elem),
                "expected": save_arrays(outdir, "expected_" + s["name"] + suffix,
                                        {k: expected[k] for k in s["outputs"]}, elem)}
        case.update(extra)
        entry["cases"].append(case)
    return entry


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: make_onnx_models.py OUTDIR [MODEL ...]")
    outdir, wanted = sys.argv[1], sys.argv[2:]
    unknown = set(wanted) - {g.__name__ for g in GENERATORS}
    if unknown:
        sys.exit("make_onnx_models: no model named %s" % ", ".join(sorted(unknown)))
    os.makedirs(outdir, exist_ok=True)
    listing = {"models": [], "skipped": {}}
    start = time.monotonic()
    for generate in GENERATORS:
        if wanted and generate.__name__ not in wanted:
            continue
        t0 = time.monotonic()
        try:
            s = generate()
        except ImportError as e:  # torch, for the transformer
            listing["skipped"][generate.__name__] = "cannot import %s" % e.name
            print("%-18s skipped: cannot import %s" % (generate.__name__, e.name))
            continue
        listing["models"].append(write_model(outdir, s))
        print("%-18s %6.2f s" % (s["name"], time.monotonic() - t0))
    with open(os.path.join(outdir, "models.json"), "w") as f:
        json.dump(listing, f, indent=1)
        f.write("\n")
    print("wrote %d models to %s in %.2f s" % (len(listing["models"]), outdir,
                                               time.monotonic() - start))


if __name__ == "__main__":
    main()
