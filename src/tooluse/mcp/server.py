"""A connection to one MCP server, whose tools become tooluse tools.

The ``mcp`` SDK is async and a session belongs to the event loop (and task) that opened
it, while tooluse's runner is used from sync code, from async code, and runs tool calls in
worker threads. So each :class:`MCPServer` owns a small event loop in a thread of its own
(an anyio blocking portal) where the session lives from connect to close; every call,
whatever thread or loop it comes from, is handed to that loop. One design, the same
behaviour in ``run``, ``arun`` and ``stream``.

Nothing a server does can hang a run or lose a turn: connecting has a timeout, every
``tools/call`` has a timeout, and a server that exits, hangs or answers something that is
not an MCP result gives the model an ``is_error`` result naming the server and the problem
(with the last line the server wrote to stderr, when there is one).
"""

from __future__ import annotations

import atexit
import concurrent.futures
import math
import os
import re
import shlex
import sys
import tempfile
import threading
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, ExitStack
from pathlib import Path
from typing import IO, Any, Self, TextIO, TypeVar, cast
from urllib.parse import urlsplit

import anyio
import anyio.from_thread
import anyio.to_thread
import httpx2
import mcp_types as mt
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from pydantic import ValidationError

from ..errors import ToolDefinitionError, ToolUseError
from ..messages import TextBlock, ToolResultBlock
from ..tools import Tool, map_name
from .convert import mcp_tool, result_block
from .resources import ResourcesMixin

__all__ = ["MCPConnectionError", "MCPServer"]

T = TypeVar("T")

_URL = re.compile(r"^https?://", re.IGNORECASE)
#: Pages of tools/list read at most (a server whose cursor never ends cannot hang a connect).
_MAX_PAGES = 100
#: Seconds to wait for a session to shut down (the SDK bounds the stdio shutdown itself).
_CLOSE_TIMEOUT = 15.0


class MCPConnectionError(ToolUseError, ConnectionError):
    """An MCP server could not be started, reached or initialised (one-line message)."""


