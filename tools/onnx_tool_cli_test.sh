#!/usr/bin/env bash
# `sluice onnx SUBVERB` as a user runs it: check, convert-version, extract, set-dims,
# externalize, internalize.
set -euo pipefail
sluice=tools/sluice
mlp=tests/testdata/onnx/mlp.onnx   # y = relu(x @ w + b), x: [N,2]
x=examples/mlp_x.pb                # x = [[1,2],[3,-1],[0,10]]
out=$(mktemp -d)
source tests/test_lib.sh  # json_is
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# Runs a command that must exit with status $1; its output is in $msg.
expect_rc() {
  local want=$1; shift
  set +e; msg=$("$@" 2>&1); local rc=$?; set -e
  [ "$rc" -eq "$want" ] || fail "'$*' exited $rc, not $want: $msg"
}

# Help everywhere; usage errors exit 2.
grep -q "onnx" <<< "$($sluice --help)" || fail "top-level help lists onnx"
for sub in "" check convert-version extract set-dims externalize internalize; do
  grep -q "usage: sluice onnx" <<< "$($sluice onnx $sub --help)" || fail "onnx $sub --help"
done
expect_rc 2 $sluice onnx
expect_rc 2 $sluice onnx frobnicate
grep -q "unknown subverb 'frobnicate'" <<< "$msg" || fail "unknown subverb message: $msg"
expect_rc 2 $sluice onnx check
expect_rc 2 $sluice onnx check "$mlp" --bogus
grep -q "bogus" <<< "$msg" || fail "unknown flag message: $msg"
expect_rc 2 $sluice onnx extract "$mlp" -i x "$out/e.onnx"
expect_rc 2 $sluice onnx set-dims "$mlp" "$out/s.onnx" --input x=3,-5
grep -q "bad dim '-5'" <<< "$msg" || fail "bad dim message: $msg"
expect_rc 2 $sluice onnx externalize "$mlp" "$out/e.onnx" --threshold many
expect_rc 2 $sluice onnx externalize "$mlp" "$out/e.onnx" --one-file a.data --file-per-tensor

# check: OK, or the checker's message and exit 1.
[ "$($sluice onnx check "$mlp")" = "OK" ] || fail "check mlp"
$sluice onnx check "$mlp" --full --json > "$out/check.json"
json_is "$out/check.json" "d == {'model': '$mlp', 'ok': True, 'message': ''}" || fail "check --full mlp"
expect_rc 1 $sluice onnx check tests/testdata/onnx/bad_unknown_op.onnx --json
echo "$msg" > "$out/check.json"
json_is "$out/check.json" "not d['ok'] and 'No Op registered for Frobnicate' in d['message']" || fail "checker message"
expect_rc 1 $sluice onnx check tests/testdata/onnx/bad_cycle.onnx
grep -q "topologically sorted" <<< "$msg" || fail "checker message for a cycle: $msg"
expect_rc 1 $sluice onnx check "$out/missing.onnx"
grep -q "missing.onnx" <<< "$msg" || fail "missing model message: $msg"

# IR 10 (ONNX 1.17's) at opset 21: the checker accepts it and it runs: relu(x @ w + b) is
# rows [5.5,0], [1.5,0], [20.5,0] (by hand). Opset 99 fails by the opset it needs.
[ "$($sluice onnx check tests/testdata/onnx/mlp_ir10_opset21.onnx --full)" = "OK" ] || fail "check an IR 10 model"
$sluice run tests/testdata/onnx/mlp_ir10_opset21.onnx --input "$x" --json > "$out/ir10_run.json"
json_is "$out/ir10_run.json" "[(o['name'], o['shape'], o['values']) for o in d['outputs']] ==
  [('y', [3, 2], [5.5, 0, 1.5, 0, 20.5, 0])]" || fail "an IR 10 / opset 21 model runs"
# The other `sluice onnx` tools on the IR 10 model: each result stays IR 10 / opset 21, passes
# the checker, and (where it keeps the whole graph) computes the same rows.
ir10=tests/testdata/onnx/mlp_ir10_opset21.onnx
$sluice onnx extract "$ir10" -i x -o xwb "$out/ir10_head.onnx" > /dev/null || fail "extract an IR 10 model"
$sluice onnx set-dims "$ir10" "$out/ir10_dims.onnx" --input x=batch,2 > /dev/null || fail "set-dims on an IR 10 model"
$sluice onnx externalize "$ir10" "$out/ir10_ext.onnx" --threshold 0 > /dev/null || fail "externalize an IR 10 model"
$sluice onnx internalize "$out/ir10_ext.onnx" "$out/ir10_int.onnx" > /dev/null || fail "internalize an IR 10 model"
for m in ir10_head ir10_dims ir10_ext ir10_int; do
  [ "$($sluice onnx check "$out/$m.onnx" --full)" = "OK" ] || fail "check $m"
  "$python" -c "import onnx, sys; m = onnx.load(sys.argv[1], load_external_data=False)
