#!/usr/bin/env python3
"""`make bench`'s real-model peer section: dynscope against ONNX Runtime on the real-model corpus.

    /usr/bin/python3 bench/realmodels_peer.py [BUILD] [--only ID,ID...]   (default BUILD: build)

For each model of tools/real-models.json (the corpus of `make realmodels`, read from its cache:
$DS_MODEL_CACHE or ~/.cache/dynscope-models), on the seeded inputs of its first case as
tools/realmodels.py writes them (its write_inputs, into BUILD/realmodels-peer/): ONNX Runtime
through bench/ort_peer.mjs (onnxruntime-node from BUILD/ort-peer, which bench/onnx_peer.py
installs; graphOptimizationLevel 'all', intra- and inter-op threads equal to the count) and
dynscope through `BUILD/bench/ds-bench onnx-run` (plain runs, no profiling hooks), both timed
in-process, at 1 and 2 threads. The two sides alternate, ORT then dynscope, for up to three
rounds; each round is one process a side printing the median of its runs after warm-up
(ds-bench always warms up 3 runs; ORT as many, 1 for models over a second), and a side's time
is the fastest of its round medians. Runs a round are scaled so a side spends about
BUDGET_MS a model and thread count. A model whose ORT median at 1 thread is under 1 ms is
skipped (listed at the end), as is one that either side cannot run (its error is printed).

Prints one row a model and thread count: ORT ms, dynscope ms and the ratio ORT / dynscope
(> 1: dynscope is faster); the geometric mean of the ratios per thread count; the machine's
ISA from /proc/cpuinfo. Under each model, the five nodes that take longest on each side at 1
thread: dynscope's from `dynscope --run MODEL --report FILE.json` (docs/profile-report.md:
events summed per node key), ORT's from its profiler (enableProfiling; the Chrome trace's
`<node>_kernel_time` events summed per node; ORT's node names are those of its optimized
graph, fused nodes renamed). Both leave out the first, warm-up, run; a control-flow node's
time includes its body's nodes on both sides.

Asserts nothing. Without the corpus cache (tools/fetch_real_models.py --check), node,
onnxruntime-node in BUILD/ort-peer, ds-bench or dynscope it prints one line saying why the
section is skipped and exits 0.

DS_BENCH_REALMODELS_MAX_MS (default 10000; 0: no limit) skips models whose first ORT run at 1
thread takes longer: the corpus's IS-Net at 1024 x 1024 takes 10-20 s a run on two cores, and
ds-bench's three warm-up runs make that minutes a thread count. --only ID,ID... runs those
models alone.
"""

import json
import math
import os
import select
import shutil
import subprocess
import sys

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "tools"))
import fetch_real_models as corpus  # noqa: E402
import realmodels  # noqa: E402  (its write_inputs makes the seeded inputs)

ORT_SCRIPT = os.path.join(SRC, "bench", "ort_peer.mjs")
THREADS = (1, 2)
MIN_ORT_MS = 1.0
BUDGET_MS = 1500.0   # what each side spends on one model at one thread count, warm-up aside
MAX_ROUNDS = 3
MAX_RUNS = 200
PROFILE_MS = 600.0   # what each side's profiled runs take, about
TOP = 5
TIMEOUT = 900


def skip(reason):
    print("real-model peer section skipped: %s" % reason)
    sys.exit(0)


def last_line(text):
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    return lines[-1] if lines else "(no message)"


def run(args, timeout=TIMEOUT):
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % timeout
    except OSError as e:
        return None, str(e)
    return proc, None


