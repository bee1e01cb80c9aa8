"""Responses API server tools <-> the neutral model: ``tool_search`` and the ``mcp`` tool.

Tools (:func:`decode_tool`):

- ``tool_search`` (run by the server; ``execution: "client"`` is refused) ->
  ``Request.server_tools.search``; the deferred tools are the functions with
  ``defer_loading: true``, inside a namespace or not;
- ``mcp`` with a ``server_url`` (``headers``, ``authorization``, ``allowed_tools`` as names or
  a filter, ``require_approval`` as ``always`` / ``never`` / a filter pair,
  ``defer_loading``, ``server_description``) -> :class:`~tooluse.messages.MCPServerSpec`;
  a ``connector_id`` or ``tunnel_id`` (OpenAI's own connectors) is refused on other backends.

Every definition is also kept in ``Request.passthrough`` for a Responses upstream.

Items (history and answers):

- ``tool_search_call`` + ``tool_search_output`` (paired by ``call_id``) <->
  :class:`~tooluse.messages.ToolSearchBlock` (the output's tools are the found names;
  :func:`search_items` writes them back as their definitions);
- ``mcp_list_tools`` <-> :class:`~tooluse.messages.MCPListToolsBlock`;
- ``mcp_call`` <-> :class:`~tooluse.messages.MCPCallBlock`; ``mcp_approval_request`` <-> one
  without a result (waiting); ``mcp_approval_response`` <->
  :class:`~tooluse.messages.MCPApprovalBlock` (a user turn).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field, SecretStr

from ...errors import WireFormatError
from ...messages import (
    ContentBlock,
    MCPApprovalBlock,
    MCPCallBlock,
    MCPListToolsBlock,
    MCPServerSpec,
    Passthrough,
    Request,
    ServerTools,
    TextBlock,
    ToolFilter,
    ToolSearchBlock,
    ToolSearchSpec,
)
from .._common import Path, WireModel, validate
from ._tools import ToolKinds, joined_name
from ._wire import TARGET, ItemModel

__all__ = ["ITEMS", "SEARCH_NAME", "ServerItems", "decode_item", "decode_tool", "echo_tool", "history_items",
           "item_of", "search_items"]

#: The name the model calls the search tool by.
SEARCH_NAME = "tool_search"


class _ToolSearchTool(WireModel):
    type: Literal["tool_search"]
    description: str | None = None
    execution: Literal["server", "client"] | None = None
    parameters: Any = None


class _McpFilter(WireModel):
    tool_names: list[str] | None = None
    read_only: bool | None = None


class _Approval(WireModel):
    always: _McpFilter | None = None
    never: _McpFilter | None = None


class _McpTool(WireModel):
    type: Literal["mcp"]
    server_label: str = Field(min_length=1)
    server_url: str | None = None
    connector_id: str | None = None
    tunnel_id: str | None = None
    authorization: str | None = None
    headers: dict[str, str] | None = None
    allowed_tools: list[str] | _McpFilter | None = None
    require_approval: Literal["always", "never"] | _Approval | None = None
    server_description: str | None = None
    defer_loading: bool | None = None
    allowed_callers: list[str] | None = None


class _ToolSearchCall(ItemModel):
    type: Literal["tool_search_call"]
    arguments: Any = None
    call_id: str | None = None
    id: str | None = None
    execution: str | None = None


class _ToolSearchOutput(ItemModel):
    type: Literal["tool_search_output"]
    tools: list[Any]
    call_id: str | None = None
    id: str | None = None
    execution: str | None = None


class _McpListTools(ItemModel):
    type: Literal["mcp_list_tools"]
    id: str
    server_label: str
    tools: list[dict[str, Any]]
    error: str | None = None


class _McpCall(ItemModel):
    type: Literal["mcp_call"]
    id: str
    server_label: str
    name: str
    arguments: str
    output: str | None = None
    error: Any = None
    approval_request_id: str | None = None
    status: str | None = None


class _McpApprovalRequest(ItemModel):
    type: Literal["mcp_approval_request"]
    id: str
    server_label: str
    name: str
    arguments: str


class _McpApprovalResponse(ItemModel):
    type: Literal["mcp_approval_response"]
    approval_request_id: str
    approve: bool
    reason: str | None = None
    id: str | None = None


#: Input items of server tools -> their models.
ITEMS: dict[str, type[ItemModel]] = {
    "tool_search_call": _ToolSearchCall, "tool_search_output": _ToolSearchOutput,
    "mcp_list_tools": _McpListTools, "mcp_call": _McpCall,
    "mcp_approval_request": _McpApprovalRequest, "mcp_approval_response": _McpApprovalResponse,
}


# --- tools ---------------------------------------------------------------------------------


def decode_tool(raw: dict[str, Any], path: Path, passthrough: Passthrough,
                server: ServerTools) -> bool:
    """A ``tool_search`` or ``mcp`` tool into ``server`` (and ``passthrough``); False for any
    other tool type."""
    kind = raw.get("type")
    if kind == "tool_search":
        tool = validate(_ToolSearchTool, raw, path)
        if tool.execution == "client":
            raise WireFormatError("a tool_search run by the client (execution: 'client') is "
                                  "not supported by this gateway; leave execution unset to "
                                  "have it run here", (*path, "execution"))
        if server.search is not None:
            raise WireFormatError("only one tool_search tool can be given", (*path, "type"))
        server.search = ToolSearchSpec(name=SEARCH_NAME, mode="bm25")
        passthrough.tools.append(raw)
        return True
    if kind != "mcp":
        return False
    mcp = validate(_McpTool, raw, path)
    passthrough.tools.append(raw)
    if mcp.server_url is None:
        which = "connector_id" if mcp.connector_id is not None else "tunnel_id"
        if mcp.connector_id is None and mcp.tunnel_id is None:
            raise WireFormatError("an mcp tool needs a server_url", (*path, "server_url"))
        passthrough.required.append(f"{'.'.join(map(str, path))}: mcp ({which}): OpenAI "
                                    "connects to its own connectors and tunnels")
        return True
    if any(s.name == mcp.server_label for s in server.mcp_servers):
        raise WireFormatError(f"MCP server labels must be unique: '{mcp.server_label}'",
                              (*path, "server_label"))
    headers = {key: SecretStr(value) for key, value in (mcp.headers or {}).items()}
    if mcp.authorization:
        headers["Authorization"] = SecretStr(f"Bearer {mcp.authorization}")
    spec = MCPServerSpec(name=mcp.server_label, url=mcp.server_url, headers=headers,
                         deferred=bool(mcp.defer_loading),
                         description=mcp.server_description or "")
    allowed = mcp.allowed_tools
    if isinstance(allowed, list):
        spec.allowed = ToolFilter(names=list(allowed))
    elif allowed is not None:
        spec.allowed = ToolFilter(names=allowed.tool_names, read_only=allowed.read_only)
    approval = mcp.require_approval
    if approval is None or approval == "always":  # the API asks by default
        spec.approval = ToolFilter()
    elif isinstance(approval, _Approval):
        # the tools ``always`` names wait; without it every tool ``never`` leaves out does
        always = approval.always
        spec.approval = ToolFilter() if always is None else ToolFilter(
            names=always.tool_names, read_only=always.read_only)
        if approval.never is not None:
            spec.no_approval = ToolFilter(names=approval.never.tool_names,
                                          read_only=approval.never.read_only)
    server.mcp_servers.append(spec)
    return True


def echo_tool(tool: Any) -> Any:
    """A tool as a response object repeats it: an ``mcp`` tool's secrets (``authorization``,
    the ``headers``' values) never leave the gateway again."""
    if not isinstance(tool, dict) or tool.get("type") != "mcp":
        return tool
    out = {k: v for k, v in tool.items() if k != "authorization"}
    if isinstance(out.get("headers"), dict):
        out["headers"] = {k: "[redacted]" for k in out["headers"]}
    return out


