"""Converse requests <-> :class:`Request`: decoding with Converse's validation rules, and
encoding with the fallbacks for what Converse cannot carry (see the package docstring).

``encode_request(..., binary=True)`` gives image bytes as ``bytes`` for boto3's ``converse``
instead of the base64 text of the HTTP body. ``_text`` is shared with :mod:`.responses`.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from ...errors import WireFormatError
from ...messages import (
    CacheHint,
    ContentBlock,
    ImageBlock,
    JsonBlock,
    Message,
    Passthrough,
    RedactedThinkingBlock,
    Request,
    TextBlock,
    ThinkingBlock,
    ToolChoice,
    ToolReferenceBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from ...tools.schema import public_schema
from .._common import (
    PairingWords,
    Path,
    Turn,
    check_input_schema,
    check_tool_pairing,
    dropped,
    image_placeholder,
    one_key,
    place_blocks,
    reference_placeholder,
    unsupported,
    validate,
)
from .._images import decode_base64, sniff_media_type
from ._wire import (
    IMAGE_FORMATS,
    TARGET,
    TEXT_DOCUMENTS,
    _AdditionalFields,
    _Document,
    _Empty,
    _GuardText,
    _Image,
    _Inference,
    _Message,
    _Request,
    _ToolChoiceTool,
    _ToolConfig,
    _ToolResult,
    _ToolSpec,
    _ToolUse,
)
from .cache import decode_hint, hinted, point, point_after
from .reasoning import decode_block, decode_settings, encode_block, encode_settings

__all__ = ["decode_request", "encode_request"]

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
    where: Path = (*path, "source", key)
    if not isinstance(value, str) or not value:
        raise WireFormatError("image bytes must be non-empty base64 text", where)
    raw = decode_base64(value)
    if raw is None:
        raise WireFormatError(
            f"The image bytes at {'.'.join(map(str, where))} are not valid base64. Encode the "
            "image bytes as base64, and try again.",
            where,
        )
    actual = sniff_media_type(raw)
    if actual is None:
        raise WireFormatError("Unable to process the provided image. Check the image, and try again.", where)
    if actual != f"image/{image.format}":
        raise WireFormatError(
            f"The provided image does not match the specified image format ({image.format}): "
            f"its bytes are {actual}. Set the format to the image's own, and try again.",
            where,
        )
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


def _document(data: Any, path: Path) -> TextBlock:
    """A text document (txt, md, csv, html; bytes or text) is carried as text, its name
    first; pdf and office documents are refused: no tooluse backend reads them."""
    doc = validate(_Document, data, path)
    key, value = one_key(doc.source, (*path, "source"), ("bytes", "text", "content", "s3Location"),
                         "DocumentSource")
    where: Path = (*path, "source", key)
    if key == "text" and isinstance(value, str):
        body = value
    elif key == "bytes" and (doc.format in TEXT_DOCUMENTS):
        raw = bytes(value) if isinstance(value, (bytes, bytearray)) else \
            decode_base64(value) if isinstance(value, str) else None
        if raw is None:
            raise WireFormatError("document bytes must be base64 text", where)
        try:
            body = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise WireFormatError(f"a {doc.format} document must be UTF-8 text", where) from None
    elif key == "content" and isinstance(value, list):
        body = "\n\n".join(_text(one_key(p, (*where, k), ("text",), "DocumentContentBlock")[1],
                                 (*where, k, "text")).text for k, p in enumerate(value))
    else:
        raise WireFormatError(
            f"document format {doc.format!r} from {key} is not supported by this gateway (only "
            f"text documents are carried: {', '.join(TEXT_DOCUMENTS)}, or source.text)",
            where,
        )
    head = [x for x in (doc.name, doc.context) if x]
    return _text("\n\n".join([*head, body]), path)


def _guard_text(data: Any, path: Path) -> TextBlock:
    """``guardContent`` text is carried as text: without a ``guardrailConfig`` (which the
    gateway does not take) Bedrock reads it as ordinary content."""
    key, value = one_key(data, path, ("text",), "GuardrailConverseContentBlock")
    guard = validate(_GuardText, value, (*path, key))
    return _text(guard.text, (*path, key, "text"))


def _block(data: Any, path: Path, role: str) -> ContentBlock | CacheHint:
    key, value = one_key(
        data, path, ("text", "image", "toolUse", "toolResult", "cachePoint", "document",
                     "guardContent", "reasoningContent"), "ContentBlock"
    )
    allowed = {"user": ("text", "image", "toolResult", "cachePoint", "document", "guardContent"),
               "assistant": ("text", "toolUse", "cachePoint", "reasoningContent")}[role]
    if key not in allowed:
        raise WireFormatError(f"{key} blocks are not allowed in {role} messages", (*path, key))
    if key == "text":
        return _text(value, (*path, "text"))
    if key == "image":
        return _image(value, (*path, "image"))
    if key == "cachePoint":
        return decode_hint(value, (*path, key))  # for the block before it
    if key == "document":
        return _document(value, (*path, key))
    if key == "guardContent":
        return _guard_text(value, (*path, key))
    if key == "reasoningContent":
        return decode_block(value, (*path, key))
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
    if not messages:
        raise WireFormatError(
            "A conversation must start with a user message. Try again with a conversation "
            "that starts with a user message.",
            ("messages",),
        )
    turns: list[Turn] = []
    for i, raw in enumerate(messages):
        path: Path = ("messages", i)
        msg = validate(_Message, raw, path)
        blocks: list[tuple[Path, ContentBlock]] = []
        for j, b in enumerate(msg.content):
            block = _block(b, (*path, "content", j), msg.role)
            if not isinstance(block, CacheHint):
                blocks.append(((*path, "content", j), block))
                continue
            before = blocks or (turns[-1].blocks if turns else [])
            marked = hinted(before[-1][1], block) if before else None
            if before and marked is not None:
                before[-1] = (before[-1][0], marked)
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
            cache = decode_hint(value, (*path, key))
            if specs:
                specs[-1] = specs[-1].model_copy(update={"cache": cache})
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
    if model_id is not None and not model_id:
        raise WireFormatError(
            "1 validation error detected: Value '' at 'modelId' failed to satisfy constraint: "
            "Member must have length greater than or equal to 1",
            ("modelId",),
        )
    req = validate(_Request, data, ())
    system: list[TextBlock] = []
    for k, raw in enumerate(req.system or []):
        key, value = one_key(raw, ("system", k), ("text", "cachePoint", "guardContent"),
                             "SystemContentBlock")
        if key == "text":
            system.append(_text(value, ("system", k, "text")))
        elif key == "guardContent":
            system.append(_guard_text(value, ("system", k, key)))
        else:
            cache = decode_hint(value, ("system", k, key))
            if system:
                system[-1] = system[-1].model_copy(update={"cache": cache})
    turns = _turns(req.messages, req.toolConfig is not None)
    tools, choice = _tools(req.toolConfig)
    inference = req.inferenceConfig or _Inference()
    extra = req.additionalModelRequestFields or _AdditionalFields()
    passthrough = Passthrough(api=TARGET)
    model_fields = extra.model_extra or {}
    if model_fields:
        passthrough.fields["additionalModelRequestFields"] = dict(model_fields)
    for key in ("serviceTier", "performanceConfig"):
        if isinstance(data, dict) and data.get(key) is not None:
            passthrough.fields[key] = data[key]
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
        reasoning=decode_settings(model_fields),
        passthrough=passthrough if passthrough.fields else None,
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


def _encode_block(block: ContentBlock, path: Path, strict: bool, binary: bool,
                  role: str) -> dict[str, Any] | None:
    if isinstance(block, (ThinkingBlock, RedactedThinkingBlock)):
        return encode_block(block, path, strict, binary, role)
    if isinstance(block, TextBlock):
        return {"text": block.text}
    if isinstance(block, ImageBlock):
        return _encode_image(block, path, strict, binary)
    if isinstance(block, ToolUseBlock):
        return {"toolUse": {"toolUseId": block.id, "name": block.name, "input": block.input}}
    if not isinstance(block, ToolResultBlock):
        dropped(f"Converse has no form for a {block.type} block", path, TARGET, strict)
        return None
    parts: list[dict[str, Any]] = []
    for k, part in enumerate(block.content):
        if isinstance(part, TextBlock):
            parts.append({"text": part.text})
        elif isinstance(part, JsonBlock):
            parts.append({"json": part.value})
        elif isinstance(part, ToolReferenceBlock):
            unsupported("a toolResult cannot carry a tool reference", (*path, "content", k),
                        TARGET, strict)
            parts.append({"text": reference_placeholder(part).text})
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
        wire for t in req.tools for wire in (
            {"toolSpec": {"name": t.name, **({"description": t.description} if t.description else {}),
                          "inputSchema": {"json": public_schema(t.input_schema)}}},
            *([point(t.cache)] if t.cache else []))
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
        blocks: list[dict[str, Any]] = []
        for j, b in enumerate(msg.content):
            path: Path = ("messages", i, "content", j)
            encoded = _encode_block(b, path, strict, binary, msg.role)
            if encoded is not None:
                blocks.append(encoded)
                if (after := point_after(b)) is not None:
                    blocks.append(after)
        if messages and messages[-1]["role"] == msg.role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": msg.role, "content": blocks})
    out["messages"] = messages
    if req.system:
        out["system"] = [wire for b in req.system
                         for wire in ({"text": b.text}, *([point(b.cache)] if b.cache else []))]
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
    forward = req.passthrough if req.passthrough is not None and req.passthrough.api == TARGET else None
    fields = encode_settings(
        req.reasoning, forward.fields.get("additionalModelRequestFields", {}) if forward else {}, strict
    )
    if req.top_k is not None:
        fields["top_k"] = req.top_k
    if fields:
        out["additionalModelRequestFields"] = fields
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
    if forward is not None:
        for key, value in forward.fields.items():
            if key != "additionalModelRequestFields":  # made above, reasoning and all
                out.setdefault(key, value)
    return out
