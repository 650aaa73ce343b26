"""The parts of ONNX Runtime's Python API that inference scripts use, over Sluice's session:
SessionOptions, RunOptions, ExecutionMode, GraphOptimizationLevel, OrtValue, IOBinding,
ModelMetadata and the module functions, with ONNX Runtime's names and defaults, so that a script
written for ONNX Runtime runs with `import sluice as ort`.

    so = sluice.SessionOptions()
    so.intra_op_num_threads = 2
    so.graph_optimization_level = sluice.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = sluice.InferenceSession("model.onnx", so, providers=["CPUExecutionProvider"])
    x = sluice.OrtValue.ortvalue_from_numpy(np.ones((1, 3), np.float32))
    y = sess.run_with_ort_values(None, {"x": x})[0].numpy()

What has no meaning here (GPU providers, arena and memory-pattern switches, log verbosity) is
accepted; providers other than the CPU's are dropped with a warning, as ONNX Runtime does for
a provider it was not built with.
"""

import ctypes
import enum
import mmap
import os
import threading
import warnings

import numpy as np

from ._lib import lib
from .errors import InvalidArgumentError, NotFoundError

__all__ = [
    "SessionOptions", "RunOptions", "ExecutionMode", "GraphOptimizationLevel", "OrtValue",
    "IOBinding", "ModelMetadata", "get_available_providers", "get_all_providers", "get_device",
    "get_version_string", "set_default_logger_severity", "CPU_PROVIDER", "step_events",
]

CPU_PROVIDER = "CPUExecutionProvider"
_default_log_severity = 2


class ExecutionMode(enum.IntEnum):
    """ORT_SEQUENTIAL runs one node at a time (every intra-op thread on it); ORT_PARALLEL lets
    independent nodes run at once on inter_op_num_threads threads."""
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class GraphOptimizationLevel(enum.IntEnum):
    """How much of Sluice's optimizer runs: DISABLE_ALL none; ENABLE_BASIC constant folding, dead
    nodes and the arithmetic folds (BatchNormalization, Pads, Transposes into their readers);
    ENABLE_EXTENDED adds the fusions (activations and residuals into convolutions, LayerNorm,
    GELU, MatMul + Add); ENABLE_ALL (the default) adds the NHWC layout."""
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class SessionOptions(object):
    """ONNX Runtime's SessionOptions: what InferenceSession(path, sess_options) reads.

    Threads: intra_op_num_threads (0: the runtime's choice), inter_op_num_threads (0: 1 in
    sequential mode, 2 in parallel mode). execution_mode, graph_optimization_level as above.
    enable_profiling with profile_file_prefix: the session writes a Chrome trace of every run
    (InferenceSession.end_profiling returns its path). optimized_model_filepath: where the
    session writes the optimized model as it starts: an ONNX file that holds Sluice's optimized
    graph in one node of domain "ai.sluice" and loads in Sluice only (as ONNX Runtime's own
    optimized models at its extended levels hold its fused ops and load in ONNX Runtime only). add_session_config_entry keeps any key; those with a
    meaning here: "session.intra_op_thread_affinities" (ignored), "session.use_env_allocators"
    (ignored). add_initializer(name, OrtValue) feeds that initializer on every run.
    register_custom_ops_library(path) loads an op library built against TensorFlow's C API
    (TF_LoadLibrary).
    """

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.enable_profiling = False
        self.profile_file_prefix = "onnxruntime_profile_"
        self.optimized_model_filepath = ""
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.use_deterministic_compute = False
        self._config_entries = {}
        self._initializers = {}
        self._custom_libraries = []

    def add_session_config_entry(self, key, value):
        if not isinstance(key, str) or not isinstance(value, str):
            raise InvalidArgumentError("session config entries are strings, got %r = %r" % (key, value))
        self._config_entries[key] = value

    def get_session_config_entry(self, key):
        if key not in self._config_entries:
            raise InvalidArgumentError("SessionOptions has no config entry %r" % (key,))
        return self._config_entries[key]

    def add_initializer(self, name, ort_value):
        if not isinstance(ort_value, OrtValue):
            raise InvalidArgumentError("add_initializer(%r, ...) takes an OrtValue, not %s"
                                       % (name, type(ort_value).__name__))
        self._initializers[name] = ort_value

    def add_external_initializers(self, names, ort_values):
        for name, value in zip(names, ort_values):
            self.add_initializer(name, value)

    def register_custom_ops_library(self, path):
        if not os.path.exists(path):
            raise NotFoundError("custom op library %r: no such file" % (path,))
        self._custom_libraries.append(os.fspath(path))

    def _config(self):
        """The ConfigProto fields these options mean (see sluice.encode_config)."""
        cfg = {}
        if not isinstance(self.intra_op_num_threads, int) or self.intra_op_num_threads < 0:
            raise InvalidArgumentError("intra_op_num_threads must be an int >= 0, not %r"
                                       % (self.intra_op_num_threads,))
        if not isinstance(self.inter_op_num_threads, int) or self.inter_op_num_threads < 0:
            raise InvalidArgumentError("inter_op_num_threads must be an int >= 0, not %r"
                                       % (self.inter_op_num_threads,))
        if self.intra_op_num_threads > 0:
            cfg["intra_op_parallelism_threads"] = self.intra_op_num_threads
        parallel = ExecutionMode(self.execution_mode) == ExecutionMode.ORT_PARALLEL
        cfg["inter_op_parallelism_threads"] = (
            self.inter_op_num_threads if parallel and self.inter_op_num_threads > 0 else 2 if parallel else 1)
        level = GraphOptimizationLevel(self.graph_optimization_level)
        if level == GraphOptimizationLevel.ORT_DISABLE_ALL:
            rewrite = {"disable_meta_optimizer": True}
        elif level == GraphOptimizationLevel.ORT_ENABLE_BASIC:
            rewrite = {"remapping": "OFF", "layout_optimizer": "OFF"}
        elif level == GraphOptimizationLevel.ORT_ENABLE_EXTENDED:
            rewrite = {"layout_optimizer": "OFF"}
        else:
            rewrite = {}
        if rewrite:
            cfg["graph_options"] = {"rewrite_options": rewrite}
        return cfg


