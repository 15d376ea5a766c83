#!/usr/bin/env python3
"""Write the bundled sample model to data/sample/.

A small CNN digit classifier for a 1x1x28x28 image, laid out like a Gluon
HybridBlock.export():

  data -> conv0 (8 filters, 3x3, pad 1) -> batchnorm0 -> relu0
       -> pool0 (max 2x2, stride 2)
       -> conv1 (16 filters, 3x3, pad 1) -> batchnorm1 -> relu1
       -> pool1 (global average) -> flatten0 -> dense0 (10) -> softmax0

The weights are made, not learned by back-propagation: conv0 holds fixed
edge, corner and blob detectors, conv1 is a seeded random He-scaled layer,
the BatchNorm moving statistics are measured on a batch of synthetic
seven-segment digits, and dense0 is fitted to those digits by softmax
regression on the pooled features. Everything is deterministic.

Files written:
  sample-symbol.json    the graph (MXNet 1.5 JSON layout)
  sample.params         the weights (MXNet NDArray-list format)
  sample-input.npy      a digit "3", float32 (1, 1, 28, 28)
  sample-expected.npy   the reference output for it, float32 (1, 10)

Run with Debian's Python and NumPy:
  /usr/bin/python3 tools/make_sample_model.py [--out data/sample]
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mxnet_reference as ref  # noqa: E402

SEED = 1234
IMAGE = 28

# Seven-segment layout: which segments (a..g) each digit lights.
#    aaa
#   f   b
#    ggg
#   e   c
#    ddd
SEGMENTS = {
    0: "abcdef", 1: "bc", 2: "abged", 3: "abgcd", 4: "fgbc",
    5: "afgcd", 6: "afgedc", 7: "abc", 8: "abcdefg", 9: "abcdfg",
}


def render_digit(digit, dx=0.0, dy=0.0, thickness=2.2, slant=0.0):
    """A seven-segment digit with soft edges, values in [0, 1]."""
    left, right = 9.0 + dx, 19.0 + dx
    top, mid, bottom = 5.0 + dy, 14.0 + dy, 23.0 + dy
    strokes = {
        "a": ((left, top), (right, top)),
        "b": ((right, top), (right, mid)),
        "c": ((right, mid), (right, bottom)),
        "d": ((left, bottom), (right, bottom)),
        "e": ((left, mid), (left, bottom)),
        "f": ((left, top), (left, mid)),
        "g": ((left, mid), (right, mid)),
    }
    yy, xx = np.mgrid[0:IMAGE, 0:IMAGE].astype(np.float64)
    xx = xx + slant * (yy - 14.0)
    img = np.zeros((IMAGE, IMAGE))
    for seg in SEGMENTS[digit]:
        (x0, y0), (x1, y1) = strokes[seg]
        # Distance from each pixel centre to the segment.
        vx, vy = x1 - x0, y1 - y0
        t = np.clip(((xx - x0) * vx + (yy - y0) * vy) / (vx * vx + vy * vy), 0.0, 1.0)
        dist = np.hypot(xx - (x0 + t * vx), yy - (y0 + t * vy))
        img = np.maximum(img, np.clip(thickness / 2.0 + 0.5 - dist, 0.0, 1.0))
    return img


def training_digits(rng, per_digit=24):
    images, labels = [], []
    for digit in range(10):
        for _ in range(per_digit):
            images.append(render_digit(digit,
                                       dx=rng.uniform(-2.5, 2.5),
                                       dy=rng.uniform(-2.0, 2.0),
                                       thickness=rng.uniform(1.6, 3.0),
                                       slant=rng.uniform(-0.15, 0.15)))
            labels.append(digit)
    return np.stack(images)[:, None], np.array(labels)


# ---------------------------------------------------------------------------
# The symbol
# ---------------------------------------------------------------------------

def variable(name, shape=None, init=None, extra=None):
    attrs = {}
    if extra:
        attrs.update(extra)
    if shape is not None:
        attrs.update({"__dtype__": "0", "__lr_mult__": "1.0",
                      "__shape__": str(tuple(shape)), "__storage_type__": "0",
                      "__wd_mult__": "1.0"})
        if init is not None:
            attrs["__init__"] = init
    node = {"op": "null", "name": name}
    if attrs:
        node["attrs"] = dict(sorted(attrs.items()))
    node["inputs"] = []
    return node


def operator(op, name, attrs, inputs):
    node = {"op": op, "name": name}
    if attrs:
        node["attrs"] = dict(sorted(attrs.items()))
    node["inputs"] = [list(e) for e in inputs]
    return node


def build_symbol():
    nodes = []
    outputs = []  # visible + hidden output count of each node (node_row_ptr)

    def add(node, num_outputs=1):
        nodes.append(node)
        outputs.append(num_outputs)
        return len(nodes) - 1

    def conv(name, x, cin, cout):
        w = add(variable(name + "_weight", (cout, cin, 3, 3)))
        b = add(variable(name + "_bias", (cout,), "zeros"))
        return add(operator("Convolution", name + "_fwd", {
            "dilate": "(1, 1)", "kernel": "(3, 3)", "layout": "NCHW",
            "no_bias": "False", "num_filter": str(cout), "num_group": "1",
            "pad": "(1, 1)", "stride": "(1, 1)"},
            [(x, 0, 0), (w, 0, 0), (b, 0, 0)]))

    def batchnorm(name, x, c):
        g = add(variable(name + "_gamma", (c,), "ones"))
        b = add(variable(name + "_beta", (c,), "zeros"))
        m = add(variable(name + "_running_mean", (c,), "zeros"))
        v = add(variable(name + "_running_var", (c,), "ones"))
        # BatchNorm mutates its moving statistics, hence version 1.
        return add(operator("BatchNorm", name + "_fwd", {
            "axis": "1", "eps": "1e-05", "fix_gamma": "False",
            "momentum": "0.9", "use_global_stats": "False"},
            [(x, 0, 0), (g, 0, 0), (b, 0, 0), (m, 0, 1), (v, 0, 1)]), 3)

    def relu(name, x):
        return add(operator("Activation", name + "_fwd", {"act_type": "relu"}, [(x, 0, 0)]))

    data = add(variable("data", extra={"__shape__": str((1, 1, IMAGE, IMAGE))}))
    x = conv("conv0", data, 1, 8)
    x = batchnorm("batchnorm0", x, 8)
    x = relu("relu0", x)
    x = add(operator("Pooling", "pool0_fwd", {
        "global_pool": "False", "kernel": "(2, 2)", "layout": "NCHW",
        "pad": "(0, 0)", "pool_type": "max", "pooling_convention": "valid",
        "stride": "(2, 2)"}, [(x, 0, 0)]))
    x = conv("conv1", x, 8, 16)
    x = batchnorm("batchnorm1", x, 16)
    x = relu("relu1", x)
    x = add(operator("Pooling", "pool1_fwd", {
        "global_pool": "True", "kernel": "(1, 1)", "layout": "NCHW",
        "pad": "(0, 0)", "pool_type": "avg", "pooling_convention": "valid",
        "stride": "(1, 1)"}, [(x, 0, 0)]))
    x = add(operator("Flatten", "flatten0_flatten0", {}, [(x, 0, 0)]))
    w = add(variable("dense0_weight", (10, 16)))
    b = add(variable("dense0_bias", (10,), "zeros"))
    x = add(operator("FullyConnected", "dense0_fwd", {
        "flatten": "True", "no_bias": "False", "num_hidden": "10"},
        [(x, 0, 0), (w, 0, 0), (b, 0, 0)]))
    out = add(operator("softmax", "softmax0", {"axis": "-1"}, [(x, 0, 0)]))

    row_ptr = [0]
    for n in outputs:
        row_ptr.append(row_ptr[-1] + n)
    return {
        "nodes": nodes,
        "arg_nodes": [i for i, n in enumerate(nodes) if n["op"] == "null"],
        "node_row_ptr": row_ptr,
        "heads": [[out, 0, 0]],
        "attrs": {"mxnet_version": ["int", 10500]},
    }


# ---------------------------------------------------------------------------
# The weights
# ---------------------------------------------------------------------------

def conv0_filters():
    """Eight 3x3 detectors: four oriented edges, two diagonals, a blob and
    a line end."""
    sobel = np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], dtype=np.float64)
    diag = np.array([[0, 1, 2], [-1, 0, 1], [-2, -1, 0]], dtype=np.float64)
    blob = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], dtype=np.float64) / 4.0
    end = np.array([[-1, -1, -1], [-1, 2, -1], [0, 2, 0]], dtype=np.float64)
    filters = [sobel, -sobel, sobel.T, -sobel.T, diag, diag[::-1], blob, end]
    return np.stack(filters)[:, None] / 4.0


def make_params(rng):
    """Parameters in Gluon's collect_params() order (the .params order)."""
    p = {}
    p["conv0_weight"] = conv0_filters()
    p["conv0_bias"] = np.zeros(8)
    p["batchnorm0_gamma"] = np.ones(8)
    p["batchnorm0_beta"] = np.zeros(8)
    p["batchnorm0_running_mean"] = np.zeros(8)
    p["batchnorm0_running_var"] = np.ones(8)
    p["conv1_weight"] = rng.normal(0.0, np.sqrt(2.0 / (8 * 9)), (16, 8, 3, 3))
    p["conv1_bias"] = np.zeros(16)
    p["batchnorm1_gamma"] = np.ones(16)
    p["batchnorm1_beta"] = np.full(16, 0.5)
    p["batchnorm1_running_mean"] = np.zeros(16)
    p["batchnorm1_running_var"] = np.ones(16)
    p["dense0_weight"] = np.zeros((10, 16))
    p["dense0_bias"] = np.zeros(10)
    return p


