#!/usr/bin/env bash
# The main job: an ONNX model (ResNet-18 exported by torch, random weights) on the embedded
# local cluster: one in-process master and worker with two CPU devices, the same code paths a
# multi-machine cluster uses. Prints the outputs, then checks them against torch's.
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build //tools:sluice
sluice=bazel-bin/tools/sluice
case_dir=out/models/resnet18_opset13
if [ ! -f "$case_dir/model.onnx" ]; then
  /usr/bin/python3 scripts/export_torch_models.py out/models --only resnet18 --opsets 13
fi
# Split the model across the two devices, and say where each part ran.
placement=(--placement pipeline --show-placement)
"$sluice" run "$case_dir/model.onnx" --input "$case_dir/test_data_set_0/input_0.pb" \
  --devices 2 "${placement[@]}" --output-dir out/resnet18
echo "outputs written to out/resnet18/; comparing with torch:"
"$sluice" test-onnx "$case_dir"
