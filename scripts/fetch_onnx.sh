#!/usr/bin/env bash
# Fetches ONNX 1.17's source tarball (Debian 13's onnx_1.17.0.orig.tar.gz) into the
# dependency cache outside the repository, checked against its sha256, and prints its path.
# The Bazel repository @onnx117 (third_party/onnx/) builds ONNX's C++ library from it.
#
#   scripts/fetch_onnx.sh       # scripts/setup.sh runs it; a second run needs no network
#
# Debian 12 has ONNX 1.12 only, so the tarball comes from trixie's source packages, through
# a private apt configuration (a deb-src entry in a temporary folder): the machine's own apt
# sources and lists stay as they are.
set -euo pipefail
cache=${SLUICE_DEPS_CACHE:-$HOME/.cache/sluice-deps}
name=onnx_1.17.0.orig.tar.gz
sha256=8d5e983c36037003615e5a02d36b18fc286541bf52de1a78f6cf9f32005a820e
tarball=$cache/$name

verifies() { echo "$sha256  $1" | sha256sum -c --quiet >/dev/null 2>&1; }

if [ -f "$tarball" ] && verifies "$tarball"; then
  echo "$tarball"
  exit 0
fi
if [ -e "$tarball" ]; then
  echo "fetch_onnx.sh: $tarball does not have sha256 $sha256; fetching it again" >&2
fi

echo "fetch_onnx.sh: fetching $name from Debian's trixie sources" >&2
mkdir -p "$cache"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
# The machine's own Debian entry, pointed at trixie, with sources.
awk 'BEGIN{RS=""} /Suites: bookworm/ {print; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null |
  sed -E 's/^Types:.*/Types: deb deb-src/; s/^Suites:.*/Suites: trixie/' > "$work/src.sources"
if [ ! -s "$work/src.sources" ]; then
  echo "fetch_onnx.sh: no bookworm entry in /etc/apt/sources.list.d/debian.sources to point at trixie" >&2
  exit 1
fi
apt=(-o "Dir::Etc::sourcelist=$work/src.sources" -o Dir::Etc::sourceparts=-
     -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache")
if ! apt-get "${apt[@]}" update >"$work/update.log" 2>&1; then
  cat "$work/update.log" >&2
  echo "fetch_onnx.sh: apt-get update of Debian's trixie sources failed (is the registry reachable?)" >&2
  exit 1
fi
# apt-get may fail on the .dsc (it can 404) after the tarball arrived; the tarball decides.
(cd "$work/src" && apt-get "${apt[@]}" source --download-only onnx >"$work/source.log" 2>&1) || true
if [ ! -f "$work/src/$name" ]; then
  cat "$work/source.log" >&2
  echo "fetch_onnx.sh: apt-get source onnx did not download $name (trixie's onnx is no longer 1.17.0?)" >&2
  exit 1
fi
if ! verifies "$work/src/$name"; then
  echo "fetch_onnx.sh: $name has sha256 $(sha256sum "$work/src/$name" | cut -d' ' -f1), expected $sha256" >&2
  exit 1
fi
mv "$work/src/$name" "$tarball.tmp"
mv "$tarball.tmp" "$tarball"
echo "fetch_onnx.sh: $tarball verified" >&2
echo "$tarball"
