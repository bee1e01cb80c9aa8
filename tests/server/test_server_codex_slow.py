"""Codex CLI, from npm, unchanged but for a custom model provider pointing at the gateway's
``/v1/responses`` (``wire_api = "responses"``): on the scripted backend a turn where the model
calls Codex's own shell tool (``exec_command``), Codex runs it and sends the
``function_call_output`` back, and the script's answer is printed; on the bundled local model
Codex's ~10k-token first request is over the 8192-token context, and Codex shows the gateway's
``context_length_exceeded`` error as such (no crash, no retries, no hang); a backend's
thinking reaches Codex as a reasoning item, which Codex sends back with its
``encrypted_content`` on the next turn.

Codex runs with its default config except the provider: a throw-away ``CODEX_HOME`` holding
only a ``config.toml`` that names the provider, and the key in an environment variable.

Install: ``npm install @openai/codex@CODEX_VERSION`` into ``~/.cache/tooluse/npm/`` (or
``$TOOLUSE_NPM_CACHE``), once; later runs reuse it (9 s the first time here, even with an
empty npm cache; 420 MB on disk). Skipped, saying how to install, without node/npm or the registry.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from tooluse.server import ServerThread, create_app

# a real client: a 4xx the policy does not explain fails the test (recording.py)
pytestmark = [pytest.mark.slow, pytest.mark.client]

# The version the suite last passed with; TOOLUSE_CODEX_VERSION=latest tries the newest.
CODEX_VERSION = os.environ.get("TOOLUSE_CODEX_VERSION", "0.171.0")
HOW = ("install node and npm (e.g. `apt-get install nodejs npm`), then rerun; the test "
       f"installs @openai/codex@{CODEX_VERSION} itself")


def _cache_root() -> Path:
    root = os.environ.get("TOOLUSE_NPM_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "tooluse" / "npm"


@pytest.fixture(scope="module")
def codex() -> Path:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip(f"node/npm are not installed: cannot run Codex CLI. To run this test, {HOW}")
    prefix = _cache_root() / f"codex-{CODEX_VERSION}"
    binary = prefix / "node_modules" / ".bin" / "codex"
    if CODEX_VERSION == "latest" or not binary.exists():
        prefix.parent.mkdir(parents=True, exist_ok=True)
        # install beside the cache entry and move it in whole, so an interrupted or concurrent
        # install never leaves a half-installed prefix that later runs would trust
        staging = Path(tempfile.mkdtemp(prefix=f"codex-{CODEX_VERSION}.", dir=prefix.parent))
        try:
            done = subprocess.run(
                [npm, "install", "--prefix", str(staging), "--no-audit", "--no-fund",
                 "--no-save", f"@openai/codex@{CODEX_VERSION}"],
                capture_output=True, text=True, timeout=600, check=False,
            )
        except subprocess.TimeoutExpired:
            shutil.rmtree(staging, ignore_errors=True)
            pytest.skip(f"npm install @openai/codex timed out (registry unreachable?). {HOW}")
        if done.returncode != 0 or not (staging / "node_modules" / ".bin" / "codex").exists():
            shutil.rmtree(staging, ignore_errors=True)
            pytest.skip(f"npm install @openai/codex@{CODEX_VERSION} failed: "
                        f"{done.stderr.strip()[-300:]}. {HOW}")
        shutil.rmtree(prefix, ignore_errors=True)
        try:
            staging.rename(prefix)
        except OSError:  # another run moved its own install in first: use that one
            shutil.rmtree(staging, ignore_errors=True)
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                             timeout=60, check=False, stdin=subprocess.DEVNULL)
    if version.returncode != 0:
        pytest.skip(f"the installed Codex CLI does not run here: {version.stderr.strip()[-300:]}")
    return binary


def run_codex(binary: Path, url: str, workdir: Path, prompt: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """``codex exec PROMPT`` with only a custom provider configured."""
    home = workdir / "codex-home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        'model = "gpt-test"\n'
        'model_provider = "tooluse"\n'
        "\n"
        "[model_providers.tooluse]\n"
        'name = "tooluse gateway"\n'
        f'base_url = "{url}/v1"\n'
        'env_key = "TOOLUSE_API_KEY"\n'
        'wire_api = "responses"\n'
    )
    project = workdir / "project"
    project.mkdir(exist_ok=True)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "CODEX_HOME": str(home),
           "TOOLUSE_API_KEY": "dummy-key"}
    start = time.monotonic()
    done = subprocess.run([str(binary), "exec", "--skip-git-repo-check", prompt], cwd=project,
                          env=env, capture_output=True, text=True, timeout=240, check=False,
                          stdin=subprocess.DEVNULL)
    return done, time.monotonic() - start


def test_codex_runs_its_shell_tool_on_a_scripted_turn(codex: Path, tmp_path: Path) -> None:
    steps = [{"text": "Running it.", "call": "exec_command", "input": {"cmd": "echo hello"}},
             "The command printed hello; done."]
    app = create_app("scripted:" + json.dumps(steps))
    backend: Any = app.state.gateway.backend
    with ServerThread(app) as srv:
        done, _ = run_codex(codex, srv.url, tmp_path, "run `echo hello` and tell me what it printed")
    shown = done.stdout + done.stderr
    assert done.returncode == 0, shown
    # codex exec prints the final answer alone on stdout
    assert done.stdout.strip() == "The command printed hello; done.", shown
    assert "echo hello" in done.stderr  # Codex's log of the command it ran
    first, last = backend.requests[0], backend.requests[-1]
    # Codex's own tools, as it sends them in its default config
    assert "exec_command" in {t.name for t in first.tools}
    # the second turn carries Codex's function_call_output for the scripted call, with the
    # command's real output
    (result,) = last.messages[-1].tool_results
    assert result.tool_use_id == last.messages[-2].tool_uses[0].id
    assert "Process exited with code 0" in result.text() and "\nhello\n" in result.text()
    assert not result.is_error


def test_codex_sends_a_reasoning_item_back_with_its_encrypted_content(codex: Path,
                                                                      tmp_path: Path) -> None:
    """Codex asks for ``reasoning.encrypted_content`` (it sends ``store: false``) and hands the
    reasoning item back on the next turn: the backend gets its own signature back, unchanged."""
    from tooluse.backends.scripted import ScriptedBackend
    from tooluse.messages import Request, Response, TextBlock, ThinkingBlock, ToolUseBlock

    thought = ThinkingBlock(text="I should run it.", summary=["**Running echo**"],
                            signature="gAAAAB-codex+sig/==")

    def script(request: Request) -> Response:
        if request.messages[-1].tool_results or "exec_command" not in {
                t.name for t in request.tools}:
            return Response(content=[TextBlock(text="It printed hello.")], stop_reason="end_turn")
        return Response(content=[thought, ToolUseBlock(id="call_1", name="exec_command",
                                                       input={"cmd": "echo hello"})],
                        stop_reason="tool_use")

    backend = ScriptedBackend(script)
    with ServerThread(create_app(backend)) as srv:
        done, _ = run_codex(codex, srv.url, tmp_path, "run `echo hello`")
    shown = done.stdout + done.stderr
    assert done.returncode == 0 and done.stdout.strip() == "It printed hello.", shown
    first = next(r for r in backend.requests if "exec_command" in {t.name for t in r.tools})
    assert first.reasoning is not None and first.passthrough is not None
    assert "reasoning.encrypted_content" in first.passthrough.fields["include"]
    last = backend.requests[-1]
    assert last.messages[-1].tool_results
    (back,) = last.messages[-2].thinking
    # text, summary and signature as the backend gave them; the id is the item's, which
    # the gateway gave it
    assert back == thought.model_copy(update={"id": back.id}) and back.id.startswith("rs_")


def test_codex_shows_the_local_models_context_error(codex: Path, tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    try:
        app = create_app("local")
    except (ImportError, OSError, FileNotFoundError) as exc:
        pytest.skip(f"local model unavailable: {exc}")
    with ServerThread(app) as srv:
        # Codex's first request (instructions, environment context, ~12 tools) is ~10k tokens
        done, seconds = run_codex(codex, srv.url, tmp_path, "say hello")
    shown = done.stdout + done.stderr
    assert done.returncode == 1, shown
    # the gateway's 400 carries code context_length_exceeded, which Codex reads as such
    assert "ran out of room in the model's context window" in shown, shown
    assert "Reconnecting" not in shown and "panicked" not in shown, shown  # no retry loop, no crash
    assert done.stdout.strip() == ""
    assert seconds < 60, shown
