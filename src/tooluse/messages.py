"""The neutral conversation model.

Every wire format (Anthropic Messages, Bedrock Converse, OpenAI Chat Completions, the
prompt-based XML format) is translated to and from these types by its codec in
``tooluse.codecs``; the runner, the backends and the gateway only ever see these types.
This module knows no wire format: no field here is named after one API's spelling.

Why pydantic: the same models validate user-built conversations, compare by value in
round-trip tests, and serialise with ``model_dump()`` for saving a conversation.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .server_specs import (
    AppliedEdit,
    ContextEdit,
    MCPServerSpec,
    ServerTools,
    ToolFilter,
    ToolSearchSpec,
)

__all__ = [
    "SERVER_TOOL_BLOCKS",
    "AppliedEdit",
    "CacheHint",
    "CallOrigin",
    "ContentBlock",
    "ContextEdit",
    "ImageBlock",
    "JsonBlock",
    "MCPApprovalBlock",
    "MCPCallBlock",
    "MCPListToolsBlock",
    "MCPServerSpec",
    "Message",
    "Passthrough",
    "PlacedMessage",
    "Reasoning",
    "RedactedThinkingBlock",
    "Request",
    "Response",
    "ResultPart",
    "Role",
    "ServerTools",
    "StopReason",
    "TextBlock",
    "ThinkingBlock",
    "ToolChoice",
    "ToolFilter",
    "ToolReferenceBlock",
    "ToolResultBlock",
    "ToolSearchBlock",
    "ToolSearchSpec",
    "ToolSpec",
    "ToolUseBlock",
    "Usage",
    "ValueChange",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class CacheHint(_Model):
    """A prompt-cache breakpoint on a block or tool: cache the prompt's prefix up to and
    including it (Messages ``cache_control``, a Converse ``cachePoint`` after it).

    ``ttl``: how long the entry should live (``5m``, ``1h``), None for the provider's default.
    A hint, not content: a target that cannot carry it leaves it out (docs/server.md).
    """

    ttl: str | None = None


class TextBlock(_Model):
    """Plain text, including any ``<thinking>`` or ``<answer>`` a model writes."""

    type: Literal["text"] = "text"
    text: str
    cache: CacheHint | None = None


def _text_as_block(value: Any) -> Any:
    """``content`` given as a plain string means one text block."""
    if isinstance(value, str):
        return [TextBlock(text=value)]
    return value


class ImageBlock(_Model):
    """An image, either inline (base64 text, as every JSON wire format carries it) or by URL.

    ``data`` stays base64 text rather than bytes so that a conversation passes through
    unchanged even when a client sends an abbreviated or non-canonical encoding.
    """

    type: Literal["image"] = "image"
    media_type: str | None = None
    data: str | None = None
    url: str | None = None
    cache: CacheHint | None = None

    @model_validator(mode="after")
    def _one_source(self) -> ImageBlock:
        if (self.data is None) == (self.url is None):
            raise ValueError("an image needs exactly one of 'data' (base64) or 'url'")
        if self.data is not None and not self.media_type:
            raise ValueError("an inline image needs a media_type such as 'image/png'")
        return self


class JsonBlock(_Model):
    """A JSON value returned by a tool (Bedrock's ``{"json": ...}`` result content)."""

    type: Literal["json"] = "json"
    value: Any


class ThinkingBlock(_Model):
    """The model's reasoning before its answer (Messages ``thinking``, Converse
    ``reasoningContent.reasoningText``, Chat ``reasoning_content``, a Responses ``reasoning``
    item, a local model's ``<think>`` section).

    - ``text``: the reasoning as the model or provider gave it (may be empty when only an
      encrypted form or a summary came back);
    - ``summary``: a provider's summary parts, when it gives them beside or instead of the
      text (Responses ``summary_text`` parts);
    - ``signature``: the provider's opaque proof or encrypted payload (Messages
      ``signature``, Converse ``reasoningText.signature``, Responses ``encrypted_content``),
      kept byte for byte: an API that issued it needs it back unchanged in the next turn;
    - ``id``: the provider's id of the block, where it has one (a Responses item id).

    A backend of another vendor cannot check a signature: it reads ``text`` (or ignores the
    block, by the policy in docs/server.md); it never invents one.

    Where a format has one text for the block (Chat ``reasoning_content``, a Messages
    ``thinking`` string, the legacy ``<thinking>`` section, a text model's prompt, a span's
    attribute), it is :attr:`joined_text`; a stream joins its pieces the same way, as they
    come (:class:`tooluse.stream.ThinkingJoiner`).
    """

    #: What joins the block's pieces (its text, each summary part), and one block to the
    #: next, where they become one text.
    SEPARATOR: ClassVar[str] = "\n\n"

    type: Literal["thinking"] = "thinking"
    text: str = ""
    summary: list[str] = Field(default_factory=list)
    signature: str | None = None
    id: str | None = None

    @property
    def joined_text(self) -> str:
        """The block as one readable text: its text, then each summary part, joined by
        :attr:`SEPARATOR`; empty pieces are left out."""
        return self.SEPARATOR.join(p for p in (self.text, *self.summary) if p)


class RedactedThinkingBlock(_Model):
    """Reasoning the provider returns only in encrypted form (Messages
    ``redacted_thinking.data``, Converse ``reasoningContent.redactedContent`` as base64
    text): opaque, kept byte for byte to be handed back to the same provider."""

    type: Literal["redacted_thinking"] = "redacted_thinking"
    data: str


class ValueChange(_Model):
    """One change made to a call's input after the model wrote it: the parameter (a
    top-level key of the input), its value before and after, and the rule that made it.
    ``kind`` says whether the parameter was ``changed``, ``added`` (no value before) or
    ``removed`` (no value after); the missing side is None."""

    parameter: str
    kind: Literal["changed", "added", "removed"] = "changed"
    before: Any = None
    after: Any = None
    rule: str


class CallOrigin(_Model):
    """Where a call came from, recorded by the backend that produced it.

    - ``source="model"``: written by the model as it is (``steered_by`` names the rules,
      if any, that constrained its decoding, e.g. which tool the first call must name);
    - ``"edited"``: written by the model, then changed by ``changes`` (each with its rule);
    - ``"added"``: not written by the model at all, made by ``rule`` (only ever with the
      user's consent: an opt-in preset or option).

    The origin is tooluse's own record: no wire format carries it (a codec encodes the call
    as the API specifies; the gateway reports origins in a response header and its log).
    """

    source: Literal["model", "edited", "added"] = "model"
    rule: str | None = None
    changes: list[ValueChange] = Field(default_factory=list)
    steered_by: list[str] = Field(default_factory=list)

    def describe(self) -> str:
        """One line: ``model``, ``model (steered: rank_tools)``, ``edited: unit 'cm' ->
        'meters' (stated_units)``, ``added (fan_out)``."""
        if self.source == "added":
            text = f"added ({self.rule or 'unknown rule'})"
        elif self.source == "edited":
            text = "edited: " + "; ".join(_describe_change(c) for c in self.changes)
        else:
            text = "model"
        if self.steered_by:
            text += f" (steered: {', '.join(self.steered_by)})"
        return text


def _describe_change(change: ValueChange) -> str:
    def show(value: Any) -> str:
        text = json.dumps(value, ensure_ascii=False, default=str)
        return text if len(text) <= 60 else text[:57] + "..."

    if change.kind == "added":
        return f"{change.parameter} added {show(change.after)} ({change.rule})"
    if change.kind == "removed":
        return f"{change.parameter} removed {show(change.before)} ({change.rule})"
    return f"{change.parameter} {show(change.before)} -> {show(change.after)} ({change.rule})"


class ToolUseBlock(_Model):
    """A call the model asks the client to make.

    ``origin``: where the call came from (:class:`CallOrigin`), set by backends that can
    change or add calls (the prompt-based one); None means as the model or upstream wrote
    it. No codec writes it to a wire body.
    """

    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    origin: CallOrigin | None = None
    cache: CacheHint | None = None

    @property
    def source(self) -> Literal["model", "edited", "added"]:
        """``model``, ``edited`` or ``added`` (:class:`CallOrigin`)."""
        return "model" if self.origin is None else self.origin.source


class ToolReferenceBlock(_Model):
    """A tool result's part that names a tool to load: a deferred tool (``ToolSpec.deferred``)
    named here is offered to the model from then on (Messages ``tool_reference``, what a
    client's own tool search returns)."""

    type: Literal["tool_reference"] = "tool_reference"
    name: str


ResultPart = Annotated[TextBlock | ImageBlock | JsonBlock | ToolReferenceBlock,
                       Field(discriminator="type")]


class ToolResultBlock(_Model):
    """The answer to one :class:`ToolUseBlock`; ``is_error`` marks a failed call.

    Empty ``content`` means the tool succeeded with no output.
    """

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: list[ResultPart] = Field(default_factory=list)
    is_error: bool = False
    cache: CacheHint | None = None

    _text_shorthand = field_validator("content", mode="before")(_text_as_block)

    def text(self) -> str:
        """The result's text parts joined, JSON parts serialised; images left out."""
        parts: list[str] = []
        for part in self.content:
            if isinstance(part, TextBlock):
                parts.append(part.text)
            elif isinstance(part, JsonBlock):
                parts.append(json.dumps(part.value, ensure_ascii=False))
        return "\n".join(parts)


class ToolSearchBlock(_Model):
    """A search of the request's deferred tools that the server ran for the model within
    its turn, call and result in one (Messages ``server_tool_use`` with its
    ``tool_search_tool_result``, Responses ``tool_search_call`` with its
    ``tool_search_output``).

    ``name`` is the search tool the model called, ``input`` what it wrote (``{"query":
    ...}``), ``found`` the names of the tools found, best first: they are loaded from here
    on. ``error``: why the search failed (an error code such as ``invalid_tool_input``),
    None when it ran."""

    type: Literal["tool_search"] = "tool_search"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    found: list[str] = Field(default_factory=list)
    error: str | None = None


class MCPCallBlock(_Model):
    """A call of an MCP server's tool that the server made for the model within its turn,
    call and result in one (Messages ``mcp_tool_use`` with its ``mcp_tool_result``,
    Responses ``mcp_call``).

    ``server`` is the MCP server's name (its label), ``name`` the tool's name on that
    server. ``content`` is the tool's result, None while the call waits for the user's
    approval (a Responses ``mcp_approval_request``, answered by an
    :class:`MCPApprovalBlock`); ``approval_request_id`` names the request a call was
    approved by."""

    type: Literal["mcp_call"] = "mcp_call"
    id: str
    server: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    content: list[ResultPart] | None = None
    is_error: bool = False
    approval_request_id: str | None = None


class MCPListToolsBlock(_Model):
    """The tools an MCP server listed when the server connected to it for the model
    (Responses ``mcp_list_tools``): each a dict of ``name``, ``description``,
    ``input_schema`` and ``annotations``; ``error`` when listing failed."""

    type: Literal["mcp_list_tools"] = "mcp_list_tools"
    id: str
    server: str
    tools: list[dict[str, Any]] = Field(default_factory=list)
    error: str | None = None


class MCPApprovalBlock(_Model):
    """The user's answer, in a user turn, to an MCP call waiting for approval (Responses
    ``mcp_approval_response``): ``request_id`` is that :class:`MCPCallBlock`'s id."""

    type: Literal["mcp_approval"] = "mcp_approval"
    request_id: str
    approve: bool
    reason: str | None = None


#: The blocks of tools the server runs itself within a turn (never the client).
SERVER_TOOL_BLOCKS = (ToolSearchBlock, MCPCallBlock, MCPListToolsBlock, MCPApprovalBlock)

ContentBlock = Annotated[
    TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock
    | RedactedThinkingBlock | ToolSearchBlock | MCPCallBlock | MCPListToolsBlock
    | MCPApprovalBlock,
    Field(discriminator="type"),
]

Role = Literal["user", "assistant"]


class Message(_Model):
    role: Role
    content: list[ContentBlock] = Field(default_factory=list)

    _text_shorthand = field_validator("content", mode="before")(_text_as_block)

    def text(self) -> str:
        """The message's text blocks concatenated."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    @property
    def tool_results(self) -> list[ToolResultBlock]:
        return [b for b in self.content if isinstance(b, ToolResultBlock)]

    @property
    def thinking(self) -> list[ThinkingBlock | RedactedThinkingBlock]:
        """The message's thinking blocks, redacted ones included, in order."""
        return [b for b in self.content if isinstance(b, (ThinkingBlock, RedactedThinkingBlock))]


class ToolSpec(_Model):
    """A tool as the model sees it: name, description and JSON Schema of its input."""

    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    #: Calls must match ``input_schema`` exactly (a grammar guarantees it on text backends).
    strict: bool = False
    #: A prompt-cache breakpoint after this tool (:class:`CacheHint`).
    cache: CacheHint | None = None
    #: Loaded only when something loads it (Messages and Responses ``defer_loading``): a
    #: tool search's result, or a :class:`ToolReferenceBlock` in a tool result; until then
    #: it is not offered to the model.
    deferred: bool = False
    #: Example inputs of the tool (Messages ``input_examples``), shown to the model with it.
    input_examples: list[dict[str, Any]] = Field(default_factory=list)


class ToolChoice(_Model):
    """How the model may use tools.

    ``auto``: it decides; ``any``: it must call some tool; ``tool``: it must call ``name``;
    ``none``: it must not call tools. ``disable_parallel_tool_use`` allows at most one call.
    """

    type: Literal["auto", "any", "tool", "none"] = "auto"
    name: str | None = None
    disable_parallel_tool_use: bool = False

    @model_validator(mode="after")
    def _name_iff_tool(self) -> ToolChoice:
        if self.type == "tool" and not self.name:
            raise ValueError("tool_choice of type 'tool' needs a 'name'")
        if self.type != "tool" and self.name is not None:
            raise ValueError(f"tool_choice of type {self.type!r} takes no 'name'")
        return self


class PlacedMessage(_Model):
    """A message of the client's conversation that the neutral one holds only in part (a
    mid-conversation system message: its text joins :attr:`Request.system`), kept verbatim
    with where it stood, so an upstream of the same API gets it back in its place.

    It stood before block ``block`` of ``Request.messages[turn]`` (``block`` may be that
    turn's length: right after it; ``turn`` may be the number of turns: at the end).
    ``system`` is how many blocks it added to the end of :attr:`Request.system` (none for
    one no longer shown); an encoder that puts it back takes those out again.
    """

    turn: int = Field(ge=0)
    block: int = Field(ge=0)
    body: dict[str, Any]
    system: int = Field(default=0, ge=0)


class Passthrough(_Model):
    """What a client's request holds that the neutral model does not carry, kept verbatim for
    a backend that speaks that same API upstream (and ignored by every other backend).

    ``api`` names the wire API (a codec's ``TARGET``); ``fields`` are top-level request
    fields, ``tools`` whole tool definitions (server tools), ``tool_fields`` the extra fields
    of a neutral tool by its name, ``headers`` HTTP headers (a beta header), ``messages``
    the messages kept in their place (:class:`PlacedMessage`). ``required`` lists the fields
    a backend that cannot forward them must refuse rather than ignore (a server tool cannot
    be left out silently: the model would answer without it).
    """

    api: str
    fields: dict[str, Any] = Field(default_factory=dict)
    tools: list[dict[str, Any]] = Field(default_factory=list)
    tool_fields: dict[str, dict[str, Any]] = Field(default_factory=dict)
    headers: dict[str, str] = Field(default_factory=dict)
    messages: list[PlacedMessage] = Field(default_factory=list)
    required: list[str] = Field(default_factory=list)
    #: The names of all the request's tools in the client's order (server tools among
    #: them), for an upstream of that API to get them in that order.
    tool_order: list[str] = Field(default_factory=list)


class Reasoning(_Model):
    """What a request asks of the model's reasoning, in one neutral field.

    - ``mode``: ``enabled`` (think, within ``budget_tokens`` where given), ``adaptive``
      (the model decides how much), ``disabled``;
    - ``budget_tokens``: a token budget (Messages ``thinking.budget_tokens``, Converse's
      ``reasoning_config.budget_tokens``);
    - ``effort``: a named level (Chat ``reasoning_effort``, Responses ``reasoning.effort``:
      ``none``, ``minimal``, ``low``, ``medium``, ``high``, ``xhigh``, kept as given);
    - ``summary``: the summary a Responses client asks for (``auto``, ``concise``,
      ``detailed``);
    - ``display``: how Messages shows thinking (``summarized``, ``omitted``).

    Each codec maps its own spelling to these and back; a field a target cannot express is
    left out by the policy in docs/server.md.
    """

    mode: Literal["enabled", "adaptive", "disabled"] = "enabled"
    budget_tokens: int | None = None
    effort: str | None = None
    summary: str | None = None
    display: str | None = None

    @property
    def on(self) -> bool:
        """The request asks the model to reason."""
        return self.mode != "disabled" and self.effort not in ("none",)


class Request(_Model):
    """One model call: the conversation so far, the tools and the sampling settings."""

    model: str | None = None
    system: list[TextBlock] = Field(default_factory=list)
    messages: list[Message] = Field(default_factory=list)
    tools: list[ToolSpec] = Field(default_factory=list)
    tool_choice: ToolChoice | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    stop_sequences: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    #: Structured output: the answer is one JSON value matching this schema, as text.
    response_schema: dict[str, Any] | None = None
    #: What the client asks of the model's reasoning; None: the API's default (no thinking).
    reasoning: Reasoning | None = None
    #: Tools the server runs for the model (a tool search, MCP servers); None: none.
    server_tools: ServerTools | None = None
    #: Edits the server makes to the history before the model sees it.
    context_edits: list[ContextEdit] = Field(default_factory=list)
    passthrough: Passthrough | None = None

    @field_validator("system", mode="before")
    @classmethod
    def _system_shorthand(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, str):
            return [TextBlock(text=value)] if value else []
        return value

    def system_text(self) -> str:
        """The system prompt's blocks joined by blank lines."""
        return "\n\n".join(b.text for b in self.system)


#: ``pause_turn``: the server paused a turn in which it ran tools for the model (it reached
#: its limit of server-side turns); sent back as it is, the turn goes on.
StopReason = Literal[
    "end_turn", "tool_use", "max_tokens", "stop_sequence", "content_filtered", "pause_turn"
]


class Usage(_Model):
    """Token counts of one call. ``input_tokens`` are the prompt tokens neither read from
    nor written to a prompt cache (the Messages API's meaning); the whole prompt is
    ``input_tokens + cache_read_input_tokens + cache_creation_input_tokens``.
    ``cache_creation_by_ttl`` splits the written tokens by the entry's ttl (``5m``, ``1h``)
    where the provider says so."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_creation_by_ttl: dict[str, int] = Field(default_factory=dict)
    #: Requests of tools the server ran within the call, by kind (``tool_search``,
    #: ``mcp_call``, an upstream's ``web_search``...).
    server_tool_requests: dict[str, int] = Field(default_factory=dict)

    @property
    def prompt_tokens(self) -> int:
        """The whole prompt: uncached, read from and written to the cache."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens


class Response(_Model):
    """The model's answer: one assistant turn."""

    id: str = ""
    model: str | None = None
    content: list[ContentBlock] = Field(default_factory=list)
    stop_reason: StopReason | None = None
    stop_sequence: str | None = None
    usage: Usage = Field(default_factory=Usage)
    #: The request's context edits as applied (None: it asked for none).
    applied_edits: list[AppliedEdit] | None = None

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.content if isinstance(b, ToolUseBlock)]

    @property
    def thinking(self) -> list[ThinkingBlock | RedactedThinkingBlock]:
        """The answer's thinking blocks, redacted ones included, in order."""
        return [b for b in self.content if isinstance(b, (ThinkingBlock, RedactedThinkingBlock))]

    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    def to_message(self) -> Message:
        """This answer as the assistant turn of the conversation."""
        return Message(role="assistant", content=list(self.content))
