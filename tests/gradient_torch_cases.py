"""ONNX Gradient nodes against torch autograd, as `sluice test-onnx` cases.

Usage: gradient_torch_cases.py SLUICE WORKDIR

Writes ONNX backend-style cases (model.onnx, test_data_set_0/input_i.pb, output_i.pb) whose
models hold Gradient nodes (domain ai.onnx.preview.training) and whose expected outputs are
computed here, in the same run, by torch autograd in float64 from the same float32 inputs:

  - MLPs (Gemm or MatMul+Add, Relu/Tanh, mean squared error or softmax cross-entropy): the
    loss and its gradients with respect to every weight and the input x;
  - Conv + BatchNormalization(training_mode=1) + Relu + MaxPool or AveragePool + Flatten + Gemm:
    the loss, gradients with respect to x, the conv weights, BN's scale and bias and the Gemm
    weights, and BN's new running statistics;
  - second order: a Gradient whose y is computed from another Gradient's outputs (the sum of
    squared first gradients, and the operator description's own d(dO/dW)/dW form), through
    Tanh/Sigmoid/Softplus and through Relu/MaxPool/BatchNormalization(training);
  - a Gradient feeding ai.onnx.preview.training's Momentum (standard and nesterov, T > 0 and
    T = 0) in one graph: new weights and velocities, the formula applied to torch's gradients.

Then runs `sluice test-onnx` on them (every case must pass, within its tolerance
|got - want| <= 1e-5 + 1e-3 * |want|) and `sluice run` on each, printing per case the largest
absolute difference from torch and the largest difference as a fraction of the tolerance.
Exits 1 on any failure.
"""
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

TRAINING = "ai.onnx.preview.training"
ABS_TOL, REL_TOL = 1e-5, 1e-3


class Case:
    """One test case: ONNX nodes, named float32/int64 inputs, named expected outputs."""

    def __init__(self, name, seed):
        self.name = name
        self.rng = np.random.RandomState(seed)
        self.nodes = []
        self.inputs = []   # (name, numpy array)
        self.outputs = []  # (name, numpy array)

    def input(self, name, shape, scale=1.0):
        """A float32 input drawn from N(0, scale^2); returns it as a float64 torch leaf."""
        value = (self.rng.randn(*shape) * scale).astype(np.float32)
        return self.feed(name, value)

    def feed(self, name, value):
        self.inputs.append((name, value))
        if value.dtype == np.float32:
            return torch.tensor(value, dtype=torch.float64, requires_grad=True)
        return torch.tensor(value)

    def node(self, op, inputs, outputs, **attrs):
        self.nodes.append(helper.make_node(op, inputs, outputs, **attrs))

    def gradient(self, xs, outputs, y, zs=()):
        """A Gradient node fed with the tensors it names (xs followed by zs)."""
        attrs = {"zs": list(zs)} if zs else {}  # An empty list attribute has no type.
        self.nodes.append(helper.make_node("Gradient", list(xs) + list(zs), outputs, domain=TRAINING,
                                           xs=list(xs), y=y, **attrs))

    def expect(self, name, tensor, zero=False):
        """Output `name` must equal `tensor`. Unless `zero` says it is zero in exact arithmetic,
        its largest value must dwarf the tolerance's absolute part, or the check would be empty."""
        value = np.asarray(tensor.detach().numpy() if isinstance(tensor, torch.Tensor) else tensor, np.float32)
        if not zero and not np.abs(value).max() >= 100 * ABS_TOL:
            raise ValueError("%s: output %s is too small to check (largest %.3g)"
                             % (self.name, name, np.abs(value).max()))
        self.outputs.append((name, value))

    def write(self, root):
        def info(name, value):
            kind = TensorProto.INT64 if value.dtype == np.int64 else TensorProto.FLOAT
            return helper.make_tensor_value_info(name, kind, list(value.shape))

        graph = helper.make_graph(self.nodes, self.name, [info(n, v) for n, v in self.inputs],
                                  [info(n, v) for n, v in self.outputs])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15),
                                                        helper.make_opsetid(TRAINING, 1)])
        onnx.checker.check_model(model)
        folder = os.path.join(root, self.name)
        data = os.path.join(folder, "test_data_set_0")
        os.makedirs(data, exist_ok=True)
        onnx.save(model, os.path.join(folder, "model.onnx"))
        for kind, values in (("input", self.inputs), ("output", self.outputs)):
            for i, (name, value) in enumerate(values):
                with open(os.path.join(data, "%s_%d.pb" % (kind, i)), "wb") as f:
                    f.write(numpy_helper.from_array(value, name).SerializeToString())
        return folder


