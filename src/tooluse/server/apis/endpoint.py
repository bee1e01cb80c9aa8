"""One endpoint function for every API, parameterised by a small per-API object.

The front ends differ only in facts of their wire format, which each gathers in one
:class:`WireApi` (``MESSAGES`` in :mod:`.messages`, ``CHAT`` in :mod:`.chat`,
``CONVERSE``/``CONVERSE_STREAM`` in :mod:`.converse`, ``RESPONSES`` in :mod:`.responses`;
:mod:`.table` lists them with their paths and routes):

- the codec (is a stream asked for, decode the request, encode the response and the stream),
  each reading the request as an :class:`Exchange` (its JSON, its HTTP side, its ids);
- two optional hooks for an API that keeps state (Responses): load the conversation a
  request continues before decoding it, and store the answer once encoded;
- the error shape (status, body, extra headers, and the in-stream error chunk);
- the request-id header and how ids look;
- the stream framing (media type, heartbeat);
- who may call (a header check before the body is read, a body check after: SigV4).

:func:`api_endpoint` is the single request flow on top of it: check, read, decode, run the
backend (whole or streamed), encode, and every failure rendered in the API's own shape. So
there is no ``if dialect == ...`` anywhere in the server: a new API is a new ``WireApi``.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request as HttpRequest
from starlette.responses import Response

from ...messages import Request
from ...messages import Response as NeutralResponse
from ...stream import StreamEvent
from ...telemetry import chat_span
from ..errors import GatewayError, input_error, output_error
from ..http.auth import check_api_key
from ..http.body import parse_json_object, read_body
from ..http.disconnect import ClientGone, unless_disconnected
from ..http.encoding import JsonResponse, json_bytes
from ..routing import Plan
from ..state import GatewayState
from .call_origins import logged_stream, response_headers

__all__ = ["Exchange", "WireApi", "api_endpoint", "check_key"]

Data = dict[str, Any]


def _no_header_check(request: HttpRequest, state: GatewayState) -> None:
    return None


def check_key(request: HttpRequest, state: GatewayState) -> None:
    """The header check of the key-protected APIs (Messages, Chat Completions)."""
    check_api_key(request.headers, state.api_keys)


def _no_body_check(request: HttpRequest, state: GatewayState, body: bytes) -> None:
    return None


def _no_headers(error: GatewayError) -> dict[str, str]:
    return {}


@dataclass
class Exchange:
    """One request on its way through :func:`api_endpoint`: what an API's codec functions
    and hooks read of it."""

    #: The HTTP request (headers, path parameters).
    http: HttpRequest
    #: The request's JSON body.
    data: Data
    request_id: str
    #: The answer's id when the API makes its own (Responses' ``resp_...``), else None.
    answer_id: str | None = None
    #: When the request arrived (Unix time).
    created: float = field(default_factory=time.time)
    #: The conversation the request continues (Responses' ``previous_response_id``).
    previous: Request | None = None
    #: The decoded request, once decoded.
    neutral: Request | None = None
    #: The backend's latency in ms, once a whole answer is in (Converse reports it).
    latency_ms: int = 0

    @property
    def request(self) -> Request:
        """The decoded request (only asked for once it is)."""
        assert self.neutral is not None
        return self.neutral


@dataclass(frozen=True)
class WireApi:
    """What the gateway must know of one wire API to serve it (all plain functions)."""

    name: str
    # -- the codec
    stream_requested: Callable[[Data, HttpRequest], bool]
    decode: Callable[[Exchange], Request]
    #: The response body.
    encode_response: Callable[[NeutralResponse, Exchange], Data]
    #: The stream's bytes (Chat reads the request's ``stream_options``).
    encode_stream: Callable[[Iterator[StreamEvent], Exchange], Iterator[bytes]]
    # -- the error shape
    error_status: Callable[[GatewayError], int]
    error_body: Callable[[GatewayError], Data]
    error_chunk: Callable[[GatewayError], bytes]
    # -- HTTP side
    request_id_header: str
    new_request_id: Callable[[], str]
    stream_media_type: str
    heartbeat: bytes | None = None
    error_headers: Callable[[GatewayError], dict[str, str]] = _no_headers
    #: Before the body is read (API keys); raises a :class:`GatewayError`.
    check_headers: Callable[[HttpRequest, GatewayState], None] = _no_header_check
    #: After the body is read (a SigV4 signature covers it); raises a :class:`GatewayError`.
    check_body: Callable[[HttpRequest, GatewayState, bytes], None] = _no_body_check
    #: Where this API's request holds the answer's JSON schema (named in a refusal).
    schema_field: tuple[str | int, ...] = ()
    # -- an API that keeps state (Responses)
    #: The id of the answer when the API makes its own; None: the backend's id is kept.
    new_answer_id: Callable[[], str] | None = None
    #: Before decoding: the conversation the request continues (set as
    #: :attr:`Exchange.previous`), or None; raises a :class:`GatewayError`.
    load_previous: Callable[[Exchange], Awaitable[Request | None]] | None = None
    #: After a whole answer is encoded: keep it (the answer and its body). A stream's
    #: ``encode_stream`` keeps its own, once it completed.
    store_answer: Callable[[Exchange, NeutralResponse, Data], Awaitable[None]] | None = None

    def error_response(self, error: GatewayError, request_id: str | None = None) -> Response:
        """The complete HTTP error response for ``error`` in this API's shape."""
        headers = dict(error.headers)
        headers.update(self.error_headers(error))
        if error.retry_after is not None:
            headers["retry-after"] = str(max(0, round(error.retry_after)))
        if request_id:
            headers[self.request_id_header] = request_id
        return Response(
            json_bytes(self.error_body(error)),
            status_code=self.error_status(error),
            headers=headers,
            media_type="application/json",
        )


