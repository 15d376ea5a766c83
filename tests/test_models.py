#!/usr/bin/env python3
"""Model-level tests: the dynscope engine against the NumPy reference.

Prints TAP. The first tests check the reference itself (tools/
mxnet_reference.py) against direct loops and MXNet's documented examples;
then every real model in $DS_SHARED_DIR/models/mxnet and the bundled sample
is run through `dynscope --run` and compared, output by output, with the
reference evaluated in float64 on the same float32 inputs; the last tests
check the CLI's error paths.

Environment: DS_SOURCE_DIR, DS_BUILD_DIR, DS_SHARED_DIR (set by meson);
without them the paths are taken relative to this file.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("DS_SOURCE_DIR") or os.path.dirname(HERE)
BUILD = os.environ.get("DS_BUILD_DIR") or os.path.join(SRC, "build")
SHARED = os.environ.get("DS_SHARED_DIR") or os.path.join(SRC, "..", "shared")
MODELS = os.path.join(SHARED, "models", "mxnet")
SAMPLE = os.path.join(SRC, "data", "sample")
EXE = os.path.join(BUILD, "app", "dynscope")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402
from tap import Failure  # noqa: E402
sys.path.insert(0, os.path.join(SRC, "tools"))
import mxnet_reference as ref  # noqa: E402

RTOL = 1e-3
ATOL_SCALE = 1e-4   # absolute tolerance: ATOL_SCALE * max|reference|
RUN_TIMEOUT = 600


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------

def attrs(**kw):
    return ref.Attrs({k: str(v) for k, v in kw.items()})


def first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return "(no message)"


def run_cli(args, timeout=RUN_TIMEOUT):
    if not os.path.exists(EXE):
        raise Failure("no engine binary at " + EXE)
    try:
        return subprocess.run([EXE] + args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failure("dynscope %s timed out after %d s" % (args[0], timeout))


def shape_arg(shape):
    return "(" + ", ".join(str(d) for d in shape) + ")"


def compare(name, ours, want, notes):
    """Compare one engine output with the reference; append a diagnostic."""
    ours = np.asarray(ours, dtype=np.float64)
    if ours.shape != want.shape:
        raise Failure("%s: shape %s, reference %s" % (name, ours.shape, want.shape))
    if not np.all(np.isfinite(ours)):
        raise Failure("%s: non-finite values in the engine's output" % name)
    scale = float(np.abs(want).max()) if want.size else 0.0
    atol = ATOL_SCALE * max(scale, 1e-30)
    err = np.abs(ours - want)
    max_abs = float(err.max()) if err.size else 0.0
    max_rel = float((err / np.maximum(np.abs(want), atol)).max()) if err.size else 0.0
    notes.append("%s %s: max abs err %.3g, max rel err %.3g (max |ref| %.3g)"
                 % (name, tuple(want.shape), max_abs, max_rel, scale))
    if not np.allclose(ours, want, rtol=RTOL, atol=atol):
        worst = np.unravel_index(np.argmax(err - RTOL * np.abs(want)), err.shape)
        raise Failure("%s differs: at %s engine %.6g reference %.6g (max abs err %.3g)"
                      % (name, tuple(int(i) for i in worst), ours[worst], want[worst], max_abs))


# ---------------------------------------------------------------------------
# Checks of the reference itself
# ---------------------------------------------------------------------------

def direct_convolution(x, w, b, stride, pad, dilate, groups):
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    fg = f // groups
    oh = (h + 2 * pad[0] - dilate[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * pad[1] - dilate[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, f, oh, ow))
    for i in range(n):
        for o in range(f):
            g = o // fg
            for r in range(oh):
                for s in range(ow):
                    acc = b[o]
                    for ci in range(cg):
                        for u in range(kh):
                            for v in range(kw):
                                hy = r * stride[0] - pad[0] + u * dilate[0]
                                wx = s * stride[1] - pad[1] + v * dilate[1]
                                if 0 <= hy < h and 0 <= wx < wd:
                                    acc += x[i, g * cg + ci, hy, wx] * w[o, ci, u, v]
                    y[i, o, r, s] = acc
    return y


def test_reference_convolution(notes):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 4, 9, 8))
    w = rng.normal(size=(6, 2, 3, 2))
    b = rng.normal(size=6)
    got = ref.op_convolution(attrs(kernel="(3, 2)", stride="(2, 1)", pad="(1, 2)",
                                   dilate="(2, 1)", num_group=2, num_filter=6),
                             [x, w, b])
    want = direct_convolution(x, w, b, (2, 1), (1, 2), (2, 1), 2)
    if got.shape != want.shape or not np.allclose(got, want, rtol=1e-12, atol=1e-12):
        raise Failure("Convolution differs from the direct loop")
    notes.append("grouped, strided, padded, dilated 2-D convolution: shape %s" % (got.shape,))


def direct_pooling(x, kernel, stride, pad, pool_type, convention, count_include_pad):
    """MXNet's CPU pooling loops (src/operator/nn/pool.h), written out."""
    n, c, h, w = x.shape

    def out_size(size, k, p, s):
        if convention == "valid":
            return (size + 2 * p - k) // s + 1
        return -(-(size + 2 * p - k) // s) + 1

    oh = out_size(h, kernel[0], pad[0], stride[0])
    ow = out_size(w, kernel[1], pad[1], stride[1])
    y = np.zeros((n, c, oh, ow))
    for i in range(n):
        for ch in range(c):
            for r in range(oh):
                for s in range(ow):
                    hs, ws = r * stride[0] - pad[0], s * stride[1] - pad[1]
                    if pool_type == "max":
                        he, we = min(hs + kernel[0], h), min(ws + kernel[1], w)
                        hs, ws = max(hs, 0), max(ws, 0)
                        best = ref.FLOAT32_LOWEST
                        for u in range(hs, he):
                            for v in range(ws, we):
                                best = max(best, x[i, ch, u, v])
                        y[i, ch, r, s] = best
                        continue
                    he, we = min(hs + kernel[0], h + pad[0]), min(ws + kernel[1], w + pad[1])
                    size = (he - hs) * (we - ws)
                    hs, ws = max(hs, 0), max(ws, 0)
                    he, we = min(he, h), min(we, w)
                    if not count_include_pad:
                        size = (he - hs) * (we - ws)
                    total = x[i, ch, hs:he, ws:we].sum()
                    if pool_type == "sum":
                        y[i, ch, r, s] = total
                    else:
                        y[i, ch, r, s] = total / size if size else np.nan
    return y


def test_reference_pooling(notes):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(1, 3, 9, 8))
    cases = [
        ("max", "valid", (3, 3), (2, 2), (1, 1), True),
        ("max", "full", (3, 3), (2, 2), (0, 0), True),
        ("max", "full", (2, 3), (2, 2), (1, 1), True),
        ("avg", "valid", (3, 3), (2, 2), (1, 1), True),
        ("avg", "full", (3, 2), (2, 3), (1, 1), True),
        ("avg", "full", (3, 2), (2, 3), (1, 1), False),
        ("sum", "full", (2, 2), (2, 2), (0, 1), True),
    ]
    for pool_type, conv, k, s, p, cip in cases:
        a = attrs(kernel=k, stride=s, pad=p, pool_type=pool_type,
                  pooling_convention=conv, count_include_pad=cip)
        got = ref.op_pooling(a, [x])
        want = direct_pooling(x, k, s, p, pool_type, conv, cip)
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-12, atol=1e-12,
                                                       equal_nan=True):
            raise Failure("Pooling %s/%s kernel %s stride %s pad %s count_include_pad %s "
                          "differs from the direct loop" % (pool_type, conv, k, s, p, cip))
    got = ref.op_pooling(attrs(kernel=(1, 1), pool_type="avg", global_pool=True), [x])
    if not np.allclose(got[:, :, 0, 0], x.mean(axis=(2, 3)), rtol=1e-12):
        raise Failure("global average Pooling differs from the mean")
    notes.append("%d pooling variants and global pooling agree with the loops" % len(cases))