# --- items ---------------------------------------------------------------------------------


def _arguments(text: str, path: Path) -> dict[str, Any]:
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        raise WireFormatError("arguments is not valid JSON", (*path, "arguments")) from None
    if not isinstance(value, dict):
        raise WireFormatError("arguments must be a JSON object", (*path, "arguments"))
    return value


def _found(tools: list[Any]) -> list[str]:
    names: list[str] = []
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            names.extend(joined_name(str(tool.get("name")), str(t.get("name")))
                         for t in tool.get("tools") or [] if isinstance(t, dict))
        elif isinstance(tool.get("name"), str):
            names.append(tool["name"])
    return names


def _error_text(error: Any) -> str:
    if isinstance(error, str):
        return error
    if isinstance(error, dict):
        if isinstance(error.get("message"), str):
            return str(error["message"])
        content = error.get("content")
        if isinstance(content, list):
            return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return json.dumps(error, ensure_ascii=False)


def decode_item(item: ItemModel, path: Path, assistant: list[ContentBlock]
                ) -> tuple[str, list[ContentBlock]]:
    """An input item of a server tool: its side (``assistant`` or ``user``) and blocks.
    ``assistant`` is the assistant turn so far (a ``tool_search_output`` completes the
    ``tool_search_call`` there)."""
    if isinstance(item, _ToolSearchCall):
        arguments = item.arguments if isinstance(item.arguments, dict) else {}
        call_id = item.call_id or item.id or ""
        return "assistant", [ToolSearchBlock(id=call_id, name=SEARCH_NAME, input=arguments)]
    if isinstance(item, _ToolSearchOutput):
        call_id = item.call_id or item.id or ""
        for block in assistant:
            if isinstance(block, ToolSearchBlock) and block.id == call_id:
                block.found = _found(item.tools)
                return "assistant", []
        raise WireFormatError(f"No tool search call found for tool_search_output with call_id "
                              f"{call_id}.", path)
    if isinstance(item, _McpListTools):
        return "assistant", [MCPListToolsBlock(id=item.id, server=item.server_label,
                                               tools=item.tools, error=item.error)]
    if isinstance(item, _McpCall):
        failed = item.error is not None or item.status == "failed"
        text = item.output if item.output is not None else (
            _error_text(item.error) if item.error is not None else "")
        return "assistant", [MCPCallBlock(
            id=item.id, server=item.server_label, name=item.name,
            input=_arguments(item.arguments, path),
            content=[TextBlock(text=text)] if text else [], is_error=failed,
            approval_request_id=item.approval_request_id)]
    if isinstance(item, _McpApprovalRequest):
        return "assistant", [MCPCallBlock(id=item.id, server=item.server_label, name=item.name,
                                          input=_arguments(item.arguments, path))]
    assert isinstance(item, _McpApprovalResponse)
    return "user", [MCPApprovalBlock(request_id=item.approval_request_id, approve=item.approve,
                                     reason=item.reason)]


