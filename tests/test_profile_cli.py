#!/usr/bin/env python3
"""`dynscope --run` with --report, --trace, --html, --csv and budgets, end to end.

Prints TAP. The JSON report against docs/profile-report.md (every field, its type,
events once per executed node per run, aggregates that add up); the Chrome trace
parses, holds every executed node once per execution with well-formed fields, and
its memory counter agrees with the report and the static plan's peak; the HTML has
no external reference; the CSV has one row per event; budgets exit 1 naming what
went over and 0 within; a failed write leaves no file.

Environment: DS_SOURCE_DIR, DS_BUILD_DIR (set by meson).
"""

import csv
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("DS_SOURCE_DIR") or os.path.dirname(HERE)
BUILD = os.environ.get("DS_BUILD_DIR") or os.path.join(SRC, "build")
EXE = os.path.join(BUILD, "app", "dynscope")

sys.path.insert(0, HERE)
import tap  # noqa: E402
from tap import Failure  # noqa: E402
SAMPLE = os.path.join(SRC, "data", "sample")
CONTROL = os.path.join(SRC, "data", "control")


def dynscope(args, expect=0):
    proc = subprocess.run([EXE, "--threads", "1"] + args, capture_output=True, text=True,
                          timeout=300)
    if proc.returncode != expect:
        raise Failure("exit %d, expected %d: %s" % (proc.returncode, expect,
                                                    (proc.stderr or proc.stdout).strip()[:400]))
    return proc


SAMPLE_RUN = ["--run", os.path.join(SAMPLE, "sample-symbol.json"), "--params",
              os.path.join(SAMPLE, "sample.params"), "--input",
              "data=" + os.path.join(SAMPLE, "sample-input.npy")]
LOOP_RUN = ["--run", os.path.join(CONTROL, "cond-in-loop-symbol.json"), "--input-shape",
            "data=(5,3)", "--random-inputs"]

INT, STR, NUM = int, str, (int, float)
EVENT_FIELDS = {"id": INT, "run": INT, "path": STR, "key": STR, "node": STR, "op": STR,
                "iteration": INT, "depth": INT, "backend": STR, "start_ns": INT, "end_ns": INT,
                "dur_ns": INT, "input_shapes": list, "output_shapes": list,
                "fresh_bytes": INT, "reused_bytes": INT, "live_bytes": INT}
AGG_FIELDS = {"name": STR, "count": INT, "total_ns": INT, "mean_ns": INT, "p50_ns": INT,
              "p95_ns": INT, "max_ns": INT, "max_event": INT, "max_input_shapes": list}


def check_fields(where, obj, fields):
    for name, kind in fields.items():
        if name not in obj:
            raise Failure("%s: no field '%s'" % (where, name))
        if not isinstance(obj[name], kind) or isinstance(obj[name], bool):
            raise Failure("%s: '%s' is %r" % (where, name, obj[name]))


