#!/usr/bin/env bash
# Builds the Python wheel: dist/sluice-<version>-py3-none-<platform>.whl, holding the sluice
# package and libsluice_c.so (c_api/python/build_wheel.py; the version is //:VERSION's).
#
#   scripts/build_wheel.sh            # -> dist/sluice-0.1.0-py3-none-linux_x86_64.whl
#   scripts/build_wheel.sh -o DIR
#   python3 -m venv v && v/bin/pip install dist/sluice-*.whl
#
# The library links Debian's shared libraries (scripts/setup.sh installs them); numpy, the
# package's one dependency, is Debian's python3-numpy where the venv has none (the wheel's
# sluice-numpy.pth), or pip's with `pip install "sluice[numpy]"` where PyPI is reachable.
set -euo pipefail
cd "$(dirname "$0")/.."
out=dist
while getopts "o:h" opt; do
  case $opt in
    o) out=$OPTARG ;;
    *) sed -n '2,11p' "$0"; exit 2 ;;
  esac
done
bazel build //c_api:libsluice_c.so
/usr/bin/python3 c_api/python/build_wheel.py --library bazel-bin/c_api/libsluice_c.so \
  --package c_api/python/sluice --version-file VERSION --out "$out"
