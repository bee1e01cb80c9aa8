"""Tools from MCP (Model Context Protocol) servers, on the official ``mcp`` SDK.

:class:`MCPServer` connects to a server over stdio (a command line) or streamable HTTP (a
URL) and offers its tools as tooluse tools, so a :class:`~tooluse.runner.Runner` takes it
beside Python functions::

    from tooluse import Runner
    from tooluse.mcp import MCPServer

    with MCPServer("python -m mcp_server_time") as time_server:
        result = Runner("local", [time_server], tool_choice="any").run("Time in Tokyo?")

Needs the ``mcp`` extra: ``pip install 'tooluse[mcp]'``. See docs/mcp.md.
"""

from __future__ import annotations

try:
    import mcp as _mcp  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError(
        "tooluse.mcp needs the official MCP SDK: pip install 'tooluse[mcp]'"
    ) from exc

from .convert import mcp_tool, prepare_schema, result_block
from .resources import MCPPrompt, MCPPromptArgument, MCPResource
from .server import MCPConnectionError, MCPServer

__all__ = ["MCPConnectionError", "MCPPrompt", "MCPPromptArgument", "MCPResource", "MCPServer",
           "mcp_tool", "prepare_schema", "result_block"]
