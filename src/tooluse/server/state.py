"""What every endpoint shares: the backend, the limits, the credentials.

The API front ends differ only in their wire codec and error shape; running the
backend — under the optional concurrency limit, with the tool-call policy applied — is
the same for all of them and lives here, so the same conversation reaches the backend as
the same neutral request whichever API it came through.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field

import anyio
from starlette.responses import Response as HttpResponse

from .._greenlet_bridge import sync_iter
from ..backend import Backend
from ..messages import Request, Response
from ..stream import MessageStart, StreamEvent, terminated
from ..trace import begin_turn
from .errors import GatewayError
from .http.streaming import DEFAULT_STREAM_THREADS, GatewayStreamingResponse
from .policy import limit_response_calls, limit_stream_calls, max_tool_calls
from .routing import Plan, Router
from .server_tools import ServerToolOptions

__all__ = ["GatewayState", "new_id"]


def new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


@dataclass
class GatewayState:
    backend: Backend
    api_keys: tuple[str, ...] = ()
    aws_credentials: dict[str, str] = field(default_factory=dict)
    max_body_bytes: int = 32 * 1024 * 1024
    limiter: anyio.CapacityLimiter | None = None
    ping_interval: float = 10.0
    #: Worker threads for streams, per app (a limiter belongs to one event loop).
    stream_threads: anyio.CapacityLimiter = field(
        default_factory=lambda: anyio.CapacityLimiter(DEFAULT_STREAM_THREADS)
    )
    #: Which backend answers which model (``--backend`` alone: one route to ``backend``).
    router: Router = field(kw_only=True)
    #: The tools the gateway runs for the model (tool search, MCP servers) around the
    #: backend a plan picks.
    server_tools: ServerToolOptions = field(default_factory=ServerToolOptions)

    async def plan(self, request: Request, headers: Mapping[str, str],
                   schema_field: tuple[str | int, ...] = ()) -> Plan:
        """How ``request`` is served (:meth:`.routing.Router.plan`): its backend (with the
        server tools the gateway runs around it, when the request has some the backend
        does not run itself), or the native error (no such model, a key's model or limit, a request the backend cannot
        serve, named at ``schema_field`` when it is the answer's schema)."""
        return await self.router.plan(
            request, headers, schema_field,
            around=lambda backend: self.server_tools.serving(backend, request))

    async def complete(self, request: Request, backend: Backend | None = None) -> Response:
        """The backend's whole answer (``backend``: a plan's, else the app's), with the
        tool-call policy applied (and the turn of the request's trace, when it is traced)."""
        turn = begin_turn(request)
        async with AsyncExitStack() as stack:
            if self.limiter is not None:
                await stack.enter_async_context(self.limiter)
            try:
                response = await (backend or self.backend).acomplete(request)
            except BaseException as exc:
                if turn is not None:
                    turn.fail(exc)
                raise
        response = limit_response_calls(response, max_tool_calls(request))
        if not response.id:
            response = response.model_copy(update={"id": new_id("msg_")})
        if response.model is None:
            response = response.model_copy(update={"model": request.model or self.backend.model})
        if turn is not None:
            turn.finish(response)
        return response

    def streaming_response(
        self,
        request: Request,
        encode: Callable[[Iterator[StreamEvent]], Iterator[bytes]],
        *,
        media_type: str,
        headers: dict[str, str],
        error_response: Callable[[GatewayError], HttpResponse],
        error_chunk: Callable[[GatewayError], bytes],
        heartbeat: bytes | None = None,
        backend: Backend | None = None,
    ) -> GatewayStreamingResponse:
        """The streaming answer to ``request`` (from ``backend``: a plan's, else the
        app's), under this app's limits. ``headers`` is sent as it is when the stream
        starts (a plan adds its route to it before the first event comes out)."""
        return GatewayStreamingResponse(
            self.stream_producer(request, encode, backend),
            media_type=media_type,
            headers=headers,
            error_response=error_response,
            error_chunk=error_chunk,
            heartbeat=heartbeat,
            heartbeat_interval=self.ping_interval,
            limiter=self.limiter,
            threads=self.stream_threads,
            inline=_natively_async(backend or self.backend),
        )

    def stream_producer(
        self, request: Request, encode: Callable[[Iterator[StreamEvent]], Iterator[bytes]],
        backend: Backend | None = None,
    ) -> Callable[[], Iterator[bytes]]:
        """A function, run in a worker thread, yielding the wire bytes of the stream.

        The backend's generator is closed explicitly when the consumer stops, in the same
        thread, so a model stops generating as soon as nobody listens.
        """
        limit = max_tool_calls(request)
        source = backend or self.backend
        default_model = request.model or source.model

        def produce() -> Iterator[bytes]:
            turn = begin_turn(request)  # in the request's context: the worker copies it
            events = (sync_iter(source.astream(request)) if _natively_async(source)
                      else source.stream(request))
            watched = turn.watch(events) if turn is not None else events
            try:
                checked = _complete_only(watched)
                yield from encode(_fill_start(limit_stream_calls(checked, limit), default_model))
            finally:
                if watched is not events:
                    watched.close()  # type: ignore[attr-defined]
                close = getattr(events, "close", None)
                if close is not None:
                    close()

        return produce


def _natively_async(backend: Backend) -> bool:
    """Whether ``backend`` streams natively async (an HTTP upstream): its stream's pipeline
    then runs on the event loop (``inline``), the others' in a worker thread."""
    return type(backend).astream is not Backend.astream


def _complete_only(events: Iterator[StreamEvent]) -> Iterator[StreamEvent]:
    """The backend's events, failing when the stream says nothing or stops short
    (:func:`~tooluse.stream.terminated`).

    An empty stream fails before anything is written, so every API answers it with its
    native HTTP error instead of a 200 (Chat Completions used to send a bare ``[DONE]``); a
    stream that ends without ``message_stop`` fails where it ended, so the client gets the
    API's in-stream error rather than a cut answer that looks complete.
    """
    def incomplete(produced: bool) -> GatewayError:
        if not produced:
            return GatewayError("the backend produced no output", "api")
        return GatewayError(
            "the backend's stream ended before the answer did (no message_stop): the answer "
            "is incomplete",
            "api",
        )

    return terminated(events, incomplete)


def _fill_start(events: Iterator[StreamEvent], model: str | None) -> Iterator[StreamEvent]:
    """Give the stream an id and model when the backend left them empty."""
    for event in events:
        if isinstance(event, MessageStart) and (not event.id or event.model is None):
            event = event.model_copy(
                update={"id": event.id or new_id("msg_"), "model": event.model or model}
            )
        yield event
