#!/usr/bin/env python3
"""Control-flow graphs (_foreach, _while_loop, _cond) with inputs and expected outputs.

Each case function returns (graph, inputs, expected): `graph` is a symbol JSON
dict in MXNet 1.6's layout (each control-flow node holds its graphs in
"subgraphs"), `inputs` maps the graph's variable names to NumPy arrays (float64,
fed as float32, or int64 where MXNet's own examples use it, fed as int64), and
`expected` lists the graph's heads. `CASES` lists them all
by name, for tests of the reference (tests/test_control_reference.py) and of the
engine alike.

The graphs are written the way python/mxnet/symbol/contrib.py builds them: a
subgraph's inputs are its variables in node order (the DFS order MXNet gives
them), the node's inputs come in the order contrib.py's foreach (data, states,
then the free variables) or its _union_inputs (while_loop, cond) gives, and a
subgraph output that is one of its inputs, or repeats another output, goes
through `_copy` (MXNet's identity), as contrib.py does. num_args counts the
subgraphs as MXNet does.

The expected values are MXNet's documented results (its unit tests and
docstrings) or direct NumPy loops written here. One deliberate difference: a
_while_loop's stacked outputs hold exactly the iterations run, where MXNet pads
them to max_iterations rows.

The cases named "MXNet 1.9" are written as MXNet 1.9's contrib.py exports them,
closures included (see the section on closures below).

The builders of the three sample models in data/control (written by
tools/make_control_flow_models.py) live here too, so that the samples and their
checks share one definition.
"""

import json

import numpy as np

MXNET_VERSION = 10600
# The cases written as MXNet 1.9's contrib.py exports them (scoped subgraphs, closures).
MXNET_19_VERSION = 10901

# ---------------------------------------------------------------------------
# Writing symbol JSON
# ---------------------------------------------------------------------------


def locs(values):
    """A list attribute as Python's str() writes it, as contrib.py passes lists to MXNet."""
    return str(list(values))


class Builder:
    """Nodes of one graph (the document or a subgraph), in the order they are added: add each
    node after its inputs, variables where a DFS would first meet them.

    With `scope`, the graph is written as MXNet 1.9 exports it: every node made inside the
    AttrScope contrib.py opens carries `__subgraph_name__` = scope, and a closure (an outer
    value the subgraph reads, which MXNet's CutSubgraph turns into a new variable named after
    that value's output) is added with closure(), without attributes."""

    def __init__(self, scope=None):
        self.nodes = []
        self.n_outputs = []
        self.n_copies = 0
        self.scope = scope

    def _add(self, node, n_outputs=1):
        self.nodes.append(node)
        self.n_outputs.append(n_outputs)
        nid = len(self.nodes) - 1
        if n_outputs == 1:
            return (nid, 0)
        return [(nid, k) for k in range(n_outputs)]

    def var(self, name, shape=None, dtype=None, init=None):
        node = {"op": "null", "name": name}
        attrs = {} if self.scope is None else {"__subgraph_name__": self.scope}
        if shape is not None:
            attrs.update({"__dtype__": "0" if dtype is None else str(dtype), "__lr_mult__": "1.0",
                          "__shape__": str(tuple(shape)), "__storage_type__": "0",
                          "__wd_mult__": "1.0"})
            if init is not None:
                attrs["__init__"] = init
        elif dtype is not None:
            attrs["__dtype__"] = str(dtype)
        if attrs:
            node["attrs"] = dict(sorted(attrs.items()))
        node["inputs"] = []
        return self._add(node)

    def closure(self, name):
        """The variable CutSubgraph makes for an outer value: no attributes, even in a scope."""
        return self._add({"op": "null", "name": name, "inputs": []})

    def op(self, op, name, inputs, attrs=None, n_outputs=1, subgraphs=None):
        node = {"op": op, "name": name}
        if self.scope is not None:
            attrs = dict(attrs or {}, __subgraph_name__=self.scope)
        if attrs:
            node["attrs"] = dict(sorted((k, str(v)) for k, v in attrs.items()))
        node["inputs"] = [[nid, idx, 0] for nid, idx in inputs]
        if subgraphs:
            node["subgraphs"] = subgraphs
        return self._add(node, n_outputs)

    def is_variable(self, entry):
        return self.nodes[entry[0]]["op"] == "null"

    def outputs(self, entries, prefix, copy_repeats=True):
        """Subgraph heads as contrib.py makes them: an input, or a repeat of an earlier head,
        goes through _copy. MXNet 1.9's while_loop copies only inputs (copy_repeats=False)."""
        heads = []
        for e in entries:
            if self.is_variable(e) or (copy_repeats and e in heads):
                e = self.op("_copy", "%s_copy%d" % (prefix, self.n_copies), [e])
                self.n_copies += 1
            heads.append(e)
        return heads

    def graph(self, heads, top=False, version=MXNET_VERSION):
        row_ptr = [0]
        for n in self.n_outputs:
            row_ptr.append(row_ptr[-1] + n)
        g = {
            "nodes": self.nodes,
            "arg_nodes": [i for i, n in enumerate(self.nodes) if n["op"] == "null"],
            "node_row_ptr": row_ptr,
            "heads": [[nid, idx, 0] for nid, idx in heads],
        }
        if top:
            g["attrs"] = {"mxnet_version": ["int", version]}
        return g


def foreach(g, name, body, body_heads, n_out_data, data, states, remain, data_locs,
            state_locs, remain_locs):
    """A _foreach node on `g` running `body` (a Builder whose heads are `body_heads`)."""
    ins = list(data) + list(states) + list(remain)
    attrs = {"num_args": len(ins) + 1, "num_outputs": len(body_heads),
             "num_out_data": n_out_data, "in_data_locs": locs(data_locs),
             "in_state_locs": locs(state_locs), "remain_locs": locs(remain_locs)}
    out = g.op("_foreach", name, ins, attrs, len(body_heads), [body.graph(body_heads)])
    return out if isinstance(out, list) else [out]


def while_loop(g, name, cond, cond_heads, func, func_heads, n_out_data, ins, cond_input_locs,
               func_input_locs, func_var_locs, max_iterations):
    attrs = {"num_args": len(ins) + 2, "num_outputs": len(func_heads),
             "num_out_data": n_out_data, "max_iterations": max_iterations,
             "cond_input_locs": locs(cond_input_locs), "func_input_locs": locs(func_input_locs),
             "func_var_locs": locs(func_var_locs)}
    out = g.op("_while_loop", name, ins, attrs, len(func_heads),
               [cond.graph(cond_heads), func.graph(func_heads)])
    return out if isinstance(out, list) else [out]


def cond_op(g, name, pred, pred_heads, then_b, then_heads, else_b, else_heads, ins,
            cond_input_locs, then_input_locs, else_input_locs):
    attrs = {"num_args": len(ins) + 3, "num_outputs": len(then_heads),
             "cond_input_locs": locs(cond_input_locs), "then_input_locs": locs(then_input_locs),
             "else_input_locs": locs(else_input_locs)}
    out = g.op("_cond", name, ins, attrs, len(then_heads),
               [pred.graph(pred_heads), then_b.graph(then_heads), else_b.graph(else_heads)])
    return out if isinstance(out, list) else [out]