def grads(y, xs, create_graph=False):
    return torch.autograd.grad(y, xs, create_graph=create_graph)


def mse(c, out, target_name, loss="loss", reduce="ReduceMean"):
    """ONNX nodes of mean (or sum) of (out - target)^2 reading tensor `out`; writes `loss`."""
    c.node("Sub", [out, target_name], [loss + "_diff"])
    c.node("Mul", [loss + "_diff", loss + "_diff"], [loss + "_sq"])
    c.node(reduce, [loss + "_sq"], [loss], keepdims=0)


def cross_entropy(c, out, onehot_name, batch, loss="loss"):
    """ONNX nodes of -mean over the batch of sum(onehot * log_softmax(out)); writes `loss`."""
    c.node("LogSoftmax", [out], [loss + "_logp"], axis=1)
    c.node("Mul", [loss + "_logp", onehot_name], [loss + "_picked"])
    c.node("ReduceSum", [loss + "_picked"], [loss + "_total"], keepdims=0)
    c.node("Constant", [], [loss + "_neg_inv_n"],
           value=numpy_helper.from_array(np.array(-1.0 / batch, np.float32)))
    c.node("Mul", [loss + "_total", loss + "_neg_inv_n"], [loss])


def onehot(c, name, batch, classes):
    labels = c.rng.randint(0, classes, batch)
    value = np.eye(classes, dtype=np.float32)[labels]
    c.inputs.append((name, value))
    return torch.tensor(value, dtype=torch.float64), torch.tensor(labels)


def sum_of_squares(c, tensors, out):
    """ONNX nodes of sum over `tensors` of ReduceSum(t * t); writes `out`."""
    parts = []
    for t in tensors:
        c.node("Mul", [t, t], [t + "_sq"])
        c.node("ReduceSum", [t + "_sq"], [t + "_sqsum"], keepdims=0)
        parts.append(t + "_sqsum")
    c.node("Sum", parts, [out])


# ---- 1. MLPs --------------------------------------------------------------------------------

def mlp_gemm_mse():
    """Gemm(transB) + Relu + Gemm + MSE; Gradient over x and all weights, target as zs."""
    c = Case("gradient_mlp_gemm_relu_mse", 101)
    x, w1, b1 = c.input("x", (16, 12)), c.input("w1", (32, 12), 0.3), c.input("b1", (32,), 0.1)
    w2, b2 = c.input("w2", (5, 32), 0.2), c.input("b2", (5,), 0.1)
    t = c.input("target", (16, 5))
    c.node("Gemm", ["x", "w1", "b1"], ["h1"], transB=1)
    c.node("Relu", ["h1"], ["r1"])
    c.node("Gemm", ["r1", "w2", "b2"], ["out"], transB=1)
    mse(c, "out", "target")
    xs = ["x", "w1", "b1", "w2", "b2"]
    c.gradient(xs, ["d_" + n for n in xs], "loss", zs=["target"])
    loss = F.mse_loss(F.linear(torch.relu(F.linear(x, w1, b1)), w2, b2), t)
    c.expect("loss", loss)
    for n, g in zip(xs, grads(loss, [x, w1, b1, w2, b2])):
        c.expect("d_" + n, g)
    return c


def mlp_matmul_cross_entropy():
    """MatMul+Add, Relu, MatMul+Add, Relu, Gemm (alpha, beta) + softmax cross-entropy; Gradient
    over x and all weights, the labels not named at all."""
    c = Case("gradient_mlp_matmul_relu_cross_entropy", 102)
    x, w1, b1 = c.input("x", (24, 10)), c.input("w1", (10, 20), 0.3), c.input("b1", (20,), 0.1)
    w2, b2 = c.input("w2", (20, 16), 0.25), c.input("b2", (16,), 0.1)
    w3, b3 = c.input("w3", (16, 7), 0.3), c.input("b3", (1, 7), 0.1)
    t, _ = onehot(c, "onehot", 24, 7)
    c.node("MatMul", ["x", "w1"], ["m1"])
    c.node("Add", ["m1", "b1"], ["h1"])
    c.node("Relu", ["h1"], ["r1"])
    c.node("MatMul", ["r1", "w2"], ["m2"])
    c.node("Add", ["m2", "b2"], ["h2"])
    c.node("Relu", ["h2"], ["r2"])
    c.node("Gemm", ["r2", "w3", "b3"], ["out"], alpha=0.7, beta=1.5)
    cross_entropy(c, "out", "onehot", 24)
    xs = ["x", "w1", "b1", "w2", "b2", "w3", "b3"]
    c.gradient(xs, ["d_" + n for n in xs], "loss")
    r2 = torch.relu(torch.relu(x @ w1 + b1) @ w2 + b2)
    out = 0.7 * (r2 @ w3) + 1.5 * b3
    loss = F.cross_entropy(out, t.argmax(dim=1))
    c.expect("loss", loss)
    for n, g in zip(xs, grads(loss, [x, w1, b1, w2, b2, w3, b3])):
        c.expect("d_" + n, g)
    return c


