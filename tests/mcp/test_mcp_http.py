"""An MCP server over streamable HTTP, built with the official SDK in the test itself and
served by uvicorn on 127.0.0.1 (a free port): its tools through the runner, headers sent
with every request, and the errors for a refused or unreachable URL."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import MCPServer as SDKServer
from mcp.server.mcpserver.exceptions import ToolError

from tooluse.backends.scripted import ScriptedBackend
from tooluse.mcp import MCPConnectionError, MCPServer
from tooluse.messages import JsonBlock, Response, ToolUseBlock
from tooluse.runner import Runner
from tooluse.server import ServerThread

#: Real MCP server processes (and for HTTP, uvicorn): slow by the project's rule.
pytestmark = pytest.mark.slow

pytest.importorskip("uvicorn")

TOKEN = "s3cret"


def build_app() -> Any:
    sdk = SDKServer("inventory")

    @sdk.tool()
    def stock(item: str) -> dict[str, Any]:
        """How many of an item are in stock."""
        counts = {"apple": 12, "pear": 0}
        if item not in counts:
            raise ToolError(f"unknown item {item!r}")
        return {"item": item, "count": counts[item]}

    @sdk.resource("notes://today", mime_type="text/plain")
    def today() -> str:
        """Today's notes."""
        return "buy pears"

    @sdk.prompt()
    def review(code: str) -> str:
        """Ask for a code review."""
        return f"Please review this code:\n{code}"

    app = sdk.streamable_http_app()

    async def require_token(scope: Any, receive: Any, send: Any) -> None:
        """Refuse HTTP requests without the right X-Api-Key (as a real deployment would)."""
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            if headers.get(b"x-api-key") != TOKEN.encode():
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"text/plain")]})
                await send({"type": "http.response.body", "body": b"missing or bad X-Api-Key"})
                return
        await app(scope, receive, send)

    return require_token


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with ServerThread(build_app()) as server:
        yield f"{server.url}/mcp"


def test_tools_over_streamable_http_through_the_runner(url: str) -> None:
    with MCPServer(url, headers={"X-Api-Key": TOKEN}) as inventory:
        assert inventory.server_name == "inventory"
        assert [t.name for t in inventory.get_tools()] == ["stock"]
        backend = ScriptedBackend([
            Response(content=[ToolUseBlock(id="a", name="stock", input={"item": "apple"}),
                              ToolUseBlock(id="b", name="stock", input={"item": "kiwi"})],
                     stop_reason="tool_use"),
            "12 apples, and no kiwis on the list",
        ])
        result = Runner(backend, [inventory]).run("apples and kiwis?")
        answers = {use.id: res for use, res in result.tool_calls}
        assert answers["a"] is not None and not answers["a"].is_error
        assert answers["a"].content == [JsonBlock(value={"item": "apple", "count": 12})]
        assert answers["b"] is not None and answers["b"].is_error
        assert "unknown item 'kiwi'" in answers["b"].text()


def test_async_use_over_http(url: str) -> None:
    async def main() -> tuple[bool, str]:
        async with MCPServer(url, headers={"X-Api-Key": TOKEN}) as inventory:
            backend = ScriptedBackend([
                Response(content=[ToolUseBlock(id="a", name="stock", input={"item": "pear"})],
                         stop_reason="tool_use"),
                "none left",
            ])
            result = await Runner(backend, [inventory]).arun("pears?")
            (_, answer), = result.tool_calls
            assert answer is not None
            return inventory.connected, answer.text()

    connected, text = anyio.run(main)
    assert connected is True
    assert text == '{"item": "pear", "count": 0}'


def test_refused_without_the_header(url: str) -> None:
    with pytest.raises(MCPConnectionError) as info:
        MCPServer(url, connect_timeout=10).connect()
    message = str(info.value)
    assert message.startswith(f"MCP server {url}: cannot connect: ")
    assert message.endswith("(HTTP 401 Unauthorized)") and "\n" not in message


def test_server_gone_mid_session_is_an_error_result_at_once() -> None:
    server = ServerThread(build_app()).start()
    with MCPServer(f"{server.url}/mcp", headers={"X-Api-Key": TOKEN}, timeout=30) as inventory:
        assert not inventory.call("stock", {"item": "apple"}).is_error
        server.stop()
        started = time.monotonic()
        gone = inventory.call("stock", {"item": "apple"})
        assert time.monotonic() - started < 10  # not the 30 s timeout
        assert gone.is_error
        assert gone.text().startswith("MCP server inventory: tool 'stock' failed: ")


def test_resources_and_prompts(url: str) -> None:
    from tooluse.mcp import MCPPromptArgument
    from tooluse.messages import Message, TextBlock

    with MCPServer(url, headers={"X-Api-Key": TOKEN}) as inventory:
        (resource,) = inventory.list_resources()
        assert (resource.uri, resource.name, resource.mime_type) == (
            "notes://today", "today", "text/plain")
        assert inventory.read_resource("notes://today") == [TextBlock(text="buy pears")]
        (prompt,) = inventory.list_prompts()
        assert prompt.name == "review" and prompt.description == "Ask for a code review."
        assert prompt.arguments == [MCPPromptArgument(name="code", required=True)]
        assert inventory.get_prompt("review", {"code": "x = 1"}) == [
            Message(role="user", content="Please review this code:\nx = 1")]
        with pytest.raises(MCPConnectionError, match="could not read resource 'notes://nope'"):
            inventory.read_resource("notes://nope")
        assert anyio.run(inventory.alist_prompts)[0].name == "review"
