#!/usr/bin/env python3
"""The ONNX importer end to end, through the command line.

Prints TAP. Models are written at test time with the onnx package (the whole test is
skipped without it) and run with `dynscope --run --input ... --save-outputs`; results are
compared with NumPy. Covered: named dims becoming symbols; outputs named as the graph names
them; Loop with a data-given trip count, captured outer values and scan outputs, and Loop
stopped by its condition; If taking each branch, with a constant inside a branch; Scan over
axis 1 in both directions; a model with unsupported nodes (--info lists them, --run refuses
naming every one, before running); opsets outside 7 to 21, and the forms of opsets 18 to 21
(axes as inputs, Split's num_outputs, Pad's axes, Mish, Gelu, type-only versions, a form no
translator knows); external data read beside the
model and refused when its path leaves the model's folder; a truncated file; the format line;
RoiAlign's modes; a float16 model; quantized models (integer products and QLinear layers);
MaxPool's indices and MaxUnpool; STFT and DFT as a speech front end writes them; conversion
to MXNet JSON and .params; a Momentum step of the ai.onnx.preview.training domain; nodes
written before their producers (sorted as ONNX Runtime does) and a cycle; If, Loop and Scan
capturing or scanning far more values than any fixed bound would allow; If branches giving
different shapes or ranks, one of them not inferable; a Loop-carried value that grows; an
empty named dim (a KV cache's prefill); shapes computed from Shape through Slice, Gather,
arithmetic and Concat into Reshape, Expand and ConstantOfShape staying symbolic.

Environment: DS_SOURCE_DIR, DS_BUILD_DIR (set by meson).
"""

import json
import math
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

try:
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    from onnx_samples import (if_model, loop_cond_model, loop_model, mlp_model,
                              save, scan_model, unsupported_model, vi)
except ImportError:  # pragma: no cover - the package is in tools/install-deps.sh
    onnx = None


def dynscope(*args, expect=0):
    proc = subprocess.run([EXE, *args], capture_output=True, text=True, timeout=120)
    if proc.returncode != expect:
        raise Failure("dynscope %s exited %d, not %d: %s" % (
            " ".join(args), proc.returncode, expect, (proc.stderr or proc.stdout).strip()[-400:]))
    return proc


def run_model(tmp, model, inputs, extra=()):
    """Runs `model` on `inputs` (name -> array); returns the outputs by name."""
    args = []
    for name, value in inputs.items():
        path = os.path.join(tmp, "in-%s.npy" % name)
        np.save(path, value)
        args += ["--input", "%s=%s" % (name, path)]
    out = os.path.join(tmp, "out")
    dynscope("--run", model, *args, "--save-outputs", out, *extra)
    with open(os.path.join(out, "outputs.json")) as f:
        listing = json.load(f)
    names = [o["name"] for o in listing["outputs"]] if isinstance(listing, dict) else listing
    return {n: np.load(os.path.join(out, "%s.npy" % n)) for n in names}


def check_close(name, got, want):
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-6):
        raise Failure("%s: got %s %r, want %s %r" % (name, got.shape, got.tolist(), want.shape,
                                                      want.tolist()))


# ---- tests --------------------------------------------------------------------------------


def test_symbols_and_names(tmp):
    model = mlp_model(os.path.join(tmp, "mlp.onnx"))
    shapes = dynscope("--shapes", model).stdout
    if "batch" not in shapes or "(batch, 4)" not in shapes:
        raise Failure("--shapes does not show the named dim: " + shapes)
    info = dynscope("--info", model).stdout
    if "ONNX IR" not in info or "opset 13" not in info or "dynscope-tests" not in info:
        raise Failure("--info does not describe the format: " + info.splitlines()[0])
    if "weight  W" not in info.replace("   ", "  ") and "weight" not in info:
        raise Failure("initializers are not listed as weights: " + info)
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    out = run_model(tmp, model, {"x": x})
    if list(out) != ["y"]:
        raise Failure("outputs are named %s, not by the graph's output name 'y'" % list(out))
    w = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    check_close("y", out["y"], np.maximum(x @ w + np.array([1, -1, 0.5, -0.5]), 0))
    report = os.path.join(tmp, "r.json")
    dynscope("--run", model, "--random-inputs", "--bind", "batch=2", "--report", report)
    with open(report) as f:
        described = json.load(f)["model"]
    if described["format"] != "onnx" or described["name"] != "mlp":
        raise Failure("the report describes the model as %r" % described)
    return "(batch, 4); 5 rows"


def test_loop(tmp):
    model = loop_model(os.path.join(tmp, "loop.onnx"))
    x = np.array([1, 2, 3], np.float32)
    for trips in (4, 1, 0):
        out = run_model(tmp, model, {"M": np.array(trips, np.int64), "x": x,
                                     "v0": np.zeros(3, np.float32)})
        check_close("v_final", out["v_final"], x * trips)
        want = np.stack([2 * x * (k + 1) for k in range(trips)]) if trips else np.zeros((0, 3))
        check_close("scans", out["scans"], want.astype(np.float32))
    return "M = 4, 1, 0"


def test_loop_condition(tmp):
    model = loop_cond_model(os.path.join(tmp, "loop2.onnx"))
    out = run_model(tmp, model, {"go": np.array(True), "v0": np.array([1, 2], np.float32),
                                 "limit": np.array(100, np.float32)})
    # 3 -> 6 -> 12 -> 24 -> 48 -> 96 -> 192: the sixth doubling's sum is the first over 100.
    check_close("v_final", out["v_final"], np.array([64, 128], np.float32))
    out = run_model(tmp, model, {"go": np.array(False), "v0": np.array([1, 2], np.float32),
                                 "limit": np.array(100, np.float32)})
    check_close("v_final (no iteration)", out["v_final"], np.array([1, 2], np.float32))
    return "6 iterations, then none"


def test_if(tmp):
    model = if_model(os.path.join(tmp, "if.onnx"))
    x = np.array([1, 2, 3], np.float32)
    check_close("then", run_model(tmp, model, {"b": np.array(True), "x": x})["y"], 2 * x)
    check_close("else", run_model(tmp, model, {"b": np.array(False), "x": x})["y"],
                x * np.array([10, 20, 30], np.float32))


def test_scan(tmp):
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    for direction in (0, 1):
        model = scan_model(os.path.join(tmp, "scan%d.onnx" % direction), direction)
        out = run_model(tmp, model, {"a0": np.zeros(2, np.float32), "X": x})
        cols = x[:, ::-1] if direction else x
        check_close("Y", out["Y"], np.cumsum(cols, axis=1))
        check_close("a", out["a"], x.sum(axis=1))
    return "axis 1, forward and reverse"


def test_unsupported(tmp):
    model = unsupported_model(os.path.join(tmp, "bad.onnx"))
    info = dynscope("--info", model).stdout
    if "first_fancy" not in info or "custom" not in info:
        raise Failure("--info does not list the unsupported nodes: " + info)
    err = dynscope("--run", model, "--random-inputs", expect=2).stderr
    for want in ("2 nodes cannot run", "'first_fancy' (FancyOp", "'custom' (Custom",
                 "com.example"):
        if want not in err:
            raise Failure("the refusal does not say %r: %s" % (want, err))
    if len(err.strip().splitlines()) != 1:
        raise Failure("the refusal is not one line: " + err)
    dynscope("--render", model, "--svg", os.path.join(tmp, "bad.svg"))
    return err.strip()[-80:]


def test_roi_align_modes(tmp):
    """RoiAlign runs in avg mode; max mode is refused before running, naming the node."""
    def model(mode, path):
        g = h.make_graph([h.make_node("RoiAlign", ["x", "rois", "index"], ["y"], name="align",
                                      mode=mode, output_height=2, output_width=3,
                                      sampling_ratio=2)],
                         "roi", [vi("x", T.FLOAT, [1, 4, 8, 8]), vi("rois", T.FLOAT, [5, 4]),
                                 vi("index", T.INT64, [5])],
                         [vi("y", T.FLOAT, [5, 4, 2, 3])])
        return save(g, path, opset=16)
    rng = np.random.default_rng(7)
    feeds = {"x": rng.standard_normal((1, 4, 8, 8)).astype(np.float32),
             "rois": np.array([[0, 0, 7, 7], [1, 1, 4, 6], [2, 3, 5, 5], [0, 4, 3, 7],
                               [6, 6, 7, 7]], np.float32),
             "index": np.zeros(5, np.int64)}
    args = []
    for name, value in feeds.items():
        np.save(os.path.join(tmp, name + ".npy"), value)
        args.append("--input=%s=%s" % (name, os.path.join(tmp, name + ".npy")))
    avg = model("avg", os.path.join(tmp, "roi-avg.onnx"))
    out = dynscope("--run", avg, *args).stdout
    if "(5, 4, 2, 3)" not in out:
        raise Failure("RoiAlign's output shape is not (5, 4, 2, 3): " + out)
    err = dynscope("--run", model("max", os.path.join(tmp, "roi-max.onnx")), "--random-inputs",
                   expect=2).stderr
    for want in ("'align' (RoiAlign", "mode=max"):
        if want not in err:
            raise Failure("the refusal does not say %r: %s" % (want, err))
    return err.strip()[-70:]


