"""Messages API prompt caching <-> the neutral model: ``cache_control`` breakpoints and the
cache counts of ``usage``.

- ``cache_control: {"type": "ephemeral", "ttl"?}`` on a system text block, a tool, or a
  message's ``text``, ``image``, ``tool_use``, ``tool_result`` block (and a tool result's
  text or image part) <-> :class:`~tooluse.messages.CacheHint` on that block or
  :class:`~tooluse.messages.ToolSpec` (``ttl`` kept; the API knows one ``type``). A
  ``document`` or ``search_result`` block is carried as text: its breakpoint stays on that
  text. ``thinking`` blocks take no breakpoint in the API (one sent is left out).
- ``usage.cache_read_input_tokens``, ``cache_creation_input_tokens`` and the
  ``cache_creation`` breakdown (``ephemeral_5m_input_tokens``, ``ephemeral_1h_input_tokens``)
  <-> :class:`~tooluse.messages.Usage` (``cache_creation_by_ttl`` keyed ``5m``, ``1h``). The
  answer's ``service_tier`` is not carried.
  An answer writes the cache counts when there are some (the API writes them always; an
  answer without a cache reads the same without them).
- ``usage.server_tool_use`` (``tool_search_requests``, ``web_search_requests``...) <->
  ``Usage.server_tool_requests`` keyed by the kind (``tool_search``), written when there
  are some.
"""

from __future__ import annotations

import re
from typing import Any

from ...messages import CacheHint, Usage
from .._common import count
from ._wire import _CacheControl

__all__ = ["cached", "control", "decode_usage", "encode_usage", "hint", "with_control"]

_BREAKDOWN = re.compile(r"^ephemeral_(.+)_input_tokens$")


def hint(control: _CacheControl | None) -> CacheHint | None:
    """A validated ``cache_control`` -> the neutral hint (None for none)."""
    return None if control is None else CacheHint(ttl=control.ttl)


def control(cache: CacheHint) -> dict[str, Any]:
    """The neutral hint -> its ``cache_control`` object."""
    out: dict[str, Any] = {"type": "ephemeral"}
    if cache.ttl is not None:
        out["ttl"] = cache.ttl
    return out


def with_control(block: dict[str, Any], cache: CacheHint | None) -> dict[str, Any]:
    """``block`` with ``cache_control`` added when ``cache`` is set."""
    if cache is not None:
        block["cache_control"] = control(cache)
    return block


def decode_usage(usage: Any) -> Usage:
    """A ``usage`` object of an answer or a stream event (any of its counts may be missing
    or null) -> :class:`Usage`."""
    if not isinstance(usage, dict):
        return Usage()
    breakdown = usage.get("cache_creation")
    by_ttl: dict[str, int] = {}
    if isinstance(breakdown, dict):
        for key, value in breakdown.items():
            match = _BREAKDOWN.match(key)
            if match is not None and isinstance(value, int) and not isinstance(value, bool):
                by_ttl[match.group(1)] = max(value, 0)
    server = usage.get("server_tool_use")
    requests = {key.removesuffix("_requests"): count(value)
                for key, value in server.items() if key.endswith("_requests") and count(value)
                } if isinstance(server, dict) else {}
    return Usage(
        input_tokens=count(usage.get("input_tokens")),
        output_tokens=count(usage.get("output_tokens")),
        cache_read_input_tokens=count(usage.get("cache_read_input_tokens")),
        cache_creation_input_tokens=count(usage.get("cache_creation_input_tokens")),
        cache_creation_by_ttl=by_ttl,
        server_tool_requests=requests,
    )


def cached(usage: Usage) -> bool:
    """Whether ``usage`` has cache counts to write."""
    return bool(usage.cache_read_input_tokens or usage.cache_creation_input_tokens
                or usage.cache_creation_by_ttl)


def encode_usage(usage: Usage) -> dict[str, Any]:
    """:class:`Usage` -> the ``usage`` object (the cache counts when there are some)."""
    out: dict[str, Any] = {"input_tokens": usage.input_tokens}
    if cached(usage):
        out["cache_creation_input_tokens"] = usage.cache_creation_input_tokens
        out["cache_read_input_tokens"] = usage.cache_read_input_tokens
        if usage.cache_creation_by_ttl:
            out["cache_creation"] = {f"ephemeral_{ttl}_input_tokens": n
                                     for ttl, n in usage.cache_creation_by_ttl.items()}
    out["output_tokens"] = usage.output_tokens
    if usage.server_tool_requests:
        # the two counts the SDKs require (their ServerToolUsage types), then the others
        # (tool_search_requests, as the tool search documentation shows it)
        out["server_tool_use"] = {"web_search_requests": 0, "web_fetch_requests": 0} | {
            f"{kind}_requests": n for kind, n in usage.server_tool_requests.items()}
    return out
