"""Writes a torch model as `sluice train` takes it, for bench/scaling.sh and bench/train_zoo.py.

Usage: train_model.py OUTDIR [--model resnet18|mobilenet_v2|...] [--batch 8] [--size 224]

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


def training_model(module, example, input_name, batch, classes, lr, opset=13, dynamic_batch=False):
    """module(example) -> logits [batch, classes], exported with a TrainingInfoProto whose
    algorithm computes the mean softmax cross-entropy against input "target" (one-hot) and
    updates every float initializer by SGD; returns the ModelProto. With dynamic_batch the
    export computes batch-dependent shapes from the input (an attention layer's reshapes
    otherwise hold the batch as a constant, and data-parallel replicas get a share of it)."""
    buf = io.BytesIO()
    dynamic = {input_name: {0: "batch"}, "logits": {0: "batch"}} if dynamic_batch else None
    torch.onnx.export(module, example, buf, input_names=[input_name], output_names=["logits"],
                      opset_version=opset, dynamic_axes=dynamic)
    exported = onnx.load_from_string(buf.getvalue())
    g = exported.graph
    inits = {i.name for i in g.initializer}
    weights = [i.name for i in g.initializer if i.data_type == TensorProto.FLOAT]

    # The algorithm: the forward pass with every intermediate value renamed, then the loss.
    def t(name):
        return name if name in inits or name == input_name or name == "" else "t_" + name
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
    # A mean over the batch (not a sum over a fixed 1/batch): data-parallel replicas then
    # average to the single-process loss and gradients.
    loss = [
        helper.make_node("Constant", [], ["t_class_axis"],
                         value=numpy_helper.from_array(np.array([1], np.int64))),
        helper.make_node("LogSoftmax", ["t_logits"], ["t_logp"], axis=1),
        helper.make_node("Mul", ["t_logp", "target"], ["t_picked"]),
        helper.make_node("ReduceSum", ["t_picked", "t_class_axis"], ["t_per_sample"], keepdims=0),
        helper.make_node("ReduceMean", ["t_per_sample"], ["t_mean"], keepdims=0),
        helper.make_node("Neg", ["t_mean"], ["loss"]),
    ]
    grads = ["grad_%d" % k for k in range(len(weights))]
    news = ["new_%d" % k for k in range(len(weights))]
    sgd = [helper.make_node("Gradient", weights, grads, domain=TRAINING, xs=weights, y="loss"),
           helper.make_node("Constant", [], ["lr"], value=numpy_helper.from_array(np.array(lr, np.float32)))]
    for w, gr, new in zip(weights, grads, news):
        sgd.append(helper.make_node("Mul", [gr, "lr"], ["step_" + new]))
        sgd.append(helper.make_node("Sub", [w, "step_" + new], [new]))
    algorithm = helper.make_graph(
        forward + loss + sgd, "algorithm",
        [helper.make_tensor_value_info("target", TensorProto.FLOAT, [batch, classes])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ["loss"] + news])
    training = onnx.TrainingInfoProto()
    training.algorithm.CopyFrom(algorithm)
    for w, new in zip(weights, news):
        e = training.update_binding.add()
        e.key, e.value = w, new
    opsets = [o for o in exported.opset_import if o.domain in ("", "ai.onnx")]
    model = helper.make_model(g, opset_imports=opsets + [helper.make_opsetid(TRAINING, 1)])
    onnx.checker.check_model(model)
    model.training_info.append(training)
    return model


def distinct_parameters(module, scale=1e-3):
    """Adds small noise to every parameter so no two are equal: torch.onnx's export of an eval
    module merges initializers of equal values (a TransformerEncoder's copies of one layer, the
    zero biases BatchNormalization folding leaves), and the exported model would then train
    those weights tied, a different model from the torch module."""
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(torch.randn(p.shape, generator=gen) * scale)
    return module


def one_hot_target(batch, classes, seed=0):
    rng = np.random.default_rng(seed)
    target = np.zeros((batch, classes), np.float32)
    target[np.arange(batch), rng.integers(0, classes, batch)] = 1
    return target


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--model", default="resnet18")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--lr", type=float, default=0.01)
    args = ap.parse_args()
    torch.manual_seed(0)
    module = distinct_parameters(getattr(torchvision.models, args.model)(num_classes=1000).eval())
    x = torch.randn(args.batch, 3, args.size, args.size)
    model = training_model(module, x, "x", args.batch, 1000, args.lr)
    os.makedirs(args.outdir, exist_ok=True)
    onnx.save(model, os.path.join(args.outdir, args.model + ".onnx"))
    onnx.save_tensor(numpy_helper.from_array(x.numpy(), "x"), os.path.join(args.outdir, args.model + "_x.pb"))
    onnx.save_tensor(numpy_helper.from_array(one_hot_target(args.batch, 1000), "target"),
                     os.path.join(args.outdir, args.model + "_target.pb"))
    weights = [i for i in model.graph.initializer if i.data_type == TensorProto.FLOAT]
    print("wrote %s: %d weights, %.1f MB" % (args.model, len(weights),
                                             sum(np.prod(i.dims) for i in model.graph.initializer) * 4 / 1e6))


if __name__ == "__main__":
    main()
