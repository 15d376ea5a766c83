#!/usr/bin/env python3
"""Writes small ONNX models with the `onnx` package, and what they hold, for test-onnx-model.

Usage: make_onnx_cases.py DIR

Writes DIR/<case>.onnx for each case below, and DIR/summary.json describing each file as the
`onnx` package reads it back: {"<case>.onnx": MODEL, ...}, where

  MODEL  = {ir_version, producer_name, producer_version, opsets: [[domain, version]],
            metadata: [[key, value]], graph: GRAPH}
  GRAPH  = {name, nodes: [NODE], initializers: [TENSOR], inputs: [VALUE], outputs: [VALUE],
            value_info: [VALUE]}
  NODE   = {name, op_type, domain, inputs, outputs, attributes: [ATTR]}
  ATTR   = {name, type, and by type one of f, i, s, t, g, tp (TYPE), floats, ints, strings,
            tensors, graphs, type_protos ([TYPE])}
  TENSOR = {name, data_type, dims, data ("raw", "float", "int32", "int64", "double", "uint64",
            "string", "external", "none"), and raw_fnv (FNV-1a of raw_data), values (typed
            numbers), strings, or external {location, offset, length}}
  VALUE  = {name} and TYPE
  TYPE   = {kind ("tensor", "sequence", "map", "optional", "sparse tensor", "none"), elem_type,
            shape: null or [int, "param", or null for an unknown dim]}

The C test builds the same JSON from what its decoder read and compares the two. Exits 77 when
`onnx` cannot be imported.
"""

import json
import os
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # the test skips
    print("cannot import onnx: %s" % e, file=sys.stderr)
    sys.exit(77)

OPSETS = [helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)]


def model_of(graph, **kw):
    m = helper.make_model(graph, opset_imports=OPSETS, producer_name="dynscope-tests",
                          producer_version="1.0", **kw)
    return m


def conv_case():
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 3, "H", "W"])
    # An output whose dims are all unknown: a shape with rank 4 and nothing in any dim.
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, None, None, None])
    w = numpy_helper.from_array(
        (np.arange(4 * 3 * 3 * 3, dtype=np.float32) / 7.0).reshape(4, 3, 3, 3), "W")
    b = helper.make_tensor("B", TensorProto.FLOAT, [4], [0.5, -1.0, 2.25, 3.0], raw=False)
    lim = helper.make_tensor("max", TensorProto.FLOAT, [], [6.0], raw=False)
    conv = helper.make_node("Conv", ["X", "W", "B"], ["c"], name="conv1", kernel_shape=[3, 3],
                            pads=[1, 1, 1, 1], strides=[1, 1], group=1, auto_pad="NOTSET")
    relu = helper.make_node("LeakyRelu", ["c"], ["r"], name="leaky", alpha=0.125)
    # Clip's optional `min` input omitted by an empty name.
    clip = helper.make_node("Clip", ["r", "", "max"], ["Y"], name="clip")
    vi = helper.make_tensor_value_info("c", TensorProto.FLOAT, ["N", 4, "H", "W"])
    g = helper.make_graph([conv, relu, clip], "conv_graph", [x], [y], [w, b, lim],
                          value_info=[vi])
    m = model_of(g)
    helper.set_model_props(m, {"author": "tests", "purpose": "decoder"})
    return m


def if_branches(prefix):
    out_t = helper.make_tensor_value_info(prefix + "_then_out", TensorProto.FLOAT, [2])
    out_e = helper.make_tensor_value_info(prefix + "_else_out", TensorProto.FLOAT, [2])
    then_c = helper.make_node(
        "Constant", [], [prefix + "_then_out"], name=prefix + "_then_const",
        value=helper.make_tensor("tv", TensorProto.FLOAT, [2], [1.0, 2.0]))
    else_c = helper.make_node(
        "Constant", [], [prefix + "_else_out"], name=prefix + "_else_const",
        value=numpy_helper.from_array(np.array([3.0, 4.0], dtype=np.float32), "ev"))
    then_g = helper.make_graph([then_c], prefix + "_then", [], [out_t])
    else_g = helper.make_graph([else_c], prefix + "_else", [], [out_e])
    return then_g, else_g


