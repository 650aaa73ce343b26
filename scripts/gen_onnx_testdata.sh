#!/usr/bin/env bash
# Writes ONNX 1.12's backend test cases (node and small model cases) to testdata/onnx, from
# Debian's python3-onnx, with no network. Safe to rerun.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-testdata/onnx}
[ -d "$out/node" ] && [ "$(ls "$out/node" | wc -l)" -ge 900 ] && { echo "$out is ready"; exit 0; }
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
echo "wrote $(ls "$out/node" | wc -l) node cases to $out"
