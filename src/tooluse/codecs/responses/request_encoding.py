"""Responses API requests, encoded: a neutral :class:`~tooluse.messages.Request` as the
body the ``openai-responses`` backend sends and ``tooluse convert`` writes (the reverse of
:mod:`.requests`'s decoding): the history as input items (calls and their outputs, custom,
namespaced and client-run tools' items, the server tools' items for a Responses upstream),
the tools with their kinds, and what a Responses upstream is given verbatim."""

from __future__ import annotations

import json
from typing import Any

from ...messages import (
    SERVER_TOOL_BLOCKS,
    ImageBlock,
    JsonBlock,
    MCPApprovalBlock,
    RedactedThinkingBlock,
    Request,
    TextBlock,
    ThinkingBlock,
    ToolReferenceBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from .._common import (
    Path,
    data_url,
    dropped,
    json_text,
    place_blocks,
    reference_placeholder,
    unsupported,
)
from ._reasoning import block_item, encode_settings
from ._tools import CUSTOM_INPUT, ToolKinds
from ._wire import (
    TARGET,
)
from .server_tools import history_items
from .shell_tools import KINDS as CLIENT_RUN
from .shell_tools import call_item as shell_call_item
from .shell_tools import output_item as shell_output_item

__all__ = ["custom_text", "encode_call", "encode_request"]



def _image_part(image: ImageBlock) -> dict[str, Any]:
    url = image.url if image.url is not None else data_url(image.media_type or "", image.data or "")
    return {"type": "input_image", "image_url": url, "detail": "auto"}


def _output_item(block: ToolResultBlock, kinds: ToolKinds, calls: dict[str, str], path: Path,
                 strict: bool) -> dict[str, Any]:
    kind = kinds.of(calls.get(block.tool_use_id, "")).kind
    if kind in CLIENT_RUN:
        return shell_output_item(block, kind)
    parts: list[dict[str, Any]] = []
    for part in block.content:
        if isinstance(part, TextBlock):
            parts.append({"type": "input_text", "text": part.text})
        elif isinstance(part, JsonBlock):
            parts.append({"type": "input_text", "text": json_text(part.value)})
        elif isinstance(part, ToolReferenceBlock):
            unsupported("a tool output cannot carry a tool reference", path, TARGET, strict)
            parts.append({"type": "input_text", "text": reference_placeholder(part).text})
        else:
            parts.append(_image_part(part))
    if block.is_error:
        unsupported("the Responses API cannot mark a tool output as an error",
                    (*path, "is_error"), TARGET, strict)
        parts.insert(0, {"type": "input_text", "text": "Error: "})
    custom = kind == "custom"
    output: Any = parts
    if not parts or len(parts) == 1 and parts[0]["type"] == "input_text":
        output = parts[0]["text"] if parts else ""
    return {"type": "custom_tool_call_output" if custom else "function_call_output",
            "call_id": block.tool_use_id, "output": output}


def encode_call(block: ToolUseBlock, kinds: ToolKinds) -> dict[str, Any]:
    """A ``tool_use`` block as a ``function_call`` or ``custom_tool_call`` item (no id or
    status: the response encoder adds them)."""
    wire = kinds.of(block.name)
    if wire.kind in CLIENT_RUN:
        return shell_call_item(block, wire.kind)
    if wire.kind == "custom":
        item: dict[str, Any] = {"type": "custom_tool_call", "call_id": block.id,
                                "name": wire.name, "input": custom_text(block.input)}
    else:
        item = {"type": "function_call", "call_id": block.id, "name": wire.name,
                "arguments": json.dumps(block.input, ensure_ascii=False)}
    if wire.namespace:
        item["namespace"] = wire.namespace
    return item


def custom_text(value: dict[str, Any]) -> str:
    """A custom tool call's text from its neutral input."""
    text = value.get(CUSTOM_INPUT, "")
    return text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)


def _input(req: Request, kinds: ToolKinds, strict: bool) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    calls: dict[str, str] = {}
    for i, msg in enumerate(req.messages):
        path: Path = ("messages", i, "content")
        if msg.role == "assistant":
            for j, block in enumerate(msg.content):
                if isinstance(block, TextBlock):
                    items.append({"role": "assistant", "content": block.text})
                elif isinstance(block, ToolUseBlock):
                    calls[block.id] = block.name
                    item = encode_call(block, kinds)
                    if item["type"] in ("local_shell_call", "apply_patch_call"):
                        item["status"] = "completed"  # required of these input items
                        if item["type"] == "local_shell_call":
                            item["id"] = block.id
                    items.append(item)
                elif isinstance(block, ThinkingBlock):
                    items.append(block_item(block))
                elif isinstance(block, RedactedThinkingBlock):
                    dropped("the Responses API has no redacted reasoning (another API's opaque "
                            "thinking)", (*path, j), TARGET, strict)
                elif isinstance(block, SERVER_TOOL_BLOCKS):
                    items.extend(history_items(block, req, kinds))
                else:
                    unsupported(f"an assistant message cannot carry a {block.type} block",
                                (*path, j), TARGET, strict)
            continue
        parts: list[dict[str, Any]] = []
        for j, block in enumerate(msg.content):
            if isinstance(block, ToolResultBlock):
                items.append(_output_item(block, kinds, calls, (*path, j), strict))
            elif isinstance(block, TextBlock):
                parts.append({"type": "input_text", "text": block.text})
            elif isinstance(block, ImageBlock):
                parts.append(_image_part(block))
            elif isinstance(block, (ThinkingBlock, RedactedThinkingBlock)):
                dropped(f"a {block.type} block belongs in an assistant turn", (*path, j), TARGET,
                        strict)
            elif isinstance(block, MCPApprovalBlock):
                items.extend(history_items(block, req, kinds))
        if parts:
            items.append({"role": "user", "content": parts})
    return items