def if_case():
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, [2])
    then_g, else_g = if_branches("top")
    node = helper.make_node("If", ["cond"], ["out"], name="if0", then_branch=then_g,
                            else_branch=else_g)
    inits = [
        helper.make_tensor("i64", TensorProto.INT64, [3], [1, -2, 1 << 40]),
        helper.make_tensor("i32", TensorProto.INT32, [2, 2], [1, -2, 3, -4]),
        helper.make_tensor("f64", TensorProto.DOUBLE, [2], [0.25, -1e300]),
        helper.make_tensor("u64", TensorProto.UINT64, [2], [7, (1 << 63) + 5]),
        helper.make_tensor("u8", TensorProto.UINT8, [3], [0, 128, 255]),
        helper.make_tensor("txt", TensorProto.STRING, [2], [b"hello", b"w\xc3\xb6rld"]),
        helper.make_tensor("empty", TensorProto.FLOAT, [0, 5], b"", raw=True),
    ]
    g = helper.make_graph([node], "if_graph", [cond], [out], inits)
    return model_of(g)


def loop_case():
    m_in = helper.make_tensor_value_info("M", TensorProto.INT64, [])
    c_in = helper.make_tensor_value_info("cond_in", TensorProto.BOOL, [])
    x_in = helper.make_tensor_value_info("x0", TensorProto.FLOAT, ["B", 2])
    x_out = helper.make_tensor_value_info("x_final", TensorProto.FLOAT, ["B", 2])
    scan_out = helper.make_tensor_value_info("xs", TensorProto.FLOAT, ["T", "B", 2])

    b_iter = helper.make_tensor_value_info("iter", TensorProto.INT64, [])
    b_cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    b_x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 2])
    b_cond_out = helper.make_tensor_value_info("cond_out", TensorProto.BOOL, [])
    b_x_out = helper.make_tensor_value_info("x_next", TensorProto.FLOAT, ["B", 2])
    b_scan = helper.make_tensor_value_info("x_scan", TensorProto.FLOAT, ["B", 2])
    then_g, else_g = if_branches("body")
    body_nodes = [
        helper.make_node("Identity", ["cond"], ["cond_out"], name="keep_going"),
        helper.make_node("If", ["cond"], ["delta"], name="choose", then_branch=then_g,
                         else_branch=else_g),
        helper.make_node("Add", ["x", "delta"], ["x_next"], name="step"),
        helper.make_node("Identity", ["x_next"], ["x_scan"], name="emit"),
    ]
    body = helper.make_graph(body_nodes, "loop_body", [b_iter, b_cond, b_x],
                             [b_cond_out, b_x_out, b_scan])
    loop = helper.make_node("Loop", ["M", "cond_in", "x0"], ["x_final", "xs"], name="loop0",
                            body=body)
    g = helper.make_graph([loop], "loop_graph", [m_in, c_in, x_in], [x_out, scan_out])
    return model_of(g)


def attrs_case():
    # Lists of every kind, and a GRAPHS attribute (Scan-like custom op in another domain).
    g1 = helper.make_graph([helper.make_node("Neg", ["a"], ["b"])], "g1",
                           [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1])],
                           [helper.make_tensor_value_info("b", TensorProto.FLOAT, [1])])
    node = helper.make_node(
        "Custom", ["in"], ["out", ""], name="custom", domain="com.microsoft",
        floats=[0.5, -2.0], ints=[1, -1, 1 << 50], strings=["a", "bc"],
        tensors=[helper.make_tensor("t0", TensorProto.INT64, [1], [9])],
        graphs=[g1], f=1.5, i=-7, s="text")
    inp = helper.make_tensor_value_info("in", TensorProto.FLOAT16, [1, "S"])
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT16, None)
    g = helper.make_graph([node], "", [inp], [out])
    return model_of(g)


def sequence_case():
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])
    seq = helper.make_tensor_sequence_value_info("seq", TensorProto.FLOAT, [2])
    opt_type = helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
    opt = helper.make_value_info("opt", opt_type)
    node = helper.make_node("SequenceConstruct", ["a", "a"], ["seq"], name="make_seq")
    node2 = helper.make_node("Optional", ["a"], ["opt"], name="make_opt")
    # An empty optional says its type in a TYPE_PROTO attribute.
    none = helper.make_node("Optional", [], ["nothing"], name="make_none",
                            type=helper.make_tensor_type_proto(TensorProto.INT64, ["K", 2]))
    g = helper.make_graph([node, node2, none], "seq_graph", [a], [seq, opt])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)])


def save_external(model, path):
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=os.path.basename(path) + ".data", size_threshold=0)


def external_case():
    w1 = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4), "w1")
    w2 = numpy_helper.from_array(np.arange(5, dtype=np.int64), "w2")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])
    node = helper.make_node("MatMul", ["x", "w1"], ["y"], name="mm")
    g = helper.make_graph([node], "ext_graph", [x], [y], [w1, w2])
    return model_of(g)


