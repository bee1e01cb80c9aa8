"""An httpx2 transport on aiohttp: the HTTP backends' async calls, at a third of the CPU.

The gateway spends most of an upstream call's CPU in the HTTP client. Measured per request
against a local upstream that answers at once (one process, sequential, ``getrusage``):
httpx2's ``AsyncClient`` 0.55-0.63 ms for a JSON answer and 0.94-0.99 ms for a short SSE
stream; aiohttp's client (its HTTP parser is C) 0.14-0.19 ms and 0.24-0.31 ms. Half of
httpx2's cost is its client layer above the transport, so :class:`~._upstream.Upstream`
calls this transport directly; the other half is httpcore2's pool and h11.

It is an :class:`httpx2.AsyncBaseTransport`, so everything above it (retries, timeouts,
error mapping, ``httpx2.Response`` and its SSE reading) stays the one plumbing every backend
shares: aiohttp's failures come back as httpx2's exceptions (``ConnectError``,
``ConnectTimeout``, ``ReadTimeout``, ``ReadError``, ``RemoteProtocolError``).

Used only where it changes nothing a user sees (:func:`usable`): aiohttp installed (the
``server`` extra brings it), no proxy in the environment (httpx2 and aiohttp read those
variables differently), and TLS verified with the very context httpx2 builds
(:func:`httpx2.create_ssl_context`). No automatic decompression: the body is passed to
httpx2, which decodes it as it would its own transport's.
"""

from __future__ import annotations

import asyncio
import os
import warnings
import weakref
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import httpx2

if TYPE_CHECKING:
    import aiohttp

__all__ = ["READ_BODY", "AiohttpTransport", "usable"]

#: A request extension: the caller wants the whole body, read before the response returns.
READ_BODY = "tooluse.read_body"

_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")


def usable() -> bool:
    """Whether this transport may replace httpx2's own here (see the module's docstring)."""
    if any(os.environ.get(name) or os.environ.get(name.upper()) for name in _PROXY_VARIABLES):
        return False
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        return False
    return True


class AiohttpTransport(httpx2.AsyncBaseTransport):
    """One aiohttp session (its keep-alive pool) for one event loop."""

    def __init__(self, *, max_connections: int = 100) -> None:
        self._max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        import aiohttp

        connector = aiohttp.TCPConnector(limit=self._max_connections,
                                         ssl=httpx2.create_ssl_context())
        self._session = aiohttp.ClientSession(connector=connector, auto_decompress=False,
                                              skip_auto_headers=("User-Agent",))
        weakref.finalize(self, _close_now, self._session)
        return self._session

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        import aiohttp
        import yarl

        session = self._session or self._open()
        timeout = request.extensions.get("timeout") or {}
        connect = timeout.get("connect")
        pool = timeout.get("pool")
        client_timeout = aiohttp.ClientTimeout(
            total=None, sock_read=timeout.get("read"), sock_connect=connect,
            connect=None if connect is None or pool is None else connect + pool)
        try:
            # encoded=True: sent as given, not re-quoted (a SigV4 signature covers the path
            # with its %3A escapes; yarl would decode them)
            response = await session.request(
                request.method, yarl.URL(str(request.url), encoded=True), data=request.content,
                headers=request.headers.multi_items(), timeout=client_timeout,
                allow_redirects=False)
        except Exception as exc:
            raise _mapped(exc, request) from exc
        if request.extensions.get(READ_BODY):
            # the whole body now: one read, no async iteration through httpx2's stream
            try:
                body = await response.read()
            except Exception as exc:
                response.close()
                raise _mapped(exc, request) from exc
            response.release()
            return httpx2.Response(response.status, headers=response.raw_headers, content=body,
                                   request=request, extensions={"http_version": b"HTTP/1.1"})
        return httpx2.Response(response.status, headers=response.raw_headers,
                               stream=_Body(response, request), request=request,
                               extensions={"http_version": b"HTTP/1.1"})

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def abandon(self) -> None:
        """Close at once, without the event loop (the one it was made on has ended): its
        sockets are shut and nothing warns about an unclosed session later."""
        session, self._session = self._session, None
        if session is not None:
            _close_now(session)


def _close_now(session: aiohttp.ClientSession) -> None:
    """Close ``session`` and its sockets without awaiting (also when it is garbage: a
    backend nobody closed, at exit; aiohttp would print a warning for it, httpx2 does not)."""
    import aiohttp

    if session.closed:
        return
    connector = session.connector
    session.detach()
    if connector is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # the base class's close shuts the sockets now (TCPConnector's own is a
            # coroutine doing the same and then waiting, which needs the loop)
            waiter: Any = aiohttp.BaseConnector.close(connector)
            close = getattr(waiter, "close", None)
            if close is not None:
                close()
            del waiter


class _Body(httpx2.AsyncByteStream):
    """The response body as aiohttp reads it, with its failures as httpx2's."""

    def __init__(self, response: aiohttp.ClientResponse, request: httpx2.Request) -> None:
        self._response = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.content.iter_any():
                yield chunk
        except Exception as exc:
            raise _mapped(exc, self._request) from exc

    async def aclose(self) -> None:
        # A body read to its end returns the connection to the pool; one left half-read
        # (the caller stopped) closes it, as no later request could use it.
        self._response.release() if self._response.content.at_eof() else self._response.close()


def _mapped(exc: Exception, request: httpx2.Request) -> Exception:
    """aiohttp's (and asyncio's) failure as the httpx2 exception meaning the same."""
    import aiohttp

    message = str(exc) or type(exc).__name__
    error: type[httpx2.TransportError]
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        error = httpx2.ConnectTimeout
    elif isinstance(exc, (asyncio.TimeoutError, aiohttp.ServerTimeoutError)):
        error = httpx2.ReadTimeout
    elif isinstance(exc, aiohttp.ClientConnectorError):
        error = httpx2.ConnectError
    elif isinstance(exc, (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError,
                          aiohttp.ClientResponseError)):
        error = httpx2.RemoteProtocolError
    elif isinstance(exc, (aiohttp.ClientError, OSError)):
        error = httpx2.ReadError
    else:
        return exc
    return error(message, request=request)

