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
source "$root/tests/test_lib.sh"  # python, check, free_port, pids killed at exit

if ! PYTHONPATH="$root/tests" "$python" "$root/tests/distributed_training.py" write "$work" > "$work/write.txt" 2>&1; then
  tail -5 "$work/write.txt"
  echo "FAIL: could not write the model ($python needs torch and onnx: run scripts/setup.sh)"
  exit 1
fi

ports=()
while [ "${#ports[@]}" -lt 3 ]; do
  p=$(free_port)
  case " ${ports[*]} " in *" $p "*) ;; *) ports+=("$p") ;; esac
done
spec="ps=127.0.0.1:${ports[0]};worker=127.0.0.1:${ports[1]},127.0.0.1:${ports[2]}"
for task in "ps 0" "worker 0" "worker 1"; do
  set -- $task
  "$sluice" serve --cluster "$spec" --job "$1" --task "$2" --threads 1 > "$work/$1$2.log" 2>&1 &
  pids+=($!)
done
for log in "$work/ps0.log" "$work/worker0.log" "$work/worker1.log"; do
  for _ in $(seq 1 300); do grep -q " ready on " "$log" && break; sleep 0.1; done
  if ! grep -q " ready on " "$log"; then echo "FAIL: no ready line in $log:"; cat "$log"; exit 1; fi
done

feeds=(--feed "x=$work/x.pb" --feed "target=$work/target.pb")
timeout 120 "$sluice" train "$work/mlp.onnx" --steps "$steps" "${feeds[@]}" --threads 1 \
  --save "$work/local.onnx" > "$work/local.txt" 2>&1
check "local run" test "$?" = 0
timeout 120 "$sluice" train "$work/mlp.onnx" --steps "$steps" "${feeds[@]}" \
  --target "grpc://127.0.0.1:${ports[0]}" --save "$work/cluster.onnx" > "$work/cluster.txt" 2>&1
check "cluster run" test "$?" = 0
head -3 "$work/cluster.txt"
check "the cluster run is data-parallel over both workers" \
  grep -q "^data-parallel: 2 replicas on job worker, variables on /job:ps/task:0" "$work/cluster.txt"
check "loss curve and trained weights equal the single-process ones to 1e-5" \
  "$python" "$root/tests/distributed_training.py" compare "$work/local.txt" "$work/local.onnx" \
  "$work/cluster.txt" "$work/cluster.onnx"

# The same through the C API, from Python's sluice.Trainer(target=...): the first losses agree.
SLUICE_C_LIBRARY="$root/c_api/libsluice_c.so" PYTHONPATH="$root/c_api/python" PYTHONDONTWRITEBYTECODE=1 \
  timeout 120 "$python" - "$work" "grpc://127.0.0.1:${ports[0]}" > "$work/python.txt" 2>&1 <<'PY'
import re, sys
import numpy as np
import onnx
from onnx import numpy_helper
import sluice
work, target = sys.argv[1], sys.argv[2]
feeds = {n: numpy_helper.to_array(onnx.load_tensor("%s/%s.pb" % (work, n))) for n in ("x", "target")}
trainer = sluice.Trainer(work + "/mlp.onnx", target=target)
trainer.initialize()
got = [float(trainer.step(feeds)["loss"]) for _ in range(3)]
want = [float(m.group(1)) for m in re.finditer(r"^step \d+ loss=(\S+)$", open(work + "/local.txt").read(), re.M)][:3]
print("python cluster losses", got, "local", want)
assert np.allclose(got, want, rtol=1e-5, atol=0), (got, want)
PY
status=$?
cat "$work/python.txt"
check "Python sluice.Trainer(target=...) trains on the cluster with the same losses" test "$status" = 0

# Through the worker task's master too, and with a batch of 3 rows, which 2 replicas cannot share.
m="$root/tests/testdata/onnx"
timeout 60 "$sluice" train "$m/train_linear.onnx" --steps 1 --feed "x=$m/train_linear_x.pb" \
  --feed "t=$m/train_linear_t.pb" --target "grpc://127.0.0.1:${ports[1]}" > "$work/odd.txt" 2>&1
status=$?
cat "$work/odd.txt"
check "an uneven batch fails naming the input" \
  bash -c "[ $status = 1 ] && grep -q \"input 't' has 3 rows along dimension 0, which do not split evenly over 2 replicas\" '$work/odd.txt'"

[ "$fail" = 0 ] && echo "PASS" || exit 1
