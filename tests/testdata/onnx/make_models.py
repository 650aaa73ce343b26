"""Writes the small ONNX models the tests use (run with Debian's /usr/bin/python3; the files
are committed, so tests need no Python). Expected values live in the tests, computed by hand.

  /usr/bin/python3 tests/testdata/onnx/make_models.py tests/testdata/onnx
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))


def save(model, name, check=True):
    if check:
        onnx.checker.check_model(model)
    with open(os.path.join(out, name), "wb") as f:
        f.write(model.SerializeToString())


def opset(v):
    return [helper.make_opsetid("", v)]


# y = relu(x @ w + b), w = [[1, -1], [2, 1]], b = [0.5, -10]; x: [N, 2].
w = numpy_helper.from_array(np.array([[1, -1], [2, 1]], np.float32), "w")
b = numpy_helper.from_array(np.array([0.5, -10], np.float32), "b")
mlp = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["xw"], name="matmul"),
     helper.make_node("Add", ["xw", "b"], ["xwb"], name="add"),
     helper.make_node("Relu", ["xwb"], ["y"], name="relu")],
    "mlp",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2])],
    [w, b])
save(helper.make_model(mlp, opset_imports=opset(13)), "mlp.onnx")

# if (c) then x + 1 else x * 2: the branches read x from the outer graph.
then_g = helper.make_graph(
    [helper.make_node("Add", ["x", "one"], ["t"], name="then_add")], "then", [],
    [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])],
    [numpy_helper.from_array(np.array(1, np.float32), "one")])
else_g = helper.make_graph(
    [helper.make_node("Mul", ["x", "two"], ["e"], name="else_mul")], "else", [],
    [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])],
    [numpy_helper.from_array(np.array(2, np.float32), "two")])
cond = helper.make_graph(
    [helper.make_node("If", ["c"], ["y"], name="branch", then_branch=then_g, else_branch=else_g)],
    "cond",
    [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
     helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
save(helper.make_model(cond, opset_imports=opset(13)), "if.onnx")

# Malformed models: each must be refused with an error that names what is wrong.
mlp_model = helper.make_model(mlp, opset_imports=opset(13))
data = mlp_model.SerializeToString()
with open(os.path.join(out, "bad_truncated.onnx"), "wb") as f:
    f.write(data[: len(data) // 2])

bad = onnx.ModelProto()
bad.CopyFrom(mlp_model)
bad.graph.initializer[0].data_type = 99  # No such element type.
save(bad, "bad_dtype.onnx", check=False)

bad = onnx.ModelProto()
bad.CopyFrom(mlp_model)
bad.graph.initializer[0].raw_data = bad.graph.initializer[0].raw_data[:8]  # 2 of 4 floats.
save(bad, "bad_short_raw_data.onnx", check=False)

cycle = helper.make_graph(
    [helper.make_node("Add", ["x", "q"], ["p"], name="first"),
     helper.make_node("Relu", ["p"], ["q"], name="second")],
    "cycle", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
    [helper.make_tensor_value_info("q", TensorProto.FLOAT, [2])])
save(helper.make_model(cycle, opset_imports=opset(13)), "bad_cycle.onnx", check=False)

orphan = helper.make_graph(
    [helper.make_node("Add", ["x", "ghost"], ["y"], name="reads_ghost")],
    "orphan", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
save(helper.make_model(orphan, opset_imports=opset(13)), "bad_orphan_input.onnx", check=False)

unknown = helper.make_graph(
    [helper.make_node("Frobnicate", ["x"], ["y"], name="mystery")],
    "unknown", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
save(helper.make_model(unknown, opset_imports=opset(13)), "bad_unknown_op.onnx", check=False)

domain = helper.make_graph(
    [helper.make_node("Relu", ["x"], ["y"], name="elsewhere", domain="com.example")],
    "domain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
save(helper.make_model(domain, opset_imports=opset(13) + [helper.make_opsetid("com.example", 1)]),
     "bad_unknown_domain.onnx", check=False)

newer = helper.make_model(mlp, opset_imports=opset(99))
save(newer, "bad_newer_opset.onnx", check=False)
