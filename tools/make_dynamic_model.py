#!/usr/bin/env python3
"""Write data/dynamic/boolean-mask-symbol.json: a small graph whose output
shape depends on the data, not only on the input shapes.

  data (N, 8) -> fc0 (FullyConnected, 16) -> relu0
  score = slice_axis(relu0, axis=1, 0:1) -> reshape0 (N,)
  mask  = _greater_scalar(score, 0.5)                        (N,) of 0/1
  kept  = _contrib_boolean_mask(fc0, mask)                   (u0, 16)
  head 0: fc1 (FullyConnected, 4) -> softmax0                (u0, 4)
  head 1: _npx_nonzero(mask)                                 (u1, 1)

Only running the graph tells how many rows pass the mask, so the first head
has a data-dependent batch (an unbacked symbol u0 in [0, N] for symbolic
inference) and the second head lists the kept rows' positions. The batch N
is free: `data` declares `__shape__` (0, 8), MXNet's spelling of an unknown
dim. The file holds no weights (tests feed random ones). The output is
deterministic: the same command writes the same bytes.

  /usr/bin/python3 tools/make_dynamic_model.py [--out data/dynamic]
"""

import argparse
import json
import os
import sys

IN_UNITS = 8
HIDDEN = 16
CLASSES = 4


def variable(name, shape=None, init=None):
    node = {"op": "null", "name": name}
    if shape is not None:
        attrs = {"__dtype__": "0", "__lr_mult__": "1.0", "__shape__": str(tuple(shape)),
                 "__storage_type__": "0", "__wd_mult__": "1.0"}
        if init is not None:
            attrs["__init__"] = init
        node["attrs"] = dict(sorted(attrs.items()))
    node["inputs"] = []
    return node


def operator(op, name, attrs, inputs):
    node = {"op": op, "name": name}
    if attrs:
        node["attrs"] = dict(sorted(attrs.items()))
    node["inputs"] = [[src, idx, 0] for src, idx in inputs]
    return node


class Builder:
    def __init__(self):
        self.nodes = []
        self.outputs = []  # outputs per node, hidden ones included (node_row_ptr)

    def add(self, node, num_outputs=1):
        self.nodes.append(node)
        self.outputs.append(num_outputs)
        return (len(self.nodes) - 1, 0)

    def var(self, name, shape=None, init=None):
        return self.add(variable(name, shape, init))

    def op(self, op, name, attrs, *inputs, num_outputs=1):
        return self.add(operator(op, name, attrs, inputs), num_outputs)

    def dense(self, name, x, units, fan_in):
        w = self.var(name + "_weight", (units, fan_in))
        b = self.var(name + "_bias", (units,), "zeros")
        return self.op("FullyConnected", name, {"flatten": "True", "no_bias": "False",
                                                "num_hidden": str(units)}, x, w, b)


def build_symbol():
    g = Builder()
    # (0, 8): the batch is unknown (MXNet 1.x's legacy spelling), the features are 8.
    data = g.var("data", (0, IN_UNITS))
    fc0 = g.dense("fc0", data, HIDDEN, IN_UNITS)
    act = g.op("Activation", "relu0", {"act_type": "relu"}, fc0)
    score = g.op("slice_axis", "score0", {"axis": "1", "begin": "0", "end": "1"}, act)
    score = g.op("Reshape", "reshape0", {"shape": "(-1,)"}, score)
    mask = g.op("_greater_scalar", "greater0", {"scalar": "0.5"}, score)
    kept = g.op("_contrib_boolean_mask", "boolean_mask0", {"axis": "0"}, fc0, mask)
    fc1 = g.dense("fc1", kept, CLASSES, HIDDEN)
    probs = g.op("softmax", "softmax0", {"axis": "-1"}, fc1)
    rows = g.op("_npx_nonzero", "nonzero0", {}, mask)

    row_ptr = [0]
    for n in g.outputs:
        row_ptr.append(row_ptr[-1] + n)
    return {
        "nodes": g.nodes,
        "arg_nodes": [i for i, n in enumerate(g.nodes) if n["op"] == "null"],
        "node_row_ptr": row_ptr,
        "heads": [[probs[0], 0, 0], [rows[0], 0, 0]],
        # _npx_nonzero arrived with MXNet 1.6's numpy extensions.
        "attrs": {"mxnet_version": ["int", 10600]},
    }


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="Write the boolean_mask sample graph.")
    ap.add_argument("--out", default=os.path.join(here, "..", "data", "dynamic"))
    args = ap.parse_args(argv)

    symbol = build_symbol()
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "boolean-mask-symbol.json")
    with open(path, "w") as f:
        f.write(json.dumps(symbol, indent=2))
        f.write("\n")
    n_ops = sum(1 for n in symbol["nodes"] if n["op"] != "null")
    print("%s: %d nodes (%d ops), 2 heads" % (path, len(symbol["nodes"]), n_ops))
    return 0


if __name__ == "__main__":
    sys.exit(main())