def dumps(graph):
    """The JSON text in dmlc::JSONWriter's layout (which json.dumps with indent=2 matches),
    without a trailing newline, as MXNet writes it."""
    return json.dumps(graph, indent=2)


# ---------------------------------------------------------------------------
# MXNet's acceptance examples (tests/python/unittest/test_contrib_control_flow.py,
# and the docstrings of contrib.foreach/while_loop/cond)
# ---------------------------------------------------------------------------

def _counter_loop(bound, max_iterations, step_output=False, flag=None):
    """while i < bound (i <= bound - 1: the engine has no _lesser_equal_scalar): i += 1,
    s += i; loop vars (i, s) from (1, 0). With `flag` (1 or 0) the condition is a third loop
    variable instead, passed through, as MXNet's always-true and always-false cases do. With
    `step_output`, each step also outputs i."""
    g = Builder()
    cond = Builder()
    func = Builder()
    if flag is None:
        ci = cond.var("i")
        pred = cond.op("_lesser_scalar", "lesser0", [ci], {"scalar": bound})
        cond_heads = [pred]
    else:
        cf = cond.var("flag")
        cond_heads = cond.outputs([cf], "cond")
    fi = func.var("i")
    inc = func.op("_plus_scalar", "plus0", [fi], {"scalar": 1})
    fs = func.var("s")
    acc = func.op("elemwise_add", "add0", [fs, fi])
    new_vars = [inc, acc]
    if flag is not None:
        new_vars.append(func.var("flag"))
    steps = [fi] if step_output else []
    func_heads = func.outputs(steps + new_vars, "func")

    i0 = g.var("i0", (1,))
    s0 = g.var("s0", (1,))
    inputs = {"i0": np.array([1.0]), "s0": np.array([0.0])}
    if flag is None:
        # _union_inputs: cond's (i), then func's (i, s).
        ins, cond_locs, func_locs = [i0, s0], [0], [0, 1]
    else:
        f0 = g.var("flag0", (1,))
        inputs["flag0"] = np.array([float(flag)])
        # cond's (flag) first, then func's (i, s, flag).
        ins, cond_locs, func_locs = [f0, i0, s0], [0], [1, 2, 0]
    out = while_loop(g, "while_loop0", cond, cond_heads, func, func_heads, len(steps), ins,
                     cond_locs, func_locs, [0, 1, 2][:len(new_vars)], max_iterations)
    return g.graph(out, top=True), inputs


def case_while_by_condition():
    """MXNet case 1.1: cond i <= 5, max_iterations 10: i = 6, s = 15."""
    graph, inputs = _counter_loop(6, 10)
    return graph, inputs, [np.array([6.0]), np.array([15.0])]


def case_while_by_max_iterations():
    """MXNet case 1.2: an always-true cond stops at max_iterations=1000: i = 1001,
    s = 500500."""
    graph, inputs = _counter_loop(None, 1000, flag=1)
    return graph, inputs, [np.array([1001.0]), np.array([500500.0]), np.array([1.0])]


def case_while_zero_iterations():
    """MXNet case 2.3: an always-false cond: func never runs, the step output has no rows and
    the loop variables keep their initial values."""
    graph, inputs = _counter_loop(None, 1000, step_output=True, flag=0)
    return graph, inputs, [np.zeros((0, 1)), np.array([1.0]), np.array([0.0]), np.array([0.0])]


def case_while_step_outputs():
    """MXNet case 2.1: i <= 100 with i as the step output: rows 1..100 (MXNet pads to 1000),
    i = 101, s = 5050."""
    graph, inputs = _counter_loop(101, 1000, step_output=True)
    return graph, inputs, [np.arange(1, 101, dtype=np.float64).reshape(100, 1),
                           np.array([101.0]), np.array([5050.0])]


def case_while_nested():
    """MXNet's test_while_loop_nested: the inner loop stacks sc[j] for j < 2, the outer runs it
    for i < 2, so x_ij (and x_ji) have shape (2, 2, 10, 5, 3) with x_ij[a, b] = sc[b]."""
    # inner: cond j < 2; func (x_ij, x_ij), (i, j + 1, x_sum, sc)
    icond = Builder()
    ij = icond.var("j")
    ipred = icond.op("_lesser_scalar", "inner_lesser0", [ij], {"scalar": 2})
    ifunc = Builder()
    fsc = ifunc.var("sc")
    fj = ifunc.var("j")
    take = ifunc.op("take", "inner_take0", [fsc, fj], {"axis": 0, "mode": "clip"})
    xij = ifunc.op("squeeze", "inner_squeeze0", [take], {"axis": "(0,)"})
    fi = ifunc.var("i")
    jn = ifunc.op("_plus_scalar", "inner_plus0", [fj], {"scalar": 1})
    fx = ifunc.var("x_sum")
    ifunc_heads = ifunc.outputs([xij, xij, fi, jn, fx, fsc], "inner")
    # func's inputs (sc, j, i, x_sum); the loop vars (i, j, x_sum, sc) sit at 2, 1, 3, 0.

    # outer: cond i < 2; func runs the inner loop, then (x_ij, x_ji), (i + 1, j - 2, x_sum, sc)
    ocond = Builder()
    oi = ocond.var("i")
    opred = ocond.op("_lesser_scalar", "outer_lesser0", [oi], {"scalar": 2})
    ofunc = Builder()
    vj = ofunc.var("j")
    vsc = ofunc.var("sc")
    vi = ofunc.var("i")
    vx = ofunc.var("x_sum")
    # _union_inputs(inner cond (j), inner func (sc, j, i, x_sum)) = (j, sc, i, x_sum)
    inner = while_loop(ofunc, "inner_while0", icond, [ipred], ifunc, ifunc_heads, 2,
                       [vj, vsc, vi, vx], [0], [1, 0, 2, 3], [2, 1, 3, 0], 2)
    x_ij, x_ji, i_p, j_p, x_sum_p, sc_p = inner
    i_n = ofunc.op("_plus_scalar", "outer_plus0", [i_p], {"scalar": 1})
    j_n = ofunc.op("_minus_scalar", "outer_minus0", [j_p], {"scalar": 2})
    ofunc_heads = ofunc.outputs([x_ij, x_ji, i_n, j_n, x_sum_p, sc_p], "outer")
    # outer func's inputs (j, sc, i, x_sum); the loop vars (i, j, x_sum, sc) sit at 2, 0, 3, 1.

    g = Builder()
    i = g.var("i", (1,))
    j = g.var("j", (1,))
    x_sum = g.var("x_sum", (5, 3))
    sc = g.var("sc", (10, 10, 5, 3))
    # _union_inputs(outer cond (i), outer func (j, sc, i, x_sum)) = (i, j, sc, x_sum)
    out = while_loop(g, "outer_while0", ocond, [opred], ofunc, ofunc_heads, 2,
                     [i, j, sc, x_sum], [0], [1, 2, 0, 3], [2, 0, 3, 1], 2)
    x_ij, x_ji, new_i, new_j, x_sum_p, sc_p = out
    graph = g.graph([new_i, new_j, x_sum_p, sc_p, x_ij, x_ji], top=True)

    rng = np.random.RandomState(3)
    inputs = {"i": np.array([0.0]), "j": np.array([0.0]),
              "x_sum": rng.uniform(-1, 1, (5, 3)), "sc": rng.uniform(-1, 1, (10, 10, 5, 3))}
    rows = np.stack([np.stack([inputs["sc"][b] for b in range(2)]) for _ in range(2)])
    return graph, inputs, [np.array([2.0]), np.array([0.0]), inputs["x_sum"], inputs["sc"],
                           rows, rows]


