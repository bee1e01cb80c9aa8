"""An MCP server over stdio, built with the official SDK's MCPServer, whose tools do what
real servers sometimes do: return an image, an embedded resource or structured content,
fail with isError, exit mid-call, hang, or carry a name the Messages API would refuse.
It also has a ``get_current_time`` of its own, to collide with mcp-server-time's.

Run: ``python tests/mcp/misc_server.py``."""

from __future__ import annotations

import base64
import os

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import EmbeddedResource, TextContent, TextResourceContents

#: A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)

server = MCPServer("misc")


@server.tool()
def get_current_time(timezone: str) -> str:
    """The misc server's clock: always the same answer (to tell it from mcp-server-time)."""
    return f"misc clock: 12:00 in {timezone}"


@server.tool()
def red_dot() -> Image:
    """A 1x1 red PNG."""
    return Image(data=PNG, format="png")


@server.tool()
def fail(reason: str) -> str:
    """Always fails with isError."""
    raise ToolError(f"refused: {reason}")


@server.tool()
def readme() -> list[TextContent | EmbeddedResource]:
    """A text block and an embedded text resource."""
    return [
        TextContent(type="text", text="see the file"),
        EmbeddedResource(
            type="resource",
            resource=TextResourceContents(uri="file:///README.md", mime_type="text/markdown",
                                          text="# Hello\n"),
        ),
    ]


@server.tool(name="math.add")
def add(a: int, b: int) -> int:
    """Add two integers (a dotted name, valid in MCP, not on the Messages API)."""
    return a + b


@server.tool()
def crash() -> str:
    """Exit the server process in the middle of the call."""
    os.write(2, b"misc server: crashing on purpose\n")
    os._exit(3)


@server.tool()
async def hang() -> str:
    """Never answer."""
    await anyio.sleep(3600)
    return "never"


if __name__ == "__main__":
    server.run()