def direct_rnn(mode, x, params, h0, c0, layers, hidden, dirs):
    """The fused RNN by the element, reading the flat parameter vector by
    offset like src/operator/rnn_impl.h: per layer and direction
    [W_i2h | W_h2h], then all biases [b_i2h | b_h2h]; gates i, f, g, o
    (lstm) or r, z, n (gru)."""
    t_len, batch, in0 = x.shape
    gates = ref.RNN_GATES[mode]
    sig = ref.sigmoid
    wsize = 0
    for layer in range(layers):
        isz = in0 if layer == 0 else dirs * hidden
        wsize += dirs * gates * hidden * (isz + hidden)
    w_off, b_off = 0, wsize
    seq = x
    for layer in range(layers):
        isz = seq.shape[2]
        out = np.zeros((t_len, batch, dirs * hidden))
        for d in range(dirs):
            k = layer * dirs + d
            h = h0[k].copy()
            c = c0[k].copy() if mode == "lstm" else None
            steps = range(t_len) if d == 0 else range(t_len - 1, -1, -1)
            for t in steps:
                hn = np.zeros_like(h)
                cn = np.zeros_like(h)
                for j in range(batch):
                    for q in range(hidden):
                        xs, hs = [], []   # input and hidden parts of each gate
                        for gi in range(gates):
                            row = gi * hidden + q
                            xs.append(params[b_off + row] + sum(
                                params[w_off + row * isz + m] * seq[t, j, m] for m in range(isz)))
                            hs.append(params[b_off + gates * hidden + row] + sum(
                                params[w_off + gates * hidden * isz + row * hidden + m] * h[j, m]
                                for m in range(hidden)))
                        if mode == "lstm":
                            ig, fg = sig(xs[0] + hs[0]), sig(xs[1] + hs[1])
                            gg, og = np.tanh(xs[2] + hs[2]), sig(xs[3] + hs[3])
                            cn[j, q] = fg * c[j, q] + ig * gg
                            hn[j, q] = og * np.tanh(cn[j, q])
                        elif mode == "gru":
                            rg, zg = sig(xs[0] + hs[0]), sig(xs[1] + hs[1])
                            ng = np.tanh(xs[2] + rg * hs[2])
                            hn[j, q] = (1 - zg) * ng + zg * h[j, q]
                        elif mode == "rnn_relu":
                            hn[j, q] = max(xs[0] + hs[0], 0.0)
                        else:
                            hn[j, q] = np.tanh(xs[0] + hs[0])
                h, c = hn, cn
                out[t, :, d * hidden:(d + 1) * hidden] = h
            w_off += gates * hidden * (isz + hidden)
            b_off += 2 * gates * hidden
        seq = out
    return seq


def test_reference_rnn(notes):
    rng = np.random.default_rng(3)
    for mode in ("lstm", "gru", "rnn_tanh", "rnn_relu"):
        for layers, dirs in ((2, 1), (2, 2)):
            t_len, batch, isz, hidden = 4, 2, 3, 5
            size = ref.rnn_param_size(layers, dirs, isz, hidden, ref.RNN_GATES[mode])
            params = rng.uniform(-0.5, 0.5, size)
            x = rng.normal(size=(t_len, batch, isz))
            h0 = rng.normal(size=(layers * dirs, batch, hidden))
            c0 = rng.normal(size=(layers * dirs, batch, hidden))
            a = attrs(mode=mode, num_layers=layers, state_size=hidden,
                      bidirectional=(dirs == 2), state_outputs=True)
            ins = [x, params, h0, c0] if mode == "lstm" else [x, params, h0]
            got = ref.op_rnn(a, ins)[0]
            want = direct_rnn(mode, x, params, h0, c0, layers, hidden, dirs)
            if got.shape != want.shape or not np.allclose(got, want, rtol=1e-12, atol=1e-12):
                raise Failure("RNN %s (%d layers, %d directions) differs from the cell loop"
                              % (mode, layers, dirs))
    notes.append("lstm, gru, rnn_tanh, rnn_relu; 2 layers, uni- and bidirectional")