def case_foreach_values():
    """contrib.foreach's docstring example, made exact: data arange(6).reshape(3, 2), state
    [0, 1], a free variable [1, 3]; body out = 2 x + s + free, new state = out. Outputs
    [[1, 6], [6, 15], [15, 28]] and the final state [15, 28]."""
    body = Builder()
    x = body.var("x")
    x2 = body.op("_mul_scalar", "mul0", [x], {"scalar": 2})
    s = body.var("s")
    t = body.op("elemwise_add", "add0", [x2, s])
    free = body.var("free")
    out = body.op("elemwise_add", "add1", [t, free])
    heads = body.outputs([out, out], "body")
    g = Builder()
    data = g.var("data", (3, 2))
    s0 = g.var("s0", (2,))
    fv = g.var("free", (2,))
    res = foreach(g, "foreach0", body, heads, 1, [data], [s0], [fv], [0], [1], [2])
    inputs = {"data": np.arange(6, dtype=np.float64).reshape(3, 2), "s0": np.array([0.0, 1.0]),
              "free": np.array([1.0, 3.0])}
    return g.graph(res, top=True), inputs, [np.array([[1.0, 6.0], [6.0, 15.0], [15.0, 28.0]]),
                                            np.array([15.0, 28.0])]


def case_foreach_multi():
    """Two data arrays, two states and a free variable, the body's inputs interleaved:
    o1 = a + s1, o2 = b * w, s1' = o1 + b, s2' = 0.5 s2 + a."""
    body = Builder()
    a = body.var("a")
    s1 = body.var("s1")
    o1 = body.op("elemwise_add", "add0", [a, s1])
    b = body.var("b")
    w = body.var("w")
    o2 = body.op("elemwise_mul", "mul0", [b, w])
    n1 = body.op("elemwise_add", "add1", [o1, b])
    s2 = body.var("s2")
    h = body.op("_mul_scalar", "half0", [s2], {"scalar": 0.5})
    n2 = body.op("elemwise_add", "add2", [h, a])
    heads = body.outputs([o1, o2, n1, n2], "body")
    # body inputs: a 0, s1 1, b 2, w 3, s2 4
    g = Builder()
    da = g.var("a", (4, 3))
    db = g.var("b", (4, 3))
    i1 = g.var("s1_init", (3,))
    i2 = g.var("s2_init", (3,))
    fw = g.var("w", (3,))
    res = foreach(g, "foreach0", body, heads, 2, [da, db], [i1, i2], [fw], [0, 2], [1, 4], [3])
    rng = np.random.RandomState(5)
    inputs = {k: rng.uniform(-1, 1, shape) for k, shape in
              (("a", (4, 3)), ("b", (4, 3)), ("s1_init", (3,)), ("s2_init", (3,)), ("w", (3,)))}
    v1, v2, out1, out2 = inputs["s1_init"], inputs["s2_init"], [], []
    for t in range(4):
        av, bv = inputs["a"][t], inputs["b"][t]
        out1.append(av + v1)
        out2.append(bv * inputs["w"])
        v1, v2 = av + v1 + bv, 0.5 * v2 + av
    return g.graph(res, top=True), inputs, [np.stack(out1), np.stack(out2), v1, v2]


def nested_foreach_graph():
    """An outer foreach over (T, U, 2) whose body runs an inner foreach over its row (U, 2),
    both carrying one state s (2,): the inner body gives o = x + s, s' = o."""
    inner = Builder()
    x = inner.var("x")
    s = inner.var("s")
    o = inner.op("elemwise_add", "inner_add0", [x, s])
    inner_heads = inner.outputs([o, o], "inner")
    outer = Builder()
    row = outer.var("row")
    st = outer.var("s")
    res = foreach(outer, "inner_foreach0", inner, inner_heads, 1, [row], [st], [], [0], [1], [])
    outer_heads = outer.outputs(res, "outer")
    g = Builder()
    data = g.var("data", (2, 3, 2))
    s0 = g.var("s0", (2,))
    out = foreach(g, "outer_foreach0", outer, outer_heads, 1, [data], [s0], [], [0], [1], [])
    return g.graph(out, top=True)


def case_foreach_nested():
    """Nested foreach: a running sum over every row of every row, in order."""
    rng = np.random.RandomState(7)
    inputs = {"data": rng.uniform(-1, 1, (2, 3, 2)), "s0": rng.uniform(-1, 1, (2,))}
    s = inputs["s0"]
    rows = []
    for t in range(2):
        inner = []
        for u in range(3):
            s = inputs["data"][t, u] + s
            inner.append(s)
        rows.append(np.stack(inner))
    return nested_foreach_graph(), inputs, [np.stack(rows), s]


def _cond_example(a, b):
    """contrib.cond's docstring: pred = a * b < 5, then (a + 5) * (b + 5), else
    (a - 5) * (b - 5)."""
    pred = Builder()
    pa = pred.var("a")
    pb = pred.var("b")
    prod = pred.op("elemwise_mul", "mul0", [pa, pb])
    less = pred.op("_lesser_scalar", "lesser0", [prod], {"scalar": 5})
    then_b = Builder()
    ta = then_b.var("a")
    ta5 = then_b.op("_plus_scalar", "then_plus0", [ta], {"scalar": 5})
    tb = then_b.var("b")
    tb5 = then_b.op("_plus_scalar", "then_plus1", [tb], {"scalar": 5})
    tout = then_b.op("elemwise_mul", "then_mul0", [ta5, tb5])
    else_b = Builder()
    ea = else_b.var("a")
    ea5 = else_b.op("_minus_scalar", "else_minus0", [ea], {"scalar": 5})
    eb = else_b.var("b")
    eb5 = else_b.op("_minus_scalar", "else_minus1", [eb], {"scalar": 5})
    eout = else_b.op("elemwise_mul", "else_mul0", [ea5, eb5])
    g = Builder()
    va = g.var("a", (1,))
    vb = g.var("b", (1,))
    out = cond_op(g, "cond0", pred, [less], then_b, [tout], else_b, [eout], [va, vb],
                  [0, 1], [0, 1], [0, 1])
    return g.graph(out, top=True), {"a": np.array([float(a)]), "b": np.array([float(b)])}


