"""Converse prompt caching <-> the neutral model: ``cachePoint`` blocks and the cache counts
of ``usage``.

- A ``{"cachePoint": {"type": "default", "ttl"?}}`` in ``system``, a message's ``content``
  or ``toolConfig.tools`` marks the end of a cached prefix: it becomes the
  :class:`~tooluse.messages.CacheHint` of the block or tool before it (``ttl`` kept), and a
  hint is written back as a ``cachePoint`` right after its block or tool. One at the start
  of a message marks the end of the turn before (the same prefix). One with nothing before
  it, or after a ``reasoningContent`` block (the neutral thinking block takes no hint), is
  left out: a hint, not content.
- A tool result's text or image part with a hint (a Messages client's) cannot hold a
  ``cachePoint`` inside the ``toolResult``: the point follows the ``toolResult`` (the
  nearest place one can stand, a prefix a result longer).
- ``usage.cacheReadInputTokens``, ``cacheWriteInputTokens`` and ``cacheDetails`` (``ttl``,
  ``inputTokens``) <-> :class:`~tooluse.messages.Usage`; ``inputTokens`` counts neither
  (as the neutral ``input_tokens``), ``totalTokens`` all.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from ...messages import CacheHint, ContentBlock, ToolResultBlock, Usage
from .._common import Path, UsageFields, count, validate
from ._wire import _CachePoint

__all__ = ["USAGE", "decode_hint", "decode_usage", "encode_usage", "hinted", "point", "point_after"]

B = TypeVar("B", bound=BaseModel)


def decode_hint(value: Any, path: Path) -> CacheHint:
    """A ``cachePoint`` object (validated) -> the neutral hint."""
    return CacheHint(ttl=validate(_CachePoint, value, path).ttl)


def hinted(item: B, cache: CacheHint) -> B | None:
    """``item`` (a block or tool) with ``cache`` on it; None for one that takes no hint."""
    if "cache" not in type(item).model_fields:
        return None
    return item.model_copy(update={"cache": cache})


def point(cache: CacheHint) -> dict[str, Any]:
    """The neutral hint -> its ``cachePoint`` block."""
    body: dict[str, Any] = {"type": "default"}
    if cache.ttl is not None:
        body["ttl"] = cache.ttl
    return {"cachePoint": body}


def point_after(block: ContentBlock) -> dict[str, Any] | None:
    """The ``cachePoint`` to write after ``block``, if it (or a part of its result) has a
    hint."""
    cache = getattr(block, "cache", None)
    if cache is None and isinstance(block, ToolResultBlock):
        cache = next((h for p in block.content if (h := getattr(p, "cache", None))), None)
    return point(cache) if cache is not None else None


#: Converse's usage counts (``inputTokens`` is the uncached rest of the prompt).
USAGE = UsageFields(input="inputTokens", output="outputTokens",
                    cache_read=("cacheReadInputTokens",), cache_write=("cacheWriteInputTokens",),
                    total="totalTokens")
(_READ,), (_WRITE,) = USAGE.cache_read, USAGE.cache_write


def decode_usage(usage: Any) -> Usage:
    """A Converse ``usage`` object (a response's, a stream's ``metadata``) -> :class:`Usage`."""
    if not isinstance(usage, dict):
        return Usage()
    by_ttl: dict[str, int] = {}
    details = usage.get("cacheDetails")
    for detail in details if isinstance(details, list) else []:
        if isinstance(detail, dict) and isinstance(detail.get("ttl"), str):
            by_ttl[detail["ttl"]] = by_ttl.get(detail["ttl"], 0) + count(detail.get("inputTokens"))
    return USAGE.decode(usage, cache_creation_by_ttl=by_ttl)


def encode_usage(usage: Usage) -> dict[str, Any]:
    """:class:`Usage` -> the Converse ``usage`` object (the cache counts when there are
    some)."""
    out: dict[str, Any] = {
        USAGE.input: usage.input_tokens,
        USAGE.output: usage.output_tokens,
        USAGE.total: usage.prompt_tokens + usage.output_tokens,
    }
    if usage.cache_read_input_tokens or usage.cache_creation_input_tokens:
        out[_READ] = usage.cache_read_input_tokens
        out[_WRITE] = usage.cache_creation_input_tokens
    details = [{"ttl": ttl, "inputTokens": n} for ttl, n in usage.cache_creation_by_ttl.items() if n]
    if details:
        out["cacheDetails"] = details
    return out
