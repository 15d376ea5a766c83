#!/usr/bin/env python3
"""Translations: every catalogue in po/LINGUAS is complete (no untranslated or fuzzy message,
and none of the strings the sources mark is missing from it), and the binary built here speaks
German with LANGUAGE=de and English with LANGUAGE=C. Output is TAP.

The binary finds the catalogues compiled into the build tree on its own (app/main.c), so the
runs below clear DYNSCOPE_LOCALEDIR, except the one that checks that it overrides them.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import Failure, run  # noqa: E402

SRC = os.environ.get("DS_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("DS_BUILD_DIR") or os.path.join(SRC, "build")
DYNSCOPE = os.path.join(BUILD, "app", "dynscope")
PO = os.path.join(SRC, "po")

# One option description, as English source and German catalogue have it.
ENGLISH = "Run MODEL headless"
GERMAN = "MODELL ohne Oberfläche ausführen"

# The keywords meson's 'glib' preset gives xgettext (po/meson.build).
XGETTEXT_KEYWORDS = ["_", "N_", "C_:1c,2", "NC_:1c,2", "g_dcgettext:2", "g_dngettext:2,3",
                     "g_dpgettext2:2c,3"]


def languages():
    with open(os.path.join(PO, "LINGUAS"), encoding="utf-8") as f:
        return [w for line in f if not line.startswith("#") for w in line.split()]


def statistics(po):
    """msgfmt's counts for one catalogue: (translated, fuzzy, untranslated)."""
    proc = subprocess.run(["msgfmt", "--check", "--statistics", "-o", os.devnull, po],
                          capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
    if proc.returncode != 0:
        raise Failure("msgfmt --check %s: %s" % (po, proc.stderr.strip()))
    counts = {}
    for kind in ("translated", "fuzzy", "untranslated"):
        m = re.search(r"(\d+) %s" % kind, proc.stderr)
        counts[kind] = int(m.group(1)) if m else 0
    return counts["translated"], counts["fuzzy"], counts["untranslated"]


def test_catalogues_complete():
    notes = []
    for lang in languages():
        translated, fuzzy, untranslated = statistics(os.path.join(PO, lang + ".po"))
        if fuzzy or untranslated or not translated:
            raise Failure("po/%s.po: %d translated, %d fuzzy, %d untranslated (translate them; "
                          "tools/update-po.sh lists them)"
                          % (lang, translated, fuzzy, untranslated))
        notes.append("%s %d" % (lang, translated))
    return ", ".join(notes)


def test_catalogues_cover_sources(tmp):
    """A string marked in the sources since the last tools/update-po.sh is missing from every
    catalogue: msgcmp finds it against a template made afresh from POTFILES.in."""
    pot = os.path.join(tmp, "fresh.pot")
    args = ["xgettext", "--from-code=UTF-8", "-D", SRC, "-o", pot,
            "--files-from", os.path.join(PO, "POTFILES.in")]
    args += ["--keyword=" + k for k in XGETTEXT_KEYWORDS]
    proc = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
    if proc.returncode != 0:
        raise Failure("xgettext: %s" % proc.stderr.strip()[:300])
    for lang in languages():
        proc = subprocess.run(["msgcmp", os.path.join(PO, lang + ".po"), pot],
                              capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
        if proc.returncode != 0:
            raise Failure("po/%s.po does not translate every string the sources mark (run "
                          "tools/update-po.sh and translate what it reports): %s"
                          % (lang, proc.stderr.strip()[:300]))


def dynscope(args, **env):
    """Runs the binary in a clean locale environment plus `env`."""
    clean = {k: v for k, v in os.environ.items()
             if not (k.startswith("LC_") or k in ("LANG", "LANGUAGE", "DYNSCOPE_LOCALEDIR"))}
    clean.update(env)
    return subprocess.run([DYNSCOPE] + args, capture_output=True, text=True, timeout=60, env=clean)


def test_help_german():
    proc = dynscope(["--help"], LANGUAGE="de", LANG="C.UTF-8")
    if proc.returncode != 0 or GERMAN not in proc.stdout:
        raise Failure("LANGUAGE=de --help: no %r in %r" % (GERMAN, proc.stdout[:300]))
    if ENGLISH in proc.stdout:
        raise Failure("LANGUAGE=de --help still says %r" % ENGLISH)


def test_help_english():
    for env in ({"LANGUAGE": "C", "LANG": "C.UTF-8"}, {"LANG": "C"}):
        proc = dynscope(["--help"], **env)
        if proc.returncode != 0 or ENGLISH not in proc.stdout or GERMAN in proc.stdout:
            raise Failure("%s --help: expected %r, got %r" % (env, ENGLISH, proc.stdout[:300]))


def test_error_german():
    """A usage error comes out translated, still one line with status 2."""
    proc = dynscope(["--run", "model.json", "--repeat", "0"], LANGUAGE="de", LANG="C.UTF-8")
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    if proc.returncode != 2 or len(lines) != 1 or "--repeat muss >= 1 sein" not in lines[0]:
        raise Failure("exit %d, stderr %r" % (proc.returncode, proc.stderr[:300]))


def test_localedir_override(tmp):
    """DYNSCOPE_LOCALEDIR wins over the build tree's catalogues: an empty folder, English."""
    proc = dynscope(["--help"], LANGUAGE="de", LANG="C.UTF-8", DYNSCOPE_LOCALEDIR=tmp)
    if proc.returncode != 0 or ENGLISH not in proc.stdout:
        raise Failure("DYNSCOPE_LOCALEDIR=%s: expected English, got %r" % (tmp, proc.stdout[:300]))
    proc = dynscope(["--help"], LANGUAGE="de", LANG="C.UTF-8",
                    DYNSCOPE_LOCALEDIR=os.path.join(BUILD, "po"))
    if GERMAN not in proc.stdout:
        raise Failure("DYNSCOPE_LOCALEDIR=build/po: expected German, got %r" % proc.stdout[:300])


def test_merged_data_files():
    """The desktop entry and the metainfo built into build/data carry the German strings."""
    desktop = os.path.join(BUILD, "data", "org.dynscope.Dynscope.desktop")
    with open(desktop, encoding="utf-8") as f:
        text = f.read()
    for key in ("GenericName[de]=", "Comment[de]=", "Keywords[de]="):
        if key not in text:
            raise Failure("%s: no %s" % (desktop, key))
    metainfo = os.path.join(BUILD, "data", "org.dynscope.Dynscope.metainfo.xml")
    with open(metainfo, encoding="utf-8") as f:
        text = f.read()
    if not re.search(r'<summary xml:lang="de">', text) or '<p xml:lang="de">' not in text:
        raise Failure("%s: no German summary or description" % metainfo)


if __name__ == "__main__":
    sys.exit(run([
        ("every catalogue is complete: no untranslated or fuzzy message", test_catalogues_complete),
        ("every string the sources mark is in every catalogue", test_catalogues_cover_sources),
        ("LANGUAGE=de: --help is German", test_help_german),
        ("LANGUAGE=C and LANG=C: --help is English", test_help_english),
        ("LANGUAGE=de: a usage error is German, one line, status 2", test_error_german),
        ("DYNSCOPE_LOCALEDIR overrides where catalogues are looked up", test_localedir_override),
        ("the built desktop entry and metainfo carry the German strings", test_merged_data_files),
    ]))