class ServerItems:
    """An upstream's server tool items (an answer's, whole or streamed) as neutral blocks:
    a ``tool_search_call`` is held until its ``tool_search_output`` comes."""

    def __init__(self) -> None:
        self.held: list[ContentBlock] = []

    def add(self, raw: dict[str, Any], path: Path) -> list[ContentBlock]:
        """The blocks ``raw`` completes (none while a search waits for its output)."""
        model = ITEMS[raw["type"]]
        item = validate(model, {k: v for k, v in raw.items() if k in model.model_fields}, path)
        _, blocks = decode_item(item, path, self.held)
        if isinstance(item, _ToolSearchCall):
            self.held.extend(blocks)
            return []
        if isinstance(item, _ToolSearchOutput):
            done: list[ContentBlock] = [b for b in self.held if isinstance(b, ToolSearchBlock)
                                        and b.id == (item.call_id or item.id)]
            self.held = [b for b in self.held if b not in done]
            return done
        return blocks


def _tool_definition(request: Request | None, name: str, kinds: ToolKinds) -> dict[str, Any]:
    spec = next((t for t in request.tools if t.name == name), None) if request else None
    wire = kinds.of(name)
    tool: dict[str, Any] = {"type": "function", "name": wire.name}
    if spec is not None:
        if spec.description:
            tool["description"] = spec.description
        tool.update({"parameters": spec.input_schema, "strict": spec.strict,
                     "defer_loading": True})
    return tool