RESHAPE_EXAMPLES = [
    # (input shape, shape attr, reverse, expected) from MXNet's Reshape docs
    ((2, 3, 4), (4, 0, 2), False, (4, 3, 2)),
    ((2, 3, 4), (2, 0, 0), False, (2, 3, 4)),
    ((2, 3, 4), (6, 1, -1), False, (6, 1, 4)),
    ((2, 3, 4), (3, -1, 8), False, (3, 1, 8)),
    ((2, 3, 4), (-1,), False, (24,)),
    ((2, 3, 4), (-2,), False, (2, 3, 4)),
    ((2, 3, 4), (2, -2), False, (2, 3, 4)),
    ((2, 3, 4), (-2, 1, 1), False, (2, 3, 4, 1, 1)),
    ((2, 3, 4), (-3, 4), False, (6, 4)),
    ((2, 3, 4, 5), (-3, -3), False, (6, 20)),
    ((2, 3, 4), (0, -3), False, (2, 12)),
    ((2, 3, 4), (-3, -2), False, (6, 4)),
    ((2, 3, 4), (-4, 1, 2, -2), False, (1, 2, 3, 4)),
    ((2, 3, 4), (2, -4, -1, 3, -2), False, (2, 1, 3, 4)),
    ((10, 5, 4), (-1, 0), False, (40, 5)),
    ((10, 5, 4), (-1, 0), True, (50, 4)),
    # shapes used by the BERT graph
    ((1, 12, 384, 64), (-1, 0, 0), True, (12, 384, 64)),
    ((12, 384, 384), (-1, 12, 0, 0), True, (1, 12, 384, 384)),
    ((1, 384, 768), (0, 0, 12, -1), False, (1, 384, 12, 64)),
]


def test_reference_reshape(notes):
    for dshape, spec, reverse, want in RESHAPE_EXAMPLES:
        got = ref.reshape_target(spec, dshape, reverse)
        if got != want:
            raise Failure("Reshape %s shape=%s reverse=%s gave %s, documented %s"
                          % (dshape, spec, reverse, got, want))
    x = np.arange(24.0).reshape(2, 3, 4)
    y = ref.op_reshape(attrs(shape="(-4, 1, 2, -2)"), [x])
    if y.shape != (1, 2, 3, 4) or not np.array_equal(y.ravel(), x.ravel()):
        raise Failure("Reshape does not keep the row-major order")
    notes.append("%d documented Reshape examples" % len(RESHAPE_EXAMPLES))


def test_reference_misc(notes):
    # _arange with stop=None counts from 0 to start.
    a = ref.src_arange(attrs(start=4, stop="None", step=1.0, repeat=2), None)
    if not np.array_equal(a, [0, 0, 1, 1, 2, 2, 3, 3]):
        raise Failure("_arange(start=4, repeat=2) gave %s" % a)
    # SequenceMask along axis 1 (batch-major) and axis 0 (time-major).
    x = np.ones((2, 4, 3))
    m = ref.op_sequence_mask(attrs(axis=1, use_sequence_length=True, value=-1),
                             [x, np.array([1.0, 3.0])])
    if m[0, :, 0].tolist() != [1, -1, -1, -1] or m[1, :, 2].tolist() != [1, 1, 1, -1]:
        raise Failure("SequenceMask axis=1 wrong")
    m = ref.op_sequence_mask(attrs(use_sequence_length=True),
                             [np.ones((3, 2)), np.array([2.0, 1.0])])
    if m.tolist() != [[1, 1], [1, 0], [0, 0]]:
        raise Failure("SequenceMask axis=0 wrong")
    # batch_dot with transpose_b, broadcast_axis, where, Embedding clipping.
    p = np.arange(12.0).reshape(2, 2, 3)
    q = np.arange(12.0).reshape(2, 2, 3) + 1
    bd = ref.op_batch_dot(attrs(transpose_b=True), [p, q])
    if not np.allclose(bd, np.einsum("bik,bjk->bij", p, q)):
        raise Failure("batch_dot transpose_b wrong")
    ba = ref.op_broadcast_axis(attrs(axis="(1,)", size="(3,)"), [np.array([[[1.0]], [[2.0]]])])
    if ba.shape != (2, 3, 1) or ba[1, 2, 0] != 2.0:
        raise Failure("broadcast_axis wrong")
    emb = ref.op_embedding(attrs(input_dim=3, output_dim=1),
                           [np.array([-1.0, 0.0, 2.7, 9.0]), np.array([[10.0], [20.0], [30.0]])])
    if emb.ravel().tolist() != [10.0, 10.0, 30.0, 30.0]:
        raise Failure("Embedding index conversion wrong: %s" % emb.ravel())
    ln = ref.op_layer_norm(attrs(eps=0), [np.array([[1.0, 3.0]]), np.ones(2), np.zeros(2)])[0]
    if not np.allclose(ln, [[-1.0, 1.0]]):
        raise Failure("LayerNorm wrong")
    bn = ref.op_batch_norm(attrs(eps=0), [np.full((1, 1, 1), 3.0), np.array([5.0]),
                                          np.array([1.0]), np.array([1.0]), np.array([4.0])])[0]
    if not np.allclose(bn, 2.0):   # fix_gamma defaults to True: gamma ignored
        raise Failure("BatchNorm fix_gamma default wrong")
    # arange_like: MXNet's documented examples (3x4 data; all elements, then axis=-1).
    x = np.zeros((3, 4))
    al = ref.op_arange_like(attrs(start=0), [x])
    if al.shape != (3, 4) or al.ravel().tolist() != list(range(12)):
        raise Failure("arange_like without an axis gave %s" % al)
    al = ref.op_arange_like(attrs(start=0, axis=-1), [x])
    if al.tolist() != [0, 1, 2, 3]:
        raise Failure("arange_like axis=-1 gave %s" % al)
    al = ref.op_arange_like(attrs(start=1, step=2, repeat=2, axis=1), [x])
    if al.tolist() != [1, 1, 3, 3]:
        raise Failure("arange_like repeat=2 gave %s" % al)
    bl = ref.op_broadcast_like(attrs(lhs_axes="(2,)", rhs_axes="(1,)"),
                               [np.array([[[1.0], [2.0]]]), np.zeros((1, 3))])
    if bl.tolist() != [[[1, 1, 1], [2, 2, 2]]]:
        raise Failure("broadcast_like with axes gave %s" % bl)
    notes.append("_arange, arange_like, SequenceMask, batch_dot, broadcast_axis, broadcast_like, "
                 "Embedding, LayerNorm, BatchNorm")


