"""Messages API requests: decoding with the API's validation, and encoding.

Decoding validates a request the way the Messages API does and reports the first problem
with the API's field path (``messages.0.content.1.tool_use_id: Field required``), so the
gateway can answer ``invalid_request_error`` exactly as the real API would. Rules beyond
field shapes follow the real API:

- consecutive turns of the same role are **merged** into one turn (the API documents that it
  combines them), so the neutral conversation alternates;
- the first turn must be ``user``; a turn's content may be empty only for a final assistant
  turn (a prefill);
- every ``tool_use`` must be answered by a ``tool_result`` in the next user turn, and every
  ``tool_result`` must answer a ``tool_use`` of the turn before;
- ``tool_choice`` needs ``tools`` and, for ``{"type": "tool"}``, one of their names.

``cache_control`` breakpoints become :class:`~tooluse.messages.CacheHint` on their block
or tool and go back where they were (:mod:`.cache`).
Thinking blocks and the ``thinking`` setting are carried by the rules of :mod:`.thinking`.
``stream`` is validated but is not part of :class:`~tooluse.messages.Request`: read it with
:func:`stream_requested`.

Encoding (:func:`~.request_encoding.encode_request`), the reverse direction used by the
Anthropic backend and ``tooluse convert``, is :mod:`.request_encoding`.
"""

from __future__ import annotations

from typing import Any