def check_report(report, repeat):
    if report.get("schema") != "dynscope-profile" or report.get("version") != 1:
        raise Failure("schema/version %r %r" % (report.get("schema"), report.get("version")))
    for section in ("model", "machine", "build", "run", "bindings", "memory", "aggregates"):
        if not isinstance(report.get(section), dict):
            raise Failure("no object '%s'" % section)
    check_fields("model", report["model"], {"path": STR, "name": STR, "nodes": INT,
                                            "op_nodes": INT, "executor": STR, "partition": list})
    check_fields("machine", report["machine"], {"host": STR, "os": STR, "cpu": STR, "cpus": INT,
                                                "memory_bytes": INT})
    check_fields("run", report["run"], {"started": STR, "repeat": INT, "threads": INT,
                                        "wall_ns": list, "profiler_overhead_ns": INT})
    if report["run"]["repeat"] != repeat or len(report["run"]["wall_ns"]) != repeat:
        raise Failure("run.repeat %r, wall_ns %d" % (report["run"]["repeat"],
                                                     len(report["run"]["wall_ns"])))
    events = report["events"]
    for i, e in enumerate(events):
        check_fields("event %d" % i, e, EVENT_FIELDS)
        if e["id"] != i or e["dur_ns"] != e["end_ns"] - e["start_ns"] or e["dur_ns"] < 0:
            raise Failure("event %d: id %d, times %d..%d dur %d" % (
                i, e["id"], e["start_ns"], e["end_ns"], e["dur_ns"]))
        for key in ("region", "body", "gpu_ns", "gpu_kernels", "symbolic_shapes"):
            if key not in e:
                raise Failure("event %d: no key '%s' (null when absent)" % (i, key))
        if re.sub(r"/iter\d+", "", e["path"]) != e["key"]:
            raise Failure("event %d: key %s does not drop the iterations of %s" % (
                i, e["key"], e["path"]))
    for i, b in enumerate(report["buffers"]):
        check_fields("buffer %d" % i, b, {"id": INT, "tensor": STR, "bytes": INT,
                                          "first_event": INT, "last_event": INT})
        if b["reused_from"] is not None and not 0 <= b["reused_from"] < i:
            raise Failure("buffer %d reuses %r" % (i, b["reused_from"]))
        if not b["first_event"] <= b["last_event"] < len(events):
            raise Failure("buffer %d lives %d..%d" % (i, b["first_event"], b["last_event"]))
    aggregates = report["aggregates"]
    for table in ("by_op", "by_node", "by_region", "by_body"):
        for row in aggregates[table]:
            check_fields(table, row, AGG_FIELDS)
            if not row["p50_ns"] <= row["p95_ns"] <= row["max_ns"]:
                raise Failure("%s %s: p50 %d p95 %d max %d" % (
                    table, row["name"], row["p50_ns"], row["p95_ns"], row["max_ns"]))
    for table in ("by_op", "by_node"):
        if sum(r["count"] for r in aggregates[table]) != len(events):
            raise Failure("%s counts do not add up to %d events" % (table, len(events)))
        if sum(r["total_ns"] for r in aggregates[table]) != sum(e["dur_ns"] for e in events):
            raise Failure("%s totals do not add up" % table)
    peak = max((e["live_bytes"] for e in events), default=0)
    if report["memory"]["peak_live_bytes"] != peak:
        raise Failure("memory.peak_live_bytes %d, events peak at %d" % (
            report["memory"]["peak_live_bytes"], peak))


def test_report_static(tmp):
    path = os.path.join(tmp, "r.json")
    dynscope(SAMPLE_RUN + ["--repeat", "3", "--report", path])
    with open(path) as f:
        report = json.load(f)
    check_report(report, 3)
    ops = report["model"]["op_nodes"]
    if len(report["events"]) != 3 * ops:
        raise Failure("%d events for 3 runs of %d op nodes" % (len(report["events"]), ops))
    # Every op node once per run, in the table too.
    for run in range(3):
        names = [e["node"] for e in report["events"] if e["run"] == run]
        if len(set(names)) != ops:
            raise Failure("run %d: %d distinct nodes" % (run, len(set(names))))
    # The static plan: live bytes never above its arena.
    planned = report["memory"]["planned_peak_bytes"]
    peak = report["memory"]["peak_live_bytes"]
    if planned is None or not 0 < peak <= planned:
        raise Failure("peak live %d, planned peak %r" % (peak, planned))
    return "%d events, %d buffers, peak live %d <= planned %d bytes" % (
        len(report["events"]), len(report["buffers"]), peak, planned)


def test_report_loops(tmp):
    path = os.path.join(tmp, "r.json")
    dynscope(LOOP_RUN + ["--repeat", "2", "--report", path])
    with open(path) as f:
        report = json.load(f)
    check_report(report, 2)
    events = report["events"]
    per_run = len(events) // 2
    # 5 iterations x (sum, greater, one branch node, _cond, _copy) + the loop = 26 per run.
    if per_run != 26:
        raise Failure("%d events per run, expected 26" % per_run)
    iters = sorted({e["iteration"] for e in events if e["body"] == "loop0/body"})
    if iters != [0, 1, 2, 3, 4]:
        raise Failure("iterations of loop0/body: %s" % iters)
    # The loop's event encloses its iterations'.
    for run in (0, 1):
        loop = [e for e in events if e["run"] == run and e["node"] == "loop0"][0]
        inner = [e for e in events if e["run"] == run and e["depth"] > 0]
        if not all(loop["start_ns"] <= e["start_ns"] <= e["end_ns"] <= loop["end_ns"]
                   for e in inner):
            raise Failure("run %d: an iteration's node lies outside the loop's event" % run)
    # Per-iteration buffers reuse the previous iteration's memory: it does not grow.
    later = [e for e in events if e["run"] == 0 and e["iteration"] >= 1 and e["depth"] >= 1]
    if sum(e["reused_bytes"] for e in later) == 0:
        raise Failure("no reuse across iterations")
    bodies = [r for r in report["aggregates"]["by_iteration"] if r["body"] == "loop0/body"]
    if len(bodies) != 5 or any(r["count"] != 2 * 2 for r in bodies):
        raise Failure("by_iteration for loop0/body: %s" % bodies)
    return "26 events per run; loop encloses its iterations; iterations reuse memory"