def test_reference_sample(notes):
    params = ref.load_params(os.path.join(SAMPLE, "sample.params"))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "copy.params")
        ref.save_params(path, params)
        again = ref.load_params(path)
        with open(path, "rb") as f1, open(os.path.join(SAMPLE, "sample.params"), "rb") as f2:
            if f1.read() != f2.read():
                raise Failure("sample.params does not round-trip byte for byte")
    if list(again) != list(params):
        raise Failure("parameter names changed in the round trip")
    graph = ref.load_graph(os.path.join(SAMPLE, "sample-symbol.json"))
    inputs = ref.strip_param_prefixes(params)
    inputs["data"] = np.load(os.path.join(SAMPLE, "sample-input.npy"))
    out = ref.run_graph(graph, inputs)[0]
    expected = np.load(os.path.join(SAMPLE, "sample-expected.npy"))
    if not np.allclose(out, expected, rtol=1e-6, atol=1e-7):
        raise Failure("sample-expected.npy is not the reference output of the sample files")
    notes.append("sample: %d parameters, class %d (p = %.3f)"
                 % (len(params), int(expected.argmax()), float(expected.max())))


# ---------------------------------------------------------------------------
# Model comparisons
# ---------------------------------------------------------------------------

class Case:
    def __init__(self, name, model, shapes, data, gain=1.0, args=(), detections=False):
        self.name = name
        self.detections = detections  # heads are (ids, scores, boxes, ...): see check_detections
        self.args = list(args)      # extra --run arguments (--executor dynamic)
        self.model = model          # file name under MODELS
        self.shapes = shapes        # {input: shape} passed as --input-shape
        self.data = data            # {input: function(rng, shape) -> array}
        self.gain = gain            # weight variance = gain / fan_in

    def path(self):
        return os.path.join(MODELS, self.model)


def token_ids(high):
    return lambda rng, shape: rng.integers(0, high, size=shape).astype(np.float32)


def normal(rng, shape):
    return rng.standard_normal(shape, dtype=np.float32)


def valid_lengths(seq):
    """Lengths in [1, seq]: the first sequence full, the others padded."""
    def make(rng, shape):
        lengths = rng.integers(1, seq, size=shape)
        lengths[0] = seq
        return lengths.astype(np.float32)
    return make


TRANSFORMER = os.path.join(SRC, "data", "transformer", "transformer-symbol.json")


def transformer_case(batch, seq):
    # A model of this tree, not of the shared set: the absolute path wins in Case.path().
    return Case("transformer %dx%d" % (batch, seq), TRANSFORMER,
                {"data0": (batch, seq), "data1": (batch, seq), "data2": (batch,)},
                {"data0": token_ids(1000), "data1": token_ids(2), "data2": valid_lengths(seq)})


CASES = [
    # An MNIST MLP: the first weight is (128, 0), so data gives 784 inputs.
    Case("mlp", "djl_mlp-symbol.json", {"data": (2, 784)}, {"data": normal}, gain=2.0),
    Case("resnet18", "gluoncv_resnet18_v1-symbol.json", {"data": (1, 3, 224, 224)},
         {"data": normal}, gain=2.0),
    Case("squeezenet", "gluoncv_squeezenet1.0-symbol.json", {"data": (1, 3, 224, 224)},
         {"data": normal}, gain=2.0),
    # VGG-style: 84 = 4 * 21, so pool3 (pooling_convention full) pools an odd
    # 21 x 21 map into 11 x 11 where "valid" would give 10 x 10.
    Case("dnnl_model1", "mxnet_test_dnnl_model1.json", {"data": (1, 3, 84, 84)},
         {"data": normal}, gain=2.0),
    Case("legacy_000800", "mxnet_legacy_save_000800.json", {"data": (4, 100)},
         {"data": normal}, gain=2.0),
    Case("bert", "gluonnlp_static_bert_qa-symbol.json",
         {"data0": (1, 384), "data1": (1, 384), "data2": (1,)},
         {"data0": token_ids(30522), "data1": token_ids(2),
          "data2": lambda rng, shape: np.full(shape, 200.0, dtype=np.float32)}),
    # data is (T, N) = (35, 2) token ids; the label is reshaped to (-1,)
    # before SoftmaxOutput, so its shape cannot be inferred and is given.
    Case("lstm_ptb", "mms_lstm_ptb-symbol.json",
         {"data": (35, 2), "softmax_label": (35, 2)}, {"data": token_ids(10000)}),
    # The BERT-style encoder with no length in its graph (arange_like positions, broadcast_like
    # mask), at two sequence lengths.
    transformer_case(2, 16),
    transformer_case(2, 48),
    # The detection graphs at a small size on the dynamic executor (regions on cached plans).
    Case("ssd_512 on the dynamic executor", "gluoncv_ssd_512_resnet50_v1-symbol.json",
         {"data": (1, 3, 128, 128)}, {"data": normal}, gain=0.5, args=["--executor", "dynamic"]),
    Case("mask_rcnn on the dynamic executor", "gluoncv_mask_rcnn_resnet18_v1b_coco-symbol.json",
         {"data": (1, 3, 160, 160)}, {"data": normal}, gain=0.5, args=["--executor", "dynamic"],
         detections=True),
]


def consumers(graph):
    """variable name -> (consumer op, input position, consumer attrs)"""
    use = {}
    for node in graph.nodes:
        for pos, (src, _) in enumerate(node.inputs):
            var = graph.nodes[src]
            if var.op == "null" and var.name not in use:
                use[var.name] = (node.op, pos, node.attrs)
    return use


def make_value(rng, name, shape, use, gain):
    """A random value for a graph variable, scaled so activations stay O(1)."""
    op, pos, a = use.get(name, (None, None, None))
    shape = tuple(shape)
    if name.endswith("label"):
        return np.zeros(shape, dtype=np.float32)
    if op in ("Convolution", "FullyConnected", "Deconvolution") and pos == 1:
        fan_in = int(np.prod(shape[1:]))
        return normal(rng, shape) * np.float32(np.sqrt(gain / fan_in))
    if op in ("Convolution", "FullyConnected", "Deconvolution") and pos == 2:
        return normal(rng, shape) * np.float32(0.1)
    if op in ("BatchNorm", "LayerNorm") and pos == 1:
        return rng.uniform(0.9, 1.1, shape).astype(np.float32)
    if op in ("BatchNorm", "LayerNorm") and pos == 2:
        return normal(rng, shape) * np.float32(0.1)
    if op == "BatchNorm" and pos == 3:
        return normal(rng, shape) * np.float32(0.1)
    if op == "BatchNorm" and pos == 4:
        return rng.uniform(0.5, 1.5, shape).astype(np.float32)
    if op == "RNN" and pos == 1:
        bound = 1.0 / np.sqrt(a.int("state_size"))
        return rng.uniform(-bound, bound, shape).astype(np.float32)
    return normal(rng, shape)


