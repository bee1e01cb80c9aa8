"""Checking inline image data the way the real APIs do (private).

The APIs (Messages, Converse, and OpenAI's Chat Completions and Responses) refuse image data
that is not valid base64, and data that is not an image of a format they take (PNG, JPEG,
GIF, WebP); Messages — and Converse, whose Claude models get
the same check — also refuse a declared type that is not what the bytes are. The type is
told by the bytes' signature ("magic"), as the APIs' image decoders tell it. The codecs
choose the wording of the error; this module only answers the questions.
"""

from __future__ import annotations

import base64
import binascii

__all__ = ["decode_base64", "sniff_media_type"]

_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def decode_base64(data: str) -> bytes | None:
    """The bytes of standard, padded base64 ``data``; None when it is not that (or empty)."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw or None


def sniff_media_type(raw: bytes) -> str | None:
    """``image/png``/``jpeg``/``gif``/``webp`` from the bytes' signature; None for others."""
    for magic, media_type in _SIGNATURES:
        if raw.startswith(magic):
            return media_type
    if len(raw) >= 12 and raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    return None
