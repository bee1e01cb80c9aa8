"""The tools the server runs for the model within one request, decided without I/O.

A client that offers a tool search, or names MCP servers, asks the server to run those
tools itself: the model's answer to the client may then hold several model turns, each
followed by the server's search or MCP calls (:class:`~tooluse.messages.ToolSearchBlock`,
:class:`~tooluse.messages.MCPCallBlock`), until the model calls one of the client's own
tools or answers. :func:`server_turns` is that loop as a generator, like the runner's
:func:`~tooluse.runner.core.conversation`: it yields actions and gets their outcomes, and a
driver (:mod:`.hosted_backend`) performs the I/O (the model calls, the MCP calls), so the
gateway and the library share one loop:

- :class:`~tooluse.runner.core.CallModel`: the backend's answer to the request, whose
  history shows the server's earlier work as calls and results
  (:func:`.server_history.lower`) and whose tools are those offered now
  (:func:`offered_tools`): the request's tools that are not deferred, the search tool,
  the MCP servers' tools, then the deferred tools loaded so far, in the order they were
  loaded (after the others, so a prompt cache of the rest survives);
- :class:`~tooluse.runner.core.RunTools`: MCP calls to run (the runner's own executor runs
  them, with their validation);
- :class:`Emit`: a server tool's block, to show the client now.

The search runs here (it is pure computation, :class:`~tooluse.tools.search.ToolIndex`).
A call of an MCP tool that needs the user's approval is not run: it is emitted waiting
(``content`` None) and the turn ends; an approval in the next request's last turn runs it
first. The loop is bounded: at most ``max_turns`` model turns, and ``timeout`` seconds;
past either it ends with the stop reason ``pause_turn`` (sent back as it is, the turn goes
on).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

from ..errors import ToolInputError
from ..messages import (
    ContentBlock,
    MCPApprovalBlock,
    MCPCallBlock,
    MCPListToolsBlock,
    MCPServerSpec,
    Message,
    Request,
    Response,
    StopReason,
    TextBlock,
    ToolSearchBlock,
    ToolSearchSpec,
    ToolSpec,
    ToolUseBlock,
    Usage,
)
from ..tools import Tool
from .core import CallModel, Invocation, Outcome, RunTools, add_usage, invalid_input_text
from .server_history import loaded_tools, lower
from .tool_search import SearchError, ToolIndex, search_tool

__all__ = ["Catalog", "Emit", "Limits", "MCPTool", "Outcome", "ServerTurns", "new_id",
           "offered_tools", "server_turns"]


def new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


@dataclass(frozen=True)
class Limits:
    """How far the server goes in one request: ``max_turns`` model turns at most,
    ``timeout`` seconds in all."""

    max_turns: int = 8
    timeout: float = 300.0

    def __post_init__(self) -> None:
        if self.max_turns < 1:
            raise ValueError("max_turns must be >= 1")
        if self.timeout <= 0:
            raise ValueError("timeout must be > 0 seconds")


@dataclass(frozen=True)
class MCPTool:
    """An MCP server's tool offered to the model: its server, its name there, how it
    runs (a :class:`~tooluse.tools.Tool` calling the server) and what the model sees."""

    server: MCPServerSpec
    name: str
    tool: Tool
    spec: ToolSpec


@dataclass
class Catalog:
    """What the server runs for one request: the search, the MCP servers' tools by the
    name the model calls them, and the listings made for this request (to show, for an API
    that shows them)."""

    search: ToolSearchSpec | None = None
    mcp: dict[str, MCPTool] = field(default_factory=dict)
    listings: list[MCPListToolsBlock] = field(default_factory=list)

    def name_of(self, server: str, name: str) -> str:
        """The name the model calls ``server``'s tool ``name`` by."""
        for neutral, entry in self.mcp.items():
            if entry.server.name == server and entry.name == name:
                return neutral
        return name

    def runs(self, name: str) -> bool:
        return name in self.mcp or (self.search is not None and name == self.search.name)


#: The blocks of the tools the server runs within a turn.
ServerBlock = ToolSearchBlock | MCPCallBlock | MCPListToolsBlock


@dataclass(frozen=True)
class Emit:
    """Show this block of a tool the server ran; answer None."""

    block: ServerBlock


@dataclass
class ServerTurns:
    """How the loop ended: the stop reason, and the usage of its tools (the model turns'
    own usage is the driver's to add)."""

    stop_reason: StopReason | None = None
    usage: Usage = field(default_factory=Usage)


Action = CallModel | RunTools | Emit


def offered_tools(request: Request, catalog: Catalog, history: list[Message]) -> list[ToolSpec]:
    """The tools the model is offered now (see the module docstring)."""
    every = [*request.tools, *(entry.spec for entry in catalog.mcp.values())]
    by_name = {t.name: t for t in every}
    choice = request.tool_choice
    forced = [choice.name] if choice is not None and choice.name is not None else []
    first = [t.model_copy(update={"deferred": False}) for t in every
             if not t.deferred or t.name in forced]
    if catalog.search is not None:
        first.append(search_tool(catalog.search.name, catalog.search.mode))
    shown = {t.name for t in first}
    later = [by_name[n].model_copy(update={"deferred": False}) for n in loaded_tools(history)
             if n in by_name and n not in shown]
    return first + later


def _searchable(request: Request, catalog: Catalog) -> list[ToolSpec]:
    return [t for t in (*request.tools, *(e.spec for e in catalog.mcp.values())) if t.deferred]


