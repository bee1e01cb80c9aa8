"""Claude Code, the newest CLI from npm, unchanged but for ANTHROPIC_BASE_URL, against the
gateway: a scripted answer, a scripted tool turn through one of its own tools (Read), the
local model's clean 400 for a prompt over its context, and its thinking through the gateway
to a fake Anthropic upstream, its per-turn ``output_config`` reaching the upstream as sent.

Every request it makes goes through the recording proxy (recording.py): a 4xx the policy
does not explain fails the test even when Claude Code works around it (it resends without
a beta or a field), and its first request must be answered at once.

The CLI is installed into a temporary prefix (skipped with the reason when node/npm are
missing or the registry cannot be reached): the newest release, or
``TOOLUSE_CLAUDE_CODE_VERSION``. It runs with a throw-away HOME, a dummy key and every
switch that stops it from calling anything but the gateway on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from recording import LOG

from tooluse.server import ServerThread, create_app

# a real client: a 4xx the policy does not explain fails the test (recording.py)
pytestmark = [pytest.mark.slow, pytest.mark.client]

VERSION = os.environ.get("TOOLUSE_CLAUDE_CODE_VERSION", "latest")
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
             f"@anthropic-ai/claude-code@{VERSION}"],
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
    print(f"Claude Code {version.stdout.strip()}")  # which release this run tested (pytest -s)
    return binary


def first_request_answered(request: pytest.FixtureRequest, path: str = "/v1/messages") -> Any:
    """Claude Code's first request of the test, which must have been answered 200: no 4xx it
    would work around by resending without a beta or a field."""
    first = next(e for e in LOG.of(request.node.nodeid) if e.path == path)
    assert first.status == 200, f"first request answered {first.status}: {first.error}"
    return first


def run_claude(binary: Path, url: str, workdir: Path, prompt: str, *extra: str,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    home = workdir / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "ANTHROPIC_BASE_URL": url,
           "ANTHROPIC_API_KEY": "dummy-key", **_QUIET, **(env or {})}
    return subprocess.run([str(binary), "-p", prompt, *extra], cwd=workdir, env=env,
                          capture_output=True, text=True, timeout=240, check=False)


def test_claude_code_prints_the_scripted_answer(claude: Path, tmp_path: Path,
                                                request: pytest.FixtureRequest) -> None:
    app = create_app("scripted:Hello from the tooluse gateway.")
    backend: Any = app.state.gateway.backend
    with ServerThread(app) as srv:
        done = run_claude(claude, srv.url, tmp_path, "say hello")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "Hello from the tooluse gateway."
    first = first_request_answered(request)
    # its per-turn statements (a system message carrying output_config, under the
    # per-turn-control beta) were taken, not refused and resent without them
    sent = [m for m in first.body["messages"] if m["role"] == "system"]
    if "per-turn-control" in first.headers.get("anthropic-beta", ""):
        assert any("output_config" in m for m in sent), sent
    effort = next((m["output_config"].get("effort") for m in reversed(sent)
                   if m.get("output_config", {}).get("effort")), None)
    seen = backend.requests[0]
    if effort is not None and seen.reasoning is not None:
        assert seen.reasoning.effort == effort  # the per-turn effort is the request's


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


def test_claude_code_thinks_through_the_gateway_to_an_anthropic_upstream(
    claude: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Claude Code's own requests (``thinking: adaptive``, ``context_management``, the
    ``interleaved-thinking`` and ``per-turn-control`` betas, its system messages with their
    per-turn ``output_config``, its ``cache_control`` breakpoints) reach a fake Anthropic
    upstream as Claude Code sent them, its tool loop sends the upstream's signed thinking
    block back on the next turn, and the upstream's cache counts reach it."""
    import httpx2
    from test_server_messages_thinking import SIG, SIG2, _message, sse_bytes, sse_events

    from tooluse.backends.anthropic import AnthropicBackend

    notes = tmp_path / "notes.txt"
    notes.write_text("the secret word is avocado\n")
    first = _message([
        {"type": "thinking", "thinking": "I should read the notes first.", "signature": SIG},
        {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"file_path": str(notes)}},
    ], "tool_use")
    second = _message([{"type": "thinking", "thinking": "It says avocado.", "signature": SIG2},
                       {"type": "text", "text": "The secret word is avocado."}], "end_turn")
    upstream: list[tuple[dict[str, Any], dict[str, str]]] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        upstream.append((body, dict(request.headers)))
        last = body["messages"][-1]["content"]
        answered = isinstance(last, list) and any(b.get("type") == "tool_result" for b in last)
        # The answer names the model asked for, as the API's does: Claude Code leaves out
        # the history's thinking when the answer came from another model.
        message = {**(second if answered else first), "model": body["model"]}
        message["usage"] = {**message["usage"], **CACHE_COUNTS}
        if body.get("stream"):
            events = sse_events(message)
            events[0]["message"]["usage"].update(CACHE_COUNTS)
            return httpx2.Response(200, content=sse_bytes(events),
                                   headers={"content-type": "text/event-stream"})
        return httpx2.Response(200, json=message)

    async def ahandle(request: httpx2.Request) -> httpx2.Response:
        await request.aread()
        return handle(request)

    backend = AnthropicBackend("claude-up", base_url="http://upstream.invalid", api_key="k",
                               max_retries=0, transport=httpx2.MockTransport(handle),
                               async_transport=httpx2.MockTransport(ahandle))
    app = create_app(backend)
    sent: list[dict[str, Any]] = []  # what Claude Code sent the gateway

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/v1/messages":
            chunks = []

            async def replay() -> Any:
                message = await receive()
                if message["type"] == "http.request":
                    chunks.append(message.get("body", b""))
                    if not message.get("more_body"):
                        sent.append(json.loads(b"".join(chunks)))
                return message

            await app(scope, replay, send)
        else:
            await app(scope, receive, send)

    with ServerThread(recording) as srv:
        done = run_claude(claude, srv.url, tmp_path, "read notes.txt and tell me the secret word",
                          "--output-format", "json")
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert "avocado" in result["result"]
    # the upstream's cache reads reached Claude Code's own usage
    assert result["usage"]["cache_read_input_tokens"] >= CACHE_COUNTS["cache_read_input_tokens"]
    assert len(upstream) == len(sent) >= 2
    first_request_answered(request)
    for client, (body, headers) in zip(sent, upstream, strict=True):
        assert body["thinking"] == client["thinking"]
        assert body.get("context_management") == client.get("context_management")
        assert body.get("output_config") == client.get("output_config")
        # every system message (per-turn output_config and all) as sent, in its place
        assert system_messages(body) == system_messages(client)
    assert any("output_config" in m for c in sent for _, m in system_messages(c))
    betas = [h.get("anthropic-beta", "") for _, h in upstream]
    assert any("per-turn-control" in b for b in betas), betas
    thinking = [c["thinking"] for c in sent]
    assert {"type": "adaptive"} in thinking or any(t.get("type") == "adaptive" for t in thinking)
    assert any("interleaved-thinking" in h.get("anthropic-beta", "") for _, h in upstream)
    # the second turn carried the first turn's signed block back, as the upstream wrote it
    def thinking_blocks(body: dict[str, Any]) -> list[Any]:
        return [b for m in body["messages"] if isinstance(m["content"], list)
                for b in m["content"] if b.get("type") in ("thinking", "redacted_thinking")]

    assert [thinking_blocks(c) for c in sent] == [thinking_blocks(b) for b, _ in upstream]
    back = [b for body, _ in upstream for m in body["messages"] if m["role"] == "assistant"
            for b in (m["content"] if isinstance(m["content"], list) else [])
            if b.get("type") == "thinking"]
    assert {"type": "thinking", "thinking": "I should read the notes first.", "signature": SIG} in back
    # every cache_control breakpoint Claude Code set reached the upstream on the same block
    assert any(breakpoints(c) for c in sent)
    assert [breakpoints(c) for c in sent] == [breakpoints(b) for b, _ in upstream]


