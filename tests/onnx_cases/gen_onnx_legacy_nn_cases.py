#!/usr/bin/python3
"""Writes ONNX test cases for every version boundary of the NN converters that ONNX's own node
cases (newest opset only) never reach: BatchNormalization 1, 6, 7, 9, 14 and 15 in inference
and training mode with the optional outputs each version defines (and spatial=0 where it
exists), Dropout 6/7/10, Gemm 6 (broadcast attr), MaxPool 8 (Indices), AveragePool 7,
Upsample 7 and 9, Resize 10, LpPool 1 and 2, InstanceNormalization 1, RNN 1. Expected
outputs come from numpy.

  /usr/bin/python3 tests/onnx_cases/gen_onnx_legacy_nn_cases.py [OUT]   # default testdata/onnx/legacy_nn

BatchNormalization in training mode: statistics are the batch's population mean and variance
over N and the spatial dims (over N only with spatial=0); running = input * momentum + batch *
(1 - momentum); versions 1-9 return the batch statistics as saved_mean and saved_var.
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

from onnx_cases import write_case

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "testdata", "onnx", "legacy_nn")
rng = np.random.RandomState(7)




def case(name, opset, node, inputs, outputs, initializers=()):
    write_case(OUT, name, opset, node, inputs, outputs, initializers)


def bn_inputs(spatial=True):
    x = rng.randn(3, 4, 2, 5).astype(np.float32)
    shape = (4,) if spatial else (4, 2, 5)
    scale = rng.rand(*shape).astype(np.float32) + 0.5
    b = rng.randn(*shape).astype(np.float32)
    mean = rng.randn(*shape).astype(np.float32)
    var = rng.rand(*shape).astype(np.float32) + 0.2
    return x, scale, b, mean, var


def bn_ref(x, scale, b, mean, var, eps, momentum, training, spatial=True):
    axes = (0, 2, 3) if spatial else (0,)
    bshape = (1, 4, 1, 1) if spatial else (1, 4, 2, 5)
    if training:
        m = x.mean(axis=axes)
        v = x.var(axis=axes)
    else:
        m, v = mean, var
    y = (x - m.reshape(bshape)) / np.sqrt(v.reshape(bshape) + eps) * scale.reshape(bshape) + b.reshape(bshape)
    rm = mean * momentum + m * (1 - momentum) if training else mean
    rv = var * momentum + v * (1 - momentum) if training else var
    f = lambda a: a.astype(np.float32)
    return f(y), f(rm), f(rv), f(m), f(v)


def bn_case(name, opset, training, n_out, attrs, spatial=True):
    x, scale, b, mean, var = bn_inputs(spatial)
    eps, momentum = attrs.get("epsilon", 1e-5), attrs.get("momentum", 0.9)
    ref = bn_ref(x, scale, b, mean, var, eps, momentum, training, spatial)
    names = ["y", "running_mean", "running_var", "saved_mean", "saved_var"][:n_out]
    node = helper.make_node("BatchNormalization", ["x", "s", "bias", "mean", "var"], names, **attrs)
    case(name, opset, node, [("x", x), ("s", scale), ("bias", b), ("mean", mean), ("var", var)],
         list(zip(names, ref[:n_out])))


# Version 1: consumed_inputs, is_test (0 = training), spatial.
bn_case("bn1_test", 1, False, 1, dict(consumed_inputs=[0, 0, 0, 1, 1], is_test=1, epsilon=1e-3))
bn_case("bn1_training", 1, True, 5, dict(consumed_inputs=[0, 0, 0, 1, 1], is_test=0, momentum=0.8))
bn_case("bn1_test_not_spatial", 1, False, 1, dict(consumed_inputs=[0, 0, 0, 1, 1], is_test=1, spatial=0), spatial=False)
# Version 6: no consumed_inputs.
bn_case("bn6_test", 6, False, 1, dict(is_test=1))
bn_case("bn6_training", 6, True, 5, dict(is_test=0, momentum=0.7, epsilon=1e-4))
# Version 7: no is_test; the statistics outputs mean training.
bn_case("bn7_test", 7, False, 1, dict())
bn_case("bn7_training", 7, True, 5, dict(momentum=0.6))
bn_case("bn7_training_not_spatial", 7, True, 5, dict(spatial=0), spatial=False)
# Version 9: no spatial.
bn_case("bn9_test", 9, False, 1, dict(epsilon=1e-2))
bn_case("bn9_training", 9, True, 5, dict())
# Version 14: training_mode; outputs Y, running_mean, running_var.
bn_case("bn14_test", 14, False, 1, dict())
bn_case("bn14_training", 14, True, 3, dict(training_mode=1, momentum=0.5))
# Version 15: typed per input.
bn_case("bn15_training", 15, True, 3, dict(training_mode=1))

x = rng.randn(2, 3, 4).astype(np.float32)
# Dropout: 6 (is_test=1 -> identity), 7 and 10 (always inference; 10 has a bool mask).
case("dropout6_test", 6, helper.make_node("Dropout", ["x"], ["y"], is_test=1, ratio=0.3), [("x", x)], [("y", x)])
case("dropout7", 7, helper.make_node("Dropout", ["x"], ["y"], ratio=0.3), [("x", x)], [("y", x)])
case("dropout10_mask", 10, helper.make_node("Dropout", ["x"], ["y", "mask"]), [("x", x)],
     [("y", x), ("mask", np.ones(x.shape, bool))])

# Gemm 6 with broadcast=1: C broadcast along rows.
a = rng.randn(3, 4).astype(np.float32)
bm = rng.randn(4, 5).astype(np.float32)
c = rng.randn(5).astype(np.float32)
case("gemm6_broadcast", 6, helper.make_node("Gemm", ["a", "b", "c"], ["y"], broadcast=1, alpha=0.5, beta=2.0),
     [("a", a), ("b", bm), ("c", c)], [("y", (0.5 * a @ bm + 2.0 * c).astype(np.float32))])

# MaxPool 8 with Indices (row-major flat indices over N*C*H*W).
img = rng.randn(1, 2, 4, 4).astype(np.float32)
win = img.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(1, 2, 2, 2, 4)
ymax = win.max(-1)
arg = win.argmax(-1)
ii, jj = np.meshgrid(np.arange(2), np.arange(2), indexing="ij")
rows = ii[None, None] * 2 + arg // 2
cols = jj[None, None] * 2 + arg % 2
idx = (np.arange(2)[None, :, None, None] * 16 + rows * 4 + cols).astype(np.int64)
case("maxpool8_indices", 8, helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], strides=[2, 2]),
     [("x", img)], [("y", ymax), ("i", idx)])
# AveragePool 7 with count_include_pad: pads of zeros count.
padded = np.pad(img, ((0, 0), (0, 0), (1, 1), (1, 1)))
avg = np.zeros((1, 2, 3, 3), np.float32)
for i in range(3):
    for j in range(3):
        avg[:, :, i, j] = padded[:, :, 2 * i:2 * i + 2, 2 * j:2 * j + 2].mean(axis=(2, 3))
case("averagepool7_count_include_pad", 7,
     helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1),
     [("x", img)], [("y", avg)])

# Upsample 7 (scales attr) and 9 (scales input), Resize 10: nearest rounds x / scale down.
small = rng.randn(1, 1, 2, 3).astype(np.float32)
up = small.repeat(2, axis=2).repeat(3, axis=3)
case("upsample7_nearest", 7, helper.make_node("Upsample", ["x"], ["y"], scales=[1.0, 1.0, 2.0, 3.0], mode="nearest"),
     [("x", small)], [("y", up)])
scales = np.array([1, 1, 2, 3], np.float32)
case("upsample9_nearest", 9, helper.make_node("Upsample", ["x", "s"], ["y"], mode="nearest"),
     [("x", small), ("s", scales)], [("y", up)])
case("resize10_nearest", 10, helper.make_node("Resize", ["x", "s"], ["y"], mode="nearest"),
     [("x", small), ("s", scales)], [("y", up)])

# LpPool 1 (p as float) and 2 (p as int): p-norm over 2x2 windows.
lp = np.zeros((1, 2, 2, 2), np.float32)
for i in range(2):
    for j in range(2):
        lp[:, :, i, j] = np.sqrt((img[:, :, 2 * i:2 * i + 2, 2 * j:2 * j + 2] ** 2).sum(axis=(2, 3)))
case("lppool1", 1, helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], p=2.0),
     [("x", img)], [("y", lp)])
case("lppool2", 2, helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], p=2),
     [("x", img)], [("y", lp)])

# InstanceNormalization 1 (consumed_inputs).
sc = rng.rand(2).astype(np.float32) + 0.5
bi = rng.randn(2).astype(np.float32)
m = img.mean(axis=(2, 3), keepdims=True)
v = img.var(axis=(2, 3), keepdims=True)
inorm = ((img - m) / np.sqrt(v + 1e-5) * sc.reshape(1, 2, 1, 1) + bi.reshape(1, 2, 1, 1)).astype(np.float32)
case("instancenorm1", 1, helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], consumed_inputs=[0, 0, 0]),
     [("x", img), ("s", sc), ("b", bi)], [("y", inorm)])
print("wrote legacy NN cases to", OUT)