TERMINATED = "Exiting due to terminate flag being set to true."


class RunOptions(object):
    """ONNX Runtime's RunOptions. `terminate = True` ends the runs that use these options and
    are under way (from any thread: they stop between nodes and fail with ORT's message, a
    sluice.CancelledError, which ORT's `Fail` catches), and makes later runs with them fail at
    once until it is set back to False. `run_tag` names the run in the profile; the log levels
    are kept and not used."""

    def __init__(self):
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.run_tag = ""
        self.only_execute_path_to_fetches = False
        self._config_entries = {}
        self._terminate = False
        self._active = set()  # SL_RunCancellation pointers of the runs under way.
        self._active_lock = threading.Lock()

    @property
    def terminate(self):
        return self._terminate

    @terminate.setter
    def terminate(self, value):
        with self._active_lock:
            self._terminate = bool(value)
            if self._terminate:
                for c in self._active:
                    lib().SL_CancelRun(c, TERMINATED.encode())

    def _begin_run(self):
        """A cancellation for one run, registered so that terminate reaches it (None when
        terminate is already set)."""
        c = lib().SL_NewRunCancellation()
        with self._active_lock:
            if self._terminate:
                lib().SL_DeleteRunCancellation(c)
                return None
            self._active.add(c)
        return c

    def _end_run(self, c):
        with self._active_lock:
            self._active.discard(c)
        lib().SL_DeleteRunCancellation(c)

    def add_run_config_entry(self, key, value):
        self._config_entries[key] = value

    def get_run_config_entry(self, key):
        if key not in self._config_entries:
            raise InvalidArgumentError("RunOptions has no config entry %r" % (key,))
        return self._config_entries[key]


# ONNX's TensorProto element types by numpy dtype, for OrtValue.element_type().
_ELEMENT_TYPES = {
    np.dtype(np.float32): 1, np.dtype(np.uint8): 2, np.dtype(np.int8): 3, np.dtype(np.uint16): 4,
    np.dtype(np.int16): 5, np.dtype(np.int32): 6, np.dtype(np.int64): 7, np.dtype(np.bool_): 9,
    np.dtype(np.float16): 10, np.dtype(np.float64): 11, np.dtype(np.uint32): 12,
    np.dtype(np.uint64): 13, np.dtype(np.complex64): 14, np.dtype(np.complex128): 15,
}
_TYPE_NAMES = {
    1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 9: "bool",
    10: "float16", 11: "double", 12: "uint32", 13: "uint64", 14: "complex64", 15: "complex128",
}


def _check_cpu(device_type, device_id, what):
    if str(device_type).lower() != "cpu" or device_id not in (0, None):
        raise InvalidArgumentError("%s: Sluice's Python binding holds values on the CPU only, not "
                                   "on %s:%s" % (what, device_type, device_id))


