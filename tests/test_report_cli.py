#!/usr/bin/env python3
"""Profile reports read back through the command line: --summary and --compare.

The reports are written here by hand, following docs/profile-report.md (schema version 1):
two runs of a small model with a while loop, events in execution order with their keys,
depths and shapes, and the aggregates computed in Python the way the schema defines them. The
checks hold dynscope's tables to those numbers: --summary's op and node totals, --compare's
per-run means matched by key, its shape groups and bindings line, and --fail-if-slower's exit
status around the limit.

Prints TAP. Environment: DS_SOURCE_DIR, DS_BUILD_DIR (set by meson); without them the paths
are taken relative to this file.
"""

import json
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tap  # noqa: E402
from tap import Failure  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("DS_SOURCE_DIR") or os.path.dirname(HERE)
BUILD = os.environ.get("DS_BUILD_DIR") or os.path.join(SRC, "build")
EXE = os.path.join(BUILD, "app", "dynscope")
TIMEOUT_S = 60


# ---- Writing reports ------------------------------------------------------------------------

# The model: fc1 -> relu1 -> while0 (a loop whose body runs fc2 and tanh2 per iteration) ->
# out. Each node: (name, op, base duration in ns at batch 4, output shape given the batch).
TOP = [
    ("fc1", "FullyConnected", 400_000, lambda b: [b, 64]),
    ("relu1", "Activation", 50_000, lambda b: [b, 64]),
    ("while0", "_while_loop", None, lambda b: [b, 64]),  # spans its body
    ("out", "softmax", 30_000, lambda b: [b, 10]),
]
BODY = [
    ("fc2", "FullyConnected", 100_000, lambda b: [b, 64]),
    ("tanh2", "Activation", 20_000, lambda b: [b, 64]),
]
LOOP_OVERHEAD_NS = 5_000
BODY_NAME = "while0/func"


def nearest_rank(values, q):
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def aggregate(groups, first_inputs):
    """AGG objects from {name: [event, ...]}, largest total first."""
    out = []
    for name, events in groups.items():
        durs = [e["dur_ns"] for e in events]
        slowest = max(events, key=lambda e: e["dur_ns"])
        out.append({
            "name": name, "count": len(events), "total_ns": sum(durs),
            "mean_ns": sum(durs) // len(durs), "p50_ns": nearest_rank(durs, 0.5),
            "p95_ns": nearest_rank(durs, 0.95), "max_ns": slowest["dur_ns"],
            "max_event": slowest["id"], "max_input_shapes": slowest["input_shapes"],
        })
    out.sort(key=lambda a: (-a["total_ns"], a["name"]))
    return out


