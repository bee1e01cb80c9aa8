"""What every endpoint shares: the backend, the limits, the credentials.

The API front ends differ only in their wire codec and error shape; running the
backend — under the optional concurrency limit, with the tool-call policy applied — is
the same for all of them and lives here, so the same conversation reaches the backend as
the same neutral request whichever API it came through.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field

import anyio
from starlette.responses import Response as HttpResponse

from ..backend import Backend
from ..messages import Request, Response
from ..stream import MessageStart, StreamEvent, terminated
from ..trace import begin_turn
from .errors import GatewayError
from .policy import limit_response_calls, limit_stream_calls, max_tool_calls
from .streaming import DEFAULT_STREAM_THREADS, GatewayStreamingResponse

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

    async def complete(self, request: Request) -> Response:
        """The backend's whole answer, with the tool-call policy applied (and the turn
        of the request's trace, when it is traced)."""
        turn = begin_turn(request)
        async with AsyncExitStack() as stack:
            if self.limiter is not None:
                await stack.enter_async_context(self.limiter)
            try:
                response = await self.backend.acomplete(request)
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
    ) -> GatewayStreamingResponse:
        """The streaming answer to ``request``, under this app's limits."""
        return GatewayStreamingResponse(
            self.stream_producer(request, encode),
            media_type=media_type,
            headers=headers,
            error_response=error_response,
            error_chunk=error_chunk,
            heartbeat=heartbeat,
            heartbeat_interval=self.ping_interval,
            limiter=self.limiter,
            threads=self.stream_threads,
        )

    def stream_producer(
        self, request: Request, encode: Callable[[Iterator[StreamEvent]], Iterator[bytes]]
    ) -> Callable[[], Iterator[bytes]]:
        """A function, run in a worker thread, yielding the wire bytes of the stream.

        The backend's generator is closed explicitly when the consumer stops, in the same
        thread, so a model stops generating as soon as nobody listens.
        """
        limit = max_tool_calls(request)
        default_model = request.model or self.backend.model

        def produce() -> Iterator[bytes]:
            turn = begin_turn(request)  # in the request's context: the worker copies it
            events = self.backend.stream(request)
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
