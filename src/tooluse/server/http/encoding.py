"""JSON as the gateway writes it: UTF-8, compact where asked, and never failing on a string.

A Python string can hold a lone surrogate (``json.loads`` keeps an unpaired ``\\uD800``
escape as one, and an upstream's answer may carry such an escape). UTF-8 cannot encode it,
so ``ensure_ascii=False`` output would raise while the response is written — a 500 for a
value that is valid JSON. Such a payload is written with ASCII escapes instead: the same
JSON value, byte for byte what the upstream sent.

Compact JSON (every SSE event, every response body) is written by orjson where it is
installed (the ``server`` extra), many times :mod:`json`'s speed on the events of a
stream (the figures: docs/benchmarks/code.md). The value written is the same; where orjson
would write something else or nothing — a lone surrogate, an integer past 64 bits, a key
that is not a string, a NaN or an infinity (orjson writes ``null``) — :mod:`json` writes it,
as before. Numbers may be spelled differently (``1e-7`` for ``1e-07``), never valued so.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import JSONResponse

try:
    import orjson
except ImportError:  # pragma: no cover - the server extra brings it
    orjson = None  # type: ignore[assignment]

__all__ = ["JsonResponse", "json_bytes"]

_COMPACT = (",", ":")
_ORJSON_OPTIONS = frozenset({"separators", "allow_nan"})


def json_bytes(payload: Any, **options: Any) -> bytes:
    """``payload`` as UTF-8 JSON; with ASCII escapes only when it holds a lone surrogate."""
    if orjson is not None and options.get("separators") == _COMPACT \
            and options.keys() <= _ORJSON_OPTIONS:
        try:
            out = orjson.dumps(payload)
        except TypeError:  # orjson.JSONEncodeError too: json decides (and raises) below
            pass
        else:
            # orjson writes a NaN or an infinity as null: what it wrote is the payload
            # unless a null read back is one (a compare in C, not a walk in Python)
            if b"null" not in out or orjson.loads(out) == payload:
                return out
    try:
        return json.dumps(payload, ensure_ascii=False, **options).encode()
    except UnicodeEncodeError:
        return json.dumps(payload, ensure_ascii=True, **options).encode()


class JsonResponse(JSONResponse):
    """Starlette's ``JSONResponse`` that cannot fail on a lone surrogate."""

    def render(self, content: Any) -> bytes:
        return json_bytes(content, allow_nan=False, separators=(",", ":"))
