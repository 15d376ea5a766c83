#!/usr/bin/env python3
"""`dynscope --render` end to end.

Prints TAP. Every model of ../shared/models/mxnet and every sample under data/
renders to SVG with its --input-shape, without it (from partial shapes) and with
the static-dynamic partition, each time an SVG that parses, with one node group
per drawn node (and the legend), one cluster group per cluster, and no node
without text; a comment line per model gives the counts and the times; PNG and dot outputs;
a time overlay from a profile the same binary wrote; --collapse all; the same
model twice gives the same bytes; --backward draws the gradient nodes in their own
colour; a write into a missing folder leaves nothing.

Environment: DS_SOURCE_DIR, DS_BUILD_DIR, DS_SHARED_DIR (set by meson).
"""

import glob
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("DS_SOURCE_DIR") or os.path.dirname(HERE)
BUILD = os.environ.get("DS_BUILD_DIR") or os.path.join(SRC, "build")
SHARED = os.environ.get("DS_SHARED_DIR") or os.path.join(SRC, "..", "shared")
EXE = os.path.join(BUILD, "app", "dynscope")

sys.path.insert(0, HERE)
import tap  # noqa: E402
from tap import Failure  # noqa: E402
SVG = "{http://www.w3.org/2000/svg}"


def dynscope(args, expect=0):
    proc = subprocess.run([EXE] + args, capture_output=True, text=True, timeout=600)
    if proc.returncode != expect:
        raise Failure("exit %d, expected %d: %s" % (proc.returncode, expect,
                                                    (proc.stderr or proc.stdout).strip()[:300]))
    return proc


def check_svg(path, out):
    m = re.search(r": (\d+) nodes, (\d+) edges, (\d+) clusters", out)
    if not m:
        raise Failure("no summary line: %s" % out)
    nodes, edges, clusters = (int(g) for g in m.groups())
    root = ET.parse(path).getroot()
    groups = {}
    for g in root.iter(SVG + "g"):
        groups.setdefault(g.get("class"), []).append(g)
    drawn = [g for g in groups.get("node", [])]
    legend = 1 if any(g.find(SVG + "title").text == "legend" for g in drawn) else 0
    if len(drawn) != nodes + legend:
        raise Failure("%d node groups for %d nodes" % (len(drawn), nodes))
    if len(groups.get("edge", [])) != edges:
        raise Failure("%d edge groups for %d edges" % (len(groups.get("edge", [])), edges))
    if len(groups.get("cluster", [])) != clusters:
        raise Failure("%d cluster groups for %d clusters" % (len(groups.get("cluster", [])),
                                                            clusters))
    for g in drawn:
        if not "".join(t.text or "" for t in g.iter(SVG + "text")).strip():
            raise Failure("node %s has no text" % g.find(SVG + "title").text)
    return nodes, edges, clusters


# The --input-shape each model is given by tests/test_models.py (the detection graphs at the
# small sizes it runs them at) and the samples' own sizes; without them every model must still
# render, from what partial inference reaches.
SHAPES = {
    "djl_mlp-symbol.json": {"data": "(2,784)"},
    "gluoncv_resnet18_v1-symbol.json": {"data": "(1,3,224,224)"},
    "gluoncv_squeezenet1.0-symbol.json": {"data": "(1,3,224,224)"},
    "mxnet_test_dnnl_model1.json": {"data": "(1,3,84,84)"},
    "mxnet_legacy_save_000800.json": {"data": "(4,100)"},
    "gluonnlp_static_bert_qa-symbol.json": {"data0": "(1,384)", "data1": "(1,384)",
                                            "data2": "(1,)"},
    "mms_lstm_ptb-symbol.json": {"data": "(35,2)", "softmax_label": "(35,2)"},
    "gluoncv_ssd_512_resnet50_v1-symbol.json": {"data": "(1,3,128,128)"},
    "gluoncv_mask_rcnn_resnet18_v1b_coco-symbol.json": {"data": "(1,3,160,160)"},
    "transformer-symbol.json": {"data0": "(2,16)", "data1": "(2,16)", "data2": "(2,)"},
    "lstm-foreach-symbol.json": {"data": "(6,4,16)"},
    "cond-in-loop-symbol.json": {"data": "(5,3)"},
    "greedy-decoder-symbol.json": {"h0": "(1,8)"},
    "boolean-mask-symbol.json": {"data": "(6,8)"},
    "sample-symbol.json": {"data": "(1,1,28,28)"},
}


def shape_args(model):
    shapes = SHAPES.get(os.path.basename(model))
    if shapes is None:
        raise Failure("%s: no --input-shape known; add it to SHAPES" % os.path.basename(model))
    return [a for name, shape in shapes.items() for a in ("--input-shape", "%s=%s" % (name, shape))]


def edge_labels(path):
    root = ET.parse(path).getroot()
    return ["".join(t.text or "" for t in g.iter(SVG + "text"))
            for g in root.iter(SVG + "g") if g.get("class") == "edge"]


