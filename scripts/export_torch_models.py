#!/usr/bin/python3
"""Exports torchvision and small torch models to ONNX test cases (model.onnx plus
test_data_set_0/input_*.pb and output_*.pb, with torch's own outputs as the reference), so
`sluice test-onnx` compares Sluice with torch. Random weights; nothing is downloaded.

  /usr/bin/python3 scripts/export_torch_models.py OUT [--only NAME,...] [--opsets 9,13,17]

Models: resnet18, mobilenet_v2 (depthwise), squeezenet1_0 (concat-heavy), each at the opsets
asked for with BatchNormalization folded (eval export) and, for resnet18, unfolded in training
mode; a small transformer encoder; an LSTM.
"""
import argparse
import os
import warnings

import numpy as np
import torch
import torchvision
from onnx import numpy_helper

from progress_line import ProgressLine

warnings.filterwarnings("ignore")
torch.manual_seed(0)


PROGRESS = ProgressLine("export")


def save_case(out_dir, name, model, inputs, opset, training=False, input_names=None):
    case = os.path.join(out_dir, name)
    os.makedirs(os.path.join(case, "test_data_set_0"), exist_ok=True)
    path = os.path.join(case, "model.onnx")
    mode = torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL
    model.train(training)
    input_names = input_names or ["input_%d" % i for i in range(len(inputs))]
    with torch.no_grad():
        reference = model(*inputs)
    # Exported outside no_grad: the transformer fast path has no ONNX export.
    torch.onnx.export(model, tuple(inputs), path, opset_version=opset, training=mode,
                      do_constant_folding=not training, input_names=input_names)
    if training:
        # A training-mode forward changes BatchNorm running stats; the export above ran one.
        pass
    outputs = reference if isinstance(reference, (tuple, list)) else [reference]
    for i, t in enumerate(inputs):
        tp = numpy_helper.from_array(t.detach().numpy(), input_names[i])
        with open(os.path.join(case, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(tp.SerializeToString())
    for i, t in enumerate(outputs):
        tp = numpy_helper.from_array(t.detach().numpy(), "output_%d" % i)
        with open(os.path.join(case, "test_data_set_0", "output_%d.pb" % i), "wb") as f:
            f.write(tp.SerializeToString())
    PROGRESS.update("wrote %s" % case)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--only", default="")
    ap.add_argument("--opsets", default="9,13,17")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    opsets = [int(v) for v in args.opsets.split(",")]
    want = lambda n: not only or n in only
    image = torch.rand(1, 3, 224, 224)

    for name, ctor in (("resnet18", torchvision.models.resnet18),
                       ("mobilenet_v2", torchvision.models.mobilenet_v2),
                       ("squeezenet1_0", torchvision.models.squeezenet1_0)):
        if not want(name):
            continue
        model = ctor(weights=None) if "weights" in ctor.__code__.co_varnames else ctor()
        for opset in opsets:
            save_case(args.out, "%s_opset%d" % (name, opset), model, [image], opset)
    if want("resnet18_training"):
        # BatchNormalization in training mode (batch statistics); torch's output is from the
        # same training-mode forward pass.
        model = torchvision.models.resnet18()
        save_case(args.out, "resnet18_training_opset15", model, [torch.rand(2, 3, 64, 64)], 15,
                  training=True)
    if want("transformer"):
        layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                                 dropout=0.0, batch_first=True)
        model = torch.nn.TransformerEncoder(layer, num_layers=2).eval()
        for opset in (o for o in opsets if o >= 13):
            save_case(args.out, "transformer_opset%d" % opset, model, [torch.rand(2, 10, 32)], opset)
    if want("lstm"):
        class Lstm(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lstm = torch.nn.LSTM(16, 24, num_layers=2, batch_first=True, bidirectional=True)
                self.head = torch.nn.Linear(48, 5)

            def forward(self, x):
                y, _ = self.lstm(x)
                return self.head(y)
        for opset in opsets:
            save_case(args.out, "lstm_opset%d" % opset, Lstm().eval(), [torch.rand(3, 7, 16)], opset)
    PROGRESS.done()


if __name__ == "__main__":
    main()
