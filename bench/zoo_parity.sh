#!/usr/bin/env bash
# The model zoo's outputs against ONNX Runtime's: each model of bench/zoo_models.py (exported
# once, cached under out/zoo) runs in ONNX Runtime (npm onnxruntime-node, bench/ort_run.js) on
# seeded random inputs, whose outputs become a test case that `sluice test-onnx` must pass
# (|got - want| <= 1e-5 + 1e-3 |want|). Sluice's kernel choices (Winograd, merged groups, which
# library runs a product) differ by instruction set, so check both where the CPU has AVX-512:
#
#   bench/zoo_parity.sh                     # every model, Sluice on this CPU's kernels
#   bench/zoo_parity.sh -a resnet18 gru     # some models, Sluice under SLUICE_MAX_ISA=avx2
#
# Prints test-onnx's line per model and its "N passed, N failed" line; exits 1 when one failed.
set -uo pipefail
cd "$(dirname "$0")/.."
avx2=""
while getopts "ah" opt; do
  case $opt in
    a) avx2=1 ;;
    *) sed -n '2,11p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
work=out/zoo
mkdir -p "$work"
source bench/zoo_prepare.sh  # models, peers, sluice

cases=$work/parity
rm -rf "$cases"
for m in "${models[@]}"; do
  [ -f "$work/$m.onnx" ] || continue
  dir=$cases/$m
  mkdir -p "$dir"
  ln -s "$(realpath "$work/$m.onnx")" "$dir/model.onnx"
  /usr/bin/python3 scripts/npm_models.py inputs "$dir" "" &&
    NODE_PATH="$peers/node_modules" node bench/ort_run.js "$dir/model.onnx" "$dir/inputs.json" "$dir/ort_outputs.json" &&
    /usr/bin/python3 scripts/npm_models.py outputs "$dir" || { echo "FAIL $m: no reference outputs"; rm -rf "$dir"; }
done
[ -z "$avx2" ] || export SLUICE_MAX_ISA=avx2
"$sluice" test-onnx "$cases"
