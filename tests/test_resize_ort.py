#!/usr/bin/env python3
"""Resize's float32 linear and cubic arithmetic against ONNX Runtime's, bit for bit.

Prints TAP. Writes models of Resize nodes (every coordinate transformation mode, upsampling
and downsampling, scales and sizes, 2-D to 5-D inputs, NCHW and NHWC, cubic with
exclude_outside and another cubic_coeff_a) with the onnx package and runs them with
`dynscope --run --input ... --save-outputs`. Always: the outputs must equal, bit for bit, a
NumPy model of ONNX Runtime's CPU kernel (float coordinates, its neighbour and weight tables,
its order of products and sums). With onnxruntime-node installed (DS_ORT_DIR, or
<build>/ort-peer as bench/onnx_peer.py installs it; this test never installs it) the same
models and a Resize -> DynamicQuantizeLinear chain also run in ONNX Runtime, and every output
must be identical; without it that part skips, saying why.

Not compared: align_corners with a scale whose product with the input dim is fractional (dynscope
keeps ONNX's output length there, which ONNX's own tests check; ONNX Runtime uses the floored
dim) and tf_crop_and_resize with scales (ONNX Runtime's output shape ignores the roi).

Environment: DS_SOURCE_DIR, DS_BUILD_DIR (set by meson), DS_ORT_DIR (optional).
"""

import json
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("DS_SOURCE_DIR") or os.path.dirname(HERE)
BUILD = os.environ.get("DS_BUILD_DIR") or os.path.join(SRC, "build")
EXE = os.path.join(BUILD, "app", "dynscope")

sys.path.insert(0, HERE)
import tap  # noqa: E402
from tap import Failure  # noqa: E402

try:
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh
except ImportError:  # pragma: no cover - the package is in tools/install-deps.sh
    onnx = None

f32 = np.float32
MODES = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_crop_and_resize"]
EXTRAPOLATION = 2.5


# --- NumPy model of ONNX Runtime's CPU Resize (float32) ---------------------------------------

def coordinates(mode, n_in, n_out, scale, roi_start, roi_end):
    """Each output position's input coordinate, in float32 as ONNX Runtime computes it."""
    x = np.arange(n_out, dtype=f32)
    if scale == 1:
        return x
    s, lin, lout = f32(scale), f32(n_in), f32(n_out)
    one, half = f32(1), f32(0.5)
    if mode == "asymmetric":
        return x / s
    if mode == "pytorch_half_pixel":
        return (x + half) / s - half if lout > 1 else np.zeros_like(x)
    if mode == "align_corners":
        return np.zeros_like(x) if lout == 1 else x * (lin - one) / (lout - one)
    if mode == "tf_crop_and_resize":
        rs, re = f32(roi_start), f32(roi_end)
        if lout > 1:
            return rs * (lin - one) + (x * (re - rs) * (lin - one)) / (lout - one)
        return np.full_like(x, f32(0.5 * float(rs + re) * float(lin - one)))
    return ((x + half) / s) - half


def cubic_coeffs(s, a):
    """Keys' coefficients of the fractions s (float32 array), in ONNX Runtime's order."""
    a, one, two = f32(a), f32(1), f32(2)
    t = np.abs(s)
    u, v, w = t + one, one - t, two - t
    c0 = ((a * u - f32(5) * a) * u + f32(8) * a) * u - f32(4) * a
    c1 = ((a + two) * t - (a + f32(3))) * t * t + one
    c2 = ((a + two) * v - (a + f32(3))) * v * v + one
    c3 = ((a * w - f32(5) * a) * w + f32(8) * a) * w - f32(4) * a
    return [c0, c1, c2, c3]