def mlp_softmax_cross_entropy_loss():
    """Gemm + Tanh + Gemm + the SoftmaxCrossEntropyLoss operator (int64 labels, mean, with
    log_prob); Gradient over x and all weights."""
    c = Case("gradient_mlp_tanh_softmax_cross_entropy_loss_op", 103)
    x, w1, b1 = c.input("x", (20, 9)), c.input("w1", (14, 9), 0.4), c.input("b1", (14,), 0.1)
    w2, b2 = c.input("w2", (6, 14), 0.4), c.input("b2", (6,), 0.1)
    labels = c.feed("labels", c.rng.randint(0, 6, 20).astype(np.int64))
    c.node("Gemm", ["x", "w1", "b1"], ["h1"], transB=1)
    c.node("Tanh", ["h1"], ["a1"])
    c.node("Gemm", ["a1", "w2", "b2"], ["out"], transB=1)
    c.node("SoftmaxCrossEntropyLoss", ["out", "labels"], ["loss", "log_prob"], reduction="mean")
    xs = ["x", "w1", "b1", "w2", "b2"]
    c.gradient(xs, ["d_" + n for n in xs], "loss")
    out = F.linear(torch.tanh(F.linear(x, w1, b1)), w2, b2)
    loss = F.cross_entropy(out, labels)
    c.expect("loss", loss)
    c.expect("log_prob", F.log_softmax(out, dim=1))
    for n, g in zip(xs, grads(loss, [x, w1, b1, w2, b2])):
        c.expect("d_" + n, g)
    return c


def mlp_intermediate_fed():
    """Gradient with respect to an intermediate tensor (h1, before Relu) and w2, fed another
    value for h1 than the forward graph's (the operator description's H_1 example): the
    gradients are those at h1 = h1_fed, while the forward loss stays the graph's. A second
    Gradient over the same tensors, fed the graph's own h1 and with its first output skipped
    (an empty name), gives dY/dw2 at the graph's h1."""
    c = Case("gradient_mlp_intermediate_tensor_fed_value", 104)
    x, w1, b1 = c.input("x", (8, 5)), c.input("w1", (10, 5), 0.4), c.input("b1", (10,), 0.1)
    w2, b2 = c.input("w2", (3, 10), 0.4), c.input("b2", (3,), 0.1)
    t = c.input("target", (8, 3))
    h1_fed = c.input("h1_fed", (8, 10))
    c.node("Gemm", ["x", "w1", "b1"], ["h1"], transB=1)
    c.node("Relu", ["h1"], ["r1"])
    c.node("Gemm", ["r1", "w2", "b2"], ["out"], transB=1)
    mse(c, "out", "target", reduce="ReduceSum")
    c.nodes.append(helper.make_node("Gradient", ["h1_fed", "w2"], ["d_h1", "d_w2"], domain=TRAINING,
                                    xs=["h1", "w2"], y="loss"))
    # The same Gradient fed the graph's own h1, its dY/dH output skipped with an empty name.
    c.nodes.append(helper.make_node("Gradient", ["h1", "w2"], ["", "d_w2_at_h1"], domain=TRAINING,
                                    xs=["h1", "w2"], y="loss"))
    loss = F.mse_loss(F.linear(torch.relu(F.linear(x, w1, b1)), w2, b2), t, reduction="sum")
    loss_fed = F.mse_loss(F.linear(torch.relu(h1_fed), w2, b2), t, reduction="sum")
    c.expect("loss", loss)
    for n, g in zip(["d_h1", "d_w2"], grads(loss_fed, [h1_fed, w2])):
        c.expect(n, g)
    c.expect("d_w2_at_h1", grads(loss, [w2])[0])
    return c


