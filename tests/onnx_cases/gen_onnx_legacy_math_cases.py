#!/usr/bin/python3
"""Writes ONNX test cases for old opset versions of math ops, which ONNX's own node cases (all at
the newest opset) never reach: Softmax/LogSoftmax/Hardmax before 13 (2-D coercion), Clip-6 attr
bounds, TopK-1's k attr, attr axes of reductions, Add-6 broadcast/axis, Cast-1's string type,
and version-1 consumed_inputs. Expected outputs come from numpy.

  /usr/bin/python3 tests/onnx_cases/gen_onnx_legacy_math_cases.py [OUT]   # default testdata/onnx/legacy_math
  bazel-bin/tools/sluice test-onnx testdata/onnx/legacy_math
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

from onnx_cases import write_case

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "testdata", "onnx", "legacy_math")




def case(name, opset, node, inputs, outputs, initializers=()):
    write_case(OUT, name, opset, node, inputs, outputs, initializers)


def coerced_softmax(x, axis):
    rows = x.reshape(int(np.prod(x.shape[:axis])), -1)
    e = np.exp(rows - rows.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).reshape(x.shape)


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = rng.standard_normal((4,)).astype(np.float32)
    hard = np.zeros((2, 12), np.float32)
    hard[np.arange(2), x.reshape(2, 12).argmax(axis=1)] = 1
    node = helper.make_node
    case("softmax11_default_axis", 11, node("Softmax", ["x"], ["y"]), [("x", x)], [("y", coerced_softmax(x, 1))])
    case("softmax11_last_axis", 11, node("Softmax", ["x"], ["y"], axis=2), [("x", x)], [("y", coerced_softmax(x, 2))])
    case("logsoftmax11_axis0", 11, node("LogSoftmax", ["x"], ["y"], axis=0), [("x", x)],
         [("y", np.log(coerced_softmax(x, 0)))])
    case("hardmax11_default_axis", 11, node("Hardmax", ["x"], ["y"]), [("x", x)], [("y", hard.reshape(x.shape))])
    case("clip6", 6, node("Clip", ["x"], ["y"], min=-0.5, max=0.5), [("x", x)], [("y", np.clip(x, -0.5, 0.5))])
    case("clip6_min_only", 6, node("Clip", ["x"], ["y"], min=0.0), [("x", x)], [("y", np.maximum(x, 0))])
    order = np.argsort(-x, axis=1, kind="stable")[:, :2]
    case("topk1", 9, node("TopK", ["x"], ["v", "i"], k=2, axis=1), [("x", x)],
         [("v", np.take_along_axis(x, order, axis=1)), ("i", order.astype(np.int64))])
    case("reducesum11_axes_attr", 11, node("ReduceSum", ["x"], ["y"], axes=[0, -1], keepdims=0), [("x", x)],
         [("y", x.sum(axis=(0, 2)))])
    case("reducemean11_no_axes", 11, node("ReduceMean", ["x"], ["y"]), [("x", x)], [("y", x.mean(keepdims=True))])
    case("add6_broadcast", 6, node("Add", ["a", "b"], ["c"], broadcast=1), [("a", x), ("b", b)], [("c", x + b)])
    case("add6_broadcast_axis", 6, node("Add", ["a", "b"], ["c"], broadcast=1, axis=2), [("a", x), ("b", b)],
         [("c", x + b)])
    case("cast1_string_type", 1, node("Cast", ["x"], ["y"], to="INT32"), [("x", x * 10)],
         [("y", (x * 10).astype(np.int32))])
    case("relu1_consumed_inputs", 1, node("Relu", ["x"], ["y"], consumed_inputs=[0]), [("x", x)],
         [("y", np.maximum(x, 0))])
    case("argmax11_negative_axis", 11, node("ArgMax", ["x"], ["y"], axis=-1, keepdims=0), [("x", x)],
         [("y", x.argmax(axis=-1).astype(np.int64))])
    print(f"wrote cases to {OUT}")


if __name__ == "__main__":
    main()
