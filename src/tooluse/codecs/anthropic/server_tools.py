"""Messages API server tools <-> the neutral model: tool search, the MCP connector, and the
Anthropic-defined client tools.

Request side (:func:`decode_tool`, :func:`decode_mcp_servers`):

- ``tool_search_tool_bm25_*`` / ``tool_search_tool_regex_*`` -> ``Request.server_tools.search``
  (:class:`~tooluse.messages.ToolSearchSpec`); tools with ``defer_loading: true`` ->
  ``ToolSpec.deferred``;
- ``mcp_servers`` (``url``, ``name``, ``authorization_token``, the older
  ``tool_configuration``) with their ``mcp_toolset`` tools (``default_config``, per-tool
  ``configs``: ``enabled``, ``defer_loading``) -> :class:`~tooluse.messages.MCPServerSpec`
  (the token as an ``Authorization: Bearer`` header, secret);
- ``bash_*``, ``text_editor_*``, ``memory_*``, ``computer_*`` -> tools with their documented
  input schema (:mod:`.defined_tools`), which the client runs;
- every definition is also kept verbatim in ``Request.passthrough`` for an Anthropic
  upstream, which runs search and MCP itself; what only Anthropic can run (web search, web
  fetch, code execution) is ``passthrough.required``, refused elsewhere.

Blocks (history and answers): ``server_tool_use`` + its ``tool_search_tool_result`` <->
:class:`~tooluse.messages.ToolSearchBlock`; ``mcp_tool_use`` + its ``mcp_tool_result`` <->
:class:`~tooluse.messages.MCPCallBlock` (one neutral block for the call and its result,
paired by ``tool_use_id`` in the same assistant turn); a tool result's ``tool_reference``
part <-> :class:`~tooluse.messages.ToolReferenceBlock`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any, Literal

from pydantic import Field, SecretStr

from ...errors import WireFormatError
from ...messages import (
    ContentBlock,
    MCPCallBlock,
    MCPServerSpec,
    Passthrough,
    ResultPart,
    ServerTools,
    TextBlock,
    ToolFilter,
    ToolReferenceBlock,
    ToolSearchBlock,
    ToolSearchSpec,
    ToolSpec,
)
from .._common import ID_PATTERN, LenientModel, Path, WireModel, validate
from ._wire import _CacheControl, _Text
from .cache import hint
from .defined_tools import defined_tool, vendor_run

__all__ = ["BLOCK_MODELS", "SERVER_BLOCK_TYPES", "answer_blocks", "decode_mcp_servers",
           "decode_tool", "is_paired_block", "pair_blocks", "reference_part",
           "search_result_body", "upstream_block"]

_SEARCH = re.compile(r"^tool_search_tool_(bm25|regex)(_\d{8})?$")
_DATED = re.compile(r"^[a-z][a-z0-9_]*_[0-9]{8}$")
#: A tool family declared by one entry without a name (``computer_toolset_20260801``).
_TOOLSET = re.compile(r"^[a-z][a-z0-9_]*_toolset_[0-9]{8}$")

#: History block types of server tools, in an assistant turn.
SERVER_BLOCK_TYPES = ("server_tool_use", "tool_search_tool_result", "mcp_tool_use",
                      "mcp_tool_result")


# --- wire models ---------------------------------------------------------------------------


class _SearchTool(WireModel):
    type: str
    name: Literal["tool_search_tool_bm25", "tool_search_tool_regex"]
    cache_control: _CacheControl | None = None
    defer_loading: bool | None = None
    strict: bool | None = None
    allowed_callers: list[str] | None = None


class _DefinedTool(LenientModel):
    """An Anthropic-defined client tool: its own fields are the upstream's to check."""

    type: str
    name: str = Field(min_length=1, max_length=128)
    cache_control: _CacheControl | None = None
    defer_loading: bool | None = None
    input_examples: list[dict[str, Any]] | None = None


class _ToolConfig(WireModel):
    enabled: bool | None = None
    defer_loading: bool | None = None


class _McpToolset(WireModel):
    type: Literal["mcp_toolset"]
    mcp_server_name: str = Field(min_length=1)
    default_config: _ToolConfig | None = None
    configs: dict[str, _ToolConfig] | None = None
    cache_control: _CacheControl | None = None
    tools: list[dict[str, Any]] | None = None


class _ToolConfiguration(WireModel):
    enabled: bool | None = None
    allowed_tools: list[str] | None = None


