"""Python binding for Sluice: graphs and sessions over libsluice_c.so (ctypes + numpy).

    import numpy as np, sluice
    g = sluice.Graph()
    x = g.placeholder("x", np.float32, shape=(None, 2))
    w = g.constant([[1, 2], [3, 4]], name="w", dtype=np.float32)
    y = g.op("Relu", [g.op("Add", [g.op("MatMul", [x, w]), 0.5])])
    with sluice.Session(g) as sess:
        print(sess.run(y, {x: np.eye(2, dtype=np.float32)}))

The library is found through $SLUICE_C_LIBRARY, else next to this package, else in a
bazel-bin/c_api/ above it. Errors from the runtime are raised as SluiceError subclasses that
carry TensorFlow's error code (`.code`) and the runtime's message (`.message`).

Arrays returned by Session.run share memory with the runtime (no copy) and are read-only;
call .copy() for a writable array. Fed arrays are not copied either; the runtime keeps them
alive for as long as it uses them. String tensors are not supported.
"""

import collections
import ctypes
import os
import threading

import numpy as np

__all__ = [
    "Graph", "Operation", "Output", "Session", "Shape", "Device", "SluiceError",
    "CancelledError", "UnknownError", "InvalidArgumentError", "DeadlineExceededError",
    "NotFoundError", "AlreadyExistsError", "PermissionDeniedError", "ResourceExhaustedError",
    "FailedPreconditionError", "AbortedError", "OutOfRangeError", "UnimplementedError",
    "InternalError", "UnavailableError", "DataLossError", "UnauthenticatedError", "library_path",
    "version", "encode_config",
]

# ---------------------------------------------------------------------------------------------
# Errors


class SluiceError(Exception):
    """An error reported by the runtime: `code` is TensorFlow's error code number."""

    code = 2  # UNKNOWN, for codes without a subclass.

    def __init__(self, message, code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self):
        return "%s (code %d)" % (self.message, self.code)


def _error_class(name, code):
    return type(name, (SluiceError,), {"code": code, "__doc__": "TF code %d." % code})


CancelledError = _error_class("CancelledError", 1)
UnknownError = _error_class("UnknownError", 2)
InvalidArgumentError = _error_class("InvalidArgumentError", 3)
DeadlineExceededError = _error_class("DeadlineExceededError", 4)
NotFoundError = _error_class("NotFoundError", 5)
AlreadyExistsError = _error_class("AlreadyExistsError", 6)
PermissionDeniedError = _error_class("PermissionDeniedError", 7)
ResourceExhaustedError = _error_class("ResourceExhaustedError", 8)
FailedPreconditionError = _error_class("FailedPreconditionError", 9)
AbortedError = _error_class("AbortedError", 10)
OutOfRangeError = _error_class("OutOfRangeError", 11)
UnimplementedError = _error_class("UnimplementedError", 12)
InternalError = _error_class("InternalError", 13)
UnavailableError = _error_class("UnavailableError", 14)
DataLossError = _error_class("DataLossError", 15)
UnauthenticatedError = _error_class("UnauthenticatedError", 16)

_ERRORS_BY_CODE = {c.code: c for c in SluiceError.__subclasses__()}


def _raise(code, message):
    cls = _ERRORS_BY_CODE.get(code)
    if cls is None:
        raise SluiceError(message, code)
    raise cls(message)


# ---------------------------------------------------------------------------------------------
# The library


class _Output(ctypes.Structure):
    _fields_ = [("oper", ctypes.c_void_p), ("index", ctypes.c_int)]


class _Buffer(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("length", ctypes.c_size_t),
                ("data_deallocator", ctypes.c_void_p)]


_DEALLOCATOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)

_vp, _int, _i64, _sz, _cp = (ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_size_t,
                             ctypes.c_char_p)