def make_report(batch=4, scale=1.0, iterations=3, runs=2, extra=None, name="tiny"):
    """A v1 report of `runs` runs at batch `batch`, every duration times `scale`; `extra` adds
    a node (name, op, ns) after "out"."""
    events = []
    wall = []
    clock = 0
    top = list(TOP) + ([(extra[0], extra[1], extra[2], lambda b: [b, 10])] if extra else [])

    def event(run, path, key, node, op, body, iteration, depth, start, dur, shape):
        e = {"id": len(events), "run": run, "path": path, "key": key, "node": node, "op": op,
             "region": None, "body": body, "iteration": iteration, "depth": depth,
             "backend": "cpu", "start_ns": start, "end_ns": start + dur, "dur_ns": dur,
             "gpu_ns": None, "gpu_kernels": None, "input_shapes": [[batch, 64]],
             "output_shapes": [shape], "symbolic_shapes": None, "fresh_bytes": 0,
             "reused_bytes": 0, "live_bytes": 0}
        events.append(e)
        return e

    for run in range(runs):
        run_start = clock
        jitter = 1.0 + 0.01 * run  # the second run a little slower
        for node, op, base, shape in top:
            if node != "while0":
                dur = round(base * scale * jitter)
                event(run, node, node, node, op, None, -1, 0, clock, dur, shape(batch))
                clock += dur
                continue
            loop = event(run, node, node, node, op, None, -1, 0, clock, 0, shape(batch))
            inner = clock + LOOP_OVERHEAD_NS
            for it in range(iterations):
                for bnode, bop, bbase, bshape in BODY:
                    dur = round(bbase * scale * jitter)
                    event(run, f"while0/iter{it}/{bnode}", f"while0/{bnode}", bnode, bop,
                          BODY_NAME, it, 1, inner, dur, bshape(batch))
                    inner += dur
            loop["dur_ns"] = inner - clock
            loop["end_ns"] = inner
            clock = inner
        wall.append(clock - run_start)

    def group(keyf, only=lambda e: True):
        groups = {}
        for e in events:
            if only(e):
                groups.setdefault(keyf(e), []).append(e)
        return groups

    iters = {}
    for e in events:
        if e["body"] is not None:
            item = iters.setdefault((e["body"], e["iteration"]),
                                    {"body": e["body"], "iteration": e["iteration"],
                                     "count": 0, "total_ns": 0})
            item["count"] += 1
            item["total_ns"] += e["dur_ns"]
    report = {
        "schema": "dynscope-profile", "version": 1,
        "model": {"path": f"/models/{name}-symbol.json", "name": name, "format": "mxnet-json",
                  "nodes": 8, "op_nodes": 6, "executor": "dynamic", "partition": []},
        "machine": {"host": "testhost", "os": "Linux", "cpu": "Test CPU", "cpus": 4,
                    "memory_bytes": 8 << 30},
        "build": {"version": "0.0-test", "compiler": "gcc", "cuda": False, "blas": "none"},
        "run": {"started": "2024-06-11T12:00:00Z", "repeat": runs, "threads": 1,
                "wall_ns": wall, "profiler_overhead_ns": 1234},
        "bindings": {"s0": batch},
        "inputs": [{"name": "data", "dtype": "float32", "shape": [batch, 64]}],
        "events": events,
        "buffers": [],
        "memory": {"peak_live_bytes": 3 << 20, "planned_peak_bytes": None,
                   "fresh_bytes": 5 << 20, "reused_bytes": 1 << 20},
        "aggregates": {
            "by_op": aggregate(group(lambda e: e["op"]), None),
            "by_node": aggregate(group(lambda e: e["key"]), None),
            "by_region": [],
            "by_body": aggregate(group(lambda e: e["body"], lambda e: e["body"] is not None),
                                 None),
            "by_iteration": sorted(iters.values(), key=lambda i: -i["total_ns"]),
        },
    }
    return report


def write(tmp, name, report):
    path = os.path.join(tmp, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report, f)
    return path


