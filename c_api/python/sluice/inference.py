"""ONNX Runtime's API shape over Sluice: InferenceSession, NodeArg.

    import numpy as np, sluice
    sess = sluice.InferenceSession("model.onnx", threads=2)
    x = sess.get_inputs()[0]                      # NodeArg(name='x', shape=['N', 2], ...)
    y, = sess.run(None, {x.name: np.ones((3, 2), np.float32)})

A model runs in process by default, or on a cluster with target="grpc://host:port" (see
`sluice serve`). run() may be called from several threads at once on one session: the C
library is called through ctypes, which releases the GIL for the length of each call.
"""

import collections
import datetime
import json
import os
import threading
import time

import numpy as np

from . import ort_api
from ._lib import call
from .errors import CancelledError, InvalidArgumentError
from .graph import Graph
from .ort_api import IOBinding, OrtValue, SessionOptions
from .config import encode_config
from .session import Session

__all__ = ["InferenceSession", "NodeArg"]

# RunOptions {trace_level: FULL_TRACE}, serialized: step stats for every node.
_FULL_TRACE = b"\x08\x03"

# ONNX's element type names (NodeArg.type is "tensor(<name>)") and the numpy dtype of each.
_ONNX_TYPES = {
    "float": np.float32, "double": np.float64, "float16": np.float16, "int8": np.int8,
    "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
    "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "bool": np.bool_,
    "complex64": np.complex64, "complex128": np.complex128,
}


class NodeArg(collections.namedtuple("NodeArg", ["name", "shape", "type"])):
    """A model input or output as ONNX Runtime describes it: `name`; `shape`, a list with an
    int for each known dim, the dim's symbolic name (a str) where the model gives one, and None
    where neither is known (None for the whole shape when the rank is unknown); `type`, ONNX's
    spelling ("tensor(float)", "seq(tensor(int64))")."""
    __slots__ = ()

    @property
    def dtype(self):
        """The numpy dtype of a tensor value; None for sequences, optionals and maps."""
        if self.type.startswith("tensor(") and self.type[7:-1] in _ONNX_TYPES:
            return np.dtype(_ONNX_TYPES[self.type[7:-1]])
        return None


def _read_args(c_lib, handle, is_output, count):
    args = []
    for i in range(count):
        name_fn = c_lib.SL_ONNXImportOutputName if is_output else c_lib.SL_ONNXImportInputName
        rank = c_lib.SL_ONNXImportValueNumDims(handle, is_output, i)
        shape = None
        if rank >= 0:
            shape = []
            for d in range(rank):
                dim = c_lib.SL_ONNXImportValueDim(handle, is_output, i, d)
                label = c_lib.SL_ONNXImportValueDimName(handle, is_output, i, d).decode()
                shape.append(int(dim) if dim >= 0 else (label or None))
        args.append((NodeArg(name_fn(handle, i).decode(), shape,
                             c_lib.SL_ONNXImportValueTypeString(handle, is_output, i).decode()),
                     bool(c_lib.SL_ONNXImportValueHasDefault(handle, is_output, i))))
    return args


