#!/bin/bash
# Runs the Python binding's tests against the libsluice_c.so built by Bazel. Debian's python3
# on purpose: it has numpy, which the first python3 on PATH may lack.
set -euo pipefail

root="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-sluice}"
export SLUICE_C_LIBRARY="${root}/c_api/libsluice_c.so"
export PYTHONPATH="${root}/c_api/python"
export PYTHONDONTWRITEBYTECODE=1  # The runfiles tree is read-only.
exec /usr/bin/python3 "${root}/c_api/python/sluice_test.py" -v
