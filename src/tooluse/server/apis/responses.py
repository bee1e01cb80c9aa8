"""``/v1/responses``: the OpenAI Responses API over any backend, with stored responses.

The wire translation is :mod:`tooluse.codecs.responses`'. This module adds what the other
APIs do not have, state:

- ``POST /v1/responses`` answers (whole, or as the numbered ``response.*`` SSE stream) and,
  unless the request says ``store: false``, keeps the response in the app's
  :class:`~..stores.responses.ResponseStore`: the response object, the request's input items
  and the conversation so far, which a later ``previous_response_id`` continues;
- ``GET``/``DELETE /v1/responses/{id}`` and ``GET /v1/responses/{id}/input_items``.

``POST`` is the other APIs' endpoint (:func:`~.endpoint.api_endpoint`: auth, the body cap,
bad input, routing, streaming), with the two hooks of a stored conversation: load the one
``previous_response_id`` names, and store the answer; errors take OpenAI's ``{"error": {...}}`` shape, as an HTTP error before a stream
starts and as an ``error`` event plus ``response.failed`` after.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio.to_thread
from starlette.requests import Request as HttpRequest
from starlette.responses import Response

from ..._greenlet_bridge import blocking
from ...codecs import responses as codec
from ...messages import Message, Request, TextBlock
from ...messages import Response as NeutralResponse
from ...stream import Accumulator, StreamEvent
from ..errors import GatewayError, input_error, output_error
from ..http.encoding import JsonResponse
from ..http.sse import named_event
from ..state import GatewayState, new_id
from ..stores.responses import ResponseStore
from .endpoint import Exchange, WireApi, api_endpoint, check_key

__all__ = ["RESPONSES", "create_response", "delete_response", "get_response",
           "list_input_items"]

#: An SSE comment: every SSE parser skips it; it keeps proxies from cutting a silent stream.
KEEP_ALIVE = b": keep-alive\n\n"


def _error_body(error: GatewayError) -> dict[str, Any]:
    param = codec.error_param(error.path) if error.path else None
    return codec.error_body(error.kind, error.message, param)[1]


def _error_status(error: GatewayError) -> int:
    return codec.error_body(error.kind, error.message)[0]


def _error_chunk(error: GatewayError) -> bytes:
    """Only met if the stream fails outside :func:`_stream_bytes`'s own handling."""
    return named_event("error", {"type": "error", "code": codec.error_code(error.kind),
                                 "message": error.message,
                                 "param": codec.default_param(error.kind),
                                 "sequence_number": 0})


def _store(request: HttpRequest) -> ResponseStore:
    store: ResponseStore = request.app.state.responses_store
    return store


# --- what is stored ------------------------------------------------------------------------


def _previous(context: dict[str, Any]) -> Request:
    """The stored conversation as the ``previous`` a request continues."""
    return Request(system=[TextBlock(text=t) for t in context.get("system", [])],
                   messages=[Message.model_validate(m) for m in context.get("messages", [])])


def _context(data: dict[str, Any], neutral: Request, answer: NeutralResponse) -> dict[str, Any]:
    """The conversation the next response chains on: not this request's ``instructions``
    (the API does not carry them over), its other system text, every turn and the answer."""
    system = neutral.system[1:] if data.get("instructions") else neutral.system
    messages = [*neutral.messages]
    if answer.content:
        messages.append(answer.to_message())
    return {"system": [b.text for b in system],
            "messages": [m.model_dump(mode="json", exclude_none=True) for m in messages]}