class InferenceSession(object):
    """Runs an ONNX model as onnxruntime.InferenceSession does.

    `path_or_bytes`: the model's path, or its serialized ModelProto (a model whose tensors are
    in external files must be given by path). `threads`: intra-op threads (default: the
    runtime's choice); nodes run one after another, as ONNX Runtime's sequential executor.
    `target`: "" for in-process, or "grpc://host:port" for a cluster. `config`: more
    ConfigProto fields as a dict (see sluice.encode_config), e.g. {"operation_timeout_in_ms":
    2000}. `sess_options`: ONNX Runtime's SessionOptions (threads, execution mode,
    optimization level, initializers, custom op libraries; see sluice.SessionOptions).
    `providers`: ONNX Runtime's list; CPUExecutionProvider is the one this session has, others
    are dropped with a warning. Other ONNX Runtime keyword arguments are accepted and ignored.
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None,
                 threads=None, target="", config=None, **kwargs):
        del kwargs  # ONNX Runtime's other arguments; no meaning here.
        self._profile_start_ns = time.time_ns()
        if sess_options is not None and not isinstance(sess_options, SessionOptions):
            raise TypeError("sess_options must be a sluice.SessionOptions, not %s"
                            % type(sess_options).__name__)
        self._options = sess_options if sess_options is not None else SessionOptions()
        self._providers, self._provider_options = ort_api._cpu_providers(providers, provider_options)
        self._model_bytes = None
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            model = bytes(path_or_bytes)
            self._model_bytes = model
            self._model_path = None
        elif isinstance(path_or_bytes, (str, os.PathLike)):
            model = os.fspath(path_or_bytes)
            self._model_path = model
        else:
            raise TypeError("InferenceSession needs a model path or the model's bytes, not %s"
                            % type(path_or_bytes).__name__)
        if isinstance(model, str) and not os.path.exists(model):
            raise ort_api.NotFoundError("Load model from %s failed: no such file" % model)
        for library in self._options._custom_libraries:
            call("TF_LoadLibrary", library.encode())
        cfg = self._options._config()
        cfg.update(config or {})
        if threads is not None:
            if not isinstance(threads, int) or threads < 1:
                raise ValueError("threads must be a positive int, not %r" % (threads,))
            cfg["intra_op_parallelism_threads"] = threads
        self._graph = Graph()
        imported, info = self._graph._import_onnx_with_info(model)
        self._feeds = imported.inputs    # name -> Output
        self._fetches = imported.outputs  # name -> Output
        self._inputs = [arg for arg, has_default in info[0] if not has_default]
        self._initializers = [arg for arg, has_default in info[0] if has_default]
        self._outputs = [arg for arg, _ in info[1]]
        self._input_by_name = {arg.name: arg for arg, _ in info[0]}
        for name in self._options._initializers:
            if name not in self._input_by_name:
                raise InvalidArgumentError("add_initializer: the model has no initializer or input "
                                           "named %r" % (name,))
        if self._options.optimized_model_filepath:
            # ONNX Runtime writes the optimized model while the session is created.
            config_bytes = encode_config(cfg) if cfg else None
            out = os.fspath(self._options.optimized_model_filepath).encode()
            if self._model_path is not None:
                call("SL_ONNXWriteOptimizedModel", self._model_path.encode(), None, 0,
                     config_bytes, len(config_bytes or b""), out)
            else:
                call("SL_ONNXWriteOptimizedModel", None, model, len(model),
                     config_bytes, len(config_bytes or b""), out)
        self._session = Session(self._graph, target=target, config=cfg or None)
        self._lock = threading.Lock()
        # ONNX Runtime's profiler: a Chrome trace of the session's start and of every node of
        # every run, written by end_profiling.
        self._profiling = bool(self._options.enable_profiling)
        self._profile_events = []
        self._profile_file = ""
        if self._profiling:
            self._profile_file = "%s_%s.json" % (self._options.profile_file_prefix,
                                                 datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S"))
            self._profile_events.append(self._session_event("session_initialization", self._profile_start_ns,
                                                            time.time_ns()))

    # -- ONNX Runtime's metadata --

    def get_inputs(self):
        """The inputs a run must feed (inputs backed by an initializer are in
        get_overridable_initializers)."""
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        """Inputs with an initializer: feeding them is optional."""
        return list(self._initializers)

    def get_providers(self):
        return list(self._providers)

    def get_provider_options(self):
        return {name: dict(opts) for name, opts in zip(self._providers, self._provider_options)}

    def set_providers(self, providers=None, provider_options=None):
        self._providers, self._provider_options = ort_api._cpu_providers(providers, provider_options)

    def disable_fallback(self):
        pass

    def enable_fallback(self):
        pass

    def get_session_options(self):
        return self._options

    def get_modelmeta(self):
        """ONNX Runtime's ModelMetadata: producer, graph name, domain, description, version and
        the model's metadata_props as custom_metadata_map."""
        return ort_api.read_model_metadata(self._model_bytes if self._model_bytes is not None
                                           else self._model_path)

    @property
    def model_path(self):
        return self._model_path

    # -- running --

    def _check_feed(self, name, value):
        arg = self._input_by_name.get(name)
        if arg is None:
            raise InvalidArgumentError(
                "no input named %r; the model's inputs are %s"
                % (name, ", ".join(a.name for a in self._inputs + self._initializers)))
        want = arg.dtype
        if want is None:
            raise InvalidArgumentError("input %r is %s; only tensor inputs can be fed from "
                                       "Python" % (name, arg.type))
        if isinstance(value, (np.ndarray, np.generic)):
            arr = np.asarray(value)
            if arr.dtype != want:
                raise InvalidArgumentError("input %r expects %s (%s), got an array of %s"
                                           % (name, arg.type, want, arr.dtype))
        else:  # A Python number or nested list takes the input's type, as numpy would make it.
            try:
                arr = np.asarray(value, dtype=want)
            except (TypeError, ValueError) as e:
                raise InvalidArgumentError("input %r: cannot make %s of %r: %s"
                                           % (name, arg.type, value, e))
        if arg.shape is not None:
            if arr.ndim != len(arg.shape) or any(
                    isinstance(d, int) and d != n for d, n in zip(arg.shape, arr.shape)):
                raise InvalidArgumentError(
                    "input %r expects shape %s, got %s"
                    % (name, "[" + ", ".join("?" if d is None else str(d) for d in arg.shape)
                       + "]", list(arr.shape)))
        return arr

    def run(self, output_names, input_feed, run_options=None):
        """Computes `output_names` (a list of output names; None or [] for every output) from
        `input_feed` ({input name: array}). Returns a list of numpy arrays in that order.
        Raises sluice.InvalidArgumentError (a SluiceError) for an unknown name, a missing
        input, or an array of the wrong dtype or shape, naming the input."""
        if run_options is not None and not isinstance(run_options, ort_api.RunOptions):
            raise TypeError("run_options must be a sluice.RunOptions, not %s" % type(run_options).__name__)
        names = list(output_names) if output_names else [a.name for a in self._outputs]
        fetches = []
        for n in names:
            if n not in self._fetches:
                raise InvalidArgumentError("no output named %r; the model's outputs are %s"
                                           % (n, ", ".join(a.name for a in self._outputs)))
            fetches.append(self._fetches[n])
        if not isinstance(input_feed, dict):
            raise TypeError("input_feed must be a dict of {input name: array}")
        feed_dict = {}
        for name, value in self._options._initializers.items():
            if name not in input_feed:
                feed_dict[self._feeds[name]] = self._check_feed(name, value.numpy())
        for name, value in input_feed.items():
            if isinstance(value, OrtValue):  # ONNX Runtime's run() takes OrtValues too.
                value = value.numpy()
            arr = self._check_feed(name, value)
            feed_dict[self._feeds[name]] = arr
        missing = [a.name for a in self._inputs if a.name not in input_feed]
        if missing:
            raise InvalidArgumentError("missing input%s: %s (feed every input of get_inputs())"
                                       % ("s" if len(missing) > 1 else "", ", ".join(missing)))
        cancellation = None
        if run_options is not None:
            cancellation = run_options._begin_run()
            if cancellation is None:
                raise CancelledError(ort_api.TERMINATED)
        try:
            return self._run_fetches(fetches, feed_dict, run_options, cancellation)
        finally:
            if cancellation is not None:
                run_options._end_run(cancellation)

    def _run_fetches(self, fetches, feed_dict, run_options, cancellation):
        # Copies: the arrays Session.run returns are read-only views of the runtime's tensors,
        # and ONNX Runtime's callers expect arrays they own.
        if not self._profiling:
            return [np.array(r) for r in self._session.run(fetches, feed_dict, cancellation=cancellation)]
        metadata = bytearray()
        start = time.time_ns()
        results = [np.array(r) for r in self._session.run(fetches, feed_dict, options=_FULL_TRACE,
                                                          run_metadata=metadata,
                                                          cancellation=cancellation)]
        event = self._session_event("model_run", start, time.time_ns())
        if run_options is not None and getattr(run_options, "run_tag", ""):
            event["args"]["run_tag"] = run_options.run_tag
        events = ort_api.step_events(metadata, self._profile_start_ns, os.getpid())
        with self._lock:
            self._profile_events.append(event)
            self._profile_events.extend(events)
        return results

    def _session_event(self, name, start_ns, end_ns):
        return {"cat": "Session", "pid": os.getpid(), "tid": threading.get_ident() & 0x7FFFFFFF,
                "dur": (end_ns - start_ns) // 1000, "ts": (start_ns - self._profile_start_ns) // 1000,
                "ph": "X", "name": name, "args": {}}

    def end_profiling(self):
        """Ends profiling and writes its Chrome trace (Perfetto and chrome://tracing open it):
        returns the file's name, or "" when the session's options did not enable profiling."""
        with self._lock:
            if not self._profiling:
                return ""
            self._profiling = False
            events, self._profile_events = self._profile_events, []
        with open(self._profile_file, "w") as f:
            json.dump(events, f)
        return self._profile_file

    def get_profiling_start_time_ns(self):
        return self._profile_start_ns

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        """run() with OrtValues in and out: {input name: OrtValue} -> [OrtValue]."""
        if not isinstance(input_dict_ort_values, dict):
            raise TypeError("input_dict_ort_values must be a dict of {input name: OrtValue}")
        feeds = {}
        for name, value in input_dict_ort_values.items():
            if not isinstance(value, OrtValue):
                raise InvalidArgumentError("input %r: run_with_ort_values takes OrtValues, not %s"
                                           % (name, type(value).__name__))
            feeds[name] = value.numpy()
        return [OrtValue(a) for a in self.run(output_names, feeds, run_options)]

    def io_binding(self):
        """An IOBinding for run_with_iobinding."""
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        if not isinstance(iobinding, IOBinding) or iobinding._session is not self:
            raise InvalidArgumentError("run_with_iobinding takes an IOBinding of this session")
        iobinding._run(run_options)

    def close(self):
        self._session.close()

