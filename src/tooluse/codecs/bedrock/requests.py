"""AWS Bedrock Converse API <-> the neutral model.

Requests are the JSON body of ``POST /model/{modelId}/converse`` (or the keyword arguments
of boto3's ``converse``: a ``modelId`` key is accepted, and image ``bytes`` may be raw bytes
as boto3 takes them or base64 text as the HTTP body carries them). Decoding enforces the
rules Converse users trip on, with ValidationException-style messages that name the field:
the conversation starts with a user turn and alternates (Converse does not merge turns),
``toolConfig`` is present whenever the history holds ``toolUse``/``toolResult``, every
``toolUse`` is answered in the next turn, names and ids match ``[a-zA-Z0-9_-]{1,64}``.

What Converse cannot carry, and what encoding does about it (``strict=True`` raises
:class:`ConversionError`; ``strict=False`` applies the fallback):

- tool choice ``none``: no such choice. Fallback: without tool blocks in the history the
  ``toolConfig`` is left out (the model then cannot call tools, which is what ``none``
  means); with them, the tools stay and ``toolChoice`` is left out.
- ``disable_parallel_tool_use``: no such setting. Fallback: dropped.
- images by URL, or of a type other than png/jpeg/gif/webp. Fallback: a text placeholder.
- tool blocks in the history but no tools: Converse requires ``toolConfig``. Fallback:
  a minimal ``toolSpec`` per tool name used in the history.

``top_k`` travels as ``additionalModelRequestFields: {"top_k": k}`` (how Anthropic models on
Bedrock take it) and ``metadata`` as ``requestMetadata``. A response's ``stop_sequence``
travels as ``additionalModelResponseFields: {"stop_sequence": s}`` (what Bedrock returns for
Anthropic models); Converse responses have no id and no model, so those are not carried.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints

from ...errors import BackendError, BackendErrorKind, ConversionError, WireFormatError
from ...messages import (
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
from ...stream import (
    BlockStart,
    BlockStop,
    MessageDelta,
    MessageStart,
    MessageStop,
    StreamEvent,
    TextDelta,
    ToolInputDelta,
)
from .._common import (
    NAME_PATTERN,
    LenientModel,
    PairingWords,
    Path,
    Turn,
    WireModel,
    check_input_schema,
    check_tool_pairing,
    image_placeholder,
    one_key,
    place_blocks,
    unsupported,
    validate,
)

__all__ = [
    "ERROR_TYPES",
    "IMAGE_FORMATS",
    "backend_error",
    "decode_events",
    "decode_request",
    "decode_response",
    "encode_events",
    "encode_request",
    "encode_response",
    "error_body",
]

TARGET = "bedrock"
IMAGE_FORMATS = ("png", "jpeg", "gif", "webp")

Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
# botocore's model of Converse allows '.' and ':' in tool-use ids (not in tool names).
ToolUseId = Annotated[str, StringConstraints(pattern=r"^[a-zA-Z0-9_.:-]{1,64}$")]


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


class _Message(WireModel):
    role: Literal["user", "assistant"]
    content: list[Any]


class _ToolChoiceTool(WireModel):
    name: Name


class _Empty(WireModel):
    pass


class _AdditionalFields(WireModel):
    top_k: int | None = Field(default=None, ge=0)


class _Request(WireModel):
    modelId: str | None = None
    messages: list[Any]
    system: list[Any] | None = None
    inferenceConfig: _Inference | None = None
    toolConfig: _ToolConfig | None = None
    additionalModelRequestFields: _AdditionalFields | None = None
    requestMetadata: dict[str, str] | None = None


_PAIRING = PairingWords(
    missing=lambda ids: (
        "Expected toolResult blocks in the next message for the following Ids: " + ", ".join(ids)
    ),
    unexpected=lambda i: (
        f"The toolResult block's toolUseId {i} does not match any toolUse block of the "
        "previous assistant message."
    ),
    duplicate_use=lambda i: f"The toolUseId {i} is used by more than one toolUse block.",
    duplicate_result=lambda i: f"The toolUseId {i} is answered by more than one toolResult block.",
)


# --- request decoding --------------------------------------------------------------------


def _image(data: Any, path: Path) -> ImageBlock:
    image = validate(_Image, data, path)
    key, value = one_key(image.source, (*path, "source"), ("bytes",), "ImageSource")
    if isinstance(value, (bytes, bytearray)):
        value = base64.b64encode(value).decode("ascii")
    if not isinstance(value, str) or not value:
        raise WireFormatError("image bytes must be non-empty base64 text", (*path, "source", key))
    return ImageBlock(media_type=f"image/{image.format}", data=value)


def _text(value: Any, path: Path, *, blank_ok: bool = False) -> TextBlock:
    if not isinstance(value, str):
        raise WireFormatError("Input should be a valid string", path)
    if not blank_ok and not value.strip():
        raise WireFormatError(
            f"The text field in the ContentBlock object at {'.'.join(map(str, path[:-1]))} is "
            "blank. Add text to the text field, and try again.",
            path,
        )
    return TextBlock(text=value)


def _result_part(data: Any, path: Path) -> TextBlock | ImageBlock | JsonBlock:
    key, value = one_key(data, path, ("json", "text", "image"), "ToolResultContentBlock")
    if key == "json":
        return JsonBlock(value=value)
    if key == "text":
        return _text(value, (*path, "text"), blank_ok=True)
    return _image(value, (*path, "image"))


def _block(data: Any, path: Path, role: str) -> ContentBlock | None:
    key, value = one_key(
        data, path, ("text", "image", "toolUse", "toolResult", "cachePoint"), "ContentBlock"
    )
    allowed = {"user": ("text", "image", "toolResult", "cachePoint"),
               "assistant": ("text", "toolUse", "cachePoint")}[role]
    if key not in allowed:
        raise WireFormatError(f"{key} blocks are not allowed in {role} messages", (*path, key))
    if key == "text":
        return _text(value, (*path, "text"))
    if key == "image":
        return _image(value, (*path, "image"))
    if key == "cachePoint":
        validate(_CachePoint, value, (*path, key))
        return None  # a caching hint, not content
    if key == "toolUse":
        use = validate(_ToolUse, value, (*path, key))
        if not isinstance(use.input, dict):
            raise WireFormatError("toolUse input must be a JSON object", (*path, key, "input"))
        return ToolUseBlock(id=use.toolUseId, name=use.name, input=use.input)
    result = validate(_ToolResult, value, (*path, key))
    return ToolResultBlock(
        tool_use_id=result.toolUseId,
        content=[_result_part(p, (*path, key, "content", k)) for k, p in enumerate(result.content)],
        is_error=result.status == "error",
    )


def _turns(messages: list[Any], has_tool_config: bool) -> list[Turn]:
    turns: list[Turn] = []
    for i, raw in enumerate(messages):
        path: Path = ("messages", i)
        msg = validate(_Message, raw, path)
        blocks: list[tuple[Path, ContentBlock]] = []
        for j, b in enumerate(msg.content):
            block = _block(b, (*path, "content", j), msg.role)
            if block is not None:
                blocks.append(((*path, "content", j), block))
        if not msg.content:
            raise WireFormatError(
                "The content field in the Message object at " + f"messages.{i} is empty. Add a "
                "ContentBlock object to the content field and try again.",
                (*path, "content"),
            )
        if i == 0 and msg.role != "user":
            raise WireFormatError(
                "A conversation must start with a user message. Try again with a conversation "
                "that starts with a user message.",
                (*path, "role"),
            )
        if turns and turns[-1].role == msg.role:
            raise WireFormatError(
                "A conversation must alternate between user and assistant roles. Make sure the "
                "conversation alternates between user and assistant roles and try again.",
                (*path, "role"),
            )
        if not has_tool_config and any(
            isinstance(b, (ToolUseBlock, ToolResultBlock)) for _, b in blocks
        ):
            raise WireFormatError(
                "The toolConfig field must be defined when using toolUse and toolResult content "
                "blocks.",
                ("toolConfig",),
            )
        turns.append(Turn(role=msg.role, path=path, blocks=blocks))
    check_tool_pairing(turns, _PAIRING)
    return turns


def _tools(config: _ToolConfig | None) -> tuple[list[ToolSpec], ToolChoice | None]:
    if config is None:
        return [], None
    specs: list[ToolSpec] = []
    for k, raw in enumerate(config.tools):
        path: Path = ("toolConfig", "tools", k)
        key, value = one_key(raw, path, ("toolSpec", "cachePoint"), "Tool")
        if key == "cachePoint":
            validate(_CachePoint, value, (*path, key))
            continue
        spec = validate(_ToolSpec, value, (*path, key))
        _, schema = one_key(spec.inputSchema, (*path, key, "inputSchema"), ("json",), "ToolInputSchema")
        if not isinstance(schema, dict):
            raise WireFormatError("Input should be a valid dictionary", (*path, key, "inputSchema", "json"))
        check_input_schema(schema, (*path, key, "inputSchema", "json"))
        if spec.name in {s.name for s in specs}:
            raise WireFormatError(
                f"The tool name {spec.name} is used by more than one tool.", (*path, key, "name")
            )
        specs.append(ToolSpec(name=spec.name, description=spec.description or "", input_schema=schema))
    choice = None
    if config.toolChoice is not None:
        path = ("toolConfig", "toolChoice")
        key, value = one_key(config.toolChoice, path, ("auto", "any", "tool"), "ToolChoice")
        if key == "tool":
            name = validate(_ToolChoiceTool, value, (*path, key)).name
            if name not in {s.name for s in specs}:
                raise WireFormatError(
                    f"The tool {name} named by toolChoice is not defined in toolConfig.tools.",
                    (*path, key, "name"),
                )
            choice = ToolChoice(type="tool", name=name)
        else:
            validate(_Empty, value, (*path, key))
            choice = ToolChoice(type=key)  # type: ignore[arg-type]
    return specs, choice


def decode_request(data: Any, model_id: str | None = None) -> Request:
    """A Converse request body (or boto3 ``converse`` keyword arguments) -> :class:`Request`.
    ``model_id`` (from the URL path) wins over a ``modelId`` key in ``data``."""
    req = validate(_Request, data, ())
    system: list[TextBlock] = []
    for k, raw in enumerate(req.system or []):
        key, value = one_key(raw, ("system", k), ("text", "cachePoint"), "SystemContentBlock")
        if key == "text":
            system.append(_text(value, ("system", k, "text")))
        else:
            validate(_CachePoint, value, ("system", k, key))
    turns = _turns(req.messages, req.toolConfig is not None)
    tools, choice = _tools(req.toolConfig)
    inference = req.inferenceConfig or _Inference()
    extra = req.additionalModelRequestFields or _AdditionalFields()
    return Request(
        model=model_id or req.modelId,
        system=system,
        messages=[Message(role=t.role, content=[b for _, b in t.blocks]) for t in turns],  # type: ignore[arg-type]
        tools=tools,
        tool_choice=choice,
        max_tokens=inference.maxTokens,
        temperature=inference.temperature,
        top_p=inference.topP,
        top_k=extra.top_k,
        stop_sequences=list(inference.stopSequences or []),
        metadata=dict(req.requestMetadata or {}),
    )


# --- request encoding --------------------------------------------------------------------


def _encode_image(image: ImageBlock, path: Path, strict: bool, binary: bool) -> dict[str, Any]:
    fmt = (image.media_type or "").removeprefix("image/")
    if image.url is not None:
        unsupported("Converse cannot carry an image by URL", (*path, "url"), TARGET, strict)
        return {"text": image_placeholder(image).text}
    if fmt not in IMAGE_FORMATS:
        unsupported(
            f"image media type {image.media_type!r} is not one of "
            + ", ".join(f"image/{f}" for f in IMAGE_FORMATS),
            (*path, "media_type"),
            TARGET,
            strict,
        )
        return {"text": image_placeholder(image).text}
    assert image.data is not None
    data: Any = base64.b64decode(image.data) if binary else image.data
    return {"image": {"format": fmt, "source": {"bytes": data}}}


def _encode_block(block: ContentBlock, path: Path, strict: bool, binary: bool) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"text": block.text}
    if isinstance(block, ImageBlock):
        return _encode_image(block, path, strict, binary)
    if isinstance(block, ToolUseBlock):
        return {"toolUse": {"toolUseId": block.id, "name": block.name, "input": block.input}}
    parts: list[dict[str, Any]] = []
    for k, part in enumerate(block.content):
        if isinstance(part, TextBlock):
            parts.append({"text": part.text})
        elif isinstance(part, JsonBlock):
            parts.append({"json": part.value})
        else:
            parts.append(_encode_image(part, (*path, "content", k), strict, binary))
    result: dict[str, Any] = {"toolUseId": block.tool_use_id, "content": parts}
    if block.is_error:
        result["status"] = "error"
    return {"toolResult": result}


def _history_tools(req: Request) -> list[str]:
    names: list[str] = []
    for msg in req.messages:
        for b in msg.tool_uses:
            if b.name not in names:
                names.append(b.name)
    return names


def _has_tool_blocks(req: Request) -> bool:
    return any(m.tool_uses or m.tool_results for m in req.messages)


def _tool_config(req: Request, strict: bool) -> dict[str, Any] | None:
    tools = [
        {"toolSpec": {"name": t.name, **({"description": t.description} if t.description else {}),
                      "inputSchema": {"json": t.input_schema}}}
        for t in req.tools
    ]
    if not tools and _has_tool_blocks(req):
        unsupported(
            "Converse needs toolConfig when the history holds tool calls, but the request has "
            "no tools",
            ("tools",),
            TARGET,
            strict,
        )
        tools = [{"toolSpec": {"name": n, "inputSchema": {"json": {"type": "object"}}}}
                 for n in _history_tools(req)]
    if not tools:
        return None
    config: dict[str, Any] = {"tools": tools}
    choice = req.tool_choice
    if choice is None:
        return config
    if choice.disable_parallel_tool_use:
        unsupported(
            "Converse has no setting to disable parallel tool use",
            ("tool_choice", "disable_parallel_tool_use"),
            TARGET,
            strict,
        )
    if choice.type == "none":
        unsupported("Converse has no 'none' tool choice", ("tool_choice", "type"), TARGET, strict)
        return config if _has_tool_blocks(req) else None
    config["toolChoice"] = {"tool": {"name": choice.name}} if choice.type == "tool" else {choice.type: {}}
    return config


def encode_request(req: Request, *, strict: bool = True, binary: bool = False) -> dict[str, Any]:
    """:class:`Request` -> Converse request (``modelId`` included when the request names a
    model, so ``client.converse(**body)`` works). Consecutive same-role messages are merged,
    since Converse rejects them. ``binary=True`` gives image bytes as ``bytes`` (for boto3)
    instead of base64 text (for the HTTP body)."""
    req = place_blocks(req, TARGET, strict)
    out: dict[str, Any] = {}
    if req.model is not None:
        out["modelId"] = req.model
    messages: list[dict[str, Any]] = []
    for i, msg in enumerate(req.messages):
        blocks = [
            _encode_block(b, ("messages", i, "content", j), strict, binary)
            for j, b in enumerate(msg.content)
        ]
        if messages and messages[-1]["role"] == msg.role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": msg.role, "content": blocks})
    out["messages"] = messages
    if req.system:
        out["system"] = [{"text": b.text} for b in req.system]
    inference: dict[str, Any] = {}
    for key, value in (
        ("maxTokens", req.max_tokens),
        ("temperature", req.temperature),
        ("topP", req.top_p),
        ("stopSequences", list(req.stop_sequences) or None),
    ):
        if value is not None:
            inference[key] = value
    if inference:
        out["inferenceConfig"] = inference
    config = _tool_config(req, strict)
    if config is not None:
        out["toolConfig"] = config
    if req.top_k is not None:
        out["additionalModelRequestFields"] = {"top_k": req.top_k}
    if req.metadata:
        meta: dict[str, str] = {}
        for key, item in req.metadata.items():
            if not isinstance(item, str):
                unsupported(
                    "Converse requestMetadata values must be strings",
                    ("metadata", key),
                    TARGET,
                    strict,
                )
                item = json.dumps(item)
            meta[key] = item
        out["requestMetadata"] = meta
    return out


# --- responses ---------------------------------------------------------------------------

_STOP_IN = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "guardrail_intervened": "content_filtered",
    "content_filtered": "content_filtered",
    "model_context_window_exceeded": "max_tokens",
}


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


def _stop_reason(value: Any, path: Path) -> Any:
    if value is None:
        return None
    if value in ("malformed_model_output", "malformed_tool_use"):
        raise BackendError(f"the model's output could not be parsed (stopReason {value})", kind="api")
    if value not in _STOP_IN:
        raise WireFormatError(f"unsupported stopReason {value!r}", path)
    return _STOP_IN[value]


def _response_block(data: Any, path: Path) -> TextBlock | ToolUseBlock:
    key, value = one_key(data, path, ("text", "toolUse"), "ContentBlock")
    if key == "text":
        return _text(value, (*path, "text"), blank_ok=True)
    use = validate(_ToolUse, value, (*path, key))
    if not isinstance(use.input, dict):
        raise WireFormatError("toolUse input must be a JSON object", (*path, key, "input"))
    return ToolUseBlock(id=use.toolUseId, name=use.name, input=use.input)


def decode_response(data: Any) -> Response:
    """A Converse response -> :class:`Response` (id from boto3's ``ResponseMetadata`` when
    present)."""
    resp = validate(_ResponseIn, data, ())
    usage = resp.usage or _UsageIn()
    extra = resp.additionalModelResponseFields or {}
    meta = resp.ResponseMetadata or {}
    stop_sequence = extra.get("stop_sequence")
    return Response(
        id=str(meta.get("RequestId") or ""),
        content=[
            _response_block(b, ("output", "message", "content", k))
            for k, b in enumerate(resp.output.message.content)
        ],
        stop_reason=_stop_reason(resp.stopReason, ("stopReason",)),
        stop_sequence=stop_sequence if isinstance(stop_sequence, str) else None,
        usage=Usage(input_tokens=usage.inputTokens, output_tokens=usage.outputTokens),
    )


def _response_block_out(block: ContentBlock, path: Path) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"text": block.text}
    if isinstance(block, ToolUseBlock):
        return {"toolUse": {"toolUseId": block.id, "name": block.name, "input": block.input}}
    raise ConversionError(f"a response cannot hold a {block.type} block", path, target=TARGET)


def _usage(usage: Usage) -> dict[str, int]:
    return {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "totalTokens": usage.input_tokens + usage.output_tokens,
    }


def encode_response(resp: Response, *, latency_ms: int = 0) -> dict[str, Any]:
    """:class:`Response` -> Converse response body."""
    out: dict[str, Any] = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    _response_block_out(b, ("content", k)) for k, b in enumerate(resp.content)
                ],
            }
        },
        "stopReason": resp.stop_reason or "end_turn",
        "usage": _usage(resp.usage),
        "metrics": {"latencyMs": latency_ms},
    }
    if resp.stop_sequence is not None:
        out["additionalModelResponseFields"] = {"stop_sequence": resp.stop_sequence}
    return out


# --- errors ------------------------------------------------------------------------------

ERROR_TYPES: dict[BackendErrorKind, tuple[int, str]] = {
    "invalid_request": (400, "ValidationException"),
    "authentication": (403, "UnrecognizedClientException"),
    "permission": (403, "AccessDeniedException"),
    "not_found": (404, "ResourceNotFoundException"),
    "request_too_large": (400, "ValidationException"),
    "timeout": (408, "ModelTimeoutException"),
    "rate_limit": (429, "ThrottlingException"),
    "api": (500, "InternalServerException"),
    "overloaded": (503, "ServiceUnavailableException"),
    "unavailable": (503, "ServiceUnavailableException"),
}
_KIND_OF_TYPE: dict[str, BackendErrorKind] = {
    "ValidationException": "invalid_request",
    "UnrecognizedClientException": "authentication",
    "AccessDeniedException": "permission",
    "ResourceNotFoundException": "not_found",
    "ModelTimeoutException": "timeout",
    "ThrottlingException": "rate_limit",
    "InternalServerException": "api",
    "ModelStreamErrorException": "api",
    "ModelErrorException": "api",
    "ModelNotReadyException": "unavailable",
    "ServiceUnavailableException": "unavailable",
    "ServiceQuotaExceededException": "rate_limit",
}


def error_body(kind: BackendErrorKind, message: str) -> tuple[int, str, dict[str, Any]]:
    """HTTP status, ``x-amzn-ErrorType`` and body Bedrock answers for an error of ``kind``."""
    status, type_ = ERROR_TYPES.get(kind, ERROR_TYPES["api"])
    return status, type_, {"message": message}


def backend_error(error_type: str, message: str, status: int | None = None) -> BackendError:
    """A Bedrock error (``x-amzn-ErrorType`` or botocore's ``Error.Code``) -> BackendError."""
    name = error_type.split(":")[0]
    name = name[0].upper() + name[1:] if name else name
    return BackendError(message, kind=_KIND_OF_TYPE.get(name, "api"), status=status)


# --- stream events -----------------------------------------------------------------------


def encode_events(events: Iterable[StreamEvent], *, latency_ms: int = 0) -> Iterator[dict[str, Any]]:
    """Neutral events -> ConverseStream events as boto3 yields them. Text blocks get no
    ``contentBlockStart`` (Bedrock sends none); usage arrives in the final ``metadata``."""
    input_tokens = 0
    usage = Usage()
    tool_blocks: set[int] = set()
    for event in events:
        if isinstance(event, MessageStart):
            input_tokens = event.usage.input_tokens
            yield {"messageStart": {"role": "assistant"}}
        elif isinstance(event, BlockStart):
            if isinstance(event.block, ToolUseBlock):
                tool_blocks.add(event.index)
                yield {
                    "contentBlockStart": {
                        "contentBlockIndex": event.index,
                        "start": {"toolUse": {"toolUseId": event.block.id, "name": event.block.name}},
                    }
                }
            elif event.block.text:
                yield _delta(event.index, {"text": event.block.text})
        elif isinstance(event, TextDelta):
            yield _delta(event.index, {"text": event.text})
        elif isinstance(event, ToolInputDelta):
            yield _delta(event.index, {"toolUse": {"input": event.partial_json}})
        elif isinstance(event, BlockStop):
            yield {"contentBlockStop": {"contentBlockIndex": event.index}}
        elif isinstance(event, MessageDelta):
            usage = Usage(
                input_tokens=event.usage.input_tokens or input_tokens,
                output_tokens=event.usage.output_tokens,
            )
            stop: dict[str, Any] = {"stopReason": event.stop_reason or "end_turn"}
            if event.stop_sequence is not None:
                stop["additionalModelResponseFields"] = {"stop_sequence": event.stop_sequence}
            yield {"messageStop": stop}
        elif isinstance(event, MessageStop):
            yield {"metadata": {"usage": _usage(usage), "metrics": {"latencyMs": latency_ms}}}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"contentBlockDelta": {"contentBlockIndex": index, "delta": delta}}


