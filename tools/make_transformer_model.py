#!/usr/bin/env python3
"""Write data/transformer/transformer-symbol.json: a BERT-style encoder whose
sequence length is not written anywhere in the graph.

The layers follow gluonnlp's static BERT export node for node (see
gluonnlp_static_bert_qa-symbol.json in the shared models): token and
token-type Embeddings, a learned position embedding, LayerNorm, then per
layer FullyConnected(flatten=False) query/key/value projections reshaped and
transposed to heads, batch_dot(transpose_b) scores, _contrib_div_sqrt_dim,
a masked softmax (where + softmax + mask), batch_dot with the values, the
output projection, residual + LayerNorm, and an erf-based GELU feed-forward
block with residual + LayerNorm; SequenceMask and a 2-unit dense head
(start/end logits) close it, as in BERT for question answering.

The static export hard-codes its length in two _arange nodes and a
broadcast_axis. Here the positions come from _contrib_arange_like(axis=1),
whose length follows the data's, and the attention mask is built as
gluonnlp's hybridizable encoder builds it:

  steps = arange_like(data0, axis=1)                       (L,)
  mask  = broadcast_lesser(steps.reshape(1, -1),
                           valid_length.reshape(-1, 1))    (B, L)
  mask  = broadcast_mul(expand_dims(mask, 1),
                        broadcast_like(expand_dims(mask, 2), mask,
                                       lhs_axes=(2,), rhs_axes=(1,)))
                                                           (B, L, L)

so batch and length are both free: inputs data0 (B, L) token ids, data1
(B, L) token types, data2 (B,) valid lengths.

The file holds no weights (tests and the bench feed random ones). The output
is deterministic: the same command writes the same bytes.

  /usr/bin/python3 tools/make_transformer_model.py [--out data/transformer]
      [--layers 4] [--units 256] [--heads 4] [--hidden 1024] [--vocab 1000]
      [--max-length 1024]
"""

import argparse
import json
import os
import sys

PREFIX = "transformerencoder0_"


