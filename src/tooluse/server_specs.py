"""The server tools of a neutral request, as the client asked for them: a tool search over
deferred tools, the MCP servers the gateway reaches for the model, context edits, and the
edits an answer reports (:class:`~tooluse.messages.Request`'s ``server_tools`` and
``context_edits``, :class:`~tooluse.messages.Response`'s ``applied_edits``). Re-exported by
:mod:`tooluse.messages`, whose types they are."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

__all__ = ["AppliedEdit", "ContextEdit", "MCPServerSpec", "ServerTools", "ToolFilter",
           "ToolSearchSpec"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ToolSearchSpec(_Model):
    """A search of the request's deferred tools that the server runs when the model calls
    it (Messages ``tool_search_tool_bm25_*`` / ``tool_search_tool_regex_*``, Responses
    ``tool_search``): the model sees a tool of this ``name``; ``mode`` is how it searches
    (``bm25``: words, ranked; ``regex``: a Python regular expression)."""

    name: str
    mode: Literal["bm25", "regex"] = "bm25"


class ToolFilter(_Model):
    """Which tools of an MCP server a rule covers: those named in ``names`` (None: any
    name) and, when ``read_only`` is set, only those whose annotations say so (or not)."""

    names: list[str] | None = None
    read_only: bool | None = None

    def matches(self, name: str, read_only: bool) -> bool:
        return (self.names is None or name in self.names) and (
            self.read_only is None or self.read_only == read_only)


class MCPServerSpec(_Model):
    """An MCP server whose tools the server (gateway or upstream) connects to and runs for
    the model (Messages ``mcp_servers`` with their ``mcp_toolset``, a Responses ``mcp``
    tool).

    - ``name``: its label (``server_name`` / ``server_label`` in the answers);
    - ``url``: its streamable HTTP (or SSE) endpoint; ``headers``: sent with every request
      to it (an ``Authorization`` bearer token...), secret: never shown by ``repr``,
      ``model_dump`` or a trace;
    - ``allowed``: the tools offered (None: all); ``denied``: never offered;
    - ``deferred``: its tools are deferred (loaded by a tool search) unless ``loading``
      names them with False; ``loading`` maps a tool's name to its own setting;
    - ``approval``: the calls that wait for the user's approval (None: none do);
      ``no_approval``: the calls that never wait (checked first).
    """

    name: str
    url: str
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    allowed: ToolFilter | None = None
    denied: list[str] = Field(default_factory=list)
    deferred: bool = False
    loading: dict[str, bool] = Field(default_factory=dict)
    approval: ToolFilter | None = None
    no_approval: ToolFilter | None = None
    description: str = ""

    def offers(self, name: str, read_only: bool) -> bool:
        """Whether the server's tool ``name`` is offered to the model."""
        return name not in self.denied and (
            self.allowed is None or self.allowed.matches(name, read_only))

    def defers(self, name: str) -> bool:
        return self.loading.get(name, self.deferred)

    def needs_approval(self, name: str, read_only: bool) -> bool:
        if self.no_approval is not None and self.no_approval.matches(name, read_only):
            return False
        return self.approval is not None and self.approval.matches(name, read_only)


class ServerTools(_Model):
    """The tools of a request that the server runs itself, within the model's turn,
    instead of handing the calls to the client: a tool search over the deferred tools and
    MCP servers. A backend whose upstream runs them (the client's own API) gets them
    forwarded; for every other the gateway (or the runner) runs them."""

    search: ToolSearchSpec | None = None
    mcp_servers: list[MCPServerSpec] = Field(default_factory=list)
    #: The API shows the tools an MCP server listed (a Responses ``mcp_list_tools`` item),
    #: and a server that cannot be reached there; otherwise that fails the request.
    show_listings: bool = False

    def __bool__(self) -> bool:
        return self.search is not None or bool(self.mcp_servers)


class ContextEdit(_Model):
    """An edit the server makes to the history before the model sees it, to keep the
    prompt small (Messages ``context_management.edits``).

    - ``clear_tool_uses``: once the prompt reaches ``trigger_input_tokens`` (or the history
      holds ``trigger_tool_uses`` calls), the results of the oldest calls are replaced by a
      short note, all but the last ``keep`` calls and the calls of ``exclude_tools``; the
      calls' inputs too when ``clear_tool_inputs`` is True (or names their tool). Nothing
      is cleared unless at least ``clear_at_least`` tokens would go.
    - ``clear_thinking``: the thinking blocks of all but the last ``keep`` assistant turns
      are left out (``keep`` None: all are kept).
    """

    kind: Literal["clear_tool_uses", "clear_thinking"]
    trigger_input_tokens: int | None = None
    trigger_tool_uses: int | None = None
    keep: int | None = None
    clear_at_least: int | None = None
    exclude_tools: list[str] = Field(default_factory=list)
    clear_tool_inputs: bool | list[str] = False


class AppliedEdit(_Model):
    """A :class:`ContextEdit` the server applied: ``cleared`` calls (``clear_tool_uses``)
    or thinking turns (``clear_thinking``), and the input tokens that saved."""

    kind: Literal["clear_tool_uses", "clear_thinking"]
    cleared: int = 0
    cleared_input_tokens: int = 0
