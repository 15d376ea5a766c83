#!/bin/sh
# Installs the Debian 12 packages the build and tests need, when any is missing.
# Runs as root (or through sudo when available); does nothing when all are present.
set -eu

# Build: compiler, meson, libraries (Graphviz draws graphs; its text needs a font; GTK 4 for
# the desktop app, tested under Xvfb with input sent through XTest). Tests: numpy for the
# reference, valgrind, and clang with its runtime (libFuzzer, sanitizers) for the fuzz
# targets. Translations need gettext; the desktop entry and AppStream metainfo are validated
# with their own tools; ONNX test models are generated with the onnx Python package (the
# transformer block exported by PyTorch).
packages="gcc pkg-config meson ninja-build libglib2.0-dev libcjson-dev libopenblas-dev
libgraphviz-dev fonts-dejavu-core libgtk-4-dev xvfb xauth python3 python3-numpy valgrind clang
libclang-rt-14-dev gettext desktop-file-utils appstream python3-onnx python3-torch libxtst-dev"

missing=""
for p in $packages; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0

echo "Installing:$missing"
if [ "$(id -u)" -eq 0 ]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1; then
  sudo="sudo"
else
  echo "install-deps: missing packages:$missing (run as root to install them)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing
