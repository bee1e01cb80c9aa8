"""Converse reasoning <-> the neutral model: ``reasoningContent`` blocks and the reasoning
settings in ``additionalModelRequestFields``.

Blocks (history, responses; :mod:`.stream` uses the same spelling for deltas):

- ``reasoningContent.reasoningText`` ``{text, signature}`` <-> :class:`ThinkingBlock`
  (``text``, ``signature`` byte for byte: Bedrock needs both back unmodified next turn);
- ``reasoningContent.redactedContent`` <-> :class:`RedactedThinkingBlock` (``data`` is the
  bytes as base64 text: the HTTP body's JSON carries that text, boto3 raw bytes, so
  ``binary=True`` encodes raw bytes and raw bytes decode to base64 text).

What a Converse block cannot hold: a thinking block's ``summary`` parts (the Responses API's;
``strict``: :class:`ConversionError`, otherwise dropped with a log line) and its ``id``
(Converse blocks have none; not carried, as a response id is not).

Settings, read from ``additionalModelRequestFields`` (Bedrock hands that object to the
model), one of:

- ``thinking``: ``{type: enabled, budget_tokens >= 1024 | adaptive | disabled, display}``,
  Claude on Bedrock in the Messages API's spelling;
- ``reasoning_config``: the same object, the spelling Bedrock's Claude 3.7 Sonnet examples use;
- ``reasoningConfig``: ``{type: enabled | disabled, maxReasoningEffort: low | medium | high}``,
  Amazon Nova 2's.

They become :attr:`Request.reasoning` (the field stays in the forwarded fields too). Encoding
writes the client's own field back verbatim when the neutral setting is what it says, so a
Bedrock upstream receives it as sent; any other setting is written as ``thinking`` (or, for an
effort where the client spelled ``reasoningConfig``, as that). What ``thinking`` cannot say:
an ``effort`` or ``summary`` (dropped), ``enabled`` without a budget (``adaptive`` instead):
strict errors, otherwise applied with a log line.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping
from typing import Any

from ...errors import WireFormatError
from ...messages import Reasoning, RedactedThinkingBlock, ThinkingBlock
from .._common import Path, one_key, unsupported, validate
from .._images import decode_base64
from ._wire import TARGET, _ClaudeThinking, _NovaReasoning, _ReasoningText, _ReasoningTextIn

__all__ = ["SETTINGS", "decode_block", "decode_settings", "encode_block", "encode_settings",
           "redacted_data"]

log = logging.getLogger("tooluse.codecs.bedrock")

#: The ``additionalModelRequestFields`` keys that hold a reasoning setting.
SETTINGS = ("thinking", "reasoning_config", "reasoningConfig")


def _cannot(message: str, path: Path, strict: bool) -> None:
    """Strict: raise. Otherwise log what the caller's fallback does, and return."""
    unsupported(message, path, TARGET, strict)
    log.warning("converse: %s (%s); applied the documented fallback", message,
                ".".join(map(str, path)))


# --- blocks ------------------------------------------------------------------------------


def redacted_data(value: Any, path: Path, *, check: bool) -> str:
    """``redactedContent`` as base64 text: raw bytes (boto3) are encoded, text (the HTTP
    body) is kept as given, after checking it is base64 when ``check``."""
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if not isinstance(value, str) or (check and decode_base64(value) is None):
        raise WireFormatError("redactedContent must be non-empty base64 text (or bytes)", path)
    return value


def decode_block(value: Any, path: Path, *, lenient: bool = False) -> ThinkingBlock | RedactedThinkingBlock:
    """A ``reasoningContent`` member -> a thinking block. ``lenient``: a response's (unknown
    fields ignored, the redacted bytes not checked)."""
    key, inner = one_key(value, path, ("reasoningText", "redactedContent"), "ReasoningContentBlock")
    if key == "redactedContent":
        return RedactedThinkingBlock(data=redacted_data(inner, (*path, key), check=not lenient))
    model: type[_ReasoningText | _ReasoningTextIn] = _ReasoningTextIn if lenient else _ReasoningText
    text = validate(model, inner, (*path, key))
    return ThinkingBlock(text=text.text, signature=text.signature)