def test_half_precision(tmp):
    """A float16 model: computed in float32 between a widened input and a narrowed output,
    with float16 weights and a Cast to float16 that rounds inside the graph."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((3, 4)).astype(np.float16)
    bias = np.array([0.5, -0.25, 0.125, 1e-4], np.float16)
    g = h.make_graph(
        [h.make_node("MatMul", ["x", "w"], ["xw"]),
         h.make_node("Add", ["xw", "bias"], ["pre"]),
         h.make_node("Relu", ["pre"], ["y"]),
         h.make_node("Cast", ["x"], ["x32"], to=T.FLOAT),
         h.make_node("Mul", ["x32", "third"], ["scaled"]),
         h.make_node("Cast", ["scaled"], ["rounded"], to=T.FLOAT16),
         h.make_node("Cast", ["rounded"], ["z"], to=T.DOUBLE)],
        "half", [vi("x", T.FLOAT16, ["batch", 3])],
        [vi("y", T.FLOAT16, ["batch", 4]), vi("z", T.DOUBLE, ["batch", 3])],
        [nh.from_array(w, "w"), nh.from_array(bias, "bias"),
         nh.from_array(np.array(1 / 3, np.float32), "third")])
    model = save(g, os.path.join(tmp, "half.onnx"), opset=13)
    x = rng.standard_normal((5, 3)).astype(np.float16)
    out = run_model(tmp, model, {"x": x})
    want = np.maximum(x.astype(np.float32) @ w.astype(np.float32) + bias.astype(np.float32), 0)
    if out["y"].dtype != np.float16:
        raise Failure("y is %s, not float16 as the graph declares" % out["y"].dtype)
    check_close("y", out["y"].astype(np.float32), want.astype(np.float16).astype(np.float32))
    z = (x.astype(np.float32) * np.float32(1 / 3)).astype(np.float16).astype(np.float64)
    if out["z"].dtype != np.float64 or not np.array_equal(out["z"], z):
        raise Failure("the Cast to float16 did not round: %r, want %r" % (out["z"], z))
    shapes = dynscope("--shapes", model).stdout
    if "float16" not in shapes:
        raise Failure("--shapes does not show the float16 input: " + shapes)
    return "(5, 4) float16, rounded inside the graph"


def test_storage_types(tmp):
    """int16, uint16, uint32, uint64 and bfloat16: fed in their own types, computed widened,
    narrowed where they leave; Casts to them wrap or round as ONNX Runtime's do."""
    g = h.make_graph(
        [h.make_node("Cast", ["f"], ["i16"], to=T.INT16),
         h.make_node("BitShift", ["u16", "s16"], ["shl"], direction="LEFT"),
         h.make_node("BitShift", ["u32", "s32"], ["shr"], direction="RIGHT"),
         h.make_node("Cast", ["u64"], ["u64f"], to=T.DOUBLE),
         h.make_node("Max", ["v64", "one"], ["u64max"]),
         h.make_node("Cast", ["f"], ["bf"], to=T.BFLOAT16),
         h.make_node("Cast", ["bf"], ["bff"], to=T.FLOAT)],
        "storage",
        [vi("f", T.FLOAT, [4]), vi("u16", T.UINT16, [4]), vi("s16", T.UINT16, [4]),
         vi("u32", T.UINT32, [4]), vi("s32", T.UINT32, [4]), vi("u64", T.UINT64, [4]),
         vi("v64", T.UINT64, [4])],
        [vi("i16", T.INT16, [4]), vi("shl", T.UINT16, [4]), vi("shr", T.UINT32, [4]),
         vi("u64f", T.DOUBLE, [4]), vi("u64max", T.UINT64, [4]), vi("bff", T.FLOAT, [4])],
        [nh.from_array(np.array([1], np.uint64), "one")])
    model = save(g, os.path.join(tmp, "storage.onnx"), opset=13)
    out = run_model(tmp, model, {
        "f": np.array([40000, -1.5, 1.00390625, 1.01171875], np.float32),
        "u16": np.array([0xFFFF, 1, 0x8001, 7], np.uint16),
        "s16": np.array([12, 15, 1, 0], np.uint16),
        "u32": np.array([0xFFFFFFFF, 0x80000000, 5, 1], np.uint32),
        "s32": np.array([4, 31, 1, 0], np.uint32),
        "u64": np.array([2**64 - 1, 2**63, 3, 0], np.uint64),
        # below 2^63: uint64 compares in int64 (the README's limit)
        "v64": np.array([2**62 + 5, 7, 3, 0], np.uint64)})
    want = {
        "i16": np.array([-25536, -1, 1, 1], np.int16),  # wraps, as a C cast
        "shl": np.array([0xF000, 0x8000, 2, 7], np.uint16),  # bits past 16 dropped
        "shr": np.array([0x0FFFFFFF, 1, 2, 1], np.uint32),  # no sign extension
        "u64f": np.array([2.0**64, 2.0**63, 3, 0], np.float64),  # read back as uint64
        "u64max": np.array([2**62 + 5, 7, 3, 1], np.uint64),
        # nearest bfloat16, ties to even: 1 + 2^-8 rounds down to 1, 1 + 3 * 2^-8 up
        "bff": np.array([39936, -1.5, 1.0, 1.015625], np.float32),
    }
    for name, w in want.items():
        if out[name].dtype != w.dtype or not np.array_equal(out[name], w):
            raise Failure("%s is %r (%s), want %r (%s)" % (name, out[name], out[name].dtype, w,
                                                          w.dtype))
    shapes = dynscope("--shapes", model).stdout
    if "u16/as_int32" not in shapes or "shl/to_uint16" not in shapes:
        raise Failure("--shapes does not show the widening and narrowing casts: " + shapes)
    return "int16, uint16, uint32, uint64, bfloat16"


def test_quantized(tmp):
    """Quantized models as ONNX Runtime's tools write them: dynamic quantization
    (DynamicQuantizeLinear, MatMulInteger, rescale), MatMulInteger with per-row and per-column
    zero points, and QLinearConv with int8 per-channel weights and a bias, against NumPy."""
    rng = np.random.default_rng(11)
    # Dynamic quantization of a linear layer.
    wq = rng.integers(-128, 128, (16, 8)).astype(np.int8)
    g = h.make_graph(
        [h.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xzp"]),
         h.make_node("MatMulInteger", ["xq", "wq", "xzp", "wzp"], ["acc"]),
         h.make_node("Cast", ["acc"], ["accf"], to=T.FLOAT),
         h.make_node("Mul", ["xs", "ws"], ["scale"]),
         h.make_node("Mul", ["accf", "scale"], ["y"])],
        "dynamic", [vi("x", T.FLOAT, ["batch", 16])], [vi("y", T.FLOAT, ["batch", 8])],
        [nh.from_array(wq, "wq"), nh.from_array(np.array(3, np.int8), "wzp"),
         nh.from_array(np.array(0.02, np.float32), "ws")])
    model = save(g, os.path.join(tmp, "dynamic.onnx"), opset=13)
    x = rng.standard_normal((4, 16)).astype(np.float32)
    lo, hi = min(0.0, x.min()), max(0.0, x.max())
    xs = np.float32((hi - lo) / 255)
    xzp = np.clip(np.rint(-lo / xs), 0, 255)
    xq = np.clip(np.rint(x / xs) + xzp, 0, 255)
    acc = (xq - xzp).astype(np.int64) @ (wq.astype(np.int64) - 3)
    want = acc.astype(np.float32) * (xs * np.float32(0.02))
    check_close("dynamic y", run_model(tmp, model, {"x": x})["y"], want)

    # Per-row and per-column zero points.
    a = rng.integers(0, 256, (3, 5)).astype(np.uint8)
    bm = rng.integers(-128, 128, (5, 4)).astype(np.int8)
    azp = np.array([1, 200, 17], np.uint8)
    bzp = np.array([0, -5, 9, 127], np.int8)
    g = h.make_graph([h.make_node("MatMulInteger", ["a", "b", "azp", "bzp"], ["y"])], "mmi",
                     [vi("a", T.UINT8, [3, 5])], [vi("y", T.INT32, [3, 4])],
                     [nh.from_array(bm, "b"), nh.from_array(azp, "azp"),
                      nh.from_array(bzp, "bzp")])
    got = run_model(tmp, save(g, os.path.join(tmp, "mmi.onnx"), opset=13), {"a": a})["y"]
    want = (a.astype(np.int64) - azp[:, None].astype(np.int64)) @ (
        bm.astype(np.int64) - bzp.astype(np.int64))
    if got.dtype != np.int32 or not np.array_equal(got, want):
        raise Failure("MatMulInteger: got %s %r, want %r" % (got.dtype, got.tolist(),
                                                              want.tolist()))

    # QLinearConv: uint8 data, int8 per-channel weights, int32 bias, int8 output, padded.
    xq8 = rng.integers(0, 256, (1, 2, 5, 5)).astype(np.uint8)
    w8 = rng.integers(-128, 128, (3, 2, 3, 3)).astype(np.int8)
    w_scale = np.array([0.01, 0.02, 0.005], np.float32)
    bias = np.array([100, -2000, 7], np.int32)
    consts = {"xs": np.array(0.02, np.float32), "xzp": np.array(128, np.uint8), "w": w8,
              "wscale": w_scale, "wzp": np.zeros(3, np.int8),
              "ys": np.array(0.05, np.float32), "yzp": np.array(-3, np.int8), "bias": bias}
    g = h.make_graph([h.make_node("QLinearConv", ["x", "xs", "xzp", "w", "wscale", "wzp", "ys",
                                                  "yzp", "bias"], ["y"], pads=[1, 1, 1, 1])],
                     "qconv", [vi("x", T.UINT8, [1, 2, 5, 5])], [vi("y", T.INT8, [1, 3, 5, 5])],
                     [nh.from_array(v, k) for k, v in consts.items()])
    got = run_model(tmp, save(g, os.path.join(tmp, "qconv.onnx"), opset=13), {"x": xq8})["y"]
    padded = np.pad(xq8.astype(np.int64) - 128, ((0, 0), (0, 0), (1, 1), (1, 1)))
    acc = np.zeros((1, 3, 5, 5), np.int64)
    for i in range(5):
        for j in range(5):
            window = padded[0, :, i:i + 3, j:j + 3]
            acc[0, :, i, j] = np.tensordot(w8.astype(np.int64), window, axes=3)
    acc += bias[None, :, None, None]
    scale = (np.float32(0.02) * w_scale / np.float32(0.05)).astype(np.float32)
    want = np.clip(np.rint(acc.astype(np.float32) * scale[None, :, None, None]) - 3, -128, 127)
    if got.dtype != np.int8 or not np.array_equal(got, want.astype(np.int8)):
        raise Failure("QLinearConv: %d of %d values differ" % (
            int((got != want).sum()), want.size))
    return "dynamic linear, per-row zero points, per-channel QLinearConv"


