"""Responses API response objects (``object: "response"``) <-> neutral :class:`Response`.

:func:`encode_response` writes the gateway's answer: each text block is one ``message``
item with one ``output_text`` part, each tool call a ``function_call`` (or, for a custom
tool, ``custom_tool_call``) item, each thinking block a ``reasoning`` item (see
:mod:`._reasoning`; a redacted one is left out with a log line). Item ids derive from the
response id and the item's position (a reasoning item keeps the id its upstream gave it),
so a streamed answer and the stored one name their items alike. The response
object also echoes the request's settings (``instructions``, ``tools``, ``tool_choice``...):
the caller passes them as ``echo`` (see :func:`echo_fields`).

:func:`decode_response` reads an upstream's answer: ``reasoning`` items are thinking
blocks; server-tool items (``web_search_call``...) are left out, as the neutral model cannot
carry them.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from ...errors import ConversionError, WireFormatError
from ...messages import (
    SERVER_TOOL_BLOCKS,
    ContentBlock,
    RedactedThinkingBlock,
    Request,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolSearchBlock,
    ToolUseBlock,
    Usage,
)
from .._common import Path, dropped, usage_of_totals, validate
from ..openai.requests import _arguments
from ._reasoning import block_item, decode_item
from ._tools import CUSTOM_INPUT, ToolKinds, joined_name
from ._wire import (
    TARGET,
    _CustomToolCallIn,
    _FunctionCallIn,
    _OutputMessageIn,
    _ReasoningIn,
    _ResponseIn,
)
from .request_encoding import encode_call
from .server_tools import ITEMS as SERVER_ITEMS
from .server_tools import ServerItems, echo_tool, item_of, search_items
from .shell_tools import ITEMS as SHELL_ITEMS
from .shell_tools import decode_item as decode_shell_item

__all__ = ["answer_blocks", "decode_response", "echo_fields", "encode_response", "envelope",
           "item_id", "output_item", "output_items", "server_items", "status_of", "usage_body"]

#: Request fields a response object repeats, with the API's defaults.
_ECHO_DEFAULTS: dict[str, Any] = {
    "instructions": None, "max_output_tokens": None, "max_tool_calls": None,
    "metadata": {}, "parallel_tool_calls": True, "previous_response_id": None,
    "prompt_cache_key": None, "reasoning": {"effort": None, "summary": None},
    "safety_identifier": None, "service_tier": "default", "store": True,
    "temperature": 1.0, "text": {"format": {"type": "text"}, "verbosity": "medium"},
    "tool_choice": "auto", "tools": [], "top_logprobs": 0, "top_p": 1.0,
    "truncation": "disabled", "user": None,
}


def echo_fields(data: dict[str, Any] | None = None) -> dict[str, Any]:
    """The settings a response object echoes, from a request body (defaults filled in)."""
    out = dict(_ECHO_DEFAULTS)
    for key in _ECHO_DEFAULTS:
        if data is not None and data.get(key) is not None:
            out[key] = data[key]
    if data is not None and isinstance(data.get("text"), dict):
        out["text"] = {**_ECHO_DEFAULTS["text"], **data["text"]}
    if isinstance(out["tools"], list):
        # a function tool with its strict; an mcp tool without its secrets
        out["tools"] = [_echo_tool(echo_tool(t)) for t in out["tools"]]
    return out


def _echo_tool(tool: Any) -> Any:
    """A tool as the response object shows it: a function tool always with ``strict`` (the
    default the API applied, true) and ``parameters``, as the API writes it."""
    if not isinstance(tool, dict) or tool.get("type") != "function":
        return tool
    return {**tool, "strict": True if tool.get("strict") is None else tool["strict"],
            "parameters": tool.get("parameters")}


def item_id(prefix: str, response_id: str, index: int) -> str:
    """The id of output item ``index`` of response ``response_id``."""
    return f"{prefix}_{response_id.removeprefix('resp_')}{index:03d}"


def status_of(stop_reason: str | None) -> tuple[str, dict[str, str] | None]:
    """The response ``status`` and ``incomplete_details`` for a neutral stop reason."""
    if stop_reason == "max_tokens":
        return "incomplete", {"reason": "max_output_tokens"}
    if stop_reason == "content_filtered":
        return "incomplete", {"reason": "content_filter"}
    if stop_reason == "pause_turn":  # the server's limit on the tools it runs in one turn
        return "incomplete", {"reason": "max_tool_calls"}
    return "completed", None


def usage_body(usage: Usage) -> dict[str, Any]:
    """:class:`Usage` -> ``usage``: the whole prompt in ``input_tokens``, its cache reads
    and writes in ``input_tokens_details``."""
    return {
        "input_tokens": usage.prompt_tokens,
        "input_tokens_details": {"cached_tokens": usage.cache_read_input_tokens,
                                 "cache_write_tokens": usage.cache_creation_input_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.prompt_tokens + usage.output_tokens,
    }


def usage_of(usage: Any) -> Usage:
    """A ``usage`` object (a response's) -> :class:`Usage`: ``cached_tokens`` and
    ``cache_write_tokens`` of ``input_tokens_details`` are the cache reads and writes, out of
    ``input_tokens``."""
    if not isinstance(usage, dict):
        return Usage()
    details = usage.get("input_tokens_details")
    details = details if isinstance(details, dict) else {}
    return usage_of_totals(usage.get("input_tokens"), usage.get("output_tokens"),
                           details.get("cached_tokens"), details.get("cache_write_tokens"))


def output_item(block: ContentBlock, response_id: str, index: int, kinds: ToolKinds,
                status: str = "completed") -> dict[str, Any]:
    """Content block ``index`` of a response as an output item."""
    if isinstance(block, TextBlock):
        return {"id": item_id("msg", response_id, index), "type": "message", "status": status,
                "role": "assistant",
                "content": [{"type": "output_text", "text": block.text, "annotations": [],
                             "logprobs": []}]}
    if isinstance(block, ToolUseBlock):
        item = encode_call(block, kinds)
        prefix = _PREFIXES.get(item["type"], "fc")
        return {"id": item_id(prefix, response_id, index), **item, "status": status}
    if isinstance(block, ThinkingBlock):
        return block_item(block, item_id("rs", response_id, index))
    raise ConversionError(f"a response cannot hold a {block.type} block", ("content", index),
                          target=TARGET)


def server_items(block: ContentBlock, response_id: str, index: int, kinds: ToolKinds,
                 request: Request | None) -> list[dict[str, Any]]:
    """A block of a tool the server ran as its output items, with their ids: a tool search
    is two (``tool_search_call``, ``tool_search_output``), an MCP listing or call one (an
    approval request keeps its own id, which the client answers with)."""
    if isinstance(block, ToolSearchBlock):
        call, output = search_items(block, request, kinds)
        return [{"id": item_id("tsc", response_id, index), **call},
                {"id": item_id("tso", response_id, index), **output}]
    item = item_of(block)
    prefix = "mcpl" if item["type"] == "mcp_list_tools" else "mcp"
    return [{"id": item_id(prefix, response_id, index), **item}]


def output_items(block: ContentBlock, response_id: str, index: int, kinds: ToolKinds,
                 status: str = "completed", request: Request | None = None
                 ) -> list[dict[str, Any]]:
    """Content block ``index`` of a response as its output items."""
    if isinstance(block, SERVER_TOOL_BLOCKS):
        return server_items(block, response_id, index, kinds, request)
    return [output_item(block, response_id, index, kinds, status)]


#: Item id prefixes of calls other than functions.
_PREFIXES = {"custom_tool_call": "ctc", "local_shell_call": "lsh", "shell_call": "sh",
             "apply_patch_call": "apc"}


def answer_blocks(content: list[ContentBlock]) -> list[ContentBlock]:
    """The blocks an answer shows: a redacted thinking block (another API's opaque
    reasoning) has no Responses form and is left out, with a log line."""
    kept: list[ContentBlock] = []
    for k, block in enumerate(content):
        if isinstance(block, RedactedThinkingBlock):
            dropped("the Responses API has no redacted reasoning", ("content", k), TARGET,
                    strict=False)
        else:
            kept.append(block)
    return kept


def envelope(response_id: str, *, created_at: float, model: str | None, status: str,
             output: list[dict[str, Any]], echo: dict[str, Any], usage: Usage | None = None,
             incomplete_details: dict[str, str] | None = None,
             error: dict[str, Any] | None = None) -> dict[str, Any]:
    """A response object (also the ``response`` of the stream's lifecycle events)."""
    body: dict[str, Any] = {
        "id": response_id, "object": "response", "created_at": int(created_at),
        "status": status, "background": False, "error": error,
        "incomplete_details": incomplete_details, "model": model or "", "output": output,
        **echo,
        "usage": usage_body(usage) if usage is not None else None,
    }
    if status in ("completed", "incomplete", "failed"):
        body["completed_at"] = int(time.time()) if status == "completed" else None
    return body


def encode_response(resp: Response, /, *, request: Request | None = None,
                    echo: dict[str, Any] | None = None,
                    created_at: float | None = None) -> dict[str, Any]:
    """:class:`Response` -> a response object. ``request`` tells custom and namespaced tools
    apart from plain functions; ``echo`` holds the request settings to repeat
    (:func:`echo_fields`)."""
    response_id = resp.id or f"resp_{uuid.uuid4().hex}"
    kinds = ToolKinds(request)
    status, incomplete = status_of(resp.stop_reason)
    item_status = "incomplete" if status == "incomplete" else "completed"
    output: list[dict[str, Any]] = []
    for block in answer_blocks(resp.content):  # ids by position, as the stream names them
        output.extend(output_items(block, response_id, len(output), kinds, item_status, request))
    return envelope(response_id, created_at=time.time() if created_at is None else created_at,
                    model=resp.model, status=status, output=output,
                    echo=echo if echo is not None else echo_fields(), usage=resp.usage,
                    incomplete_details=incomplete)


def stop_reason_of(status: str | None, reason: str | None, calls: bool) -> Any:
    """The neutral stop reason of a response ``status`` and incomplete ``reason``."""
    if status == "incomplete":
        return "content_filtered" if reason == "content_filter" else "max_tokens"
    return "tool_use" if calls else "end_turn"


def decode_output_item(raw: Any, path: Path) -> list[ContentBlock]:
    """One output item as neutral blocks ([] for items the neutral model cannot carry)."""
    kind = raw.get("type") if isinstance(raw, dict) else None
    if kind == "message":
        message = validate(_OutputMessageIn, raw, path)
        blocks: list[ContentBlock] = []
        for part in message.content:
            if isinstance(part, dict) and part.get("type") == "output_text":
                blocks.append(TextBlock(text=str(part.get("text", ""))))
            elif isinstance(part, dict) and part.get("type") == "refusal":
                blocks.append(TextBlock(text=str(part.get("refusal", ""))))
        return blocks
    if kind == "function_call":
        call = validate(_FunctionCallIn, raw, path)
        return [ToolUseBlock(id=call.call_id, name=joined_name(call.namespace, call.name),
                             input=_arguments(call.arguments, (*path, "arguments")))]
    if kind == "custom_tool_call":
        custom = validate(_CustomToolCallIn, raw, path)
        return [ToolUseBlock(id=custom.call_id, name=joined_name(custom.namespace, custom.name),
                             input={CUSTOM_INPUT: custom.input})]
    if kind == "reasoning":
        return [decode_item(validate(_ReasoningIn, raw, path), path)]
    if kind in ("local_shell_call", "shell_call", "apply_patch_call"):
        model = SHELL_ITEMS[kind]
        return [decode_shell_item({k: v for k, v in raw.items() if k in model.model_fields},
                                  path)[1]]
    if not isinstance(kind, str):
        raise WireFormatError("an output item needs a type", (*path, "type"))
    return []  # web_search_call and other server-side items


def decode_response(data: Any, /) -> Response:
    """A response object -> :class:`Response` (a ``failed`` one is an error)."""
    resp = validate(_ResponseIn, data, ())
    if resp.status == "failed" or resp.error:
        from .errors import backend_error

        raise backend_error({"error": resp.error or {"message": "the response failed"}})
    content: list[ContentBlock] = []
    server = ServerItems()
    for k, raw in enumerate(resp.output):
        if isinstance(raw, dict) and raw.get("type") in SERVER_ITEMS:
            content.extend(server.add(raw, ("output", k)))
        else:
            content.extend(decode_output_item(raw, ("output", k)))
    reason = resp.incomplete_details.reason if resp.incomplete_details is not None else None
    return Response(
        id=resp.id, model=resp.model, content=content,
        stop_reason=stop_reason_of(resp.status, reason,
                                   any(isinstance(b, ToolUseBlock) for b in content)),
        usage=usage_of(data.get("usage")),
    )
