#!/usr/bin/env bash
# Prints the node_modules root of an ONNX Runtime (npm onnxruntime-node) that runs its AVX2
# kernels on an AVX-512 machine, made once from PEERS (the npm install of bench/zoo.sh and
# scripts/npm_models.sh) under bench/.peers-avx2 by bench/ort_avx2.py. With SLUICE_MAX_ISA=avx2
# on Sluice's side, both runtimes then run the kernels an AVX2-only CPU gets.
#   peers=$(bench/ort_avx2.sh bench/.peers)
set -euo pipefail
cd "$(dirname "$0")/.."
peers=${1:-bench/.peers}
lib=node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1
capped=bench/.peers-avx2
[ -f "$peers/$lib" ] || { echo "ort_avx2: no $peers/$lib (install onnxruntime-node there first)" >&2; exit 1; }
if [ ! -f "$capped/$lib" ] || [ "$peers/$lib" -nt "$capped/$lib" ]; then
  rm -rf "$capped"
  mkdir -p "$capped"
  cp -a "$peers/node_modules" "$capped/"
  /usr/bin/python3 bench/ort_avx2.py "$peers/$lib" "$capped/$lib" >&2
fi
echo "$capped"
