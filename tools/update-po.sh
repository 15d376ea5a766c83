#!/bin/sh
# Regenerates po/dynscope.pot from the files listed in po/POTFILES.in, merges it into every
# catalogue listed in po/LINGUAS, and prints each catalogue's statistics. Run it after adding
# or changing translatable strings, then translate what it reports as untranslated or fuzzy
# (the `translations` test fails until none is left).
# Usage: tools/update-po.sh [BUILD_DIR]   (default: build, configured when missing)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
cd "$root"
[ -f "$build/build.ninja" ] || meson setup "$build"

# A source file that marks strings but is missing from POTFILES.in would be left out of the
# template without a word.
missing=0
for f in $( (grep -rlE '(\b(N?C?_)|ngettext)\("' app --include='*.c'
              grep -rl 'translatable="yes"' app --include='*.ui') | sort); do
  if ! grep -qx "$f" po/POTFILES.in; then
    echo "update-po: $f marks strings but is not listed in po/POTFILES.in" >&2
    missing=1
  fi
done

meson compile -C "$build" dynscope-pot
meson compile -C "$build" dynscope-update-po

# The msgids of a catalogue's entries, one a line (msgattrib selects which).
msgids() {
  awk '/^msgid / { s = $0; sub(/^msgid "/, "", s); sub(/"$/, "", s); m = 1; next }
       m && /^"/ { t = $0; sub(/^"/, "", t); sub(/"$/, "", t); s = s t; next }
       m { if (s != "") print "    " s; m = 0 }'
}

for lang in $(grep -v '^#' po/LINGUAS); do
  printf '%s: ' "$lang"
  msgfmt --check --statistics -o /dev/null "po/$lang.po" 2>&1
  msgattrib --untranslated --no-fuzzy --no-obsolete "po/$lang.po" | msgids | sed 's/^/  untranslated:/'
  msgattrib --only-fuzzy --no-obsolete "po/$lang.po" | msgids | sed 's/^/  fuzzy:/'
done
exit $missing
