#!/usr/bin/env python3
"""Write the control-flow sample models into data/control:

  lstm-foreach-symbol.json    an LSTM over a variable-length sequence with _foreach
  greedy-decoder-symbol.json  a greedy decoder with _while_loop and a data-dependent stop
  cond-in-loop-symbol.json    a _cond inside a _foreach body

The graphs are defined in tools/control_flow_cases.py (which also holds their
NumPy equivalents) and written in MXNet 1.6's layout: each control-flow node
keeps its graphs in "subgraphs", attributes as contrib.py writes them. No MXNet
is needed and the files hold no weights (tests feed random ones). The output is
deterministic: the same command writes the same bytes.

  /usr/bin/python3 tools/make_control_flow_models.py [--out data/control]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import control_flow_cases as cases  # noqa: E402

MODELS = [
    ("lstm-foreach-symbol.json", cases.lstm_foreach_graph),
    ("greedy-decoder-symbol.json", cases.greedy_decoder_graph),
    ("cond-in-loop-symbol.json", cases.cond_in_loop_graph),
]


def count_ops(graph):
    """Op nodes, those of subgraphs included."""
    n = 0
    for node in graph["nodes"]:
        if node["op"] != "null":
            n += 1
        for sub in node.get("subgraphs", []):
            n += count_ops(sub)
    return n


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="Write the control-flow sample graphs.")
    ap.add_argument("--out", default=os.path.join(here, "..", "data", "control"))
    args = ap.parse_args(argv)

    os.makedirs(args.out, exist_ok=True)
    for name, build in MODELS:
        graph = build()
        path = os.path.join(args.out, name)
        with open(path, "w") as f:
            f.write(cases.dumps(graph))
            f.write("\n")
        print("%s: %d ops (subgraphs included), %d heads" % (path, count_ops(graph),
                                                           len(graph["heads"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
