"""The one HTTP plumbing of every HTTP backend: client lifetime, timeouts, retries,
cancellation, and the mapping of HTTP and transport failures to :class:`BackendError`.

The Anthropic, OpenAI and openai-prompt backends differ in their wire formats (the codecs'
job) and their error bodies (an ``error_from_body`` each); everything about *talking HTTP*
to an upstream is here, once, for the sync and the async client alike:

- **Timeouts** (:class:`Timeouts`, httpx2's :class:`httpx2.Timeout` per attempt):
  ``connect`` to open a connection; ``read``, the longest silence allowed while a stream
  is awaited or read; ``total``, a deadline for the whole call until its answer starts
  (every attempt, every wait between attempts, and the whole body of a non-streamed answer,
  which an upstream generates in silence). A silent upstream is therefore answered with a
  ``timeout`` error within ``total`` seconds, or within ``read`` seconds of silence once a
  stream has started.
- **Retries** (:class:`~._retry.RetryPolicy`): 408/429/5xx/529, timeouts and connection
  failures, with exponential backoff and jitter, honouring ``retry-after-ms`` /
  ``retry-after``; never past the total deadline, and only before an answer starts —
  once events have been handed on, a failure is raised, never replayed. None inside a
  failover's try that has another after it (:func:`~.failover.more_to_try`).
- **Cancellation**: the :class:`~tooluse.cancel.CancelSignal` current in the calling thread
  (the gateway sets one per stream) is checked before every attempt, waited on instead of
  sleeping between attempts, and aborts a socket read or write blocked on a silent upstream
  (the sync client's sockets are wrapped for that), so a caller that left leaves no retry
  and no thread behind. Async callers are cancelled the anyio way.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Unpack

import anyio
import httpx2

from ..cancel import CancelSignal, current_cancel
from ..errors import BackendError, Cancelled
from ._aiohttp import READ_BODY, AiohttpTransport
from ._aiohttp import usable as fast_usable
from ._retry import RetryPolicy, parse_retry_after
from ._sse import SSE, SSEDecoder, check_event_stream
from .failover import more_to_try
from .options import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_READ_TIMEOUT,
    DEFAULT_TIMEOUT,
    AsyncUpstreamOptions,
    check_options,
)

__all__ = [
    "Timeouts",
    "Upstream",
    "UpstreamCancelled",
    "UsesUpstream",
    "http_options",
]

ErrorReader = Callable[[Any, "int | None"], BackendError]


#: The former name of :class:`tooluse.errors.Cancelled`, kept as an alias.
UpstreamCancelled = Cancelled


@dataclass(frozen=True)
class Timeouts:
    """``total`` (deadline of a call until its answer starts), ``connect``, ``read``
    (longest silence while a stream is awaited or read); all in seconds, all > 0."""

    total: float = DEFAULT_TIMEOUT
    connect: float = DEFAULT_CONNECT_TIMEOUT
    read: float = DEFAULT_READ_TIMEOUT

    def __post_init__(self) -> None:
        for name in ("total", "connect", "read"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
                raise ValueError(f"the {name} timeout must be a number of seconds > 0, not {value!r}")

    def attempt(self, remaining: float, *, stream: bool) -> httpx2.Timeout:
        """The httpx2 timeouts of one attempt with ``remaining`` seconds left. A
        non-streamed answer is generated in silence, so only the deadline bounds it."""
        left = max(remaining, 0.001)
        return httpx2.Timeout(
            connect=min(self.connect, left),
            read=min(self.read, left) if stream else left,
            write=min(self.read, left),
            pool=min(self.connect, left),
        )


def http_options(options: dict[str, Any]) -> tuple[Timeouts, RetryPolicy]:
    """Pop the plumbing's keyword options out of a backend's ``options`` (strings from a
    command line or a spec's query are accepted): ``timeout`` (total), ``connect_timeout``,
    ``read_timeout``, ``retry`` (a :class:`RetryPolicy`) and ``max_retries``."""
    def number(key: str, default: float) -> float:
        value = options.pop(key, None)
        return default if value is None else float(value)

    timeouts = Timeouts(
        total=number("timeout", DEFAULT_TIMEOUT),
        connect=number("connect_timeout", DEFAULT_CONNECT_TIMEOUT),
        read=number("read_timeout", DEFAULT_READ_TIMEOUT),
    )
    policy = options.pop("retry", None) or RetryPolicy()
    max_retries = options.pop("max_retries", None)
    if max_retries is not None:
        policy = RetryPolicy(max_retries=int(max_retries), initial_delay=policy.initial_delay,
                             max_delay=policy.max_delay, jitter=policy.jitter,
                             max_wait=policy.max_wait)
    return timeouts, policy


class _Attempts:
    """The bookkeeping of one call's attempts: the deadline, the cancel signal, and whether
    (and how long) to wait before the next attempt. The sync and async loops share it."""

    def __init__(self, upstream: Upstream, url: str, *, stream: bool) -> None:
        self.upstream = upstream
        self.url = url
        self.stream = stream
        self.started = time.monotonic()
        self.deadline = self.started + upstream.timeouts.total
        self.count = 0
        self.signal = current_cancel()
        self.timeout = upstream.timeouts.attempt(upstream.timeouts.total, stream=stream)
        upstream.retry_delays = []

    def begin(self) -> httpx2.Timeout:
        """Before an attempt: raise if the caller left; the attempt's timeouts."""
        self.check_cancel()
        self.timeout = self.upstream.timeouts.attempt(self.deadline - time.monotonic(),
                                                      stream=self.stream)
        return self.timeout

    def check_cancel(self) -> None:
        if self.signal is not None and self.signal.is_set():
            raise UpstreamCancelled(
                f"{self.upstream.name}: the call to {self.url} was abandoned: its caller has gone"
            )

    def transport_error(self, exc: Exception) -> BackendError:
        self.check_cancel()  # an aborted socket is the cancellation, not a network failure
        return self.upstream.transport_error(exc, self.url, self.timeout)

    def wait_before_retry(self, error: BackendError) -> float:
        """Seconds to wait before the next attempt, or raise ``error`` (not retryable,
        retries spent, or the wait would pass the total deadline)."""
        delay = self.upstream.retry.delay(self.count, error)
        if delay is None or more_to_try():  # a failover's next try is the retry
            raise error
        if time.monotonic() + delay >= self.deadline:
            total = self.upstream.timeouts.total
            error.message += (f" (not retried: the total timeout of {total:g}s would pass; "
                              f"{self.count + 1} attempt(s) in {time.monotonic() - self.started:.3g}s)")
            error.args = (error.message,)
            raise error
        self.count += 1
        self.upstream.retry_delays.append(delay)
        return delay

    def sleep(self, delay: float) -> None:
        if self.signal is None:
            time.sleep(delay)
        else:
            self.signal.wait(delay)
        self.check_cancel()


class Upstream:
    """The HTTP side of one backend: ``name`` labels its errors, ``error_from_body``
    (body, status) reads the upstream's error documents; the options are
    :class:`~tooluse.backends.options.AsyncUpstreamOptions` (``timeout`` (total),
    ``connect_timeout``, ``read_timeout``, ``retry`` / ``max_retries`` as in
    :func:`http_options`).

    ``transport`` / ``async_transport`` replace the network (``httpx2.MockTransport`` serves
    both); ``http_client`` / ``async_http_client`` are used as given and never closed here.
    """

    def __init__(self, name: str, error_from_body: ErrorReader,
                 **options: Unpack[AsyncUpstreamOptions]) -> None:
        check_options("Upstream", options)
        self.name = name
        self.error_from_body = error_from_body
        self.timeouts, self.retry = http_options(dict(options))
        transport, async_transport = options.get("transport"), options.get("async_transport")
        http_client = options.get("http_client")
        async_http_client = options.get("async_http_client")
        self._transport = transport
        if async_transport is None and isinstance(transport, httpx2.AsyncBaseTransport):
            async_transport = transport  # MockTransport and ASGI-style test transports
        self._async_transport = async_transport
        self._client = http_client
        self._own_client = http_client is None
        self._aclient = async_http_client
        self._own_aclient = async_http_client is None
        self._aclient_loop: asyncio.AbstractEventLoop | None = None
        #: aiohttp under the async calls where it can be (:mod:`._aiohttp`), per loop too.
        self._fast: AiohttpTransport | None = None
        self._fast_loop: asyncio.AbstractEventLoop | None = None
        self._fast_ok = self._own_aclient and async_transport is None and fast_usable()
        self._lock = threading.Lock()
        #: Seconds waited before each retry of the last call (tests and logs read it).
        self.retry_delays: list[float] = []

    # -- clients ----------------------------------------------------------------------------
    def client(self) -> httpx2.Client:
        with self._lock:
            if self._client is None:
                self._client = httpx2.Client(timeout=self.timeouts.attempt(self.timeouts.total, stream=True),
                                             transport=self._transport)
                if self._transport is None:
                    _make_abortable(self._client)
            return self._client

    def async_client(self) -> httpx2.AsyncClient:
        # An AsyncClient's pool belongs to the event loop that made it; a new loop (a second
        # ``anyio.run``) gets a new client.
        if not self._own_aclient:
            assert self._aclient is not None
            return self._aclient
        loop = asyncio.get_running_loop()
        if self._aclient is None or self._aclient_loop is not loop:
            self._aclient = httpx2.AsyncClient(
                timeout=self.timeouts.attempt(self.timeouts.total, stream=True),
                transport=self._async_transport)
            self._aclient_loop = loop
        return self._aclient

    def fast_transport(self) -> AiohttpTransport | None:
        """The aiohttp transport of this event loop, or None where httpx2's client serves."""
        if not self._fast_ok:
            return None
        loop = asyncio.get_running_loop()
        if self._fast is None or self._fast_loop is not loop:
            if self._fast is not None:
                self._fast.abandon()
            self._fast = AiohttpTransport()
            self._fast_loop = loop
        return self._fast

    def close(self) -> None:
        if self._own_client and self._client is not None:
            self._client.close()
            self._client = None
        if self._fast is not None:  # (aclose closes it on its loop; here, at once)
            self._fast.abandon()
            self._fast = None

    async def aclose(self) -> None:
        if self._fast is not None:
            if self._fast_loop is asyncio.get_running_loop():
                await self._fast.aclose()
            else:
                self._fast.abandon()
            self._fast = None
        self.close()
        if self._own_aclient and self._aclient is not None:
            await self._aclient.aclose()
            self._aclient = None

    # -- failures ---------------------------------------------------------------------------
    def failure(self, response: httpx2.Response) -> BackendError:
        """The error an HTTP failure means (its body must have been read)."""
        text = response.text
        try:
            body: Any = json.loads(text) if text else None
        except ValueError:
            body = text
        error = self.error_from_body(body, response.status_code)
        if error.status is None:
            error.status = response.status_code
        if error.retry_after is None:
            error.retry_after = parse_retry_after(response.headers)
        return error

    def transport_error(self, exc: Exception, url: str,
                        timeout: httpx2.Timeout | None = None) -> BackendError:
        """The error a transport failure means: ``timeout`` for every timeout (naming the
        bound that passed), ``api`` for a body that is not an event stream, else
        ``unavailable``."""
        if isinstance(exc, httpx2.TimeoutException):
            timeout = timeout or self.timeouts.attempt(self.timeouts.total, stream=True)
            which, seconds = {
                httpx2.ConnectTimeout: ("no connection", timeout.connect),
                httpx2.PoolTimeout: ("no free connection", timeout.pool),
                httpx2.WriteTimeout: ("could not send the request", timeout.write),
            }.get(type(exc), ("no answer", timeout.read))
            return BackendError(f"{self.name}: {which} from {url} within {seconds or 0:.3g}s "
                                f"({type(exc).__name__})", kind="timeout")
        if isinstance(exc, httpx2.SSEError):
            return BackendError(f"{self.name}: {url} did not answer with an event stream: {exc}",
                                kind="api")
        return BackendError(f"{self.name}: cannot reach {url}: {exc or type(exc).__name__}",
                            kind="unavailable")

    # -- sending ----------------------------------------------------------------------------
    def send(self, url: str, content: bytes, headers: Mapping[str, str], *,
             stream: bool) -> httpx2.Response:
        """POST with retries until a response below 400 starts (returned; a streamed one
        unread, for :meth:`events`), or raise the :class:`BackendError` of the failure."""
        client = self.client()
        attempts = _Attempts(self, url, stream=stream)
        while True:
            timeout = attempts.begin()
            request = client.build_request("POST", url, content=content, headers=dict(headers),
                                           timeout=timeout)
            try:
                response = client.send(request, stream=True)
                if response.status_code < 400:
                    if not stream:
                        response.read()
                    return response
                try:
                    response.read()
                finally:
                    response.close()
                error = self.failure(response)
            except httpx2.TransportError as exc:
                error = attempts.transport_error(exc)
            attempts.sleep(attempts.wait_before_retry(error))

    async def asend(self, url: str, content: bytes, headers: Mapping[str, str], *,
                    stream: bool) -> httpx2.Response:
        """:meth:`send` on the async client (or straight to its fast transport)."""
        fast = self.fast_transport()
        client = self.async_client() if fast is None else None
        attempts = _Attempts(self, url, stream=stream)
        while True:
            timeout = attempts.begin()
            try:
                if client is not None:
                    request = client.build_request("POST", url, content=content,
                                                   headers=dict(headers), timeout=timeout)
                    response = await client.send(request, stream=True)
                else:
                    assert fast is not None
                    response = await fast.handle_async_request(httpx2.Request(
                        "POST", _parsed(url), content=content, headers=headers,
                        extensions={"timeout": timeout.as_dict(), READ_BODY: not stream}))
                if response.status_code < 400:
                    if not stream:
                        await response.aread()
                    return response
                try:
                    await response.aread()
                finally:
                    await response.aclose()
                error = self.failure(response)
            except httpx2.TransportError as exc:
                error = attempts.transport_error(exc)
            await anyio.sleep(attempts.wait_before_retry(error))
            attempts.check_cancel()

    # -- reading ----------------------------------------------------------------------------
    def events(self, response: httpx2.Response) -> Iterator[SSE]:
        """The server-sent events of a streamed response (read from its bytes:
        :mod:`._sse`); transport failures (a read timeout, a reset, a caller that left)
        become :class:`BackendError`."""
        url = str(response.request.url)
        try:
            check_event_stream(response)
            decoder = SSEDecoder()
            for chunk in response.iter_bytes():
                yield from decoder.feed(chunk)
        except httpx2.TransportError as exc:
            signal = current_cancel()
            if signal is not None and signal.is_set():
                raise UpstreamCancelled(f"{self.name}: reading {url} was abandoned: "
                                        "its caller has gone") from None
            raise self.transport_error(exc, url, _timeout_of(response)) from None

    async def aevent_batches(self, response: httpx2.Response) -> AsyncIterator[list[SSE]]:
        """:meth:`events` for the async client, in batches: the events of each piece of the
        body as it arrives (one step of the async machinery per piece, not per event)."""
        url = str(response.request.url)
        try:
            check_event_stream(response)
            decoder = SSEDecoder()
            async for chunk in response.aiter_bytes():
                events = decoder.feed(chunk)
                if events:
                    yield events
        except httpx2.TransportError as exc:
            raise self.transport_error(exc, url, _timeout_of(response)) from None


class UsesUpstream:
    """What a backend built on an :class:`Upstream` shows of it (read-only)."""

    upstream: Upstream

    @property
    def timeout(self) -> float:
        """The total timeout of a call (seconds)."""
        return self.upstream.timeouts.total

    @property
    def retry(self) -> RetryPolicy:
        return self.upstream.retry

    @property
    def retry_delays(self) -> list[float]:
        """Seconds waited before each retry of the last call."""
        return self.upstream.retry_delays


@functools.lru_cache(maxsize=256)
def _parsed(url: str) -> httpx2.URL:
    """``url`` parsed once: a backend calls the same few URLs, and parsing one is most of the
    cost of building an ``httpx2.Request`` (~50 of ~80 us)."""
    return httpx2.URL(url)


def _timeout_of(response: httpx2.Response) -> httpx2.Timeout | None:
    raw = response.request.extensions.get("timeout")
    if isinstance(raw, dict):
        return httpx2.Timeout(**{k: raw.get(k) for k in ("connect", "read", "write", "pool")})
    return None


# -- aborting a blocked socket ---------------------------------------------------------------
#
# A sync read on a silent upstream blocks in ``recv`` for up to the read timeout; closing
# the socket from another thread does not wake it, shutting it down does. httpcore2 lets a
# connection pool take a network backend; the client's default pool gets one whose streams
# register, for the duration of each read and write, a callback on the caller's current
# cancel signal that shuts their socket down.


def _make_abortable(client: httpx2.Client) -> None:
    """Wrap the network backend of ``client``'s default transport (a private attribute of
    httpx2; without it, a cancelled caller's read ends at its read timeout instead)."""
    pool = getattr(getattr(client, "_transport", None), "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if pool is not None and backend is not None and not isinstance(backend, _AbortableBackend):
        pool._network_backend = _AbortableBackend(backend)


class _AbortableStream:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def _guard(self) -> contextlib.AbstractContextManager[None]:
        signal: CancelSignal | None = current_cancel()
        return contextlib.nullcontext() if signal is None else signal.on_set(self._abort)

    def _abort(self) -> None:
        sock = self._inner.get_extra_info("socket")
        if isinstance(sock, socket.socket):
            with contextlib.suppress(OSError):
                # The plain socket's shutdown, also under TLS: wakes the blocked recv
                # without touching the TLS object another thread is inside.
                socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        with self._guard():
            return bytes(self._inner.read(max_bytes, timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        with self._guard():
            self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, *args: Any, **kwargs: Any) -> _AbortableStream:
        return _AbortableStream(self._inner.start_tls(*args, **kwargs))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _AbortableBackend:
    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def connect_tcp(self, *args: Any, **kwargs: Any) -> _AbortableStream:
        return _AbortableStream(self._inner.connect_tcp(*args, **kwargs))

    def connect_unix_socket(self, *args: Any, **kwargs: Any) -> _AbortableStream:
        return _AbortableStream(self._inner.connect_unix_socket(*args, **kwargs))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)
