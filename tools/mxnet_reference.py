#!/usr/bin/env python3
"""An independent NumPy reference for MXNet 1.x symbol graphs.

The interpreter loads an MXNet symbol JSON file (the current NNVM layout as
written by Symbol.tojson()/HybridBlock.export(), and the pre-NNVM 0.8 layout),
takes the graph's variables as NumPy arrays and evaluates every node in
float64 with MXNet 1.x inference semantics (BatchNorm uses the moving
statistics, Dropout is the identity, SoftmaxOutput is a plain softmax).

It is deliberately written from MXNet's documented operator semantics and
shares no code with the C engine, so that the two can check each other.

Command line:
    /usr/bin/python3 tools/mxnet_reference.py MODEL.json \
        --input NAME=FILE.npy ... [--params FILE.params] --out DIR

writes one DIR/<output name>.npy (float64) per head of the graph.

Library use:
    graph = load_graph("model-symbol.json")
    outputs = run_graph(graph, {"data": x, "conv0_weight": w, ...})
"""

import argparse
import ast
import json
import math
import os
import re
import struct
import sys

import numpy as np

# ---------------------------------------------------------------------------
# Attribute parsing
# ---------------------------------------------------------------------------


class Attrs:
    """Operator attributes as MXNet stores them: every value is a string."""

    def __init__(self, d):
        self.d = dict(d)

    def has(self, key):
        return key in self.d and self.d[key] not in ("None", "")

    def str(self, key, default=None):
        return self.d.get(key, default)

    def int(self, key, default=None):
        if not self.has(key):
            return default
        return int(float(self.d[key]))

    def float(self, key, default=None):
        if not self.has(key):
            return default
        return float(self.d[key])

    def bool(self, key, default=False):
        if not self.has(key):
            return default
        v = self.d[key].strip().lower()
        if v in ("true", "1"):
            return True
        if v in ("false", "0"):
            return False
        raise ValueError("bad boolean %r for %s" % (self.d[key], key))

    def tuple(self, key, default=None):
        """Parse "(1, 2)", "[1,2]", "3" or "()" into a tuple of ints
        (None entries stay None)."""
        if key not in self.d:
            return default
        return parse_tuple(self.d[key])


def parse_tuple(text):
    # Files written by Python 2 may spell integers as "1L".
    text = re.sub(r"(\d)L\b", r"\1", text.strip())
    if text in ("", "None"):
        return ()
    value = ast.literal_eval(text)
    if isinstance(value, (int, float)):
        return (int(value),)
    return tuple(None if v is None else int(v) for v in value)


# ---------------------------------------------------------------------------
# Graph loading
# ---------------------------------------------------------------------------

# Input names of the ops whose missing trailing inputs the 0.8 -> 0.9 upgrade
# creates as variables named "<node>_<input>" (src/nnvm/legacy_json_util.cc).
def list_input_names(op, attrs):
    if op == "BatchNorm":
        return ["data", "gamma", "beta", "moving_mean", "moving_var"]
    if op in ("FullyConnected", "Convolution", "Deconvolution"):
        if attrs.bool("no_bias", op == "Deconvolution"):
            return ["data", "weight"]
        return ["data", "weight", "bias"]
    if op == "Embedding":
        return ["data", "weight"]
    if op == "LayerNorm":
        return ["data", "gamma", "beta"]
    if op == "SoftmaxOutput":
        return ["data", "label"]
    if op == "RNN":
        names = ["data", "parameters", "state"]
        if attrs.str("mode") == "lstm":
            names.append("state_cell")
        return names
    return None


class Node:
    def __init__(self, op, name, attrs, inputs, subgraphs=None):
        self.op = op
        self.name = name
        self.attrs = attrs
        self.inputs = inputs  # list of (node id, output index)
        # Graphs a control-flow node owns (_foreach's body, _while_loop's cond and func...)
        self.subgraphs = subgraphs or []

    def __repr__(self):
        return "Node(%s %s)" % (self.op, self.name)


class Graph:
    def __init__(self, nodes, heads, version):
        self.nodes = nodes
        self.heads = heads
        self.version = version

    def output_names(self):
        return [output_name(self.nodes[nid], idx) for nid, idx in self.heads]


def output_name(node, index):
    """MXNet's list_outputs() name of output `index` of `node`: the node
    name, "_", and the op's FListOutputNames entry ("output" by default)."""
    if node.op == "null":
        return node.name
    return node.name + "_" + visible_output_names(node)[index]


def visible_output_names(node):
    """The op's output names (FListOutputNames), visible outputs only."""
    a = node.attrs
    if node.op == "BatchNorm" and a.bool("output_mean_var", False):
        return ["output", "mean", "var"]
    if node.op == "LayerNorm" and a.bool("output_mean_var", False):
        return ["output", "mean", "std"]
    if node.op == "RNN" and a.bool("state_outputs", False):
        # src/operator/rnn.cc, ListRnnOutputNames
        if a.str("mode") == "lstm":
            return ["output", "state_output", "statecell_output"]
        return ["output", "state_output"]
    if node.op in ("SliceChannel", "split"):
        # src/operator/slice_channel-inl.h, ListOutputs: output0, output1...
        return ["output%d" % i for i in range(a.int("num_outputs"))]
    if node.op == "_npi_unique":
        # No FListOutputNames: nnvm's default, "output" alone or output0, output1...
        n = 1 + sum(a.bool(k, False)
                    for k in ("return_index", "return_inverse", "return_counts"))
        return ["output"] if n == 1 else ["output%d" % i for i in range(n)]
    if node.op in ("_contrib_box_nms", "_contrib_box_non_maximum_suppression", "_npx_box_nms"):
        # Two outputs (one hidden) and no FListOutputNames: nnvm names them output0, output1.
        return ["output0"]
    return ["output"]


def load_graph(path_or_dict, parent_version=None):
    """A graph from a file or its parsed JSON; a node's "subgraphs" load with it. A subgraph
    (parent_version given) takes its parent's version, as it has no "attrs" of its own."""
    if isinstance(path_or_dict, dict):
        js = path_or_dict
    else:
        with open(path_or_dict) as f:
            js = json.load(f)
    version = 800 if parent_version is None else parent_version
    top = js.get("attrs") or {}
    if parent_version is None and "mxnet_version" in top:
        version = int(top["mxnet_version"][1])
    nodes = []
    for jn in js["nodes"]:
        merged = {}
        # Legacy files keep op parameters in "param" and hidden keys in
        # "attr"; newer ones put everything in "attrs".
        for key in ("attr", "attrs", "param"):
            if isinstance(jn.get(key), dict):
                merged.update(jn[key])
        inputs = [(int(e[0]), int(e[1])) for e in jn.get("inputs", [])]
        subgraphs = [load_graph(sub, version) for sub in jn.get("subgraphs", [])]
        nodes.append(Node(jn["op"], jn["name"], Attrs(merged), inputs, subgraphs))
    heads = [(int(e[0]), int(e[1])) for e in js["heads"]]
    graph = Graph(nodes, heads, version)
    if version < 900 and parent_version is None:
        upgrade_legacy_inputs(graph)
    return graph


def upgrade_legacy_inputs(graph):
    """Give pre-0.9 nodes their missing (auxiliary) inputs as variables."""
    for node in list(graph.nodes):
        if node.op == "null":
            continue
        names = list_input_names(node.op, node.attrs)
        if names is None:
            continue
        for i in range(len(node.inputs), len(names)):
            var = Node("null", node.name + "_" + names[i], Attrs({}), [])
            graph.nodes.append(var)
            node.inputs.append((len(graph.nodes) - 1, 0))


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