def axis_taps(kind, mode, n_in, n_out, scale, roi, excl, a):
    """(input indices per tap, weights per tap, divided weights, sums, outside) along one axis."""
    x = coordinates(mode, n_in, n_out, scale, *roi)
    last = f32(n_in - 1)
    outside = (x < 0) | (x > last) if mode == "tf_crop_and_resize" else np.zeros(n_out, bool)
    if kind == "linear":
        v = np.where(last < x, last, x)
        v = np.where(f32(0) < v, v, f32(0))
        i1 = np.minimum(v.astype(np.int64), n_in - 1)
        i2 = np.minimum(i1 + 1, n_in - 1)
        d1 = np.abs(v - i1.astype(f32))
        d2 = np.abs(v - i2.astype(f32))
        d1 = np.where(i1 == i2, f32(0.5), d1)
        d2 = np.where(i1 == i2, f32(0.5), d2)
        return [i1, i2], [d2, d1], None, None, outside
    base = np.floor(x).astype(np.int64)
    c = cubic_coeffs(x - base.astype(f32), a)
    idx = [base - 1 + k for k in range(4)]
    total = np.ones(n_out, f32)
    if excl:
        total = np.zeros(n_out, f32)
        for k in range(4):
            c[k] = np.where((idx[k] < 0) | (idx[k] >= n_in), f32(0), c[k])
            total = total + c[k]
    return ([np.clip(i, 0, n_in - 1) for i in idx], c, [ck / total for ck in c], total, outside)


def interpolated_axes(kind, shape, dims, scales):
    kept = [scales[d] == 1 and shape[d] == dims[d] for d in range(len(shape))]
    n = len(shape)
    if n == 2 or (kind == "linear" and n == 3):
        return list(range(n))
    if n == 4 and kept[0] and kept[1]:
        return [2, 3]
    if kind == "linear" and n == 4 and kept[0] and kept[3]:
        return [1, 2]
    if kind == "linear" and n == 5 and kept[0] and kept[1]:
        return [2, 3, 4]
    return [d for d in range(n) if not kept[d]]


def ort_resize(x, kind, mode, scales=None, sizes=None, roi=None, excl=False, a=-0.75):
    """What ONNX Runtime's CPU kernel computes for a float32 Resize."""
    n = x.ndim
    if sizes is not None:
        dims = list(sizes)
        scales = [f32(1) if x.shape[d] == 0 else f32(dims[d]) / f32(x.shape[d])
                  for d in range(n)]
    else:
        scales = [f32(s) for s in scales]
        dims = [int(scales[d] * f32(x.shape[d])) for d in range(n)]
    if dims == list(x.shape):
        return x.copy()
    roi = roi or [0.0] * n + [1.0] * n
    axes = interpolated_axes(kind, x.shape, dims, scales)
    taps = {d: axis_taps(kind, mode, x.shape[d], dims[d], scales[d], (roi[d], roi[n + d]),
                         excl, a) for d in axes}

    def along(d, values):  # a per-position array of axis d, shaped to broadcast
        return values.reshape([-1 if k == d else 1 for k in range(n)])

    def gather(choice):  # x at the taps `choice` (axis -> tap number) of the axes in it
        idx = [taps[d][0][choice[d]] if d in choice else np.arange(dims[d]) for d in range(n)]
        return x[np.ix_(*idx)]

    if kind == "linear":
        acc = None
        for combo in range(1 << len(axes)):
            choice = {d: (combo >> (len(axes) - 1 - j)) & 1 for j, d in enumerate(axes)}
            coef = along(axes[-1], taps[axes[-1]][1][choice[axes[-1]]])
            for d in reversed(axes[:-1]):
                coef = coef * along(d, taps[d][1][choice[d]])
            term = coef * gather(choice)
            acc = term if acc is None else acc + term
    else:
        def level(j, choice):
            d = axes[j]
            acc = np.zeros(dims, f32)
            for k in range(4):
                c = {**choice, d: k}
                if j == len(axes) - 1:
                    acc = acc + along(d, taps[d][2][k]) * gather(c)
                else:
                    acc = acc + level(j + 1, c) * along(d, taps[d][1][k]) / along(d, taps[d][3])
            return acc
        acc = level(0, {})
    outside = np.zeros(dims, bool)
    for d in axes:
        outside = outside | along(d, taps[d][4])
    return np.where(outside, f32(EXTRAPOLATION), acc).astype(f32)


# --- the cases ---------------------------------------------------------------------------------

def inputs():
    rng = np.random.default_rng(24)
    return {
        "a2": (rng.standard_normal((5, 7)) * 3).astype(f32),
        "a3": rng.standard_normal((3, 4, 5)).astype(f32),
        "a4": rng.standard_normal((2, 3, 6, 9)).astype(f32),
        "h4": rng.standard_normal((1, 11, 13, 3)).astype(f32),
        "a5": rng.standard_normal((1, 2, 3, 4, 5)).astype(f32),
        "q4": rng.standard_normal((1, 8, 32, 32)).astype(f32),  # for the quantized chain
    }