def _input_items(raw: Any, response_id: str) -> list[dict[str, Any]]:
    """The request's input as the items ``input_items`` lists, each with an id."""
    items = [{"role": "user", "content": raw}] if isinstance(raw, str) else list(raw or [])
    out: list[dict[str, Any]] = []
    for k, raw_item in enumerate(items):
        if not isinstance(raw_item, dict):
            continue
        item: dict[str, Any] = dict(raw_item)
        if "type" not in item and "role" in item:
            item["type"] = "message"
        if item.get("type") == "message":
            if isinstance(item.get("content"), str):
                kind = "output_text" if item.get("role") == "assistant" else "input_text"
                item["content"] = [{"type": kind, "text": item["content"]}]
            if isinstance(item.get("content"), list):
                # an assistant's text is listed as the API writes it (an output_text part
                # always has its annotations and logprobs)
                item["content"] = [
                    {**part, "annotations": part.get("annotations") or [],
                     "logprobs": part.get("logprobs") or []}
                    if isinstance(part, dict) and part.get("type") == "output_text" else part
                    for part in item["content"]]
        if item.get("type") in ("message", "function_call", "function_call_output",
                                "custom_tool_call", "custom_tool_call_output"):
            item.setdefault("status", "completed")  # every listed item of these has one
        prefix = {"message": "msg", "function_call": "fc", "function_call_output": "fco",
                  "custom_tool_call": "ctc", "custom_tool_call_output": "ctco",
                  "reasoning": "rs"}.get(str(item.get("type")), "item")
        item.setdefault("id", f"{prefix}_in_{response_id.removeprefix('resp_')}{k:03d}")
        out.append(item)
    return out


# --- POST /v1/responses: the shared endpoint, with the hooks of a stored conversation ----------


def _kept(call: Exchange) -> bool:
    """Unless the request says ``store: false``, its answer is kept."""
    return call.data.get("store") is not False


async def _load_previous(call: Exchange) -> Request | None:
    """The stored conversation ``previous_response_id`` names (None when it names none)."""
    previous_id = call.data.get("previous_response_id")
    if not isinstance(previous_id, str):
        return None
    stored = await anyio.to_thread.run_sync(_store(call.http).get, previous_id)
    if stored is None:
        raise GatewayError(f"Previous response with id '{previous_id}' not found.",
                           "invalid_request", path=("previous_response_id",))
    return _previous(stored.context)


def _decode(call: Exchange) -> Request:
    return codec.decode_request(call.data, previous=call.previous)


def _encode_response(answer: NeutralResponse, call: Exchange) -> dict[str, Any]:
    return codec.encode_response(answer, request=call.request, echo=codec.echo_fields(call.data),
                                 created_at=call.created)


def _put(call: Exchange, body: dict[str, Any], answer: NeutralResponse) -> None:
    """Keep the response object, the request's input items and the conversation so far."""
    assert call.answer_id is not None
    _store(call.http).put(call.answer_id, body, _input_items(call.data.get("input"), call.answer_id),
                          _context(call.data, call.request, answer))


async def _store_answer(call: Exchange, answer: NeutralResponse, body: dict[str, Any]) -> None:
    if _kept(call):
        await anyio.to_thread.run_sync(_put, call, body, answer)


def _stream_bytes(events: Iterator[StreamEvent], call: Exchange) -> Iterator[bytes]:
    """The SSE bytes of a stream (run in the stream's worker thread). A failure before the
    first event propagates (the client gets an HTTP error); after it, the stream ends with
    an ``error`` event and ``response.failed``. A completed response is stored."""
    encoder = codec.StreamEncoder(request=call.request, echo=codec.echo_fields(call.data),
                                  response_id=call.answer_id, created_at=call.created)
    accumulator = Accumulator()

    def tee() -> Iterator[StreamEvent]:
        for event in events:
            accumulator.add(event)
            yield event

    payloads = encoder.encode(tee())
    first = next(payloads, None)
    if first is None:
        return
    yield named_event(first["type"], first)
    try:
        for payload in payloads:
            yield named_event(payload["type"], payload)
    except Exception as exc:  # noqa: BLE001 - the stream has started: an in-stream error
        error = output_error(exc)
        for payload in encoder.fail(error.kind, error.message):
            yield named_event(payload["type"], payload)
        return
    if _kept(call) and encoder.final is not None:
        # (off the event loop when the stream runs on it: a file store's commit waits on disk)
        blocking(_put, call, encoder.final, accumulator.finish())