def case_cond_then():
    graph, inputs = _cond_example(1, 2)
    return graph, inputs, [np.array([42.0])]


def case_cond_else():
    graph, inputs = _cond_example(3, 2)
    return graph, inputs, [np.array([6.0])]


# ---------------------------------------------------------------------------
# Closures, as MXNet 1.9 exports them (python/mxnet/symbol/contrib.py)
#
# A subgraph's nodes carry `__subgraph_name__`. Loop variables become subgraph variables
# named as _get_sym_uniq_name gives them ("i-0"). An outer value a subgraph reads is cut out
# of it (MXSymbolCutSubgraph): the subgraph gets a new variable named after the value's
# output ("bound" for a variable, "sum0_output" for an op's output) and the node an input
# for it, placed by _union_inputs. while_loop merges the inputs of cond and func only where
# they are loop variables, so a closure both read is two node inputs; cond merges by name.
# A cond's predicate is built outside the branches, so its subgraph is one _copy of a cut.
# ---------------------------------------------------------------------------

def _int64(*values):
    return np.array(values, dtype=np.int64)


def case_while_docstring():
    """contrib.while_loop's docstring, with ndarray.contrib's values: cond i <= 5, func
    ([i + s], [i + 1, s + i]) from int64 (0, 1), max_iterations 10: the step output holds
    [1, 2, 4, 7, 11, 16] (MXNet pads it to 10 rows), the states are 6 and 16."""
    cond = Builder("while_loop_cond0")
    ci = cond.var("i-0")
    pred = cond.op("_lesser_equal_scalar", "_lesser_equal_scalar0", [ci], {"scalar": 5})
    func = Builder("while_loop_func0")
    fi = func.var("i-0")
    fs = func.var("s-0")
    step = func.op("elemwise_add", "_plus0", [fi, fs])
    inc = func.op("_plus_scalar", "_plus_scalar0", [fi], {"scalar": 1})
    acc = func.op("elemwise_add", "_plus1", [fs, fi])
    heads = func.outputs([step, inc, acc], "func")
    g = Builder()
    i = g.var("i")
    s = g.var("s")
    # _union_inputs(cond (i), func (i, s))
    out = while_loop(g, "_while_loop0", cond, [pred], func, heads, 1, [i, s], [0], [0, 1],
                     [0, 1], 10)
    return (g.graph(out, top=True, version=MXNET_19_VERSION), {"i": _int64(0), "s": _int64(1)},
            [np.array([[1], [2], [4], [7], [11], [16]]), np.array([6]), np.array([16])])


def case_while_step_output_100():
    """MXNet's case 2.1 in int64, as exported: cond i <= 100, func (i, (i + 1, s + i)) from
    (1, 0): the step output is the loop variable itself (through _copy), 100 rows 1..100,
    then i = 101 and s = 5050."""
    cond = Builder("while_loop_cond0")
    ci = cond.var("i-0")
    pred = cond.op("_lesser_equal_scalar", "_lesser_equal_scalar0", [ci], {"scalar": 100})
    func = Builder("while_loop_func0")
    fi = func.var("i-0")
    inc = func.op("_plus_scalar", "_plus_scalar0", [fi], {"scalar": 1})
    fs = func.var("s-0")
    acc = func.op("elemwise_add", "_plus0", [fs, fi])
    heads = func.outputs([fi, inc, acc], "func")
    g = Builder()
    i = g.var("i")
    s = g.var("s")
    out = while_loop(g, "_while_loop0", cond, [pred], func, heads, 1, [i, s], [0], [0, 1],
                     [0, 1], 1000)
    return (g.graph(out, top=True, version=MXNET_19_VERSION), {"i": _int64(1), "s": _int64(0)},
            [np.arange(1, 101).reshape(100, 1), np.array([101]), np.array([5050])])


def _trip_count_graph():
    """while s < sum(budget): i += 1, s += step * 1.5; the step output is s. cond reads
    sum(budget), an outer op's output, and func reads step, an outer variable: both are
    closures, so how often the loop runs depends on the data."""
    cond = Builder("while_loop_cond0")
    cs = cond.var("s-0")
    limit = cond.closure("sum0_output")
    pred = cond.op("_lesser", "_lesser0", [cs, limit])  # what `s < limit` exports
    func = Builder("while_loop_func0")
    fs = func.var("s-0")
    step = func.closure("step")
    scaled = func.op("_mul_scalar", "_mul_scalar0", [step], {"scalar": 1.5})
    grown = func.op("elemwise_add", "_plus0", [fs, scaled])
    fi = func.var("i-0")
    inc = func.op("_plus_scalar", "_plus_scalar0", [fi], {"scalar": 1})
    # The step output repeats the new s: while_loop copies only inputs.
    heads = func.outputs([grown, inc, grown], "func", copy_repeats=False)
    # func inputs in DFS order: s-0 0, step 1, i-0 2
    g = Builder()
    budget = g.var("budget")
    total = g.op("sum", "sum0", [budget], {"axis": "(0,)", "keepdims": "True"})
    s = g.var("s")
    st = g.var("step")
    i = g.var("i")
    # _union_inputs(cond (s-0, sum0_output), func (s-0, step, i-0)); the loop vars are (i, s).
    out = while_loop(g, "_while_loop0", cond, [pred], func, heads, 1, [s, total, st, i],
                     [0, 1], [0, 2, 3], [2, 0], 1000)
    return g.graph(out, top=True, version=MXNET_19_VERSION)


def _trip_count_numpy(inputs):
    limit = inputs["budget"].sum()
    i, s, rows = inputs["i"], inputs["s"], []
    while s[0] < limit:
        i, s = i + 1, s + inputs["step"] * 1.5
        rows.append(s)
    return [np.array(rows).reshape(-1, 1), i, s]


def case_while_trip_count():
    inputs = {"budget": np.array([2.0, 3.5, 4.0]), "i": np.array([0.0]), "s": np.array([0.0]),
              "step": np.array([0.75])}
    return _trip_count_graph(), inputs, _trip_count_numpy(inputs)


def case_while_trip_count_zero():
    """The same loop with a budget already spent: func never runs."""
    inputs = {"budget": np.array([-1.0, 0.5, 0.25]), "i": np.array([0.0]), "s": np.array([0.0]),
              "step": np.array([0.75])}
    return _trip_count_graph(), inputs, _trip_count_numpy(inputs)


