"""libsluice_c.so: finding and loading it, the ctypes signatures of the functions the package
calls, and calling those that report through a TF_Status.

The library is found through $SLUICE_C_LIBRARY, else next to this package, else in a
bazel-bin/c_api/ above it, and loaded on first use.
"""

import ctypes
import os
import threading

from . import errors


class COutput(ctypes.Structure):
    """TF_Output."""
    _fields_ = [("oper", ctypes.c_void_p), ("index", ctypes.c_int)]


class CBuffer(ctypes.Structure):
    """TF_Buffer."""
    _fields_ = [("data", ctypes.c_void_p), ("length", ctypes.c_size_t),
                ("data_deallocator", ctypes.c_void_p)]


DEALLOCATOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)

_vp, _int, _i64, _sz, _cp = (ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_size_t,
                             ctypes.c_char_p)
_SIGNATURES = {
    # name: (restype, argtypes)
    "TF_Version": (_cp, []),
    "TF_NewStatus": (_vp, []),
    "TF_DeleteStatus": (None, [_vp]),
    "TF_GetCode": (_int, [_vp]),
    "TF_Message": (_cp, [_vp]),
    "TF_NewBuffer": (ctypes.POINTER(CBuffer), []),
    "TF_NewBufferFromString": (ctypes.POINTER(CBuffer), [_vp, _sz]),
    "TF_DeleteBuffer": (None, [ctypes.POINTER(CBuffer)]),
    "TF_NewTensor": (_vp, [_int, ctypes.POINTER(_i64), _int, _vp, _sz, DEALLOCATOR, _vp]),
    "TF_AllocateTensor": (_vp, [_int, ctypes.POINTER(_i64), _int, _sz]),
    "TF_DeleteTensor": (None, [_vp]),
    "TF_TensorType": (_int, [_vp]),
    "TF_NumDims": (_int, [_vp]),
    "TF_Dim": (_i64, [_vp, _int]),
    "TF_TensorByteSize": (_sz, [_vp]),
    "TF_TensorData": (_vp, [_vp]),
    "TF_TensorElementCount": (_i64, [_vp]),
    "TF_StringCopy": (None, [_vp, _cp, _sz]),
    "TF_StringGetDataPointer": (_vp, [_vp]),
    "TF_StringGetSize": (_sz, [_vp]),
    "TF_NewSessionOptions": (_vp, []),
    "TF_SetTarget": (None, [_vp, _cp]),
    "TF_SetConfig": (None, [_vp, _vp, _sz, _vp]),
    "TF_DeleteSessionOptions": (None, [_vp]),
    "TF_NewGraph": (_vp, []),
    "TF_DeleteGraph": (None, [_vp]),
    "TF_GraphGetTensorNumDims": (_int, [_vp, COutput, _vp]),
    "TF_GraphGetTensorShape": (None, [_vp, COutput, ctypes.POINTER(_i64), _int, _vp]),
    "TF_NewOperation": (_vp, [_vp, _cp, _cp]),
    "TF_SetDevice": (None, [_vp, _cp]),
    "TF_AddInput": (None, [_vp, COutput]),
    "TF_AddInputList": (None, [_vp, ctypes.POINTER(COutput), _int]),
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
    "TF_OperationOutputType": (_int, [COutput]),
    "TF_GraphOperationByName": (_vp, [_vp, _cp]),
    "TF_GraphNextOperation": (_vp, [_vp, ctypes.POINTER(_sz)]),
    "TF_GraphToGraphDef": (None, [_vp, ctypes.POINTER(CBuffer), _vp]),
    "TF_NewImportGraphDefOptions": (_vp, []),
    "TF_DeleteImportGraphDefOptions": (None, [_vp]),
    "TF_ImportGraphDefOptionsSetPrefix": (None, [_vp, _cp]),
    "TF_GraphImportGraphDef": (None, [_vp, ctypes.POINTER(CBuffer), _vp, _vp]),
    "TF_NewSession": (_vp, [_vp, _vp, _vp]),
    "TF_CloseSession": (None, [_vp, _vp]),
    "TF_DeleteSession": (None, [_vp, _vp]),
    "TF_SessionRun": (None, [_vp, ctypes.POINTER(CBuffer), ctypes.POINTER(COutput),
                             ctypes.POINTER(_vp), _int, ctypes.POINTER(COutput),
                             ctypes.POINTER(_vp), _int, ctypes.POINTER(_vp), _int,
                             ctypes.POINTER(CBuffer), _vp]),
    "SL_SessionRunCancellable": (None, [_vp, ctypes.POINTER(CBuffer), ctypes.POINTER(COutput),
                                        ctypes.POINTER(_vp), _int, ctypes.POINTER(COutput),
                                        ctypes.POINTER(_vp), _int, ctypes.POINTER(_vp), _int,
                                        ctypes.POINTER(CBuffer), _vp, _vp]),
    "SL_NewRunCancellation": (_vp, []),
    "SL_CancelRun": (None, [_vp, _cp]),
    "SL_RunIsCancelled": (ctypes.c_ubyte, [_vp]),
    "SL_DeleteRunCancellation": (None, [_vp]),
    "TF_SessionListDevices": (_vp, [_vp, _vp]),
    "TF_DeleteDeviceList": (None, [_vp]),
    "TF_DeviceListCount": (_int, [_vp]),
    "TF_DeviceListName": (_cp, [_vp, _int, _vp]),
    "TF_DeviceListType": (_cp, [_vp, _int, _vp]),
    "TF_DeviceListMemoryBytes": (_i64, [_vp, _int, _vp]),
    "TF_DeviceListIncarnation": (ctypes.c_uint64, [_vp, _int, _vp]),
    "SL_GraphImportONNX": (_vp, [_vp, _cp, _vp, _sz, _cp, _vp]),
    "SL_ONNXWriteOptimizedModel": (None, [_cp, _vp, _sz, _vp, _sz, _cp, _vp]),
    "SL_DeleteONNXImport": (None, [_vp]),
    "SL_ONNXImportNumInputs": (_int, [_vp]),
    "SL_ONNXImportInputName": (_cp, [_vp, _int]),
    "SL_ONNXImportInput": (COutput, [_vp, _int]),
    "SL_ONNXImportNumOutputs": (_int, [_vp]),
    "SL_ONNXImportOutputName": (_cp, [_vp, _int]),
    "SL_ONNXImportOutput": (COutput, [_vp, _int]),
    "SL_ONNXImportValueType": (_int, [_vp, _int, _int]),
    "SL_ONNXImportValueTypeString": (_cp, [_vp, _int, _int]),
    "SL_ONNXImportValueNumDims": (_int, [_vp, _int, _int]),
    "SL_ONNXImportValueDim": (_i64, [_vp, _int, _int, _int]),
    "SL_ONNXImportValueDimName": (_cp, [_vp, _int, _int, _int]),
    "SL_ONNXImportValueHasDefault": (ctypes.c_ubyte, [_vp, _int, _int]),
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


def lib():
    """The loaded library, its functions' signatures declared."""
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
            handle = ctypes.CDLL(path)
            for name, (restype, argtypes) in _SIGNATURES.items():
                fn = getattr(handle, name)
                fn.restype = restype
                fn.argtypes = argtypes
            _lib_path = path
            _lib_handle = handle
    return _lib_handle


def library_path():
    """The path of the loaded libsluice_c.so (loading it if needed)."""
    lib()
    return _lib_path


def version():
    """The library's version string (TF_Version)."""
    return lib().TF_Version().decode()


class Status(object):
    """A TF_Status for one call; check() raises the matching SluiceError."""

    def __init__(self):
        self._lib = lib()
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
            errors.raise_error(code, self._lib.TF_Message(self.ptr).decode("utf-8", "replace"))


def call(fn_name, *args):
    """Calls a C function whose last argument is a TF_Status*; raises on error."""
    with Status() as status:
        result = getattr(lib(), fn_name)(*args, status.ptr)
        status.check()
        return result
