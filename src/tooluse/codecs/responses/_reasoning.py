"""Responses ``reasoning`` items and the request's ``reasoning`` setting <-> the neutral
model.

Items (input history, output, and the stream's finished items):

- ``{"id", "type": "reasoning", "summary": [{"type": "summary_text", "text"}...],
  "content": [{"type": "reasoning_text", "text"}], "encrypted_content"}`` <->
  :class:`ThinkingBlock` (``id``, ``summary`` part by part, ``text``, ``signature`` =
  ``encrypted_content`` byte for byte). ``content`` and ``encrypted_content`` are written
  only when there is text or a payload, as the API writes them; an item ``status`` is not
  kept (input items' status is ignored, as for every item). Several ``reasoning_text``
  parts are joined into one text (with a log line: the neutral block has one text).
- a :class:`RedactedThinkingBlock` (another API's opaque reasoning) has no Responses form:
  left out with a log line, refused in strict mode (:func:`~.._common.dropped`).

Settings: ``reasoning: {effort, summary}`` (``generate_summary``, its old name, read as
``summary``) <-> :attr:`Request.reasoning` (``effort`` as given, ``summary``; effort
``none`` is mode ``disabled``). Encoding from another API: mode ``disabled`` without an
effort is effort ``none``; a Messages ``display: "summarized"`` asks for summary ``auto``;
a token budget has no Responses field (refused in strict mode, else left out with a log
line). A request that asks for reasoning also asks for ``include:
["reasoning.encrypted_content"]``: the request goes out with ``store: false``, so the
encrypted reasoning is the only way to carry it to the next turn.
"""

from __future__ import annotations

import logging
from typing import Any

from ...messages import Reasoning, ThinkingBlock
from .._common import Path, dropped
from ._wire import TARGET, _Reasoning, _ReasoningIn, _ReasoningItem

__all__ = ["ENCRYPTED", "block_item", "decode_item", "decode_settings", "encode_settings",
           "reasoning_item"]

log = logging.getLogger("tooluse.codecs.responses")

#: The ``include`` value that asks for reasoning items' ``encrypted_content``.
ENCRYPTED = "reasoning.encrypted_content"


def decode_item(item: _ReasoningItem | _ReasoningIn, path: Path) -> ThinkingBlock:
    """A ``reasoning`` item (input or output) -> :class:`ThinkingBlock`."""
    texts = [part.text for part in item.content or []]
    if len(texts) > 1:
        log.info("%s: %d reasoning_text parts joined into one thinking text (at %s)", TARGET,
                 len(texts), ".".join(str(p) for p in (*path, "content")))
    return ThinkingBlock(text="".join(texts), summary=[part.text for part in item.summary],
                         signature=item.encrypted_content, id=item.id)


def reasoning_item(item_id: str | None, summary: list[str], texts: list[str],
                   signature: str | None) -> dict[str, Any]:
    """A ``reasoning`` item from its parts (``item_id`` None: no ``id`` key, as in an input
    item a client like Codex sends back)."""
    item: dict[str, Any] = {} if item_id is None else {"id": item_id}
    item["type"] = "reasoning"
    item["summary"] = [{"type": "summary_text", "text": text} for text in summary]
    if texts:
        item["content"] = [{"type": "reasoning_text", "text": text} for text in texts]
    if signature is not None:
        item["encrypted_content"] = signature
    return item


def block_item(block: ThinkingBlock, item_id: str | None = None) -> dict[str, Any]:
    """A :class:`ThinkingBlock` as a ``reasoning`` item; its own id first, else ``item_id``."""
    return reasoning_item(block.id if block.id is not None else item_id, list(block.summary),
                          [block.text] if block.text else [], block.signature)


def decode_settings(raw: _Reasoning | None) -> Reasoning | None:
    """The request's ``reasoning`` -> :class:`Reasoning` (None when it sets nothing)."""
    if raw is None:
        return None
    summary = raw.summary or raw.generate_summary
    if raw.effort is None and summary is None:
        return None
    return Reasoning(mode="disabled" if raw.effort == "none" else "enabled", effort=raw.effort,
                     summary=summary)


def encode_settings(reasoning: Reasoning | None, strict: bool) -> dict[str, Any]:
    """:class:`Reasoning` -> the request fields it sets (``reasoning``, ``include``)."""
    if reasoning is None:
        return {}
    out: dict[str, Any] = {}
    effort = reasoning.effort
    if effort is None and reasoning.mode == "disabled":
        effort = "none"
    if effort is not None:
        out["effort"] = effort
    summary = reasoning.summary
    if summary is None and reasoning.display == "summarized" and effort != "none":
        summary = "auto"
    if summary is not None:
        out["summary"] = summary
    if reasoning.budget_tokens is not None:
        dropped("the Responses API takes a reasoning effort, not a token budget",
                ("reasoning", "budget_tokens"), TARGET, strict)
    fields: dict[str, Any] = {"reasoning": out} if out else {}
    if reasoning.on:
        fields["include"] = [ENCRYPTED]
    return fields
