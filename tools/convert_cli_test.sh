#!/usr/bin/env bash
# `sluice convert --format` and `--dot` as a user runs them; the progress lines of test-onnx
# and bench on a terminal (and nothing extra off one); run's output table; error hints.
set -uo pipefail
root=.
source tests/test_lib.sh  # check, json_is
sluice=tools/sluice
out="${TEST_TMPDIR:-$(mktemp -d)}/convert_cli"
rm -rf "$out" && mkdir -p "$out"
m=tests/testdata/onnx

# --format: text or binary whatever the file is called; the flag wins over the extension.
check "convert by extension" $sluice convert $m/conv_bn_relu.onnx -o "$out/g.pbtxt"
check "convert --format pb" $sluice convert $m/conv_bn_relu.onnx -o "$out/g.graph" --format pb
check "convert --format pbtxt wins over .pb" $sluice convert $m/conv_bn_relu.onnx -o "$out/t.pb" --format pbtxt
check "the .pbtxt is text" grep -q '^node {' "$out/g.pbtxt"
check "--format pbtxt wrote text to t.pb" cmp "$out/g.pbtxt" "$out/t.pb"
$sluice convert $m/conv_bn_relu.onnx -o "$out/x.pb" --format tflite > "$out/bad_format.txt" 2>&1
check "an unknown --format is a usage error (exit 2) naming the value" \
  bash -c "[ $? = 2 ] && grep -q \"format 'tflite'\" '$out/bad_format.txt'"

# An .onnx output is Sluice's optimized model (ONNX Runtime's optimized_model_filepath): the
# optimized GraphDef in one ai.sluice node; run and bench load it as any model, with the
# original's results.
check "convert to an optimized .onnx" $sluice convert $m/conv_bn_relu.onnx -o "$out/opt.onnx"
check "ONNX's checker accepts it, one ai.sluice node" "$python" -c "
import onnx, sys
m = onnx.load('$out/opt.onnx'); onnx.checker.check_model(m)
assert [n.domain for n in m.graph.node] == ['ai.sluice'], m.graph.node
assert b'BatchNormalization' not in m.graph.node[0].attribute[0].s"
"$python" -c "
import numpy as np, onnx.numpy_helper as nh
x = np.random.default_rng(5).standard_normal((1, 2, 4, 4)).astype(np.float32)
open('$out/x.pb', 'wb').write(nh.from_array(x, 'x').SerializeToString())"
check "the optimized model runs" $sluice run "$out/opt.onnx" --input "x=$out/x.pb" --output-dir "$out/opt_out"
check "the original runs" $sluice run $m/conv_bn_relu.onnx --input "x=$out/x.pb" --output-dir "$out/orig_out"
check "both give the same y" "$python" -c "
import numpy as np, onnx, onnx.numpy_helper as nh
a = nh.to_array(onnx.load_tensor('$out/opt_out/output_0.pb')); b = nh.to_array(onnx.load_tensor('$out/orig_out/output_0.pb'))
np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)"
$sluice convert $m/conv_bn_relu.onnx -o "$out/j.pb" --json > "$out/convert.json"
check "--json reports the format" json_is "$out/convert.json" "d['format'] == 'pb' and d['file'] == '$out/j.pb'"

# The binary and the text GraphDef hold the same graph: protoc decodes the binary (and the
# text, encoded) to the very text convert wrote. protoc and the .proto files stand in for any
# reader of TensorFlow's GraphDef.
decode() { protoc --proto_path=. --decode=sluice.GraphDef proto/graph.proto; }
encode() { protoc --proto_path=. --encode=sluice.GraphDef proto/graph.proto; }
decode < "$out/g.graph" > "$out/decoded.pbtxt"
check "protoc decodes the binary to the text" cmp "$out/decoded.pbtxt" "$out/g.pbtxt"
encode < "$out/g.pbtxt" | decode > "$out/roundtrip.pbtxt"
check "the text parses as a GraphDef" cmp "$out/roundtrip.pbtxt" "$out/g.pbtxt"

# TensorFlow's layout: versions { producer: N }, every node with a name and an op, inputs
# "node" for output 0, "node:k" for k > 0, "^node" for control, each naming a node.
for model in conv_bn_relu mlp if; do
  $sluice convert $m/$model.onnx -o "$out/$model.pbtxt" > /dev/null || { echo "FAIL convert $model"; fail=1; }
  check "$model: versions.producer set" \
    bash -c "tr -d '\n' < '$out/$model.pbtxt' | grep -Eq 'versions \{ *producer: [1-9][0-9]*'"
  "$python" - "$out/$model.pbtxt" <<'PY' || { echo "FAIL $model: node layout"; fail=1; }
