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
  Claude on Bedrock: the Messages API's object, read and written by the Messages codec's own
  rules (:mod:`tooluse.codecs.anthropic.thinking`);
- ``reasoning_config``: the same object, the spelling Bedrock's Claude 3.7 Sonnet examples use;
- ``reasoningConfig``: ``{type: enabled | disabled, maxReasoningEffort: low | medium | high}``,
  Amazon Nova 2's.

They become :attr:`Request.reasoning` (the field stays in the forwarded fields too). Encoding
writes the client's own field back verbatim when the neutral setting is what it says, so a
Bedrock upstream receives it as sent; any other setting is written as Claude's ``thinking``
(as the Messages codec writes it: an effort without a budget becomes a budget, ``enabled``
with neither is ``adaptive``, strict: an error), or as ``reasoningConfig`` where the client
spelled that and the setting is an effort Nova knows.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping
from typing import Any

from ...errors import ConversionError, WireFormatError
from ...messages import Reasoning, RedactedThinkingBlock, ThinkingBlock
from .._common import Path, one_key, unsupported, validate
from .._images import decode_base64
from ..anthropic import thinking as claude
from ._wire import TARGET, _NovaReasoning, _ReasoningText, _ReasoningTextIn

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
    try:
        return claude.decode_settings(fields[key], None)
    except WireFormatError as exc:  # its path starts at the Messages field, "thinking"
        raise WireFormatError(exc.message, (*path, key, *exc.path[1:])) from None


def _same(fields: Mapping[str, Any], reasoning: Reasoning) -> bool:
    try:
        return decode_settings(fields) == reasoning
    except WireFormatError:
        return False


def _written(reasoning: Reasoning, key: str, strict: bool) -> tuple[str, dict[str, Any]]:
    """The setting as Nova's ``reasoningConfig`` when ``key`` is that and it says only an
    on/off or an effort Nova knows; otherwise as Claude's ``thinking``."""
    if (key == "reasoningConfig" and reasoning.mode in ("enabled", "disabled")
            and reasoning.budget_tokens is None and reasoning.display is None
            and reasoning.effort in (None, "low", "medium", "high")):
        value: dict[str, Any] = {"type": reasoning.mode}
        if reasoning.effort is not None and reasoning.mode == "enabled":
            value["maxReasoningEffort"] = reasoning.effort
        return key, value
    try:
        return "thinking", claude.encode_settings(reasoning, strict)
    except ConversionError as exc:
        raise ConversionError(f"{exc.message} (Claude's thinking on Converse is the Messages "
                              "API's object)", exc.path, target=TARGET) from None


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
