"""Pydantic models of the Converse wire format, and the constants the other modules share.

Requests are validated strictly (:class:`WireModel`: unknown keys are errors, as Converse's
ValidationException makes them); responses leniently (:class:`LenientModel`: Bedrock may add
fields). Only shapes live here; what the fields mean for the neutral model is the business of
:mod:`.requests`, :mod:`.responses` and :mod:`.stream`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from .._common import NAME_PATTERN, LenientModel, WireModel

TARGET = "bedrock"
IMAGE_FORMATS = ("png", "jpeg", "gif", "webp")

Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
# botocore's model of Converse allows '.' and ':' in tool-use ids (not in tool names).
ToolUseId = Annotated[str, StringConstraints(pattern=r"^[a-zA-Z0-9_.:-]{1,64}$")]


# --- requests ----------------------------------------------------------------------------


class _Inference(WireModel):
    maxTokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=1)
    topP: float | None = Field(default=None, ge=0, le=1)
    stopSequences: list[str] | None = Field(default=None, max_length=2500)


class _ToolConfig(WireModel):
    tools: list[Any] = Field(min_length=1)
    toolChoice: Any = None


class _ToolSpec(WireModel):
    name: Name
    description: str | None = Field(default=None, min_length=1)
    inputSchema: Any


class _ToolUse(WireModel):
    toolUseId: ToolUseId
    name: Name
    input: Any


class _ToolResult(WireModel):
    toolUseId: ToolUseId
    content: list[Any]
    status: Literal["success", "error"] | None = None


class _Image(WireModel):
    format: Literal["png", "jpeg", "gif", "webp"]
    source: Any


class _CachePoint(WireModel):
    type: Literal["default"]
    ttl: Literal["5m", "1h"] | None = None


class _Message(WireModel):
    role: Literal["user", "assistant"]
    content: list[Any]


class _ToolChoiceTool(WireModel):
    name: Name


class _Empty(WireModel):
    pass


class _AdditionalFields(BaseModel):
    """Model-specific fields: ``top_k`` is applied, a reasoning setting is read (by
    :mod:`.reasoning`); all but ``top_k`` are kept for a Bedrock upstream."""

    model_config = ConfigDict(extra="allow", strict=True)

    top_k: int | None = Field(default=None, ge=0)


class _Document(WireModel):
    format: Literal["pdf", "csv", "doc", "docx", "xls", "xlsx", "html", "txt", "md"] | None = None
    name: str = Field(min_length=1)
    source: dict[str, Any]
    context: str | None = None
    citations: dict[str, Any] | None = None


#: Document formats carried as text (their bytes decoded as UTF-8).
TEXT_DOCUMENTS = ("csv", "html", "txt", "md")


class _GuardText(WireModel):
    text: str
    qualifiers: list[Literal["grounding_source", "query", "guard_content"]] | None = None


class _ServiceTier(WireModel):
    type: Literal["priority", "default", "flex", "reserved"]


class _PerformanceConfig(WireModel):
    latency: Literal["standard", "optimized"]


class _ReasoningText(WireModel):
    text: str
    signature: str | None = None


class _ReasoningTextIn(LenientModel):
    text: str = ""
    signature: str | None = None


class _NovaReasoning(WireModel):
    """Amazon Nova 2's ``reasoningConfig``."""

    type: Literal["enabled", "disabled"]
    maxReasoningEffort: Literal["low", "medium", "high"] | None = None


class _Request(WireModel):
    modelId: str | None = None
    messages: list[Any]
    system: list[Any] | None = None
    inferenceConfig: _Inference | None = None
    toolConfig: _ToolConfig | None = None
    additionalModelRequestFields: _AdditionalFields | None = None
    requestMetadata: dict[str, str] | None = None
    serviceTier: _ServiceTier | None = None
    performanceConfig: _PerformanceConfig | None = None


# --- responses ---------------------------------------------------------------------------


class _UsageIn(LenientModel):
    inputTokens: int = 0
    outputTokens: int = 0


class _OutputMessage(LenientModel):
    role: Literal["assistant"] = "assistant"
    content: list[Any]


class _Output(LenientModel):
    message: _OutputMessage


class _ResponseIn(LenientModel):
    output: _Output
    stopReason: str | None = None
    usage: _UsageIn | None = None
    additionalModelResponseFields: dict[str, Any] | None = None
    ResponseMetadata: dict[str, Any] | None = None
