"""The driver of :mod:`.hosted`: a backend that runs a request's server tools around another.

:class:`ServerToolsBackend` wraps any backend. A request that needs nothing of it (no tool
search, no MCP servers, no deferred tools, no server tool in its history), or whose server
tools the wrapped backend's upstream runs itself (the client's own API: an Anthropic
upstream for a Messages request...), goes straight to the wrapped backend. Otherwise it:

0. applies the request's context edits (:mod:`.context_edits`), reported on the answer;
1. connects to the request's MCP servers (:class:`~tooluse.mcp.MCPServer`, streamable HTTP
   or SSE, through :func:`~tooluse.mcp.guard.guarded_transport`: only http(s), and only
   public addresses unless the operator allowed the host) and lists their tools; a server
   that cannot be reached fails the request, or, for an API that shows listings, is shown
   as a listing with its error;
2. drives :func:`.hosted.server_turns`: each model turn streamed through as it comes (its
   blocks renumbered after what came before; the model's calls of server tools held back,
   as the client never runs them), each server tool's block sent whole once it ran, the MCP
   calls run by the runner's executor (:func:`.execute.run_invocations`);
3. ends with one stop reason and the usage of every turn added up (the searches counted as
   ``Usage.server_tool_requests``), and closes the MCP sessions.

One stream, so :meth:`~tooluse.backend.Backend.complete` and the async methods derive from
it; a request that needs nothing keeps the wrapped backend's own methods.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import ExitStack
from typing import Any

from ..backend import Backend
from ..errors import BackendError
from ..messages import (
    MCPListToolsBlock,
    MCPServerSpec,
    Request,
    Response,
    ToolUseBlock,
    Usage,
)
from ..stream import (
    Accumulator,
    BlockStart,
    BlockStop,
    MessageDelta,
    MessageStart,
    MessageStop,
    StreamEvent,
    terminated,
)
from ..tools import Tool, map_name
from ..trace import begin_turn
from .context_edits import apply_edits
from .core import CallModel, RunTools, add_usage
from .execute import run_invocations
from .hosted import Catalog, Emit, Limits, MCPTool, new_id, offered_tools, server_turns
from .server_history import has_server_blocks, lower

__all__ = ["ServerToolsBackend", "needs_server_tools"]


def needs_server_tools(request: Request, backend: Backend) -> bool:
    """Whether ``request`` has server tools that ``backend`` does not run itself."""
    passthrough = request.passthrough
    if passthrough is not None and passthrough.api in backend.forwards:
        return False
    return bool(request.server_tools) or bool(request.context_edits) \
        or any(t.deferred for t in request.tools) or has_server_blocks(request.messages)


class ServerToolsBackend(Backend):
    """``backend`` with the server tools of each request run around it (see the module
    docstring). ``limits``: the model turns and seconds one request may take;
    ``allow_mcp_hosts``: MCP hosts, addresses or networks (``10.0.0.0/8``) reached although
    they are not public (:class:`~tooluse.mcp.guard.HostPolicy`; none: public addresses
    only); ``mcp_timeout``: seconds per MCP call; ``connect_timeout``: seconds to connect
    to and list an MCP server."""

    name = "server-tools"

    def __init__(self, backend: Backend, *, limits: Limits | None = None,
                 allow_mcp_hosts: Iterable[str] = (), mcp_timeout: float = 60.0,
                 connect_timeout: float = 30.0) -> None:
        self.backend = backend
        self.name = backend.name
        self.model = backend.model
        self.forwards = backend.forwards
        self.structured_output = backend.structured_output
        self.limits = limits or Limits()
        # names only: the policy (and the mcp SDK under it) is imported at the first MCP
        # server a request names
        self.allow_mcp_hosts = tuple(allow_mcp_hosts)
        self.mcp_timeout = mcp_timeout
        self.connect_timeout = connect_timeout

    # -- the wrapped backend's own path when nothing is needed --------------------------------
    def complete(self, request: Request) -> Response:
        if not needs_server_tools(request, self.backend):
            return self.backend.complete(request)
        return super().complete(request)

    async def acomplete(self, request: Request) -> Response:
        if not needs_server_tools(request, self.backend):
            return await self.backend.acomplete(request)
        return await super().acomplete(request)

    async def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        if not needs_server_tools(request, self.backend):
            async for event in self.backend.astream(request):
                yield event
            return
        async for event in super().astream(request):
            yield event

    def count_tokens(self, request: Request) -> int | None:
        """The tokens of the first model turn's prompt: its history as the model sees it,
        the tools offered (deferred ones left out, the search tool in; an MCP server's tools
        are not listed for a count)."""
        if needs_server_tools(request, self.backend):
            catalog = Catalog(search=request.server_tools.search
                              if request.server_tools is not None else None)
            request = request.model_copy(update={
                "messages": lower(request.messages, catalog.name_of),
                "tools": offered_tools(request, catalog, list(request.messages)),
                "server_tools": None, "context_edits": []})
        return self.backend.count_tokens(request)

    # -- the loop ---------------------------------------------------------------------------
    def stream(self, request: Request) -> Iterator[StreamEvent]:
        if not needs_server_tools(request, self.backend):
            yield from self.backend.stream(request)
            return
        started = time.monotonic()
        applied = None
        if request.context_edits:
            request, applied = apply_edits(request, self._count)
        with ExitStack() as stack:
            catalog = self._catalog(request, stack)
            yield MessageStart(id=new_id("msg_"), model=request.model or self.backend.model,
                               applied_edits=applied)
            yield from self._drive(request, catalog, started)

    def _count(self, request: Request) -> int:
        """The prompt's tokens: the backend's count, else an estimate (4 characters each)."""
        exact = self.backend.count_tokens(request)
        if exact is not None:
            return exact
        text = request.model_dump_json(include={"system", "messages", "tools"})
        return len(text) // 4

    def _drive(self, request: Request, catalog: Catalog, started: float
               ) -> Iterator[StreamEvent]:
        core = server_turns(request, catalog, self.limits, time.monotonic)
        usage = Usage()
        position = 0  # the next block's index in the stream out
        reply: Any = None
        while True:
            try:
                action = core.send(reply)
            except StopIteration as stop:
                ended = stop.value
                break
            reply = None
            if isinstance(action, Emit):
                yield BlockStart(index=position, block=action.block)
                yield BlockStop(index=position)
                position += 1
            elif isinstance(action, CallModel):
                turn = _Turn(catalog, position)
                yield from turn.relay(self._model_events(action.request))
                position = turn.position
                reply = turn.response()
                add_usage(usage, reply.usage)
            elif isinstance(action, RunTools):
                remaining = max(1.0, self.limits.timeout - (time.monotonic() - started))
                reply = run_invocations(action.invocations, timeout=remaining)
        add_usage(usage, ended.usage)
        yield MessageDelta(stop_reason=ended.stop_reason, usage=usage)
        yield MessageStop()

    def _model_events(self, request: Request) -> Iterator[StreamEvent]:
        """One model turn's events (a turn of its own in the request's trace)."""
        events = self.backend.stream(request)
        turn = begin_turn(request)
        watched = turn.watch(events) if turn is not None else events
        try:
            yield from terminated(watched, lambda produced: BackendError(
                "the backend's stream ended before the answer did", kind="api"))
        finally:
            close = getattr(watched, "close", None)
            if close is not None:
                close()
            close = getattr(events, "close", None)
            if close is not None:
                close()

    # -- MCP servers --------------------------------------------------------------------------
    def _catalog(self, request: Request, stack: ExitStack) -> Catalog:
        server = request.server_tools
        catalog = Catalog(search=server.search if server is not None else None)
        if server is None or not server.mcp_servers:
            return catalog
        shown = {b.server for m in request.messages for b in m.content
                 if isinstance(b, MCPListToolsBlock)}
        taken = {t.name for t in request.tools}
        if server.search is not None:
            taken.add(server.search.name)
        for spec in server.mcp_servers:
            listing = self._connect(spec, stack, catalog, taken)
            if listing.error is not None and not server.show_listings:
                raise BackendError(listing.error, kind="invalid_request")
            if server.show_listings and spec.name not in shown:
                catalog.listings.append(listing)
        return catalog

    def _connect(self, spec: MCPServerSpec, stack: ExitStack, catalog: Catalog,
                 taken: set[str]) -> MCPListToolsBlock:
        """Connect to one MCP server and add its offered tools to ``catalog``; its listing
        (with the error, when it could not be listed)."""
        from ..mcp import MCPConnectionError, MCPServer
        from ..mcp.guard import AddressRefused, HostPolicy, guarded_transport

        policy = HostPolicy.allowing(self.allow_mcp_hosts)
        listing = MCPListToolsBlock(id=new_id("mcpl_"), server=spec.name)
        try:
            policy.check_url(spec.url)
            mcp = MCPServer(spec.url, name=spec.name, timeout=self.mcp_timeout,
                            connect_timeout=self.connect_timeout,
                            headers={k: v.get_secret_value() for k, v in spec.headers.items()},
                            http_transport=guarded_transport(policy))
            stack.callback(mcp.close)
            tools = mcp.get_tools()
        except (AddressRefused, MCPConnectionError, ValueError) as exc:
            detail = re.sub(rf"^MCP server {re.escape(spec.name)}:? ", "", _one_line(exc))
            listing.error = f"MCP server {spec.name!r}: {detail}"
            return listing
        for tool in tools:
            name = tool.original_name
            if not spec.offers(name, tool.read_only):
                continue
            listing.tools.append({"name": name, "description": tool.description,
                                  "input_schema": tool.input_schema,
                                  "annotations": {"readOnlyHint": True} if tool.read_only
                                  else None})
            neutral = tool.name
            if neutral in taken:
                neutral = map_name(f"{spec.name}__{name}")
            taken.add(neutral)
            run = Tool(neutral, tool.description, tool.input_schema, _caller(mcp, name),
                       read_only=tool.read_only, original_name=name)
            catalog.mcp[neutral] = MCPTool(server=spec, name=name, tool=run,
                                           spec=run.spec.model_copy(
                                               update={"deferred": spec.defers(name)}))
        return listing


def _caller(mcp: Any, name: str) -> Any:
    """The function running MCP tool ``name``: its result as the server wrote it (an API's
    MCP call result holds the content blocks, not the structured content)."""
    def call_mcp_tool(**arguments: Any) -> Any:
        return mcp.call(name, arguments, structured=False)

    call_mcp_tool.__name__ = name
    return call_mcp_tool


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return re.sub(r"\s+", " ", text)


class _Turn:
    """One model turn relayed into the answer: its blocks renumbered from ``position`` on,
    the model's calls of server tools held back (they become the server's blocks)."""

    def __init__(self, catalog: Catalog, position: int) -> None:
        self.catalog = catalog
        self.position = position
        self.accumulator = Accumulator()
        self.index: dict[int, int] = {}
        self.held: set[int] = set()

    def relay(self, events: Iterator[StreamEvent]) -> Iterator[StreamEvent]:
        for event in events:
            self.accumulator.add(event)
            if isinstance(event, (MessageStart, MessageDelta, MessageStop)):
                continue
            if isinstance(event, BlockStart):
                if isinstance(event.block, ToolUseBlock) and self.catalog.runs(event.block.name):
                    self.held.add(event.index)
                    continue
                self.index[event.index] = self.position
                self.position += 1
            index: int = event.index
            if index in self.held:
                continue
            yield event.model_copy(update={"index": self.index[index]})

    def response(self) -> Response:
        return self.accumulator.finish()
