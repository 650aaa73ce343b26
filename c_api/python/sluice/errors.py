"""The errors the runtime reports, one SluiceError subclass per TensorFlow error code."""

__all__ = [
    "SluiceError", "CancelledError", "UnknownError", "InvalidArgumentError",
    "DeadlineExceededError", "NotFoundError", "AlreadyExistsError", "PermissionDeniedError",
    "ResourceExhaustedError", "FailedPreconditionError", "AbortedError", "OutOfRangeError",
    "UnimplementedError", "InternalError", "UnavailableError", "DataLossError",
    "UnauthenticatedError",
]


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


def raise_error(code, message):
    """Raises the SluiceError subclass for TensorFlow error code `code`."""
    cls = _ERRORS_BY_CODE.get(code)
    if cls is None:
        raise SluiceError(message, code)
    raise cls(message)