def case_cond_docstring():
    """contrib.cond's docstring as exported: pred = a * b < 5 is built outside, so cond is a
    _copy of it; the branches (a + 5) * (b + 5) and (a - 5) * (b - 5) read a and b as
    closures, merged by name into node inputs 1 and 2. (1, 2) gives 42, (3, 2) gives 6."""
    pred = Builder("cond_pred0")
    cut = pred.closure("_lesser_scalar0_output")
    pred_heads = pred.outputs([cut], "pred")
    then_b = Builder("cond_then0")
    ta = then_b.closure("a")
    ta5 = then_b.op("_plus_scalar", "_plus_scalar0", [ta], {"scalar": 5})
    tb = then_b.closure("b")
    tb5 = then_b.op("_plus_scalar", "_plus_scalar1", [tb], {"scalar": 5})
    tout = then_b.op("elemwise_mul", "_mul1", [ta5, tb5])
    else_b = Builder("cond_else0")
    ea = else_b.closure("a")
    ea5 = else_b.op("_minus_scalar", "_minus_scalar0", [ea], {"scalar": 5})
    eb = else_b.closure("b")
    eb5 = else_b.op("_minus_scalar", "_minus_scalar1", [eb], {"scalar": 5})
    eout = else_b.op("elemwise_mul", "_mul2", [ea5, eb5])
    g = Builder()
    a = g.var("a")
    b = g.var("b")
    prod = g.op("elemwise_mul", "_mul0", [a, b])
    less = g.op("_lesser_scalar", "_lesser_scalar0", [prod], {"scalar": 5})
    out = cond_op(g, "_cond0", pred, pred_heads, then_b, [tout], else_b, [eout], [less, a, b],
                  [0], [1, 2], [1, 2])
    return g.graph(out, top=True, version=MXNET_19_VERSION)


def case_cond_docstring_then():
    return case_cond_docstring(), {"a": np.array([1.0]), "b": np.array([2.0])}, [np.array([42.0])]


def case_cond_docstring_else():
    return case_cond_docstring(), {"a": np.array([3.0]), "b": np.array([2.0])}, [np.array([6.0])]


def _collatz_loop(g, n, mult, steps, step_output=True):
    """Collatz as a while_loop on `g`: while n != 1: n = n / 2 if n % 2 == 0 else n * mult +
    1; steps += 1 (with `step_output`, each step also outputs n). The branch is a cond in
    func's body whose else branch reads mult, a value from outside the loop: cut once into the
    cond's else branch, then again into func. Returns the node's outputs."""
    cond = Builder("while_loop_cond0")
    cn = cond.var("n-0")
    more = cond.op("_not_equal_scalar", "_not_equal_scalar0", [cn], {"scalar": 1})

    pick = Builder("cond_pred0")
    cut = pick.closure("_equal_scalar0_output")
    pick_heads = pick.outputs([cut], "pred")
    then_b = Builder("cond_then0")
    tn = then_b.closure("n-0")
    half = then_b.op("_div_scalar", "_div_scalar0", [tn], {"scalar": 2})
    else_b = Builder("cond_else0")
    en = else_b.closure("n-0")
    em = else_b.closure("mult")
    times = else_b.op("elemwise_mul", "_mul0", [en, em])
    plus = else_b.op("_plus_scalar", "_plus_scalar0", [times], {"scalar": 1})

    func = Builder("while_loop_func0")
    fn = func.var("n-0")
    rem = func.op("_mod_scalar", "_mod_scalar0", [fn], {"scalar": 2})
    even = func.op("_equal_scalar", "_equal_scalar0", [rem], {"scalar": 0})
    fm = func.closure("mult")
    # cond's _union_inputs(pred (_equal_scalar0_output), then (n-0), else (n-0, mult))
    nxt = cond_op(func, "_cond0", pick, pick_heads, then_b, [half], else_b, [plus],
                  [even, fn, fm], [0], [1], [1, 2])
    fs = func.var("steps-0")
    counted = func.op("_plus_scalar", "_plus_scalar1", [fs], {"scalar": 1})
    steps_out = [fn] if step_output else []
    heads = func.outputs(steps_out + [nxt[0], counted], "func", copy_repeats=False)
    # _union_inputs(cond (n-0), func (n-0, mult, steps-0)); the loop vars are (n, steps).
    return while_loop(g, "_while_loop0", cond, [more], func, heads, len(steps_out),
                      [n, mult, steps], [0], [0, 1, 2], [0, 2], 1000)


def _collatz_graph():
    g = Builder()
    out = _collatz_loop(g, g.var("n"), g.var("mult"), g.var("steps"))
    return g.graph(out, top=True, version=MXNET_19_VERSION)


def _collatz_numpy(inputs):
    n, steps, rows = inputs["n"], inputs["steps"], []
    while n[0] != 1:
        rows.append(n)
        n = n / 2 if n[0] % 2 == 0 else n * inputs["mult"] + 1
        steps = steps + 1
    return [np.array(rows).reshape(-1, 1), n, steps]


def case_collatz():
    """From 27: 111 steps up to 9232 and down, the trip count set by the data."""
    inputs = {"n": np.array([27.0]), "mult": np.array([3.0]), "steps": np.array([0.0])}
    return _collatz_graph(), inputs, _collatz_numpy(inputs)


def case_collatz_int64():
    """The same in int64 from 97: 118 steps."""
    inputs = {"n": _int64(97), "mult": _int64(3), "steps": _int64(0)}
    return _collatz_graph(), inputs, _collatz_numpy(inputs)


def _collatz_foreach_graph():
    """The Collatz loop (without its step output) in a foreach body, once per start value:
    the body outputs the steps each start takes and carries their total. mult is now three
    levels out: the top graph's variable, cut into the body, then into func, then into the
    cond's else branch."""
    body = Builder("foreach0")
    bx = body.var("x-0")
    zero = body.op("zeros_like", "zeros_like0", [bx])
    bm = body.closure("mult")
    loop = _collatz_loop(body, bx, bm, zero, step_output=False)
    total = body.var("total-0")
    summed = body.op("elemwise_add", "_plus1", [total, loop[1]])
    heads = body.outputs([loop[1], summed], "body")
    # body inputs: x-0 0, mult 1, total-0 2
    g = Builder()
    starts = g.var("starts")
    total0 = g.var("total")
    mult = g.var("mult")
    out = foreach(g, "_foreach0", body, heads, 1, [starts], [total0], [mult], [0], [2], [1])
    return g.graph(out, top=True, version=MXNET_19_VERSION)


def case_collatz_foreach():
    """Start values 27, 7, 1 and 6 take 111, 16, 0 and 8 steps: 135 in all."""
    inputs = {"starts": np.array([27.0, 7.0, 1.0, 6.0]), "total": np.array([0.0]),
              "mult": np.array([3.0])}
    counts = []
    for v in inputs["starts"]:
        counts.append(len(_collatz_numpy({"n": np.array([v]), "mult": inputs["mult"],
                                           "steps": np.array([0.0])})[0]))
    return (_collatz_foreach_graph(), inputs,
            [np.array(counts, dtype=np.float64).reshape(-1, 1), np.array([float(sum(counts))])])


