"""GridSample against torch.nn.functional.grid_sample: every mode, padding mode and
align_corners, 2-D (and 3-D where ONNX defines it: linear and nearest), as GridSample-20
(linear/nearest/cubic) and GridSample-16 (bilinear/nearest/bicubic, 2-D), with grid points
inside and well outside the input. Each case runs through `sluice run`; prints one line per
case and exits 1 when any differs from torch by more than 1e-5.

Usage: grid_sample_torch.py SLUICE WORKDIR
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

TOL = 1e-5
TORCH_MODE = {"linear": "bilinear", "bilinear": "bilinear", "nearest": "nearest", "cubic": "bicubic",
              "bicubic": "bicubic"}


def run_case(sluice, work, opset, mode, pad, align, dims, rng):
    shape = [2, 3, 5, 6] if dims == 2 else [1, 2, 4, 5, 3]
    gshape = [2, 4, 7, 2] if dims == 2 else [1, 3, 4, 2, 3]
    x = rng.standard_normal(shape).astype(np.float32)
    g = rng.uniform(-1.6, 1.6, gshape).astype(np.float32)  # A fifth of the points outside.
    out_shape = shape[:2] + gshape[1:-1]
    node = helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=pad, align_corners=align)
    graph = helper.make_graph(
        [node], "grid_sample",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
         helper.make_tensor_value_info("g", TensorProto.FLOAT, gshape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    path = os.path.join(work, "grid_sample.onnx")
    onnx.save(model, path)
    for name, value in (("x", x), ("g", g)):
        onnx.save_tensor(numpy_helper.from_array(value, name), os.path.join(work, name + ".pb"))
    out = os.path.join(work, "out")
    r = subprocess.run([sluice, "run", path, "--input", "x=%s/x.pb" % work, "--input", "g=%s/g.pb" % work,
                        "--output-dir", out], capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()[-300:]
    y = numpy_helper.to_array(onnx.load_tensor(os.path.join(out, "output_0.pb")))
    want = torch.nn.functional.grid_sample(torch.from_numpy(x), torch.from_numpy(g), mode=TORCH_MODE[mode],
                                           padding_mode=pad, align_corners=bool(align)).numpy()
    return float(np.abs(y - want).max()), ""


def main():
    sluice, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(0)
    failed = 0
    for opset, modes in ((20, ("linear", "nearest", "cubic")), (16, ("bilinear", "nearest", "bicubic"))):
        for dims in (2, 3):
            for mode in modes:
                if dims == 3 and (opset == 16 or mode == "cubic"):
                    continue  # ONNX defines no 3-D cubic; GridSample-16 is 2-D only.
                for pad in ("zeros", "border", "reflection"):
                    for align in (0, 1):
                        err, why = run_case(sluice, work, opset, mode, pad, align, dims, rng)
                        ok = err is not None and err <= TOL
                        failed += not ok
                        print("%s GridSample-%d %d-D %-8s %-10s align_corners=%d: %s" % (
                            "ok  " if ok else "FAIL", opset, dims, mode, pad, align,
                            "max |diff| %.2e" % err if err is not None else why))
    print("%d cases differ from torch" % failed if failed else "every case matches torch to %g" % TOL)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
