#!/usr/bin/env bash
# `sluice train` on a 1-ps, 2-worker cluster of real `sluice serve` processes on loopback: the
# data-parallel loss curve and trained weights must equal the single-process ones to 1e-5 for
# the same model, seed and data (tests/distributed_training.py); a batch that does not split
# evenly is an error naming the input. Every process started here is killed on exit.
set -uo pipefail
root="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-sluice}"
sluice="$root/tools/sluice"
work="${TEST_TMPDIR:-$(mktemp -d)}/distributed_training"
mkdir -p "$work"
steps=30
source "$root/tests/test_lib.sh"  # python, check, json_is, start_cluster, pids killed at exit

if ! PYTHONPATH="$root/tests" "$python" "$root/tests/distributed_training.py" write "$work" > "$work/write.txt" 2>&1; then
  tail -5 "$work/write.txt"
  echo "FAIL: could not write the model ($python needs torch and onnx: run scripts/setup.sh)"
  exit 1
fi

# A ps and two workers on free ports (port 0, addresses exchanged through a cluster file).
start_cluster "$work/cluster" "ps=1;worker=2" --threads 1 || exit 1
ps0="grpc://${task_address[ps:0]}"

feeds=(--feed "x=$work/x.pb" --feed "target=$work/target.pb")
timeout 120 "$sluice" train "$work/mlp.onnx" --steps "$steps" "${feeds[@]}" --threads 1 \
  --save "$work/local.onnx" --json > "$work/local.json"
check "local run" test "$?" = 0
timeout 120 "$sluice" train "$work/mlp.onnx" --steps "$steps" "${feeds[@]}" \
  --target "$ps0" --save "$work/cluster.onnx" --json > "$work/cluster.json"
check "cluster run" test "$?" = 0
check "the local run is one replica, every step with a loss" \
  json_is "$work/local.json" "d['replicas'] == 1 and [s['step'] for s in d['steps'] if 'loss' in s['outputs']] == list(range(1, $steps + 1))"
check "the cluster run is data-parallel over both workers, every step with a loss" \
  json_is "$work/cluster.json" "d['replicas'] == 2 and [s['step'] for s in d['steps'] if 'loss' in s['outputs']] == list(range(1, $steps + 1))"
check "loss curve and trained weights equal the single-process ones to 1e-5" \
  "$python" "$root/tests/distributed_training.py" compare "$work/local.json" "$work/local.onnx" \
  "$work/cluster.json" "$work/cluster.onnx"

# All-reduce: each worker holds its own weights; small buckets, so several ring all-reduces.
timeout 120 "$sluice" train "$work/mlp.onnx" --steps "$steps" "${feeds[@]}" --strategy allreduce \
  --bucket-mb 0.001 --target "$ps0" --save "$work/allreduce.onnx" --json > "$work/allreduce.json"
check "all-reduce run" test "$?" = 0
check "the all-reduce run is data-parallel over both workers" \
  json_is "$work/allreduce.json" "d['replicas'] == 2 and len(d['steps']) == $steps"
check "all-reduce: loss curve and trained weights equal the single-process ones to 1e-5" \
  "$python" "$root/tests/distributed_training.py" compare "$work/local.json" "$work/local.onnx" \
  "$work/allreduce.json" "$work/allreduce.onnx"
# A scalar algorithm input (not split: every replica reads it) given as a --feed file, on
# both strategies: the model reports loss * s as well.
"$python" - "$work" <<'PY'
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
work = sys.argv[1]
m = onnx.load(work + "/mlp.onnx")
a = m.training_info[0].algorithm
a.input.append(helper.make_tensor_value_info("s", TensorProto.FLOAT, []))
a.node.append(helper.make_node("Mul", ["loss", "s"], ["scaled"]))
a.output.append(helper.make_tensor_value_info("scaled", TensorProto.FLOAT, []))
onnx.save(m, work + "/mlp_scaled.onnx")
open(work + "/s.pb", "wb").write(numpy_helper.from_array(np.array(2, np.float32), "s").SerializeToString())
PY
for strategy in ps allreduce; do
  timeout 120 "$sluice" train "$work/mlp_scaled.onnx" --steps 2 "${feeds[@]}" --feed "s=$work/s.pb" \
    --strategy "$strategy" --target "$ps0" --json > "$work/scaled_$strategy.json" 2> "$work/scaled_$strategy.err"
  cat "$work/scaled_$strategy.err"
  check "$strategy: a scalar --feed reaches every replica" \
    json_is "$work/scaled_$strategy.json" "d['replicas'] == 2 and all(abs(s['outputs']['scaled'] - 2 * s['outputs']['loss']) <= 1e-6 * abs(s['outputs']['loss']) for s in d['steps'])"
done

