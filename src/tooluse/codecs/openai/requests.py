"""OpenAI Chat Completions <-> the neutral model.

The shapes differ from the neutral model in ways that matter for tool use, and this codec
maps them as follows:

- ``system``/``developer`` messages (wherever they appear) become the neutral ``system``
  blocks, in order; encoding writes one ``system`` message first.
- A run of consecutive ``tool`` messages is one neutral user message of ``tool_result``
  blocks; encoding a neutral user message writes its results as ``tool`` messages first and
  its other content as a ``user`` message after them.
- ``tool_calls[].function.arguments`` is JSON text; malformed JSON is a
  :class:`WireFormatError` naming the path.
- ``tool_choice`` ``auto``/``required``/``none``/named function <-> ``auto``/``any``/``none``/
  ``tool``; ``parallel_tool_calls: false`` <-> ``disable_parallel_tool_use``.
- images are ``image_url`` parts; ``data:`` URLs <-> inline base64 images. ``detail`` is a
  rendering hint and is dropped.

What Chat Completions cannot carry (``strict=True``: :class:`ConversionError`;
``strict=False``: the fallback): ``is_error`` on a tool result (fallback: the content is
prefixed with ``"Error: "``), images in tool results or assistant turns (fallback: a text
placeholder), ``top_k`` (dropped), metadata other than ``user_id`` (dropped), more than 4 stop
sequences (the first 4 kept). JSON result parts always travel as their JSON text. Text after
a tool call in an assistant turn moves before the calls (the format has one content field).
Thinking blocks travel as the turn's ``reasoning_content`` and ``reasoning_effort`` as the
request's effort; what of them Chat cannot hold (signatures, redacted blocks, a budget) is
in :mod:`._reasoning`.

OpenAI parameters tooluse cannot carry to every backend (``seed``, ``response_format``,
``logprobs``...) are rejected unless they hold their no-op default (``n: 1``,
``presence_penalty: 0``...), so nothing a client asked for is silently ignored.

This module holds the request side: decoding and validating a client's request body
(:func:`decode_request`, :func:`stream_requested`) and encoding a neutral request for an
OpenAI-compatible backend (:func:`encode_request`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ...errors import WireFormatError
from ...messages import (
    ContentBlock,
    ImageBlock,
    JsonBlock,
    Message,
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
    WireModel,
    check_input_schema,
    check_tool_pairing,
    data_url,
    dispatch,
    dropped,
    image_placeholder,
    json_text,
    parse_data_url,
    place_blocks,
    reference_placeholder,
    unsupported,
    validate,
)
from .._images import decode_base64, sniff_media_type
from ._reasoning import ReasoningText, decode_effort, encode_effort, read_reasoning
from ._wire import (
    _MESSAGES,
    MAX_STOP,
    TARGET,
    _AssistantMessage,
    _ImagePart,
    _NamedChoice,
    _RefusalPart,
    _Request,
    _SystemMessage,
    _TextPart,
    _Tool,
    _ToolCall,
    _ToolMessage,
    _UserMessage,
)
from .errors import error_param

# Parameters accepted only at their no-op value: a client library may send them by default.
_DEFAULTS: dict[str, tuple[Any, ...]] = {
    "n": (1,),
    "presence_penalty": (0, 0.0),
    "frequency_penalty": (0, 0.0),
    "logprobs": (False,),
    "top_logprobs": (0,),
    "logit_bias": ({},),
    "store": (False,),
    "seed": (),
    "response_format": ({"type": "text"},),
    "service_tier": ("auto", "default"),
}

_PAIRING = PairingWords(
    missing=lambda ids: (
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        + ", ".join(ids)
    ),
    unexpected=lambda i: (
        f"Invalid parameter: messages with role 'tool' must be a response to a preceding "
        f"message with 'tool_calls' (tool_call_id {i} answers none)."
    ),
    duplicate_use=lambda i: f"Duplicate tool_call id {i}.",
    duplicate_result=lambda i: f"tool_call_id {i} is answered by more than one tool message.",
)


def stream_requested(data: Any) -> bool:
    """Whether a Chat Completions request asks for a stream."""
    if not isinstance(data, dict) or data.get("stream") is None:
        return False
    if not isinstance(data["stream"], bool):
        raise WireFormatError("Input should be a valid boolean", ("stream",))
    return bool(data["stream"])


# --- request decoding ----------------------------------------------------------------------


def _text_parts(content: Any, path: Path, *, allow_refusal: bool = False) -> list[TextBlock]:
    if isinstance(content, str):
        return [TextBlock(text=content)] if content else []
    if not isinstance(content, list):
        raise WireFormatError("Input should be a valid string or a valid list", path)
    models: dict[str, type[WireModel]] = {"text": _TextPart}
    if allow_refusal:
        models["refusal"] = _RefusalPart
    out = []
    for k, raw in enumerate(content):
        part = dispatch(raw, (*path, k), models)
        out.append(TextBlock(text=part.text if isinstance(part, _TextPart) else part.refusal))  # type: ignore[attr-defined]
    return out


def _image(url: str, path: Path) -> ImageBlock:
    """An ``image_url`` part; a ``data:`` URL must hold base64 of a PNG, JPEG, GIF or WebP
    image (the API reads the type from the bytes, so the neutral block gets that type)."""
    inline = parse_data_url(url)
    if inline is None:
        if url.startswith("data:"):
            raise _bad_data_url(path, "but got a data URL that is not base64")
        return ImageBlock(url=url)
    raw = decode_base64(inline[1])
    if raw is None or not inline[0].startswith("image/"):
        raise _bad_data_url(path, "but got an invalid base64 encoding" if inline[0].startswith("image/")
                            else f"but got the MIME type {inline[0]!r}")
    actual = sniff_media_type(raw)
    if actual is None:
        raise WireFormatError(
            "You uploaded an unsupported image. Please make sure your image has of one the "
            "following formats: ['png', 'jpeg', 'gif', 'webp'].",
            path,
        )
    return ImageBlock(media_type=actual, data=inline[1])


def _bad_data_url(path: Path, got: str) -> WireFormatError:
    where = error_param(path)
    return WireFormatError(
        f"Invalid '{where}'. Expected a base64-encoded data URL with an image MIME type (e.g. "
        f"'data:image/png;base64,aW1nIGJ5dGVzIGhlcmU='), {got}.",
        path,
    )


def _user_parts(content: Any, path: Path) -> list[TextBlock | ImageBlock]:
    if isinstance(content, str):
        return [TextBlock(text=content)] if content else []
    if not isinstance(content, list):
        raise WireFormatError("Input should be a valid string or a valid list", path)
    out: list[TextBlock | ImageBlock] = []
    for k, raw in enumerate(content):
        part = dispatch(raw, (*path, k), {"text": _TextPart, "image_url": _ImagePart})
        if isinstance(part, _TextPart):
            out.append(TextBlock(text=part.text))
        else:
            assert isinstance(part, _ImagePart)
            out.append(_image(part.image_url.url, (*path, k, "image_url", "url")))
    return out


def _arguments(text: str, path: Path) -> dict[str, Any]:
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise WireFormatError(f"arguments are not valid JSON: {exc}", path) from None
    if not isinstance(value, dict):
        raise WireFormatError("arguments must be a JSON object", path)
    return value


def _tool_calls(raw: list[Any] | None, path: Path) -> list[ToolUseBlock]:
    out = []
    for k, item in enumerate(raw or []):
        call = validate(_ToolCall, item, (*path, k))
        out.append(
            ToolUseBlock(
                id=call.id,
                name=call.function.name,
                input=_arguments(call.function.arguments, (*path, k, "function", "arguments")),
            )
        )
    return out


def _messages(raw_messages: list[Any]) -> tuple[list[TextBlock], list[Turn]]:
    system: list[TextBlock] = []
    turns: list[Turn] = []
    tool_run = False
    for i, raw in enumerate(raw_messages):
        path: Path = ("messages", i)
        msg = dispatch(raw, path, _MESSAGES, tag="role")
        if isinstance(msg, _SystemMessage):
            system.extend(_text_parts(msg.content, (*path, "content")))
            continue
        if isinstance(msg, _ToolMessage):
            parts = _text_parts(msg.content, (*path, "content"))
            block = ToolResultBlock(tool_use_id=msg.tool_call_id, content=list(parts))
            if tool_run:
                turns[-1].blocks.append((path, block))
            else:
                turns.append(Turn(role="user", path=path, blocks=[(path, block)]))
            tool_run = True
            continue
        tool_run = False
        blocks: list[tuple[Path, ContentBlock]] = []
        if isinstance(msg, _UserMessage):
            blocks = [((*path, "content"), b) for b in _user_parts(msg.content, (*path, "content"))]
            turns.append(Turn(role="user", path=path, blocks=blocks))
            continue
        assert isinstance(msg, _AssistantMessage)
        thought = read_reasoning(msg.reasoning_content, msg.reasoning, path, lenient=False)
        if thought is not None:
            key = "reasoning_content" if msg.reasoning_content else "reasoning"
            blocks.append(((*path, key), ThinkingBlock(text=thought)))
        if msg.content is not None:
            blocks = [
                ((*path, "content"), b)
                for b in _text_parts(msg.content, (*path, "content"), allow_refusal=True)
            ]
        if msg.refusal:
            blocks.append(((*path, "refusal"), TextBlock(text=msg.refusal)))
        for k, use in enumerate(_tool_calls(msg.tool_calls, (*path, "tool_calls"))):
            blocks.append(((*path, "tool_calls", k), use))
        turns.append(Turn(role="assistant", path=path, blocks=blocks))
    # Pairing is checked between an assistant turn and the tool run right after it.
    check_tool_pairing(turns, _PAIRING)
    return system, turns


def _tools(raw: list[Any] | None) -> list[ToolSpec]:
    specs: list[ToolSpec] = []
    for k, item in enumerate(raw or []):
        tool = validate(_Tool, item, ("tools", k))
        schema = tool.function.parameters
        if schema is None:
            schema = {"type": "object", "properties": {}}
        else:
            check_input_schema(schema, ("tools", k, "function", "parameters"))
        if tool.function.name in {s.name for s in specs}:
            raise WireFormatError("Tool names must be unique.", ("tools", k, "function", "name"))
        specs.append(
            ToolSpec(name=tool.function.name, description=tool.function.description or "", input_schema=schema)
        )
    return specs


def _tool_choice(raw: Any, parallel: bool | None, specs: list[ToolSpec]) -> ToolChoice | None:
    disable = parallel is False
    if raw is None:
        return ToolChoice(type="auto", disable_parallel_tool_use=True) if disable and specs else None
    if not specs:
        raise WireFormatError(
            "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are "
            "specified.",
            ("tool_choice",),
        )
    if isinstance(raw, str):
        kinds = {"auto": "auto", "required": "any", "none": "none"}
        if raw not in kinds:
            raise WireFormatError("Input should be 'auto', 'required' or 'none'", ("tool_choice",))
        return ToolChoice(type=kinds[raw], disable_parallel_tool_use=disable and raw != "none")  # type: ignore[arg-type]
    named = validate(_NamedChoice, raw, ("tool_choice",))
    if named.function.name not in {s.name for s in specs}:
        raise WireFormatError(
            f"tool {named.function.name!r} named by tool_choice is not among the provided tools",
            ("tool_choice", "function", "name"),
        )
    return ToolChoice(type="tool", name=named.function.name, disable_parallel_tool_use=disable)


def _stop(raw: Any) -> list[str]:
    if raw is None:
        return []
    if isinstance(raw, str):
        return [raw]
    if not isinstance(raw, list) or not all(isinstance(s, str) for s in raw):
        raise WireFormatError("Input should be a valid string or a list of strings", ("stop",))
    if len(raw) > MAX_STOP:
        raise WireFormatError(f"List should have at most {MAX_STOP} items", ("stop",))
    return list(raw)


def decode_request(data: Any) -> Request:
    """A Chat Completions request body -> :class:`Request`."""
    if isinstance(data, dict):
        data = dict(data)
        for key, allowed in _DEFAULTS.items():
            if key in data:
                value = data.pop(key)
                if value is not None and value not in allowed:
                    raise WireFormatError(
                        f"{key} is not supported by tooluse (it cannot be carried to every backend)",
                        (key,),
                    )
    req = validate(_Request, data, ())
    if (
        req.max_tokens is not None
        and req.max_completion_tokens is not None
        and req.max_tokens != req.max_completion_tokens
    ):
        raise WireFormatError(
            "max_tokens and max_completion_tokens disagree; send one of them", ("max_tokens",)
        )
    system, turns = _messages(req.messages)
    tools = _tools(req.tools)
    return Request(
        model=req.model,
        system=system,
        messages=[Message(role=t.role, content=[b for _, b in t.blocks]) for t in turns],  # type: ignore[arg-type]
        tools=tools,
        tool_choice=_tool_choice(req.tool_choice, req.parallel_tool_calls, tools),
        max_tokens=req.max_completion_tokens or req.max_tokens,
        temperature=req.temperature,
        top_p=req.top_p,
        stop_sequences=_stop(req.stop),
        metadata={"user_id": req.user} if req.user is not None else {},
        reasoning=decode_effort(req.reasoning_effort),
    )


# --- request encoding ----------------------------------------------------------------------


def _text_content(texts: list[str]) -> Any:
    if len(texts) == 1:
        return texts[0]
    return [{"type": "text", "text": t} for t in texts]


def _image_url(image: ImageBlock) -> str:
    if image.url is not None:
        return image.url
    assert image.data is not None and image.media_type is not None
    return data_url(image.media_type, image.data)


def _tool_message(block: ToolResultBlock, path: Path, strict: bool) -> dict[str, Any]:
    texts: list[str] = []
    for k, part in enumerate(block.content):
        if isinstance(part, TextBlock):
            texts.append(part.text)
        elif isinstance(part, JsonBlock):
            texts.append(json_text(part.value))
        elif isinstance(part, ToolReferenceBlock):
            unsupported("a tool message cannot carry a tool reference", (*path, "content", k),
                        TARGET, strict)
            texts.append(reference_placeholder(part).text)
        else:
            unsupported(
                "a tool message cannot carry an image", (*path, "content", k), TARGET, strict
            )
            texts.append(image_placeholder(part).text)
    if block.is_error:
        unsupported(
            "Chat Completions cannot mark a tool result as an error", (*path, "is_error"), TARGET, strict
        )
        # Documented fallback: the error travels in the text the model reads.
        texts = ["Error: " + (texts[0] if texts else "")] + texts[1:]
    return {"role": "tool", "tool_call_id": block.tool_use_id, "content": _text_content(texts) if texts else ""}


def _user_messages(msg: Message, path: Path, strict: bool) -> list[dict[str, Any]]:
    out = [
        _tool_message(b, (*path, j), strict)
        for j, b in enumerate(msg.content)
        if isinstance(b, ToolResultBlock)
    ]
    parts: list[dict[str, Any]] = []
    for j, b in enumerate(msg.content):
        if isinstance(b, TextBlock):
            parts.append({"type": "text", "text": b.text})
        elif isinstance(b, ImageBlock):
            parts.append({"type": "image_url", "image_url": {"url": _image_url(b)}})
        elif not isinstance(b, ToolResultBlock):
            dropped(f"a user message cannot carry a {b.type} block", (*path, j), TARGET, strict)
    if parts or not out:
        content: Any = parts[0]["text"] if len(parts) == 1 and parts[0]["type"] == "text" else parts
        out.append({"role": "user", "content": content if parts else ""})
    return out


def _encode_call(block: ToolUseBlock) -> dict[str, Any]:
    """A ``tool_use`` block as one entry of ``tool_calls`` (arguments as a JSON string); the
    same in a request's assistant message and in a ``chat.completion``."""
    return {"id": block.id, "type": "function",
            "function": {"name": block.name,
                         "arguments": json.dumps(block.input, ensure_ascii=False)}}


