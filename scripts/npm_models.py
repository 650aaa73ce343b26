#!/usr/bin/python3
"""Test cases from real models with ONNX Runtime's outputs as the reference, for
scripts/npm_models.sh. Two steps around a run of bench/ort_run.js:

  npm_models.py inputs CASE_DIR SPEC   # writes CASE_DIR/test_data_set_0/input_*.pb and inputs.json
  npm_models.py outputs CASE_DIR       # turns ort_outputs.json into test_data_set_0/output_*.pb

SPEC fixes what the model cannot say: ';'-separated NAME=DIMS (comma-separated) or NAME=VALUE
for a scalar (an int64 like a sample rate); inputs not named take the model's dims (unknown dims
as 1). Values are seeded random floats in [-1, 1).
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

NP = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32,
      onnx.TensorProto.DOUBLE: np.float64}
ORT_TYPE = {np.float32: "float32", np.int64: "int64", np.int32: "int32", np.float64: "float64"}


def graph_inputs(model):
    init = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in init]


def make_inputs(case, spec):
    model = onnx.load(os.path.join(case, "model.onnx"), load_external_data=False)
    fixed = dict(part.split("=", 1) for part in spec.split(";") if part)
    rng = np.random.default_rng(0)
    data_dir = os.path.join(case, "test_data_set_0")
    os.makedirs(data_dir, exist_ok=True)
    feeds = {}
    for k, i in enumerate(graph_inputs(model)):
        dtype = NP[i.type.tensor_type.elem_type]
        value = fixed.get(i.name)
        if value is not None and len(i.type.tensor_type.shape.dim) == 0:
            a = np.array(dtype(float(value)) if dtype != np.int64 else int(value), dtype)
        else:
            if value is not None:
                dims = [int(d) for d in value.split(",")]
            else:
                dims = [d.dim_value if d.dim_value > 0 else 1 for d in i.type.tensor_type.shape.dim]
            a = rng.uniform(-1, 1, dims).astype(dtype) if dtype in (np.float32, np.float64) else \
                rng.integers(0, 8, dims).astype(dtype)
        with open(os.path.join(data_dir, "input_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(a, i.name).SerializeToString())
        feeds[i.name] = {"type": ORT_TYPE[dtype], "dims": list(a.shape), "data": a.reshape(-1).tolist()}
    with open(os.path.join(case, "inputs.json"), "w") as f:
        json.dump(feeds, f)


def write_outputs(case):
    model = onnx.load(os.path.join(case, "model.onnx"), load_external_data=False)
    with open(os.path.join(case, "ort_outputs.json")) as f:
        got = json.load(f)
    for k, o in enumerate(model.graph.output):
        t = got[o.name]
        dtype = {"float32": np.float32, "int64": np.int64, "int32": np.int32, "float64": np.float64,
                 "bool": np.bool_}[t["type"]]
        a = np.array(t["data"], dtype).reshape(t["dims"])
        with open(os.path.join(case, "test_data_set_0", "output_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(a, o.name).SerializeToString())


if __name__ == "__main__":
    if sys.argv[1] == "inputs":
        make_inputs(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "")
    else:
        write_outputs(sys.argv[2])
