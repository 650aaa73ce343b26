"""Loss curves of `sluice train` against torch, from the same initial weights and data.

Usage: torch_training.py SLUICE WORKDIR [STEPS]

For an MLP (Gemm, Relu, Gemm, mean squared error) and a small CNN (Conv, BatchNormalization in
training mode, Relu, MaxPool, Conv, AveragePool, Flatten, Gemm, softmax cross-entropy), builds
an ONNX model whose TrainingInfoProto computes the loss, a Gradient node over the weights and an
optimizer step, trains it with `sluice train --steps STEPS --save`, and trains the torch module
with the matching torch.optim.SGD. The optimizers: plain SGD written as Mul/Sub, and
ai.onnx.preview.training's Momentum in standard mode (torch's dampening d is ONNX's beta = 1 - d
after the first step, where ONNX uses beta = 1 and torch skips dampening alike; torch's
weight_decay is ONNX's norm_coefficient) and in nesterov mode. Each printed loss must match
torch's (relative 1e-4 over the first 10 steps, 1e-3 after), the loss must fall, and the saved
weights and BatchNormalization running statistics must match torch's. Prints one line per run
with the largest relative loss difference; exits 1 on any failure.
"""
import os
import json
import subprocess
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

TRAINING = "ai.onnx.preview.training"
FIRST_STEPS, FIRST_TOL, ALL_TOL, WEIGHT_TOL = 10, 1e-4, 1e-3, 1e-4


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 16)
        self.fc2 = torch.nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(2, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)  # momentum 0.1 is ONNX's momentum 0.9.
        self.conv2 = torch.nn.Conv2d(4, 6, 3, padding=1, stride=1)
        self.fc = torch.nn.Linear(6 * 2 * 2, 5)

    def forward(self, x):
        h = torch.nn.functional.max_pool2d(torch.relu(self.bn(self.conv1(x))), 2)
        h = torch.nn.functional.avg_pool2d(torch.relu(self.conv2(h)), 2)
        return self.fc(torch.flatten(h, 1))


def mlp_forward(p):
    """ONNX nodes of Mlp.forward, names prefixed by p; weights are the initializers' names."""
    return [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], [p + "h1"], transB=1),
        helper.make_node("Relu", [p + "h1"], [p + "r1"]),
        helper.make_node("Gemm", [p + "r1", "fc2.weight", "fc2.bias"], [p + "out"], transB=1),
    ]