def test_trace(tmp):
    path = os.path.join(tmp, "t.json")
    report_path = os.path.join(tmp, "r.json")
    dynscope(LOOP_RUN + ["--repeat", "2", "--trace", path, "--report", report_path])
    with open(path) as f:
        trace = json.load(f)
    with open(report_path) as f:
        report = json.load(f)
    events = trace["traceEvents"]
    complete = [e for e in events if e.get("ph") == "X"]
    counters = [e for e in events if e.get("ph") == "C"]
    meta = [e for e in events if e.get("ph") == "M"]
    if {m["name"] for m in meta} != {"process_name", "thread_name"}:
        raise Failure("metadata events %s" % [m["name"] for m in meta])
    if len(complete) != len(report["events"]):
        raise Failure("%d complete events, the report has %d" % (len(complete),
                                                               len(report["events"])))
    seen = set()
    for e in complete:
        for key, kind in (("name", str), ("cat", str), ("ts", (int, float)),
                          ("dur", (int, float)), ("pid", int), ("tid", int), ("args", dict)):
            if not isinstance(e.get(key), kind):
                raise Failure("event %s: field %s is %r" % (e.get("name"), key, e.get(key)))
        if e["cat"] != "cpu_op" or e["dur"] < 0:
            raise Failure("event %s: cat %s dur %s" % (e["name"], e["cat"], e["dur"]))
        args = e["args"]
        for key in ("node", "op", "path", "input shapes", "output shapes", "bindings",
                    "iteration"):
            if key not in args:
                raise Failure("event %s: no args.%s" % (e["name"], key))
        ident = (args["path"], args["run"])
        if ident in seen:
            raise Failure("%s appears twice in run %d" % ident)
        seen.add(ident)
    want = {(e["path"], e["run"]) for e in report["events"]}
    if seen != want:
        raise Failure("trace and report differ in %d executions" % len(seen ^ want))
    if len(counters) != len(complete) or any("bytes" not in c["args"] for c in counters):
        raise Failure("%d counter events for %d nodes" % (len(counters), len(complete)))
    peak = max(c["args"]["bytes"] for c in counters)
    if peak != report["memory"]["peak_live_bytes"]:
        raise Failure("counter peak %d, report peak %d" % (peak,
                                                         report["memory"]["peak_live_bytes"]))
    return "%d complete events, each execution once; %d counters peaking at %d bytes" % (
        len(complete), len(counters), peak)


def test_trace_static_peak(tmp):
    """On the static executor the counter's peak is the plan's max-live bound."""
    path = os.path.join(tmp, "t.json")
    out = dynscope(SAMPLE_RUN + ["--trace", path]).stdout
    with open(path) as f:
        counters = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "C"]
    peak = max(c["args"]["bytes"] for c in counters)
    m = re.search(r"max-live bound ([\d.]+)\s(B|bytes|KiB|MiB)", out)
    if not m:
        raise Failure("no max-live bound in the run's summary")
    scale = {"B": 1, "bytes": 1, "KiB": 1024, "MiB": 1024 * 1024}[m.group(2)]
    bound = float(m.group(1)) * scale
    # The plan counts each buffer rounded up to 64 bytes; the profiler counts exact bytes.
    if not bound * 0.9 <= peak <= bound * 1.001 + 1:
        raise Failure("counter peak %d bytes, the plan's max-live bound %s" % (peak, m.group(0)))
    return "counter peak %d bytes against the plan's %s" % (peak, m.group(0))