def system_messages(body: dict[str, Any]) -> list[tuple[int, Any]]:
    """The ``role: "system"`` messages of a Messages body, with their place."""
    return [(i, m) for i, m in enumerate(body["messages"]) if m["role"] == "system"]


#: What the fake upstream says it read from and wrote to its prompt cache, each turn.
CACHE_COUNTS = {"cache_read_input_tokens": 9000, "cache_creation_input_tokens": 700}


def breakpoints(body: dict[str, Any]) -> list[tuple[str, str, str, Any]]:
    """Each ``cache_control`` of a Messages body, in order: where (system, tools, messages),
    the block's type, what names it (its text, id, tool_use_id or name), the control."""
    found: list[tuple[str, str, str, Any]] = []

    def visit(where: str, blocks: Any) -> None:
        for block in blocks if isinstance(blocks, list) else []:
            if not isinstance(block, dict):
                continue
            if "cache_control" in block:
                name = next((str(block[k]) for k in ("text", "id", "tool_use_id", "name")
                             if k in block), "")
                found.append((where, str(block.get("type")), name, block["cache_control"]))
            visit(where, block.get("content"))

    visit("system", body.get("system"))
    visit("tools", body.get("tools"))
    for message in body["messages"]:
        visit("messages", message["content"])
    return found