def cnn_forward(p, training):
    bn = (helper.make_node("BatchNormalization",
                           [p + "c1", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"],
                           [p + "b1", p + "running_mean", p + "running_var"],
                           epsilon=1e-5, momentum=0.9, training_mode=1) if training else
          helper.make_node("BatchNormalization",
                           [p + "c1", "bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"],
                           [p + "b1"], epsilon=1e-5))
    return [
        helper.make_node("Conv", ["x", "conv1.weight", "conv1.bias"], [p + "c1"], pads=[1, 1, 1, 1]),
        bn,
        helper.make_node("Relu", [p + "b1"], [p + "r1"]),
        helper.make_node("MaxPool", [p + "r1"], [p + "m1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", [p + "m1", "conv2.weight", "conv2.bias"], [p + "c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", [p + "c2"], [p + "r2"]),
        helper.make_node("AveragePool", [p + "r2"], [p + "a2"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", [p + "a2"], [p + "f"]),
        helper.make_node("Gemm", [p + "f", "fc.weight", "fc.bias"], [p + "out"], transB=1),
    ]


def mse_loss(p):
    return [
        helper.make_node("Sub", [p + "out", "target"], [p + "diff"]),
        helper.make_node("Mul", [p + "diff", p + "diff"], [p + "sq"]),
        helper.make_node("ReduceMean", [p + "sq"], ["loss"], keepdims=0),
    ]


def cross_entropy_loss(p):
    """Mean over the batch of -sum(onehot * log_softmax(out)); target is one-hot."""
    return [
        helper.make_node("LogSoftmax", [p + "out"], [p + "logp"], axis=1),
        helper.make_node("Mul", [p + "logp", "target"], [p + "picked"]),
        helper.make_node("ReduceSum", [p + "picked"], [p + "total"], keepdims=0),
        helper.make_node("Constant", [], [p + "neg_inv_n"],
                         value=numpy_helper.from_array(np.array(-1.0 / BATCH, np.float32))),
        helper.make_node("Mul", [p + "total", p + "neg_inv_n"], ["loss"]),
    ]


BATCH = 8


def optimizer_nodes(weights, opt):
    """Nodes that read grad_<w> and write new_<w>; the extra initializers and bindings they need."""
    nodes, inits, binding = [], [], {w: "new_" + w for w in weights}
    if opt["kind"] == "sgd":
        nodes.append(helper.make_node("Constant", [], ["lr"],
                                      value=numpy_helper.from_array(np.array(opt["lr"], np.float32))))
        for w in weights:
            nodes.append(helper.make_node("Mul", ["grad_" + w, "lr"], ["step_" + w]))
            nodes.append(helper.make_node("Sub", [w, "step_" + w], ["new_" + w]))
        return nodes, inits, binding
    inits.append(numpy_helper.from_array(np.array(opt["lr"], np.float32), "R"))
    inits.append(numpy_helper.from_array(np.array(0, np.int64), "T"))
    velocities = ["v_" + w for w in weights]
    nodes.append(helper.make_node(
        "Momentum", ["R", "T"] + weights + ["grad_" + w for w in weights] + velocities,
        ["new_" + w for w in weights] + ["new_" + v for v in velocities], domain=TRAINING,
        alpha=opt["momentum"], beta=1.0 - opt["dampening"], norm_coefficient=opt["weight_decay"],
        mode="nesterov" if opt["nesterov"] else "standard"))
    nodes.append(helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(np.array(1, np.int64))))
    nodes.append(helper.make_node("Add", ["T", "one"], ["new_T"]))
    binding["T"] = "new_T"
    for v in velocities:
        binding[v] = "new_" + v
    return nodes, inits, binding


def build_model(name, module, x, target, opt):
    out_shape = list(target.shape)
    params = {k: v.detach().numpy().copy() for k, v in module.named_parameters()}
    buffers = {k: v.detach().numpy().copy() for k, v in module.named_buffers() if v.dtype == torch.float32}
    weights = list(params)
    if name == "mlp":
        forward, loss = mlp_forward("f_"), mse_loss
        train_forward = mlp_forward("t_")
    else:
        forward, loss = cnn_forward("f_", False), cross_entropy_loss
        train_forward = cnn_forward("t_", True)
    inits = [numpy_helper.from_array(v, k) for k, v in list(params.items()) + list(buffers.items())]
    main = helper.make_graph(
        forward + [helper.make_node("Identity", ["f_out"], ["y"])], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], inits)
    opt_nodes, opt_inits, binding = optimizer_nodes(weights, opt)
    if name == "cnn":
        binding["bn.running_mean"] = "t_running_mean"
        binding["bn.running_var"] = "t_running_var"
    main.initializer.extend(opt_inits)
    main.initializer.extend(numpy_helper.from_array(np.zeros_like(params[w]), "v_" + w)
                            for w in weights if opt["kind"] == "momentum")
    algorithm_nodes = train_forward + loss("t_") + [
        helper.make_node("Gradient", weights, ["grad_" + w for w in weights], domain=TRAINING,
                         xs=weights, y="loss")] + opt_nodes
    outputs = ["loss"] + sorted(set(binding.values()))
    algorithm = helper.make_graph(
        algorithm_nodes, "algorithm",
        [helper.make_tensor_value_info("target", TensorProto.FLOAT, list(target.shape))],
        [helper.make_tensor_value_info(o, TensorProto.INT64 if o == "new_T" else TensorProto.FLOAT, None)
         for o in outputs])
    training = onnx.TrainingInfoProto()
    training.algorithm.CopyFrom(algorithm)
    for k, v in binding.items():
        e = training.update_binding.add()
        e.key, e.value = k, v
    model = helper.make_model(main, opset_imports=[helper.make_opsetid("", 15), helper.make_opsetid(TRAINING, 1)])
    model.training_info.append(training)
    onnx.checker.check_model(model)
    return model


def torch_train(module, x, target, opt, steps, loss_fn):
    if opt["kind"] == "sgd":
        optim = torch.optim.SGD(module.parameters(), lr=opt["lr"])
    else:
        optim = torch.optim.SGD(module.parameters(), lr=opt["lr"], momentum=opt["momentum"],
                                dampening=opt["dampening"], weight_decay=opt["weight_decay"],
                                nesterov=opt["nesterov"])
    module.train()
    losses = []
    for _ in range(steps):
        optim.zero_grad()
        loss = loss_fn(module(x), target)
        losses.append(loss.item())
        loss.backward()
        optim.step()
    return losses


def cnn_running_var(module, x, steps_params):
    """ONNX's running variance uses the batch's population variance (torch's the unbiased one):
    replays the recorded conv1 inputs through each step's conv1 weights."""
    var = np.ones(4, np.float64)
    for w, b in steps_params:
        c = torch.nn.functional.conv2d(x, w, b, padding=1).double()
        var = 0.9 * var + 0.1 * c.var(dim=(0, 2, 3), unbiased=False).numpy()
    return var


def run(name, opt, steps, sluice, work):
    torch.manual_seed(7 if name == "mlp" else 11)
    if name == "mlp":
        module, x = Mlp(), torch.randn(BATCH, 6)
        target = torch.randn(BATCH, 3)
        loss_fn = torch.nn.functional.mse_loss
    else:
        module, x = Cnn(), torch.randn(BATCH, 2, 8, 8)
        labels = torch.randint(0, 5, (BATCH,))
        target = torch.nn.functional.one_hot(labels, 5).float()
        loss_fn = lambda out, t: torch.nn.functional.cross_entropy(out, t.argmax(dim=1))
    model = build_model(name, module, x.numpy(), target.numpy(), opt)
    tag = "%s_%s" % (name, opt["tag"])
    path = os.path.join(work, tag + ".onnx")
    saved = os.path.join(work, tag + "_trained.onnx")
    onnx.save(model, path)
    feeds = []
    for feed_name, value in (("x", x), ("target", target)):
        f = os.path.join(work, "%s_%s.pb" % (tag, feed_name))
        with open(f, "wb") as out:
            out.write(numpy_helper.from_array(value.numpy(), feed_name).SerializeToString())
        feeds += ["--feed", "%s=%s" % (feed_name, f)]

    # The CNN's population running variance needs conv1's weights at each step.
    conv1_history = []
    if name == "cnn":
        module.conv1.register_forward_pre_hook(
            lambda m, inp: conv1_history.append((m.weight.detach().clone(), m.bias.detach().clone())))
    want = torch_train(module, x, target, opt, steps, loss_fn)

    proc = subprocess.run([sluice, "train", path, "--steps", str(steps), "--threads", "2", "--save", saved, "--json"] + feeds,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    failures = []
    if proc.returncode != 0:
        return ["%s: sluice train exited %d: %s" % (tag, proc.returncode, proc.stderr.strip()[-2000:])]
    got = [step["outputs"]["loss"] for step in json.loads(proc.stdout)["steps"]]
    if len(got) != steps:
        return ["%s: %d losses, want %d:\n%s" % (tag, len(got), steps, proc.stdout[-1000:])]
    rel = [abs(g - w) / max(abs(w), 1e-12) for g, w in zip(got, want)]
    first, overall = max(rel[:FIRST_STEPS]), max(rel)
    print("%-14s loss %.6g -> %.6g (torch %.6g -> %.6g); max rel diff: first %d steps %.2e, all %d steps %.2e"
          % (tag, got[0], got[-1], want[0], want[-1], FIRST_STEPS, first, steps, overall))
    if first > FIRST_TOL or overall > ALL_TOL:
        worst = max(range(steps), key=lambda i: rel[i])
        failures.append("%s: step %d loss %.9g, torch %.9g (rel %.2e)" % (tag, worst + 1, got[worst], want[worst],
                                                                         rel[worst]))
    if not got[-1] < 0.7 * got[0]:
        failures.append("%s: the loss did not fall: %.6g -> %.6g" % (tag, got[0], got[-1]))

    trained = {t.name: numpy_helper.to_array(t) for t in onnx.load(saved).graph.initializer}
    expected = {k: v.detach().numpy() for k, v in module.named_parameters()}
    if name == "cnn":
        expected["bn.running_mean"] = module.bn.running_mean.numpy()
        expected["bn.running_var"] = cnn_running_var(module, x, conv1_history)
    worst_weight = 0.0
    for k, v in expected.items():
        err = np.abs(trained[k] - v).max() / max(np.abs(v).max(), 1e-6)
        worst_weight = max(worst_weight, err)
        if not err <= WEIGHT_TOL:
            failures.append("%s: trained %s differs from torch's by %.2e (relative to its largest)" % (tag, k, err))
    print("%-14s trained weights and statistics: max diff %.2e relative to each tensor's largest value"
          % (tag, worst_weight))
    if opt["kind"] == "momentum" and int(trained["T"]) != steps:
        failures.append("%s: T is %s after %d steps" % (tag, trained["T"], steps))
    return failures


def main():
    sluice, work = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    os.makedirs(work, exist_ok=True)
    torch.set_num_threads(1)
    sgd = {"kind": "sgd", "tag": "sgd"}
    momentum = {"kind": "momentum", "tag": "momentum", "momentum": 0.9, "dampening": 0.1, "weight_decay": 1e-3,
                "nesterov": False}
    nesterov = {"kind": "momentum", "tag": "nesterov", "momentum": 0.8, "dampening": 0.0, "weight_decay": 0.0,
                "nesterov": True}
    runs = [("mlp", dict(sgd, lr=0.05)), ("mlp", dict(nesterov, lr=0.02)),
            ("cnn", dict(sgd, lr=0.05)), ("cnn", dict(momentum, lr=0.01))]
    failures = []
    for name, opt in runs:
        failures += run(name, opt, steps, sluice, work)
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
