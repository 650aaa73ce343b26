#!/usr/bin/python3
"""Writes ONNX test cases for the element types of opsets 19 to 21 (8-bit floats, 4-bit
integers) through the ops whose new versions take them without computing on them: Identity,
Reshape, Transpose, Flatten, Squeeze, Unsqueeze, Shape, Size, ConstantOfShape, Pad and If, and
IsNaN and IsInf on 8-bit floats. Each case casts a float input to the type, applies the op, and
casts back; the values are exact in every type used, so the expected outputs are the op
applied by numpy to the float input.

Debian's python3-onnx (1.12) knows none of these types, so the models are built by hand here and
not checked; Sluice checks them with ONNX 1.17 when it loads them.

  /usr/bin/python3 tests/onnx_cases/gen_onnx_new_types_cases.py [OUT]
  bazel-bin/tools/sluice test-onnx OUT
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from onnx_cases import value_info, write_model

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "testdata", "onnx", "new_types")

# ONNX 1.17's element types by number (1.12's TensorProto lacks their names).
TYPES = {"float8e4m3fn": 17, "float8e5m2": 19, "uint4": 21, "int4": 22}
# Values each type holds exactly (e4m3fn: 3 mantissa bits; e5m2: 2; the 4-bit integers).
VALUES = {
    "float8e4m3fn": np.array([[0.5, -1.5, 3, 0.25], [-4, 6, 1, -0.75], [2, -3, 0, 1.25]], np.float32),
    "float8e5m2": np.array([[0.5, -1.5, 3, 0.25], [-4, 6, 1, -0.75], [2, -3, 0, 1.25]], np.float32),
    "int4": np.array([[1, -2, 3, -4], [5, -6, 7, -8], [0, 2, -1, 4]], np.float32),
    "uint4": np.array([[1, 2, 3, 4], [5, 6, 7, 8], [0, 15, 9, 12]], np.float32),
}
# One, as ConstantOfShape's value: e4m3fn 0x38, e5m2 0x3C, and the integers as themselves.
ONE_BITS = {"float8e4m3fn": 0x38, "float8e5m2": 0x3C, "int4": 1, "uint4": 1}


def write(name, opset, nodes, inputs, outputs, initializers=()):
    """inputs and outputs as (name, array); initializers as TensorProtos."""
    graph = helper.make_graph(nodes, name, [value_info(n, a) for n, a in inputs],
                              [value_info(n, a) for n, a in outputs], initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    write_model(OUT, name, model, inputs, outputs)

def one_of(type_name):
    """A one-element tensor of the type holding 1 (raw bytes; 4-bit values packed)."""
    return onnx.TensorProto(name="one", data_type=TYPES[type_name], dims=[1],
                            raw_data=bytes([ONE_BITS[type_name]]))


def main():
    node = helper.make_node
    i64 = lambda n, v: numpy_helper.from_array(np.array(v, np.int64), n)
    for t, code in TYPES.items():
        x = VALUES[t]
        to = lambda src, dst: node("Cast", [src], [dst], to=code)
        back = lambda src: node("Cast", [src], ["y"], to=TensorProto.FLOAT)
        case = lambda op, nodes, y, inits=(), opset=21: write(
            "%s_%s" % (op, t), opset, [to("x", "q")] + nodes + [back("r")], [("x", x)], [("y", y)], inits)
        case("identity", [node("Identity", ["q"], ["r"])], x)
        case("reshape", [node("Reshape", ["q", "s"], ["r"])], x.reshape(2, 6), [i64("s", [2, 6])])
        case("transpose", [node("Transpose", ["q"], ["r"], perm=[1, 0])], x.T.copy())
        case("flatten", [node("Flatten", ["q"], ["r"], axis=0)], x.reshape(1, 12))
        case("unsqueeze_squeeze", [node("Unsqueeze", ["q", "a"], ["u"]), node("Squeeze", ["u", "a"], ["r"])], x,
             [i64("a", [1])])
        case("pad", [node("Pad", ["q", "p"], ["r"])], np.pad(x, ((1, 0), (0, 2))), [i64("p", [1, 0, 0, 2])])
        # If picks the type's tensor or its transpose-back-to-same-shape twin (a Reshape).
        then = helper.make_graph([node("Identity", ["q"], ["o"])], "then", [],
                                 [helper.make_tensor_value_info("o", code, [3, 4])])
        other = helper.make_graph([node("Reshape", ["q", "s"], ["o"])], "else", [],
                                  [helper.make_tensor_value_info("o", code, [4, 3])])
        for flag in (True, False):
            write("if_%s_%s" % ("then" if flag else "else", t), 21,
                  [to("x", "q"), node("If", ["c"], ["r"], then_branch=then, else_branch=other), back("r")],
                  [("x", x), ("c", np.array(flag))], [("y", x if flag else x.reshape(4, 3))], [i64("s", [4, 3])])
        # Shape and Size read only the shape; ConstantOfShape makes ones of the type.
        write("shape_size_%s" % t, 21, [to("x", "q"), node("Shape", ["q"], ["s"], start=1), node("Size", ["q"], ["n"])],
              [("x", x)], [("s", np.array([4], np.int64)), ("n", np.array(12, np.int64))])
        write("constant_of_shape_%s" % t, 21,
              [node("ConstantOfShape", ["shape"], ["r"], value=one_of(t)), back("r")], [],
              [("y", np.ones((2, 3), np.float32))], [i64("shape", [2, 3])])
    # IsNaN (both 8-bit floats) and IsInf (e5m2 has infinities; saturate=0 keeps them).
    z = np.array([1.0, np.nan, -np.inf, np.inf, 0.5], np.float32)
    for t in ("float8e4m3fn", "float8e5m2"):
        write("isnan_%s" % t, 20, [node("Cast", ["x"], ["q"], to=TYPES[t], saturate=0), node("IsNaN", ["q"], ["y"])],
              [("x", z)], [("y", np.isnan(z) if t == "float8e5m2" else np.isnan(z) | np.isinf(z))])
    write("isinf_float8e5m2", 20,
          [node("Cast", ["x"], ["q"], to=TYPES["float8e5m2"], saturate=0), node("IsInf", ["q"], ["y"])],
          [("x", z)], [("y", np.isinf(z))])


if __name__ == "__main__":
    main()
