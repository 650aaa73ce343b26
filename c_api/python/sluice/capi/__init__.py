"""ONNX Runtime's `onnxruntime.capi` path under Sluice's package, for scripts that import its
exception classes from there (sluice.capi.onnxruntime_pybind11_state)."""