def _as_dtype(element_type, what):
    try:
        dtype = np.dtype(element_type)
    except TypeError:
        raise InvalidArgumentError("%s: %r is not a numpy dtype" % (what, element_type))
    if dtype not in _ELEMENT_TYPES:
        raise InvalidArgumentError("%s: element type %s is not an ONNX tensor type" % (what, dtype))
    return dtype


class OrtValue(object):
    """A tensor value on the CPU, as ONNX Runtime's OrtValue: one made from a numpy array shares
    its memory (a C-contiguous array; another is copied once into one)."""

    def __init__(self, array):
        self._array = array

    @staticmethod
    def ortvalue_from_numpy(numpy_obj, device_type="cpu", device_id=0):
        _check_cpu(device_type, device_id, "OrtValue.ortvalue_from_numpy")
        if not isinstance(numpy_obj, np.ndarray):
            raise InvalidArgumentError("OrtValue.ortvalue_from_numpy takes a numpy array, not %s"
                                       % type(numpy_obj).__name__)
        _as_dtype(numpy_obj.dtype, "OrtValue.ortvalue_from_numpy")
        return OrtValue(np.ascontiguousarray(numpy_obj))

    @staticmethod
    def ortvalue_from_shape_and_type(shape, element_type=np.float32, device_type="cpu", device_id=0):
        _check_cpu(device_type, device_id, "OrtValue.ortvalue_from_shape_and_type")
        dims = list(shape)
        if any(not isinstance(d, (int, np.integer)) or d < 0 for d in dims):
            raise InvalidArgumentError("OrtValue.ortvalue_from_shape_and_type: shape %r must be "
                                       "non-negative ints" % (shape,))
        return OrtValue(np.zeros(dims, _as_dtype(element_type, "OrtValue.ortvalue_from_shape_and_type")))

    def numpy(self):
        """The value as a numpy array (sharing this value's memory)."""
        return self._array

    def shape(self):
        return list(self._array.shape)

    def element_type(self):
        return _ELEMENT_TYPES[self._array.dtype]

    def data_type(self):
        return "tensor(%s)" % _TYPE_NAMES[self.element_type()]

    def is_tensor(self):
        return True

    def is_tensor_sequence(self):
        return False

    def has_value(self):
        return True

    def device_name(self):
        return "cpu"

    def data_ptr(self):
        return self._array.ctypes.data

    def update_inplace(self, np_arr):
        """Copies `np_arr` (same shape and dtype) into this value's memory."""
        arr = np.asarray(np_arr)
        if arr.shape != self._array.shape or arr.dtype != self._array.dtype:
            raise InvalidArgumentError("update_inplace: got %s %s for a value of %s %s"
                                       % (arr.dtype, list(arr.shape), self._array.dtype,
                                          list(self._array.shape)))
        np.copyto(self._array, arr)

    def __repr__(self):
        return "OrtValue(%s, shape=%s)" % (self.data_type(), self.shape())


