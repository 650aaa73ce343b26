#!/usr/bin/env bash
# Multi-process cluster on loopback: real `sluice serve` tasks on free ports they bind themselves,
# driven by `sluice run`, `test-onnx` and `bench` with --target. Checks that models split
# across tasks match the embedded session, control edges cross tasks, two clients share the
# cluster, unreachable targets fail fast, and the servers stop cleanly on SIGTERM. Every
# process started here is killed on exit; every client call is time-bounded.
set -uo pipefail
root="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-sluice}"
sluice="$root/tools/sluice"
work="${TEST_TMPDIR:-$(mktemp -d)}/cluster"
mkdir -p "$work"
CLIENT_TIMEOUT=60

source "$root/tests/test_lib.sh"  # check, json_is, start_cluster, pids killed at exit
# Two tasks on free ports (port 0, addresses exchanged through a cluster file: no race).
start_cluster "$work" "worker=2" --devices 2 --threads 2 || exit 1
cat "$work/worker_0.log" "$work/worker_1.log"
t0="grpc://${task_address[worker:0]}"
t1="grpc://${task_address[worker:1]}"
s0=${task_pid[worker:0]}
s1=${task_pid[worker:1]}

run() { timeout "$CLIENT_TIMEOUT" "$sluice" "$@"; }

# trace_has_both_tasks FILE: a Chrome trace with a track per device of both tasks, each with
# nodes, _Send and _Recv.
trace_has_both_tasks() {
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
ops = {}
for e in events:
    if e["ph"] == "X":
        ops.setdefault(names[e["pid"]], set()).add(e["cat"])
for task in (0, 1):
    devices = [d for d in ops if d.startswith(f"/job:worker/replica:0/task:{task}/device:CPU:")]
    assert devices, (task, sorted(ops))
    for d in devices:
        # The model's MatMul + Add layers run as one Gemm after the optimizer's fuse_matmul_add.
        assert {"_Send", "_Recv"} <= ops[d] and ops[d] & {"MatMul", "BatchMatMulV2", "Onnx>Gemm"}, (d, ops[d])
print("trace ok:", {d: sorted(o) for d, o in ops.items()})
PY
}


# The small MLP, cut by the pipeline policy: the same bytes as the embedded session.
mlp="$root/tests/testdata/onnx/mlp.onnx"
run run "$mlp" --output-dir "$work/mlp_embedded" > /dev/null
run run "$mlp" --target "$t0" --placement pipeline --show-placement --output-dir "$work/mlp_cluster" \
  --json > "$work/mlp.json"
cat "$work/mlp.json"
check "mlp split over two tasks matches the embedded session" \
  cmp "$work/mlp_embedded/output_0.pb" "$work/mlp_cluster/output_0.pb"
on_task() {  # on_task K: a Python test that a placement entry `p` has nodes on task K
  echo "p['device'].startswith('/job:worker/replica:0/task:$1/') and p['nodes'] > 0"
}
check "mlp has nodes on both tasks" \
  json_is "$work/mlp.json" "any($(on_task 0) for p in d['placement']) and any($(on_task 1) for p in d['placement'])"