def pool_with_argmax(x, k, s):
    """NumPy max pooling (no padding) and the first maximum's (h, w) in each window."""
    n, c, hh, ww = x.shape
    oh, ow = (hh - k) // s + 1, (ww - k) // s + 1
    y = np.zeros((n, c, oh, ow), x.dtype)
    where = np.zeros((n, c, oh, ow, 2), np.int64)
    for i in range(oh):
        for j in range(ow):
            win = x[:, :, i * s:i * s + k, j * s:j * s + k].reshape(n, c, k * k)
            first = win.argmax(axis=2)  # NumPy's argmax takes the first maximum too
            y[:, :, i, j] = win.max(axis=2)
            where[:, :, i, j, 0] = i * s + first // k
            where[:, :, i, j, 1] = j * s + first % k
    return y, where


def test_unpooling(tmp):
    """MaxPool's Indices in both storage orders and MaxUnpool, as an encoder-decoder (SegNet)
    writes them: unpooled to the pre-pooling shape (output_shape, which the indices number, as
    in ONNX Runtime and PyTorch) and to the default shape, on an odd-sized input with tied
    maxima, against NumPy; an index outside the output is a one-line error."""
    pool = dict(kernel_shape=[2, 2], strides=[2, 2])
    g = h.make_graph(
        [h.make_node("MaxPool", ["x"], ["pooled", "idx"], **pool),
         h.make_node("MaxPool", ["x"], ["pooled_col", "idx_col"], storage_order=1, **pool),
         h.make_node("Mul", ["pooled", "two"], ["features"]),
         h.make_node("Shape", ["x"], ["x_shape"]),
         h.make_node("MaxUnpool", ["features", "idx", "x_shape"], ["y"], **pool),
         h.make_node("Slice", ["x", "zero2", "even", "axes"], ["x_even"]),
         h.make_node("MaxPool", ["x_even"], ["pooled_even", "idx_even"], **pool),
         h.make_node("MaxUnpool", ["pooled_even", "idx_even"], ["y_default"], **pool)],
        "unpool", [vi("x", T.FLOAT, ["batch", 2, 7, 9])],
        [vi("pooled", T.FLOAT, ["batch", 2, 3, 4]), vi("idx", T.INT64, ["batch", 2, 3, 4]),
         vi("idx_col", T.INT64, ["batch", 2, 3, 4]), vi("y", T.FLOAT, ["batch", 2, 7, 9]),
         vi("y_default", T.FLOAT, ["batch", 2, 6, 8])],
        [nh.from_array(np.array(2, np.float32), "two"),
         nh.from_array(np.array([0, 0], np.int64), "zero2"),
         nh.from_array(np.array([6, 8], np.int64), "even"),
         nh.from_array(np.array([2, 3], np.int64), "axes")])
    model = save(g, os.path.join(tmp, "unpool.onnx"), opset=12)
    rng = np.random.default_rng(11)
    x = rng.integers(0, 4, (3, 2, 7, 9)).astype(np.float32)  # small integers: many ties
    out = run_model(tmp, model, {"x": x})
    pooled, where = pool_with_argmax(x, 2, 2)
    plane = np.arange(3 * 2).reshape(3, 2, 1, 1)
    idx = plane * 63 + where[..., 0] * 9 + where[..., 1]
    idx_col = plane * 63 + where[..., 0] + where[..., 1] * 7
    check_close("pooled", out["pooled"], pooled)
    for name, want in (("idx", idx), ("idx_col", idx_col)):
        if out[name].dtype != np.int64 or not np.array_equal(out[name], want):
            raise Failure("%s: got %r, want %r" % (name, out[name].tolist(), want.tolist()))
    # Unpooled: each maximum back where it was (doubled in y), zeros elsewhere.
    n, c = np.indices(pooled.shape)[:2]
    y = np.zeros_like(x)
    y[n, c, where[..., 0], where[..., 1]] = 2 * pooled
    check_close("y", out["y"], y)
    y_default = np.zeros((3, 2, 6, 8), np.float32)
    y_default[n, c, where[..., 0], where[..., 1]] = pooled  # the same windows as in x
    check_close("y_default", out["y_default"], y_default)
    # output_shape = Shape(x) keeps x's symbolic shape.
    shapes = dynscope("--shapes", model).stdout
    unpooled = [l for l in shapes.splitlines() if l.startswith("MaxUnpool_y ")]
    if not unpooled or "(batch, 2, 7, 9)" not in unpooled[0]:
        raise Failure("MaxUnpool_y does not have x's shape: %r" % unpooled)
    # Indices numbering the (7, 9) input cannot land in the default (6, 8) output.
    bad = h.make_graph(
        [h.make_node("MaxPool", ["x"], ["pooled", "idx"], **pool),
         h.make_node("MaxUnpool", ["pooled", "idx"], ["y"], name="unpool", **pool)],
        "bad_unpool", [vi("x", T.FLOAT, [1, 1, 7, 9])], [vi("y", T.FLOAT, [1, 1, 6, 8])])
    bad_model = save(bad, os.path.join(tmp, "bad_unpool.onnx"), opset=12)
    np.save(os.path.join(tmp, "x.npy"), np.arange(63, dtype=np.float32).reshape(1, 1, 7, 9))
    err = dynscope("--run", bad_model, "--input", "x=" + os.path.join(tmp, "x.npy"),
                   expect=1).stderr.strip()
    if "unpool" not in err or "out of range" not in err or len(err.splitlines()) != 1:
        raise Failure("not a one-line error naming the node: %r" % err)
    return "(3, 2, 7, 9) -> (3, 2, 3, 4) -> (3, 2, 7, 9); " + err[-60:]


def stft_reference(x, step, window, length):
    """numpy's one-sided spectrum of every frame: (batch, frames, length // 2 + 1, 2)."""
    w = np.ones(length) if window is None else window
    n = (x.shape[1] - length) // step + 1
    frames = np.stack([x[:, i * step:i * step + length] * w for i in range(n)], axis=1)
    spec = np.fft.rfft(frames, axis=2)
    return np.stack([spec.real, spec.imag], axis=-1)


def test_spectrogram(tmp):
    """A speech front end at opset 17: a Hann window from HannWindow, STFT with a frame step fed
    at run time over audio of any length (the frame count is then a data-dependent dim),
    STFT with constant step and frame length, DFT cut to a constant dft_length (one-sided),
    and DFT then inverse DFT back to the signal; against numpy.fft. A fixed-size model keeps
    every dim static."""
    g = h.make_graph(
        [h.make_node("Unsqueeze", ["audio", "last"], ["signal"]),
         h.make_node("HannWindow", ["sixteen"], ["hann"]),
         h.make_node("STFT", ["signal", "step", "hann"], ["spec"]),
         h.make_node("STFT", ["signal", "five", "", "twelve"], ["plain"]),
         h.make_node("DFT", ["signal", "twenty"], ["cut"], axis=1, onesided=1),
         h.make_node("DFT", ["signal"], ["full"], axis=1),
         h.make_node("DFT", ["full"], ["back"], axis=1, inverse=1)],
        "front_end", [vi("audio", T.FLOAT, ["batch", "samples"]), vi("step", T.INT64, [])],
        [vi("spec", T.FLOAT, None), vi("plain", T.FLOAT, None), vi("cut", T.FLOAT, None),
         vi("back", T.FLOAT, None)],
        [nh.from_array(np.array([2], np.int64), "last"),
         nh.from_array(np.array(16, np.int64), "sixteen"),
         nh.from_array(np.array(5, np.int64), "five"),
         nh.from_array(np.array(12, np.int64), "twelve"),
         nh.from_array(np.array(20, np.int64), "twenty")])
    model = save(g, os.path.join(tmp, "front_end.onnx"), opset=17)
    rng = np.random.default_rng(17)
    audio = rng.uniform(-1, 1, (2, 70)).astype(np.float32)
    out = run_model(tmp, model, {"audio": audio, "step": np.array(6, np.int64)})
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(16) / 16)
    check_close("spec", out["spec"], stft_reference(audio, 6, hann, 16).astype(np.float32))
    check_close("plain", out["plain"], stft_reference(audio, 5, None, 12).astype(np.float32))
    cut = np.fft.rfft(audio[:, :20], axis=1)
    check_close("cut", out["cut"], np.stack([cut.real, cut.imag], -1).astype(np.float32))
    back = np.stack([audio, np.zeros_like(audio)], -1)
    if not np.allclose(out["back"], back, atol=1e-5):
        raise Failure("DFT then inverse DFT: %r" % out["back"][0, :4].tolist())
    shapes = dynscope("--shapes", model).stdout
    spec = [l for l in shapes.splitlines() if l.startswith("STFT_spec ")]
    # The frames depend on the step, a fed input; the window's length is HannWindow's size,
    # the model's constant 16, which inference follows: 16//2 + 1 = 9 bins.
    if not spec or not re.search(r"\(batch, u\d+, (9|u\d+//2 \+ 1), 2\)", spec[0]):
        raise Failure("STFT_spec: frames data-dependent, 9 bins expected: %r" % spec)
    # Everything static: the frames are counted while importing.
    fixed = h.make_graph(
        [h.make_node("STFT", ["signal", "eight", "", "sixteen"], ["spec"], onesided=0)],
        "fixed", [vi("signal", T.FLOAT, [1, 64, 1])], [vi("spec", T.FLOAT, None)],
        [nh.from_array(np.array(8, np.int64), "eight"),
         nh.from_array(np.array(16, np.int64), "sixteen")])
    fixed_model = save(fixed, os.path.join(tmp, "fixed.onnx"), opset=17)
    x = rng.uniform(-1, 1, (1, 64, 1)).astype(np.float32)
    got = run_model(tmp, fixed_model, {"signal": x})["spec"]
    frames = np.stack([x[0, i * 8:i * 8 + 16, 0] for i in range(7)])
    full = np.fft.fft(frames, axis=1)[None]
    check_close("two-sided spec", got, np.stack([full.real, full.imag], -1).astype(np.float32))
    shapes = dynscope("--shapes", fixed_model).stdout
    if "(1, 7, 16, 2)" not in shapes:
        raise Failure("the fixed STFT is not (1, 7, 16, 2): %r" % shapes)
    return " ".join(spec[0].split()[2:])


