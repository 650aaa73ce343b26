"""`sluice train` of torch's recurrent layers against torch's own SGD steps.

Usage: rnn_torch_training.py SLUICE WORKDIR [STEPS]

Each model (a 2-layer batch-first LSTM classifying from its last layer's final state, a
bidirectional time-major GRU (torch exports linear_before_reset=1) classifying from the mean of
its outputs, and a tanh RNN classifying from its last step's output) is exported by
torch.onnx.export and wrapped in a TrainingInfoProto by bench/train_model.py (softmax
cross-entropy, a Gradient node over every weight, SGD). `sluice train --save` runs STEPS steps;
torch runs the same steps with torch.optim.SGD. Each loss must match torch's to 1e-4 relative,
and each trained weight torch's (the trained module exported again: the exporter names and
lays out the weights as before) to 1e-4 relative to the tensor's largest value. Prints one line
per model; exits 1 on any failure.
"""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from train_model import distinct_parameters, one_hot_target, training_model  # noqa: E402

LR, LOSS_TOL, WEIGHT_TOL = 0.1, 1e-4, 1e-4
BATCH, SEQ, FEATURES, CLASSES = 4, 6, 5, 3


class Lstm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(FEATURES, 7, num_layers=2, batch_first=True)
        self.fc = torch.nn.Linear(7, CLASSES)

    def forward(self, x):
        _, (h, _) = self.lstm(x)
        return self.fc(h[-1])


class Gru(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(FEATURES, 6, bidirectional=True)
        self.fc = torch.nn.Linear(12, CLASSES)

    def forward(self, x):
        y, _ = self.gru(x.transpose(0, 1))
        return self.fc(y.mean(0))


class Rnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.RNN(FEATURES, 8, batch_first=True)
        self.fc = torch.nn.Linear(8, CLASSES)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1])


def exported_weights(module, x):
    """The float initializers of module's ONNX export, by name."""
    model = training_model(module, x, "x", BATCH, CLASSES, LR, opset=14)
    return {i.name: numpy_helper.to_array(i) for i in model.graph.initializer if i.data_type == onnx.TensorProto.FLOAT}


def run(name, module, steps, sluice, work):
    torch.manual_seed(3)
    x = torch.randn(BATCH, SEQ, FEATURES)
    target = one_hot_target(BATCH, CLASSES, seed=5)
    model = training_model(module, x, "x", BATCH, CLASSES, LR, opset=14)
    ops = sorted({n.op_type for n in model.graph.node} & {"RNN", "GRU", "LSTM"})
    path = os.path.join(work, name + ".onnx")
    saved = os.path.join(work, name + "_trained.onnx")
    onnx.save(model, path)
    feeds = []
    for feed_name, value in (("x", x.numpy()), ("target", target)):
        f = os.path.join(work, "%s_%s.pb" % (name, feed_name))
        onnx.save_tensor(numpy_helper.from_array(value, feed_name), f)
        feeds += ["--feed", "%s=%s" % (feed_name, f)]

    opt = torch.optim.SGD(module.parameters(), lr=LR)
    t = torch.from_numpy(target)
    want = []
    for _ in range(steps):
        opt.zero_grad()
        loss = -(torch.log_softmax(module(x), 1) * t).sum(1).mean()
        want.append(loss.item())
        loss.backward()
        opt.step()

    proc = subprocess.run([sluice, "train", path, "--steps", str(steps), "--threads", "2", "--save", saved, "--json"]
                          + feeds, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if proc.returncode != 0:
        return ["%s: sluice train exited %d: %s" % (name, proc.returncode, proc.stderr.strip()[-2000:])]
    got = [float(s["outputs"]["loss"]) for s in json.loads(proc.stdout)["steps"]]
    if len(got) != steps:
        return ["%s: %d losses, want %d" % (name, len(got), steps)]
    failures = []
    rel = [abs(g - w) / max(abs(w), 1e-12) for g, w in zip(got, want)]
    if max(rel) > LOSS_TOL:
        worst = max(range(steps), key=lambda i: rel[i])
        failures.append("%s: step %d loss %.9g, torch %.9g (rel %.2e)" % (name, worst + 1, got[worst], want[worst],
                                                                         rel[worst]))
    trained = {i.name: numpy_helper.to_array(i) for i in onnx.load(saved).graph.initializer}
    expected = exported_weights(module, x)
    worst_weight = 0.0
    for k, v in expected.items():
        if k not in trained:
            failures.append("%s: the trained model has no %s" % (name, k))
            continue
        err = float(np.abs(trained[k] - v).max() / max(np.abs(v).max(), 1e-6))
        worst_weight = max(worst_weight, err)
        if not err <= WEIGHT_TOL:
            failures.append("%s: trained %s differs from torch's by %.2e (relative to its largest)" % (name, k, err))
    print("%-5s (%s) loss %.6g -> %.6g (torch %.6g -> %.6g); max rel loss diff %.2e; max weight diff %.2e"
          % (name, ",".join(ops), got[0], got[-1], want[0], want[-1], max(rel), worst_weight))
    if not got[-1] < got[0]:
        failures.append("%s: the loss did not fall: %.6g -> %.6g" % (name, got[0], got[-1]))
    return failures


def main():
    sluice, work = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    os.makedirs(work, exist_ok=True)
    torch.set_num_threads(1)
    failures = []
    for name, cls in (("lstm", Lstm), ("gru", Gru), ("rnn", Rnn)):
        torch.manual_seed(1)
        failures += run(name, distinct_parameters(cls().eval()), steps, sluice, work)
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