TARGETS = {  # input -> (scales or sizes, values); the cubic ones are 2-D or NCHW
    "a2": [("scales", [2.0, 1.5]), ("scales", [0.6, 0.43]), ("sizes", [11, 3]),
           ("sizes", [4, 20]), ("sizes", [1, 5])],
    "a4": [("scales", [1, 1, 2.0, 2.0]), ("scales", [1, 1, 0.5, 0.75]),
           ("sizes", [2, 3, 13, 5]), ("sizes", [2, 3, 7, 31])],
    "h4": [("scales", [1, 1.5, 0.8, 1]), ("sizes", [1, 30, 5, 3])],
    "a3": [("scales", [1.5, 2, 0.6]), ("sizes", [7, 3, 11])],
    "a5": [("scales", [1, 1, 2, 1.5, 0.8]), ("sizes", [1, 2, 4, 7, 3])],
}


def cases(xs):
    """(input, kind, mode, target form, values, roi, exclude_outside, cubic_coeff_a)."""
    out = []
    for mode in MODES:
        for name, targets in TARGETS.items():
            x = xs[name]
            for form, values in targets:
                if form == "scales" and mode == "tf_crop_and_resize":
                    continue
                if (form == "scales" and mode == "align_corners" and
                        any(float(f32(s) * f32(d)) % 1 for s, d in zip(values, x.shape))):
                    continue
                roi = None
                if mode == "tf_crop_and_resize":
                    n = x.ndim
                    roi = [0.0] * n + [1.0] * n
                    for d in range(n):
                        if values[d] != x.shape[d]:
                            roi[d], roi[n + d] = 0.13 + 0.02 * d, 0.91 - 0.05 * d
                out.append((name, "linear", mode, form, values, roi, False, -0.75))
                if x.ndim == 2 or (name == "a4" and (form == "scales" or values[:2] == [2, 3])):
                    out.append((name, "cubic", mode, form, values, roi, False, -0.75))
                    out.append((name, "cubic", mode, form, values, roi, True, -0.5))
    return out


def resize_node(i, case, inits):
    name, kind, mode, form, values, roi, excl, a = case
    ins = [name, "", ""]
    if roi is not None:
        inits.append(nh.from_array(np.array(roi, f32), "roi%d" % i))
        ins[1] = "roi%d" % i
    if form == "scales":
        inits.append(nh.from_array(np.array(values, f32), "scales%d" % i))
        ins[2] = "scales%d" % i
    else:
        inits.append(nh.from_array(np.array(values, np.int64), "sizes%d" % i))
        ins.append("sizes%d" % i)
    attrs = {"mode": kind, "coordinate_transformation_mode": mode}
    if kind == "cubic":
        attrs.update(exclude_outside=int(excl), cubic_coeff_a=a)
    if mode == "tf_crop_and_resize":
        attrs["extrapolation_value"] = EXTRAPOLATION
    return h.make_node("Resize", ins, ["y%d" % i], **attrs)


def write_model(path, xs, nodes, inits, outputs):
    graph = h.make_graph(
        nodes, "resize", [h.make_tensor_value_info(k, T.FLOAT, list(v.shape))
                          for k, v in xs.items()], outputs, inits)
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), path)


def resize_model(tmp, xs):
    all_cases = cases(xs)
    nodes, inits = [], []
    for i, case in enumerate(all_cases):
        nodes.append(resize_node(i, case, inits))
    outputs = [h.make_tensor_value_info("y%d" % i, T.FLOAT, None) for i in range(len(nodes))]
    path = os.path.join(tmp, "resize.onnx")
    write_model(path, xs, nodes, inits, outputs)
    return path, all_cases