def _encode_tools(req: Request, kinds: ToolKinds) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    namespaces: dict[str, dict[str, Any]] = {}
    fields = req.passthrough.tool_fields if req.passthrough is not None and (
        req.passthrough.api == TARGET) else {}
    for spec in req.tools:
        wire = kinds.of(spec.name)
        if wire.kind in CLIENT_RUN:
            out.append({k: v for k, v in fields.get(spec.name, {"type": wire.kind}).items()
                        if k != "name"})
            continue
        if wire.kind == "custom":
            extra = fields.get(spec.name, {})
            tool: dict[str, Any] = {"type": "custom", "name": wire.name}
            description = extra.get("description", spec.description)
            if description:
                tool["description"] = description
            if "format" in extra:
                tool["format"] = extra["format"]
        else:
            tool = {"type": "function", "name": wire.name,
                    **({"description": spec.description} if spec.description else {}),
                    "parameters": spec.input_schema, "strict": spec.strict}
        if wire.namespace:
            if wire.namespace not in namespaces:
                meta = fields.get(f"namespace:{wire.namespace}", {})
                namespaces[wire.namespace] = {"type": "namespace", "name": wire.namespace,
                                              "description": meta.get("description", ""),
                                              "tools": []}
                out.append(namespaces[wire.namespace])
            namespaces[wire.namespace]["tools"].append(tool)
        else:
            out.append(tool)
    return out


def encode_request(req: Request, /, *, strict: bool = True) -> dict[str, Any]:
    """:class:`Request` -> a Responses body, stateless (``store: false``: the whole
    conversation is in ``input``)."""
    req = place_blocks(req, TARGET, strict)
    if req.model is None:
        unsupported("the Responses API requires a model", ("model",), TARGET, strict)
    kinds = ToolKinds(req)
    out: dict[str, Any] = {"model": req.model or ""}
    if req.system:  # the first block is the instructions, others developer messages
        out["instructions"] = req.system[0].text
    out["input"] = [{"role": "developer", "content": b.text} for b in req.system[1:]]
    out["input"].extend(_input(req, kinds, strict))
    if req.tools:
        out["tools"] = _encode_tools(req, kinds)
    choice = req.tool_choice
    if choice is not None:
        if choice.type == "tool":
            assert choice.name is not None
            wire = kinds.of(choice.name)
            out["tool_choice"] = {"type": wire.kind, "name": wire.name,
                                  **({"namespace": wire.namespace} if wire.namespace else {})}
        else:
            out["tool_choice"] = {"auto": "auto", "any": "required", "none": "none"}[choice.type]
        if choice.disable_parallel_tool_use:
            out["parallel_tool_calls"] = False
    if req.max_tokens is not None:
        out["max_output_tokens"] = req.max_tokens
    if req.temperature is not None:
        out["temperature"] = req.temperature
    if req.top_p is not None:
        out["top_p"] = req.top_p
    if req.top_k is not None:
        unsupported("the Responses API has no top_k", ("top_k",), TARGET, strict)
    if req.stop_sequences:
        unsupported("the Responses API has no stop sequences", ("stop_sequences",), TARGET, strict)
    if req.metadata:
        extra = sorted(k for k in req.metadata if k != "user_id")
        if extra:
            unsupported(f"the Responses API carries only user_id (as 'safety_identifier'), not "
                        f"{', '.join(extra)}", ("metadata", extra[0]), TARGET, strict)
        if "user_id" in req.metadata:
            out["safety_identifier"] = str(req.metadata["user_id"])
    if req.response_schema is not None:
        out["text"] = {"format": {"type": "json_schema", "name": "response",
                                  "schema": req.response_schema, "strict": True}}
    forward = req.passthrough if req.passthrough is not None and (
        req.passthrough.api == TARGET) else None
    if forward is not None:
        for key, value in forward.fields.items():
            out.setdefault(key, value)
        if forward.tools:
            out["tools"] = [*out.get("tools", []), *forward.tools]
    if forward is None or "reasoning" not in forward.fields:  # a client's own is sent as it is
        for key, value in encode_settings(req.reasoning, strict).items():
            out.setdefault(key, value)
    out["store"] = False
    return out
