#!/usr/bin/env python3
"""The backward pass through the command line: --run --backward [--head-grad] --save-outputs.

An MLP (FullyConnected, tanh, FullyConnected, log_softmax) run in float64 gives gradients for
its input and every weight equal to a NumPy backpropagation of the same computation; the
transformer sample's gradients run at all sizes the model's own test uses and equal a float64
run's within float32 rounding; bad uses exit 2 naming the option, and a model with an op whose
gradient is not written exits with a line naming the node.

Prints TAP. Environment: DS_SOURCE_DIR, DS_BUILD_DIR (set by meson).
"""

import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402
from tap import Failure  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("DS_SOURCE_DIR") or os.path.dirname(HERE)
BUILD = os.environ.get("DS_BUILD_DIR") or os.path.join(SRC, "build")
SHARED = os.environ.get("DS_SHARED_DIR") or os.path.join(SRC, "..", "shared")
DYNSCOPE = os.path.join(BUILD, "app", "dynscope")


def run_cli(args):
    return subprocess.run([DYNSCOPE] + args, capture_output=True, text=True, timeout=300)


def mlp_json(path):
    def var(name):
        return {"op": "null", "name": name, "inputs": []}
    nodes = [var("data"), var("fc1_weight"), var("fc1_bias"),
             {"op": "FullyConnected", "name": "fc1", "attrs": {"num_hidden": "16"},
              "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
             {"op": "Activation", "name": "act1", "attrs": {"act_type": "tanh"},
              "inputs": [[3, 0, 0]]},
             var("fc2_weight"), var("fc2_bias"),
             {"op": "FullyConnected", "name": "fc2", "attrs": {"num_hidden": "3"},
              "inputs": [[4, 0, 0], [5, 0, 0], [6, 0, 0]]},
             {"op": "log_softmax", "name": "prob", "inputs": [[7, 0, 0]]}]
    doc = {"nodes": nodes, "arg_nodes": [0, 1, 2, 5, 6], "heads": [[8, 0, 0]],
           "attrs": {"mxnet_version": ["int", 10900]}}
    with open(path, "w") as f:
        json.dump(doc, f)


def mlp_reference(x, w1, b1, w2, b2, hg):
    a = np.tanh(x @ w1.T + b1)
    z = a @ w2.T + b2
    z = z - z.max(1, keepdims=True)
    ls = z - np.log(np.exp(z).sum(1, keepdims=True))
    dz = hg - np.exp(ls) * hg.sum(1, keepdims=True)
    dh = (dz @ w2) * (1 - a * a)
    return {"data": dh @ w1, "fc1_weight": dh.T @ x, "fc1_bias": dh.sum(0),
            "fc2_weight": dz.T @ a, "fc2_bias": dz.sum(0)}


def test_mlp_float64(tmp):
    model = os.path.join(tmp, "mlp-symbol.json")
    mlp_json(model)
    rng = np.random.default_rng(7)
    values = {"data": rng.standard_normal((5, 8)), "fc1_weight": rng.standard_normal((16, 8)) * 0.3,
              "fc1_bias": rng.standard_normal(16) * 0.1,
              "fc2_weight": rng.standard_normal((3, 16)) * 0.3,
              "fc2_bias": rng.standard_normal(3) * 0.1}
    hg = rng.standard_normal((5, 3))
    args = ["--run", model, "--backward", "--save-outputs", os.path.join(tmp, "out")]
    for name, v in values.items():
        np.save(os.path.join(tmp, name + ".npy"), v)
        args += ["--input", f"{name}={os.path.join(tmp, name + '.npy')}"]
    np.save(os.path.join(tmp, "hg.npy"), hg)
    args += ["--head-grad", "prob_output=" + os.path.join(tmp, "hg.npy")]
    r = run_cli(args)
    if r.returncode != 0:
        raise Failure(f"exit {r.returncode}: {r.stderr.strip()}")
    with open(os.path.join(tmp, "out", "outputs.json")) as f:
        listing = json.load(f)
    names = [g["name"] for g in listing["gradients"]]
    if names != list(values):
        raise Failure(f"gradients listed {names}, want {list(values)}")
    ref = mlp_reference(values["data"], values["fc1_weight"], values["fc1_bias"],
                        values["fc2_weight"], values["fc2_bias"], hg)
    worst = 0.0
    for item in listing["gradients"]:
        got = np.load(os.path.join(tmp, "out", item["file"]))
        want = ref[item["name"]]
        if item["file"] != "grad_" + item["name"] + ".npy" or list(got.shape) != item["shape"] \
                or got.shape != want.shape or item["dtype"] != "float64":
            raise Failure(f"{item} does not describe its gradient {got.shape} {got.dtype}")
        err = float(np.abs(got - want).max() / np.abs(want).max())
        worst = max(worst, err)
        if err > 1e-12:
            raise Failure(f"grad of {item['name']}: relative error {err:.3g}")
    return f"worst relative error {worst:.2g}"


def directional_check(tmp, model, data, extra, value_of, eps=0.05, tolerance=1e-2):
    """The model's gradient along random directions of all its weights at once against the
    central difference of its loss along them (float32, so within `tolerance`). `data` feeds
    the inputs, `value_of(name, shape)` makes each weight; inputs get no direction."""
    rng = np.random.default_rng(11)

    def run(values, args, name):
        out = os.path.join(tmp, name)
        cmd = ["--run", model, "--save-outputs", out] + extra + args
        for n, v in values.items():
            path = os.path.join(tmp, f"in_{n}.npy")
            np.save(path, v)
            cmd += ["--input", f"{n}={path}"]
        r = run_cli(cmd)
        if r.returncode != 0:
            raise Failure(f"exit {r.returncode}: {r.stderr.strip()}")
        with open(os.path.join(out, "outputs.json")) as f:
            return out, json.load(f)

    shape_args = []
    for n, v in data.items():
        shape_args += ["--input-shape", f"{n}=({','.join(str(d) for d in v.shape)})"]
    r = run_cli(["--info", model, "--json"] + shape_args)
    if r.returncode != 0:
        raise Failure(f"--info: exit {r.returncode}: {r.stderr.strip()}")
    info = json.loads(r.stdout)
    values = dict(data)
    aux = set()
    for item in info["inputs"]:
        if item["name"] not in data:
            values[item["name"]] = value_of(item["name"], item["shape"], rng).astype("float32")
            if item["kind"] == "aux":
                aux.add(item["name"])
    head = info["outputs"][0]
    shape = head["shape"]
    if None in shape:  # data-dependent: the shape one forward run gives
        o, lst = run(values, [], "probe")
        shape = np.load(os.path.join(o, lst["outputs"][0]["file"])).shape
    hg = rng.standard_normal(shape)
    np.save(os.path.join(tmp, "hg.npy"), hg.astype("float32"))
    out, listing = run(values, ["--backward", "--head-grad",
                                f"{head['name']}={os.path.join(tmp, 'hg.npy')}"], "grads")
    grads = {g["name"]: np.load(os.path.join(out, g["file"])).astype(np.float64)
             for g in listing["gradients"]}
    weights = [n for n in values if n not in data and n not in aux]
    zero = [n for n in weights if not np.any(grads[n])]
    if zero:
        raise Failure(f"zero gradients: {zero}")
    worst = 0.0
    for _ in range(3):
        v = {n: rng.standard_normal(values[n].shape) for n in weights}
        norm = np.sqrt(sum(float((x * x).sum()) for x in v.values()))
        predicted = sum(float((grads[n] * v[n]).sum()) for n in weights) / norm
        loss = []
        for sign in (1, -1):
            moved = dict(values)
            for n in weights:
                moved[n] = (values[n] + sign * eps * v[n] / norm).astype("float32")
            o, lst = run(moved, [], "moved")
            y = np.load(os.path.join(o, lst["outputs"][0]["file"])).astype(np.float64)
            loss.append(float((y * hg).sum()))
        fd = (loss[0] - loss[1]) / (2 * eps)
        err = abs(predicted - fd) / max(abs(fd), 1e-3)
        worst = max(worst, err)
        if err > tolerance:
            raise Failure(f"along a direction: backward {predicted:.6g}, differences {fd:.6g}")
    return f"{len(weights)} weights, worst relative difference {worst:.2g}"


def test_transformer_directional(tmp):
    """The transformer sample: embeddings, LayerNorm, attention through batch_dot and softmax,
    masks."""
    rng = np.random.default_rng(5)
    data = {"data0": rng.integers(0, 1000, (2, 16)).astype("float32"),
            "data1": rng.integers(0, 2, (2, 16)).astype("float32"),
            "data2": np.array([16, 9], "float32")}

    def value_of(name, shape, r):
        scale = 1 / np.sqrt(shape[-1]) if len(shape) > 1 else 0.1
        return (1.0 if name.endswith("gamma") else 0.0) + scale * r.standard_normal(shape)
    return directional_check(tmp, os.path.join(SRC, "data", "transformer",
                                               "transformer-symbol.json"), data, [], value_of)


def test_resnet18_directional(tmp):
    """resnet18 at 1x3x64x64: convolutions, BatchNorm at inference, max and global average
    pooling."""
    model = os.path.join(SHARED, "models", "mxnet", "gluoncv_resnet18_v1-symbol.json")
    rng = np.random.default_rng(6)
    data = {"data": rng.standard_normal((1, 3, 64, 64)).astype("float32")}

    def value_of(name, shape, r):
        if name.endswith("running_var"):
            return r.uniform(0.5, 1.5, shape)
        if name.endswith("running_mean") or name.endswith("beta") or name.endswith("bias"):
            return 0.1 * r.standard_normal(shape)
        if name.endswith("gamma"):
            return 1 + 0.1 * r.standard_normal(shape)
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
        return r.standard_normal(shape) * np.sqrt(2.0 / fan_in)
    # a deep ReLU network at random weights bends within any step a float32 difference can
    # resolve, so the differences here agree to about 1% (single weights: 0.05-0.6%)
    return directional_check(tmp, model, data, [], value_of, eps=0.01, tolerance=3e-2)


def test_boolean_mask_directional(tmp):
    """The boolean-mask sample, whose rows kept depend on the data: the backward pass runs on
    the dynamic executor, and the gradient reaches the weights through the kept rows only."""
    model = os.path.join(SRC, "data", "dynamic", "boolean-mask-symbol.json")
    rng = np.random.default_rng(8)
    data = {"data": rng.standard_normal((6, 8)).astype("float32")}

    def value_of(name, shape, r):
        return r.standard_normal(shape) * (0.5 if len(shape) > 1 else 0.1)
    # a step small enough that no row crosses the mask's threshold
    return directional_check(tmp, model, data, [], value_of, eps=1e-3, tolerance=1e-2)


def test_what_if_recompute(tmp):
    """The loop policies on the LSTM _foreach sample: the same gradients, recompute holding less
    at its peak than save, and checkpointing keeping less than recompute."""
    model = os.path.join(SRC, "data", "control", "lstm-foreach-symbol.json")
    r = run_cli(["--run", model, "--input-shape", "data=(24,4,16)", "--random-inputs",
                 "--what-if-recompute", "--recompute", "checkpoint:6", "--threads", "1"])
    if r.returncode != 0:
        raise Failure(f"exit {r.returncode}: {r.stderr.strip()}")
    rows = {}
    for line in r.stdout.splitlines()[1:]:
        cols = line.split()
        rows[cols[0]] = line
    if set(rows) != {"save", "auto", "recompute", "checkpoint:6"}:
        raise Failure(f"rows {list(rows)}:\n{r.stdout}")
    if any("identical to save" not in rows[p] for p in ("auto", "recompute", "checkpoint:6")):
        raise Failure(f"gradients differ:\n{r.stdout}")
    ratio = float(rows["recompute"].split()[3].rstrip("x"))
    kept = float(rows["recompute"].split()[6].rstrip("x"))
    if not kept < 0.5:
        raise Failure(f"recompute keeps {kept}x what save keeps:\n{r.stdout}")
    kept_cp = float(rows["checkpoint:6"].split()[6].rstrip("x"))
    if not kept_cp < kept:
        raise Failure(f"checkpoint:6 keeps {kept_cp}x, recompute {kept}x:\n{r.stdout}")
    if not ratio < 1.0:
        raise Failure(f"recompute's peak is {ratio}x save's:\n{r.stdout}")
    return f"recompute peak {ratio}x save's"


def test_recompute_auto_transformer(tmp):
    """--recompute auto on the transformer sample: each GELU's value is made again from the
    dense layer's output kept anyway, so the peak falls and the gradients do not change."""
    model = os.path.join(SRC, "data", "transformer", "transformer-symbol.json")
    r = run_cli(["--run", model, "--input-shape", "data0=(2,64)", "--input-shape", "data1=(2,64)",
                 "--input-shape", "data2=(2,)", "--random-inputs", "--what-if-recompute",
                 "--threads", "1"])
    if r.returncode != 0:
        raise Failure(f"exit {r.returncode}: {r.stderr.strip()}")
    rows = {line.split()[0]: line for line in r.stdout.splitlines()[1:]}
    if "identical to save" not in rows.get("auto", ""):
        raise Failure(f"gradients differ:\n{r.stdout}")
    units = {"bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}

    def peak(row):
        cols = rows[row].split()
        return float(cols[1]) * units[cols[2]]
    saved = peak("save") - peak("auto")
    if not saved >= 1 << 20:  # 4 layers' GELU values, 2 x 64 x 1024 floats each
        raise Failure(f"auto's peak is only {saved:.0f} bytes below save's:\n{r.stdout}")
    return f"auto's peak {saved / (1 << 20):.1f} MiB below save's"


def test_report_splits_passes(tmp):
    """--report with --backward says the policy and splits each run's time and live memory
    between the forward nodes and the gradient nodes; --summary prints it."""
    model = os.path.join(SRC, "data", "dynamic", "boolean-mask-symbol.json")
    report = os.path.join(tmp, "report.json")
    r = run_cli(["--run", model, "--input-shape", "data=(64,8)", "--random-inputs", "--backward",
                 "--recompute", "auto", "--repeat", "2", "--report", report])
    if r.returncode != 0:
        raise Failure(f"exit {r.returncode}: {r.stderr.strip()}")
    with open(report) as f:
        doc = json.load(f)
    b = doc.get("backward")
    if not b or b["policy"] != "auto" or b["gradients"] != 5:
        raise Failure(f"backward: {b}")
    gradient = [e for e in doc["events"] if e["depth"] == 0 and
                ("_backward_" in e["node"] or e["node"].endswith("_head_grad"))]
    forward = [e for e in doc["events"] if e["depth"] == 0 and e not in gradient]
    for name, events, key in (("forward", forward, "forward_ns"),
                              ("backward", gradient, "backward_ns")):
        per_run = sum(e["dur_ns"] for e in events) // 2
        if not events or abs(per_run - b[key]) > 2:
            raise Failure(f"{name}: events give {per_run} ns per run, the report {b[key]}")
    if not 0 < b["forward_peak_live_bytes"] <= b["backward_peak_live_bytes"]:
        raise Failure(f"peaks: {b}")
    r = run_cli(["--summary", report])
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("backward: --recompute auto")]
    if r.returncode != 0 or not line:
        raise Failure(f"--summary: {r.stdout}")
    plain = os.path.join(tmp, "forward.json")
    run_cli(["--run", model, "--input-shape", "data=(64,8)", "--random-inputs", "--report",
             plain])
    with open(plain) as f:
        if json.load(f).get("backward") is not None:
            raise Failure("a forward run's report has a backward section")
    return line[0]


def test_policies_agree_on_files(tmp):
    """--recompute save and recompute write the same gradient files, byte for byte."""
    model = os.path.join(SRC, "data", "control", "lstm-foreach-symbol.json")
    outs = {}
    for policy in ("save", "auto", "recompute", "checkpoint:5"):
        out = os.path.join(tmp, policy)
        r = run_cli(["--run", model, "--input-shape", "data=(5,4,16)", "--random-inputs",
                     "--backward", "--recompute", policy, "--save-outputs", out])
        if r.returncode != 0:
            raise Failure(f"{policy}: exit {r.returncode}: {r.stderr.strip()}")
        with open(os.path.join(out, "outputs.json")) as f:
            outs[policy] = (out, json.load(f)["gradients"])
    names = [g["name"] for g in outs["save"][1]]
    if names != ["data", "h0", "c0", "i2h_weight", "i2h_bias", "h2h_weight", "h2h_bias"]:
        raise Failure(f"gradients {names}")
    for g in outs["save"][1]:
        a = np.load(os.path.join(outs["save"][0], g["file"]))
        for other in ("auto", "recompute", "checkpoint:5"):
            b = np.load(os.path.join(outs[other][0], g["file"]))
            if not np.array_equal(a, b) or not np.any(a):
                raise Failure(f"grad of {g['name']} differs under {other} or is zero")


def expect_fail(args, status, needles):
    r = run_cli(args)
    if r.returncode != status:
        raise Failure(f"exit {r.returncode}, want {status}: {r.stderr.strip()}")
    line = r.stderr.strip()
    if "\n" in line or not all(n in line for n in needles):
        raise Failure(f"message {line!r} lacks {needles}")


def test_head_grad_without_backward(tmp):
    model = os.path.join(tmp, "mlp-symbol.json")
    mlp_json(model)
    expect_fail(["--run", model, "--random-inputs", "--input-shape", "data=(2,8)",
                 "--head-grad", "prob_output=x.npy"], 2, ["--head-grad", "--backward"])


def test_head_grad_unknown_output(tmp):
    model = os.path.join(tmp, "mlp-symbol.json")
    mlp_json(model)
    expect_fail(["--run", model, "--random-inputs", "--input-shape", "data=(2,8)", "--backward",
                 "--head-grad", "nope=x.npy"], 2, ["--head-grad nope", "prob_output"])


def test_symbolic_gradient_shapes(tmp):
    """--shapes --backward: the gradients' shapes are symbolic like the model's."""
    model = os.path.join(tmp, "mlp-symbol.json")
    mlp_json(model)
    r = run_cli(["--shapes", model, "--input-shape", "data=(s0,8)", "--backward"])
    if r.returncode != 0:
        raise Failure(f"exit {r.returncode}: {r.stderr.strip()}")
    rows = {line.split()[0]: line for line in r.stdout.splitlines() if line.strip()}
    want = {"fc1_backward_dot": "(s0, 8)", "fc1_backward_dot_2": "(16, 8)",
            "fc2_backward_dot": "(s0, 16)"}
    for name, shape in want.items():
        if name not in rows or shape not in rows[name]:
            raise Failure(f"{name}: want {shape}, got {rows.get(name)}")


def test_checkpoint_not_multiple(tmp):
    model = os.path.join(SRC, "data", "control", "lstm-foreach-symbol.json")
    expect_fail(["--run", model, "--input-shape", "data=(7,4,16)", "--random-inputs",
                 "--backward", "--recompute", "checkpoint:3"], 2,
                ["lstm_foreach0", "multiple of 3"])


def test_recompute_unknown(tmp):
    model = os.path.join(SRC, "data", "control", "lstm-foreach-symbol.json")
    expect_fail(["--run", model, "--input-shape", "data=(5,4,16)", "--random-inputs",
                 "--backward", "--recompute", "sometimes"], 2, ["--recompute sometimes", "checkpoint:K"])


def test_recompute_without_backward(tmp):
    model = os.path.join(SRC, "data", "control", "lstm-foreach-symbol.json")
    expect_fail(["--run", model, "--input-shape", "data=(5,4,16)", "--random-inputs",
                 "--recompute", "save"], 2, ["--recompute", "--backward"])


def test_op_without_gradient(tmp):
    model = os.path.join(tmp, "det-symbol.json")
    with open(model, "w") as f:
        json.dump({"nodes": [{"op": "null", "name": "x", "inputs": []},
                             {"op": "_linalg_det", "name": "volume", "inputs": [[0, 0, 0]]}],
                   "arg_nodes": [0], "heads": [[1, 0, 0]]}, f)
    expect_fail(["--run", model, "--input-shape", "x=(2,3,3)", "--random-inputs",
                 "--backward"], 2, ["no gradient", "'volume' (_linalg_det)"])


def test_while_loop_against_numpy(tmp):
    """The greedy decoder's _while_loop stops on its data after 6 of at most 10 iterations;
    its gradients under every policy match finite differences of the same decoder in NumPy
    (float64, on the float32 inputs), the tokens and the counter contributing none."""
    sys.path.insert(0, os.path.join(SRC, "tools"))
    import control_flow_cases as cases
    inputs = {k: v.astype(np.float32) for k, v in cases.decoder_inputs(27).items()}
    args = []
    for name, value in inputs.items():
        path = os.path.join(tmp, name + ".npy")
        np.save(path, value)
        args += ["--input", f"{name}={path}"]

    def loss(values):  # the head gradients are ones: sum of every float output
        tokens, scores, i, h = cases.decoder_numpy(values)
        return scores.sum() + h.sum()

    ref = {k: v.astype(np.float64) for k, v in inputs.items()}
    if len(cases.decoder_numpy(ref)[1]) != 6:
        raise Failure("the decoder no longer stops after 6 tokens on these inputs")
    model = os.path.join(SRC, "data", "control", "greedy-decoder-symbol.json")
    grads = {}
    for policy in ("save", "recompute", "checkpoint:4"):
        out = os.path.join(tmp, policy.replace(":", ""))
        r = run_cli(["--run", model] + args + ["--backward", "--recompute", policy,
                                               "--save-outputs", out])
        if r.returncode != 0:
            raise Failure(f"{policy}: exit {r.returncode}: {r.stderr.strip()}")
        grads[policy] = {name: np.load(os.path.join(out, f"grad_{name}.npy")) for name in inputs}
    eps = 1e-5
    for name, value in ref.items():
        fd = np.zeros_like(value)
        for k in range(value.size):
            up, down = dict(ref), dict(ref)
            up[name] = value.copy()
            down[name] = value.copy()
            up[name].flat[k] += eps
            down[name].flat[k] -= eps
            fd.flat[k] = (loss(up) - loss(down)) / (2 * eps)
        for policy, got in grads.items():
            err = np.abs(got[name] - fd).max() / max(1.0, np.abs(fd).max())
            if err > 1e-4:
                raise Failure(f"{policy}: grad of {name} is off by {err:.2e} (relative)")
        if not np.any(fd):
            raise Failure(f"no gradient reaches {name}")


TESTS = [
    ("--backward on an MLP in float64 equals NumPy's backpropagation", test_mlp_float64),
    ("--backward on the transformer sample agrees with differences along random directions",
     test_transformer_directional),
    ("--backward on resnet18 agrees with differences along random directions",
     test_resnet18_directional),
    ("--backward through _contrib_boolean_mask agrees with differences along random directions",
     test_boolean_mask_directional),
    ("--head-grad without --backward exits 2", test_head_grad_without_backward),
    ("--head-grad naming no output exits 2, listing the outputs", test_head_grad_unknown_output),
    ("--backward through an op without a gradient names the node", test_op_without_gradient),
    ("--backward through the greedy decoder's _while_loop matches NumPy under every policy",
     test_while_loop_against_numpy),
    ("--what-if-recompute on the LSTM _foreach: same gradients, less kept by each policy",
     test_what_if_recompute),
    ("--recompute auto on the transformer: same gradients, a lower peak",
     test_recompute_auto_transformer),
    ("--report with --backward splits time and memory between the passes",
     test_report_splits_passes),
    ("--recompute save, auto, recompute and checkpoint:5 write identical gradients",
     test_policies_agree_on_files),
    ("--recompute checkpoint:K with rows not a multiple of K exits 2 naming the loop",
     test_checkpoint_not_multiple),
    ("--shapes --backward gives the gradients symbolic shapes", test_symbolic_gradient_shapes),
    ("--recompute with an unknown policy exits 2", test_recompute_unknown),
    ("--recompute without --backward exits 2", test_recompute_without_backward),
]

if __name__ == "__main__":
    sys.exit(tap.run(TESTS))