# --trace: one more step, traced: a Chrome trace with a track per worker, and the all-reduce
# that ran past the backward pass, per replica and for the step.
timeout 120 "$sluice" train "$work/mlp.onnx" --steps 2 "${feeds[@]}" --strategy allreduce --bucket-mb 0.001 \
  --target "$ps0" --trace "$work/step_trace.json" --json > "$work/traced.json"
check "all-reduce --trace run" test "$?" = 0
check "the exposed all-reduce covers each replica and the step, within each step's time" \
  json_is "$work/traced.json" "sorted(e['device'].split('/')[-2] if e['device'] != 'step' else 'step' for e in d['exposed']) == ['step', 'task:0', 'task:1'] and all(0 <= e['exposed_ms'] <= e['step_ms'] for e in d['exposed'])"
check "the trace has a track per worker task, their all-reduce nodes included" \
  json_is "$work/step_trace.json" "sorted(e['args']['name'].split('/')[3] for e in d['traceEvents'] if e.get('name') == 'process_name') == ['task:0', 'task:1'] and any(e.get('name', '').startswith('allreduce/') for e in d['traceEvents'])"
timeout 60 "$sluice" train "$work/mlp.onnx" --steps 1 "${feeds[@]}" --strategy ring > "$work/bad_strategy.txt" 2>&1
check "an unknown strategy is refused, naming the choices" \
  bash -c "grep -q \"unknown strategy 'ring' (auto, allreduce or ps)\" '$work/bad_strategy.txt'"

# The same through the C API, from Python's sluice.Trainer(target=...): the first losses agree.
SLUICE_C_LIBRARY="$root/c_api/libsluice_c.so" PYTHONPATH="$root/c_api/python" PYTHONDONTWRITEBYTECODE=1 \
  timeout 120 "$python" - "$work" "$ps0" > "$work/python.txt" 2>&1 <<'PY'
import json, sys
import numpy as np
import onnx
from onnx import numpy_helper
import sluice
work, target = sys.argv[1], sys.argv[2]
feeds = {n: numpy_helper.to_array(onnx.load_tensor("%s/%s.pb" % (work, n))) for n in ("x", "target")}
trainer = sluice.Trainer(work + "/mlp.onnx", target=target)
trainer.initialize()
got = [float(trainer.step(feeds)["loss"]) for _ in range(3)]
want = [s["outputs"]["loss"] for s in json.load(open(work + "/local.json"))["steps"]][:3]
print("python cluster losses", got, "local", want)
assert np.allclose(got, want, rtol=1e-5, atol=0), (got, want)
PY
status=$?
cat "$work/python.txt"
check "Python sluice.Trainer(target=...) trains on the cluster with the same losses" test "$status" = 0

# Through the worker task's master too, and with a batch of 3 rows, which 2 replicas cannot share.
m="$root/tests/testdata/onnx"
timeout 60 "$sluice" train "$m/train_linear.onnx" --steps 1 --feed "x=$m/train_linear_x.pb" \
  --feed "t=$m/train_linear_t.pb" --target "grpc://${task_address[worker:0]}" > "$work/odd.txt" 2>&1
status=$?
cat "$work/odd.txt"
check "an uneven batch fails naming the input" \
  bash -c "[ $status = 1 ] && grep -q \"input 't' has 3 rows along dimension 0, which do not split evenly over 2 replicas\" '$work/odd.txt'"

# The --feed files become each replica's constants (sent once, with the graph): a file of the
# wrong dtype or shape is refused there, naming the input, as a fed one would be.
"$python" - "$work" <<'PY'
import sys
import numpy as np
from onnx import numpy_helper
import onnx
x = numpy_helper.to_array(onnx.load_tensor(sys.argv[1] + "/x.pb"))
open(sys.argv[1] + "/x_f64.pb", "wb").write(numpy_helper.from_array(x.astype(np.float64), "x").SerializeToString())
open(sys.argv[1] + "/x_wide.pb", "wb").write(numpy_helper.from_array(np.concatenate([x, x], axis=1), "x").SerializeToString())
PY
timeout 60 "$sluice" train "$work/mlp.onnx" --steps 1 --feed "x=$work/x_f64.pb" --feed "target=$work/target.pb" \
  --strategy allreduce --target "$ps0" > "$work/f64.txt" 2>&1
status=$?
cat "$work/f64.txt"
check "an all-reduce feed file of the wrong dtype fails naming the input" \
  bash -c "[ $status = 1 ] && grep -q \"feed for input 'x' has dtype double but the model expects float\" '$work/f64.txt'"
timeout 60 "$sluice" train "$work/mlp.onnx" --steps 1 --feed "x=$work/x_wide.pb" --feed "target=$work/target.pb" \
  --target "$ps0" > "$work/wide.txt" 2>&1
status=$?
cat "$work/wide.txt"
check "a ps-path feed file of the wrong shape fails naming the input" \
  bash -c "[ $status = 1 ] && grep -q \"feed for input 'x' gives replica_0/\" '$work/wide.txt'"

[ "$fail" = 0 ] && echo "PASS" || exit 1
