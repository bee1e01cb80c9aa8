"""Wire-format codecs: each translates one API's JSON (or the legacy XML prompt) to and from
the neutral model of :mod:`tooluse.messages` and :mod:`tooluse.stream`.

Every JSON codec module (``anthropic``, ``bedrock``, ``openai``) offers the same functions:
``decode_request``, ``encode_request(req, *, strict=True)``, ``decode_response``,
``encode_response``, ``encode_events`` and ``decode_events``. :func:`get_codec` picks one by
name, so a caller converting between formats never imports them one by one.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["CODEC_NAMES", "JSON_CODECS", "get_codec"]

JSON_CODECS = ("anthropic", "bedrock", "openai")
CODEC_NAMES = (*JSON_CODECS, "legacy")


def get_codec(name: str) -> ModuleType:
    """The codec module called ``name`` (one of :data:`CODEC_NAMES`).

    Imported lazily: the legacy codec and the others stay independent, and importing
    :mod:`tooluse.codecs` costs nothing until a codec is used.
    """
    if name not in CODEC_NAMES:
        raise ValueError(f"unknown format {name!r}; expected one of {', '.join(CODEC_NAMES)}")
    return importlib.import_module(f"{__name__}.{name}")
