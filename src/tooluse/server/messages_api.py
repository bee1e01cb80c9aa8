"""``POST /v1/messages``: the Anthropic Messages API over any backend.

The wire translation is :mod:`tooluse.codecs.anthropic`'s; this module only does HTTP:
authentication (``x-api-key`` or ``Authorization: Bearer``), the body cap, the
``request-id`` header, SSE framing with a ``ping`` after ``message_start`` (as the real API
sends) and as keep-alive, and errors in the API's ``{"type": "error", ...}`` shape — as an
HTTP error before the stream starts and as ``event: error`` after.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, Response

from ..codecs import anthropic as codec
from .auth import check_api_key
from .body import parse_json_object, read_body
from .common import input_error, output_error
from .errors import GatewayError, anthropic_error_body, error_response
from .sse import PING, named_event
from .state import GatewayState, new_id

__all__ = ["messages_endpoint"]


def _encode_sse(events: Iterator[Any]) -> Iterator[bytes]:
    for payload in codec.encode_events(events):
        yield named_event(payload["type"], payload)
        if payload["type"] == "message_start":
            yield PING


def _error_chunk(error: GatewayError) -> bytes:
    return named_event("error", anthropic_error_body(error))


async def messages_endpoint(request: HttpRequest) -> Response:
    state: GatewayState = request.app.state.gateway
    request_id = new_id("req_")

    def fail(error: GatewayError) -> Response:
        return error_response(error, "anthropic", request_id=request_id)

    try:
        check_api_key(request.headers, state.api_keys)
        data = parse_json_object(await read_body(request, state.max_body_bytes))
        stream = codec.stream_requested(data)
        neutral = codec.decode_request(data)
    except Exception as exc:  # noqa: BLE001 - every failure becomes a native error
        return fail(input_error(exc))

    if stream:
        return state.streaming_response(  # type: ignore[return-value]
            neutral,
            _encode_sse,
            media_type="text/event-stream; charset=utf-8",
            headers={"request-id": request_id},
            error_response=fail,
            error_chunk=_error_chunk,
            heartbeat=PING,
        )
    try:
        response = await state.complete(neutral)
        body = codec.encode_response(response)
    except Exception as exc:  # noqa: BLE001 - every failure becomes a native error
        return fail(output_error(exc))
    return JSONResponse(body, headers={"request-id": request_id})
