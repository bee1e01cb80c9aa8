"""The real mcp-server-time from PyPI with the bundled local model (SmolLM2-135M-Instruct,
CPU, one thread), forced to call a tool by tool_choice: through the runner and through
`tooluse run` as a user types it. The 135M model often writes a timezone that is not an
IANA name; then the server's own isError answer is what must come back (and be printed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_commands import TIME_COMMAND

from tooluse.mcp import MCPServer
from tooluse.messages import ToolResultBlock
from tooluse.runner import Runner

pytestmark = pytest.mark.slow
QUESTION = "What time is it in Tokyo?"


@pytest.fixture(scope="module")
def local() -> Iterator[Any]:
    pytest.importorskip("llama_cpp", reason="the local model needs the [local] extra")
    from tooluse.backends.local import LocalBackend

    yield LocalBackend(n_threads=1)


def assert_server_answered(timezone: Any, result: ToolResultBlock | None) -> None:
    """The result is the time server's: the time in the zone asked for, or its own error."""
    assert isinstance(timezone, str) and timezone
    assert result is not None
    if result.is_error:
        assert result.text().startswith("Error executing tool get_current_time: Invalid timezone")
        assert timezone in result.text()
    else:
        value = json.loads(result.text())
        assert value["timezone"] == timezone and value["datetime"][:2] == "20"


def test_local_model_forced_to_call_get_current_time(local: Any) -> None:
    with MCPServer(TIME_COMMAND) as time_server:
        runner = Runner(local, [time_server], tool_choice="any", max_tokens=96, max_iterations=3)
        result = runner.run(QUESTION)
    call, answer = result.tool_calls[0]
    assert call.name in ("get_current_time", "convert_time")
    if call.name == "get_current_time":
        assert_server_answered(call.input.get("timezone"), answer)
    else:  # a valid convert_time call (the grammar guarantees the shape); the server answered
        assert answer is not None and answer.content


def test_tooluse_run_on_the_local_model_prints_the_call_and_the_answer() -> None:
    pytest.importorskip("llama_cpp", reason="the local model needs the [local] extra")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parents[2] / "src"))
    completed = subprocess.run(
        [sys.executable, "-m", "tooluse.cli", "run", "--mcp", "python -m mcp_server_time",
         "--tool-choice", "any", "-o", "n_threads=1", QUESTION],
        capture_output=True, text=True, timeout=600, env=env, check=False,
    )
    out = completed.stdout
    assert completed.returncode == 0, completed.stderr + out
    assert "tools: get_current_time, convert_time (MCP server mcp-time)" in out
    assert "[model turn 1] tool_choice=any: " in out
    call_line = next(line for line in out.splitlines() if line.startswith("  call    "))
    assert call_line.startswith('  call    get_current_time(timezone="')
    timezone = call_line.split('timezone="', 1)[1].split('"', 1)[0]
    result_line = next(line for line in out.splitlines()
                       if line.startswith(("  result  ", "  error   ")))
    if result_line.startswith("  result"):
        assert f'get_current_time -> {{"timezone": "{timezone}", "datetime": "20' in result_line
    else:
        assert ("get_current_time -> Error executing tool get_current_time: Invalid timezone"
                in result_line) and timezone in result_line
    assert "Final answer: " in out and "Done in " in out
