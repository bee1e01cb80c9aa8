"""Pydantic wire models of the Anthropic Messages API, and the ``type`` -> model tables.

The request-side models are strict (:class:`~tooluse.codecs._common.WireModel`: unknown
fields are errors, as in the real API); the response-side ones are lenient
(:class:`~tooluse.codecs._common.LenientModel`), since a response from the API may carry
fields tooluse does not know yet. They live apart so the decoding code in
:mod:`.requests` and :mod:`.responses` reads as rules, not field lists.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from .._common import ID_PATTERN, NAME_PATTERN, LenientModel, WireModel

TARGET = "anthropic"
IMAGE_MEDIA_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")

# --- wire models (request side: strict) ------------------------------------------------

Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
ToolUseId = Annotated[str, StringConstraints(pattern=ID_PATTERN)]


class _CacheControl(WireModel):
    type: Literal["ephemeral"]
    ttl: Literal["5m", "1h"] | None = None


class _Text(WireModel):
    type: Literal["text"]
    text: str
    cache_control: _CacheControl | None = None
    # Responses carry ``citations: null`` on text blocks, and clients send response content
    # back as history unchanged; only an empty value is accepted (tooluse cannot carry
    # real citations, and dropping them silently would lose data).
    citations: list[Any] | None = Field(default=None, max_length=0)


class _Base64Source(WireModel):
    type: Literal["base64"]
    media_type: Literal["image/jpeg", "image/png", "image/gif", "image/webp"]
    data: str


class _UrlSource(WireModel):
    type: Literal["url"]
    url: str


class _Image(WireModel):
    type: Literal["image"]
    source: Any
    cache_control: _CacheControl | None = None


class _ToolUse(WireModel):
    type: Literal["tool_use"]
    id: ToolUseId
    name: str = Field(min_length=1, max_length=200)
    input: dict[str, Any]
    cache_control: _CacheControl | None = None


class _ToolResult(WireModel):
    type: Literal["tool_result"]
    tool_use_id: ToolUseId
    content: Any = None
    is_error: bool | None = None
    cache_control: _CacheControl | None = None


class _Tool(WireModel):
    type: Literal["custom"] | None = None
    name: Name
    description: str | None = None
    input_schema: dict[str, Any]
    cache_control: _CacheControl | None = None


class _ChoiceAuto(WireModel):
    type: Literal["auto"]
    disable_parallel_tool_use: bool | None = None


class _ChoiceAny(WireModel):
    type: Literal["any"]
    disable_parallel_tool_use: bool | None = None


class _ChoiceTool(WireModel):
    type: Literal["tool"]
    name: str
    disable_parallel_tool_use: bool | None = None


class _ChoiceNone(WireModel):
    type: Literal["none"]
    disable_parallel_tool_use: bool | None = None


class _Metadata(WireModel):
    user_id: str | None = None


class _Message(WireModel):
    role: Literal["user", "assistant"]
    content: Any


class _Request(WireModel):
    model: str = Field(min_length=1)
    max_tokens: int = Field(ge=1)
    messages: list[Any]
    system: Any = None
    tools: list[Any] | None = None
    tool_choice: Any = None
    stop_sequences: list[str] | None = None
    temperature: float | None = Field(default=None, ge=0, le=1)
    top_p: float | None = Field(default=None, ge=0, le=1)
    top_k: int | None = Field(default=None, ge=0)
    metadata: _Metadata | None = None
    stream: bool | None = None


_BLOCKS: dict[str, type[WireModel]] = {
    "text": _Text,
    "image": _Image,
    "tool_use": _ToolUse,
    "tool_result": _ToolResult,
}
_RESULT_PARTS: dict[str, type[WireModel]] = {"text": _Text, "image": _Image}
_SOURCES: dict[str, type[WireModel]] = {"base64": _Base64Source, "url": _UrlSource}
_CHOICES: dict[str, type[WireModel]] = {
    "auto": _ChoiceAuto,
    "any": _ChoiceAny,
    "tool": _ChoiceTool,
    "none": _ChoiceNone,
}


# --- wire models (response side: lenient) -----------------------------------------------


class _UsageOut(LenientModel):
    input_tokens: int = 0
    output_tokens: int = 0


class _ResponseIn(LenientModel):
    id: str = ""
    type: Literal["message"] = "message"
    role: Literal["assistant"] = "assistant"
    model: str | None = None
    content: list[Any]
    stop_reason: str | None = None
    stop_sequence: str | None = None
    usage: _UsageOut | None = None


class _TextOut(LenientModel):
    type: Literal["text"]
    text: str


class _ToolUseOut(LenientModel):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]