def test_convert_to_mxnet(tmp):
    """--save converts an ONNX model to MXNet JSON and a .params file that run bit for bit as
    the .onnx does, output names kept: a Conv-BatchNormalization-Relu model (its statistics
    saved as aux:) and a Loop whose body reads a constant; the JSON saves back byte for byte;
    a model with nodes the engine cannot run is not converted."""
    rng = np.random.default_rng(5)
    g = h.make_graph(
        [h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
         h.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["n"]),
         h.make_node("Relu", ["n"], ["features"])],
        "conv_bn", [vi("x", T.FLOAT, ["batch", 2, 5, 5])],
        [vi("features", T.FLOAT, ["batch", 3, 5, 5])],
        [nh.from_array(rng.standard_normal((3, 2, 3, 3)).astype(np.float32), "w"),
         nh.from_array(np.array([1.0, 0.5, 2.0], np.float32), "scale"),
         nh.from_array(np.array([0.1, -0.2, 0.0], np.float32), "bias"),
         nh.from_array(np.array([0.3, -0.1, 0.2], np.float32), "mean"),
         nh.from_array(np.array([1.5, 0.7, 0.9], np.float32), "var")])
    cases = [(save(g, os.path.join(tmp, "conv_bn.onnx"), opset=13), "conv_bn-symbol.json",
              "conv_bn-0000.params", {"x": rng.standard_normal((2, 2, 5, 5)).astype(np.float32)}),
             (loop_model(os.path.join(tmp, "loop.onnx")), "loop.json", "loop.params",
              {"M": np.array(3, np.int64), "x": np.array([1, 2, 3], np.float32),
               "v0": np.zeros(3, np.float32)})]
    for model, symbol, params, inputs in cases:
        symbol, params = os.path.join(tmp, symbol), os.path.join(tmp, params)
        said = dynscope("--save", symbol, model).stdout
        if params not in said or not os.path.exists(params):
            raise Failure("no %s beside %s: %r" % (params, symbol, said))
        want = run_model(tmp, model, inputs)
        got = run_model(tmp, symbol, inputs, extra=("--params", params))
        if sorted(got) != sorted(want):
            raise Failure("outputs %s, want %s" % (sorted(got), sorted(want)))
        for name in want:
            if not np.array_equal(got[name], want[name]):
                raise Failure("%s: %r, want %r" % (name, got[name].tolist(), want[name].tolist()))
        again = os.path.join(tmp, "again.json")
        dynscope("--save", again, symbol)
        with open(symbol, "rb") as a, open(again, "rb") as b:
            if a.read() != b.read():
                raise Failure("%s does not save back byte for byte" % symbol)
    with open(os.path.join(tmp, "conv_bn-0000.params"), "rb") as f:
        stored = f.read()
    for key in (b"aux:mean", b"aux:var", b"arg:w", b"arg:scale"):
        if key not in stored:
            raise Failure("conv_bn-0000.params has no %r" % key)
    bad = unsupported_model(os.path.join(tmp, "bad.onnx"))
    err = dynscope("--save", os.path.join(tmp, "bad.json"), bad, expect=2).stderr.strip()
    if "cannot convert" not in err or os.path.exists(os.path.join(tmp, "bad.json")):
        raise Failure("not refused before writing: %r" % err)
    return "conv-bn and Loop bit-identical; " + err[-50:]


def test_training_domain(tmp):
    """An optimizer step of the ai.onnx.preview.training domain alone (no standard opset):
    Nesterov momentum over two tensors, first and later steps, against NumPy; a standard op in
    such a model is refused naming the missing import."""
    training = h.make_opsetid("ai.onnx.preview.training", 1)
    node = h.make_node("Momentum", ["R", "T", "X1", "X2", "G1", "G2", "V1", "V2"],
                       ["X1_new", "X2_new", "V1_new", "V2_new"], name="step", mode="nesterov",
                       alpha=0.9, beta=0.5, norm_coefficient=0.01,
                       domain="ai.onnx.preview.training")
    shapes = {"X1": [3], "X2": [2, 2], "G1": [3], "G2": [2, 2], "V1": [3], "V2": [2, 2]}
    g = h.make_graph([node], "momentum",
                     [vi("R", T.FLOAT, []), vi("T", T.INT64, [])] +
                     [vi(k, T.FLOAT, v) for k, v in shapes.items()],
                     [vi(k + "_new", T.FLOAT, shapes[k]) for k in ("X1", "X2", "V1", "V2")])
    path = os.path.join(tmp, "momentum.onnx")
    onnx.save(h.make_model(g, opset_imports=[training], producer_name="dynscope-tests"), path)
    info = dynscope("--info", path).stdout
    if "ai.onnx.preview.training 1" not in info:
        raise Failure("--info does not name the training domain: " + info.splitlines()[0])
    rng = np.random.default_rng(5)
    feeds = {k: rng.standard_normal(v).astype(np.float32) for k, v in shapes.items()}
    feeds["R"] = np.array(0.1, np.float32)
    for t in (0, 3):
        feeds["T"] = np.array(t, np.int64)
        out = run_model(tmp, path, feeds)
        beta = 0.5 if t > 0 else 1.0
        for k in ("1", "2"):
            x, gr, v = feeds["X" + k], feeds["G" + k], feeds["V" + k]
            greg = 0.01 * x + gr
            v_new = 0.9 * v + beta * greg
            check_close("V%s_new, T=%d" % (k, t), out["V%s_new" % k], v_new)
            check_close("X%s_new, T=%d" % (k, t), out["X%s_new" % k],
                        x - 0.1 * (greg + 0.9 * v_new))
    g = h.make_graph([h.make_node("Relu", ["x"], ["y"], name="relu")], "g",
                     [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])])
    bad = os.path.join(tmp, "training-only.onnx")
    onnx.save(h.make_model(g, opset_imports=[training]), bad)
    err = dynscope("--run", bad, "--random-inputs", expect=2).stderr
    if "'relu'" not in err or "no version of the standard operator set" not in err:
        raise Failure("the refusal does not say why: " + err)
    return "T = 0 and 3; " + err.strip()[-60:]


def test_opset_range(tmp):
    g = h.make_graph([h.make_node("Relu", ["x"], ["y"])], "g", [vi("x", T.FLOAT, [2])],
                     [vi("y", T.FLOAT, [2])])
    for opset in (22, 23):
        model = save(g, os.path.join(tmp, "opset%d.onnx" % opset), opset=opset)
        err = dynscope("--info", model, expect=2).stderr
        if "opset %d" % opset not in err or "7 to 21" not in err:
            raise Failure("opset %d: %s" % (opset, err))
    # Older opsets load; an op whose form changed since is listed (Add lost `broadcast` in 7).
    g = h.make_graph([h.make_node("Add", ["x", "x"], ["y"], name="old_add")], "g",
                     [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])])
    model = save(g, os.path.join(tmp, "opset5.onnx"), opset=5)
    err = dynscope("--run", model, "--random-inputs", expect=2).stderr
    if "'old_add' (Add: its opset 5 form is not supported" not in err:
        raise Failure("opset 5 Add: " + err)


def ints(name, values):
    return h.make_tensor(name, T.INT64, [len(values)], values)