def _split_turn(
    blocks: Sequence[ContentBlock], other: Callable[[int, ContentBlock], str | None]
) -> tuple[list[str], list[dict[str, Any]]]:
    """An assistant turn's text pieces and ``tool_calls`` entries, in order; ``other`` is
    asked about any other block (its text, or None; or it raises)."""
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for j, b in enumerate(blocks):
        if isinstance(b, TextBlock):
            texts.append(b.text)
        elif isinstance(b, ToolUseBlock):
            calls.append(_encode_call(b))
        elif (text := other(j, b)) is not None:
            texts.append(text)
    return texts, calls


def _assistant_message(msg: Message, path: Path, strict: bool) -> dict[str, Any]:
    reasoning = ReasoningText(strict)

    def other(j: int, b: ContentBlock) -> str | None:
        if reasoning.take(b, (*path, j)):
            return None
        unsupported(
            f"an assistant message cannot carry a {b.type} block", (*path, j), TARGET, strict
        )
        return image_placeholder(b).text if isinstance(b, ImageBlock) else None

    texts, calls = _split_turn(msg.content, other)
    out: dict[str, Any] = {"role": "assistant", "content": _text_content(texts) if texts else None}
    if reasoning.text is not None:
        out["reasoning_content"] = reasoning.text
    if calls:
        out["tool_calls"] = calls
    return out


