"""Reading a Chat Completions stream and its errors, for the openai-prompt text backend.

Each server-sent payload is checked before use (an object, ``choices`` a list, text content),
so a server that answers something else gets an error naming what is wrong instead of a
``KeyError``; ``finish_reason``/``stop_reason`` and ``usage`` fill in :class:`TextEnd`; HTTP
and transport failures become :class:`~tooluse.errors.BackendError` with the kind the
gateway maps to its own error shapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx2

from ..errors import BackendError
from ..prompting.text_model import TextEnd
from .openai import error_from_body as _openai_error

__all__ = ["error_from_body"]


def _json_body(response: httpx2.Response) -> Any:
    """The whole body of ``response`` as JSON, or an ``api`` error quoting its start."""
    response.read()
    try:
        return response.json()
    except ValueError:
        raise BackendError(
            f"openai-prompt: the server sent malformed JSON: {response.text[:200]!r}",
            kind="api",
        ) from None


def _as_chunk(data: Any) -> dict[str, Any]:
    """A non-streamed ``chat.completion`` document as one stream chunk."""
    if not isinstance(data, dict):
        raise BackendError(f"openai-prompt: the answer is not an object: {str(data)[:200]!r}",
                           kind="api")
    if "error" in data and "choices" not in data:
        raise error_from_body(data, None)
    chunk: dict[str, Any] = {"usage": data.get("usage")}
    choices = data.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        choice = dict(choices[0])
        message = choice.pop("message", None)
        choice["delta"] = message if isinstance(message, dict) else {}
        chunk["choices"] = [choice]
    else:
        chunk["choices"] = []
    return chunk


def _read_chunk(payload: dict[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    usage = payload.get("usage")
    choices = payload.get("choices")
    choice: dict[str, Any] | None = None
    if isinstance(choices, list):
        for item in choices:
            if isinstance(item, dict) and item.get("index", 0) == 0:
                choice = item
                break
    elif choices is not None:
        raise BackendError(f"openai-prompt: 'choices' is not a list in {str(payload)[:200]!r}",
                           kind="api")
    return choice, usage if isinstance(usage, dict) else None


def _content_of(choice: dict[str, Any]) -> str:
    """The answer text of a chunk's choice. Reasoning text, which reasoning models' servers
    send in ``reasoning_content`` (Ollama: ``reasoning``), is not part of the continuation:
    only ``content`` is read."""
    delta = choice.get("delta")
    if not isinstance(delta, dict):
        delta = {}
    content = delta.get("content")
    if content is None and isinstance(choice.get("text"), str):
        content = choice["text"]  # a /completions-style chunk
    if content is None:
        return ""
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content
                       if isinstance(p, dict) and isinstance(p.get("text"), str))
    if not isinstance(content, str):
        raise BackendError(f"openai-prompt: delta.content is not text: {str(content)[:200]!r}",
                           kind="api")
    return content


def _apply_finish(end: TextEnd, finish: Any, stop_reason: Any, stops: Sequence[str]) -> None:
    if finish == "length":
        end.reason, end.stop_sequence = "length", None
    elif finish == "stop" and isinstance(stop_reason, str) and stop_reason in stops:
        # vLLM names the stop string that matched; other servers say only "stop", which
        # also means the model's own end of turn, so it reads as "end".
        end.reason, end.stop_sequence = "stop", stop_reason
    else:
        end.reason, end.stop_sequence = "end", None


def _apply_usage(end: TextEnd, usage: dict[str, Any]) -> None:
    def number(value: Any) -> int | None:
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    prompt = number(usage.get("prompt_tokens"))
    completion = number(usage.get("completion_tokens"))
    if prompt is not None:
        end.input_tokens = prompt
    if completion is not None:
        end.output_tokens = completion
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict):
        cached = number(details.get("cached_tokens"))
        if cached is not None:
            end.cached_tokens = cached


def error_from_body(body: Any, status: int | None) -> BackendError:
    """The OpenAI backend's reading of an error body (OpenAI, Ollama and vLLM shapes),
    labelled with this backend's name."""
    error = _openai_error(body, status)
    if error.message.startswith("openai: "):
        error.message = "openai-prompt: " + error.message[len("openai: "):]
        error.args = (error.message,)
    return error
