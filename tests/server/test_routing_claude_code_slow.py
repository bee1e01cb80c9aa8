"""Claude Code (the real CLI from npm) through a config that routes its main model to one
upstream and its small/fast model to another: its main turns land on the first, the
Explore agent it starts on its haiku model (the small/fast model, ANTHROPIC_DEFAULT_HAIKU_MODEL)
on the second, as the fake upstreams' logs show. The agent's model and its running in the
foreground are asked for in the Agent call: since Claude Code's per-turn-control requests
are served, an Explore agent left to its own choice inherits the main model, and may run in
the background. Both routes pass the client's model name on (no model in their
specs), so the logs show the name Claude Code asked for."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from routing_procs import fake_upstreams, write_config
from test_server_claude_code_slow import _QUIET, claude  # noqa: F401 - the npm install

from tooluse.server import ServerThread, create_app

pytestmark = pytest.mark.slow

MAIN = "claude-sonnet-4-5"
SMALL = "claude-haiku-4-5"


def test_claude_codes_main_and_small_fast_models_land_where_the_config_says(
    claude: Path, tmp_path: Path  # noqa: F811
) -> None:
    with fake_upstreams(tmp_path, "main", "small") as (main, small):
        main.control(tool={"name": "Agent", "input": {
            "description": "Look around", "subagent_type": "Explore", "model": "haiku",
            "run_in_background": False,
            "prompt": "List the files in this folder and report their names."}}, tool_count=1)
        config = write_config(tmp_path / "g.toml", f"""
[[models]]
name = "claude-haiku-*"
backend = "anthropic:{small.url}"

[[models]]
name = "*"
backend = "anthropic:{main.url}"
""")
        with ServerThread(create_app(config=config)) as srv:
            home = tmp_path / "home"
            home.mkdir()
            env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home),
                   "ANTHROPIC_BASE_URL": srv.url, "ANTHROPIC_API_KEY": "dummy-key",
                   "ANTHROPIC_MODEL": MAIN, "ANTHROPIC_SMALL_FAST_MODEL": SMALL,
                   "ANTHROPIC_DEFAULT_HAIKU_MODEL": SMALL, **_QUIET}
            done = subprocess.run(
                [str(claude), "-p", "Explore this folder.", "--output-format", "stream-json",
                 "--verbose"], cwd=tmp_path, env=env, capture_output=True, text=True,
                timeout=240, check=False)
        main_log, small_log = main.log(), small.log()
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    final = events[-1]
    assert final["type"] == "result" and final["result"] == "from main"
    # the Agent tool ran (Claude Code started its Explore agent) and got the agent's answer
    results = [b for e in events if e.get("type") == "user"
               for b in e["message"]["content"] if b.get("type") == "tool_result"]
    assert results and "from small" in json.dumps(results[0]["content"])
    assert len(main_log) >= 2 and len(small_log) >= 1
    assert {e["model"] for e in main_log} == {MAIN}
    assert {e["model"] for e in small_log} == {SMALL}
    assert set(final["modelUsage"]) == {MAIN, SMALL}
