"""Anthropic Messages API <-> the neutral model.

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

``cache_control`` hints are accepted and dropped (they change billing, not meaning).
``stream`` is validated but is not part of :class:`~tooluse.messages.Request`: read it with
:func:`stream_requested`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from ..errors import BackendError, BackendErrorKind, ConversionError, WireFormatError
from ..messages import (
    ContentBlock,
    ImageBlock,
    JsonBlock,
    Message,
    Request,
    Response,
    TextBlock,
    ToolChoice,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)
from ..stream import (
    BlockStart,
    BlockStop,
    MessageDelta,
    MessageStart,
    MessageStop,
    StreamEvent,
    TextDelta,
    ToolInputDelta,
)
from ._common import (
    ID_PATTERN,
    NAME_PATTERN,
    LenientModel,
    PairingWords,
    Path,
    Turn,
    WireModel,
    check_input_schema,
    check_tool_pairing,
    dispatch,
    image_placeholder,
    json_text,
    place_blocks,
    unsupported,
    validate,
)

__all__ = [
    "ERROR_TYPES",
    "IMAGE_MEDIA_TYPES",
    "backend_error",
    "decode_events",
    "decode_request",
    "decode_response",
    "encode_events",
    "encode_request",
    "encode_response",
    "error_body",
    "stream_requested",
]

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
_ROLE_BLOCKS = {"user": ("text", "image", "tool_result"), "assistant": ("text", "tool_use")}

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
        return ImageBlock(media_type=source.media_type, data=source.data)
    assert isinstance(source, _UrlSource)
    return ImageBlock(url=source.url)


def _text(text: str, path: Path) -> TextBlock:
    if not text:
        raise WireFormatError("text content blocks must be non-empty", (*path, "text"))
    return TextBlock(text=text)


def _result_content(content: Any, path: Path) -> list[TextBlock | ImageBlock]:
    if content is None:
        return []
    if isinstance(content, str):
        return [TextBlock(text=content)] if content else []
    if not isinstance(content, list):
        raise WireFormatError("Input should be a valid string or a valid list", path)
    parts: list[TextBlock | ImageBlock] = []
    for k, raw in enumerate(content):
        part = dispatch(raw, (*path, k), _RESULT_PARTS)
        if isinstance(part, _Text):
            parts.append(_text(part.text, (*path, k)))
        else:
            assert isinstance(part, _Image)
            parts.append(_image(part, (*path, k)))
    return parts


def _block(raw: Any, path: Path, role: str) -> ContentBlock:
    block = dispatch(raw, path, _BLOCKS)
    kind = raw["type"]
    if kind not in _ROLE_BLOCKS[role]:
        raise WireFormatError(f"`{kind}` blocks are not allowed in {role} messages", (*path, "type"))
    if isinstance(block, _Text):
        return _text(block.text, path)
    if isinstance(block, _Image):
        return _image(block, path)
    if isinstance(block, _ToolUse):
        return ToolUseBlock(id=block.id, name=block.name, input=block.input)
    assert isinstance(block, _ToolResult)
    return ToolResultBlock(
        tool_use_id=block.tool_use_id,
        content=list(_result_content(block.content, (*path, "content"))),
        is_error=bool(block.is_error),
    )


def _turns(messages: list[Any]) -> list[Turn]:
    if not messages:
        raise WireFormatError("at least one message is required", ("messages",))
    turns: list[Turn] = []
    last = len(messages) - 1
    for i, raw in enumerate(messages):
        path: Path = ("messages", i)
        msg = validate(_Message, raw, path)
        if isinstance(msg.content, str):
            blocks: list[tuple[Path, ContentBlock]] = (
                [((*path, "content"), TextBlock(text=msg.content))] if msg.content else []
            )
        elif isinstance(msg.content, list):
            blocks = [
                ((*path, "content", j), _block(b, (*path, "content", j), msg.role))
                for j, b in enumerate(msg.content)
            ]
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
    if turns[0].role != "user":
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
        out.append(_text(block.text, ("system", k)))
    return out


def _tools(tools: list[Any] | None) -> list[ToolSpec]:
    specs: list[ToolSpec] = []
    names: set[str] = set()
    for k, raw in enumerate(tools or []):
        tool = validate(_Tool, raw, ("tools", k))
        check_input_schema(tool.input_schema, ("tools", k, "input_schema"))
        if tool.name in names:
            raise WireFormatError("Tool names must be unique.", ("tools", k, "name"))
        names.add(tool.name)
        specs.append(
            ToolSpec(name=tool.name, description=tool.description or "", input_schema=tool.input_schema)
        )
    return specs


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
    """A Messages API request body -> :class:`Request` (raises :class:`WireFormatError`)."""
    req = validate(_Request, data, ())
    turns = _turns(req.messages)
    tools = _tools(req.tools)
    return Request(
        model=req.model,
        system=_system(req.system),
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
    )


# --- request encoding --------------------------------------------------------------------


def _encode_image(image: ImageBlock, path: Path, strict: bool) -> dict[str, Any]:
    if image.url is not None:
        return {"type": "image", "source": {"type": "url", "url": image.url}}
    if image.media_type not in IMAGE_MEDIA_TYPES:
        unsupported(
            f"image media type {image.media_type!r} is not one of {', '.join(IMAGE_MEDIA_TYPES)}",
            (*path, "media_type"),
            TARGET,
            strict,
        )
        return {"type": "text", "text": image_placeholder(image).text}
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": image.media_type, "data": image.data},
    }


def _encode_result(block: ToolResultBlock, path: Path, strict: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.tool_use_id}
    parts: list[dict[str, Any]] = []
    for k, part in enumerate(block.content):
        if isinstance(part, TextBlock):
            parts.append({"type": "text", "text": part.text})
        elif isinstance(part, JsonBlock):
            # Documented conversion: Messages results carry no JSON parts, so the value
            # travels as its JSON text.
            parts.append({"type": "text", "text": json_text(part.value)})
        else:
            parts.append(_encode_image(part, (*path, "content", k), strict))
    if len(parts) == 1 and parts[0]["type"] == "text":
        out["content"] = parts[0]["text"]
    elif parts:
        out["content"] = parts
    if block.is_error:
        out["is_error"] = True
    return out


def _encode_block(block: ContentBlock, path: Path, strict: bool) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ImageBlock):
        return _encode_image(block, path, strict)
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return _encode_result(block, path, strict)


def encode_request(req: Request, *, strict: bool = True) -> dict[str, Any]:
    """:class:`Request` -> Messages API body. Single-text turns and results use the string
    shorthand, as the API's own examples do. Raises :class:`ConversionError` for what the
    API cannot carry (strict) or applies the documented fallback (``strict=False``)."""
    req = place_blocks(req, TARGET, strict)
    out: dict[str, Any] = {"model": req.model}
    if req.max_tokens is None:
        unsupported("the Messages API requires max_tokens", ("max_tokens",), TARGET, strict)
        out["max_tokens"] = 4096
    else:
        out["max_tokens"] = req.max_tokens
    if req.model is None:
        unsupported("the Messages API requires a model", ("model",), TARGET, strict)
        out["model"] = ""
    if req.system:
        out["system"] = (
            req.system[0].text
            if len(req.system) == 1
            else [{"type": "text", "text": b.text} for b in req.system]
        )
    messages = []
    for i, msg in enumerate(req.messages):
        blocks = [
            _encode_block(b, ("messages", i, "content", j), strict) for j, b in enumerate(msg.content)
        ]
        content: Any = blocks
        if len(blocks) == 1 and blocks[0]["type"] == "text":
            content = blocks[0]["text"]
        messages.append({"role": msg.role, "content": content})
    out["messages"] = messages
    if req.tools:
        out["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            if t.description
            else {"name": t.name, "input_schema": t.input_schema}
            for t in req.tools
        ]
    if req.tool_choice is not None:
        choice: dict[str, Any] = {"type": req.tool_choice.type}
        if req.tool_choice.name is not None:
            choice["name"] = req.tool_choice.name
        if req.tool_choice.disable_parallel_tool_use:
            choice["disable_parallel_tool_use"] = True
        out["tool_choice"] = choice
    if req.stop_sequences:
        out["stop_sequences"] = list(req.stop_sequences)
    for key in ("temperature", "top_p", "top_k"):
        value = getattr(req, key)
        if value is not None:
            out[key] = value
    if req.metadata:
        extra = sorted(k for k in req.metadata if k != "user_id")
        if extra:
            unsupported(
                f"Messages metadata carries only user_id, not {', '.join(extra)}",
                ("metadata", extra[0]),
                TARGET,
                strict,
            )
        if "user_id" in req.metadata:
            out["metadata"] = {"user_id": req.metadata["user_id"]}
    return out


# --- responses ---------------------------------------------------------------------------

_STOP_IN = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "content_filtered",
    "model_context_window_exceeded": "max_tokens",
}
_STOP_OUT = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "content_filtered": "refusal",
}


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


def _stop_reason(value: str | None, path: Path) -> Any:
    if value is None:
        return None
    if value not in _STOP_IN:
        raise WireFormatError(f"unsupported stop_reason {value!r}", path)
    return _STOP_IN[value]


def _response_block(raw: Any, path: Path) -> TextBlock | ToolUseBlock:
    block = dispatch(raw, path, {"text": _TextOut, "tool_use": _ToolUseOut})
    if isinstance(block, _TextOut):
        return TextBlock(text=block.text)
    assert isinstance(block, _ToolUseOut)
    return ToolUseBlock(id=block.id, name=block.name, input=block.input)


def decode_response(data: Any) -> Response:
    """A Messages API response body -> :class:`Response`."""
    resp = validate(_ResponseIn, data, ())
    usage = resp.usage or _UsageOut()
    return Response(
        id=resp.id,
        model=resp.model,
        content=[_response_block(b, ("content", k)) for k, b in enumerate(resp.content)],
        stop_reason=_stop_reason(resp.stop_reason, ("stop_reason",)),
        stop_sequence=resp.stop_sequence,
        usage=Usage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens),
    )


def _response_block_out(block: ContentBlock, path: Path) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    raise ConversionError(f"a response cannot hold a {block.type} block", path, target=TARGET)


def encode_response(resp: Response) -> dict[str, Any]:
    """:class:`Response` -> Messages API response body."""
    return {
        "id": resp.id,
        "type": "message",
        "role": "assistant",
        "model": resp.model,
        "content": [_response_block_out(b, ("content", k)) for k, b in enumerate(resp.content)],
        "stop_reason": _STOP_OUT[resp.stop_reason] if resp.stop_reason else None,
        "stop_sequence": resp.stop_sequence,
        "usage": {
            "input_tokens": resp.usage.input_tokens,
            "output_tokens": resp.usage.output_tokens,
        },
    }


# --- errors ------------------------------------------------------------------------------

ERROR_TYPES: dict[BackendErrorKind, tuple[int, str]] = {
    "invalid_request": (400, "invalid_request_error"),
    "authentication": (401, "authentication_error"),
    "permission": (403, "permission_error"),
    "not_found": (404, "not_found_error"),
    "request_too_large": (413, "request_too_large"),
    "rate_limit": (429, "rate_limit_error"),
    "timeout": (504, "timeout_error"),
    "api": (500, "api_error"),
    "overloaded": (529, "overloaded_error"),
    "unavailable": (503, "api_error"),
}
_KIND_OF_TYPE: dict[str, BackendErrorKind] = {
    t: k for k, (_, t) in ERROR_TYPES.items() if k != "unavailable"
}


def error_body(kind: BackendErrorKind, message: str) -> tuple[int, dict[str, Any]]:
    """The HTTP status and body the Messages API answers for an error of ``kind``."""
    status, type_ = ERROR_TYPES.get(kind, ERROR_TYPES["api"])
    return status, {"type": "error", "error": {"type": type_, "message": message}}


def backend_error(body: Any, status: int | None = None) -> BackendError:
    """A Messages API error body (HTTP or SSE ``error`` event) -> :class:`BackendError`."""
    error = body.get("error") if isinstance(body, dict) else None
    type_ = error.get("type") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    kind: BackendErrorKind = _KIND_OF_TYPE.get(str(type_), "api")
    return BackendError(str(message or body), kind=kind, status=status)


# --- stream events -----------------------------------------------------------------------


def encode_events(events: Iterable[StreamEvent]) -> Iterator[dict[str, Any]]:
    """Neutral events -> Messages SSE event payloads (each has its ``type``; the SSE
    ``event:`` name is that type). No ``ping``: the server adds those."""
    input_tokens = 0
    for event in events:
        if isinstance(event, MessageStart):
            input_tokens = event.usage.input_tokens
            yield {
                "type": "message_start",
                "message": {
                    "id": event.id,
                    "type": "message",
                    "role": "assistant",
                    "model": event.model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": input_tokens, "output_tokens": event.usage.output_tokens},
                },
            }
        elif isinstance(event, BlockStart):
            block = event.block
            start: dict[str, Any] = (
                {"type": "text", "text": ""}
                if isinstance(block, TextBlock)
                else {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
            )
            yield {"type": "content_block_start", "index": event.index, "content_block": start}
            if isinstance(block, TextBlock) and block.text:
                yield _delta(event.index, {"type": "text_delta", "text": block.text})
        elif isinstance(event, TextDelta):
            yield _delta(event.index, {"type": "text_delta", "text": event.text})
        elif isinstance(event, ToolInputDelta):
            yield _delta(event.index, {"type": "input_json_delta", "partial_json": event.partial_json})
        elif isinstance(event, BlockStop):
            yield {"type": "content_block_stop", "index": event.index}
        elif isinstance(event, MessageDelta):
            usage: dict[str, Any] = {"output_tokens": event.usage.output_tokens}
            if event.usage.input_tokens and event.usage.input_tokens != input_tokens:
                usage["input_tokens"] = event.usage.input_tokens
            yield {
                "type": "message_delta",
                "delta": {
                    "stop_reason": _STOP_OUT[event.stop_reason] if event.stop_reason else None,
                    "stop_sequence": event.stop_sequence,
                },
                "usage": usage,
            }
        elif isinstance(event, MessageStop):
            yield {"type": "message_stop"}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _get(data: dict[str, Any], key: str, kind: type | tuple[type, ...], path: Path) -> Any:
    if key not in data:
        raise WireFormatError("Field required", (*path, key))
    value = data[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
        raise WireFormatError(f"unexpected value {value!r}", (*path, key))
    return value


def decode_events(events: Iterable[Any]) -> Iterator[StreamEvent]:
    """Messages SSE event payloads (dicts, or JSON text) -> neutral events. ``ping`` is
    skipped; an ``error`` event raises :class:`BackendError`."""
    for n, raw in enumerate(events):
        data = json.loads(raw) if isinstance(raw, (str, bytes)) else raw
        path: Path = (n,)
        if not isinstance(data, dict):
            raise WireFormatError("stream event must be an object", path)
        kind = data.get("type")
        if kind == "ping":
            continue
        if kind == "error":
            raise backend_error(data)
        if kind == "message_start":
            message = _get(data, "message", dict, path)
            usage = message.get("usage") or {}
            yield MessageStart(
                id=message.get("id") or "",
                model=message.get("model"),
                usage=Usage(
                    input_tokens=usage.get("input_tokens") or 0,
                    output_tokens=usage.get("output_tokens") or 0,
                ),
            )
        elif kind == "content_block_start":
            index = _get(data, "index", int, path)
            block = _response_block(_get(data, "content_block", dict, path), (*path, "content_block"))
            if isinstance(block, ToolUseBlock):
                yield BlockStart(index=index, block=ToolUseBlock(id=block.id, name=block.name))
                if block.input:
                    yield ToolInputDelta(index=index, partial_json=json.dumps(block.input))
            else:
                yield BlockStart(index=index, block=TextBlock(text=""))
                if block.text:
                    yield TextDelta(index=index, text=block.text)
        elif kind == "content_block_delta":
            index = _get(data, "index", int, path)
            delta = _get(data, "delta", dict, path)
            dtype = delta.get("type")
            if dtype == "text_delta":
                yield TextDelta(index=index, text=_get(delta, "text", str, (*path, "delta")))
            elif dtype == "input_json_delta":
                yield ToolInputDelta(
                    index=index, partial_json=_get(delta, "partial_json", str, (*path, "delta"))
                )
            else:
                raise WireFormatError(f"unsupported delta type {dtype!r}", (*path, "delta", "type"))
        elif kind == "content_block_stop":
            yield BlockStop(index=_get(data, "index", int, path))
        elif kind == "message_delta":
            delta = data.get("delta") or {}
            usage = data.get("usage") or {}
            yield MessageDelta(
                stop_reason=_stop_reason(delta.get("stop_reason"), (*path, "delta", "stop_reason")),
                stop_sequence=delta.get("stop_sequence"),
                usage=Usage(
                    input_tokens=usage.get("input_tokens") or 0,
                    output_tokens=usage.get("output_tokens") or 0,
                ),
            )
        elif kind == "message_stop":
            yield MessageStop()
        else:
            raise WireFormatError(f"unsupported stream event type {kind!r}", (*path, "type"))
