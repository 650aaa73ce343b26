#!/usr/bin/env bash
# `sluice train` of torch's LSTM, GRU and RNN (exported by torch.onnx.export, wrapped by
# bench/train_model.py) against torch's SGD steps: the losses and the trained weights must match
# torch's (tests/rnn_torch_training.py).
set -uo pipefail
root="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-sluice}"
work="${TEST_TMPDIR:-$(mktemp -d)}"
source "$root/tests/test_lib.sh"
require_python torch onnx
"$python" "$root/tests/rnn_torch_training.py" "$root/tools/sluice" "$work/models" 5
