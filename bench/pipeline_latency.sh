#!/usr/bin/env bash
# The latency a 2-task pipeline adds over the embedded session for the same model: the small
# MLP (tests/testdata/onnx/mlp.onnx) and ResNet-18 exported from torch, each timed by
# `sluice bench` in an embedded session and then through two `sluice serve` tasks on loopback
# with --placement pipeline, in the same run. Prints median ms and the difference.
#   bench/pipeline_latency.sh [ITERS]
set -euo pipefail
cd "$(dirname "$0")/.."
iters=${1:-50}
if ! log=$(bazel build -c opt //tools:sluice 2>&1); then echo "$log" | tail -20; exit 1; fi
sluice=bazel-out/k8-opt/bin/tools/sluice
work=out/bench
mkdir -p "$work"
r18=out/models/resnet18_opset13/model.onnx
[ -f "$r18" ] || /usr/bin/python3 scripts/export_torch_models.py out/models --only resnet18 --opsets 13 >/dev/null

free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
p0=$(free_port); p1=$(free_port)
while [ "$p1" = "$p0" ]; do p1=$(free_port); done
spec="worker=127.0.0.1:$p0,127.0.0.1:$p1"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null' EXIT
for t in 0 1; do
  "$sluice" serve --insecure --cluster "$spec" --job worker --task $t --threads 1 > "$work/pipeline_task$t.log" 2>&1 &
  pids+=($!)
done
for t in 0 1; do
  for _ in $(seq 1 300); do grep -q " ready on " "$work/pipeline_task$t.log" && break; sleep 0.1; done
done

median() { sed -n 's/.*"median_ms": \([0-9.]*\).*/\1/p' | tail -1; }
printf "%-14s %12s %12s %10s\n" model embedded_ms pipeline_ms added_ms
for m in tests/testdata/onnx/mlp.onnx "$r18"; do
  e=$("$sluice" bench "$m" --threads 1 --iters "$iters" | median)
  p=$("$sluice" bench "$m" --threads 1 --iters "$iters" --target "grpc://127.0.0.1:$p0" --placement pipeline | median)
  printf "%-14s %12.3f %12.3f %10.3f\n" "$(basename "$(dirname "$m")")/$(basename "$m" .onnx)" "$e" "$p" \
    "$(echo "$p - $e" | bc -l)"
done