def engine_info(model, shapes):
    args = ["--info", model, "--json"]
    for name, shape in shapes.items():
        args += ["--input-shape", "%s=%s" % (name, shape_arg(shape))]
    proc = run_cli(args)
    if proc.returncode != 0:
        raise Failure("--info exit %d: %s" % (proc.returncode, first_line(proc.stderr)))
    try:
        info = json.loads(proc.stdout)
    except ValueError as exc:
        raise Failure("--info --json printed no valid JSON (%s)" % exc)
    for entry in info.get("inputs", []):
        shape = entry.get("shape")
        if not shape or any((not isinstance(d, int)) or d <= 0 for d in shape):
            raise Failure("--info gives input %s no complete shape: %s" % (entry.get("name"), shape))
    return info


def write_inputs(tmp, info, case, graph, seed):
    rng = np.random.default_rng(seed)
    use = consumers(graph)
    arrays, args = {}, []
    for entry in info["inputs"]:
        name, shape = entry["name"], tuple(entry["shape"])
        if name in case.data:
            arr = np.asarray(case.data[name](rng, shape), dtype=np.float32)
        else:
            arr = make_value(rng, name, shape, use, case.gain)
        path = os.path.join(tmp, "in%03d.npy" % len(args))
        np.save(path, arr)
        arrays[name] = arr
        args += ["--input", "%s=%s" % (name, path)]
    return arrays, args


def engine_outputs(outdir):
    try:
        with open(os.path.join(outdir, "outputs.json")) as f:
            listing = json.load(f)["outputs"]
    except (OSError, ValueError, KeyError) as exc:
        raise Failure("no readable outputs.json (%s)" % exc)
    result = []
    for entry in listing:
        path = entry["file"]
        if not os.path.isabs(path):
            path = os.path.join(outdir, path)
        arr = np.load(path)
        if list(arr.shape) != list(entry.get("shape", arr.shape)):
            raise Failure("%s: outputs.json says shape %s, file holds %s"
                          % (entry["name"], entry.get("shape"), arr.shape))
        result.append((entry["name"], arr))
    return result


def check_info(graph, info, refs):
    """The --info summary against the graph: op counts and output shapes."""
    counts = {}
    for node in graph.nodes:
        if node.op != "null":
            counts[node.op] = counts.get(node.op, 0) + 1
    ops = {k: v for k, v in info.get("ops", {}).items() if k != "null"}
    if ops != counts:
        raise Failure("--info op counts %s, the graph has %s" % (ops, counts))
    outputs = info.get("outputs", [])
    got = [(o.get("name"), tuple(o.get("shape", ()))) for o in outputs]
    want = [(n, r.shape) for n, r in zip(graph.output_names(), refs)]
    if got != want:
        raise Failure("--info outputs %s, expected %s" % (got, want))


def check_outputs(graph, outs, refs, notes):
    names = graph.output_names()
    if len(outs) != len(refs):
        raise Failure("engine gave %d outputs, the graph has %d heads" % (len(outs), len(refs)))
    for (name, ours), want, ref_name in zip(outs, refs, names):
        if name != ref_name:
            raise Failure("output named %r, MXNet's list_outputs() name is %r" % (name, ref_name))
        if np.all(np.isfinite(want)) and not np.all(np.isfinite(ours)):
            raise Failure("%s: the engine's output is not finite where the reference's is" % name)
        compare(name, ours, want, notes)


def check_detections(graph, outs, refs, notes):
    """Detections with random weights: many candidates tie or nearly tie on their score, and
    float32 against float64 may order them differently or let another one past a threshold,
    which changes the rows after it. So: every output finite and of the reference's shape; the
    scores, sorted, agree (all but 2%); and at least 90% of the engine's (id, score, box) rows
    match a distinct reference row."""
    if len(outs) != len(refs):
        raise Failure("engine gave %d outputs, the graph has %d heads" % (len(outs), len(refs)))
    for (name, ours), want in zip(outs, refs):
        if ours.shape != want.shape:
            raise Failure("%s: shape %s, reference %s" % (name, ours.shape, want.shape))
        if not np.all(np.isfinite(ours)):
            raise Failure("%s: not finite" % name)

    def rows(arrays):
        ids, scores, boxes = (np.asarray(a, dtype=np.float64) for a in arrays[:3])
        return np.concatenate([ids.reshape(-1, 1), scores.reshape(-1, 1), boxes.reshape(-1, 4)],
                              axis=1)

    ours, want = rows([o for _, o in outs]), rows(refs)
    s_ours, s_want = np.sort(ours[:, 1])[::-1], np.sort(want[:, 1])[::-1]
    off = np.abs(s_ours - s_want) > 1e-4 * np.maximum(1.0, np.abs(s_want))
    if off.sum() > 0.02 * len(off):
        raise Failure("%d of %d sorted scores differ from the reference" % (off.sum(), len(off)))
    # Rows as a set: each engine row matched to a distinct reference row.
    used = np.zeros(len(want), dtype=bool)
    unmatched = 0
    for row in ours:
        close = np.all(np.abs(want - row) <= 1e-3 * np.maximum(1.0, np.abs(want)), axis=1)
        free = np.flatnonzero(close & ~used)
        if len(free) == 0:
            unmatched += 1
        else:
            used[free[0]] = True
    if unmatched > 0.1 * len(ours):
        raise Failure("%d of %d detections have no match in the reference"
                      % (unmatched, len(ours)))
    notes.append("%d detections; sorted scores agree but for %d; %d rows without a match "
                 "(<= 10%% allowed: near-ties); all %d outputs finite and of the reference's "
                 "shapes" % (len(ours), off.sum(), unmatched, len(outs)))


