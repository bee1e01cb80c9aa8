"""Server-sent events framing, as the Anthropic and OpenAI SDKs parse it.

Messages streams name each event (``event: <type>``) and put the payload on one ``data:``
line; Chat Completions streams send bare ``data:`` lines and end with ``data: [DONE]``.
JSON is written compactly and without ASCII escaping; it can never contain a raw newline
(``json.dumps`` escapes control characters), so one ``data:`` line is always enough. A
string holding a lone surrogate (an upstream may send one as a ``\\uD800`` escape) cannot be
UTF-8: such a payload is written with ASCII escapes instead, as valid JSON of the same value.
"""

from __future__ import annotations

from typing import Any, Final

from .encoding import json_bytes

__all__ = ["DONE", "PING", "data_only", "named_event"]


def _json(payload: Any) -> bytes:
    return json_bytes(payload, separators=(",", ":"))


def named_event(event: str, payload: Any) -> bytes:
    """``event: <event>\\ndata: <json>\\n\\n``."""
    return b"event: " + event.encode() + b"\ndata: " + _json(payload) + b"\n\n"


def data_only(payload: Any) -> bytes:
    """``data: <json>\\n\\n``."""
    return b"data: " + _json(payload) + b"\n\n"


#: The Messages API keep-alive event.
PING: Final = named_event("ping", {"type": "ping"})
#: The Chat Completions end-of-stream marker.
DONE: Final = b"data: [DONE]\n\n"
