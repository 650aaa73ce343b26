#!/usr/bin/env bash
# Writes ONNX 1.12's backend test cases (node and small model cases) to testdata/onnx, from
# Debian's python3-onnx, with no network. Safe to rerun.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-testdata/onnx}

# ONNX 1.12's test_adam_multiple computes its expected outputs with epsilon 1e-2 but writes an
# Adam node without the attribute, so a correct runtime fails it (onnx/onnx#7749). ONNX fixed
# the model, leaving the outputs as they were (onnx/onnx#7763); do the same here.
fix_adam_multiple() {
  /usr/bin/python3 - "$out/node/test_adam_multiple/model.onnx" <<'PY'
import os, sys
import onnx
path = sys.argv[1]
if os.path.exists(path):
    model = onnx.load(path)
    node = model.graph.node[0]
    if node.op_type == "Adam" and not any(a.name == "epsilon" for a in node.attribute):
        node.attribute.append(onnx.helper.make_attribute("epsilon", 1e-2))
        onnx.save(model, path)
PY
}

if [ -d "$out/node" ] && [ "$(ls "$out/node" | wc -l)" -ge 900 ]; then
  fix_adam_multiple
  echo "$out is ready"
  exit 0
fi
mkdir -p "$out"
/usr/bin/python3 - "$out" <<'PY' >/dev/null 2>&1
import sys
import numpy as np
# numpy 1.24 removed these aliases; ONNX 1.12's generators still use them.
for alias, real in (("float", float), ("int", int), ("bool", bool), ("object", object)):
    if alias not in np.__dict__:
        setattr(np, alias, real)
from onnx.backend.test.cmd_tools import main
sys.argv = ["onnx-backend-test", "generate-data", "-o", sys.argv[1]]
main()
PY
fix_adam_multiple
echo "wrote $(ls "$out/node" | wc -l) node cases to $out"