def api_endpoint(api: WireApi) -> Callable[[HttpRequest], Awaitable[Response]]:
    """The Starlette endpoint serving ``api``: the same flow for every API."""

    async def endpoint(request: HttpRequest) -> Response:
        state: GatewayState = request.app.state.gateway
        request_id = api.new_request_id()
        plan: Plan | None = None

        def fail(error: GatewayError) -> Response:
            if plan is not None:  # the tries that failed, and why
                error.headers.update(plan.answered())
            return api.error_response(error, request_id)

        try:
            api.check_headers(request, state)
            body = await read_body(request, state.max_body_bytes)
            api.check_body(request, state, body)
            data = parse_json_object(body)
            stream = api.stream_requested(data, request)
            call = Exchange(request, data, request_id,
                            api.new_answer_id() if api.new_answer_id is not None else None)
            if api.load_previous is not None:
                call.previous = await api.load_previous(call)
            neutral = call.neutral = api.decode(call)
            plan = await state.plan(neutral, request.headers, api.schema_field)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a native error
            return fail(input_error(exc))
        backend = plan.backend

        if stream:
            plan.headers[api.request_id_header] = request_id
            return state.streaming_response(  # type: ignore[return-value]
                neutral,
                lambda events: api.encode_stream(logged_stream(
                    chat_span(neutral, backend, api=api.name, headers=request.headers,
                              stream=True, response_id=call.answer_id,
                              events=plan.attempts).watch(events), api.name,
                    request_id), call),
                media_type=api.stream_media_type,
                headers=plan.headers,
                error_response=fail,
                error_chunk=api.error_chunk,
                heartbeat=api.heartbeat,
                backend=backend,
            )
        try:
            started = time.monotonic()
            with chat_span(neutral, backend, api=api.name, headers=request.headers,
                           events=plan.attempts) as span:
                response = await unless_disconnected(request.receive,
                                                     lambda: state.complete(neutral, backend))
                if call.answer_id is not None:
                    response = response.model_copy(update={"id": call.answer_id})
                span.record(response)
            call.latency_ms = int((time.monotonic() - started) * 1000)
            out = api.encode_response(response, call)
            if api.store_answer is not None:
                await api.store_answer(call, response, out)
        except ClientGone:  # the client left: its upstream call was stopped; nobody reads this
            return fail(GatewayError("the client disconnected", "api"))
        except Exception as exc:  # noqa: BLE001 - every failure becomes a native error
            return fail(output_error(exc))
        headers = {api.request_id_header: request_id, **plan.answered(),
                   **response_headers(api.name, request_id, response)}
        return JsonResponse(out, headers=headers)

    endpoint.__name__ = f"{api.name}_endpoint"
    return endpoint