def encode_request(
    req: Request, *, strict: bool = True, max_tokens_field: str = "max_tokens"
) -> dict[str, Any]:
    """:class:`Request` -> Chat Completions body. ``max_tokens_field`` picks
    ``max_tokens`` (understood by every OpenAI-compatible server) or
    ``max_completion_tokens`` (required by OpenAI's reasoning models)."""
    req = place_blocks(req, TARGET, strict)
    if req.model is None:
        unsupported("Chat Completions requires a model", ("model",), TARGET, strict)
    out: dict[str, Any] = {"model": req.model or ""}
    messages: list[dict[str, Any]] = []
    if req.system:
        messages.append({"role": "system", "content": _text_content([b.text for b in req.system])})
    for i, msg in enumerate(req.messages):
        path: Path = ("messages", i, "content")
        if msg.role == "user":
            messages.extend(_user_messages(msg, path, strict))
        else:
            messages.append(_assistant_message(msg, path, strict))
    out["messages"] = messages
    if req.tools:
        out["tools"] = [
            {"type": "function", "function": {
                "name": t.name, **({"description": t.description} if t.description else {}),
                "parameters": public_schema(t.input_schema)}}
            for t in req.tools
        ]
    choice = req.tool_choice
    if choice is not None:
        if choice.type == "tool":
            out["tool_choice"] = {"type": "function", "function": {"name": choice.name}}
        else:
            out["tool_choice"] = {"auto": "auto", "any": "required", "none": "none"}[choice.type]
        if choice.disable_parallel_tool_use:
            out["parallel_tool_calls"] = False
    if req.max_tokens is not None:
        out[max_tokens_field] = req.max_tokens
    if req.stop_sequences:
        stop = list(req.stop_sequences)
        if len(stop) > MAX_STOP:
            unsupported(f"Chat Completions takes at most {MAX_STOP} stop sequences",
                        ("stop_sequences",), TARGET, strict)
            stop = stop[:MAX_STOP]
        out["stop"] = stop
    if req.temperature is not None:
        out["temperature"] = req.temperature
    if req.top_p is not None:
        out["top_p"] = req.top_p
    if req.top_k is not None:
        unsupported("Chat Completions has no top_k", ("top_k",), TARGET, strict)
    if req.metadata:
        extra = sorted(k for k in req.metadata if k != "user_id")
        if extra:
            unsupported(f"Chat Completions carries only user_id (as 'user'), not {', '.join(extra)}",
                        ("metadata", extra[0]), TARGET, strict)
        if "user_id" in req.metadata:
            out["user"] = str(req.metadata["user_id"])
    out.update(encode_effort(req.reasoning, strict))
    return out
