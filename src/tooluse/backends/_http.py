"""What the HTTP backends (Anthropic Messages, OpenAI-compatible Chat Completions) share.

Both POST a JSON body, get back either one JSON document or a ``text/event-stream``, retry
the same transient failures, and map HTTP failures to :class:`~tooluse.errors.BackendError`.
Only the wire format differs, and that is the codecs' job (``tooluse.codecs.<format>``): a
subclass names its endpoint and headers, hands the request to its codec, and says how one
server-sent event becomes a wire payload dict for the codec's ``decode_events``.

Sync calls use :class:`httpx2.Client`; async calls use :class:`httpx2.AsyncClient`
natively, so a server built on the async API never parks a thread on a model call.
Retries happen only *before* a response starts: once events have been handed to the caller,
a failure is raised rather than silently replayed.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
import httpx2

from ..backend import Backend
from ..errors import BackendError, BackendErrorKind, WireFormatError
from ..messages import Request, Response
from ..stream import events_from_response
from ._retry import RetryPolicy, parse_retry_after

__all__ = ["END_OF_STREAM", "HTTPBackend", "kind_for_status"]

#: Returned by :meth:`HTTPBackend._payload` for an end-of-stream marker (``data: [DONE]``).
END_OF_STREAM: Any = object()
_END: Any = object()

_STATUS_KINDS: dict[int, BackendErrorKind] = {
    400: "invalid_request",
    401: "authentication",
    403: "permission",
    404: "not_found",
    408: "timeout",
    413: "request_too_large",
    422: "invalid_request",
    429: "rate_limit",
    502: "unavailable",
    503: "unavailable",
    504: "timeout",
    529: "overloaded",
}


def kind_for_status(status: int) -> BackendErrorKind:
    """The error kind an HTTP status means when the body does not say better."""
    return _STATUS_KINDS.get(status, "api" if status >= 500 or status < 400 else "invalid_request")


class HTTPBackend(Backend):
    """Base of the JSON-over-HTTP backends; subclasses fill in the wire-format hooks."""

    name = "http"

    def __init__(
        self,
        model: str | None,
        *,
        base_url: str,
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        max_retries: int | None = None,
        headers: Mapping[str, str] | None = None,
        transport: httpx2.BaseTransport | None = None,
        async_transport: httpx2.AsyncBaseTransport | None = None,
        http_client: httpx2.Client | None = None,
        async_http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        if not base_url:
            raise ValueError(f"{type(self).__name__} needs a base_url")
        if timeout <= 0:
            raise ValueError("timeout must be > 0 seconds")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        policy = retry or RetryPolicy()
        if max_retries is not None:
            policy = RetryPolicy(
                max_retries=max_retries,
                initial_delay=policy.initial_delay,
                max_delay=policy.max_delay,
                jitter=policy.jitter,
                max_wait=policy.max_wait,
            )
        self.retry = policy
        self.extra_headers = dict(headers or {})
        self._transport = transport
        if async_transport is None and isinstance(transport, httpx2.AsyncBaseTransport):
            # MockTransport (and ASGI-style test transports) serve both flavours.
            async_transport = transport
        self._async_transport = async_transport
        self._client = http_client
        self._own_client = http_client is None
        self._aclient = async_http_client
        self._own_aclient = async_http_client is None
        self._aclient_loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        #: Seconds slept before each retry (tests and logs read it; cleared per call).
        self.retry_delays: list[float] = []

    # -- hooks for subclasses ---------------------------------------------------------------
    def _path(self, request: Request, *, stream: bool) -> str:
        raise NotImplementedError

    def _auth_headers(self) -> dict[str, str]:
        return {}

    def _encode(self, request: Request, *, stream: bool) -> dict[str, Any]:
        raise NotImplementedError

    def _decode(self, data: Any) -> Response:
        raise NotImplementedError

    def _decode_events(self, payloads: Iterable[Any]) -> Iterator[Any]:
        raise NotImplementedError

    def _payload(self, sse: httpx2.ServerSentEvent) -> Any:
        """One server-sent event as a wire payload; ``None`` to skip it, ``END_OF_STREAM``
        to stop. Raise :class:`BackendError` for an in-stream error event."""
        raise NotImplementedError

    def _error(self, status: int, body: Any, headers: Mapping[str, str]) -> BackendError:
        """The error an HTTP failure means; ``body`` is the parsed JSON or the raw text."""
        raise NotImplementedError

    # -- plumbing ---------------------------------------------------------------------------
    def _timeout(self) -> httpx2.Timeout:
        return httpx2.Timeout(self.timeout, connect=min(10.0, self.timeout))

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "application/json"}
        headers.update(self._auth_headers())
        headers.update(self.extra_headers)
        return headers

    def _sync_client(self) -> httpx2.Client:
        with self._lock:
            if self._client is None:
                self._client = httpx2.Client(timeout=self._timeout(), transport=self._transport)
            return self._client

    def _async_client(self) -> httpx2.AsyncClient:
        # An AsyncClient's connection pool belongs to the event loop that made it; a new
        # loop (a second ``anyio.run``) gets a new client.
        if not self._own_aclient:
            assert self._aclient is not None
            return self._aclient
        loop = asyncio.get_running_loop()
        if self._aclient is None or self._aclient_loop is not loop:
            self._aclient = httpx2.AsyncClient(
                timeout=self._timeout(), transport=self._async_transport
            )
            self._aclient_loop = loop
        return self._aclient

    def _url(self, request: Request, *, stream: bool) -> str:
        return self.base_url + self._path(request, stream=stream)

    def _body(self, request: Request, *, stream: bool) -> bytes:
        if request.model is None and self.model is not None:
            request = request.model_copy(update={"model": self.model})
        if request.model is None:
            raise BackendError(
                f"{self.name}: no model given (pass model= to the backend or the request)",
                kind="invalid_request",
            )
        data = self._encode(request, stream=stream)
        return json.dumps(data, ensure_ascii=False).encode("utf-8")

    def _failure(self, response: httpx2.Response) -> BackendError:
        text = response.text
        try:
            body: Any = json.loads(text) if text else None
        except ValueError:
            body = text
        error = self._error(response.status_code, body, response.headers)
        if error.status is None:
            error.status = response.status_code
        if error.retry_after is None:
            error.retry_after = parse_retry_after(response.headers)
        return error

    def _transport_error(self, exc: Exception, url: str) -> BackendError:
        if isinstance(exc, httpx2.TimeoutException):
            return BackendError(
                f"{self.name}: no answer from {url} within {self.timeout:g}s ({type(exc).__name__})",
                kind="timeout",
            )
        return BackendError(f"{self.name}: cannot reach {url}: {exc}", kind="unavailable")

    def _wrap_decode_error(self, exc: Exception) -> BackendError:
        return BackendError(f"{self.name}: the server sent a malformed answer: {exc}", kind="api")

    # -- sync -------------------------------------------------------------------------------
    def _send(self, request: Request, *, stream: bool) -> httpx2.Response:
        url = self._url(request, stream=stream)
        body = self._body(request, stream=stream)
        client = self._sync_client()
        self.retry_delays = []
        attempt = 0
        while True:
            http_request = client.build_request("POST", url, content=body, headers=self._headers())
            try:
                response = client.send(http_request, stream=stream)
            except httpx2.TransportError as exc:
                error = self._transport_error(exc, url)
            else:
                if response.status_code < 400:
                    return response
                if stream:
                    response.read()
                    response.close()
                error = self._failure(response)
            delay = self.retry.delay(attempt, error)
            if delay is None:
                raise error
            self.retry_delays.append(delay)
            time.sleep(delay)
            attempt += 1

    def complete(self, request: Request) -> Response:
        response = self._send(request, stream=False)
        try:
            data = response.json()
        except ValueError as exc:
            raise self._wrap_decode_error(exc) from None
        try:
            return self._decode(data)
        except WireFormatError as exc:
            raise self._wrap_decode_error(exc) from None

    def stream(self, request: Request) -> Iterator[Any]:
        response = self._send(request, stream=True)
        try:
            if _is_json(response):
                # Some OpenAI-compatible servers ignore "stream": answer with one document.
                response.read()
                yield from events_from_response(self._decode(response.json()))
                return
            yield from self._decode_events(self._iter_payloads(response))
        except WireFormatError as exc:
            raise self._wrap_decode_error(exc) from None
        except httpx2.TransportError as exc:
            raise self._transport_error(exc, str(response.request.url)) from None
        finally:
            response.close()

    def _iter_payloads(self, response: httpx2.Response) -> Iterator[Any]:
        for sse in httpx2.EventSource(response):
            payload = self._payload(sse)
            if payload is END_OF_STREAM:
                return
            if payload is not None:
                yield payload

    # -- async ------------------------------------------------------------------------------
    async def _asend(self, request: Request, *, stream: bool) -> httpx2.Response:
        url = self._url(request, stream=stream)
        body = self._body(request, stream=stream)
        client = self._async_client()
        self.retry_delays = []
        attempt = 0
        while True:
            http_request = client.build_request("POST", url, content=body, headers=self._headers())
            try:
                response = await client.send(http_request, stream=stream)
            except httpx2.TransportError as exc:
                error = self._transport_error(exc, url)
            else:
                if response.status_code < 400:
                    return response
                if stream:
                    await response.aread()
                    await response.aclose()
                error = self._failure(response)
            delay = self.retry.delay(attempt, error)
            if delay is None:
                raise error
            self.retry_delays.append(delay)
            await anyio.sleep(delay)
            attempt += 1

    async def acomplete(self, request: Request) -> Response:
        response = await self._asend(request, stream=False)
        try:
            data = response.json()
        except ValueError as exc:
            raise self._wrap_decode_error(exc) from None
        try:
            return self._decode(data)
        except WireFormatError as exc:
            raise self._wrap_decode_error(exc) from None

    async def astream(self, request: Request) -> AsyncIterator[Any]:
        response = await self._asend(request, stream=True)
        try:
            if _is_json(response):
                await response.aread()
                for event in events_from_response(self._decode(response.json())):
                    yield event
                return
            async for event in _decode_in_thread(
                self._decode_events, self._aiter_payloads(response)
            ):
                yield event
        except WireFormatError as exc:
            raise self._wrap_decode_error(exc) from None
        except httpx2.TransportError as exc:
            raise self._transport_error(exc, str(response.request.url)) from None
        finally:
            await response.aclose()

    async def _aiter_payloads(self, response: httpx2.Response) -> AsyncIterator[Any]:
        async for sse in httpx2.EventSource(response):
            payload = self._payload(sse)
            if payload is END_OF_STREAM:
                return
            if payload is not None:
                yield payload

    # -- lifecycle --------------------------------------------------------------------------
    def close(self) -> None:
        if self._own_client and self._client is not None:
            self._client.close()
            self._client = None

    async def aclose(self) -> None:
        self.close()
        if self._own_aclient and self._aclient is not None:
            await self._aclient.aclose()
            self._aclient = None


def _is_json(response: httpx2.Response) -> bool:
    content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    return content_type == "application/json"


async def _decode_in_thread(
    decode: Callable[[Iterable[Any]], Iterator[Any]], payloads: AsyncIterator[Any]
) -> AsyncIterator[Any]:
    """Run a codec's synchronous, pull-based ``decode_events`` over an async source.

    The codec's decoder is a generator that pulls payloads from an iterable; it cannot be
    suspended while the next payload is still on the network. So it runs in a worker thread
    that pulls each payload from the event loop and pushes each decoded event back. (One
    translator per format is the rule: the async path must not re-implement the decoder.)
    """
    send, receive = anyio.create_memory_object_stream[Any](64)
    stop = threading.Event()

    async def pull() -> Any:
        try:
            return await payloads.__anext__()
        except StopAsyncIteration:
            return _END

    def source() -> Iterator[Any]:
        while not stop.is_set():
            item = anyio.from_thread.run(pull)
            if item is _END:
                return
            yield item

    def work() -> None:
        try:
            for event in decode(source()):
                if stop.is_set():
                    return
                anyio.from_thread.run(send.send, event)
            anyio.from_thread.run(send.send, _END)
        except BaseException as exc:  # re-raised in the consumer
            if not stop.is_set():
                try:
                    anyio.from_thread.run(send.send, exc)
                except Exception:  # the consumer went away
                    pass

    failure: BaseException | None = None
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: anyio.to_thread.run_sync(work, abandon_on_cancel=True))
        try:
            async with receive:
                while True:
                    item = await receive.receive()
                    if item is _END:
                        break
                    if isinstance(item, BaseException):
                        # Raised after the task group has closed, so the caller sees the
                        # error itself rather than an ExceptionGroup wrapping it.
                        failure = item
                        break
                    yield item
        finally:
            stop.set()
            tg.cancel_scope.cancel()
    if failure is not None:
        raise failure
