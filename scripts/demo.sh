#!/usr/bin/env bash
# The main job: build the `sluice` command and run a model on the embedded local cluster
# (one worker with two CPU devices, the graph split between them).
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build //tools:sluice
bazel-bin/tools/sluice run examples/mlp.pbtxt --input x=examples/mlp_x.pb --devices 2 \
  --output-dir out/mlp
echo "outputs written to out/mlp/"