import re, sys
text = open(sys.argv[1]).read()
# Top-level nodes only (function bodies are node_def blocks): "node {" at column 0.
nodes = re.findall(r"^node \{\n(.*?)^\}", text, re.S | re.M)
assert nodes, "no nodes"
names = set()
for body in nodes:
    name = re.search(r'^  name: "([^"]*)"', body, re.M)
    op = re.search(r'^  op: "([^"]+)"', body, re.M)
    assert name and op, body
    names.add(name.group(1))
for body in nodes:
    for inp in re.findall(r'^  input: "([^"]*)"', body, re.M):
        m = re.fullmatch(r"(\^?)([^:^]+)(?::([0-9]+))?", inp)
        assert m, "input %r" % inp
        assert m.group(3) != "0", "output 0 written as %r, not the bare node name" % inp
        assert m.group(2) in names, "input %r names no node" % inp
print("%s: %d nodes in TensorFlow's layout" % (sys.argv[1], len(nodes)))
PY
done

# --dot: the master's partitions of a step (the model runs once, with random inputs) on two
# devices, split by the pipeline policy.
$sluice convert $m/mlp.onnx --dot "$out/mlp.dot" --devices 2 --placement pipeline --json > "$out/dot.json"
check "--dot --json: two devices, each with a _Send or _Recv" json_is "$out/dot.json" \
  "len(d['dot']['devices']) == 2 and all(p['sends'] + p['recvs'] > 0 for p in d['dot']['devices'])"
check "two clusters" test "$(grep -c '^  subgraph cluster_' "$out/mlp.dot")" = 2
check "labelled with the devices" grep -q 'label="/job:localhost/replica:0/task:0/device:CPU:1"' "$out/mlp.dot"
check "a _Send" grep -q '\\n_Send"' "$out/mlp.dot"
check "a _Recv" grep -q '\\n_Recv"' "$out/mlp.dot"
check "a dashed _Send -> _Recv edge labelled with its tensor" \
  grep -Eq '^  n[0-9]+ -> n[0-9]+ \[style=dashed, color="#c05000", fontcolor="#c05000", label="[^"]+"\];$' "$out/mlp.dot"
if [ -x /usr/bin/dot ]; then
  /usr/bin/dot -Tpng "$out/mlp.dot" -o "$out/mlp.png"
  check "dot renders a PNG" bash -c "[ -s '$out/mlp.png' ] && [ \"\$(head -c 8 '$out/mlp.png' | od -An -tx1 | tr -d ' \n')\" = 89504e470d0a1a0a ]"
else
  echo "FAIL: /usr/bin/dot missing; run scripts/setup.sh (it installs graphviz)"; fail=1
fi
check "--dot --json: the passes are the master's, on its placed graph" json_is "$out/dot.json" \
  "d['passes_of'].startswith(\"the master's placed graph (2 devices)\") and len(d['passes']) > 0"
# --devices without --dot: the master places and optimizes a step (its BatchNormalization
# folded into the convolution on the placed graph), and -o still writes the one-CPU graph.
$sluice convert $m/conv_bn_relu.onnx --devices 2 -o "$out/placed.pb" --json > "$out/placed.json"
check "--devices 2: the master's passes folded the BatchNormalization" json_is "$out/placed.json" \
  "d['passes_of'].startswith(\"the master's placed graph\") and
   any(p['pass'] == 'fold_batch_norms' and p['rewrites'] == 1 for p in d['passes']) and d['file'] == '$out/placed.pb'"
$sluice convert $m/conv_bn_relu.onnx -o "$out/local.pb" --json > "$out/local.json"
check "without placement flags: the passes as the master runs them on one CPU" json_is "$out/local.json" \
  "d['passes_of'] == 'the master on one CPU device' and
   any(p['pass'] == 'fold_batch_norms' and p['rewrites'] == 1 for p in d['passes'])"
