#!/usr/bin/env bash
# End-to-end checks of the `sluice` command line as a user runs it.
set -euo pipefail
sluice=tools/sluice
graph=examples/mlp.pbtxt
x=examples/mlp_x.pb
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Every verb has --help.
$sluice --help | grep -q "run" || fail "top-level help lists run"
$sluice run --help | grep -q -- "--output-dir" || fail "run --help"

# x = [[1,2],[3,-1],[0,10]] through relu(x*w+b): rows [5.5,0], [1.5,0], [20.5,0] (by hand).
log=$($sluice run "$graph" --input "x=$x" --output-dir "$out")
echo "$log"
echo "$log" | grep -q "y:0: float \[3,2\] min=0 max=20.5" || fail "summary line"
[ -s "$out/output_0.pb" ] || fail "output_0.pb written"

# The input's own name works without NAME=, and two devices give the same answer.
$sluice run "$graph" --input "$x" --devices 2 | grep -q "max=20.5" || fail "--input FILE"

# Errors: missing feed, wrong file, bad flag: non-zero exit, message names the problem.
if msg=$($sluice run "$graph" 2>&1); then fail "missing feed accepted"; fi
echo "$msg" | grep -q "placeholder tensor 'x'" || fail "missing feed message: $msg"
if msg=$($sluice run "$graph" --input "x=/nonexistent.pb" 2>&1); then fail "missing file accepted"; fi
echo "$msg" | grep -q "nonexistent.pb" || fail "missing file message: $msg"
if msg=$($sluice run "$graph" --bogus 2>&1); then fail "unknown flag accepted"; fi
echo "$msg" | grep -q "bogus" || fail "unknown flag message"
if msg=$($sluice run "$x" 2>&1); then fail "garbage graph accepted"; fi
if msg=$($sluice frobnicate 2>&1); then fail "unknown verb accepted"; fi
# Training through a TrainingInfoProto: the losses are numpy's (tests/testdata/onnx/make_models.py).
m=tests/testdata/onnx
$sluice train --help | grep -q -- "--steps" || fail "train --help"
log=$($sluice train $m/train_linear.onnx --steps 5 --feed x=$m/train_linear_x.pb --feed t=$m/train_linear_t.pb --save "$out/trained.onnx")
echo "$log"
echo "$log" | grep -q "step 1 loss=29.187" || fail "first loss"
echo "$log" | grep -q "step 4 loss=0.6025" || fail "fourth loss"
[ -s "$out/trained.onnx" ] || fail "trained model saved"
if msg=$($sluice train $m/train_linear.onnx --steps 1 2>&1); then fail "missing feed accepted"; fi
echo "$msg" | grep -q "no value for input 't'" || fail "missing feed message: $msg"
if msg=$($sluice train $m/mlp.onnx --steps 1 2>&1); then fail "model without training_info accepted"; fi
echo "$msg" | grep -q "no training_info" || fail "no training_info message"

# test-onnx --trace: one Chrome trace per case when there are several, named after the case.
for c in case_a case_b; do
  mkdir -p "$out/cases/$c/test_data_set_0"
  cp $m/train_linear.onnx "$out/cases/$c/model.onnx"
  cp $m/train_linear_x.pb "$out/cases/$c/test_data_set_0/input_0.pb"
done
$sluice test-onnx "$out/cases" --trace "$out/t.json" | grep -q "2 passed, 0 failed" || fail "test-onnx cases"
grep -q '"traceEvents"' "$out/t.case_a.json" || fail "trace of case_a"
grep -q '"ph": "X"' "$out/t.case_b.json" || fail "trace of case_b has node events"
$sluice test-onnx "$out/cases/case_a" --trace "$out/one.json" > /dev/null || fail "one case"
grep -q '"ph": "X"' "$out/one.json" || fail "trace of a single case goes to FILE itself"
echo "PASS"
