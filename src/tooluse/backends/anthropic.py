"""The Anthropic Messages API (or any server speaking it, such as ``tooluse serve``) as a backend.

The wire format is entirely :mod:`tooluse.codecs.anthropic`'s business; this module adds
only what is about HTTP: the endpoint ``POST {base_url}/v1/messages``, the headers
(``x-api-key`` and/or ``Authorization: Bearer``, ``anthropic-version: 2023-06-01``, optional
``anthropic-beta``), the mapping of the API's error body ``{"type": "error", "error":
{"type", "message"}}`` to :class:`~tooluse.errors.BackendError` kinds, and the reading of the
``text/event-stream`` (``ping`` skipped, ``event: error`` raised).

Thinking is the codec's too: the request's ``thinking`` setting and the history's signed
``thinking`` / ``redacted_thinking`` blocks are sent as the client wrote them, and the
upstream's thinking comes back whole or streamed in order (``signature_delta`` included); a
client's ``anthropic-beta`` (``interleaved-thinking-...``) and ``context_management`` are
forwarded from ``Request.passthrough``.

Spec strings: ``anthropic:MODEL`` (``https://api.anthropic.com``, or ``ANTHROPIC_BASE_URL``)
and ``anthropic:http://127.0.0.1:8000#MODEL`` (any server speaking the Messages API).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Unpack

from ..codecs import anthropic as codec
from ..errors import BackendError
from ..messages import Request, Response
from ..stream import StreamEvent
from ._http import HTTPBackend, kind_for_status
from ._sse import SSE, loads
from .options import AsyncUpstreamOptions
from .registry import url_and_model

__all__ = ["API_VERSION", "DEFAULT_BASE_URL", "AnthropicBackend", "from_spec"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"

def error_from_body(body: Any, status: int | None) -> BackendError:
    """A :class:`BackendError` from an HTTP failure or an SSE ``error`` event. A Messages
    API error document is read by the codec; anything else (a proxy's HTML page, an empty
    body) is classified by its HTTP status."""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("type"):
        mapped = codec.backend_error(body, status)
        mapped.message = f"anthropic: {error.get('type')}: {mapped.message}"
        mapped.args = (mapped.message,)
        return mapped
    text = body.strip()[:500] if isinstance(body, str) and body.strip() else None
    label = f"HTTP {status}" if status is not None else "stream error"
    kind = kind_for_status(status) if status is not None else "api"
    return BackendError(
        f"anthropic: {label}: {text or 'no error message in the response'}", kind=kind, status=status
    )


class AnthropicBackend(HTTPBackend):
    """Messages API over HTTP.

    ``api_key`` is sent as ``x-api-key`` (default ``ANTHROPIC_API_KEY``); ``auth_token`` as
    ``Authorization: Bearer`` (default ``ANTHROPIC_AUTH_TOKEN``); ``bearer=True`` sends the
    API key in both headers, for servers that read only one of them. ``betas`` go into
    ``anthropic-beta``. Retries (429, 5xx, 529, timeouts; ``retry-after`` honoured) follow
    ``retry`` / ``max_retries``. ``transport`` / ``async_transport`` replace the network
    (``httpx2.MockTransport`` in tests).
    """

    name = "anthropic"
    forwards = frozenset({codec.TARGET})

    def __init__(
        self,
        model: str | None = None,
        *,
        api_key: str | None = None,
        auth_token: str | None = None,
        bearer: bool = False,
        base_url: str | None = None,
        version: str = API_VERSION,
        betas: Sequence[str] = (),
        headers: Mapping[str, str] | None = None,
        **options: Unpack[AsyncUpstreamOptions],
    ) -> None:
        super().__init__(
            model,
            base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL,
            headers=headers,
            **options,
        )
        self.api_key = api_key if api_key is not None else os.environ.get("ANTHROPIC_API_KEY")
        self.auth_token = (
            auth_token if auth_token is not None else os.environ.get("ANTHROPIC_AUTH_TOKEN")
        )
        self.bearer = bearer
        self.version = version
        self.betas = list(betas)

    # -- HTTP hooks -------------------------------------------------------------------------
    def _path(self, request: Request, *, stream: bool) -> str:
        return "/v1/messages"

    def _auth_headers(self) -> dict[str, str]:
        if not self.api_key and not self.auth_token and self.base_url == DEFAULT_BASE_URL:
            raise BackendError(
                "anthropic: no API key; set ANTHROPIC_API_KEY or pass api_key=",
                kind="authentication",
            )
        headers = {"anthropic-version": self.version}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        token = self.auth_token or (self.api_key if self.bearer else None)
        if token:
            headers["authorization"] = f"Bearer {token}"
        if self.betas:
            headers["anthropic-beta"] = ",".join(self.betas)
        return headers

    def _request_headers(self, request: Request) -> dict[str, str]:
        """The client's ``anthropic-beta`` (verbatim, joined with the backend's own betas)."""
        passthrough = request.passthrough
        sent = passthrough.headers.get("anthropic-beta") if passthrough is not None \
            and passthrough.api == codec.TARGET else None
        if not sent:
            return {}
        betas = [*self.betas, *(b.strip() for b in sent.split(",") if b.strip())]
        return {"anthropic-beta": ",".join(dict.fromkeys(betas))}

    def count_tokens(self, request: Request) -> int | None:
        """The upstream's own count (``POST /v1/messages/count_tokens``)."""
        body = json.loads(self._body(request, stream=False))
        body.pop("max_tokens", None)
        url = self.base_url + "/v1/messages/count_tokens"
        response = self.upstream.send(url, json.dumps(body, ensure_ascii=False).encode(),
                                      self._headers(request), stream=False)
        try:
            return int(response.json()["input_tokens"])
        except (ValueError, KeyError, TypeError) as exc:
            raise self._wrap_decode_error(exc) from None

    def _encode(self, request: Request, *, stream: bool) -> dict[str, Any]:
        if request.max_tokens is None:
            # The Messages API requires max_tokens; the runner always sets it, a bare
            # request may not.
            request = request.model_copy(update={"max_tokens": 1024})
        # History thinking the API would refuse (unsigned: another vendor's or a local
        # model's) is dropped with a log line; the blocks the API issued go back unchanged.
        data = codec.encode_request(codec.sendable(request))
        if stream:
            data["stream"] = True
        else:
            data.pop("stream", None)
        return data

    def _decode(self, data: Any) -> Response:
        return codec.decode_response(data)

    def _decode_events(self, payloads: Iterable[Any]) -> Iterator[StreamEvent]:
        return codec.decode_events(payloads)

    def _payload(self, sse: SSE) -> Any:
        if sse.event == "ping" or not sse.data:
            return None
        try:
            data = loads(sse.data)
        except ValueError:
            raise BackendError(
                f"anthropic: malformed stream event {sse.event!r}: {sse.text[:200]!r}", kind="api"
            ) from None
        if sse.event == "error" or (isinstance(data, dict) and data.get("type") == "error"):
            raise error_from_body(data, None)
        if isinstance(data, dict) and data.get("type") == "ping":
            return None
        return data

    def _error(self, body: Any, status: int | None) -> BackendError:
        return error_from_body(body, status)


def from_spec(rest: str, **options: Any) -> AnthropicBackend:
    """``anthropic:MODEL`` or ``anthropic:BASE_URL#MODEL``."""
    base_url, model = url_and_model(rest)
    if base_url is not None:
        options.setdefault("base_url", base_url)
    return AnthropicBackend(model, **options)
