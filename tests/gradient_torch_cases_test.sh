#!/usr/bin/env bash
# ONNX Gradient nodes against torch autograd: tests/gradient_torch_cases.py writes ONNX test
# cases (MLPs, Conv+BatchNormalization(training) nets, second-order Gradients, a Gradient
# feeding Momentum) whose expected outputs torch computes in the same run, then requires
# `sluice test-onnx` to pass every one and prints the largest difference from torch per case.
set -uo pipefail
root="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-sluice}"
work="${TEST_TMPDIR:-$(mktemp -d)}"
source "$root/tests/test_lib.sh"
require_python torch onnx
"$python" "$root/tests/gradient_torch_cases.py" "$root/tools/sluice" "$work/gradient_cases"
