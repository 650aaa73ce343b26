#!/usr/bin/env bash
# End-to-end checks of the `sluice` command line as a user runs it.
set -euo pipefail
sluice=tools/sluice
graph=examples/mlp.pbtxt
x=examples/mlp_x.pb
out=$(mktemp -d)
source tests/test_lib.sh  # json_is
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Every verb has --help.
grep -q "run" <<< "$($sluice --help)" || fail "top-level help lists run"
grep -q -- "--output-dir" <<< "$($sluice run --help)" || fail "run --help"

# x = [[1,2],[3,-1],[0,10]] through relu(x*w+b): rows [5.5,0], [1.5,0], [20.5,0] (by hand).
mlp_y="d['outputs'][0]['name'] == 'y:0' and d['outputs'][0]['dtype'] == 'float' and
  d['outputs'][0]['shape'] == [3, 2] and d['outputs'][0]['values'] == [5.5, 0, 1.5, 0, 20.5, 0] and
  d['outputs'][0]['min'] == 0 and d['outputs'][0]['max'] == 20.5"
$sluice run "$graph" --input "x=$x" --output-dir "$out" --json > "$out/run.json"
json_is "$out/run.json" "$mlp_y and d['outputs'][0]['file'] == '$out/output_0.pb'" || fail "run --json"
[ -s "$out/output_0.pb" ] || fail "output_0.pb written"
# The lines people read: one per output.
$sluice run "$graph" --input "x=$x" | grep -q "^y:0: float \[3,2\] min=0 max=20.5" || fail "summary line"

# The input's own name works without NAME=, and two devices give the same answer.
$sluice run "$graph" --input "$x" --devices 2 --json > "$out/run2.json"
json_is "$out/run2.json" "$mlp_y" || fail "--input FILE"

# Errors: missing feed, wrong file, bad flag: non-zero exit, message names the problem.
if msg=$($sluice run "$graph" 2>&1); then fail "missing feed accepted"; fi
grep -q "placeholder tensor 'x'" <<< "$msg" || fail "missing feed message: $msg"
if msg=$($sluice run "$graph" --input "x=/nonexistent.pb" 2>&1); then fail "missing file accepted"; fi
grep -q "nonexistent.pb" <<< "$msg" || fail "missing file message: $msg"
if msg=$($sluice run "$graph" --bogus 2>&1); then fail "unknown flag accepted"; fi
grep -q "bogus" <<< "$msg" || fail "unknown flag message"
if msg=$($sluice run "$x" 2>&1); then fail "garbage graph accepted"; fi
if msg=$($sluice frobnicate 2>&1); then fail "unknown verb accepted"; fi
# Training through a TrainingInfoProto: the losses are numpy's (tests/testdata/onnx/make_models.py).
m=tests/testdata/onnx
grep -q -- "--steps" <<< "$($sluice train --help)" || fail "train --help"
$sluice train $m/train_linear.onnx --steps 5 --feed x=$m/train_linear_x.pb --feed t=$m/train_linear_t.pb \
  --save "$out/trained.onnx" --json > "$out/train.json"
cat "$out/train.json"
json_is "$out/train.json" "[s['step'] for s in d['steps']] == [1, 2, 3, 4, 5]" || fail "five steps"
json_is "$out/train.json" "repr(d['steps'][0]['outputs']['loss']).startswith('29.187')" || fail "first loss"
json_is "$out/train.json" "repr(d['steps'][3]['outputs']['loss']).startswith('0.6025')" || fail "fourth loss"
json_is "$out/train.json" "d['saved'] == '$out/trained.onnx'" || fail "saved reported"
[ -s "$out/trained.onnx" ] || fail "trained model saved"
# --profile: one more (traced) step, its node times by phase and op.
$sluice train $m/train_linear.onnx --steps 2 --feed x=$m/train_linear_x.pb --feed t=$m/train_linear_t.pb \
  --profile --json > "$out/train_profile.json"
json_is "$out/train_profile.json" \
  "{'forward', 'backward', 'update'} <= {p['phase'] for p in d['profile']} and all(p['ms'] >= 0 and p['nodes'] > 0 for p in d['profile']) and any(p['phase'] == 'update' and p['op'] == 'ApplyOnnxMomentum' for p in d['profile']) and len(d['steps']) == 2" \
  || fail "train --profile: phases and ops"
$sluice train $m/train_linear.onnx --steps 1 --feed x=$m/train_linear_x.pb --feed t=$m/train_linear_t.pb \
  --profile | grep -qE "^forward +" || fail "train --profile table"
# --inter-op apart from --threads: the same losses.
$sluice train $m/train_linear.onnx --steps 5 --feed x=$m/train_linear_x.pb --feed t=$m/train_linear_t.pb \
  --threads 2 --inter-op 1 --json > "$out/train_interop.json"
json_is "$out/train_interop.json" "repr(d['steps'][3]['outputs']['loss']).startswith('0.6025')" || fail "--inter-op 1 loss"
if msg=$($sluice train $m/train_linear.onnx --steps 1 --inter-op 0 2>&1); then fail "--inter-op 0 accepted"; fi
grep -q "bad --inter-op" <<< "$msg" || fail "--inter-op 0 message: $msg"
if msg=$($sluice train $m/train_linear.onnx --steps 1 2>&1); then fail "missing feed accepted"; fi
grep -q "no value for input 't'" <<< "$msg" || fail "missing feed message: $msg"
if msg=$($sluice train $m/mlp.onnx --steps 1 2>&1); then fail "model without training_info accepted"; fi
grep -q "no training_info" <<< "$msg" || fail "no training_info message"

