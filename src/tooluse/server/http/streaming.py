"""Streaming a backend's answer to a client, stopping the backend when the client leaves.

Why a response class of our own rather than Starlette's ``StreamingResponse``:

- **The status is decided by the first event.** A backend that fails before producing
  anything (rate limit, bad credentials upstream) must answer with the API's native HTTP
  error, not a 200 stream holding an error; only failures *after* the first byte become an
  in-stream error (``event: error``, an exception frame, an OpenAI ``data: {"error"}``).
- **A disconnect stops generation.** Starlette only notices a vanished client when a write
  fails (ASGI 2.4) or cancels the writer task without closing the source; here a watcher
  task sees ``http.disconnect`` at once, cancels the writer, and the worker thread stops
  pulling events from the backend and closes its generator (which is what makes a local
  model stop generating tokens).
- **Keep-alive.** While the backend is silent (a slow local model), a heartbeat chunk
  (Anthropic ``ping``) is written at an interval so proxies do not cut the connection.

The backend stream and the codec's ``encode_events`` are both synchronous generators; the
whole pipeline (backend events → tool-call limit → wire events → bytes) runs in one worker
thread per stream, on a thread limiter of its own so streams never starve the default
thread pool that non-streaming requests use. Over a natively async backend (an HTTP
upstream) it runs ``inline`` instead: in a greenlet on the event loop
(:mod:`tooluse._greenlet_bridge`), its bytes queued without a thread hand-off; a proxied
stream's server CPU was mostly those hand-offs.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack
from typing import Any, Final

import anyio
import anyio.from_thread
import anyio.to_thread
from anyio import CancelScope
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from ..._greenlet_bridge import iterate
from ...cancel import CancelSignal, cancelling
from ..errors import GatewayError, output_error

__all__ = ["DEFAULT_STREAM_THREADS", "GatewayStreamingResponse"]

log = logging.getLogger("tooluse.server")

#: Worker threads available to an app's concurrent streams (each holds one while it runs).
DEFAULT_STREAM_THREADS: Final = 256

_DATA: Final = "data"
_ERROR: Final = "error"
_END: Final = "end"
#: Chunks a worker may queue ahead of a slow client before it waits (backpressure).
_QUEUE_LIMIT: Final = 256


class _Closed(Exception):
    """The writer has gone; the worker must stop."""


class _Pipe:
    """Hands items from the worker thread to the event loop, waking the loop once per batch.

    A round trip to the event loop per chunk (``anyio.from_thread.run``) made a stream slow
    on its own (docs/benchmarks/code.md); here the worker appends to a deque and only wakes the
    writer when the writer is waiting, and the writer takes everything queued at once and
    writes it as one body chunk.
    """

    def __init__(self, limit: int = _QUEUE_LIMIT) -> None:
        self._items: deque[tuple[str, Any]] = deque()
        self._cond = threading.Condition()
        self._limit = limit
        self._waiting = False
        self._wake = anyio.Event()
        self._closed = False
        self._room: anyio.Event | None = None  # a producer on the loop waits for room

    # -- worker thread side
    def put(self, kind: str, value: Any) -> None:
        with self._cond:
            while len(self._items) >= self._limit and not self._closed:
                self._cond.wait(0.5)
            if self._closed:
                raise _Closed
            self._items.append((kind, value))
            wake, self._waiting = self._waiting, False
        if wake:
            try:
                anyio.from_thread.run_sync(self._set_wake)
            except RuntimeError:  # the event loop is shutting down
                raise _Closed from None

    def _set_wake(self) -> None:
        self._wake.set()

    # -- a producer on the event loop (inline) side
    async def aput(self, kind: str, values: list[Any]) -> None:
        """Queue ``values`` as items of ``kind`` from the event loop's thread."""
        while True:
            with self._cond:
                if self._closed:
                    raise _Closed
                if len(self._items) < self._limit:
                    self._items.extend((kind, value) for value in values)
                    wake, self._waiting = self._waiting, False
                    break
                room = self._room = anyio.Event()
            await room.wait()
        if wake:
            self._wake.set()

    # -- event loop side
    async def get_batch(self) -> list[tuple[str, Any]]:
        while True:
            with self._cond:
                if self._items:
                    batch = list(self._items)
                    self._items.clear()
                    self._cond.notify_all()
                    if self._room is not None:
                        self._room.set()
                        self._room = None
                    return batch
                self._wake = anyio.Event()
                self._waiting = True
            await self._wake.wait()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            room, self._room = self._room, None
        if room is not None:
            room.set()