_SIGNATURES = {
    # name: (restype, argtypes)
    "TF_Version": (_cp, []),
    "TF_NewStatus": (_vp, []),
    "TF_DeleteStatus": (None, [_vp]),
    "TF_GetCode": (_int, [_vp]),
    "TF_Message": (_cp, [_vp]),
    "TF_NewBuffer": (ctypes.POINTER(_Buffer), []),
    "TF_NewBufferFromString": (ctypes.POINTER(_Buffer), [_vp, _sz]),
    "TF_DeleteBuffer": (None, [ctypes.POINTER(_Buffer)]),
    "TF_NewTensor": (_vp, [_int, ctypes.POINTER(_i64), _int, _vp, _sz, _DEALLOCATOR, _vp]),
    "TF_AllocateTensor": (_vp, [_int, ctypes.POINTER(_i64), _int, _sz]),
    "TF_DeleteTensor": (None, [_vp]),
    "TF_TensorType": (_int, [_vp]),
    "TF_NumDims": (_int, [_vp]),
    "TF_Dim": (_i64, [_vp, _int]),
    "TF_TensorByteSize": (_sz, [_vp]),
    "TF_TensorData": (_vp, [_vp]),
    "TF_NewSessionOptions": (_vp, []),
    "TF_SetTarget": (None, [_vp, _cp]),
    "TF_SetConfig": (None, [_vp, _vp, _sz, _vp]),
    "TF_DeleteSessionOptions": (None, [_vp]),
    "TF_NewGraph": (_vp, []),
    "TF_DeleteGraph": (None, [_vp]),
    "TF_GraphGetTensorNumDims": (_int, [_vp, _Output, _vp]),
    "TF_GraphGetTensorShape": (None, [_vp, _Output, ctypes.POINTER(_i64), _int, _vp]),
    "TF_NewOperation": (_vp, [_vp, _cp, _cp]),
    "TF_SetDevice": (None, [_vp, _cp]),
    "TF_AddInput": (None, [_vp, _Output]),
    "TF_AddInputList": (None, [_vp, ctypes.POINTER(_Output), _int]),
    "TF_AddControlInput": (None, [_vp, _vp]),
    "TF_SetAttrString": (None, [_vp, _cp, _vp, _sz]),
    "TF_SetAttrStringList": (None, [_vp, _cp, ctypes.POINTER(_vp), ctypes.POINTER(_sz), _int]),
    "TF_SetAttrInt": (None, [_vp, _cp, _i64]),
    "TF_SetAttrIntList": (None, [_vp, _cp, ctypes.POINTER(_i64), _int]),
    "TF_SetAttrFloat": (None, [_vp, _cp, ctypes.c_float]),
    "TF_SetAttrFloatList": (None, [_vp, _cp, ctypes.POINTER(ctypes.c_float), _int]),
    "TF_SetAttrBool": (None, [_vp, _cp, ctypes.c_ubyte]),
    "TF_SetAttrBoolList": (None, [_vp, _cp, ctypes.POINTER(ctypes.c_ubyte), _int]),
    "TF_SetAttrType": (None, [_vp, _cp, _int]),
    "TF_SetAttrTypeList": (None, [_vp, _cp, ctypes.POINTER(_int), _int]),
    "TF_SetAttrShape": (None, [_vp, _cp, ctypes.POINTER(_i64), _int]),
    "TF_SetAttrTensor": (None, [_vp, _cp, _vp, _vp]),
    "TF_FinishOperation": (_vp, [_vp, _vp]),
    "TF_OperationName": (_cp, [_vp]),
    "TF_OperationOpType": (_cp, [_vp]),
    "TF_OperationDevice": (_cp, [_vp]),
    "TF_OperationNumOutputs": (_int, [_vp]),
    "TF_OperationNumInputs": (_int, [_vp]),
    "TF_OperationOutputType": (_int, [_Output]),
    "TF_GraphOperationByName": (_vp, [_vp, _cp]),
    "TF_GraphNextOperation": (_vp, [_vp, ctypes.POINTER(_sz)]),
    "TF_GraphToGraphDef": (None, [_vp, ctypes.POINTER(_Buffer), _vp]),
    "TF_NewImportGraphDefOptions": (_vp, []),
    "TF_DeleteImportGraphDefOptions": (None, [_vp]),
    "TF_ImportGraphDefOptionsSetPrefix": (None, [_vp, _cp]),
    "TF_GraphImportGraphDef": (None, [_vp, ctypes.POINTER(_Buffer), _vp, _vp]),
    "TF_NewSession": (_vp, [_vp, _vp, _vp]),
    "TF_CloseSession": (None, [_vp, _vp]),
    "TF_DeleteSession": (None, [_vp, _vp]),
    "TF_SessionRun": (None, [_vp, ctypes.POINTER(_Buffer), ctypes.POINTER(_Output),
                             ctypes.POINTER(_vp), _int, ctypes.POINTER(_Output),
                             ctypes.POINTER(_vp), _int, ctypes.POINTER(_vp), _int,
                             ctypes.POINTER(_Buffer), _vp]),
    "TF_SessionListDevices": (_vp, [_vp, _vp]),
    "TF_DeleteDeviceList": (None, [_vp]),
    "TF_DeviceListCount": (_int, [_vp]),
    "TF_DeviceListName": (_cp, [_vp, _int, _vp]),
    "TF_DeviceListType": (_cp, [_vp, _int, _vp]),
    "TF_DeviceListMemoryBytes": (_i64, [_vp, _int, _vp]),
    "TF_DeviceListIncarnation": (ctypes.c_uint64, [_vp, _int, _vp]),
    "SL_GraphImportONNX": (_vp, [_vp, _cp, _vp, _sz, _cp, _vp]),
    "SL_DeleteONNXImport": (None, [_vp]),
    "SL_ONNXImportNumInputs": (_int, [_vp]),
    "SL_ONNXImportInputName": (_cp, [_vp, _int]),
    "SL_ONNXImportInput": (_Output, [_vp, _int]),
    "SL_ONNXImportNumOutputs": (_int, [_vp]),
    "SL_ONNXImportOutputName": (_cp, [_vp, _int]),
    "SL_ONNXImportOutput": (_Output, [_vp, _int]),
    "SL_NewTrainer": (_vp, [_cp, _vp, _vp]),
    "SL_DeleteTrainer": (None, [_vp]),
    "SL_TrainerInitialize": (None, [_vp, _vp]),
    "SL_TrainerStep": (None, [_vp, ctypes.POINTER(_cp), ctypes.POINTER(_vp), _int, _vp]),
    "SL_TrainerNumOutputs": (_int, [_vp]),
    "SL_TrainerOutputName": (_cp, [_vp, _int]),
    "SL_TrainerOutput": (_vp, [_vp, _int]),
    "SL_TrainerSave": (None, [_vp, _cp, _vp]),
}