def search_items(block: ToolSearchBlock, request: Request | None, kinds: ToolKinds
                 ) -> tuple[dict[str, Any], dict[str, Any]]:
    """A tool search as its two items (no ids): the call, and its output with the found
    tools' definitions (namespaced ones inside their namespace)."""
    call = {"type": "tool_search_call", "call_id": block.id, "execution": "server",
            "arguments": block.input, "status": "completed"}
    tools: list[dict[str, Any]] = []
    namespaces: dict[str, dict[str, Any]] = {}
    fields = request.passthrough.tool_fields if request is not None and \
        request.passthrough is not None and request.passthrough.api == TARGET else {}
    for name in block.found:
        tool = _tool_definition(request, name, kinds)
        namespace = kinds.of(name).namespace
        if namespace is None:
            tools.append(tool)
            continue
        if namespace not in namespaces:
            meta = fields.get(f"namespace:{namespace}", {})
            namespaces[namespace] = {"type": "namespace", "name": namespace,
                                     "description": meta.get("description", ""), "tools": []}
            tools.append(namespaces[namespace])
        namespaces[namespace]["tools"].append(tool)
    output = {"type": "tool_search_output", "call_id": block.id, "execution": "server",
              "tools": tools, "status": "completed"}
    return call, output


def mcp_tool_listing(tool: dict[str, Any]) -> dict[str, Any]:
    return {"name": tool.get("name", ""), "description": tool.get("description"),
            "input_schema": tool.get("input_schema") or {"type": "object"},
            "annotations": tool.get("annotations")}


def history_items(block: ContentBlock, request: Request, kinds: ToolKinds
                  ) -> list[dict[str, Any]]:
    """A server tool's block of the history as the items a Responses upstream takes back."""
    if isinstance(block, ToolSearchBlock):
        call, output = search_items(block, request, kinds)
        return [call, output]
    if isinstance(block, MCPApprovalBlock):
        return [{"type": "mcp_approval_response", "approval_request_id": block.request_id,
                 "approve": block.approve,
                 **({"reason": block.reason} if block.reason is not None else {})}]
    assert isinstance(block, (MCPCallBlock, MCPListToolsBlock))
    return [{"id": block.id, **item_of(block)}]


def item_of(block: ContentBlock) -> dict[str, Any]:
    """An MCP block as its item (without an id for a listing or a call: the caller gives
    it one; an approval request keeps the block's id, which the client answers with)."""
    if isinstance(block, MCPListToolsBlock):
        return {"type": "mcp_list_tools", "server_label": block.server,
                "tools": [mcp_tool_listing(t) for t in block.tools], "error": block.error}
    assert isinstance(block, MCPCallBlock)
    arguments = json.dumps(block.input, ensure_ascii=False)
    if block.content is None:
        return {"id": block.id, "type": "mcp_approval_request", "server_label": block.server,
                "name": block.name, "arguments": arguments}
    text = "\n".join(p.text if isinstance(p, TextBlock) else json.dumps(
        p.model_dump(mode="json", exclude_none=True), ensure_ascii=False)
        for p in block.content)
    return {"type": "mcp_call", "server_label": block.server, "name": block.name,
            "arguments": arguments, "approval_request_id": block.approval_request_id,
            "output": None if block.is_error else text,
            "error": {"type": "mcp_tool_execution_error",
                      "content": [{"type": "text", "text": text}]} if block.is_error else None,
            "status": "failed" if block.is_error else "completed"}