def variable(name, shape=None, init=None, wd_mult="1.0"):
    node = {"op": "null", "name": name}
    if shape is not None:
        attrs = {"__dtype__": "0", "__lr_mult__": "1.0", "__shape__": str(tuple(shape)),
                 "__storage_type__": "0", "__wd_mult__": wd_mult}
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

    def var(self, name, shape=None, init=None, wd_mult="1.0"):
        return self.add(variable(name, shape, init, wd_mult))

    def op(self, op, name, attrs, *inputs, num_outputs=1):
        return self.add(operator(op, name, attrs, inputs), num_outputs)

    # -- layers, named and attributed as the Gluon export writes them --

    def dense(self, name, x, units, fan_in):
        w = self.var(name + "_weight", (units, fan_in))
        b = self.var(name + "_bias", (units,), "zeros", "0.0")
        return self.op("FullyConnected", name + "_fwd",
                       {"flatten": "False", "no_bias": "False", "num_hidden": str(units)},
                       x, w, b)

    def dropout(self, name, x):
        # Two outputs (data, mask); the identity at inference.
        return self.op("Dropout", name + "_fwd", {"axes": "()", "p": "0.1"}, x, num_outputs=2)

    def layer_norm(self, name, x, units):
        g = self.var(name + "_gamma", (units,), "ones", "0.0")
        b = self.var(name + "_beta", (units,), "zeros", "0.0")
        # Three outputs (data, mean, std).
        return self.op("LayerNorm", name + "_layernorm0", {"axis": "-1", "eps": "1e-12"},
                       x, g, b, num_outputs=3)

    def embedding(self, name, ids, weight_name, rows, units, with_dtype=True):
        w = self.var(weight_name, (rows, units))
        attrs = {"input_dim": str(rows), "output_dim": str(units)}
        if with_dtype:
            attrs.update({"dtype": "float32", "sparse_grad": "False"})
        return self.op("Embedding", name, attrs, ids, w)

    def to_heads(self, name, x, heads, i):
        """(B, L, C) -> (B * heads, L, C / heads)."""
        x = self.op("Reshape", "%s_reshape%d" % (name, i), {"shape": "(0, 0, %d, -1)" % heads}, x)
        x = self.op("transpose", "%s_transpose%d" % (name, i // 2),
                    {"axes": "(0, 2, 1, 3)"}, x)
        return self.op("Reshape", "%s_reshape%d" % (name, i + 1),
                       {"reverse": "True", "shape": "(-1, 0, 0)"}, x)


def build_symbol(layers, units, heads, hidden, vocab, max_length):
    g = Builder()

    # The attention mask, from the positions and the valid lengths.
    data0 = g.var("data0")
    steps = g.op("_contrib_arange_like", PREFIX + "arange_like0", {"axis": "1"}, data0)
    steps = g.op("Reshape", PREFIX + "reshape0", {"shape": "(1, -1)"}, steps)
    data2 = g.var("data2")
    valid = g.op("Reshape", PREFIX + "reshape1", {"shape": "(-1, 1)"}, data2)
    mask = g.op("broadcast_lesser", PREFIX + "broadcast_lesser0", {}, steps, valid)
    rows = g.op("expand_dims", PREFIX + "expand_dims0", {"axis": "1"}, mask)
    cols = g.op("expand_dims", PREFIX + "expand_dims1", {"axis": "2"}, mask)
    cols = g.op("broadcast_like", PREFIX + "broadcast_like0",
                {"lhs_axes": "(2,)", "rhs_axes": "(1,)"}, cols, mask)
    mask3 = g.op("broadcast_mul", PREFIX + "broadcast_mul0", {}, rows, cols)

    # Embeddings: tokens + token types + positions.
    words = g.embedding("transformermodel0_word_embed_embedding0_fwd", data0,
                        "transformermodel0_word_embed_embedding0_weight", vocab, units)
    words = g.dropout("transformermodel0_word_embed_dropout0", words)
    data1 = g.var("data1")
    types = g.embedding("transformermodel0_token_type_embed_embedding0_fwd", data1,
                        "transformermodel0_token_type_embed_embedding0_weight", 2, units)
    types = g.dropout("transformermodel0_token_type_embed_dropout0", types)
    x = g.op("elemwise_add", "transformermodel0__plus0", {}, words, types)
    positions = g.op("_contrib_arange_like", PREFIX + "arange_like1", {"axis": "1"}, x)
    pos = g.embedding(PREFIX + "embedding0", positions, PREFIX + "position_weight",
                      max_length, units, with_dtype=False)
    pos = g.op("expand_dims", PREFIX + "expand_dims2", {"axis": "0"}, pos)
    x = g.op("broadcast_add", PREFIX + "broadcast_add0", {}, x, pos)
    x = g.dropout(PREFIX + "dropout0", x)
    x = g.layer_norm(PREFIX + "bertlayernorm0", x, units)

    for layer in range(layers):
        p = "%stransformer%d_" % (PREFIX, layer)
        cell = p + "multiheadattentioncell0"
        q = g.dense(cell + "_query", x, units, units)
        q = g.to_heads(cell, q, heads, 0)
        q = g.op("_contrib_div_sqrt_dim", cell + "_div_sqrt_dim0", {}, q)
        k = g.dense(cell + "_key", x, units, units)
        k = g.to_heads(cell, k, heads, 2)
        scores = g.op("batch_dot", cell + "_batch_dot0", {"transpose_b": "True"}, q, k)

        # The (B, L, L) mask repeated per head: (B * heads, L, L).
        m = g.op("expand_dims", cell + "_expand_dims0", {"axis": "1"}, mask3)
        m = g.op("broadcast_axis", cell + "_broadcast_axis0",
                 {"axis": "1", "size": str(heads)}, m)
        m = g.op("Reshape", cell + "_reshape4", {"reverse": "True", "shape": "(-1, 0, 0)"}, m)

        neg = g.op("ones_like", cell + "_ones_like0", {}, scores)
        neg = g.op("_mul_scalar", cell + "__mulscalar0", {"scalar": "-1e+18"}, neg)
        att = g.op("where", cell + "_where0", {}, m, scores, neg)
        att = g.op("softmax", cell + "_softmax0", {"axis": "-1"}, att)
        att = g.op("elemwise_mul", cell + "__mul0", {}, att, m)
        att = g.dropout(p + "dotproductattentioncell0_dropout0", att)
        att = g.op("Reshape", cell + "_reshape5",
                   {"reverse": "True", "shape": "(-1, %d, 0, 0)" % heads}, att)
        att = g.op("Reshape", cell + "_reshape6", {"reverse": "True", "shape": "(-1, 0, 0)"}, att)

        v = g.dense(cell + "_value", x, units, units)
        v = g.op("Reshape", cell + "_reshape7", {"shape": "(0, 0, %d, -1)" % heads}, v)
        v = g.op("transpose", cell + "_transpose2", {"axes": "(0, 2, 1, 3)"}, v)
        v = g.op("Reshape", cell + "_reshape8", {"reverse": "True", "shape": "(-1, 0, 0)"}, v)
        ctx = g.op("batch_dot", cell + "_batch_dot1", {}, att, v)
        ctx = g.op("Reshape", cell + "_reshape9",
                   {"reverse": "True", "shape": "(-1, %d, 0, 0)" % heads}, ctx)
        ctx = g.op("transpose", cell + "_transpose3", {"axes": "(0, 2, 1, 3)"}, ctx)
        ctx = g.op("Reshape", cell + "_reshape10", {"shape": "(0, 0, -1)"}, ctx)

        out = g.dense(p + "proj", ctx, units, units)
        out = g.dropout(p + "dropout0", out)
        out = g.op("elemwise_add", p + "_plus0", {}, out, x)
        x = g.layer_norm(p + "bertlayernorm0", out, units)

        # Feed-forward with GELU(x) = 0.5 x (1 + erf(x / sqrt(2))).
        ffn = p + "bertpositionwiseffn0"
        h = g.dense(ffn + "_ffn_1", x, hidden, units)
        half = g.op("_mul_scalar", ffn + "_gelu0__mulscalar0", {"scalar": "0.5"}, h)
        e = g.op("_div_scalar", ffn + "_gelu0__divscalar0", {"scalar": "1.4142135623730951"}, h)
        e = g.op("erf", ffn + "_gelu0_erf0", {}, e)
        e = g.op("_plus_scalar", ffn + "_gelu0__plusscalar0", {"scalar": "1.0"}, e)
        h = g.op("elemwise_mul", ffn + "_gelu0__mul0", {}, half, e)
        h = g.dense(ffn + "_ffn_2", h, units, hidden)
        h = g.dropout(ffn + "_dropout0", h)
        h = g.op("elemwise_add", ffn + "__plus0", {}, h, x)
        x = g.layer_norm(ffn + "_bertlayernorm0", h, units)

    x = g.op("SequenceMask", PREFIX + "sequencemask0",
             {"axis": "1", "use_sequence_length": "True"}, x, data2)
    head = g.dense("transformerforqa0_dense0", x, 2, units)

    row_ptr = [0]
    for n in g.outputs:
        row_ptr.append(row_ptr[-1] + n)
    return {
        "nodes": g.nodes,
        "arg_nodes": [i for i, n in enumerate(g.nodes) if n["op"] == "null"],
        "node_row_ptr": row_ptr,
        "heads": [[head[0], 0, 0]],
        # arange_like arrived in MXNet 1.6.
        "attrs": {"mxnet_version": ["int", 10600]},
    }


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="Write the symbolic-length transformer encoder.")
    ap.add_argument("--out", default=os.path.join(here, "..", "data", "transformer"))
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--units", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--max-length", type=int, default=1024,
                    help="rows of the position embedding: the longest sequence it can encode")
    args = ap.parse_args(argv)
    if args.units % args.heads != 0:
        ap.error("--units must be a multiple of --heads")

    symbol = build_symbol(args.layers, args.units, args.heads, args.hidden, args.vocab,
                          args.max_length)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "transformer-symbol.json")
    with open(path, "w") as f:
        f.write(json.dumps(symbol, indent=2))
        f.write("\n")
    n_ops = sum(1 for n in symbol["nodes"] if n["op"] != "null")
    print("%s: %d nodes (%d ops), %d layers, d_model %d, %d heads, ffn %d, vocab %d"
          % (path, len(symbol["nodes"]), n_ops, args.layers, args.units, args.heads,
             args.hidden, args.vocab))
    return 0


if __name__ == "__main__":
    sys.exit(main())
