"""Messages API error bodies: the HTTP status and ``error.type`` of each neutral error kind
(for the gateway to answer as the API does), and the reverse (an API error body, over HTTP
or as an SSE ``error`` event, -> :class:`~tooluse.errors.BackendError`).
"""

from __future__ import annotations

from typing import Any

from ...errors import BackendError, BackendErrorKind

ERROR_TYPES: dict[BackendErrorKind, tuple[int, str]] = {
    "invalid_request": (400, "invalid_request_error"),
    "authentication": (401, "authentication_error"),
    "permission": (403, "permission_error"),
    "not_found": (404, "not_found_error"),
    "request_too_large": (413, "request_too_large"),
    # The prompt exceeds the model's context: the API's 400 "prompt is too long: ...".
    "context_length": (400, "invalid_request_error"),
    "rate_limit": (429, "rate_limit_error"),
    "timeout": (504, "timeout_error"),
    "api": (500, "api_error"),
    "overloaded": (529, "overloaded_error"),
    "unavailable": (503, "api_error"),
}
_KIND_OF_TYPE: dict[str, BackendErrorKind] = {
    t: k for k, (_, t) in ERROR_TYPES.items() if k not in ("unavailable", "context_length")
}


def error_body(kind: BackendErrorKind, message: str) -> tuple[int, dict[str, Any]]:
    """The HTTP status and body the Messages API answers for an error of ``kind``."""
    status, type_ = ERROR_TYPES.get(kind, ERROR_TYPES["api"])
    return status, {"type": "error", "error": {"type": type_, "message": message}}


def backend_error(body: Any, status: int | None = None) -> BackendError:
    """A Messages API error body (HTTP or SSE ``error`` event) -> :class:`BackendError`."""
    error = body.get("error") if isinstance(body, dict) else None
    type_ = error.get("type") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    kind: BackendErrorKind = _KIND_OF_TYPE.get(str(type_), "api")
    if kind == "invalid_request" and str(message or "").startswith("prompt is too long"):
        kind = "context_length"
    return BackendError(str(message or body), kind=kind, status=status)
