"""Writes tiny hostile models, one or two nodes each, into a folder: each once crashed Sluice
(SIGFPE, SIGSEGV, abort on an uncaught exception) or hung it. hostile_models_test.sh runs
them through `sluice run` and expects a clean error naming the node or tensor.

  python3 hostile_models.py OUT_DIR    # writes OUT_DIR/<case>.onnx (and data files)
"""
import os
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper as h

INT64_MAX = 2**63 - 1
HUGE = 2**62 + 16  # Floats: 4 * HUGE bytes wraps to 64.


def model(nodes, inputs, outputs, inits=(), opset=17):
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def x4():
    return h.make_tensor_value_info("x", T.FLOAT, [1, 1, 4, 4])


def y(elem=T.FLOAT, rank=4, name="y"):
    # Symbolic dims: the checker wants a shape, and the real one is what is under test.
    return h.make_tensor_value_info(name, elem, ["d%d" % i for i in range(rank)])


def external(name, location, offset, length):
    t = h.make_tensor(name, T.FLOAT, [4], [0, 0, 0, 0])
    t.ClearField("float_data")
    t.data_location = T.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def cases(out):
    w = h.make_tensor("w", T.FLOAT, [1, 1, 1, 1], [1.0])
    # A plain model whose input is named by a hostile --input (a FIFO).
    yield "identity", model([h.make_node("Identity", ["x"], ["y"], name="id")], [x4()], [y()])
    # 4 MiB of floats: over a --memory-limit of 1M.
    yield "fill_4m", model(
        [h.make_node("ConstantOfShape", ["s"], ["y"], name="fill_4m",
                     value=h.make_tensor("v", T.FLOAT, [1], [1.0]))],
        [], [y(rank=2)], [h.make_tensor("s", T.INT64, [2], [1024, 1024])])
    yield "conv_stride0", model(
        [h.make_node("Conv", ["x", "w"], ["y"], name="conv_stride0", strides=[0, 0])], [x4()], [y()], [w])
    yield "maxpool_stride0", model(
        [h.make_node("MaxPool", ["x"], ["y"], name="maxpool_stride0", kernel_shape=[2, 2], strides=[0, 1])],
        [x4()], [y()])
    yield "conv_pads_huge", model(
        [h.make_node("Conv", ["x", "w"], ["y"], name="conv_pads_huge", pads=[2**61, 0, 2**61, 0])], [x4()], [y()], [w])
    yield "constant_of_shape_huge", model(
        [h.make_node("ConstantOfShape", ["s"], ["y"], name="constant_of_shape_huge",
                     value=h.make_tensor("v", T.FLOAT, [1], [1.0]))],
        [], [y(rank=1)], [h.make_tensor("s", T.INT64, [1], [HUGE])])
    yield "expand_huge", model(
        [h.make_node("Expand", ["x1", "s"], ["y"], name="expand_huge")],
        [h.make_tensor_value_info("x1", T.FLOAT, [1])], [y(rank=1)], [h.make_tensor("s", T.INT64, [1], [HUGE])])
    # Shape inputs that declare 2^31 elements: ONNX's shape inference makes outputs of rank
    # 2^31 from them (about 100 GB of dims). Found by the structured fuzzer.
    yield "constant_of_shape_long_shape", model(
        [h.make_node("ConstantOfShape", ["c"], ["y"], name="constant_of_shape_long_shape",
                     value=h.make_tensor("v", T.FLOAT, [1], [1.0]))],
        [h.make_tensor_value_info("c", T.INT64, [2**31])], [y(rank=1)])
    yield "expand_long_shape", model(
        [h.make_node("Expand", ["x1", "c"], ["y"], name="expand_long_shape")],
        [h.make_tensor_value_info("x1", T.FLOAT, [1]), h.make_tensor_value_info("c", T.INT64, [2**31])],
        [y(rank=1)])
    # The same length, inferred rather than declared: the first ConstantOfShape's output has
    # 2^31 elements, and the second reads it as a shape. Bounded by the inference child's
    # memory budget.
    yield "constant_of_shape_inferred_long_shape", model(
        [h.make_node("ConstantOfShape", ["s"], ["c"], name="make_long_shape",
                     value=h.make_tensor("one", T.INT64, [1], [1])),
         h.make_node("ConstantOfShape", ["c"], ["y"], name="constant_of_shape_inferred_long_shape",
                     value=h.make_tensor("v", T.FLOAT, [1], [1.0]))],
        [], [y(rank=1)], [h.make_tensor("s", T.INT64, [1], [2**31])])
    # hidden_size 2^62: the kernel's 4 * hidden_size wrapped (UBSan, structured fuzzer).
    yield "lstm_hidden_huge", model(
        [h.make_node("LSTM", ["x3", "lw", "lr"], ["y"], name="lstm_hidden_huge", hidden_size=2**62)],
        [h.make_tensor_value_info("x3", T.FLOAT, [2, 1, 3])], [y(rank=4)],
        [h.make_tensor("lw", T.FLOAT, [1, 8, 3], [0.0] * 24), h.make_tensor("lr", T.FLOAT, [1, 8, 2], [0.0] * 16)])
    yield "resize_scales_1e9", model(
        [h.make_node("Resize", ["x", "", "sc"], ["y"], name="resize_scales_1e9")],
        [x4()], [y()], [h.make_tensor("sc", T.FLOAT, [4], [1, 1, 1e9, 1e9])])
    yield "external_overflow", model(
        [h.make_node("Identity", ["e"], ["y"], name="id")], [], [y(rank=1)], [external("e", "data.bin", 8, INT64_MAX)])
    yield "external_directory", model(
        [h.make_node("Identity", ["e"], ["y"], name="id")], [], [y(rank=1)], [external("e", "folder", 0, 16)])
    yield "external_fifo", model(
        [h.make_node("Identity", ["e"], ["y"], name="id")], [], [y(rank=1)], [external("e", "fifo", 0, 16)])
    with open(os.path.join(out, "data.bin"), "wb") as f:
        f.write(b"\0" * 32)
    os.makedirs(os.path.join(out, "folder"), exist_ok=True)
    for fifo in ("fifo", "fifo.pbtxt"):  # Also named as a model, a graph and an input.
        if not os.path.exists(os.path.join(out, fifo)):
            os.mkfifo(os.path.join(out, fifo))
    # Defined, not a crash: numpy's answers for INT64_MIN / -1 and % -1, and for / 0.
    ints = lambda name, v: h.make_tensor(name, T.INT64, [len(v)], v)
    yield "int_div_edges", model(
        [h.make_node("Div", ["a", "b"], ["y"], name="div"), h.make_node("Mod", ["a", "b"], ["z"], name="mod")],
        [], [y(T.INT64, rank=1), y(T.INT64, rank=1, name="z")],
        [ints("a", [-2**63, 7, -2**63]), ints("b", [-1, 0, 0])])
    yield "int_min_div", model(
        [h.make_node("Div", ["a", "b"], ["y"], name="div")], [], [y(T.INT64, rank=1)],
        [ints("a", [-2**63]), ints("b", [-1])])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, m in cases(out):
        # Written as they are: the checker would refuse some, and the point is what Sluice does.
        with open(os.path.join(out, name + ".onnx"), "wb") as f:
            f.write(m.SerializeToString())
    # A GraphDef Const whose one float_val fills 2^62 + 16 elements.
    with open(os.path.join(out, "const_huge.pbtxt"), "w") as f:
        f.write('node { name: "const_huge" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }\n'
                '  attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: %d } }'
                ' float_val: 1 } } } }\n' % HUGE)


if __name__ == "__main__":
    main()