$sluice convert --no-optimize $m/conv_bn_relu.onnx --devices 2 -o "$out/plain2.pb" --json > "$out/plain2.json"
check "--no-optimize --devices 2: the master ran no pass" json_is "$out/plain2.json" "d['passes'] == []"
# SLUICE_LOG_OPTIMIZER: a line per optimized client graph on stderr, for any client (here a
# GraphDef file run as it is, unoptimized by convert), naming the passes that rewrote.
$sluice convert --no-optimize $m/conv_bn_relu.onnx -o "$out/log_plain.pb" > /dev/null
SLUICE_LOG_OPTIMIZER=1 $sluice run "$out/log_plain.pb" > /dev/null 2> "$out/log.txt"
check "SLUICE_LOG_OPTIMIZER names the folded BatchNormalization" \
  grep -Eq '^sluice: optimizer: session [^ ]+: .*fold_batch_norms 1.*; [0-9]+ nodes$' "$out/log.txt"
SLUICE_LOG_OPTIMIZER=0 $sluice run "$out/log_plain.pb" > /dev/null 2> "$out/nolog.txt"
check "SLUICE_LOG_OPTIMIZER=0 logs nothing" bash -c "! grep -q 'sluice: optimizer' '$out/nolog.txt'"
# One device (the default, as `sluice run`): one cluster, no transfers between devices.
$sluice convert $m/mlp.onnx --dot "$out/one.dot" -o "$out/one.pb" > "$out/one.txt"
check "one device by default" test "$(grep -c '^  subgraph cluster_' "$out/one.dot")" = 1
check "... with no device-to-device edge" bash -c "! grep -q 'color=\"#c05000\"' '$out/one.dot'"
check "convert reports the dot and the graph" bash -c "grep -q '^wrote $out/one.dot (1 devices)' '$out/one.txt' &&
  grep -q '^wrote $out/one.pb (' '$out/one.txt'"
# --input as in `sluice run`: the file instead of random values; an unknown name fails with
# the model's inputs listed; without --dot it has nothing to feed.
check "--dot --input NAME=FILE" $sluice convert $m/mlp.onnx --dot "$out/fed.dot" --input "x=examples/mlp_x.pb"
check "... drew the fed step" grep -q 'client_feeds -> n[0-9]* \[style=dashed, label="x:0"\]' "$out/fed.dot"
$sluice convert $m/mlp.onnx --dot "$out/bad.dot" --input "nope=examples/mlp_x.pb" > /dev/null 2> "$out/bad_input.txt"
check "--dot --input with an unknown name: the model's inputs listed" bash -c "[ $? = 1 ] &&
  grep -qx \"hint: the model's inputs are: x\" '$out/bad_input.txt'"
$sluice convert $m/mlp.onnx -o "$out/noinput.pb" --input "x=examples/mlp_x.pb" > /dev/null 2>&1
check "--input without --dot or --devices is a usage error" test $? = 2
$sluice convert $m/mlp.onnx --devices 0 --dot "$out/zero.dot" > /dev/null 2>&1
check "--devices 0 is a usage error" test $? = 2
$sluice convert $m/mlp.onnx > /dev/null 2>&1
check "convert without -o or --dot is a usage error" test $? = 2

# Progress lines: on a terminal (script(1) gives the verb a pty), rewritten with \r and
# erased; off one, stderr stays empty and stdout as it was.
mkdir -p "$out/cases/case_a/test_data_set_0"
cp $m/train_linear.onnx "$out/cases/case_a/model.onnx"
cp $m/train_linear_x.pb "$out/cases/case_a/test_data_set_0/input_0.pb"
script -qefc "$sluice test-onnx $out/cases" /dev/null < /dev/null > "$out/tty_test.txt" 2>&1
check "test-onnx on a terminal: a progress line" grep -q $'\r\033\\[Ktest-onnx: 1/1 cases, 0 failed' "$out/tty_test.txt"
check "test-onnx on a terminal: still the last line" grep -q '1 passed, 0 failed, 0 skipped' "$out/tty_test.txt"
$sluice test-onnx "$out/cases" > "$out/pipe_test.txt" 2> "$out/pipe_test.err"
check "test-onnx off a terminal: nothing on stderr" test ! -s "$out/pipe_test.err"
check "test-onnx off a terminal: the lines as before" \
  bash -c "[ \"\$(cat '$out/pipe_test.txt')\" = \"\$(printf 'PASS case_a\n1 passed, 0 failed, 0 skipped')\" ]"
script -qefc "$sluice bench $m/mlp.onnx --iters 3 --warmup 1" /dev/null < /dev/null > "$out/tty_bench.txt" 2>&1
check "bench on a terminal: a progress line, erased" \
  bash -c "grep -q $'\r\033\\\\[Kbench: warmup 0/1' '$out/tty_bench.txt' && grep -q '\"median_ms\"' '$out/tty_bench.txt'"
