#!/usr/bin/python3
"""Writes ONNX test cases that ONNX's own node cases miss for random generators (seeded, whose
expected values numpy's legacy generator gives after np.random.seed(seed)), Tile-1 (tiles and
axis inputs, fed and constant) and RoiAlign-10.

  /usr/bin/python3 tests/onnx_cases/gen_onnx_random_legacy_cases.py [OUT]   # default testdata/onnx/random_legacy
  bazel-bin/tools/sluice test-onnx testdata/onnx/random_legacy
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

from onnx_cases import write_case

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "testdata", "onnx", "random_legacy")


def case(name, opset, node, inputs, outputs, initializers=()):
    write_case(OUT, name, opset, node, inputs, outputs, initializers)


def seeded(seed, draw):
    np.random.seed(seed)
    return draw()


def main():
    node = helper.make_node
    f32, f64 = np.float32, np.float64

    # Random generators with a seed.
    want = seeded(3, lambda: np.random.uniform(-2.0, 5.0, (3, 4))).astype(f32)
    case("randomuniform_seeded", 1, node("RandomUniform", [], ["y"], low=-2.0, high=5.0, seed=3.0, shape=[3, 4]),
         [], [("y", want)])
    want = seeded(7, lambda: np.random.normal(1.5, 0.5, (5, 3))).astype(f64)
    case("randomnormal_seeded_double", 1,
         node("RandomNormal", [], ["y"], mean=1.5, scale=0.5, seed=7.0, shape=[5, 3], dtype=onnx.TensorProto.DOUBLE),
         [], [("y", want)])
    x = np.zeros((2, 3, 3), f32)
    want = seeded(11, lambda: np.random.uniform(0.0, 1.0, x.shape)).astype(f64)
    case("randomuniformlike_seeded_double", 1,
         node("RandomUniformLike", ["x"], ["y"], seed=11.0, dtype=onnx.TensorProto.DOUBLE), [("x", x)], [("y", want)])
    want = seeded(0, lambda: np.random.normal(0.0, 1.0, (7,))).astype(f32)
    case("randomnormallike_seeded", 1, node("RandomNormalLike", ["x"], ["y"], seed=0.0),
         [("x", np.zeros(7, f32))], [("y", want)])
    p = np.linspace(0.0, 1.0, 12).astype(f32).reshape(3, 4)
    want = (seeded(5, lambda: np.random.uniform(0.0, 1.0, p.shape)).astype(f32) < p).astype(np.int32)
    case("bernoulli_seeded_int32", 15, node("Bernoulli", ["p"], ["y"], seed=5.0, dtype=onnx.TensorProto.INT32),
         [("p", p)], [("y", want)])

    # Tile-1: tiles copies along axis; tiles and axis have the input's float type.
    x = np.arange(6, dtype=f32).reshape(2, 3)
    case("tile1_fed", 1, node("Tile", ["x", "tiles", "axis"], ["y"]),
         [("x", x), ("tiles", np.array([3], f32)), ("axis", np.array([1], f32))], [("y", np.tile(x, (1, 3)))])
    case("tile1_constant", 1, node("Tile", ["x", "tiles", "axis"], ["y"]), [("x", x)], [("y", np.tile(x, (2, 1)))],
         initializers=[("tiles", np.array(2, f32)), ("axis", np.array(0, f32))])

    # RoiAlign-10 is RoiAlign-16 with coordinate_transformation_mode 'output_half_pixel'.
    xr = np.arange(25, dtype=f32).reshape(1, 1, 5, 5)
    rois = np.array([[0.0, 0.0, 4.0, 4.0]], f32)
    # Bins of 2x2 pixels with one sample at their centres (1, 1), (1, 3), (3, 1), (3, 3).
    want = np.array([[[[6.0, 8.0], [16.0, 18.0]]]], f32)
    case("roialign10", 10,
         node("RoiAlign", ["x", "rois", "i"], ["y"], output_height=2, output_width=2, sampling_ratio=1),
         [("x", xr), ("rois", rois), ("i", np.array([0], np.int64))], [("y", want)])
    print(f"wrote cases to {OUT}")


if __name__ == "__main__":
    main()
