#!/usr/bin/env bash
# GridSample against torch's grid_sample for every mode, padding mode and align_corners
# (tests/grid_sample_torch.py).
set -uo pipefail
root="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-sluice}"
source "$root/tests/test_lib.sh"
require_python torch onnx numpy
"$python" "$root/tests/grid_sample_torch.py" "$root/tools/sluice" "${TEST_TMPDIR:-$(mktemp -d)}/grid_sample"
