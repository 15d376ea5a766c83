#!/usr/bin/env python3
"""Symbolic shapes through the command line: --shapes (text and --json), --bind, --assume,
and --run with a symbolic --input-shape whose symbols bind from .npy files.

The JSON expressions must be what they claim to be: Python's eval of every string dim, given
values for the free symbols, equals the concrete shape that --shapes --bind prints for the
same values, and equals what concrete inference (--info --input-shape) gives for the model's
inputs and outputs.

Prints TAP. Environment: DS_SOURCE_DIR, DS_BUILD_DIR, DS_SHARED_DIR (set by meson); without
them the paths are taken relative to this file.
"""

import json
import os
import random
import re
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
MODELS = os.path.join(SHARED, "models", "mxnet")
EXE = os.path.join(BUILD, "app", "dynscope")

TIMEOUT_S = 120
TRIALS = 3
SEED = int(os.environ.get("DS_TEST_SEED", "20240611"))

RESNET = os.path.join(MODELS, "gluoncv_resnet18_v1-symbol.json")
BERT = os.path.join(MODELS, "gluonnlp_static_bert_qa-symbol.json")
MLP = os.path.join(MODELS, "djl_mlp-symbol.json")

# Each model: its data inputs declared with symbols, and the sizes worth trying per symbol.
CASES = {
    "resnet18": {
        "model": RESNET,
        "inputs": {"data": "(s0,3,s1,s2)"},
        "ranges": {"s0": (1, 8), "s1": (32, 300), "s2": (32, 300)},
    },
    "bert": {
        "model": BERT,
        "inputs": {"data0": "(s0,s1)", "data1": "(s0,s1)", "data2": "(s0,)"},
        "ranges": {"s0": (1, 8), "s1": (1, 64)},
    },
}

# Two inputs with the same symbolic batch, added elementwise.
TWO_INPUT_GRAPH = {
    "nodes": [
        {"op": "null", "name": "a", "inputs": []},
        {"op": "null", "name": "b", "inputs": []},
        {"op": "elemwise_add", "name": "add0", "inputs": [[0, 0, 0], [1, 0, 0]]},
    ],
    "arg_nodes": [0, 1],
    "node_row_ptr": [0, 1, 2, 3],
    "heads": [[2, 0, 0]],
    "attrs": {"mxnet_version": ["int", 10500]},
}


def run_cli(args):
    if not os.path.exists(EXE):
        raise Failure(f"{EXE} is not built")
    proc = subprocess.run([EXE] + args, capture_output=True, text=True, timeout=TIMEOUT_S)
    if proc.returncode < 0:
        raise Failure(f"dynscope {' '.join(args)} killed by signal {-proc.returncode}")
    return proc


def run_ok(args):
    proc = run_cli(args)
    if proc.returncode != 0:
        raise Failure(f"dynscope {' '.join(args)} exited {proc.returncode}: "
                      f"{proc.stderr.strip()[:300]}")
    return proc.stdout


def run_fails(args, status, needles):
    """Runs, expects exit `status` and one stderr line containing every needle."""
    proc = run_cli(args)
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    if proc.returncode != status:
        raise Failure(f"dynscope {' '.join(args)} exited {proc.returncode}, expected {status}: "
                      f"{proc.stderr.strip()[:300]}")
    if len(lines) != 1:
        raise Failure(f"expected one line on stderr, got {len(lines)}: {proc.stderr[:300]!r}")
    for needle in needles:
        if needle not in lines[0]:
            raise Failure(f"error does not mention {needle!r}: {lines[0]}")
    return lines[0]


def shape_args(inputs):
    return [arg for name, shape in inputs.items() for arg in ("--input-shape", f"{name}={shape}")]


def bind_args(values):
    return [arg for name, v in values.items() for arg in ("--bind", f"{name}={v}")]


def shapes_json(case, values=None):
    args = ["--shapes", case["model"], "--json"] + shape_args(case["inputs"])
    return json.loads(run_ok(args + bind_args(values or {})))


def eval_dim(dim, values):
    if isinstance(dim, int):
        return dim
    return eval(dim, {"__builtins__": {}, "max": max, "min": min, **values})


def free_symbols(doc, ranges):
    """Symbols the facts leave free, each with the sizes to draw from."""
    out = {}
    for sym in doc["symbols"]:
        if sym["unbacked"]:
            continue
        lo, hi = ranges.get(sym["name"], (1, 8))
        lo = max(lo, sym["range"][0])
        if sym["range"][1] is not None:
            hi = min(hi, sym["range"][1])
        if lo > hi:
            raise Failure(f"{sym['name']}: range {sym['range']} leaves no size in [{lo}, {hi}]")
        out[sym["name"]] = (lo, hi)
    return out


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------