_lib_lock = threading.Lock()
_lib_handle = None
_lib_path = None


def _candidate_paths():
    env = os.environ.get("SLUICE_C_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    paths = [os.path.join(here, "libsluice_c.so")]
    d = here
    for _ in range(6):  # The package sits at c_api/python/sluice in the source tree.
        paths.append(os.path.join(d, "bazel-bin", "c_api", "libsluice_c.so"))
        d = os.path.dirname(d)
    return paths


def _lib():
    global _lib_handle, _lib_path
    if _lib_handle is not None:
        return _lib_handle
    with _lib_lock:
        if _lib_handle is None:
            tried = _candidate_paths()
            path = next((p for p in tried if os.path.isfile(p)), None)
            if path is None:
                raise ImportError("libsluice_c.so not found (set SLUICE_C_LIBRARY or build "
                                  "//c_api:libsluice_c.so); looked in: " + ", ".join(tried))
            lib = ctypes.CDLL(path)
            for name, (restype, argtypes) in _SIGNATURES.items():
                fn = getattr(lib, name)
                fn.restype = restype
                fn.argtypes = argtypes
            _lib_path = path
            _lib_handle = lib
    return _lib_handle


def library_path():
    """The path of the loaded libsluice_c.so (loading it if needed)."""
    _lib()
    return _lib_path


def version():
    return _lib().TF_Version().decode()


class _Status(object):
    """A TF_Status for one call; check() raises the matching SluiceError."""

    def __init__(self):
        self._lib = _lib()
        self.ptr = self._lib.TF_NewStatus()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._lib.TF_DeleteStatus(self.ptr)
        self.ptr = None
        return False

    def check(self):
        code = self._lib.TF_GetCode(self.ptr)
        if code != 0:
            _raise(code, self._lib.TF_Message(self.ptr).decode("utf-8", "replace"))


def _call(fn_name, *args):
    """Calls a C function whose last argument is a TF_Status*; raises on error."""
    with _Status() as status:
        result = getattr(_lib(), fn_name)(*args, status.ptr)
        status.check()
        return result


# ---------------------------------------------------------------------------------------------
# Types and tensors

_DTYPE_TO_TF = {
    np.dtype(np.float32): 1, np.dtype(np.float64): 2, np.dtype(np.int32): 3,
    np.dtype(np.uint8): 4, np.dtype(np.int16): 5, np.dtype(np.int8): 6,
    np.dtype(np.complex64): 8, np.dtype(np.int64): 9, np.dtype(np.bool_): 10,
    np.dtype(np.uint16): 17, np.dtype(np.complex128): 18, np.dtype(np.float16): 19,
    np.dtype(np.uint32): 22, np.dtype(np.uint64): 23,
}
_TF_TO_DTYPE = {v: k for k, v in _DTYPE_TO_TF.items()}


def _tf_type(dtype):
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError("not a numpy dtype: %r" % (dtype,))
    dt = dt.newbyteorder("=")
    if dt not in _DTYPE_TO_TF:
        raise TypeError("dtype %s is not supported by Sluice's C API" % dt)
    return _DTYPE_TO_TF[dt]


def _np_dtype(tf_type):
    if tf_type not in _TF_TO_DTYPE:
        raise UnimplementedError("tensor type %d has no numpy equivalent" % tf_type)
    return _TF_TO_DTYPE[tf_type]


def _as_array(value, dtype=None):
    """An array of `dtype` when given; numpy values keep their dtype; other Python values
    become float32 / int32 arrays where they fit, as TensorFlow would make them."""
    if dtype is not None:
        return np.asarray(value, dtype=dtype)
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value)
    arr = np.asarray(value)
    if arr.dtype == np.float64:
        return arr.astype(np.float32)
    if arr.dtype == np.int64 and (arr.size == 0 or (arr.min() >= -2**31 and arr.max() < 2**31)):
        return arr.astype(np.int32)
    return arr


def _dims(shape):
    return (ctypes.c_int64 * max(len(shape), 1))(*shape)


