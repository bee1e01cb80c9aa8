"""Bedrock error bodies and errors from Bedrock: the ``x-amzn-ErrorType`` / HTTP status
pairs the gateway answers with (:func:`error_body`), and Bedrock's (or botocore's) error
codes mapped to a format-neutral :class:`BackendError` (:func:`backend_error`).
"""

from __future__ import annotations

from typing import Any

from ...errors import BackendError, BackendErrorKind

__all__ = ["ERROR_TYPES", "backend_error", "error_body"]

ERROR_TYPES: dict[BackendErrorKind, tuple[int, str]] = {
    "invalid_request": (400, "ValidationException"),
    "authentication": (403, "UnrecognizedClientException"),
    "permission": (403, "AccessDeniedException"),
    "not_found": (404, "ResourceNotFoundException"),
    "request_too_large": (400, "ValidationException"),
    "context_length": (400, "ValidationException"),
    "timeout": (408, "ModelTimeoutException"),
    "rate_limit": (429, "ThrottlingException"),
    "api": (500, "InternalServerException"),
    "overloaded": (503, "ServiceUnavailableException"),
    "unavailable": (503, "ServiceUnavailableException"),
}
_KIND_OF_TYPE: dict[str, BackendErrorKind] = {
    "ValidationException": "invalid_request",
    "UnrecognizedClientException": "authentication",
    "AccessDeniedException": "permission",
    "ResourceNotFoundException": "not_found",
    "ModelTimeoutException": "timeout",
    "ThrottlingException": "rate_limit",
    "InternalServerException": "api",
    "ModelStreamErrorException": "api",
    "ModelErrorException": "api",
    "ModelNotReadyException": "unavailable",
    "ServiceUnavailableException": "unavailable",
    "ServiceQuotaExceededException": "rate_limit",
}


def error_body(kind: BackendErrorKind, message: str) -> tuple[int, str, dict[str, Any]]:
    """HTTP status, ``x-amzn-ErrorType`` and body Bedrock answers for an error of ``kind``."""
    status, type_ = ERROR_TYPES.get(kind, ERROR_TYPES["api"])
    return status, type_, {"message": message}


def backend_error(error_type: str, message: str, status: int | None = None) -> BackendError:
    """A Bedrock error (``x-amzn-ErrorType`` or botocore's ``Error.Code``) -> BackendError."""
    name = error_type.split(":")[0]
    name = name[0].upper() + name[1:] if name else name
    return BackendError(message, kind=_KIND_OF_TYPE.get(name, "api"), status=status)