CASES = {
    "conv.onnx": (conv_case, onnx.save_model),
    "if.onnx": (if_case, onnx.save_model),
    "loop.onnx": (loop_case, onnx.save_model),
    "attrs.onnx": (attrs_case, onnx.save_model),
    "sequence.onnx": (sequence_case, onnx.save_model),
    "external.onnx": (external_case, save_external),
}

# ---- summaries, read back from the saved files ----

KINDS = {"tensor_type": "tensor", "sequence_type": "sequence", "map_type": "map",
         "optional_type": "optional", "sparse_tensor_type": "sparse tensor", None: "none"}
TYPED = [("float_data", "float"), ("int32_data", "int32"), ("int64_data", "int64"),
         ("double_data", "double"), ("uint64_data", "uint64")]


def fnv1a(data):
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def tensor_summary(t):
    s = {"name": t.name, "data_type": t.data_type, "dims": list(t.dims)}
    if t.data_location == TensorProto.EXTERNAL:
        entries = {e.key: e.value for e in t.external_data}
        s["data"] = "external"
        s["external"] = {"location": entries["location"],
                         "offset": int(entries.get("offset", "0")),
                         "length": int(entries["length"]) if "length" in entries else None}
    elif t.HasField("raw_data"):
        s["data"] = "raw"
        s["raw_fnv"] = fnv1a(t.raw_data)
    elif len(t.string_data) > 0:
        s["data"] = "string"
        s["strings"] = [v.decode("utf-8") for v in t.string_data]
    else:
        s["data"] = "none"
        for field, kind in TYPED:
            values = list(getattr(t, field))
            if values:
                s["data"] = kind
                s["values"] = [float(v) for v in values]
    return s


def value_summary(v):
    return dict(name=v.name, **type_summary(v.type))


def type_summary(t):
    kind = t.WhichOneof("value")
    s = {"kind": KINDS[kind], "elem_type": 0, "shape": None}
    if kind == "tensor_type":
        tt = t.tensor_type
        s["elem_type"] = tt.elem_type
        if tt.HasField("shape"):
            dims = []
            for d in tt.shape.dim:
                which = d.WhichOneof("value")
                if which == "dim_value" and d.dim_value >= 0:
                    dims.append(d.dim_value)
                elif which == "dim_param" and d.dim_param:
                    dims.append(d.dim_param)
                else:
                    dims.append(None)
            s["shape"] = dims
    return s


def attr_summary(a):
    A = onnx.AttributeProto
    s = {"name": a.name, "type": a.type}
    if a.type == A.FLOAT:
        s["f"] = a.f
    elif a.type == A.INT:
        s["i"] = a.i
    elif a.type == A.STRING:
        s["s"] = a.s.decode("utf-8")
    elif a.type == A.TENSOR:
        s["t"] = tensor_summary(a.t)
    elif a.type == A.GRAPH:
        s["g"] = graph_summary(a.g)
    elif a.type == A.FLOATS:
        s["floats"] = list(a.floats)
    elif a.type == A.INTS:
        s["ints"] = list(a.ints)
    elif a.type == A.STRINGS:
        s["strings"] = [v.decode("utf-8") for v in a.strings]
    elif a.type == A.TENSORS:
        s["tensors"] = [tensor_summary(t) for t in a.tensors]
    elif a.type == A.GRAPHS:
        s["graphs"] = [graph_summary(g) for g in a.graphs]
    elif a.type == A.TYPE_PROTO:
        s["tp"] = type_summary(a.tp)
    elif a.type == A.TYPE_PROTOS:
        s["type_protos"] = [type_summary(t) for t in a.type_protos]
    return s


def node_summary(n):
    return {"name": n.name, "op_type": n.op_type, "domain": n.domain, "inputs": list(n.input),
            "outputs": list(n.output), "attributes": [attr_summary(a) for a in n.attribute]}


def graph_summary(g):
    return {"name": g.name, "nodes": [node_summary(n) for n in g.node],
            "initializers": [tensor_summary(t) for t in g.initializer],
            "inputs": [value_summary(v) for v in g.input],
            "outputs": [value_summary(v) for v in g.output],
            "value_info": [value_summary(v) for v in g.value_info]}


def model_summary(m):
    return {"ir_version": m.ir_version, "producer_name": m.producer_name,
            "producer_version": m.producer_version,
            "opsets": [[o.domain, o.version] for o in m.opset_import],
            "metadata": [[p.key, p.value] for p in m.metadata_props],
            "graph": graph_summary(m.graph)}


def main():
    if len(sys.argv) != 2:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    out = sys.argv[1]
    summary = {}
    for name, (make, save) in CASES.items():
        path = os.path.join(out, name)
        save(make(), path)
        summary[name] = model_summary(onnx.load(path, load_external_data=False))
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