class _McpServer(WireModel):
    type: Literal["url"]
    url: str = Field(min_length=1)
    name: str = Field(min_length=1)
    authorization_token: str | None = None
    tool_configuration: _ToolConfiguration | None = None


class _ServerToolUse(WireModel):
    type: Literal["server_tool_use"]
    id: str = Field(pattern=ID_PATTERN)
    name: str
    input: dict[str, Any]
    cache_control: _CacheControl | None = None
    caller: dict[str, Any] | None = None


class _SearchResult(WireModel):
    type: Literal["tool_search_tool_result"]
    tool_use_id: str = Field(pattern=ID_PATTERN)
    content: dict[str, Any]
    cache_control: _CacheControl | None = None


class _McpToolUse(WireModel):
    type: Literal["mcp_tool_use"]
    id: str = Field(pattern=ID_PATTERN)
    name: str
    server_name: str
    input: dict[str, Any]
    cache_control: _CacheControl | None = None


class _McpToolResult(WireModel):
    type: Literal["mcp_tool_result"]
    tool_use_id: str = Field(pattern=ID_PATTERN)
    content: str | list[_Text] | None = None
    is_error: bool | None = None
    cache_control: _CacheControl | None = None


class _ToolReference(WireModel):
    type: Literal["tool_reference"]
    tool_name: str = Field(min_length=1)
    cache_control: _CacheControl | None = None


#: History blocks (assistant side) of server tools -> their wire models.
BLOCK_MODELS: dict[str, type[WireModel]] = {
    "server_tool_use": _ServerToolUse, "tool_search_tool_result": _SearchResult,
    "mcp_tool_use": _McpToolUse, "mcp_tool_result": _McpToolResult,
}


# --- request: tools --------------------------------------------------------------------------


def decode_tool(raw: dict[str, Any], path: Path, passthrough: Passthrough,
                server: ServerTools, toolsets: dict[str, tuple[_McpToolset, Path]]
                ) -> tuple[str, ToolSpec | None]:
    """A tool definition whose ``type`` is not ``custom``: its name (for the uniqueness
    check) and the neutral tool the model sees, if it is one."""
    kind = raw.get("type")
    if isinstance(kind, str) and _SEARCH.match(kind):
        tool = validate(_SearchTool, raw, path)
        mode = _SEARCH.match(kind).group(1)  # type: ignore[union-attr]
        if not tool.name.endswith(mode):
            raise WireFormatError(f"a {kind} tool is named 'tool_search_tool_{mode}'",
                                  (*path, "name"))
        if tool.defer_loading:
            raise WireFormatError("the tool search tool itself cannot be deferred",
                                  (*path, "defer_loading"))
        if server.search is not None:
            raise WireFormatError("only one tool search tool can be given", (*path, "type"))
        server.search = ToolSearchSpec(name=tool.name, mode=mode)  # type: ignore[arg-type]
        passthrough.tools.append(raw)
        return tool.name, None
    if kind == "mcp_toolset":
        toolset = validate(_McpToolset, raw, path)
        if toolset.mcp_server_name in toolsets:
            raise WireFormatError(f"MCP server '{toolset.mcp_server_name}' is configured by "
                                  "more than one mcp_toolset", (*path, "mcp_server_name"))
        toolsets[toolset.mcp_server_name] = (toolset, path)
        passthrough.tools.append(raw)
        return f"mcp_toolset:{toolset.mcp_server_name}", None
    if not isinstance(kind, str) or not _DATED.match(kind):
        raise WireFormatError(f"Input tag {kind!r} found using 'type' does not match any of "
                              "the expected tags", (*path, "type"))
    found = defined_tool(raw)
    if found is None:
        # Anthropic's own (web search, web fetch, code execution) or a type not known here:
        # forwarded to an Anthropic upstream, refused by any other backend.
        name = raw.get("name")
        if name is None and _TOOLSET.match(kind):
            name = kind  # a tool family (computer_toolset_20260801) carries no name
        if not isinstance(name, str) or not name:
            raise WireFormatError("Field required", (*path, "name"))
        passthrough.tools.append(raw)
        why = vendor_run(kind)
        passthrough.required.append(f"{'.'.join(map(str, path))}: {kind}"
                                    + (f": {why}" if why else ""))
        return name, None
    defined = validate(_DefinedTool, raw, path)
    schema, description = found
    passthrough.tool_fields[defined.name] = dict(raw)
    return defined.name, ToolSpec(
        name=defined.name, description=description, input_schema=schema,
        cache=hint(defined.cache_control), deferred=bool(defined.defer_loading),
        input_examples=list(defined.input_examples or []))


