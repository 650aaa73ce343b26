#!/usr/bin/env bash
# Checkpoints and recovery with real `sluice serve` tasks: two workers train the MLP with
# all-reduce, checkpointing every 10 steps; worker 1 is killed with SIGKILL mid-run and started
# again on its port; `sluice train --restart-on-failure` waits for it, resumes from the last
# checkpoint (redoing at most 10 steps) and ends with the same weights as an uninterrupted run.
# A truncated checkpoint is passed over with a message naming it. Every process started here
# is killed on exit.
set -uo pipefail
root="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-sluice}"
sluice="$root/tools/sluice"
work="${TEST_TMPDIR:-$(mktemp -d)}/checkpoint_restart"
rm -rf "$work" && mkdir -p "$work"
steps=600
source "$root/tests/test_lib.sh"  # python, check, start_cluster, restart_task, pids killed at exit

if ! PYTHONPATH="$root/tests" "$python" "$root/tests/distributed_training.py" write "$work" > "$work/write.txt" 2>&1; then
  tail -5 "$work/write.txt"
  echo "FAIL: could not write the model ($python needs torch and onnx: run scripts/setup.sh)"
  exit 1
fi
start_cluster "$work/cluster" "worker=2" --threads 1 || exit 1
target="grpc://${task_address[worker:0]}"
train=("$sluice" train "$work/mlp.onnx" --steps "$steps" --feed "x=$work/x.pb" --feed "target=$work/target.pb"
       --target "$target")

timeout 300 "${train[@]}" --save "$work/straight.onnx" > "$work/straight.txt" 2>&1
check "an uninterrupted all-reduce run" test "$?" = 0

"${train[@]}" --checkpoint-dir "$work/ckpt" --checkpoint-every 10 --restart-on-failure --restart-wait 60 \
  --save "$work/restarted.onnx" > "$work/restarted.txt" 2> "$work/restarted.err" &
trainer=$!
pids+=("$trainer")
for _ in $(seq 1 600); do
  grep -q "^step 100 " "$work/restarted.txt" 2>/dev/null && break
  sleep 0.05
done
kill -9 "${task_pid[worker:1]}"
killed_after=$(grep -c "^step " "$work/restarted.txt")
sleep 2
restart_task "$work/cluster" worker 1 --threads 1
timeout 300 tail --pid="$trainer" -f /dev/null
wait "$trainer"
status=$?
cat "$work/restarted.err"
grep "resumed" "$work/restarted.txt"
check "the run ends well after a worker was killed and started again" test "$status" = 0
check "it said why it waited" grep -q "waiting up to 60 s for the cluster" "$work/restarted.err"
resumed=$(sed -n 's/^resumed from .* (step \([0-9]*\))$/\1/p' "$work/restarted.txt" | tail -1)
echo "killed after $killed_after step lines; resumed from step ${resumed:-none}"
check "resumed from a checkpoint at most 10 steps back" \
  bash -c "[ -n '$resumed' ] && [ '$resumed' -ge $((killed_after - 11)) ] && [ '$((resumed % 10))' = 0 ]"
check "every step ran, the last one once" bash -c "[ \$(grep -c '^step $steps ' '$work/restarted.txt') = 1 ]"
check "the weights equal the uninterrupted run's" "$python" - "$work/straight.onnx" "$work/restarted.onnx" <<'PY'
import sys
import numpy as np
import onnx
from onnx import numpy_helper
a, b = ({t.name: numpy_helper.to_array(t) for t in onnx.load(p).graph.initializer} for p in sys.argv[1:3])
worst = max(float(np.abs(a[k].astype(np.float64) - b[k]).max()) for k in a)
print("largest weight difference", worst)
sys.exit(0 if worst == 0.0 else 1)
PY

# A truncated latest checkpoint: passed over, naming it, for the one before.
last=$(ls "$work/ckpt"/ckpt-*.onnx | sort | tail -1)
truncate -s 100 "$last"
timeout 120 "${train[@]}" --checkpoint-dir "$work/ckpt" --json > "$work/after.json" 2> "$work/after.err"
check "a run with a truncated checkpoint works" test "$?" = 0
cat "$work/after.err"
check "it names the truncated file" grep -q "checkpoint passed over: '$last' (step [0-9]*) holds 100 bytes" "$work/after.err"
check "and resumes from the one before" json_is "$work/after.json" "d['resumed_from'] == $steps - 10"

[ "$fail" = 0 ] && echo "PASS" || exit 1
