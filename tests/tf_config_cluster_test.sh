#!/usr/bin/env bash
# TensorFlow's cluster conventions on loopback: two `sluice serve` tasks started with nothing but
# TF_CONFIG (and the cluster secret every test shares) form a two-worker cluster, and
# `sluice run --target tf_config` from either task's environment matches the embedded session;
# a malformed TF_CONFIG is a usage error naming its key; `--cluster FILE` with a ClusterDef in
# text format starts a task, and one with a gap in its task numbers is refused. TF_CONFIG fixes
# the ports, so they are picked free beforehand and the start retried if one was taken since.
# Every process started here is killed on exit; every client call is time-bounded.
set -uo pipefail
root="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-sluice}"
sluice="$root/tools/sluice"
work="${TEST_TMPDIR:-$(mktemp -d)}/tf_config_cluster"
mkdir -p "$work"
CLIENT_TIMEOUT=60
ATTEMPTS=5

source "$root/tests/test_lib.sh"  # python, check, json_is, pids killed at exit
unset TF_CONFIG  # Only where this test sets it.

run() { timeout "$CLIENT_TIMEOUT" "$sluice" "$@"; }

# free_ports N: N distinct loopback ports that were free a moment ago.
free_ports() {
  "$python" - "$1" <<'PY'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

# await_ready LOG PID: true once LOG has serve's ready line; false when PID exits first (a port
# taken since it was picked) or after 30 s.
await_ready() {
  for _ in $(seq 1 300); do
    grep -q '"event": "ready"' "$1" 2>/dev/null && return 0
    kill -0 "$2" 2>/dev/null || { grep -q '"event": "ready"' "$1"; return; }
    sleep 0.1
  done
  return 1
}

# stop PID...: SIGTERM, then the exit statuses, all 0 for a clean stop.
stop() {
  local p codes=
  kill -TERM "$@" 2>/dev/null
  for p in "$@"; do wait "$p"; codes+=$?; done
  [ "$codes" = "$(printf '0%.0s' "$@")" ]
}

tf_config() {  # tf_config CLUSTER_JSON INDEX: TF_CONFIG for task INDEX of job worker
  echo "{\"cluster\": $1, \"task\": {\"type\": \"worker\", \"index\": $2}, \"environment\": \"cloud\"}"
}

# Two workers, each told only TF_CONFIG.
s0= s1=
for attempt in $(seq 1 $ATTEMPTS); do
  read -r p0 p1 < <(free_ports 2)
  cluster="{\"worker\": [\"127.0.0.1:$p0\", \"127.0.0.1:$p1\"]}"
  TF_CONFIG=$(tf_config "$cluster" 0) "$sluice" serve --json > "$work/worker_0.log" 2>&1 &
  s0=$!; pids+=($s0)
  TF_CONFIG=$(tf_config "$cluster" 1) "$sluice" serve --json > "$work/worker_1.log" 2>&1 &
  s1=$!; pids+=($s1)
  if await_ready "$work/worker_0.log" "$s0" && await_ready "$work/worker_1.log" "$s1"; then break; fi
  echo "attempt $attempt: the cluster did not start (a port taken?):"
  cat "$work/worker_0.log" "$work/worker_1.log"
  kill -TERM "$s0" "$s1" 2>/dev/null; wait "$s0" "$s1" 2>/dev/null
  s0= s1=
done
[ -n "$s0" ] || { echo "FAIL: no TF_CONFIG cluster after $ATTEMPTS attempts"; exit 1; }
cat "$work/worker_0.log" "$work/worker_1.log"
spec="worker=127.0.0.1:$p0,127.0.0.1:$p1"
for t in 0 1; do
  grep -m1 '"event": "ready"' "$work/worker_$t.log" > "$work/ready_$t.json"
  check "task $t takes its job, index and cluster from TF_CONFIG" json_is "$work/ready_$t.json" \
    "d['task'] == '/job:worker/replica:0/task:$t' and d['cluster'] == '$spec'"
done

on_task() {  # on_task K: a Python test that a placement entry `p` has nodes on task K
  echo "p['device'].startswith('/job:worker/replica:0/task:$1/') and p['nodes'] > 0"
}

# The MLP split over both tasks through task 0's master, and a Conv+BatchNormalization model
# through task 1's: each client in the environment of the task whose master it uses.
for model in mlp conv_bn_relu; do
  run run "$root/tests/testdata/onnx/$model.onnx" --output-dir "$work/${model}_embedded" > /dev/null
done
TF_CONFIG=$(tf_config "$cluster" 0) run run "$root/tests/testdata/onnx/mlp.onnx" --target tf_config \
  --placement pipeline --show-placement --output-dir "$work/mlp_cluster" --json > "$work/mlp.json"
cat "$work/mlp.json"
check "run --target tf_config (task 0): the MLP matches the embedded session" \
  cmp "$work/mlp_embedded/output_0.pb" "$work/mlp_cluster/output_0.pb"
check "run --target tf_config (task 0): nodes on both tasks" \
  json_is "$work/mlp.json" "any($(on_task 0) for p in d['placement']) and any($(on_task 1) for p in d['placement'])"
TF_CONFIG=$(tf_config "$cluster" 1) run run "$root/tests/testdata/onnx/conv_bn_relu.onnx" --target tf_config \
  --placement pipeline --output-dir "$work/conv_bn_relu_cluster" > /dev/null
check "run --target tf_config (task 1): Conv+BatchNormalization matches the embedded session" \
  cmp "$work/conv_bn_relu_embedded/output_0.pb" "$work/conv_bn_relu_cluster/output_0.pb"
run run "$root/tests/testdata/onnx/mlp.onnx" --target "grpc://127.0.0.1:$p1" --placement pipeline \
  --output-dir "$work/mlp_grpc" > /dev/null
check "the same cluster through an explicit grpc:// target" \
  cmp "$work/mlp_embedded/output_0.pb" "$work/mlp_grpc/output_0.pb"

# usage_error NAME EXPECTED_STDERR_PREFIX COMMAND...: exit 2, stderr starting as expected.
usage_error() {
  local name=$1 prefix=$2 code
  shift 2
  timeout 10 "$@" > /dev/null 2> "$work/stderr.txt"; code=$?
  if [ "$code" = 2 ] && [[ "$(head -1 "$work/stderr.txt")" == "$prefix"* ]]; then
    echo "PASS $name"
  else
    echo "FAIL $name: exit $code, stderr:"; cat "$work/stderr.txt"; fail=1
  fi
}
bad_tf_config() {  # bad_tf_config JSON PREFIX: `sluice serve` refuses it, naming the key
  usage_error "serve refuses TF_CONFIG $1" "sluice serve: TF_CONFIG: $2" \
    env TF_CONFIG="$1" "$sluice" serve --json
}
bad_tf_config 'not json' "not a JSON object"
bad_tf_config '{"cluster": ["127.0.0.1:1"]}' "cluster: expected an object"
bad_tf_config '{"cluster": {}}' "cluster: names no job"
bad_tf_config '{"cluster": {"worker": "127.0.0.1:1"}}' "cluster.worker: expected a list"
bad_tf_config '{"cluster": {"worker": ["127.0.0.1:1", 2]}}' "cluster.worker[1]: expected a \"host:port\" string"
bad_tf_config '{"cluster": {"localhost": ["127.0.0.1:1"]}}' "cluster.localhost: job 'localhost' is reserved"
bad_tf_config '{"cluster": {"worker": ["127.0.0.1:1"]}, "task": {"type": "ps", "index": 0}}' \
  "task.type: 'ps' is not a job of the cluster"
bad_tf_config '{"cluster": {"worker": ["127.0.0.1:1"]}, "task": {"type": "worker", "index": 1}}' \
  "task.index: 1 is out of range"
bad_tf_config '{"cluster": {"worker": ["127.0.0.1:1"]}, "task": {"type": "worker", "index": "0"}}' \
  "task.index: expected an integer"
bad_tf_config '{"cluster": {"worker": ["127.0.0.1:1"]}, "rpc_layer": "grpc+verbs"}' "rpc_layer:"
usage_error "serve: --job against TF_CONFIG's task.type" "sluice serve: --job ps disagrees with TF_CONFIG" \
  env TF_CONFIG="$(tf_config "$cluster" 0)" "$sluice" serve --job ps
usage_error "serve: --task against TF_CONFIG's task.index" "sluice serve: --task 1 disagrees with TF_CONFIG" \
  env TF_CONFIG="$(tf_config "$cluster" 0)" "$sluice" serve --task 1
usage_error "run --target tf_config needs TF_CONFIG's task" "sluice run: --target tf_config: TF_CONFIG names no task" \
  env TF_CONFIG="{\"cluster\": $cluster}" "$sluice" run "$root/tests/testdata/onnx/mlp.onnx" --target tf_config
usage_error "run --target tf_config needs TF_CONFIG" "sluice run: --target tf_config: TF_CONFIG is not set" \
  "$sluice" run "$root/tests/testdata/onnx/mlp.onnx" --target tf_config

check "the TF_CONFIG tasks stop on SIGTERM with status 0" stop "$s0" "$s1"

# --cluster FILE: a ClusterDef in text format.
s2=
for attempt in $(seq 1 $ATTEMPTS); do
  read -r p2 < <(free_ports 1)
  cat > "$work/cluster.pbtxt" <<EOF
# One worker.
job { name: "worker" tasks { key: 0 value: "127.0.0.1:$p2" } }
EOF
  "$sluice" serve --cluster "$work/cluster.pbtxt" --job worker --task 0 --json > "$work/file_0.log" 2>&1 &
  s2=$!; pids+=($s2)
  await_ready "$work/file_0.log" "$s2" && break
  echo "attempt $attempt: the task did not start (a port taken?):"; cat "$work/file_0.log"
  kill -TERM "$s2" 2>/dev/null; wait "$s2" 2>/dev/null
  s2=
done
[ -n "$s2" ] || { echo "FAIL: no task from a ClusterDef file after $ATTEMPTS attempts"; exit 1; }
cat "$work/file_0.log"
grep -m1 '"event": "ready"' "$work/file_0.log" > "$work/ready_file.json"
check "--cluster FILE: the task reads the ClusterDef" json_is "$work/ready_file.json" \
  "d['cluster'] == 'worker=127.0.0.1:$p2'"
run run "$root/tests/testdata/onnx/mlp.onnx" --target "grpc://127.0.0.1:$p2" --output-dir "$work/mlp_file" > /dev/null
check "--cluster FILE: the MLP matches the embedded session" \
  cmp "$work/mlp_embedded/output_0.pb" "$work/mlp_file/output_0.pb"
check "--cluster FILE: the task stops on SIGTERM with status 0" stop "$s2"

cat > "$work/gap.pbtxt" <<'EOF'
job { name: "worker" tasks { key: 0 value: "127.0.0.1:1" } tasks { key: 2 value: "127.0.0.1:2" } }
EOF
timeout 10 "$sluice" serve --cluster "$work/gap.pbtxt" --job worker --task 0 > /dev/null 2> "$work/gap.txt"
code=$?
cat "$work/gap.txt"
check "--cluster FILE with a gap in the task numbers: exit 1" test "$code" = 1
check "--cluster FILE with a gap: the message names the job and the missing task" \
  grep -q "job 'worker': has task 2 but no task 1" "$work/gap.txt"

[ $fail = 0 ] && echo "tf_config cluster test passed"
exit $fail