class IOBinding(object):
    """ONNX Runtime's IOBinding on the CPU: inputs and outputs named ahead of a run
    (InferenceSession.run_with_iobinding). Bound output memory (an OrtValue, or a buffer pointer
    with its shape and type) receives the results; unbound shapes are the run's."""

    def __init__(self, session):
        self._session = session
        self._inputs = {}
        self._outputs = {}  # name -> OrtValue to write into, or None for a new one.
        self._results = []

    def _input_arg(self, name):
        arg = self._session._input_by_name.get(name)
        if arg is None:
            raise InvalidArgumentError("IOBinding: the model has no input named %r; its inputs are %s"
                                       % (name, ", ".join(self._session._input_by_name)))
        return arg

    def _output_name(self, name):
        if name not in self._session._fetches:
            raise InvalidArgumentError("IOBinding: the model has no output named %r; its outputs "
                                       "are %s" % (name, ", ".join(a.name for a in self._session._outputs)))
        return name

    def bind_cpu_input(self, name, arr_on_cpu):
        self._input_arg(name)
        self._inputs[name] = np.asarray(arr_on_cpu)

    def bind_ortvalue_input(self, name, ortvalue):
        self._input_arg(name)
        if not isinstance(ortvalue, OrtValue):
            raise InvalidArgumentError("bind_ortvalue_input(%r, ...) takes an OrtValue, not %s"
                                       % (name, type(ortvalue).__name__))
        self._inputs[name] = ortvalue.numpy()

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        self._input_arg(name)
        _check_cpu(device_type, device_id, "bind_input(%r)" % (name,))
        self._inputs[name] = _array_at(buffer_ptr, shape, _as_dtype(element_type, "bind_input(%r)" % (name,)))

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None,
                    buffer_ptr=None):
        self._output_name(name)
        _check_cpu(device_type, device_id, "bind_output(%r)" % (name,))
        if buffer_ptr is None:
            self._outputs[name] = None
            return
        if element_type is None or shape is None:
            raise InvalidArgumentError("bind_output(%r): a buffer needs its element_type and shape" % (name,))
        self._outputs[name] = OrtValue(
            _array_at(buffer_ptr, shape, _as_dtype(element_type, "bind_output(%r)" % (name,))))

    def bind_ortvalue_output(self, name, ortvalue):
        self._output_name(name)
        if not isinstance(ortvalue, OrtValue):
            raise InvalidArgumentError("bind_ortvalue_output(%r, ...) takes an OrtValue, not %s"
                                       % (name, type(ortvalue).__name__))
        self._outputs[name] = ortvalue

    def synchronize_inputs(self):
        pass

    def synchronize_outputs(self):
        pass

    def clear_binding_inputs(self):
        self._inputs = {}

    def clear_binding_outputs(self):
        self._outputs = {}
        self._results = []

    def get_outputs(self):
        """The last run's results, as OrtValues, in the order the outputs were bound."""
        return list(self._results)

    def copy_outputs_to_cpu(self):
        return [np.array(v.numpy()) for v in self._results]

    def _run(self, run_options):
        if not self._outputs:
            raise InvalidArgumentError("IOBinding: no output is bound (bind_output first)")
        names = list(self._outputs)
        arrays = self._session.run(names, self._inputs, run_options)
        results = []
        for name, arr in zip(names, arrays):
            target = self._outputs[name]
            if target is None:
                results.append(OrtValue(arr))
                continue
            if target.numpy().shape != arr.shape or target.numpy().dtype != arr.dtype:
                raise InvalidArgumentError("IOBinding: output %r is %s %s, the bound memory holds %s %s"
                                           % (name, arr.dtype, list(arr.shape), target.numpy().dtype,
                                              target.shape()))
            np.copyto(target.numpy(), arr)
            results.append(target)
        self._results = results


def _array_at(buffer_ptr, shape, dtype):
    """A numpy array over `buffer_ptr` (the caller's memory, which must outlive its use)."""
    dims = [int(d) for d in shape]
    if any(d < 0 for d in dims):
        raise InvalidArgumentError("shape %r has a negative dim" % (list(shape),))
    if not buffer_ptr:
        raise InvalidArgumentError("a null buffer pointer")
    count = int(np.prod(dims, dtype=np.int64)) if dims else 1
    nbytes = count * dtype.itemsize
    if nbytes > (1 << 46):
        raise InvalidArgumentError("shape %r is too large for one buffer" % (list(shape),))
    raw = (ctypes.c_char * max(nbytes, 1)).from_address(int(buffer_ptr))
    return np.frombuffer(raw, dtype=dtype, count=count).reshape(dims)


class ModelMetadata(object):
    """ONNX Runtime's ModelMetadata: what the ModelProto says of itself."""

    def __init__(self, producer_name="", graph_name="", domain="", description="",
                 graph_description="", version=0, custom_metadata_map=None):
        self.producer_name = producer_name
        self.graph_name = graph_name
        self.domain = domain
        self.description = description
        self.graph_description = graph_description
        self.version = version
        self.custom_metadata_map = dict(custom_metadata_map or {})


def _varint(data, pos, end):
    value, shift = 0, 0
    while True:
        if pos >= end or shift > 63:
            raise ValueError("truncated varint")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def _fields(data, pos, end):
    """(field number, wire type, value or (start, stop)) of one protobuf message's fields."""
    while pos < end:
        key, pos = _varint(data, pos, end)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos, end)
            yield number, wire, value
        elif wire == 2:
            length, pos = _varint(data, pos, end)
            if pos + length > end:
                raise ValueError("field %d runs past its message" % number)
            yield number, wire, (pos, pos + length)
            pos += length
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise ValueError("wire type %d" % wire)
        if pos > end:
            raise ValueError("field %d runs past its message" % number)