FLOAT32_LOWEST = -float(np.finfo(np.float32).max)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softmax_along(x, axis, temperature=1.0):
    z = x / temperature
    z = z - np.max(z, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def sliding_windows(x, kernel, stride, dilate):
    """View of x (N, C, *spatial) as (N, C, *out, *kernel) windows.
    x must already hold any padding."""
    nd = len(kernel)
    out = []
    for i in range(nd):
        span = dilate[i] * (kernel[i] - 1) + 1
        out.append((x.shape[2 + i] - span) // stride[i] + 1)
    shape = x.shape[:2] + tuple(out) + tuple(kernel)
    strides = (x.strides[:2]
               + tuple(x.strides[2 + i] * stride[i] for i in range(nd))
               + tuple(x.strides[2 + i] * dilate[i] for i in range(nd)))
    return np.lib.stride_tricks.as_strided(x, shape, strides, writeable=False)


def spatial_param(attrs, key, nd, default):
    value = attrs.tuple(key, ())
    if len(value) == 0:
        return (default,) * nd
    if len(value) != nd:
        raise ValueError("%s has %d entries, kernel has %d" % (key, len(value), nd))
    return value


# ---------------------------------------------------------------------------
# Operators. Each takes (attrs, list of float64 arrays) and returns an array
# or a tuple of arrays (one per output).
# ---------------------------------------------------------------------------


def op_convolution(a, ins):
    x, w = ins[0], ins[1]
    kernel = a.tuple("kernel")
    nd = len(kernel)
    stride = spatial_param(a, "stride", nd, 1)
    dilate = spatial_param(a, "dilate", nd, 1)
    pad = spatial_param(a, "pad", nd, 0)
    groups = a.int("num_group", 1)
    nfilter = a.int("num_filter")
    layout = a.str("layout", "None")
    if layout not in ("None", None) and layout[1] != "C":
        raise NotImplementedError("Convolution layout " + layout)
    n, c = x.shape[:2]
    if w.shape != (nfilter, c // groups) + tuple(kernel):
        raise ValueError("Convolution weight shape %s, expected %s" % (
            w.shape, (nfilter, c // groups) + tuple(kernel)))
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    win = sliding_windows(xp, kernel, stride, dilate)  # N C *out *k
    cg, fg = c // groups, nfilter // groups
    sum_axes = [1] + list(range(2 + nd, 2 + 2 * nd))
    parts = []
    for g in range(groups):
        wg = w[g * fg:(g + 1) * fg]
        y = np.tensordot(win[:, g * cg:(g + 1) * cg], wg,
                         axes=(sum_axes, [1] + list(range(2, 2 + nd))))
        parts.append(y)  # N *out Fg
    y = np.concatenate(parts, axis=-1)
    y = np.moveaxis(y, -1, 1)
    if not a.bool("no_bias", False):
        y = y + ins[2].reshape((1, -1) + (1,) * nd)
    return np.ascontiguousarray(y)


def pooled_size(size, k, p, s, convention):
    if convention == "valid":
        return (size + 2 * p - k) // s + 1
    if convention == "full":
        return int(math.ceil((size + 2 * p - k) / s)) + 1
    raise NotImplementedError("pooling_convention " + convention)


def op_pooling(a, ins):
    x = ins[0]
    nd = x.ndim - 2
    pool_type = a.str("pool_type", "max")
    convention = a.str("pooling_convention", "valid")
    layout = a.str("layout", "None")
    if layout not in ("None", None) and layout[1] != "C":
        raise NotImplementedError("Pooling layout " + layout)
    if a.bool("global_pool", False):
        kernel = x.shape[2:]
        stride = (1,) * nd
        pad = (0,) * nd
        convention = "valid"
    else:
        kernel = a.tuple("kernel")
        stride = spatial_param(a, "stride", nd, 1)
        pad = spatial_param(a, "pad", nd, 0)
    out = [pooled_size(x.shape[2 + i], kernel[i], pad[i], stride[i], convention)
           for i in range(nd)]
    # Pad on the left by `pad`, on the right enough for the last window
    # (the "full" convention may reach past the symmetric padding).
    right = [max(pad[i], (out[i] - 1) * stride[i] + kernel[i] - x.shape[2 + i] - pad[i])
             for i in range(nd)]
    widths = [(0, 0), (0, 0)] + [(pad[i], right[i]) for i in range(nd)]
    axes = tuple(range(2 + nd, 2 + 2 * nd))
    ones = (1,) * nd

    def windows(arr):
        w = sliding_windows(arr, kernel, stride, ones)
        return w[(slice(None), slice(None)) + tuple(slice(0, o) for o in out)]

    if pool_type == "max":
        xp = np.pad(x, widths, constant_values=-np.inf)
        y = windows(xp).max(axis=axes)
        # A window lying wholly in the padding gives the lowest float.
        return np.where(np.isneginf(y), FLOAT32_LOWEST, y)
    if pool_type not in ("avg", "sum"):
        raise NotImplementedError("pool_type " + pool_type)
    xp = np.pad(x, widths)
    total = windows(xp).sum(axis=axes)
    if pool_type == "sum":
        return total
    # Divisor of each window: the positions inside the symmetrically padded
    # input (count_include_pad, MXNet's default) or inside the input only.
    if a.bool("count_include_pad", True):
        inside = np.ones((1, 1) + tuple(x.shape[2 + i] + 2 * pad[i] for i in range(nd)))
        inside = np.pad(inside, [(0, 0), (0, 0)] + [(0, right[i] - pad[i]) for i in range(nd)])
    else:
        inside = np.pad(np.ones((1, 1) + x.shape[2:]), widths)
    count = windows(inside).sum(axis=axes)
    # A "full" window lying wholly in the padding has no element to count
    # when count_include_pad is false: 0 / 0, NaN, as in MXNet.
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / count


def op_fully_connected(a, ins):
    x, w = ins[0], ins[1]
    if a.bool("flatten", True):
        # the product, not -1: a zero-row input (an all-false mask) has no size to infer from
        x = x.reshape(x.shape[0], int(np.prod(x.shape[1:])))
    y = x @ w.T
    if not a.bool("no_bias", False):
        y = y + ins[2]
    return y


def op_batch_norm(a, ins):
    x, gamma, beta, mean, var = ins
    axis = a.int("axis", 1) % x.ndim
    eps = a.float("eps", 1e-3)
    if a.bool("fix_gamma", True):
        gamma = np.ones_like(gamma)
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    scale = (gamma / np.sqrt(var + eps)).reshape(shape)
    y = (x - mean.reshape(shape)) * scale + beta.reshape(shape)
    return (y, mean, var)


def op_layer_norm(a, ins):
    x, gamma, beta = ins
    axis = a.int("axis", -1) % x.ndim
    eps = a.float("eps", 1e-5)
    mean = x.mean(axis=axis, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axis, keepdims=True)
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    y = (x - mean) / np.sqrt(var + eps) * gamma.reshape(shape) + beta.reshape(shape)
    return (y, mean, np.sqrt(var + eps))


def op_activation(a, ins):
    x = ins[0]
    kind = a.str("act_type")
    if kind == "relu":
        return np.maximum(x, 0.0)
    if kind == "sigmoid":
        return sigmoid(x)
    if kind == "tanh":
        return np.tanh(x)
    if kind == "softrelu":
        return np.logaddexp(0.0, x)
    if kind == "softsign":
        return x / (1.0 + np.abs(x))
    raise NotImplementedError("act_type " + str(kind))


def op_softmax(a, ins):
    x = ins[0]
    temperature = a.float("temperature", 1.0)
    return softmax_along(x, a.int("axis", -1), temperature)


def op_log_softmax(a, ins):
    return np.log(op_softmax(a, ins))


def op_softmax_output(a, ins):
    x = ins[0]
    if a.bool("multi_output", False):
        n, k = x.shape[0], x.shape[1]
        return softmax_along(x.reshape(n, k, -1), 1).reshape(x.shape)
    if a.bool("preserve_shape", False):
        return softmax_along(x, -1)
    return softmax_along(x.reshape(x.shape[0], -1), 1).reshape(x.shape)


def op_dropout(a, ins):
    return (ins[0], np.ones_like(ins[0]))


def op_embedding(a, ins):
    idx, w = ins
    if w.shape != (a.int("input_dim"), a.int("output_dim")):
        raise ValueError("Embedding weight shape %s" % (w.shape,))
    # MXNet casts the float indices to integers and clips them into range.
    k = np.clip(idx.astype(np.int64), 0, w.shape[0] - 1)
    return w[k]


def op_flatten(a, ins):
    x = ins[0]
    return x.reshape(x.shape[0], -1)


def op_concat(a, ins):
    return np.concatenate(ins, axis=a.int("dim", 1))


def reshape_target(spec, dshape, reverse):
    """MXNet's Reshape shape inference with the special codes 0, -1, -2,
    -3, -4 (src/operator/tensor/matrix_op-inl.h, InferReshapeShape)."""
    src = list(dshape)
    params = list(spec)
    if reverse:
        src.reverse()
        params.reverse()
    out = []
    si = 0
    infer_at = -1
    i = 0
    while i < len(params):
        p = params[i]
        if p == 0:
            out.append(src[si])
            si += 1
        elif p == -1:
            if infer_at >= 0:
                raise ValueError("Reshape: more than one -1 in %s" % (spec,))
            infer_at = len(out)
            out.append(1)
            si += 1
        elif p == -2:
            out.extend(src[si:])
            si = len(src)
        elif p == -3:
            out.append(src[si] * src[si + 1])
            si += 2
        elif p == -4:
            d0 = src[si]
            si += 1
            d1, d2 = params[i + 1], params[i + 2]
            i += 2
            if d1 == -1:
                d1 = d0 // d2
            if d2 == -1:
                d2 = d0 // d1
            if d1 * d2 != d0:
                raise ValueError("Reshape: -4 split %d into %d x %d" % (d0, d1, d2))
            out.extend([d1, d2])
        else:
            out.append(p)
            si += 1
        i += 1
    if infer_at >= 0:
        known = int(np.prod(out))
        out[infer_at] = int(np.prod(dshape)) // known
    if reverse:
        out.reverse()
    return tuple(out)


def op_reshape(a, ins):
    x = ins[0]
    spec = a.tuple("shape", ())
    if len(spec) > 0:
        target = reshape_target(spec, x.shape, a.bool("reverse", False))
    else:
        # Deprecated target_shape / keep_highest: one 0 entry is inferred.
        target = list(a.tuple("target_shape", ()))
        if a.bool("keep_highest", False):
            target[0] = x.shape[0]
        if 0 in target:
            target[target.index(0)] = -1
    return x.reshape(target)


def op_expand_dims(a, ins):
    x = ins[0]
    axis = a.int("axis")
    if axis < 0:
        axis += x.ndim + 1
    return np.expand_dims(x, axis)


def op_transpose(a, ins):
    axes = a.tuple("axes", ())
    return np.transpose(ins[0], axes if len(axes) else None)


def op_broadcast_axis(a, ins):
    x = ins[0]
    axes = a.tuple("axis", ())
    sizes = a.tuple("size", ())
    shape = list(x.shape)
    for ax, size in zip(axes, sizes):
        ax %= x.ndim
        if shape[ax] != 1:
            raise ValueError("broadcast_axis: axis %d has size %d" % (ax, shape[ax]))
        shape[ax] = size
    return np.broadcast_to(x, shape).copy()


def op_broadcast_to(a, ins):
    x = ins[0]
    target = list(a.tuple("shape"))
    for i, d in enumerate(target):
        if d == 0:
            target[i] = x.shape[i]
    return np.broadcast_to(x, target).copy()


def op_broadcast_like(a, ins):
    x, like = ins
    lhs_axes = a.tuple("lhs_axes", None)
    rhs_axes = a.tuple("rhs_axes", None)
    if lhs_axes is None or rhs_axes is None:
        return np.broadcast_to(x, like.shape).copy()
    shape = list(x.shape)
    for la, ra in zip(lhs_axes, rhs_axes):
        la %= x.ndim
        if shape[la] != 1:
            raise ValueError("broadcast_like: lhs axis %d has size %d" % (la, shape[la]))
        shape[la] = like.shape[ra % like.ndim]
    return np.broadcast_to(x, shape).copy()


def op_reshape_like(a, ins):
    # lhs with dims [lhs_begin, lhs_end) replaced by rhs's [rhs_begin, rhs_end): begin
    # defaults to 0, end to the rank, negatives count from the end, ranges must be non-empty.
    x, like = ins

    def span(side, ndim):
        begin = a.int(side + "_begin", 0)
        end = a.int(side + "_end", ndim)
        begin = begin + ndim if begin < 0 else begin
        end = end + ndim if end < 0 else end
        if not 0 <= begin < end <= ndim:
            raise ValueError("%s range [%d, %d) is not within rank %d" % (side, begin, end, ndim))
        return begin, end

    lb, le = span("lhs", x.ndim)
    rb, re_ = span("rhs", like.ndim)
    shape = x.shape[:lb] + like.shape[rb:re_] + x.shape[le:]
    if int(np.prod(shape)) != x.size:
        raise ValueError("cannot reshape %s like %s" % (x.shape, like.shape))
    return x.reshape(shape)


def binary(fn):
    def op(a, ins):
        return fn(ins[0], ins[1]).astype(np.float64)
    return op


def elemwise(fn):
    def op(a, ins):
        if ins[0].shape != ins[1].shape:
            raise ValueError("elementwise op on shapes %s and %s" % (ins[0].shape, ins[1].shape))
        return fn(ins[0], ins[1]).astype(np.float64)
    return op


def scalar(fn):
    def op(a, ins):
        return np.asarray(fn(ins[0], a.float("scalar", 0.0)), dtype=np.float64)
    return op


def unary(fn):
    def op(a, ins):
        return fn(ins[0])
    return op


def erf(x):
    # math.erf over a flat list: exact to double precision and fast enough
    # for the BERT feed-forward layers (384 x 3072 values per layer).
    flat = x.ravel().tolist()
    return np.fromiter(map(math.erf, flat), dtype=np.float64, count=len(flat)).reshape(x.shape)


def op_where(a, ins):
    cond, x, y = ins
    if cond.shape != x.shape:
        # A 1-D condition selects whole rows along the first axis.
        cond = cond.reshape((-1,) + (1,) * (x.ndim - 1))
    return np.where(cond != 0, x, y)


def op_batch_dot(a, ins):
    x, y = ins
    if a.bool("transpose_a", False):
        x = np.swapaxes(x, -1, -2)
    if a.bool("transpose_b", False):
        y = np.swapaxes(y, -1, -2)
    return np.matmul(x, y)


def op_dot(a, ins):
    x, y = ins
    if a.bool("transpose_a", False):
        x = x.T
    if a.bool("transpose_b", False):
        y = y.T
    return np.tensordot(x, y, axes=1)


def op_div_sqrt_dim(a, ins):
    x = ins[0]
    return x / math.sqrt(x.shape[-1])


def op_sequence_mask(a, ins):
    x = ins[0]
    if not a.bool("use_sequence_length", False):
        return x.copy()
    lengths = ins[1].astype(np.int64)
    axis = a.int("axis", 0)
    value = a.float("value", 0.0)
    steps = np.arange(x.shape[axis])
    if axis == 0:   # (T, B, ...)
        keep = steps[:, None] < lengths[None, :]
    elif axis == 1:  # (B, T, ...)
        keep = steps[None, :] < lengths[:, None]
    else:
        raise ValueError("SequenceMask axis must be 0 or 1")
    keep = keep.reshape(keep.shape + (1,) * (x.ndim - 2))
    return np.where(keep, x, value)


RNN_GATES = {"lstm": 4, "gru": 3, "rnn_relu": 1, "rnn_tanh": 1}


def op_rnn(a, ins):
    """Fused RNN, layout TNC (src/operator/rnn-inl.h, rnn_impl.h).

    The flat parameter vector holds all weights first, for each layer and
    direction W_i2h (G*H x in) then W_h2h (G*H x H); then all biases, for
    each layer and direction b_i2h (G*H) then b_h2h (G*H). G is the number
    of gates, stacked in the order i, f, g (cell candidate), o for lstm and
    r, z, n for gru. A reverse direction runs from the last step to the
    first, and writes the second half of each output row."""
    mode = a.str("mode")
    if mode not in RNN_GATES:
        raise NotImplementedError("RNN mode " + str(mode))
    if a.has("projection_size"):
        raise NotImplementedError("RNN projection_size")
    gates = RNN_GATES[mode]
    x, params, h0 = ins[:3]
    c0 = ins[3] if mode == "lstm" else None
    layers = a.int("num_layers")
    hidden = a.int("state_size")
    dirs = 2 if a.bool("bidirectional", False) else 1
    seq_len, batch, _ = x.shape
    expected = rnn_param_size(layers, dirs, x.shape[2], hidden, gates)
    if params.size != expected:
        raise ValueError("RNN parameters have %d values, expected %d" % (params.size, expected))
    gh = gates * hidden
    weights = []
    offset = 0
    for layer in range(layers):
        in_size = x.shape[2] if layer == 0 else dirs * hidden
        for _ in range(dirs):
            wx = params[offset:offset + gh * in_size].reshape(gh, in_size)
            offset += wx.size
            wh = params[offset:offset + gh * hidden].reshape(gh, hidden)
            offset += wh.size
            weights.append([wx, wh])
    for entry in weights:
        entry.append(params[offset:offset + gh])
        entry.append(params[offset + gh:offset + 2 * gh])
        offset += 2 * gh
    hy, cy = [], []
    seq = x
    for layer in range(layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            wx, wh, bx, bh = weights[k]
            h = h0[k]
            c = c0[k] if c0 is not None else None
            pre = seq @ wx.T + bx  # (T, N, G*H)
            ys = np.empty((seq_len, batch, hidden))
            order = range(seq_len) if d == 0 else range(seq_len - 1, -1, -1)
            for t in order:
                hh = h @ wh.T + bh
                g = pre[t]
                if mode == "lstm":
                    z = g + hh
                    i_g = sigmoid(z[:, 0:hidden])
                    f_g = sigmoid(z[:, hidden:2 * hidden])
                    c_g = np.tanh(z[:, 2 * hidden:3 * hidden])
                    o_g = sigmoid(z[:, 3 * hidden:4 * hidden])
                    c = f_g * c + i_g * c_g
                    h = o_g * np.tanh(c)
                elif mode == "gru":
                    r_g = sigmoid(g[:, 0:hidden] + hh[:, 0:hidden])
                    z_g = sigmoid(g[:, hidden:2 * hidden] + hh[:, hidden:2 * hidden])
                    n_g = np.tanh(g[:, 2 * hidden:] + r_g * hh[:, 2 * hidden:])
                    h = (1.0 - z_g) * n_g + z_g * h
                elif mode == "rnn_relu":
                    h = np.maximum(g + hh, 0.0)
                else:
                    h = np.tanh(g + hh)
                ys[t] = h
            outs.append(ys)
            hy.append(h)
            cy.append(c)
        seq = np.concatenate(outs, axis=2)
    if mode == "lstm":
        return (seq, np.stack(hy), np.stack(cy))
    return (seq, np.stack(hy))


def rnn_param_size(layers, dirs, input_size, hidden, gates=4):
    total = 0
    for layer in range(layers):
        in_size = input_size if layer == 0 else dirs * hidden
        total += dirs * gates * hidden * (in_size + hidden + 2)
    return total


def op_ones_like(a, ins):
    return np.ones_like(ins[0])


def op_zeros_like(a, ins):
    return np.zeros_like(ins[0])


def op_identity(a, ins):
    return ins[0].copy()


def op_clip(a, ins):
    return np.clip(ins[0], a.float("a_min"), a.float("a_max"))


# Cast keeps the float64 evaluation but takes the target type's values: integers truncate
# toward zero (C's conversion, as MXNet's kernel does) and wrap to their width; float32 and
# float16 round to their precision.
CAST_INT_BITS = {"int8": (8, True), "uint8": (8, False), "int32": (32, True),
                 "int64": (64, True), "bool": (1, False)}


def op_cast(a, ins):
    dtype = a.str("dtype", "float32")
    x = ins[0]
    if dtype in ("float32", "float16"):
        return x.astype(dtype).astype(np.float64)
    if dtype == "float64":
        return x
    if dtype == "bool":
        return (x != 0).astype(np.float64)
    bits, signed = CAST_INT_BITS[dtype]
    v = np.trunc(x)
    if bits < 64:
        span = 2.0 ** bits
        v = np.mod(v, span)
        if signed:
            v = np.where(v >= span / 2, v - span, v)
    return v


def op_squeeze(a, ins):
    x = ins[0]
    axes = parse_tuple(a.str("axis", "None"))
    if not axes:
        axes = tuple(i for i, d in enumerate(x.shape) if d == 1)
    axes = tuple(ax % x.ndim for ax in axes)
    out = np.squeeze(x, axis=axes)
    return out.reshape(1) if out.ndim == 0 else out


def op_slice_axis(a, ins):
    x = ins[0]
    axis = a.int("axis") % x.ndim
    begin = a.int("begin")
    end = a.int("end", None)
    index = [slice(None)] * x.ndim
    index[axis] = slice(begin, end)
    return x[tuple(index)].copy()


def op_sum(a, ins):
    x = ins[0]
    axes = a.tuple("axis", ())
    keepdims = a.bool("keepdims", False)
    if a.bool("exclude", False):
        axes = tuple(i for i in range(x.ndim) if i not in [ax % x.ndim for ax in axes])
    return np.sum(x, axis=axes if len(axes) else None, keepdims=keepdims)


def op_mean(a, ins):
    x = ins[0]
    axes = a.tuple("axis", ())
    return np.mean(x, axis=axes if len(axes) else None, keepdims=a.bool("keepdims", False))


def reduce_extreme(fn):
    # max/min over `axis` (all axes when empty); MXNet 1.x gives (1,) for a full reduction.
    def op(a, ins):
        x = ins[0]
        axes = a.tuple("axis", ())
        out = fn(x, axis=axes if len(axes) else None, keepdims=a.bool("keepdims", False))
        return np.asarray(out).reshape(1) if np.ndim(out) == 0 else out
    return op


def op_take(a, ins):
    # Rows of `a` along `axis` (0 by default) at the indices (truncated to integers); the
    # default mode "clip" clamps them into range, "wrap" takes them modulo the axis size.
    x, idx = ins
    axis = a.int("axis", 0) % x.ndim
    k = idx.astype(np.int64)
    if a.str("mode", "clip") == "wrap":
        k = np.mod(k, x.shape[axis])
    elif a.str("mode", "clip") == "clip":
        k = np.clip(k, 0, x.shape[axis] - 1)
    return np.take(x, k, axis=axis)


def arange_values(a, count):
    """_arange's and arange_like's values: start + (i // repeat) * step, truncated for an
    integer dtype."""
    start = a.float("start", 0.0)
    step = a.float("step", 1.0)
    repeat = a.int("repeat", 1)
    out = start + (np.arange(count) // repeat) * step
    if a.str("dtype", "float32") in ("int32", "int64", "uint8", "int8"):
        out = np.trunc(out)
    return out


def op_arange_like(a, ins):
    # Only the data's shape counts: without an axis the output has that shape and counts
    # through all its elements; with one it is (shape[axis],). repeat does not lengthen it.
    x = ins[0]
    axis = a.int("axis", None)
    if axis is None:
        return arange_values(a, x.size).reshape(x.shape)
    return arange_values(a, x.shape[axis % x.ndim])


OPS = {
    "Convolution": op_convolution,
    "Pooling": op_pooling,
    "FullyConnected": op_fully_connected,
    "BatchNorm": op_batch_norm,
    "LayerNorm": op_layer_norm,
    "Activation": op_activation,
    "softmax": op_softmax,
    "log_softmax": op_log_softmax,
    "SoftmaxOutput": op_softmax_output,
    "Softmax": op_softmax_output,  # deprecated alias
    "Dropout": op_dropout,
    "Embedding": op_embedding,
    "Flatten": op_flatten,
    "flatten": op_flatten,
    "Concat": op_concat,
    "concat": op_concat,
    "Reshape": op_reshape,
    "reshape": op_reshape,
    "expand_dims": op_expand_dims,
    "transpose": op_transpose,
    "broadcast_axis": op_broadcast_axis,
    "broadcast_axes": op_broadcast_axis,
    "broadcast_to": op_broadcast_to,
    "broadcast_like": op_broadcast_like,
    "reshape_like": op_reshape_like,
    "broadcast_add": binary(np.add),
    "broadcast_plus": binary(np.add),
    "broadcast_sub": binary(np.subtract),
    "broadcast_minus": binary(np.subtract),
    "broadcast_mul": binary(np.multiply),
    "broadcast_div": binary(np.divide),
    "broadcast_maximum": binary(np.maximum),
    "broadcast_minimum": binary(np.minimum),
    "broadcast_lesser": binary(np.less),
    "broadcast_lesser_equal": binary(np.less_equal),
    "broadcast_greater": binary(np.greater),
    "broadcast_greater_equal": binary(np.greater_equal),
    "broadcast_equal": binary(np.equal),
    "broadcast_not_equal": binary(np.not_equal),
    "elemwise_add": elemwise(np.add),
    "_plus": elemwise(np.add),
    "_Plus": elemwise(np.add),
    "elemwise_sub": elemwise(np.subtract),
    "_minus": elemwise(np.subtract),
    "_Minus": elemwise(np.subtract),
    "elemwise_mul": elemwise(np.multiply),
    "_mul": elemwise(np.multiply),
    "_Mul": elemwise(np.multiply),
    "elemwise_div": elemwise(np.divide),
    "_div": elemwise(np.divide),
    "_Div": elemwise(np.divide),
    "_plus_scalar": scalar(lambda x, s: x + s),
    "_PlusScalar": scalar(lambda x, s: x + s),
    "_minus_scalar": scalar(lambda x, s: x - s),
    "_MinusScalar": scalar(lambda x, s: x - s),
    "_rminus_scalar": scalar(lambda x, s: s - x),
    "_RMinusScalar": scalar(lambda x, s: s - x),
    "_mul_scalar": scalar(lambda x, s: x * s),
    "_MulScalar": scalar(lambda x, s: x * s),
    "_div_scalar": scalar(lambda x, s: x / s),
    "_DivScalar": scalar(lambda x, s: x / s),
    "_rdiv_scalar": scalar(lambda x, s: s / x),
    "_RDivScalar": scalar(lambda x, s: s / x),
    "_power_scalar": scalar(lambda x, s: x ** s),
    "_maximum_scalar": scalar(np.maximum),
    "_minimum_scalar": scalar(np.minimum),
    "_lesser_scalar": scalar(lambda x, s: (x < s)),
    "_lesser_equal_scalar": scalar(lambda x, s: (x <= s)),
    "_greater_scalar": scalar(lambda x, s: (x > s)),
    "_greater_equal_scalar": scalar(lambda x, s: (x >= s)),
    "_equal_scalar": scalar(lambda x, s: (x == s)),
    "_not_equal_scalar": scalar(lambda x, s: (x != s)),
    # mshadow's mod: the sign of the divisor, as Python's %, and 0 for a zero divisor.
    "_mod_scalar": scalar(lambda x, s: np.mod(x, s) if s != 0 else np.zeros_like(x)),
    # What Symbol's <, <=, >, >=, ==, != give for two symbols: same-shape comparisons.
    "_lesser": elemwise(np.less),
    "_lesser_equal": elemwise(np.less_equal),
    "_greater": elemwise(np.greater),
    "_greater_equal": elemwise(np.greater_equal),
    "_equal": elemwise(np.equal),
    "_not_equal": elemwise(np.not_equal),
    "erf": unary(erf),
    "exp": unary(np.exp),
    "log": unary(np.log),
    "sqrt": unary(np.sqrt),
    "rsqrt": unary(lambda x: 1.0 / np.sqrt(x)),
    "square": unary(np.square),
    "abs": unary(np.abs),
    "negative": unary(np.negative),
    "tanh": unary(np.tanh),
    "sigmoid": unary(sigmoid),
    "relu": unary(lambda x: np.maximum(x, 0.0)),
    "where": op_where,
    "ones_like": op_ones_like,
    "zeros_like": op_zeros_like,
    "_copy": op_identity,
    "identity": op_identity,
    "BlockGrad": op_identity,
    "stop_gradient": op_identity,
    "clip": op_clip,
    "slice_axis": op_slice_axis,
    "sum": op_sum,
    "mean": op_mean,
    "max": reduce_extreme(np.max),
    "min": reduce_extreme(np.min),
    "take": op_take,
    "batch_dot": op_batch_dot,
    "dot": op_dot,
    "_contrib_div_sqrt_dim": op_div_sqrt_dim,
    "SequenceMask": op_sequence_mask,
    "_contrib_arange_like": op_arange_like,
    "RNN": op_rnn,
}


# ---------------------------------------------------------------------------
# Index ops: repeat, tile, reverse, stack, SliceChannel, slice_like, argsort,
# gather_nd, shape_array, size_array (src/operator/tensor/matrix_op-inl.h,
# src/operator/slice_channel-inl.h, ordering_op-inl.h, indexing_op.h,
# elemwise_unary_op_basic.cc)
# ---------------------------------------------------------------------------

def checked_axis(axis, ndim, what):
    if not -ndim <= axis < ndim:
        raise ValueError("%s %d is out of range for rank %d" % (what, axis, ndim))
    return axis % ndim


def op_repeat(a, ins):
    # Each element `repeats` times in a row; no axis flattens first; 0 repeats give (0,).
    x = ins[0]
    repeats = a.int("repeats")
    axis = a.int("axis", None)
    if axis is not None:
        axis = checked_axis(axis, x.ndim, "axis")
    if repeats == 0:
        return np.zeros((0,))
    if axis is None:
        return np.repeat(x.reshape(-1), repeats)
    return np.repeat(x, repeats, axis=axis)


def op_tile(a, ins):
    # Shape and reps right-aligned, the shorter one padded with leading 1s (numpy.tile's rule).
    x = ins[0]
    reps = a.tuple("reps", ())
    if not reps:
        return x.copy()
    nd = max(x.ndim, len(reps))
    x = x.reshape((1,) * (nd - x.ndim) + x.shape)
    reps = (1,) * (nd - len(reps)) + tuple(reps)
    for axis, r in enumerate(reps):
        x = np.concatenate([x] * r, axis=axis) if r > 0 else np.take(x, [], axis=axis)
    return x


def op_reverse(a, ins):
    # One reversal per listed axis: an axis listed twice comes back unchanged.
    x = ins[0]
    for axis in a.tuple("axis"):
        x = np.flip(x, axis=checked_axis(axis, x.ndim, "axis"))
    return x.copy()


def op_stack(a, ins):
    return np.stack(ins, axis=a.int("axis", 0))


def op_slice_channel(a, ins):
    # num_outputs equal parts along axis (default 1); squeeze_axis drops the axis.
    x = ins[0]
    n = a.int("num_outputs")
    axis = checked_axis(a.int("axis", 1), x.ndim, "axis")
    if x.shape[axis] % n:
        raise ValueError("axis %d of %s does not split into %d parts" % (axis, x.shape, n))
    parts = np.split(x, n, axis=axis)
    if a.bool("squeeze_axis", False):
        if x.shape[axis] != n:
            raise ValueError("squeeze_axis needs axis size %d, not %d" % (n, x.shape[axis]))
        parts = [np.squeeze(p, axis=axis) for p in parts]
    return tuple(p.copy() for p in parts)


def op_slice_like(a, ins):
    # Listed axes (all of them for axes=(), ranks equal) cut to shape_like's size from 0.
    x, like = ins[0], ins[1].shape
    axes = a.tuple("axes", ())
    if not axes:
        if len(like) != x.ndim:
            raise ValueError("axes=() needs equal ranks: %s vs %s" % (x.shape, like))
        axes = range(x.ndim)
    index = [slice(None)] * x.ndim
    for axis in axes:
        axis = checked_axis(axis, x.ndim, "axis")
        if like[axis] > x.shape[axis]:
            raise ValueError("shape_like %s exceeds the data %s" % (like, x.shape))
        index[axis] = slice(0, like[axis])
    return x[tuple(index)].copy()


def op_argsort(a, ins):
    # Stable in both directions (equal keys keep their order), NaN last; axis=None flattens;
    # the indices come back as numbers (float32 by default in MXNet).
    x = ins[0]
    ascend = a.bool("is_ascend", True)
    if x.ndim == 0:
        return np.zeros((1,))
    if a.str("axis") == "None":
        x, axis = x.reshape(-1), 0
    else:
        axis = checked_axis(a.int("axis", -1), x.ndim, "axis")
    keys = x if ascend else -x
    return np.argsort(keys, axis=axis, kind="stable").astype(np.float64)


def op_gather_nd(a, ins):
    # indices (M, ...): M coordinates per position, each in [-dim, dim - 1]; the engine adds
    # dim and truncates, as MXNet's kernel does, so a float index 2.7 picks 2.
    data, idx = ins
    m = idx.shape[0]
    if idx.ndim < 2 or not 1 <= m <= data.ndim:
        raise ValueError("indices %s do not fit data %s" % (idx.shape, data.shape))
    pos = idx.reshape(m, -1)
    out = np.empty((pos.shape[1],) + data.shape[m:])
    for i in range(pos.shape[1]):
        key = []
        for j in range(m):
            v, dim = float(pos[j, i]), data.shape[j]
            if not -dim <= v <= dim - 1:
                raise IndexError("index %g is out of bounds for axis %d with size %d"
                                 % (v, j, dim))
            key.append(int(math.trunc(v + dim)) % dim)
        out[i] = data[tuple(key)]
    return out.reshape(idx.shape[1:] + data.shape[m:])


def op_shape_array(a, ins):
    return np.array(ins[0].shape, dtype=np.float64)


def op_size_array(a, ins):
    return np.array([ins[0].size], dtype=np.float64)


OPS.update({
    "repeat": op_repeat,
    "tile": op_tile,
    "reverse": op_reverse,
    "flip": op_reverse,
    "stack": op_stack,
    "SliceChannel": op_slice_channel,
    "split": op_slice_channel,
    "slice_like": op_slice_like,
    "argsort": op_argsort,
    "gather_nd": op_gather_nd,
    "shape_array": op_shape_array,
    "size_array": op_size_array,
})

# ---------------------------------------------------------------------------
# (end of the index ops)
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Vision ops: _contrib_box_nms, _contrib_ROIAlign, _contrib_AdaptiveAvgPooling2D,
# Deconvolution (src/operator/contrib/bounding_box-inl.h, roi_align.cc,
# adaptive_avg_pooling.cc, src/operator/nn/deconvolution.cc)
# ---------------------------------------------------------------------------

def box_class_key(v):
    # MXNet compares class ids as static_cast<int>(float); x86 gives INT_MIN for NaN and
    # out-of-range values.
    if not -2.0 ** 31 < v < 2.0 ** 31:
        return -2 ** 31
    return int(v)


def box_corners(c, fmt):
    """(k, 4) coordinates as (x0, y0, x1, y1) columns."""
    if fmt == "corner":
        return c[:, 0], c[:, 1], c[:, 2], c[:, 3]
    return (c[:, 0] - c[:, 2] / 2, c[:, 1] - c[:, 3] / 2,
            c[:, 0] + c[:, 2] / 2, c[:, 1] + c[:, 3] / 2)


def op_box_nms(a, ins):
    # Per batch: boxes scoring above valid_thresh (and not of the background class), by score
    # (stable), the topk best, greedy suppression of IoU > overlap_thresh (within a class
    # unless force_suppress); kept rows first, then rows of -1. Output 1 records each kept
    # row's flat input index. topk=0 returns the input as is.
    x = ins[0]
    thresh = float(np.float32(a.float("overlap_thresh", 0.5)))
    valid = float(np.float32(a.float("valid_thresh", 0.0)))
    topk = a.int("topk", -1)
    cs, si, ii = a.int("coord_start", 2), a.int("score_index", 1), a.int("id_index", -1)
    bg = a.int("background_id", -1)
    force = a.bool("force_suppress", False)
    fin, fout = a.str("in_format", "corner"), a.str("out_format", "corner")
    shape = x.shape
    n, w = shape[-2], shape[-1]
    boxes = x.reshape(-1, n, w)
    batch = boxes.shape[0]
    k = n if topk < 0 else min(n, topk)
    if k < 1:
        return x.copy(), np.arange(batch * n, dtype=np.float64).reshape(shape[:-1] + (1,))
    out = np.full((batch, n, w), -1.0)
    rec = np.full((batch, n), -1.0)
    for b in range(batch):
        xb = boxes[b]
        ok = xb[:, si] > valid
        if ii >= 0:
            ok &= xb[:, ii] != bg
        cand = np.nonzero(ok)[0]
        cand = cand[np.argsort(-xb[cand, si], kind="stable")][:k]
        x0, y0, x1, y1 = box_corners(xb[cand, cs:cs + 4], fin)
        area = np.where((x1 - x0 < 0) | (y1 - y0 < 0), 0.0, (x1 - x0) * (y1 - y0))
        classes = [box_class_key(v) for v in xb[cand, ii]] if ii >= 0 else None
        alive = np.ones(len(cand), dtype=bool)
        for r in range(len(cand)):
            if not alive[r]:
                continue
            q = np.arange(r + 1, len(cand))
            q = q[alive[q]]
            if not force and ii >= 0:
                q = q[[classes[j] == classes[r] for j in q]] if len(q) else q
            iw = np.maximum(0.0, np.minimum(x1[r], x1[q]) - np.maximum(x0[r], x0[q]))
            ih = np.maximum(0.0, np.minimum(y1[r], y1[q]) - np.maximum(y0[r], y0[q]))
            inter = iw * ih
            with np.errstate(divide="ignore", invalid="ignore"):
                iou = inter / (area[r] + area[q] - inter)
            alive[q[iou > thresh]] = False
        kept = cand[alive]
        out[b, :len(kept)] = xb[kept]
        rec[b, :len(kept)] = b * n + kept
        if fin != fout:
            # Rows whose first coordinate is negative stay as they are (MXNet's check).
            rows = out[b, :, cs] >= 0
            c = out[b][rows, cs:cs + 4]
            if fout == "center":
                conv = np.stack([(c[:, 0] + c[:, 2]) / 2, (c[:, 1] + c[:, 3]) / 2,
                                 c[:, 2] - c[:, 0], c[:, 3] - c[:, 1]], axis=1)
            else:
                conv = np.stack(box_corners(c, "center"), axis=1)
            out[b, np.nonzero(rows)[0], cs:cs + 4] = conv
    return out.reshape(shape), rec.reshape(shape[:-1] + (1,))


def roi_axis_weights(coords, size):
    """Bilinear weights (len(coords), size) of sample positions along one axis, with
    ROIAlign's edge rules: nothing more than one pixel outside, clamped otherwise."""
    wts = np.zeros((len(coords), size))
    for i, v in enumerate(coords):
        if v < -1.0 or v > size:
            continue
        v = max(v, 0.0)
        lo = int(math.floor(v))
        if lo >= size - 1:
            wts[i, size - 1] = 1.0
        else:
            wts[i, lo] += 1.0 - (v - lo)
            wts[i, lo + 1] += v - lo
    return wts


def op_roi_align(a, ins):
    # rois (R, 5): [batch index, x1, y1, x2, y2] in image coordinates. Each bin is the mean of a
    # grid of bilinear samples (sample_ratio per side, or ceil(roi size / pooled size)); the
    # weights are separable, so a bin is Wy @ plane @ Wx^T. A negative batch index gives zeros.
    data, rois = ins
    ph, pw = a.tuple("pooled_size")
    scale = float(np.float32(a.float("spatial_scale")))
    sr = a.int("sample_ratio", -1)
    ps = a.bool("position_sensitive", False)
    aligned = a.bool("aligned", False)
    n_img, c_in, h, w = data.shape
    c_out = c_in // (ph * pw) if ps else c_in
    out = np.zeros((rois.shape[0], c_out, ph, pw))
    for r, roi in enumerate(rois):
        if not roi[0] > -1:
            continue
        b = int(roi[0])
        if b >= n_img:
            raise IndexError("roi %d: batch index %g, but the data has %d images"
                             % (r, roi[0], n_img))
        if not np.all(np.isfinite(roi[1:])):
            out[r] = np.nan
            continue
        off = 0.5 if aligned else 0.0
        x0, y0 = roi[1] * scale - off, roi[2] * scale - off
        rw, rh = roi[3] * scale - off - x0, roi[4] * scale - off - y0
        if aligned and not (rw > 0 and rh > 0):
            raise ValueError("roi %d is empty (aligned=True needs a positive size)" % r)
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = sr if sr > 0 else int(math.ceil(rh / ph))
        gw = sr if sr > 0 else int(math.ceil(rw / pw))
        ys = y0 + np.arange(ph)[:, None] * bh + (np.arange(gh)[None, :] + 0.5) * bh / gh
        xs = x0 + np.arange(pw)[:, None] * bw + (np.arange(gw)[None, :] + 0.5) * bw / gw
        wy = roi_axis_weights(ys.ravel(), h).reshape(ph, gh, h).sum(axis=1)
        wx = roi_axis_weights(xs.ravel(), w).reshape(pw, gw, w).sum(axis=1)
        full = np.einsum("ih,khw,jw->kij", wy, data[b], wx) / (gh * gw)
        if ps:
            # Bin (i, j) of output channel c reads input channel (c * ph + i) * pw + j.
            ii, jj = np.arange(ph)[None, :, None], np.arange(pw)[None, None, :]
            ci = (np.arange(c_out)[:, None, None] * ph + ii) * pw + jj
            out[r] = full[ci, ii, jj]
        else:
            out[r] = full
    return out


def op_adaptive_avg_pooling(a, ins):
    # Window [floor(i * in / out), ceil((i + 1) * in / out)) per output index; output_size
    # empty (or longer than 2) gives 1x1, one value a square.
    x = ins[0]
    size = a.tuple("output_size", ())
    oh, ow = (size[0], size[0]) if len(size) == 1 else tuple(size) if len(size) == 2 else (1, 1)
    n, c, h, w = x.shape
    out = np.empty((n, c, oh, ow))
    for i in range(oh):
        y0, y1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        for j in range(ow):
            x0, x1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            out[:, :, i, j] = x[:, :, y0:y1, x0:x1].mean(axis=(2, 3))
    return out


def deconv_pad_adj(a, in_sizes):
    """Deconvolution's padding and adj per axis: the attributes, or with target_shape the
    excess of the full output, ceil(excess / 2) and excess % 2 (DeconvolutionParam::InferPad)."""
    kernel = a.tuple("kernel")
    nd = len(kernel)
    stride = spatial_param(a, "stride", nd, 1)
    dilate = spatial_param(a, "dilate", nd, 1)
    target = a.tuple("target_shape", ())
    if any(target):
        pad, adj = [], []
        for i in range(nd):
            excess = stride[i] * (in_sizes[i] - 1) + dilate[i] * (kernel[i] - 1) + 1 - target[i]
            if excess < 0:
                raise ValueError("target_shape %s is too big" % (target,))
            pad.append((excess + 1) // 2)
            adj.append(excess % 2)
        return pad, adj
    return spatial_param(a, "pad", nd, 0), spatial_param(a, "adj", nd, 0)


def op_deconvolution(a, ins):
    # Transposed convolution, NCW/NCHW: input (n, c, i...) times weight (c, f, k...) adds to
    # output (n, g * fg + f, i * stride - pad + k * dilate). Built on a canvas of the full size
    # plus adj, then cropped by the padding.
    x, w = ins[0], ins[1]
    kernel = a.tuple("kernel")
    nd = len(kernel)
    if a.str("layout", "None") not in ("None", "NCW", "NCHW") or nd not in (1, 2):
        raise NotImplementedError("Deconvolution %d-D, layout %s" % (nd, a.str("layout")))
    stride = spatial_param(a, "stride", nd, 1)
    dilate = spatial_param(a, "dilate", nd, 1)
    pad, adj = deconv_pad_adj(a, x.shape[2:])
    groups = a.int("num_group", 1)
    nf = a.int("num_filter")
    n, c = x.shape[:2]
    cg, fg = c // groups, nf // groups
    full = [stride[i] * (x.shape[2 + i] - 1) + dilate[i] * (kernel[i] - 1) + 1
            for i in range(nd)]
    canvas = np.zeros((n, nf) + tuple(full[i] + adj[i] for i in range(nd)))
    for tap in np.ndindex(*kernel):
        start = [tap[i] * dilate[i] for i in range(nd)]
        index = tuple(slice(start[i], start[i] + stride[i] * (x.shape[2 + i] - 1) + 1, stride[i])
                      for i in range(nd))
        for g in range(groups):
            xg = x[:, g * cg:(g + 1) * cg]
            wg = w[g * cg:(g + 1) * cg][(slice(None), slice(None)) + tap]
            canvas[(slice(None), slice(g * fg, (g + 1) * fg)) + index] += \
                np.einsum("nc...,cf->nf...", xg, wg)
    out = canvas[(slice(None), slice(None))
                 + tuple(slice(pad[i], full[i] - pad[i] + adj[i]) for i in range(nd))]
    if not a.bool("no_bias", True):
        out = out + ins[2].reshape((1, nf) + (1,) * nd)
    return out.copy()


OPS.update({
    "Cast": op_cast,
    "squeeze": op_squeeze,
    "_contrib_box_nms": op_box_nms,
    "_contrib_box_non_maximum_suppression": op_box_nms,
    "_npx_box_nms": op_box_nms,
    "_contrib_ROIAlign": op_roi_align,
    "_contrib_AdaptiveAvgPooling2D": op_adaptive_avg_pooling,
    "Deconvolution": op_deconvolution,
    "_npx_deconvolution": op_deconvolution,
})

# ---------------------------------------------------------------------------
# (end of the vision ops)
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Dynamic-shape ops: the output's shape depends on the input values
# (src/operator/contrib/boolean_mask.cc, src/operator/numpy/np_nonzero_op.cc,
# np_unique_op.cc, src/operator/contrib/dynamic_shape_ops.cc). _zeros_shape,
# _ones_shape, _full_shape and _contrib_dynamic_arange are _zeros/_ones/
# _full/_arange with the shape or the bounds given as tensors.
# ---------------------------------------------------------------------------

INT_DTYPES = ("int32", "int64", "uint8", "int8")


def in_dtype(a, values):
    """Values converted as the op's `dtype` attribute (float32 by default) would hold them:
    truncated for integers, 0/1 for bool. Kept in float64, like every result here."""
    dtype = a.str("dtype", "float32")
    if dtype in INT_DTYPES:
        return np.trunc(values)
    if dtype == "bool":
        return (values != 0).astype(np.float64)
    return values


def shape_values(t, what):
    """A 1-D tensor's values as a shape of whole numbers."""
    if t.ndim != 1:
        raise ValueError("%s must be 1-D, not %s" % (what, t.shape))
    if not np.all(np.isfinite(t)) or np.any(t != np.floor(t)):
        raise ValueError("%s %s holds a value that is not a whole number" % (what, t))
    return [int(v) for v in t]


def scalar_value(t, what):
    if t.ndim > 1 or t.size != 1:
        raise ValueError("%s must be a scalar, shape () or (1,), not %s" % (what, t.shape))
    return float(t.reshape(-1)[0])


def op_boolean_mask(a, ins):
    # The slices along axis (0 by default, negatives from the end) whose index entry is
    # nonzero, in order; NaN counts as true, as in NumPy.
    data, index = ins
    axis = checked_axis(a.int("axis", 0), data.ndim, "axis")
    if index.ndim != 1 or index.shape[0] != data.shape[axis]:
        raise ValueError("index %s does not fit axis %d of %s" % (index.shape, axis, data.shape))
    return np.compress(index != 0, data, axis=axis)


def op_nonzero(a, ins):
    # (count, ndim) coordinates of the nonzero elements in row-major order (numpy.argwhere).
    return np.argwhere(ins[0] != 0).astype(np.float64)


def shape_source(value_of):
    def op(a, ins):
        shape = shape_values(ins[0], "shape")
        if any(d < 0 for d in shape):
            raise ValueError("shape %s has a negative dim" % (shape,))
        return np.full(shape, in_dtype(a, np.float64(value_of(a))))
    return op


def op_dynamic_reshape(a, ins):
    # Reshape to the values of `shape`: 0 copies the data's dim at that position, one -1 is
    # inferred; no other negative code.
    x, spec = ins[0], shape_values(ins[1], "shape")
    target = []
    for i, c in enumerate(spec):
        if c == 0:
            if i >= x.ndim:
                raise ValueError("shape %s copies dim %d of %s" % (spec, i, x.shape))
            target.append(x.shape[i])
        elif c >= -1:
            target.append(c)
        else:
            raise ValueError("shape %s: code %d is not supported" % (spec, c))
    if target.count(-1) > 1:
        raise ValueError("shape %s has more than one -1" % (spec,))
    if -1 in target:
        known = int(np.prod([d for d in target if d != -1]))
        if known == 0 or x.size % known:
            raise ValueError("cannot reshape %s into %s" % (x.shape, spec))
        target[target.index(-1)] = x.size // known
    if int(np.prod(target)) != x.size:
        raise ValueError("cannot reshape %s into %s" % (x.shape, tuple(target)))
    return x.reshape(target)


def op_dynamic_arange(a, ins):
    start, stop, step = (scalar_value(t, w) for t, w in zip(ins, ("start", "stop", "step")))
    if step == 0 or not all(map(math.isfinite, (start, stop, step))):
        raise ValueError("invalid range (%g, %g, %g)" % (start, stop, step))
    count = max(0, int(math.ceil((stop - start) / step)))
    return in_dtype(a, start + np.arange(count, dtype=np.float64) * step)


def sorted_rows(rows):
    """Stable lexicographic order of the rows of a 2-D array, NaN after every number."""
    order = np.arange(rows.shape[0])
    for j in reversed(range(rows.shape[1])):
        order = order[np.argsort(rows[order, j], kind="stable")]
    return order


def op_unique(a, ins):
    # numpy.unique: sorted distinct values (axis None) or slices along axis, in lexicographic
    # order; NaNs are equal to each other and last. Outputs: unique, then as requested the
    # first-occurrence indices, the inverse and the counts.
    x = ins[0]
    axis = a.int("axis", None)
    if axis is None:
        rows = x.reshape(-1, 1)
    else:
        axis = checked_axis(axis, x.ndim, "axis")
        rows = np.moveaxis(x, axis, 0).reshape(x.shape[axis], -1)
    order = sorted_rows(rows)
    srt = rows[order]
    same = (srt[1:] == srt[:-1]) | (np.isnan(srt[1:]) & np.isnan(srt[:-1]))
    starts = np.concatenate(([True], ~np.all(same, axis=1))) if len(order) else np.zeros(0, bool)
    group = np.cumsum(starts) - 1
    firsts = order[starts]
    if axis is None:
        values = x.reshape(-1)[firsts]
    else:
        values = np.take(x, firsts, axis=axis)
    out = [values]
    if a.bool("return_index", False):
        out.append(firsts.astype(np.float64))
    if a.bool("return_inverse", False):
        inverse = np.empty(len(order))
        inverse[order] = group
        out.append(inverse)
    if a.bool("return_counts", False):
        out.append(np.bincount(group, minlength=len(firsts)).astype(np.float64))
    return tuple(out)


OPS.update({
    "_contrib_boolean_mask": op_boolean_mask,
    "_npx_nonzero": op_nonzero,
    "_zeros_shape": shape_source(lambda a: 0.0),
    "_ones_shape": shape_source(lambda a: 1.0),
    "_full_shape": shape_source(lambda a: a.float("value")),
    "_contrib_dynamic_reshape": op_dynamic_reshape,
    "_contrib_dynamic_arange": op_dynamic_arange,
    "_npi_unique": op_unique,
})

# ---------------------------------------------------------------------------
# (end of the dynamic-shape ops)
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Control flow: _foreach, _while_loop, _cond (src/operator/control_flow.cc,
# python/mxnet/symbol/contrib.py). They run the graphs in node.subgraphs, whose
# inputs are their variables in node order, fed through the node's *_locs
# attributes (engine/ops/ds-ops-control.h spells the mapping out).
# ---------------------------------------------------------------------------

def run_subgraph(graph, args):
    """Heads of `graph` with its variables (in node order) set to `args`."""
    variables = [n.name for n in graph.nodes if n.op == "null"]
    if len(variables) != len(args):
        raise ValueError("subgraph has %d inputs, %d given" % (len(variables), len(args)))
    if len(set(variables)) != len(variables):
        raise ValueError("subgraph inputs have duplicate names: %s" % variables)
    return run_graph(graph, dict(zip(variables, args)))


def as_bool(t, what):
    # MXNet reads the condition as one value, nonzero (NaN included) being true.
    if t.size != 1:
        raise ValueError("%s must hold one value, not shape %s" % (what, t.shape))
    return bool(t.reshape(-1)[0] != 0)


def loop_row(x, i):
    # MXNet's NDArray::At: a 1-D array's row keeps shape (1,).
    return x[i] if x.ndim > 1 else x[i:i + 1]


def stacked(steps, probe):
    """The per-iteration outputs stacked on a new axis 0; with no iteration, empty arrays
    shaped like what `probe()` (one run for shapes only) gives."""
    if steps and steps[0]:
        return [np.stack(s) for s in steps]
    return [np.zeros((0,) + np.shape(o)) for o in probe()[:len(steps)]]


def check_carried(what, k, old, new):
    if np.shape(old) != np.shape(new):
        raise ValueError("%s %d changed shape from %s to %s" % (what, k, np.shape(old),
                                                               np.shape(new)))


def op_foreach(node, ins):
    a = node.attrs
    body = node.subgraphs[0]
    data_locs = a.tuple("in_data_locs")
    state_locs = a.tuple("in_state_locs")
    remain_locs = a.tuple("remain_locs", ())
    n_out = a.int("num_out_data")
    nd, ns = len(data_locs), len(state_locs)
    data, states, remain = ins[:nd], list(ins[nd:nd + ns]), ins[nd + ns:]
    length = data[0].shape[0]
    if any(d.ndim == 0 or d.shape[0] != length for d in data):
        raise ValueError("data arrays of different lengths: %s" % [d.shape for d in data])
    feed = [None] * (nd + ns + len(remain_locs))
    for r, loc in enumerate(remain_locs):
        feed[loc] = remain[r]

    def step(i):
        for j, loc in enumerate(data_locs):
            row_shape = data[j].shape[1:] if data[j].ndim > 1 else (1,)
            feed[loc] = loop_row(data[j], i) if i < length else np.zeros(row_shape)
        for k, loc in enumerate(state_locs):
            feed[loc] = states[k]
        return run_subgraph(body, feed)

    steps = [[] for _ in range(n_out)]
    for i in range(length):
        outs = step(i)
        for o in range(n_out):
            steps[o].append(outs[o])
        for k in range(ns):
            check_carried("state", k, states[k], outs[n_out + k])
        states = outs[n_out:]
    # With no rows, a probe run on a zero row gives the output shapes.
    return tuple(stacked(steps, lambda: step(length)) + states)


def op_while_loop(node, ins):
    # Stacked outputs hold exactly the iterations run (MXNet pads them to max_iterations).
    a = node.attrs
    cond, func = node.subgraphs
    if not a.has("max_iterations"):
        raise ValueError("_while_loop needs max_iterations")
    limit = a.int("max_iterations")
    cond_locs = a.tuple("cond_input_locs")
    func_locs = a.tuple("func_input_locs")
    var_inputs = [func_locs[v] for v in a.tuple("func_var_locs")]
    n_out = a.int("num_out_data")
    values = list(ins)
    steps = [[] for _ in range(n_out)]
    count = 0
    while count < limit:
        if not as_bool(run_subgraph(cond, [values[l] for l in cond_locs])[0], "cond's output"):
            break
        outs = run_subgraph(func, [values[l] for l in func_locs])
        for o in range(n_out):
            steps[o].append(outs[o])
        for k, at in enumerate(var_inputs):
            check_carried("loop variable", k, values[at], outs[n_out + k])
            values[at] = outs[n_out + k]
        count += 1
    out = stacked(steps, lambda: run_subgraph(func, [values[l] for l in func_locs]))
    return tuple(out + [values[at] for at in var_inputs])


def op_cond(node, ins):
    a = node.attrs
    cond, then_g, else_g = node.subgraphs
    pred = run_subgraph(cond, [ins[l] for l in a.tuple("cond_input_locs")])[0]
    if as_bool(pred, "cond's output"):
        return tuple(run_subgraph(then_g, [ins[l] for l in a.tuple("then_input_locs")]))
    return tuple(run_subgraph(else_g, [ins[l] for l in a.tuple("else_input_locs")]))


# Ops that need their node (its subgraphs), not only its attributes.
CONTROL_OPS = {
    "_foreach": op_foreach,
    "_while_loop": op_while_loop,
    "_cond": op_cond,
}


# Source operators (no inputs). They also receive the shape their consumer
# expects, which fills dimensions written as 0 ("unknown" in MXNet's
# legacy shape convention, e.g. the begin states of lstm_ptb).

def filled_shape(a, hint):
    shape = list(a.tuple("shape", ()))
    for i, d in enumerate(shape):
        if d == 0:
            if hint is None:
                raise ValueError("shape %s has an unknown dimension" % (tuple(shape),))
            shape[i] = hint[i]
    return tuple(shape)


def src_zeros(a, hint):
    return np.zeros(filled_shape(a, hint))


def src_ones(a, hint):
    return np.ones(filled_shape(a, hint))


def src_full(a, hint):
    return np.full(filled_shape(a, hint), a.float("value"))


def src_arange(a, hint):
    start = a.float("start", 0.0)
    stop = a.float("stop", None)
    step = a.float("step", 1.0)
    repeat = a.int("repeat", 1)
    if a.bool("infer_range", False):
        raise NotImplementedError("_arange with infer_range")
    if stop is None:
        start, stop = 0.0, start
    count = int(math.ceil((stop - start) / step))
    values = start + np.arange(count) * step
    out = np.repeat(values, repeat)
    if a.str("dtype", "float32") in ("int32", "int64", "uint8", "int8"):
        out = np.trunc(out)
    return out


SOURCE_OPS = {
    "_zeros": src_zeros,
    "_ones": src_ones,
    "_full": src_full,
    "_arange": src_arange,
}


# Shapes an op expects for its inputs 1.. given input 0. Used to fill
# unknown dimensions of source ops and to create missing parameters.

def input_shapes(op, a, x):
    if op == "Convolution":
        kernel = a.tuple("kernel")
        nf = a.int("num_filter")
        shapes = [(nf, x.shape[1] // a.int("num_group", 1)) + tuple(kernel)]
        if not a.bool("no_bias", False):
            shapes.append((nf,))
        return shapes
    if op == "Deconvolution":
        nf = a.int("num_filter")
        shapes = [(x.shape[1], nf // a.int("num_group", 1)) + tuple(a.tuple("kernel"))]
        if not a.bool("no_bias", True):
            shapes.append((nf,))
        return shapes
    if op == "FullyConnected":
        nh = a.int("num_hidden")
        fan_in = int(np.prod(x.shape[1:])) if a.bool("flatten", True) else x.shape[-1]
        shapes = [(nh, fan_in)]
        if not a.bool("no_bias", False):
            shapes.append((nh,))
        return shapes
    if op == "BatchNorm":
        c = x.shape[a.int("axis", 1) % x.ndim]
        return [(c,)] * 4
    if op == "LayerNorm":
        c = x.shape[a.int("axis", -1) % x.ndim]
        return [(c,)] * 2
    if op == "Embedding":
        return [(a.int("input_dim"), a.int("output_dim"))]
    if op == "RNN":
        layers = a.int("num_layers")
        hidden = a.int("state_size")
        dirs = 2 if a.bool("bidirectional", False) else 1
        gates = RNN_GATES.get(a.str("mode"), 1)
        state = (layers * dirs, x.shape[1], hidden)
        return [(rnn_param_size(layers, dirs, x.shape[2], hidden, gates),), state, state]
    if op == "SoftmaxOutput":
        if a.bool("multi_output", False):
            return [(x.shape[0],) + x.shape[2:]]
        return [x.shape[:-1]]
    return []


# ---------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------


class MissingInput(KeyError):
    pass


def run_graph(graph, inputs, make_missing=None, keep_all=False):
    """Evaluate `graph` on `inputs` (dict name -> array) in float64.

    make_missing(name, shape), when given, supplies variables absent from
    `inputs` from the shape their consumer expects. Returns the list of head
    outputs, or (heads, values) with every node's outputs when keep_all."""
    values = {}

    def resolve(nid, idx, hint):
        if nid not in values:
            node = graph.nodes[nid]
            if node.op == "null":
                if node.name in inputs:
                    arr = inputs[node.name]
                elif make_missing is not None and hint is not None:
                    arr = make_missing(node.name, tuple(hint))
                else:
                    raise MissingInput("no value for variable '%s'" % node.name)
                values[nid] = (np.asarray(arr, dtype=np.float64),)
            elif node.op in SOURCE_OPS:
                values[nid] = (SOURCE_OPS[node.op](node.attrs, hint),)
            else:
                raise RuntimeError("node %d (%s) used before evaluation" % (nid, node.name))
        return values[nid][idx]

    for nid, node in enumerate(graph.nodes):
        if node.op == "null" or (node.op in SOURCE_OPS and not node.inputs):
            continue
        if node.op not in OPS and node.op not in CONTROL_OPS:
            raise NotImplementedError("operator %s (node %s)" % (node.op, node.name))
        args = []
        hints = []
        for pos, (src, idx) in enumerate(node.inputs):
            hint = hints[pos - 1] if 0 < pos <= len(hints) else None
            args.append(resolve(src, idx, hint))
            if pos == 0:
                hints = input_shapes(node.op, node.attrs, args[0])
        try:
            if node.op in CONTROL_OPS:
                result = CONTROL_OPS[node.op](node, args)
            else:
                result = OPS[node.op](node.attrs, args)
        except Exception as exc:
            raise type(exc)("%s (%s): %s" % (node.name, node.op, exc)) from exc
        if not isinstance(result, tuple):
            result = (result,)
        values[nid] = tuple(np.asarray(r, dtype=np.float64) for r in result)

    heads = [resolve(nid, idx, None) for nid, idx in graph.heads]
    if keep_all:
        return heads, values
    return heads


# ---------------------------------------------------------------------------
# MXNet .params files (NDArray list, src/ndarray/ndarray.cc NDArray::Save,
# src/c_api/c_api.cc MXNDArrayListSave)
# ---------------------------------------------------------------------------

LIST_MAGIC = 0x112
NDARRAY_V2_MAGIC = 0xF993FAC9
NDARRAY_V1_MAGIC = 0xF993FAC8
TYPE_FLAGS = {0: np.float32, 1: np.float64, 2: np.float16, 3: np.uint8,
              4: np.int32, 5: np.int8, 6: np.int64}


def save_params(path, arrays):
    """Write {name: array} (names with arg:/aux: prefixes) as float32
    dense NDArrays in MXNet's NDArray-list format, in the dict's order."""
    names = list(arrays)
    with open(path, "wb") as f:
        f.write(struct.pack("<QQQ", LIST_MAGIC, 0, len(names)))
        for name in names:
            arr = np.ascontiguousarray(arrays[name], dtype=np.float32)
            f.write(struct.pack("<Ii", NDARRAY_V2_MAGIC, 0))      # magic, dense
            f.write(struct.pack("<I", arr.ndim))
            f.write(struct.pack("<%dq" % arr.ndim, *arr.shape))
            f.write(struct.pack("<iii", 1, 0, 0))                  # cpu, id 0, float32
            f.write(arr.tobytes())
        f.write(struct.pack("<Q", len(names)))
        for name in names:
            raw = name.encode("utf-8")
            f.write(struct.pack("<Q", len(raw)))
            f.write(raw)


def load_params(path):
    """Read an MXNet NDArray-list file (dense V1/V2 records) into a dict."""
    with open(path, "rb") as f:
        data = f.read()
    pos = 0

    def take(fmt):
        nonlocal pos
        vals = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return vals

    magic, _reserved, count = take("QQQ")
    if magic != LIST_MAGIC:
        raise ValueError("%s: not an MXNet NDArray list" % path)
    arrays = []
    for _ in range(count):
        (head,) = take("I")
        if head == NDARRAY_V2_MAGIC:
            (stype,) = take("i")
            if stype != 0:
                raise NotImplementedError("sparse NDArray in %s" % path)
            (ndim,) = take("I")
            shape = take("%dq" % ndim)
        elif head == NDARRAY_V1_MAGIC:
            (ndim,) = take("I")
            shape = take("%dq" % ndim)
        else:
            ndim = head  # legacy: uint32 ndim, uint32 dims
            shape = take("%dI" % ndim)
        if ndim == 0:
            arrays.append(None)
            continue
        take("ii")  # context
        (flag,) = take("i")
        dtype = np.dtype(TYPE_FLAGS[flag])
        n = int(np.prod(shape))
        arr = np.frombuffer(data, dtype=dtype.newbyteorder("<"), count=n, offset=pos)
        pos += n * dtype.itemsize
        arrays.append(arr.reshape(shape).copy())
    (nnames,) = take("Q")
    names = []
    for _ in range(nnames):
        (length,) = take("Q")
        names.append(data[pos:pos + length].decode("utf-8"))
        pos += length
    if nnames != count:
        raise ValueError("%s: %d arrays but %d names" % (path, count, nnames))
    return dict(zip(names, arrays))


def strip_param_prefixes(params):
    out = {}
    for name, arr in params.items():
        if name.startswith("arg:") or name.startswith("aux:"):
            name = name[4:]
        out[name] = arr
    return out


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="MXNet symbol JSON file")
    ap.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                    help="value of a graph variable (repeatable)")
    ap.add_argument("--params", metavar="FILE.params",
                    help="MXNet .params file with arg:/aux: arrays")
    ap.add_argument("--out", required=True, metavar="DIR",
                    help="directory for one .npy per head output")
    args = ap.parse_args(argv)

    graph = load_graph(args.model)
    inputs = {}
    if args.params:
        inputs.update(strip_param_prefixes(load_params(args.params)))
    for spec in args.input:
        name, sep, path = spec.partition("=")
        if not sep:
            ap.error("--input wants NAME=FILE.npy, got %r" % spec)
        inputs[name] = np.load(path)
    try:
        outputs = run_graph(graph, inputs)
    except MissingInput as exc:
        print("mxnet_reference: %s" % exc.args[0], file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    for name, arr in zip(graph.output_names(), outputs):
        path = os.path.join(args.out, name + ".npy")
        np.save(path, arr)
        print("%s %s -> %s" % (name, arr.shape, path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
