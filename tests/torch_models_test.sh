#!/usr/bin/env bash
# Real models against torch: exports torchvision and small torch models with Debian's
# python3-torch (scripts/export_torch_models.py; torch's own outputs are the reference),
# requires every case to PASS `sluice test-onnx`, runs each model through `sluice run` with
# its test inputs, and checks `sluice onnx` on them (check --full; an externalized and an
# internalized copy of one model still pass).
set -uo pipefail
root="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-sluice}"
sluice="$root/tools/sluice"
work="${TEST_TMPDIR:-$(mktemp -d)}"
source "$root/tests/test_lib.sh"  # python, json_is, start_cluster, pids killed at exit
CASES="resnet18_opset9 resnet18_opset13 resnet18_opset17 mobilenet_v2_opset9 mobilenet_v2_opset13
  mobilenet_v2_opset17 squeezenet1_0_opset9 squeezenet1_0_opset13 squeezenet1_0_opset17
  resnet18_training_opset15 transformer_opset13 transformer_opset17 lstm_opset9 lstm_opset13 lstm_opset17"

if ! "$python" -c "import torch, torchvision, onnx" > "$work/import.txt" 2>&1; then
  tail -3 "$work/import.txt"
  echo "FAIL: $python cannot import torch, torchvision and onnx; run scripts/setup.sh" \
    "(it installs Debian's python3-torch, python3-torchvision and python3-onnx)"
  exit 1
fi
models="$work/models"
if ! "$python" "$root/scripts/export_torch_models.py" "$models" > "$work/export.txt" 2>&1; then
  tail -20 "$work/export.txt"
  echo "FAIL: scripts/export_torch_models.py did not run"
  exit 1
fi

fail=0
for c in $CASES; do
  [ -f "$models/$c/model.onnx" ] || { echo "FAIL: the export wrote no case $c"; fail=1; }
done
passes() {  # passes RESULTS.json CASE: test-onnx --json's outcome for CASE is pass
  json_is "$1" "[c['outcome'] for c in d['cases'] if c['name'] == '$2'] == ['pass']"
}
"$sluice" test-onnx "$models" --json - > "$work/results.json"
echo "sluice test-onnx: $(json_value "$work/results.json" "'%(passed)d passed, %(failed)d failed, %(skipped)d skipped' % d")"
for c in $CASES; do
  passes "$work/results.json" "$c" > /dev/null || { echo "FAIL: $c must pass"; fail=1; }
done
json_is "$work/results.json" "d['failed'] == 0 and d['skipped'] == 0 and d['passed'] == len(d['cases'])" ||
  { echo "FAIL: every exported case must pass"; fail=1; }

# Each model through `sluice run`, fed its test inputs in order; every reference output must
# have its output file.
for dir in "$models"/*/; do
  c=$(basename "$dir")
  data="$dir/test_data_set_0"
  inputs=()
  for f in $(ls "$data" | grep '^input_[0-9]*\.pb$' | sort -t_ -k2 -n); do inputs+=(--input "$data/$f"); done
  out="$work/run/$c"
  if ! "$sluice" run "$dir/model.onnx" "${inputs[@]}" --output-dir "$out" > "$work/run_$c.txt" 2>&1; then
    tail -3 "$work/run_$c.txt"
    echo "FAIL: sluice run $c"
    fail=1
    continue
  fi
  for want in "$data"/output_*.pb; do
    [ -s "$out/$(basename "$want")" ] || { echo "FAIL: sluice run $c wrote no $(basename "$want")"; fail=1; }
  done
  msg=$("$sluice" onnx check "$dir/model.onnx" --full 2>&1) || { echo "FAIL: onnx check --full $c: $msg"; fail=1; }
done
echo "sluice run: $(ls -d "$work"/run/*/ 2>/dev/null | wc -l) models ran"

# `sluice onnx` on real models, each result again a test case with torch's outputs: resnet18
# with its weights in external data (one aligned file) and loaded back into one file; resnet18
# extracted from its input to its output; mobilenet_v2 with a symbolic batch dim.
ext="$work/external"
for c in resnet18_external resnet18_internal resnet18_extracted mobilenet_v2_batch; do
  mkdir -p "$ext/$c"
  cp -r "$models/${c%_*}_opset17/test_data_set_0" "$ext/$c/"
