"""Chat Completions responses (``chat.completion``) <-> neutral :class:`Response`.

:func:`decode_response` reads a backend's answer; :func:`encode_response` writes the gateway's.
The finish-reason tables and the usage shape are shared with :mod:`.stream`.
"""

from __future__ import annotations

import time
from typing import Any

from ...errors import ConversionError, WireFormatError
from ...messages import (
    SERVER_TOOL_BLOCKS,
    ContentBlock,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)
from .._common import Path, dropped, usage_of_totals, validate
from ._reasoning import ReasoningText, read_reasoning
from ._wire import TARGET, _CallIn, _ResponseIn
from .requests import _arguments, _split_turn

_FINISH_IN = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "content_filtered",
}
_FINISH_OUT = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "content_filtered": "content_filter",
    "pause_turn": "stop",
}


def _finish(value: Any, path: Path) -> Any:
    if value is None:
        return None
    if value not in _FINISH_IN:
        raise WireFormatError(f"unsupported finish_reason {value!r}", path)
    return _FINISH_IN[value]


def decode_response(data: Any) -> Response:
    """A ``chat.completion`` -> :class:`Response` (one choice); the message's reasoning
    (``reasoning_content`` or ``reasoning``) is a thinking block before the answer."""
    resp = validate(_ResponseIn, data, ())
    choice = resp.choices[0]
    path: Path = ("choices", 0, "message")
    content: list[ContentBlock] = []
    thought = read_reasoning(choice.message.reasoning_content, choice.message.reasoning, path,
                             lenient=True)
    if thought is not None:
        content.append(ThinkingBlock(text=thought))
    if choice.message.content:
        content.append(TextBlock(text=choice.message.content))
    if choice.message.refusal:
        content.append(TextBlock(text=choice.message.refusal))
    for k, raw in enumerate(choice.message.tool_calls or []):
        call = validate(_CallIn, raw, (*path, "tool_calls", k))
        content.append(ToolUseBlock(
            id=call.id, name=call.function.name,
            input=_arguments(call.function.arguments, (*path, "tool_calls", k, "function", "arguments")),
        ))
    return Response(
        id=resp.id,
        model=resp.model,
        content=content,
        stop_reason=_finish(choice.finish_reason, ("choices", 0, "finish_reason")),
        usage=usage_of(data.get("usage")),
    )


def usage_of(usage: Any) -> Usage:
    """A ``usage`` object (a completion's, a stream's last chunk's) -> :class:`Usage`:
    ``prompt_tokens_details.cached_tokens`` are the cache reads, out of ``prompt_tokens``."""
    if not isinstance(usage, dict):
        return Usage()
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else 0
    return usage_of_totals(usage.get("prompt_tokens"), usage.get("completion_tokens"), cached)


def _usage(usage: Usage) -> dict[str, Any]:
    """:class:`Usage` -> ``usage``: the whole prompt in ``prompt_tokens`` (cache writes
    included: Chat has no field for them), the reads as ``cached_tokens`` when there are
    some."""
    out: dict[str, Any] = {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.prompt_tokens + usage.output_tokens,
    }
    if usage.cache_read_input_tokens:
        out["prompt_tokens_details"] = {"cached_tokens": usage.cache_read_input_tokens}
    return out


def encode_response(resp: Response, *, created: int | None = None) -> dict[str, Any]:
    """:class:`Response` -> ``chat.completion``. Text blocks are joined (the format has one
    content string); the matched stop sequence is not carried. Thinking blocks are the
    message's ``reasoning_content`` (a signature or a redacted block is left out with a log
    line: an answer is never refused for its thinking)."""
    reasoning = ReasoningText(strict=False)

    def other(k: int, b: ContentBlock) -> str | None:
        if reasoning.take(b, ("content", k)):
            return None
        if isinstance(b, SERVER_TOOL_BLOCKS):
            dropped(f"Chat Completions has no form for a {b.type} block", ("content", k),
                    TARGET, False)
            return None
        raise ConversionError(f"a response cannot hold a {b.type} block", ("content", k),
                              target=TARGET)

    texts, calls = _split_turn(resp.content, other)
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None,
                               "refusal": None}
    if reasoning.text is not None:
        message["reasoning_content"] = reasoning.text
    if calls:
        message["tool_calls"] = calls
    return {
        "id": resp.id,
        "object": "chat.completion",
        "created": int(time.time()) if created is None else created,
        "model": resp.model,
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": None,
            "finish_reason": _FINISH_OUT[resp.stop_reason] if resp.stop_reason else None,
        }],
        "usage": _usage(resp.usage),
    }
