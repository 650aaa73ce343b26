#!/usr/bin/python3
"""Exports the model zoo that bench/zoo.sh times: torchvision classifiers and a segmentation
model, a BERT-style encoder built from torch.nn, GRU and LSTM, and a detection-style graph
(Resize, TopK, NonMaxSuppression). Random weights (nothing is downloaded; Inception v3's
BatchNorm statistics measured on random images), fixed input shapes, ONNX opset 17. Writes
OUT/NAME.onnx, skipping models already there.

  /usr/bin/python3 bench/zoo_models.py OUT [--only NAME,...] [--list]
"""
import argparse
import os
import sys
import warnings

import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from progress_line import ProgressLine  # noqa: E402  (scripts/, beside this folder)

warnings.filterwarnings("ignore")
torch.manual_seed(0)
OPSET = 17


def image(size=224, batch=1):
    return (torch.rand(batch, 3, size, size),)


def calibrated(model, size):
    """Sets every BatchNorm's running statistics to those of random images, as training would.
    With the initial ones (mean 0, variance 1) nothing normalizes, and Inception v3's
    activations grow to ~1e11, where float rounding alone exceeds any tolerance an output
    comparison can use. Not for every model: statistics of 8 random images leave channels of
    near-zero variance, and models with squeeze-and-excitation blocks (EfficientNet,
    MobileNetV3, RegNet-Y) then amplify rounding until two correct runtimes differ by 20%."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return model
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # A cumulative average over the batches below.
    model.train()
    # Its own random numbers: the models exported after this one get the weights they had.
    with torch.no_grad(), torch.random.fork_rng():
        for _ in range(2):
            model(torch.rand(4, 3, size, size))
    return model.eval()


def vision(ctor, size=224, calibrate=False, **kwargs):
    def make():
        model = ctor(weights=None, **kwargs)
        return (calibrated(model, size) if calibrate else model), image(size)
    return make


class Encoder(torch.nn.Module):
    """A BERT-style encoder: token and position embeddings, LayerNorm, then post-norm layers
    of multi-head self-attention and a GELU feed-forward block."""

    def __init__(self, vocab=8192, seq=128, hidden=256, heads=4, layers=4, ffn=1024):
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, hidden)
        self.positions = torch.nn.Embedding(seq, hidden)
        self.norm = torch.nn.LayerNorm(hidden)
        layer = torch.nn.TransformerEncoderLayer(hidden, heads, ffn, dropout=0.0, activation="gelu",
                                                 batch_first=True)
        self.layers = torch.nn.TransformerEncoder(layer, layers)
        self.pool = torch.nn.Linear(hidden, hidden)
        self.register_buffer("position_ids", torch.arange(seq).unsqueeze(0))

    def forward(self, ids):
        x = self.norm(self.tokens(ids) + self.positions(self.position_ids))
        x = self.layers(x)
        return x, torch.tanh(self.pool(x[:, 0]))


def encoder(batch):
    def make():
        return Encoder().eval(), (torch.randint(0, 8192, (batch, 128)),)
    return make


class Recurrent(torch.nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(64, 256, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(256, 32)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y)


def recurrent(cell):
    def make():
        return Recurrent(cell).eval(), (torch.rand(8, 64, 64),)
    return make


class Detector(torch.nn.Module):
    """A small single-stage detector: a strided CNN backbone, a top-down feature pyramid
    (nearest Resize), per-anchor boxes and scores, TopK and NonMaxSuppression."""

    def __init__(self):
        super().__init__()
        def block(i, o, s):
            return torch.nn.Sequential(torch.nn.Conv2d(i, o, 3, s, 1), torch.nn.BatchNorm2d(o), torch.nn.ReLU())
        self.c1 = torch.nn.Sequential(block(3, 32, 2), block(32, 32, 1))
        self.c2 = torch.nn.Sequential(block(32, 64, 2), block(64, 64, 1))
        self.c3 = torch.nn.Sequential(block(64, 128, 2), block(128, 128, 1))
        self.c4 = torch.nn.Sequential(block(128, 256, 2), block(256, 256, 1))
        self.lateral3 = torch.nn.Conv2d(128, 128, 1)
        self.reduce4 = torch.nn.Conv2d(256, 128, 1)
        self.boxes = torch.nn.Conv2d(128, 4, 3, 1, 1)
        self.scores = torch.nn.Conv2d(128, 1, 3, 1, 1)

    def forward(self, x):
        f3 = self.c3(self.c2(self.c1(x)))
        f4 = self.c4(f3)
        p3 = self.lateral3(f3) + torch.nn.functional.interpolate(self.reduce4(f4), scale_factor=2.0, mode="nearest")
        boxes = self.boxes(p3).flatten(2).transpose(1, 2)[0]          # [anchors, 4]
        scores = torch.sigmoid(self.scores(p3)).flatten()               # [anchors]
        top_scores, top = torch.topk(scores, 300)
        top_boxes = boxes[top]
        corners = torch.cat([top_boxes[:, :2], top_boxes[:, :2] + top_boxes[:, 2:].abs()], dim=1)
        keep = torchvision.ops.nms(corners, top_scores, 0.5)
        return corners[keep], top_scores[keep]


def detector():
    return Detector().eval(), image(320)


class Segmenter(torch.nn.Module):
    """LR-ASPP with MobileNetV3-Large; returns only the logits (the model returns a dict)."""

    def __init__(self):
        super().__init__()
        self.model = torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)

    def forward(self, x):
        return self.model(x)["out"]


MODELS = {
    "resnet18": vision(torchvision.models.resnet18),
    "resnet50": vision(torchvision.models.resnet50),
    "resnext50_32x4d": vision(torchvision.models.resnext50_32x4d),
    "wide_resnet50_2": vision(torchvision.models.wide_resnet50_2),
    "mobilenet_v2": vision(torchvision.models.mobilenet_v2),
    "mobilenet_v3_small": vision(torchvision.models.mobilenet_v3_small),
    "mobilenet_v3_large": vision(torchvision.models.mobilenet_v3_large),
    "efficientnet_b0": vision(torchvision.models.efficientnet_b0),
    "efficientnet_v2_s": vision(torchvision.models.efficientnet_v2_s),
    "regnet_x_400mf": vision(torchvision.models.regnet_x_400mf),
    "regnet_y_400mf": vision(torchvision.models.regnet_y_400mf),
    "convnext_tiny": vision(torchvision.models.convnext_tiny),
    "shufflenet_v2_x1_0": vision(torchvision.models.shufflenet_v2_x1_0),
    "squeezenet1_1": vision(torchvision.models.squeezenet1_1),
    "densenet121": vision(torchvision.models.densenet121),
    "googlenet": vision(torchvision.models.googlenet, aux_logits=False, init_weights=True),
    "inception_v3": vision(torchvision.models.inception_v3, size=299, calibrate=True, aux_logits=False,
                           init_weights=True),
    "mnasnet1_0": vision(torchvision.models.mnasnet1_0),
    "vit_b_16": vision(torchvision.models.vit_b_16),
    "swin_t": vision(torchvision.models.swin_t),
    "lraspp_mobilenet_v3": lambda: (Segmenter().eval(), image(320)),
    "bert_encoder_b1": encoder(1),
    "bert_encoder_b8": encoder(8),
    "gru": recurrent(torch.nn.GRU),
    "lstm": recurrent(torch.nn.LSTM),
    "detector": detector,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?")
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    args = ap.parse_args()
    if args.list:
        print("\n".join(MODELS))
        return 0
    if not args.out:
        ap.error("OUT is required")
    only = [n for n in args.only.split(",") if n]
    unknown = [n for n in only if n not in MODELS]
    if unknown:
        ap.error("unknown models: %s (see --list)" % ", ".join(unknown))
    os.makedirs(args.out, exist_ok=True)
    failed = 0
    progress = ProgressLine("export")
    names = only or list(MODELS)
    for n, name in enumerate(names):
        path = os.path.join(args.out, name + ".onnx")
        if os.path.exists(path):
            continue
        progress.update("%d/%d %s" % (n + 1, len(names), name))
        try:
            model, inputs = MODELS[name]()
            model.eval()
            tmp = path + ".tmp"
            # Not under no_grad: torch's fused attention fast path (taken in eval mode without
            # gradients) has no ONNX export.
            torch.onnx.export(model, inputs, tmp, opset_version=OPSET, do_constant_folding=True,
                              input_names=["input_%d" % i for i in range(len(inputs))])
            os.replace(tmp, path)
        except Exception as e:  # One model that does not export must not stop the others.
            failed += 1
            progress.done()
            print("export of %s failed: %s" % (name, str(e).splitlines()[0] if str(e) else type(e).__name__),
                  file=sys.stderr)
    progress.done()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
