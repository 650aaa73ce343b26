"""Writes the models the multi-process cluster test runs (Debian's python3-onnx and numpy):

  deep/          an ONNX backend-style case (model.onnx, test_data_set_0/{input,output}_0.pb):
                 a residual MLP of 8 layers, wide enough that a pipeline cuts it in several
                 places and its skip connections cross stage boundaries; outputs from numpy.
  deep/x.pb      its input alone, for `sluice run --input`.

  python3 tests/cluster_models.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.RandomState(7)
width, layers = 64, 8

x = rng.uniform(-1, 1, (4, width)).astype(np.float32)
nodes, inits = [], []
h, skip, ref, ref_skip = "x", "x", x, x
for i in range(layers):
    w = (rng.uniform(-1, 1, (width, width)) / np.sqrt(width)).astype(np.float32)
    b = rng.uniform(-0.1, 0.1, (width,)).astype(np.float32)
    inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
    nodes += [helper.make_node("MatMul", [h, f"w{i}"], [f"mm{i}"], name=f"layer{i}/matmul"),
              helper.make_node("Add", [f"mm{i}", f"b{i}"], [f"pre{i}"], name=f"layer{i}/bias"),
              helper.make_node("Relu", [f"pre{i}"], [f"h{i}"], name=f"layer{i}/relu")]
    ref = np.maximum(ref @ w + b, 0).astype(np.float32)
    h = f"h{i}"
    if i % 2 == 1:  # A skip connection over the last two layers.
        nodes.append(helper.make_node("Add", [h, skip], [f"res{i}"], name=f"layer{i}/residual"))
        ref = (ref + ref_skip).astype(np.float32)
        h = skip = f"res{i}"
        ref_skip = ref
nodes.append(helper.make_node("Identity", [h], ["y"], name="output"))
graph = helper.make_graph(nodes, "deep_residual_mlp",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", width])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", width])],
                          inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)

case = os.path.join(out, "deep")
os.makedirs(os.path.join(case, "test_data_set_0"), exist_ok=True)
onnx.save(model, os.path.join(case, "model.onnx"))
for name, value, file in [("x", x, "test_data_set_0/input_0.pb"), ("y", ref, "test_data_set_0/output_0.pb"),
                          ("x", x, "x.pb")]:
    with open(os.path.join(case, file), "wb") as f:
        f.write(numpy_helper.from_array(value, name).SerializeToString())