def _foreach_closure_graph():
    """A foreach over rows x (T, 3) carrying acc (3,): if sum(x) > threshold then acc + x *
    scale else acc, the step output acc. The predicate reads threshold and the then branch
    scale, variables of the outer graph: cut into the body, and scale once more into the
    branch."""
    pick = Builder("cond_pred0")
    cut = pick.closure("broadcast_greater0_output")
    pick_heads = pick.outputs([cut], "pred")
    then_b = Builder("cond_then0")
    tacc = then_b.closure("acc-0")
    tx = then_b.closure("x-0")
    tscale = then_b.closure("scale")
    scaled = then_b.op("broadcast_mul", "broadcast_mul0", [tx, tscale])
    added = then_b.op("elemwise_add", "_plus0", [tacc, scaled])
    else_b = Builder("cond_else0")
    eacc = else_b.closure("acc-0")
    kept = else_b.outputs([eacc], "else")

    body = Builder("foreach0")
    bx = body.var("x-0")
    total = body.op("sum", "sum0", [bx], {"axis": "(0,)", "keepdims": "True"})
    bt = body.closure("threshold")
    over = body.op("broadcast_greater", "broadcast_greater0", [total, bt])
    bacc = body.var("acc-0")
    bs = body.closure("scale")
    # cond's _union_inputs(pred (broadcast_greater0_output), then (acc-0, x-0, scale),
    # else (acc-0))
    chosen = cond_op(body, "_cond0", pick, pick_heads, then_b, [added], else_b, kept,
                     [over, bacc, bx, bs], [0], [1, 2, 3], [1])
    heads = body.outputs([chosen[0], chosen[0]], "body")
    # body inputs: x-0 0, threshold 1, acc-0 2, scale 3

    g = Builder()
    data = g.var("data")
    acc = g.var("acc")
    threshold = g.var("threshold")
    scale = g.var("scale")
    out = foreach(g, "_foreach0", body, heads, 1, [data], [acc], [threshold, scale], [0], [2],
                  [1, 3])
    return g.graph(out, top=True, version=MXNET_19_VERSION)


def case_foreach_closure():
    rng = np.random.RandomState(23)
    inputs = {"data": rng.uniform(-1, 1, (7, 3)), "acc": rng.uniform(-1, 1, (3,)),
              "threshold": np.array([0.1]), "scale": rng.uniform(0.5, 2, (3,))}
    acc, rows = inputs["acc"], []
    for x in inputs["data"]:
        if x.sum() > inputs["threshold"][0]:
            acc = acc + x * inputs["scale"]
        rows.append(acc)
    return _foreach_closure_graph(), inputs, [np.stack(rows), acc]


# ---------------------------------------------------------------------------
# The sample models (data/control) and their NumPy equivalents
# ---------------------------------------------------------------------------

LSTM_BATCH = 4
LSTM_INPUT = 16
LSTM_HIDDEN = 32


def _lstm_step(b, x, h, c, i2h_w, i2h_b, h2h_w, h2h_b, prefix):
    """One LSTM cell as Gluon's LSTMCell writes it (gates in, forget, transform, out)."""
    hidden = LSTM_HIDDEN
    i2h = b.op("FullyConnected", prefix + "i2h", [x, i2h_w, i2h_b],
               {"flatten": "True", "no_bias": "False", "num_hidden": 4 * hidden})
    h2h = b.op("FullyConnected", prefix + "h2h", [h, h2h_w, h2h_b],
               {"flatten": "True", "no_bias": "False", "num_hidden": 4 * hidden})
    gates = b.op("elemwise_add", prefix + "plus0", [i2h, h2h])
    sl = b.op("SliceChannel", prefix + "slice0", [gates], {"num_outputs": 4, "axis": 1},
              n_outputs=4)
    in_gate = b.op("Activation", prefix + "i", [sl[0]], {"act_type": "sigmoid"})
    forget_gate = b.op("Activation", prefix + "f", [sl[1]], {"act_type": "sigmoid"})
    in_transform = b.op("Activation", prefix + "c", [sl[2]], {"act_type": "tanh"})
    out_gate = b.op("Activation", prefix + "o", [sl[3]], {"act_type": "sigmoid"})
    keep = b.op("elemwise_mul", prefix + "mul0", [forget_gate, c])
    write = b.op("elemwise_mul", prefix + "mul1", [in_gate, in_transform])
    next_c = b.op("elemwise_add", prefix + "state", [keep, write])
    squashed = b.op("tanh", prefix + "tanh0", [next_c])
    next_h = b.op("elemwise_mul", prefix + "out", [out_gate, squashed])
    return next_h, next_c


def _lstm_weights(g):
    h, n, i = LSTM_HIDDEN, LSTM_BATCH, LSTM_INPUT
    return (g.var("i2h_weight", (4 * h, i)), g.var("i2h_bias", (4 * h,), init="zeros"),
            g.var("h2h_weight", (4 * h, h)), g.var("h2h_bias", (4 * h,), init="zeros"))


def lstm_foreach_graph():
    """The LSTM over a variable-length sequence: data (T, 4, 16) with T free (`__shape__`
    (0, 4, 16)), states h and c (4, 32), the four weights free variables of the body."""
    body = Builder()
    x = body.var("x")
    i2h_w = body.var("i2h_weight")
    i2h_b = body.var("i2h_bias")
    h = body.var("h")
    h2h_w = body.var("h2h_weight")
    h2h_b = body.var("h2h_bias")
    # Variables come in the order MXNet's DFS meets them: c last, where the cell reads it.
    hidden = LSTM_HIDDEN
    i2h = body.op("FullyConnected", "lstm_i2h", [x, i2h_w, i2h_b],
                  {"flatten": "True", "no_bias": "False", "num_hidden": 4 * hidden})
    h2h = body.op("FullyConnected", "lstm_h2h", [h, h2h_w, h2h_b],
                  {"flatten": "True", "no_bias": "False", "num_hidden": 4 * hidden})
    gates = body.op("elemwise_add", "lstm_plus0", [i2h, h2h])
    sl = body.op("SliceChannel", "lstm_slice0", [gates], {"num_outputs": 4, "axis": 1},
                 n_outputs=4)
    in_gate = body.op("Activation", "lstm_i", [sl[0]], {"act_type": "sigmoid"})
    forget_gate = body.op("Activation", "lstm_f", [sl[1]], {"act_type": "sigmoid"})
    c = body.var("c")
    keep = body.op("elemwise_mul", "lstm_mul0", [forget_gate, c])
    in_transform = body.op("Activation", "lstm_c", [sl[2]], {"act_type": "tanh"})
    write = body.op("elemwise_mul", "lstm_mul1", [in_gate, in_transform])
    next_c = body.op("elemwise_add", "lstm_state", [keep, write])
    out_gate = body.op("Activation", "lstm_o", [sl[3]], {"act_type": "sigmoid"})
    squashed = body.op("tanh", "lstm_tanh0", [next_c])
    next_h = body.op("elemwise_mul", "lstm_out", [out_gate, squashed])
    heads = body.outputs([next_h, next_h, next_c], "lstm")
    # body inputs: x 0, i2h_weight 1, i2h_bias 2, h 3, h2h_weight 4, h2h_bias 5, c 6

    g = Builder()
    n, i = LSTM_BATCH, LSTM_INPUT
    data = g.var("data", (0, n, i))
    h0 = g.var("h0", (n, LSTM_HIDDEN))
    c0 = g.var("c0", (n, LSTM_HIDDEN))
    weights = _lstm_weights(g)
    out = foreach(g, "lstm_foreach0", body, heads, 1, [data], [h0, c0], list(weights), [0],
                  [3, 6], [1, 2, 4, 5])
    return g.graph(out, top=True)