def decode_mcp_servers(raw: Any, server: ServerTools,
                       toolsets: dict[str, tuple[_McpToolset, Path]]) -> None:
    """``mcp_servers`` and the ``mcp_toolset`` tools naming them -> ``server.mcp_servers``."""
    if raw is None:
        if toolsets:
            name, (_, path) = next(iter(toolsets.items()))
            raise WireFormatError(f"mcp_toolset names MCP server '{name}', which is not among "
                                  "mcp_servers", (*path, "mcp_server_name"))
        return
    if not isinstance(raw, list):
        raise WireFormatError("Input should be a valid list", ("mcp_servers",))
    names: set[str] = set()
    for k, item in enumerate(raw):
        where: Path = ("mcp_servers", k)
        spec = validate(_McpServer, item, where)
        if spec.name in names:
            raise WireFormatError(f"MCP server names must be unique: '{spec.name}'",
                                  (*where, "name"))
        names.add(spec.name)
        headers = {"Authorization": SecretStr(f"Bearer {spec.authorization_token}")} \
            if spec.authorization_token else {}
        mcp = MCPServerSpec(name=spec.name, url=spec.url, headers=headers)
        config = spec.tool_configuration
        if config is not None and config.enabled is False:
            mcp.allowed = ToolFilter(names=[])
        elif config is not None and config.allowed_tools is not None:
            mcp.allowed = ToolFilter(names=list(config.allowed_tools))
        toolset = toolsets.get(spec.name)
        if toolset is not None:
            _apply_toolset(mcp, toolset[0])
        server.mcp_servers.append(mcp)
    for name, (_, path) in toolsets.items():
        if name not in names:
            raise WireFormatError(f"mcp_toolset names MCP server '{name}', which is not among "
                                  "mcp_servers", (*path, "mcp_server_name"))


def _apply_toolset(mcp: MCPServerSpec, toolset: _McpToolset) -> None:
    """The toolset's settings: ``default_config`` for every tool, ``configs`` per tool (an
    allowlist is ``enabled: false`` by default with some enabled, a denylist the reverse)."""
    default = toolset.default_config or _ToolConfig()
    configs = toolset.configs or {}
    enabled_default = default.enabled is not False
    mcp.deferred = bool(default.defer_loading)
    if not enabled_default:
        mcp.allowed = ToolFilter(names=[n for n, c in configs.items() if c.enabled is True])
    mcp.denied = [n for n, c in configs.items() if c.enabled is False]
    mcp.loading = {n: c.defer_loading for n, c in configs.items() if c.defer_loading is not None}


def reference_part(raw: Any, path: Path) -> ToolReferenceBlock:
    """A ``tool_reference`` part of a tool result."""
    part = validate(_ToolReference, raw, path)
    return ToolReferenceBlock(name=part.tool_name)


# --- blocks ------------------------------------------------------------------------------------


def _search_found(content: dict[str, Any], path: Path) -> tuple[list[str], str | None]:
    kind = content.get("type")
    if kind == "tool_search_tool_search_result":
        refs = content.get("tool_references")
        if not isinstance(refs, list):
            raise WireFormatError("Field required", (*path, "tool_references"))
        return [reference_part(r, (*path, "tool_references", i)).name
                for i, r in enumerate(refs)], None
    if kind == "tool_search_tool_result_error":
        code = content.get("error_code")
        if not isinstance(code, str):
            raise WireFormatError("Field required", (*path, "error_code"))
        return [], code
    raise WireFormatError(f"Input tag {kind!r} found using 'type' does not match any of the "
                          "expected tags: 'tool_search_tool_search_result', "
                          "'tool_search_tool_result_error'", (*path, "type"))


