"""The OpenTelemetry GenAI semantic conventions' names and values for tooluse's neutral model.

Pure functions from :class:`~tooluse.messages.Request` / :class:`~tooluse.messages.Response`
to span attributes (no OpenTelemetry import): the inference span's name and attributes,
finish reasons, the provider's name, and — only when the user opted in with
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` — the messages as the conventions'
JSON (``gen_ai.input.messages``, ``gen_ai.output.messages``, ``gen_ai.system_instructions``,
``gen_ai.tool.definitions``), serialized to strings since span attributes cannot hold
structures. Attributes of tooluse's own (a call's origin) are under ``tooluse.``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from ..errors import ToolUseError
from ..messages import (
    ContentBlock,
    Message,
    Request,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)

__all__ = [
    "CAPTURE_ENV",
    "call_attributes",
    "capture_content",
    "error_type",
    "finish_reason",
    "provider_name",
    "request_attributes",
    "response_attributes",
    "span_name",
    "tool_definitions",
    "usage_attributes",
]

Attributes = dict[str, Any]

#: The variable the conventions' Python instrumentations read for the opt-in to content.
CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
#: Values of it that put content on spans (``true``, and the newer ``SPAN_ONLY`` /
#: ``SPAN_AND_EVENT``; ``EVENT_ONLY`` asks for log events, which tooluse does not make).
_ON_SPANS = ("true", "1", "span_only", "span_and_event")

#: Backend names to the conventions' well-known ``gen_ai.provider.name`` values; the
#: OpenAI-compatible backends speak OpenAI's format, whoever serves it.
_PROVIDERS = {
    "anthropic": "anthropic",
    "bedrock": "aws.bedrock",
    "openai": "openai",
    "openai-prompt": "openai",
    "openai-responses": "openai",
}
#: Backends whose model runs in this process: the conventions' INTERNAL span kind.
IN_PROCESS = frozenset({"local", "scripted"})

_FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_call",
    "content_filtered": "content_filter",
    "pause_turn": "stop",
}


def capture_content() -> bool:
    """Whether the user opted in to prompts, completions and tool arguments on spans."""
    return os.environ.get(CAPTURE_ENV, "").strip().lower() in _ON_SPANS


def provider_name(backend_name: str) -> str:
    """``gen_ai.provider.name`` of a backend: a well-known value, or ``tooluse.NAME``."""
    return _PROVIDERS.get(backend_name, f"tooluse.{backend_name}")


def span_name(operation: str, target: str | None) -> str:
    """``{gen_ai.operation.name} {model or tool or agent}``, or the operation alone."""
    return f"{operation} {target}" if target else operation


def finish_reason(stop_reason: str | None) -> str | None:
    """The conventions' finish reason for a neutral stop reason."""
    if stop_reason is None:
        return None
    return _FINISH.get(stop_reason, stop_reason)


def error_type(exc: BaseException) -> str:
    """``error.type``: a tooluse error's kind (a backend's ``rate_limit``, ``timeout``...,
    the gateway's ``invalid_request``...), ``cancelled`` for a stopped request or stream,
    else the exception's class name."""
    if isinstance(exc, (GeneratorExit, KeyboardInterrupt)) or type(exc).__name__ in (
            "CancelledError", "ClientGone"):
        return "cancelled"
    kind = getattr(exc, "kind", None) if isinstance(exc, ToolUseError) else None
    if isinstance(kind, str) and kind:
        return kind
    return type(exc).__qualname__


