#!/usr/bin/env bash
# `sluice train` against torch: an MLP and a Conv+BatchNormalization(training) CNN, each trained
# for 100 steps with SGD and with ONNX Momentum (standard and nesterov), from the same weights
# and data as torch's; the per-step losses and the trained weights must match torch's
# (tests/torch_training.py).
set -uo pipefail
root="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-sluice}"
work="${TEST_TMPDIR:-$(mktemp -d)}"
source "$root/tests/test_lib.sh"
require_python torch onnx
"$python" "$root/tests/torch_training.py" "$root/tools/sluice" "$work/models" 100