$sluice bench $m/mlp.onnx --iters 3 --warmup 1 > "$out/pipe_bench.txt" 2> "$out/pipe_bench.err"
check "bench off a terminal: nothing on stderr" test ! -s "$out/pipe_bench.err"
check "bench off a terminal: one JSON line" test "$(wc -l < "$out/pipe_bench.txt")" = 1

# bench takes a GraphDef: the one convert wrote unoptimized (the master optimizes it), fed
# random values for its Placeholders or a file, fetching what --output names.
$sluice convert --no-optimize $m/conv_bn_relu.onnx -o "$out/plain.pb" > /dev/null
$sluice bench "$out/plain.pb" --iters 2 --warmup 1 --json > "$out/bench_pb.json"
check "bench of a GraphDef: random Placeholder values, a median" \
  json_is "$out/bench_pb.json" "d['model'] == 'plain.pb' and d['median_ms'] > 0"
$sluice bench examples/mlp.pbtxt --input x=examples/mlp_x.pb --output y --iters 2 --json > "$out/bench_pbtxt.json"
check "bench of a GraphDef: --input and --output" json_is "$out/bench_pbtxt.json" "d['iters'] == 2"
$sluice bench examples/mlp.pbtxt --input x=examples/mlp_x.pb --output y --iters 30 --concurrency 3 --inter-op 2 \
  --json > "$out/bench_concurrent.json"
check "bench --concurrency 3: every run timed once, percentiles in order" json_is "$out/bench_concurrent.json" \
  "d['concurrency'] == 3 and d['iters'] == 30 and d['runs_per_s'] > 0 and 0 < d['min_ms'] <= d['p50_ms'] <= d['p90_ms'] <= d['p99_ms']"
if $sluice bench examples/mlp.pbtxt --concurrency 0 > /dev/null 2>&1; then
  check "bench --concurrency 0 is refused" false
fi
if $sluice bench examples/mlp.pbtxt --output nowhere --iters 1 > /dev/null 2>&1; then
  check "bench of a GraphDef: an unknown --output fails" false
fi

# run's table: one aligned line per output; one output reads as it always has.
g=examples/mlp.pbtxt
x=examples/mlp_x.pb
$sluice run $g --input "x=$x" --output y --output xw > "$out/table.txt"
cat "$out/table.txt"
check "run: a line per output" test "$(wc -l < "$out/table.txt")" = 2
column_of() { awk -v s="$1" '{print index($0, s)}' "$out/table.txt" | sort -u; }
check "run: columns aligned" bash -c "[ '$(column_of min= | wc -l)' = 1 ] && [ '$(column_of values: | wc -l)' = 1 ] &&
  [ '$(column_of min= | head -1)' -gt 1 ]"
check "run: one output as before" bash -c "$sluice run $g --input x=$x | grep -q '^y:0: float \[3,2\] min=0 max=20.5 mean='"

# Errors keep their status code and add a hint where the fix is known.
$sluice run $g > /dev/null 2> "$out/missing.txt"
check "missing feed: the code and a hint" bash -c "grep -q '^sluice run: INVALID_ARGUMENT: ' '$out/missing.txt' &&
  grep -qx 'hint: pass it with --input x=FILE.pb' '$out/missing.txt'"
$sluice run $m/mlp.onnx --input "nope=$x" > /dev/null 2> "$out/unknown.txt"
check "unknown input name: the model's inputs listed" bash -c "grep -q 'INVALID_ARGUMENT' '$out/unknown.txt' &&
  grep -qx \"hint: the model's inputs are: x\" '$out/unknown.txt'"
$sluice run $g --input "nope=$x" > /dev/null 2> "$out/unknown_graph.txt"
check "unknown feed of a GraphDef: its Placeholders listed" \
  grep -qx "hint: the model's inputs are: x" "$out/unknown_graph.txt"
$sluice train $m/train_linear.onnx --steps 1 --feed "x=$m/train_linear_x.pb" > /dev/null 2> "$out/train.txt"
check "train: missing feed names --feed" grep -qx 'hint: pass it with --feed t=FILE.pb' "$out/train.txt"
timeout 60 $sluice run $g --input "x=$x" --target grpc://127.0.0.1:1 > /dev/null 2> "$out/target.txt"
check "unreachable --target: UNAVAILABLE and a hint" bash -c "grep -q 'UNAVAILABLE' '$out/target.txt' &&
  grep -q '^hint: check the address in --target grpc://127.0.0.1:1 and that \`sluice serve\` is running' '$out/target.txt'"

[ "$fail" = 0 ] && echo PASS
exit "$fail"
