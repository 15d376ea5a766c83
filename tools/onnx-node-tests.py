#!/usr/bin/python3
"""Writes ONNX's own backend node-test cases, for tests/test-onnx-conformance.c.

    onnx-node-tests.py OUTDIR [--force]

Generates every node test case the installed `onnx` package defines (onnx.backend.test.case.node:
one model per case, built from the `expect()` calls in each operator's test module), and its
"simple" model tests (onnx.backend.test.case.model, listed under the op "(simple models)"), the
way `python -m onnx.backend.test.cmd_tools generate-data` lays them out:

    OUTDIR/<case>/model.onnx
    OUTDIR/<case>/test_data_set_N/input_K.pb, output_K.pb
    OUTDIR/manifest.json

The manifest maps each case to the op it was written for: {"op", "domain", "expanded"}; a
`*_expanded` case (the op's function body inlined) names its base op with "expanded": true. It
also records the onnx version; a run finding a manifest from the same version does nothing, so
the suite is generated once per build tree (--force regenerates).

Cases are written to a temporary folder beside OUTDIR and renamed into place at the end, so an
interrupted run never leaves a half-written set that looks complete. Output is deterministic:
ONNX seeds NumPy before each test module's export function.

Exit status: 0 on success; 77 when `onnx` cannot be imported (the test skips); 1 otherwise.
"""

import json
import os
import shutil
import signal
import sys
import tempfile
import time
import warnings

EXIT_SKIP = 77
MANIFEST = "manifest.json"
FORMAT = 2  # bump when the layout or the manifest changes, to regenerate old sets


def restore_numpy_aliases():
    """onnx 1.12's test cases use aliases NumPy 1.24 removed (np.object, np.bool...)."""
    import numpy as np

    aliases = {"object": object, "bool": bool, "int": int, "float": float, "str": str,
               "complex": complex, "long": int, "unicode": str}
    for name, value in aliases.items():
        if name not in np.__dict__:
            setattr(np, name, value)


def import_onnx():
    """The onnx module and its node-test collector, or None (with a message) if unavailable."""
    try:
        restore_numpy_aliases()
        import onnx
        import onnx.backend.test.case.node as node_cases
        from onnx import numpy_helper
    except ImportError as e:
        print(f"onnx-node-tests: cannot import onnx: {e}", file=sys.stderr)
        return None
    return onnx, node_cases, numpy_helper


def simple_model_cases():
    """ONNX's "simple" model tests (onnx.backend.test.case.model: small graphs of several nodes,
    with their data, as cmd_tools writes them beside the node tests). The "real" ones are
    downloads and are left out."""
    import onnx.backend.test.case.model as model_cases
    return [c for c in model_cases.collect_testcases()
            if c.kind == "simple" and c.model is not None and c.data_sets]


def is_current(outdir, onnx_version):
    try:
        with open(os.path.join(outdir, MANIFEST), encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        return False
    return manifest.get("onnx_version") == onnx_version and manifest.get("format") == FORMAT


def serialize_value(numpy_helper, value_info, value):
    """One input or output as cmd_tools writes it: a TensorProto, or a Sequence/Map/Optional
    proto when the graph declares that type (those are not tensors; the C side refuses them)."""
    kind = value_info.type.WhichOneof("value")
    if kind == "map_type":
        return numpy_helper.from_dict(value, value_info.name)
    if kind == "sequence_type":
        return numpy_helper.from_list(value, value_info.name)
    if kind == "optional_type":
        return numpy_helper.from_optional(value, value_info.name)
    return numpy_helper.from_array(value, value_info.name)


def write_case(numpy_helper, case, case_dir):
    os.makedirs(case_dir)
    graph = case.model.graph
    with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
        f.write(case.model.SerializeToString())
    for n, (inputs, outputs) in enumerate(case.data_sets):
        set_dir = os.path.join(case_dir, f"test_data_set_{n}")
        os.makedirs(set_dir)
        for prefix, infos, values in (("input", graph.input, inputs),
                                      ("output", graph.output, outputs)):
            for k, value in enumerate(values):
                proto = serialize_value(numpy_helper, infos[k], value)
                with open(os.path.join(set_dir, f"{prefix}_{k}.pb"), "wb") as f:
                    f.write(proto.SerializeToString())


def case_ops(cases):
    """case name -> {"op", "domain", "expanded"}. A plain case's model has the one node it
    tests; an expanded case's has the function body instead, so it takes its base case's op."""
    ops = {}
    for case in cases:
        if not case.name.endswith("_expanded"):
            node = case.model.graph.node[0]
            ops[case.name] = {"op": node.op_type, "domain": node.domain, "expanded": False}
    for case in cases:
        if case.name.endswith("_expanded"):
            base = ops[case.name[: -len("_expanded")]]
            ops[case.name] = dict(base, expanded=True)
    return ops


def generate(outdir, force):
    started = time.monotonic()
    modules = import_onnx()
    if modules is None:
        return EXIT_SKIP
    onnx, node_cases, numpy_helper = modules
    if not force and is_current(outdir, onnx.__version__):
        print(f"onnx-node-tests: {outdir} is up to date (onnx {onnx.__version__})")
        return 0

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecation noise from onnx's own test modules
        cases = node_cases.collect_testcases(None)
    # onnx 1.12 defines two names twice with different data; cmd_tools overwrites the first
    # with the second, and so does this dict (insertion keeps the first position).
    by_name = {}
    for case in cases:
        by_name[case.name] = case
    ops = case_ops(by_name.values())
    # The simple models are counted under one name of their own: they test graphs, not an op.
    for case in simple_model_cases():
        by_name[case.name] = case
        ops[case.name] = {"op": "(simple models)", "domain": "", "expanded": False}

    parent = os.path.dirname(os.path.abspath(outdir))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".onnx-node-tests.", dir=parent)
    # A test runner's timeout sends SIGTERM: exit through `finally`, which removes `tmp`.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        for name in sorted(by_name):
            write_case(numpy_helper, by_name[name], os.path.join(tmp, name))
        manifest = {"onnx_version": onnx.__version__, "format": FORMAT,
                    "cases": {name: ops[name] for name in sorted(ops)}}
        with open(os.path.join(tmp, MANIFEST), "w", encoding="utf-8") as f:
            json.dump(manifest, f, indent=1, sort_keys=True)
            f.write("\n")
        replace_dir(tmp, outdir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"onnx-node-tests: wrote {len(by_name)} cases to {outdir} "
          f"(onnx {onnx.__version__}, {time.monotonic() - started:.1f} s)")
    return 0


def replace_dir(new, outdir):
    """Puts `new` at `outdir`; an older set there is moved aside first and then deleted."""
    old = None
    if os.path.lexists(outdir):
        old = tempfile.mkdtemp(prefix=".onnx-node-tests.old.", dir=os.path.dirname(new))
        os.rename(outdir, os.path.join(old, "set"))
    os.rename(new, outdir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def main(argv):
    args = [a for a in argv[1:] if a != "--force"]
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: onnx-node-tests.py OUTDIR [--force]", file=sys.stderr)
        return 2
    return generate(args[0], "--force" in argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
