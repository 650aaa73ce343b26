#!/usr/bin/python3
"""Writes ONNX test cases for the Gradient operator (ai.onnx.preview.training) over the ops whose
opset-18 versions take as inputs what were attributes: ReduceMean, ReduceSumSquare and ReduceL2
with axes as an input, Split with num_outputs, and Pad with axes. Each case is the forward graph
plus a Gradient node (as ONNX's test_gradient_of_add), whose outputs are d sum(y) / d x worked
out with numpy below.

Debian's python3-onnx (1.12) knows opsets up to 17, so the models are not checked here; Sluice
checks them with ONNX 1.17 when it loads them.

  /usr/bin/python3 tests/onnx_cases/gen_onnx_opset18_gradient_cases.py [OUT]
  bazel-bin/tools/sluice test-onnx OUT
"""
import os
import sys

import numpy as np
from onnx import helper, numpy_helper

from onnx_cases import value_info, write_model

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "testdata", "onnx", "opset18_gradient")
TRAINING = "ai.onnx.preview.training"


def case(name, nodes, x, dx, initializers=(), y="y"):
    """d sum(y) / d x for the forward `nodes` from input x; dx is the expected gradient."""
    grad = helper.make_node("Gradient", ["x"], ["dx"], domain=TRAINING, xs=["x"], y=y)
    graph = helper.make_graph(
        nodes + [grad], name, [value_info("x", x)], [value_info("dx", dx)],
        initializer=[numpy_helper.from_array(a, n) for n, a in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                    helper.make_opsetid(TRAINING, 1)])
    write_model(OUT, name, model, [("x", x)], [("dx", dx)])

def main():
    rng = np.random.default_rng(18)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    axes1 = ("axes", np.array([1], np.int64))
    node = helper.make_node

    # mean over 4 columns: each element contributes 1/4 to its row's mean.
    case("gradient_reduce_mean18_axes_input", [node("ReduceMean", ["x", "axes"], ["y"], keepdims=0)],
         x, np.full_like(x, 0.25), [axes1])
    # sum of squares down dim 0: d/dx x^2 = 2x.
    case("gradient_reduce_sum_square18_axes_input",
         [node("ReduceSumSquare", ["x", "axes"], ["y"], keepdims=1)], x, 2 * x,
         [("axes", np.array([0], np.int64))])
    # L2 norm of each row: d ||r|| / d r = r / ||r||.
    case("gradient_reduce_l2_18_axes_input", [node("ReduceL2", ["x", "axes"], ["y"], keepdims=0)],
         x, x / np.linalg.norm(x, axis=1, keepdims=True), [axes1])
    # p, q = the column halves; y = p * q, so dp = q and dq = p.
    case("gradient_split18_num_outputs",
         [node("Split", ["x"], ["p", "q"], axis=1, num_outputs=2), node("Mul", ["p", "q"], ["y"])],
         x, np.concatenate([x[:, 2:], x[:, :2]], axis=1))
    # One zero column before and two after (axes names dim 1 only), then y = padded * w: the
    # gradient is the part of w over x's columns.
    w = rng.standard_normal((2, 7)).astype(np.float32)
    case("gradient_pad18_axes",
         [node("Pad", ["x", "pads", "", "pad_axes"], ["padded"]), node("Mul", ["padded", "w"], ["y"])],
         x, w[:, 1:5].copy(),
         [("pads", np.array([1, 2], np.int64)), ("pad_axes", np.array([1], np.int64)), ("w", w)])


if __name__ == "__main__":
    main()