def server_turns(request: Request, catalog: Catalog, limits: Limits,
                 clock: Callable[[], float]) -> Generator[Action, Any, ServerTurns]:
    """The loop (see the module docstring); returns how it ended."""
    deadline = clock() + limits.timeout
    done = ServerTurns()
    produced: list[ContentBlock] = []
    index = ToolIndex(_searchable(request, catalog))
    choice = request.tool_choice

    def emit(block: ServerBlock) -> Generator[Action, Any, None]:
        produced.append(block)
        yield Emit(block)

    for listing in catalog.listings:
        yield from emit(listing)
    yield from _approved(request, catalog, emit)
    turns = 0
    while True:
        if turns >= limits.max_turns or clock() >= deadline:
            done.stop_reason = "pause_turn"
            return done
        turns += 1
        history = [*request.messages, Message(role="assistant", content=list(produced))] \
            if produced else list(request.messages)
        backend_request = request.model_copy(update={
            "messages": lower(history, catalog.name_of),
            "tools": offered_tools(request, catalog, history),
            "tool_choice": choice, "server_tools": None})
        response: Response = yield CallModel(backend_request)
        server_calls = [b for b in response.tool_uses if catalog.runs(b.name)]
        produced.extend(b for b in response.content
                        if not (isinstance(b, ToolUseBlock) and catalog.runs(b.name)))
        done.stop_reason = response.stop_reason
        if not server_calls or response.stop_reason == "max_tokens":
            return done  # a call cut by max_tokens is not run
        waiting = yield from _run(server_calls, catalog, index, emit, done.usage)
        if waiting:
            done.stop_reason = "end_turn"
            return done
        if len(server_calls) < len(response.tool_uses):  # the client has calls to answer
            done.stop_reason = "tool_use"
            return done


def _run(calls: list[ToolUseBlock], catalog: Catalog, index: ToolIndex,
         emit: Callable[[ServerBlock], Generator[Action, Any, None]],
         usage: Usage) -> Generator[Action, Any, bool]:
    """Run one turn's server calls, emitting their blocks in call order; True when a call
    waits for approval."""
    blocks: list[ServerBlock | None] = [None] * len(calls)
    pending: list[tuple[int, Invocation, MCPTool]] = []
    for i, call in enumerate(calls):
        if catalog.search is not None and call.name == catalog.search.name:
            add_usage(usage, Usage(server_tool_requests={"tool_search": 1}))
            blocks[i] = _search(call, catalog.search, index)
            continue
        entry = catalog.mcp[call.name]
        try:
            entry.tool.arguments(call.input)
        except ToolInputError as exc:
            blocks[i] = MCPCallBlock(id=new_id("mcptoolu_"), server=entry.server.name,
                                     name=entry.name, input=call.input, is_error=True,
                                     content=[_text(invalid_input_text(call.name, exc.problems))])
            continue
        if entry.server.needs_approval(entry.name, entry.tool.read_only):
            blocks[i] = MCPCallBlock(id=new_id("mcpr_"), server=entry.server.name,
                                     name=entry.name, input=call.input)
            continue
        pending.append((i, Invocation(call, entry.tool), entry))
    if pending:
        outcomes: list[Outcome] = yield RunTools([inv for _, inv, _ in pending])
        for (i, inv, entry), outcome in zip(pending, outcomes, strict=True):
            blocks[i] = _called(entry, inv.call.input, outcome)
    waiting = False
    for block in blocks:
        assert block is not None
        waiting = waiting or isinstance(block, MCPCallBlock) and block.content is None
        yield from emit(block)
    return waiting


def _text(text: str) -> TextBlock:
    return TextBlock(text=text)


def _called(entry: MCPTool, arguments: dict[str, Any], outcome: Outcome,
            approval: str | None = None) -> MCPCallBlock:
    result = outcome.result
    return MCPCallBlock(id=new_id("mcptoolu_"), server=entry.server.name, name=entry.name,
                        input=arguments, content=list(result.content),
                        is_error=result.is_error, approval_request_id=approval)


def _search(call: ToolUseBlock, spec: ToolSearchSpec, index: ToolIndex) -> ToolSearchBlock:
    block = ToolSearchBlock(id=new_id("srvtoolu_"), name=spec.name, input=call.input)
    try:
        block.found = index.search(call.input.get("query"), spec.mode)
    except SearchError as exc:
        block.error = exc.code
    return block


def _approved(request: Request, catalog: Catalog,
              emit: Callable[[ServerBlock], Generator[Action, Any, None]]
              ) -> Generator[Action, Any, None]:
    """Run the calls the request's last turn approves (each waiting in the turn before)."""
    if len(request.messages) < 2 or request.messages[-1].role != "user":
        return
    answers = {b.request_id: b for b in request.messages[-1].content
               if isinstance(b, MCPApprovalBlock) and b.approve}
    waiting = [b for b in request.messages[-2].content
               if isinstance(b, MCPCallBlock) and b.content is None and b.id in answers]
    runs: list[tuple[MCPCallBlock, Invocation, MCPTool]] = []
    for block in waiting:
        neutral = catalog.name_of(block.server, block.name)
        entry = catalog.mcp.get(neutral)
        if entry is None:
            yield from emit(MCPCallBlock(
                id=new_id("mcptoolu_"), server=block.server, name=block.name, input=block.input,
                content=[_text(f"MCP server {block.server!r} has no tool {block.name!r} now")],
                is_error=True, approval_request_id=block.id))
            continue
        call = ToolUseBlock(id=block.id, name=neutral, input=block.input)
        runs.append((block, Invocation(call, entry.tool), entry))
    if runs:
        outcomes: list[Outcome] = yield RunTools([inv for _, inv, _ in runs])
        for (block, _, entry), outcome in zip(runs, outcomes, strict=True):
            yield from emit(_called(entry, block.input, outcome, approval=block.id))