def _tensor_from_array(arr):
    """A new TF_Tensor holding a copy of the array; the caller deletes it.

    A copy, not a view: the runtime may drop its last reference to a fed tensor on one of its
    own threads after the run returns, and a Python deallocator called from there while the
    interpreter shuts down aborts the process."""
    tf_type = _tf_type(arr.dtype)
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if not arr.flags.c_contiguous:
        arr = arr.copy(order="C")  # (np.ascontiguousarray would turn a 0-d array into 1-d.)
    ptr = _lib().TF_AllocateTensor(tf_type, _dims(arr.shape), arr.ndim, arr.nbytes)
    if not ptr:
        raise InvalidArgumentError("cannot make a tensor of %s %s" % (arr.dtype, arr.shape))
    if arr.nbytes:
        ctypes.memmove(_lib().TF_TensorData(ptr), arr.ctypes.data, arr.nbytes)
    return ptr


class _TensorOwner(object):
    """Deletes a TF_Tensor once no numpy array views its memory."""

    def __init__(self, ptr):
        self._lib = _lib()
        self.ptr = ptr

    def __del__(self):
        if self.ptr:
            self._lib.TF_DeleteTensor(self.ptr)
            self.ptr = None


def _array_from_tensor(ptr):
    """A read-only numpy view of a TF_Tensor, which it takes ownership of."""
    lib = _lib()
    owner = _TensorOwner(ptr)
    dtype = _np_dtype(lib.TF_TensorType(ptr))
    shape = tuple(lib.TF_Dim(ptr, i) for i in range(lib.TF_NumDims(ptr)))
    nbytes = lib.TF_TensorByteSize(ptr)
    data = lib.TF_TensorData(ptr)
    if nbytes == 0 or not data:
        return np.zeros(shape, dtype=dtype)
    raw = (ctypes.c_char * nbytes).from_address(data)
    raw._owner = owner  # The view keeps `raw` alive, `raw` keeps the tensor alive.
    arr = np.frombuffer(raw, dtype=dtype).reshape(shape)
    arr.flags.writeable = False
    return arr


# ---------------------------------------------------------------------------------------------
# Graphs


class Shape(object):
    """A shape attr value: dims with None for unknown ones; Shape(None) is an unknown rank."""

    def __init__(self, dims):
        self.dims = None if dims is None else tuple(dims)

    def __repr__(self):
        return "Shape(%r)" % (self.dims,)


class Operation(object):
    """A node of a Graph."""

    def __init__(self, graph, ptr):
        self.graph = graph
        self._ptr = ptr

    @property
    def name(self):
        return _lib().TF_OperationName(self._ptr).decode()

    @property
    def type(self):
        return _lib().TF_OperationOpType(self._ptr).decode()

    @property
    def device(self):
        return _lib().TF_OperationDevice(self._ptr).decode()

    @property
    def num_inputs(self):
        return _lib().TF_OperationNumInputs(self._ptr)

    @property
    def num_outputs(self):
        return _lib().TF_OperationNumOutputs(self._ptr)

    @property
    def outputs(self):
        return [Output(self, i) for i in range(self.num_outputs)]

    def output(self, index):
        return Output(self, index)

    def __eq__(self, other):
        return isinstance(other, Operation) and other._ptr == self._ptr

    def __hash__(self):
        return hash(self._ptr)

    def __repr__(self):
        return "<sluice.Operation %r type=%s>" % (self.name, self.type)


class Output(object):
    """Output `index` of an operation: the tensor "name:index"."""

    def __init__(self, op, index):
        self.op = op
        self.index = index

    @property
    def graph(self):
        return self.op.graph

    @property
    def name(self):
        return "%s:%d" % (self.op.name, self.index)

    def _c(self):
        return _Output(self.op._ptr, self.index)

    @property
    def dtype(self):
        """The numpy dtype; None if the index is out of range."""
        t = _lib().TF_OperationOutputType(self._c())
        return _TF_TO_DTYPE.get(t)

    @property
    def shape(self):
        """The inferred shape: a tuple with None for unknown dims, or None for unknown rank."""
        graph = self.op.graph._ptr
        rank = _call("TF_GraphGetTensorNumDims", graph, self._c())
        if rank < 0:
            return None
        dims = _dims([0] * rank)
        _call("TF_GraphGetTensorShape", graph, self._c(), dims, rank)
        return tuple(None if d < 0 else d for d in dims[:rank])

    def __eq__(self, other):
        return isinstance(other, Output) and (other.op, other.index) == (self.op, self.index)

    def __hash__(self):
        return hash((self.op, self.index))

    def __repr__(self):
        return "<sluice.Output %r dtype=%s>" % (self.name, self.dtype)