def node_output(graph, values, name):
    for nid, node in enumerate(graph.nodes):
        if node.name == name:
            return values[nid][0]
    raise KeyError(name)


def calibrate_batchnorm(graph, params, images):
    """Set each BatchNorm's moving statistics to the batch statistics of
    its input over the calibration images, as training would."""
    for bn, conv in (("batchnorm0", "conv0_fwd"), ("batchnorm1", "conv1_fwd")):
        inputs = dict(params, data=images)
        _, values = ref.run_graph(graph, inputs, keep_all=True)
        x = node_output(graph, values, conv)
        params[bn + "_running_mean"] = x.mean(axis=(0, 2, 3))
        params[bn + "_running_var"] = x.var(axis=(0, 2, 3))


def fit_dense(features, labels, steps=3000, rate=0.5, decay=1e-3):
    """Softmax regression on standardised features by gradient descent;
    returns the weights of the raw features."""
    mu = features.mean(axis=0)
    sd = features.std(axis=0) + 1e-6
    z = (features - mu) / sd
    n, k = z.shape
    onehot = np.eye(10)[labels]
    w = np.zeros((10, k))
    b = np.zeros(10)
    for _ in range(steps):
        p = ref.softmax_along(z @ w.T + b, 1)
        g = (p - onehot) / n
        w -= rate * (g.T @ z + decay * w)
        b -= rate * g.sum(axis=0)
    # Fold the standardisation into the layer: w (x - mu) / sd + b.
    return w / sd, b - (w / sd) @ mu


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="Write the bundled sample model.")
    ap.add_argument("--out", default=os.path.join(here, "..", "data", "sample"))
    args = ap.parse_args(argv)

    rng = np.random.default_rng(SEED)
    symbol = build_symbol()
    graph = ref.load_graph(symbol)
    params = make_params(rng)
    images, labels = training_digits(rng)

    calibrate_batchnorm(graph, params, images)
    _, values = ref.run_graph(graph, dict(params, data=images), keep_all=True)
    features = node_output(graph, values, "flatten0_flatten0")
    params["dense0_weight"], params["dense0_bias"] = fit_dense(features, labels)

    # Everything the engine sees is float32; compute the expected output
    # from the float32-rounded weights and input.
    params = {k: v.astype(np.float32) for k, v in params.items()}
    probs = ref.run_graph(graph, dict(params, data=images))[0]
    accuracy = float((probs.argmax(axis=1) == labels).mean())

    sample = render_digit(3).astype(np.float32)[None, None]
    expected = ref.run_graph(graph, dict(params, data=sample))[0]

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "sample-symbol.json"), "w") as f:
        f.write(json.dumps(symbol, indent=2))
    aux = {"batchnorm0_running_mean", "batchnorm0_running_var",
           "batchnorm1_running_mean", "batchnorm1_running_var"}
    ref.save_params(os.path.join(args.out, "sample.params"),
                    {("aux:" if k in aux else "arg:") + k: v for k, v in params.items()})
    np.save(os.path.join(args.out, "sample-input.npy"), sample)
    np.save(os.path.join(args.out, "sample-expected.npy"), expected.astype(np.float32))

    print("training digits classified correctly: %.1f%%" % (100.0 * accuracy))
    print("sample digit 3 -> class %d (p = %.3f)" % (expected.argmax(), expected.max()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