from ...errors import WireFormatError
from ...messages import (
    ContentBlock,
    ImageBlock,
    Message,
    Passthrough,
    PlacedMessage,
    Request,
    ServerTools,
    TextBlock,
    ToolChoice,
    ToolReferenceBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from .._common import (
    PairingWords,
    Path,
    Turn,
    check_input_schema,
    check_tool_pairing,
    dispatch,
    validate,
)
from .._images import decode_base64, sniff_media_type
from . import system_messages, thinking
from ._wire import (
    _BLOCKS,
    _CHOICES,
    _RESULT_PARTS,
    _SOURCES,
    TARGET,
    TOOL_EXTRAS,
    _Base64Source,
    _Document,
    _Image,
    _Message,
    _RedactedThinking,
    _Request,
    _SearchResult,
    _SystemMessage,
    _Text,
    _Thinking,
    _Tool,
    _ToolResult,
    _ToolUse,
    _UrlSource,
)
from .cache import hint
from .context import decode_edits
from .server_tools import (
    BLOCK_MODELS,
    SERVER_BLOCK_TYPES,
    decode_mcp_servers,
    decode_tool,
    pair_blocks,
    reference_part,
)

#: Every block a history message may hold, by ``type``.
_HISTORY_BLOCKS = {**_BLOCKS, **BLOCK_MODELS}

_ROLE_BLOCKS = {
    "user": ("text", "image", "tool_result", "document", "search_result"),
    "assistant": ("text", "tool_use", "thinking", "redacted_thinking", *SERVER_BLOCK_TYPES),
}
#: Top-level fields kept verbatim for an Anthropic upstream (ignored by other backends; the
#: policy table in docs/server.md says why for each).
_FORWARDED = ("output_config", "service_tier", "inference_geo", "container", "cache_control",
              "context_management", "mcp_servers")

_PAIRING = PairingWords(
    missing=lambda ids: (
        "`tool_use` ids were found without `tool_result` blocks immediately after: "
        + ", ".join(ids)
        + ". Each `tool_use` block must have a corresponding `tool_result` block in the next "
        "message."
    ),
    unexpected=lambda i: (
        f"unexpected `tool_use_id` found in `tool_result` blocks: {i}. Each `tool_result` "
        "block must have a corresponding `tool_use` block in the previous message."
    ),
    duplicate_use=lambda i: f"`tool_use` ids must be unique; {i} appears more than once",
    duplicate_result=lambda i: f"each `tool_use` must have a single result; {i} is answered twice",
)


# --- request decoding --------------------------------------------------------------------


def stream_requested(data: Any) -> bool:
    """Whether a Messages request asks for a stream (``"stream": true``); a non-boolean
    ``stream`` is an error, as in the real API."""
    if not isinstance(data, dict) or data.get("stream") is None:
        return False
    value = data["stream"]
    if not isinstance(value, bool):
        raise WireFormatError("Input should be a valid boolean", ("stream",))
    return value


def _image(block: _Image, path: Path) -> ImageBlock:
    source = dispatch(block.source, (*path, "source"), _SOURCES)
    if isinstance(source, _Base64Source):
        _check_image(source, (*path, "source", "data"))
        return ImageBlock(media_type=source.media_type, data=source.data,
                          cache=hint(block.cache_control))
    assert isinstance(source, _UrlSource)
    return ImageBlock(url=source.url, cache=hint(block.cache_control))


def _check_image(source: _Base64Source, path: Path) -> None:
    """Refuse what the Messages API refuses: data that is not base64, bytes that are not an
    image, an image whose bytes are not of the declared ``media_type``."""
    raw = decode_base64(source.data)
    if raw is None:
        raise WireFormatError("The image data is not valid base64.", path)
    actual = sniff_media_type(raw)
    if actual is None:
        raise WireFormatError("Could not process image", path)
    if actual != source.media_type:
        raise WireFormatError(
            f"Image does not match the provided media type {source.media_type}", path
        )


def _text(text: str, path: Path, block: _Text | None = None) -> TextBlock:
    if not text:
        raise WireFormatError("text content blocks must be non-empty", (*path, "text"))
    return TextBlock(text=text, cache=hint(block.cache_control) if block is not None else None)


def _document(block: _Document, path: Path) -> TextBlock:
    """A text document is carried as text (its title first); a PDF or a document by URL
    is refused: no tooluse backend reads PDFs, and dropping it would answer without it."""
    source = block.source
    kind = source.get("type")
    if kind == "text" and isinstance(source.get("data"), str):
        body = source["data"]
    elif kind == "content" and isinstance(source.get("content"), (str, list)):
        parts = source["content"]
        body = parts if isinstance(parts, str) else "\n\n".join(
            _text(validate(_Text, p, (*path, "source", "content", k)).text,
                  (*path, "source", "content", k)).text
            for k, p in enumerate(parts)
        )
    else:
        raise WireFormatError(
            f"document source type {kind!r} is not supported by this gateway (only 'text' and "
            "'content' documents are carried, as text)",
            (*path, "source", "type"),
        )
    head = [x for x in (block.title, block.context) if x]
    return _text("\n\n".join([*head, body]), path).model_copy(
        update={"cache": hint(block.cache_control)})


def _search_result(block: _SearchResult, path: Path) -> TextBlock:
    """A search result is carried as text: its title, source and content."""
    content = "\n\n".join(_text(p.text, (*path, "content", k)).text
                           for k, p in enumerate(block.content))
    return TextBlock(text=f"{block.title}\n{block.source}\n\n{content}",
                     cache=hint(block.cache_control))


def _result_content(content: Any, path: Path
                    ) -> list[TextBlock | ImageBlock | ToolReferenceBlock]:
    if content is None:
        return []
    if isinstance(content, str):
        return [TextBlock(text=content)] if content else []
    if not isinstance(content, list):
        raise WireFormatError("Input should be a valid string or a valid list", path)
    parts: list[TextBlock | ImageBlock | ToolReferenceBlock] = []
    for k, raw in enumerate(content):
        if isinstance(raw, dict) and raw.get("type") == "tool_reference":
            parts.append(reference_part(raw, (*path, k)))
            continue
        part = dispatch(raw, (*path, k), _RESULT_PARTS)
        if isinstance(part, _Text):
            parts.append(_text(part.text, (*path, k), part))
        elif isinstance(part, _Document):
            parts.append(_document(part, (*path, k)))
        elif isinstance(part, _SearchResult):
            parts.append(_search_result(part, (*path, k)))
        else:
            assert isinstance(part, _Image)
            parts.append(_image(part, (*path, k)))
    return parts


def _block(raw: Any, path: Path, role: str) -> Any:
    """The neutral block of a history block (a server tool's block: its wire model, joined
    with its pair by :func:`.server_tools.pair_blocks`)."""
    block = dispatch(raw, path, _HISTORY_BLOCKS)
    kind = raw["type"]
    if kind not in _ROLE_BLOCKS[role]:
        raise WireFormatError(f"`{kind}` blocks are not allowed in {role} messages", (*path, "type"))
    if kind in SERVER_BLOCK_TYPES:
        return block
    if isinstance(block, (_Thinking, _RedactedThinking)):
        return thinking.decode_block(block)
    if isinstance(block, _Text):
        return _text(block.text, path, block)
    if isinstance(block, _Image):
        return _image(block, path)
    if isinstance(block, _Document):
        return _document(block, path)
    if isinstance(block, _SearchResult):
        return _search_result(block, path)
    if isinstance(block, _ToolUse):
        return ToolUseBlock(id=block.id, name=block.name, input=block.input,
                            cache=hint(block.cache_control))
    assert isinstance(block, _ToolResult)
    return ToolResultBlock(
        tool_use_id=block.tool_use_id,
        content=list(_result_content(block.content, (*path, "content"))),
        is_error=bool(block.is_error),
        cache=hint(block.cache_control),
    )


def _system_message(raw: Any, path: Path) -> tuple[_SystemMessage, list[TextBlock]]:
    """A mid-conversation ``role: "system"`` message and its text blocks (:mod:`.system_messages`
    says where they go). Its content may be left out, or empty, when its ``output_config``
    sets something: the API takes a message that only sets the next turn's effort."""
    msg = validate(_SystemMessage, raw, path)
    if msg.output_config is not None and msg.output_config.model_fields_set and \
            msg.content in (None, "", []):
        return msg, []
    if msg.content is None:
        raise WireFormatError("a system message needs content or output_config settings",
                              (*path, "content"))
    if isinstance(msg.content, str):
        return msg, [_text(msg.content, (*path, "content"))]
    if not isinstance(msg.content, list):
        raise WireFormatError("Input should be a valid string or a valid list", (*path, "content"))
    out = []
    for k, raw_block in enumerate(msg.content):
        block = dispatch(raw_block, (*path, "content", k), {"text": _Text})
        assert isinstance(block, _Text)
        out.append(_text(block.text, (*path, "content", k), block))
    return msg, out


def _turns(messages: list[Any], system: list[TextBlock], placed: list[PlacedMessage],
           said: list[_SystemMessage]) -> list[Turn]:
    """The alternating turns. A ``role: "system"`` message's text is appended to ``system``
    (unless its ``clear_at: "next_user_message"`` has cleared it), the message kept in
    ``placed`` with its place and in ``said`` for its per-message fields."""
    if not messages:
        raise WireFormatError("at least one message is required", ("messages",))
    turns: list[Turn] = []
    roles = [m.get("role") if isinstance(m, dict) else None for m in messages]
    kept = [i for i, role in enumerate(roles) if role != "system"]
    last = kept[-1] if kept else -1
    last_user = max((i for i, role in enumerate(roles) if role == "user"), default=-1)
    for i, raw in enumerate(messages):
        path: Path = ("messages", i)
        if roles[i] == "system":
            said_msg, text = _system_message(raw, path)
            if said_msg.clear_at == "next_user_message" and last_user > i:
                text = []  # the API shows it only until the next user message
            system.extend(text)
            said.append(said_msg)
            placed.append(system_messages.place([t.blocks for t in turns], raw, len(text)))
            continue
        msg = validate(_Message, raw, path)
        if isinstance(msg.content, str):
            blocks: list[tuple[Path, ContentBlock]] = (
                [((*path, "content"), TextBlock(text=msg.content))] if msg.content else []
            )
        elif isinstance(msg.content, list):
            blocks = [((*path, "content", j), _block(b, (*path, "content", j), msg.role))
                      for j, b in enumerate(msg.content)]
        else:
            raise WireFormatError(
                "Input should be a valid string or a valid list", (*path, "content")
            )
        if not blocks and not (i == last and msg.role == "assistant"):
            raise WireFormatError(
                "all messages must have non-empty content except for the optional final "
                "assistant message",
                path,
            )
        if turns and turns[-1].role == msg.role:
            turns[-1].blocks.extend(blocks)  # the API combines consecutive same-role turns
        else:
            turns.append(Turn(role=msg.role, path=path, blocks=blocks))
    for turn in turns:
        if turn.role == "assistant":
            turn.blocks = pair_blocks(turn.blocks)
    if not turns or turns[0].role != "user":
        raise WireFormatError('first message must use the "user" role', ("messages",))
    check_tool_pairing(turns, _PAIRING)
    return turns


def _system(system: Any) -> list[TextBlock]:
    if system is None:
        return []
    if isinstance(system, str):
        return [TextBlock(text=system)] if system else []
    if not isinstance(system, list):
        raise WireFormatError("Input should be a valid string or a valid list", ("system",))
    out = []
    for k, raw in enumerate(system):
        block = dispatch(raw, ("system", k), {"text": _Text})
        assert isinstance(block, _Text)
        out.append(_text(block.text, ("system", k), block))
    return out


def _tools(tools: list[Any] | None, mcp_servers: Any, passthrough: Passthrough,
           server: ServerTools) -> list[ToolSpec]:
    """The tools the model sees. Server tools and Anthropic-defined ones are read by
    :mod:`.server_tools` (and kept in ``passthrough`` for an Anthropic upstream)."""
    specs: list[ToolSpec] = []
    names: set[str] = set()
    toolsets: dict[str, Any] = {}
    for k, raw in enumerate(tools or []):
        if isinstance(raw, dict) and raw.get("type") not in (None, "custom"):
            name, spec = decode_tool(raw, ("tools", k), passthrough, server, toolsets)
            if spec is not None:
                specs.append(spec)
        else:
            tool = validate(_Tool, raw, ("tools", k))
            check_input_schema(tool.input_schema, ("tools", k, "input_schema"))
            name = tool.name
            extras = {key: raw[key] for key in TOOL_EXTRAS if raw.get(key) is not None}
            if extras:
                passthrough.tool_fields[name] = extras
            specs.append(ToolSpec(name=name, description=tool.description or "",
                                  input_schema=tool.input_schema, strict=bool(tool.strict),
                                  cache=hint(tool.cache_control),
                                  deferred=bool(tool.defer_loading),
                                  input_examples=list(tool.input_examples or [])))
        if name in names:
            raise WireFormatError("Tool names must be unique.", ("tools", k, "name"))
        names.add(name)
        passthrough.tool_order.append(name)
    if not passthrough.tools and not any("type" in f for f in passthrough.tool_fields.values()):
        passthrough.tool_order = []  # custom tools only: their order is the neutral one
    decode_mcp_servers(mcp_servers, server, toolsets)
    return specs


def _refuse_betas(req: _Request) -> None:
    """Beta features the gateway cannot serve, refused as the API refuses them, with the
    ``error.details.error_code`` SDKs read to fall back by themselves."""
    if req.thread is not None:
        raise WireFormatError(
            "message threads are not supported by this gateway; send the full conversation "
            "without `thread`",
            ("thread",),
            details={"error_code": "thread_unsupported_request", "unsupported": []},
        )


def _response_schema(req: _Request, path: Path) -> dict[str, Any] | None:
    fmt = req.output_config.format if req.output_config is not None else None
    if fmt is None:
        return None
    check_input_schema(fmt.schema_, (*path, "schema"))
    return fmt.schema_


def _tool_choice(raw: Any, specs: list[ToolSpec]) -> ToolChoice | None:
    if raw is None:
        return None
    choice = dispatch(raw, ("tool_choice",), _CHOICES)
    if not specs:
        raise WireFormatError(
            "`tool_choice` may only be specified while providing tools.", ("tool_choice",)
        )
    name = getattr(choice, "name", None)
    if name is not None and name not in {s.name for s in specs}:
        raise WireFormatError(
            f"tool {name!r} named by tool_choice is not among the provided tools",
            ("tool_choice", "name"),
        )
    return ToolChoice(
        type=raw["type"],
        name=name,
        disable_parallel_tool_use=bool(getattr(choice, "disable_parallel_tool_use", False)),
    )


def decode_request(data: Any) -> Request:
    """A Messages API request body -> :class:`Request` (raises :class:`WireFormatError`).

    What the neutral model cannot carry is kept in ``Request.passthrough`` for an Anthropic
    upstream: the fields in ``_FORWARDED`` (``context_management`` among them), server
    tools, custom tools' extra fields, mid-conversation system messages in their place.
    ``thinking`` becomes ``Request.reasoning``, its effort the last one a system message set
    (``output_config.effort`` on that message) or else the request's own.
    """
    req = validate(_Request, data, ())
    _refuse_betas(req)
    system = _system(req.system)
    placed: list[PlacedMessage] = []
    said: list[_SystemMessage] = []
    turns = _turns(req.messages, system, placed, said)
    reasoning = thinking.decode_settings(req.thinking, system_messages.turn_effort(
        said, req.output_config.effort if req.output_config is not None else None))
    passthrough = Passthrough(api=TARGET, messages=placed)
    server = ServerTools()
    tools = _tools(req.tools, req.mcp_servers, passthrough, server)
    passthrough.fields = {k: data[k] for k in _FORWARDED if data.get(k) is not None}
    return Request(
        model=req.model,
        system=system,
        messages=[Message(role=t.role, content=[b for _, b in t.blocks]) for t in turns],  # type: ignore[arg-type]
        tools=tools,
        tool_choice=_tool_choice(req.tool_choice, tools),
        max_tokens=req.max_tokens,
        temperature=req.temperature,
        top_p=req.top_p,
        top_k=req.top_k,
        stop_sequences=list(req.stop_sequences or []),
        metadata=(
            {"user_id": req.metadata.user_id}
            if req.metadata is not None and req.metadata.user_id is not None
            else {}
        ),
        response_schema=_response_schema(req, ("output_config", "format")),
        reasoning=reasoning,
        server_tools=server if server else None,
        context_edits=decode_edits(data.get("context_management")),
        passthrough=passthrough if passthrough != Passthrough(api=TARGET) else None,
    )
