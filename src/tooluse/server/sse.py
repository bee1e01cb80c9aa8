"""Server-sent events framing, as the Anthropic and OpenAI SDKs parse it.

Messages streams name each event (``event: <type>``) and put the payload on one ``data:``
line; Chat Completions streams send bare ``data:`` lines and end with ``data: [DONE]``.
JSON is written compactly and without ASCII escaping; it can never contain a raw newline
(``json.dumps`` escapes control characters), so one ``data:`` line is always enough.
"""

from __future__ import annotations

import json
from typing import Any, Final

__all__ = ["DONE", "PING", "data_only", "named_event"]


def _json(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def named_event(event: str, payload: Any) -> bytes:
    """``event: <event>\\ndata: <json>\\n\\n``."""
    return f"event: {event}\ndata: {_json(payload)}\n\n".encode()


def data_only(payload: Any) -> bytes:
    """``data: <json>\\n\\n``."""
    return f"data: {_json(payload)}\n\n".encode()


#: The Messages API keep-alive event.
PING: Final = named_event("ping", {"type": "ping"})
#: The Chat Completions end-of-stream marker.
DONE: Final = b"data: [DONE]\n\n"
