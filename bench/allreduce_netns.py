"""Writes the all-reduce benchmark's model for bench/allreduce_netns.sh.

Usage: allreduce_netns.py OUTDIR MEGABYTES REPLICAS

One weight W of MEGABYTES MiB (float), loss = ReduceSum(W) * ReduceMean(x): the gradient of W
is the batch's mean of x everywhere, so a step is almost only the all-reduce of W's gradient
and the SGD update. x has one row per replica.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TRAINING = "ai.onnx.preview.training"
out, mb, replicas = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
n = int(mb * (1 << 20) / 4)
w = numpy_helper.from_array(np.full(n, 0.5, np.float32), "W")
main = helper.make_graph(
    [helper.make_node("ReduceSum", ["W"], ["s"], keepdims=0),
     helper.make_node("ReduceMean", ["x"], ["m"], keepdims=0),
     helper.make_node("Mul", ["s", "m"], ["y"])],
    "allreduce", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [replicas, 1])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])], [w])
algorithm = helper.make_graph(
    [helper.make_node("ReduceSum", ["W"], ["t_s"], keepdims=0),
     helper.make_node("ReduceMean", ["x"], ["t_m"], keepdims=0),
     helper.make_node("Mul", ["t_s", "t_m"], ["loss"]),
     helper.make_node("Gradient", ["W"], ["grad_W"], domain=TRAINING, xs=["W"], y="loss"),
     helper.make_node("Constant", [], ["lr"], value=numpy_helper.from_array(np.array(1e-6, np.float32))),
     helper.make_node("Mul", ["grad_W", "lr"], ["step_W"]),
     helper.make_node("Sub", ["W", "step_W"], ["new_W"])],
    "algorithm", [], [helper.make_tensor_value_info("loss", TensorProto.FLOAT, []),
                      helper.make_tensor_value_info("new_W", TensorProto.FLOAT, None)])
training = onnx.TrainingInfoProto()
training.algorithm.CopyFrom(algorithm)
b = training.update_binding.add()
b.key, b.value = "W", "new_W"
model = helper.make_model(main, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(TRAINING, 1)])
model.training_info.append(training)
os.makedirs(out, exist_ok=True)
onnx.save(model, os.path.join(out, "allreduce.onnx"))
x = np.arange(replicas, dtype=np.float32).reshape(replicas, 1) + 1
onnx.save_tensor(numpy_helper.from_array(x, "x"), os.path.join(out, "allreduce_x.pb"))
