"""One neutral error, rendered in each API's own error shape.

The gateway speaks three APIs whose clients parse errors differently: the Anthropic SDK reads
``{"type": "error", "error": {"type", "message"}}`` and the HTTP status; botocore reads the
``x-amzn-ErrorType`` header and ``{"message"}``; the OpenAI SDK reads
``{"error": {"message", "type", "param", "code"}}``. Everything that can fail inside the
gateway (a malformed body, a missing key, a backend failure, a bug) becomes one
:class:`GatewayError` carrying a format-neutral *kind*; :func:`error_response` turns it into
the native response. Which status and error name each kind gets is the API's own fact, so it
comes from the codec's ``error_body`` table; this module adds only the HTTP side (headers,
request ids, the 413 of the gateway's own body cap, the exception members a ConverseStream
frame may name).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Final, Literal

from starlette.responses import Response

from ..errors import BackendError, BackendErrorKind, ConversionError, WireFormatError

__all__ = [
    "Dialect",
    "ErrorKind",
    "GatewayError",
    "anthropic_error_body",
    "bedrock_exception_name",
    "bedrock_stream_exception_type",
    "error_response",
    "from_exception",
    "openai_error_body",
]

ErrorKind = BackendErrorKind
Dialect = Literal["anthropic", "bedrock", "openai"]


@dataclass
class GatewayError(Exception):
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

    def __post_init__(self) -> None:
        super().__init__(self.message)


def from_exception(exc: BaseException) -> GatewayError:
    """Map any exception raised while serving a request to a :class:`GatewayError`.

    Unknown exceptions become a generic ``api`` error whose message says nothing of the
    exception itself, so a traceback or an internal path never reaches a client.
    """
    if isinstance(exc, GatewayError):
        return exc
    if isinstance(exc, (WireFormatError, ConversionError)):
        return GatewayError(str(exc), "invalid_request", path=exc.path)
    if isinstance(exc, BackendError):
        return GatewayError(exc.message, exc.kind, retry_after=exc.retry_after)
    return GatewayError("internal error while serving the request", "api")


# The status codes and error names are each API's, so they come from its codec
# (``error_body``); the gateway adds only what is HTTP-side: a 413 for its own body cap.


def anthropic_error_body(error: GatewayError) -> dict[str, object]:
    from ..codecs import anthropic

    return anthropic.error_body(error.kind, error.message)[1]


def _anthropic_status(error: GatewayError) -> int:
    from ..codecs import anthropic

    return anthropic.error_body(error.kind, error.message)[0]


def bedrock_exception_name(error: GatewayError) -> str:
    from ..codecs import bedrock

    return error.aws_code or bedrock.error_body(error.kind, error.message)[1]


def _bedrock_status(error: GatewayError) -> int:
    from ..codecs import bedrock

    if error.kind == "request_too_large":
        return 413  # Bedrock names it a ValidationException; the status says what happened
    return bedrock.error_body(error.kind, error.message)[0]


# The exception members ConverseStream's event stream can carry (botocore's service model):
# anything else inside a stream is reported as the closest of these.
_BEDROCK_STREAM: Final[dict[ErrorKind, str]] = {
    "invalid_request": "validationException",
    "request_too_large": "validationException",
    "rate_limit": "throttlingException",
    "overloaded": "serviceUnavailableException",
    "unavailable": "serviceUnavailableException",
}


def bedrock_stream_exception_type(error: GatewayError) -> str:
    """The ``:exception-type`` of an exception frame (a member of ConverseStreamOutput)."""
    return _BEDROCK_STREAM.get(error.kind, "internalServerException")


def openai_error_body(error: GatewayError) -> dict[str, object]:
    from ..codecs import openai

    param = openai.error_param(error.path) if error.path else None
    return openai.error_body(error.kind, error.message, param)[1]


def _openai_status(error: GatewayError) -> int:
    from ..codecs import openai

    return openai.error_body(error.kind, error.message)[0]


def status_of(error: GatewayError, dialect: Dialect) -> int:
    if dialect == "anthropic":
        return _anthropic_status(error)
    if dialect == "bedrock":
        return _bedrock_status(error)
    return _openai_status(error)


def error_response(
    error: GatewayError, dialect: Dialect, *, request_id: str | None = None
) -> Response:
    """The complete HTTP error response for ``error`` in ``dialect``'s shape."""
    headers = dict(error.headers)
    if error.retry_after is not None:
        headers["retry-after"] = str(max(0, round(error.retry_after)))
    if dialect == "anthropic":
        body: dict[str, object] = anthropic_error_body(error)
        if request_id:
            headers["request-id"] = request_id
    elif dialect == "bedrock":
        body = {"message": error.message}
        headers["x-amzn-ErrorType"] = bedrock_exception_name(error)
        if request_id:
            headers["x-amzn-RequestId"] = request_id
    else:
        body = openai_error_body(error)
        if request_id:
            headers["x-request-id"] = request_id
    return Response(
        json.dumps(body, ensure_ascii=False),
        status_code=status_of(error, dialect),
        headers=headers,
        media_type="application/json",
    )
