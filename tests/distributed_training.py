"""Writes the inputs of tests/distributed_training_test.sh, then compares its two runs.

Usage:
  distributed_training.py write WORKDIR        the MLP training model (tests/torch_training.py's,
                                              Gemm/Relu/Gemm, mean squared error, Gradient and
                                              nesterov Momentum) with x.pb and target.pb
  distributed_training.py compare LOCAL.json LOCAL.onnx CLUSTER.json CLUSTER.onnx
                                              the per-step losses and trained initializers of a
                                              local and a data-parallel run must agree to 1e-5
"""
import json
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

import torch_training as tt

TOL = 1e-5


def write(work):
    torch.manual_seed(5)
    module, x, target = tt.Mlp(), torch.randn(tt.BATCH, 6), torch.randn(tt.BATCH, 3)
    opt = {"kind": "momentum", "tag": "nesterov", "momentum": 0.8, "dampening": 0.0, "weight_decay": 0.0,
           "nesterov": True, "lr": 0.02}
    onnx.save(tt.build_model("mlp", module, x.numpy(), target.numpy(), opt), work + "/mlp.onnx")
    for name, value in (("x", x), ("target", target)):
        with open("%s/%s.pb" % (work, name), "wb") as f:
            f.write(numpy_helper.from_array(value.numpy(), name).SerializeToString())


def losses(path):
    """The per-step losses of `sluice train --json` output in `path`."""
    return [step["outputs"]["loss"] for step in json.load(open(path))["steps"]]


def compare(local_json, local_onnx, cluster_json, cluster_onnx):
    a, b = losses(local_json), losses(cluster_json)
    if not a or len(a) != len(b):
        print("FAIL: %d local and %d cluster loss lines" % (len(a), len(b)))
        return 1
    rel = max(abs(p - q) / max(abs(p), 1e-12) for p, q in zip(a, b))
    print("losses: local %.6g -> %.6g, cluster %.6g -> %.6g over %d steps; max rel diff %.2e"
          % (a[0], a[-1], b[0], b[-1], len(a), rel))
    failed = rel > TOL or not a[-1] < 0.7 * a[0]
    wa = {t.name: numpy_helper.to_array(t) for t in onnx.load(local_onnx).graph.initializer}
    wb = {t.name: numpy_helper.to_array(t) for t in onnx.load(cluster_onnx).graph.initializer}
    worst = 0.0
    for k, v in wa.items():
        err = float(np.abs(wb[k].astype(np.float64) - v).max() / max(np.abs(v).max(), 1e-6))
        worst = max(worst, err)
    print("trained initializers: max diff %.2e relative to each tensor's largest value" % worst)
    failed |= worst > TOL
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
        sys.exit(0)
    sys.exit(compare(*sys.argv[2:6]))
