"""What the HTTP backends (Anthropic Messages, OpenAI-compatible Chat Completions) share.

Both POST a JSON body, get back either one JSON document or a ``text/event-stream``, retry
the same transient failures, and map HTTP failures to :class:`~tooluse.errors.BackendError`.
Only the wire format differs, and that is the codecs' job (``tooluse.codecs.<format>``): a
subclass names its endpoint and headers, hands the request to its codec, and says how one
server-sent event becomes a wire payload dict for the codec's ``decode_events``.

Sync calls use :class:`httpx2.Client`; async calls are natively async (httpx2's transport
on aiohttp where it can be, :mod:`._aiohttp`), so a server built on the async API never
parks a thread on a model call, and a stream's codec runs on the event loop too.
Retries happen only *before* a response starts: once events have been handed to the caller,
a failure is raised rather than silently replayed.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from typing import Any, Unpack

import httpx2

from .._greenlet_bridge import iterate, sync_iter
from ..backend import Backend
from ..errors import BackendError, BackendErrorKind, WireFormatError
from ..messages import Request, Response
from ..stream import StreamEvent, checked, events_from_response
from ._sse import SSE, loads
from ._upstream import Upstream, UsesUpstream
from .options import AsyncUpstreamOptions, check_options

__all__ = ["END_OF_STREAM", "HTTPBackend", "kind_for_status"]

#: Returned by :meth:`HTTPBackend._payload` for an end-of-stream marker (``data: [DONE]``).
END_OF_STREAM: Any = object()

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


class HTTPBackend(UsesUpstream, Backend):
    """Base of the JSON-over-HTTP backends; subclasses fill in the wire-format hooks.

    The HTTP itself (client lifetime, timeouts, retries, cancellation, failures) is
    :class:`~._upstream.Upstream`'s; ``timeout`` (total), ``connect_timeout``,
    ``read_timeout``, ``retry`` / ``max_retries`` configure it (see :mod:`._upstream`).
    """

    name = "http"

    def __init__(
        self,
        model: str | None,
        *,
        base_url: str,
        headers: Mapping[str, str] | None = None,
        **options: Unpack[AsyncUpstreamOptions],
    ) -> None:
        if not base_url:
            raise ValueError(f"{type(self).__name__} needs a base_url")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.extra_headers = dict(headers or {})
        check_options(type(self).__name__, options)
        self.upstream = Upstream(self.name, self._error, **options)

    # -- hooks for subclasses ---------------------------------------------------------------
    def _path(self, request: Request, *, stream: bool) -> str:
        raise NotImplementedError

    def _auth_headers(self) -> dict[str, str]:
        return {}

    def _encode(self, request: Request, *, stream: bool) -> dict[str, Any]:
        raise NotImplementedError

    def _decode(self, data: Any) -> Response:
        raise NotImplementedError

    def _decode_events(self, payloads: Iterable[Any]) -> Iterator[StreamEvent]:
        raise NotImplementedError

    def _payload(self, sse: SSE) -> Any:
        """One server-sent event as a wire payload; ``None`` to skip it, ``END_OF_STREAM``
        to stop. Raise :class:`BackendError` for an in-stream error event."""
        raise NotImplementedError

    def _error(self, body: Any, status: int | None) -> BackendError:
        """The error an HTTP failure (``status``) or an in-stream error event (``None``)
        means; ``body`` is the parsed JSON or the raw text."""
        raise NotImplementedError

    #: Whether the wire format ends a stream with a marker (``data: [DONE]``) that
    #: :meth:`_payload` turns into ``END_OF_STREAM``; a stream ending without it was cut.
    _end_marker = False

    # -- plumbing ---------------------------------------------------------------------------
    def _headers(self, request: Request | None = None) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "application/json"}
        headers.update(self._auth_headers())
        headers.update(self.extra_headers)
        if request is not None:
            headers.update(self._request_headers(request))
        return headers

    def _sign(self, url: str, body: bytes, headers: dict[str, str]) -> dict[str, str]:
        """The headers as sent: a subclass whose upstream authenticates the request itself
        (AWS SigV4 signs the URL and the body) adds that here."""
        return headers

    def _request_headers(self, request: Request) -> dict[str, str]:
        """Headers a request itself asks for (a client's beta header, passed through)."""
        return {}

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

    def _wrap_decode_error(self, exc: Exception) -> BackendError:
        return BackendError(f"{self.name}: the server sent a malformed answer: {exc}", kind="api")

    def _decode_json(self, response: httpx2.Response) -> Response:
        try:
            return self._decode(loads(response.content))
        except (ValueError, WireFormatError) as exc:
            raise self._wrap_decode_error(exc) from None

    def _checked(self, payloads: Iterable[Any]) -> Iterator[StreamEvent]:
        """The codec's events, checked for completeness (:func:`~tooluse.stream.checked`)."""
        return checked(self._decode_events(payloads), source=self.name)

    # -- sync -------------------------------------------------------------------------------
    def complete(self, request: Request) -> Response:
        url = self._url(request, stream=False)
        body = self._body(request, stream=False)
        response = self.upstream.send(url, body, self._sign(url, body, self._headers(request)),
                                      stream=False)
        return self._decode_json(response)

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        url = self._url(request, stream=True)
        body = self._body(request, stream=True)
        response = self.upstream.send(url, body, self._sign(url, body, self._headers(request)),
                                      stream=True)
        try:
            if _is_json(response):
                # Some OpenAI-compatible servers ignore "stream": answer with one document.
                response.read()
                yield from events_from_response(self._decode_json(response))
                return
            yield from self._checked(self._iter_payloads(response))
        except WireFormatError as exc:
            raise self._wrap_decode_error(exc) from None
        finally:
            response.close()

    def _iter_payloads(self, response: httpx2.Response) -> Iterator[Any]:
        for sse in self.upstream.events(response):
            payload = self._payload(sse)
            if payload is END_OF_STREAM:
                return
            if payload is not None:
                yield payload
        self._ended_without_marker()

    def _ended_without_marker(self) -> None:
        if self._end_marker:
            raise BackendError(f"{self.name}: the upstream stream ended without its end "
                               "marker (data: [DONE]): the answer may be cut", kind="api")

    # -- async ------------------------------------------------------------------------------
    async def acomplete(self, request: Request) -> Response:
        url = self._url(request, stream=False)
        body = self._body(request, stream=False)
        response = await self.upstream.asend(url, body, self._sign(url, body, self._headers(request)),
                                             stream=False)
        return self._decode_json(response)

    async def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        url = self._url(request, stream=True)
        body = self._body(request, stream=True)
        response = await self.upstream.asend(url, body, self._sign(url, body, self._headers(request)),
                                             stream=True)
        try:
            if _is_json(response):
                await response.aread()
                for event in events_from_response(self._decode_json(response)):
                    yield event
                return
            # The codec's decoder pulls its payloads: it runs in a greenlet on this loop,
            # fed from the network as it asks (tooluse._greenlet_bridge), no thread.
            async for batch in iterate(lambda: self._decoded(self._apayload_batches(response))):
                for event in batch:
                    yield event
        except WireFormatError as exc:
            raise self._wrap_decode_error(exc) from None
        finally:
            await response.aclose()

    def _decoded(self, batches: AsyncIterator[list[Any]]) -> Iterator[StreamEvent]:
        source = sync_iter(batches)
        try:
            yield from self._checked(payload for batch in source for payload in batch)
        finally:
            source.close()  # here, on the loop: the decoder does not close what it read

    async def _apayload_batches(self, response: httpx2.Response) -> AsyncIterator[list[Any]]:
        """The wire payloads, a batch per piece of the body (an error event raises after
        the payloads before it have been handed on)."""
        async for events in self.upstream.aevent_batches(response):
            batch: list[Any] = []
            try:
                for sse in events:
                    payload = self._payload(sse)
                    if payload is END_OF_STREAM:
                        if batch:
                            yield batch
                        return
                    if payload is not None:
                        batch.append(payload)
            except BackendError:
                if batch:
                    yield batch
                raise
            if batch:
                yield batch
        self._ended_without_marker()

    # -- lifecycle --------------------------------------------------------------------------
    def close(self) -> None:
        self.upstream.close()

    async def aclose(self) -> None:
        await self.upstream.aclose()


def _is_json(response: httpx2.Response) -> bool:
    content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    return content_type == "application/json"