# test-onnx --trace: one Chrome trace per case when there are several, named after the case.
for c in case_a case_b; do
  mkdir -p "$out/cases/$c/test_data_set_0"
  cp $m/train_linear.onnx "$out/cases/$c/model.onnx"
  cp $m/train_linear_x.pb "$out/cases/$c/test_data_set_0/input_0.pb"
done
$sluice test-onnx "$out/cases" --trace "$out/t.json" --json - > "$out/cases.json" || fail "test-onnx exit status"
json_is "$out/cases.json" "(d['passed'], d['failed'], d['skipped']) == (2, 0, 0) and
  [(c['name'], c['outcome']) for c in d['cases']] == [('case_a', 'pass'), ('case_b', 'pass')]" || fail "test-onnx cases"
$sluice test-onnx "$out/cases" | tail -1 | grep -qx "2 passed, 0 failed, 0 skipped" || fail "test-onnx last line"
has_nodes="any(e['ph'] == 'X' for e in d['traceEvents'])"
json_is "$out/t.case_a.json" "$has_nodes" || fail "trace of case_a has node events"
json_is "$out/t.case_b.json" "$has_nodes" || fail "trace of case_b has node events"
$sluice test-onnx "$out/cases/case_a" --trace "$out/one.json" > /dev/null || fail "one case"
json_is "$out/one.json" "$has_nodes" || fail "trace of a single case goes to FILE itself"
# The graph optimizer: convert reports each pass; --no-optimize writes the graph as imported;
# --disable-pass skips one; run gives the same answer either way.
cb=tests/testdata/onnx/conv_bn_relu.onnx
convert_help=$($sluice convert --help)  # Captured: grep -q closing the pipe early is SIGPIPE.
for p in constant_folding remove_dead_nodes fuse_matmul_add fold_batch_norms fuse_tf_conv; do
  grep -q "$p" <<< "$convert_help" || fail "convert --help lists the pass $p"
done
$sluice convert "$cb" -o "$out/cb.pbtxt" > "$out/convert.txt"
grep -q "^pass fold_batch_norms: 1 rewrites" "$out/convert.txt" || fail "fold report: $(cat "$out/convert.txt")"
grep -q "^pass remove_dead_nodes: 1 rewrites" "$out/convert.txt" || fail "dead-node report"
if grep -q '"Onnx>BatchNormalization"' "$out/cb.pbtxt"; then fail "BatchNormalization left after optimizing"; fi
$sluice convert "$cb" -o "$out/cb_plain.pbtxt" --no-optimize > "$out/convert_plain.txt"
grep -q '"Onnx>BatchNormalization"' "$out/cb_plain.pbtxt" || fail "--no-optimize keeps BatchNormalization"
if grep -q "^pass " "$out/convert_plain.txt"; then fail "--no-optimize ran passes"; fi
$sluice convert "$cb" -o "$out/cb_nofold.pbtxt" --disable-pass fold_batch_norms --json > "$out/convert.json"
json_is "$out/convert.json" "'fold_batch_norms' not in [p['pass'] for p in d['passes']] and len(d['passes']) >= 3" ||
  fail "--disable-pass in the JSON report"
if msg=$($sluice convert "$cb" -o "$out/x.pb" --disable-pass nonsense 2>&1); then fail "unknown pass accepted"; fi
grep -q "no optimizer pass 'nonsense'" <<< "$msg" || fail "unknown pass message: $msg"
# Also where no optimizer would run to notice: with --no-optimize, and for run and bench.
if msg=$($sluice convert "$cb" -o "$out/x.pb" --no-optimize --disable-pass nonsense 2>&1); then
  fail "unknown pass accepted with --no-optimize"
fi
grep -q "no optimizer pass 'nonsense'" <<< "$msg" || fail "unknown pass message (--no-optimize): $msg"
if msg=$($sluice run "$cb" --disable-pass nonsense 2>&1); then fail "run: unknown pass accepted"; fi
grep -q "no optimizer pass 'nonsense'" <<< "$msg" || fail "run: unknown pass message: $msg"
$sluice run "$cb" --output-dir "$out/opt" --json > /dev/null
$sluice run "$cb" --output-dir "$out/plain" --json --no-optimize > /dev/null
cmp -s "$out/opt/output_0.pb" "$out/plain/output_0.pb" ||
  python3 - "$out/opt/output_0.pb" "$out/plain/output_0.pb" <<'PY' || fail "optimized and plain runs differ"
import struct, sys
# Both files hold the same 48 floats up to rounding: compare the raw payload tails.
a, b = (open(f, "rb").read() for f in sys.argv[1:3])
fa, fb = (struct.unpack("<48f", x[-192:]) for x in (a, b))
sys.exit(0 if all(abs(x - y) <= 1e-5 * (1 + abs(y)) for x, y in zip(fa, fb)) else 1)
PY

echo "PASS"