class OnnxModel(object):
    """What Graph.import_onnx returns: ordered dicts from the model's input and output names
    to the Outputs that carry them."""

    def __init__(self, inputs, outputs):
        self.inputs = inputs
        self.outputs = outputs

    def __repr__(self):
        return "OnnxModel(inputs=%s, outputs=%s)" % (list(self.inputs), list(self.outputs))


class Graph(object):
    """A dataflow graph built op by op, or imported from a serialized GraphDef."""

    def __init__(self):
        self._lib = _lib()
        self._ptr = self._lib.TF_NewGraph()
        self._lock = threading.Lock()
        self._name_counts = collections.Counter()

    def __del__(self):
        if getattr(self, "_ptr", None):
            self._lib.TF_DeleteGraph(self._ptr)  # Deferred by the library while sessions live.
            self._ptr = None

    def _unique_name(self, base):
        with self._lock:
            while True:
                n = self._name_counts[base]
                self._name_counts[base] += 1
                name = base if n == 0 else "%s_%d" % (base, n)
                if not self._lib.TF_GraphOperationByName(self._ptr, name.encode()):
                    return name

    # -- lookup --

    def operation(self, name):
        """The operation called `name`; KeyError if there is none."""
        ptr = self._lib.TF_GraphOperationByName(self._ptr, name.encode())
        if not ptr:
            raise KeyError("no operation named %r in the graph" % name)
        return Operation(self, ptr)

    def output(self, name):
        """The tensor "op:k" (or "op" for output 0)."""
        op_name, _, index = name.rpartition(":")
        if not op_name or not index.isdigit():
            op_name, index = name, "0"
        return Output(self.operation(op_name), int(index))

    def operations(self):
        """Every operation, in the order they were added."""
        pos = ctypes.c_size_t(0)
        ops = []
        while True:
            ptr = self._lib.TF_GraphNextOperation(self._ptr, ctypes.byref(pos))
            if not ptr:
                return ops
            ops.append(Operation(self, ptr))

    def __contains__(self, name):
        return bool(self._lib.TF_GraphOperationByName(self._ptr, name.encode()))

    # -- ONNX --

    def import_onnx(self, model, prefix=""):
        """Imports an ONNX model: `model` is a path or the serialized ModelProto as bytes (a
        model with external data files must be given by path). Returns an OnnxModel whose
        `inputs` and `outputs` map the model's names to the Outputs to feed and fetch."""
        if isinstance(model, (bytes, bytearray, memoryview)):
            data = bytes(model)
            ptr = _call("SL_GraphImportONNX", self._ptr, None, data, len(data), prefix.encode())
        else:
            ptr = _call("SL_GraphImportONNX", self._ptr, os.fspath(model).encode(), None, 0,
                        prefix.encode())
        try:
            def values(count, name_fn, output_fn):
                out = collections.OrderedDict()
                for i in range(count(ptr)):
                    c = output_fn(ptr, i)
                    out[name_fn(ptr, i).decode()] = Output(Operation(self, c.oper), c.index)
                return out
            lib = self._lib
            return OnnxModel(values(lib.SL_ONNXImportNumInputs, lib.SL_ONNXImportInputName,
                                    lib.SL_ONNXImportInput),
                             values(lib.SL_ONNXImportNumOutputs, lib.SL_ONNXImportOutputName,
                                    lib.SL_ONNXImportOutput))
        finally:
            self._lib.SL_DeleteONNXImport(ptr)

    # -- building --

    def placeholder(self, name, dtype, shape=None):
        """A value fed at run time. `shape`: None (any), or dims with None for unknown ones."""
        attrs = {"dtype": np.dtype(dtype)}
        if shape is not None:
            attrs["shape"] = Shape(shape)
        return self.op("Placeholder", [], name=name, attrs=attrs)

    def constant(self, value, name=None, dtype=None):
        """A Const holding `value` (Python floats become float32, ints int32 by default)."""
        arr = _as_array(value, dtype)
        return self.op("Const", [], name=name, attrs={"value": arr, "dtype": arr.dtype})

    def op(self, op_type, inputs, name=None, attrs=None, control_inputs=None, device=None):
        """Adds an operation. Each item of `inputs` feeds one input arg: an Output, an
        Operation (its output 0), a "name:k" string, a list of those for a list arg (AddN,
        IdentityN), or a value that becomes a constant. Attrs the inputs determine (T, N) are
        inferred. Returns the Output for ops with one output, a list for several, and the
        Operation for ops without outputs."""
        # Python values among the inputs become constants of the type of the first tensor
        # input, so g.op("Add", [x, 1]) works for a float x as it would in TensorFlow.
        hint = next((o.dtype for o in _flatten(inputs) if isinstance(o, Output)), None)
        converted = [[self._to_output(i, hint) for i in item] if isinstance(item, (list, tuple))
                     else self._to_output(item, hint) for item in inputs]
        desc = self._lib.TF_NewOperation(self._ptr, op_type.encode(),
                                         (name or self._unique_name(op_type)).encode())
        try:
            for item in converted:
                if isinstance(item, list):
                    arr = (_Output * max(len(item), 1))(*[o._c() for o in item])
                    self._lib.TF_AddInputList(desc, arr, len(item))
                else:
                    self._lib.TF_AddInput(desc, item._c())
            for c in control_inputs or []:
                c = c.op if isinstance(c, Output) else c
                if isinstance(c, str):
                    c = self.operation(c)
                self._lib.TF_AddControlInput(desc, c._ptr)
            if device:
                self._lib.TF_SetDevice(desc, device.encode())
            for attr_name, value in (attrs or {}).items():
                self._set_attr(desc, attr_name, value)
        except BaseException:
            # TF_FinishOperation is the only way to free a description. An attr with a NULL
            # name makes it fail, so the half-built operation is discarded, not added.
            self._lib.TF_SetAttrInt(desc, None, 0)
            with _Status() as status:
                self._lib.TF_FinishOperation(desc, status.ptr)
            raise
        ptr = _call("TF_FinishOperation", desc)
        op = Operation(self, ptr)
        n = op.num_outputs
        if n == 1:
            return Output(op, 0)
        return op.outputs if n > 1 else op

    def _to_output(self, item, dtype_hint=None):
        if isinstance(item, Output):
            if item.graph is not self:
                raise ValueError("%s belongs to another graph" % item.name)
            return item
        if isinstance(item, Operation):
            if item.graph is not self:
                raise ValueError("%s belongs to another graph" % item.name)
            return Output(item, 0)
        if isinstance(item, str):
            return self.output(item)
        numpy_value = isinstance(item, (np.ndarray, np.generic))
        return self.constant(item, dtype=None if numpy_value else dtype_hint)

    def _set_attr(self, desc, name, value):
        lib = self._lib
        key = name.encode()
        if isinstance(value, Shape):
            if value.dims is None:
                lib.TF_SetAttrShape(desc, key, None, -1)
            else:
                dims = [-1 if d is None else int(d) for d in value.dims]
                lib.TF_SetAttrShape(desc, key, _dims(dims), len(dims))
        elif isinstance(value, np.ndarray):
            tensor = _tensor_from_array(value)
            try:
                _call("TF_SetAttrTensor", desc, key, tensor)
            finally:
                lib.TF_DeleteTensor(tensor)
        elif _is_dtype(value):
            lib.TF_SetAttrType(desc, key, _tf_type(value))
        elif isinstance(value, (bytes, str)):
            b = value.encode() if isinstance(value, str) else value
            lib.TF_SetAttrString(desc, key, b, len(b))
        elif isinstance(value, (bool, np.bool_)):
            lib.TF_SetAttrBool(desc, key, 1 if value else 0)
        elif isinstance(value, (int, np.integer)):
            lib.TF_SetAttrInt(desc, key, int(value))
        elif isinstance(value, (float, np.floating)):
            lib.TF_SetAttrFloat(desc, key, float(value))
        elif isinstance(value, (list, tuple)):
            self._set_list_attr(desc, key, list(value))
        else:
            raise TypeError("attr %r: cannot use a value of type %s" % (name, type(value).__name__))

    def _set_list_attr(self, desc, key, values):
        lib = self._lib
        n = len(values)
        if all(_is_dtype(v) for v in values) and n:
            lib.TF_SetAttrTypeList(desc, key, (ctypes.c_int * n)(*map(_tf_type, values)), n)
        elif all(isinstance(v, (bool, np.bool_)) for v in values) and n:
            lib.TF_SetAttrBoolList(desc, key, (ctypes.c_ubyte * n)(*map(int, values)), n)
        elif all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
            lib.TF_SetAttrIntList(desc, key, (ctypes.c_int64 * max(n, 1))(*map(int, values)), n)
        elif all(isinstance(v, (int, float, np.integer, np.floating)) for v in values):
            lib.TF_SetAttrFloatList(desc, key, (ctypes.c_float * n)(*map(float, values)), n)
        elif all(isinstance(v, (str, bytes)) for v in values):
            bs = [v.encode() if isinstance(v, str) else v for v in values]
            ptrs = (ctypes.c_void_p * n)(*[ctypes.cast(ctypes.c_char_p(b), ctypes.c_void_p)
                                           for b in bs])
            lens = (ctypes.c_size_t * n)(*map(len, bs))
            lib.TF_SetAttrStringList(desc, key, ptrs, lens, n)
        else:
            raise TypeError("attr %r: unsupported list %r" % (key.decode(), values))

    # -- serialization --

    def as_graph_def(self):
        """The graph as serialized GraphDef bytes."""
        buf = self._lib.TF_NewBuffer()
        try:
            _call("TF_GraphToGraphDef", self._ptr, buf)
            return ctypes.string_at(buf.contents.data, buf.contents.length)
        finally:
            self._lib.TF_DeleteBuffer(buf)

    def import_graph_def(self, graph_def, prefix=""):
        """Adds the nodes of serialized GraphDef bytes, named "prefix/name" when a prefix is
        given. All or nothing: on error the graph is unchanged."""
        if not isinstance(graph_def, (bytes, bytearray)):
            raise TypeError("graph_def must be bytes, not %s" % type(graph_def).__name__)
        data = bytes(graph_def)
        buf = self._lib.TF_NewBufferFromString(data, len(data))
        opts = self._lib.TF_NewImportGraphDefOptions()
        try:
            self._lib.TF_ImportGraphDefOptionsSetPrefix(opts, prefix.encode())
            _call("TF_GraphImportGraphDef", self._ptr, buf, opts)
        finally:
            self._lib.TF_DeleteImportGraphDefOptions(opts)
            self._lib.TF_DeleteBuffer(buf)


