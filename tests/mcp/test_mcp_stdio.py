"""MCP servers over stdio through the runner: the real ``mcp-server-time`` from PyPI
(unmodified) and the SDK-built test servers beside it, with a scripted model so that what
reaches the server and what comes back can be checked exactly."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp_commands import GARBAGE_COMMAND, MISC_COMMAND, TIME_COMMAND

from tooluse.backends.scripted import ScriptedBackend
from tooluse.mcp import MCPConnectionError, MCPServer
from tooluse.messages import ImageBlock, JsonBlock, Response, ToolUseBlock
from tooluse.runner import FinalEvent, Runner, ToolResultEvent
from tooluse.tools import ToolSet

#: Real MCP server processes (and for HTTP, uvicorn): slow by the project's rule.
pytestmark = pytest.mark.slow


def call(name: str, **input: Any) -> Response:
    return Response(content=[ToolUseBlock(id="toolu_01", name=name, input=input)],
                    stop_reason="tool_use")


def script(*turns: Any) -> ScriptedBackend:
    """A scripted model giving ``turns`` in order; a callable turn is called with the
    request (to answer with what the tool returned)."""
    queue = list(turns)

    def model(request: Any) -> Any:
        item = queue.pop(0)
        return item(request) if callable(item) else item

    return ScriptedBackend(model)


def echo_results(request: Any) -> str:
    """Answer with the text of the last tool result (or 'no result')."""
    results = request.messages[-1].tool_results
    return results[0].text() if results else "no result"


def test_time_server_tools_are_listed_with_checked_schemas(time_server: MCPServer) -> None:
    tools = {t.name: t for t in time_server.get_tools()}
    assert set(tools) == {"get_current_time", "convert_time"}
    schema = tools["get_current_time"].input_schema
    assert schema["type"] == "object" and schema["required"] == ["timezone"]
    assert "title" not in schema and "title" not in schema["properties"]["timezone"]
    assert time_server.server_name == "mcp-time"


def test_get_current_time_through_the_runner(time_server: MCPServer) -> None:
    backend = script(call("get_current_time", timezone="Asia/Tokyo"), echo_results)
    def get_weather(city: str) -> str:
        """Weather in a city."""
        return f"sunny in {city}"

    result = Runner(backend, [get_weather, time_server]).run("What time is it in Tokyo?")
    (_, answer), = result.tool_calls
    assert answer is not None and not answer.is_error
    value = answer.content[0]
    assert isinstance(value, JsonBlock)  # structuredContent, not a second copy as text
    assert value.value["timezone"] == "Asia/Tokyo"
    assert value.value["datetime"].endswith("+09:00")
    assert value.value["day_of_week"] in ("Monday", "Tuesday", "Wednesday", "Thursday",
                                          "Friday", "Saturday", "Sunday")
    assert '"timezone": "Asia/Tokyo"' in result.text
    names = [spec.name for spec in backend.requests[0].tools]
    assert names == ["get_weather", "get_current_time", "convert_time"]


def test_server_side_error_is_an_is_error_result(time_server: MCPServer) -> None:
    backend = script(call("get_current_time", timezone="Mars/Olympus_Mons"), echo_results)
    result = Runner(backend, [time_server]).run("time on Mars?")
    (_, answer), = result.tool_calls
    assert answer is not None and answer.is_error
    assert "Mars/Olympus_Mons" in answer.text()


def test_input_is_validated_before_the_server_is_called(time_server: MCPServer) -> None:
    backend = script(call("get_current_time", zone="Asia/Tokyo"), echo_results)
    result = Runner(backend, [time_server]).run("time?")
    (_, answer), = result.tool_calls
    assert answer is not None and answer.is_error
    assert "missing required parameter 'timezone'" in answer.text()


def test_arun_and_stream_reach_the_server_too(time_server: MCPServer) -> None:
    def backend() -> ScriptedBackend:
        return script(call("convert_time", source_timezone="Europe/London",
                                     time="12:00", target_timezone="Asia/Tokyo"), echo_results)

    result = anyio.run(Runner(backend(), time_server).arun, "noon in London is when in Tokyo?")
    (_, answer), = result.tool_calls
    assert answer is not None and not answer.is_error
    assert answer.content[0].value["target"]["datetime"].startswith(  # type: ignore[union-attr]
        answer.content[0].value["source"]["datetime"][:10])  # type: ignore[union-attr]
    assert "T21:00:00+09:00" in result.text or "T20:00:00+09:00" in result.text  # DST

    events = list(Runner(backend(), [time_server]).stream("again"))
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert len(results) == 1 and not results[0].result.is_error
    assert isinstance(events[-1], FinalEvent)


def test_two_servers_same_tool_name_are_kept_apart(time_server: MCPServer,
                                                   misc_server: MCPServer) -> None:
    tools = ToolSet([time_server, misc_server])
    assert "mcp-time_get_current_time" in tools and "misc_get_current_time" in tools
    assert "get_current_time" not in tools
    assert tools.original_name("misc_get_current_time") == "misc.get_current_time"
    assert "math_add" in tools and tools.original_name("math_add") == "math.add"

    backend = script(
        Response(content=[
            ToolUseBlock(id="a", name="mcp-time_get_current_time", input={"timezone": "UTC"}),
            ToolUseBlock(id="b", name="misc_get_current_time", input={"timezone": "UTC"}),
            ToolUseBlock(id="c", name="math_add", input={"a": 2, "b": 40}),
        ], stop_reason="tool_use"),
        "done",
    )
    result = Runner(backend, tools).run("both clocks")
    answers = {use.id: res for use, res in result.tool_calls}
    assert answers["a"] is not None and answers["a"].content[0].value["timezone"] == "UTC"  # type: ignore[union-attr]
    assert answers["b"] is not None
    assert answers["b"].content == [JsonBlock(value={"result": "misc clock: 12:00 in UTC"})]
    assert answers["c"] is not None and answers["c"].content == [JsonBlock(value={"result": 42})]


def test_image_and_is_error_results(misc_server: MCPServer) -> None:
    backend = script(
        Response(content=[ToolUseBlock(id="a", name="red_dot", input={}),
                          ToolUseBlock(id="b", name="fail", input={"reason": "no"}),
                          ToolUseBlock(id="c", name="readme", input={})], stop_reason="tool_use"),
        "done",
    )
    result = Runner(backend, [misc_server]).run("go")
    answers = {use.id: res for use, res in result.tool_calls}
    image = answers["a"]
    assert image is not None and not image.is_error
    assert isinstance(image.content[0], ImageBlock) and image.content[0].media_type == "image/png"
    assert image.content[0].data is not None and image.content[0].data.startswith("iVBORw0KGgo")
    failed = answers["b"]
    assert failed is not None and failed.is_error and "refused: no" in failed.text()
    resource = answers["c"]
    assert resource is not None and resource.content[1] == JsonBlock(value={
        "type": "resource", "uri": "file:///README.md", "mimeType": "text/markdown",
        "text": "# Hello\n"})
    # the image survives a trip through a wire format as an image
    wire = result.to_wire("anthropic")
    parts = wire["messages"][2]["content"][0]["content"]
    assert parts[0]["type"] == "image" and parts[0]["source"]["media_type"] == "image/png"


def test_server_that_hangs_gives_an_error_result_not_a_hang(misc_server: MCPServer) -> None:
    backend = script(call("hang"), echo_results)
    started = time.monotonic()
    result = Runner(backend, [misc_server]).run("wait")
    assert time.monotonic() - started < 15
    (_, answer), = result.tool_calls
    assert answer is not None and answer.is_error
    assert answer.text() == "MCP server misc: tool 'hang' did not answer within 3 s"
    # the session is still usable afterwards
    assert misc_server.call("math.add", {"a": 1, "b": 1}).text() == '{"result": 2}'


def test_server_that_exits_mid_call() -> None:
    with MCPServer(MISC_COMMAND, timeout=10) as server:
        backend = script(
            call("crash"),
            Response(content=[ToolUseBlock(id="toolu_02", name="red_dot", input={})],
                     stop_reason="tool_use"),
            echo_results,
        )
        started = time.monotonic()
        result = Runner(backend, [server]).run("crash it")
        assert time.monotonic() - started < 10
        (_, first), (_, second) = result.tool_calls
        assert first is not None and first.is_error
        assert "closed the connection during the call" in first.text()
        assert "misc server: crashing on purpose" in first.text()  # its stderr
        assert second is not None and second.is_error
        assert "no longer reachable" in second.text() and "'red_dot' was not called" in second.text()
        assert result.text == second.text()  # the run went on to the model's answer
        server.close()
        server.connect()  # a fresh process and session
        assert server.call("math.add", {"a": 2, "b": 2}).text() == '{"result": 4}'
    assert not server.connected


def test_server_answering_garbage() -> None:
    with MCPServer(GARBAGE_COMMAND, timeout=2) as server:
        broken = server.call("broken", {})
        assert broken.is_error
        assert "not a valid tools/call result" in broken.text() and "content" in broken.text()
        mumble = server.call("mumble", {})
        assert mumble.is_error
        assert "did not answer within 2 s" in mumble.text()
        assert "not JSON-RPC" in mumble.text() and "this is not JSON-RPC" in mumble.text()


@pytest.mark.parametrize("target, message", [
    ("no-such-command-tooluse", "command not found: no-such-command-tooluse"),
    (f"{sys.executable} -m no_such_module_tooluse",
     ("failed to start: the connection closed (the server exited or is not an MCP server); "
      "its stderr ends: ")),
    ("http://127.0.0.1:9/mcp", "cannot connect: ConnectError"),
])
def test_servers_that_cannot_start_say_why(target: str, message: str) -> None:
    server = MCPServer(target, connect_timeout=10)
    with pytest.raises(MCPConnectionError) as info:
        server.connect()
    assert message in str(info.value)
    assert "\n" not in str(info.value)
    assert not server.connected


def test_a_program_that_is_not_an_mcp_server_times_out_connecting() -> None:
    server = MCPServer([sys.executable, "-c", "import time; print('hello'); time.sleep(60)"],
                       connect_timeout=2)
    started = time.monotonic()
    with pytest.raises(MCPConnectionError, match="did not finish starting .* within 2 s"):
        server.connect()
    assert time.monotonic() - started < 12


def test_async_context_closes_the_session() -> None:
    async def main() -> MCPServer:
        async with MCPServer(TIME_COMMAND) as server:
            assert server.connected
            result = await server.acall("get_current_time", {"timezone": "Etc/UTC"})
            assert not result.is_error
            return server

    server = anyio.run(main)
    assert not server.connected
    closed = server.call("get_current_time", {"timezone": "Etc/UTC"})
    assert closed.is_error and "not connected" in closed.text()


def test_a_server_never_closed_does_not_hold_up_interpreter_exit(tmp_path: Any) -> None:
    marker = f"--tooluse-test-{uuid.uuid4().hex}"  # misc_server ignores its arguments
    script = tmp_path / "forget.py"
    script.write_text(
        "import sys\n"
        "from tooluse.mcp import MCPServer\n"
        f"server = MCPServer({[*MISC_COMMAND, marker]!r})\n"
        "print(len(server.get_tools()))\n"
    )
    completed = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                               timeout=60, check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "7"
    alive = [p for p in Path("/proc").glob("[0-9]*")
             if marker in _cmdline(p)]
    assert alive == []


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""
