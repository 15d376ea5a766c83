#!/usr/bin/env python3
"""The app icons in data/icons: each is well-formed SVG with a square viewBox; the symbolic one
is 16x16 and only fills, in one colour, so that GTK can recolour it. Output is TAP."""
import os
import re
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import Failure, run  # noqa: E402

SRC = os.environ.get("DS_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ICONS = os.path.join(SRC, "data", "icons", "hicolor")
APP_ID = "org.dynscope.Dynscope"
SVG = "{http://www.w3.org/2000/svg}"


def load(path):
    """The root <svg> element and its viewBox (x, y, width, height)."""
    root = ET.parse(path).getroot()  # raises on anything that is not well-formed XML
    if root.tag != SVG + "svg":
        raise Failure("%s: the root element is %s, not svg" % (path, root.tag))
    box = [float(v) for v in re.split(r"[\s,]+", root.get("viewBox", "").strip()) if v]
    if len(box) != 4:
        raise Failure("%s: viewBox %r" % (path, root.get("viewBox")))
    if box[2] != box[3] or box[2] <= 0:
        raise Failure("%s: viewBox %r is not square" % (path, root.get("viewBox")))
    return root, box


def test_app_icon():
    path = os.path.join(ICONS, "scalable", "apps", APP_ID + ".svg")
    root, box = load(path)
    if len(list(root.iter())) < 5:
        raise Failure("%s: almost empty" % path)
    return "viewBox %g" % box[2]


def test_symbolic_icon():
    path = os.path.join(ICONS, "symbolic", "apps", APP_ID + "-symbolic.svg")
    root, box = load(path)
    if box[2] != 16:
        raise Failure("%s: viewBox %g wide, expected 16" % (path, box[2]))
    colours = set()
    for el in root.iter():
        if el.get("stroke") not in (None, "none"):
            raise Failure("%s: <%s> has a stroke; GTK recolours fills only" % (path, el.tag))
        fill = el.get("fill")
        if fill not in (None, "none"):
            colours.add(fill.lower())
    if len(colours) > 1:
        raise Failure("%s: more than one colour: %s" % (path, sorted(colours)))


if __name__ == "__main__":
    sys.exit(run([
        ("the app icon is a square SVG", test_app_icon),
        ("the symbolic icon is a 16x16 SVG in one colour, fills only", test_symbolic_icon),
    ]))