def _index(body: Any, path: Path) -> int:
    value = body.get("contentBlockIndex") if isinstance(body, dict) else None
    if not isinstance(value, int) or isinstance(value, bool):
        raise WireFormatError("Field required", (*path, "contentBlockIndex"))
    return value


_EXCEPTIONS = {
    "internalServerException", "modelStreamErrorException", "validationException",
    "throttlingException", "serviceUnavailableException", "modelTimeoutException",
}


def decode_events(events: Iterable[Any]) -> Iterator[StreamEvent]:
    """ConverseStream events (boto3's dicts) -> neutral events. A text block's start is
    synthesised at its first delta; the stop reason and usage (``messageStop`` then
    ``metadata``) become one :class:`MessageDelta` followed by :class:`MessageStop`."""
    started: set[int] = set()
    stop: dict[str, Any] | None = None
    finished = False
    for n, data in enumerate(events):
        path: Path = (n,)
        if not isinstance(data, dict) or len(data) != 1:
            raise WireFormatError("stream event must be an object with one member", path)
        ((kind, body),) = data.items()
        path = (n, kind)
        if kind in _EXCEPTIONS:
            message = body.get("message", "") if isinstance(body, dict) else str(body)
            raise backend_error(kind, str(message))
        if kind == "messageStart":
            yield MessageStart()
        elif kind == "contentBlockStart":
            index = _index(body, path)
            start = body.get("start") or {}
            use = start.get("toolUse") if isinstance(start, dict) else None
            if not isinstance(use, dict) or not isinstance(use.get("toolUseId"), str) or not isinstance(use.get("name"), str):
                raise WireFormatError("contentBlockStart needs start.toolUse with toolUseId and name", (*path, "start"))
            started.add(index)
            yield BlockStart(index=index, block=ToolUseBlock(id=use["toolUseId"], name=use["name"]))
        elif kind == "contentBlockDelta":
            index = _index(body, path)
            delta = body.get("delta")
            if isinstance(delta, dict) and isinstance(delta.get("text"), str):
                if index not in started:
                    started.add(index)
                    yield BlockStart(index=index, block=TextBlock(text=""))
                yield TextDelta(index=index, text=delta["text"])
            elif isinstance(delta, dict) and isinstance(delta.get("toolUse"), dict) and isinstance(
                delta["toolUse"].get("input"), str
            ):
                yield ToolInputDelta(index=index, partial_json=delta["toolUse"]["input"])
            else:
                raise WireFormatError("unsupported contentBlockDelta", (*path, "delta"))
        elif kind == "contentBlockStop":
            index = _index(body, path)
            if index not in started:  # an empty text block: Bedrock sent only its stop
                started.add(index)
                yield BlockStart(index=index, block=TextBlock(text=""))
            yield BlockStop(index=index)
        elif kind == "messageStop":
            stop = body if isinstance(body, dict) else {}
            _stop_reason(stop.get("stopReason"), (*path, "stopReason"))
        elif kind == "metadata":
            usage = (body.get("usage") if isinstance(body, dict) else None) or {}
            yield _message_delta(stop, usage, path)
            yield MessageStop()
            finished = True
        else:
            raise WireFormatError(f"unsupported stream event {kind!r}", path)
    if stop is not None and not finished:
        yield _message_delta(stop, {}, ())
        yield MessageStop()


def _message_delta(stop: dict[str, Any] | None, usage: dict[str, Any], path: Path) -> MessageDelta:
    stop = stop or {}
    extra = stop.get("additionalModelResponseFields") or {}
    seq = extra.get("stop_sequence") if isinstance(extra, dict) else None
    return MessageDelta(
        stop_reason=_stop_reason(stop.get("stopReason"), (*path, "stopReason")),
        stop_sequence=seq if isinstance(seq, str) else None,
        usage=Usage(
            input_tokens=int(usage.get("inputTokens") or 0),
            output_tokens=int(usage.get("outputTokens") or 0),
        ),
    )