def _flatten(items):
    for item in items:
        if isinstance(item, (list, tuple)):
            for i in item:
                yield i
        else:
            yield item


def _is_dtype(value):
    return isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic))


# ---------------------------------------------------------------------------------------------
# Config (a serialized ConfigProto, written here so the binding needs no protobuf package)

_CONFIG_FIELDS = {
    # name: (field number, kind)
    "device_count": (1, "map<string,int32>"),
    "intra_op_parallelism_threads": (2, "int"),
    "placement_period": (3, "int"),
    "device_filters": (4, "repeated string"),
    "inter_op_parallelism_threads": (5, "int"),
    "allow_soft_placement": (7, "int"),
    "log_device_placement": (8, "int"),
    "use_per_session_threads": (9, "int"),
    "operation_timeout_in_ms": (11, "int"),
}


def _varint(n):
    n &= (1 << 64) - 1  # Negative ints are sent as 10-byte two's complement.
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number, wire_type):
    return _varint((number << 3) | wire_type)


def _length_delimited(number, payload):
    return _field(number, 2) + _varint(len(payload)) + payload


def encode_config(config):
    """Serializes a dict of ConfigProto fields, e.g. {"device_count": {"CPU": 2}}."""
    out = b""
    for name, value in config.items():
        if name not in _CONFIG_FIELDS:
            raise ValueError("unknown ConfigProto field %r (known: %s)"
                             % (name, ", ".join(sorted(_CONFIG_FIELDS))))
        number, kind = _CONFIG_FIELDS[name]
        if kind == "int":
            out += _field(number, 0) + _varint(int(value))
        elif kind == "repeated string":
            for s in value:
                out += _length_delimited(number, s.encode())
        else:
            for key, count in value.items():
                entry = _length_delimited(1, key.encode()) + _field(2, 0) + _varint(int(count))
                out += _length_delimited(number, entry)
    return out


