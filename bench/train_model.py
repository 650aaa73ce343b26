"""Writes a torchvision model as `sluice train` takes it, for bench/scaling.sh.

Usage: train_model.py OUTDIR [--model resnet18|mobilenet_v2] [--batch 8] [--size 224]

Exports the model with torch.onnx (eval mode: BatchNormalization folded into the convolutions,
weights named as torch names them, "onnx::Conv_193" included) and adds a TrainingInfoProto:
the forward pass again, softmax cross-entropy against a one-hot target, a Gradient node over
every float initializer, and SGD written as W - lr * grad. Writes OUTDIR/MODEL.onnx and the
feeds OUTDIR/MODEL_x.pb (input) and OUTDIR/MODEL_target.pb (one-hot), from a fixed seed.
"""
import argparse
import io
import os

import numpy as np
import onnx
import torch
import torchvision
from onnx import TensorProto, helper, numpy_helper

TRAINING = "ai.onnx.preview.training"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--model", default="resnet18")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--lr", type=float, default=0.01)
    args = ap.parse_args()
    torch.manual_seed(0)
    module = getattr(torchvision.models, args.model)(num_classes=1000).eval()
    x = torch.randn(args.batch, 3, args.size, args.size)
    buf = io.BytesIO()
    torch.onnx.export(module, x, buf, input_names=["x"], output_names=["logits"], opset_version=13)
    exported = onnx.load_from_string(buf.getvalue())
    g = exported.graph
    inits = {i.name for i in g.initializer}
    weights = [i.name for i in g.initializer if i.data_type == TensorProto.FLOAT]

    # The algorithm: the forward pass with every intermediate value renamed, then the loss.
    def t(name):
        return name if name in inits or name == "x" or name == "" else "t_" + name
    forward = []
    for n in g.node:
        copy = onnx.NodeProto()
        copy.CopyFrom(n)
        copy.name = "t_" + n.name if n.name else ""
        del copy.input[:]
        copy.input.extend(t(i) for i in n.input)
        del copy.output[:]
        copy.output.extend(t(o) for o in n.output)
        forward.append(copy)
    batch = args.batch
    # A mean over the batch (not a sum over a fixed 1/batch): data-parallel replicas then
    # average to the single-process loss and gradients.
    loss = [
        helper.make_node("LogSoftmax", ["t_logits"], ["t_logp"], axis=1),
        helper.make_node("Mul", ["t_logp", "target"], ["t_picked"]),
        helper.make_node("ReduceSum", ["t_picked", "t_class_axis"], ["t_per_sample"], keepdims=0),
        helper.make_node("ReduceMean", ["t_per_sample"], ["t_mean"], keepdims=0),
        helper.make_node("Neg", ["t_mean"], ["loss"]),
    ]
    loss.insert(0, helper.make_node("Constant", [], ["t_class_axis"],
                                    value=numpy_helper.from_array(np.array([1], np.int64))))
    grads = ["grad_%d" % k for k in range(len(weights))]
    news = ["new_%d" % k for k in range(len(weights))]
    sgd = [helper.make_node("Gradient", weights, grads, domain=TRAINING, xs=weights, y="loss"),
           helper.make_node("Constant", [], ["lr"], value=numpy_helper.from_array(np.array(args.lr, np.float32)))]
    for w, gr, new in zip(weights, grads, news):
        sgd.append(helper.make_node("Mul", [gr, "lr"], ["step_" + new]))
        sgd.append(helper.make_node("Sub", [w, "step_" + new], [new]))
    classes = 1000
    algorithm = helper.make_graph(
        forward + loss + sgd, "algorithm",
        [helper.make_tensor_value_info("target", TensorProto.FLOAT, [batch, classes])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ["loss"] + news])
    training = onnx.TrainingInfoProto()
    training.algorithm.CopyFrom(algorithm)
    for w, new in zip(weights, news):
        e = training.update_binding.add()
        e.key, e.value = w, new
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(TRAINING, 1)])
    onnx.checker.check_model(model)
    model.training_info.append(training)
    os.makedirs(args.outdir, exist_ok=True)
    onnx.save(model, os.path.join(args.outdir, args.model + ".onnx"))
    rng = np.random.default_rng(0)
    target = np.zeros((batch, classes), np.float32)
    target[np.arange(batch), rng.integers(0, classes, batch)] = 1
    onnx.save_tensor(numpy_helper.from_array(x.numpy(), "x"), os.path.join(args.outdir, args.model + "_x.pb"))
    onnx.save_tensor(numpy_helper.from_array(target, "target"),
                     os.path.join(args.outdir, args.model + "_target.pb"))
    print("wrote %s: %d weights, %.1f MB" % (args.model, len(weights),
                                             sum(np.prod(i.dims) for i in g.initializer) * 4 / 1e6))


if __name__ == "__main__":
    main()
