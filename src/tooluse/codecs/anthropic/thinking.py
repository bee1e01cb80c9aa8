"""Messages API thinking <-> the neutral model: ``thinking`` / ``redacted_thinking`` blocks
and the request's ``thinking`` setting.

Blocks (history, responses; :mod:`.stream` uses the same spelling for its deltas):

- ``{"type": "thinking", "thinking", "signature"}`` <-> :class:`ThinkingBlock` (``text``,
  ``signature`` byte for byte; an empty ``signature`` is none);
- ``{"type": "redacted_thinking", "data"}`` <-> :class:`RedactedThinkingBlock`.

What the Messages API cannot take back in a request's history (:func:`refusal`): a thinking
block without a signature (the API checks it: reasoning from another vendor or a local
model), one with summary parts and no text (an OpenAI reasoning item: its
``encrypted_content`` is not the API's signature), any thinking block in a user turn. A
signed block with text goes back as ``thinking`` whatever else it carries: an ``id`` (the
label a Responses client's item had: a Responses client over an Anthropic backend sends the
gateway's reasoning items back so) is left out, as are summary parts beside the text (the
signature covers the text only). The codec cannot tell which vendor issued a signature: one
another vendor issued reaches the API, which refuses it. In
``strict`` encoding that is a :class:`ConversionError`; otherwise the block is dropped with a
log line, and :func:`sendable` drops them the same way for an Anthropic upstream.

In an answer (a response or a stream the gateway sends a Messages client) every thinking
block is shown: summary parts follow the text, each after a blank line (as the API's
``display: "summarized"`` thinking reads), and a missing signature is ``""``.

Settings: ``thinking`` ``{type: enabled, budget_tokens, display}`` / ``{type: adaptive,
display}`` / ``{type: disabled}`` <-> :attr:`Request.reasoning` (``mode``, ``budget_tokens``,
``display``); ``output_config.effort`` (forwarded as it is) is also read into
``Reasoning.effort`` when ``thinking`` is on. Encoding writes ``thinking`` from the neutral
setting; an effort without a budget (another API's ``reasoning_effort``) becomes
``budget_tokens`` by LiteLLM's table (:data:`EFFORT_BUDGETS`), effort ``none`` is
``disabled``, and ``summary`` (a Responses setting) has no Messages field.
"""

from __future__ import annotations

import logging
from typing import Any

from ...messages import Message, Reasoning, RedactedThinkingBlock, Request, ThinkingBlock
from .._common import Path, dispatch, unsupported
from . import system_messages
from ._wire import (
    _THINKING,
    TARGET,
    _RedactedThinking,
    _RedactedThinkingOut,
    _Thinking,
    _ThinkingAdaptive,
    _ThinkingEnabled,
    _ThinkingOut,
)

__all__ = ["EFFORT_BUDGETS", "answer_text", "decode_block", "decode_settings", "encode_answer",
           "encode_history", "encode_settings", "refusal", "sendable"]

log = logging.getLogger("tooluse.codecs.anthropic")

#: An effort level -> ``budget_tokens`` when the request names no budget: LiteLLM's defaults
#: (``DEFAULT_REASONING_EFFORT_*_THINKING_BUDGET``), raised to the API's minimum of 1024.
EFFORT_BUDGETS = {"minimal": 1024, "low": 1024, "medium": 2048, "high": 4096, "xhigh": 8192}

Thinking = ThinkingBlock | RedactedThinkingBlock


# --- blocks ------------------------------------------------------------------------------


def decode_block(block: _Thinking | _RedactedThinking | _ThinkingOut | _RedactedThinkingOut
                 ) -> Thinking:
    """A request's or a response's thinking block -> the neutral block."""
    if isinstance(block, (_RedactedThinking, _RedactedThinkingOut)):
        return RedactedThinkingBlock(data=block.data)
    return ThinkingBlock(text=block.thinking, signature=block.signature or None)


def refusal(block: Thinking, role: str) -> str | None:
    """Why the Messages API cannot take ``block`` back in a ``role`` turn; None if it can."""
    if role != "assistant":
        return f"a {block.type} block belongs in an assistant turn"
    if isinstance(block, RedactedThinkingBlock):
        return None
    if block.summary and not block.text:
        return ("a reasoning summary without its text (the Responses API's) cannot be sent "
                "back to the Messages API: its encrypted content is not a thinking signature")
    if block.signature is None:
        return ("the Messages API takes back only signed thinking blocks; this one has no "
                "signature (reasoning from another vendor or a local model)")
    return None


