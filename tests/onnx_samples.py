#!/usr/bin/env python3
"""Small ONNX models the tests build at run time (with the onnx package), one function each.

`onnx_samples.py DIR` writes them all into DIR (the GUI test opens them from there); the
import test calls the functions itself.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def save(graph, path, opset=13):
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)],
                         producer_name="dynscope-tests")
    onnx.save(model, path)
    return path


def vi(name, dtype, shape):
    return h.make_tensor_value_info(name, dtype, shape)


def mlp_model(path):
    w = nh.from_array(np.arange(12, dtype=np.float32).reshape(3, 4) / 10, "W")
    b = nh.from_array(np.array([1, -1, 0.5, -0.5], np.float32), "B")
    g = h.make_graph([h.make_node("MatMul", ["x", "W"], ["xw"], name="matmul"),
                      h.make_node("Add", ["xw", "B"], ["pre"], name="bias"),
                      h.make_node("Relu", ["pre"], ["y"], name="relu")], "mlp",
                     [vi("x", T.FLOAT, ["batch", 3])], [vi("y", T.FLOAT, ["batch", 4])], [w, b])
    return save(g, path)


def loop_model(path):
    """v <- v + x for M iterations; scan output 2v each time; x read from the outer graph."""
    body = h.make_graph(
        [h.make_node("Add", ["v_in", "x"], ["v_out"]),
         h.make_node("Mul", ["v_out", "two"], ["scan"]),
         h.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
        [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("v_in", T.FLOAT, [3])],
        [vi("cond_out", T.BOOL, []), vi("v_out", T.FLOAT, [3]), vi("scan", T.FLOAT, [3])],
        [nh.from_array(np.array(2, np.float32), "two")])
    g = h.make_graph([h.make_node("Loop", ["M", "", "v0"], ["v_final", "scans"], body=body)],
                     "loop", [vi("M", T.INT64, []), vi("x", T.FLOAT, [3]), vi("v0", T.FLOAT, [3])],
                     [vi("v_final", T.FLOAT, [3]), vi("scans", T.FLOAT, ["n", 3])])
    return save(g, path)


def loop_cond_model(path):
    """Doubles v while its sum stays under `limit`: the condition decides the trip count."""
    body = h.make_graph(
        [h.make_node("Add", ["v_in", "v_in"], ["v_out"]),
         h.make_node("ReduceSum", ["v_out"], ["total"], keepdims=0),
         h.make_node("Less", ["total", "limit"], ["cond_out"])], "body",
        [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), vi("v_in", T.FLOAT, [2])],
        [vi("cond_out", T.BOOL, []), vi("v_out", T.FLOAT, [2])])
    g = h.make_graph([h.make_node("Loop", ["", "go", "v0"], ["v_final"], body=body)], "loop2",
                     [vi("go", T.BOOL, []), vi("v0", T.FLOAT, [2]), vi("limit", T.FLOAT, [])],
                     [vi("v_final", T.FLOAT, [2])])
    return save(g, path)


def if_model(path):
    then_g = h.make_graph([h.make_node("Add", ["x", "x"], ["y_then"])], "then", [],
                          [vi("y_then", T.FLOAT, [3])])
    const = nh.from_array(np.array([10, 20, 30], np.float32))
    else_g = h.make_graph([h.make_node("Constant", [], ["c"], value=const),
                           h.make_node("Mul", ["x", "c"], ["y_else"])], "else", [],
                          [vi("y_else", T.FLOAT, [3])])
    g = h.make_graph([h.make_node("If", ["b"], ["y"], then_branch=then_g, else_branch=else_g)],
                     "if", [vi("b", T.BOOL, []), vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])])
    return save(g, path)


def scan_model(path, direction):
    body = h.make_graph([h.make_node("Add", ["acc_in", "xs"], ["acc_out"]),
                         h.make_node("Identity", ["acc_out"], ["ys"])], "body",
                        [vi("acc_in", T.FLOAT, [2]), vi("xs", T.FLOAT, [2])],
                        [vi("acc_out", T.FLOAT, [2]), vi("ys", T.FLOAT, [2])])
    node = h.make_node("Scan", ["a0", "X"], ["a", "Y"], body=body, num_scan_inputs=1,
                       scan_input_axes=[1], scan_output_axes=[1],
                       scan_input_directions=[direction])
    g = h.make_graph([node], "scan", [vi("a0", T.FLOAT, [2]), vi("X", T.FLOAT, [2, 4])],
                     [vi("a", T.FLOAT, [2]), vi("Y", T.FLOAT, [2, 4])])
    return save(g, path, opset=11)


def unsupported_model(path):
    g = h.make_graph([h.make_node("Relu", ["x"], ["r"], name="relu"),
                      h.make_node("FancyOp", ["r"], ["f"], name="first_fancy"),
                      h.make_node("Relu", ["f"], ["g"], name="relu2"),
                      h.make_node("Custom", ["g"], ["y"], name="custom", domain="com.example")],
                     "bad", [vi("x", T.FLOAT, [2])], [vi("y", T.FLOAT, [2])])
    return save(g, path)



def main(folder):
    os.makedirs(folder, exist_ok=True)
    mlp_model(os.path.join(folder, "mlp.onnx"))
    loop_model(os.path.join(folder, "loop.onnx"))
    loop_cond_model(os.path.join(folder, "loop-cond.onnx"))
    if_model(os.path.join(folder, "if.onnx"))
    scan_model(os.path.join(folder, "scan.onnx"), 0)
    unsupported_model(os.path.join(folder, "unsupported.onnx"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