# ---- 2. Conv + BatchNormalization(training) ---------------------------------------------------

def cnn_bn(name, seed, batch, in_ch, size, out_ch, group, stride, pool, epsilon, momentum, loss_kind):
    """Conv + BatchNormalization(training_mode=1) + Relu + pooling + Flatten + Gemm + loss;
    Gradient over x, conv weight and bias, BN scale and bias, Gemm weight and bias."""
    c = Case(name, seed)
    classes = 5
    x = c.input("x", (batch, in_ch, size, size))
    cw = c.input("conv_w", (out_ch, in_ch // group, 3, 3), 0.3)
    cb = c.input("conv_b", (out_ch,), 0.1)
    scale = c.feed("bn_scale", (1.0 + 0.2 * c.rng.randn(out_ch)).astype(np.float32))
    bias = c.input("bn_bias", (out_ch,), 0.1)
    mean_in = c.input("bn_mean", (out_ch,), 0.1)
    var_in = c.feed("bn_var", (0.5 + c.rng.rand(out_ch)).astype(np.float32))
    conv_size = (size + 2 - 3) // stride + 1
    pooled = conv_size // 2 if pool == "MaxPool" else conv_size - 1
    features = out_ch * pooled * pooled
    fw, fb = c.input("fc_w", (classes, features), 0.2), c.input("fc_b", (classes,), 0.1)
    c.node("Conv", ["x", "conv_w", "conv_b"], ["c1"], pads=[1, 1, 1, 1], strides=[stride, stride], group=group)
    c.node("BatchNormalization", ["c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"],
           ["b1", "running_mean", "running_var"], epsilon=epsilon, momentum=momentum, training_mode=1)
    c.node("Relu", ["b1"], ["r1"])
    if pool == "MaxPool":
        c.node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2])
    else:
        c.node("AveragePool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[1, 1])
    c.node("Flatten", ["p1"], ["f1"])
    c.node("Gemm", ["f1", "fc_w", "fc_b"], ["out"], transB=1)
    if loss_kind == "ce":
        t, labels = onehot(c, "onehot", batch, classes)
        cross_entropy(c, "out", "onehot", batch)
    else:
        t = c.input("target", (batch, classes))
        mse(c, "out", "target")
    xs = ["x", "conv_w", "conv_b", "bn_scale", "bn_bias", "fc_w", "fc_b"]
    c.gradient(xs, ["d_" + n for n in xs], "loss")

    c1 = F.conv2d(x, cw, cb, stride=stride, padding=1, groups=group)
    b1 = F.batch_norm(c1, None, None, scale, bias, training=True, eps=epsilon)
    r1 = torch.relu(b1)
    p1 = F.max_pool2d(r1, 2) if pool == "MaxPool" else F.avg_pool2d(r1, 2, stride=1)
    out = F.linear(torch.flatten(p1, 1), fw, fb)
    loss = F.cross_entropy(out, labels) if loss_kind == "ce" else F.mse_loss(out, t)
    c.expect("loss", loss)
    for n, g in zip(xs, grads(loss, [x, cw, cb, scale, bias, fw, fb])):
        c.expect("d_" + n, g, zero=(n == "conv_b"))  # BatchNormalization subtracts the bias again.
    # ONNX's running variance takes the batch's population variance.
    batch_mean = c1.detach().mean(dim=(0, 2, 3))
    batch_var = c1.detach().var(dim=(0, 2, 3), unbiased=False)
    c.expect("running_mean", momentum * mean_in.detach() + (1 - momentum) * batch_mean)
    c.expect("running_var", momentum * var_in.detach() + (1 - momentum) * batch_var)
    return c


# ---- 3. Second order -------------------------------------------------------------------------

def second_order_smooth_mlp():
    """Tanh/Softplus/Sigmoid MLP; penalty = sum of squares of dL/dW; its Gradient over the
    weights and x (torch: autograd.grad with create_graph=True)."""
    c = Case("gradient_second_order_smooth_mlp", 301)
    x, w1, b1 = c.input("x", (10, 6)), c.input("w1", (12, 6), 0.4), c.input("b1", (12,), 0.2)
    w2, b2 = c.input("w2", (8, 12), 0.3), c.input("b2", (8,), 0.2)
    w3, b3 = c.input("w3", (3, 8), 0.4), c.input("b3", (3,), 0.2)
    t = c.input("target", (10, 3), 0.5)
    c.node("Gemm", ["x", "w1", "b1"], ["h1"], transB=1)
    c.node("Tanh", ["h1"], ["a1"])
    c.node("Gemm", ["a1", "w2", "b2"], ["h2"], transB=1)
    c.node("Softplus", ["h2"], ["a2"])
    c.node("Gemm", ["a2", "w3", "b3"], ["h3"], transB=1)
    c.node("Sigmoid", ["h3"], ["out"])
    mse(c, "out", "target", reduce="ReduceSum")  # A sum, so that second derivatives are not tiny.
    ws = ["w1", "b1", "w2", "b2", "w3", "b3"]
    c.gradient(ws, ["d_" + n for n in ws], "loss", zs=["x", "target"])
    sum_of_squares(c, ["d_w1", "d_w2", "d_w3", "d_b1"], "penalty")
    xs2 = ws + ["x"]
    c.gradient(xs2, ["dd_" + n for n in xs2], "penalty", zs=["target"])

    out = torch.sigmoid(F.linear(F.softplus(F.linear(torch.tanh(F.linear(x, w1, b1)), w2, b2)), w3, b3))
    loss = F.mse_loss(out, t, reduction="sum")
    params = [w1, b1, w2, b2, w3, b3]
    first = grads(loss, params, create_graph=True)
    penalty = sum((g * g).sum() for g in (first[0], first[2], first[4], first[1]))
    c.expect("loss", loss)
    for n, g in zip(ws, first):
        c.expect("d_" + n, g)
    c.expect("penalty", penalty)
    for n, g in zip(xs2, grads(penalty, params + [x])):
        c.expect("dd_" + n, g)
    return c


def second_order_spec_form():
    """The Gradient operator description's own form: O = Loss(Gemm(X, W), L);
    Gradient(xs=[X, W], zs=[L], y=O) -> dO/dX, dO/dW; Gradient(xs=[X, W], zs=[L], y=dO/dW)
    -> d(dO/dW)/dX, d^2O/dW^2 (y not a scalar: the gradient of its sum)."""
    c = Case("gradient_second_order_spec_form", 302)
    x, w = c.input("X", (6, 5)), c.input("W", (4, 5), 0.5)
    lab = c.input("L", (6, 4), 0.5)
    c.node("Gemm", ["X", "W"], ["Y"], transB=1)
    c.node("Tanh", ["Y"], ["T"])
    mse(c, "T", "L", loss="O")
    c.gradient(["X", "W"], ["dO_dX", "dO_dW"], "O", zs=["L"])
    c.gradient(["X", "W"], ["d_dO_dW_dX", "d2O_dW2"], "dO_dW", zs=["L"])
    o = F.mse_loss(torch.tanh(F.linear(x, w)), lab)
    dx, dw = grads(o, [x, w], create_graph=True)
    c.expect("O", o)
    c.expect("dO_dX", dx)
    c.expect("dO_dW", dw)
    for n, g in zip(["d_dO_dW_dX", "d2O_dW2"], grads(dw.sum(), [x, w])):
        c.expect(n, g)
    return c


def second_order_cnn():
    """Conv + BatchNormalization(training) + Relu + MaxPool + Flatten + Gemm + cross-entropy;
    penalty = sum of squares of dL/d(conv_w) and dL/d(fc_w); its Gradient over the weights and x.
    Relu's and MaxPool's second derivatives vanish but their masks and indices carry through."""
    c = Case("gradient_second_order_relu_maxpool_bn", 303)
    batch, classes = 4, 5
    x = c.input("x", (batch, 2, 6, 6))
    cw, cb = c.input("conv_w", (4, 2, 3, 3), 0.3), c.input("conv_b", (4,), 0.1)
    scale = c.feed("bn_scale", (1.0 + 0.2 * c.rng.randn(4)).astype(np.float32))
    bias = c.input("bn_bias", (4,), 0.1)
    c.feed("bn_mean", np.zeros(4, np.float32))
    c.feed("bn_var", np.ones(4, np.float32))
    fw, fb = c.input("fc_w", (classes, 36), 0.2), c.input("fc_b", (classes,), 0.1)
    t, labels = onehot(c, "onehot", batch, classes)
    c.node("Conv", ["x", "conv_w", "conv_b"], ["c1"], pads=[1, 1, 1, 1])
    c.node("BatchNormalization", ["c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"],
           ["b1", "running_mean", "running_var"], epsilon=1e-5, momentum=0.9, training_mode=1)
    c.node("Relu", ["b1"], ["r1"])
    c.node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2])
    c.node("Flatten", ["p1"], ["f1"])
    c.node("Gemm", ["f1", "fc_w", "fc_b"], ["out"], transB=1)
    cross_entropy(c, "out", "onehot", batch)
    ws = ["conv_w", "bn_scale", "bn_bias", "fc_w", "fc_b"]
    c.gradient(ws, ["d_" + n for n in ws], "loss", zs=["x"])
    sum_of_squares(c, ["d_conv_w", "d_fc_w"], "penalty")
    xs2 = ws + ["x"]
    c.gradient(xs2, ["dd_" + n for n in xs2], "penalty")

    b1 = F.batch_norm(F.conv2d(x, cw, cb, padding=1), None, None, scale, bias, training=True, eps=1e-5)
    out = F.linear(torch.flatten(F.max_pool2d(torch.relu(b1), 2), 1), fw, fb)
    loss = F.cross_entropy(out, labels)
    params = [cw, scale, bias, fw, fb]
    first = grads(loss, params, create_graph=True)
    penalty = (first[0] ** 2).sum() + (first[3] ** 2).sum()
    c.expect("loss", loss)
    for n, g in zip(ws, first):
        c.expect("d_" + n, g)
    c.expect("penalty", penalty)
    for n, g in zip(xs2, grads(penalty, params + [x])):
        c.expect("dd_" + n, g)
    return c


