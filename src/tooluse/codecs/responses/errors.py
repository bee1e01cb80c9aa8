"""Responses API errors: the same ``{"error": {"message", "type", "param", "code"}}`` shape
and status table as Chat Completions (:mod:`tooluse.codecs.openai.errors`), plus the two
in-stream forms, an ``error`` event and the ``error`` of a ``failed`` response. A prompt over
the context names ``input`` (the Responses field), where Chat names ``messages``."""

from __future__ import annotations

from typing import Any

from ...errors import BackendErrorKind
from ..openai import errors as chat_errors
from ..openai.errors import ERROR_TYPES, backend_error, error_param

__all__ = ["ERROR_TYPES", "backend_error", "default_param", "error_body", "error_code",
           "error_param"]

_CODES: dict[BackendErrorKind, str] = {
    "invalid_request": "invalid_request_error",
    "authentication": "invalid_api_key",
    "permission": "permission_denied",
    "not_found": "not_found",
    "request_too_large": "invalid_request_error",
    "context_length": "context_length_exceeded",
    "timeout": "timeout",
    "rate_limit": "rate_limit_exceeded",
    "api": "server_error",
    "overloaded": "server_error",
    "unavailable": "server_error",
}


def default_param(kind: BackendErrorKind) -> str | None:
    """The ``param`` of an error that names no field itself: ``input`` for a prompt over
    the model's context (the field that holds the prompt), else none."""
    return "input" if kind == "context_length" else None


def error_body(kind: BackendErrorKind, message: str, param: str | None = None
               ) -> tuple[int, dict[str, Any]]:
    """HTTP status and body for an error of ``kind`` (Chat Completions' table)."""
    return chat_errors.error_body(kind, message, param or default_param(kind))


def error_code(kind: BackendErrorKind) -> str:
    """The ``code`` an in-stream error (``error`` event, ``response.error``) carries."""
    return _CODES.get(kind, "server_error")


def response_error(kind: BackendErrorKind, message: str) -> dict[str, Any]:
    """The ``error`` object of a failed response."""
    return {"code": error_code(kind), "message": message}
