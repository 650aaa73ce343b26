"""Writing ONNX backend test cases (model.onnx, test_data_set_0/input_*.pb, output_*.pb) from
one node and numpy values; shared by the gen_onnx_*_cases.py generators."""
import os

import onnx
from onnx import helper, numpy_helper


def elem_type(a):
    if a.dtype.kind in "OUS":
        return onnx.TensorProto.STRING
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype]


def write_case(out, name, opset, node, inputs, outputs, initializers=()):
    """One case under out/name: `node` at ai.onnx `opset`, inputs and outputs as (name, array)."""
    graph = helper.make_graph(
        [node], name, [value_info(n, a) for n, a in inputs], [value_info(n, a) for n, a in outputs],
        initializer=[numpy_helper.from_array(a, n) for n, a in initializers])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    write_model(out, name, model, inputs, outputs)


def value_info(name, a):
    """A graph input or output typed and shaped as the numpy array `a`."""
    return helper.make_tensor_value_info(name, elem_type(a), a.shape)


def write_model(out, name, model, inputs, outputs):
    """The case folder out/name: model.onnx and test_data_set_0 with (name, array) inputs and
    outputs. Models of opsets past Debian's python3-onnx (1.12) are written unchecked; Sluice
    checks them with ONNX 1.17 when it loads them."""
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for kind, values in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(values):
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())