# ---- 4. Gradient feeding Momentum -------------------------------------------------------------

def momentum_case(name, seed, mode, step, alpha, beta, norm_coefficient, lr, activation):
    """MLP loss, Gradient over its weights, ai.onnx.preview.training Momentum over all of them
    at update count T = step with nonzero velocities; outputs the new weights and velocities."""
    c = Case(name, seed)
    x = c.input("x", (12, 8))
    w1, b1 = c.input("w1", (16, 8), 0.3), c.input("b1", (16,), 0.1)
    w2, b2 = c.input("w2", (4, 16), 0.3), c.input("b2", (4,), 0.1)
    t = c.input("target", (12, 4))
    ws = ["w1", "b1", "w2", "b2"]
    params = [w1, b1, w2, b2]
    velocities = [c.input("v_" + n, tuple(p.shape), 0.05) for n, p in zip(ws, params)]
    c.feed("R", np.array(lr, np.float32))
    c.feed("T", np.array(step, np.int64))
    c.node("Gemm", ["x", "w1", "b1"], ["h1"], transB=1)
    c.node(activation, ["h1"], ["a1"])
    c.node("Gemm", ["a1", "w2", "b2"], ["out"], transB=1)
    mse(c, "out", "target")
    c.gradient(ws, ["g_" + n for n in ws], "loss")
    c.nodes.append(helper.make_node(
        "Momentum", ["R", "T"] + ws + ["g_" + n for n in ws] + ["v_" + n for n in ws],
        ["new_" + n for n in ws] + ["new_v_" + n for n in ws], domain=TRAINING,
        alpha=alpha, beta=beta, norm_coefficient=norm_coefficient, mode=mode))

    act = torch.relu if activation == "Relu" else torch.tanh
    loss = F.mse_loss(F.linear(act(F.linear(x, w1, b1)), w2, b2), t)
    c.expect("loss", loss)
    # ONNX Momentum, applied to torch's gradients; R and alpha/beta as float32 values.
    r = float(np.float32(lr))
    beta_adjusted = beta if step > 0 else 1.0
    new_x, new_v = [], []
    for p, g, v in zip(params, grads(loss, params), velocities):
        g_reg = norm_coefficient * p.detach() + g
        v_new = alpha * v.detach() + beta_adjusted * g_reg
        step_dir = v_new if mode == "standard" else g_reg + alpha * v_new
        new_x.append(p.detach() - r * step_dir)
        new_v.append(v_new)
    for n, value in zip(ws, new_x):
        c.expect("new_" + n, value)
    for n, value in zip(ws, new_v):
        c.expect("new_v_" + n, value)
    return c