assert m.ir_version == 10 and [o.version for o in m.opset_import] == [21], (m.ir_version, m.opset_import)" \
    "$out/$m.onnx" || fail "$m is no longer IR 10 / opset 21"
done
for m in ir10_dims ir10_ext ir10_int; do
  $sluice run "$out/$m.onnx" --input "$x" --json > "$out/$m.json"
  json_is "$out/$m.json" "[o['values'] for o in d['outputs']] == [[5.5, 0, 1.5, 0, 20.5, 0]]" || fail "$m runs"
done
expect_rc 1 $sluice run tests/testdata/onnx/bad_newer_opset.onnx --input "$x"
grep -q "needs ai.onnx opset 99; Sluice supports opsets up to 22" <<< "$msg" || fail "newer opset message: $msg"

# convert-version: opset 18's ReduceMean (axes an input) down to 17; both run: means [2, 5].
r18=tests/testdata/onnx/reduce_mean_opset18.onnx
$sluice onnx convert-version "$r18" "$out/r17.onnx" --opset 17 --json > "$out/r17.json"
json_is "$out/r17.json" "d['opset'] == 17 and d['nodes'] == 1 and d['outputs'] == [{'name': 'y', 'dims': [2]}]" ||
  fail "convert-version summary"
$sluice onnx convert-version "$r18" "$out/r17b.onnx" --opset 17 | grep -q "opset 17, 1 nodes" || fail "convert-version line"
[ "$($sluice onnx check "$out/r17.onnx" --full)" = "OK" ] || fail "converted model passes the checker"
python3 -c "
import struct, sys
# TensorProto fields: dims (1) 2 and 3, data_type (2) FLOAT, name (8) 'x', raw_data (9) 1..6.
t = b'\x08\x02\x08\x03\x10\x01\x42\x01x\x4a\x18' + struct.pack('<6f', 1, 2, 3, 4, 5, 6)
sys.stdout.buffer.write(t)" > "$out/x23.pb"
for r in "$out/r17.onnx" "$r18"; do
  $sluice run "$r" --input "x=$out/x23.pb" --json > "$out/r_run.json"
  json_is "$out/r_run.json" "[(o['name'], o['shape'], o['values']) for o in d['outputs']] == [('y', [2], [2, 5])]" ||
    fail "$r runs"
done
expect_rc 2 $sluice onnx convert-version "$r18" "$out/bad.onnx"
grep -q "no --opset" <<< "$msg" || fail "missing --opset message: $msg"
expect_rc 2 $sluice onnx convert-version "$r18" "$out/bad.onnx" --opset seventeen
expect_rc 1 $sluice onnx convert-version "$r18" "$out/bad.onnx" --opset 23
grep -q "1 to 22" <<< "$msg" || fail "opset range message: $msg"
[ ! -e "$out/bad.onnx" ] || fail "a failed convert-version wrote a file"

# Reference outputs of the whole model.
$sluice run "$mlp" --input "$x" --output-dir "$out/ref" >/dev/null

# extract: x @ w + b without the relu: rows [5.5,-9], [1.5,-14], [20.5,0] (by hand).
$sluice onnx extract "$mlp" -i x -o xwb "$out/head.onnx" --json > "$out/head.json"
json_is "$out/head.json" "d['inputs'] == [{'name': 'x', 'dims': ['N', 2]}] and
  d['outputs'] == [{'name': 'xwb', 'dims': ['N', 2]}] and d['file'] == '$out/head.onnx'" || fail "extract summary"
$sluice onnx extract "$mlp" -i x -o xwb "$out/head2.onnx" | grep -q "inputs x \[N,2\]; outputs xwb \[N,2\]" ||
  fail "extract summary line"
[ "$($sluice onnx check "$out/head.onnx" --full)" = "OK" ] || fail "extracted model passes the checker"
$sluice run "$out/head.onnx" --input "$x" --json > "$out/head_run.json"
json_is "$out/head_run.json" "[(o['name'], o['shape'], o['values']) for o in d['outputs']] ==
  [('xwb', [3, 2], [5.5, -9, 1.5, -14, 20.5, 0])]" || fail "extracted model runs"
