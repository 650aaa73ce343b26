#!/usr/bin/env bash
# ONNX conformance inside the test suite: generates ONNX 1.12's node cases (and the project's
# cases for old operator versions) with Debian's python3-onnx into a scratch folder, runs
# `sluice test-onnx` on them, and holds the results to a floor:
#   - at least MIN_PASSED of the 922 node cases pass, and no case (node or simple model)
#     crashes or hangs;
#   - every case named in MUST_PASS passes (BatchNormalization in every mode, training ops,
#     sequences and optionals in every node and simple-model case that has them);
#   - every old-version case the project generates passes.
set -uo pipefail
root="${TEST_SRCDIR:?run me with bazel test}/${TEST_WORKSPACE:-sluice}"
sluice="$root/tools/sluice"
work="${TEST_TMPDIR:-$(mktemp -d)}"
MIN_PASSED=${MIN_PASSED:-912}
MUST_PASS="test_batchnorm_epsilon test_batchnorm_example test_batchnorm_epsilon_training_mode
  test_batchnorm_example_training_mode test_adagrad test_adagrad_multiple test_adam test_adam_multiple
  test_momentum test_momentum_multiple test_gradient_of_add test_gradient_of_add_and_mul
  test_nesterov_momentum test_if test_loop11 test_scan9_sum test_scan_sum test_lstm_defaults
  test_gru_defaults test_rnn_seq_length test_resize_upsample_scales_linear
  test_training_dropout test_conv_with_strides_padding test_convtranspose_output_shape
  test_identity_opt test_identity_sequence test_if_opt test_if_seq test_loop13_seq test_loop16_seq_none
  test_optional_get_element test_optional_get_element_sequence test_optional_has_element
  test_optional_has_element_empty test_sequence_insert_at_back test_sequence_insert_at_front
  test_sequence_map_add_1_sequence_1_tensor test_sequence_map_add_1_sequence_1_tensor_expanded
  test_sequence_map_add_2_sequences test_sequence_map_add_2_sequences_expanded
  test_sequence_map_extract_shapes test_sequence_map_extract_shapes_expanded
  test_sequence_map_identity_1_sequence test_sequence_map_identity_1_sequence_expanded
  test_sequence_map_identity_1_sequence_1_tensor test_sequence_map_identity_1_sequence_1_tensor_expanded
  test_sequence_map_identity_2_sequences test_sequence_map_identity_2_sequences_expanded
  test_sequence_model1 test_sequence_model2 test_sequence_model3 test_sequence_model4
  test_sequence_model5 test_sequence_model6 test_sequence_model7 test_sequence_model8"

fail=0
bash "$root/tests/onnx_cases/gen_onnx_testdata.sh" "$work/onnx" >/dev/null || { echo "FAIL: generating test data"; exit 1; }
"$sluice" test-onnx "$work/onnx/node" --json "$work/node.json" > "$work/node.txt"
"$sluice" test-onnx "$work/onnx/simple" > "$work/simple.txt"
echo "node cases: $(tail -1 "$work/node.txt")"
echo "simple model cases: $(tail -1 "$work/simple.txt")"
passed=$(grep -c '^PASS' "$work/node.txt")
cat "$work/simple.txt" >> "$work/node.txt"
if [ "$passed" -lt "$MIN_PASSED" ]; then
  echo "FAIL: $passed cases passed, fewer than $MIN_PASSED"
  fail=1
fi
if grep -E '^FAIL .*(crashed with signal|timed out)' "$work/node.txt"; then
  echo "FAIL: cases above crashed or hung"
  fail=1
fi
for c in $MUST_PASS; do
  if ! grep -qx "PASS $c" "$work/node.txt"; then
    echo "FAIL: $c must pass: $(grep "^[A-Z]* $c[:]*" "$work/node.txt" | head -1)"
    fail=1
  fi
done
for gen in "$root"/tests/onnx_cases/gen_onnx_*_cases.py; do
  out="$work/$(basename "$gen" .py)"
  /usr/bin/python3 "$gen" "$out" >/dev/null 2>&1 || { echo "FAIL: $gen did not run"; fail=1; continue; }
  if ! "$sluice" test-onnx "$out" > "$out.txt"; then
    grep -v '^PASS' "$out.txt"
    echo "FAIL: generated cases from $(basename "$gen")"
    fail=1
  else
    echo "$(basename "$gen"): $(tail -1 "$out.txt")"
  fi
done
grep -v '^PASS' "$work/node.txt" | head -200
exit $fail