RESPONSES = WireApi(
    name="responses",
    stream_requested=lambda data, request: codec.stream_requested(data),
    decode=_decode,
    encode_response=_encode_response,
    encode_stream=_stream_bytes,
    error_status=_error_status,
    error_body=_error_body,
    error_chunk=_error_chunk,
    request_id_header="x-request-id",
    new_request_id=lambda: new_id("req_"),
    stream_media_type="text/event-stream; charset=utf-8",
    heartbeat=KEEP_ALIVE,
    check_headers=check_key,
    schema_field=("text", "format"),
    new_answer_id=lambda: new_id("resp_"),
    load_previous=_load_previous,
    store_answer=_store_answer,
)

create_response = api_endpoint(RESPONSES)


# --- GET / DELETE ----------------------------------------------------------------------------


def _not_found(response_id: str) -> GatewayError:
    return GatewayError(f"Response with id '{response_id}' not found.", "not_found")


async def _read(request: HttpRequest) -> tuple[str, Any]:
    state: GatewayState = request.app.state.gateway
    check_key(request, state)
    response_id = request.path_params["response_id"]
    stored = await anyio.to_thread.run_sync(_store(request).get, response_id)
    if stored is None:
        raise _not_found(response_id)
    return response_id, stored


async def get_response(request: HttpRequest) -> Response:
    """``GET /v1/responses/{id}``: the stored response object (``stream=true`` is refused:
    a stored response is not replayed as events)."""
    request_id = new_id("req_")
    try:
        if request.query_params.get("stream") in ("true", "1"):
            raise GatewayError("replaying a stored response as a stream is not supported",
                               "invalid_request", path=("stream",))
        _, stored = await _read(request)
    except Exception as exc:  # noqa: BLE001
        return RESPONSES.error_response(input_error(exc), request_id)
    return JsonResponse(stored.body, headers={RESPONSES.request_id_header: request_id})


async def delete_response(request: HttpRequest) -> Response:
    request_id = new_id("req_")
    try:
        state: GatewayState = request.app.state.gateway
        check_key(request, state)
        response_id = request.path_params["response_id"]
        if not await anyio.to_thread.run_sync(_store(request).delete, response_id):
            raise _not_found(response_id)
    except Exception as exc:  # noqa: BLE001
        return RESPONSES.error_response(input_error(exc), request_id)
    return JsonResponse({"id": response_id, "object": "response", "deleted": True},
                        headers={RESPONSES.request_id_header: request_id})


async def list_input_items(request: HttpRequest) -> Response:
    """``GET /v1/responses/{id}/input_items`` with ``limit`` (1-100, default 20), ``order``
    (``desc`` by default, as the API) and ``after``/``before`` (item ids)."""
    request_id = new_id("req_")
    try:
        query = request.query_params
        limit_text = query.get("limit", "20")
        if not limit_text.isdigit() or not 1 <= int(limit_text) <= 100:
            raise GatewayError("limit must be an integer from 1 to 100", path=("limit",))
        order = query.get("order", "desc")
        if order not in ("asc", "desc"):
            raise GatewayError("order must be 'asc' or 'desc'", path=("order",))
        _, stored = await _read(request)
        items = list(stored.input_items)
        if order == "desc":
            items.reverse()
        for key, keep_after in (("after", True), ("before", False)):
            marker = query.get(key)
            if marker is not None:
                ids = [i.get("id") for i in items]
                if marker not in ids:
                    raise GatewayError(f"no input item with id '{marker}'", path=(key,))
                at = ids.index(marker)
                items = items[at + 1:] if keep_after else items[:at]
        page = items[:int(limit_text)]
    except Exception as exc:  # noqa: BLE001
        return RESPONSES.error_response(input_error(exc), request_id)
    return JsonResponse({"object": "list", "data": page,
                         "first_id": page[0]["id"] if page else None,
                         "last_id": page[-1]["id"] if page else None,
                         "has_more": len(items) > len(page)},
                        headers={RESPONSES.request_id_header: request_id})