def encode_history(block: Thinking, path: Path, role: str, strict: bool) -> dict[str, Any] | None:
    """A history block -> its Messages form, or None when dropped (``strict=False``)."""
    reason = refusal(block, role)
    if reason is not None:
        unsupported(reason, path, TARGET, strict)
        log.warning("messages: %s (%s); dropped", reason, ".".join(map(str, path)))
        return None
    if isinstance(block, RedactedThinkingBlock):
        return {"type": "redacted_thinking", "data": block.data}
    return {"type": "thinking", "thinking": block.text, "signature": block.signature}


def sendable(request: Request) -> Request:
    """``request`` without the history thinking blocks the Messages API cannot take back
    (:func:`refusal`), each dropped with a log line: an Anthropic upstream then gets every
    block it issued, and no other vendor's reasoning it would refuse. An assistant turn left
    with nothing goes too. Mid-conversation system messages kept for the upstream keep their
    place among the blocks that stay."""
    messages: list[Message] = []
    kept_at: list[list[int] | None] = []
    changed = False
    for i, msg in enumerate(request.messages):
        kept = []
        for j, block in enumerate(msg.content):
            if isinstance(block, (ThinkingBlock, RedactedThinkingBlock)) and encode_history(
                    block, ("messages", i, "content", j), msg.role, False) is None:
                changed = True
                continue
            kept.append(j)
        if kept or not msg.content:
            messages.append(msg if len(kept) == len(msg.content)
                            else Message(role=msg.role, content=[msg.content[j] for j in kept]))
            kept_at.append(kept)
        else:
            # a turn that held only dropped thinking goes, rather than reach the API empty
            # (which it refuses); the turns on either side are the API's to join, as it does
            # with consecutive turns of one role
            kept_at.append(None)
    if not changed:
        return request
    update: dict[str, Any] = {"messages": messages}
    passthrough = request.passthrough
    if passthrough is not None and passthrough.messages:
        update["passthrough"] = passthrough.model_copy(
            update={"messages": system_messages.remap(passthrough.messages, kept_at)})
    return request.model_copy(update=update)


def answer_text(block: ThinkingBlock) -> str:
    """The ``thinking`` text a Messages client is shown: the text, then each summary part
    (:attr:`ThinkingBlock.joined_text`)."""
    return block.joined_text


def encode_answer(block: Thinking) -> dict[str, Any]:
    """A thinking block of an answer -> the Messages response block."""
    if isinstance(block, RedactedThinkingBlock):
        return {"type": "redacted_thinking", "data": block.data}
    return {"type": "thinking", "thinking": answer_text(block), "signature": block.signature or ""}


# --- settings ----------------------------------------------------------------------------


def decode_settings(raw: Any, effort: str | None) -> Reasoning | None:
    """The request's ``thinking`` (validated) and ``output_config.effort`` -> the neutral
    setting (None when ``thinking`` is absent)."""
    if raw is None:
        return None
    setting = dispatch(raw, ("thinking",), _THINKING)
    if isinstance(setting, _ThinkingEnabled):
        return Reasoning(mode="enabled", budget_tokens=setting.budget_tokens,
                         display=setting.display, effort=effort)
    if isinstance(setting, _ThinkingAdaptive):
        return Reasoning(mode="adaptive", display=setting.display, effort=effort)
    return Reasoning(mode="disabled")


def encode_settings(reasoning: Reasoning, strict: bool) -> dict[str, Any]:
    """The neutral setting -> the request's ``thinking`` object."""
    if not reasoning.on:
        return {"type": "disabled"}
    out: dict[str, Any] = {"type": reasoning.mode}
    if reasoning.mode == "enabled":
        budget = reasoning.budget_tokens
        if budget is None:
            budget = EFFORT_BUDGETS.get(reasoning.effort or "")
        if budget is None:
            reason = ("the Messages API's enabled thinking needs budget_tokens, and "
                      + (f"effort {reasoning.effort!r} names none" if reasoning.effort
                         else "none was given"))
            unsupported(reason, ("reasoning", "budget_tokens"), TARGET, strict)
            log.warning("messages: %s; sent as adaptive", reason)
            out = {"type": "adaptive"}
        else:
            out["budget_tokens"] = budget
    if reasoning.display is not None:
        out["display"] = reasoning.display
    return out
