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
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import (
    BackendError,
    BackendErrorKind,
    ConversionError,
    ToolUseError,
    WireFormatError,
)

__all__ = ["ErrorKind", "GatewayError", "from_exception"]

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
