"""Messages API requests, encoded: a neutral :class:`~tooluse.messages.Request` as the body
the Anthropic backend sends and ``tooluse convert`` writes (the reverse of
:mod:`.requests`'s decoding, whose block rules it follows): single-text turns and results
in the string shorthand, mid-conversation system messages back in their place
(:mod:`.system_messages`), a server tool's use and result as the API's two blocks, and what
an Anthropic upstream is given verbatim (``Request.passthrough``)."""

from __future__ import annotations

from typing import Any

from ...messages import (
    ContentBlock,
    ImageBlock,
    JsonBlock,
    Passthrough,
    RedactedThinkingBlock,
    Request,
    TextBlock,
    ThinkingBlock,
    ToolReferenceBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from ...tools.schema import public_schema
from .._common import (
    Path,
    dropped,
    image_placeholder,
    json_text,
    place_blocks,
    unsupported,
)
from . import system_messages, thinking
from ._wire import (
    IMAGE_MEDIA_TYPES,
    TARGET,
)
from .cache import with_control
from .server_tools import (
    answer_blocks,
)

__all__ = ["encode_request", "in_order"]



def _encode_image(image: ImageBlock, path: Path, strict: bool) -> dict[str, Any]:
    return with_control(_image_body(image, path, strict), image.cache)


def _image_body(image: ImageBlock, path: Path, strict: bool) -> dict[str, Any]:
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
            parts.append(with_control({"type": "text", "text": part.text}, part.cache))
        elif isinstance(part, JsonBlock):
            # Documented conversion: Messages results carry no JSON parts, so the value
            # travels as its JSON text.
            parts.append({"type": "text", "text": json_text(part.value)})
        elif isinstance(part, ToolReferenceBlock):
            parts.append({"type": "tool_reference", "tool_name": part.name})
        else:
            parts.append(_encode_image(part, (*path, "content", k), strict))
    if parts:
        out["content"] = _shorthand(parts)
    if block.is_error:
        out["is_error"] = True
    return with_control(out, block.cache)


def _shorthand(blocks: list[dict[str, Any]]) -> Any:
    """One text block without a breakpoint is written as its string, as the API's own
    examples do; anything else as the list."""
    if len(blocks) == 1 and blocks[0]["type"] == "text" and "cache_control" not in blocks[0]:
        return blocks[0]["text"]
    return blocks


def _encode_block(block: ContentBlock, path: Path, role: str, strict: bool
                  ) -> list[dict[str, Any]]:
    """A history block's Messages form (a server tool's use and result: two blocks; a
    thinking block that is dropped: none)."""
    if isinstance(block, (ThinkingBlock, RedactedThinkingBlock)):
        encoded = thinking.encode_history(block, path, role, strict)
        return [encoded] if encoded is not None else []
    if isinstance(block, TextBlock):
        return [with_control({"type": "text", "text": block.text}, block.cache)]
    if isinstance(block, ImageBlock):
        return [_encode_image(block, path, strict)]
    if isinstance(block, ToolUseBlock):
        return [with_control({"type": "tool_use", "id": block.id, "name": block.name,
                              "input": block.input}, block.cache)]
    if isinstance(block, ToolResultBlock):
        return [_encode_result(block, path, strict)]
    blocks = list(answer_blocks(block))
    if not blocks:
        dropped(f"the Messages API has no {block.type} block", path, TARGET, strict)
    return blocks


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
    forward = req.passthrough if req.passthrough is not None and req.passthrough.api == TARGET else None
    system, in_place = system_messages.top_system(req, forward.messages if forward else [])
    if system:
        out["system"] = _shorthand([with_control({"type": "text", "text": b.text}, b.cache)
                                    for b in system])
    turns = [(msg.role, [_encode_block(b, ("messages", i, "content", j), msg.role, strict)
                         for j, b in enumerate(msg.content)])
             for i, msg in enumerate(req.messages)]
    out["messages"] = system_messages.interleave(
        turns, forward.messages if forward is not None and in_place else [], _shorthand)
    if req.tools or (forward is not None and forward.tools):
        out["tools"] = [_encode_tool(t, forward) for t in req.tools]
        if forward is not None:
            out["tools"].extend(forward.tools)
            out["tools"] = in_order(out["tools"], forward.tool_order)
    if req.tool_choice is not None:
        choice: dict[str, Any] = {"type": req.tool_choice.type}
        if req.tool_choice.name is not None:
            choice["name"] = req.tool_choice.name
        if req.tool_choice.disable_parallel_tool_use:
            choice["disable_parallel_tool_use"] = True
        out["tool_choice"] = choice
    if req.stop_sequences:
        out["stop_sequences"] = list(req.stop_sequences)
    if req.reasoning is not None:
        out["thinking"] = thinking.encode_settings(req.reasoning, strict)
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
    if forward is not None:
        for key, value in forward.fields.items():
            out.setdefault(key, value)
    if req.response_schema is not None:
        config = out.setdefault("output_config", {})
        config.setdefault("format", {"type": "json_schema", "schema": req.response_schema})
    return out


def in_order(tools: list[dict[str, Any]], order: list[str]) -> list[dict[str, Any]]:
    """``tools`` in the client's order of their names (an ``mcp_toolset`` is named
    ``mcp_toolset:SERVER``); tools it does not name keep their place after those."""
    rank = {name: k for k, name in enumerate(order)}

    def key(item: tuple[int, dict[str, Any]]) -> tuple[int, int]:
        k, tool = item
        name = tool.get("name") if tool.get("type") != "mcp_toolset" \
            else f"mcp_toolset:{tool.get('mcp_server_name')}"
        return rank.get(str(name), len(rank)), k

    return [tool for _, tool in sorted(enumerate(tools), key=key)]


def _encode_tool(tool: ToolSpec, extra: Passthrough | None) -> dict[str, Any]:
    fields = extra.tool_fields.get(tool.name, {}) if extra is not None else {}
    if fields.get("type") not in (None, "custom"):
        return dict(fields)  # an Anthropic-defined tool, as the client defined it
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["input_schema"] = public_schema(tool.input_schema)
    if tool.strict:
        out["strict"] = True
    if tool.deferred:
        out["defer_loading"] = True
    if tool.input_examples:
        out["input_examples"] = [dict(e) for e in tool.input_examples]
    out.update(fields)
    return with_control(out, tool.cache)