def quantized_model(tmp, xs):
    """Resize (bilinear upsampling, as segmentation heads do) -> DynamicQuantizeLinear."""
    inits, nodes, outputs = [], [], []
    for i, (mode, values) in enumerate([("half_pixel", [1, 1, 2.0, 2.0]),
                                        ("align_corners", [1, 8, 61, 47]),
                                        ("pytorch_half_pixel", [1, 8, 20, 75])]):
        form = "scales" if isinstance(values[2], float) else "sizes"
        nodes.append(resize_node(i, ("q4", "linear", mode, form, values, None, False, -0.75),
                                 inits))
        nodes.append(h.make_node("DynamicQuantizeLinear", ["y%d" % i],
                                 ["q%d" % i, "s%d" % i, "z%d" % i]))
        outputs += [h.make_tensor_value_info("q%d" % i, T.UINT8, None),
                    h.make_tensor_value_info("s%d" % i, T.FLOAT, None),
                    h.make_tensor_value_info("z%d" % i, T.UINT8, None)]
    path = os.path.join(tmp, "quantized.onnx")
    write_model(path, {"q4": xs["q4"]}, nodes, inits, outputs)
    return path


# --- running -------------------------------------------------------------------------------------

def save_inputs(tmp, xs):
    files = {}
    for name, value in xs.items():
        files[name] = os.path.join(tmp, "in-%s.npy" % name)
        np.save(files[name], value)
    return files


