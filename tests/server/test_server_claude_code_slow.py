"""Claude Code, the current CLI from npm, unchanged but for ANTHROPIC_BASE_URL, against the
gateway: a scripted answer, a scripted tool turn through one of its own tools (Read), and the
local model's clean 400 for a prompt over its context.

The CLI is installed into a temporary prefix (skipped with the reason when node/npm are
missing or the registry cannot be reached). It runs with a throw-away HOME, a dummy key and
every switch that stops it from calling anything but the gateway on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tooluse.server import ServerThread, create_app

pytestmark = pytest.mark.slow

_QUIET = {
    "DISABLE_TELEMETRY": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_BUG_COMMAND": "1",
}


@pytest.fixture(scope="module")
def claude(tmp_path_factory: pytest.TempPathFactory) -> Path:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node/npm are not installed: cannot install Claude Code")
    prefix = tmp_path_factory.mktemp("claude-code")
    try:
        done = subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
             "@anthropic-ai/claude-code"],
            capture_output=True, text=True, timeout=600, check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.skip("npm install @anthropic-ai/claude-code timed out (registry unreachable?)")
    binary = prefix / "node_modules" / ".bin" / "claude"
    if done.returncode != 0 or not binary.exists():
        pytest.skip(f"npm install @anthropic-ai/claude-code failed: {done.stderr.strip()[-300:]}")
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                             timeout=60, check=False)
    if version.returncode != 0:
        pytest.skip(f"the installed Claude Code does not run here: {version.stderr.strip()[-300:]}")
    return binary


def run_claude(binary: Path, url: str, workdir: Path, prompt: str, *extra: str) -> subprocess.CompletedProcess[str]:
    home = workdir / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "ANTHROPIC_BASE_URL": url,
           "ANTHROPIC_API_KEY": "dummy-key", **_QUIET}
    return subprocess.run([str(binary), "-p", prompt, *extra], cwd=workdir, env=env,
                          capture_output=True, text=True, timeout=240, check=False)


def test_claude_code_prints_the_scripted_answer(claude: Path, tmp_path: Path) -> None:
    with ServerThread(create_app("scripted:Hello from the tooluse gateway.")) as srv:
        done = run_claude(claude, srv.url, tmp_path, "say hello")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "Hello from the tooluse gateway."


def test_claude_code_runs_a_scripted_tool_turn(claude: Path, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("the secret word is avocado\n")
    steps = [{"text": "Reading it.", "call": "Read", "input": {"file_path": str(notes)}},
             "Done: I read the notes."]
    app = create_app("scripted:" + json.dumps(steps))
    backend: Any = app.state.gateway.backend
    with ServerThread(app) as srv:
        done = run_claude(claude, srv.url, tmp_path, "read notes.txt",
                          "--output-format", "stream-json", "--verbose")
    assert done.returncode == 0, done.stdout + done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    results = [block for e in events if e.get("type") == "user"
               for block in e["message"]["content"] if block.get("type") == "tool_result"]
    assert len(results) == 1 and "avocado" in str(results[0]["content"])  # Claude Code ran Read
    assert not results[0].get("is_error")
    final = events[-1]
    assert final["type"] == "result" and final["subtype"] == "success"
    assert final["result"] == "Done: I read the notes."
    # the gateway saw Claude Code's own tools and, in the second turn, the Read result
    last = backend.requests[-1]
    assert "Read" in {t.name for t in last.tools}
    assert "avocado" in last.messages[-1].tool_results[0].text()


def test_claude_code_shows_the_local_models_context_error(claude: Path, tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    try:
        app = create_app("local")
    except (ImportError, OSError, FileNotFoundError) as exc:
        pytest.skip(f"local model unavailable: {exc}")
    with ServerThread(app) as srv:
        # Claude Code's own system prompt and tools are far over SmolLM2's 8192 tokens.
        done = run_claude(claude, srv.url, tmp_path, "say hello")
    shown = done.stdout + done.stderr
    assert done.returncode != 0
    # Claude Code reads the API's own 400 wording and explains it as a context overflow,
    # with the limit it parsed from the message (not as "Request too large (max 32MB)")
    assert "Prompt is too long" in shown and "(limit 8192)" in shown, shown
    assert "Request too large" not in shown