# ---------------------------------------------------------------------------------------------
# Sessions

Device = collections.namedtuple("Device", ["name", "device_type", "memory_limit", "incarnation"])


class Session(object):
    """Runs a Graph. `target`: "" for in-process; `config`: a dict of ConfigProto fields (see
    encode_config) or serialized ConfigProto bytes. Usable as a context manager."""

    def __init__(self, graph, target="", config=None):
        if not isinstance(graph, Graph):
            raise TypeError("Session needs a sluice.Graph, not %s" % type(graph).__name__)
        self._lib = _lib()
        self.graph = graph
        self._ptr = None
        opts = self._lib.TF_NewSessionOptions()
        try:
            self._lib.TF_SetTarget(opts, (target or "").encode())
            if config is not None:
                data = encode_config(config) if isinstance(config, dict) else bytes(config)
                _call("TF_SetConfig", opts, data, len(data))
            self._ptr = _call("TF_NewSession", graph._ptr, opts)
        finally:
            self._lib.TF_DeleteSessionOptions(opts)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        if getattr(self, "_ptr", None):
            with _Status() as status:
                self._lib.TF_DeleteSession(self._ptr, status.ptr)
            self._ptr = None

    def close(self):
        """Releases the session's resources; later runs raise FailedPreconditionError."""
        if self._ptr:
            _call("TF_CloseSession", self._ptr)

    def list_devices(self):
        lst = _call("TF_SessionListDevices", self._ptr)
        try:
            devices = []
            for i in range(self._lib.TF_DeviceListCount(lst)):
                devices.append(Device(_call("TF_DeviceListName", lst, i).decode(),
                                      _call("TF_DeviceListType", lst, i).decode(),
                                      _call("TF_DeviceListMemoryBytes", lst, i),
                                      _call("TF_DeviceListIncarnation", lst, i)))
            return devices
        finally:
            self._lib.TF_DeleteDeviceList(lst)

    def _output(self, fetch):
        if isinstance(fetch, Output):
            if fetch.graph is not self.graph:
                raise ValueError("%s is not in this session's graph" % fetch.name)
            return fetch
        if isinstance(fetch, str):
            return self.graph.output(fetch)
        raise TypeError("cannot fetch or feed %r (use an Output or a \"name:k\" string)"
                        % (fetch,))

    def run(self, fetches, feed_dict=None, targets=None):
        """Computes `fetches` (an Output, a "name:k" string, an Operation to run for its effect,
        or a list of those) after feeding `feed_dict` ({Output or name: value}). Returns numpy
        arrays in the shape of `fetches` (None for Operations)."""
        if self._ptr is None:
            raise FailedPreconditionError("the session was deleted")
        single = not isinstance(fetches, (list, tuple))
        fetch_list = [fetches] if single else list(fetches)
        outputs, positions, target_ops = [], [], []
        for f in fetch_list:
            if isinstance(f, Operation):
                target_ops.append(f)
                positions.append(None)
            else:
                positions.append(len(outputs))
                outputs.append(self._output(f))
        for t in targets or []:
            target_ops.append(t if isinstance(t, Operation) else self.graph.operation(t))

        feeds, tensors = [], []
        try:
            for key, value in (feed_dict or {}).items():
                out = self._output(key)
                # numpy values keep their dtype (a mismatch is the runtime's error to report);
                # Python values take the dtype of the tensor they feed.
                numpy_value = isinstance(value, (np.ndarray, np.generic))
                arr = _as_array(value, None if numpy_value else out.dtype)
                tensors.append(_tensor_from_array(arr))
                feeds.append(out)
            n_in, n_out, n_tg = len(feeds), len(outputs), len(target_ops)
            c_in = (_Output * max(n_in, 1))(*[o._c() for o in feeds])
            c_vals = (ctypes.c_void_p * max(n_in, 1))(*tensors)
            c_out = (_Output * max(n_out, 1))(*[o._c() for o in outputs])
            c_res = (ctypes.c_void_p * max(n_out, 1))()
            c_tg = (ctypes.c_void_p * max(n_tg, 1))(*[t._ptr for t in target_ops])
            _call("TF_SessionRun", self._ptr, None, c_in, c_vals, n_in, c_out, c_res, n_out,
                  c_tg, n_tg, None)
        finally:
            for t in tensors:
                self._lib.TF_DeleteTensor(t)
        arrays = [_array_from_tensor(c_res[i]) for i in range(len(outputs))]
        results = [None if p is None else arrays[p] for p in positions]
        return results[0] if single else results