def all_cases():
    return [
        mlp_gemm_mse(),
        mlp_matmul_cross_entropy(),
        mlp_softmax_cross_entropy_loss(),
        mlp_intermediate_fed(),
        cnn_bn("gradient_conv_bn_relu_maxpool_gemm", 201, batch=4, in_ch=3, size=8, out_ch=6, group=1, stride=1,
               pool="MaxPool", epsilon=1e-5, momentum=0.9, loss_kind="ce"),
        cnn_bn("gradient_conv_grouped_strided_bn_relu_avgpool_gemm", 202, batch=3, in_ch=4, size=9, out_ch=6,
               group=2, stride=2, pool="AveragePool", epsilon=1e-3, momentum=0.8, loss_kind="mse"),
        second_order_smooth_mlp(),
        second_order_spec_form(),
        second_order_cnn(),
        momentum_case("gradient_momentum_standard", 401, "standard", step=3, alpha=0.9, beta=0.7,
                      norm_coefficient=0.01, lr=0.05, activation="Relu"),
        momentum_case("gradient_momentum_nesterov", 402, "nesterov", step=2, alpha=0.8, beta=0.6,
                      norm_coefficient=0.003, lr=0.1, activation="Tanh"),
        momentum_case("gradient_momentum_standard_first_step", 403, "standard", step=0, alpha=0.9, beta=0.3,
                      norm_coefficient=0.02, lr=0.05, activation="Relu"),
    ]


