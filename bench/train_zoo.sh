#!/usr/bin/env bash
# Training speed and memory against PyTorch on this machine (bench/train_zoo.py has the
# details): ResNet-18/50, MobileNetV2, EfficientNet-B0 and a BERT-style encoder at batch 8, at
# 1 and 2 threads, Sluice and PyTorch alternating. Arguments go to train_zoo.py:
#   bench/train_zoo.sh                          # all models, 1 and 2 threads
#   bench/train_zoo.sh --models resnet18 --threads 1 --rounds 3
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x bazel-bin/tools/sluice ] || bazel build -c opt //tools:sluice
exec /usr/bin/python3 bench/train_zoo.py "$@"