def test_claude_code_tool_search_loads_deferred_mcp_tools(claude: Path, tmp_path: Path) -> None:
    """Claude Code with an MCP server and its tool search on (ENABLE_TOOL_SEARCH) sends the
    server's tools with ``defer_loading`` behind its own ToolSearch (and a
    ``DeferredToolPlaceholder``). The model behind the gateway is offered none of them until
    ToolSearch's result loads one (its ``tool_reference``); then it calls the MCP tool,
    Claude Code runs it on the server, and answers."""
    import sys

    from tooluse.backends.scripted import ScriptedBackend
    from tooluse.messages import Request, Response, ToolUseBlock

    wanted = "mcp__misc__get_current_time"

    def model(request: Request) -> Response | str:
        names = [t.name for t in request.tools]
        called = {b.name for m in request.messages for b in m.content if b.type == "tool_use"}
        if wanted in names and wanted not in called:
            return Response(content=[ToolUseBlock(id="toolu_t2", name=wanted,
                                                  input={"timezone": "Europe/Oslo"})],
                            stop_reason="tool_use")
        if "ToolSearch" in names and not called:
            return Response(content=[ToolUseBlock(id="toolu_t1", name="ToolSearch",
                                                  input={"query": f"select:{wanted}"})],
                            stop_reason="tool_use")
        results = [b for b in request.messages[-1].content if b.type == "tool_result"]
        return "Answer: " + " | ".join(r.text() for r in results)  # type: ignore[union-attr]

    server = Path(__file__).resolve().parents[1] / "mcp" / "misc_server.py"
    config = {"mcpServers": {"misc": {"command": sys.executable, "args": [str(server)]}}}
    backend = ScriptedBackend(model)
    with ServerThread(create_app(backend)) as srv:
        done = run_claude(claude, srv.url, tmp_path, "what time is it in Oslo?",
                          "--mcp-config", json.dumps(config), "--allowedTools", wanted,
                          env={"ENABLE_TOOL_SEARCH": "true"})
    assert done.returncode == 0, done.stdout + done.stderr
    first = backend.requests[0]
    sent_deferred = [n for n, f in (first.passthrough.tool_fields if first.passthrough else {}
                                    ).items() if f.get("defer_loading")]
    if not sent_deferred:
        pytest.skip("this Claude Code sends no deferred tools (ENABLE_TOOL_SEARCH=true)")
    assert "DeferredToolPlaceholder" in sent_deferred
    assert not any(t.deferred for r in backend.requests for t in r.tools)
    assert "DeferredToolPlaceholder" not in [t.name for r in backend.requests for t in r.tools]
    assert wanted not in [t.name for t in first.tools]
    assert wanted in [t.name for t in backend.requests[-1].tools]
    assert done.stdout.strip() == 'Answer: {"result":"misc clock: 12:00 in Europe/Oslo"}'