def encode_block(block: ThinkingBlock | RedactedThinkingBlock, path: Path, strict: bool,
                 binary: bool, role: str = "assistant") -> dict[str, Any] | None:
    """A thinking block -> ``{"reasoningContent": ...}``; None when nothing of it is left (or
    it sits in a user turn, where Converse has no reasoning)."""
    if role != "assistant":
        _cannot("Converse carries reasoningContent in assistant turns only; dropped", path, strict)
        return None
    if isinstance(block, RedactedThinkingBlock):
        data: Any = block.data
        if binary:
            data = decode_base64(block.data)
            if data is None:
                _cannot("redacted thinking data that is not base64 cannot be sent as "
                        "redactedContent bytes; dropped", (*path, "data"), strict)
                return None
        return {"reasoningContent": {"redactedContent": data}}
    if block.summary:
        _cannot("Converse's reasoningText has no summary parts; dropped", (*path, "summary"), strict)
        if not block.text and block.signature is None:
            return None
    text: dict[str, Any] = {"text": block.text}
    if block.signature is not None:
        text["signature"] = block.signature
    return {"reasoningContent": {"reasoningText": text}}


# --- settings ----------------------------------------------------------------------------


def decode_settings(fields: Mapping[str, Any], path: Path = ("additionalModelRequestFields",)
                    ) -> Reasoning | None:
    """The reasoning setting among ``additionalModelRequestFields`` (at most one of
    :data:`SETTINGS`), or None."""
    given = [k for k in SETTINGS if k in fields]
    if len(given) > 1:
        raise WireFormatError(f"give one reasoning setting, not {' and '.join(given)}",
                              (*path, given[1]))
    if not given:
        return None
    key = given[0]
    if key == "reasoningConfig":
        nova = validate(_NovaReasoning, fields[key], (*path, key))
        return Reasoning(mode=nova.type, effort=nova.maxReasoningEffort)
    claude = validate(_ClaudeThinking, fields[key], (*path, key))
    if claude.type == "enabled" and claude.budget_tokens is None:
        raise WireFormatError("Field required", (*path, key, "budget_tokens"))
    if claude.type != "enabled" and claude.budget_tokens is not None:
        raise WireFormatError("budget_tokens is only allowed with type 'enabled'",
                              (*path, key, "budget_tokens"))
    return Reasoning(mode=claude.type, budget_tokens=claude.budget_tokens, display=claude.display)


def _same(fields: Mapping[str, Any], reasoning: Reasoning) -> bool:
    try:
        return decode_settings(fields) == reasoning
    except WireFormatError:
        return False


def _written(reasoning: Reasoning, key: str, strict: bool) -> tuple[str, dict[str, Any]]:
    """The setting as ``thinking`` (or as Nova's ``reasoningConfig`` when ``key`` is that and
    it says only an effort Nova knows)."""
    path: Path = ("reasoning",)
    if not reasoning.on:
        return "thinking", {"type": "disabled"}
    if (key == "reasoningConfig" and reasoning.mode == "enabled" and reasoning.budget_tokens is None
            and reasoning.display is None and reasoning.effort in (None, "low", "medium", "high")):
        value: dict[str, Any] = {"type": "enabled"}
        if reasoning.effort is not None:
            value["maxReasoningEffort"] = reasoning.effort
        return key, value
    if reasoning.effort is not None:
        _cannot("Claude's thinking on Converse has no effort level; dropped", (*path, "effort"), strict)
    if reasoning.summary is not None:
        _cannot("Claude's thinking on Converse has no summary setting; dropped",
                (*path, "summary"), strict)
    mode = reasoning.mode
    if mode == "enabled" and reasoning.budget_tokens is None:
        _cannot("Claude's thinking on Converse needs budget_tokens with type 'enabled'; sent as "
                "'adaptive'", (*path, "budget_tokens"), strict)
        mode = "adaptive"
    value = {"type": mode}
    if mode == "enabled":
        value["budget_tokens"] = reasoning.budget_tokens
    if reasoning.display is not None:
        value["display"] = reasoning.display
    return "thinking", value


def encode_settings(reasoning: Reasoning | None, forwarded: Mapping[str, Any],
                    strict: bool) -> dict[str, Any]:
    """``forwarded`` (a Converse client's ``additionalModelRequestFields``, or ``{}``) with its
    reasoning setting made :attr:`Request.reasoning`: kept verbatim and in place when it says
    the same, replaced otherwise, removed when the request asks nothing of reasoning."""
    out = {k: v for k, v in forwarded.items() if k not in SETTINGS}
    if reasoning is None:
        return out
    if _same(forwarded, reasoning):
        return dict(forwarded)
    original = next((k for k in SETTINGS if k in forwarded), "thinking")
    key, value = _written(reasoning, original, strict)
    out[key] = value
    return out