# A deeper residual MLP with outputs from numpy.
if /usr/bin/python3 "$root/tests/cluster_models.py" "$work/models"; then
  deep="$work/models/deep"
  run test-onnx "$deep" --target "$t1" --placement pipeline --json - > "$work/deep_test.json"
  cat "$work/deep_test.json"
  check "deep model through task 1's master matches numpy" \
    json_is "$work/deep_test.json" "[(c['name'], c['outcome']) for c in d['cases']] == [('deep', 'pass')]"
  run run "$deep/model.onnx" --input "$deep/x.pb" --output-dir "$work/deep_embedded" > /dev/null
  run run "$deep/model.onnx" --input "$deep/x.pb" --target "$t0" --placement pipeline \
    --show-placement --output-dir "$work/deep_cluster" --json > "$work/deep.json"
  cat "$work/deep.json"
  check "deep model pipelined over four devices of two tasks matches the embedded session" \
    cmp "$work/deep_embedded/output_0.pb" "$work/deep_cluster/output_0.pb"
  check "deep model uses all four devices" \
    json_is "$work/deep.json" "sorted(p['device'] for p in d['placement'] if p['nodes'] > 0) ==
      ['/job:worker/replica:0/task:%d/device:CPU:%d' % (t, c) for t in (0, 1) for c in (0, 1)]"
  run run "$deep/model.onnx" --input "$deep/x.pb" --target "$t0" --placement pipeline \
    --trace "$work/trace.json" > "$work/trace.txt" 2>&1
  cat "$work/trace.txt"
  check "run --trace: a track per device of both tasks, with nodes, _Send and _Recv on each" \
    trace_has_both_tasks "$work/trace.json"
  run test-onnx "$deep" --target "$t1" --placement pipeline --trace "$work/test_trace.json" \
    > "$work/test_trace.txt" 2>&1
  cat "$work/test_trace.txt"
  check "test-onnx --trace: the same from the case's run" trace_has_both_tasks "$work/test_trace.json"
  run bench "$deep/model.onnx" --target "$t0" --placement pipeline --iters 3 --warmup 1 \
    --trace "$work/bench_trace.json" > "$work/bench_trace.txt" 2>&1
  cat "$work/bench_trace.txt"
  check "bench --trace: the same from a run after the timed ones" \
    trace_has_both_tasks "$work/bench_trace.json"
  printf 'layer[0-3]/*  /job:worker/task:1\n*  /job:worker/task:0/device:CPU:1  # the rest\n' > "$work/map.txt"
  run run "$deep/model.onnx" --input "$deep/x.pb" --target "$t0" --device-map "$work/map.txt" \
    --show-placement --output-dir "$work/deep_mapped" --json > "$work/mapped.json"
  cat "$work/mapped.json"
  check "device map places by node name and matches" \
    cmp "$work/deep_embedded/output_0.pb" "$work/deep_mapped/output_0.pb"
  check "device map: the mapped devices only" \
    json_is "$work/mapped.json" "sorted(p['device'] for p in d['placement']) ==
      ['/job:worker/replica:0/task:0/device:CPU:1', '/job:worker/replica:0/task:1/device:CPU:0']"
else
  echo "FAIL: could not write the deep model (python3-onnx missing?)"
  fail=1
fi

# Data and control edges in both directions between tasks:
#   a (task 0) --control--> b (task 1);  c = a + b on task 0;  d = -c on task 1 after ^b.
cat > "$work/edges.pbtxt" <<'PBTXT'
node { name: "a" op: "Const" device: "/job:worker/task:0"
       attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 3 } } } }
node { name: "b" op: "Const" input: "^a" device: "/job:worker/task:1"
       attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 4 } } } }
node { name: "c" op: "Add" input: "a" input: "b" device: "/job:worker/task:0"
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "d" op: "Neg" input: "c" input: "^b" device: "/job:worker/task:1"
       attr { key: "T" value { type: DT_FLOAT } } }
PBTXT
run run "$work/edges.pbtxt" --output c --output d --target "$t1" --show-placement --json > "$work/edges.json"
cat "$work/edges.json"
check "data and control edges cross tasks both ways" \
  json_is "$work/edges.json" "[(o['name'], o['dtype'], o['shape'], o['values']) for o in d['outputs']] ==
    [('c', 'float', [], [7]), ('d', 'float', [], [-7])]"
check "edges: nodes on both tasks" \
  json_is "$work/edges.json" "any($(on_task 0) for p in d['placement']) and any($(on_task 1) for p in d['placement'])"

# A 64 MiB tensor made on task 1 and summed on task 0: two processes of one machine, so it
# goes by the same-host path (process_vm_readv), and by gRPC where that is turned off.
cat > "$work/big.pbtxt" <<'PBTXT'
node { name: "dims" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
       attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 1 } } int64_val: 16777216 } } } }
node { name: "one" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 1 } } } }
node { name: "big" op: "Onnx>Expand" input: "one" input: "dims" device: "/job:worker/task:1"
       attr { key: "T" value { type: DT_FLOAT } } }
node { name: "sum" op: "Onnx>ReduceSum" input: "big" device: "/job:worker/task:0"
       attr { key: "T" value { type: DT_FLOAT } } attr { key: "Taxes" value { list { } } }
       attr { key: "keepdims" value { b: false } } }
PBTXT
run run "$work/big.pbtxt" --output sum --target "$t0" --json > "$work/big.json"
cat "$work/big.json"
check "a 64 MiB tensor crosses processes" json_is "$work/big.json" "d['outputs'][0]['values'] == [16777216]"

# The C API's TF_SetTarget, through the Python binding: ops placed on both tasks by TF_SetDevice.
SLUICE_C_LIBRARY="$root/c_api/libsluice_c.so" PYTHONPATH="$root/c_api/python" PYTHONDONTWRITEBYTECODE=1 \
  timeout "$CLIENT_TIMEOUT" /usr/bin/python3 - "$t0" > "$work/python.txt" 2>&1 <<'PY'
