#!/usr/bin/env bash
# Sluice against ONNX Runtime on the same machine, in the same run: ResNet-18, MobileNetV2 and
# SqueezeNet exported from torch (random weights), at 1 and 2 threads. Prints a table of median
# run times and the ratio sluice/ort (below 1 means Sluice is faster).
#   bench/compare_ort.sh [ITERS] [cnn|eltwise]
# "eltwise" compares one-node Exp, Tanh and Sigmoid models on a float [4096, 1024] instead.
set -euo pipefail
cd "$(dirname "$0")/.."
iters=${1:-20}
set_name=${2:-cnn}
work=out/bench
mkdir -p "$work"
peers=bench/.peers
if [ ! -d "$peers/node_modules/onnxruntime-node" ]; then
  # --ignore-scripts: its install script fetches GPU parts, which fails offline.
  mkdir -p "$peers" && (cd "$peers" && npm install --silent --ignore-scripts --no-audit --no-fund onnxruntime-node >/dev/null)
fi
if [ "$set_name" = eltwise ]; then
  models=(Exp Tanh Sigmoid)
  for m in "${models[@]}"; do
    mkdir -p "$work/${m}_opset13"
    /usr/bin/python3 - "$m" "$work/${m}_opset13/model.onnx" <<'PY'
import sys
from onnx import TensorProto, helper, save
op, path = sys.argv[1], sys.argv[2]
shape = [4096, 1024]
graph = helper.make_graph([helper.make_node(op, ["x"], ["y"])], op,
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
PY
  done
else
  models=(resnet18 mobilenet_v2 squeezenet1_0)
  for m in "${models[@]}"; do
    [ -f "$work/${m}_opset13/model.onnx" ] || /usr/bin/python3 scripts/export_torch_models.py "$work" --only "$m" --opsets 13 >/dev/null
  done
fi
bazel build -c opt //tools:sluice >/dev/null 2>&1
sluice=bazel-out/k8-opt/bin/tools/sluice  # bazel-bin follows whichever build ran last
printf "%-16s %7s %12s %12s %8s\n" model threads sluice_ms ort_ms ratio
for m in "${models[@]}"; do
  model="$work/${m}_opset13/model.onnx"
  for t in 1 2; do
    s=$("$sluice" bench "$model" --threads "$t" --iters "$iters" | tail -1)
    o=$(NODE_PATH="$peers/node_modules" node bench/ort_bench.js "$model" "$t" "$iters" | tail -1)
    sm=$(echo "$s" | sed 's/.*"median_ms": \([0-9.]*\).*/\1/')
    om=$(echo "$o" | sed 's/.*"median_ms":\([0-9.]*\).*/\1/')
    printf "%-16s %7s %12s %12s %8.2f\n" "$m" "$t" "$sm" "$om" "$(echo "$sm / $om" | bc -l)"
  done
done
