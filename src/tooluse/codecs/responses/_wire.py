"""The pydantic models of the Responses API wire format, and its constants.

The top-level request is validated strictly (:class:`WireModel`: a field the API does not
have is an error). Input *items* ignore fields they do not model (``status``, ``id``,
``phase``, ``caller``, ``annotations``, ``logprobs``, ``prompt_cache_breakpoint``...):
clients hand earlier output items back as input verbatim, and the API keeps adding fields
to them, so a client must not break when it does. The fields an item is made of are still
checked, strictly typed. Field names follow the openai SDK's ``types/responses``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .._common import NAME_PATTERN, LenientModel, WireModel

TARGET = "responses"


class ItemModel(BaseModel):
    """Base of input items and their parts: strict types, unknown fields ignored."""

    model_config = ConfigDict(extra="ignore", strict=True)


# --- request: top level ------------------------------------------------------------------


class _Request(WireModel):
    model: str = Field(min_length=1)
    input: str | list[Any] | None = None
    instructions: str | None = None
    tools: list[Any] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    max_output_tokens: int | None = Field(default=None, ge=1)
    max_tool_calls: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    top_logprobs: int | None = Field(default=None, ge=0, le=20)
    text: dict[str, Any] | None = None
    reasoning: dict[str, Any] | None = None
    store: bool | None = None
    stream: bool | None = None
    stream_options: dict[str, Any] | None = None
    previous_response_id: str | None = None
    include: list[str] | None = None
    metadata: dict[str, str] | None = None
    truncation: Literal["auto", "disabled"] | None = None
    user: str | None = None
    safety_identifier: str | None = None
    prompt_cache_key: str | None = None
    prompt_cache_retention: str | None = None
    prompt_cache_options: dict[str, Any] | None = None
    service_tier: str | None = None
    background: bool | None = None
    background_options: dict[str, Any] | None = None
    context_management: list[Any] | None = None
    conversation: Any = None
    prompt: Any = None
    moderation: Any = None
    image: dict[str, Any] | None = None
    access_programs: dict[str, Any] | None = None
    #: Codex CLI's own field (its session and turn ids); not in the API reference.
    client_metadata: dict[str, Any] | None = None


class _TextConfig(WireModel):
    format: dict[str, Any] | None = None
    verbosity: Literal["low", "medium", "high"] | None = None


class _JsonSchemaFormat(WireModel):
    type: Literal["json_schema"]
    name: str = Field(min_length=1, max_length=64)
    schema_: dict[str, Any] = Field(alias="schema")
    description: str | None = None
    strict: bool | None = None


class _Reasoning(WireModel):
    effort: Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"] | None = None
    summary: Literal["auto", "concise", "detailed"] | None = None
    generate_summary: Literal["auto", "concise", "detailed"] | None = None
    context: Any = None


# --- request: tools ------------------------------------------------------------------------


class _FunctionTool(WireModel):
    type: Literal["function"]
    name: str = Field(pattern=NAME_PATTERN)
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None
    defer_loading: bool | None = None
    allowed_callers: list[str] | None = None
    output_schema: dict[str, Any] | None = None


class _GrammarFormat(WireModel):
    type: Literal["grammar"]
    syntax: Literal["lark", "regex"]
    definition: str = Field(min_length=1)


class _CustomTool(WireModel):
    type: Literal["custom"]
    name: str = Field(pattern=NAME_PATTERN)
    description: str | None = None
    format: dict[str, Any] | None = None
    defer_loading: bool | None = None
    allowed_callers: list[str] | None = None


class _NamespaceTool(WireModel):
    type: Literal["namespace"]
    name: str = Field(pattern=NAME_PATTERN)
    description: str = ""
    tools: list[Any] = Field(min_length=1)


# --- request: input items -----------------------------------------------------------------


class _InputText(ItemModel):
    type: Literal["input_text", "output_text"]
    text: str


class _Refusal(ItemModel):
    type: Literal["refusal"]
    refusal: str


class _InputImage(ItemModel):
    type: Literal["input_image"]
    image_url: str | None = Field(default=None, min_length=1)  # "" is no image: a 400, as in Chat
    file_id: str | None = None
    detail: str | None = None


class _InputFile(ItemModel):
    type: Literal["input_file"]
    file_data: str | None = None
    file_id: str | None = None
    file_url: str | None = None
    filename: str | None = None


class _Message(ItemModel):
    type: Literal["message"] = "message"
    role: Literal["user", "assistant", "system", "developer"]
    content: str | list[Any]
    id: str | None = None


class _FunctionCall(ItemModel):
    type: Literal["function_call"]
    call_id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    arguments: str
    namespace: str | None = None
    id: str | None = None


class _FunctionCallOutput(ItemModel):
    type: Literal["function_call_output", "custom_tool_call_output"]
    call_id: str = Field(min_length=1)
    output: str | list[Any]
    id: str | None = None


class _CustomToolCall(ItemModel):
    type: Literal["custom_tool_call"]
    call_id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    input: str
    namespace: str | None = None
    id: str | None = None


class _SummaryText(ItemModel):
    type: Literal["summary_text"]
    text: str


class _ReasoningText(ItemModel):
    type: Literal["reasoning_text"]
    text: str


class _ReasoningItem(ItemModel):
    type: Literal["reasoning"]
    summary: list[_SummaryText]
    content: list[_ReasoningText] | None = None
    encrypted_content: str | None = None
    id: str | None = None


class _ItemReference(ItemModel):
    type: Literal["item_reference"]
    id: str


# --- responses (from an upstream) -----------------------------------------------------------


class _UsageIn(LenientModel):
    input_tokens: int = 0
    output_tokens: int = 0


class _IncompleteIn(LenientModel):
    reason: str | None = None


class _ResponseIn(LenientModel):
    id: str = ""
    object: Literal["response"] = "response"
    model: str | None = None
    status: str | None = None
    output: list[Any] = Field(default_factory=list)
    incomplete_details: _IncompleteIn | None = None
    error: dict[str, Any] | None = None
    usage: _UsageIn | None = None


class _OutputMessageIn(LenientModel):
    type: Literal["message"]
    content: list[Any] = Field(default_factory=list)


class _FunctionCallIn(LenientModel):
    type: Literal["function_call"]
    call_id: str
    name: str
    arguments: str = ""
    namespace: str | None = None


class _ReasoningIn(LenientModel):
    type: Literal["reasoning"]
    id: str | None = None
    summary: list[_SummaryText] = Field(default_factory=list)
    content: list[_ReasoningText] | None = None
    encrypted_content: str | None = None


class _CustomToolCallIn(LenientModel):
    type: Literal["custom_tool_call"]
    call_id: str
    name: str
    input: str = ""
    namespace: str | None = None