def measure(sluice, folder, work):
    """Runs the case with `sluice run`; returns (largest |got - want|, largest |got - want| as a
    fraction of the tolerance, the output where that fraction is largest)."""
    data = os.path.join(folder, "test_data_set_0")
    out_dir = os.path.join(work, "run_" + os.path.basename(folder))
    cmd = [sluice, "run", os.path.join(folder, "model.onnx"), "--output-dir", out_dir]
    i = 0
    while os.path.exists(os.path.join(data, "input_%d.pb" % i)):
        cmd += ["--input", os.path.join(data, "input_%d.pb" % i)]
        i += 1
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if proc.returncode != 0:
        raise RuntimeError("sluice run exited %d: %s" % (proc.returncode, proc.stderr[-2000:]))
    worst_abs, worst_frac, worst_name = 0.0, 0.0, ""
    for f in sorted(os.listdir(data)):
        if not f.startswith("output_"):
            continue
        want_proto = onnx.load_tensor(os.path.join(data, f))
        want = numpy_helper.to_array(want_proto).astype(np.float64)
        got = numpy_helper.to_array(onnx.load_tensor(os.path.join(out_dir, f))).astype(np.float64)
        diff = np.abs(got - want)
        frac = (diff / (ABS_TOL + REL_TOL * np.abs(want))).max()
        worst_abs = max(worst_abs, diff.max())
        if frac >= worst_frac:
            worst_frac, worst_name = frac, want_proto.name
    return worst_abs, worst_frac, worst_name


def main():
    sluice, work = sys.argv[1], sys.argv[2]
    cases_dir = os.path.join(work, "cases")
    os.makedirs(cases_dir, exist_ok=True)
    torch.set_num_threads(1)
    cases = all_cases()
    folders = [case.write(cases_dir) for case in cases]
    for case in cases:
        if len(case.outputs) < 4:
            print("FAIL: %s checks only %d outputs" % (case.name, len(case.outputs)))
            return 1

    proc = subprocess.run([sluice, "test-onnx", cases_dir, "--timeout", "60"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)
    print(proc.stdout.rstrip())
    failures = []
    passed = set(re.findall(r"^PASS (\S+)", proc.stdout, re.M))
    for case in cases:
        if case.name not in passed:
            failures.append("%s did not pass sluice test-onnx" % case.name)
    if proc.returncode != 0:
        failures.append("sluice test-onnx exited %d" % proc.returncode)

    for case, folder in zip(cases, folders):
        try:
            worst_abs, worst_frac, worst_name = measure(sluice, folder, work)
        except RuntimeError as e:
            failures.append("%s: %s" % (case.name, e))
            continue
        print("%-52s %2d outputs; max |sluice - torch| %.2e; max diff/tolerance %.3f (%s)"
              % (case.name, len(case.outputs), worst_abs, worst_frac, worst_name))
        if not worst_frac <= 1.0:
            failures.append("%s: output %s is %.2f times the tolerance from torch's" % (case.name, worst_name,
                                                                                     worst_frac))
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