def test_html_and_csv(tmp):
    html = os.path.join(tmp, "r.html")
    table = os.path.join(tmp, "r.csv")
    report_path = os.path.join(tmp, "r.json")
    dynscope(LOOP_RUN + ["--html", html, "--csv", table, "--report", report_path])
    with open(html) as f:
        page = f.read()
    if not page.lstrip().lower().startswith("<!doctype html>"):
        raise Failure("not an HTML document")
    for needle in ("http://", "https://", "src=", "<link", "url("):
        if needle in page:
            raise Failure("the HTML holds an external reference: %s" % needle)
    if page.count("<svg") < 2:
        raise Failure("expected the memory and buffer charts as inline SVG")
    with open(table, newline="") as f:
        rows = list(csv.DictReader(f))
    with open(report_path) as f:
        report = json.load(f)
    if len(rows) != len(report["events"]):
        raise Failure("%d CSV rows, %d events" % (len(rows), len(report["events"])))
    if rows[-1]["path"] != "loop0" or rows[-1]["output_shapes"] != "(5, 3), (3,)":
        raise Failure("last row %s %s" % (rows[-1]["path"], rows[-1]["output_shapes"]))
    return "HTML self-contained (%d bytes); %d CSV rows" % (len(page), len(rows))


def test_budgets(tmp):
    report = os.path.join(tmp, "r.json")
    dynscope(SAMPLE_RUN + ["--max-ms", "100000", "--max-peak-bytes", "1G",
                           "--max-node-ms", "conv0_fwd=100000"])
    err = dynscope(SAMPLE_RUN + ["--max-ms", "0.000001"], expect=1).stderr
    if "--max-ms" not in err:
        raise Failure("--max-ms message: %s" % err)
    err = dynscope(SAMPLE_RUN + ["--max-peak-bytes", "16", "--report", report], expect=1).stderr
    if "peak live memory" not in err or "--max-peak-bytes 16" not in err:
        raise Failure("--max-peak-bytes message: %s" % err)
    if not os.path.exists(report):
        raise Failure("the report is not written when a budget fails")
    err = dynscope(SAMPLE_RUN + ["--max-node-ms", "conv0_fwd=0.000001"], expect=1).stderr
    if "node 'conv0_fwd'" not in err:
        raise Failure("--max-node-ms message: %s" % err)
    err = dynscope(LOOP_RUN + ["--max-node-ms", "loop0/choose0=0.000001"], expect=1).stderr
    if "node 'loop0/choose0'" not in err:
        raise Failure("a path key: %s" % err)
    err = dynscope(LOOP_RUN + ["--max-node-ms", "body_copy0=0.000001"], expect=1).stderr
    if "body_copy0" not in err:
        raise Failure("a node inside a loop: %s" % err)
    err = dynscope(SAMPLE_RUN + ["--max-node-ms", "nosuch=1"], expect=2).stderr
    if "nosuch" not in err:
        raise Failure("unknown node: %s" % err)
    return "within: exit 0; over --max-ms, --max-peak-bytes, --max-node-ms: exit 1; unknown: 2"


def test_failed_write(tmp):
    target = os.path.join(tmp, "missing", "r.json")
    err = dynscope(SAMPLE_RUN + ["--report", target], expect=2).stderr
    if target not in err or "cannot write" not in err:
        raise Failure("message: %s" % err)
    existing = os.path.join(tmp, "old.json")
    with open(existing, "w") as f:
        f.write("old")
    os.chmod(tmp, 0o500)
    try:
        if os.geteuid() != 0:
            dynscope(SAMPLE_RUN + ["--report", existing], expect=2)
            with open(existing) as f:
                if f.read() != "old":
                    raise Failure("a failed write changed the old file")
    finally:
        os.chmod(tmp, 0o700)
    left = [n for n in os.listdir(tmp) if n != "old.json"]
    if left:
        raise Failure("left behind: %s" % left)
    return "missing folder: exit 2 naming the file; nothing left behind"


TESTS = [
    ("--report on the static executor: schema, events, plan peak", test_report_static),
    ("--report through a loop with a branch: iterations, nesting, reuse", test_report_loops),
    ("--trace: Chrome trace, every execution once, counters", test_trace),
    ("--trace counters against the static plan's max-live bound", test_trace_static_peak),
    ("--html self-contained and --csv one row per event", test_html_and_csv),
    ("budgets: --max-ms, --max-peak-bytes, --max-node-ms", test_budgets),
    ("a failed write leaves no file", test_failed_write),
]


if __name__ == "__main__":
    sys.exit(tap.run(TESTS))
