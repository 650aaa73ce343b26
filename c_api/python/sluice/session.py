"""Sessions that run a Graph, in process or on a cluster ("grpc://host:port")."""

import collections
import contextlib
import ctypes

import numpy as np

from ._lib import COutput, Status, call, lib
from ._tensors import array_from_tensor, as_array, tensor_from_array
from .config import encode_config
from .errors import FailedPreconditionError
from .graph import Graph, Operation, Output


@contextlib.contextmanager
def session_options(target, config):
    """A TF_SessionOptions for `target` and `config` (a dict of ConfigProto fields, see
    encode_config, or serialized ConfigProto bytes), deleted on leaving the block."""
    c_lib = lib()
    opts = c_lib.TF_NewSessionOptions()
    try:
        c_lib.TF_SetTarget(opts, (target or "").encode())
        if config is not None:
            data = encode_config(config) if isinstance(config, dict) else bytes(config)
            call("TF_SetConfig", opts, data, len(data))
        yield opts
    finally:
        c_lib.TF_DeleteSessionOptions(opts)


Device = collections.namedtuple("Device", ["name", "device_type", "memory_limit", "incarnation"])


class Session(object):
    """Runs a Graph. `target`: "" for in-process; `config`: a dict of ConfigProto fields (see
    encode_config) or serialized ConfigProto bytes. Usable as a context manager."""

    def __init__(self, graph, target="", config=None):
        if not isinstance(graph, Graph):
            raise TypeError("Session needs a sluice.Graph, not %s" % type(graph).__name__)
        self._lib = lib()
        self.graph = graph
        self._ptr = None
        with session_options(target, config) as opts:
            self._ptr = call("TF_NewSession", graph._ptr, opts)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        if getattr(self, "_ptr", None):
            with Status() as status:
                self._lib.TF_DeleteSession(self._ptr, status.ptr)
            self._ptr = None

    def close(self):
        """Releases the session's resources; later runs raise FailedPreconditionError."""
        if self._ptr:
            call("TF_CloseSession", self._ptr)

    def list_devices(self):
        lst = call("TF_SessionListDevices", self._ptr)
        try:
            devices = []
            for i in range(self._lib.TF_DeviceListCount(lst)):
                devices.append(Device(call("TF_DeviceListName", lst, i).decode(),
                                      call("TF_DeviceListType", lst, i).decode(),
                                      call("TF_DeviceListMemoryBytes", lst, i),
                                      call("TF_DeviceListIncarnation", lst, i)))
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

    def run(self, fetches, feed_dict=None, targets=None, options=None, run_metadata=None,
            cancellation=None):
        """Computes `fetches` (an Output, a "name:k" string, an Operation to run for its effect,
        or a list of those) after feeding `feed_dict` ({Output or name: value}). Returns numpy
        arrays in the shape of `fetches` (None for Operations). `options`: a serialized
        RunOptions (bytes); `run_metadata`: a bytearray that receives the serialized
        RunMetadata (step stats when options ask for a trace); `cancellation`: an
        SL_RunCancellation pointer another thread may cancel (SL_CancelRun) to stop the run."""
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
                arr = as_array(value, None if numpy_value else out.dtype)
                tensors.append(tensor_from_array(arr))
                feeds.append(out)
            n_in, n_out, n_tg = len(feeds), len(outputs), len(target_ops)
            c_in = (COutput * max(n_in, 1))(*[o._c() for o in feeds])
            c_vals = (ctypes.c_void_p * max(n_in, 1))(*tensors)
            c_out = (COutput * max(n_out, 1))(*[o._c() for o in outputs])
            c_res = (ctypes.c_void_p * max(n_out, 1))()
            c_tg = (ctypes.c_void_p * max(n_tg, 1))(*[t._ptr for t in target_ops])
            c_options = (self._lib.TF_NewBufferFromString(options, len(options))
                         if options else None)
            c_metadata = self._lib.TF_NewBuffer() if run_metadata is not None else None
            try:
                if cancellation is None:
                    call("TF_SessionRun", self._ptr, c_options, c_in, c_vals, n_in, c_out, c_res,
                         n_out, c_tg, n_tg, c_metadata)
                else:
                    call("SL_SessionRunCancellable", self._ptr, c_options, c_in, c_vals, n_in,
                         c_out, c_res, n_out, c_tg, n_tg, c_metadata, cancellation)
                if c_metadata:
                    b = c_metadata.contents
                    run_metadata[:] = ctypes.string_at(b.data, b.length) if b.length else b""
            finally:
                for buf in (c_options, c_metadata):
                    if buf:
                        self._lib.TF_DeleteBuffer(buf)
        finally:
            for t in tensors:
                self._lib.TF_DeleteTensor(t)
        arrays = [array_from_tensor(c_res[i]) for i in range(len(outputs))]
        results = [None if p is None else arrays[p] for p in positions]
        return results[0] if single else results
