"""Any OpenAI-compatible Chat Completions server as a backend: Ollama, vLLM, llama.cpp's
``llama-server``, LM Studio, or OpenAI itself.

The wire format is :mod:`tooluse.codecs.openai`'s job. Chat Completions has no ``is_error``
on tool results, so the codec runs in non-strict mode, its documented fallback (the error is
said in the result text) instead of refusing a conversation that holds a failed call. This
module adds the HTTP side: ``POST {base_url}/chat/completions``, an optional ``Authorization:
Bearer`` key, the SSE stream ending with ``data: [DONE]``, and error bodies in the shapes
such servers use (``{"error": {"message", "type", "code"}}``, Ollama's ``{"error": "..."}``,
vLLM's ``{"object": "error", "message"}``).

A reasoning model's server (vLLM or SGLang with a reasoning parser, DeepSeek, Ollama) sends
its reasoning as ``reasoning_content`` or ``reasoning``: it comes back as thinking blocks,
streamed before the answer and the calls; the request's effort goes out as
``reasoning_effort`` and the history's thinking as ``reasoning_content`` (what Chat cannot
hold, such as another vendor's signature, is left out with a log line: see
:mod:`tooluse.codecs.openai._reasoning`).

Spec: ``openai:http://127.0.0.1:11434/v1#qwen2.5`` (base URL, then ``#model``), or
``openai:MODEL`` with the base URL from ``OPENAI_BASE_URL`` (default
``https://api.openai.com/v1``). The key comes from ``api_key=`` or ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Unpack

from ..codecs import openai as codec
from ..errors import BackendError
from ..messages import Request, Response
from ..stream import StreamEvent
from ._http import END_OF_STREAM, HTTPBackend, kind_for_status
from ._sse import SSE, loads
from .options import AsyncUpstreamOptions
from .registry import url_and_model

__all__ = ["DEFAULT_BASE_URL", "OpenAIBackend", "from_spec"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def error_from_body(body: Any, status: int | None) -> BackendError:
    """A :class:`BackendError` from the error shapes OpenAI-compatible servers send."""
    message: str | None = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        # The OpenAI shape: read by the codec.
        mapped = codec.backend_error(body, status)
        mapped.message = f"openai: HTTP {status}: {mapped.message}" if status else f"openai: {mapped.message}"
        mapped.args = (mapped.message,)
        return mapped
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, str):
            message = error
        elif isinstance(body.get("message"), str):
            message = body["message"]
        elif body.get("detail") is not None:
            message = json.dumps(body["detail"], ensure_ascii=False)[:500]
    elif isinstance(body, str) and body.strip():
        message = body.strip()[:500]
    kind = kind_for_status(status) if status is not None else "api"
    label = f"HTTP {status}" if status is not None else "stream error"
    return BackendError(
        f"openai: {label}: {message or 'no error message in the response'}", kind=kind, status=status
    )


class OpenAIHTTPBackend(HTTPBackend):
    """What OpenAI's HTTP APIs share (Chat Completions here, the Responses API in
    :mod:`.openai_responses`): the base URL (``base_url``, else ``OPENAI_BASE_URL``, else
    OpenAI's) and an optional ``Authorization: Bearer`` key (``api_key``, else
    ``OPENAI_API_KEY``)."""

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        **options: Unpack[AsyncUpstreamOptions],
    ) -> None:
        super().__init__(
            model,
            base_url=base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL,
            headers=headers,
            **options,
        )
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")

    def _auth_headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.api_key}"} if self.api_key else {}


class OpenAIBackend(OpenAIHTTPBackend):
    """Chat Completions over HTTP. ``stream_usage`` asks for token counts in the stream
    (``stream_options.include_usage``); turn it off for servers that reject the field."""

    name = "openai"

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        stream_usage: bool = True,
        headers: Mapping[str, str] | None = None,
        **options: Unpack[AsyncUpstreamOptions],
    ) -> None:
        super().__init__(model, base_url=base_url, api_key=api_key, headers=headers, **options)
        self.stream_usage = stream_usage

    _end_marker = True

    def _path(self, request: Request, *, stream: bool) -> str:
        return "/chat/completions"

    def _encode(self, request: Request, *, stream: bool) -> dict[str, Any]:
        data = codec.encode_request(request, strict=False)
        if stream:
            data["stream"] = True
            if self.stream_usage:
                data["stream_options"] = {"include_usage": True}
        else:
            data.pop("stream", None)
            data.pop("stream_options", None)
        return data

    def _decode(self, data: Any) -> Response:
        if isinstance(data, dict) and "error" in data and "choices" not in data:
            raise error_from_body(data, None)
        return codec.decode_response(data)

    def _decode_events(self, payloads: Iterable[Any]) -> Iterator[StreamEvent]:
        return codec.decode_events(payloads)

    def _payload(self, sse: SSE) -> Any:
        data = sse.data.strip()
        if not data:
            return None
        if data == b"[DONE]":
            return END_OF_STREAM
        try:
            payload = loads(data)
        except ValueError:
            raise BackendError(
                f"openai: malformed stream chunk: {sse.text.strip()[:200]!r}", kind="api"
            ) from None
        if isinstance(payload, dict) and "error" in payload and "choices" not in payload:
            raise error_from_body(payload, None)
        return payload

    def _error(self, body: Any, status: int | None) -> BackendError:
        return error_from_body(body, status)


def from_spec(rest: str, **options: Any) -> OpenAIBackend:
    """``openai:BASE_URL#MODEL`` or ``openai:MODEL``."""
    base_url, model = url_and_model(rest)
    if base_url is not None:
        options.setdefault("base_url", base_url)
    return OpenAIBackend(model, **options)
