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
thread pool that non-streaming requests use.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack
from typing import Any, Final

import anyio
import anyio.from_thread
import anyio.to_thread
from anyio import CancelScope
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from .errors import GatewayError, from_exception

__all__ = ["STREAM_THREADS", "GatewayStreamingResponse"]

log = logging.getLogger("tooluse.server")

#: Worker threads available to concurrent streams (each stream holds one while it runs).
STREAM_THREADS: Final = anyio.CapacityLimiter(256)

_DATA: Final = "data"
_ERROR: Final = "error"


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
        on_finish: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.produce = produce
        self.media_type = media_type
        self.error_response = error_response
        self.error_chunk = error_chunk
        self.headers = dict(headers or {})
        self.heartbeat = heartbeat
        self.heartbeat_interval = heartbeat_interval
        self.limiter = limiter
        self.on_finish = on_finish
        #: Set once the client went away before the stream ended (for tests and logs).
        self.disconnected = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        send_items, items = anyio.create_memory_object_stream[tuple[str, Any]](32)
        stop = threading.Event()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._watch_disconnect, receive, tg.cancel_scope)
                tg.start_soon(self._run_producer, send_items, stop)
                try:
                    await self._write(scope, receive, send, items)
                finally:
                    stop.set()
                    items.close()
                    tg.cancel_scope.cancel()
        finally:
            if self.on_finish is not None:
                await self.on_finish()

    async def _watch_disconnect(self, receive: Receive, scope: CancelScope) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self.disconnected = True
                scope.cancel()
                return

    async def _run_producer(
        self, send_items: Any, stop: threading.Event
    ) -> None:
        def work() -> None:
            chunks: Iterator[bytes] | None = None
            try:
                chunks = self.produce()
                for chunk in chunks:
                    if stop.is_set():
                        return
                    anyio.from_thread.run(send_items.send, (_DATA, chunk))
            except BaseException as exc:  # noqa: BLE001 - handed to the writer, which renders it
                if not stop.is_set():
                    try:
                        anyio.from_thread.run(send_items.send, (_ERROR, exc))
                    except Exception:
                        log.debug("stream error after the client left", exc_info=exc)
            finally:
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()  # stops the backend's generator in this same thread

        async with AsyncExitStack() as stack:
            await stack.enter_async_context(send_items)
            if self.limiter is not None:
                await stack.enter_async_context(self.limiter)
            await anyio.to_thread.run_sync(work, limiter=STREAM_THREADS)

    async def _write(self, scope: Scope, receive: Receive, send: Send, items: Any) -> None:
        try:
            kind, value = await items.receive()
        except anyio.EndOfStream:
            kind, value = _ERROR, GatewayError("the backend produced no output", "api")
        if kind == _ERROR:
            await self.error_response(self._gateway_error(value))(scope, receive, send)
            return
        raw_headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in self.headers.items()]
        raw_headers.append((b"content-type", self.media_type.encode("latin-1")))
        raw_headers.append((b"cache-control", b"no-cache"))
        try:
            await send({"type": "http.response.start", "status": 200, "headers": raw_headers})
            await send({"type": "http.response.body", "body": value, "more_body": True})
            while True:
                with anyio.move_on_after(self.heartbeat_interval if self.heartbeat else None) as idle:
                    try:
                        kind, value = await items.receive()
                    except anyio.EndOfStream:
                        break
                if idle.cancelled_caught:
                    assert self.heartbeat is not None
                    await send({"type": "http.response.body", "body": self.heartbeat, "more_body": True})
                    continue
                if kind == _ERROR:
                    chunk = self.error_chunk(self._gateway_error(value))
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    break
                await send({"type": "http.response.body", "body": value, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:  # the client went away (ASGI 2.4 servers raise on write)
            self.disconnected = True

    @staticmethod
    def _gateway_error(exc: BaseException) -> GatewayError:
        error = from_exception(exc)
        if error.kind == "api" and not isinstance(exc, GatewayError):
            log.error("unexpected error while streaming", exc_info=exc)
        return error
