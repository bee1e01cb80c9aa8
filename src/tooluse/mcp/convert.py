"""MCP's tool definitions and call results as tooluse's, without loss.

- A listed tool becomes a :class:`~tooluse.tools.Tool`: its input schema tidied like a
  pydantic one (titles dropped, non-recursive ``$defs`` inlined) and then checked like any
  other; a name that breaks ``^[a-zA-Z0-9_-]{1,64}$`` (MCP allows ``.`` and 128 characters)
  is mapped, the original kept for the ``tools/call``. Its ``readOnlyHint: true``
  annotation makes it :attr:`~tooluse.tools.Tool.read_only` (never asked about for approval).
- A ``CallToolResult`` becomes a :class:`~tooluse.messages.ToolResultBlock`: ``text`` ->
  text, ``image`` -> image, an embedded ``resource`` / ``resource_link`` / ``audio`` -> a
  JSON part holding every field (URI, MIME type, text or base64 blob), except that an
  embedded image blob becomes an image; ``structuredContent`` -> a JSON part (replacing the
  text block that merely repeats it as JSON, as the spec asks servers to send);
  ``isError`` -> ``is_error``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import mcp_types as mt

from ..messages import ImageBlock, JsonBlock, ResultPart, TextBlock, ToolResultBlock
from ..tools import Tool, tidy_schema

__all__ = ["mcp_tool", "prepare_schema", "read_only", "result_block"]

#: Image types every tool-use API accepts inline; other images stay JSON (no loss).
_IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}


def prepare_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """An MCP input schema as a tool schema: tidied, and ``type: object`` added when a
    server left it out (older servers send bare ``properties``). Checking is the Tool's."""
    tidied = tidy_schema(schema)
    tidied.pop("$schema", None)  # a dialect marker, not part of what the model reads
    if "type" not in tidied:
        tidied = {"type": "object", **tidied}
    return tidied


def read_only(definition: mt.Tool) -> bool:
    """The tool's annotations say it does not modify its environment (``readOnlyHint``)."""
    annotations = definition.annotations
    return annotations is not None and annotations.read_only_hint is True


def mcp_tool(definition: mt.Tool, function: Callable[..., Any], *,
             requires_approval: bool = False) -> Tool:
    """The tooluse tool for one listed MCP tool; ``function`` is called with the input as
    keyword arguments. ``requires_approval``: calls of the tool need the user's approval,
    unless its annotations say it is read-only (``readOnlyHint``). Raises
    :class:`~tooluse.errors.ToolDefinitionError` for a tool whose schema cannot be used."""
    description = definition.description or definition.title or ""
    is_read_only = read_only(definition)
    return Tool(
        definition.name,
        description,
        prepare_schema(definition.input_schema),
        function,
        map_name=True,
        read_only=is_read_only,
        requires_approval=requires_approval and not is_read_only,
    )


def _dump(block: Any) -> dict[str, Any]:
    data: dict[str, Any] = block.model_dump(mode="json", by_alias=True, exclude_none=True)
    data.pop("_meta", None)
    data.pop("annotations", None)
    return data


def _part(block: Any) -> ResultPart:
    if isinstance(block, mt.TextContent):
        return TextBlock(text=block.text)
    if isinstance(block, mt.ImageContent):
        return ImageBlock(media_type=block.mime_type, data=block.data)
    if isinstance(block, mt.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, mt.BlobResourceContents) and resource.mime_type in _IMAGE_TYPES:
            return ImageBlock(media_type=resource.mime_type, data=resource.blob)
        return JsonBlock(value={"type": "resource", **_dump(resource)})
    return JsonBlock(value=_dump(block))  # resource_link, audio, anything newer


def _repeats(part: ResultPart, value: Any) -> bool:
    """Whether a text part says nothing but ``value``: its JSON, or, for the SDK's wrapping
    of a plain return value as ``{"result": v}``, ``v`` itself."""
    if not isinstance(part, TextBlock):
        return False
    candidates = [value]
    if isinstance(value, dict) and set(value) == {"result"}:
        if part.text == value["result"]:
            return True
        candidates.append(value["result"])
    try:
        parsed = json.loads(part.text)
    except ValueError:
        return False
    return any(parsed == c and type(parsed) is type(c) for c in candidates)


def result_block(result: mt.CallToolResult, tool_use_id: str = "", *,
                 structured: bool = True) -> ToolResultBlock:
    """The tool result for an MCP ``CallToolResult`` (see the module docstring);
    ``structured=False`` leaves ``structuredContent`` out (the content blocks as the server
    sent them, what an API's MCP call result shows)."""
    parts = [_part(block) for block in result.content]
    structured_content = result.structured_content if structured else None
    if structured_content is not None:
        structured_part = JsonBlock(value=structured_content)
        for i, part in enumerate(parts):
            if _repeats(part, structured_content):
                parts[i] = structured_part
                break
        else:
            parts.append(structured_part)
    return ToolResultBlock(tool_use_id=tool_use_id, content=parts, is_error=result.is_error)