# ---------------------------------------------------------------------------------------------
# Training


class Trainer(object):
    """Trains an ONNX model through its TrainingInfoProto, as `sluice train` does:
    initialize() runs the initialization graphs once; each step(feeds) runs the algorithm and
    returns its outputs that no update_binding consumes (the loss), by name; save(path)
    writes the model with the trained initializers. `target` and `config` as for Session; on
    a cluster with a "ps" job, training is data-parallel as with `sluice train --target`."""

    def __init__(self, model_path, config=None, target=""):
        self._lib = _lib()
        opts = self._lib.TF_NewSessionOptions()
        try:
            self._lib.TF_SetTarget(opts, (target or "").encode())
            if config is not None:
                data = encode_config(config) if isinstance(config, dict) else bytes(config)
                _call("TF_SetConfig", opts, data, len(data))
            self._ptr = _call("SL_NewTrainer", os.fspath(model_path).encode(), opts)
        finally:
            self._lib.TF_DeleteSessionOptions(opts)

    def __del__(self):
        if getattr(self, "_ptr", None):
            self._lib.SL_DeleteTrainer(self._ptr)
            self._ptr = None

    def initialize(self):
        _call("SL_TrainerInitialize", self._ptr)

    def step(self, feeds=None):
        feeds = feeds or {}
        names = [str(k).encode() for k in feeds]
        tensors = [_tensor_from_array(_as_array(v)) for v in feeds.values()]
        try:
            _call("SL_TrainerStep", self._ptr, (_cp * max(1, len(names)))(*names),
                  (_vp * max(1, len(tensors)))(*tensors), len(names))
        finally:
            for t in tensors:
                self._lib.TF_DeleteTensor(t)
        out = collections.OrderedDict()
        for i in range(self._lib.SL_TrainerNumOutputs(self._ptr)):
            ptr = self._lib.SL_TrainerOutput(self._ptr, i)
            dtype = _np_dtype(self._lib.TF_TensorType(ptr))
            shape = tuple(self._lib.TF_Dim(ptr, d) for d in range(self._lib.TF_NumDims(ptr)))
            nbytes = self._lib.TF_TensorByteSize(ptr)
            raw = ctypes.string_at(self._lib.TF_TensorData(ptr), nbytes) if nbytes else b""
            out[self._lib.SL_TrainerOutputName(self._ptr, i).decode()] = (
                np.frombuffer(raw, dtype=dtype).reshape(shape).copy())
        return out

    def save(self, path):
        _call("SL_TrainerSave", self._ptr, os.fspath(path).encode())