def check_json_against_bind(label):
    case = CASES[label]
    doc = shapes_json(case)
    n_string = 0
    for node in doc["nodes"]:
        for shape in node["outputs"]:
            if shape is None:
                raise Failure(f"node {node['name']!r}: shape left unknown")
            for dim in shape:
                if isinstance(dim, bool) or not isinstance(dim, (int, str)):
                    raise Failure(f"node {node['name']!r}: dim {dim!r} is neither int nor string")
                n_string += isinstance(dim, str)
    free = free_symbols(doc, case["ranges"])
    if not free:
        raise Failure("no free symbols")
    rng = random.Random(f"{SEED}-{label}")
    n_compared = 0
    for _ in range(TRIALS):
        values = {name: rng.randint(lo, hi) for name, (lo, hi) in free.items()}
        bound = shapes_json(case, values)
        for node, bnode in zip(doc["nodes"], bound["nodes"]):
            if node["name"] != bnode["name"] or node["outputs"] != bnode["outputs"]:
                raise Failure(f"node {node['name']!r}: --bind changed the symbolic shapes")
            for k, (shape, concrete) in enumerate(zip(node["outputs"], bnode["values"])):
                got = [eval_dim(d, values) for d in shape]
                if got != concrete:
                    raise Failure(f"node {node['name']!r} output {k} with {values}: "
                                  f"eval of {shape} gives {got}, --bind prints {concrete}")
                n_compared += 1
    print(f"# {label}: {len(doc['nodes'])} nodes, {n_string} string dims, symbols "
          f"{sorted(free)}; {n_compared} shapes compared over {TRIALS} trials")
    return doc, free


def check_json_against_info(label):
    case = CASES[label]
    doc = shapes_json(case)
    free = free_symbols(doc, case["ranges"])
    by_name = {node["name"]: node for node in doc["nodes"]}
    rng = random.Random(f"{SEED}-{label}-info")
    n_compared = 0
    for _ in range(TRIALS):
        values = {name: rng.randint(lo, hi) for name, (lo, hi) in free.items()}
        # Declared shapes evaluated as a user would type them: a symbol the facts merged into
        # a constant takes the value --shapes shows for that input.
        concrete_inputs = {}
        for name in case["inputs"]:
            shape = by_name[name]["outputs"][0]
            concrete_inputs[name] = "(" + ",".join(str(eval_dim(d, values)) for d in shape) + ")"
        info = json.loads(run_ok(["--info", case["model"], "--json"]
                                 + shape_args(concrete_inputs)))
        pairs = [(item["name"], 0, item["shape"]) for item in info["inputs"]]
        for item in info["outputs"]:
            m = re.fullmatch(r"(.*)_output(\d*)", item["name"])
            if m is None or m.group(1) not in by_name:
                raise Failure(f"output {item['name']!r} matches no node")
            pairs.append((m.group(1), int(m.group(2) or 0), item["shape"]))
        for name, k, concrete in pairs:
            shape = by_name[name]["outputs"][k]
            got = [eval_dim(d, values) for d in shape]
            if got != concrete:
                raise Failure(f"{name!r} with {values} (inputs {concrete_inputs}): eval of "
                              f"{shape} gives {got}, --info gives {concrete}")
            n_compared += 1
    print(f"# {label}: {n_compared} inputs/outputs compared with --info over {TRIALS} trials")


def test_resnet_json_bind():
    check_json_against_bind("resnet18")


def test_bert_json_bind():
    doc, free = check_json_against_bind("bert")
    # s1 is no longer free: the facts merged it into 384.
    if sorted(free) != ["s0"]:
        raise Failure(f"free symbols {sorted(free)}, expected ['s0']")
    facts = [f for f in doc["facts"] if f["fact"] == "s1 == 384"]
    if not facts or "staticbertencoder0_broadcast_add0" not in facts[0].get("reason", ""):
        raise Failure(f"no fact 's1 == 384' naming the broadcast: {doc['facts']}")


def test_resnet_json_info():
    check_json_against_info("resnet18")


def test_bert_json_info():
    check_json_against_info("bert")


