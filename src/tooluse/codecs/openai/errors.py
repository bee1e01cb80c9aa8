"""OpenAI error bodies <-> :class:`BackendError`, and OpenAI's spelling of a field path.

:func:`error_body` is what the gateway answers for an error; :func:`backend_error` reads a
backend's error body (also met inside a stream, see :mod:`.stream`); :func:`error_param`
spells a :class:`WireFormatError` path as OpenAI's ``param``.
"""

from __future__ import annotations

from typing import Any

from ...errors import BackendError, BackendErrorKind
from .._common import Path


def error_param(path: Path) -> str:
    """A field path in OpenAI's ``param`` spelling: ``messages.[1].content``."""
    return ".".join(f"[{p}]" if isinstance(p, int) else p for p in path)


ERROR_TYPES: dict[BackendErrorKind, tuple[int, str]] = {
    "invalid_request": (400, "invalid_request_error"),
    "authentication": (401, "authentication_error"),
    "permission": (403, "permission_error"),
    "not_found": (404, "not_found_error"),
    "request_too_large": (413, "invalid_request_error"),
    "context_length": (400, "invalid_request_error"),
    "timeout": (408, "timeout"),
    "rate_limit": (429, "rate_limit_exceeded"),
    "api": (500, "server_error"),
    "overloaded": (503, "server_error"),
    "unavailable": (503, "server_error"),
}
_KIND_OF_STATUS: dict[int, BackendErrorKind] = {
    400: "invalid_request", 401: "authentication", 403: "permission", 404: "not_found",
    408: "timeout", 413: "request_too_large", 422: "invalid_request", 429: "rate_limit",
    500: "api", 502: "unavailable", 503: "unavailable", 504: "timeout", 529: "overloaded",
}


def error_body(kind: BackendErrorKind, message: str, param: str | None = None) -> tuple[int, dict[str, Any]]:
    """HTTP status and body an OpenAI-compatible server answers for an error of ``kind``."""
    status, type_ = ERROR_TYPES.get(kind, ERROR_TYPES["api"])
    code = "context_length_exceeded" if kind == "context_length" else None
    if code is not None and param is None:
        param = "messages"
    return status, {"error": {"message": message, "type": type_, "param": param, "code": code}}


def backend_error(body: Any, status: int | None = None) -> BackendError:
    """An OpenAI error body -> :class:`BackendError` (kind from the status)."""
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    kind: BackendErrorKind = _KIND_OF_STATUS.get(status or 0, "api")
    if status is None and isinstance(error, dict) and error.get("code") == "rate_limit_exceeded":
        kind = "rate_limit"
    if isinstance(error, dict) and error.get("code") == "context_length_exceeded":
        kind = "context_length"
    return BackendError(str(message or body), kind=kind, status=status)
