"""Turning what a tool function returns (or raises) into a ``tool_result``.

The model only ever sees text, images and JSON, so every Python value has to become one of
those. The rules are the ones a user guesses without reading them: ``str`` is text; a
``dict``/``list``, a pydantic model or a dataclass is JSON (kept as a
:class:`~tooluse.messages.JsonBlock`, so Converse gets a real ``{"json": ...}`` part and the
Messages codec writes it as JSON text — the codecs decide); numbers and booleans are their
JSON text; image bytes (PNG, JPEG, GIF, WebP) are an image; ``None`` is an empty result
(success with no output); a whole :class:`~tooluse.messages.ToolResultBlock` is taken as
it is, ``is_error`` included (how an MCP tool's result arrives). Anything else is refused
with a clear error rather than turned into an unhelpful ``repr``.

Failures are worded for the model, not for a developer: ``ExceptionType: message``, never a
traceback (which would waste tokens and leak internals such as file paths).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_jsonable_python

from ..messages import ImageBlock, JsonBlock, ResultPart, TextBlock, ToolResultBlock, ToolUseBlock

__all__ = [
    "ToolError",
    "error_result",
    "exception_text",
    "result_content",
    "sniff_image_type",
]


class ToolError(Exception):
    """Raise from a tool to fail with exactly this message (no ``ExceptionType:`` prefix).

    For errors meant for the model — "no such city", "date must be in the future" — where
    the exception type would only be noise.
    """


def sniff_image_type(data: bytes) -> str | None:
    """The media type of image bytes by their magic number, or ``None``."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(data) >= 12 and data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return "image/webp"
    return None


_PARTS = (TextBlock, ImageBlock, JsonBlock)


def result_content(value: Any) -> list[ResultPart]:
    """The result parts for a tool's return value (see the module docstring).

    Raises :class:`TypeError` for a value that has no faithful representation.
    """
    if value is None:
        return []
    if isinstance(value, str):
        return [TextBlock(text=value)]
    if isinstance(value, _PARTS):
        return [value]
    if isinstance(value, ToolResultBlock):
        return list(value.content)
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        media_type = sniff_image_type(data)
        if media_type is None:
            raise TypeError(
                f"the tool returned {len(data)} bytes that are not a PNG, JPEG, GIF or WebP "
                "image; return str for text"
            )
        return [ImageBlock(media_type=media_type, data=base64.b64encode(data).decode("ascii"))]
    if isinstance(value, (bool, int, float)):
        return [TextBlock(text=json.dumps(value))]
    if isinstance(value, Sequence) and value and all(isinstance(v, _PARTS) for v in value):
        return list(value)
    if isinstance(value, BaseModel):
        return [JsonBlock(value=value.model_dump(mode="json"))]
    try:
        jsonable = to_jsonable_python(value)
    except PydanticSerializationError:
        raise TypeError(
            f"the tool returned a {type(value).__name__}, which cannot be sent to the model; "
            "return str, a dict/list, a pydantic model, a dataclass or image bytes"
        ) from None
    return [JsonBlock(value=jsonable)]


def exception_text(exc: BaseException) -> str:
    """``ExceptionType: message`` — what the model is told when a tool raises."""
    if isinstance(exc, ToolError):
        return str(exc) or "the tool failed"
    message = str(exc)
    name = type(exc).__name__
    return f"{name}: {message}" if message else name


def error_result(call: ToolUseBlock, text: str) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id=call.id, content=[TextBlock(text=text)], is_error=True)
