"""Training ONNX models through their TrainingInfoProto (SL_Trainer)."""

import collections
import ctypes
import os

from ._lib import call, lib
from ._tensors import array_copy_of_tensor, as_array, tensor_from_array
from .session import session_options


class Trainer(object):
    """Trains an ONNX model through its TrainingInfoProto, as `sluice train` does:
    initialize() runs the initialization graphs once; each step(feeds) runs the algorithm and
    returns its outputs that no update_binding consumes (the loss), by name; save(path)
    writes the model with the trained initializers. `target` and `config` as for Session; on
    a cluster with a "ps" job, training is data-parallel as with `sluice train --target`."""

    def __init__(self, model_path, config=None, target=""):
        self._lib = lib()
        with session_options(target, config) as opts:
            self._ptr = call("SL_NewTrainer", os.fspath(model_path).encode(), opts)

    def __del__(self):
        if getattr(self, "_ptr", None):
            self._lib.SL_DeleteTrainer(self._ptr)
            self._ptr = None

    def initialize(self):
        call("SL_TrainerInitialize", self._ptr)

    def step(self, feeds=None):
        feeds = feeds or {}
        names = [str(k).encode() for k in feeds]
        tensors = [tensor_from_array(as_array(v)) for v in feeds.values()]
        try:
            call("SL_TrainerStep", self._ptr, (ctypes.c_char_p * max(1, len(names)))(*names),
                 (ctypes.c_void_p * max(1, len(tensors)))(*tensors), len(names))
        finally:
            for t in tensors:
                self._lib.TF_DeleteTensor(t)
        out = collections.OrderedDict()
        for i in range(self._lib.SL_TrainerNumOutputs(self._ptr)):
            # Owned by the trainer until the next step: copied.
            out[self._lib.SL_TrainerOutputName(self._ptr, i).decode()] = array_copy_of_tensor(
                self._lib.SL_TrainerOutput(self._ptr, i))
        return out

    def save(self, path):
        call("SL_TrainerSave", self._ptr, os.fspath(path).encode())