class OrtServer:
    """bench/ort_peer.mjs --serve: node and onnxruntime-node loaded once for every request (each
    request still loads its own session and releases it after)."""

    def __init__(self, ort_dir, log):
        self.ort_dir, self.log, self.proc = ort_dir, log, None

    def start(self):
        self.stderr = open(self.log, "a", encoding="utf-8")
        self.proc = subprocess.Popen(["node", ORT_SCRIPT, "--serve", self.ort_dir],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, text=True, bufsize=1)

    def stop(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.stderr.close()
            self.proc = None

    def request(self, spec, timeout=TIMEOUT):
        """(result, None) or (None, error line)."""
        if self.proc is None:
            self.start()
        try:
            self.proc.stdin.write(json.dumps(spec) + "\n")
            self.proc.stdin.flush()
        except OSError:
            pass
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else None
        if not line:  # timed out or died (a crash inside ORT): start afresh next time
            alive = ready == []
            self.stop()
            if alive:
                return None, "timed out after %d s" % timeout
            with open(self.log, encoding="utf-8", errors="replace") as f:
                return None, "node exited: %s" % realmodels.first_line(
                    "\n".join(f.read().splitlines()[-1:]))
        answer = json.loads(line)
        if "error" in answer:
            return None, answer["error"]
        return answer, None


def time_ort(server, path, inputs, threads, warmup, runs, profile_dir=None):
    return server.request({"model": path, "inputs": inputs, "threads": threads,
                           "warmup": warmup, "runs": runs, "save_dir": None,
                           "profile_dir": profile_dir})


def time_dynscope(ds_bench, path, inputs, threads, runs):
    proc, error = run([ds_bench, "onnx-run", path, str(threads), str(runs)]
                      + ["%s=%s" % kv for kv in inputs.items()])
    if error:
        return None, error
    if proc.returncode != 0:
        return None, realmodels.first_line(proc.stderr or proc.stdout)
    fields = dict(f.split("=", 1) for f in last_line(proc.stdout).split() if "=" in f)
    if "median_ms" not in fields:
        return None, "no median_ms in ds-bench's output: %s" % last_line(proc.stdout)
    return float(fields["median_ms"]), None


def plan(ms):
    """(rounds, runs a round) for a model whose run takes about ms."""
    rounds = 3 if ms < 200 else 2 if ms < 1000 else 1
    return rounds, max(1, min(MAX_RUNS, int(round(BUDGET_MS / rounds / max(ms, 1e-3)))))


def isa_line():
    model, flags = "unknown CPU", set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and model == "unknown CPU":
                    model = value.strip()
                elif key.strip() == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    marks = ", ".join("%s %s" % (f, "yes" if f in flags else "no")
                      for f in ("avx512f", "avx2", "fma"))
    return "ISA: %s; %s; %d cores" % (marks, model, len(os.sched_getaffinity(0)))


# ----------------------------------------------------------------------------- top nodes

def ort_top(profile_file):
    """[(ms a run, op, node)] from ORT's trace, the first run left out; and ms a run."""
    with open(profile_file, encoding="utf-8") as f:
        events = json.load(f)
    runs = sorted((e for e in events if e.get("name") == "model_run"), key=lambda e: e["ts"])
    if not runs:
        return [], None
    start = runs[0]["ts"] + runs[0]["dur"] if len(runs) > 1 else 0
    counted = runs[1:] if len(runs) > 1 else runs
    totals, ops = {}, {}
    for e in events:
        name = e.get("name", "")
        if e.get("cat") != "Node" or not name.endswith("_kernel_time") or e["ts"] < start:
            continue
        node = name[:-len("_kernel_time")]
        totals[node] = totals.get(node, 0) + e["dur"]
        ops[node] = e.get("args", {}).get("op_name", "?")
    n = len(counted)
    top = sorted(totals.items(), key=lambda kv: -kv[1])[:TOP]
    return ([(us / 1e3 / n, ops[node], node) for node, us in top],
            sum(r["dur"] for r in counted) / 1e3 / n)


def dynscope_top(report_file):
    """[(ms a run, op, node key)] from a --report, the first run left out; and ms a run."""
    with open(report_file, encoding="utf-8") as f:
        report = json.load(f)
    walls = report["run"]["wall_ns"]
    first = 1 if len(walls) > 1 else 0
    totals, ops = {}, {}
    for e in report["events"]:
        if e["run"] < first:
            continue
        totals[e["key"]] = totals.get(e["key"], 0) + e["dur_ns"]
        ops[e["key"]] = e["op"]
    n = len(walls) - first
    top = sorted(totals.items(), key=lambda kv: -kv[1])[:TOP]
    return [(ns / 1e6 / n, ops[k], k) for k, ns in top], sum(walls[first:]) / 1e6 / n


def profile(model_dir, dynscope, server, path, inputs, ms):
    """Each side's top nodes at 1 thread: (ort rows, ort ms, ds rows, ds ms, errors)."""
    repeat = 1 + max(1, min(50, int(PROFILE_MS / max(ms, 1e-3))))
    errors = []
    ort_rows = ds_rows = ort_ms = ds_ms = None
    prof_dir = os.path.join(model_dir, "ort-profile")
    shutil.rmtree(prof_dir, ignore_errors=True)
    result, error = time_ort(server, path, inputs, 1, 1, repeat - 1, prof_dir)
    if error or not result.get("profile_file"):
        errors.append("ORT profile: %s" % (error or "no trace written"))
    else:
        try:
            ort_rows, ort_ms = ort_top(result["profile_file"])
        except (OSError, ValueError, KeyError) as e:
            errors.append("ORT profile: cannot read the trace: %s" % e)
    report = os.path.join(model_dir, "dynscope-report.json")
    args = [dynscope, "--run", path, "--threads", "1", "--repeat", str(repeat),
            "--report", report]
    for name, f in inputs.items():
        args += ["--input", "%s=%s" % (name, f)]
    proc, error = run(args)
    if error or proc.returncode != 0:
        errors.append("dynscope --report: %s"
                      % (error or realmodels.first_line(proc.stderr or proc.stdout)))
    else:
        try:
            ds_rows, ds_ms = dynscope_top(report)
        except (OSError, ValueError, KeyError) as e:
            errors.append("dynscope --report: cannot read it: %s" % e)
    return ort_rows, ort_ms, ds_rows, ds_ms, errors


def clip(text, width):
    return text if len(text) <= width else text[:width - 3] + "..."


def print_top(ort_rows, ort_ms, ds_rows, ds_ms):
    def cell(rows, i, total):
        if not rows or i >= len(rows):
            return ""
        ms, op, node = rows[i]
        share = " %3.0f%%" % (100.0 * ms / total) if total else ""
        return "%8.3f%s %-14s %s" % (ms, share, clip(op, 14), node)

    head = lambda who, total: "%s%s" % (who, " (%.2f ms a run profiled)" % total if total else "")
    width = 58
    print("      top %d nodes at 1 thread, ms a run:" % TOP)
    print("        %-*s | %s" % (width, head("ORT", ort_ms), head("dynscope", ds_ms)))
    for i in range(TOP):
        left, right = cell(ort_rows, i, ort_ms), cell(ds_rows, i, ds_ms)
        if left or right:
            print("        %-*s | %s" % (width, clip(left, width), right))


# ----------------------------------------------------------------------------- one model

def bench_model(model, build, ds_bench, dynscope, server, thread_counts, max_ms, ratios,
                skipped):
    path = corpus.model_path(model)
    model_dir = os.path.join(build, "realmodels-peer", model["id"])
    inputs = realmodels.write_inputs(model, 0, model["cases"][0], os.path.join(model_dir,
                                                                               "inputs"))
    probe, error = time_ort(server, path, inputs, 1, 1, 1)
    if error:
        print("  %-22s ONNX Runtime cannot run it: %s" % (model["id"], error), flush=True)
        return
    estimate = probe["median_ms"]
    if max_ms is not None and estimate > max_ms:
        skipped.append("%s (ORT %.0f ms a run, over DS_BENCH_REALMODELS_MAX_MS=%.0f)"
                       % (model["id"], estimate, max_ms))
        return
    if estimate < 5 * MIN_ORT_MS:  # a cold single run overstates; measure before deciding
        result, error = time_ort(server, path, inputs, 1, 3, 20)
        if result is not None:
            estimate = result["median_ms"]
    if estimate < MIN_ORT_MS:
        skipped.append("%s (ORT %.2f ms)" % (model["id"], estimate))
        return
    ort_ms_1 = None
    for threads in thread_counts:
        rounds, runs = plan(estimate)
        ort_warmup = 1 if estimate > 1000 else 3
        ort_best = ds_best = ort_error = ds_error = None
        r = 0
        while r < rounds:
            if ort_error is None:
                result, ort_error = time_ort(server, path, inputs, threads, ort_warmup, runs)
                if result is not None:
                    ort_best = min(ort_best or math.inf, result["median_ms"])
            if ds_error is None:
                ms, ds_error = time_dynscope(ds_bench, path, inputs, threads, runs)
                if ms is not None:
                    ds_best = min(ds_best or math.inf, ms)
            if r == 0 and ort_best is not None and ds_best is not None:
                # the first round's times size the rest: the slower side sets the runs
                rounds, runs = plan(max(ort_best, ds_best))
            if ort_error and ds_error:
                break
            r += 1
        if threads == 1 and ort_best is not None and ort_best < MIN_ORT_MS:
            skipped.append("%s (ORT %.2f ms)" % (model["id"], ort_best))
            return
        cells = ["  %-22s %3d" % (model["id"], threads),
                 "%10.3f" % ort_best if ort_best is not None else "%10s" % "failed",
                 "%12.3f" % ds_best if ds_best is not None else "%12s" % "failed"]
        if ort_best is not None and ds_best is not None:
            ratio = ort_best / ds_best
            ratios.setdefault(threads, []).append(ratio)
            cells.append("%8.2fx" % ratio)
        print(" ".join(cells), flush=True)
        if ort_error:
            print("      ONNX Runtime: %s" % ort_error)
        if ds_error:
            print("      dynscope (ds-bench onnx-run): %s" % ds_error)
        if threads == 1:
            ort_ms_1 = ort_best
            if ort_error and ds_error:
                return
            if ds_best is not None:
                estimate = max(estimate, ds_best)
    ort_rows, ort_ms, ds_rows, ds_ms, errors = profile(model_dir, dynscope, server, path,
                                                       inputs, max(estimate, ort_ms_1 or 0))
    print_top(ort_rows, ort_ms, ds_rows, ds_ms)
    for e in errors:
        print("      %s" % e)


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def main(argv):
    args = argv[1:]
    only = None
    if "--only" in args:
        i = args.index("--only")
        only = set(args[i + 1].split(",")) if i + 1 < len(args) else set()
        del args[i:i + 2]
    build = os.path.abspath(args[0] if args else os.path.join(SRC, "build"))
    ds_bench = os.path.join(build, "bench", "ds-bench")
    dynscope = os.path.join(build, "app", "dynscope")
    for binary in (ds_bench, dynscope):
        if not os.access(binary, os.X_OK):
            skip("%s is not built" % binary)
    if shutil.which("node") is None:
        skip("no node on PATH (ONNX Runtime runs through onnxruntime-node)")
    ort_dir = os.path.join(build, "ort-peer")
    if not os.path.exists(os.path.join(ort_dir, "node_modules", "onnxruntime-node",
                                       "package.json")):
        skip("no onnxruntime-node in %s (bench/onnx_peer.py installs it)" % ort_dir)
    try:
        models = corpus.load_manifest()
    except corpus.FetchError as e:
        skip(str(e))
    if only is not None:
        models = [m for m in models if m["id"] in only]
    absent = corpus.missing(models)
    if absent:
        skip("%d of %d corpus models are not in %s (tools/fetch_real_models.py --check; "
             "`make realmodels` fetches them)" % (len(absent), len(models), corpus.cache_dir()))
    try:
        max_ms = float(os.environ.get("DS_BENCH_REALMODELS_MAX_MS", 10000)) or None
    except ValueError:
        skip("DS_BENCH_REALMODELS_MAX_MS takes a number of milliseconds")
    threads = [t for t in THREADS if t == 1 or len(os.sched_getaffinity(0)) >= t]
    first = models[0]
    os.makedirs(os.path.join(build, "realmodels-peer"), exist_ok=True)
    server = OrtServer(ort_dir, os.path.join(build, "realmodels-peer", "ort-server.log"))
    probe, error = time_ort(server, corpus.model_path(first),
                            realmodels.write_inputs(first, 0, first["cases"][0], os.path.join(
                                build, "realmodels-peer", first["id"], "inputs")), 1, 0, 1)
    if probe is None:
        server.stop()
        skip("onnxruntime-node does not run: %s" % error)
    print("\nReal-model peer: ONNX Runtime %s (onnxruntime-node, graphOptimizationLevel 'all') "
          "against\ndynscope (ds-bench onnx-run, no hooks) on the %d models of "
          "tools/real-models.json, first case's\nseeded inputs, at %s threads; each side's "
          "time is the fastest median of up to %d alternated\nrounds (ORT, dynscope, ORT, ...); "
          "ratio = ORT time / dynscope time (> 1: dynscope is faster);\nmodels under %.0f ms "
          "on ORT at 1 thread are skipped"
          % (probe["ort_version"], len(models), " and ".join(str(t) for t in threads),
             MAX_ROUNDS, MIN_ORT_MS), flush=True)
    print("  %-22s %3s %10s %12s %9s" % ("model", "thr", "ORT ms", "dynscope ms", "ratio"))
    ratios, skipped = {}, []
    for model in models:
        bench_model(model, build, ds_bench, dynscope, server, threads, max_ms, ratios,
                    skipped)
    server.stop()
    for t in threads:
        if ratios.get(t):
            print("  geometric mean of ORT / dynscope at %d thread%s: %.2fx over %d models"
                  % (t, "" if t == 1 else "s", geomean(ratios[t]), len(ratios[t])))
    if skipped:
        print("  skipped: %s" % ", ".join(skipped))
    print("  " + isa_line())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
