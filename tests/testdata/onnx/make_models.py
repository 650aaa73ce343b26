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

# Newer than ONNX 1.12 (not checked here: 1.12 knows opsets to 17 and IR 8). The mlp as an IR
# 10 / opset 21 model, which ONNX 1.17's checker accepts and Sluice runs.
ir10 = helper.make_model(mlp, opset_imports=opset(21))
ir10.ir_version = 10
save(ir10, "mlp_ir10_opset21.onnx", check=False)

# Opset 18 moved ReduceMean's axes from an attribute to an input: mean over axis 1 of x [2,3],
# y = [2, 5] for x = [[1,2,3],[4,5,6]]. The version converter takes it back to opset 17.
axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
reduce18 = helper.make_graph(
    [helper.make_node("ReduceMean", ["x", "axes"], ["y"], name="mean", keepdims=0)],
    "reduce_mean_18", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [axes])
save(helper.make_model(reduce18, opset_imports=opset(18)), "reduce_mean_opset18.onnx", check=False)

# A model with a TrainingInfoProto: linear regression y = x W + b trained with Momentum on the
# loss sum((y - t)^2). The algorithm graph holds the forward pass, a Gradient node and the
# optimizer; update_binding writes W, b, their velocities and the step count back. The
# initialization graph sets W and b. Expected losses come from numpy, below.
from onnx import TensorProto as TP

x_data = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
t_data = np.array([[1], [2], [4]], np.float32)
W0 = np.array([[0.1], [-0.2]], np.float32)
b0 = np.array([0.05], np.float32)
lr, alpha, beta = 0.001, 0.9, 1.0

inits = [numpy_helper.from_array(W0 * 0, "W"), numpy_helper.from_array(b0 * 0, "b"),
         numpy_helper.from_array(np.zeros_like(W0), "vW"), numpy_helper.from_array(np.zeros_like(b0), "vb"),
         numpy_helper.from_array(np.array(0, np.int64), "T"), numpy_helper.from_array(np.array(lr, np.float32), "R")]
main = helper.make_graph(
    [helper.make_node("MatMul", ["x", "W"], ["xW"]), helper.make_node("Add", ["xW", "b"], ["y"])],
    "linear", [helper.make_tensor_value_info("x", TP.FLOAT, [3, 2])],
    [helper.make_tensor_value_info("y", TP.FLOAT, [3, 1])], inits)
algorithm = helper.make_graph(
    [helper.make_node("MatMul", ["x", "W"], ["a_xW"]),
     helper.make_node("Add", ["a_xW", "b"], ["a_y"]),
     helper.make_node("Sub", ["a_y", "t"], ["diff"]),
     helper.make_node("Mul", ["diff", "diff"], ["sq"]),
     helper.make_node("ReduceSum", ["sq"], ["loss"], keepdims=0),
     helper.make_node("Gradient", ["W", "b"], ["dW", "db"], domain="ai.onnx.preview.training",
                      xs=["W", "b"], y="sq"),
     helper.make_node("Momentum", ["R", "T", "W", "b", "dW", "db", "vW", "vb"],
                      ["W_new", "b_new", "vW_new", "vb_new"], domain="ai.onnx.preview.training",
                      alpha=alpha, beta=beta, mode="standard"),
     helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(np.array(1, np.int64))),
     helper.make_node("Add", ["T", "one"], ["T_new"])],
    "algorithm", [helper.make_tensor_value_info("t", TP.FLOAT, [3, 1])],
    [helper.make_tensor_value_info(n, TP.FLOAT, None) for n in ("loss", "W_new", "b_new", "vW_new", "vb_new")] +
    [helper.make_tensor_value_info("T_new", TP.INT64, None)])
initialization = helper.make_graph(
    [helper.make_node("Constant", [], ["W_init"], value=numpy_helper.from_array(W0)),
     helper.make_node("Constant", [], ["b_init"], value=numpy_helper.from_array(b0))],
    "initialization", [], [helper.make_tensor_value_info("W_init", TP.FLOAT, [2, 1]),
                           helper.make_tensor_value_info("b_init", TP.FLOAT, [1])])
training = onnx.TrainingInfoProto()
training.algorithm.CopyFrom(algorithm)
training.initialization.CopyFrom(initialization)
for k, v in (("W", "W_init"), ("b", "b_init")):
    e = training.initialization_binding.add()
    e.key, e.value = k, v
for k, v in (("W", "W_new"), ("b", "b_new"), ("vW", "vW_new"), ("vb", "vb_new"), ("T", "T_new")):
    e = training.update_binding.add()
    e.key, e.value = k, v
linear = helper.make_model(main, opset_imports=opset(13) + [helper.make_opsetid("ai.onnx.preview.training", 1)])
linear.training_info.append(training)
save(linear, "train_linear.onnx")
with open(os.path.join(out, "train_linear_t.pb"), "wb") as f:
    f.write(numpy_helper.from_array(t_data, "t").SerializeToString())
with open(os.path.join(out, "train_linear_x.pb"), "wb") as f:
    f.write(numpy_helper.from_array(x_data, "x").SerializeToString())

# The same training in numpy, in double: the loss before each of 5 steps, and W, b after.
W, b, vW, vb = W0.astype(np.float64), b0.astype(np.float64), np.zeros((2, 1)), np.zeros(1)
losses = []
for step in range(5):
    d = x_data @ W + b - t_data
    losses.append(float((d * d).sum()))
    dW, db = x_data.T @ (2 * d), (2 * d).sum(axis=0)
    bt = beta if step > 0 else 1.0
    vW, vb = alpha * vW + bt * dW, alpha * vb + bt * db
    W, b = W - lr * vW, b - lr * vb
with open(os.path.join(out, "train_linear_expected.txt"), "w") as f:
    f.write(" ".join("%.9g" % v for v in losses) + "\n")
    f.write(" ".join("%.9g" % v for v in list(W.ravel()) + list(b.ravel())) + "\n")

# For the graph optimizer: y = relu(batchnorm(conv(x))) with a 1x1 Conv, plus a node nothing
# reads (Neg of x, output "unused"). The optimizer folds the BatchNormalization, fuses the
# Relu and drops the Neg; results must match the graph as imported (the tests run both).
rng = np.random.default_rng(7)
cw = numpy_helper.from_array(rng.uniform(-1, 1, (3, 2, 1, 1)).astype(np.float32), "cw")
cb = numpy_helper.from_array(rng.uniform(-1, 1, (3,)).astype(np.float32), "cb")
stats = [numpy_helper.from_array(v.astype(np.float32), n) for v, n in [
    (rng.uniform(0.5, 2, 3), "scale"), (rng.uniform(-1, 1, 3), "shift"),
    (rng.uniform(-1, 1, 3), "mean"), (rng.uniform(0.5, 2, 3), "var")]]
conv_bn = helper.make_graph(
    [helper.make_node("Conv", ["x", "cw", "cb"], ["c"], name="conv"),
     helper.make_node("BatchNormalization", ["c", "scale", "shift", "mean", "var"], ["n"], name="bn"),
     helper.make_node("Relu", ["n"], ["y"], name="relu"),
     helper.make_node("Neg", ["x"], ["unused"], name="dead")],
    "conv_bn",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 4])],
    [cw, cb] + stats)
save(helper.make_model(conv_bn, opset_imports=opset(15)), "conv_bn_relu.onnx")
