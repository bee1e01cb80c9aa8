"""One neutral error, rendered in each API's own error shape.

The gateway's APIs answer errors in three shapes, parsed differently: the Anthropic SDK reads
``{"type": "error", "error": {"type", "message"}}`` and the HTTP status; botocore reads the
``x-amzn-ErrorType`` header and ``{"message"}``; the OpenAI SDK reads
``{"error": {"message", "type", "param", "code"}}``. Everything that can fail inside the
gateway (a malformed body, a missing key, a backend failure, a bug) becomes one
:class:`GatewayError` carrying a format-neutral *kind*; each API's
:class:`~.apis.endpoint.WireApi` turns it into the native response (``error_response``). Which
status and error name each kind gets is the API's own fact, so it comes from the codec's
``error_body`` table; the API modules add only the HTTP side (headers, request ids, the 413
of the gateway's own body cap, the exception members a ConverseStream frame may name).

Which error a failure becomes depends on when it happened. A request that fails while being
read or decoded is the client's fault by construction, so any ``ValueError``/``TypeError``
escaping a codec there (a case the codec did not foresee) still answers 400 with the
message, never 500; the gap is logged so it gets fixed (:func:`input_error`). A failure
after decoding is the backend's or the gateway's (:func:`output_error`), and an unexpected
exception hides behind a generic 500 (:func:`from_exception`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from ..errors import (
    BackendError,
    BackendErrorKind,
    ConversionError,
    ToolUseError,
    WireFormatError,
)

__all__ = ["ErrorKind", "GatewayError", "from_exception", "input_error", "output_error"]

log = logging.getLogger("tooluse.server")

ErrorKind = BackendErrorKind


@dataclass
class GatewayError(ToolUseError):
    """A failure to report to the client, in whatever API it spoke.

    ``path`` locates the offending field (``("tools", 0, "name")``) when there is one; the
    message already names it, ``path`` feeds the OpenAI shape's separate ``param`` field.
    """

    message: str
    kind: ErrorKind = "invalid_request"
    path: tuple[str | int, ...] = ()
    retry_after: float | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: A more precise AWS error code than the kind gives (``InvalidSignatureException``).
    aws_code: str | None = None
    #: Machine-readable details (``{"error_code": ...}``) for APIs whose errors carry them.
    details: dict[str, object] | None = None

    def __post_init__(self) -> None:
        super().__init__(self.message)


def from_exception(exc: BaseException) -> GatewayError:
    """Map any exception raised while serving a request to a :class:`GatewayError`.

    Unknown exceptions become a generic ``api`` error whose message says nothing of the
    exception itself, so a traceback or an internal path never reaches a client.
    """
    if isinstance(exc, GatewayError):
        return exc
    if isinstance(exc, WireFormatError):
        return GatewayError(str(exc), "invalid_request", path=exc.path, details=exc.details)
    if isinstance(exc, ConversionError):
        return GatewayError(str(exc), "invalid_request", path=exc.path)
    if isinstance(exc, BackendError):
        return GatewayError(exc.message, exc.kind, retry_after=exc.retry_after)
    return GatewayError("internal error while serving the request", "api")


def input_error(exc: BaseException) -> GatewayError:
    """The error to answer for ``exc`` raised while reading or decoding a request."""
    if isinstance(exc, GatewayError):
        return exc
    if isinstance(exc, RecursionError):
        log.warning("request too deeply nested for the codec")
        return GatewayError("request is nested too deeply", "invalid_request")
    error = from_exception(exc)
    if error.kind == "api" and isinstance(exc, (ValueError, TypeError, KeyError)):
        log.warning("codec raised %s on a request body", type(exc).__name__, exc_info=exc)
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else "malformed request"
        return GatewayError(message[:500], "invalid_request")
    if error.kind == "api":
        log.error("unexpected error while reading a request", exc_info=exc)
    return error


def output_error(exc: BaseException) -> GatewayError:
    """The error to answer for ``exc`` raised while running the backend or encoding.

    A format error at this stage is not the client's fault: the request was valid, and it
    is the backend's answer that is malformed or cannot be written in the client's API
    (e.g. an image block in a response), so it is a 500 that says so, not a 400.
    """
    if isinstance(exc, (WireFormatError, ConversionError)):
        log.error("the backend's answer could not be encoded: %s", exc)
        return GatewayError(f"the backend's answer could not be sent in this API: {exc}", "api")
    error = from_exception(exc)
    if isinstance(exc, BackendError):  # the backend's (or its upstream's) failure, not a bug here
        log.warning("backend error (%s): %s", exc.kind, exc.message)
    elif error.kind == "api" and not isinstance(exc, GatewayError):
        log.error("unexpected error while serving a request", exc_info=exc)
    return error