def test_model(case, notes):
    model = case.path()
    if not os.path.exists(model):
        raise Failure("model file missing: " + model)
    graph = ref.load_graph(model)
    started = time.time()
    info = engine_info(model, case.shapes)
    with tempfile.TemporaryDirectory(prefix="ds-models-") as tmp:
        arrays, input_args = write_inputs(tmp, info, case, graph, seed=sum(map(ord, case.name)))
        outdir = os.path.join(tmp, "out")
        t0 = time.time()
        proc = run_cli(["--run", model] + input_args + case.args + ["--save-outputs", outdir])
        engine_s = time.time() - t0
        if proc.returncode != 0:
            raise Failure("--run exit %d: %s" % (proc.returncode, first_line(proc.stderr)))
        outs = engine_outputs(outdir)
    t0 = time.time()
    refs = ref.run_graph(graph, {k: v.astype(np.float64) for k, v in arrays.items()})
    ref_s = time.time() - t0
    if case.detections:
        check_detections(graph, outs, refs, notes)
    else:
        check_outputs(graph, outs, refs, notes)
    check_info(graph, info, refs)
    notes.append("%d inputs; engine %.1f s, reference %.1f s, total %.1f s"
                 % (len(arrays), engine_s, ref_s, time.time() - started))


def test_sample(notes):
    model = os.path.join(SAMPLE, "sample-symbol.json")
    graph = ref.load_graph(model)
    with tempfile.TemporaryDirectory(prefix="ds-sample-") as tmp:
        outdir = os.path.join(tmp, "out")
        proc = run_cli(["--run", model,
                        "--params", os.path.join(SAMPLE, "sample.params"),
                        "--input", "data=" + os.path.join(SAMPLE, "sample-input.npy"),
                        "--save-outputs", outdir])
        if proc.returncode != 0:
            raise Failure("--run exit %d: %s" % (proc.returncode, first_line(proc.stderr)))
        outs = engine_outputs(outdir)
    expected = np.load(os.path.join(SAMPLE, "sample-expected.npy")).astype(np.float64)
    check_outputs(graph, outs, [expected], notes)
    if int(np.argmax(outs[0][1])) != int(np.argmax(expected)):
        raise Failure("sample classified as %d, expected %d"
                      % (int(np.argmax(outs[0][1])), int(np.argmax(expected))))


DYNAMIC_MODEL = os.path.join(SRC, "data", "dynamic", "boolean-mask-symbol.json")


def test_dynamic_mask(notes):
    """The boolean-mask sample: the output's row count follows the data. fc0's first bias
    decides the mask: -10 keeps no row (a zero-size output), +10 keeps every row, 0 some."""
    graph = ref.load_graph(DYNAMIC_MODEL)
    rng = np.random.default_rng(7)
    n = 32
    for label, bias0 in (("all-false", -10.0), ("all-true", 10.0), ("mixed", 0.0)):
        arrays = {
            "data": rng.standard_normal((n, 8)).astype(np.float32),
            "fc0_weight": (rng.standard_normal((16, 8)) * 0.5).astype(np.float32),
            "fc0_bias": np.zeros(16, dtype=np.float32),
            "fc1_weight": (rng.standard_normal((4, 16)) * 0.5).astype(np.float32),
            "fc1_bias": (rng.standard_normal(4) * 0.1).astype(np.float32),
        }
        arrays["fc0_bias"][0] = bias0
        with tempfile.TemporaryDirectory(prefix="ds-dynamic-") as tmp:
            args = []
            for name, arr in arrays.items():
                path = os.path.join(tmp, name + ".npy")
                np.save(path, arr)
                args += ["--input", "%s=%s" % (name, path)]
            outdir = os.path.join(tmp, "out")
            proc = run_cli(["--run", DYNAMIC_MODEL] + args + ["--save-outputs", outdir])
            if proc.returncode != 0:
                raise Failure("%s: --run exit %d: %s"
                              % (label, proc.returncode, first_line(proc.stderr)))
            outs = engine_outputs(outdir)
            table = run_cli(["--run", DYNAMIC_MODEL] + args)
        refs = ref.run_graph(graph, {k: v.astype(np.float64) for k, v in arrays.items()})
        check_outputs(graph, outs, refs, notes)
        rows = outs[0][1].shape[0]
        want = {"all-false": 0, "all-true": n}.get(label, refs[0].shape[0])
        if rows != want or (label == "mixed" and not 0 < rows < n):
            raise Failure("%s: %d rows kept, expected %d" % (label, rows, want))
        if "executor: dynamic" not in table.stdout:
            raise Failure("%s: --run does not say the dynamic executor ran" % label)
        notes.append("%s: %d of %d rows kept, output %s" % (label, rows, n, outs[0][1].shape))


# ---------------------------------------------------------------------------
# Single-op graphs: MXNet semantics the real models do not reach
# ---------------------------------------------------------------------------

def ids(values):
    return np.array(values, dtype=np.float32)


