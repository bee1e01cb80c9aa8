"""``POST /model/{modelId}/converse`` and ``/converse-stream``: the Bedrock Converse API.

The wire translation is :mod:`tooluse.codecs.bedrock`'s. This module does what only the
HTTP side of Bedrock has: SigV4 verification (when credentials are configured), errors as
the ``x-amzn-ErrorType`` header plus ``{"message"}``, and the stream as AWS binary
event-stream frames — ``event`` frames named after each ConverseStreamOutput member, and an
``exception`` frame for a failure after the stream started. The model id arrives
URL-encoded (boto3 sends ``...-v1%3A0``); Starlette hands it over decoded.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, Response

from ..codecs import bedrock as codec
from .auth import check_api_key, verify_sigv4
from .body import parse_json_object, read_body
from .common import input_error, output_error
from .errors import GatewayError, bedrock_stream_exception_type, error_response
from .eventstream import encode_event, encode_exception
from .state import GatewayState

__all__ = ["converse_endpoint", "converse_stream_endpoint"]


def _encode_frames(events: Iterator[Any]) -> Iterator[bytes]:
    started = time.monotonic()
    for payload in codec.encode_events(events):
        ((event_type, body),) = payload.items()
        if event_type == "metadata":  # the latency is only known now, at the end
            body.setdefault("metrics", {})["latencyMs"] = int((time.monotonic() - started) * 1000)
        yield encode_event(event_type, body)


def _error_frame(error: GatewayError) -> bytes:
    return encode_exception(bedrock_stream_exception_type(error), error.message)


async def _decode(request: HttpRequest, state: GatewayState, request_id: str) -> Any:
    body = await read_body(request, state.max_body_bytes)
    _authorize(request, state, body)
    data = parse_json_object(body)
    model_id = request.path_params["model_id"]
    return codec.decode_request(data, model_id=model_id)


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


async def converse_endpoint(request: HttpRequest) -> Response:
    state: GatewayState = request.app.state.gateway
    request_id = _request_id()
    try:
        neutral = await _decode(request, state, request_id)
    except Exception as exc:  # noqa: BLE001 - every failure becomes a native error
        return error_response(input_error(exc), "bedrock", request_id=request_id)
    try:
        started = time.monotonic()
        response = await state.complete(neutral)
        latency_ms = int((time.monotonic() - started) * 1000)
        body = codec.encode_response(response, latency_ms=latency_ms)
    except Exception as exc:  # noqa: BLE001 - every failure becomes a native error
        return error_response(output_error(exc), "bedrock", request_id=request_id)
    return JSONResponse(body, headers={"x-amzn-RequestId": request_id})


async def converse_stream_endpoint(request: HttpRequest) -> Response:
    state: GatewayState = request.app.state.gateway
    request_id = _request_id()

    def fail(error: GatewayError) -> Response:
        return error_response(error, "bedrock", request_id=request_id)

    try:
        neutral = await _decode(request, state, request_id)
    except Exception as exc:  # noqa: BLE001 - every failure becomes a native error
        return fail(input_error(exc))
    return state.streaming_response(  # type: ignore[return-value]
        neutral,
        _encode_frames,
        media_type="application/vnd.amazon.eventstream",
        headers={"x-amzn-RequestId": request_id},
        error_response=fail,
        error_chunk=_error_frame,
    )