done
r18="$models/resnet18_opset17/model.onnx"
io=$("$python" -c "import onnx, sys; g = onnx.load(sys.argv[1]).graph
print(g.input[0].name, g.output[0].name)" "$r18")
"$sluice" onnx extract "$r18" -i "${io% *}" -o "${io#* }" "$ext/resnet18_extracted/model.onnx" > /dev/null ||
  { echo "FAIL: onnx extract"; fail=1; }
"$sluice" onnx set-dims "$models/mobilenet_v2_opset17/model.onnx" "$ext/mobilenet_v2_batch/model.onnx" \
  --input "${io% *}=batch,3,224,224" --json > "$work/set_dims.json" &&
  json_is "$work/set_dims.json" "d['outputs'][0]['dims'] == ['batch', 1000]" || { echo "FAIL: onnx set-dims"; fail=1; }
"$sluice" onnx externalize "$models/resnet18_opset17/model.onnx" "$ext/resnet18_external/model.onnx" ||
  { echo "FAIL: onnx externalize"; fail=1; }
"$sluice" onnx internalize "$ext/resnet18_external/model.onnx" "$ext/resnet18_internal/model.onnx" > /dev/null ||
  { echo "FAIL: onnx internalize"; fail=1; }
[ "$(stat -c %s "$ext/resnet18_external/model.onnx")" -lt 100000 ] || { echo "FAIL: weights left inline"; fail=1; }
"$sluice" test-onnx "$ext" --json - > "$work/external.json"
cat "$work/external.json"
for c in resnet18_external resnet18_internal resnet18_extracted mobilenet_v2_batch; do
  passes "$work/external.json" "$c" > /dev/null || { echo "FAIL: $c must pass"; fail=1; }
done

# Models of today's opsets: the opset-17 exports (a CNN, an LSTM, a transformer) taken to opsets
# 18, 21 and 22 by ONNX 1.17's version converter (`sluice onnx convert-version`), which rewrites
# them into the newer forms (ReduceMean's axes as an input, ...); each still matches torch's
# outputs, and passes the checker at IR 10.
newer="$work/newer"
for m in resnet18 mobilenet_v2 lstm transformer; do
  for o in 18 21 22; do
    c="${m}_to_opset$o"
    mkdir -p "$newer/$c"
    cp -r "$models/${m}_opset17/test_data_set_0" "$newer/$c/"
    "$sluice" onnx convert-version "$models/${m}_opset17/model.onnx" "$newer/$c/model.onnx" --opset "$o" \
      > "$work/$c.txt" 2>&1 || { tail -3 "$work/$c.txt"; echo "FAIL: convert-version $c"; fail=1; }
    "$python" -c "import onnx, sys; m = onnx.load(sys.argv[1])
assert [o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')] == [$o], m.opset_import" \
      "$newer/$c/model.onnx" || { echo "FAIL: $c is not at opset $o"; fail=1; }
    msg=$("$sluice" onnx check "$newer/$c/model.onnx" --full 2>&1) || { echo "FAIL: onnx check --full $c: $msg"; fail=1; }
  done
done
"$sluice" test-onnx "$newer" --json - > "$work/newer.json"
echo "newer opsets: $(json_value "$work/newer.json" "'%(passed)d passed, %(failed)d failed' % d")"
json_is "$work/newer.json" "d['failed'] == 0 and d['passed'] == 12" ||
  { cat "$work/newer.json"; echo "FAIL: every model converted to opsets 18, 21 and 22 must pass"; fail=1; }

# ResNet-18 on two `sluice serve` tasks on loopback (free ports), pipelined, traced: the output matches
# torch's, and the trace holds nodes, _Send and _Recv on both tasks.
start_cluster "$work/cluster" "worker=2" --threads 1 || exit 1
r18="$models/resnet18_opset13"
timeout 120 "$sluice" run "$r18/model.onnx" --input "$r18/test_data_set_0/input_0.pb" \
  --target "grpc://${task_address[worker:0]}" --placement pipeline --trace "$work/r18_trace.json" \
  --output-dir "$work/r18_cluster" > "$work/r18_cluster.txt" 2>&1 || { cat "$work/r18_cluster.txt"; fail=1; }
cat "$work/r18_cluster.txt"
# The cluster's output against torch's, with test-onnx's tolerance.
"$python" - "$r18/test_data_set_0/output_0.pb" "$work/r18_cluster/output_0.pb" <<'PY' || fail=1
import sys
import numpy as np
import onnx
from onnx import numpy_helper
want, got = (numpy_helper.to_array(onnx.load_tensor(f)) for f in sys.argv[1:3])
err = np.abs(got - want) - (1e-5 + 1e-3 * np.abs(want))
print("resnet18 on two tasks vs torch: max |diff| %.2e" % np.abs(got - want).max())
if got.shape != want.shape or err.max() > 0:
    print("FAIL: resnet18 on two serve tasks differs from torch")
    sys.exit(1)
PY
"$python" - "$work/r18_trace.json" <<'PY' || fail=1
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
ops = {}
for e in events:
    if e["ph"] == "X":
        ops.setdefault(names[e["pid"]].split("/device:")[0], set()).add(e["cat"])
for task in ("/job:worker/replica:0/task:0", "/job:worker/replica:0/task:1"):
    got = ops.get(task, set())
    if not {"_Send", "_Recv"} <= got or not any(op.startswith("Conv") or "Conv" in op for op in got):
        print("FAIL: the resnet18 trace lacks nodes, _Send or _Recv on", task, sorted(got))
        sys.exit(1)
print("resnet18 trace: nodes, _Send and _Recv on both tasks")
PY
exit $fail