def test_every_model(tmp):
    models = sorted(glob.glob(os.path.join(SHARED, "models", "mxnet", "*.json")))
    models += sorted(glob.glob(os.path.join(SRC, "data", "*", "*-symbol.json")))
    if len(models) < 15:
        raise Failure("only %d models found" % len(models))
    slowest = (0.0, "")
    total = 0.0
    for model in models:
        name = os.path.basename(model)
        times = []
        counts = None
        # With shapes (edges labelled with sizes), without (partial shapes), and with the
        # static-dynamic partition's regions as clusters.
        for variant, extra in (("shapes", shape_args(model)), ("no shapes", []),
                               ("partition", shape_args(model) +
                                ["--partition", "static-dynamic"])):
            out = os.path.join(tmp, "m.svg")
            start = time.monotonic()
            proc = dynscope(["--render", model, "--svg", out] + extra)
            took = time.monotonic() - start
            times.append(took)
            total += took
            slowest = max(slowest, (took, "%s (%s)" % (name, variant)))
            try:
                n, e, c = check_svg(out, proc.stdout)
            except Failure as err:
                raise Failure("%s (%s): %s" % (name, variant, err))
            if variant == "shapes":
                counts = (n, e, c)
                labels = edge_labels(out)
                if not any(re.search(r"\(\d", label) for label in labels):
                    raise Failure("%s: no edge carries a shape: %s" % (name, labels[:5]))
            elif variant == "partition":
                regions = c
                if c < 1 or n < counts[0]:
                    raise Failure("%s: the partition gave %d clusters, %d nodes (from %d)"
                                  % (name, c, n, counts[0]))
        print("# %-48s %4d nodes %4d edges %2d clusters (%2d partitioned)  "
              "%.2f s / %.2f s / %.2f s" % (name, counts[0], counts[1], counts[2], regions,
                                            times[0], times[1], times[2]))
        sys.stdout.flush()
    return "%d models (with shapes / without / partitioned) in %.1f s; slowest %s in %.2f s" % (
        len(models), total, slowest[1], slowest[0])


def test_outputs(tmp):
    model = os.path.join(SRC, "data", "control", "greedy-decoder-symbol.json")
    png = os.path.join(tmp, "g.png")
    dot = os.path.join(tmp, "g.dot")
    dynscope(["--render", model, "--png", png])
    with open(png, "rb") as f:
        if f.read(8) != b"\x89PNG\r\n\x1a\n":
            raise Failure("not a PNG")
    dynscope(["--render", model, "--dot", dot])
    with open(dot) as f:
        text = f.read()
    if "pos=" not in text or "cluster" not in text:
        raise Failure("the dot output is not laid out")
    a, b = os.path.join(tmp, "a.svg"), os.path.join(tmp, "b.svg")
    dynscope(["--render", model, "--svg", a])
    dynscope(["--render", model, "--svg", b])
    with open(a, "rb") as fa, open(b, "rb") as fb:
        if fa.read() != fb.read():
            raise Failure("the same model gave two different pictures")
    return "PNG, laid-out dot, the same SVG twice"


def test_overlay_and_collapse(tmp):
    model = os.path.join(SRC, "data", "control", "lstm-foreach-symbol.json")
    report = os.path.join(tmp, "r.json")
    dynscope(["--run", model, "--input-shape", "data=(6,4,16)", "--random-inputs",
              "--report", report])
    out = os.path.join(tmp, "t.svg")
    proc = dynscope(["--render", model, "--report", report, "--overlay", "time", "--svg", out])
    check_svg(out, proc.stdout)
    with open(out) as f:
        svg = f.read()
    if "total time" not in svg or "µs" not in svg:
        raise Failure("no time legend or times in the labels")
    fills = set(re.findall(r'fill="(#f[0-9a-f]{5})"', svg))
    if len(fills) < 3:
        raise Failure("nodes are not coloured by time: %s" % sorted(fills))
    folded = os.path.join(tmp, "c.svg")
    proc2 = dynscope(["--render", model, "--collapse", "all", "--svg", folded])
    n_full = check_svg(out, proc.stdout)[0]
    n_folded, _, clusters = check_svg(folded, proc2.stdout)
    if not n_folded < n_full or clusters != 0:
        raise Failure("--collapse all: %d nodes (from %d), %d clusters" % (n_folded, n_full,
                                                                           clusters))
    return "time overlay in %d colours; --collapse all: %d -> %d nodes" % (len(fills), n_full,
                                                                         n_folded)


def test_backward(tmp):
    # The forward and backward pass as one graph: the gradient nodes in their own colour, with
    # a legend entry; the forward pass alone has neither.
    model = os.path.join(SRC, "data", "sample", "sample-symbol.json")
    svgs = {}
    for extra in ([], ["--backward"]):
        out = os.path.join(tmp, "graph%d.svg" % len(extra))
        check_svg(out, dynscope(["--render", model, "--svg", out] + extra).stdout)
        with open(out) as f:
            svgs[bool(extra)] = f.read()
    if "gradient (the backward pass)" in svgs[False] or "dense0_fwd_backward_dot" in svgs[False]:
        raise Failure("the forward graph's drawing has gradient nodes")
    if "gradient (the backward pass)" not in svgs[True] or \
            "dense0_fwd_backward_dot" not in svgs[True]:
        raise Failure("the backward graph's drawing lacks its gradient nodes or their legend")
    return "%d gradient nodes filled" % svgs[True].count('fill="#fce4dc"')


def test_missing_folder(tmp):
    target = os.path.join(tmp, "missing", "g.svg")
    err = dynscope(["--render", os.path.join(SRC, "data", "sample", "sample-symbol.json"),
                    "--svg", target], expect=2).stderr
    if target not in err or os.listdir(tmp):
        raise Failure("message %r, left %s" % (err.strip(), os.listdir(tmp)))
    return "exit 2 naming the file; nothing left"


TESTS = [
    ("every model renders to a well-formed SVG", test_every_model),
    ("PNG, dot, and the same picture twice", test_outputs),
    ("a time overlay from a profile, and --collapse all", test_overlay_and_collapse),
    ("--backward: the gradient nodes in their own colour", test_backward),
    ("a render into a missing folder", test_missing_folder),
]


if __name__ == "__main__":
    sys.exit(tap.run(TESTS))