def test_text_bind():
    out = run_ok(["--shapes", RESNET, "--input-shape", "data=(s0,3,s1,s2)",
                  "--bind", "s0=2", "--bind", "s1=224", "--bind", "s2=224"])
    lines = {}
    for line in out.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3:
            lines[parts[0]] = parts[2]
    expected = {
        "data": "(s0, 3, s1, s2) = (2, 3, 224, 224)",
        "resnetv10_conv0_fwd": "(s0, 64, (s1 - 1)//2 + 1, (s2 - 1)//2 + 1) = (2, 64, 112, 112)",
        "resnetv10_pool1_fwd": "(s0, 512, 1, 1) = (2, 512, 1, 1)",
        "resnetv10_dense0_fwd": "(s0, 1000) = (2, 1000)",
        # A shape without symbols is printed once.
        "resnetv10_conv0_weight": "(64, 3, 7, 7)",
    }
    for name, want in expected.items():
        if lines.get(name) != want:
            raise Failure(f"line for {name!r} reads {lines.get(name)!r}, expected {want!r}")
    # Without bindings, only the symbolic form.
    out = run_ok(["--shapes", RESNET, "--input-shape", "data=(s0,3,s1,s2)"])
    if not re.search(r"^resnetv10_dense0_fwd\s+FullyConnected\s+\(s0, 1000\)$", out, re.M):
        raise Failure("unbound output line is not '(s0, 1000)' alone")


def test_run_binds_from_files(tmp):
    for batch in (3, 5):
        x = os.path.join(tmp, f"x{batch}.npy")
        np.save(x, np.random.default_rng(batch).random((batch, 784), dtype=np.float32))
        outdir = os.path.join(tmp, f"out{batch}")
        run_ok(["--run", MLP, "--input-shape", "data=(s0,784)", "--input", f"data={x}",
                "--random-inputs", "--save-outputs", outdir])
        with open(os.path.join(outdir, "outputs.json"), encoding="utf-8") as f:
            outputs = json.load(f)["outputs"]
        if [o["shape"] for o in outputs] != [[batch, 10]]:
            raise Failure(f"batch {batch}: outputs {outputs}")
        saved = np.load(os.path.join(outdir, outputs[0]["file"]))
        if saved.shape != (batch, 10):
            raise Failure(f"batch {batch}: saved output has shape {saved.shape}")
    print("# mlp: data=(s0,784) ran with s0 = 3 and 5 from the files")

    graph = write_two_input_graph(tmp)
    a, b = npy(tmp, "a", (2, 4), 1.0), npy(tmp, "b", (2, 4), 2.0)
    outdir = os.path.join(tmp, "out-add")
    run_ok(["--run", graph, "--input-shape", "a=(s0,4)", "--input-shape", "b=(s0,4)",
            "--input", f"a={a}", "--input", f"b={b}", "--save-outputs", outdir])
    result = np.load(os.path.join(outdir, "add0_output.npy"))
    if result.shape != (2, 4) or not np.all(result == 3.0):
        raise Failure(f"a + b gave shape {result.shape}, values {result.ravel()[:4]}")


