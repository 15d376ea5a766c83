#!/usr/bin/env python3
"""The real-model corpus: dynscope against ONNX Runtime on published ONNX models.

    /usr/bin/python3 tools/realmodels.py [BUILD] [--only ID,ID...]      (default BUILD: build)

For each model of tools/real-models.json (fetched into the cache by tools/fetch_real_models.py:
$DS_MODEL_CACHE or ~/.cache/dynscope-models) runs BUILD/app/dynscope --info, --shapes and, for
each of the model's cases (two input sizes where the model allows), --run with seeded inputs
written as .npy files (--input NAME=FILE, --save-outputs), and the same inputs through ONNX
Runtime (onnxruntime-node, installed into BUILD/ort-peer with npm on first use; run by
bench/ort_peer.mjs with graphOptimizationLevel 'basic'). Every output is compared: same name,
shape and dtype; integers and booleans exactly, floats with |dynscope - ORT| <= 1e-4 + 1e-3 *
|ORT| and NaN where ORT has NaN. No model of the corpus has an output whose order may
legitimately differ (NMS, top-k ties), so every output is compared element by element.

Prints one row a model: id, package@version, status (pass, fail or ort-fails), the largest
absolute error and the first error line; then how many models' output shapes are symbolic
expressions of the input sizes in --shapes (no data-dependent u... symbol).

tests/realmodels-known.txt lists the models known not to pass, one a line with the reason. Exit
status 1 on a regression: a model not listed that does not pass, or a listed one that passes
now (remove it from the list). Inputs, outputs and logs stay in BUILD/realmodels/; the table's
data also goes to BUILD/realmodels/results.json.

DS_REALMODELS_THREADS (default: the cores, at most 4) threads for both sides;
DS_REALMODELS_TIMEOUT (default 120) seconds for each dynscope run (--timeout) and ORT run.
Bad input (no dynscope, no node, a model missing from the cache) prints one line and exits 1.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
import zlib

import numpy as np

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "tools"))
import fetch_real_models as corpus  # noqa: E402

ORT_SCRIPT = os.path.join(SRC, "bench", "ort_peer.mjs")
KNOWN = os.path.join(SRC, "tests", "realmodels-known.txt")
RTOL, ATOL = 1e-3, 1e-4
NUMBER = re.compile(r"[-+]?\d+(\.\d+)?(e[-+]?\d+)?")
NPM_TIMEOUT = 900


class Refused(Exception):
    """Bad input: one line, exit 1."""


LONG_TUPLE = re.compile(r"\((\d+), (\d+), (\d+)(?:, \d+){4,}, (\d+)\)")


def first_line(text, limit=300):
    """The first line of a message, a long run of integers shortened to its ends."""
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    line = lines[0] if lines else "(no message)"
    line = LONG_TUPLE.sub(lambda m: "(%s, %s, %s, ..., %s)" % m.groups(), line)
    return line if len(line) <= limit else line[:limit - 3] + "..."


def ort_error_line(text):
    """ORT's own error: bench/ort_peer.mjs's one line, not the log lines before it."""
    lines = [l for l in (text or "").splitlines() if l.startswith("ort_peer:")]
    return first_line(lines[-1] if lines else text)


def ensure_ort(build):
    ort_dir = os.path.join(build, "ort-peer")
    if os.path.exists(os.path.join(ort_dir, "node_modules", "onnxruntime-node", "package.json")):
        return ort_dir
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise Refused("no %s on PATH (ONNX Runtime runs through onnxruntime-node)" % tool)
    print("installing onnxruntime-node into %s (once)" % ort_dir, flush=True)
    env = dict(os.environ, ONNXRUNTIME_NODE_INSTALL="skip", ONNXRUNTIME_NODE_INSTALL_CUDA="skip")
    try:
        proc = subprocess.run(["npm", "install", "--prefix", ort_dir, "onnxruntime-node",
                               "--no-audit", "--no-fund", "--fetch-retries=1"],
                              capture_output=True, text=True, env=env, timeout=NPM_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise Refused("npm install onnxruntime-node timed out")
    if proc.returncode != 0:
        raise Refused("npm install onnxruntime-node failed: %s" % first_line(proc.stderr))
    return ort_dir


def read_known(path=KNOWN):
    known = {}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    parts = line.split(None, 1)
                    known[parts[0]] = parts[1] if len(parts) > 1 else ""
    except OSError as e:
        raise Refused("%s: %s" % (path, e.strerror))
    return known


# ----------------------------------------------------------------------------- inputs

def write_inputs(model, case_index, case, folder):
    """Seeded inputs for one case; returns {name: file}."""
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(zlib.crc32(model["id"].encode()) + case_index)
    files = {}
    for name, how in model["inputs"].items():
        dtype = np.dtype(how["dtype"])
        value = case[name]
        if "low" not in how:  # a scalar whose value the case gives
            array = np.array(value, dtype=dtype)
        elif dtype.kind == "f":
            array = rng.uniform(how["low"], how["high"], size=value).astype(dtype)
        else:
            array = rng.integers(how["low"], how["high"], size=value).astype(dtype)
        path = os.path.join(folder, re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".npy")
        np.save(path, array)
        files[name] = path
    return files


def case_label(model, case):
    parts = []
    for name in model["inputs"]:
        v = case[name]
        parts.append("%s=%s" % (name, v if not isinstance(v, list)
                                else "(" + ",".join(str(d) for d in v) + ")"))
    return " ".join(parts)


# ----------------------------------------------------------------------------- the two sides

def run(args, timeout):
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % timeout
    return proc, None


def run_dynscope(dynscope, path, inputs, out, threads, timeout):
    shutil.rmtree(out, ignore_errors=True)
    args = [dynscope, "--run", path, "--save-outputs", out, "--threads", str(threads),
            "--timeout", str(timeout)]
    for name, f in inputs.items():
        args += ["--input", "%s=%s" % (name, f)]
    proc, error = run(args, timeout + 30)
    if error:
        return "timeout: " + error
    if proc.returncode != 0:
        return first_line(proc.stderr or proc.stdout)
    return None


def run_ort(ort_dir, path, inputs, out, threads, timeout):
    shutil.rmtree(out, ignore_errors=True)
    spec = {"ort_dir": ort_dir, "model": path, "inputs": inputs, "threads": threads,
            "warmup": 0, "runs": 1, "save_dir": out, "optimization": "basic"}
    proc, error = run(["node", ORT_SCRIPT, json.dumps(spec)], timeout + 30)
    if error:
        return error
    if proc.returncode != 0:
        return ort_error_line(proc.stderr)
    return None


def load_outputs(folder):
    with open(os.path.join(folder, "outputs.json"), encoding="utf-8") as f:
        listing = json.load(f)["outputs"]
    return [(o["name"], np.load(os.path.join(folder, o["file"]))) for o in listing]


def compare(ds_dir, ort_dir):
    """(max abs error, first error or None) over every output."""
    ours, theirs = load_outputs(ds_dir), load_outputs(ort_dir)
    if [n for n, _ in ours] != [n for n, _ in theirs]:
        return None, "outputs %s, ORT's %s" % ([n for n, _ in ours], [n for n, _ in theirs])
    worst = 0.0
    for (name, a), (_, b) in zip(ours, theirs):
        if a.shape != b.shape:
            return worst, "output '%s': shape %s, ORT's %s" % (name, a.shape, b.shape)
        if a.dtype != b.dtype:
            return worst, "output '%s': dtype %s, ORT's %s" % (name, a.dtype, b.dtype)
        if a.dtype.kind not in "fc":
            bad = a != b
            if bad.any():
                at = tuple(int(i) for i in np.argwhere(bad)[0])
                return worst, "output '%s': %d of %d values differ, first at %s: %s vs ORT %s" % (
                    name, int(bad.sum()), a.size, at, a[at], b[at])
            continue
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        nan_a, nan_b = np.isnan(a64), np.isnan(b64)
        diff = np.abs(a64 - b64)
        diff[nan_a & nan_b] = 0.0
        diff[nan_a ^ nan_b] = np.inf
        both_inf = np.isinf(a64) & np.isinf(b64) & (a64 == b64)
        diff[both_inf] = 0.0
        if diff.size:
            worst = max(worst, float(diff.max()))
        bad = diff > ATOL + RTOL * np.abs(np.nan_to_num(b64, posinf=0.0, neginf=0.0))
        if bad.any():
            at = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.where(bad, diff, -1))),
                                                        diff.shape))
            return worst, ("output '%s': %d of %d values differ, max abs error %.3g at %s: "
                           "%.6g vs ORT %.6g" % (name, int(bad.sum()), a.size, diff[at], at,
                                                 a64[at], b64[at]))
    return worst, None


# ----------------------------------------------------------------------------- --shapes

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def output_shapes(model_path, shapes):
    """The graph outputs' dims from --shapes --json, found through their producing nodes; None
    where the onnx package cannot tell which node that is."""
    try:
        import onnx
        graph = onnx.load(model_path, load_external_data=False).graph
    except Exception:  # noqa: BLE001 - no onnx, or a file it cannot read
        return None
    by_name = {}
    for n in shapes.get("nodes", []):
        by_name[n["name"]] = n["outputs"]
    inputs = {v.name for v in graph.input}
    result = []
    for out in graph.output:
        producer = next((n for n in graph.node if out.name in n.output), None)
        if producer is None:
            dims = by_name.get(out.name, [None])[0] if out.name in inputs else None
        else:
            index = list(producer.output).index(out.name)
            outs = by_name.get(producer.name)
            if outs is None:  # lowered to several nodes: the last one named after it
                tails = [n for n in shapes.get("nodes", [])
                         if n["name"].startswith(producer.name + "/")]
                outs = tails[-1]["outputs"] if tails and producer.name else None
            dims = outs[index] if outs is not None and index < len(outs) else None
        if dims is None:
            return None
        result.append(dims)
    return result


def shape_kind(model_path, shapes):
    """static, symbolic (expressions of the input sizes), data-dependent or unknown."""
    dims = output_shapes(model_path, shapes)
    if dims is None:
        return "unknown", None
    unbacked = {s["name"] for s in shapes.get("symbols", []) if s.get("unbacked")}
    exprs = [d for shape in dims for d in shape if not isinstance(d, int)]
    if not exprs:
        return "static", dims
    names = {t for e in exprs for t in IDENT.findall(str(e))} - {"max", "min"}
    return ("data-dependent" if names & unbacked else "symbolic"), dims


# ----------------------------------------------------------------------------- one model

def check_model(model, dynscope, ort_dir, work, threads, timeout):
    path = corpus.model_path(model)
    row = {"id": model["id"], "package": corpus.spec(model), "task": model["task"],
           "size": model["size"], "status": "pass", "max_error": None, "error": None,
           "shape_kind": "unknown", "output_shapes": None, "cases": []}
    t0 = time.monotonic()

    def fail(status, text):
        if row["status"] == "pass":
            row["status"], row["error"] = status, text.replace(path, os.path.basename(path))

    proc, error = run([dynscope, "--info", path, "--json"], timeout)
    if error or proc.returncode != 0:
        fail("fail", "--info: " + (error or first_line(proc.stderr)))
    proc, error = run([dynscope, "--shapes", path, "--json"], timeout)
    if error or proc.returncode != 0:
        fail("fail", "--shapes: " + (error or first_line(proc.stderr)))
    else:
        try:
            row["shape_kind"], row["output_shapes"] = shape_kind(path, json.loads(proc.stdout))
        except ValueError:
            fail("fail", "--shapes --json printed no JSON")
    for i, case in enumerate(model["cases"]):
        folder = os.path.join(work, model["id"], "case%d" % (i + 1))
        inputs = write_inputs(model, i, case, os.path.join(folder, "inputs"))
        label = "case %d (%s)" % (i + 1, case_label(model, case))
        ort_error = run_ort(ort_dir, path, inputs, os.path.join(folder, "ort"), threads, timeout)
        ds_error = run_dynscope(dynscope, path, inputs, os.path.join(folder, "dynscope"),
                                threads, timeout)
        entry = {"case": label, "ort_error": ort_error, "dynscope_error": ds_error,
                 "max_error": None, "mismatch": None}
        row["cases"].append(entry)
        if ort_error:
            fail("ort-fails", "%s: ONNX Runtime: %s" % (label, ort_error))
            continue
        if ds_error:
            fail("fail", "%s: %s" % (label, ds_error))
            continue
        try:
            worst, mismatch = compare(os.path.join(folder, "dynscope"),
                                      os.path.join(folder, "ort"))
        except (OSError, ValueError, KeyError) as e:
            worst, mismatch = None, "cannot read the saved outputs: %s" % e
        entry["max_error"], entry["mismatch"] = worst, mismatch
        if worst is not None:
            row["max_error"] = max(row["max_error"] or 0.0, worst)
        if mismatch:
            fail("fail", "%s: wrong values: %s" % (label, mismatch))
    row["seconds"] = round(time.monotonic() - t0, 2)
    return row


# ----------------------------------------------------------------------------- main

def main(argv):
    args = argv[1:]
    only = None
    if "--only" in args:
        i = args.index("--only")
        if i + 1 >= len(args):
            raise Refused("--only needs a comma-separated list of model ids")
        only = set(args[i + 1].split(","))
        del args[i:i + 2]
    if len(args) > 1 or (args and args[0].startswith("-")):
        raise Refused("usage: realmodels.py [BUILD] [--only ID,ID...]")
    build = os.path.abspath(args[0] if args else os.path.join(SRC, "build"))
    dynscope = os.path.join(build, "app", "dynscope")
    if not os.access(dynscope, os.X_OK):
        raise Refused("%s is not built (ninja -C %s)" % (dynscope, build))
    models = corpus.load_manifest()
    if only is not None:
        unknown = only - {m["id"] for m in models}
        if unknown:
            raise Refused("no model %s in tools/real-models.json" % sorted(unknown)[0])
        models = [m for m in models if m["id"] in only]
    absent = corpus.missing(models)
    if absent:
        raise Refused("%d of %d real models are missing from %s or differ from their sha256 "
                      "(first: %s): run `make realmodels` or tools/fetch_real_models.py"
                      % (len(absent), len(models), corpus.cache_dir(), absent[0]["id"]))
    known = read_known()
    ort_dir = ensure_ort(build)
    try:
        threads = int(os.environ.get("DS_REALMODELS_THREADS", 0)) or min(
            4, len(os.sched_getaffinity(0)))
        timeout = int(os.environ.get("DS_REALMODELS_TIMEOUT", 120))
    except ValueError:
        raise Refused("DS_REALMODELS_THREADS and DS_REALMODELS_TIMEOUT take whole numbers")
    work = os.path.join(build, "realmodels")
    os.makedirs(work, exist_ok=True)

    print("real models: %d, dynscope against ONNX Runtime (onnxruntime-node), %d threads, "
          "rtol %g, atol %g" % (len(models), threads, RTOL, ATOL), flush=True)
    t0 = time.monotonic()
    rows = []
    header = "%-22s %-40s %-9s %9s  %s" % ("model", "package@version", "status", "max error",
                                            "first error")
    print(header)
    print("-" * len(header))
    for model in models:
        row = check_model(model, dynscope, ort_dir, work, threads, timeout)
        rows.append(row)
        err = "-" if row["max_error"] is None else "%.2g" % row["max_error"]
        print("%-22s %-40s %-9s %9s  %s" % (row["id"], row["package"], row["status"], err,
                                            row["error"] or ""), flush=True)
    elapsed = time.monotonic() - t0

    regressions = []
    changed = [r for r in rows if r["status"] != "pass" and r["id"] in known
               and NUMBER.sub("#", r["error"]) not in NUMBER.sub("#", known[r["id"]])]
    if changed:
        print("\nknown failures whose first error line (numbers aside) differs from "
              "tests/realmodels-known.txt:")
        for r in changed:
            print("  %s: %s" % (r["id"], r["error"]))
    for row in rows:
        listed = row["id"] in known
        if row["status"] != "pass" and not listed:
            regressions.append("%s: %s (not in tests/realmodels-known.txt)"
                               % (row["id"], row["error"]))
        elif row["status"] == "pass" and listed:
            regressions.append("%s: now passes, remove it from tests/realmodels-known.txt"
                               % row["id"])
    stale = sorted(set(known) - {m["id"] for m in corpus.load_manifest()})
    regressions += ["%s: listed in tests/realmodels-known.txt but not in the corpus" % s
                    for s in stale]

    kinds = {}
    for row in rows:
        kinds[row["shape_kind"]] = kinds.get(row["shape_kind"], 0) + 1
    passed = sum(1 for r in rows if r["status"] == "pass")
    print("\n%d of %d models pass (%d fail, %d ORT cannot run) in %.0f s"
          % (passed, len(rows), sum(1 for r in rows if r["status"] == "fail"),
             sum(1 for r in rows if r["status"] == "ort-fails"), elapsed))
    print("symbolic output shapes: %d models' outputs are expressions of the input sizes "
          "(%d static, %d data-dependent, %d not inferred)"
          % (kinds.get("symbolic", 0), kinds.get("static", 0), kinds.get("data-dependent", 0),
             kinds.get("unknown", 0)))
    with open(os.path.join(work, "results.json"), "w", encoding="utf-8") as f:
        json.dump({"seconds": round(elapsed, 1), "threads": threads, "models": rows}, f,
                  indent=1)
    if regressions:
        print("\nregressions against tests/realmodels-known.txt:")
        for r in regressions:
            print("  " + r)
        return 1
    print("no regressions against tests/realmodels-known.txt (%d known failures)" % len(known))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (Refused, corpus.FetchError) as e:
        print("realmodels: %s" % e, file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("realmodels: interrupted", file=sys.stderr)
        sys.exit(1)