def run_dynscope(tmp, model, files):
    out = os.path.join(tmp, "ds-" + os.path.basename(model))
    args = [a for name, f in files.items() for a in ("--input", "%s=%s" % (name, f))]
    proc = subprocess.run([EXE, "--run", model, *args, "--save-outputs", out],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise Failure("dynscope --run %s: %s" % (model, proc.stderr.strip()[-400:]))
    return out


def ort_dir():
    """The folder holding node_modules/onnxruntime-node, or (None, why not)."""
    if shutil.which("node") is None:
        return None, "node is not installed"
    for d in (os.environ.get("DS_ORT_DIR"), os.path.join(BUILD, "ort-peer")):
        if d and os.path.exists(os.path.join(d, "node_modules", "onnxruntime-node",
                                             "package.json")):
            return d, None
    return None, ("onnxruntime-node is not installed (set DS_ORT_DIR, or let "
                  "bench/onnx_peer.py install it into %s)" % os.path.join(BUILD, "ort-peer"))


def run_ort(tmp, folder, model, files):
    out = os.path.join(tmp, "ort-" + os.path.basename(model))
    spec = {"ort_dir": folder, "model": model, "inputs": files, "threads": 1, "warmup": 0,
            "runs": 1, "save_dir": out}
    proc = subprocess.run(["node", os.path.join(SRC, "bench", "ort_peer.mjs"), json.dumps(spec)],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise Failure("ONNX Runtime on %s: %s" % (model, proc.stderr.strip()[-400:]))
    return out


def ulps(got, want):
    """The largest distance in float32 steps between two equally shaped arrays."""
    def ordered(v):
        i = v.astype(f32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return int(np.abs(ordered(got) - ordered(want)).max()) if got.size else 0


def describe(case):
    name, kind, mode, form, values, roi, excl, a = case
    extra = " exclude_outside a=%g" % a if excl else ""
    return "%s %s %s %s=%s%s" % (name, kind, mode, form, values, extra)


def compare(label, got_dir, want, names):
    bad = []
    for key, case in names:
        got = np.load(os.path.join(got_dir, "%s.npy" % key))
        w = want(key)
        if got.shape != w.shape or got.dtype != w.dtype:
            bad.append("%s: %s %s, want %s %s" % (case, got.dtype, got.shape, w.dtype, w.shape))
        elif w.dtype == f32 and ulps(got, w) != 0:
            bad.append("%s: %d ulp" % (case, ulps(got, w)))
        elif w.dtype != f32 and not np.array_equal(got, w):
            bad.append("%s: %d of %d differ" % (case, int((got != w).sum()), got.size))
    if bad:
        raise Failure("%s: %d differ: %s" % (label, len(bad), "; ".join(bad[:6])))


# --- the tests -----------------------------------------------------------------------------------

def test_against_numpy(tmp):
    xs = inputs()
    del xs["q4"]
    model, all_cases = resize_model(tmp, xs)
    got = run_dynscope(tmp, model, save_inputs(tmp, xs))

    def want(key):
        name, kind, mode, form, values, roi, excl, a = all_cases[int(key[1:])]
        return ort_resize(xs[name], kind, mode, roi=roi, excl=excl, a=a,
                          **{form: values})
    compare("dynscope vs the NumPy model", got, want,
            [("y%d" % i, describe(c)) for i, c in enumerate(all_cases)])
    return "%d cases, 0 ulp" % len(all_cases)


def test_numpy_model_by_hand():
    """The model itself, on values worked out by hand from ONNX Runtime's formulas."""
    x = np.array([[1, 2], [3, 4]], f32)
    # half_pixel 2x: coordinates -0.25, 0.25, 0.75, 1.25 clamp to 0, 0.25, 0.75, 1.
    got = ort_resize(x, "linear", "half_pixel", scales=[2, 2])
    row = np.array([1, 1.25, 1.75, 2], f32)
    want = np.stack([row, row + f32(0.5), row + f32(1.5), row + f32(2)])
    if not np.array_equal(got, want):
        raise Failure("half_pixel 2x2 -> 4x4: got %r" % got.tolist())
    # align_corners 2 -> 3 along a row: 1, (0.5 * 1 + 0.5 * 2), 2.
    got = ort_resize(x[:1], "linear", "align_corners", sizes=[1, 3])
    if got.tolist() != [[1.0, 1.5, 2.0]]:
        raise Failure("align_corners 1x2 -> 1x3: got %r" % got.tolist())
    # Keys' coefficients at s = 0 are 0, 1, 0, 0; at s = 0.5 with a = -0.75, -0.09375,
    # 0.59375 twice and -0.09375.
    c = [float(v[0]) for v in cubic_coeffs(np.array([0.5], f32), -0.75)]
    if c != [-0.09375, 0.59375, 0.59375, -0.09375]:
        raise Failure("cubic coefficients at 0.5: %r" % c)
    # align_corners 1x2 -> 1x4 at x = 1: coordinate 1/3 in float, d1 = 1/3, d2 = |1/3 - 1|; the
    # one-row axis has both neighbours at row 0 with weights 0.5 and 0.5, so four terms, each
    # weight the x weight times the y weight, added left to right.
    y = np.array([[0.1, 0.7]], f32)
    got = ort_resize(y, "linear", "align_corners", sizes=[1, 4])[0, 1]
    d1 = f32(1) / f32(3)
    d2 = np.abs(d1 - f32(1))
    p, q, half = f32(0.1), f32(0.7), f32(0.5)
    want = (d2 * half) * p + (d1 * half) * q + (d2 * half) * p + (d1 * half) * q
    if got.view(np.int32) != want.view(np.int32):
        raise Failure("align_corners 1x2 -> 1x4 at 1: %r, want %r" % (got, want))
    return None


def test_against_ort(tmp):
    folder, why = ort_dir()
    if folder is None:
        return "SKIP " + why
    xs = inputs()
    del xs["q4"]
    files = save_inputs(tmp, xs)
    model, all_cases = resize_model(tmp, xs)
    got = run_dynscope(tmp, model, files)
    want_dir = run_ort(tmp, folder, model, files)
    compare("dynscope vs ONNX Runtime", got, lambda k: np.load(os.path.join(want_dir, k + ".npy")),
            [("y%d" % i, describe(c)) for i, c in enumerate(all_cases)])
    return "%d cases, 0 ulp" % len(all_cases)


def test_quantized_chain(tmp):
    xs = inputs()
    files = save_inputs(tmp, {"q4": xs["q4"]})
    model = quantized_model(tmp, xs)
    got = run_dynscope(tmp, model, files)
    folder, why = ort_dir()
    if folder is None:
        return "SKIP " + why
    want_dir = run_ort(tmp, folder, model, files)
    names = [("%s%d" % (p, i), "%s%d" % (p, i)) for i in range(3) for p in "qsz"]
    compare("Resize -> DynamicQuantizeLinear vs ONNX Runtime", got,
            lambda k: np.load(os.path.join(want_dir, k + ".npy")), names)
    return None


def main():
    if onnx is None:
        print("1..0 # SKIP the onnx Python package is not installed")
        return 0
    return tap.run([
        ("the NumPy model of ONNX Runtime's Resize on hand-worked values",
         test_numpy_model_by_hand),
        ("linear and cubic float32 Resize bit-identical to the NumPy model", test_against_numpy),
        ("linear and cubic float32 Resize bit-identical to ONNX Runtime", test_against_ort),
        ("Resize -> DynamicQuantizeLinear: the same uint8 as ONNX Runtime", test_quantized_chain),
    ])


if __name__ == "__main__":
    sys.exit(main())