def test_newer_opsets(tmp):
    """Opsets 18 to 21: the forms that changed (axes as inputs, Split's num_outputs, Pad's axes,
    Mish, Gelu, type-only bumps) against NumPy; a form no translator knows names its version."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 7, 4)).astype(np.float32)
    nodes = [
        h.make_node("ReduceMax", ["x", "ax1"], ["rmax"], keepdims=0),
        h.make_node("ReduceMean", ["x", "ax_last"], ["rmean"]),
        h.make_node("ReduceL2", ["x"], ["rl2"], keepdims=0),
        h.make_node("Split", ["x"], ["s0", "s1", "s2"], axis=1, num_outputs=3),
        h.make_node("Pad", ["x", "pads", "", "ax_last"], ["padded"], mode="edge"),
        h.make_node("Mish", ["x"], ["mish"]),
    ]
    inits = [ints("ax1", [1]), ints("ax_last", [-1]), ints("pads", [1, 2])]
    outs = {"rmax": [2, 4], "rmean": [2, 7, 1], "rl2": [], "s0": [2, 3, 4], "s1": [2, 3, 4],
            "s2": [2, 1, 4], "padded": [2, 7, 7], "mish": [2, 7, 4]}
    g = h.make_graph(nodes, "g", [vi("x", T.FLOAT, [2, 7, 4])],
                     [vi(k, T.FLOAT, v) for k, v in outs.items()], initializer=inits)
    got = run_model(tmp, save(g, os.path.join(tmp, "opset18.onnx"), opset=18), {"x": x})
    softplus = np.log1p(np.exp(x.astype(np.float64)))
    want = {"rmax": x.max(axis=1), "rmean": x.mean(axis=-1, keepdims=True),
            "rl2": np.float32(np.sqrt((x.astype(np.float64) ** 2).sum())),
            "s0": x[:, 0:3], "s1": x[:, 3:6], "s2": x[:, 6:7],
            "padded": np.pad(x, [(0, 0), (0, 0), (1, 2)], mode="edge"),
            "mish": (x * np.tanh(softplus)).astype(np.float32)}
    for k, v in want.items():
        check_close(k, got[k], np.asarray(v, dtype=np.float32))

    # Gelu-20 both ways; a chain of ops whose opset-21 versions only added types.
    nodes = [
        h.make_node("Gelu", ["x"], ["gelu"]),
        h.make_node("Gelu", ["x"], ["gelu_tanh"], approximate="tanh"),
        h.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
        h.make_node("Flatten", ["t"], ["f"], axis=1),
        h.make_node("Cast", ["f"], ["c"], to=T.DOUBLE),
        h.make_node("Shape", ["c"], ["shape"]),
    ]
    outs = [vi("gelu", T.FLOAT, [2, 7, 4]), vi("gelu_tanh", T.FLOAT, [2, 7, 4]),
            vi("c", T.DOUBLE, [2, 28]), vi("shape", T.INT64, [2])]
    g = h.make_graph(nodes, "g", [vi("x", T.FLOAT, [2, 7, 4])], outs)
    got = run_model(tmp, save(g, os.path.join(tmp, "opset21.onnx"), opset=21), {"x": x})
    xd = x.astype(np.float64)
    erf = np.vectorize(math.erf)
    check_close("gelu", got["gelu"], (0.5 * xd * (1 + erf(xd / math.sqrt(2)))).astype(np.float32))
    tanh_form = 0.5 * xd * (1 + np.tanh(math.sqrt(2 / math.pi) * (xd + 0.044715 * xd ** 3)))
    check_close("gelu_tanh", got["gelu_tanh"], tanh_form.astype(np.float32))
    check_close("c", got["c"], x.transpose(0, 2, 1).reshape(2, 28).astype(np.float64))
    if got["shape"].tolist() != [2, 28]:
        raise Failure("Shape: %r" % got["shape"].tolist())

    # The bitwise ops of opset 18 on int32 and uint8.
    nodes = [h.make_node("BitwiseAnd", ["i", "j"], ["and"]),
             h.make_node("BitwiseOr", ["i", "j"], ["or"]),
             h.make_node("BitwiseXor", ["i", "j"], ["xor"]),
             h.make_node("BitwiseNot", ["i"], ["not"]),
             h.make_node("BitwiseNot", ["u"], ["unot"]),
             h.make_node("BitwiseXor", ["u", "u1"], ["uxor"])]
    g = h.make_graph(nodes, "g", [vi("i", T.INT32, [2, 3]), vi("j", T.INT32, [3]),
                                  vi("u", T.UINT8, [4]), vi("u1", T.UINT8, [1])],
                     [vi(k, T.INT32, [2, 3]) for k in ("and", "or", "xor", "not")] +
                     [vi("unot", T.UINT8, [4]), vi("uxor", T.UINT8, [4])])
    i = np.array([[3, -16, 1], [0, 255, -1]], dtype=np.int32)
    j = np.array([6, 7, -1], dtype=np.int32)
    u = np.array([16, 4, 0, 255], dtype=np.uint8)
    u1 = np.array([0xF0], dtype=np.uint8)
    got = run_model(tmp, save(g, os.path.join(tmp, "bitwise18.onnx"), opset=18),
                    {"i": i, "j": j, "u": u, "u1": u1})
    for k, want in (("and", i & j), ("or", i | j), ("xor", i ^ j), ("not", ~i), ("unot", ~u),
                    ("uxor", u ^ u1)):
        if got[k].dtype != want.dtype or got[k].tolist() != want.tolist():
            raise Failure("%s: got %s %r, want %r" % (k, got[k].dtype, got[k].tolist(),
                                                    want.tolist()))

    # ReduceMax-20 and ReduceMin-20 on bool: any and all.
    g = h.make_graph([h.make_node("ReduceMax", ["b", "ax1"], ["any"], keepdims=0),
                      h.make_node("ReduceMin", ["b"], ["all"], keepdims=0)], "g",
                     [vi("b", T.BOOL, [2, 3])], [vi("any", T.BOOL, [2]), vi("all", T.BOOL, [])],
                     initializer=[ints("ax1", [1])])
    b = np.array([[True, False, False], [False, False, False]])
    got = run_model(tmp, save(g, os.path.join(tmp, "bool20.onnx"), opset=20), {"b": b})
    if got["any"].tolist() != [True, False] or got["all"].tolist() is not False:
        raise Failure("bool reductions: %r %r" % (got["any"].tolist(), got["all"].tolist()))

    # A form newer than any translator knows is named with its version, before running.
    g = h.make_graph([h.make_node("Resize", ["x", "", "scales"], ["y"], name="sym_resize",
                                  coordinate_transformation_mode="half_pixel_symmetric"),
                      h.make_node("ReduceProd", ["x", "axes"], ["p"], name="run_time_axes")],
                     "g", [vi("x", T.FLOAT, [1, 1, 2, 2]), vi("axes", T.INT64, [1])],
                     [vi("y", T.FLOAT, None), vi("p", T.FLOAT, None)],
                     initializer=[h.make_tensor("scales", T.FLOAT, [4], [1, 1, 2, 2])])
    err = dynscope("--run", save(g, os.path.join(tmp, "opset19.onnx"), opset=19),
                   "--random-inputs", expect=2).stderr
    for want in ("'sym_resize' (Resize: coordinate_transformation_mode 'half_pixel_symmetric'",
                 "'run_time_axes' (ReduceProd: axes computed at run time"):
        if want not in err:
            raise Failure("want %r in: %s" % (want, err))
    g = h.make_graph([h.make_node("DFT", ["x"], ["y"], name="dft20")], "g",
                     [vi("x", T.FLOAT, [1, 8, 1])], [vi("y", T.FLOAT, None)])
    err = dynscope("--run", save(g, os.path.join(tmp, "dft20.onnx"), opset=20),
                   "--random-inputs", expect=2).stderr
    if "'dft20' (DFT: its form DFT-20 (opset 20) is not supported, only those through opset 17" \
            not in err:
        raise Failure("DFT-20: " + err)


def external_model(tmp, location):
    w = nh.from_array(np.arange(4, dtype=np.float32), "W")
    w.data_location = T.EXTERNAL
    w.ClearField("raw_data")
    for key, value in (("location", location), ("offset", "8"), ("length", "16")):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    g = h.make_graph([h.make_node("Add", ["x", "W"], ["y"])], "ext", [vi("x", T.FLOAT, [4])],
                     [vi("y", T.FLOAT, [4])], [w])
    return save(g, os.path.join(tmp, "model", "ext.onnx"))


def test_external_data(tmp):
    os.makedirs(os.path.join(tmp, "model"))
    with open(os.path.join(tmp, "model", "weights.bin"), "wb") as f:
        f.write(b"\0" * 8 + np.array([1, 2, 3, 4], np.float32).tobytes())
    with open(os.path.join(tmp, "outside.bin"), "wb") as f:
        f.write(b"\0" * 24)
    model = external_model(tmp, "weights.bin")
    out = run_model(tmp, model, {"x": np.ones(4, np.float32)})
    check_close("y", out["y"], np.array([2, 3, 4, 5], np.float32))
    for location, says in (("../outside.bin", "leaves the model's folder"),
                           (os.path.join(tmp, "outside.bin"), "relative to the model's folder"),
                           ("link.bin", "resolves outside")):
        if location == "link.bin":
            os.symlink(os.path.join(tmp, "outside.bin"), os.path.join(tmp, "model", "link.bin"))
        model = external_model(tmp, location)
        err = dynscope("--info", model, expect=2).stderr
        if says not in err or "initializer 'W'" not in err:
            raise Failure("%s: %s" % (location, err))
    return "read at offset 8; three escapes refused"


def test_node_order(tmp):
    # A producer written after its readers (converters emit a late Cast), and an If whose
    # branch reads a value that a later node of the outer graph produces.
    then_g = h.make_graph([h.make_node("Add", ["scaled", "one"], ["t"])], "then", [],
                          [vi("t", T.FLOAT, [3])])
    else_g = h.make_graph([h.make_node("Neg", ["scaled"], ["e"])], "else", [],
                          [vi("e", T.FLOAT, [3])])
    one = nh.from_array(np.ones(3, np.float32), "one")
    nodes = [
        h.make_node("If", ["b"], ["y"], then_branch=then_g, else_branch=else_g, name="choose"),
        h.make_node("Mul", ["xf", "xf"], ["scaled"], name="square"),
        h.make_node("Cast", ["x"], ["xf"], to=T.FLOAT, name="graph_input_cast_0"),
    ]
    g = h.make_graph(nodes, "late", [vi("b", T.BOOL, []), vi("x", T.INT32, [3])],
                     [vi("y", T.FLOAT, [3])], [one])
    model = save(g, os.path.join(tmp, "late.onnx"))
    x = np.array([1, -2, 3], np.int32)
    xf = x.astype(np.float32)
    check_close("then", run_model(tmp, model, {"b": np.array(True), "x": x})["y"], xf * xf + 1)
    check_close("else", run_model(tmp, model, {"b": np.array(False), "x": x})["y"], -(xf * xf))
    # A real cycle stays an error naming a node on it.
    g = h.make_graph([h.make_node("Add", ["x", "q"], ["p"], name="first"),
                      h.make_node("Relu", ["p"], ["q"], name="second")], "cycle",
                     [vi("x", T.FLOAT, [2])], [vi("q", T.FLOAT, [2])])
    model = save(g, os.path.join(tmp, "cycle.onnx"))
    err = dynscope("--info", model, expect=2).stderr.strip()
    if "cycle" not in err or ("'first'" not in err and "'second'" not in err) or \
            len(err.splitlines()) != 1:
        raise Failure("cycle: " + err)
    return err[-80:]


def test_many_captures(tmp):
    # Exported speech models capture hundreds of outer values in one If; a Loop and a Scan
    # the same, and a Scan over many inputs at once. No fixed bound applies anywhere.
    n = 180
    x = np.array([1, -2, 3], np.float32)
    scales = np.arange(1, n + 1, dtype=np.float32) / 8
    outer = [h.make_node("Mul", ["x", "c%d" % i], ["w%d" % i]) for i in range(n)]
    consts = [nh.from_array(np.array(scales[i], np.float32), "c%d" % i) for i in range(n)]

    def chain(names, out, prefix):
        nodes, acc = [], names[0]
        for k, name in enumerate(names[1:]):
            result = out if k == len(names) - 2 else "%s%d" % (prefix, k)
            nodes.append(h.make_node("Add", [acc, name], [result]))
            acc = result
        return nodes

    then_g = h.make_graph(chain(["w%d" % i for i in range(n)], "t", "ta"), "then", [],
                          [vi("t", T.FLOAT, [3])])
    else_g = h.make_graph(chain(["w%d" % i for i in range(0, n, 2)], "e", "ea"), "else", [],
                          [vi("e", T.FLOAT, [3])])
    n_loop = 100
    body = h.make_graph(chain(["v_in"] + ["w%d" % i for i in range(n_loop)], "v_out", "la") +
                        [h.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
                        [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("v_in", T.FLOAT, [3])],
                        [vi("cond_out", T.BOOL, []), vi("v_out", T.FLOAT, [3])])
    n_scan = 70
    scan_body = h.make_graph(
        chain(["acc_in"] + ["xs%d" % j for j in range(n_scan)] + ["w0"], "acc_out", "sa") +
        [h.make_node("Identity", ["acc_out"], ["ys"])], "scan_body",
        [vi("acc_in", T.FLOAT, [3])] + [vi("xs%d" % j, T.FLOAT, [3]) for j in range(n_scan)],
        [vi("acc_out", T.FLOAT, [3]), vi("ys", T.FLOAT, [3])])
    nodes = outer + [
        h.make_node("If", ["b"], ["y"], then_branch=then_g, else_branch=else_g, name="choose"),
        h.make_node("Loop", ["M", "", "x"], ["v"], body=body, name="loop"),
        h.make_node("Scan", ["x"] + ["X%d" % j for j in range(n_scan)], ["acc", "Y"],
                    body=scan_body, num_scan_inputs=n_scan, name="scan"),
    ]
    g = h.make_graph(nodes, "captures",
                     [vi("b", T.BOOL, []), vi("x", T.FLOAT, [3]), vi("M", T.INT64, [])] +
                     [vi("X%d" % j, T.FLOAT, [2, 3]) for j in range(n_scan)],
                     [vi("y", T.FLOAT, [3]), vi("v", T.FLOAT, [3]), vi("acc", T.FLOAT, [3]),
                      vi("Y", T.FLOAT, [2, 3])], consts)
    model = save(g, os.path.join(tmp, "captures.onnx"))
    scan_in = {"X%d" % j: (np.full((2, 3), j) + np.arange(2)[:, None]).astype(np.float32)
               for j in range(n_scan)}
    w = [np.float32(x * scales[i]) for i in range(n)]
    for taken in (True, False):
        out = run_model(tmp, model, dict(b=np.array(taken), x=x, M=np.array(3, np.int64),
                                         **scan_in))
        want_y = sum(w[i] for i in (range(n) if taken else range(0, n, 2)))
        check_close("y (%s)" % ("then" if taken else "else"), out["y"], want_y)
    check_close("v", out["v"], x + 3 * sum(w[:n_loop]))
    rows = [sum(scan_in["X%d" % j][r] for j in range(n_scan)) + w[0] for r in range(2)]
    check_close("Y", out["Y"], np.stack([x + rows[0], x + rows[0] + rows[1]]))
    check_close("acc", out["acc"], x + rows[0] + rows[1])
    return "If with %d captures, Loop with %d, Scan over %d inputs" % (n, n_loop, n_scan)


def test_if_branch_shapes(tmp):
    # PyTorch exports squeeze(x, 2) on a dynamic dim as an If: Squeeze when the dim is 1, else
    # Identity. The branches give different ranks, and the then branch cannot be inferred
    # while s is not known to be 1; a second If gives (2, 3) or (5, 3).
    then_g = h.make_graph([h.make_node("Squeeze", ["x", "axis2"], ["t"])], "then", [],
                          [vi("t", T.FLOAT, None)])
    else_g = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "else", [],
                          [vi("e", T.FLOAT, None)])
    rows_then = h.make_graph([h.make_node("Constant", [], ["r2"],
                                          value=nh.from_array(np.ones((2, 3), np.float32)))],
                             "rows_then", [], [vi("r2", T.FLOAT, [2, 3])])
    rows_else = h.make_graph([h.make_node("Constant", [], ["r5"],
                                          value=nh.from_array(np.zeros((5, 3), np.float32)))],
                             "rows_else", [], [vi("r5", T.FLOAT, [5, 3])])
    nodes = [
        h.make_node("Shape", ["x"], ["shape"]),
        h.make_node("Gather", ["shape", "two"], ["dim"], axis=0),
        h.make_node("Equal", ["dim", "one"], ["is_one"]),
        h.make_node("If", ["is_one"], ["y"], then_branch=then_g, else_branch=else_g,
                    name="squeeze_if"),
        h.make_node("Relu", ["y"], ["z"]),
        h.make_node("If", ["is_one"], ["rows"], then_branch=rows_then, else_branch=rows_else,
                    name="rows_if"),
    ]
    g = h.make_graph(nodes, "squeeze", [vi("x", T.FLOAT, [1, 4, "s"])],
                     [vi("z", T.FLOAT, None), vi("rows", T.FLOAT, None)],
                     [nh.from_array(np.array(2, np.int64), "two"),
                      nh.from_array(np.array(1, np.int64), "one"),
                      nh.from_array(np.array([2], np.int64), "axis2")])
    model = save(g, os.path.join(tmp, "squeeze_if.onnx"), opset=13)
    shapes = json.loads(dynscope("--shapes", model, "--json").stdout)
    text = dynscope("--shapes", model).stdout
    if not re.search(r"squeeze_if\S*\s+_cond\s+\?", text) or \
            not re.search(r"rows_if\S*\s+_cond\s+\(u\d+, 3\)", text):
        raise Failure("--shapes: " + text)
    notes = shapes.get("undecided", [])
    if not any("then branch cannot be inferred" in n for n in notes) or \
            not any("(2, 3) from the then branch and (5, 3)" in n for n in notes):
        raise Failure("notes: %r" % notes)
    rng = np.random.default_rng(3)
    for s in (1, 5):
        x = rng.standard_normal((1, 4, s)).astype(np.float32)
        out = run_model(tmp, model, {"x": x})
        want = np.maximum(x, 0)
        check_close("z (s=%d)" % s, out["z"], want[:, :, 0] if s == 1 else want)
        check_close("rows (s=%d)" % s, out["rows"],
                    np.ones((2, 3), np.float32) if s == 1 else np.zeros((5, 3), np.float32))
    return "ranks 2 and 3 by s; (2, 3) or (5, 3)"


def test_loop_carried_growth(tmp):
    # A greedy decoder: each step appends last + 1 to the carried sequence (1, n) -> (1, n+1),
    # and scans out the token it appended.
    consts = [nh.from_array(np.array([-1], np.int64), "minus1"),
              nh.from_array(np.array([2 ** 62], np.int64), "end"),
              nh.from_array(np.array([1], np.int64), "axis1"),
              nh.from_array(np.array(1, np.int64), "one")]
    body = h.make_graph([
        h.make_node("Slice", ["seq_in", "minus1", "end", "axis1"], ["last"]),
        h.make_node("Add", ["last", "one"], ["token"]),
        h.make_node("Concat", ["seq_in", "token"], ["seq_out"], axis=1),
        h.make_node("Identity", ["cond_in"], ["cond_out"]),
        h.make_node("Identity", ["token"], ["token_out"]),
    ], "step", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("seq_in", T.INT64, [1, None])],
        [vi("cond_out", T.BOOL, []), vi("seq_out", T.INT64, [1, None]),
         vi("token_out", T.INT64, [1, 1])], consts)
    g = h.make_graph([h.make_node("Loop", ["M", "", "seq0"], ["seq", "tokens"], body=body,
                                  name="decode"),
                      h.make_node("Cast", ["seq"], ["seq_f"], to=T.FLOAT),
                      h.make_node("Relu", ["seq_f"], ["after"])], "decoder",
                     [vi("M", T.INT64, []), vi("seq0", T.INT64, [1, "n"])],
                     [vi("seq", T.INT64, [1, None]), vi("tokens", T.INT64, [None, 1, 1]),
                      vi("after", T.FLOAT, [1, None])])
    model = save(g, os.path.join(tmp, "decoder.onnx"), opset=13)
    text = dynscope("--shapes", model).stdout
    m = re.search(r"decode\s+_while_loop\s+.*\(1, (u\d+)\)\s*$", text, re.M)
    if m is None or not re.search(r"Relu_after\s+relu\s+\(1, %s\)" % m.group(1), text):
        raise Failure("--shapes: the carried sequence should be (1, u<n>): " + text)
    seq0 = np.array([[3, 7]], np.int64)
    for steps in (5, 0, 40):
        out = run_model(tmp, model, {"M": np.array(steps, np.int64), "seq0": seq0})
        want = np.concatenate([seq0, 8 + np.arange(steps, dtype=np.int64)[None, :]], axis=1)
        if not np.array_equal(out["seq"], want) or \
                not np.array_equal(out["tokens"], want[0, 2:].reshape(steps, 1, 1)) or \
                not np.array_equal(out["after"], want.astype(np.float32)):
            raise Failure("%d steps: seq %r, tokens %r" % (steps, out["seq"].tolist(),
                                                         out["tokens"].ravel().tolist()))
    return "(1, 2) grows to (1, 7), (1, 42); none"


def test_loop_growth_backward(tmp):
    # The float form of the decoder above: its backward pass would need the sequence's shape
    # at every iteration, so --backward refuses it, naming the loop variable.
    consts = [nh.from_array(np.array([-1], np.int64), "minus1"),
              nh.from_array(np.array([2 ** 62], np.int64), "end"),
              nh.from_array(np.array([1], np.int64), "axis1"),
              nh.from_array(np.array(0.5, np.float32), "half")]
    body = h.make_graph([
        h.make_node("Slice", ["seq_in", "minus1", "end", "axis1"], ["last"]),
        h.make_node("Mul", ["last", "half"], ["token"]),
        h.make_node("Concat", ["seq_in", "token"], ["seq_out"], axis=1),
        h.make_node("Identity", ["cond_in"], ["cond_out"]),
    ], "step", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("seq_in", T.FLOAT, [1, None])],
        [vi("cond_out", T.BOOL, []), vi("seq_out", T.FLOAT, [1, None])], consts)
    g = h.make_graph([h.make_node("Loop", ["M", "", "seq0"], ["seq"], body=body, name="decode")],
                     "decoder", [vi("M", T.INT64, []), vi("seq0", T.FLOAT, [1, 2])],
                     [vi("seq", T.FLOAT, [1, None])])
    model = save(g, os.path.join(tmp, "float_decoder.onnx"), opset=13)
    np.save(os.path.join(tmp, "M.npy"), np.array(3, np.int64))
    np.save(os.path.join(tmp, "seq0.npy"), np.ones((1, 2), np.float32))
    proc = dynscope("--run", model, "--input", "M=%s" % os.path.join(tmp, "M.npy"), "--input",
                    "seq0=%s" % os.path.join(tmp, "seq0.npy"), "--backward", expect=2)
    line = proc.stderr.strip()
    if "\n" in line or "'decode'" not in line or "may change shape between iterations" not in line:
        raise Failure("message: " + line)
    return line


def test_empty_dims(tmp):
    # A KV cache's prefill: the past is empty (past_seq = 0), fed as a (1, 2, 0, 4) array, bound
    # with --bind, or allowed by an assumption; a fact that rules 0 out still refuses it.
    nodes = [h.make_node("Concat", ["past", "k"], ["present"], axis=2),
             h.make_node("Transpose", ["present"], ["kt"], perm=[0, 1, 3, 2]),
             h.make_node("MatMul", ["q", "kt"], ["scores"]),
             h.make_node("Softmax", ["scores"], ["p"], axis=-1),
             h.make_node("MatMul", ["p", "present"], ["out"]),
             h.make_node("ReduceSum", ["past"], ["past_sum"], keepdims=0)]
    g = h.make_graph(nodes, "kv", [vi("past", T.FLOAT, [1, 2, "past_seq", 4]),
                                   vi("k", T.FLOAT, [1, 2, "seq", 4]),
                                   vi("q", T.FLOAT, [1, 2, "seq", 4])],
                     [vi("out", T.FLOAT, [1, 2, "seq", 4]), vi("present", T.FLOAT, [1, 2, None, 4]),
                      vi("past_sum", T.FLOAT, [])])
    model = save(g, os.path.join(tmp, "kv.onnx"), opset=13)
    rng = np.random.default_rng(5)
    k, q = (rng.standard_normal((1, 2, 5, 4)).astype(np.float32) for _ in range(2))
    for past_seq in (0, 3):
        past = rng.standard_normal((1, 2, past_seq, 4)).astype(np.float32)
        out = run_model(tmp, model, {"past": past, "k": k, "q": q})
        present = np.concatenate([past, k], axis=2)
        scores = q @ present.transpose(0, 1, 3, 2)
        p = np.exp(scores - scores.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        check_close("out (past_seq=%d)" % past_seq, out["out"], p @ present)
        check_close("present (past_seq=%d)" % past_seq, out["present"], present)
        check_close("past_sum (past_seq=%d)" % past_seq, out["past_sum"], past.sum())
    text = dynscope("--shapes", model, "--bind", "past_seq=0", "--bind", "seq=5").stdout
    if "(1, 2, past_seq + seq, 4) = (1, 2, 5, 4)" not in text:
        raise Failure("--bind past_seq=0: " + text)
    text = dynscope("--shapes", model, "--assume", "past_seq in [0, 4096]").stdout
    if not re.search(r"past_seq in \[0, 4096\]", text):
        raise Failure("--assume: " + text)
    dynscope("--run", model, "--bind", "past_seq=0", "--bind", "seq=2", "--random-inputs")
    err = dynscope("--run", model, "--assume", "past_seq >= 1", "--bind", "past_seq=0",
                   "--bind", "seq=2", "--random-inputs", expect=2).stderr.strip()
    if "past_seq = 0 is outside its range [1, inf)" not in err or len(err.splitlines()) != 1:
        raise Failure("a fact ruling 0 out: " + err)
    return "past_seq = 0 fed, bound and assumed; refused under 'past_seq >= 1'"


def test_shape_arithmetic(tmp):
    # How exporters compute shapes: Shape -> Cast -> Slice / Gather -> arithmetic -> Concat with
    # Cast(Constant) parts -> Reshape, Expand and ConstantOfShape. Inference follows the values,
    # so the outputs stay expressions of batch and seq, and a Squeeze of a computed 1 works.
    def const(name, values, dtype=np.int64):
        return nh.from_array(np.array(values, dtype), name)
    nodes = [
        h.make_node("Shape", ["x"], ["shape"]),
        h.make_node("Cast", ["shape"], ["shape32"], to=T.INT32),
        h.make_node("Slice", ["shape32", "zero", "two"], ["batch_seq32"]),
        h.make_node("Cast", ["batch_seq32"], ["batch_seq"], to=T.INT64),
        h.make_node("Constant", [], ["one_c"], value=const("one_v", [1], np.int32)),
        h.make_node("Cast", ["one_c"], ["one64"], to=T.INT64),
        h.make_node("Gather", ["shape", "last"], ["width"], axis=0),
        h.make_node("Mul", ["width", "two_scalar"], ["width2"]),
        h.make_node("Div", ["width2", "four_scalar"], ["half_width"]),
        h.make_node("Unsqueeze", ["half_width", "axis0"], ["half_width1"]),
        h.make_node("Concat", ["one64", "batch_seq", "half_width1", "two"], ["target"], axis=0),
        h.make_node("Reshape", ["x", "target"], ["reshaped"]),
        h.make_node("Squeeze", ["reshaped", "axis0"], ["squeezed"]),
        h.make_node("Concat", ["batch_seq", "minus1"], ["target2"], axis=0),
        h.make_node("Reshape", ["x", "target2"], ["flat"]),
        h.make_node("Expand", ["bias", "shape"], ["expanded"]),
        h.make_node("ConstantOfShape", ["batch_seq"], ["mask"],
                    value=nh.from_array(np.array([1], np.float32))),
        # x[:, :seq - 1], arange(seq), and a Tile by (1, batch, 1), all from the shape.
        h.make_node("Gather", ["shape", "one_scalar"], ["seq_len"], axis=0),
        h.make_node("Sub", ["seq_len", "one_scalar"], ["seq_less"]),
        h.make_node("Unsqueeze", ["seq_less", "axis0"], ["seq_less1"]),
        h.make_node("Slice", ["x", "zero", "seq_less1", "one"], ["head"]),
        h.make_node("Range", ["zero_scalar", "seq_len", "one_scalar"], ["positions"]),
        h.make_node("Gather", ["shape", "zero_scalar"], ["batch_len"], axis=0),
        h.make_node("Unsqueeze", ["batch_len", "axis0"], ["batch1"]),
        h.make_node("Concat", ["one64", "batch1", "one64"], ["reps"], axis=0),
        h.make_node("Tile", ["x", "reps"], ["tiled"]),
    ]
    inits = [const("zero", [0]), const("two", [2]), const("last", -1), const("axis0", [0]),
             const("two_scalar", 2), const("four_scalar", 4), const("minus1", [-1]),
             const("one", [1]), const("one_scalar", 1), const("zero_scalar", 0),
             nh.from_array(np.arange(8, dtype=np.float32), "bias")]
    g = h.make_graph(nodes, "shapes", [vi("x", T.FLOAT, ["batch", "seq", 8])],
                     [vi("squeezed", T.FLOAT, None), vi("flat", T.FLOAT, None),
                      vi("expanded", T.FLOAT, None), vi("mask", T.FLOAT, None),
                      vi("head", T.FLOAT, None), vi("positions", T.INT64, None),
                      vi("tiled", T.FLOAT, None)], inits)
    model = save(g, os.path.join(tmp, "shape_math.onnx"), opset=13)
    text = dynscope("--shapes", model).stdout
    for name, want in (("Squeeze_squeezed", "(batch, seq, 4, 2)"),
                       ("Reshape_flat", "(batch, seq, 8)"),
                       ("Expand_expanded", "(batch, seq, 8)"),
                       ("ConstantOfShape_mask", "(batch, seq)"),
                       ("Slice_head", "(batch, seq - 1, 8)"),
                       ("Range_positions", "(seq,)"),
                       ("Tile_tiled", "(batch, batch*seq, 8)")):
        if not re.search(r"^%s\s+\S+\s+%s\s*$" % (name, re.escape(want)), text, re.M):
            raise Failure("--shapes: %s should be %s:\n%s" % (name, want, text))
    info = json.loads(dynscope("--info", model, "--json", "--bind", "batch=2",
                               "--bind", "seq=3").stdout)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 8)).astype(np.float32)
    out = run_model(tmp, model, {"x": x})
    check_close("squeezed", out["squeezed"], x.reshape(2, 3, 4, 2))
    check_close("flat", out["flat"], x)
    check_close("expanded", out["expanded"], np.broadcast_to(np.arange(8, dtype=np.float32),
                                                             (2, 3, 8)))
    check_close("mask", out["mask"], np.ones((2, 3), np.float32))
    check_close("head", out["head"], x[:, :2])
    check_close("positions", out["positions"], np.arange(3))
    check_close("tiled", out["tiled"], np.tile(x, (1, 2, 1)))
    return "(batch, seq, 4, 2), (batch, seq, 8); %d nodes" % info["nodes"]


def test_resize_size_from_scales(tmp):
    # The output size from float32 scales is computed as ONNX Runtime does, in float: 10 rows
    # at scale 0.7f are 7.0000001f, 7 rows (the double product 6.99999988 floors to 6).
    scales = nh.from_array(np.array([1, 1, 0.7, 0.7], np.float32), "scales")
    g = h.make_graph([h.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest")],
                     "resize", [vi("x", T.FLOAT, [1, 1, 10, 10])], [vi("y", T.FLOAT, None)],
                     [scales])
    model = save(g, os.path.join(tmp, "resize_07.onnx"), opset=13)
    x = np.arange(100, dtype=np.float32).reshape(1, 1, 10, 10)
    y = run_model(tmp, model, {"x": x})["y"]
    if y.shape != (1, 1, 7, 7):
        raise Failure("shape %s, not (1, 1, 7, 7)" % (y.shape,))
    # Half-pixel coordinates (i + 0.5) / 0.7 - 0.5, rounded half down: 0.21, 1.64, 3.07, 4.5,
    # 5.93, 7.36, 8.79 give rows and columns 0, 2, 3, 4, 6, 7, 9.
    src = [0, 2, 3, 4, 6, 7, 9]
    check_close("y", y, x[:, :, src][:, :, :, src])
    # Nearest copies elements exactly, int64 beyond 2^53 included: half-pixel positions of 4
    # columns from 3 round (half down) to 0, 0, 1, 2.
    scales = nh.from_array(np.array([1, 1, 2, 1.5], np.float32), "scales")
    g = h.make_graph([h.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest")],
                     "resize_int", [vi("x", T.INT64, [1, 1, 2, 3])], [vi("y", T.INT64, None)],
                     [scales])
    model = save(g, os.path.join(tmp, "resize_int64.onnx"), opset=13)
    big = np.arange(6, dtype=np.int64).reshape(1, 1, 2, 3) + (1 << 60) + 1
    y = run_model(tmp, model, {"x": big})["y"]
    want = big[:, :, [0, 0, 1, 1]][:, :, :, [0, 0, 1, 2]]
    if y.dtype != np.int64 or not np.array_equal(y, want):
        raise Failure("int64 nearest: %r" % (y - (1 << 60)).tolist())
    return "(1, 1, 10, 10) at 0.7 gives (1, 1, 7, 7); int64 copied exactly"


def mel_reference(n_mels, dft_length, rate, lower, upper):
    """ONNX's MelWeightMatrix as its reference (and ONNX Runtime) computes it: the mel step
    divides the span by the number of points."""
    points = np.arange(n_mels + 2, dtype=np.float64)
    lo = 2595 * np.log10(1 + lower / 700)
    hi = 2595 * np.log10(1 + upper / 700)
    mel = points * ((hi - lo) / (n_mels + 2)) + lo
    bins = (((dft_length + 1) * (700 * (10 ** (mel / 2595) - 1))) // rate).astype(int)
    out = np.zeros((dft_length // 2 + 1, n_mels))
    for i in range(n_mels):
        left, center, right = bins[i], bins[i + 1], bins[i + 2]
        if center == left:
            out[center, i] = 1
        for j in range(left, center + 1 if center > left else left):
            out[j, i] = (j - left) / (center - left)
        for j in range(center, right):
            out[j, i] = (right - j) / (right - center)
    return out.astype(np.float32)


def test_mel_weight_matrix(tmp):
    # A speech front end's filterbank, its sizes given at run time.
    g = h.make_graph([h.make_node("MelWeightMatrix", ["m", "d", "sr", "lo", "hi"], ["w"])], "mel",
                     [vi("m", T.INT64, []), vi("d", T.INT64, []), vi("sr", T.INT64, []),
                      vi("lo", T.FLOAT, []), vi("hi", T.FLOAT, [])], [vi("w", T.FLOAT, None)])
    model = save(g, os.path.join(tmp, "mel.onnx"), opset=17)
    for m, d, sr, lo, hi in ((40, 512, 16000, 20.0, 8000.0), (8, 16, 8192, 0.0, 4096.0)):
        out = run_model(tmp, model, {"m": np.array(m), "d": np.array(d), "sr": np.array(sr),
                                     "lo": np.array(lo, np.float32),
                                     "hi": np.array(hi, np.float32)})["w"]
        check_close("w (%d mels, %d-point DFT)" % (m, d), out, mel_reference(m, d, sr, lo, hi))
    return "(257, 40) and (9, 8)"


def test_truncated(tmp):
    model = mlp_model(os.path.join(tmp, "mlp.onnx"))
    with open(model, "rb") as f:
        data = f.read()
    cut = os.path.join(tmp, "cut.onnx")
    with open(cut, "wb") as f:
        f.write(data[: len(data) // 2])
    err = dynscope("--info", cut, expect=2).stderr.strip()
    if "cut.onnx" not in err or len(err.splitlines()) != 1:
        raise Failure("unclear error: " + err)
    return err[-70:]


def main():
    if onnx is None:
        print("1..0 # SKIP the onnx Python package is not installed")
        return 0
    return tap.run([
        ("named dims become symbols; outputs keep their names", test_symbols_and_names),
        ("Loop with a given trip count, a captured value and scan outputs", test_loop),
        ("Loop stopped by its condition", test_loop_condition),
        ("If takes each branch; a constant inside a branch", test_if),
        ("Scan over axis 1, forward and reverse", test_scan),
        ("unsupported nodes listed once, before running", test_unsupported),
        ("RoiAlign: avg runs, max is refused naming the node", test_roi_align_modes),
        ("float16 models: widened in, narrowed out, rounded by Cast", test_half_precision),
        ("storage types: int16, uint16, uint32, uint64, bfloat16", test_storage_types),
        ("quantized models: dynamic, per-row zero points, per-channel QLinearConv",
         test_quantized),
        ("MaxPool indices in both orders; MaxUnpool to either shape", test_unpooling),
        ("spectrograms: STFT with a run-time step, DFT cut and inverted", test_spectrogram),
        ("converted to MXNet JSON and .params, bit-identical", test_convert_to_mxnet),
        ("an optimizer step of the training domain alone", test_training_domain),
        ("opsets after 21 are refused", test_opset_range),
        ("opsets 18 to 21: the changed forms, and a form no translator knows", test_newer_opsets),
        ("external data beside the model; escapes refused", test_external_data),
        ("nodes out of order are sorted; a cycle is an error naming a node",
         test_node_order),
        ("If, Loop and Scan capturing or scanning 70 to 180 values", test_many_captures),
        ("If branches of different shapes and ranks; one not inferable", test_if_branch_shapes),
        ("a Loop whose carried value grows each iteration", test_loop_carried_growth),
        ("--backward refuses a Loop whose carried value changes shape", test_loop_growth_backward),
        ("empty named dims: a KV cache's prefill", test_empty_dims),
        ("shape arithmetic keeps symbols: Reshape, Expand, ConstantOfShape, Slice, Range, Tile",
         test_shape_arithmetic),
        ("Resize's size and nearest positions from float32 scales, as ONNX Runtime computes them",
         test_resize_size_from_scales),
        ("MelWeightMatrix with its sizes given at run time", test_mel_weight_matrix),
        ("a truncated file is a one-line error", test_truncated),
    ])


if __name__ == "__main__":
    sys.exit(main())
