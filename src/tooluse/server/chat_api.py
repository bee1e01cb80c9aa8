"""``POST /v1/chat/completions``: OpenAI Chat Completions with tools, over any backend.

The wire translation is :mod:`tooluse.codecs.openai`'s. This module does the HTTP side:
Bearer keys, the body cap, ``data: <chunk>`` SSE ending with ``data: [DONE]``, and errors
in the ``{"error": {"message", "type", "param", "code"}}`` shape (as an HTTP error before
the stream starts, as a ``data: {"error": ...}`` line after, which the OpenAI SDK raises).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from starlette.requests import Request as HttpRequest
from starlette.responses import JSONResponse, Response

from ..codecs import openai as codec
from .auth import check_api_key
from .body import parse_json_object, read_body
from .common import input_error, output_error
from .errors import GatewayError, error_response, openai_error_body
from .sse import DONE, data_only
from .state import GatewayState, new_id

__all__ = ["chat_completions_endpoint"]


def _include_usage(data: dict[str, Any]) -> bool:
    """``stream_options.include_usage`` (already validated by the codec); off by default,
    as in the real API, so clients that do not expect the usage-only chunk never see it."""
    options = data.get("stream_options")
    return bool(isinstance(options, dict) and options.get("include_usage"))


def _sse_encoder(include_usage: bool) -> Callable[[Iterator[Any]], Iterator[bytes]]:
    def encode(events: Iterator[Any]) -> Iterator[bytes]:
        for chunk in codec.encode_events(events, include_usage=include_usage):
            yield data_only(chunk)
        yield DONE

    return encode


def _error_chunk(error: GatewayError) -> bytes:
    return data_only(openai_error_body(error))


async def chat_completions_endpoint(request: HttpRequest) -> Response:
    state: GatewayState = request.app.state.gateway
    request_id = new_id("req_")

    def fail(error: GatewayError) -> Response:
        return error_response(error, "openai", request_id=request_id)

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
            _sse_encoder(_include_usage(data)),
            media_type="text/event-stream; charset=utf-8",
            headers={"x-request-id": request_id},
            error_response=fail,
            error_chunk=_error_chunk,
        )
    try:
        response = await state.complete(neutral)
        body = codec.encode_response(response)
    except Exception as exc:  # noqa: BLE001 - every failure becomes a native error
        return fail(output_error(exc))
    return JSONResponse(body, headers={"x-request-id": request_id})
