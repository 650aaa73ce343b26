#!/usr/bin/python3
"""Writes the seed corpora of the fuzz targets into fuzz/corpus/ (checked in; rerun after
changing this file). Needs Debian's python3-onnx and protoc.

  /usr/bin/python3 fuzz/make_seeds.py            # from the repository root

corpus/onnx/: small valid models, one op family each, with the attributes fuzzing should
vary; the hostile models of tests/hostile_models.py; the bad models of tests/testdata/onnx.
Shared by onnx_import_fuzzer, onnx_run_fuzzer and onnx_structured_fuzzer.
corpus/graphdef_fuzzer/, corpus/tensor_proto_fuzzer/: Sluice protos from text, by protoc.
corpus/{master,worker}_service_fuzzer/: a method byte, then that method's request.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto as T
from onnx import helper as h

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
sys.path.insert(0, os.path.join(ROOT, "tests"))
import hostile_models  # noqa: E402


def vi(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def out(name="y", elem=T.FLOAT, rank=None):
    # No shape where it depends on the attributes under test: the checker accepts that.
    return h.make_tensor_value_info(name, elem, None if rank is None else ["d%d" % i for i in range(rank)])


def model(nodes, inputs, outputs, inits=(), opset=17):
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=8)


def ints(name, values, dims=None):
    return h.make_tensor(name, T.INT64, [len(values)] if dims is None else dims, values)


def floats(name, dims, values=None):
    n = 1
    for d in dims:
        n *= d
    return h.make_tensor(name, T.FLOAT, dims, values if values is not None else [0.5 * (i % 7 - 3) for i in range(n)])


def onnx_models():
    x4 = vi("x", T.FLOAT, [1, 2, 5, 5])
    x2 = vi("x", T.FLOAT, [3, 4])
    xi = vi("x", T.INT64, [6])
    n = h.make_node
    yield "conv", model([n("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2], dilations=[1, 1])],
                        [x4], [out()], [floats("w", [3, 2, 3, 3]), floats("b", [3])])
    yield "conv_group", model([n("Conv", ["x", "w"], ["y"], group=2, kernel_shape=[2, 2], auto_pad="SAME_UPPER")],
                              [x4], [out()], [floats("w", [2, 1, 2, 2])])
    yield "conv_transpose", model([n("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], output_padding=[1, 1])],
                                  [x4], [out()], [floats("w", [2, 1, 3, 3])])
    yield "maxpool", model([n("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2],
                              ceil_mode=1)], [x4], [out()])
    yield "avgpool", model([n("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], count_include_pad=1)], [x4], [out()])
    yield "lppool", model([n("LpPool", ["x"], ["y"], kernel_shape=[2, 2], p=3)], [x4], [out()])
    yield "global_pool", model([n("GlobalAveragePool", ["x"], ["y"])], [x4], [out()])
    yield "resize_scales", model([n("Resize", ["x", "", "s"], ["y"], mode="linear")], [x4], [out()],
                                 [floats("s", [4], [1, 1, 2, 0.5])])
    yield "resize_sizes", model([n("Resize", ["x", "", "", "s"], ["y"], mode="nearest",
                                   coordinate_transformation_mode="asymmetric")], [x4], [out()],
                                [ints("s", [1, 2, 7, 3])])
    yield "int_div_mod", model([n("Div", ["x", "d"], ["y"]), n("Mod", ["x", "d"], ["z"], fmod=0)], [xi],
                               [out(elem=T.INT64), out("z", T.INT64)], [ints("d", [3, -2, 1, 5, -1, 7])])
    yield "gather", model([n("Gather", ["x", "i"], ["y"], axis=1)], [x2], [out()], [ints("i", [0, -1, 2])])
    yield "gather_elements", model([n("GatherElements", ["x", "i"], ["y"], axis=0)], [x2], [out()],
                                   [ints("i", [0, 2, 1, 0], [1, 4])])
    yield "scatter_nd", model([n("ScatterND", ["x", "i", "u"], ["y"])], [x2], [out()],
                              [ints("i", [1, 0], [2, 1]), floats("u", [2, 4])])
    yield "slice", model([n("Slice", ["x", "s", "e", "a", "st"], ["y"])], [x2], [out()],
                         [ints("s", [0, -1]), ints("e", [3, -5]), ints("a", [0, 1]), ints("st", [2, -1])])
    yield "reshape", model([n("Reshape", ["x", "s"], ["y"])], [x2], [out()], [ints("s", [-1, 0, 1][:2])])
    yield "transpose", model([n("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1])], [x4], [out()])
    yield "pad", model([n("Pad", ["x", "p"], ["y"], mode="reflect")], [x2], [out()], [ints("p", [1, 2, 1, 2])])
    yield "topk", model([n("TopK", ["x", "k"], ["y", "i"], axis=1, largest=0)], [x2],
                        [out(), out("i", T.INT64)], [ints("k", [2])])
    yield "split", model([n("Split", ["x", "s"], ["y", "z"], axis=1)], [x2], [out(), out("z")], [ints("s", [1, 3])])
    yield "concat", model([n("Concat", ["x", "x"], ["y"], axis=-1)], [x2], [out()])
    yield "softmax", model([n("Softmax", ["x"], ["y"], axis=0)], [x2], [out()])
    yield "gemm", model([n("Gemm", ["x", "w", "c"], ["y"], transB=1, alpha=2.0, beta=0.5)], [x2], [out()],
                        [floats("w", [5, 4]), floats("c", [5])])
    yield "matmul", model([n("MatMul", ["x", "w"], ["y"])], [x2], [out()], [floats("w", [4, 2])])
    yield "reduce_sum", model([n("ReduceSum", ["x", "a"], ["y"], keepdims=0)], [x4], [out()], [ints("a", [1, -1])])
    yield "reduce_mean", model([n("ReduceMean", ["x"], ["y"], axes=[2, 3])], [x4], [out()], opset=13)
    yield "argmax", model([n("ArgMax", ["x"], ["y"], axis=1, select_last_index=1)], [x2], [out(elem=T.INT64)])
    yield "cast", model([n("Cast", ["x"], ["y"], to=T.INT32)], [x2], [out(elem=T.INT32)])
    yield "expand", model([n("Expand", ["x", "s"], ["y"])], [x2], [out()], [ints("s", [2, 3, 4])])
    yield "tile", model([n("Tile", ["x", "r"], ["y"])], [x2], [out()], [ints("r", [2, 1])])
    yield "constant_of_shape", model([n("ConstantOfShape", ["s"], ["y"], value=floats("v", [1], [3.0]))], [],
                                     [out()], [ints("s", [2, 3])])
    yield "range", model([n("Range", ["a", "b", "c"], ["y"])], [], [out(elem=T.INT64)],
                         [ints("a", [0], []), ints("b", [10], []), ints("c", [3], [])])
    yield "cumsum", model([n("CumSum", ["x", "a"], ["y"], exclusive=1, reverse=1)], [x2], [out()], [ints("a", [1], [])])
    yield "onehot", model([n("OneHot", ["i", "d", "v"], ["y"], axis=-1)], [], [out()],
                          [ints("i", [0, 2, -1]), ints("d", [4], []), floats("v", [2], [0, 1])])
    yield "einsum", model([n("Einsum", ["x", "w"], ["y"], equation="ij,jk->ik")], [x2], [out()], [floats("w", [4, 2])])
    yield "depth_to_space", model([n("DepthToSpace", ["x"], ["y"], blocksize=2, mode="CRD")],
                                  [vi("x", T.FLOAT, [1, 4, 2, 2])], [out()])
    yield "space_to_depth", model([n("SpaceToDepth", ["x"], ["y"], blocksize=2)], [vi("x", T.FLOAT, [1, 1, 4, 4])], [out()])
    yield "batchnorm", model([n("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-5)], [x4], [out()],
                             [floats("s", [2]), floats("b", [2]), floats("m", [2]), floats("v", [2], [1, 2])])
    yield "layernorm", model([n("LayerNormalization", ["x", "s"], ["y"], axis=-1)], [x2], [out()], [floats("s", [4])])
    yield "instancenorm", model([n("InstanceNormalization", ["x", "s", "b"], ["y"])], [x4], [out()],
                                [floats("s", [2]), floats("b", [2])])
    yield "lrn", model([n("LRN", ["x"], ["y"], size=3)], [x4], [out()])
    yield "lstm", model([n("LSTM", ["x", "w", "r"], ["y"], hidden_size=2)], [vi("x", T.FLOAT, [2, 1, 3])], [out()],
                        [floats("w", [1, 8, 3]), floats("r", [1, 8, 2])])
    yield "trilu", model([n("Trilu", ["x", "k"], ["y"], upper=0)], [x2], [out()], [ints("k", [1], [])])
    yield "quantize", model([n("QuantizeLinear", ["x", "s", "z"], ["q"]), n("DequantizeLinear", ["q", "s", "z"], ["y"])],
                            [x2], [out()], [floats("s", [], [0.1]), h.make_tensor("z", T.UINT8, [], [128])])
    yield "nms", model([n("NonMaxSuppression", ["b", "s", "m"], ["y"])], [], [out(elem=T.INT64)],
                       [floats("b", [1, 2, 4], [0, 0, 1, 1, 0, 0.1, 1, 1.1]), floats("s", [1, 1, 2], [0.9, 0.8]),
                        ints("m", [2], [])])
    yield "roialign", model([n("RoiAlign", ["x", "r", "i"], ["y"], output_height=2, output_width=2, sampling_ratio=2)],
                            [x4], [out()], [floats("r", [1, 4], [0, 0, 3, 3]), ints("i", [0])])
    yield "grid_sample", model([n("GridSample", ["x", "g"], ["y"], align_corners=1)], [x4], [out()],
                               [floats("g", [1, 2, 2, 2], [0, 0, 1, 1, -1, -1, 0.5, 0.5])])
    yield "where", model([n("Greater", ["x", "z"], ["c"]), n("Where", ["c", "x", "z"], ["y"])], [x2], [out()],
                         [floats("z", [1], [0])])
    yield "unsqueeze_squeeze", model([n("Unsqueeze", ["x", "a"], ["u"]), n("Squeeze", ["u", "a"], ["y"])], [x2],
                                     [out()], [ints("a", [1])])
    yield "flatten", model([n("Flatten", ["x"], ["y"], axis=2)], [x4], [out()])
    yield "clip", model([n("Clip", ["x", "lo", "hi"], ["y"])], [x2], [out()],
                        [floats("lo", [], [-0.5]), floats("hi", [], [0.5])])
    then = h.make_graph([n("Identity", ["x"], ["o"])], "then", [], [out("o")])
    other = h.make_graph([n("Neg", ["x"], ["o"])], "else", [], [out("o")])
    yield "if", model([n("If", ["c"], ["y"], then_branch=then, else_branch=other)], [x2, vi("c", T.BOOL, [])], [out()])
    body = h.make_graph([n("Identity", ["cond"], ["cond_out"]), n("Add", ["v", "v"], ["v_out"])], "body",
                        [vi("i", T.INT64, []), vi("cond", T.BOOL, []), vi("v", T.FLOAT, [3, 4])],
                        [vi("cond_out", T.BOOL, []), vi("v_out", T.FLOAT, [3, 4])])
    yield "loop", model([n("Loop", ["m", "", "x"], ["y"], body=body)], [x2], [out()], [ints("m", [3], [])])
    yield "dft", model([n("DFT", ["x"], ["y"], axis=1)], [vi("x", T.FLOAT, [1, 8, 1])], [out()])
    yield "compress", model([n("Compress", ["x", "c"], ["y"], axis=1)], [x2], [out()],
                            [h.make_tensor("c", T.BOOL, [3], [True, False, True])])
    yield "reverse_sequence", model([n("ReverseSequence", ["x", "l"], ["y"], batch_axis=0, time_axis=1)], [x2],
                                    [out()], [ints("l", [1, 2, 4])])


def write(folder, name, data):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def encode(message, text):
    """Serializes a text-format Sluice proto with protoc."""
    return subprocess.run(["protoc", "--proto_path=" + ROOT, "--encode=" + message, "proto/worker.proto",
                           "proto/master.proto", "proto/graph.proto"],
                          input=text.encode(), stdout=subprocess.PIPE, check=True, cwd=ROOT).stdout


MLP = open(os.path.join(ROOT, "examples", "mlp.pbtxt")).read()
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"


def node(name, op, inputs=(), attrs="", device=""):
    ins = " ".join('input: "%s"' % i for i in inputs)
    dev = ' device: "%s"' % device if device else ""
    return 'node { name: "%s" op: "%s" %s%s %s }\n' % (name, op, ins, dev, attrs)


def attr_type(key, t):
    return 'attr { key: "%s" value { type: %s } }' % (key, t)


def const(name, dims, values, device=""):
    shape = " ".join("dim { size: %d }" % d for d in dims)
    vals = " ".join("float_val: %g" % v for v in values)
    return node(name, "Const", attrs=attr_type("dtype", "DT_FLOAT") +
                ' attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { %s } %s } } }' % (shape, vals),
                device=device)


def graphdefs():
    yield "mlp", MLP
    yield "control", const("a", [2], [1, 2]) + node("b", "Identity", ["a", "^a"], attr_type("T", "DT_FLOAT"))
    yield "cycle", (node("a", "Identity", ["b"], attr_type("T", "DT_FLOAT")) +
                    node("b", "Identity", ["a"], attr_type("T", "DT_FLOAT")))
    yield "unknown_op", node("a", "NoSuchOp")
    yield "bad_input", const("a", [1], [1]) + node("b", "Identity", ["a:7"], attr_type("T", "DT_FLOAT"))
    yield "versions", MLP + "versions { producer: 1 min_consumer: 0 }\n"
    yield "const_huge", ('node { name: "c" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } } '
                         'attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: %d } } '
                         'float_val: 1 } } } }\n' % hostile_models.HUGE)


def tensor_protos():
    # Sluice TensorProtos.
    yield "float_content", encode("sluice.TensorProto",
                                  'dtype: DT_FLOAT tensor_shape { dim { size: 2 } } tensor_content: "\\000\\000\\200?\\000\\000\\000@"')
    yield "int64_compact", encode("sluice.TensorProto", "dtype: DT_INT64 tensor_shape { dim { size: 4 } } int64_val: 7")
    yield "strings", encode("sluice.TensorProto", 'dtype: DT_STRING tensor_shape { dim { size: 2 } } string_val: "a" string_val: "bc"')
    yield "half", encode("sluice.TensorProto", "dtype: DT_HALF tensor_shape { dim { size: 3 } } half_val: 15360")
    yield "bool_scalar", encode("sluice.TensorProto", "dtype: DT_BOOL bool_val: true")
    yield "huge_compact", encode("sluice.TensorProto", "dtype: DT_FLOAT tensor_shape { dim { size: 4611686018427387920 } } float_val: 1")
    # ONNX TensorProtos.
    yield "onnx_raw_float", h.make_tensor("t", T.FLOAT, [2, 2], [1, 2, 3, 4]).SerializeToString()
    t = h.make_tensor("t", T.FLOAT, [2], [1, 2])
    t.raw_data = b"\0\0\x80?\0\0\0@"
    t.ClearField("float_data")
    yield "onnx_raw", t.SerializeToString()
    yield "onnx_int32", h.make_tensor("t", T.INT32, [3], [1, -2, 3]).SerializeToString()
    yield "onnx_string", h.make_tensor("t", T.STRING, [2], [b"x", b"yz"]).SerializeToString()
    yield "onnx_fp16", h.make_tensor("t", T.FLOAT16, [2], [1.0, 2.0]).SerializeToString()
    # RecvTensor answers.
    yield "recv_whole", encode("sluice.rpc.RecvTensorResponse",
                               'tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } } tensor_content: "\\000\\000\\200?" }')
    yield "recv_chunk", encode("sluice.rpc.RecvTensorResponse",
                               'content_total_bytes: 8 content_offset: 0 '
                               'tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } tensor_content: "\\000\\000\\200?" }')
    yield "recv_same_host", encode("sluice.rpc.RecvTensorResponse",
                                   'content_total_bytes: 8 same_host_source { pid: 1 address: 4096 lease: 1 } '
                                   'tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } } }')


def master_requests():
    yield "create_mlp", 0, encode("sluice.rpc.CreateSessionRequest", "graph_def { %s }" % MLP)
    yield "extend", 1, encode("sluice.rpc.ExtendSessionRequest",
                              "graph_def { %s }" % node("z", "Relu", ["y"], attr_type("T", "DT_FLOAT")))
    yield "run_mlp", 2, encode("sluice.rpc.RunStepRequest",
                               'feed { name: "x:0" tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } dim { size: 2 } } '
                               'float_val: 1 float_val: 2 } } fetch: "y:0"')
    yield "run_compact", 2, encode("sluice.rpc.RunStepRequest",
                                   'feed { name: "x:0" tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } dim { size: 2 } } '
                                   'float_val: 1 } } fetch: "y:0" options { timeout_in_ms: 100 }')
    yield "close", 3, b""
    yield "list_devices", 4, b""
    yield "reset", 5, b""


def worker_requests():
    send_attrs = (attr_type("T", "DT_FLOAT") + ' attr { key: "tensor_name" value { s: "c:0" } }'
                  ' attr { key: "send_device" value { s: "%s" } }'
                  ' attr { key: "send_device_incarnation" value { i: 1 } }'
                  ' attr { key: "recv_device" value { s: "%s" } }'
                  ' attr { key: "client_terminated" value { b: true } }' % (CPU0, CPU0))
    graph = const("c", [2], [1, 2], device=CPU0) + node("s", "_Send", ["c"], send_attrs, device=CPU0)
    key = "%s;1;%s;c:0;0:0" % (CPU0, CPU0)
    yield "get_status", 0, b""
    yield "create_session", 1, encode("sluice.rpc.CreateWorkerSessionRequest", 'session_handle: "s"')
    yield "delete_session", 2, encode("sluice.rpc.DeleteWorkerSessionRequest", 'session_handle: "s"')
    yield "register", 3, encode("sluice.rpc.RegisterGraphRequest", "graph_def { %s }" % graph)
    yield "deregister", 4, b""
    yield "run", 5, encode("sluice.rpc.RunGraphRequest", 'step_id: 1 recv_key: "%s"' % key)
    yield "cleanup", 6, encode("sluice.rpc.CleanupGraphRequest", "step_id: 1")
    yield "cleanup_all", 7, b""
    yield "recv", 8, encode("sluice.rpc.RecvTensorRequest", 'step_id: 1 rendezvous_key: "%s"' % key)


def newer_models():
    """Seeds of opsets 18 to 22 and of ai.onnx.ml, which Debian's python3-onnx (1.12) cannot
    check or infer: ONNX 1.17 inside Sluice does that when the fuzzers load them."""
    n = h.make_node
    x4 = vi("x", T.FLOAT, [1, 2, 5, 5])
    x2 = vi("x", T.FLOAT, [3, 4])
    ml = lambda v: [h.make_opsetid("ai.onnx.ml", v)]

    def newer(nodes, inputs, outputs, inits=(), opset=22, extra=()):
        g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
        return h.make_model(g, opset_imports=[h.make_opsetid("", opset)] + list(extra), ir_version=10)

    def tensor(name, elem, dims, values):
        return h.make_tensor(name, elem, dims, values)

    # ONNX 1.17's element types by number (1.12's TensorProto lacks their names).
    FLOAT8E4M3FNUZ, UINT4, INT4 = 18, 21, 22

    def packed4(name, elem, dims, values):
        """A 4-bit tensor as ONNX stores it: two values a byte, the first in the low nibble."""
        t = onnx.TensorProto(name=name, data_type=elem, dims=dims)
        nibbles = [v & 0xF for v in values] + [0] * (len(values) % 2)
        t.raw_data = bytes(nibbles[i] | (nibbles[i + 1] << 4) for i in range(0, len(nibbles), 2))
        return t

    yield "resize_antialias", newer([n("Resize", ["x", "", "s"], ["y"], mode="cubic", antialias=1, axes=[2, 3],
                                       keep_aspect_ratio_policy="stretch")], [x4], [out()],
                                    [floats("s", [2], [0.5, 0.7])], opset=19)
    yield "pad_wrap", newer([n("Pad", ["x", "p", "", "a"], ["y"], mode="wrap")], [x2], [out()],
                            [ints("p", [2, 5]), ints("a", [1])], opset=19)
    yield "avgpool_dilations", newer([n("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], dilations=[2, 2],
                                        ceil_mode=1, count_include_pad=1)], [x4], [out()], opset=19)
    yield "deform_conv", newer([n("DeformConv", ["x", "w", "o"], ["y"], kernel_shape=[2, 2])], [x4], [out()],
                               [floats("w", [1, 2, 2, 2]), floats("o", [1, 8, 4, 4])])
    yield "affine_grid", newer([n("AffineGrid", ["t", "s"], ["y"], align_corners=1)], [], [out()],
                               [floats("t", [1, 2, 3]), ints("s", [1, 1, 3, 4])], opset=20)
    yield "gelu_tanh", newer([n("Gelu", ["x"], ["y"], approximate="tanh")], [x2], [out()], opset=20)
    yield "grid_sample_cubic", newer([n("GridSample", ["x", "g"], ["y"], mode="cubic", padding_mode="reflection")],
                                     [x4], [out()], [floats("g", [1, 2, 2, 2], [0, 0, 1, 1, -1, -1, 0.5, 2.5])])
    strings = vi("x", T.STRING, [3])
    yield "string_split", newer([n("StringSplit", ["x"], ["y", "z"], delimiter="-", maxsplit=2)], [strings],
                                [out(elem=T.STRING), out("z", T.INT64)], opset=20)
    yield "string_concat", newer([n("StringConcat", ["x", "x"], ["y"])], [strings], [out(elem=T.STRING)], opset=20)
    yield "regex_full_match", newer([n("RegexFullMatch", ["x"], ["y"], pattern="(a|b)+[0-9]{1,3}")], [strings],
                                    [out(elem=T.BOOL)], opset=20)
    # A 2 x 1 24-bit BMP: 14-byte file header, 40-byte info header, two rows of 4 bytes.
    bmp = (b"BM" + (62).to_bytes(4, "little") + bytes(4) + (54).to_bytes(4, "little") +
           (40).to_bytes(4, "little") + (1).to_bytes(4, "little") + (2).to_bytes(4, "little") +
           (1).to_bytes(2, "little") + (24).to_bytes(2, "little") + bytes(24) + b"\x10\x20\x30\x00\x40\x50\x60\x00")
    yield "image_decoder", newer([n("ImageDecoder", ["x"], ["y"], pixel_format="BGR")], [], [out(elem=T.UINT8)],
                                 [tensor("x", T.UINT8, [len(bmp)], list(bmp))], opset=20)
    yield "cast_float8", newer([n("Cast", ["x"], ["f8"], to=FLOAT8E4M3FNUZ, saturate=0),
                                n("Cast", ["f8"], ["y"], to=T.FLOAT)], [x2], [out()], opset=19)
    yield "cast_int4", newer([n("Cast", ["x"], ["i4"], to=INT4), n("Cast", ["i4"], ["y"], to=T.FLOAT)], [x2],
                             [out()], opset=21)
    yield "dequantize_int4", newer([n("DequantizeLinear", ["q", "s"], ["y"], axis=1, block_size=2)], [], [out()],
                                   [packed4("q", INT4, [2, 4], [1, -2, 3, -4, 5, -6, 7, -8]),
                                    floats("s", [2, 2], [0.5, 2, 1, 4])], opset=21)
    yield "quantize_blocked", newer([n("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1, block_size=2)], [x2],
                                    [h.make_tensor_value_info("y", UINT4, None)],
                                    [floats("s", [3, 2], [0.5, 1, 2, 0.25, 1, 1]),
                                     packed4("z", UINT4, [3, 2], [1, 2, 3, 4, 5, 6])], opset=21)
    yield "ml_tree_ensemble", newer(
        [n("TreeEnsemble", ["x"], ["y"], domain="ai.onnx.ml", n_targets=2, aggregate_function=1, post_transform=2,
           tree_roots=[0], nodes_featureids=[1, 0], nodes_truenodeids=[1, 0], nodes_trueleafs=[0, 1],
           nodes_falsenodeids=[1, 1], nodes_falseleafs=[1, 1], leaf_targetids=[0, 1], nodes_modes=tensor(
               "m", T.UINT8, [2], [0, 6]), nodes_splits=floats("sp", [2], [0.5, 0]),
           leaf_weights=floats("lw", [2], [1, 2]), membership_values=floats("mv", [3], [1, 2, float("nan")]))],
        [x2], [out()], extra=ml(5))
    yield "ml_label_encoder", newer([n("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", keys_strings=["a", "b"],
                                       values_tensor=tensor("v", T.INT32, [2], [7, 9]),
                                       default_tensor=tensor("d", T.INT32, [1], [-1]))],
                                    [strings], [out(elem=T.INT32)], extra=ml(4))
    yield "ml_array_feature_extractor", newer([n("ArrayFeatureExtractor", ["x", "i"], ["y"], domain="ai.onnx.ml"),
                                               n("Binarizer", ["y"], ["z"], domain="ai.onnx.ml", threshold=0.1)],
                                              [x2], [out("z")], [ints("i", [3, 0])], extra=ml(1))


def main():
    # Rewrites every seed, keeping the regression-* inputs that fuzzing found (added by hand).
    for sub in ("onnx", "graphdef_fuzzer", "tensor_proto_fuzzer", "master_service_fuzzer", "worker_service_fuzzer"):
        folder = os.path.join(CORPUS, sub)
        for f in os.listdir(folder) if os.path.isdir(folder) else []:
            if not f.startswith("regression-"):
                os.remove(os.path.join(folder, f))
    folder = os.path.join(CORPUS, "onnx")
    for name, m in onnx_models():
        # Outputs were declared without shapes; shape inference fills them in.
        m = onnx.shape_inference.infer_shapes(m)
        for o in m.graph.output:
            if not o.type.tensor_type.HasField("shape"):
                o.type.tensor_type.shape.SetInParent()
        try:
            onnx.checker.check_model(m, full_check=True)
        except Exception as e:  # A seed the checker refuses is a weak seed: say so.
            print("warning: seed %s does not check: %s" % (name, str(e).splitlines()[0]))
        write(folder, name + ".onnx", m.SerializeToString())
    for name, m in newer_models():
        for o in m.graph.output:
            o.type.tensor_type.shape.SetInParent()  # Unknown dims, but a shape: the checker wants one.
        write(folder, name + ".onnx", m.SerializeToString())
    with tempfile.TemporaryDirectory() as tmp:
        for name, m in hostile_models.cases(tmp):
            write(folder, "hostile_" + name + ".onnx", m.SerializeToString())
    testdata = os.path.join(ROOT, "tests", "testdata", "onnx")
    for f in sorted(os.listdir(testdata)):
        if f.endswith(".onnx") and os.path.getsize(os.path.join(testdata, f)) < 4096:
            shutil.copy(os.path.join(testdata, f), os.path.join(folder, "testdata_" + f))
    for name, text in graphdefs():
        write(os.path.join(CORPUS, "graphdef_fuzzer"), name, encode("sluice.GraphDef", text))
    for name, data in tensor_protos():
        write(os.path.join(CORPUS, "tensor_proto_fuzzer"), name, data)
    for name, method, data in master_requests():
        write(os.path.join(CORPUS, "master_service_fuzzer"), name, bytes([method]) + data)
    for name, method, data in worker_requests():
        write(os.path.join(CORPUS, "worker_service_fuzzer"), name, bytes([method]) + data)


if __name__ == "__main__":
    main()