def read_model_metadata(model):
    """ModelMetadata of a ModelProto (its bytes, or a path). Raises InvalidArgumentError when
    the bytes are not a ModelProto."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return _metadata_of(bytes(model))
    with open(model, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return _metadata_of(b"")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            return _metadata_of(data)


def _metadata_of(data):
    text = lambda span: bytes(data[span[0]:span[1]]).decode("utf-8", "replace")  # noqa: E731
    meta = ModelMetadata()
    try:
        for number, wire, value in _fields(data, 0, len(data)):
            if wire == 2 and number == 2:
                meta.producer_name = text(value)
            elif wire == 2 and number == 4:
                meta.domain = text(value)
            elif wire == 0 and number == 5:
                meta.version = value - (1 << 64) if value >= 1 << 63 else value
            elif wire == 2 and number == 6:
                meta.description = text(value)
            elif wire == 2 and number == 7:
                for g_number, g_wire, g_value in _fields(data, value[0], value[1]):
                    if g_wire == 2 and g_number == 2:
                        meta.graph_name = text(g_value)
                    elif g_wire == 2 and g_number == 10:
                        meta.graph_description = text(g_value)
            elif wire == 2 and number == 14:
                key = val = ""
                for e_number, e_wire, e_value in _fields(data, value[0], value[1]):
                    if e_wire == 2 and e_number == 1:
                        key = text(e_value)
                    elif e_wire == 2 and e_number == 2:
                        val = text(e_value)
                meta.custom_metadata_map[key] = val
    except ValueError as e:
        raise InvalidArgumentError("the model is not a valid ModelProto: %s" % e)
    return meta


def step_events(run_metadata, start_ns, pid):
    """Chrome-trace events, as ONNX Runtime's profiler writes them ("cat": "Node", name
    "<node>_kernel_time", "ts" and "dur" in microseconds from `start_ns`), of every node a
    serialized RunMetadata's step stats timed."""
    events = []
    try:
        for number, wire, span in _fields(run_metadata, 0, len(run_metadata)):
            if number != 1 or wire != 2:
                continue
            for d_number, d_wire, d_span in _fields(run_metadata, span[0], span[1]):
                if d_number != 1 or d_wire != 2:
                    continue
                device = ""
                nodes = []
                for n_number, n_wire, n_span in _fields(run_metadata, d_span[0], d_span[1]):
                    if n_number == 1 and n_wire == 2:
                        device = bytes(run_metadata[n_span[0]:n_span[1]]).decode("utf-8", "replace")
                    elif n_number == 2 and n_wire == 2:
                        nodes.append(n_span)
                for n_span in nodes:
                    stats = {"name": "", "label": "", "tid": 0, "start": 0, "dur": 0}
                    for f_number, f_wire, value in _fields(run_metadata, n_span[0], n_span[1]):
                        if f_wire == 2 and f_number in (1, 8):
                            stats["name" if f_number == 1 else "label"] = bytes(
                                run_metadata[value[0]:value[1]]).decode("utf-8", "replace")
                        elif f_wire == 0 and f_number == 10:
                            stats["tid"] = value
                        elif f_wire == 0 and f_number == 13:
                            stats["start"] = value
                        elif f_wire == 0 and f_number == 16:
                            stats["dur"] = value
                    events.append({
                        "cat": "Node", "pid": pid, "tid": stats["tid"] & 0x7FFFFFFF,
                        "dur": max(stats["dur"] // 1000, 0), "ts": (stats["start"] - start_ns) // 1000,
                        "ph": "X", "name": stats["name"] + "_kernel_time",
                        "args": {"op_name": stats["label"], "node_name": stats["name"],
                                 "provider": CPU_PROVIDER, "device": device}})
    except ValueError as e:
        raise InvalidArgumentError("the runtime's step stats did not parse: %s" % e)
    return events


def get_available_providers():
    return [CPU_PROVIDER]


def get_all_providers():
    return [CPU_PROVIDER]


def get_device():
    return "CPU"


def set_default_logger_severity(level):
    global _default_log_severity
    if not isinstance(level, int) or not 0 <= level <= 4:
        raise InvalidArgumentError("logger severity must be 0-4, not %r" % (level,))
    _default_log_severity = level


def _cpu_providers(providers, provider_options):
    """The providers this session takes: the CPU's; others are dropped with ORT's warning."""
    if providers is None:
        return [CPU_PROVIDER], [{}]
    names, options = [], []
    for i, p in enumerate(providers):
        name, opts = (p if isinstance(p, tuple) else (p, None))
        if provider_options is not None and i < len(provider_options):
            opts = provider_options[i]
        if not isinstance(name, str):
            raise InvalidArgumentError("a provider is a name or a (name, options) pair, not %r" % (p,))
        if name == CPU_PROVIDER:
            names.append(name)
            options.append(dict(opts or {}))
        else:
            warnings.warn("Specified provider '%s' is not in available provider names. Available "
                          "providers: '%s'" % (name, CPU_PROVIDER), RuntimeWarning, stacklevel=3)
    if not names:
        names, options = [CPU_PROVIDER], [{}]
    return names, options
