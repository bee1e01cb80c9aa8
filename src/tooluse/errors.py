"""The exceptions tooluse raises, all under one root, :class:`ToolUseError`::

    ToolUseError
    ├── ToolDefinitionError (ValueError)    a tool cannot be made
    ├── ToolInputError (ValueError)         a call's input fails the tool's schema
    ├── WireFormatError (ValueError)        a malformed request, response or event
    ├── ConversionError (ValueError)        the target format cannot carry something
    ├── BackendError                        a model backend failed (``kind`` says how)
    │   └── Cancelled                       the caller went away: its work was stopped
    ├── PartialJSONError (ValueError)       not (a prefix of) JSON      partial_json
    ├── ConversionProblem (ValueError)      legacy XML value fits no type  codecs.legacy
    ├── ScriptExhausted (RuntimeError)      the script ran out          backends.scripted
    ├── MCPConnectionError (ConnectionError) an MCP server is unreachable  mcp
    ├── AddressRefused (ValueError)         an MCP server's address not allowed  mcp.guard
    ├── SearchError (ValueError)            a tool search's query cannot run  runner.tool_search
    ├── RunnerError                         the loop stopped before an answer  runner
    │   ├── MaxIterationsExceeded
    │   ├── ToolRetriesExhausted
    │   ├── IncompleteToolCall
    │   └── ExtractionError
    ├── BfclDataError (ValueError)          BFCL data missing or malformed  eval
    ├── UsageError (ValueError)             bad input to ``tooluse run``  cli.run
    ├── SdkMissing (ValueError)             OTEL_* asks for traces, no SDK  telemetry
    ├── ConfigError (ValueError)            a broken gateway config  server.route_config
    ├── SchemaVersionError (ValueError)     a store's schema this release cannot use  _migrations
    └── GatewayError                        an error to answer in the client's API  server

(The first five and ``Cancelled`` are defined here, as errors that cross packages; each
other one in the module named at its right.)

Outside the tree, on purpose: :class:`tooluse.runner.ToolError` is raised *by a tool
function* (not by tooluse) to fail with exactly its message, and the runner turns it into
the tool's error result; the demo's ``TickerNotFound`` is likewise its tool's own error;
the gateway's ``_Closed`` and ``ClientGone`` (the client went away) never leave the server
code that raises them (``tests/test_error_tree.py`` keeps this list true). The second base
(``ValueError``, ``RuntimeError``, ``ConnectionError``) keeps ``except`` clauses written
against the builtin working.

Each one carries what a caller needs to answer in its own terms: a field path for a
malformed wire request (so the gateway can say ``tools.0.name: ...``), the list of problems
for invalid tool input (so the runner can send them back as an ``is_error`` result), and an
error *kind* for backend failures (so the gateway can map them onto each API's native
error shape without knowing which backend failed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

__all__ = [
    "BackendError",
    "BackendErrorKind",
    "Cancelled",
    "ConversionError",
    "ToolDefinitionError",
    "ToolInputError",
    "ToolUseError",
    "WireFormatError",
    "wire_path",
]

Path = Sequence[str | int]


def wire_path(path: Path) -> str:
    """``("tools", 0, "name")`` -> ``"tools.0.name"``: a wire field path as the APIs spell it
    in their errors (a tool input's path reads ``items[2].price``: ``tools.input_path``)."""
    return ".".join(str(p) for p in path)


class ToolUseError(Exception):
    """Base class of every tooluse error."""


class ToolDefinitionError(ToolUseError, ValueError):
    """A tool cannot be made: bad name, bad schema, unsupported annotation."""

    def __init__(self, message: str, *, tool: str | None = None) -> None:
        self.tool = tool
        self.message = message
        super().__init__(f"tool {tool!r}: {message}" if tool else message)


class ToolInputError(ToolUseError, ValueError):
    """A tool call's input does not match the tool's schema.

    ``problems`` lists every problem found, each naming its parameter by path.
    """

    def __init__(self, tool: str, problems: Sequence[str]) -> None:
        self.tool = tool
        self.problems = list(problems)
        super().__init__(f"invalid input for tool {tool!r}: " + "; ".join(self.problems))


class WireFormatError(ToolUseError, ValueError):
    """A wire-format document (request, response, event) is malformed.

    ``path`` locates the offending field; ``str()`` gives ``"tools.0.name: message"``.
    """

    def __init__(
        self, message: str, path: Path = (), *, details: dict[str, Any] | None = None
    ) -> None:
        self.path = tuple(path)
        self.message = message
        #: Machine-readable details an API puts in its error (``{"error_code": ...}``).
        self.details = details
        super().__init__(f"{wire_path(self.path)}: {message}" if self.path else message)


class ConversionError(ToolUseError, ValueError):
    """The target format cannot carry something the source holds (no silent loss)."""

    def __init__(self, message: str, path: Path = (), *, target: str | None = None) -> None:
        self.path = tuple(path)
        self.message = message
        self.target = target
        where = f" at {wire_path(self.path)}" if self.path else ""
        to = f"{target}: " if target else ""
        super().__init__(f"{to}{message}{where}")


BackendErrorKind = Literal[
    "invalid_request",
    "authentication",
    "permission",
    "not_found",
    "request_too_large",
    "context_length",
    "rate_limit",
    "timeout",
    "overloaded",
    "unavailable",
    "api",
]


class BackendError(ToolUseError):
    """A model backend failed. ``kind`` is format-neutral; ``status`` is the upstream HTTP
    status when there was one; ``retry_after`` is seconds, when the upstream said."""

    def __init__(
        self,
        message: str,
        *,
        kind: BackendErrorKind = "api",
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.message = message
        self.kind: BackendErrorKind = kind
        self.status = status
        self.retry_after = retry_after
        #: Set by the runner when a run fails: the conversation so far, to resume from.
        self.messages: list[Any] | None = None
        super().__init__(message)

    @property
    def retryable(self) -> bool:
        return self.kind in ("rate_limit", "overloaded", "unavailable", "timeout") or (
            self.status is not None and self.status >= 500
        )


class Cancelled(BackendError):
    """The caller went away (its :class:`~tooluse.cancel.CancelSignal` was set): the work
    done for it was stopped, and nothing was retried after that. Raised by whatever served
    the call: a remote backend's HTTP client (``tooluse.backends._upstream`` names it
    ``UpstreamCancelled``, its former name) and the local engine's slot scheduler alike."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="api")
