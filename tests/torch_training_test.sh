#!/usr/bin/env bash
# `sluice train` against torch: an MLP and a Conv+BatchNormalization(training) CNN, each trained
# for 100 steps with SGD and with ONNX Momentum (standard and nesterov), from the same weights
# and data as torch's; the per-step losses and the trained weights must match torch's
# (tests/torch_training.py).
set -uo pipefail
root="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-sluice}"
work="${TEST_TMPDIR:-$(mktemp -d)}"
python=/usr/bin/python3
if ! "$python" -c "import torch, onnx" > "$work/import.txt" 2>&1; then
  tail -3 "$work/import.txt"
  echo "FAIL: $python cannot import torch and onnx; run scripts/setup.sh" \
    "(it installs Debian's python3-torch and python3-onnx)"
  exit 1
fi
"$python" "$root/tests/torch_training.py" "$root/tools/sluice" "$work/models" 100
