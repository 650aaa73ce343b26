#!/usr/bin/env bash
# Hostile models (tests/hostile_models.py) through `sluice run`: each must end in a clean error
# (exit status 1, a status code name, the node or tensor named), never a signal or a hang.
set -uo pipefail
root=.
source tests/test_lib.sh
require_python onnx
sluice=tools/sluice
dir="${TEST_TMPDIR:-$(mktemp -d)}/hostile"
"$python" tests/hostile_models.py "$dir" || { echo "FAIL: generating the models"; exit 1; }

# expect_error NAME CODE FRAGMENT MODEL [run options...]
expect_error() {
  local name="$1" code="$2" fragment="$3" model="$4"; shift 4
  local msg rc
  msg=$(timeout 60 "$sluice" run "$model" "$@" 2>&1); rc=$?
  if [ "$rc" -ne 1 ]; then
    echo "FAIL $name: exit status $rc (124: hung; 128+N: signal N): $msg"; fail=1; return
  fi
  if ! grep -q "$code" <<< "$msg" || ! grep -qF "$fragment" <<< "$msg"; then
    echo "FAIL $name: want $code and '$fragment' in: $msg"; fail=1; return
  fi
  echo "PASS $name"
}

expect_error conv_stride0 INVALID_ARGUMENT "'conv_stride0'" "$dir/conv_stride0.onnx"
expect_error maxpool_stride0 INVALID_ARGUMENT "'maxpool_stride0'" "$dir/maxpool_stride0.onnx"
expect_error conv_pads_huge INVALID_ARGUMENT "'conv_pads_huge'" "$dir/conv_pads_huge.onnx"
expect_error constant_of_shape_huge RESOURCE_EXHAUSTED "constant_of_shape_huge" "$dir/constant_of_shape_huge.onnx"
expect_error expand_huge RESOURCE_EXHAUSTED "expand_huge" "$dir/expand_huge.onnx"
expect_error constant_of_shape_long_shape INVALID_ARGUMENT "'constant_of_shape_long_shape'" "$dir/constant_of_shape_long_shape.onnx"
expect_error expand_long_shape INVALID_ARGUMENT "'expand_long_shape'" "$dir/expand_long_shape.onnx"
expect_error lstm_hidden_huge INVALID_ARGUMENT "hidden_size 4611686018427387904" "$dir/lstm_hidden_huge.onnx"
expect_error constant_of_shape_inferred_long_shape RESOURCE_EXHAUSTED "shape inference" "$dir/constant_of_shape_inferred_long_shape.onnx"
expect_error resize_scales_1e9 "INVALID_ARGUMENT\|RESOURCE_EXHAUSTED" "resize_scales_1e9" "$dir/resize_scales_1e9.onnx"
expect_error external_overflow INVALID_ARGUMENT "tensor 'e'" "$dir/external_overflow.onnx"
expect_error external_directory INVALID_ARGUMENT "not a regular file" "$dir/external_directory.onnx"
expect_error external_fifo INVALID_ARGUMENT "not a regular file" "$dir/external_fifo.onnx"
expect_error model_fifo INVALID_ARGUMENT "not a regular file" "$dir/fifo"
expect_error input_fifo INVALID_ARGUMENT "not a regular file" "$dir/identity.onnx" --input "x=$dir/fifo"
expect_error graph_fifo INVALID_ARGUMENT "not a regular file" "$dir/fifo.pbtxt"
expect_error const_huge RESOURCE_EXHAUSTED "const_huge" "$dir/const_huge.pbtxt" --output const_huge

# Integer division edges have numpy's answers: INT64_MIN / -1 wraps, x / 0 and x % -1 are 0.
out=$(timeout 60 "$sluice" run "$dir/int_div_edges.onnx" --json 2>&1); rc=$?
if [ "$rc" -ne 0 ]; then
  echo "FAIL int_div_edges: exit status $rc: $out"; fail=1
else
  echo "$out" > "$dir/div.json"
  check int_div_edges json_is "$dir/div.json" \
    "d['outputs'][0]['values'] == [-2**63, 0, 0] and d['outputs'][1]['values'] == [0, 0, 0]"
fi
out=$(timeout 60 "$sluice" run "$dir/int_min_div.onnx" --json 2>&1); rc=$?
if [ "$rc" -ne 0 ]; then
  echo "FAIL int_min_div: exit status $rc: $out"; fail=1
else
  echo "$out" > "$dir/min.json"
  check int_min_div json_is "$dir/min.json" "d['outputs'][0]['values'] == [-2**63]"
fi
# A session's memory limit, set by the client or by the server: the node that allocates past
# it fails, naming itself; within it the same model runs.
expect_error memory_limit RESOURCE_EXHAUSTED "'fill_4m'" "$dir/fill_4m.onnx" --memory-limit 1M
check "within the memory limit" timeout 60 "$sluice" run "$dir/fill_4m.onnx" --memory-limit 64M
start_cluster "$dir/cluster" "worker=1" --session-memory-limit 1M || { echo "FAIL: cluster did not start"; exit 1; }
expect_error server_memory_limit RESOURCE_EXHAUSTED "'fill_4m'" "$dir/fill_4m.onnx" \
  --target "grpc://${task_address[worker:0]}"

[ "$fail" -eq 0 ] && echo PASS
exit "$fail"
