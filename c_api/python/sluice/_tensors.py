"""numpy arrays in and out of TF_Tensors, and the dtypes that can cross the C API."""

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
TF_TO_DTYPE = {v: k for k, v in DTYPE_TO_TF.items()}


def tf_type(dtype):
    """The TF_DataType number of a numpy dtype."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError("not a numpy dtype: %r" % (dtype,))
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


def tensor_from_array(arr):
    """A new TF_Tensor holding a copy of the array; the caller deletes it.

    A copy, not a view: the runtime may drop its last reference to a fed tensor on one of its
    own threads after the run returns, and a Python deallocator called from there while the
    interpreter shuts down aborts the process."""
    type_number = tf_type(arr.dtype)
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
    """A read-only numpy view of a TF_Tensor, which it takes ownership of."""
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
    dtype, shape, nbytes, data = _layout(ptr)
    raw = ctypes.string_at(data, nbytes) if nbytes else b""
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
