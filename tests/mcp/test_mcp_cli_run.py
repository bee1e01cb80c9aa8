"""`tooluse run` with a scripted model (fast): the printed steps, --json, --tool, and the
one-line errors and exit status for bad input. The bundled local model runs it in
test_mcp_local.py."""

from __future__ import annotations

import io
import json
import shlex
from typing import Any

import pytest
from mcp_commands import MISC_COMMAND, TIME_COMMAND

from tooluse.backends.scripted import ScriptedBackend
from tooluse.cli import build_parser, main
from tooluse.cli.run import run_command
from tooluse.messages import Response, ToolUseBlock

#: Real MCP server processes (and for HTTP, uvicorn): slow by the project's rule.
pytestmark = pytest.mark.slow

TIME = shlex.join(TIME_COMMAND)


def tokyo_then_echo() -> ScriptedBackend:
    turns: list[Any] = [Response(content=[ToolUseBlock(id="toolu_1", name="get_current_time",
                                                        input={"timezone": "Asia/Tokyo"})],
                                 stop_reason="tool_use")]

    def model(request: Any) -> Any:
        if turns:
            return turns.pop(0)
        (result,) = request.messages[-1].tool_results
        return f"In Tokyo it is {json.loads(result.text())['datetime'][11:16]}."

    return ScriptedBackend(model, model="scripted-model")


def run(argv: list[str], backend: Any) -> tuple[int, str, str]:
    args = build_parser().parse_args(["run", *argv])
    out, err = io.StringIO(), io.StringIO()
    status = run_command(args, backend, out=out, err=err)
    return status, out.getvalue(), err.getvalue()


def test_steps_are_printed_as_the_demo_prints_them() -> None:
    status, out, err = run(["--mcp", TIME, "--tool-choice", "any", "What time is it in Tokyo?"],
                           tokyo_then_echo())
    assert status == 0, err
    assert "tools: get_current_time, convert_time (MCP server mcp-time)" in out
    assert "User: What time is it in Tokyo?" in out
    assert "[model turn 1] tool_choice=any: " in out
    assert 'call    get_current_time(timezone="Asia/Tokyo")' in out
    assert 'result  get_current_time -> {"timezone": "Asia/Tokyo", "datetime": "' in out
    assert "[model turn 2] tool_choice=auto: " in out
    assert "Done in " in out
    assert "2 model turn(s), 1 tool call(s), none ended in an error." in out
    assert "Final answer: In Tokyo it is " in out


def test_json_prints_the_whole_conversation() -> None:
    status, out, _ = run(["--json", "--mcp", TIME, "What time is it in Tokyo?"], tokyo_then_echo())
    assert status == 0
    document = json.loads(out)
    assert document["question"] == "What time is it in Tokyo?"
    assert document["answer"].startswith("In Tokyo it is ")
    assert [t["name"] for t in document["tools"]] == ["get_current_time", "convert_time"]
    roles = [m["role"] for m in document["messages"]]
    assert roles == ["user", "assistant", "user", "assistant"]
    result = document["messages"][2]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] is False
    assert result["content"][0]["type"] == "json"
    assert result["content"][0]["value"]["timezone"] == "Asia/Tokyo"


def test_python_tools_beside_two_mcp_servers() -> None:
    backend = ScriptedBackend([
        Response(content=[
            ToolUseBlock(id="a", name="get_ticker_symbol", input={"company_name": "Ford"}),
            ToolUseBlock(id="b", name="misc_get_current_time", input={"timezone": "UTC"}),
        ], stop_reason="tool_use"),
        "done",
    ])
    status, out, err = run(["--tool", "tooluse.cli.demo:get_ticker_symbol", "--mcp", TIME,
                            "--mcp", shlex.join(MISC_COMMAND), "q"], backend)
    assert status == 0, err
    assert "get_ticker_symbol (Python)" in out
    assert "mcp-time_get_current_time, convert_time (MCP server mcp-time)" in out
    assert "misc_get_current_time, red_dot" in out
    assert "result  get_ticker_symbol -> F" in out
    assert 'result  misc_get_current_time -> {"result": "misc clock: 12:00 in UTC"}' in out