def median_wall(report):
    wall = sorted(report["run"]["wall_ns"])
    return wall[len(wall) // 2]


def per_run_ms(report, key):
    total = sum(e["dur_ns"] for e in report["events"] if e["key"] == key)
    return total / report["run"]["repeat"] / 1e6


# ---- Running dynscope -----------------------------------------------------------------------

def run_cli(args):
    if not os.path.exists(EXE):
        raise Failure(f"{EXE} is not built")
    proc = subprocess.run([EXE] + args, capture_output=True, text=True, timeout=TIMEOUT_S)
    if proc.returncode < 0:
        raise Failure(f"dynscope {' '.join(args)} killed by signal {-proc.returncode}")
    # GLib's byte sizes put a no-break space before the unit ("3.0\u00a0MiB").
    proc.stdout = proc.stdout.replace("\u00a0", " ")
    return proc


def run_status(args, status):
    proc = run_cli(args)
    if proc.returncode != status:
        raise Failure(f"dynscope {' '.join(args)} exited {proc.returncode}, expected {status}: "
                      f"{proc.stderr.strip()[:300]}")
    return proc


def run_fails(args, status, needles):
    """Runs, expects exit `status` and one stderr line containing every needle."""
    proc = run_status(args, status)
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    if len(lines) != 1:
        raise Failure(f"expected one line on stderr, got {len(lines)}: {proc.stderr[:300]!r}")
    for needle in needles:
        if needle not in lines[0]:
            raise Failure(f"error does not mention {needle!r}: {lines[0]}")
    return lines[0]


def section(out, title):
    """The lines of the table whose title line starts with `title`, up to the next blank."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(title):
            body = []
            for row in lines[i + 1:]:
                if not row.strip():
                    break
                body.append(row)
            return body
    raise Failure(f"no {title!r} table in:\n{out}")


def row_for(rows, name):
    for row in rows:
        cells = row.split()
        if cells and cells[0] == name:
            return cells
    raise Failure(f"no row for {name!r} in:\n" + "\n".join(rows))


# ---- Tests ----------------------------------------------------------------------------------

def test_summary(tmp):
    report = make_report()
    path = write(tmp, "a.json", report)
    out = run_status(["--summary", path], 0).stdout
    for needle in ("model: tiny (/models/tiny-symbol.json, mxnet-json), 8 nodes, 6 op nodes",
                   "executor: dynamic", "machine: testhost, Linux, Test CPU, 4 cpus, 8.0 GiB",
                   f"runs: 2, median wall {median_wall(report) / 1e6:.3f} ms",
                   "bindings: s0=4",
                   "memory: peak live 3.0 MiB, planned peak none (no plan); outputs in fresh "
                   "memory 5.0 MiB, in reused 1.0 MiB"):
        if needle not in out:
            raise Failure(f"--summary lacks {needle!r}:\n{out}")
    base = sum(report["run"]["wall_ns"])
    for title, table in (("by op", "by_op"), ("by node", "by_node")):
        rows = section(out, title)
        header = rows[0].split()
        if header[:3] != [title.split()[1], "count", "total"]:
            raise Failure(f"{title} header reads {rows[0]!r}")
        if len(rows) - 1 != len(report["aggregates"][table]):
            raise Failure(f"{title}: {len(rows) - 1} rows for "
                          f"{len(report['aggregates'][table])} aggregates")
        for agg in report["aggregates"][table]:
            cells = row_for(rows[1:], agg["name"])
            want = [str(agg["count"]), f"{agg['total_ns'] / 1e6:.3f}",
                    f"{agg['mean_ns'] / 1e3:.1f}", f"{agg['p50_ns'] / 1e3:.1f}",
                    f"{agg['p95_ns'] / 1e3:.1f}", f"{100 * agg['total_ns'] / base:.1f}%"]
            if cells[1:7] != want:
                raise Failure(f"{title} row {agg['name']!r} reads {cells[1:7]}, expected {want}")
        # Rows come largest total first, columns aligned: every row as wide as the header.
        totals = [float(r.split()[2]) for r in rows[1:]]
        if totals != sorted(totals, reverse=True):
            raise Failure(f"{title} rows are not sorted by total: {totals}")
    fc = row_for(section(out, "by node"), "fc1")
    if " ".join(fc[7:]) != "(4, 64)":
        raise Failure(f"fc1's input shapes read {fc[7:]}")
    rows = section(out, "by body")
    row_for(rows, BODY_NAME)
    rows = section(out, "per iteration")
    if len(rows) != 1 + 3 or row_for(rows, BODY_NAME)[1] not in ("0", "1", "2"):
        raise Failure(f"per-iteration table: {rows}")
    if "by region" in out:
        raise Failure("an empty by-region table was printed")


def test_compare_matches_keys(tmp):
    a = make_report(batch=4, iterations=3)
    b = make_report(batch=8, scale=1.5, iterations=5, extra=("extra", "Dropout", 70_000))
    pa, pb = write(tmp, "a.json", a), write(tmp, "b.json", b)
    out = run_status(["--compare", pa, pb], 0).stdout
    for needle in ("bindings: A s0=4; B s0=8",
                   "bindings differ: s0 4 -> 8; times compare different sizes",
                   "shapes (4, 64) -> (8, 64):", "shapes (4, 10) -> (8, 10):",
                   "shapes absent -> (8, 10):"):
        if needle not in out:
            raise Failure(f"--compare lacks {needle!r}:\n{out}")
    total_a, total_b = median_wall(a) / 1e6, median_wall(b) / 1e6
    want = (f"total per run (median wall): A {total_a:.3f} ms, B {total_b:.3f} ms, delta "
            f"{total_b - total_a:+.3f} ms ({100 * (total_b - total_a) / total_a:+.1f}%)")
    if want not in out:
        raise Failure(f"--compare lacks {want!r}:\n{out}")
    rows = section(out, "by node")
    # A body node matched across 3 and 5 iterations: per-run means over all its events.
    for key in ("while0/fc2", "while0/tanh2", "fc1", "out", "while0"):
        cells = row_for(rows, key)
        ma, mb = per_run_ms(a, key), per_run_ms(b, key)
        want = [f"{ma:.3f}", f"{mb:.3f}", f"{mb - ma:+.3f}", f"{100 * (mb - ma) / ma:+.1f}%"]
        if cells[2:6] != want:
            raise Failure(f"node {key!r} reads {cells[2:6]}, expected {want}")
        if len(cells) != 6:
            raise Failure(f"node {key!r} is flagged: {cells}")
    cells = row_for(rows, "extra")
    if cells[1:] != ["Dropout", "-", f"{per_run_ms(b, 'extra'):.3f}",
                     f"+{per_run_ms(b, 'extra'):.3f}", "-", "only", "in", "B"]:
        raise Failure(f"the node only in B reads {cells}")
    # Rows sit under their shape group: fc1 under (4, 64) -> (8, 64), out under (4, 10)...
    group = None
    for row in rows:
        if row.strip().startswith("shapes "):
            group = row.strip()
        elif row.split()[0] in ("fc1", "while0/fc2") and group != "shapes (4, 64) -> (8, 64):":
            raise Failure(f"{row.split()[0]} is under {group!r}")
        elif row.split()[0] == "out" and group != "shapes (4, 10) -> (8, 10):":
            raise Failure(f"out is under {group!r}")
    ops = section(out, "by op")
    cells = row_for(ops, "Dropout")
    if cells[-3:] != ["only", "in", "B"]:
        raise Failure(f"the op only in B reads {cells}")
    # The reverse: the node is only in A.
    out = run_status(["--compare", pb, pa], 0).stdout
    if row_for(section(out, "by node"), "extra")[-3:] != ["only", "in", "A"]:
        raise Failure("--compare B A does not flag 'extra' as only in A")


def test_compare_same_sizes(tmp):
    a = make_report()
    pa = write(tmp, "a.json", a)
    out = run_status(["--compare", pa, pa], 0).stdout
    if "bindings differ" in out or "shapes (4, 64):" not in out or re.search(r"-> [(a]", out):
        raise Failure(f"comparing a report with itself reports changes:\n{out}")
    if "delta +0.000 ms (+0.0%)" not in out:
        raise Failure(f"comparing a report with itself shows a delta:\n{out}")


def test_fail_if_slower(tmp):
    a = make_report()
    pa = write(tmp, "a.json", a)
    for scale, status in ((1.2, 1), (1.02, 0), (0.8, 0), (1.0, 0)):
        b = make_report(scale=scale)
        pb = write(tmp, f"b{scale}.json", b)
        slower = 100 * (median_wall(b) - median_wall(a)) / median_wall(a)
        if status:
            line = run_fails(["--compare", pa, pb, "--fail-if-slower", "5"], 1,
                             [f"{pb} is {slower:.1f}% slower than {pa} (limit 5%)"])
            print(f"# {line}")
        else:
            proc = run_status(["--compare", pa, pb, "--fail-if-slower", "5"], 0)
            if proc.stderr.strip():
                raise Failure(f"B {slower:+.1f}%: stderr {proc.stderr.strip()!r}")
    # The limit is a bound: 20% slower passes a 25% limit, and "%" may follow the number.
    pb = write(tmp, "b.json", make_report(scale=1.2))
    run_status(["--compare", pa, pb, "--fail-if-slower", "25%"], 0)
    run_status(["--compare", pa, pb], 0)


def test_usage_errors(tmp):
    pa = write(tmp, "a.json", make_report())
    run_fails(["--compare", pa], 2, ["--compare: expected two report files: A.json B.json"])
    run_fails(["--compare", pa, pa, pa], 2, ["--compare: expected two report files"])
    for value in ("-5", "lots", "nan", "inf", "5x"):
        run_fails(["--compare", pa, pa, "--fail-if-slower", value], 2,
                  [f"--fail-if-slower {value}"])
    run_fails(["--summary", pa, "--fail-if-slower", "5"], 2, ["--fail-if-slower needs --compare"])
    run_fails(["--summary", pa, pa], 2, ["--summary takes one report file"])


def test_malformed_reports(tmp):
    good = make_report()

    def variant(name, change):
        report = json.loads(json.dumps(good))
        change(report)
        return write(tmp, name, report)

    def set_event(field, value):
        def change(r):
            r["events"][3][field] = value
        return change

    cases = [
        (variant("no-key.json", lambda r: r["events"][3].pop("key")), "events[3]: 'key' is missing"),
        (variant("dur-string.json", set_event("dur_ns", "5")), "events[3].dur_ns"),
        (variant("dur-negative.json", set_event("dur_ns", -1)), "events[3].dur_ns"),
        (variant("dur-huge.json", set_event("dur_ns", 1e300)), "events[3].dur_ns"),
        (variant("run-range.json", set_event("run", 7)), "events[3].run is 7"),
        (variant("shapes-bad.json", set_event("output_shapes", [["a"]])), "output_shapes"),
        (variant("no-by-node.json", lambda r: r["aggregates"].pop("by_node")), "by_node"),
        (variant("agg-bad.json", lambda r: r["aggregates"]["by_op"][0].update(total_ns=None)),
         "aggregates.by_op[0].total_ns"),
        (variant("repeat-zero.json", lambda r: r["run"].update(repeat=0)), "run.repeat"),
        (variant("bindings-list.json", lambda r: r.update(bindings=[])), "bindings"),
        (variant("binding-str.json", lambda r: r["bindings"].update(s0="4")), "bindings.s0"),
        (variant("no-model.json", lambda r: r.pop("model")), "'model' is missing"),
        (variant("version-2.json", lambda r: r.update(version=2)), "version 2"),
        (write(tmp, "array.json", [1, 2]), "not a dynscope profile report"),
    ]
    for name, text in (("empty.json", ""), ("trailing.json", json.dumps(good) + " x"),
                       ("deep.json", "[" * 100000), ("truncated.json", json.dumps(good)[:500])):
        path = os.path.join(tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        cases.append((path, ""))
    pa = write(tmp, "a.json", good)
    for path, needle in cases:
        run_fails(["--summary", path], 2, [path, needle])
        run_fails(["--compare", pa, path], 2, [path, needle])
        run_fails(["--compare", path, pa], 2, [path, needle])
    print(f"# {len(cases)} malformed reports refused by --summary and --compare")


TESTS = [
    ("--summary: model, runs, memory and the op and node tables match the aggregates",
     test_summary),
    ("--compare: per-run means matched by key, shape groups, bindings differ, only-in-B",
     test_compare_matches_keys),
    ("--compare of a report with itself: no changes", test_compare_same_sizes),
    ("--fail-if-slower 5: exit 1 at 20% slower, 0 at 2% slower and faster", test_fail_if_slower),
    ("--compare and --summary usage errors exit 2", test_usage_errors),
    ("malformed reports exit 2 with one line naming the file", test_malformed_reports),
]


def main():
    return tap.run(TESTS)


if __name__ == "__main__":
    sys.exit(main())