$sluice onnx extract "$mlp" -i xwb -o y "$out/tail.onnx" >/dev/null
$sluice run "$out/tail.onnx" --input "xwb=$x" --json > "$out/tail_run.json"
json_is "$out/tail_run.json" "[(o['name'], o['shape']) for o in d['outputs']] == [('y', [3, 2])]" || fail "tail runs"
expect_rc 1 $sluice onnx extract "$mlp" -i b -o y "$out/bad.onnx"
grep -q "output 'y' depends on 'x'" <<< "$msg" || fail "extract dependency message: $msg"
expect_rc 1 $sluice onnx extract "$mlp" -i x -o nothing "$out/bad.onnx"
grep -q "output 'nothing'" <<< "$msg" || fail "extract unknown output message: $msg"
[ ! -e "$out/bad.onnx" ] || fail "a failed extract wrote a file"

# set-dims: a fixed batch, inferred through to the output; rank mismatch names the tensor.
$sluice onnx set-dims "$mlp" "$out/fixed.onnx" --input x=3,2 --json > "$out/fixed.json"
json_is "$out/fixed.json" "d['inputs'] == [{'name': 'x', 'dims': [3, 2]}] and d['outputs'] == [{'name': 'y', 'dims': [3, 2]}]" ||
  fail "set-dims summary"
$sluice run "$out/fixed.onnx" --input "$x" --output-dir "$out/fixed_out" >/dev/null
cmp -s "$out/ref/output_0.pb" "$out/fixed_out/output_0.pb" || fail "set-dims model gives other outputs"
$sluice onnx set-dims "$mlp" "$out/sym.onnx" --input x=batch,2 --output y=batch,2 --json > "$out/sym.json"
json_is "$out/sym.json" "d['inputs'] == [{'name': 'x', 'dims': ['batch', 2]}] and d['outputs'] == [{'name': 'y', 'dims': ['batch', 2]}]" ||
  fail "symbolic dims"
expect_rc 1 $sluice onnx set-dims "$mlp" "$out/bad.onnx" --input x=1,3,2
grep -q "input 'x' has rank 2" <<< "$msg" || fail "rank mismatch message: $msg"
expect_rc 1 $sluice onnx set-dims "$mlp" "$out/bad.onnx" --output z=1
grep -q "no output named 'z'" <<< "$msg" || fail "unknown output message: $msg"

# externalize -> run -> internalize -> run: the same outputs, byte for byte.
$sluice onnx externalize "$mlp" "$out/ext/m.onnx" --threshold 0 --json > "$out/ext.json"
json_is "$out/ext.json" "d == {'file': '$out/ext/m.onnx', 'tensors': 2, 'bytes': 24, 'files': ['m.onnx.data']}" ||
  fail "externalize summary"
[ "$(stat -c %s "$out/ext/m.onnx.data")" = "4104" ] || fail "b starts at offset 4096 after w's 16 bytes"
$sluice run "$out/ext/m.onnx" --input "$x" --output-dir "$out/ext_out" >/dev/null
cmp -s "$out/ref/output_0.pb" "$out/ext_out/output_0.pb" || fail "externalized model gives other outputs"
$sluice onnx internalize "$out/ext/m.onnx" "$out/inline.onnx" >/dev/null
rm -r "$out/ext"
$sluice run "$out/inline.onnx" --input "$x" --output-dir "$out/inline_out" >/dev/null
cmp -s "$out/ref/output_0.pb" "$out/inline_out/output_0.pb" || fail "internalized model gives other outputs"

$sluice onnx externalize "$mlp" "$out/per/m.onnx" --threshold 0 --file-per-tensor >/dev/null
[ -s "$out/per/w" ] && [ -s "$out/per/b" ] || fail "a file per tensor"
$sluice run "$out/per/m.onnx" --input "$x" --output-dir "$out/per_out" >/dev/null
cmp -s "$out/ref/output_0.pb" "$out/per_out/output_0.pb" || fail "file-per-tensor model gives other outputs"
# The threshold: w and b are 16 and 8 bytes.
$sluice onnx externalize "$mlp" "$out/half/m.onnx" --threshold 10 --json > "$out/half.json"
json_is "$out/half.json" "(d['tensors'], d['bytes']) == (1, 16)" || fail "threshold"
$sluice onnx externalize "$mlp" "$out/half2/m.onnx" --threshold 10 | grep -q "1 tensor (16 bytes)" || fail "threshold line"

# Refusals: a location outside the folder; external data through a symbolic link.
expect_rc 1 $sluice onnx externalize "$mlp" "$out/esc/m.onnx" --one-file ../escape.data --threshold 0
grep -q "leaves the model's folder" <<< "$msg" || fail "escape message: $msg"
echo "secret" > "$out/elsewhere"
rm "$out/per/w"
ln -s "$out/elsewhere" "$out/per/w"
expect_rc 1 $sluice onnx internalize "$out/per/m.onnx" "$out/bad.onnx"
grep -q "symbolic link" <<< "$msg" || fail "symlink message: $msg"
echo "PASS"
