#!/usr/bin/env bash
# TensorFlow GraphDefs in text format (tests/tf_graphs/*.pbtxt) run through TensorFlow's C API
# (tests/tf_graph_runner.cc) against numpy's values (tests/tf_graphs/expected.py, Debian's
# python3). Prints PASS/FAIL per case; fails on any failure, on a .pbtxt without a case in
# expected.py or a case without a .pbtxt, and when python3 or numpy is missing.
set -uo pipefail
python=/usr/bin/python3
runner=tests/tf_graph_runner
out="${TEST_TMPDIR:-$(mktemp -d)}/tf_graphs"

if ! "$python" -c 'import numpy' 2>/dev/null; then
  echo "FAIL: $python cannot import numpy; install Debian's python3-numpy (scripts/setup.sh does)"
  exit 1
fi
"$python" tests/tf_graphs/expected.py "$out" || { echo "FAIL: tests/tf_graphs/expected.py did not run"; exit 1; }

pass=0 fail=0
for pbtxt in tests/tf_graphs/*.pbtxt; do
  name=$(basename "$pbtxt" .pbtxt)
  if [ ! -d "$out/$name" ]; then
    echo "FAIL $name: expected.py has no case of that name"; fail=$((fail + 1)); continue
  fi
  if timeout 120 "$runner" "$pbtxt" "$out/$name"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
for dir in "$out"/*/; do
  name=$(basename "$dir")
  [ -f "tests/tf_graphs/$name.pbtxt" ] || { echo "FAIL $name: no tests/tf_graphs/$name.pbtxt"; fail=$((fail + 1)); }
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
