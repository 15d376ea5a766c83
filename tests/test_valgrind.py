#!/usr/bin/env python3
"""Runs the command line under valgrind on the bundled sample and two real models.

Each run must be clean: no invalid reads or writes, no uses of uninitialised values, no
definite leaks (valgrind exits with 99 on any of them). Output is TAP.
"""
import os
import subprocess
import sys
import tempfile

SOURCE = os.environ["DS_SOURCE_DIR"]
BUILD = os.environ["DS_BUILD_DIR"]
SHARED = os.environ["DS_SHARED_DIR"]
DYNSCOPE = os.path.join(BUILD, "app", "dynscope")
MODELS = os.path.join(SHARED, "models", "mxnet")
SAMPLE = os.path.join(SOURCE, "data", "sample")
DYNAMIC = os.path.join(SOURCE, "data", "dynamic")
CONTROL = os.path.join(SOURCE, "data", "control")

VALGRIND = ["valgrind", "--error-exitcode=99", "--leak-check=full",
            "--errors-for-leak-kinds=definite", "--show-leak-kinds=definite",
            "--track-origins=yes", "--quiet",
            # Leaks inside Graphviz and the font stack are theirs.
            "--suppressions=" + os.path.join(SOURCE, "tests", "valgrind.supp")]


def cases(tmp):
    return [
        ("sample run", ["--run", f"{SAMPLE}/sample-symbol.json", "--params", f"{SAMPLE}/sample.params",
                        "--input", f"data={SAMPLE}/sample-input.npy", "--save-outputs", tmp]),
        ("mlp run", ["--run", f"{MODELS}/djl_mlp-symbol.json", "--input-shape", "data=(2,784)",
                     "--random-inputs", "--repeat", "2"]),
        ("lstm_ptb run", ["--run", f"{MODELS}/mms_lstm_ptb-symbol.json", "--input-shape", "data=(5,2)",
                          "--input-shape", "softmax_label=(5,2)", "--random-inputs"]),
        ("resnet18 info", ["--info", f"{MODELS}/gluoncv_resnet18_v1-symbol.json",
                           "--input-shape", "data=(1,3,224,224)", "--json"]),
        ("legacy save", ["--save", os.path.join(tmp, "legacy.json"),
                         f"{MODELS}/mxnet_legacy_save_000800.json"]),
        ("bad input", ["--run", f"{SAMPLE}/sample-symbol.json", "--params", f"{SAMPLE}/sample.params"]),
        ("dynamic run", ["--run", f"{DYNAMIC}/boolean-mask-symbol.json", "--input-shape",
                         "data=(16,8)", "--random-inputs", "--repeat", "3"]),
        ("debug cursor in loops", ["--run", f"{CONTROL}/cond-in-loop-symbol.json", "--input-shape",
                                   "data=(4,3)", "--random-inputs", "--trace-steps",
                                   "--break", "_cond if iter==2", "--break", "* if nan>0"]),
        ("profiled loop run", ["--run", f"{CONTROL}/lstm-foreach-symbol.json", "--input-shape",
                               "data=(3,4,16)", "--random-inputs", "--repeat", "2",
                               "--report", os.path.join(tmp, "r.json"),
                               "--trace", os.path.join(tmp, "t.json"),
                               "--html", os.path.join(tmp, "r.html"),
                               "--csv", os.path.join(tmp, "r.csv"), "--max-node-ms", "lstm_i2h=1e6"]),
        ("report summary", ["--summary", os.path.join(tmp, "r.json")]),
        ("report compare", ["--compare", os.path.join(tmp, "r.json"), os.path.join(tmp, "r.json"),
                            "--fail-if-slower", "1000"]),
        ("render loops", ["--render", f"{CONTROL}/greedy-decoder-symbol.json", "--svg",
                          os.path.join(tmp, "decoder.svg")]),
        ("render partition", ["--render", f"{DYNAMIC}/boolean-mask-symbol.json",
                              "--partition", "static-dynamic", "--png",
                              os.path.join(tmp, "mask.png")]),
        ("render overlay", ["--render", f"{CONTROL}/lstm-foreach-symbol.json", "--report",
                            os.path.join(tmp, "r.json"), "--overlay", "time", "--svg",
                            os.path.join(tmp, "lstm.svg")]),
        ("partition save", ["--partition", f"{DYNAMIC}/boolean-mask-symbol.json",
                            "--save", os.path.join(tmp, "partitioned.json")]),
    ]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        todo = cases(tmp)
        print(f"1..{len(todo)}")
        failures = 0
        for number, (name, args) in enumerate(todo, 1):
            # OpenBLAS's threads make valgrind slow and noisy; one thread tests the same code.
            env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
            proc = subprocess.run(VALGRIND + [DYNSCOPE, "--threads", "1"] + args, env=env,
                                  capture_output=True, text=True, timeout=900)
            if proc.returncode == 99 or "==" in proc.stderr:
                failures += 1
                print(f"not ok {number} - {name} # valgrind found errors")
                for line in proc.stderr.splitlines()[:60]:
                    print(f"# {line}")
            elif proc.returncode not in (0, 2):
                failures += 1
                print(f"not ok {number} - {name} # exit {proc.returncode}: {proc.stderr[:300]}")
            else:
                print(f"ok {number} - {name}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
