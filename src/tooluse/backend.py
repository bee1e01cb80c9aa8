"""The one small interface every model backend implements.

A backend turns a neutral :class:`~tooluse.messages.Request` into a neutral
:class:`~tooluse.messages.Response`, or into a stream of neutral events
(:mod:`tooluse.stream`). A subclass implements **one** of :meth:`Backend.stream` or
:meth:`Backend.complete`; the other and the async pair derive from it. Backends with a
native async client (HTTP) override :meth:`Backend.astream` / :meth:`Backend.acomplete` too,
so the event loop never blocks on them.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import anyio.to_thread

from .messages import Request, Response
from .stream import StreamEvent, aaccumulate, accumulate, events_from_response

__all__ = ["Backend"]

_DONE = object()


class Backend:
    """Base class of model backends. Override ``stream`` or ``complete`` (at least one)."""

    #: Short name used in spec strings (``"anthropic"``, ``"bedrock"``, ``"scripted"``...).
    name: str = "backend"
    #: A model identifier to report in responses when the request names none.
    model: str | None = None
    #: Wire APIs (codec ``TARGET``s) whose ``Request.passthrough`` this backend sends on to
    #: an upstream speaking the same API; every other backend ignores passthrough.
    forwards: frozenset[str] = frozenset()
    #: Whether the backend guarantees ``Request.response_schema`` (structured output).
    structured_output: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.stream is Backend.stream and cls.complete is Backend.complete and not (
            cls.astream is not Backend.astream or cls.acomplete is not Backend.acomplete
        ):
            raise TypeError(f"{cls.__name__} must override stream() or complete()")

    # -- sync -------------------------------------------------------------------------------
    def complete(self, request: Request) -> Response:
        """Run the request to the end and return the whole response."""
        if type(self).stream is not Backend.stream:
            return accumulate(self.stream(request))
        return anyio.run(self.acomplete, request)

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        """Yield the response as :mod:`tooluse.stream` events."""
        if type(self).complete is not Backend.complete:
            yield from events_from_response(self.complete(request))
            return
        yield from _iterate_async(self.astream(request))

    def count_tokens(self, request: Request) -> int | None:
        """The input tokens ``request`` costs, exactly, or None when the backend cannot tell
        without running it (the gateway then estimates)."""
        return None

    # -- async ------------------------------------------------------------------------------
    async def acomplete(self, request: Request) -> Response:
        if type(self).astream is not Backend.astream:
            return await aaccumulate(self.astream(request))
        return await anyio.to_thread.run_sync(self.complete, request)

    async def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        if type(self).acomplete is not Backend.acomplete and type(self).stream is Backend.stream:
            for event in events_from_response(await self.acomplete(request)):
                yield event
            return
        # Run the synchronous stream in a worker thread and hand events over a bounded
        # queue, so a blocking backend (llama.cpp, boto3) never blocks the event loop. No
        # task group here: an error must reach the caller as itself, not wrapped in an
        # ExceptionGroup, and a consumer that stops early must stop the producer too.
        import asyncio  # here, not at the top: a synchronous program never needs it

        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=16)
        cancelled = threading.Event()

        def put(item: Any) -> None:
            try:
                asyncio.run_coroutine_threadsafe(queue.put(item), loop).result()
            except RuntimeError:  # the loop is gone: nobody is listening any more
                cancelled.set()

        def produce() -> None:
            events = self.stream(request)
            try:
                for event in events:
                    if cancelled.is_set():
                        return
                    put(event)
                put(_DONE)
            except BaseException as exc:  # noqa: BLE001 - handed to the consumer, re-raised there
                if not cancelled.is_set():
                    put(exc)
            finally:
                close = getattr(events, "close", None)
                if close is not None:
                    close()

        # In a copy of this context, as anyio's worker threads do: the request's trace
        # (tooluse.trace) reaches the backend.
        worker = loop.run_in_executor(None, contextvars.copy_context().run, produce)
        try:
            while True:
                item = await queue.get()
                if item is _DONE:
                    break
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            cancelled.set()
            while not queue.empty():  # unblock a producer waiting on a full queue
                queue.get_nowait()
            if worker.done():
                worker.exception()  # retrieved, so asyncio does not log it

    def close(self) -> None:
        """Release resources (HTTP connections, loaded models)."""


def _iterate_async(agen: AsyncIterator[StreamEvent]) -> Iterator[StreamEvent]:
    """Drive an async iterator from sync code on a private event loop."""
    import asyncio

    loop = asyncio.new_event_loop()
    try:
        while True:
            try:
                yield loop.run_until_complete(agen.__anext__())
            except StopAsyncIteration:
                break
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