def write_two_input_graph(tmp):
    path = os.path.join(tmp, "two-inputs.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(TWO_INPUT_GRAPH, f)
    return path


def npy(tmp, name, shape, value):
    path = os.path.join(tmp, f"{name}-{'x'.join(map(str, shape))}.npy")
    np.save(path, np.full(shape, value, dtype=np.float32))
    return path


def test_run_inputs_disagree(tmp):
    graph = write_two_input_graph(tmp)
    a, b = npy(tmp, "a", (2, 4), 1.0), npy(tmp, "b", (3, 4), 1.0)
    line = run_fails(["--run", graph, "--input-shape", "a=(s0,4)", "--input-shape", "b=(s0,4)",
                      "--input", f"a={a}", "--input", f"b={b}"],
                     2, ["s0", "input 'a'", "input 'b'", "2", "3"])
    print(f"# {line}")
    # A compound dim is checked once its symbol is bound.
    b8 = npy(tmp, "b", (3, 4), 1.0)
    line = run_fails(["--run", graph, "--input-shape", "a=(s0,4)",
                      "--input-shape", "b=(2*s0,4)", "--input", f"a={a}", "--input", f"b={b8}"],
                     2, ["input 'b'", "2*s0", "3", "4"])
    print(f"# {line}")


def test_run_assume_violated(tmp):
    graph = write_two_input_graph(tmp)
    a, b = npy(tmp, "a", (3, 4), 1.0), npy(tmp, "b", (3, 4), 1.0)
    args = ["--run", graph, "--input-shape", "a=(s0,4)", "--input-shape", "b=(s0,4)",
            "--input", f"a={a}", "--input", f"b={b}"]
    line = run_fails(args + ["--assume", "s0<=2"], 2, ["s0", "3"])
    print(f"# {line}")
    run_ok(args + ["--assume", "s0<=3"])


def test_assume_malformed():
    base = ["--shapes", MLP, "--input-shape", "data=(s0,784)"]
    for text in ("s0>==", "foo", ">= 3", "s0 in [4, 2]", "s0 in [1,"):
        line = run_fails(base + ["--assume", text], 2, [text])
        print(f"# {line}")
    run_ok(base + ["--assume", "s0 in [1, 64]"])


def test_bind_malformed():
    base = ["--shapes", MLP, "--input-shape", "data=(s0,784)"]
    for value in ("-1", "2.5", "abc", "1e3", "0x10"):
        line = run_fails(base + ["--bind", f"s0={value}"], 2, ["s0"])
        print(f"# {line}")
    # 0 is an empty batch: it lowers the default range [1, inf) unless a fact set that bound.
    out = run_ok(base + ["--bind", "s0=0"])
    if "(s0, 10) = (0, 10)" not in out:
        raise Failure("--bind s0=0: " + out)
    run_fails(base + ["--assume", "s0 >= 1", "--bind", "s0=0"], 2, ["s0 = 0 is outside"])
    run_ok(base + ["--bind", "s0=16"])

def test_partition_dynamic(tmp):
    """--partition on the boolean-mask sample: four regions around the two dynamic ops, with
    the mask's output an unbacked symbol; --save writes _CachedOp nodes that load, partition
    as saved, and run on the dynamic executor."""
    model = os.path.join(SRC, "data", "dynamic", "boolean-mask-symbol.json")
    saved = os.path.join(tmp, "partitioned-symbol.json")
    out = run_ok(["--partition", model, "--input-shape", "data=(s0,8)", "--save", saved])
    for needle in ("regions: 4 (2 static, 2 dynamic) holding 9 of 9 op nodes",
                   "dynamic1  dynamic, 1 node: boolean_mask0 (_contrib_boolean_mask)",
                   "boolean_mask0_output         (u0, 16) float32",
                   "in   data                         (s0, 8) float32"):
        if needle not in out:
            raise Failure(f"--partition output lacks {needle!r}:\n{out}")
    with open(saved) as f:
        doc = json.load(f)
    ops = [n["op"] for n in doc["nodes"]]
    if ops.count("_CachedOp") != 4 or any("subgraphs" not in n for n in doc["nodes"]
                                            if n["op"] == "_CachedOp"):
        raise Failure(f"saved graph has ops {ops}")
    again = run_ok(["--partition", saved, "--input-shape", "data=(s0,8)"])
    if "as saved in the file" not in again or "regions: 4 (2 static, 2 dynamic)" not in again:
        raise Failure(f"the saved file does not partition as saved:\n{again}")
    ran = run_ok(["--run", saved, "--input-shape", "data=(16,8)", "--random-inputs"])
    if "executor: dynamic, 4 regions" not in ran:
        raise Failure(f"--run of the saved file: {ran[-300:]}")
    # The file leaves the batch free ((0, 8)): it becomes s0, and the mask's count is bounded
    # by it even so.
    facts = run_ok(["--shapes", model])
    if "u0 in [0, s0]" not in facts:
        raise Failure(f"--shapes does not bound u0 by the free batch:\n{facts}")


TESTS = [
    ("--shapes --json resnet18: eval of every dim equals --bind values", test_resnet_json_bind),
    ("--shapes --json bert: eval of every dim equals --bind values", test_bert_json_bind),
    ("--shapes --json resnet18 agrees with --info --input-shape", test_resnet_json_info),
    ("--shapes --json bert agrees with --info --input-shape", test_bert_json_info),
    ("--shapes text with --bind prints 'symbolic = concrete'", test_text_bind),
    ("--run binds symbols from .npy inputs", test_run_binds_from_files),
    ("--run: inputs disagreeing about a symbol exit 2", test_run_inputs_disagree),
    ("--run: an --assume the files violate exits 2", test_run_assume_violated),
    ("--assume malformed exits 2 naming it", test_assume_malformed),
    ("--bind of a negative or non-integer value exits 2", test_bind_malformed),
    ("--partition: regions, symbolic shapes, --save and a run of the saved file",
     test_partition_dynamic),
]


def main():
    print(f"# seed {SEED}")
    return tap.run(TESTS)


if __name__ == "__main__":
    sys.exit(main())
