#!/usr/bin/env bash
# `--timeout SECONDS`: a step that would run for hours (a Loop of 2^40 trips) or a minute (one
# MatMul, one Conv) ends with DEADLINE_EXCEEDED within a generous bound, embedded and on a
# two-task `sluice serve` cluster, whose tasks then go on serving.
set -uo pipefail
sluice=tools/sluice
out=$(mktemp -d)
source tests/test_lib.sh
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$out"' EXIT

# y = (x x) x for x = ones([12288, 12288]): single MatMul nodes of tens of seconds each, which
# stop between slices of rows once the step is cancelled. MATMUL_DEVICE filled in below.
matmul_graph() {
  sed -e "s|MATMUL_DEVICE|$1|" <<'PBTXT'
node { name: "shape" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
       attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 2 } } int64_val: 12288 int64_val: 12288 } } } }
node { name: "x" op: "Onnx>ConstantOfShape" input: "shape" device: "MATMUL_DEVICE"
       attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 1 } } } }
node { name: "xx" op: "MatMul" input: "x" input: "x" device: "MATMUL_DEVICE" attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "transpose_a" value { b: false } } attr { key: "transpose_b" value { b: false } } }
node { name: "y" op: "MatMul" input: "xx" input: "x" device: "MATMUL_DEVICE" attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "transpose_a" value { b: false } } attr { key: "transpose_b" value { b: false } } }
node { name: "out" op: "Neg" input: "y" attr { key: "T" value { type: DT_FLOAT } } }
PBTXT
}

# y = Conv(x, w) for x = ones([1, 16, 2048, 2048]), w = ones([16, 16, 31, 31]): one oneDNN
# convolution of about a minute (10^12 multiply-adds), which runs in bands of output rows and
# stops between them once the step is cancelled. CONV_DEVICE filled in below.
conv_graph() {
  sed -e "s|CONV_DEVICE|$1|" <<'PBTXT'
node { name: "xs" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
       attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 4 } } int64_val: 1 int64_val: 16 int64_val: 2048 int64_val: 2048 } } } }
node { name: "ws" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
       attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 4 } } int64_val: 16 int64_val: 16 int64_val: 31 int64_val: 31 } } } }
node { name: "x" op: "Onnx>ConstantOfShape" input: "xs" device: "CONV_DEVICE" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 1 } } } }
node { name: "w" op: "Onnx>ConstantOfShape" input: "ws" device: "CONV_DEVICE" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT float_val: 1 } } } }
node { name: "y" op: "Onnx>Conv" input: "x" input: "w" device: "CONV_DEVICE" attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "Tb" value { list { } } } attr { key: "pads" value { list { i: 15 i: 15 i: 15 i: 15 } } } }
node { name: "out" op: "Neg" input: "y" attr { key: "T" value { type: DT_FLOAT } } }
PBTXT
}

# CPU seconds (user + system) a process has used so far.
cpu_seconds() {
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"
}

# Passes when process $1 uses under 0.3 s of CPU in the 2 s after a short settling time.
goes_idle() {
  sleep 1
  local before after
  before=$(cpu_seconds "$1"); sleep 2; after=$(cpu_seconds "$1")
  awk -v a="$before" -v b="$after" 'BEGIN { exit !(b - a < 0.3) }' ||
    { echo "used $before -> $after CPU seconds while idle"; return 1; }
}

# Runs `sluice run GRAPH --timeout 1 ARGS...`; passes when it fails with DEADLINE_EXCEEDED
# within 5 s (it would run for hours otherwise).
times_out() {
  local graph=$1; shift
  local start=$SECONDS
  if timeout 60 $sluice run "$graph" --output out --timeout 1 "$@" > "$out/run.txt" 2>&1; then
    echo "exit status 0: $(cat "$out/run.txt")"; return 1
  fi
  grep -q "DEADLINE_EXCEEDED\|did not finish within 1000 ms" "$out/run.txt" ||
    { echo "no deadline error: $(cat "$out/run.txt")"; return 1; }
  (( SECONDS - start <= 5 )) || { echo "took $((SECONDS - start)) s"; return 1; }
}

loop_graph "" "" 1099511627776 > "$out/forever.pbtxt"
loop_graph "" "" 3 > "$out/three.pbtxt"
check "embedded: --timeout ends the step" times_out "$out/forever.pbtxt"
matmul_graph "" > "$out/matmul.pbtxt"
check "embedded: --timeout ends one long MatMul" times_out "$out/matmul.pbtxt"
conv_graph "" > "$out/conv.pbtxt"
check "embedded: --timeout ends one long Conv" times_out "$out/conv.pbtxt"
check "embedded: a short step within --timeout" bash -c \
  "$sluice run $out/three.pbtxt --output out --timeout 30 --json > $out/three.json"
check "its value" json_is "$out/three.json" "d['outputs'][0]['values'] == [-3]"
check "a bad --timeout is refused" bash -c "! $sluice run $out/three.pbtxt --timeout -2 2> $out/bad.txt"
check "naming the flag" grep -q -- "--timeout" "$out/bad.txt"

start_cluster "$out/cluster" "worker=2" || { echo "FAIL: cluster did not start"; exit 1; }
target="grpc://${task_address[worker:0]}"
loop_graph "/job:worker/task:1" "/job:worker/task:0" 1099511627776 > "$out/forever2.pbtxt"
loop_graph "/job:worker/task:1" "/job:worker/task:0" 3 > "$out/three2.pbtxt"
check "cluster: --timeout ends the step on both tasks" times_out "$out/forever2.pbtxt" --target "$target"
matmul_graph "/job:worker/task:1" > "$out/matmul2.pbtxt"
check "cluster: --timeout ends a long MatMul on another task" times_out "$out/matmul2.pbtxt" --target "$target"
check "cluster: that task's CPU goes idle" goes_idle "${task_pid[worker:1]}"
conv_graph "/job:worker/task:1" > "$out/conv2.pbtxt"
check "cluster: --timeout ends a long Conv on another task" times_out "$out/conv2.pbtxt" --target "$target"
check "cluster: that task's CPU goes idle after the Conv" goes_idle "${task_pid[worker:1]}"
check "cluster: the tasks go on serving" bash -c \
  "timeout 60 $sluice run $out/three2.pbtxt --output out --target $target --timeout 30 --json > $out/three2.json"
check "its value" json_is "$out/three2.json" "d['outputs'][0]['values'] == [-3]"

[ "$fail" = 0 ] && echo "PASS" || { echo "FAIL"; exit 1; }