OP_CASES = [
    # (title, op, attrs, [(input name, shape or fixed array)])
    ("Convolution grouped, strided, padded, dilated", "Convolution",
     {"kernel": "(3, 2)", "stride": "(2, 1)", "pad": "(1, 2)", "dilate": "(2, 1)",
      "num_group": "2", "num_filter": "6"},
     [("x", (2, 4, 9, 8)), ("w", (6, 2, 3, 2)), ("b", (6,))]),
    ("Convolution depthwise, no bias", "Convolution",
     {"kernel": "(3, 3)", "pad": "(1, 1)", "num_group": "4", "num_filter": "4", "no_bias": "True"},
     [("x", (1, 4, 7, 7)), ("w", (4, 1, 3, 3))]),
    ("Pooling max, full convention, padded", "Pooling",
     {"kernel": "(3, 3)", "stride": "(2, 2)", "pad": "(1, 1)", "pool_type": "max",
      "pooling_convention": "full"}, [("x", (1, 3, 9, 8))]),
    ("Pooling avg, padded, count_include_pad default", "Pooling",
     {"kernel": "(3, 3)", "stride": "(2, 2)", "pad": "(1, 1)", "pool_type": "avg"},
     [("x", (1, 3, 9, 8))]),
    ("Pooling avg, full convention, count_include_pad False", "Pooling",
     {"kernel": "(3, 2)", "stride": "(2, 2)", "pad": "(1, 0)", "pool_type": "avg",
      "pooling_convention": "full", "count_include_pad": "False"}, [("x", (1, 3, 9, 8))]),
    ("Pooling sum", "Pooling",
     {"kernel": "(2, 2)", "stride": "(2, 2)", "pool_type": "sum"}, [("x", (1, 2, 6, 5))]),
    ("Pooling global max", "Pooling",
     {"kernel": "(1, 1)", "global_pool": "True", "pool_type": "max"}, [("x", (2, 3, 5, 4))]),
    ("BatchNorm with defaults (fix_gamma True, eps 1e-3)", "BatchNorm", {},
     [("x", (2, 3, 4, 4)), ("gamma", (3,)), ("beta", (3,)), ("mean", (3,)),
      ("var", np.array([0.5, 1.0, 2.0], dtype=np.float32))]),
    ("BatchNorm on the last axis, fix_gamma False", "BatchNorm",
     {"axis": "-1", "fix_gamma": "False", "eps": "1e-5"},
     [("x", (2, 3, 4)), ("gamma", (4,)), ("beta", (4,)), ("mean", (4,)),
      ("var", np.array([0.5, 1.0, 1.5, 2.0], dtype=np.float32))]),
    ("LayerNorm on axis 1", "LayerNorm", {"axis": "1"},
     [("x", (2, 5, 3)), ("gamma", (5,)), ("beta", (5,))]),
    ("FullyConnected flatten False, no bias", "FullyConnected",
     {"num_hidden": "4", "flatten": "False", "no_bias": "True"},
     [("x", (2, 3, 5)), ("w", (4, 5))]),
    ("FullyConnected flattening a 3-D input", "FullyConnected", {"num_hidden": "6"},
     [("x", (2, 3, 4)), ("w", (6, 12)), ("b", (6,))]),
    ("softmax on axis 1 with temperature", "softmax", {"axis": "1", "temperature": "2.0"},
     [("x", (2, 4, 3))]),
    ("SoftmaxOutput multi_output", "SoftmaxOutput", {"multi_output": "True"},
     [("x", (2, 4, 3)), ("label", np.zeros((2, 3), dtype=np.float32))]),
    ("SoftmaxOutput preserve_shape", "SoftmaxOutput", {"preserve_shape": "True"},
     [("x", (2, 3, 5)), ("label", np.zeros((2, 3), dtype=np.float32))]),
    ("SoftmaxOutput on 3-D data (softmax over all but the first axis)", "SoftmaxOutput", {},
     [("x", (2, 3, 4)), ("label", np.zeros((2, 3), dtype=np.float32))]),
    ("Reshape -4 split", "Reshape", {"shape": "(-4, 1, 2, -2)"}, [("x", (2, 3, 4))]),
    ("Reshape -3 merge then -2", "Reshape", {"shape": "(-3, -2)"}, [("x", (2, 3, 4))]),
    ("Reshape reverse", "Reshape", {"shape": "(-1, 0)", "reverse": "True"}, [("x", (10, 5, 4))]),
    ("transpose with default axes", "transpose", {}, [("x", (2, 3, 4))]),
    ("expand_dims with a negative axis", "expand_dims", {"axis": "-2"}, [("x", (2, 3))]),
    ("broadcast_axis on two axes", "broadcast_axis", {"axis": "(0, 2)", "size": "(3, 4)"},
     [("x", (1, 2, 1))]),
    ("SequenceMask on axis 0 with a value", "SequenceMask",
     {"use_sequence_length": "True", "value": "-1"},
     [("x", (4, 3, 2)), ("len", ids([1, 4, 2]))]),
    ("Embedding clips out-of-range ids", "Embedding", {"input_dim": "6", "output_dim": "3"},
     [("ids", ids([[-1, 0, 2.7], [5, 6, 9]])), ("w", (6, 3))]),
    ("batch_dot transpose_a", "batch_dot", {"transpose_a": "True"},
     [("a", (2, 4, 3)), ("b", (2, 4, 5))]),
    ("where with a 1-D condition", "where", {},
     [("cond", ids([1, 0, 2])), ("x", (3, 2)), ("y", (3, 2))]),
    ("_arange with step and repeat", "_arange",
     {"start": "2", "stop": "11", "step": "3", "repeat": "2"}, []),
    ("_contrib_arange_like over all elements, with step and repeat", "_contrib_arange_like",
     {"start": "1.5", "step": "0.5", "repeat": "2"}, [("x", (3, 4))]),
    ("_contrib_arange_like along axis -1", "_contrib_arange_like", {"axis": "-1", "start": "3"},
     [("x", (2, 5, 7))]),
    ("broadcast_like on chosen axes", "broadcast_like", {"lhs_axes": "(2,)", "rhs_axes": "(1,)"},
     [("x", (2, 3, 1)), ("y", (2, 4))]),
    ("RNN lstm bidirectional with state outputs", "RNN",
     {"mode": "lstm", "num_layers": "1", "state_size": "4", "bidirectional": "True",
      "state_outputs": "True"},
     [("x", (5, 2, 3)), ("params", (2 * 4 * 4 * (3 + 4 + 2),)),
      ("h0", (2, 2, 4)), ("c0", (2, 2, 4))]),
    ("RNN gru, 2 layers, bidirectional, with state outputs", "RNN",
     {"mode": "gru", "num_layers": "2", "state_size": "4", "bidirectional": "True",
      "state_outputs": "True"},
     [("x", (5, 2, 3)), ("params", (2 * 3 * 4 * (3 + 4 + 2) + 2 * 3 * 4 * (8 + 4 + 2),)),
      ("h0", (4, 2, 4))]),
    ("RNN rnn_tanh, 2 layers", "RNN",
     {"mode": "rnn_tanh", "num_layers": "2", "state_size": "4"},
     [("x", (5, 2, 3)), ("params", (4 * (3 + 4 + 2) + 4 * (4 + 4 + 2),)), ("h0", (2, 2, 4))]),
    ("Activation softrelu", "Activation", {"act_type": "softrelu"}, [("x", (3, 4))]),
    ("Activation softsign", "Activation", {"act_type": "softsign"}, [("x", (3, 4))]),
    ("Concat on axis 2", "Concat", {"dim": "2", "num_args": "3"},
     [("a", (2, 3, 1)), ("b", (2, 3, 2)), ("c", (2, 3, 3))]),
]


