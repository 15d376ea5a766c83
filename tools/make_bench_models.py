#!/usr/bin/env python3
"""Writes the models `make bench` compares that are too large to keep in the repository:
an LSTM (batch 16, input 128, hidden 256) run by _foreach over a free sequence length, and
the same LSTM unrolled at the lengths the bench uses.

    /usr/bin/python3 tools/make_bench_models.py DIR
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import control_flow_cases as cases  # noqa: E402

LENGTHS = (16, 64, 256, 512)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_bench_models.py DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    # The cases' LSTM at a size where the cell's GEMMs, not the loop, set the time.
    cases.LSTM_BATCH, cases.LSTM_INPUT, cases.LSTM_HIDDEN = 16, 128, 256
    files = {"lstm-foreach-symbol.json": cases.lstm_foreach_graph()}
    for length in LENGTHS:
        files["lstm-unrolled-%d-symbol.json" % length] = cases.lstm_unrolled_graph(length)
    for name, graph in files.items():
        with open(os.path.join(out, name), "w") as f:
            f.write(cases.dumps(graph) + "\n")


if __name__ == "__main__":
    main()