def lstm_unrolled_graph(length):
    """The same LSTM unrolled over `length` steps (SliceChannel over the time axis, one cell
    per step sharing the weights, stack of the hidden states)."""
    g = Builder()
    n, i = LSTM_BATCH, LSTM_INPUT
    data = g.var("data", (length, n, i))
    h = g.var("h0", (n, LSTM_HIDDEN))
    c = g.var("c0", (n, LSTM_HIDDEN))
    weights = _lstm_weights(g)
    steps = g.op("SliceChannel", "split0", [data],
                 {"num_outputs": length, "axis": 0, "squeeze_axis": "True"}, n_outputs=length)
    if length == 1:
        steps = [steps]
    hs = []
    for t in range(length):
        h, c = _lstm_step(g, steps[t], h, c, *weights, prefix="t%d_" % t)
        hs.append(h)
    out = g.op("stack", "stack0", hs, {"axis": 0, "num_args": length})
    return g.graph([out, h, c], top=True)


def lstm_inputs(length, seed=11):
    rng = np.random.RandomState(seed)
    h, n, i = LSTM_HIDDEN, LSTM_BATCH, LSTM_INPUT
    shapes = {"data": (length, n, i), "h0": (n, h), "c0": (n, h), "i2h_weight": (4 * h, i),
              "i2h_bias": (4 * h,), "h2h_weight": (4 * h, h), "h2h_bias": (4 * h,)}
    return {k: rng.uniform(-0.5, 0.5, s) for k, s in shapes.items()}


def lstm_numpy(inputs):
    """The LSTM written directly: stacked h, final h, final c."""
    def sig(v):
        return 1.0 / (1.0 + np.exp(-v))
    h, c = inputs["h0"], inputs["c0"]
    hs = []
    for x in inputs["data"]:
        gates = (x @ inputs["i2h_weight"].T + inputs["i2h_bias"]
                 + h @ inputs["h2h_weight"].T + inputs["h2h_bias"])
        gi, gf, gc, go = np.split(gates, 4, axis=1)
        c = sig(gf) * c + sig(gi) * np.tanh(gc)
        h = sig(go) * np.tanh(c)
        hs.append(h)
    stacked = np.stack(hs) if hs else np.zeros((0,) + h.shape)
    return [stacked, h, c]


def case_lstm_foreach():
    inputs = lstm_inputs(5)
    return lstm_foreach_graph(), inputs, lstm_numpy(inputs)


DECODER_VOCAB = 12
DECODER_HIDDEN = 8
DECODER_MAX_LEN = 10       # the loop's own bound on the counter (i < 10)
DECODER_THRESHOLD = 0.2    # keep going while the best next token is this likely
DECODER_MAX_ITERATIONS = 20


def _decoder_scores(b, h, out_w, out_b, prefix):
    logits = b.op("FullyConnected", prefix + "logits", [h, out_w, out_b],
                  {"flatten": "True", "no_bias": "False", "num_hidden": DECODER_VOCAB})
    probs = b.op("softmax", prefix + "softmax0", [logits], {"axis": -1})
    return probs


def greedy_decoder_graph():
    """A greedy decoder: while i < 10 and the most likely next token has probability > 0.2
    (a stop that depends on the data), emit that token and its probability and feed the token
    back. Loop variables i (1,) and the hidden state h (1, 8); cond and func both read the
    output layer's weights (free variables)."""
    v, hd = DECODER_VOCAB, DECODER_HIDDEN
    cond = Builder()
    ci = cond.var("i")
    more = cond.op("_lesser_scalar", "cond_lesser0", [ci], {"scalar": DECODER_MAX_LEN})
    ch = cond.var("h")
    cw = cond.var("out_weight")
    cb = cond.var("out_bias")
    cprobs = _decoder_scores(cond, ch, cw, cb, "cond_")
    best = cond.op("max", "cond_max0", [cprobs], {"axis": "(1,)"})
    sure = cond.op("_greater_scalar", "cond_greater0", [best], {"scalar": DECODER_THRESHOLD})
    go = cond.op("elemwise_mul", "cond_and0", [more, sure])
    # cond inputs: i 0, h 1, out_weight 2, out_bias 3

    func = Builder()
    fh = func.var("h")
    fw = func.var("out_weight")
    fb = func.var("out_bias")
    probs = _decoder_scores(func, fh, fw, fb, "step_")
    order = func.op("argsort", "step_argsort0", [probs], {"axis": 1, "is_ascend": "False"})
    first = func.op("slice_axis", "step_slice0", [order], {"axis": 1, "begin": 0, "end": 1})
    token = func.op("Reshape", "step_token", [first], {"shape": "(1,)"})
    score = func.op("max", "step_score", [probs], {"axis": "(1,)"})
    fi = func.var("i")
    i_next = func.op("_plus_scalar", "step_count", [fi], {"scalar": 1})
    emb_w = func.var("embed_weight")
    emb = func.op("Embedding", "step_embed", [token, emb_w],
                  {"input_dim": v, "output_dim": hd, "dtype": "float32", "sparse_grad": "False"})
    w_ih = func.var("w_ih")
    a = func.op("FullyConnected", "step_ih", [emb, w_ih],
                {"flatten": "True", "no_bias": "True", "num_hidden": hd})
    w_hh = func.var("w_hh")
    bh = func.op("FullyConnected", "step_hh", [fh, w_hh],
                 {"flatten": "True", "no_bias": "True", "num_hidden": hd})
    pre = func.op("elemwise_add", "step_plus0", [a, bh])
    h_next = func.op("tanh", "step_hidden", [pre])
    func_heads = func.outputs([token, score, i_next, h_next], "step")
    # func inputs: h 0, out_weight 1, out_bias 2, i 3, embed_weight 4, w_ih 5, w_hh 6

    g = Builder()
    i0 = g.op("_zeros", "counter0", [], {"shape": "(1,)", "dtype": "float32"})
    h0 = g.var("h0", (1, hd))
    out_w = g.var("out_weight", (v, hd))
    out_b = g.var("out_bias", (v,), init="zeros")
    emb_w0 = g.var("embed_weight", (v, hd))
    w_ih0 = g.var("w_ih", (hd, hd))
    w_hh0 = g.var("w_hh", (hd, hd))
    # _union_inputs(cond (i, h, out_weight, out_bias), func (h, out_weight, out_bias, i,
    # embed_weight, w_ih, w_hh)) = (i, h, out_weight, out_bias, embed_weight, w_ih, w_hh)
    out = while_loop(g, "decoder0", cond, [go], func, func_heads, 2,
                     [i0, h0, out_w, out_b, emb_w0, w_ih0, w_hh0], [0, 1, 2, 3],
                     [1, 2, 3, 0, 4, 5, 6], [3, 0], DECODER_MAX_ITERATIONS)
    return g.graph(out, top=True)


