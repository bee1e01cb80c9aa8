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
    strict: bool | None = None
    defer_loading: bool | None = None
    input_examples: list[dict[str, Any]] | None = None
    eager_input_streaming: bool | None = None
    allowed_callers: list[str] | None = None


#: A custom tool's fields beyond what :class:`~tooluse.messages.ToolSpec` carries (kept for
#: an Anthropic upstream; ``cache_control`` is the tool's :class:`~tooluse.messages.CacheHint`).
TOOL_EXTRAS = ("defer_loading", "input_examples", "eager_input_streaming", "allowed_callers")


class _ServerTool(LenientModel):
    """An Anthropic-defined tool (``web_search_20250305``, ``bash_20250124``...): its fields
    are the upstream's to check; here only that it is one."""

    type: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*_[0-9]{8}$")]
    name: str = Field(min_length=1)


class _Document(WireModel):
    type: Literal["document"]
    source: dict[str, Any]
    title: str | None = None
    context: str | None = None
    citations: dict[str, Any] | None = None
    cache_control: _CacheControl | None = None


class _SearchResult(WireModel):
    type: Literal["search_result"]
    source: str
    title: str
    content: list[_Text]
    citations: dict[str, Any] | None = None
    cache_control: _CacheControl | None = None


class _Thinking(WireModel):
    type: Literal["thinking"]
    thinking: str
    signature: str | None = None
    cache_control: _CacheControl | None = None


class _RedactedThinking(WireModel):
    type: Literal["redacted_thinking"]
    data: str
    cache_control: _CacheControl | None = None


class _ThinkingEnabled(WireModel):
    type: Literal["enabled"]
    budget_tokens: int = Field(ge=1024)
    display: str | None = None


class _ThinkingAdaptive(WireModel):
    type: Literal["adaptive"]
    display: str | None = None


class _ThinkingDisabled(WireModel):
    type: Literal["disabled"]


_THINKING: dict[str, type[WireModel]] = {
    "enabled": _ThinkingEnabled,
    "adaptive": _ThinkingAdaptive,
    "disabled": _ThinkingDisabled,
}


class _JsonSchemaFormat(WireModel):
    type: Literal["json_schema"]
    schema_: dict[str, Any] = Field(alias="schema")


class _OutputConfig(WireModel):
    effort: str | None = None
    format: _JsonSchemaFormat | None = None


class _ContextManagement(WireModel):
    edits: list[dict[str, Any]] | None = None


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
    role: Literal["user", "assistant", "system"]
    content: Any


class _TurnTiming(WireModel):
    type: Literal["now"]
    now: str = Field(min_length=1)


class _TurnOutputConfig(WireModel):
    """``output_config`` on a ``role: "system"`` message: what applies from that turn on
    (``format`` stays top-level only, as in the API)."""

    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = None
    timing: _TurnTiming | None = None


class _SystemMessage(WireModel):
    """A mid-conversation ``role: "system"`` message, with the per-message fields the API
    takes on it alone (``output_config``, ``clear_at``)."""

    role: Literal["system"]
    content: Any = None
    output_config: _TurnOutputConfig | None = None
    clear_at: Literal["next_user_message", "never"] | None = None


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
    thinking: Any = None
    output_config: _OutputConfig | None = None
    context_management: _ContextManagement | None = None
    service_tier: Literal["auto", "standard_only"] | None = None
    inference_geo: str | None = None
    container: Any = None
    cache_control: _CacheControl | None = None
    # Beta features the gateway cannot serve; validated in .requests to answer as the API does.
    thread: Any = None
    mcp_servers: Any = None


_BLOCKS: dict[str, type[WireModel]] = {
    "text": _Text,
    "image": _Image,
    "tool_use": _ToolUse,
    "tool_result": _ToolResult,
    "document": _Document,
    "search_result": _SearchResult,
    "thinking": _Thinking,
    "redacted_thinking": _RedactedThinking,
}
_RESULT_PARTS: dict[str, type[WireModel]] = {
    "text": _Text,
    "image": _Image,
    "document": _Document,
    "search_result": _SearchResult,
}
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
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None
    cache_creation: dict[str, Any] | None = None


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


class _ThinkingOut(LenientModel):
    type: Literal["thinking"]
    thinking: str
    signature: str | None = None


class _RedactedThinkingOut(LenientModel):
    type: Literal["redacted_thinking"]
    data: str
