"""``POST /model/{modelId}/converse`` and ``/converse-stream``: the Bedrock Converse API.

The wire translation is :mod:`tooluse.codecs.bedrock`'s. This module states, as two
:class:`~.endpoint.WireApi` objects, what only the HTTP side of Bedrock has: SigV4
verification (when credentials are configured), errors as the ``x-amzn-ErrorType`` header
plus ``{"message"}``, and the stream as AWS binary event-stream frames — ``event`` frames
named after each ConverseStreamOutput member, and an ``exception`` frame for a failure after
the stream started. The model id arrives URL-encoded (boto3 sends ``...-v1%3A0``); Starlette
hands it over decoded. Whether to stream is the path's choice, not the body's.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Iterator
from typing import Any, Final

from starlette.requests import Request as HttpRequest

from ...codecs import bedrock as codec
from ...messages import Request
from ...messages import Response as NeutralResponse
from ...stream import StreamEvent
from ..errors import ErrorKind, GatewayError
from ..http.auth import check_api_key, verify_sigv4
from ..http.eventstream import encode_event, encode_exception
from ..state import GatewayState
from .endpoint import Exchange, WireApi, api_endpoint

__all__ = ["CONVERSE", "CONVERSE_STREAM", "converse_endpoint", "converse_stream_endpoint"]


def _encode_frames(events: Iterator[StreamEvent], call: Exchange) -> Iterator[bytes]:
    started = time.monotonic()
    for payload in codec.encode_events(events):
        ((event_type, body),) = payload.items()
        if event_type == "metadata":  # the latency is only known now, at the end
            body.setdefault("metrics", {})["latencyMs"] = int((time.monotonic() - started) * 1000)
        yield encode_event(event_type, body)


def exception_name(error: GatewayError) -> str:
    """The ``x-amzn-ErrorType`` botocore reads as the error code."""
    return error.aws_code or codec.error_body(error.kind, error.message)[1]


def _error_status(error: GatewayError) -> int:
    if error.kind == "request_too_large":
        return 413  # Bedrock names it a ValidationException; the status says what happened
    return codec.error_body(error.kind, error.message)[0]


def _error_body(error: GatewayError) -> dict[str, Any]:
    return {"message": error.message}


def _error_headers(error: GatewayError) -> dict[str, str]:
    return {"x-amzn-ErrorType": exception_name(error)}


# The exception members ConverseStream's event stream can carry (botocore's service model):
# anything else inside a stream is reported as the closest of these.
_STREAM_EXCEPTIONS: Final[dict[ErrorKind, str]] = {
    "invalid_request": "validationException",
    "request_too_large": "validationException",
    "context_length": "validationException",
    "rate_limit": "throttlingException",
    "overloaded": "serviceUnavailableException",
    "unavailable": "serviceUnavailableException",
}


def stream_exception_type(error: GatewayError) -> str:
    """The ``:exception-type`` of an exception frame (a member of ConverseStreamOutput)."""
    return _STREAM_EXCEPTIONS.get(error.kind, "internalServerException")


def _error_frame(error: GatewayError) -> bytes:
    return encode_exception(stream_exception_type(error), error.message)


def _decode(call: Exchange) -> Request:
    return codec.decode_request(call.data, model_id=call.http.path_params["model_id"])


def _encode_response(response: NeutralResponse, call: Exchange) -> dict[str, Any]:
    return codec.encode_response(response, latency_ms=call.latency_ms)


def _authorize(request: HttpRequest, state: GatewayState, body: bytes) -> None:
    """SigV4 when AWS credentials are configured; a Bedrock API key (``Authorization:
    Bearer``, what boto3 sends when ``AWS_BEARER_TOKEN_BEDROCK`` is set) when API keys
    are. With API keys but no AWS credentials a SigV4 signature cannot be checked, so it is
    refused rather than waved through: configuring keys protects every endpoint."""
    auth = request.headers.get("authorization", "")
    if state.api_keys and auth.lower().startswith("bearer "):
        try:
            check_api_key(request.headers, state.api_keys)
        except GatewayError:
            raise GatewayError(
                "The security token included in the request is invalid.",
                "authentication",
                aws_code="UnrecognizedClientException",
            ) from None
        return
    if state.aws_credentials:
        verify_sigv4(
            method=request.method,
            scheme=request.url.scheme,
            raw_path=request.scope.get("raw_path") or request.url.path.encode(),
            query_string=request.scope.get("query_string", b""),
            headers=request.scope["headers"],
            body=body,
            credentials=state.aws_credentials,
        )
    elif state.api_keys:
        raise GatewayError(
            "this gateway needs a Bedrock API key (Authorization: Bearer; boto3 sends it "
            "when AWS_BEARER_TOKEN_BEDROCK is set) or SigV4 credentials it was configured with",
            "permission",
            aws_code="AccessDeniedException",
        )


def _request_id() -> str:
    return str(uuid.uuid4())  # Bedrock's request ids are plain UUIDs


CONVERSE = WireApi(
    name="converse",
    stream_requested=lambda data, request: False,
    decode=_decode,
    encode_response=_encode_response,
    encode_stream=_encode_frames,
    error_status=_error_status,
    error_body=_error_body,
    error_chunk=_error_frame,
    request_id_header="x-amzn-RequestId",
    new_request_id=_request_id,
    stream_media_type="application/vnd.amazon.eventstream",
    error_headers=_error_headers,
    check_body=_authorize,
)
CONVERSE_STREAM = dataclasses.replace(
    CONVERSE, name="converse_stream", stream_requested=lambda data, request: True
)

converse_endpoint = api_endpoint(CONVERSE)
converse_stream_endpoint = api_endpoint(CONVERSE_STREAM)
