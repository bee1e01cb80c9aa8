"""``POST /v1/messages``: the Anthropic Messages API over any backend.

The wire translation is :mod:`tooluse.codecs.anthropic`'s; this module only states the HTTP
facts of the API as a :class:`~.endpoint.WireApi`: authentication (``x-api-key`` or
``Authorization: Bearer``), the ``request-id`` header, SSE framing with a ``ping`` after
``message_start`` (as the real API sends) and as keep-alive, and errors in the API's
``{"type": "error", ...}`` shape — as an HTTP error before the stream starts and as
``event: error`` after.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...codecs import anthropic as codec
from ...messages import Passthrough, Request
from ...messages import Response as NeutralResponse
from ...stream import StreamEvent
from ..errors import GatewayError
from ..http.sse import PING, named_event
from ..state import new_id
from .endpoint import Exchange, WireApi, api_endpoint, check_key

__all__ = ["MESSAGES", "messages_endpoint"]


def _encode_sse(events: Iterator[StreamEvent], call: Exchange) -> Iterator[bytes]:
    for payload in codec.encode_events(events):
        yield named_event(payload["type"], payload)
        if payload["type"] == "message_start":
            yield PING


def error_body(error: GatewayError) -> dict[str, Any]:
    body = codec.error_body(error.kind, error.message)[1]
    if error.details:
        body["error"]["details"] = dict(error.details)
    return body


def _error_status(error: GatewayError) -> int:
    return codec.error_body(error.kind, error.message)[0]


def _error_chunk(error: GatewayError) -> bytes:
    return named_event("error", error_body(error))


def _decode(call: Exchange) -> Request:
    """The codec's request, plus the ``anthropic-beta`` header verbatim (never allow-listed:
    an Anthropic upstream gets it as sent; other backends ignore it)."""
    neutral = codec.decode_request(call.data)
    beta = call.http.headers.get("anthropic-beta")
    if beta:
        passthrough = neutral.passthrough or Passthrough(api=codec.TARGET)
        passthrough = passthrough.model_copy(
            update={"headers": {**passthrough.headers, "anthropic-beta": beta}}
        )
        neutral = neutral.model_copy(update={"passthrough": passthrough})
    return neutral


def _encode_response(response: NeutralResponse, call: Exchange) -> dict[str, Any]:
    return codec.encode_response(response)


MESSAGES = WireApi(
    name="messages",
    stream_requested=lambda data, request: codec.stream_requested(data),
    decode=_decode,
    encode_response=_encode_response,
    encode_stream=_encode_sse,
    error_status=_error_status,
    error_body=error_body,
    error_chunk=_error_chunk,
    request_id_header="request-id",
    new_request_id=lambda: new_id("req_"),
    stream_media_type="text/event-stream; charset=utf-8",
    heartbeat=PING,
    check_headers=check_key,
    schema_field=("output_config", "format"),
)

messages_endpoint = api_endpoint(MESSAGES)