def request_attributes(request: Request, provider: str, model: str | None, *,
                       stream: bool, content: bool) -> Attributes:
    """The inference span's attributes known before the model answers."""
    attrs: Attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        # the name the conventions used before 1.37, still what some backends read
        "gen_ai.system": provider,
    }
    optional = {
        "gen_ai.request.model": model,
        "gen_ai.request.max_tokens": request.max_tokens,
        "gen_ai.request.temperature": request.temperature,
        "gen_ai.request.top_p": request.top_p,
        "gen_ai.request.top_k": request.top_k,
        "gen_ai.request.stop_sequences": list(request.stop_sequences) or None,
        "gen_ai.request.stream": True if stream else None,
        "gen_ai.output.type": "json" if request.response_schema is not None else None,
    }
    attrs.update({k: v for k, v in optional.items() if v is not None})
    if content:
        if request.system:
            attrs["gen_ai.system_instructions"] = _json(
                [{"type": "text", "content": b.text} for b in request.system])
        attrs["gen_ai.input.messages"] = _json([_message(m) for m in request.messages])
        if request.tools:
            attrs["gen_ai.tool.definitions"] = tool_definitions(request.tools)
    return attrs


def usage_attributes(usage: Usage) -> Attributes:
    """``gen_ai.usage.*``: the input counts the whole prompt, the cache reads and writes in
    it (when there are some) under their own names, as the conventions ask."""
    attrs: Attributes = {
        "gen_ai.usage.input_tokens": usage.prompt_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
    }
    if usage.cache_read_input_tokens:
        attrs["gen_ai.usage.cache_read.input_tokens"] = usage.cache_read_input_tokens
    if usage.cache_creation_input_tokens:
        attrs["gen_ai.usage.cache_creation.input_tokens"] = usage.cache_creation_input_tokens
    return attrs


def response_attributes(response: Response, *, content: bool) -> Attributes:
    """The inference span's attributes from the model's answer."""
    attrs = usage_attributes(response.usage)
    if response.id:
        attrs["gen_ai.response.id"] = response.id
    if response.model:
        attrs["gen_ai.response.model"] = response.model
    reason = finish_reason(response.stop_reason)
    if reason is not None:
        attrs["gen_ai.response.finish_reasons"] = [reason]
    calls = response.tool_uses
    if calls:
        attrs["tooluse.call_origins"] = [c.source for c in calls]
    if content:
        attrs["gen_ai.output.messages"] = _json([{
            "role": "assistant",
            "parts": [_part(b) for b in response.content],
            "finish_reason": reason or "stop",
        }])
    return attrs


def call_attributes(call: ToolUseBlock, *, content: bool) -> Attributes:
    """A tool call's attributes: its name, id and origin (and arguments when opted in)."""
    attrs: Attributes = {
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.call.id": call.id,
        "tooluse.call.origin": call.source,
    }
    origin = call.origin
    if origin is not None and (origin.source != "model" or origin.steered_by):
        attrs["tooluse.call.origin_detail"] = origin.describe()
    if content:
        attrs["gen_ai.tool.call.arguments"] = _json(call.input)
    return attrs


def tool_definitions(tools: Sequence[ToolSpec]) -> str:
    """``gen_ai.tool.definitions`` (opt-in): the tools as the model was offered them."""
    return _json([_tool(t) for t in tools])


def result_text(result: ToolResultBlock) -> str:
    """A tool result's content for ``gen_ai.tool.call.result`` (opt-in)."""
    return _json(_result(result))


# -- the conventions' message JSON ---------------------------------------------------------


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _message(message: Message) -> dict[str, Any]:
    return {"role": message.role, "parts": [_part(b) for b in message.content]}


def _part(block: ContentBlock) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "content": block.text}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_call", "id": block.id, "name": block.name,
                "arguments": block.input}
    if isinstance(block, ToolResultBlock):
        return {"type": "tool_call_response", "id": block.tool_use_id,
                "response": _result(block)}
    if isinstance(block, ThinkingBlock):
        return {"type": "reasoning", "content": block.joined_text}
    # images, JSON blocks, redacted thinking: named, their data left out (large or opaque)
    return {"type": block.type}


def _result(block: ToolResultBlock) -> Any:
    parts: Sequence[Any] = block.content
    if all(isinstance(p, TextBlock) for p in parts):
        return block.text()
    return [_part(p) for p in parts]


def _tool(spec: ToolSpec) -> dict[str, Any]:
    return {"type": "function", "name": spec.name, "description": spec.description,
            "parameters": spec.input_schema}
