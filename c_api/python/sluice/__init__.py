"""Python binding for Sluice: graphs and sessions over libsluice_c.so (ctypes + numpy).

    import numpy as np, sluice
    sess = sluice.InferenceSession("model.onnx")          # ONNX Runtime's API shape
    y, = sess.run(None, {sess.get_inputs()[0].name: np.ones((1, 2), np.float32)})

    g = sluice.Graph()                                    # TensorFlow's graph-and-session
    x = g.placeholder("x", np.float32, shape=(None, 2))
    w = g.constant([[1, 2], [3, 4]], name="w", dtype=np.float32)
    y = g.op("Relu", [g.op("Add", [g.op("MatMul", [x, w]), 0.5])])
    with sluice.Session(g) as sess:
        print(sess.run(y, {x: np.eye(2, dtype=np.float32)}))

The library is found through $SLUICE_C_LIBRARY, else next to this package, else in a
bazel-bin/c_api/ above it. Errors from the runtime are raised as SluiceError subclasses that
carry TensorFlow's error code (`.code`) and the runtime's message (`.message`).

Arrays returned by Session.run share memory with the runtime (no copy) and are read-only;
call .copy() for a writable array. Fed arrays are copied into tensors the runtime owns.
String tensors (TF_STRING) are numpy object arrays: fed from arrays of bytes or str (str as
UTF-8; "S" and "U" arrays too), fetched as new object arrays of bytes (InferenceSession does
not take string inputs yet).

Modules: inference (InferenceSession, NodeArg), ort_api (ONNX Runtime's SessionOptions,
RunOptions, OrtValue, IOBinding, ModelMetadata and module functions), capi
(onnxruntime_pybind11_state: ONNX Runtime's exception names), errors (SluiceError and a subclass per
code), graph (Graph, Operation, Output), session (Session), config (encode_config, ConfigProto written by hand), training (Trainer);
_lib loads the library and declares its signatures, _tensors converts arrays.
"""

try:
    import numpy as _numpy  # noqa: F401
except ImportError:
    raise ImportError("sluice needs numpy: pip install numpy (or sluice[numpy]), or "
                      "apt-get install python3-numpy")

from ._lib import library_path, version
from .config import encode_config
from .errors import (AbortedError, AlreadyExistsError, CancelledError, DataLossError,
                     DeadlineExceededError, FailedPreconditionError, InternalError,
                     InvalidArgumentError, NotFoundError, OutOfRangeError,
                     PermissionDeniedError, ResourceExhaustedError, SluiceError,
                     UnauthenticatedError, UnavailableError, UnimplementedError, UnknownError)
from .graph import Graph, OnnxModel, Operation, Output, Shape
from .inference import InferenceSession, NodeArg
from .ort_api import (ExecutionMode, GraphOptimizationLevel, IOBinding, ModelMetadata, OrtValue,
                      RunOptions, SessionOptions, get_all_providers, get_available_providers,
                      get_device, set_default_logger_severity)
from . import capi  # noqa: F401  (ONNX Runtime's sluice.capi.onnxruntime_pybind11_state)
from .session import Device, Session
from .training import Trainer

__all__ = [
    "InferenceSession", "NodeArg", "Graph", "Operation", "Output", "Session", "Shape", "Device", "SluiceError",
    "CancelledError", "UnknownError", "InvalidArgumentError", "DeadlineExceededError",
    "NotFoundError", "AlreadyExistsError", "PermissionDeniedError", "ResourceExhaustedError",
    "FailedPreconditionError", "AbortedError", "OutOfRangeError", "UnimplementedError",
    "InternalError", "UnavailableError", "DataLossError", "UnauthenticatedError", "library_path",
    "version", "encode_config", "SessionOptions", "RunOptions", "ExecutionMode",
    "GraphOptimizationLevel", "OrtValue", "IOBinding", "ModelMetadata", "get_available_providers",
    "get_all_providers", "get_device", "get_version_string", "set_default_logger_severity",
]


def get_version_string():
    """The runtime's version (ONNX Runtime's function name)."""
    return version()


def __getattr__(name):
    # sluice.__version__ is the library's TF_Version(), written once in //:VERSION; asked
    # for lazily, so importing the package does not load the library.
    if name == "__version__":
        return version()
    raise AttributeError("module 'sluice' has no attribute %r" % name)
