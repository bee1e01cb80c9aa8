"""The gateway's part in the tools the server runs for the model (a tool search over
deferred tools, MCP servers named by the client): its settings, and the backend every
request goes through (:class:`~tooluse.runner.hosted_backend.ServerToolsBackend`, which
hands a request that needs none of it straight to the gateway's backend)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..backend import Backend
from ..messages import Request
from ..runner.hosted import Limits
from ..runner.hosted_backend import ServerToolsBackend, needs_server_tools

__all__ = ["DEFAULT_MAX_TURNS", "DEFAULT_TIMEOUT", "ServerToolOptions"]

#: Model turns one request may take while the gateway runs server tools for it.
DEFAULT_MAX_TURNS = 8
#: Seconds one request may take while the gateway runs server tools for it.
DEFAULT_TIMEOUT = 300.0


@dataclass(frozen=True)
class ServerToolOptions:
    """``max_turns`` and ``timeout`` bound one request's server-side loop (past them it
    ends with ``pause_turn``); ``allow_mcp_hosts`` are MCP hosts, addresses or networks a
    client may name although they are not public (``--allow-mcp-host``); ``mcp_timeout``:
    seconds per MCP call."""

    max_turns: int = DEFAULT_MAX_TURNS
    timeout: float = DEFAULT_TIMEOUT
    allow_mcp_hosts: tuple[str, ...] = field(default_factory=tuple)
    mcp_timeout: float = 60.0

    @classmethod
    def of(cls, *, max_turns: int | None = None, timeout: float | None = None,
           allow_mcp_hosts: Iterable[str] = ()) -> ServerToolOptions:
        """The options, each checked (ValueError names the bad one)."""
        options = cls(max_turns=DEFAULT_MAX_TURNS if max_turns is None else max_turns,
                      timeout=DEFAULT_TIMEOUT if timeout is None else timeout,
                      allow_mcp_hosts=tuple(allow_mcp_hosts))
        options.limits()  # raises for a bad bound
        return options

    def limits(self) -> Limits:
        return Limits(max_turns=self.max_turns, timeout=self.timeout)

    def serving(self, backend: Backend, request: Request | None = None) -> Backend:
        """What serves ``request``: ``backend`` itself when the request has no server tools
        it does not run itself, else ``backend`` with the server tools run around it (for
        no request: always wrapped, the wrapper handing such requests straight through)."""
        if request is not None and not needs_server_tools(request, backend):
            return backend
        return ServerToolsBackend(backend, limits=self.limits(),
                                  allow_mcp_hosts=self.allow_mcp_hosts,
                                  mcp_timeout=self.mcp_timeout)
