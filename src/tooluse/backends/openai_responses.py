"""A server speaking OpenAI's Responses API as a backend: OpenAI itself, or any server that
serves ``POST /v1/responses`` (LiteLLM, vLLM, another tooluse gateway).

The wire format is :mod:`tooluse.codecs.responses`' job: the request goes out stateless
(``store: false``, the whole conversation in ``input``), so the upstream keeps nothing and
``previous_response_id`` stays the gateway's own. What a Responses client sent that the
neutral model has no field for (server tools such as ``web_search``, ``include``,
``prompt_cache_key``... kept in ``Request.passthrough``), and its own ``reasoning`` setting,
are forwarded as sent: this backend is the one that can run them (:attr:`forwards`).
Reasoning items travel as thinking blocks, ``encrypted_content`` byte for byte, both ways. ``text.format`` (structured
output) and custom tools' grammars are the upstream's to enforce. This module adds the HTTP
side: ``POST {base_url}/responses``, an optional ``Authorization: Bearer`` key, the
numbered ``response.*`` SSE stream (no ``[DONE]`` marker; an ``error`` event or
``response.failed`` is a :class:`~tooluse.errors.BackendError`), and error bodies in
OpenAI's shape (other shapes as for Chat Completions upstreams).

Spec: ``openai-responses:http://127.0.0.1:4000/v1#gpt-4.1-mini`` (base URL, then ``#model``),
or ``openai-responses:MODEL`` with the base URL from ``OPENAI_BASE_URL`` (default
``https://api.openai.com/v1``). The key comes from ``api_key=`` or ``OPENAI_API_KEY``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..codecs import responses as codec
from ..errors import BackendError
from ..messages import Request, Response
from ..stream import StreamEvent
from ._sse import SSE, loads
from .openai import OpenAIHTTPBackend
from .openai import error_from_body as chat_error_from_body
from .registry import url_and_model

__all__ = ["OpenAIResponsesBackend", "error_from_body", "from_spec"]

_LABEL = "openai-responses"


def error_from_body(body: Any, status: int | None) -> BackendError:
    """A :class:`BackendError` from an upstream's error body (OpenAI's shape, or the other
    shapes OpenAI-compatible servers use)."""
    error = chat_error_from_body(body, status)
    if error.message.startswith("openai: "):
        error.message = f"{_LABEL}: " + error.message[len("openai: "):]
        error.args = (error.message,)
    return error


class OpenAIResponsesBackend(OpenAIHTTPBackend):
    """The Responses API over HTTP. Retries, timeouts and cancellation are those of every
    HTTP backend (:mod:`._upstream`); ``transport`` / ``async_transport`` replace the network
    (``httpx2.MockTransport`` in tests)."""

    name = _LABEL
    forwards = frozenset({codec.TARGET})
    structured_output = True  # text.format json_schema, enforced by the upstream

    def _path(self, request: Request, *, stream: bool) -> str:
        return "/responses"

    def _encode(self, request: Request, *, stream: bool) -> dict[str, Any]:
        data = codec.encode_request(request, strict=False)
        if stream:
            data["stream"] = True
        else:
            data.pop("stream", None)
            data.pop("stream_options", None)
        return data

    def _decode(self, data: Any) -> Response:
        if isinstance(data, dict) and "error" in data and "output" not in data:
            raise error_from_body(data, None)
        if isinstance(data, dict) and data.get("status") == "failed":
            raise error_from_body({"error": data.get("error") or {
                "message": "the upstream response failed"}}, None)
        return codec.decode_response(data)

    def _decode_events(self, payloads: Iterable[Any]) -> Iterator[StreamEvent]:
        return codec.decode_events(payloads)

    def _payload(self, sse: SSE) -> Any:
        data = sse.data.strip()
        if not data:
            return None
        if data == b"[DONE]":  # not in OpenAI's Responses streams, but some servers add it
            return None
        try:
            return loads(data)
        except ValueError:
            raise BackendError(
                f"{_LABEL}: malformed stream event: {sse.text.strip()[:200]!r}", kind="api"
            ) from None

    def _error(self, body: Any, status: int | None) -> BackendError:
        return error_from_body(body, status)


def from_spec(rest: str, **options: Any) -> OpenAIResponsesBackend:
    """``openai-responses:BASE_URL#MODEL`` or ``openai-responses:MODEL``."""
    base_url, model = url_and_model(rest)
    if base_url is not None:
        options.setdefault("base_url", base_url)
    return OpenAIResponsesBackend(model, **options)