import sys
import numpy as np
import sluice
g = sluice.Graph()
x = g.placeholder("x", np.float32, shape=[None, 2])
w = g.constant(np.array([[1, -1], [2, 1]], np.float32))
xw = g.op("MatMul", [x, w], device="/job:worker/task:1")
y = g.op("Relu", [xw], device="/job:worker/task:0")
with sluice.Session(g, target=sys.argv[1]) as sess:
    names = sorted(d.name for d in sess.list_devices())
    print(names)
    assert len(names) == 4, names
    out = sess.run(y, {x: np.array([[1, 2], [3, -1]], np.float32)})
    print(out)
    assert np.array_equal(out, np.array([[5, 1], [1, 0]], np.float32)), out
print("python ok")
PY
cat "$work/python.txt"
check "C API TF_SetTarget (Python Session(target=...)) runs across tasks" grep -q "python ok" "$work/python.txt"

# ONNX Runtime's API on the cluster: one InferenceSession pipelined over both tasks, run from
# four threads at once; every result equals the in-process session's.
SLUICE_C_LIBRARY="$root/c_api/libsluice_c.so" PYTHONPATH="$root/c_api/python" PYTHONDONTWRITEBYTECODE=1 \
  timeout "$CLIENT_TIMEOUT" /usr/bin/python3 - "$t0" "$mlp" > "$work/python_threads.txt" 2>&1 <<'PY'
import concurrent.futures
import sys
import numpy as np
import sluice
target, model = sys.argv[1], sys.argv[2]
local = sluice.InferenceSession(model)
remote = sluice.InferenceSession(model, target=target, config={"placement": {"policy": "pipeline"}})
arg = remote.get_inputs()[0]
shape = [d if isinstance(d, int) else 2 for d in arg.shape]
rng = np.random.default_rng(0)
batches = [rng.standard_normal(shape).astype(np.float32) for _ in range(40)]
with concurrent.futures.ThreadPoolExecutor(4) as pool:
    got = list(pool.map(lambda b: remote.run(None, {arg.name: b})[0], batches))
for b, r in zip(batches, got):
    want = local.run(None, {arg.name: b})[0]
    assert np.allclose(r, want, rtol=1e-5, atol=1e-6), (r, want)
print("python threads ok")
PY
cat "$work/python_threads.txt"
check "Python InferenceSession(target=..., pipeline placement) from four threads at once" \
  grep -q "python threads ok" "$work/python_threads.txt"

# Two clients at once, one on each task's master, each pipelining over both tasks.
run bench "$mlp" --target "$t0" --placement pipeline --iters 200 --warmup 1 --json > "$work/bench0.json" &
b0=$!
run bench "$mlp" --target "$t1" --placement pipeline --iters 200 --warmup 1 --json > "$work/bench1.json" &
b1=$!
wait $b0; r0=$?
wait $b1; r1=$?
cat "$work/bench0.json" "$work/bench1.json"
check "two clients at once" test "$r0$r1" = "00"
check "client on task 0: 200 timed runs" json_is "$work/bench0.json" "d['iters'] == 200 and d['min_ms'] > 0"
check "client on task 1: 200 timed runs" json_is "$work/bench1.json" "d['iters'] == 200 and d['min_ms'] > 0"

# One client with four threads at once, pipelining over both tasks: latency percentiles in
# order and a throughput.
run bench "$mlp" --target "$t0" --placement pipeline --iters 200 --warmup 1 --concurrency 4 --json \
  > "$work/bench_concurrent.json"
check "bench --concurrency 4: 200 runs, runs_per_s and p50 <= p90 <= p99" json_is "$work/bench_concurrent.json" \
  "d['concurrency'] == 4 and d['iters'] == 200 and d['runs_per_s'] > 0 and 0 < d['p50_ms'] <= d['p90_ms'] <= d['p99_ms']"

# A slow worker: task 1 pauses for a second (SIGSTOP, then SIGCONT: a long GC or swap pause)
# while a bench pipelines over both tasks; task 0's partitions wait for it and every run
# succeeds (a pause shorter than the keepalive timeout is slowness, not a failure).
run bench "$mlp" --target "$t0" --placement pipeline --iters 6000 --warmup 1 > "$work/slow.txt" 2>&1 &
bench=$!
sleep 1
kill -STOP "$s1"; sleep 1; kill -CONT "$s1"
wait "$bench"; code=$?
tail -1 "$work/slow.txt"
check "a partition waits for a worker paused for a second, and the bench succeeds" test "$code" = 0

# An unreachable target fails fast, naming it: a port held bound but not listening, so that
# connections to it are refused and nothing else can take it meanwhile.
"$python" -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); sys.stdout.flush(); time.sleep(3600)' \
  > "$work/refusing_port.txt" &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$work/refusing_port.txt" ] && break; sleep 0.1; done
