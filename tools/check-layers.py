#!/usr/bin/env python3
"""The folder tree is the layer diagram: this check fails when an arrow points up or a circle
appears.

Usage: tools/check-layers.py BUILD [--tap]

Layers, lowest first (docs/ARCHITECTURE.md):
  core  <  engine  <  backends  <  profiler  <  viz  <  app
A file may include headers of, and call functions defined in, its own layer and the layers
below it, never one above. A header in a library's private/ folder is for that library's own
files (the folder holding private/ and the folders below it): only they may include it, and
only they have it on their include path. Two kinds of evidence are read:
  - includes: every `#include "..."` of the sources, resolved to the header's folder;
  - calls: the symbols each object file of BUILD's layer libraries uses (`nm -u`) resolved
    to the object that defines them, so a call through a declaration written by hand counts.
A circle is a set of files that call each other around a loop (a strongly connected
component of the call graph with more than one file), and fails the check too: what the parts
of a module share belongs in a file below them, and a higher part is reached through a
callback, a signal or an action (docs/ARCHITECTURE.md names where each module does so).

Prints the verdicts (TAP with --tap) and exits 1 on any failure.
"""

import os
import re
import subprocess
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
LAYERS = ["core", "engine", "backends", "profiler", "viz", "app"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    top = path.split("/", 1)[0]
    return LAYERS.index(top) if top in LAYERS else None


def sources():
    """Relative paths of every C, CUDA and header file under the layer folders."""
    found = []
    for top in LAYERS:
        for root, _, files in os.walk(os.path.join(SRC, top)):
            for name in files:
                if name.endswith((".c", ".h", ".cu")):
                    found.append(os.path.relpath(os.path.join(root, name), SRC))
    return sorted(found)


def includes(files):
    """(file, header) for every `#include "..."` of `files` that names one of them: the header
    beside the file, or else every header of that name."""
    by_name = defaultdict(list)
    for f in files:
        if f.endswith(".h"):
            by_name[os.path.basename(f)].append(f)
    for f in files:
        with open(os.path.join(SRC, f), encoding="utf-8") as fh:
            text = fh.read()
        for name in INCLUDE.findall(text):
            beside = os.path.normpath(os.path.join(os.path.dirname(f), name))
            for target in [beside] if beside in files else by_name.get(os.path.basename(name), []):
                yield f, target


def include_violations(files):
    return ["%s includes %s (%s above %s)"
            % (f, target, LAYERS[layer_of(target)], LAYERS[layer_of(f)])
            for f, target in includes(files) if layer_of(target) > layer_of(f)]


def owner_of_private(path):
    """The folder whose files may include `path`, for a header under a private/ folder."""
    parts = path.split("/")
    if "private" not in parts[:-1]:
        return None
    return "/".join(parts[:parts.index("private")]) + "/"


def private_violations(files):
    bad = []
    for f, target in includes(files):
        owner = owner_of_private(target)
        if owner is not None and not f.startswith(owner):
            bad.append("%s includes %s, private to %s" % (f, target, owner))
    return bad


def objects(build, files):
    """object path -> source path, for the objects of the layer libraries and the binary."""
    compiled = [f for f in files if not f.endswith(".h")]
    result = {}
    for top in LAYERS:
        for root, _, names in os.walk(os.path.join(build, top)):
            for name in names:
                if not name.endswith(".o"):
                    continue
                # meson names an object after its source's path below the meson.build that
                # compiles it, '/' written '_': engine's onnx/ds-protobuf.c is
                # onnx_ds-protobuf.c.o, nvcc's outputs are ds-cuda-nn.cu.o.
                base = "_" + name[:-2]
                found = [f for f in compiled if ("_" + f.replace("/", "_")).endswith(base)]
                if len(found) == 1:
                    result[os.path.join(root, name)] = found[0]
    return result


def nm(path, *flags):
    out = subprocess.run(["nm", "-P", *flags, path], capture_output=True, text=True,
                         check=True).stdout
    return [line.split()[:2] for line in out.splitlines() if line.strip()]


def call_graph(objs):
    defined = {}
    for obj, src in objs.items():
        for sym, kind in nm(obj, "--defined-only"):
            if kind in "TDBRVW":  # global code and data; local symbols never link
                defined.setdefault(sym, src)
    edges = defaultdict(set)
    for obj, src in objs.items():
        for sym, _ in nm(obj, "-u"):
            dst = defined.get(sym)
            if dst is not None and dst != src:
                edges[src].add((dst, sym))
    return edges


def call_violations(edges):
    bad = []
    for src, outs in sorted(edges.items()):
        for dst, sym in sorted(outs):
            if layer_of(dst) > layer_of(src):
                bad.append("%s calls %s in %s (%s above %s)"
                           % (src, sym, dst, LAYERS[layer_of(dst)], LAYERS[layer_of(src)]))
    return bad


def circles(edges):
    """Strongly connected components with more than one file (Tarjan's algorithm)."""
    graph = {src: {dst for dst, _ in outs} for src, outs in edges.items()}
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(" ".join(sorted(component)))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def main():
    args = [a for a in sys.argv[1:] if a != "--tap"]
    tap = "--tap" in sys.argv
    if len(args) != 1:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    build = os.path.abspath(args[0])
    files = sources()
    objs = objects(build, files)
    if not objs:
        print("check-layers: no object files of the layer libraries under %s" % build,
              file=sys.stderr)
        return 2
    edges = call_graph(objs)
    checks = [
        ("no include points up a layer", include_violations(files)),
        ("private headers stay in their library", private_violations(files)),
        ("no call points up a layer", call_violations(edges)),
        ("no circle of calls between files", ["circle: " + c for c in circles(edges)]),
    ]
    failed = 0
    if tap:
        print("1..%d" % len(checks))
    for number, (title, problems) in enumerate(checks, 1):
        failed += bool(problems)
        if tap:
            print("%s %d - %s" % ("not ok" if problems else "ok", number, title))
            for p in problems:
                print("# " + p)
        else:
            print("%s: %s" % ("FAIL" if problems else "ok", title))
            for p in problems:
                print("  " + p)
    note = "%d files, %d objects, %d calls between files" % (
        len(files), len(objs), sum(len(outs) for outs in edges.values()))
    print(("# " if tap else "") + note)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
