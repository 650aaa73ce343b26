"""ONNX Runtime's exception classes, by the names and module path its scripts catch them under,
as Sluice's errors: `except InvalidArgument` catches what Sluice raises for a wrong input name,
dtype or shape (InvalidArgumentError), `except Fail` or `except RuntimeException` any error the
runtime raises (SluiceError, the base of them all), `except NoSuchFile` a missing model file.
"""

from ..errors import (FailedPreconditionError, InternalError, InvalidArgumentError, NotFoundError,
                      SluiceError, UnimplementedError)

__all__ = [
    "Fail", "InvalidArgument", "NoSuchFile", "NoModel", "EngineError", "RuntimeException",
    "InvalidProtobuf", "ModelLoaded", "NotImplemented", "InvalidGraph", "EPFail",
]

Fail = SluiceError
RuntimeException = SluiceError
EPFail = SluiceError
InvalidArgument = InvalidArgumentError
InvalidProtobuf = InvalidArgumentError
InvalidGraph = InvalidArgumentError
NoSuchFile = NotFoundError
NoModel = NotFoundError
ModelLoaded = FailedPreconditionError
EngineError = InternalError
NotImplemented = UnimplementedError  # noqa: A001 (ONNX Runtime's name)
