"""``POST /v1/chat/completions``: OpenAI Chat Completions with tools, over any backend.

The wire translation is :mod:`tooluse.codecs.openai`'s. This module states the HTTP facts
of the API as a :class:`~.endpoint.WireApi`: Bearer keys, ``data: <chunk>`` SSE ending with
``data: [DONE]``, and errors in the ``{"error": {"message", "type", "param", "code"}}``
shape (as an HTTP error before the stream starts, as a ``data: {"error": ...}`` line after,
which the OpenAI SDK raises).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...codecs import openai as codec
from ...messages import Request
from ...messages import Response as NeutralResponse
from ...stream import StreamEvent
from ..errors import GatewayError
from ..http.sse import DONE, data_only
from ..state import new_id
from .endpoint import Exchange, WireApi, api_endpoint, check_key

__all__ = ["CHAT", "chat_completions_endpoint"]


def _include_usage(data: dict[str, Any]) -> bool:
    """``stream_options.include_usage`` (already validated by the codec); off by default,
    as in the real API, so clients that do not expect the usage-only chunk never see it."""
    options = data.get("stream_options")
    return bool(isinstance(options, dict) and options.get("include_usage"))


def _encode_sse(events: Iterator[StreamEvent], call: Exchange) -> Iterator[bytes]:
    for chunk in codec.encode_events(events, include_usage=_include_usage(call.data)):
        yield data_only(chunk)
    yield DONE


def error_body(error: GatewayError) -> dict[str, Any]:
    param = codec.error_param(error.path) if error.path else None
    return codec.error_body(error.kind, error.message, param)[1]


def _error_status(error: GatewayError) -> int:
    return codec.error_body(error.kind, error.message)[0]


def _error_chunk(error: GatewayError) -> bytes:
    return data_only(error_body(error))


def _decode(call: Exchange) -> Request:
    return codec.decode_request(call.data)


def _encode_response(response: NeutralResponse, call: Exchange) -> dict[str, Any]:
    return codec.encode_response(response)


CHAT = WireApi(
    name="chat_completions",
    stream_requested=lambda data, request: codec.stream_requested(data),
    decode=_decode,
    encode_response=_encode_response,
    encode_stream=_encode_sse,
    error_status=_error_status,
    error_body=error_body,
    error_chunk=_error_chunk,
    request_id_header="x-request-id",
    new_request_id=lambda: new_id("req_"),
    stream_media_type="text/event-stream; charset=utf-8",
    check_headers=check_key,
)

chat_completions_endpoint = api_endpoint(CHAT)