def test_an_image_result_is_named_not_dropped() -> None:
    backend = ScriptedBackend([
        Response(content=[ToolUseBlock(id="a", name="red_dot", input={})], stop_reason="tool_use"),
        "a red dot",
    ])
    status, out, _ = run(["--mcp", shlex.join(MISC_COMMAND), "q"], backend)
    assert status == 0
    assert "result  red_dot -> [1 image(s): image/png]" in out


@pytest.mark.parametrize("argv, message", [
    (["--mcp", "no-such-command-tooluse"],
     "tooluse run: MCP server no-such-command-tooluse: command not found: no-such-command-tooluse"),
    (["--mcp", "http://127.0.0.1:9/mcp"],
     "tooluse run: MCP server http://127.0.0.1:9/mcp: cannot connect: ConnectError"),
    (["--mcp", "python -m no_such_module_tooluse"], "failed to start"),
    (["--tool", "no_such_module_tooluse:f"],
     "tooluse run: --tool 'no_such_module_tooluse:f': cannot import 'no_such_module_tooluse'"),
    (["--tool", "tooluse.cli.demo:nope"],
     "tooluse run: --tool 'tooluse.cli.demo:nope': 'tooluse.cli.demo' has no 'nope'"),
    (["--tool", "tooluse.cli.demo"], "tooluse run: --tool must be MODULE:FUNCTION"),
    (["--mcp", TIME, "--tool-choice", "get_weather"],
     ("tooluse run: --tool-choice 'get_weather': tool_choice names 'get_weather', which is not "
      "one of the tools: get_current_time, convert_time")),
    ([], "tooluse run: no tools: give --mcp COMMAND|URL or --tool MODULE:FUNCTION"),
    (["--mcp", "http://127.0.0.1:9/mcp", "--header", "nocolon"],
     "tooluse run: --header must be 'NAME: VALUE', not 'nocolon'"),
])
def test_bad_input_is_one_line_and_exit_status_2(argv: list[str], message: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["run", "--backend", "scripted", *argv, "q"])
    captured = capsys.readouterr()
    assert status == 2
    assert message in captured.err
    assert captured.err.count("\n") == 1
    assert captured.out == ""


def test_unknown_backend_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run", "--backend", "nope:x", "--mcp", TIME, "q"])
    assert str(info.value).startswith("tooluse run: cannot load backend 'nope:x'")
    assert "\n" not in str(info.value)


def test_approve_asks_about_the_tools_that_are_not_read_only() -> None:
    """mcp-server-time's tools say readOnlyHint: true, so --approve never asks about them;
    the misc server's clock says nothing, so it is asked about (and here denied)."""
    backend = ScriptedBackend([
        Response(content=[
            ToolUseBlock(id="a", name="mcp-time_get_current_time", input={"timezone": "UTC"}),
            ToolUseBlock(id="b", name="misc_get_current_time", input={"timezone": "UTC"}),
        ], stop_reason="tool_use"),
        "Two clocks.",
    ])
    args = build_parser().parse_args(["run", "--approve", "--mcp", TIME, "--mcp",
                                      shlex.join(MISC_COMMAND), "What time is it?"])
    out, err = io.StringIO(), io.StringIO()
    status = run_command(args, backend, out=out, err=err, inp=io.StringIO("n\n"))
    assert status == 0, err.getvalue()
    prompts = err.getvalue()
    assert prompts.count("[y/N]") == 1
    assert 'Approve misc_get_current_time(timezone="UTC")? [y/N] n' in prompts
    text = out.getvalue()
    assert "result  mcp-time_get_current_time -> " in text
    assert "denied  misc_get_current_time: the user denied this call; it is not run" in text
    assert "2 tool call(s), 1 ended in an error, 1 of them denied approval" in text