class MCPServer(ResourcesMixin):
    """An MCP server as a source of tools: pass it to a :class:`~tooluse.runner.Runner` or
    a :class:`~tooluse.tools.ToolSet` beside Python functions.

    ``target`` is a URL (``http://...``/``https://...``: streamable HTTP) or a command
    line (a string split like a shell would, or a list of arguments: stdio)::

        with MCPServer("python -m mcp_server_time") as time_server:
            Runner(backend, [get_weather, time_server]).run("What time is it in Tokyo?")

    - ``name``: qualifies tool names that collide with another tool's (default: the name
      the server gives itself, else the command or host).
    - ``headers``: HTTP headers for a URL (e.g. ``Authorization``); ``env``, ``cwd``: for a
      command (``env`` is added to a minimal safe environment, as the SDK does).
    - ``timeout``: seconds per ``tools/call`` (default 60); ``connect_timeout``: seconds to
      start and initialise (default 30).
    - ``stderr``: where a command's stderr goes; by default it is kept in a temporary file
      and its last line quoted in error messages.
    - ``requires_approval``: every call of the server's tools needs the user's approval
      (the runner's ``approve`` callback), except the tools whose annotations say they are
      read-only (``readOnlyHint: true``). Off by default.
    - ``sse``: a URL speaks the older HTTP+SSE transport instead of streamable HTTP
      (default: when its path ends in ``/sse``); ``http_transport``: the httpx2 transport of
      a URL's connections (the gateway's checks every address it connects to).

    The server is connected on first use (``get_tools()``, or entering ``with`` /
    ``async with``) and closed on leaving the ``with`` block, by :meth:`close`, or at
    interpreter exit at the latest.
    """

    def __init__(
        self,
        target: str | Sequence[str],
        *,
        name: str | None = None,
        headers: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        timeout: float = 60.0,
        connect_timeout: float = 30.0,
        stderr: TextIO | None = None,
        requires_approval: bool = False,
        sse: bool | None = None,
        http_transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        if timeout <= 0 or connect_timeout <= 0:
            raise ValueError("timeout and connect_timeout must be > 0 seconds")
        self.url: str | None = None
        self.command: list[str] | None = None
        if isinstance(target, str) and _URL.match(target.strip()):
            self.url = target.strip()
            if env is not None or cwd is not None:
                raise ValueError("env and cwd apply to a command, not to a URL")
        else:
            argv = shlex.split(target) if isinstance(target, str) else [str(a) for a in target]
            if not argv:
                raise ValueError("an MCP server needs a command line or an http(s) URL")
            if headers:
                raise ValueError("headers apply to a URL, not to a command")
            self.command = argv
        self.headers = dict(headers or {})
        #: The URL speaks the older HTTP+SSE transport (default: its path ends in ``/sse``).
        self.sse = sse if sse is not None else (
            self.url is not None and urlsplit(self.url).path.rstrip("/").endswith("/sse"))
        self.http_transport = http_transport
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._name = name
        self._stderr = stderr
        self.requires_approval = requires_approval
        self._log: IO[str] | None = None
        self._lock = threading.Lock()
        self._resources: ExitStack | None = None
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._task: concurrent.futures.Future[None] | None = None
        self._client: Client | None = None
        self._stop: anyio.Event | None = None
        self._tools: list[Tool] | None = None
        self._gone: str | None = None  # why calls can no longer reach the server
        self._noise: str | None = None  # the last thing it sent that was not JSON-RPC
        self._http_status: str | None = None  # the last HTTP error status
        #: Listed tools that could not be used, with the reason (also warned about).
        self.skipped: list[tuple[str, str]] = []
        self.server_name: str | None = None

    def __repr__(self) -> str:
        target = self.url or shlex.join(self.command or [])
        return f"MCPServer({target!r})"

    @property
    def label(self) -> str:
        """How messages name this server: its ``name``, else the name it gives itself,
        else the command or URL."""
        if self._name or self.server_name:
            return self._name or self.server_name or ""
        return self.url or shlex.join(self.command or [])

    @property
    def source_name(self) -> str:
        """The prefix for colliding tool names (a valid tool-name fragment)."""
        if self._name:
            return map_name(self._name)
        if self.server_name:
            return map_name(self.server_name)
        if self.command:
            words = [w for w in self.command if not w.startswith("-")]
            return map_name(os.path.basename(words[-1] if words else self.command[0]))
        host = re.sub(r"^https?://", "", self.url or "", flags=re.IGNORECASE).split("/")[0]
        return map_name(host or "mcp")

    @property
    def connected(self) -> bool:
        return self._client is not None

    # ---------------------------------------------------------------- lifecycle

    def connect(self) -> Self:
        """Start (or reach) the server, initialise the session and list its tools.
        Raises :class:`MCPConnectionError` with a one-line reason. Does nothing if
        already connected."""
        with self._lock:
            if self._client is not None:
                return self
            self._gone = None
            resources = ExitStack()
            try:
                if self.command is not None and self._stderr is None:
                    log = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
                    self._log = resources.enter_context(log)
                self._portal = resources.enter_context(anyio.from_thread.start_blocking_portal())
                ready: concurrent.futures.Future[list[mt.Tool]] = concurrent.futures.Future()
                self._task = self._portal.start_task_soon(self._serve, ready)
                try:
                    listing = ready.result(timeout=self.connect_timeout + _CLOSE_TIMEOUT)
                except concurrent.futures.TimeoutError:
                    self._task.cancel()
                    raise MCPConnectionError(self._connect_problem(TimeoutError())) from None
                except Exception as exc:  # noqa: BLE001 - every failure becomes one line
                    raise MCPConnectionError(self._connect_problem(exc)) from None
            except BaseException:
                self._stop_task()
                resources.close()
                self._portal = None
                self._log = None
                raise
            self._resources = resources
            self._tools = self._make_tools(listing)
            atexit.register(self._close_at_exit)
        return self

    def close(self) -> None:
        """End the session (and stop a command's process). Safe to call twice."""
        with self._lock:
            self._stop_task()
            if self._resources is not None:
                self._resources.close()
            self._resources = None
            self._portal = None
            self._client = None
            self._log = None
            atexit.unregister(self._close_at_exit)

    def _close_at_exit(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001, S110 - at exit, nothing is left to tell
            pass

    def _stop_task(self) -> None:
        portal, task, stop = self._portal, self._task, self._stop
        self._task = None
        self._stop = None
        if portal is None or task is None:
            return
        if stop is None:
            task.cancel()  # still starting: nothing to shut down gracefully
        elif not task.done():
            try:
                portal.call(stop.set)
            except RuntimeError:  # the portal's loop is already gone
                pass
        try:
            task.result(timeout=_CLOSE_TIMEOUT)
        except BaseException:  # noqa: BLE001 - closing must not fail; the reason is moot
            task.cancel()

    def __enter__(self) -> Self:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        await anyio.to_thread.run_sync(self.connect)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await anyio.to_thread.run_sync(self.close)

    async def _serve(self, ready: concurrent.futures.Future[list[mt.Tool]]) -> None:
        """The session's task in the portal loop: connect, list, wait for close."""
        self._stop = stop = anyio.Event()
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + self.connect_timeout) as scope:
                async with AsyncExitStack() as stack:
                    client = await stack.enter_async_context(
                        Client(self._transport(stack), message_handler=self._on_message)
                    )
                    listing = await _list_tools(client)
                    scope.deadline = math.inf
                    info = client.server_info
                    self.server_name = info.name if info is not None and info.name else None
                    self._client = client
                    ready.set_result(listing)
                    await stop.wait()
            if scope.cancelled_caught and not ready.done():
                ready.set_exception(TimeoutError())
        except Exception as exc:  # noqa: BLE001 - handed to connect() or kept for calls
            if not ready.done():
                ready.set_exception(exc)
            else:
                self._gone = _describe(exc)
        finally:
            self._client = None

    async def _on_message(self, message: Any) -> None:
        """Transport-level problems (a line that is not JSON-RPC) arrive here: remember the
        last, to explain a call that then gets no answer."""
        if isinstance(message, Exception):
            self._noise = _describe(message)

    async def _on_response(self, response: httpx2.Response) -> None:
        """The SDK reports a refused HTTP request without its status: keep the last one."""
        if response.status_code >= 400:
            phrase = httpx2.codes.get_reason_phrase(response.status_code)
            self._http_status = f"HTTP {response.status_code} {phrase}".strip()

    def _http_client(self, headers: dict[str, str] | None = None,
                     timeout: httpx2.Timeout | None = None,
                     auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(headers=headers if headers is not None else self.headers,
                                  timeout=timeout or httpx2.Timeout(30.0, read=300.0),
                                  auth=auth, transport=self.http_transport,
                                  event_hooks={"response": [self._on_response]})

    def _transport(self, stack: AsyncExitStack) -> Any:
        if self.url is not None and self.sse:
            from mcp.client.sse import sse_client

            return sse_client(self.url, headers=self.headers,
                              httpx_client_factory=self._http_client)
        if self.url is not None:
            http = self._http_client()
            stack.push_async_callback(http.aclose)
            return streamable_http_client(self.url, http_client=http)
        from mcp.client.stdio import stdio_client

        assert self.command is not None
        params = StdioServerParameters(
            command=self.command[0], args=self.command[1:], env=self.env,
            cwd=Path(self.cwd) if self.cwd is not None else None,
        )
        errlog = self._stderr or cast(TextIO, self._log) or sys.stderr
        return stdio_client(params, errlog=errlog)

    # ---------------------------------------------------------------- tools

    def get_tools(self) -> list[Tool]:
        """The server's tools (connecting first if needed)."""
        if self._tools is None or self._client is None:
            self.connect()
        assert self._tools is not None
        return list(self._tools)

    @property
    def tools(self) -> list[Tool]:
        return self.get_tools()

    def _make_tools(self, listing: list[mt.Tool]) -> list[Tool]:
        tools: list[Tool] = []
        self.skipped = []
        for definition in listing:
            try:
                tools.append(mcp_tool(definition, self._function(definition.name),
                                      requires_approval=self.requires_approval))
            except ToolDefinitionError as exc:
                self.skipped.append((definition.name, exc.message))
                warnings.warn(
                    f"MCP server {self.label}: tool {definition.name!r} left out: {exc.message}",
                    stacklevel=3,
                )
        return tools

    def _function(self, tool_name: str) -> Any:
        def call_mcp_tool(**arguments: Any) -> ToolResultBlock:
            return self.call(tool_name, arguments)

        call_mcp_tool.__name__ = tool_name
        return call_mcp_tool

    # ---------------------------------------------------------------- calls

    def call(self, tool_name: str, arguments: Mapping[str, Any] | None = None, *,
             structured: bool = True) -> ToolResultBlock:
        """``tools/call`` from sync code (any thread but the server's own). Always returns
        a result: a failure of any kind is an ``is_error`` result saying what happened.
        ``structured=False``: the result's content blocks only, without its
        ``structuredContent`` (:func:`~.convert.result_block`)."""
        portal = self._portal
        if portal is None or self._client is None:
            return _error(self._unavailable(tool_name))
        try:
            result: ToolResultBlock = portal.call(self._acall, tool_name, dict(arguments or {}),
                                                  structured)
            return result
        except RuntimeError as exc:  # the portal closed under us
            return _error(f"MCP server {self.label}: {tool_name!r} could not be called: {exc}")

    async def acall(self, tool_name: str, arguments: Mapping[str, Any] | None = None
                    ) -> ToolResultBlock:
        """:meth:`call` from async code (the wait happens in a worker thread)."""
        return await anyio.to_thread.run_sync(self.call, tool_name, arguments)

    async def _acall(self, tool_name: str, arguments: dict[str, Any],
                     structured: bool = True) -> ToolResultBlock:
        client = self._client
        if client is None or self._gone:
            return _error(self._unavailable(tool_name))
        what = f"MCP server {self.label}: tool {tool_name!r}"
        self._http_status = self._noise = None  # only what happens during this call
        try:
            with anyio.fail_after(self.timeout):
                result = await client.call_tool(tool_name, arguments)
        except TimeoutError:
            noise = f"; it wrote something that is not JSON-RPC ({self._noise})" \
                if self._noise else ""
            return _error(f"{what} did not answer within {self.timeout:g} s{noise}")
        except MCPError as exc:
            if exc.error.code == -32000 and "closed" in exc.error.message.lower():
                self._gone = f"the connection closed{self._stderr_note()}"
                return _error(f"{what} failed: the server closed the connection during the "
                              f"call (did it exit?){self._stderr_note()}")
            status = f" ({self._http_status})" if self._http_status else ""
            return _error(f"{what} failed: the server answered with error {exc.error.code}: "
                          f"{exc.error.message}{status}")
        except ValidationError as exc:
            return _error(f"{what} failed: the server's answer is not a valid tools/call "
                          f"result ({_first_error(exc)})")
        except Exception as exc:  # noqa: BLE001 - the model hears of every failure
            return _error(f"{what} failed: {_describe(exc)}{self._stderr_note()}")
        if not isinstance(result, mt.CallToolResult):
            return _error(f"{what} failed: the server's answer is not a tools/call result")
        return result_block(result, structured=structured)

    def run_request(self, operation: Callable[[Client], Awaitable[T]], what: str) -> T:
        """Run ``operation`` on the session (connecting first if needed), within the call
        timeout; :class:`MCPConnectionError` saying what failed."""
        if self._client is None:
            self.connect()
        portal = self._portal
        where = f"MCP server {self.label}"

        async def run() -> T:
            client = self._client
            if client is None or self._gone:
                raise MCPConnectionError(f"{where} is no longer reachable ({self._gone})")
            with anyio.fail_after(self.timeout):
                return await operation(client)

        if portal is None:
            raise MCPConnectionError(f"{where} is not connected")
        try:
            return portal.call(run)
        except MCPConnectionError:
            raise
        except TimeoutError:
            raise MCPConnectionError(f"{where} did not {what} within {self.timeout:g} s") from None
        except Exception as exc:  # noqa: BLE001 - one line, whatever failed
            raise MCPConnectionError(f"{where} could not {what}: {_describe(exc)}") from None

    def _unavailable(self, tool_name: str) -> str:
        if self._gone:
            return f"MCP server {self.label} is no longer reachable ({self._gone}); " \
                   f"tool {tool_name!r} was not called"
        return f"MCP server {self.label} is not connected; tool {tool_name!r} was not called"

    # ---------------------------------------------------------------- messages

    def _stderr_note(self) -> str:
        line = self.stderr_tail()
        return f"; its stderr ends: {line}" if line else ""

    def stderr_tail(self) -> str:
        """The last non-empty line the server's process wrote to stderr (when captured)."""
        log = self._log
        if log is None:
            return ""
        try:
            log.flush()
            size = os.fstat(log.fileno()).st_size
            start = max(0, size - 4000)
            data = os.pread(log.fileno(), size - start, start).decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        lines = [line.strip() for line in data.splitlines() if line.strip()]
        return lines[-1][:300] if lines else ""

    def _connect_problem(self, exc: BaseException) -> str:
        where = f"MCP server {self.label}"
        if isinstance(exc, TimeoutError):
            return (f"{where} did not finish starting (initialize and tools/list) within "
                    f"{self.connect_timeout:g} s{self._stderr_note()}")
        if isinstance(exc, FileNotFoundError) and self.command is not None:
            return f"{where}: command not found: {self.command[0]}"
        detail = _describe(exc)
        if self.url is not None:
            status = f" ({self._http_status})" if self._http_status else ""
            return f"{where}: cannot connect: {detail}{status}"
        return f"{where} failed to start: {detail}{self._stderr_note()}"


async def _list_tools(client: Client) -> list[mt.Tool]:
    tools: list[mt.Tool] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _error(text: str) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id="", content=[TextBlock(text=text)], is_error=True)


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    exc = _leaf(exc)
    if isinstance(exc, MCPError):
        message = exc.error.message
        if "closed" in message.lower():
            return "the connection closed (the server exited or is not an MCP server)"
        return f"error {exc.error.code}: {message}"
    if isinstance(exc, ValidationError):
        return _first_error(exc)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return str(exc).splitlines()[0]
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ()))
    text = f"{where}: {first.get('msg', '')}" if where else str(first.get("msg", ""))
    got = first.get("input")
    if isinstance(got, str | int | float | bool):
        text += f" (got {str(got)[:80]!r})"
    return text

