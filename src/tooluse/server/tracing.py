"""The gateway's per-request traces (``create_app(trace=...)``, ``tooluse serve --trace``).

:class:`TraceMiddleware` is a plain ASGI middleware around the app, installed only when
tracing is on (off, the gateway runs exactly as without it). For each model request (a
``POST`` other than ``count_tokens``) it makes a :class:`~tooluse.trace.Trace` current for
the request's whole path, so the gateway's state, the backend and a text model write into
that request's own trace, whatever else runs at the same time. It records the request as
received (headers redacted, the body), the status and body as sent (a stream's bytes as
written), and hands the trace to the store's writer thread once the answer is out: nothing
is serialised or written on the request's path.
"""

from __future__ import annotations

from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..trace import Trace, tracing
from ..trace.store import TraceStore
from .apis import table

__all__ = ["TraceMiddleware", "api_of_path"]

#: A stream's bytes kept per trace (the rest is counted, not kept).
MAX_SENT_BYTES = 1024 * 1024



def api_of_path(path: str) -> str | None:
    """The name of the wire API a request path belongs to (``messages``,
    ``chat_completions``, ``converse``, ``responses``), None where a ``POST`` to it is no
    model request (``count_tokens``)."""
    api = table.api_of_path(path)
    return api.name if api.traced else None


class TraceMiddleware:
    """Trace every model request of ``app`` into ``store`` (see the module docstring)."""

    def __init__(self, app: ASGIApp, store: TraceStore, backend: str | None = None) -> None:
        self.app = app
        self.store = store
        self.backend = backend

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        api = api_of_path(scope["path"]) if scope["type"] == "http" else None
        if api is None or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        trace = Trace(source="gateway", api=api, backend=self.backend)
        received: list[bytes] = []
        sent: list[bytes] = []
        size = 0
        status: list[int] = []

        async def receive_body() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                received.append(message.get("body", b""))
            return message

        async def send_body(message: Message) -> None:
            nonlocal size
            if message["type"] == "http.response.start":
                status.append(message["status"])
            elif message["type"] == "http.response.body":
                chunk: bytes = message.get("body", b"")
                if size < MAX_SENT_BYTES:
                    sent.append(chunk[:MAX_SENT_BYTES - size])
                size += len(chunk)
            await send(message)

        try:
            with tracing(trace):
                await self.app(scope, receive_body, send_body)
        except BaseException as exc:
            trace.fail(exc)
            raise
        finally:
            headers: Any = scope.get("headers", [])
            trace.received("POST", scope["path"],
                           ((k.decode("latin-1"), v.decode("latin-1")) for k, v in headers),
                           b"".join(received))
            body = b"".join(sent)
            if size > MAX_SENT_BYTES:
                body += f"\n...[cut: {size - MAX_SENT_BYTES} more bytes]".encode()
            trace.sent(status[0] if status else None, body)
            self.store.submit(trace)