bad="grpc://127.0.0.1:$(cat "$work/refusing_port.txt")"
start=$(date +%s)
run run "$mlp" --target "$bad" > "$work/bad.txt" 2>&1
code=$?
cat "$work/bad.txt"
check "unreachable target: exit 1 with UNAVAILABLE naming it, within 20 s" \
  bash -c "[ $code = 1 ] && grep -q UNAVAILABLE '$work/bad.txt' && grep -q '$bad' '$work/bad.txt' &&
           [ $(( $(date +%s) - start )) -le 20 ]"

# Authentication: the tasks share this test's SLUICE_CLUSTER_SECRET (tests/test_lib.sh); a
# client with another secret, or none, is refused on every call, and `serve` refuses to start
# without credentials unless told --insecure.

SLUICE_CLUSTER_SECRET=wrong-secret-of-enough-bytes run run "$mlp" --target "$t0" > "$work/wrong.txt" 2>&1
code=$?
cat "$work/wrong.txt"
check "a client with the wrong secret: exit 1 with UNAUTHENTICATED" \
  bash -c "[ $code = 1 ] && grep -q UNAUTHENTICATED '$work/wrong.txt'"
env -u SLUICE_CLUSTER_SECRET "$sluice" run "$mlp" --target "$t0" > "$work/none.txt" 2>&1
code=$?
check "a client without a secret: exit 1 with UNAUTHENTICATED" \
  bash -c "[ $code = 1 ] && grep -q UNAUTHENTICATED '$work/none.txt'"
env -u SLUICE_CLUSTER_SECRET "$sluice" serve --port 0 --job solo --task 0 > "$work/nocreds.txt" 2>&1
code=$?
cat "$work/nocreds.txt"
check "serve without credentials refuses to start (FAILED_PRECONDITION)" \
  bash -c "[ $code = 1 ] && grep -q FAILED_PRECONDITION '$work/nocreds.txt' && grep -q -- --insecure '$work/nocreds.txt'"

# Faults. A task that hangs (SIGSTOP) during a long bench: the client fails within 20 s,
# naming the task. Then the same for a task killed with -9, and after a restart of that task
# the same command works again with the other task untouched.
fault() {  # fault SIGNAL NAME: a bench on task 0's master, SIGNAL to task 1 mid-run.
  local start code
  run bench "$mlp" --target "$t0" --placement pipeline --iters 100000 --warmup 1 > "$work/fault_$2.txt" 2>&1 &
  local bench=$!
  sleep 2
  start=$(date +%s)
  kill "-$1" "$s1"
  wait "$bench"; code=$?
  cat "$work/fault_$2.txt"
  check "$2 task 1 mid-run: the client exits non-zero within 20 s naming the task" \
    bash -c "[ $code != 0 ] && [ $code != 124 ] && [ $(( $(date +%s) - start )) -le 20 ] &&
             grep -q 'UNAVAILABLE.*/job:worker/replica:0/task:1' '$work/fault_$2.txt'"
}
fault STOP hung
kill -CONT "$s1"
fault KILL killed
wait "$s1" 2>/dev/null
check "task 1 restarts on its address" restart_task "$work" worker 1 --devices 2 --threads 2
s1=${task_pid[worker:1]}
run run "$mlp" --target "$t0" --placement pipeline --show-placement --output-dir "$work/mlp_again" \
  --json > "$work/again.json"
cat "$work/again.json"
check "after the restart the same run works again, task 0 untouched" \
  cmp "$work/mlp_embedded/output_0.pb" "$work/mlp_again/output_0.pb"
check "after the restart task 1 runs its part again" \
  json_is "$work/again.json" "any($(on_task 1) for p in d['placement'])"

# SIGTERM stops both servers cleanly.
kill -TERM "$s0" "$s1"
for s in "$s0" "$s1"; do
  for _ in $(seq 1 100); do kill -0 "$s" 2>/dev/null || break; sleep 0.1; done
done
wait "$s0"; e0=$?
wait "$s1"; e1=$?
cat "$work/worker_0.log" "$work/worker_1.log"
check "servers stop on SIGTERM with status 0" test "$e0$e1" = 00
for t in 0 1; do
  serve_event "$work/worker_$t.log" stopped > "$work/stopped_$t.json"
  check "task $t says it stopped on SIGTERM" json_is "$work/stopped_$t.json" "d['signal'] == 'SIGTERM'"
done

[ $fail = 0 ] && echo "cluster test passed"
exit $fail
