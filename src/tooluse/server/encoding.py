"""JSON as the gateway writes it: UTF-8, compact where asked, and never failing on a string.

A Python string can hold a lone surrogate (``json.loads`` keeps an unpaired ``\\uD800``
escape as one, and an upstream's answer may carry such an escape). UTF-8 cannot encode it,
so ``ensure_ascii=False`` output would raise while the response is written — a 500 for a
value that is valid JSON. Such a payload is written with ASCII escapes instead: the same
JSON value, byte for byte what the upstream sent.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import JSONResponse

__all__ = ["JsonResponse", "json_bytes"]


def json_bytes(payload: Any, **options: Any) -> bytes:
    """``payload`` as UTF-8 JSON; with ASCII escapes only when it holds a lone surrogate."""
    try:
        return json.dumps(payload, ensure_ascii=False, **options).encode()
    except UnicodeEncodeError:
        return json.dumps(payload, ensure_ascii=True, **options).encode()


class JsonResponse(JSONResponse):
    """Starlette's ``JSONResponse`` that cannot fail on a lone surrogate."""

    def render(self, content: Any) -> bytes:
        return json_bytes(content, allow_nan=False, separators=(",", ":"))
