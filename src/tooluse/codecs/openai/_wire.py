"""The pydantic models of the Chat Completions wire format, and its constants.

Requests are validated strictly (:class:`WireModel`: unknown fields are errors, so nothing a
client sends is silently ignored); responses from a backend leniently (:class:`LenientModel`:
servers add fields). Kept apart from the translation code so that :mod:`.requests`,
:mod:`.responses` and :mod:`.stream` share one definition of the format.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .._common import NAME_PATTERN, LenientModel, WireModel

TARGET = "openai"
MAX_STOP = 4

# --- request models ------------------------------------------------------------------------


class _StreamOptions(WireModel):
    include_usage: bool | None = None


class _Request(WireModel):
    model: str = Field(min_length=1)
    messages: list[Any] = Field(min_length=1)
    tools: list[Any] | None = None
    tool_choice: Any = None
    parallel_tool_calls: bool | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    stop: Any = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    stream: bool | None = None
    stream_options: _StreamOptions | None = None
    user: str | None = None
    reasoning_effort: str | None = None


class _SystemMessage(WireModel):
    role: Literal["system", "developer"]
    content: Any
    name: str | None = None


class _UserMessage(WireModel):
    role: Literal["user"]
    content: Any
    name: str | None = None


class _Function(WireModel):
    name: str = Field(min_length=1)
    arguments: str


class _ToolCall(WireModel):
    id: str = Field(min_length=1)
    type: Literal["function"]
    function: _Function


class _AssistantMessage(WireModel):
    role: Literal["assistant"]
    content: Any = None
    tool_calls: list[Any] | None = None
    refusal: str | None = None
    name: str | None = None
    #: The turn's reasoning as vLLM, SGLang, DeepSeek (``reasoning_content``) or Ollama and
    #: newer vLLM (``reasoning``) return it; see :mod:`._reasoning`.
    reasoning_content: str | None = None
    reasoning: str | None = None


class _ToolMessage(WireModel):
    role: Literal["tool"]
    tool_call_id: str = Field(min_length=1)
    content: Any


class _TextPart(WireModel):
    type: Literal["text"]
    text: str


class _RefusalPart(WireModel):
    type: Literal["refusal"]
    refusal: str


class _ImageUrl(WireModel):
    url: str = Field(min_length=1)
    detail: Literal["auto", "low", "high"] | None = None


class _ImagePart(WireModel):
    type: Literal["image_url"]
    image_url: _ImageUrl


class _FunctionDef(WireModel):
    name: str = Field(pattern=NAME_PATTERN)
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class _Tool(WireModel):
    type: Literal["function"]
    function: _FunctionDef


class _NamedFunction(WireModel):
    name: str


class _NamedChoice(WireModel):
    type: Literal["function"]
    function: _NamedFunction


_MESSAGES: dict[str, type[WireModel]] = {
    "system": _SystemMessage,
    "developer": _SystemMessage,
    "user": _UserMessage,
    "assistant": _AssistantMessage,
    "tool": _ToolMessage,
}

# --- response models -----------------------------------------------------------------------


class _UsageIn(LenientModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _MessageIn(LenientModel):
    role: Literal["assistant"] = "assistant"
    content: str | None = None
    refusal: str | None = None
    tool_calls: list[Any] | None = None
    reasoning_content: Any = None
    reasoning: Any = None


class _ChoiceIn(LenientModel):
    index: int = 0
    message: _MessageIn
    finish_reason: str | None = None


class _ResponseIn(LenientModel):
    id: str = ""
    model: str | None = None
    choices: list[_ChoiceIn] = Field(min_length=1, max_length=1)
    usage: _UsageIn | None = None


class _CallIn(LenientModel):
    id: str
    type: Literal["function"] = "function"
    function: _Function
