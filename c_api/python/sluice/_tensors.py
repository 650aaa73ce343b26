"""numpy arrays in and out of TF_Tensors, and the dtypes that can cross the C API.

Strings (TF_STRING) are numpy arrays of dtype object holding bytes: fed from object arrays of
bytes or str (str is encoded as UTF-8), np.bytes_ ("S") or np.str_ ("U") arrays, and fetched
as object arrays of bytes. A TF_STRING tensor's data is one 24-byte TF_TString per element,
filled and read through the library's exported TF_String* functions."""

import ctypes

import numpy as np

from . import errors
from ._lib import lib

DTYPE_TO_TF = {
    np.dtype(np.float32): 1, np.dtype(np.float64): 2, np.dtype(np.int32): 3,
    np.dtype(np.uint8): 4, np.dtype(np.int16): 5, np.dtype(np.int8): 6,
    np.dtype(np.complex64): 8, np.dtype(np.int64): 9, np.dtype(np.bool_): 10,
    np.dtype(np.uint16): 17, np.dtype(np.complex128): 18, np.dtype(np.float16): 19,
    np.dtype(np.uint32): 22, np.dtype(np.uint64): 23,
}
TF_STRING = 7
DTYPE_TO_TF[np.dtype(object)] = TF_STRING
TF_TO_DTYPE = {v: k for k, v in DTYPE_TO_TF.items()}
_TSTRING_SIZE = 24  # sizeof(TF_TString)


def tf_type(dtype):
    """The TF_DataType number of a numpy dtype."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError("not a numpy dtype: %r" % (dtype,))
    if dt.kind in "OSU":  # object, bytes_ and str_ arrays all become strings
        return TF_STRING
    dt = dt.newbyteorder("=")
    if dt not in DTYPE_TO_TF:
        raise TypeError("dtype %s is not supported by Sluice's C API" % dt)
    return DTYPE_TO_TF[dt]


def np_dtype(tf_type_number):
    if tf_type_number not in TF_TO_DTYPE:
        raise errors.UnimplementedError("tensor type %d has no numpy equivalent"
                                        % tf_type_number)
    return TF_TO_DTYPE[tf_type_number]


def is_dtype(value):
    return isinstance(value, np.dtype) or (isinstance(value, type)
                                           and issubclass(value, np.generic))


def as_array(value, dtype=None):
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


def c_dims(shape):
    """An int64_t array of the dims (never of length 0, which ctypes cannot make)."""
    return (ctypes.c_int64 * max(len(shape), 1))(*shape)


def _as_bytes(value):
    if isinstance(value, bytes):  # np.bytes_ too
        return bytes(value)
    if isinstance(value, str):  # np.str_ too
        return value.encode("utf-8")
    raise TypeError("a string tensor's elements must be bytes or str, not %s"
                    % type(value).__name__)


def _string_tensor_from_array(arr):
    """A new TF_STRING tensor with a copy of each element's bytes; the caller deletes it."""
    items = [_as_bytes(v) for v in arr.ravel(order="C")]
    handle = lib()
    ptr = handle.TF_AllocateTensor(TF_STRING, c_dims(arr.shape), arr.ndim,
                                   len(items) * _TSTRING_SIZE)
    if not ptr:
        raise errors.InvalidArgumentError("cannot make a string tensor of shape %s" % (arr.shape,))
    base = handle.TF_TensorData(ptr)
    for i, b in enumerate(items):
        handle.TF_StringCopy(base + i * _TSTRING_SIZE, b, len(b))
    return ptr


def _strings_of_tensor(ptr):
    """An object array of the bytes of a TF_STRING tensor's elements (copies)."""
    handle = lib()
    shape = tuple(handle.TF_Dim(ptr, i) for i in range(handle.TF_NumDims(ptr)))
    n = handle.TF_TensorElementCount(ptr)
    base = handle.TF_TensorData(ptr)
    out = np.empty(n, dtype=object)
    for i in range(n):
        elem = base + i * _TSTRING_SIZE
        size = handle.TF_StringGetSize(elem)
        out[i] = ctypes.string_at(handle.TF_StringGetDataPointer(elem), size) if size else b""
    return out.reshape(shape)


def tensor_from_array(arr):
    """A new TF_Tensor holding a copy of the array; the caller deletes it.

    A copy, not a view: the runtime may drop its last reference to a fed tensor on one of its
    own threads after the run returns, and a Python deallocator called from there while the
    interpreter shuts down aborts the process."""
    type_number = tf_type(arr.dtype)
    if type_number == TF_STRING:
        return _string_tensor_from_array(arr)
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if not arr.flags.c_contiguous:
        arr = arr.copy(order="C")  # (np.ascontiguousarray would turn a 0-d array into 1-d.)
    ptr = lib().TF_AllocateTensor(type_number, c_dims(arr.shape), arr.ndim, arr.nbytes)
    if not ptr:
        raise errors.InvalidArgumentError("cannot make a tensor of %s %s" % (arr.dtype, arr.shape))
    if arr.nbytes:
        ctypes.memmove(lib().TF_TensorData(ptr), arr.ctypes.data, arr.nbytes)
    return ptr


def _layout(ptr):
    """(dtype, shape, nbytes, data address) of a TF_Tensor."""
    handle = lib()
    dtype = np_dtype(handle.TF_TensorType(ptr))
    shape = tuple(handle.TF_Dim(ptr, i) for i in range(handle.TF_NumDims(ptr)))
    return dtype, shape, handle.TF_TensorByteSize(ptr), handle.TF_TensorData(ptr)


class _TensorOwner(object):
    """Deletes a TF_Tensor once no numpy array views its memory."""

    def __init__(self, ptr):
        self._lib = lib()
        self.ptr = ptr

    def __del__(self):
        if self.ptr:
            self._lib.TF_DeleteTensor(self.ptr)
            self.ptr = None


def array_from_tensor(ptr):
    """A read-only numpy view of a TF_Tensor, which it takes ownership of (strings: an object
    array of bytes, copied, and the tensor deleted)."""
    if lib().TF_TensorType(ptr) == TF_STRING:
        try:
            return _strings_of_tensor(ptr)
        finally:
            lib().TF_DeleteTensor(ptr)
    owner = _TensorOwner(ptr)
    dtype, shape, nbytes, data = _layout(ptr)
    if nbytes == 0 or not data:
        return np.zeros(shape, dtype=dtype)
    raw = (ctypes.c_char * nbytes).from_address(data)
    raw._owner = owner  # The view keeps `raw` alive, `raw` keeps the tensor alive.
    arr = np.frombuffer(raw, dtype=dtype).reshape(shape)
    arr.flags.writeable = False
    return arr


def array_copy_of_tensor(ptr):
    """A writable numpy copy of a TF_Tensor that stays owned by someone else."""
    if lib().TF_TensorType(ptr) == TF_STRING:
        return _strings_of_tensor(ptr)
    dtype, shape, nbytes, data = _layout(ptr)
    raw = ctypes.string_at(data, nbytes) if nbytes else b""
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