def node_output_count(op, a):
    """All outputs of a node, hidden ones included (for node_row_ptr)."""
    if op in ("BatchNorm", "LayerNorm"):
        return 3
    if op == "Dropout":
        return 2
    if op == "RNN":
        return len(ref.visible_output_names(ref.Node(op, "", a, [])))
    return 1


def single_op_graph(op, op_attrs, names):
    a = ref.Attrs(op_attrs)
    nodes = [{"op": "null", "name": n, "inputs": []} for n in names]
    nodes.append({"op": op, "name": "op0", "attrs": dict(op_attrs),
                  "inputs": [[i, 0, 0] for i in range(len(names))]})
    if not op_attrs:
        del nodes[-1]["attrs"]
    visible = len(ref.visible_output_names(ref.Node(op, "op0", a, [])))
    row_ptr = list(range(len(names) + 1)) + [len(names) + node_output_count(op, a)]
    return {"nodes": nodes, "arg_nodes": list(range(len(names))), "node_row_ptr": row_ptr,
            "heads": [[len(names), k, 0] for k in range(visible)],
            "attrs": {"mxnet_version": ["int", 10500]}}


def test_op_case(title, op, op_attrs, inputs, notes):
    rng = np.random.default_rng(sum(map(ord, title)))
    symbol = single_op_graph(op, op_attrs, [n for n, _ in inputs])
    graph = ref.load_graph(symbol)
    with tempfile.TemporaryDirectory(prefix="ds-op-") as tmp:
        model = os.path.join(tmp, "op-symbol.json")
        with open(model, "w") as f:
            json.dump(symbol, f, indent=2)
        arrays, args = {}, []
        for name, spec in inputs:
            if isinstance(spec, tuple):
                arr = normal(rng, spec)
                if op == "RNN" and name == "params":
                    arr = rng.uniform(-0.5, 0.5, spec).astype(np.float32)
            else:
                arr = spec
            arrays[name] = arr
            path = os.path.join(tmp, name + ".npy")
            np.save(path, arr)
            args += ["--input", "%s=%s" % (name, path)]
        outdir = os.path.join(tmp, "out")
        proc = run_cli(["--run", model] + args + ["--save-outputs", outdir])
        if proc.returncode != 0:
            raise Failure("--run exit %d: %s" % (proc.returncode, first_line(proc.stderr)))
        outs = engine_outputs(outdir)
    refs = ref.run_graph(graph, {k: v.astype(np.float64) for k, v in arrays.items()})
    check_outputs(graph, outs, refs, notes)


# ---------------------------------------------------------------------------
# CLI error paths (on the MLP)
# ---------------------------------------------------------------------------

MLP_SHAPES = {
    "data": (2, 784),
    "hybridsequential0_dense0_weight": (128, 784),
    "hybridsequential0_dense0_bias": (128,),
    "hybridsequential0_dense1_weight": (64, 128),
    "hybridsequential0_dense1_bias": (64,),
    "hybridsequential0_dense2_weight": (10, 64),
    "hybridsequential0_dense2_bias": (10,),
}


def mlp_args(tmp, shapes, omit=None):
    rng = np.random.default_rng(7)
    args = []
    for name, shape in shapes.items():
        if name == omit:
            continue
        path = os.path.join(tmp, name + ".npy")
        np.save(path, normal(rng, shape))
        args += ["--input", "%s=%s" % (name, path)]
    return args


def expect_usage_error(args, name, what):
    proc = run_cli(args)
    if proc.returncode != 2:
        raise Failure("%s: exit %d, expected 2 (%s)"
                      % (what, proc.returncode, first_line(proc.stderr)))
    if name not in proc.stderr:
        raise Failure("%s: the message does not name %s: %s"
                      % (what, name, first_line(proc.stderr)))
    return first_line(proc.stderr)


def test_cli_missing_input(notes):
    model = os.path.join(MODELS, "djl_mlp-symbol.json")
    missing = "hybridsequential0_dense1_weight"
    with tempfile.TemporaryDirectory(prefix="ds-cli-") as tmp:
        args = ["--run", model] + mlp_args(tmp, MLP_SHAPES, omit=missing)
        args += ["--save-outputs", os.path.join(tmp, "out")]
        notes.append("stderr: " + expect_usage_error(args, missing, "missing input"))


def test_cli_wrong_shape(notes):
    model = os.path.join(MODELS, "djl_mlp-symbol.json")
    bad = "hybridsequential0_dense1_weight"
    shapes = dict(MLP_SHAPES)
    shapes[bad] = (64, 100)
    with tempfile.TemporaryDirectory(prefix="ds-cli-") as tmp:
        args = ["--run", model] + mlp_args(tmp, shapes)
        args += ["--save-outputs", os.path.join(tmp, "out")]
        notes.append("stderr: " + expect_usage_error(args, bad, "wrong-shaped input"))


# ---------------------------------------------------------------------------

def main():
    tests = [
        ("reference: Convolution against a direct loop", test_reference_convolution),
        ("reference: Pooling against MXNet's pooling loops", test_reference_pooling),
        ("reference: RNN against a per-element cell", test_reference_rnn),
        ("reference: Reshape special codes", test_reference_reshape),
        ("reference: small ops", test_reference_misc),
        ("reference: sample files and .params round trip", test_reference_sample),
    ]
    for case in CASES:
        tests.append((case.name, lambda notes, case=case: test_model(case, notes)))
    tests.append(("sample", test_sample))
    tests.append(("dynamic: boolean mask, output rows follow the data", test_dynamic_mask))
    for title, op, op_attrs, inputs in OP_CASES:
        tests.append(("op: " + title,
                      lambda notes, c=(title, op, op_attrs, inputs): test_op_case(*c, notes)))
    tests.append(("cli: missing input exits 2 naming it", test_cli_missing_input))
    tests.append(("cli: wrongly shaped input exits 2 naming it", test_cli_wrong_shape))

    return tap.run_with_notes(tests)


if __name__ == "__main__":
    sys.exit(main())
