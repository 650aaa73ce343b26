#!/usr/bin/python3
"""Writes ONNX test cases for tensor manipulation ops that ONNX's own node cases miss: old opset
versions whose attrs later became inputs (Reshape-1, Squeeze/Unsqueeze-11, Concat-1, Split-2,
Slice-1, Pad-2, Scatter-9, ...), optional attrs left out (Unique and Compress without axis,
EyeLike without dtype, ConstantOfShape without value), and dtypes beyond float (strings, bools,
float16, int8, double). Expected outputs come from numpy.

  /usr/bin/python3 tests/onnx_cases/gen_onnx_legacy_array_cases.py [OUT]   # default testdata/onnx/legacy_array
  bazel-bin/tools/sluice test-onnx testdata/onnx/legacy_array
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

from onnx_cases import write_case

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "testdata", "onnx", "legacy_array")




def case(name, opset, node, inputs, outputs, initializers=()):
    write_case(OUT, name, opset, node, inputs, outputs, initializers)


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    s = np.array([["a", "bb", "c"], ["dd", "e", "ff"]], dtype=object)
    i64 = np.int64
    node = helper.make_node

    # Attrs that later became inputs.
    case("reshape1_shape_attr", 1, node("Reshape", ["x"], ["y"], shape=[4, -1]), [("x", x)],
         [("y", x.reshape(4, -1))])
    case("squeeze11_axes_attr", 11, node("Squeeze", ["x"], ["y"], axes=[-2]), [("x", x.reshape(2, 1, 12))],
         [("y", x.reshape(2, 12))])
    case("squeeze1_no_axes", 1, node("Squeeze", ["x"], ["y"]), [("x", x.reshape(1, 24, 1))],
         [("y", x.reshape(24))])
    case("unsqueeze11_axes_attr", 11, node("Unsqueeze", ["x"], ["y"], axes=[0, -1]), [("x", x)],
         [("y", x.reshape(1, 2, 3, 4, 1))])
    case("concat1_default_axis", 1, node("Concat", ["a", "b"], ["y"]), [("a", x), ("b", x[:, :1])],
         [("y", np.concatenate([x, x[:, :1]], axis=1))])
    case("split2_split_attr", 2, node("Split", ["x"], ["a", "b"], axis=2, split=[1, 3]), [("x", x)],
         [("a", x[:, :, :1]), ("b", x[:, :, 1:])])
    case("split11_equal", 11, node("Split", ["x"], ["a", "b", "c"], axis=-2), [("x", x)],
         [("a", x[:, :1]), ("b", x[:, 1:2]), ("c", x[:, 2:])])
    case("slice1_attrs", 1, node("Slice", ["x"], ["y"], starts=[1, -3], ends=[1000, -1], axes=[1, 2]),
         [("x", x)], [("y", x[:, 1:, -3:-1])])
    case("slice10_negative_step", 10,
         node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"]),
         [("x", x), ("starts", np.array([-1], i64)), ("ends", np.array([-1000], i64)),
          ("axes", np.array([2], i64)), ("steps", np.array([-2], i64))], [("y", x[:, :, ::-2])])
    case("pad2_reflect", 2, node("Pad", ["x"], ["y"], mode="reflect", pads=[0, 1, 2, 0, 1, 1]),
         [("x", x)], [("y", np.pad(x, [(0, 0), (1, 1), (2, 1)], mode="reflect"))])
    case("pad2_constant_value", 2, node("Pad", ["x"], ["y"], pads=[1, 0, 0, 0, 0, 2], value=1.5),
         [("x", x)], [("y", np.pad(x, [(1, 0), (0, 0), (0, 2)], constant_values=1.5))])
    case("pad11_edge_crop", 11, node("Pad", ["x", "pads"], ["y"], mode="edge"),
         [("x", x), ("pads", np.array([0, -1, 2, 0, 0, -1], i64))],
         [("y", np.pad(x[:, 1:, :3], [(0, 0), (0, 0), (2, 0)], mode="edge"))])
    data = np.zeros((3, 3), np.float32)
    idx = np.array([[1, 0, 2], [0, 2, 1]], i64)
    upd = np.array([[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]], np.float32)
    want = data.copy()
    for r in range(2):
        for c in range(3):
            want[idx[r, c], c] = upd[r, c]
    case("scatter9", 9, node("Scatter", ["d", "i", "u"], ["y"]), [("d", data), ("i", idx), ("u", upd)],
         [("y", want)])
    case("tile6_double", 6, node("Tile", ["x", "r"], ["y"]),
         [("x", x.astype(np.float64)), ("r", np.array([1, 2, 3], i64))], [("y", np.tile(x.astype(np.float64), (1, 2, 3)))])
    case("gather1_float16", 1, node("Gather", ["x", "i"], ["y"], axis=1),
         [("x", x.astype(np.float16)), ("i", np.array([[2, 0]], np.int32))],
         [("y", np.take(x.astype(np.float16), np.array([[2, 0]]), axis=1))])
    case("depthtospace1", 1, node("DepthToSpace", ["x"], ["y"], blocksize=2),
         [("x", np.arange(16, dtype=np.float32).reshape(1, 4, 2, 2))],
         [("y", np.arange(16, dtype=np.float32).reshape(1, 2, 2, 1, 2, 2).transpose(0, 3, 4, 1, 5, 2)
           .reshape(1, 1, 4, 4))])

    # Optional attrs left out.
    u = np.array([[3, 1], [1, 3], [2, 2]], np.int32)
    uy, ui, uinv, uc = np.unique(u, return_index=True, return_inverse=True, return_counts=True)
    case("unique_no_axis_2d", 11, node("Unique", ["x"], ["y", "i", "inv", "c"]), [("x", u)],
         [("y", uy), ("i", ui.astype(i64)), ("inv", uinv.reshape(-1).astype(i64)), ("c", uc.astype(i64))])
    case("compress_no_axis", 11, node("Compress", ["x", "c"], ["y"]),
         [("x", x[:, :, :1]), ("c", np.array([True, False, False, True, True], bool))],
         [("y", x[:, :, :1].reshape(-1)[[0, 3, 4]])])
    case("eyelike_no_dtype_float", 9, node("EyeLike", ["x"], ["y"], k=-1), [("x", np.zeros((3, 2), np.float32))],
         [("y", np.eye(3, 2, k=-1, dtype=np.float32))])
    case("constantofshape_no_value", 9, node("ConstantOfShape", ["s"], ["y"]), [("s", np.array([2, 3], i64))],
         [("y", np.zeros((2, 3), np.float32))])

    # Strings, bools and small ints move like any other element.
    case("transpose_string", 13, node("Transpose", ["x"], ["y"]), [("x", s)], [("y", s.T.copy())])
    case("concat_string", 13, node("Concat", ["a", "b"], ["y"], axis=0), [("a", s), ("b", s[:1])],
         [("y", np.concatenate([s, s[:1]]))])
    case("slice_string", 13, node("Slice", ["x", "b", "e"], ["y"]),
         [("x", s), ("b", np.array([0, 1], i64)), ("e", np.array([2, 3], i64))], [("y", s[:, 1:].copy())])
    case("pad13_string", 13, node("Pad", ["x", "pads", "v"], ["y"]),
         [("x", s), ("pads", np.array([0, 1, 0, 0], i64)), ("v", np.array("z", dtype=object))],
         [("y", np.pad(s, [(0, 0), (1, 0)], constant_values="z"))])
    b = np.array([[True, False, True], [False, False, True]])
    case("transpose_bool", 13, node("Transpose", ["x"], ["y"]), [("x", b)], [("y", b.T.copy())])
    case("nonzero_int8", 13, node("NonZero", ["x"], ["y"]), [("x", np.array([[0, 3], [-1, 0]], np.int8))],
         [("y", np.array(np.nonzero(np.array([[0, 3], [-1, 0]])), dtype=i64))])
    case("expand_int8", 13, node("Expand", ["x", "s"], ["y"]),
         [("x", np.array([[1], [2]], np.int8)), ("s", np.array([2, 1, 3], i64))],
         [("y", np.broadcast_to(np.array([[1], [2]], np.int8), (2, 2, 3)).copy())])
    print(f"wrote cases to {OUT}")


if __name__ == "__main__":
    main()