def decoder_inputs(seed, scale=1.0):
    rng = np.random.RandomState(seed)
    v, hd = DECODER_VOCAB, DECODER_HIDDEN
    shapes = {"h0": (1, hd), "out_weight": (v, hd), "out_bias": (v,), "embed_weight": (v, hd),
              "w_ih": (hd, hd), "w_hh": (hd, hd)}
    return {k: scale * rng.uniform(-1, 1, s) for k, s in shapes.items()}


def decoder_numpy(inputs):
    """The decoder written directly: tokens (n, 1), scores (n, 1), final i, final h."""
    def probs_of(h):
        z = h @ inputs["out_weight"].T + inputs["out_bias"]
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    i, h = 0, inputs["h0"]
    tokens, scores = [], []
    while i < DECODER_MAX_ITERATIONS:
        p = probs_of(h)
        if not (i < DECODER_MAX_LEN and p.max() > DECODER_THRESHOLD):
            break
        tok = int(np.argsort(-p[0], kind="stable")[0])
        tokens.append([float(tok)])
        scores.append([p.max()])
        e = inputs["embed_weight"][tok][None, :]
        h = np.tanh(e @ inputs["w_ih"].T + h @ inputs["w_hh"].T)
        i += 1
    return [np.array(tokens).reshape(-1, 1), np.array(scores).reshape(-1, 1),
            np.array([float(i)]), h]


def case_greedy_decoder():
    """Stops on its score: 6 tokens, the 7th would have probability <= 0.2."""
    inputs = decoder_inputs(27)
    return greedy_decoder_graph(), inputs, decoder_numpy(inputs)


def case_greedy_decoder_limit():
    """Stops on its counter: 10 confident tokens."""
    inputs = decoder_inputs(12)
    return greedy_decoder_graph(), inputs, decoder_numpy(inputs)


def case_greedy_decoder_silent():
    """Not confident from the start: no token, shapes (0, 1)."""
    inputs = decoder_inputs(14)
    return greedy_decoder_graph(), inputs, decoder_numpy(inputs)


COND_LOOP_WIDTH = 3


def cond_in_loop_graph():
    """A foreach over x (T, 3), T free, carrying acc (3,): each row whose sum is positive is
    added to acc, any other row halves acc (a _cond in the body); the body outputs acc."""
    pred = Builder()
    px = pred.var("x")
    total = pred.op("sum", "row_sum0", [px], {"axis": "(0,)", "keepdims": "True"})
    positive = pred.op("_greater_scalar", "row_positive0", [total], {"scalar": 0})
    then_b = Builder()
    tacc = then_b.var("acc")
    tx = then_b.var("x")
    added = then_b.op("elemwise_add", "then_add0", [tacc, tx])
    else_b = Builder()
    eacc = else_b.var("acc")
    halved = else_b.op("_mul_scalar", "else_half0", [eacc], {"scalar": 0.5})

    body = Builder()
    bx = body.var("x")
    bacc = body.var("acc")
    # _union_inputs(pred (x), then (acc, x), else (acc)) = (x, acc)
    chosen = cond_op(body, "choose0", pred, [positive], then_b, [added], else_b, [halved],
                     [bx, bacc], [0], [1, 0], [1])
    heads = body.outputs([chosen[0], chosen[0]], "body")
    # body inputs: x 0, acc 1

    g = Builder()
    data = g.var("data", (0, COND_LOOP_WIDTH))
    acc0 = g.var("acc0", (COND_LOOP_WIDTH,))
    out = foreach(g, "loop0", body, heads, 1, [data], [acc0], [], [0], [1], [])
    return g.graph(out, top=True)


def cond_in_loop_numpy(inputs):
    acc = inputs["acc0"]
    rows = []
    for x in inputs["data"]:
        acc = acc + x if x.sum() > 0 else acc * 0.5
        rows.append(acc)
    stacked = np.stack(rows) if rows else np.zeros((0, COND_LOOP_WIDTH))
    return [stacked, acc]


def case_cond_in_loop():
    rng = np.random.RandomState(17)
    inputs = {"data": rng.uniform(-1, 1, (6, COND_LOOP_WIDTH)),
              "acc0": rng.uniform(-1, 1, (COND_LOOP_WIDTH,))}
    return cond_in_loop_graph(), inputs, cond_in_loop_numpy(inputs)


CASES = [
    ("while_loop stops by its condition: (6, 15)", case_while_by_condition),
    ("while_loop stops at max_iterations=1000: (1001, 500500)", case_while_by_max_iterations),
    ("while_loop with zero iterations", case_while_zero_iterations),
    ("while_loop step outputs over 100 iterations", case_while_step_outputs),
    ("nested while_loops stack to (2, 2, 10, 5, 3)", case_while_nested),
    ("foreach exact values [[1, 6], [6, 15], [15, 28]]", case_foreach_values),
    ("foreach with two data arrays, two states and a free variable", case_foreach_multi),
    ("nested foreach", case_foreach_nested),
    ("cond (1, 2) -> 42", case_cond_then),
    ("cond (3, 2) -> 6", case_cond_else),
    ("LSTM with foreach", case_lstm_foreach),
    ("greedy decoder: stops on its score after 6 tokens", case_greedy_decoder),
    ("greedy decoder: stops on its counter after 10 tokens", case_greedy_decoder_limit),
    ("greedy decoder: no confident token, zero iterations", case_greedy_decoder_silent),
    ("cond inside a foreach body", case_cond_in_loop),
    ("MXNet 1.9: while_loop's docstring in int64", case_while_docstring),
    ("MXNet 1.9: a step output of 100 iterations in int64", case_while_step_output_100),
    ("MXNet 1.9: a trip count set by closures of cond and func", case_while_trip_count),
    ("MXNet 1.9: the same loop running zero times", case_while_trip_count_zero),
    ("MXNet 1.9: cond's docstring, then branch: 42", case_cond_docstring_then),
    ("MXNet 1.9: cond's docstring, else branch: 6", case_cond_docstring_else),
    ("MXNet 1.9: Collatz, a cond in the loop reading a variable two levels out",
     case_collatz),
    ("MXNet 1.9: Collatz in int64", case_collatz_int64),
    ("MXNet 1.9: Collatz in a foreach body, a closure three levels deep",
     case_collatz_foreach),
    ("MXNet 1.9: foreach with a cond reading outer variables", case_foreach_closure),
]
