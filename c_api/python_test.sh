#!/bin/bash
# Runs a test of the Python binding ($1, relative to the workspace) against the libsluice_c.so
# built by Bazel. Debian's python3 on purpose: it has numpy (and python3-protobuf, which
# config_test.py decodes with), which the first python3 on PATH may lack.
set -euo pipefail

root="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-sluice}"
export SLUICE_C_LIBRARY="${root}/c_api/libsluice_c.so"
export PYTHONPATH="${root}/c_api/python"
export PYTHONDONTWRITEBYTECODE=1  # The runfiles tree is read-only.
exec /usr/bin/python3 "${root}/${1:?which test}" -v
