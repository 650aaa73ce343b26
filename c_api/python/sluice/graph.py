"""Graphs built op by op or imported (GraphDefs, ONNX models), and their operations and
outputs."""

import collections
import ctypes
import os
import threading

import numpy as np

from ._lib import COutput, Status, call, lib
from ._tensors import TF_TO_DTYPE, as_array, c_dims, is_dtype, tensor_from_array, tf_type


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
        return lib().TF_OperationName(self._ptr).decode()

    @property
    def type(self):
        return lib().TF_OperationOpType(self._ptr).decode()

    @property
    def device(self):
        return lib().TF_OperationDevice(self._ptr).decode()

    @property
    def num_inputs(self):
        return lib().TF_OperationNumInputs(self._ptr)

    @property
    def num_outputs(self):
        return lib().TF_OperationNumOutputs(self._ptr)

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
        return COutput(self.op._ptr, self.index)

    @property
    def dtype(self):
        """The numpy dtype; None if the index is out of range."""
        t = lib().TF_OperationOutputType(self._c())
        return TF_TO_DTYPE.get(t)

    @property
    def shape(self):
        """The inferred shape: a tuple with None for unknown dims, or None for unknown rank."""
        graph = self.op.graph._ptr
        rank = call("TF_GraphGetTensorNumDims", graph, self._c())
        if rank < 0:
            return None
        dims = c_dims([0] * rank)
        call("TF_GraphGetTensorShape", graph, self._c(), dims, rank)
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
        self._lib = lib()
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
        return self._import_onnx_with_info(model, prefix)[0]

    def _import_onnx_with_info(self, model, prefix=""):
        """import_onnx's OnnxModel, and what the model declares for its values: ([(NodeArg,
        has_default) per input], [(NodeArg, False) per output]) (see inference.py)."""
        from .inference import _read_args  # inference imports this module.
        if isinstance(model, (bytes, bytearray, memoryview)):
            data = bytes(model)
            ptr = call("SL_GraphImportONNX", self._ptr, None, data, len(data), prefix.encode())
        else:
            ptr = call("SL_GraphImportONNX", self._ptr, os.fspath(model).encode(), None, 0,
                        prefix.encode())
        try:
            def values(count, name_fn, output_fn):
                out = collections.OrderedDict()
                for i in range(count(ptr)):
                    c = output_fn(ptr, i)
                    out[name_fn(ptr, i).decode()] = Output(Operation(self, c.oper), c.index)
                return out
            c_lib = self._lib
            imported = OnnxModel(
                values(c_lib.SL_ONNXImportNumInputs, c_lib.SL_ONNXImportInputName,
                       c_lib.SL_ONNXImportInput),
                values(c_lib.SL_ONNXImportNumOutputs, c_lib.SL_ONNXImportOutputName,
                       c_lib.SL_ONNXImportOutput))
            info = (_read_args(c_lib, ptr, 0, c_lib.SL_ONNXImportNumInputs(ptr)),
                    _read_args(c_lib, ptr, 1, c_lib.SL_ONNXImportNumOutputs(ptr)))
            return imported, info
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
        arr = as_array(value, dtype)
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
                    arr = (COutput * max(len(item), 1))(*[o._c() for o in item])
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
            with Status() as status:
                self._lib.TF_FinishOperation(desc, status.ptr)
            raise
        ptr = call("TF_FinishOperation", desc)
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
        c_lib = self._lib
        key = name.encode()
        if isinstance(value, Shape):
            if value.dims is None:
                c_lib.TF_SetAttrShape(desc, key, None, -1)
            else:
                dims = [-1 if d is None else int(d) for d in value.dims]
                c_lib.TF_SetAttrShape(desc, key, c_dims(dims), len(dims))
        elif isinstance(value, np.ndarray):
            tensor = tensor_from_array(value)
            try:
                call("TF_SetAttrTensor", desc, key, tensor)
            finally:
                c_lib.TF_DeleteTensor(tensor)
        elif is_dtype(value):
            c_lib.TF_SetAttrType(desc, key, tf_type(value))
        elif isinstance(value, (bytes, str)):
            b = value.encode() if isinstance(value, str) else value
            c_lib.TF_SetAttrString(desc, key, b, len(b))
        elif isinstance(value, (bool, np.bool_)):
            c_lib.TF_SetAttrBool(desc, key, 1 if value else 0)
        elif isinstance(value, (int, np.integer)):
            c_lib.TF_SetAttrInt(desc, key, int(value))
        elif isinstance(value, (float, np.floating)):
            c_lib.TF_SetAttrFloat(desc, key, float(value))
        elif isinstance(value, (list, tuple)):
            self._set_list_attr(desc, key, list(value))
        else:
            raise TypeError("attr %r: cannot use a value of type %s" % (name, type(value).__name__))

    def _set_list_attr(self, desc, key, values):
        c_lib = self._lib
        n = len(values)
        if all(is_dtype(v) for v in values) and n:
            c_lib.TF_SetAttrTypeList(desc, key, (ctypes.c_int * n)(*map(tf_type, values)), n)
        elif all(isinstance(v, (bool, np.bool_)) for v in values) and n:
            c_lib.TF_SetAttrBoolList(desc, key, (ctypes.c_ubyte * n)(*map(int, values)), n)
        elif all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
            c_lib.TF_SetAttrIntList(desc, key, (ctypes.c_int64 * max(n, 1))(*map(int, values)), n)
        elif all(isinstance(v, (int, float, np.integer, np.floating)) for v in values):
            c_lib.TF_SetAttrFloatList(desc, key, (ctypes.c_float * n)(*map(float, values)), n)
        elif all(isinstance(v, (str, bytes)) for v in values):
            bs = [v.encode() if isinstance(v, str) else v for v in values]
            ptrs = (ctypes.c_void_p * n)(*[ctypes.cast(ctypes.c_char_p(b), ctypes.c_void_p)
                                           for b in bs])
            lens = (ctypes.c_size_t * n)(*map(len, bs))
            c_lib.TF_SetAttrStringList(desc, key, ptrs, lens, n)
        else:
            raise TypeError("attr %r: unsupported list %r" % (key.decode(), values))

    # -- serialization --

    def as_graph_def(self):
        """The graph as serialized GraphDef bytes."""
        buf = self._lib.TF_NewBuffer()
        try:
            call("TF_GraphToGraphDef", self._ptr, buf)
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
            call("TF_GraphImportGraphDef", self._ptr, buf, opts)
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