def pair_blocks(blocks: Sequence[tuple[Path, Any]]) -> list[tuple[Path, ContentBlock]]:
    """An assistant turn's blocks with each server tool's use and result joined into one
    neutral block (in the use's place). ``blocks`` holds neutral blocks and the validated
    wire models of :data:`BLOCK_MODELS`."""
    out: list[tuple[Path, Any]] = []
    open_uses: dict[str, int] = {}  # id -> position in out
    for path, block in blocks:
        if isinstance(block, (_ServerToolUse, _McpToolUse)):
            if block.id in open_uses:
                raise WireFormatError(f"server tool use ids must be unique; {block.id} appears "
                                      "more than once", (*path, "id"))
            open_uses[block.id] = len(out)
            out.append((path, block))
        elif isinstance(block, (_SearchResult, _McpToolResult)):
            at = open_uses.pop(block.tool_use_id, None)
            use = out[at][1] if at is not None else None
            expected = _ServerToolUse if isinstance(block, _SearchResult) else _McpToolUse
            if at is None or not isinstance(use, expected):
                raise WireFormatError(f"`{block.type}` block found without a matching "
                                      f"`{'server_tool_use' if expected is _ServerToolUse else 'mcp_tool_use'}` "
                                      f"block before it: {block.tool_use_id}", path)
            out[at] = (out[at][0], _joined(use, block, path))
        else:
            out.append((path, block))
    for tool_id, at in open_uses.items():
        raise WireFormatError(f"server tool use {tool_id} has no result block after it in the "
                              "same turn", out[at][0])
    return out


def _joined(use: Any, result: Any, path: Path) -> ContentBlock:
    if isinstance(use, _ServerToolUse):
        if not _SEARCH.match(use.name) and use.name not in ("tool_search_tool_bm25",
                                                            "tool_search_tool_regex"):
            raise WireFormatError(f"server tool {use.name!r} is not supported in the history "
                                  "by this gateway", path)
        found, error = _search_found(result.content, (*path, "content"))
        return ToolSearchBlock(id=use.id, name=use.name, input=use.input, found=found,
                               error=error)
    content = result.content
    parts: list[ResultPart] = [TextBlock(text=content)] if isinstance(content, str) and content \
        else [TextBlock(text=t.text) for t in content or [] if not isinstance(content, str)]
    return MCPCallBlock(id=use.id, server=use.server_name, name=use.name, input=use.input,
                        content=parts, is_error=bool(result.is_error))


def upstream_block(raw: dict[str, Any], path: Path) -> Any:
    """An upstream's server tool block (an answer's), validated on the fields read here:
    an API adds fields to its answers over time."""
    model = BLOCK_MODELS[raw["type"]]
    return validate(model, {k: v for k, v in raw.items() if k in model.model_fields}, path)


def is_paired_block(raw: Any) -> bool:
    """A block of a tool search or an MCP call (which the neutral model carries), as
    opposed to other server tools' blocks (web search...), which are left out."""
    if not isinstance(raw, dict):
        return False
    kind = raw.get("type")
    if kind == "server_tool_use":
        return raw.get("name") in ("tool_search_tool_bm25", "tool_search_tool_regex")
    return kind in ("tool_search_tool_result", "mcp_tool_use", "mcp_tool_result")


def search_result_body(block: ToolSearchBlock) -> dict[str, Any]:
    """The ``content`` of a ``tool_search_tool_result``."""
    if block.error is not None:
        return {"type": "tool_search_tool_result_error", "error_code": block.error}
    return {"type": "tool_search_tool_search_result",
            "tool_references": [{"type": "tool_reference", "tool_name": n} for n in block.found]}


def answer_blocks(block: ContentBlock) -> Iterator[dict[str, Any]]:
    """A server tool's neutral block as the API writes it: the use, then the result (none
    for a block the Messages API has no form for: an MCP listing, an approval)."""
    if isinstance(block, ToolSearchBlock):
        yield {"type": "server_tool_use", "id": block.id, "name": block.name,
               "input": block.input}
        yield {"type": "tool_search_tool_result", "tool_use_id": block.id,
               "content": search_result_body(block)}
    elif isinstance(block, MCPCallBlock) and block.content is not None:
        yield {"type": "mcp_tool_use", "id": block.id, "name": block.name,
               "server_name": block.server, "input": block.input}
        yield {"type": "mcp_tool_result", "tool_use_id": block.id, "is_error": block.is_error,
               "content": [{"type": "text", "text": _part_text(p)} for p in block.content]}


def _part_text(part: ResultPart) -> str:
    if isinstance(part, TextBlock):
        return part.text
    if isinstance(part, ToolReferenceBlock):
        return f"[tool loaded: {part.name}]"
    value = getattr(part, "value", None)
    if value is not None or part.type == "json":
        return json.dumps(value, ensure_ascii=False)
    return f"[image: {getattr(part, 'url', None) or getattr(part, 'media_type', 'image')}]"