class GatewayStreamingResponse:
    """An ASGI response streaming ``produce()``'s byte chunks.

    ``produce`` runs in a worker thread and returns a synchronous iterator of chunks.
    ``error_response`` renders a failure that happens before the first chunk (a complete
    HTTP error); ``error_chunk`` renders one that happens after (written into the stream,
    which then ends).
    """

    def __init__(
        self,
        produce: Callable[[], Iterator[bytes]],
        *,
        media_type: str,
        error_response: Callable[[GatewayError], Response],
        error_chunk: Callable[[GatewayError], bytes],
        headers: dict[str, str] | None = None,
        heartbeat: bytes | None = None,
        heartbeat_interval: float = 10.0,
        limiter: anyio.CapacityLimiter | None = None,
        threads: anyio.CapacityLimiter | None = None,
        inline: bool = False,
    ) -> None:
        self.produce = produce
        self.inline = inline
        self.media_type = media_type
        self.error_response = error_response
        self.error_chunk = error_chunk
        #: Sent when the stream starts (not copied: the producer may add to it until then).
        self.headers = headers if headers is not None else {}
        self.heartbeat = heartbeat
        self.heartbeat_interval = heartbeat_interval
        self.limiter = limiter
        self.threads = threads
        #: Set once the client went away before the stream ended (for tests and logs).
        self.disconnected = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        pipe = _Pipe()
        # Set when the writer ends (the client left, or the stream is over); current in the
        # worker thread, so the backend's HTTP plumbing stops retrying and aborts a socket
        # read blocked on a silent upstream (tooluse.cancel).
        stop = CancelSignal()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._watch_disconnect, receive, tg.cancel_scope)
            tg.start_soon(self._run_producer, pipe, stop)
            try:
                await self._write(scope, receive, send, pipe)
            finally:
                stop.set()
                pipe.close()
                tg.cancel_scope.cancel()

    async def _watch_disconnect(self, receive: Receive, scope: CancelScope) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self.disconnected = True
                scope.cancel()
                return

    async def _run_producer(self, pipe: _Pipe, stop: CancelSignal) -> None:
        if self.inline:
            await self._run_inline(pipe, stop)
            return

        def work() -> None:
            with cancelling(stop):
                pump()

        def pump() -> None:
            chunks: Iterator[bytes] | None = None
            try:
                chunks = self.produce()
                for chunk in chunks:
                    if stop.is_set():
                        return
                    pipe.put(_DATA, chunk)
                pipe.put(_END, None)
            except _Closed:
                return
            except BaseException as exc:  # noqa: BLE001 - handed to the writer, which renders it
                if not stop.is_set():
                    try:
                        pipe.put(_ERROR, exc)
                    except _Closed:
                        log.debug("stream error after the client left", exc_info=exc)
            finally:
                close = getattr(chunks, "close", None)
                if close is not None:
                    try:
                        close()  # stops the backend's generator in this same thread
                    except Exception:
                        log.warning("closing the backend stream failed", exc_info=True)

        async with AsyncExitStack() as stack:
            if self.limiter is not None:
                await stack.enter_async_context(self.limiter)
            await anyio.to_thread.run_sync(work, limiter=self.threads)

    async def _run_inline(self, pipe: _Pipe, stop: CancelSignal) -> None:
        """The pipeline in a greenlet on the loop: the same steps as the thread's ``pump``
        (its generators closed when it ends, however it ends)."""
        async with AsyncExitStack() as stack:
            if self.limiter is not None:
                await stack.enter_async_context(self.limiter)
            try:
                with cancelling(stop):  # current in the pipeline's copy of the context
                    async for chunks in iterate(self.produce):
                        if stop.is_set():
                            return
                        await pipe.aput(_DATA, chunks)
                await pipe.aput(_END, [None])
            except _Closed:
                return
            except Exception as exc:  # noqa: BLE001 - handed to the writer, which renders it
                if not stop.is_set():
                    try:
                        await pipe.aput(_ERROR, [exc])
                    except _Closed:
                        log.debug("stream error after the client left", exc_info=exc)

    async def _write(self, scope: Scope, receive: Receive, send: Send, pipe: _Pipe) -> None:
        batch = await pipe.get_batch()
        kind, value = batch[0]
        if kind != _DATA:
            error = value if kind == _ERROR else GatewayError("the backend produced no output", "api")
            await self.error_response(self._gateway_error(error))(scope, receive, send)
            return
        raw_headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in self.headers.items()]
        raw_headers.append((b"content-type", self.media_type.encode("latin-1")))
        raw_headers.append((b"cache-control", b"no-cache"))
        try:
            await send({"type": "http.response.start", "status": 200, "headers": raw_headers})
            while True:
                out: list[bytes] = []
                finished = False
                for kind, value in batch:
                    if kind == _DATA:
                        out.append(value)
                        continue
                    if kind == _ERROR:
                        out.append(self.error_chunk(self._gateway_error(value)))
                    finished = True
                    break
                if finished:  # the last bytes and the end in one write
                    await send({"type": "http.response.body", "body": b"".join(out),
                                "more_body": False})
                    return
                if out:
                    await send({"type": "http.response.body", "body": b"".join(out), "more_body": True})
                batch = []
                with anyio.move_on_after(self.heartbeat_interval if self.heartbeat else None):
                    batch = await pipe.get_batch()
                if not batch:
                    assert self.heartbeat is not None
                    batch = [(_DATA, self.heartbeat)]
        except OSError:  # the client went away (ASGI 2.4 servers raise on write)
            self.disconnected = True

    @staticmethod
    def _gateway_error(exc: BaseException) -> GatewayError:
        return exc if isinstance(exc, GatewayError) else output_error(exc)
